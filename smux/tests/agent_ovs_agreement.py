"""OVS agreement test for the `ovs` selection: for >= 10,000 random TCP/UDP
5-tuples, the DIP the real hlb-smux sends a packet to must be the bucket a real
Open vSwitch 3.1 select group with selection_method=hash picks for it
(ofproto/trace), with zero mismatches. The C replica the SMux runs
(smux/src/ovs_hash.c) is also compared with every trace: same bucket and same
per-bucket scores, including ICMP and non-first fragments, which the SMux does
not forward.

1. A private ovs-vswitchd (userspace datapath), in a namespace of its own,
   gets HMux-shaped groups (each bucket sets tun_dst to its DIP and outputs to a
   flow-based GRE port, as in ARCHITECTURE "Data path"). The groups have
   bucket ids that are not list positions (up to 0xfffffeff), unequal weights
   (1 to 65535) and weight 0, and selection_method_param values from 0 to
   2^64-1 (0xFEDCBA9876543210 and 2^63 among them). Their field lists are
   TCP-only, UDP-only or both, in shuffled orders. Two groups are WCMP pools as
   the controller builds them: a DIP repeated as weight-1 units (1:2:1, 1:3),
   and on the SMux side a drained DIP at weight 0 that the group does not have.
   Each group serves the VIPs of a /29. Every tuple is traced with
   ofproto/trace over one pipelined unixctl connection.
2. The same tuples go through hlb-smux as frames (net_pcap in -> out), each with
   a unique IP id. Its table has `ovs` VIPs that mirror the groups: the same DIPs
   with the same bucketId and weight, and hashBasis = selection_method_param
   (as a string above INT64_MAX, in hex or decimal). The outer destination of
   each encapsulated frame is the DIP the SMux chose.

Run: python3 -m pytest -s smux/tests/agent_ovs_agreement.py   (as root; needs
     hlb-smux built in smux/build or $HLB_DP_BUILD)
     HLB_OVS_TUPLES=20000 to trace more (at most 65,000: IP ids match frames).
"""
import ctypes
import ipaddress
import json
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent_testlib as tl  # noqa: E402
import dp_testlib as dtl  # noqa: E402
from scapy.all import IP, TCP, UDP, Ether, RawPcapReader, wrpcap  # noqa: E402

N_TUPLES = int(os.environ.get("HLB_OVS_TUPLES", "10000"))
SEED = int(os.environ.get("HLB_OVS_SEED", "20260311"))
NAME = "hlbovsag"          # prefix of the namespace, bridge, run dir and DPDK file prefix
INT64_MAX = (1 << 63) - 1
BOTH = "ip_src,ip_dst,nw_proto,tcp_src,tcp_dst,udp_src,udp_dst"   # what the HMux programs

# (group id, protocols, fields, selection_method_param, [(bucket_id, weight)])
# Field lists are written in different orders on purpose: OVS hashes them in
# its own (meta-flow) order. A group lists the port fields of the protocols it
# serves: with tcp fields only, OVS would hash a UDP packet without its ports,
# which an SMux service of that VIP does not do.
GROUPS = [
    (1, (6,), "ip_src,ip_dst,nw_proto,tcp_src,tcp_dst", 12345,
     [(0, 1), (1, 3), (7, 2)]),
    (2, (17,), "ip_src,ip_dst,nw_proto,udp_src,udp_dst", 0xFEDCBA9876543210,
     [(3, 100), (10, 1), (11, 65535), (42, 7), (100, 50)]),
    (3, (6,), "ip_src,ip_dst,nw_proto,tcp_src,tcp_dst", 0,
     [(i, 1) for i in range(8)]),
    (4, (6,), "tcp_dst,nw_proto,ip_dst,tcp_src,ip_src", 7,
     [(5, 2), (6, 0), (9, 2), (12, 1)]),
    (5, (6, 17, 1), BOTH, 0xFFFFFFFF,
     [(1, 1), (2, 1), (3, 2), (4, 4)]),
    (6, (17,), "ip_dst,ip_src,udp_dst,udp_src,nw_proto", 1 << 40,
     [(0, 10), (1, 20), (2, 30), (3, 40), (4, 50), (5, 60)]),
    (7, (6, 17), BOTH, (1 << 64) - 1,
     [(0xfffffeff, 3), (1000, 0), (77, 5), (4000000000, 1)]),
    (8, (6, 17), "udp_dst,tcp_dst,udp_src,tcp_src,nw_proto,ip_dst,ip_src", 1 << 63,
     [(9, 1), (8, 1), (7, 2), (300, 2)]),
    # WCMP pools as the controller replicates them: weight-1 units of a DIP (UNITS), and on
    # the SMuxes a drained DIP at weight 0 (amid the units), which the HMux's group does not have
    (9, (6, 17), BOTH, 0, [(0, 1), (1, 1), (2, 1), (3, 1)]),
    (10, (6,), "ip_src,ip_dst,nw_proto,tcp_src,tcp_dst", 12345, [(0, 1), (5, 1), (2, 1), (7, 1)]),
]
# group id -> the DIP (position) of each bucket, for groups whose DIPs repeat: 1:2:1 and 1:3
UNITS = {9: [0, 1, 1, 2], 10: [0, 1, 1, 1]}
# group id -> DIP (position) the SMux pool holds at weight 0, and the HMux has no bucket for
DRAINED = {9: 3}
VIPS_PER_GROUP = 4


