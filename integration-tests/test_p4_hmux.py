"""A P4 switch as an HMux of the real hybridlbd: the emulation runs agg-1-0 as the P4 model
switch (hlb-p4switch, `hlbemu.py start --p4-switches`), the topology lets no other switch hold
VIPs, and the daemon programs the VIP on it over P4Runtime (fabric.json's "p4" object). Traffic
to the VIP is served without loss through the P4 HMux: the switch's per-service and per-bucket
counters, read over P4Runtime, count every probe packet and the SMuxes none.

Its own emulation (module scope, before the suite's session emulation starts: see conftest).
"""
import json
import os
import subprocess
import time
import sys

import pytest

from conftest import REPO, placement, start_daemon, stop, wait_for
import hlbemu
from test_e2e import smux_vip_packets

sys.path.insert(0, os.path.join(REPO, "p4", "switch"))
sys.path.insert(0, os.path.join(REPO, "p4", "model"))

P4_HMUX = "agg-1-0"
PROFILE = "hlb_hmux"
VIP = "10.100.1.1"
AGG = "10.100.0.0/16"


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
    for s in topo["switches"]:            # only the P4 switch may hold VIPs
        if s["id"] != P4_HMUX:
            s.setdefault("tables", {})["tunnel"] = 0
    with open(topo_file, "w") as f:
        json.dump(topo, f)
    hosts = [h["ip"] for h in topo["hosts"]]
    vips = {"vips": [{"vip": VIP, "aggregate": AGG,
                      "ports": [{"proto": "any", "port": 0, "dips": [{"ip": hosts[1]}, {"ip": hosts[9]}]}]}]}
    vip_file = str(d / "vips.json")
    with open(vip_file, "w") as f:
        json.dump(vips, f)
    try:
        subprocess.run([hlbemu.PY, os.path.join(REPO, "topologies", "hlbemu.py"), "start", "--tag", tag,
                        "--topology", topo_file, "--vips", vip_file,
                        "--p4-switches", P4_HMUX, "--p4-profile", PROFILE], check=True, timeout=300)
        e = start_daemon(tag)
        clients = sorted(h for h, v in e.fab["hosts"].items() if v["role"] == "client")
        e.load = [e.probe(clients[0], "http", "--vip", VIP, "--rate", 8, "--duration", 300, "--timeout", 1)]
        e.clients = clients
        yield e
    finally:
        stop(tag, os.environ.get("HLB_IT_P4_LOGS", "/tmp/hlb-it-p4-logs"))


def p4_counters(emu):
    """(service counter, bucket counters) of the P4 HMux's services, read over P4Runtime."""
    from p4rt_client import P4RuntimeClient
    p4 = emu.fab["switches"][P4_HMUX]["p4"]
    c = P4RuntimeClient(p4["grpc"], profile=p4["profile"])
    try:
        svc = c.read(c.b.counter_entry("HlbIngress.hmux.service_counter"))
        bkt = c.read(c.b.counter_entry("HlbIngress.hmux_encap.bucket_counter"))
        return (sum(e.counter_entry.data.packet_count for e in svc),
                {e.counter_entry.index.index: e.counter_entry.data.packet_count for e in bkt
                 if e.counter_entry.data.packet_count})
    finally:
        c.close()


def test_vip_is_served_through_the_p4_hmux(p4emu):
    e = p4emu
    at = wait_for(lambda: placement(e).get(VIP) == P4_HMUX, 120, 2)
    assert at, "VIP %s not placed on the P4 switch %s: %s" % (VIP, P4_HMUX, e.cli("assignment"))
    code, sw = e.api("GET", "/switches")
    mine = [s for s in sw["switches"] if s["id"] == P4_HMUX][0]
    assert mine["hash"]["selection"] == "crc32" and not mine["decodesCookies"], mine
    svc0, b0 = p4_counters(e)
    s0 = smux_vip_packets(e, VIP)
    out, err = e.probe(e.clients[1], "udp", "--vip", VIP, "--rate", 200, "--flows", 16,
                       "--duration", 3).communicate(timeout=120)
    assert out.strip(), err
    r = json.loads(out)
    svc1, b1 = p4_counters(e)
    assert r["lost"] == 0, r
    assert svc1 - svc0 >= r["sent"], "the P4 HMux's service counter counted %d of %d" % (svc1 - svc0, r["sent"])
    moved = {b: n - b0.get(b, 0) for b, n in b1.items() if n - b0.get(b, 0) > 0}
    assert len(moved) == 2, "both DIP buckets carry the 16 flows: %s" % moved
    assert smux_vip_packets(e, VIP) == s0, "the SMuxes saw packets of a VIP on the P4 HMux"


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
