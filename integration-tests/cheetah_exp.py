"""Cheetah experiments on the emulation (issue "Cheetah", section Experiments), with real Linux
TCP clients in the client hosts and the real hybridlbd driving SMuxes, HMuxes and agents: the
emulation helpers and the churn (per-connection consistency while the pool grows and shrinks,
an SMux dies and comes back, and VIPs move off the HMuxes: NSDI'20 Fig. 9 analogue).
cheetah_perf.py has balance, wraps and iperf3.

The functions take a running emulation (hlbemu.Emu with the daemon started); cheetah_bench.py
starts the emulations and prints the tables, test_cheetah.py runs a short churn in the suite.
"""
import json
import os
import threading
import time

from conftest import wait_for
from emu_base import QUIC_PORT  # (also cx.QUIC_PORT: the UDP port of the QUIC VIPs)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPO = os.path.join(REPO, "topologies")
PY = "/usr/bin/python3"
AGG = "10.100.0.0/16"


def dip_hosts(e):
    """The DIP hosts' names, in order (host-0-0-0, host-0-0-1, ...)."""
    return sorted(h for h, v in e.fab["hosts"].items() if v["role"] == "dip")


def dip_ips(e):
    """The DIP hosts' addresses, in host-name order."""
    return [e.fab["hosts"][h]["ip"] for h in dip_hosts(e)]


def clients(e):
    return sorted(h for h, v in e.fab["hosts"].items() if v["role"] == "client")


def vip_doc(vip, port, dips, affinity="hash", mechanism=None, proto="tcp"):
    d = {"vip": vip, "aggregate": AGG, "ports": [{"proto": proto, "port": port, "dips": [{"ip": i} for i in dips]}]}
    if affinity != "hash":
        d["affinity"] = affinity
        d["mechanism"] = mechanism or "wrr"
    return d


def add_vip(e, doc):
    code, ans = e.api("POST", "/vips", doc)
    if code not in (200, 201):
        raise RuntimeError("POST /vips %s: %s %s" % (doc["vip"], code, ans))


def api_ok(e, method, path, body=None):
    code, ans = e.api(method, path, body)
    if not 200 <= code < 300:
        raise RuntimeError("%s %s: %s %s" % (method, path, code, ans))
    return ans


def set_weights(e, vip, weights):
    """PUT /vips/{vip} with the DIPs of `weights` ({ip: weight}) set so (0: drained, its
    connections finish where they are, no new ones)."""
    doc = api_ok(e, "GET", "/vips/%s" % vip)
    for p in doc["ports"]:
        for d in p["dips"]:
            if d["ip"] in weights:
                d["weight"] = weights[d["ip"]]
    api_ok(e, "PUT", "/vips/%s" % vip, doc)


def placement(e):
    return e.api("GET", "/assignment")[1]["installed"]


class PlacementLog:
    """Polls /assignment once a second: where each watched VIP was, and its moves."""

    def __init__(self, e, vips):
        self.e, self.vips, self.moves, self.now = e, vips, {v: [] for v in vips}, {}
        self.stop = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while not self.stop.is_set():
            try:
                p = placement(self.e)
            except Exception:
                p = {}
            for v in self.vips:
                where = p.get(v)
                if where is None:
                    continue
                last = self.now.get(v)
                if last is not None and where != last:
                    self.moves[v].append((last, where))
                self.now[v] = where
            self.stop.wait(1.0)

    def finish(self):
        self.stop.set()
        self.t.join()
        return {v: {"hmuxToSmux": sum(1 for a, b in m if a != "smux" and b == "smux"),
                    "smuxToHmux": sum(1 for a, b in m if a == "smux" and b != "smux"),
                    "hmuxToHmux": sum(1 for a, b in m if a != "smux" and b != "smux")} for v, m in self.moves.items()}