class Tuple5(ctypes.Structure):
    _fields_ = [("src_ip", ctypes.c_uint32), ("dst_ip", ctypes.c_uint32),
                ("src_port", ctypes.c_uint16), ("dst_port", ctypes.c_uint16),
                ("proto", ctypes.c_uint8)]


def load_replica():
    so = os.path.join(tl.BUILD_DIR, "libhlb_ovs_hash_test.so")
    src = os.path.join(tl.SMUX_DIR, "tests", "agent_ovs_hash_pyshim.c")
    if not os.path.exists(so) or os.path.getmtime(so) < max(
            os.path.getmtime(src), os.path.getmtime(os.path.join(tl.SMUX_DIR, "src", "ovs_hash.c"))):
        os.makedirs(tl.BUILD_DIR, exist_ok=True)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-I", os.path.join(tl.SMUX_DIR, "include"),
                        src, "-o", so], check=True)
    lib = ctypes.CDLL(so)
    lib.hlb_ovs_select_hash.restype = ctypes.c_uint32
    lib.hlb_ovs_select_hash.argtypes = [ctypes.POINTER(Tuple5), ctypes.c_uint64]
    lib.hlb_ovs_select_hash_later_fragment.restype = ctypes.c_uint32
    lib.hlb_ovs_select_hash_later_fragment.argtypes = [ctypes.POINTER(Tuple5), ctypes.c_uint64]
    lib.hlb_ovs_select_bucket.restype = ctypes.c_int
    lib.hlb_ovs_select_bucket.argtypes = [ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32),
                                          ctypes.POINTER(ctypes.c_uint16), ctypes.c_int]
    lib.hlb_test_bucket_score.restype = ctypes.c_uint32
    lib.hlb_test_bucket_score.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint16]
    return lib


def vip_net(gid):
    return f"100.64.{gid}.0/29"


def vip_of(gid, v):
    return f"100.64.{gid}.{v + 1}"


def dip_of(gid, position):
    """The DIP of a group's bucket, by its position in the bucket list."""
    return f"10.{gid}.0.{position + 1}"


def dip_of_bucket(group, bucket_id):
    ids = [b for b, _ in group[4]]
    if bucket_id not in ids:
        return None
    k = ids.index(bucket_id)
    return dip_of(group[0], UNITS[group[0]][k] if group[0] in UNITS else k)


def ovs_match(protos):
    return {(6,): "tcp", (17,): "udp"}.get(tuple(protos), "ip")


def install_groups(ovs, bridge):
    ovs.vsctl("add-br", bridge, "--", "set", "bridge", bridge, "datapath_type=netdev",
              "protocols=OpenFlow13,OpenFlow15",
              "--", "add-port", bridge, "gre0", "--", "set", "interface", "gre0", "type=gre",
              "options:remote_ip=flow", "options:packet_type=legacy_l3",
              "--", "add-port", bridge, "p1", "--", "set", "interface", "p1", "type=internal")
    for group in GROUPS:
        gid, protos, fields, param, buckets = group
        spec = (f"group_id={gid},type=select,selection_method=hash,"
                f"selection_method_param={param},fields({fields})")
        for bid, weight in buckets:
            spec += (f",bucket=bucket_id:{bid},weight:{weight},"
                     f"actions=set_field:{dip_of_bucket(group, bid)}->tun_dst,output:gre0")
        ovs.ofctl("add-group", bridge, spec)
        ovs.ofctl("add-flow", bridge, f"{ovs_match(protos)},nw_dst={vip_net(gid)},actions=group:{gid}")


