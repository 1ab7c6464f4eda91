"""OVS agreement test: the SMux's OVS hash replica (smux/src/ovs_hash.c) must
pick the same bucket, with the same per-bucket scores, as a real Open vSwitch
3.1 select group with selection_method=hash, for >= 10,000 random 5-tuples.

It starts its own ovs-vswitchd (userspace datapath) in a namespace of its own,
installs HMux-shaped groups (buckets set tun_dst to a DIP and output to a
flow-based GRE port, as in ARCHITECTURE "Data path") with equal, unequal and
zero weights, traces every tuple with ofproto/trace over one pipelined unixctl
connection, and compares.

Run: python3 -m pytest smux/tests/agent_ovs_agreement.py   (as root)
     HLB_OVS_TUPLES=20000 to trace more.
"""
import ctypes
import ipaddress
import os
import random
import re
import socket
import struct
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent_testlib as tl  # noqa: E402

N_TUPLES = int(os.environ.get("HLB_OVS_TUPLES", "10000"))
SEED = int(os.environ.get("HLB_OVS_SEED", "20260311"))

# (group id, match, fields, selection_method_param, [(bucket_id, weight)], protos)
# Field lists are written in different orders on purpose: OVS hashes them in
# its own (meta-flow) order.
GROUPS = [
    (1, "tcp,nw_dst=20.1.0.0/16", "ip_src,ip_dst,nw_proto,tcp_src,tcp_dst", 12345,
     [(0, 1), (1, 3), (7, 2)], (6,)),
    (2, "udp,nw_dst=20.2.0.0/16", "ip_src,ip_dst,nw_proto,udp_src,udp_dst",
     0xFEDCBA9876543210, [(3, 100), (10, 1), (11, 65535), (42, 7), (100, 50)], (17,)),
    (3, "tcp,nw_dst=20.3.0.0/16", "ip_src,ip_dst,nw_proto,tcp_src,tcp_dst", 0,
     [(i, 1) for i in range(8)], (6,)),
    (4, "tcp,nw_dst=20.4.0.0/16", "tcp_dst,nw_proto,ip_dst,tcp_src,ip_src", 7,
     [(5, 2), (6, 0), (9, 2), (12, 1)], (6,)),
    (5, "ip,nw_dst=20.5.0.0/16", "ip_src,ip_dst,nw_proto,tcp_src,tcp_dst,udp_src,udp_dst",
     0xFFFFFFFF, [(1, 1), (2, 1), (3, 2), (4, 4)], (6, 17)),
    (6, "udp,nw_dst=20.6.0.0/16", "ip_dst,ip_src,udp_dst,udp_src,nw_proto", 1 << 40,
     [(0, 10), (1, 20), (2, 30), (3, 40), (4, 50), (5, 60)], (17,)),
]


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


def dip_of(group_id, bucket_id):
    return f"10.{group_id}.{bucket_id // 256}.{bucket_id % 256 + 1}"


def install_groups(ovs, bridge):
    ovs.vsctl("add-br", bridge, "--", "set", "bridge", bridge, "datapath_type=netdev",
              "protocols=OpenFlow13,OpenFlow15",
              "--", "add-port", bridge, "gre0", "--", "set", "interface", "gre0", "type=gre",
              "options:remote_ip=flow", "options:packet_type=legacy_l3",
              "--", "add-port", bridge, "p1", "--", "set", "interface", "p1", "type=internal")
    for gid, match, fields, param, buckets, _ in GROUPS:
        spec = (f"group_id={gid},type=select,selection_method=hash,"
                f"selection_method_param={param},fields({fields})")
        for bid, weight in buckets:
            spec += (f",bucket=bucket_id:{bid},weight:{weight},"
                     f"actions=set_field:{dip_of(gid, bid)}->tun_dst,output:gre0")
        ovs.ofctl("add-group", bridge, spec)
        ovs.ofctl("add-flow", bridge, f"{match},actions=group:{gid}")