def peers_announcing(e):
    out = e.ns_run(["vtysh", "--vty_socket", e.fab["routeServer"]["vtyDir"], "-c", "show bgp ipv4 unicast json"]).stdout
    routes = json.loads(out).get("routes", {}) if out.strip() else {}
    return sorted({p.get("peerId") or p.get("nexthops", [{}])[0].get("ip") for r in routes.values() for p in r})


def cookie_counters(e, agents=True):
    """Cheetah counters summed over the SMuxes and (agents) the host agents."""
    out = {"smuxDecoded": 0, "smuxInvalid": 0, "smuxBadCookieDrops": 0, "smuxStatefulInserted": 0,
           "smuxAdopted": 0, "smuxAdoptTaken": 0, "agentEncoded": 0, "agentRestored": 0, "agentMisrouted": 0,
           "agentAdopted": 0, "smuxQuicDecoded": 0, "smuxQuicInitial": 0, "smuxQuicInvalid": 0}
    for s in e.fab["smuxes"]:
        try:
            text = e.smux_metrics(s["id"])
        except Exception:
            continue
        for line in text.splitlines():
            key = {'hlb_smux_cookie_packets_total{event="decoded"}': "smuxDecoded",
                   'hlb_smux_cookie_packets_total{event="invalid"}': "smuxInvalid",
                   'hlb_smux_drops_total{reason="bad_cookie"}': "smuxBadCookieDrops",
                   'hlb_smux_cookie_stateful_total{event="inserted"}': "smuxStatefulInserted",
                   'hlb_smux_cookie_stateful_total{event="adopted"}': "smuxAdopted",
                   'hlb_smux_cookie_stateful_total{event="adopt_taken"}': "smuxAdoptTaken",
                   'hlb_smux_cookie_quic_packets_total{event="decoded"}': "smuxQuicDecoded",
                   'hlb_smux_cookie_quic_packets_total{event="initial"}': "smuxQuicInitial",
                   'hlb_smux_cookie_quic_packets_total{event="invalid"}': "smuxQuicInvalid"}.get(line.rsplit(" ", 1)[0])
            if key:
                out[key] += int(float(line.rsplit(" ", 1)[1]))
    for h, v in e.fab["hosts"].items():
        if v["role"] != "dip" or not agents:
            continue
        try:
            st = e.agent_stats(h)
        except Exception:
            continue
        ck = st.get("cookie", {})
        out["agentAdopted"] += st.get("reports", {}).get("adopt", {}).get("adopted", 0)
        out["agentEncoded"] += ck.get("encoded", 0) + ck.get("encoded_slow_path", 0)
        out["agentRestored"] += ck.get("restored", 0)
        out["agentMisrouted"] += ck.get("misrouted", 0)
    return out


def require_cookie_agents(e, timeout=60):
    """Every DIP host's agent runs the XDP backend with cookies on (an agent whose XDP backend
    did not start runs the user-space fallback, which cannot do cookies): else RuntimeError."""
    def missing():
        out = []
        for h, v in e.fab["hosts"].items():
            if v["role"] == "dip":
                try:
                    ok = e.agent_stats(h)["backend"].get("cookies")
                except Exception:
                    ok = False
                if not ok:
                    out.append(h)
        return out
    left = missing()
    if left:
        wait_for(lambda: not missing(), timeout, 2)
        left = missing()
    if left:
        raise RuntimeError("host agents without Cheetah cookies (see their logs): %s" % ", ".join(sorted(left)))


# ------------------------------------------------------------------------------------------
# churn
# ------------------------------------------------------------------------------------------

