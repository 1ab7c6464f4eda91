"""WCMP split of new flows, in every selection mode, over pools exactly as the controller
renders them: smux/tests/data/wcmp_rendering.json (written and checked by
app/standalone's WcmpRenderingTest on a real ovs-vswitchd): weights 1:2:1, 1:3, and 2:4:2
with a drained DIP. The controller replicates each DIP as its WCMP units (buckets of
weight 1, an id each), so every mode splits in proportion to the weights.

For each pool, 10,000 random TCP flows (SYNs from random clients and ports):
  hash        OVS selection_method=hash: the pinned select group in a private ovs-vswitchd,
              every flow traced with ofproto/trace;
  ovs         the real hlb-smux (net_pcap in -> out) with the pinned SMux entry;
  ovs-dphash  the same entry with "selection": "ovs-dphash" (what the ONOS app sends: OVS's
              default dp_hash select group);
  crc32       the same entry with "selection": "crc32" (the P4 HMux's hash, p4/HASH-SPEC.md).
Each DIP's share of the flows must be its weight's share within +-2 percentage points
(one standard deviation is at most 0.5 points at 10,000 flows), a drained DIP gets none,
and in `ovs` mode every flow goes to the DIP OVS traced (HMux and SMux agree).

For comparison it prints what the same weights give as one bucket per DIP at device weight
w (OVS's rule, computed with the SMux's bit-exact replica): not proportional.

Run: sudo python3 -m pytest -s smux/tests/agent_wcmp_split.py   (needs hlb-smux built in
     smux/build or $HLB_DP_BUILD)
"""
import json
import os
import random
import re
import shutil
import socket
import struct
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent_testlib as tl  # noqa: E402
import dp_testlib as dtl  # noqa: E402
from scapy.all import IP, TCP, Ether, RawPcapReader, raw, wrpcap  # noqa: E402

PINNED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "wcmp_rendering.json")
FLOWS = int(os.environ.get("HLB_WCMP_FLOWS", "10000"))
SEED = int(os.environ.get("HLB_WCMP_SEED", "20261127"))
TOLERANCE = 0.02
NAME = "hlbwcmp"
MODES = ("ovs", "ovs-dphash", "crc32")


def pools():
    with open(PINNED) as f:
        return json.load(f)["pools"]


def expected_shares(pool):
    total = sum(pool["weights"])
    return {ip: w / total for ip, w in zip(pool["dips"], pool["weights"])}


def make_flows(pool_list):
    """(ip id, pool index, src, sport) for FLOWS flows per pool; ids unique in a run."""
    rng = random.Random(SEED)
    out = []
    for p in range(len(pool_list)):
        for _ in range(FLOWS):
            out.append((len(out) + 1, p, socket.inet_ntoa(struct.pack("!I", rng.randrange(1 << 24, 0xdf000000))),
                        rng.randrange(1024, 65536)))
    assert len(out) < 65536, "IP ids tell the frames apart"
    return out


