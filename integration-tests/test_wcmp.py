"""WCMP weights end to end: new TCP connections to a VIP with DIP weights 1:2:1 reach the DIPs
in proportion to the weights, through the SMuxes and through an HMux (OVS select group), on the
emulation with the real hybridlbd. Each connection is one GET of hlb_probe's `http` mode; the
DIP's HTTP service answers with its host name, which tells who served it.

Bound: each DIP's share of 2,000 connections must be within 5 percentage points of its weight's
share. One standard deviation of a share at 2,000 samples is at most 1.1 points (p = 0.5), so a
proportional split fails by chance with a probability under 1e-5 per DIP, while the split OVS's
selection_method=hash gives weights 1:2:1 over one bucket per DIP (about 17 / 66 / 17) is 16
points off.

Runs on the session's emulation after test_e2e.py and puts both VIPs back as it found them.
"""
import json
import os
import time

from conftest import between_migrations, hmux_vip, placement, wait_for, wait_quiet
from test_e2e import client, held, smux_vip_packets, vip_group_packets

CONNECTIONS = 2000
BOUND = 0.05
# other weights to measure, e.g. HLB_IT_WCMP_WEIGHTS=1,3 (the first two DIPs are the VIP's own)
WEIGHTS = tuple(int(w) for w in os.environ.get("HLB_IT_WCMP_WEIGHTS", "1,2,1").split(","))


def new_connections(emu, vip, n=CONNECTIONS, probes=4, rate=125):
    """n new connections from `probes` clients at once: {DIP host: connections it served}."""
    per_probe = n // probes
    procs = [emu.probe(client(emu, i), "http", "--vip", vip, "--rate", rate, "--duration", per_probe / rate,
                       "--timeout", 2) for i in range(probes)]
    served = {}
    for p in procs:
        out, err = p.communicate(timeout=120)
        r = json.loads(out)
        assert r["failed"] == 0, r
        for name, c in r["dips"].items():
            served[name] = served.get(name, 0) + c
    assert sum(served.values()) == per_probe * probes, served
    return served


def host_of(emu, ip):
    return next(h for h, v in emu.fab["hosts"].items() if v["ip"] == ip)


def weighted(emu, vip):
    """Gives the VIP's DIPs the WEIGHTS (its first two DIPs, then unused hosts); returns (its
    configuration before, {DIP host: weight})."""
    code, before = emu.api("GET", "/vips/%s" % vip)
    assert code == 200, before
    code, everything = emu.api("GET", "/vips")
    used = {d["ip"] for v in everything["vips"] for p in v["ports"] for d in p["dips"]}
    ips = [d["ip"] for d in before["ports"][0]["dips"][:2]]
    ips += [h["ip"] for h in emu.topo["hosts"] if h["ip"] not in used][:len(WEIGHTS) - len(ips)]
    body = dict(before, ports=[dict(before["ports"][0], dips=[
        {"ip": ip, "weight": w} for ip, w in zip(ips, WEIGHTS)])])
    code, answer = emu.api("PUT", "/vips/%s" % vip, body)
    assert code == 200, answer
    return before, {host_of(emu, ip): w for ip, w in zip(ips, WEIGHTS)}


def check_split(where, served, weights):
    total = sum(served.values())
    split = {h: served.get(h, 0) / total for h in weights}
    print("\n%s: %d new connections, %% per DIP %s (weights %s)" % (
        where, total, " / ".join("%.1f" % (100 * split[h]) for h in weights),
        ":".join(str(w) for w in weights.values())))
    assert set(served) <= set(weights), "served by a DIP outside the pool: %s" % served
    for h, w in weights.items():
        assert abs(split[h] - w / sum(weights.values())) <= BOUND, (where, split, weights)


def test_new_connections_split_by_weight_through_the_smuxes(emu, placed):
    """An SMux VIP made 1:2:1 (WEIGHTS). Long-lived connections opened before the change keep it held on
    the SMuxes (their DIPs stay pinned, and some of them an HMux would send elsewhere) while
    2,000 new connections are measured; the pinned ones neither break nor change DIP."""
    wait_quiet(emu)
    on_smux = sorted(v for v, at in placement(emu).items() if at == "smux" and v.startswith("10.100.1."))
    assert on_smux, placement(emu)
    vip = on_smux[0]
    # ended by the test (SIGTERM) once measured; the longest run allowed, so a slow machine
    # cannot end them, and with them the hold, before
    pinned = emu.probe(client(emu, 5), "tcp", "--vip", vip, "--conns", 16, "--interval", 0.2,
                       "--duration", 600, "--timeout", 30)
    time.sleep(2)
    before, weights = weighted(emu, vip)
    try:
        assert wait_for(lambda: (held(emu).get(vip) or {}).get("divergingConnections", 0) > 0, 30, 0.5), \
            "the grown pool should hold the VIP on the SMuxes: %s" % emu.api("GET", "/assignment")[1]

        # held, it stays on the SMuxes whatever else migrates meanwhile
        s0 = smux_vip_packets(emu, vip)
        served = new_connections(emu, vip)
        smux_packets = smux_vip_packets(emu, vip) - s0
        assert placement(emu)[vip] == "smux" and vip in held(emu), emu.api("GET", "/assignment")[1]
        assert smux_packets >= 3 * CONNECTIONS, "the SMuxes carried %d packets" % smux_packets
        check_split("SMux VIP " + vip, served, weights)
        t = emu.finish(pinned)
        assert t["broken"] == 0 and all(len(c["dips"]) == 1 for c in t["conns"]), \
            "a pinned connection broke or moved with the new weights: %s" % t["conns"]
    finally:
        if pinned.poll() is None:
            emu.finish(pinned)
        assert emu.api("PUT", "/vips/%s" % vip, before)[0] == 200
        wait_quiet(emu)


def test_new_connections_split_by_weight_through_an_hmux(emu, placed):
    """An HMux VIP made 1:2:1 (WEIGHTS): through the SMuxes while its pool grows (§3.5.2), back on an
    HMux once no pinned connection would move; there 2,000 new connections follow the weights,
    counted by the switch's select group, none by the SMuxes."""
    wait_quiet(emu)
    vip, _ = hmux_vip(emu)
    before, weights = weighted(emu, vip)
    try:
        assert wait_for(lambda: vip in held(emu), 30, 0.5), \
            "the grown pool should take the VIP off its HMux: %s" % emu.api("GET", "/assignment")[1]
        back = wait_for(lambda: placement(emu).get(vip) != "smux" and vip not in held(emu), 90, 1)
        assert back, "VIP %s not back on an HMux: %s" % (vip, emu.api("GET", "/assignment")[1])

        def measure():
            sid = placement(emu)[vip]
            assert sid != "smux"
            g0, _ = vip_group_packets(emu, sid, vip)
            s0 = smux_vip_packets(emu, vip)
            served = new_connections(emu, vip)
            g1, _ = vip_group_packets(emu, sid, vip)
            return sid, served, g1 - g0, smux_vip_packets(emu, vip) - s0
        sid, served, group_packets, smux_packets = between_migrations(emu, measure)
        assert group_packets >= 3 * CONNECTIONS, "switch %s's group counted %d packets" % (sid, group_packets)
        assert smux_packets < CONNECTIONS // 100, "the SMuxes carried %d packets of an HMux VIP" % smux_packets
        check_split("HMux VIP %s on %s" % (vip, sid), served, weights)
    finally:
        assert emu.api("PUT", "/vips/%s" % vip, before)[0] == 200
        wait_quiet(emu)