def classify(conns, t0_wall=None):
    """Long-lived connections of hlb_probe.py tcp or quic -> counts. A connection is broken when
    it was reset, timed out, closed by the server (TCP: a reset or FIN; QUIC: its
    CONNECTION_CLOSE, "closed by peer", counted as reset), or answered by a second server. "brokenConns"
    lists each broken one (client port, servers seen, error, seconds after t0_wall)."""
    c = {"opened": 0, "connectFailed": 0, "reset": 0, "timeout": 0, "wrongServer": 0, "otherError": 0,
         "brokenConns": []}
    for r in conns:
        errs = " ".join(r["errors"])
        if errs.startswith("connect:"):
            c["connectFailed"] += 1
            continue
        c["opened"] += 1
        if len(r["dips"]) > 1 or errs:
            c["brokenConns"].append({"localPort": r.get("localPort"), "dips": r["dips"], "ok": r["ok"], "errors": errs,
                                     "atS": round(r["errorAt"] - t0_wall, 1) if t0_wall and r.get("errorAt") else None})
        if len(r["dips"]) > 1:
            c["wrongServer"] += 1
        elif not errs:
            continue
        elif "timed out" in errs or "timeout" in errs:
            c["timeout"] += 1
        elif "Reset" in errs or "reset" in errs or "closed by peer" in errs or "Broken" in errs:
            c["reset"] += 1
        else:
            c["otherError"] += 1
    c["broken"] = c["reset"] + c["timeout"] + c["wrongServer"] + c["otherError"]
    return c


def running_smuxes(e):
    return [s["id"] for s in e.fab["smuxes"] if s["id"] not in e.standby_smuxes()]


def put_back(e, vips, drained, added, removed, victim):
    """After a churn: the switches undrained, the pools as they were (the first 8 DIP hosts,
    weight 1), the killed SMux running and every running SMux announcing."""
    for sid in drained:
        e.api("DELETE", "/switches/%s/drain" % sid)
    for vip in vips:
        set_weights(e, vip, {ip: 1 for ip in removed})
        for ip in added:
            e.api("DELETE", "/vips/%s/dips/%s" % (vip, ip))
    if not e.recorded_pids("smux " + victim):
        e.restart_smux(victim)
    wait_for(lambda: len(peers_announcing(e)) == len(running_smuxes(e)), 30, 0.5)


