"""A P4 switch as an HMux of the real hybridlbd: the emulation runs agg-1-0 as the P4 model
switch (hlb-p4switch, `hlbemu.py start --p4-switches`) with the `hlb_cheetah` program (the HMux
tables and the Cheetah decode), and the daemon programs its VIPs on it over P4Runtime
(fabric.json's "p4" object). One OVS switch, agg-1-1, may hold VIPs too; it is drained (the
operator's maintenance mode) except while a VIP migrates between it and the P4 switch. No other
switch holds VIPs.

- a VIP is served through the P4 HMux: its service counter, read over P4Runtime, counts every
  probe packet and the SMuxes none;
- the weight split: a WCMP VIP's 2,000 flows follow its DIP weights (its service counter counts
  them all, each DIP's bucket counter at least the datagrams it answered);
- each DIP of the three VIPs counts in a bucket counter of its own;
- a Cheetah VIP (crc32c cookies) decoded on the P4 HMux keeps every connection while DIPs are
  added and one is drained;
- migration P4 HMux -> OVS HMux and back with traffic, through the SMuxes (the hashes differ);
- the P4 switch fails: its VIPs go to the SMuxes, connections survive.

Its own emulation (module scope, before the suite's session emulation starts: see conftest).
"""
import contextlib
import ipaddress
import json
import os
import subprocess
import time
import sys

import pytest

import cheetah_exp as cx
from conftest import (REPO, SMUX_PIN_TIMEOUTS, applied_steps, between_migrations, placement, start_daemon, stop,
                      wait_for, wait_quiet)
import hlbemu
from test_e2e import client, smux_vip_packets
from test_wcmp import CONNECTIONS, WEIGHTS, check_split, host_of

sys.path.insert(0, os.path.join(REPO, "p4", "switch"))
sys.path.insert(0, os.path.join(REPO, "p4", "model"))

P4_HMUX = "agg-1-0"
OVS_HMUX = "agg-1-1"
PROFILE = "hlb_cheetah"
VIP = "10.100.1.1"
WCMP_VIP = "10.100.1.2"
COOKIE_VIP = "10.100.2.1"
COOKIE_PORT = 80                  # hlb_probe's tcp and http port
AGG = "10.100.0.0/16"
WCMP_HOSTS = (2, 10, 5, 13)       # indexes of the topology's hosts; the first len(WEIGHTS)


def vip_config(hosts):
    """Three VIPs with disjoint pools (a bucket counter then names one VIP's DIP): VIP, 2 DIPs;
    WCMP_VIP, the DIPs weighted WEIGHTS; COOKIE_VIP, cheetah with crc32c cookies, 4 DIPs (the
    test adds hosts[7] and hosts[15])."""
    any_port = {"proto": "any", "port": 0}
    return {"vips": [
        {"vip": VIP, "aggregate": AGG, "ports": [dict(any_port, dips=[{"ip": hosts[1]}, {"ip": hosts[9]}])]},
        {"vip": WCMP_VIP, "aggregate": AGG, "ports": [dict(any_port, dips=[
            {"ip": hosts[i], "weight": w} for i, w in zip(WCMP_HOSTS, WEIGHTS)])]},
        dict(cx.vip_doc(COOKIE_VIP, COOKIE_PORT, [hosts[i] for i in (3, 11, 6, 14)], "cheetah", "hash"),
             cookieHash="crc32c")]}


