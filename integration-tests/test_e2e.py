"""End-to-end hybridlb on the emulated k=4 fat-tree, driven through the real hybridlbd.

Tests run in file order on one emulation; each leaves the fabric as it found it (switches
recovered, SMuxes restarted, services back).
"""
import json
import re
import time

from conftest import (applied_steps, between_migrations, hmux_vip, hmux_vip_under_traffic, migration_of, placement,
                      wait_for, wait_quiet)
import hmux_layout as layout

COOKIE = layout.cookie_match()


def bridge(emu, sid):
    return emu.fab["switches"][sid]["bridge"]


def vip_group_packets(emu, sid, vip):
    """Packets counted by the select group(s) the VIP's HMux flow points to on switch sid."""
    flows = emu.ofctl(bridge(emu, sid), "dump-flows", "cookie=%s,ip,nw_dst=%s" % (COOKIE, vip))
    groups = set(re.findall(r"group:(\d+)", flows))
    total = 0
    for g in groups:
        out = emu.ofctl(bridge(emu, sid), "dump-group-stats", "group_id=%s" % g)
        m = re.search(r"group_id=%s,.*?packet_count=(\d+)" % g, out)
        total += int(m.group(1)) if m else 0
    return total, groups


def smux_vip_packets(emu, vip):
    total = 0
    for s in emu.fab["smuxes"]:
        for line in emu.smux_metrics(s["id"]).splitlines():
            if line.startswith("hlb_smux_vip_packets_total{") and 'vip="%s"' % vip in line:
                total += int(float(line.rsplit(" ", 1)[1]))
    return total


def hex_ip(ip):
    return "0x%08x" % int.from_bytes(bytes(int(x) for x in ip.split(".")), "big")


def run_probe(emu, node, *args, timeout=120):
    out, err = emu.probe(node, *args).communicate(timeout=timeout)
    assert out.strip(), err
    return json.loads(out)


def client(emu, i=0, avoid=None):
    """The i-th client host, skipping clients under switch `avoid` (about to fail)."""
    return sorted(h for h, v in emu.fab["hosts"].items() if v["role"] == "client" and v["tor"] != avoid)[i]


def test_vip_on_hmux_is_served_through_that_switch(emu, placed):
    def measure():
        vip, sid = hmux_vip(emu)
        g0, groups = vip_group_packets(emu, sid, vip)
        assert groups, "no HMux flow for %s on %s" % (vip, sid)
        s0 = smux_vip_packets(emu, vip)
        r = run_probe(emu, client(emu, 3), "udp", "--vip", vip, "--rate", 200, "--flows", 4, "--duration", 2)
        g1, _ = vip_group_packets(emu, sid, vip)
        return vip, sid, g0, g1, s0, smux_vip_packets(emu, vip), r
    vip, sid, g0, g1, s0, s1, r = between_migrations(emu, measure)
    assert r["lost"] == 0, r
    assert g1 - g0 >= r["sent"], "switch %s group counted %d of %d probe packets" % (sid, g1 - g0, r["sent"])
    assert s1 == s0, "SMuxes saw %d packets of HMux VIP %s" % (s1 - s0, vip)