def churn(e, vips, phase_s=20.0, conns=8, interval=0.2, short_rate=4.0, drain=True, log=print, quic=None):
    """Runs the churn script once, on every VIP of `vips` ({label: vip}) and `quic` ({label: vip}
    of cheetah VIPs with a UDP service on QUIC_PORT) at the same time.

    Each phase a new batch of long-lived connections opens (so connections born under every
    pool, SMux and placement state are held) from 2 client hosts per VIP, each sending a GET
    every `interval`; new short connections (one GET each) arrive all along at a sinusoidal
    rate around `short_rate` (+-75%, a period of two phases). Phases: start; +3 DIPs; an SMux
    killed; another SMux added (a standby SMux of the emulation, hlbemu --standby-smuxes; without
    one, the killed SMux restarted); (drain) every switch drained, so VIPs on HMuxes move to the
    SMuxes; -3 DIPs (3 of the original ones set to weight 0: drained, the operator's way to take
    a DIP out without breaking its connections); end. The pools are put back and the killed SMux
    restarted afterwards. The VIPs must exist with the first 8 DIP hosts as their pool.
    A `quic` VIP is served by smux/agent/quic_server.py on its DIP hosts (started here as each
    host joins its pool, before the phase's connections open, with an idle timeout that outlasts
    the probes' `timeout`; stopped at the end) and held by
    long-lived QUIC connections (hlb_probe.py quic), in the same batches; it gets no short
    connections.
    Returns {label: counts}, the events' log and the cookie counters' increase."""
    quic = quic or {}
    every = {**vips, **quic}
    ips = dip_ips(e)
    added, removed = ips[8:11], ips[0:3]
    cl = clients(e)
    victim = running_smuxes(e)[-1]
    newcomer = (e.standby_smuxes() or [None])[0]
    # A stall this long is a broken connection, not an outage: a cheetah-stateful owner's outage
    # (a phase, plus its restart or the standby's start and the agents' re-report, ~3 s) ends at
    # the client's next retransmission, which TCP's backoff puts up to twice as far.
    timeout = max(8.0, 2 * (phase_s + 3))
    quic_idle = timeout + 60    # a stall must end as the probe's timeout, not as a closed connection
    probes = {label: [] for label in every}
    shorts = {}
    events = []
    t0 = time.monotonic()
    t0_wall = time.time()

    def now():
        return round(time.monotonic() - t0, 1)

    def event(what, began):
        """A phase that began `began` s after t0 (its action's start: the phase a connection broke
        in is the one whose action preceded it, however long the action took)."""
        ck = cookie_counters(e, agents=False)
        events.append((began, what, ck))
        log("churn %5.1fs: %s (from %.1fs; SMux cookies decoded %d, invalid %d)" % (
            now(), what, began, ck["smuxDecoded"], ck["smuxInvalid"]))

    def batch(n):
        for i, (label, vip) in enumerate(sorted(every.items())):
            kind = ("quic", "--port", QUIC_PORT) if label in quic else ("tcp",)
            for k in range(2):
                node = cl[(2 * i + k + n) % len(cl)]
                probes[label].append(e.probe(node, *kind, "--vip", vip, "--conns", conns, "--interval", interval,
                                             "--duration", 590, "--timeout", timeout))

    hosts = dip_hosts(e)
    moves = PlacementLog(e, list(every.values()))
    before = cookie_counters(e)
    switches = [s["id"] for s in e.api("GET", "/switches")[1]["switches"]]
    try:
        for vip in quic.values():
            t = time.monotonic()
            e.start_quic_servers(vip, hosts[:8], idle_timeout=quic_idle)
            log("churn: QUIC servers for %s on %d DIP hosts up in %.1f s" % (vip, 8, time.monotonic() - t))
        for i, (label, vip) in enumerate(sorted(vips.items())):
            shorts[label] = e.probe(cl[(2 * i + 1) % len(cl)], "http", "--vip", vip, "--rate", short_rate,
                                    "--sine-period", 2 * phase_s, "--duration", 590, "--timeout", timeout)
        batch(0)
        event("start: %d VIPs, pool of 8, placement %s" % (len(every), {v: placement(e).get(v) for v in every.values()}),
              0.0)
        time.sleep(phase_s)
        began = now()
        for ip in added:
            for vip in every.values():
                api_ok(e, "POST", "/vips/%s/dips" % vip, {"ip": ip})
        quic_began = now()
        for vip in quic.values():
            e.start_quic_servers(vip, hosts[8:11], idle_timeout=quic_idle)
        batch(1)
        event("+3 DIPs (%s)" % ", ".join(added)
              + ("; their QUIC servers up %.1f s after the DIPs were added" % (now() - quic_began) if quic else ""), began)
        time.sleep(phase_s)
        began = now()
        e.kill_smux(victim)
        batch(2)
        event("SMux %s killed" % victim, began)
        time.sleep(phase_s)
        began = now()
        if newcomer:
            e.add_smux(newcomer)
        else:
            e.restart_smux(victim)
        announcing = wait_for(lambda: len(peers_announcing(e)) == len(running_smuxes(e)) - (1 if newcomer else 0),
                              60, 0.5)
        batch(3)
        event(("SMux %s added" % newcomer if newcomer else "SMux %s restarted" % victim)
              + (" and announcing" if announcing else " but NOT announcing after 60 s (peers: %s)" % peers_announcing(e)),
              began)
        time.sleep(phase_s)
        if drain:
            began = now()
            p = placement(e)
            for sid in switches:
                api_ok(e, "POST", "/switches/%s/drain" % sid)
            batch(4)
            event("every switch drained (VIPs then on HMuxes: %s)" % {v: p.get(v) for v in every.values()}, began)
            time.sleep(phase_s)
        began = now()
        for vip in every.values():
            set_weights(e, vip, {ip: 0 for ip in removed})
        batch(5)
        event("-3 DIPs: weight 0, drained (%s)" % ", ".join(removed), began)
        time.sleep(phase_s)
        event("end", now())
    finally:
        try:
            for pr in [p for ps in probes.values() for p in ps] + list(shorts.values()):
                if pr.poll() is None:       # all at once: each reports what it measured, then exits
                    pr.terminate()
            results = {}
            for label in every:
                conns_all = []
                for pr in probes[label]:
                    try:
                        conns_all += e.finish(pr, timeout=timeout + 30)["conns"]
                    except Exception as ex:
                        log("churn: a probe of %s reported nothing: %s" % (label, ex))
                results[label] = classify(conns_all, t0_wall)
                for b in results[label]["brokenConns"]:     # a timeout: the stall began `timeout` s earlier
                    b["stalledFromS"] = round(b["atS"] - timeout, 1) if b["atS"] and "timed out" in b["errors"] else None
                try:
                    s = e.finish(shorts[label], timeout=timeout + 30) if label in shorts else None
                except Exception:
                    s = None
                results[label]["short"] = s["requests"] if s else (None if label in quic else 0)
                results[label]["shortFailed"] = s["failed"] if s else None
            results_moves = moves.finish()
            for label, vip in every.items():
                results[label]["moves"] = results_moves[vip]
        finally:
            try:
                e.stop_quic_servers()
            finally:
                put_back(e, every.values(), switches if drain else (), added, removed, victim)
    after = cookie_counters(e)
    return results, events, {k: after[k] - before[k] for k in after}