@pytest.fixture(scope="module")
def p4emu(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("needs root (namespaces, OVS, DPDK)")
    tag = "ip%d" % (os.getpid() % 100000)
    d = tmp_path_factory.mktemp("p4emu")
    topo_file = str(d / "topology.json")
    subprocess.run(["java", "-jar", hlbemu.SOLVER_JAR, "topology", "fat-tree", "--k=4",
                    "--smux-tor=tor-0-0,tor-2-0", "--out=" + topo_file], check=True, capture_output=True)
    with open(topo_file) as f:
        topo = json.load(f)
    for s in topo["switches"]:            # only the P4 switch and one OVS switch may hold VIPs
        if s["id"] not in (P4_HMUX, OVS_HMUX):
            s.setdefault("tables", {})["tunnel"] = 0
    with open(topo_file, "w") as f:
        json.dump(topo, f)
    hosts = [h["ip"] for h in topo["hosts"]]
    vip_file = str(d / "vips.json")
    with open(vip_file, "w") as f:
        json.dump(vip_config(hosts), f)
    try:
        subprocess.run([hlbemu.PY, os.path.join(REPO, "topologies", "hlbemu.py"), "start", "--tag", tag,
                        "--topology", topo_file, "--vips", vip_file, *SMUX_PIN_TIMEOUTS,
                        "--p4-switches", P4_HMUX, "--p4-profile", PROFILE], check=True, timeout=300)
        e = start_daemon(tag)
        code, body = e.api("POST", "/switches/%s/drain" % OVS_HMUX)
        assert code == 200 and body["drained"], body
        e.topo = topo
        e.hosts = hosts
        clients = sorted(h for h, v in e.fab["hosts"].items() if v["role"] == "client")
        # traffic on every VIP: the controller places measured VIPs on HMuxes
        e.load = [e.probe(clients[i], "http", "--vip", v, "--rate", 8, "--duration", 600, "--timeout", 1)
                  for i, v in enumerate((VIP, WCMP_VIP, COOKIE_VIP))]
        e.clients = clients
        yield e
    finally:
        stop(tag, os.environ.get("HLB_IT_P4_LOGS", "/tmp/hlb-it-p4-logs"))


@contextlib.contextmanager
def p4rt(emu):
    """A P4Runtime client of the P4 HMux (reads need no arbitration)."""
    from p4rt_client import P4RuntimeClient
    p4 = emu.fab["switches"][P4_HMUX]["p4"]
    c = P4RuntimeClient(p4["grpc"], profile=p4["profile"])
    try:
        yield c
    finally:
        c.close()


def service_ids(c, vip):
    """The service ids of vip's entries in vip_whole, vip_service_any_port or vip_service."""
    services = set()
    for table in ("HlbIngress.hmux.vip_whole", "HlbIngress.hmux.vip_service_any_port", "HlbIngress.hmux.vip_service"):
        for e in c.read(c.b.table_entry(table)):
            if ip(int.from_bytes(e.table_entry.match[0].exact.value, "big")) == vip:
                services.add(action_params(c.b, e.table_entry.action.action)["service_id"])
    assert services, "no service entry for %s on the P4 HMux" % vip
    return services


def service_packets(emu, vip):
    """Packets the P4 HMux's service_counter counted for vip's services, read over P4Runtime."""
    with p4rt(emu) as c:
        return sum(c.read(c.b.counter_entry("HlbIngress.hmux.service_counter", i))[0].counter_entry.data.packet_count
                   for i in service_ids(c, vip))


def dip_packets(emu, vip):
    """{DIP host: packets bucket_counter counted at the indexes its set_dip members in vip's groups
    name (one per bucket: a DIP of u WCMP units is u buckets)}, read over P4Runtime (dip_select:
    service id -> group -> members)."""
    from p4rt_client import p4runtime_pb2
    with p4rt(emu) as c:
        services = service_ids(c, vip)
        groups = {e.table_entry.action.action_profile_group_id
                  for e in c.read(c.b.table_entry("HlbIngress.hmux.dip_select"))
                  if int.from_bytes(e.table_entry.match[0].exact.value, "big") in services}
        profile = c.b.profiles["HlbIngress.hmux.dip_selector"].preamble.id
        member_ids = {m.member_id for g in c.read(p4runtime_pb2.ActionProfileGroup(action_profile_id=profile))
                      if g.action_profile_group.group_id in groups for m in g.action_profile_group.members}
        indexes = {}
        for m in c.read(p4runtime_pb2.ActionProfileMember(action_profile_id=profile)):
            if m.action_profile_member.member_id in member_ids:
                p = action_params(c.b, m.action_profile_member.action)
                indexes.setdefault(host_of(emu, ip(p["tunnel_dst"])), set()).add(p["bucket"])
        return {h: sum(c.read(c.b.counter_entry("HlbIngress.hmux_encap.bucket_counter", i))[0]
                       .counter_entry.data.packet_count for i in ixs)
                for h, ixs in indexes.items()}


def cheetah_events(emu):
    """The P4 HMux's Cheetah event counter: {event (define.p4's CHEETAH_*): packets}."""
    import hlb_p4info as info
    names = {getattr(info, n): n for n in ("CHEETAH_DECODED", "CHEETAH_INVALID", "CHEETAH_FALLBACK", "CHEETAH_SYN")}
    with p4rt(emu) as c:
        ev = c.read(c.b.counter_entry("HlbIngress.cheetah.cheetah_events"))
    return {names[e.counter_entry.index.index]: e.counter_entry.data.packet_count for e in ev
            if e.counter_entry.index.index in names}


def action_params(builder, action):
    """{parameter name: int} of a P4Runtime Action message."""
    import p4rt_build
    info = next(a for a in builder.actions.values() if a.preamble.id == action.action_id)
    names = {p.id: p.name for p in info.params}
    return {names[p.param_id]: p4rt_build.to_int(p.value) for p in action.params}


def ip(value):
    return str(ipaddress.IPv4Address(value))


def bucket_dips(emu):
    """{bucket counter index: the DIPs whose dip_selector members (set_dip) count there}."""
    from p4rt_client import p4runtime_pb2
    with p4rt(emu) as c:
        profile = c.b.profiles["HlbIngress.hmux.dip_selector"].preamble.id
        members = c.read(p4runtime_pb2.ActionProfileMember(action_profile_id=profile))
        params = [action_params(c.b, m.action_profile_member.action) for m in members]
    out = {}
    for p in params:
        out.setdefault(p["bucket"], set()).add(ip(p["tunnel_dst"]))
    return out


def selector_dips(emu):
    """The DIPs the P4 HMux's dip_selector members send new flows to."""
    return set().union(*bucket_dips(emu).values())


def all_servers(emu):
    """{server id: DIP address} of the P4 HMux's all_servers table (the papers' AllServers)."""
    with p4rt(emu) as c:
        entries = [e.table_entry for e in c.read(c.b.table_entry("HlbIngress.cheetah.all_servers"))]
        return {int.from_bytes(e.match[0].exact.value, "big"): ip(action_params(c.b, e.action.action)["dip"])
                for e in entries}


def test_vip_is_served_through_the_p4_hmux(p4emu):
    e = p4emu
    at = wait_for(lambda: placement(e).get(VIP) == P4_HMUX, 120, 2)
    assert at, "VIP %s not placed on the P4 switch %s: %s" % (VIP, P4_HMUX, e.cli("assignment"))
    code, sw = e.api("GET", "/switches")
    mine = [s for s in sw["switches"] if s["id"] == P4_HMUX][0]
    assert mine["hash"]["selection"] == "crc32" and mine["decodesCookies"], mine

    def measure():
        assert wait_for(lambda: placement(e).get(VIP) == P4_HMUX, 120, 1), e.cli("assignment")
        svc0, s0 = service_packets(e, VIP), smux_vip_packets(e, VIP)
        out, err = e.probe(e.clients[1], "udp", "--vip", VIP, "--rate", 200, "--flows", 16,
                           "--duration", 3).communicate(timeout=120)
        assert out.strip(), err
        return json.loads(out), service_packets(e, VIP) - svc0, smux_vip_packets(e, VIP) - s0
    r, svc, smux_packets = between_migrations(e, measure)
    assert r["lost"] == 0, r
    assert svc >= r["sent"], "the P4 HMux's counter of the VIP's service counted %d of %d" % (svc, r["sent"])
    assert {d for f in r["flows"] for d in f["dips"]} == {host_of(e, e.hosts[1]), host_of(e, e.hosts[9])}, \
        "the 16 flows reach both DIPs: %s" % r["flows"]
    assert smux_packets == 0, "the SMuxes saw %d packets of a VIP on the P4 HMux" % smux_packets


def test_each_dip_of_the_p4_hmux_counts_in_a_bucket_counter_of_its_own(p4emu):
    """p4/README.md: bucket_counter counts per DIP, at an index the controller gives each bucket on
    the switch (the VIPs' own bucket ids are 0, 1, ... in every VIP). The three VIPs' pools are
    disjoint (9 DIPs): each DIP must count in an index no other DIP's members name."""
    e = p4emu
    assert wait_for(lambda: all(placement(e).get(v) == P4_HMUX for v in (VIP, WCMP_VIP, COOKIE_VIP)), 120, 2), \
        e.cli("assignment")
    buckets = bucket_dips(e)
    dips = {d for ds in buckets.values() for d in ds}
    assert len(dips) >= 2 + len(WEIGHTS) + 4, "members of the three VIPs' DIPs: %s" % buckets
    shared = {b: ds for b, ds in buckets.items() if len(ds) > 1}
    assert not shared, "bucket counter indexes counting several DIPs: %s" % shared


def udp_flows(emu, vip, n=CONNECTIONS, probes=4, per_flow=2, rate=125):
    """n UDP flows (fixed source ports) from `probes` clients at once, per_flow datagrams each:
    (datagrams sent, {DIP host: flows it answered})."""
    per_probe = n // probes
    procs = [emu.probe(client(emu, i), "udp", "--vip", vip, "--flows", per_probe, "--rate", rate,
                       "--duration", per_probe * per_flow / rate) for i in range(probes)]
    sent, served = 0, {}
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert out.strip(), err
        r = json.loads(out)
        assert r["lost"] == 0, "lost %d of %d: %s" % (r["lost"], r["sent"], r["outages"][:4])
        sent += r["sent"]
        for f in r["flows"]:
            assert len(f["dips"]) == 1, f
            served[f["dips"][0]] = served.get(f["dips"][0], 0) + 1
    assert sum(served.values()) == per_probe * probes, served
    return sent, served


def test_flows_split_by_weight_on_the_p4_hmux(p4emu):
    """WCMP on the P4 HMux: a DIP of weight w is w members of the VIP's dip_selector group
    (p4/README.md). 2,000 UDP flows of 2 datagrams each, all counted by the VIP's service counter
    on the switch and none by the SMuxes: each DIP's share of the flows it answered is within
    BOUND of its weight's share (test_wcmp.py says why that bound). Each DIP's bucket counter
    counts at least the datagrams of the flows it answered, and the DIPs' counters together no
    more than the service counter (no other VIP's packets in them)."""
    e = p4emu
    pool = {e.hosts[i]: w for i, w in zip(WCMP_HOSTS, WEIGHTS)}
    weights = {host_of(e, ip): w for ip, w in pool.items()}

    def measure():
        assert wait_for(lambda: placement(e).get(WCMP_VIP) == P4_HMUX, 120, 1), e.cli("assignment")
        svc0, s0 = service_packets(e, WCMP_VIP), smux_vip_packets(e, WCMP_VIP)
        d0 = dip_packets(e, WCMP_VIP)  # after svc0 and, below, before svc: their deltas nest
        sent, served = udp_flows(e, WCMP_VIP)
        d1 = dip_packets(e, WCMP_VIP)
        dips = {h: d1[h] - d0.get(h, 0) for h in d1}
        return sent, served, dips, service_packets(e, WCMP_VIP) - svc0, smux_vip_packets(e, WCMP_VIP) - s0
    sent, served, dips, svc, smux_packets = between_migrations(e, measure)
    assert svc >= sent, "the P4 HMux's counter of the VIP's service counted %d of %d datagrams" % (svc, sent)
    print("P4 HMux %s: service counter %d, bucket counters %s, flows answered %s" % (WCMP_VIP, svc, dips, served))
    assert set(dips) == set(weights), "bucket counters of %s, DIPs %s" % (dips, weights)
    for h, flows in served.items():
        assert dips[h] >= 2 * flows, "%s answered %d flows of 2 datagrams, its bucket counter counted %d" % (
            h, flows, dips[h])
    assert sum(dips.values()) <= svc, "the DIPs' bucket counters counted %d, the service %d: %s" % (
        sum(dips.values()), svc, dips)
    assert smux_packets == 0, "the SMuxes carried %d packets of a VIP on the P4 HMux" % smux_packets
    check_split("P4 HMux %s, DIPs that answered (flows)" % WCMP_VIP, served, weights)


def test_cheetah_vip_decoded_on_the_p4_hmux_keeps_every_connection_through_pool_changes(p4emu):
    """A cheetah VIP with crc32c cookies sits on the P4 HMux (it decodes them; OVS cannot).
    Long-lived connections open in three batches (pool of 4; 2 DIPs added; one of the first
    drained, weight 0) while new connections keep arriving: none breaks or changes server, the
    VIP never leaves the P4 switch, the switch decodes the cookies (its decoded counter grows,
    its invalid one does not; all_servers maps the added DIPs' server ids and still the drained
    DIP's) and the SMuxes see no packet of the VIP. The drained DIP gets no new connection."""
    e = p4emu
    cx.require_cookie_agents(e)
    assert wait_for(lambda: placement(e).get(COOKIE_VIP) == P4_HMUX, 120, 2), e.cli("assignment")
    added, drained = [e.hosts[7], e.hosts[15]], e.hosts[3]
    phase_s, probes, t0 = 5, [], time.time()

    def batch(n):
        probes.append([e.probe(client(e, (2 * n + k) % len(e.clients)), "tcp", "--vip", COOKIE_VIP, "--port",
                               COOKIE_PORT, "--conns", 6, "--interval", 0.2, "--duration", 120, "--timeout", 10)
                       for k in range(2)])

    wait_quiet(e)
    ev0, s0 = cheetah_events(e), smux_vip_packets(e, COOKIE_VIP)
    moves = cx.PlacementLog(e, [COOKIE_VIP])
    short = e.probe(client(e, 7), "http", "--vip", COOKIE_VIP, "--port", COOKIE_PORT, "--rate", 4,
                    "--duration", 120, "--timeout", 10)
    try:
        batch(0)
        time.sleep(phase_s)
        for dip in added:
            cx.api_ok(e, "POST", "/vips/%s/dips" % COOKIE_VIP, {"ip": dip})
        # each batch opens once the switch's dip_selector holds the change (a reconcile away)
        assert wait_for(lambda: set(added) <= selector_dips(e), 30, 0.5), bucket_dips(e)
        batch(1)
        time.sleep(phase_s)
        cx.set_weights(e, COOKIE_VIP, {drained: 0})
        assert wait_for(lambda: drained not in selector_dips(e), 30, 0.5), bucket_dips(e)
        batch(2)
        time.sleep(phase_s)
    finally:
        results = [[e.finish(p, timeout=60)["conns"] for p in b] for b in probes]
        s = e.finish(short, timeout=60)
        placed = moves.finish()[COOKIE_VIP]
        servers = all_servers(e)
        ev1, s1 = cheetah_events(e), smux_vip_packets(e, COOKIE_VIP)
    conns = [c for b in results for p in b for c in p]
    counts = cx.classify(conns, t0)
    decoded = ev1["CHEETAH_DECODED"] - ev0["CHEETAH_DECODED"]
    print("cheetah on the P4 HMux: %s; short %d (failed %d); switch events %s; all_servers %s" % (
        {k: v for k, v in counts.items() if k != "brokenConns"}, s["requests"], s["failed"],
        {k: ev1[k] - ev0[k] for k in ev1}, servers))
    assert counts["opened"] == 36 and counts["connectFailed"] == 0, counts
    assert counts["broken"] == 0, counts["brokenConns"]
    assert s["failed"] == 0, s
    assert placed == {"hmuxToSmux": 0, "smuxToHmux": 0, "hmuxToHmux": 0} and placement(e)[COOKIE_VIP] == P4_HMUX, \
        "the VIP left the P4 HMux: %s" % placed
    assert s1 == s0, "the SMuxes saw %d packets of the cheetah VIP on the P4 HMux" % (s1 - s0)
    assert decoded >= sum(c["ok"] for c in conns), "the switch decoded %d cookies for %d answered requests" % (
        decoded, sum(c["ok"] for c in conns))
    assert ev1["CHEETAH_INVALID"] == ev0["CHEETAH_INVALID"], (ev0, ev1)
    assert set(added) | {drained} <= set(servers.values()), servers
    later = {d for b in results[1:] for p in b for c in p for d in c["dips"]}
    assert {host_of(e, ip) for ip in added} & later, "no connection reached an added DIP: %s" % later
    last = {d for p in results[2] for c in p for d in c["dips"]}
    assert host_of(e, drained) not in last, "a connection opened after the drain reached %s" % drained


class ConnectionsMoved(AssertionError):
    """A flow or connection lost datagrams, broke or changed DIP across the migration."""


def held(e):
    """heldOnSmuxes of /assignment: {vip: {sinceMillis, divergingConnections, toward, reason}}."""
    return e.api("GET", "/assignment")[1].get("heldOnSmuxes", {})


def move_through_the_smuxes(e, src, dst, clients):
    """Drains src (the VIP's HMux) and opens dst with traffic running, and follows the VIP through
    the SMuxes: the probes started before the move run while it leaves src; once the SMuxes hash it
    as dst (they count its diverging connections), a second pair of probes starts, and the first
    one ends, which lets the VIP reach dst while the second runs. Returns what was seen."""
    def probes(c_udp, c_tcp):
        return [e.probe(c_udp, "udp", "--vip", VIP, "--rate", 300, "--flows", 16, "--duration", 300),
                e.probe(c_tcp, "tcp", "--vip", VIP, "--conns", 4, "--interval", 0.02, "--duration", 300,
                        "--timeout", 60)]
    seen = {"before": probes(clients[0], clients[1]), "after": []}
    out = {}
    time.sleep(2)
    try:
        assert e.api("DELETE", "/switches/%s/drain" % dst)[0] == 200
        assert e.api("POST", "/switches/%s/drain" % src)[0] == 200
        out["left"] = wait_for(lambda: placement(e).get(VIP) == "smux", 60, 0.5)
        # pinning (contractPinMs), then the SMuxes hash as dst and count what would change DIP there
        out["held"] = wait_for(lambda: held(e).get(VIP, {}).get("divergingConnections") is not None
                               and held(e)[VIP], 90, 0.5)
        out["heldWhileOldRun"] = placement(e).get(VIP) == "smux"
        seen["after"] = probes(clients[2], clients[3])
        time.sleep(3)
        out["heldWhileOldRun"] &= placement(e).get(VIP) == "smux"
        out["old"] = [e.finish(p) for p in seen.pop("before")]
        out["arrived"] = wait_for(lambda: placement(e).get(VIP) == dst, 120, 0.5)
        time.sleep(2)
        out["new"] = [e.finish(p) for p in seen.pop("after")]
    finally:
        for p in seen.get("before", []) + seen.get("after", []):
            e.finish(p)
    return out


def test_sticky_migration_between_the_p4_hmux_and_an_ovs_hmux_loses_nothing(p4emu):
    """Duet §3.5 between two kinds of HMux, whose hashes differ (the P4 crc32, Open vSwitch's
    select group): the VIP moves from the P4 switch to the OVS switch (the P4 switch drained, the
    OVS one not), then back, through the SMuxes. They hash it as the switch it left until they have
    pinned its connections, then as the switch it goes to, and it stays on them (heldOnSmuxes,
    toward that switch) while connections that switch would send elsewhere live. Connections
    opened before the move run until it is held; connections opened while the SMuxes hash as the
    next switch run until after it arrives there: no connection broken, every flow and connection
    keeps its one DIP, no datagram lost (the routes go from the farthest switches inwards before
    the HMux drops its entries: core DeltaPhases)."""
    e = p4emu
    assert wait_for(lambda: placement(e).get(VIP) == P4_HMUX, 60, 1), e.cli("assignment")
    wait_quiet(e)
    seen = {r["id"] for r in e.api("GET", "/migrations")[1]["recent"]}
    clients = [e.clients[i % len(e.clients)] for i in (4, 5, 6, 7)]
    try:
        there = move_through_the_smuxes(e, P4_HMUX, OVS_HMUX, clients)
        back = move_through_the_smuxes(e, OVS_HMUX, P4_HMUX, clients)
    finally:
        e.api("DELETE", "/switches/%s/drain" % P4_HMUX)
        e.api("POST", "/switches/%s/drain" % OVS_HMUX)
    steps = applied_steps(e, seen, VIP)
    for (a, b), m in (((P4_HMUX, OVS_HMUX), there), ((OVS_HMUX, P4_HMUX), back)):
        results = m.get("old", []) + m.get("new", [])
        lost = sum(r.get("lost", 0) for r in results)
        sent = sum(r.get("sent", 0) for r in results)
        broken = sum(r.get("broken", 0) for r in results)
        moved = [f["dips"] for r in results for f in r.get("flows", []) + r.get("conns", []) if len(f["dips"]) > 1]
        # every outage, with the wall clock of its probe's start, to match against the daemon's log
        gaps = [(r.get("startedAt"), r["outages"]) for r in results if r.get("outages")]
        print("migration %s %s -> smux -> %s: held %s; %d of %d datagrams lost; %d TCP connections broken; "
              "flows and connections that changed DIP: %s; outages %s"
              % (VIP, a, b, m.get("held"), lost, sent, broken, moved, gaps))
        assert m["left"], "VIP %s did not leave %s: %s" % (VIP, a, e.cli("assignment"))
        assert m["held"] and m["held"]["toward"] == b, "not held on the SMuxes toward %s: %s" % (b, held(e))
        assert m["held"]["divergingConnections"] > 0, \
            "the two hashes split none of the connections differently? %s" % m["held"]
        assert m["heldWhileOldRun"], "VIP %s left the SMuxes while connections %s would move live" % (VIP, b)
        assert m["arrived"], "VIP %s did not reach %s once those connections ended: %s" % (VIP, b, held(e))
        assert ("withdraw-from-hmux", a) in steps and ("announce-on-hmux", b) in steps, steps
        outages = [r.get("outages", [])[:4] for r in results]
        if broken or moved or lost:
            raise ConnectionsMoved("%s -> %s: lost %d of %d datagrams (outages %s), %d connections broken, changed "
                                   "DIP: %s" % (a, b, lost, sent, outages, broken, moved))


def test_p4_hmux_failure_smuxes_serve_and_connections_survive(p4emu):
    """Duet §3.5.1 with a P4 HMux: its links fail (the OVS neighbours lose carrier, which is how
    the daemon sees a P4 switch go down); the VIP falls to the SMuxes, whose crc32 selection picks
    the DIP the P4 switch picked, so UDP flows and long-lived TCP connections keep their DIP."""
    e = p4emu
    assert wait_for(lambda: placement(e).get(VIP) == P4_HMUX, 60, 1), e.cli("assignment")
    udp = e.probe(e.clients[2], "udp", "--vip", VIP, "--rate", 300, "--flows", 8, "--duration", 300)
    tcp = e.probe(e.clients[3], "tcp", "--vip", VIP, "--conns", 6, "--interval", 0.02, "--duration", 300,
                  "--timeout", 60)
    time.sleep(3)
    e.fail_switch(P4_HMUX)
    try:
        moved = wait_for(lambda: placement(e).get(VIP) != P4_HMUX, 90, 0.2)
        time.sleep(3)
        u = e.finish(udp)
        t = e.finish(tcp)
        assert moved, "VIP %s still on the failed P4 switch: %s" % (VIP, e.cli("assignment"))
        assert not any(o.get("unrecovered") for o in u["outages"]), u["outages"]
        print("P4 HMux failover outage at the client: %s ms, %d lost of %d" % (u["maxOutageMs"], u["lost"], u["sent"]))
        assert t["broken"] == 0, "long-lived connections broken: %s" % [c for c in t["conns"] if c["errors"]]
        assert all(len(c["dips"]) == 1 for c in t["conns"]), t["conns"]
        assert all(len(f["dips"]) == 1 for f in u["flows"]), u["flows"]
    finally:
        e.recover_switch(P4_HMUX)