def hash_basis_json(gid, param):
    """hashBasis as the SMux table takes it: a JSON integer up to INT64_MAX, a
    string (0x-hex or decimal, both forms used here) above."""
    if param <= INT64_MAX:
        return param
    return hex(param) if gid % 2 else str(param)


def smux_table(pinned=False):
    vips = []
    for group in GROUPS:
        gid, protos, _, param, buckets = group
        dips = [{"ip": dip_of_bucket(group, bid), "weight": w, "bucketId": bid} for bid, w in buckets]
        if gid in DRAINED:
            dips.insert(1, {"ip": dip_of(gid, DRAINED[gid]), "weight": 0, "bucketId": 999})
        ports = [{"proto": {6: "tcp", 17: "udp"}[p], "port": 0, "dips": dips}
                 for p in protos if p in (6, 17)]
        for v in range(VIPS_PER_GROUP):
            vips.append({"vip": vip_of(gid, v), "selection": "ovs",
                         "hashBasis": hash_basis_json(gid, param), "encap": "ipip",
                         "connTable": pinned, "ports": ports})
    return {"version": 1, "vips": vips}


def random_cases(rng, n):
    """n random TCP/UDP 5-tuples spread over the groups, plus some ICMP packets
    and non-first fragments (OVS skips the port fields for those; replica only)."""
    cases = []
    for i in range(n):
        g = GROUPS[i % len(GROUPS)]
        proto = rng.choice([p for p in g[1] if p in (6, 17)])
        cases.append(make_case(rng, g, proto, "no"))
    icmp_group = next(g for g in GROUPS if 1 in g[1])
    for i in range(max(50, n // 100)):
        cases.append(make_case(rng, icmp_group, 1, "no"))
        cases.append(make_case(rng, GROUPS[0], 6, "later"))
    return cases


def make_case(rng, group, proto, frag):
    src = ipaddress.IPv4Address(rng.randrange(1 << 24, 0xdf000000))   # unicast clients
    sport = rng.randrange(65536) if rng.random() > 0.01 else 0
    dport = rng.choice((80, 443, 53, 8080, rng.randrange(65536)))
    return {"group": group, "proto": proto, "src": str(src),
            "dst": vip_of(group[0], rng.randrange(VIPS_PER_GROUP)),
            "sport": sport if proto in (6, 17) else 0,
            "dport": dport if proto in (6, 17) else 0, "frag": frag}


def is_l4(case):
    return case["proto"] in (6, 17) and case["frag"] == "no"


def trace_flow(case):
    name = {6: "tcp", 17: "udp", 1: "icmp"}[case["proto"]]
    flow = f"in_port=p1,{name},nw_src={case['src']},nw_dst={case['dst']}"
    if case["proto"] in (6, 17):
        flow += f",{name}_src={case['sport']},{name}_dst={case['dport']}"
    # nw_frag last: the flow parser checks tp_* prerequisites as it goes.
    return flow + f",nw_frag={case['frag']}"


SCORE_RE = re.compile(r"-> bucket (\d+): (?:score (\d+)|not live)")
USING_RE = re.compile(r"-> using bucket (\d+)")
TUN_RE = re.compile(r"set_field:([\d.]+)->tun_dst")


def parse_trace(text):
    scores = {}
    for bid, score in SCORE_RE.findall(text):
        scores[int(bid)] = int(score) if score else None
    used = USING_RE.search(text)
    tun = TUN_RE.search(text)
    return scores, (int(used.group(1)) if used else None), (tun.group(1) if tun else None)


def replica_pick(lib, case):
    _, _, _, param, buckets = case["group"]
    t = Tuple5(struct.unpack("=I", socket.inet_aton(case["src"]))[0],
               struct.unpack("=I", socket.inet_aton(case["dst"]))[0],
               socket.htons(case["sport"]), socket.htons(case["dport"]), case["proto"])
    fn = lib.hlb_ovs_select_hash_later_fragment if case["frag"] == "later" else lib.hlb_ovs_select_hash
    h = fn(ctypes.byref(t), param)
    ids = (ctypes.c_uint32 * len(buckets))(*[b for b, _ in buckets])
    weights = (ctypes.c_uint16 * len(buckets))(*[w for _, w in buckets])
    idx = lib.hlb_ovs_select_bucket(h, ids, weights, len(buckets))
    scores = {b: (lib.hlb_test_bucket_score(h, b, w) if w else None) for b, w in buckets}
    return (buckets[idx][0] if idx >= 0 else None), scores


def write_vectors(path, cases, traces, per_kind=24):
    """Record what OVS itself answered for a few cases of every group and kind,
    as a data file the cmocka unit test (and any other implementation) checks
    without running OVS.  One line per case:
    proto src dst sport dport frag basis id:weight,... chosen_id score|-,..."""
    taken = {}
    with open(path, "w") as out:
        out.write("# OVS 3.1 select-group picks recorded from ofproto/trace by\n"
                  "# smux/tests/agent_ovs_agreement.py (HLB_OVS_WRITE_VECTORS).\n"
                  "# proto src dst sport dport frag basis buckets(id:weight) chosen_id "
                  "scores(- = not live)\n")
        for case, text in zip(cases, traces):
            key = (case["group"][0], case["proto"], case["frag"])
            if taken.get(key, 0) >= per_kind:
                continue
            taken[key] = taken.get(key, 0) + 1
            scores, used, _ = parse_trace(text)
            _, _, _, param, buckets = case["group"]
            out.write(" ".join([
                str(case["proto"]), case["src"], case["dst"], str(case["sport"]),
                str(case["dport"]), case["frag"], str(param),
                ",".join(f"{b}:{w}" for b, w in buckets), str(used),
                ",".join("-" if scores[b] is None else str(scores[b]) for b, _ in buckets)]) + "\n")


def ovs_shares(weights):
    """Share of the flows each bucket gets under OVS's rule (the best of
    u_i * weight_i, u_i uniform, weight 0 not live), by numeric integration of
    P(i wins) = integral over u of prod_j min(1, w_i * u / w_j)."""
    steps = 2000
    shares = []
    for wi in weights:
        if wi == 0:
            shares.append(0.0)
            continue
        total = 0.0
        for k in range(steps):
            u = (k + 0.5) / steps
            p = 1.0
            for j, wj in enumerate(weights):
                if wj and j != len(shares):
                    p *= min(1.0, wi * u / wj)
            total += p
        shares.append(total / steps)
    return shares


def check_spread(per_bucket):
    """The data means something: a weight-0 bucket is never chosen, and every
    bucket OVS's rule gives at least 10 of these flows in expectation is chosen."""
    for gid, _, _, _, buckets in GROUPS:
        n = sum(per_bucket.get((gid, bid), 0) for bid, _ in buckets)
        for (bid, weight), share in zip(buckets, ovs_shares([w for _, w in buckets])):
            chosen = per_bucket.get((gid, bid), 0)
            if weight == 0:
                assert chosen == 0, (gid, bid)
            elif share * n >= 10:
                assert chosen > 0, (gid, bid, weight, share * n)


@pytest.fixture(scope="module")
def traced():
    """Starts the private OVS, installs the groups and traces every case once;
    returns (cases, trace texts)."""
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, DPDK EAL)")
    assert N_TUPLES <= 65000, "IP ids must tell the frames apart"
    ovs = tl.PrivateOVS(prefix=NAME)
    try:
        bridge = f"{NAME}{ovs.tag[:4]}"
        install_groups(ovs, bridge)
        cases = random_cases(random.Random(SEED), N_TUPLES)
        client = ovs.unixctl()
        t0 = time.monotonic()
        try:
            traces = client.call_many("ofproto/trace", [[bridge, trace_flow(c)] for c in cases])
        finally:
            client.close()
        print(f"\nOVS agreement: {len(cases)} traces in {time.monotonic() - t0:.1f}s")
    finally:
        ovs.close()
    if os.environ.get("HLB_OVS_WRITE_VECTORS"):
        write_vectors(os.environ["HLB_OVS_WRITE_VECTORS"], cases, traces)
    return cases, traces


def test_replica_agrees_with_ovs(traced):
    cases, traces = traced
    lib = load_replica()
    mismatches, score_mismatches, per_bucket = [], 0, {}
    for case, text in zip(cases, traces):
        ovs_scores, ovs_bucket, tun_dst = parse_trace(text)
        mine, my_scores = replica_pick(lib, case)
        gid = case["group"][0]
        if ovs_bucket != mine or tun_dst != dip_of_bucket(case["group"], mine):
            mismatches.append((trace_flow(case), ovs_bucket, mine, tun_dst))
        if ovs_scores != my_scores:
            score_mismatches += 1
        per_bucket[(gid, ovs_bucket)] = per_bucket.get((gid, ovs_bucket), 0) + 1

    n_l4 = sum(1 for c in cases if is_l4(c))
    print(f"\nOVS agreement (replica): {len(cases)} traces ({n_l4} TCP/UDP 5-tuples, "
          f"{len(cases) - n_l4} ICMP/later-fragment); "
          f"bucket mismatches {len(mismatches)}, score mismatches {score_mismatches}")
    assert n_l4 >= N_TUPLES
    assert not mismatches, mismatches[:5]
    assert score_mismatches == 0
    check_spread(per_bucket)


@pytest.mark.parametrize("lcores,pinned", [("0", False), ("0,1", False), ("0,1", True)],
                         ids=["one-worker", "two-workers", "two-workers-pinned"])
def test_smux_agrees_with_ovs(traced, lcores, pinned):
    """Every TCP/UDP tuple through the real hlb-smux: its outer destination must be
    the DIP of the bucket ofproto/trace chose.  With one worker, and with two (net_pcap
    has one queue: worker 0 hands worker 1 its flows); unpinned (the lean pass picks a
    run of frames' buckets at once) and pinned (each SYN's bucket picked on its own
    as it opens a connection)."""
    cases, traces = traced
    assert os.path.exists(dtl.SMUX_BIN), \
        f"{dtl.SMUX_BIN} is missing: build smux/ first (README, Build) or set HLB_DP_BUILD"
    t0 = time.monotonic()
    # (IP id, case, trace): the id ties each output frame to its tuple
    l4 = [(i + 1, c, t) for i, (c, t) in enumerate((c, t) for c, t in zip(cases, traces) if is_l4(c))]
    tmp = tempfile.mkdtemp(prefix=f"{NAME}-")
    try:
        inp, out = os.path.join(tmp, "in.pcap"), os.path.join(tmp, "out.pcap")
        tfile = os.path.join(tmp, "table.json")
        frames = []
        for ip_id, c, _ in l4:
            l4hdr = (TCP(sport=c["sport"], dport=c["dport"], flags="S") if c["proto"] == 6
                     else UDP(sport=c["sport"], dport=c["dport"]))
            frames.append(bytes(Ether(src=dtl.CLIENT_MAC, dst="02:00:00:00:00:aa") /
                                IP(src=c["src"], dst=c["dst"], id=ip_id) / l4hdr))
        wrpcap(inp, frames, linktype=1)
        with open(tfile, "w") as f:
            json.dump(smux_table(pinned), f)
        args = ["--ip", dtl.SMUX_IP, "--gateway-mac", dtl.GW_MAC, "--mgmt", "127.0.0.1:0",
                "--table", tfile, "--exit-when-idle", "300", "--run-seconds", "120",
                "--idle-sleep-us", "100"]
        ready, done, _ = dtl.run_smux(f"{NAME}{os.getpid()}",
                                      [f"net_pcap0,rx_pcap={inp},tx_pcap={out}"], args,
                                      timeout=150, lcores=lcores)
        assert ready["workers"] == len(lcores.split(","))
        smux_dip = {}
        for data, _ in RawPcapReader(out):   # scapy's dissection would take seconds
            # Ethernet, outer IPv4 without options (the SMux writes none), IP-in-IP
            assert data[12:14] == b"\x08\x00" and data[14] == 0x45 and data[23] == 4, data[:40]
            inner_id = struct.unpack("!H", data[38:40])[0]
            smux_dip[inner_id] = tuple(socket.inet_ntoa(data[a:a + 4]) for a in (30, 46, 50))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    mismatches, per_bucket = [], {}
    for ip_id, c, text in l4:
        _, ovs_bucket, _ = parse_trace(text)
        want = dip_of_bucket(c["group"], ovs_bucket)
        got = smux_dip.get(ip_id)
        if got != (want, c["src"], c["dst"]):
            mismatches.append((trace_flow(c), ovs_bucket, want, got))
        key = (c["group"][0], ovs_bucket)
        per_bucket[key] = per_bucket.get(key, 0) + 1
    n_tcp = sum(1 for _, c, _ in l4 if c["proto"] == 6)
    print(f"\nOVS agreement (hlb-smux): {len(l4)} tuples ({n_tcp} TCP, {len(l4) - n_tcp} UDP) "
          f"over {len(GROUPS)} groups, {VIPS_PER_GROUP * len(GROUPS)} VIPs; "
          f"mismatches {len(mismatches)}; SMux rx {done['rx']} (per worker {done['workerRx']}), "
          f"drops {done['dropReasons']}; "
          f"{time.monotonic() - t0:.1f}s")
    assert len(l4) >= N_TUPLES
    assert done["rx"] == len(l4)
    assert not mismatches, mismatches[:5]
    check_spread(per_bucket)