def test_vip_that_does_not_fit_is_served_by_smuxes(emu, placed):
    def measure():
        p = placement(emu)
        on_smux = [v["vip"] for v in emu.vips if p.get(v["vip"]) == "smux"]
        assert on_smux, "host tables hold 4 entries and 6 VIPs carry traffic: some must be on the SMuxes: %s" % p
        # The coldest of them, probed gently: the probe's own traffic must not make it the
        # VIP the next re-assignment puts on an HMux (with the hottest SMux VIP, each
        # measurement set off the migration that spoilt it).
        rate = {r["vip"]: r["bytesPerSecond"] for r in emu.api("GET", "/stats")[1].get("vips", [])}
        vip = min(sorted(on_smux), key=lambda v: rate.get(v, 0.0))
        for sid in emu.fab["switches"]:
            flows = emu.ofctl(bridge(emu, sid), "dump-flows", "cookie=%s,ip,nw_dst=%s" % (COOKIE, vip))
            assert not any("priority=%d," % p in flows for p in layout.ENTRY_PRIORITIES), (sid, flows)
        s0 = smux_vip_packets(emu, vip)
        r = run_probe(emu, client(emu, 2), "udp", "--vip", vip, "--rate", 50, "--flows", 4, "--duration", 2)
        return vip, s0, smux_vip_packets(emu, vip), r
    vip, s0, s1, r = between_migrations(emu, measure)
    assert r["lost"] == 0, r
    assert s1 - s0 >= r["sent"], "SMuxes counted %d of %d probe packets" % (s1 - s0, r["sent"])