def random_cases(rng, n):
    """n random TCP/UDP 5-tuples spread over the groups, plus some ICMP packets
    and non-first fragments (OVS skips the port fields for those)."""
    cases = []
    l4_groups = [g for g in GROUPS]
    for i in range(n):
        g = l4_groups[i % len(l4_groups)]
        proto = rng.choice(g[5])
        cases.append(make_case(rng, g, proto, "no"))
    for i in range(max(50, n // 100)):
        cases.append(make_case(rng, GROUPS[4], 1, "no"))                # ICMP, group 5
        cases.append(make_case(rng, GROUPS[0], 6, "later"))             # TCP later fragment
    return cases


def make_case(rng, group, proto, frag):
    net = ipaddress.ip_network(group[1].split("nw_dst=")[1])
    src = ipaddress.IPv4Address(rng.getrandbits(32))
    dst = net.network_address + rng.randrange(net.num_addresses)
    sport = rng.randrange(65536) if rng.random() > 0.01 else 0
    dport = rng.choice((80, 443, 53, 8080, rng.randrange(65536)))
    return {"group": group, "proto": proto, "src": str(src), "dst": str(dst),
            "sport": sport if proto in (6, 17) else 0,
            "dport": dport if proto in (6, 17) else 0, "frag": frag}


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
    gid, _, _, param, buckets, _ = case["group"]
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
            _, _, _, param, buckets, _ = case["group"]
            out.write(" ".join([
                str(case["proto"]), case["src"], case["dst"], str(case["sport"]),
                str(case["dport"]), case["frag"], str(param),
                ",".join(f"{b}:{w}" for b, w in buckets), str(used),
                ",".join("-" if scores[b] is None else str(scores[b]) for b, _ in buckets)]) + "\n")


@pytest.fixture(scope="module")
def ovs():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces)")
    inst = tl.PrivateOVS()
    try:
        yield inst
    finally:
        inst.close()


def test_replica_agrees_with_ovs(ovs):
    lib = load_replica()
    bridge = f"hlbbr{ovs.tag[:4]}"
    install_groups(ovs, bridge)
    rng = random.Random(SEED)
    cases = random_cases(rng, N_TUPLES)

    client = ovs.unixctl()
    t0 = time.monotonic()
    try:
        traces = client.call_many("ofproto/trace", [[bridge, trace_flow(c)] for c in cases])
    finally:
        client.close()
    elapsed = time.monotonic() - t0

    mismatches, score_mismatches, per_bucket = [], 0, {}
    for case, text in zip(cases, traces):
        ovs_scores, ovs_bucket, tun_dst = parse_trace(text)
        mine, my_scores = replica_pick(lib, case)
        gid = case["group"][0]
        if ovs_bucket != mine or tun_dst != dip_of(gid, mine):
            mismatches.append((trace_flow(case), ovs_bucket, mine, tun_dst))
        if ovs_scores != my_scores:
            score_mismatches += 1
        per_bucket[(gid, ovs_bucket)] = per_bucket.get((gid, ovs_bucket), 0) + 1

    if os.environ.get("HLB_OVS_WRITE_VECTORS"):
        write_vectors(os.environ["HLB_OVS_WRITE_VECTORS"], cases, traces)

    n_l4 = sum(1 for c in cases if c["proto"] in (6, 17) and c["frag"] == "no")
    print(f"\nOVS agreement: {len(cases)} traces ({n_l4} TCP/UDP 5-tuples, "
          f"{len(cases) - n_l4} ICMP/later-fragment) in {elapsed:.1f}s; "
          f"bucket mismatches {len(mismatches)}, score mismatches {score_mismatches}")
    assert n_l4 >= N_TUPLES
    assert not mismatches, mismatches[:5]
    assert score_mismatches == 0
    # Sanity of the data itself: a weight-0 bucket is never chosen, and in
    # groups whose weights are within 10x of each other every bucket is.
    for gid, _, _, _, buckets, _ in GROUPS:
        positive = [w for _, w in buckets if w]
        balanced = max(positive) <= 10 * min(positive)
        for bid, weight in buckets:
            chosen = per_bucket.get((gid, bid), 0)
            if weight == 0:
                assert chosen == 0, (gid, bid)
            elif balanced:
                assert chosen > 0, (gid, bid, weight)
