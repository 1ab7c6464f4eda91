#!/usr/bin/env python3
"""Writes tests/data/agent_cookie_fixtures.txt: scapy-built frames through the host
agent's cookie programs (tests/agent_test_cookie.c), with the frames expected out of
them computed by the reference model (p4/model/cheetah_cookie.py) and scapy's own
checksums -- unusual option orders, SACK blocks, MD5, RSTs, malformed option lists,
the stateful SYN hint, a restore miss, GRE.

    python3 smux/tests/agent_gen_cookie_fixtures.py > smux/tests/data/agent_cookie_fixtures.txt
"""
import os
import sys

from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether, GRE

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "p4", "model"))
import cheetah_cookie as cc  # noqa: E402

SERVER_ID = 9
KEY = bytes.fromhex("00112233445566778899aabbccddeeff")
VIP, CLIENT, MUX, LOCAL = "10.200.0.10", "10.77.1.5", "10.77.0.1", "10.99.0.2"
ETH = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def cookie(cport, ident=SERVER_ID):
    return cc.make_cookie("siphash13", KEY, cc.tuple_bytes(VIP, 80, CLIENT, cport), ident)


def with_ts(opts, tsval, tsecr):
    return [("Timestamp", (tsval, tsecr)) if k == "Timestamp" else (k, v) for k, v in opts]


def out_frame(cport, flags, opts, tsval, tsecr=0x01020304):
    return Ether(**ETH) / IP(src=VIP, dst=CLIENT) / TCP(
        sport=80, dport=cport, flags=flags, seq=1000, ack=2000 if "A" in flags else 0,
        options=with_ts(opts, tsval, tsecr)) / b"payload!"


def in_inner(cport, flags, opts, tsecr, tsval=0x0A0B0C0D):
    return IP(src=CLIENT, dst=VIP) / TCP(sport=cport, dport=80, flags=flags, seq=2000,
                                         ack=1000 if "A" in flags else 0,
                                         options=with_ts(opts, tsval, tsecr)) / b"request!"


def hexb(pkt):
    return bytes(pkt).hex()