BAD_REQUESTS = [
    ("POST", "/vips", '{"vip": "10.100.9.300", "aggregate": "10.100.0.0/16", "ports": [{"proto": "tcp", "port": 80, "dips": [{"ip": "10.0.0.1"}]}]}', "/vip"),
    ("POST", "/vips", '{"vip": "10.100.9.1", "aggregate": "10.100.0.0/16", "ports": [{"proto": "tcp", "port": 80, "dips": [{"ip": "10.0.0.999"}]}]}', "/ports/0/dips/0/ip"),
    ("POST", "/vips", '{"vip": "10.100.9.1", "aggregate": "10.100.0.0/16", "ports": [{"proto": "tcp", "port": 80, "dips": [', "/"),
    ("POST", "/vips", json.dumps({"vip": "10.100.9.1", "aggregate": "10.100.0.0/16", "ports": [
        {"proto": "tcp", "port": 80, "dips": [{"ip": "10.%d.%d.%d" % (1 + i // 65536, (i // 256) % 256, i % 256)}
                                              for i in range(4097)]}]}), "/ports/0/dips"),
    ("GET", "/vips/10.100.9.77", None, "vip"),
    ("DELETE", "/vips/10.100.9.77", None, "vip"),
    ("POST", "/vips/10.100.1.1/dips", '{"ip": "300.1.1.1"}', "/ip"),
]


def test_invalid_rest_requests_get_4xx_naming_the_field_and_change_nothing(emu, placed):
    before = emu.api("GET", "/vips")
    seen = {r["id"] for r in emu.api("GET", "/migrations")[1]["recent"]}
    for method, path, body, field in BAD_REQUESTS:
        code, answer = emu.api(method, path, body)
        assert 400 <= code < 500, (method, path, code, answer)
        assert isinstance(answer, dict) and answer.get("field", "").startswith(field[:4]) or field in json.dumps(answer), \
            (method, path, field, answer)
    assert emu.api("GET", "/vips") == before
    # Nothing planned because of them (the periodic sticky re-assignment may still move VIPs).
    time.sleep(2)
    new = [r for r in emu.api("GET", "/migrations")[1]["recent"] if r["id"] not in seen]
    assert all(r.get("trigger") == "interval" for r in new), new


def controller_flows(emu):
    """(switch, flow match+actions) -> duration, for every controller flow."""
    out = {}
    for sid in emu.fab["switches"]:
        for line in emu.ofctl(bridge(emu, sid), "dump-flows", "cookie=%s" % COOKIE).splitlines():
            m = re.search(r"duration=([\d.]+)s", line)
            if not m:
                continue
            key = re.sub(r"(duration|n_packets|n_bytes|idle_age|hard_age)=[^,]*, ?", "", line).strip()
            out[(sid, key)] = float(m.group(1))
    return out


def test_daemon_restart_mid_traffic_loses_nothing_and_reinstalls_nothing(emu, placed):
    vip, sid = hmux_vip(emu)
    wait_quiet(emu)
    vips_before = emu.api("GET", "/vips")[1]
    place_before = placement(emu)
    flows_before = controller_flows(emu)
    udp = emu.probe(client(emu, 4), "udp", "--vip", vip, "--rate", 300, "--flows", 8, "--duration", 300)
    time.sleep(2)
    t_restart = time.monotonic()
    emu.daemon_stop()
    emu.daemon_start()
    time.sleep(5)   # a couple of reconciles of the new daemon
    r = emu.finish(udp)
    assert r["lost"] == 0, "lost %d of %d, outages %s" % (r["lost"], r["sent"], r["outages"][:8])
    assert emu.api("GET", "/vips")[1] == vips_before
    after = controller_flows(emu)
    elapsed = time.monotonic() - t_restart
    # VIPs the periodic re-assignment moved meanwhile are legitimately re-programmed.
    moved = {v for v, s in placement(emu).items() if place_before.get(v) != s}
    reinstalled = [k for k, d in after.items() if k in flows_before and d + 1 < flows_before[k] + elapsed - 5
                   and not any("nw_dst=%s " % v in k[1] for v in moved)]
    assert not reinstalled, "reinstalled after restart: %s" % reinstalled[:3]
    kept = {k for k in flows_before if "priority=%d," % layout.PRIORITY["route"] not in k[1]
            and not any("nw_dst=%s " % v in k[1] for v in moved)}
    assert set(after) >= kept, "flows lost: %s" % sorted(kept - set(after))[:3]


def held(emu):
    return emu.api("GET", "/assignment")[1].get("heldOnSmuxes", {})


def test_dip_add_breaks_no_connection_and_failed_dip_moves_only_its_connections(emu, placed):
    """Duet §3.5.2: the VIP leaves its HMux, the SMuxes (which pin connections) take the DIP, and
    the VIP returns to an HMux only once no pinned connection would change DIP there."""
    used = {d["ip"] for v in emu.vips for d in v["ports"][0]["dips"]}
    new_dip = next(h["ip"] for h in emu.topo["hosts"] if h["ip"] not in used)
    vip, sid, (tcp, udp) = hmux_vip_under_traffic(emu, lambda vip, sid: (
        emu.probe(client(emu, 5), "tcp", "--vip", vip, "--conns", 8, "--interval", 0.05, "--duration", 300,
                  "--timeout", 60),
        emu.probe(client(emu, 6), "udp", "--vip", vip, "--rate", 300, "--flows", 8, "--duration", 300)))
    seen = {r["id"] for r in emu.api("GET", "/migrations")[1]["recent"]}
    code, body = emu.api("POST", "/vips/%s/dips" % vip, {"ip": new_dip, "proto": "any", "port": 0})
    assert code == 201, body
    rec = migration_of(emu, new_dip)
    assert rec and rec["state"] == "done", "no finished migration for the DIP add: %s" % emu.api("GET", "/migrations")[1]
    actions = applied_steps(emu, seen, vip)
    assert ("withdraw-from-hmux", sid) in actions and "add-dip" in [a for a, _ in actions], actions
    time.sleep(3)   # a reconcile or two: the pinned connections still keep it on the SMuxes
    assert placement(emu)[vip] == "smux" and vip in held(emu), emu.api("GET", "/assignment")[1]
    assert held(emu)[vip]["divergingConnections"] > 0, held(emu)
    t = emu.finish(tcp)
    u = emu.finish(udp)
    assert t["broken"] == 0, t
    assert all(len(c["dips"]) == 1 for c in t["conns"]), "a connection changed DIP: %s" % t["conns"]
    assert all(len(f["dips"]) == 1 for f in u["flows"]), u["flows"]
    assert u["lost"] == 0, "lost %d of %d, outages %s" % (u["lost"], u["sent"], u["outages"][:8])
    # The probes ended (FIN linger and UDP idle: 10 s here): the VIP may return to an HMux.
    back = wait_for(lambda: placement(emu).get(vip) != "smux" and vip not in held(emu), 120, 1)
    assert back, "VIP %s still held: %s" % (vip, emu.api("GET", "/assignment")[1])
    at = placement(emu)[vip]
    flows = emu.ofctl(bridge(emu, at), "dump-groups")
    assert new_dip in flows or hex_ip(new_dip) in flows, "the HMux %s pool lacks %s" % (at, new_dip)

    # Now fail one DIP (its service stops): only its connections move.
    victim_ip = [d["ip"] for v in emu.vips if v["vip"] == vip for d in v["ports"][0]["dips"]][0]
    victim = next(h for h, v in emu.fab["hosts"].items() if v["ip"] == victim_ip)
    tcp = emu.probe(client(emu, 5), "tcp", "--vip", vip, "--conns", 12, "--interval", 0.05, "--duration", 300,
                    "--timeout", 60)
    time.sleep(2)
    emu.stop_service(victim)
    try:
        gone = wait_for(lambda: victim_ip in json.dumps(emu.api("GET", "/assignment")[1].get("unhealthyDips", [])),
                        30, 0.5)
        assert gone, "DIP %s never reported unhealthy: %s" % (victim_ip, emu.api("GET", "/assignment")[1])
        wait_quiet(emu, 60)
        time.sleep(3)
        t = emu.finish(tcp)
        for c in t["conns"]:
            if c["dips"] and c["dips"][0] != victim:
                assert not c["errors"] and len(c["dips"]) == 1, "connection to a healthy DIP broke: %s" % c
        r = run_probe(emu, client(emu, 7), "http", "--vip", vip, "--rate", 20, "--duration", 2)
        assert r["failed"] == 0 and victim not in r["dips"], r
    finally:
        emu.start_service(victim)
    assert wait_for(lambda: victim_ip not in json.dumps(emu.api("GET", "/assignment")[1].get("unhealthyDips", [])),
                    20, 0.5)


def test_sticky_migration_hmux_smux_hmux_loses_nothing(emu, placed):
    """Duet §3.7.3: a VIP moves from one HMux to another through the SMuxes (here because the
    operator drains its switch). Paced UDP stream: zero loss; TCP: no reset, no DIP change."""
    vip, sid, (udp, tcp) = hmux_vip_under_traffic(emu, lambda vip, sid: (
        emu.probe(client(emu, 1), "udp", "--vip", vip, "--rate", 500, "--flows", 16, "--duration", 300),
        emu.probe(client(emu, 2), "tcp", "--vip", vip, "--conns", 4, "--interval", 0.02, "--duration", 300,
                  "--timeout", 60)))
    seen = {r["id"] for r in emu.api("GET", "/migrations")[1]["recent"]}
    code, body = emu.api("POST", "/switches/%s/drain" % sid)
    try:
        assert code == 200 and body["drained"], body

        def moved():
            # a migration superseded by the drain's own reconcile is not the one to judge
            recs = [r for r in emu.api("GET", "/migrations")[1]["recent"] if r["id"] not in seen
                    and r.get("state") in ("done", "rolled-back", "failed") and vip in json.dumps(r["plan"])]
            return recs[0] if recs and placement(emu).get(vip) != sid else None
        rec = wait_for(moved, 90, 0.5)
        time.sleep(2)
        u = emu.finish(udp)
        t = emu.finish(tcp)
        assert rec and rec["state"] == "done", emu.api("GET", "/migrations")[1]
        now = placement(emu)[vip]
        steps = applied_steps(emu, seen, vip)
        print("migration %s %s -> %s: %s; %d of %d datagrams lost" % (vip, sid, now, steps, u["lost"], u["sent"]))
        assert now not in (sid, "smux"), "VIP %s not on another HMux: %s" % (vip, now)
        assert ("withdraw-from-hmux", sid) in steps and ("announce-on-hmux", now) in steps, steps
        assert u["lost"] == 0, "lost %d of %d: %s" % (u["lost"], u["sent"], u["outages"])
        assert t["broken"] == 0, "connections reset or timed out: %s" % [c for c in t["conns"] if c["errors"]]
        assert all(len(c["dips"]) == 1 for c in t["conns"]), t["conns"]
        assert all(len(f["dips"]) == 1 for f in u["flows"]), u["flows"]
    finally:
        emu.api("DELETE", "/switches/%s/drain" % sid)


def test_hmux_switch_failure_smuxes_serve_and_connections_survive(emu, placed):
    vip, sid, (udp, tcp) = hmux_vip_under_traffic(emu, lambda vip, sid: (
        emu.probe(client(emu, 0, avoid=sid), "udp", "--vip", vip, "--rate", 500, "--flows", 8, "--duration", 300),
        emu.probe(client(emu, 3, avoid=sid), "tcp", "--vip", vip, "--conns", 6, "--interval", 0.02,
                  "--duration", 300, "--timeout", 60)), warmup=3)
    emu.fail_switch(sid)
    try:
        moved = wait_for(lambda: placement(emu).get(vip) != sid, 90, 0.2)
        time.sleep(3)
        u = emu.finish(udp)
        t = emu.finish(tcp)
        assert moved, "VIP %s still on failed switch %s" % (vip, sid)
        assert not any(o.get("unrecovered") for o in u["outages"]), u["outages"]
        print("failover outage at the client: %s ms, %d lost of %d" % (u["maxOutageMs"], u["lost"], u["sent"]))

        assert t["broken"] == 0, "long-lived connections broken: %s" % [c for c in t["conns"] if c["errors"]]
        assert all(len(c["dips"]) == 1 for c in t["conns"]), t["conns"]
        assert all(len(f["dips"]) == 1 for f in u["flows"]), u["flows"]
    finally:
        emu.recover_switch(sid)


def test_smux_killed_frr_withdraws_and_smux_vips_recover(emu, placed):
    rs = emu.fab["routeServer"]["vtyDir"]

    def peers_announcing():
        out = emu.ns_run(["vtysh", "--vty_socket", rs, "-c", "show bgp ipv4 unicast json"]).stdout
        routes = json.loads(out).get("routes", {}) if out.strip() else {}
        return sorted({p.get("peerId") or p.get("nexthops", [{}])[0].get("ip") for r in routes.values() for p in r})

    assert wait_for(lambda: len(peers_announcing()) == 2, 20), peers_announcing()
    p = placement(emu)
    vip = sorted(v["vip"] for v in emu.vips if p.get(v["vip"]) == "smux")[0]
    victim = emu.fab["smuxes"][0]["id"]
    udp = emu.probe(client(emu, 0), "udp", "--vip", vip, "--rate", 300, "--flows", 16, "--duration", 300)
    time.sleep(2)
    emu.kill_smux(victim)
    try:
        assert wait_for(lambda: len(peers_announcing()) == 1, 10, 0.1), "FRR did not withdraw %s" % victim
        assert wait_for(lambda: [s for s in emu.api("GET", "/smuxes")[1]["smuxes"] if s["id"] == victim
                                 and not s.get("live")], 30, 0.3), "daemon still uses %s" % victim
        wait_quiet(emu, 60)
        time.sleep(3)
        u = emu.finish(udp)
        print("SMux kill outage: %s ms, %d lost of %d" % (u["maxOutageMs"], u["lost"], u["sent"]))
        assert not any(o.get("unrecovered") for o in u["outages"]), u
        r = run_probe(emu, client(emu, 1), "http", "--vip", vip, "--rate", 20, "--duration", 2)
        assert r["failed"] == 0, r
    finally:
        emu.restart_smux(victim)
    assert wait_for(lambda: len(peers_announcing()) == 2, 20, 0.5), "restarted SMux not announcing"