CHURN_COLUMNS = ["hash", "hash+table", "cheetah", "cheetah-stateful", "cheetah-quic"]


def churn_table(results):
    rows = [("long-lived connections", "opened"), ("broken", "broken"), ("  reset", "reset"),
            ("  timeout", "timeout"), ("  wrong server", "wrongServer"), ("  other error", "otherError"),
            ("connect failed", "connectFailed"), ("short requests", "short"), ("short failed", "shortFailed")]
    w = 24
    lines = ["%-*s" % (w, "") + "".join("%18s" % c for c in CHURN_COLUMNS)]
    for title, key in rows:
        cells = []
        for c in CHURN_COLUMNS:
            r = results.get(c)
            cells.append("%18s" % ("not run" if r is None else "-" if r[key] is None else r[key]))
        lines.append("%-*s" % (w, title) + "".join(cells))
    cells = []
    for c in CHURN_COLUMNS:
        r = results.get(c)
        cells.append("%18s" % ("" if r is None else "%.2f%%" % (100.0 * r["broken"] / max(1, r["opened"]))))
    lines.append("%-*s" % (w, "broken share") + "".join(cells))
    cells = []
    for c in CHURN_COLUMNS:
        r = results.get(c)
        cells.append("%18s" % ("" if r is None else "%d/%d/%d" % (r["moves"]["hmuxToSmux"], r["moves"]["smuxToHmux"],
                                                               r["moves"]["hmuxToHmux"])))
    lines.append("%-*s" % (w, "moves H>S / S>H / H>H") + "".join(cells))
    return "\n".join(lines)


def phase_at(events, t):
    """The churn phase (event text) running t seconds after the churn's start."""
    now = None
    for at, what, _ in events:
        if at <= t:
            now = what
    return now


def churn_details(results, events):
    """The churn's timeline and every broken connection with the phase it broke in: a broken
    connection in a column that should have none is a finding to read, not a number to average."""
    def phase(t):
        p = phase_at(events, t) if t is not None else None
        return p.split(" (")[0] if p else "phase unknown"

    lines = ["timeline: " + "; ".join("%.1fs %s" % (at, what.split(" (")[0]) for at, what, _ in events)]
    for label in CHURN_COLUMNS:
        for b in (results.get(label) or {}).get("brokenConns", []):
            when = "at %s s (%s)" % (b["atS"], phase(b["atS"]))
            if b.get("stalledFromS") is not None:
                when = "stalled from %s s (%s), timed out %s" % (b["stalledFromS"], phase(b["stalledFromS"]), when)
            lines.append("broken %s: client port %s, servers %s, %d answers, %s: %s" % (
                label, b["localPort"], ",".join(b["dips"]), b["ok"], when, b["errors"] or "answered by a second server"))
    return "\n".join(lines)