def main():
    lines = ["# Cheetah cookie fixtures for tests/agent_test_cookie.c, written by",
             "# tests/agent_gen_cookie_fixtures.py. '@ SERVER_ID VIP MODE KEY' configures;",
             "# then NAME DIR(out|in) COUNTERS IN_FRAME OUT_FRAME, run in order on one state.",
             f"@ {SERVER_ID} {VIP} siphash13 {KEY.hex()}"]

    def out(name, counter, cport, flags, opts, tsval, wire=None):
        wire = tsval if wire is None else wire
        lines.append(f"{name} out {counter} {hexb(out_frame(cport, flags, opts, tsval))} "
                     f"{hexb(out_frame(cport, flags, opts, wire))}")

    def inn(name, counter, cport, flags, opts, tsecr, restored, gre=False):
        encap = (Ether(**ETH) / IP(src=MUX, dst=LOCAL) / GRE(proto=0x0800)) if gre else \
            (Ether(**ETH) / IP(src=MUX, dst=LOCAL, proto=4))
        lines.append(f"{name} in {counter} {hexb(encap / in_inner(cport, flags, opts, tsecr))} "
                     f"{hexb(Ether(**ETH) / in_inner(cport, flags, opts, restored))}")

    nnts = [("NOP", None), ("NOP", None), ("Timestamp", None)]
    linux_synack = [("MSS", 1460), ("SAckOK", b""), ("Timestamp", None), ("NOP", None), ("WScale", 7)]
    a = 50001
    c = cookie(a)
    t0 = 0x4242FFF0
    # Connection a: SYN-ACK (Linux layout, fast path), data in unusual layouts (slow path).
    out("synack_mss_sackok_ts_ws", "encoded", a, "SA", linux_synack, t0, cc.encode_tsval(t0, c))
    out("synack_mss_nop_nop_ts", "encoded", a, "SA",
        [("MSS", 1460), ("NOP", None), ("NOP", None), ("Timestamp", None), ("NOP", None),
         ("WScale", 7)], t0, cc.encode_tsval(t0, c))
    out("data_nop_nop_ts", "encoded", a, "A", nnts, t0 + 3, cc.encode_tsval(t0 + 3, c))
    out("data_ts_first", "encoded_slow_path", a, "A",
        [("Timestamp", None), ("NOP", None), ("NOP", None)], t0 + 5, cc.encode_tsval(t0 + 5, c))
    out("data_sack_blocks_then_ts", "encoded_slow_path", a, "A",
        [("NOP", None), ("NOP", None), ("SAck", (5000, 6000, 7000, 8000)), ("Timestamp", None)],
        t0 + 9, cc.encode_tsval(t0 + 9, c))
    out("data_md5_then_ts", "encoded_slow_path", a, "PA",
        [("MD5", b"\x11" * 16), ("NOP", None), ("NOP", None), ("Timestamp", None)],
        t0 + 12, cc.encode_tsval(t0 + 12, c))
    out("data_unknown_option_ws_ts", "encoded_slow_path", a, "A",
        [(253, b"\xbe\xef"), ("WScale", 3), ("Timestamp", None), ("EOL", None)],
        t0 + 15, cc.encode_tsval(t0 + 15, c))
    t1 = t0 + 0x20           # past the wrap of the low 16 bits: the version flips
    out("data_after_wrap", "encoded", a, "A", nnts, t1, cc.encode_tsval(t1, c))
    out("rst_ack_with_ts", "encoded", a, "RA", nnts, t1 + 1, cc.encode_tsval(t1 + 1, c))
    out("rst_without_ts", "egress_no_ts", a, "R", [], 0)
    bad = bytearray(bytes(out_frame(a, "A", [(200, b"\x00\x00")] + nnts, t1 + 2)))
    bad[14 + 20 + 21] = 0     # the unknown option's length byte: 0, a malformed list
    # (left with a wrong checksum: a segment the programs must leave exactly as it is)
    lines.append(f"option_length_zero out bad_options {bad.hex()} {bad.hex()}")
    tsbad = bytearray(bytes(out_frame(a, "A", nnts, t1)))
    tsbad[14 + 20 + 20 + 3] = 8     # a timestamp option of length 8
    lines.append(f"ts_length_not_10 out bad_options {tsbad.hex()} {tsbad.hex()}")
    out("eol_before_ts", "egress_no_ts", a, "A", [("EOL", None), ("NOP", None), ("Timestamp", None)],
        t1 + 3)
    # The client's echoes, tunnelled, lagging behind; one of the old version.
    inn("ack_nop_nop_ts", "restored", a, "A", nnts, cc.encode_tsval(t1, c), t1)
    inn("ack_echo_before_wrap", "restored", a, "A", nnts, cc.encode_tsval(t0 + 15, c), t0 + 15)
    inn("ack_sack_blocks_then_ts", "restored", a, "A",
        [("NOP", None), ("NOP", None), ("SAck", (3000, 4000, 5000, 6000)), ("Timestamp", None)],
        cc.encode_tsval(t0 + 9, c), t0 + 9)
    inn("ack_ts_after_unknown_option", "restored", a, "A", [(254, b"\x01\x02"), ("Timestamp", None)],
        cc.encode_tsval(t1 + 1, c), t1 + 1)
    inn("rst_ack_with_ts_in", "restored", a, "RA", nnts, cc.encode_tsval(t1, c), t1)
    inn("fin_ack_gre", "restored", a, "FA", nnts, cc.encode_tsval(t1, c), t1, gre=True)
    inn("ack_foreign_cookie", "misrouted,restored", a, "A", nnts, cc.encode_tsval(t1, c ^ 0x2AA), t1)
    # Connection b: a stateful SMux hints the ident in the SYN; the host encodes it.
    b = 50002
    ident = cc.stateful_ident(3, 999)
    cb = cookie(b, ident)
    inn("syn_with_stateful_hint", "syn_hint", b, "S",
        [("MSS", 1460), ("SAckOK", b""), ("Timestamp", None), ("NOP", None), ("WScale", 7)],
        cc.syn_hint(ident), 0)
    out("synack_of_hinted_syn", "encoded", b, "SA", linux_synack, 0x77, cc.encode_tsval(0x77, cb))
    # Connection c: a client SYN whose TSecr is not zero but no hint: left alone.
    inn("syn_with_garbage_tsecr", "-", 50003, "S", linux_synack, 0x12345678, 0x12345678)
    # Connection d: no state at all (opened before the agent had a key): TSecr 0.
    inn("ack_without_state", "restore_miss", 50004, "A", nnts, cc.encode_tsval(0x999, cookie(50004)), 0)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