def ip_checksum(header):
    s = sum(struct.unpack("!10H", header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def frames(flows, pool_list):
    """One SYN per flow, built from a template (scapy for 30,000 frames would take long)."""
    template = bytearray(raw(Ether(src=dtl.CLIENT_MAC, dst="02:00:00:00:00:aa") /
                             IP(src="1.1.1.1", dst="1.1.1.1") / TCP(sport=1, dport=80, flags="S")))
    out = []
    for ip_id, p, src, sport in flows:
        f = bytearray(template)
        f[18:20] = struct.pack("!H", ip_id)
        f[26:30] = socket.inet_aton(src)
        f[30:34] = socket.inet_aton(pool_list[p]["vip"])
        f[24:26] = b"\0\0"
        f[24:26] = struct.pack("!H", ip_checksum(bytes(f[14:34])))
        f[34:36] = struct.pack("!H", sport)
        out.append(bytes(f))
    return out


def smux_picks(flows, pool_list, mode, tmp):
    """{ip id: DIP} through the real hlb-smux, every pool's pinned entry in `mode`."""
    inp, out = os.path.join(tmp, "in.pcap"), os.path.join(tmp, f"out-{mode}.pcap")
    if not os.path.exists(inp):
        wrpcap(inp, [Ether(f) for f in frames(flows, pool_list)], linktype=1)
    vips = []
    for p in pool_list:
        e = dict(p["smuxEntry"], selection=mode, connTable=False)
        vips.append(e)
    tfile = os.path.join(tmp, f"table-{mode}.json")
    with open(tfile, "w") as f:
        json.dump({"version": 1, "vips": vips}, f)
    args = ["--ip", dtl.SMUX_IP, "--gateway-mac", dtl.GW_MAC, "--mgmt", "127.0.0.1:0",
            "--table", tfile, "--exit-when-idle", "300", "--run-seconds", "120", "--idle-sleep-us", "100"]
    _, done, _ = dtl.run_smux(f"{NAME}{os.getpid()}", [f"net_pcap0,rx_pcap={inp},tx_pcap={out}"], args, timeout=150)
    got = {}
    for data, _ in RawPcapReader(out):
        assert data[12:14] == b"\x08\x00" and data[14] == 0x45 and data[23] in (4, 47), data[:40]
        inner = 34 + (4 if data[23] == 47 else 0)          # GRE: 4-byte base header
        got[struct.unpack("!H", data[inner + 4:inner + 6])[0]] = socket.inet_ntoa(data[30:34])
    assert done["rx"] == len(flows), done
    return got


USING_RE = re.compile(r"-> using bucket (\d+)")
TUN_RE = re.compile(r"set_field:([\d.]+)->tun_dst")


def ovs_picks(flows, pool_list):
    """{ip id: DIP} by ofproto/trace through the pinned select groups in a private ovs-vswitchd."""
    ovs = tl.PrivateOVS(prefix=NAME)
    try:
        br = f"{NAME}{ovs.tag[:4]}"
        ovs.vsctl("add-br", br, "--", "set", "bridge", br, "datapath_type=netdev",
                  "protocols=OpenFlow13,OpenFlow15",
                  "--", "add-port", br, "gre0", "--", "set", "interface", "gre0", "type=gre",
                  "options:remote_ip=flow", "options:packet_type=legacy_l3", "ofport_request=100",
                  "--", "add-port", br, "p1", "--", "set", "interface", "p1", "type=internal")
        for p in pool_list:
            ovs.ofctl("add-group", br, p["ovsGroup"])
            gid = re.match(r"group_id=(\d+),", p["ovsGroup"]).group(1)
            ovs.ofctl("add-flow", br, f"tcp,nw_dst={p['vip']},actions=group:{gid}")
        client = ovs.unixctl()
        t0 = time.monotonic()
        try:
            traces = client.call_many("ofproto/trace", [
                [br, f"in_port=p1,tcp,nw_src={src},nw_dst={pool_list[p]['vip']},tcp_src={sport},tcp_dst=80"]
                for _, p, src, sport in flows])
        finally:
            client.close()
        print(f"\n{len(flows)} traces in {time.monotonic() - t0:.1f} s")
    finally:
        ovs.close()
    got = {}
    for (ip_id, _, _, _), text in zip(flows, traces):
        used = USING_RE.search(text)
        tun = TUN_RE.search(text[used.end():]) if used else None
        assert tun, text
        got[ip_id] = tun.group(1)
    return got


def shares(flows, picks, p, pool):
    counts = {ip: 0 for ip in pool["dips"]}
    for ip_id, q, _, _ in flows:
        if q == p:
            counts[picks[ip_id]] += 1
    n = sum(counts.values())
    return {ip: c / n for ip, c in counts.items()}


def one_bucket_per_dip(flows, p, pool):
    """What OVS's rule gives the same weights with one bucket per DIP at device weight w."""
    counts = [0] * len(pool["weights"])
    for _, q, src, sport in flows:
        if q == p:
            counts[dtl.ovs_pick(src, pool["vip"], 6, sport, 80, pool["weights"])] += 1
    return [c / FLOWS for c in counts]


@pytest.fixture(scope="module")
def measured():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, DPDK EAL)")
    assert os.path.exists(dtl.SMUX_BIN), f"{dtl.SMUX_BIN} is missing: build smux/ first"
    pool_list = pools()
    flows = make_flows(pool_list)
    tmp = tempfile.mkdtemp(prefix=f"{NAME}-")
    try:
        picks = {"hash": ovs_picks(flows, pool_list)}
        for mode in MODES:
            picks[mode] = smux_picks(flows, pool_list, mode, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return pool_list, flows, picks


def fmt(share_by_dip):
    return " / ".join(f"{100 * s:.1f}" for s in share_by_dip)


@pytest.mark.parametrize("mode", ("hash",) + MODES)
def test_split_within_two_points_of_the_weights(measured, mode):
    pool_list, flows, picks = measured
    for p, pool in enumerate(pool_list):
        want = expected_shares(pool)
        got = shares(flows, picks[mode], p, pool)
        print(f"\n{mode:10s} {pool['name']:24s} {FLOWS} flows: % per DIP {fmt(got.values())}"
              f" (weights {fmt(want.values())})")
        for ip in pool["dips"]:
            assert abs(got[ip] - want[ip]) <= TOLERANCE, (mode, pool["name"], ip, got, want)
            if want[ip] == 0:
                assert got[ip] == 0, (mode, pool["name"], "a drained DIP takes no new flow", ip)


def test_hmux_and_smux_pick_the_same_dip_for_every_flow(measured):
    _, flows, picks = measured
    mismatches = [i for i, _, _, _ in flows if picks["hash"][i] != picks["ovs"][i]]
    print(f"\nOVS hash vs SMux ovs: {len(flows)} flows, {len(mismatches)} mismatches")
    assert mismatches == []


def test_one_bucket_per_dip_would_not_be_proportional(measured):
    """The comparison the docs quote: OVS's rule over one bucket per DIP at weight w (the
    replica is bit-exact with OVS, agent_ovs_agreement.py)."""
    pool_list, flows, _ = measured
    worst = 0.0
    for p, pool in enumerate(pool_list[:2]):
        got = one_bucket_per_dip(flows, p, pool)
        want = list(expected_shares(pool).values())
        print(f"\none bucket per DIP, weight w: {pool['name']:6s} % per DIP {fmt(got)} (weights {fmt(want)})")
        worst = max(worst, max(abs(g - w) for g, w in zip(got, want)))
    assert worst > 0.1, "OVS's select group would split proportionally by itself"
