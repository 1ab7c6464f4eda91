// hybridlb live view: polls the REST views of the controller that serves this page (hybridlbd, or
// the ONOS app) and draws the fabric with each VIP on its HMux or on the SMuxes, the HMux/SMux
// traffic split over time, the migrations and the failed and drained switches. Plain SVG, no library.
'use strict';

const API = new URL('../', location.href);       // this page is <api>/ui/
const POLL_MS = 1000;
const TOPOLOGY_EVERY = 10;                       // polls between two reads of the topology
const HISTORY = 120;                             // traffic samples kept (two minutes)
const SVG = 'http://www.w3.org/2000/svg';
const BOX = {w: 78, h: 24, col: 96, row: 90, vip: 13};

const view = {topology: null, history: [], polls: 0};

function el(tag, attrs, parent, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// A daemon with tokens: the page is opened as /ui/#token=<viewer token>. The fragment never leaves
// the browser; the token is kept for this tab only and taken out of the address bar.
const TOKEN = (() => {
  const m = location.hash.match(/token=([^&]+)/);
  if (m) {
    sessionStorage.setItem('hybridlb-token', decodeURIComponent(m[1]));
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem('hybridlb-token');
})();

async function get(path) {
  const headers = {Accept: 'application/json'};
  if (TOKEN) headers.Authorization = 'Bearer ' + TOKEN;
  const r = await fetch(new URL(path, API), {headers, cache: 'no-store'});
  if (r.status === 401) throw new Error(path + ': HTTP 401: this daemon needs a token: open the view as /ui/#token=<token>');
  if (!r.ok) throw new Error(path + ': HTTP ' + r.status);
  return r.json();
}

// ---------------------------------------------------------------- layout: rows by role, pods side by side

const MAX_LABELS = 8;                            // VIP labels under one switch; the rest as "+N more"

function layout(topo, vipsAt) {
  const byRole = role => topo.switches.filter(s => s.role === role)
    .sort((a, b) => (a.pod ?? -1) - (b.pod ?? -1) || a.id.localeCompare(b.id, undefined, {numeric: true}));
  const rows = [byRole('core'), byRole('agg'), byRole('tor')];
  const width = Math.max(...rows.map(r => r.length), topo.smuxes.length, 1) * BOX.col;
  const labels = row => Math.min(MAX_LABELS + 1, Math.max(0, ...row.map(s => (vipsAt[s.id] || []).length)));
  const pos = {};
  let y = 20 + BOX.h / 2;
  rows.forEach(row => {
    const step = width / Math.max(row.length, 1);
    row.forEach((s, j) => { pos[s.id] = {x: step * (j + 0.5), y}; });
    if (row.length) y += BOX.h + 40 + labels(row) * BOX.vip;
  });
  topo.smuxes.forEach((m, j) => {
    const tor = pos[m.tor];
    pos[m.id] = {x: tor ? tor.x : BOX.col * (j + 0.5), y};
  });
  return {pos, width, smuxY: y};
}

// ---------------------------------------------------------------- drawing

function drawFabric(topo, switches, smuxes, assignment, migrating) {
  const svg = document.getElementById('fabric');
  const vipsAt = {};
  for (const [vip, at] of Object.entries(assignment.installed || {})) (vipsAt[at] = vipsAt[at] || []).push(vip);
  const {pos, width, smuxY} = layout(topo, vipsAt);
  const state = Object.fromEntries(switches.map(s => [s.id, s]));
  svg.replaceChildren();
  const links = el('g', {class: 'links'}, svg);
  for (const l of topo.links) {
    const a = pos[l.a], b = pos[l.b];
    if (!a || !b) continue;                      // host links are not drawn
    const down = !(state[l.a] || {up: true}).up || !(state[l.b] || {up: true}).up;
    el('line', {class: 'link' + (down ? ' down' : ''), x1: a.x, y1: a.y, x2: b.x, y2: b.y}, links);
  }
  for (const m of topo.smuxes) {
    const p = pos[m.id], t = pos[m.tor];
    if (t) el('line', {class: 'attach', x1: p.x, y1: p.y, x2: t.x, y2: t.y}, links);
  }
  const moving = new Set(migrating);
  for (const s of topo.switches) {
    const st = state[s.id] || {up: true, drained: false};
    const vips = (vipsAt[s.id] || []).sort();
    const cls = !st.up ? 'down' : st.drained ? 'drained' : vips.length ? 'hmux' : 'up';
    const g = el('g', {class: 'switch ' + cls, 'data-switch': s.id, 'data-state': cls}, svg);
    const p = pos[s.id];
    el('title', {}, g, `${s.id} (${s.role}${s.pod !== undefined && s.pod !== null ? ', pod ' + s.pod : ''})`
      + (st.cutOff ? ': cut off: ' + st.cutOff : '') + (st.hmuxUnfit ? ': cannot be an HMux: ' + st.hmuxUnfit : ''));
    el('rect', {x: p.x - BOX.w / 2, y: p.y - BOX.h / 2, width: BOX.w, height: BOX.h, rx: 4}, g);
    el('text', {x: p.x, y: p.y + 4}, g, s.id);
    const shown = vips.length > MAX_LABELS + 1 ? vips.slice(0, MAX_LABELS) : vips;
    shown.forEach((v, i) => vipLabel(svg, v, s.id, p.x, p.y + BOX.h / 2 + 11 + i * BOX.vip, moving));
    if (shown.length < vips.length) {
      el('text', {class: 'more', x: p.x, y: p.y + BOX.h / 2 + 11 + shown.length * BOX.vip}, svg,
        `+${vips.length - shown.length} more`);
    }
  }
  const live = Object.fromEntries(smuxes.map(m => [m.id, m.live]));
  for (const m of topo.smuxes) {
    const p = pos[m.id];
    const g = el('g', {class: 'smux ' + (live[m.id] ? 'live' : 'down'), 'data-smux': m.id}, svg);
    el('rect', {x: p.x - BOX.w / 2, y: p.y - BOX.h / 2, width: BOX.w, height: BOX.h, rx: 10}, g);
    el('text', {x: p.x, y: p.y + 4}, g, m.id);
  }
  // VIPs on the SMuxes only: listed under the SMux row, across the whole width
  const onSmux = (vipsAt.smux || []).sort();
  const cols = Math.max(1, Math.floor(width / BOX.col));
  const top = smuxY + BOX.h / 2 + 16;
  el('text', {class: 'caption', x: 4, y: top - 2}, svg, onSmux.length ? 'on the SMuxes only:' : '');
  onSmux.forEach((v, i) => vipLabel(svg, v, 'smux', BOX.col * (i % cols + 0.5), top + 12 + Math.floor(i / cols) * BOX.vip,
    moving));
  svg.setAttribute('viewBox', `0 0 ${width} ${top + 20 + Math.ceil(onSmux.length / cols) * BOX.vip}`);
}

function vipLabel(svg, vip, at, x, y, migrating) {
  const cls = 'vip ' + (at === 'smux' ? 'on-smux' : 'on-hmux') + (migrating.has(vip) ? ' migrating' : '');
  const g = el('g', {class: cls, 'data-vip': vip, 'data-at': at}, svg);
  el('text', {x, y}, g, vip);
}

function drawTraffic(stats) {
  view.history.push({hmux: stats.hmuxBytesPerSecond || 0, smux: stats.smuxBytesPerSecond || 0});
  if (view.history.length > HISTORY) view.history.shift();
  const svg = document.getElementById('traffic');
  svg.replaceChildren();
  const max = Math.max(1, ...view.history.map(h => Math.max(h.hmux, h.smux)));
  for (const kind of ['hmux', 'smux']) {
    const pts = view.history.map((h, i) => `${(i / (HISTORY - 1)) * 400},${135 - (h[kind] / max) * 125}`);
    el('polyline', {class: kind, points: pts.join(' ')}, svg);
  }
  const fmt = b => (b * 8 / 1e6).toFixed(2) + ' Mb/s';
  document.getElementById('traffic-now').textContent =
    `HMux ${fmt(stats.hmuxBytesPerSecond || 0)} · SMux ${fmt(stats.smuxBytesPerSecond || 0)} · `
    + `HMux share ${((stats.hmuxShare || 0) * 100).toFixed(1)} %`;
}

function drawMigrations(m) {
  const now = document.getElementById('migration-now');
  const f = m.inFlight;
  now.dataset.inFlight = f ? String(f.id) : '';
  now.textContent = f ? `#${f.id} running (${f.trigger}): wave ${f.nextWave + 1} of ${f.plan.waves.length}`
    : 'none in flight';
  const ol = document.getElementById('migrations-recent');
  ol.replaceChildren();
  for (const r of (m.recent || []).slice(0, 6)) {
    const li = document.createElement('li');
    li.textContent = `#${r.id} ${r.state} (${r.trigger})` + (r.error ? ': ' + r.error : '');
    ol.appendChild(li);
  }
}

function drawDevices(switches, smuxes, assignment) {
  const ul = document.getElementById('devices');
  ul.replaceChildren();
  const add = (cls, text) => {
    const li = document.createElement('li');
    li.className = cls;
    li.textContent = text;
    ul.appendChild(li);
  };
  for (const s of switches.filter(s => !s.up)) add('down', `${s.id} down` + (s.cutOff ? ` (cut off: ${s.cutOff})` : ''));
  for (const s of switches.filter(s => s.drained)) add('drained', `${s.id} drained`);
  for (const m of smuxes) add(m.live ? 'live' : 'down', `SMux ${m.id} ${m.live ? 'live' : 'not announcing'}, table v${m.tableVersion}`);
  if (!switches.some(s => !s.up || s.drained)) add('ok', `all ${switches.length} switches up, none drained`);
  for (const d of assignment.unhealthyDips || []) add('down', `DIP ${d} out of its pools`);
}

function migratingVips(m) {
  const f = m.inFlight;
  if (!f) return [];
  const wave = f.plan.waves[f.nextWave];
  return wave ? wave.steps.map(s => s.vip) : [];
}

// ---------------------------------------------------------------- the loop

async function poll() {
  const status = document.getElementById('status');
  try {
    if (!view.topology || view.polls % TOPOLOGY_EVERY === 0) {
      view.topology = await get('topology');
      document.getElementById('fabric-name').textContent = view.topology.name ? '— ' + view.topology.name : '';
    }
    const [assignment, switches, smuxes, stats, migrations] = await Promise.all(
      [get('assignment'), get('switches'), get('smuxes'), get('stats'), get('migrations')]);
    drawFabric(view.topology, switches.switches, smuxes.smuxes, assignment, migratingVips(migrations));
    drawTraffic(stats);
    drawMigrations(migrations);
    drawDevices(switches.switches, smuxes.smuxes, assignment);
    view.polls++;
    document.body.dataset.updates = String(view.polls);
    status.className = 'status' + (assignment.lastError ? ' error' : '');
    status.textContent = `updated ${new Date().toLocaleTimeString()}` + (assignment.migrating ? ' · migrating' : '')
      + (assignment.lastError ? ' · ' + assignment.lastError : '');
  } catch (e) {
    status.className = 'status error';
    status.textContent = 'cannot read the controller: ' + e.message;
  }
  setTimeout(poll, POLL_MS);
}

poll();
