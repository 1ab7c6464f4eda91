#!/usr/bin/env python3
"""Writes the Cheetah QUIC connection-id vectors (p4/COOKIE-SPEC.md §13.6) from the
reference model.

    python3 p4/model/gen_quic_vectors.py > p4/vectors/quic_cookie_vectors.csv
    python3 p4/model/gen_quic_vectors.py --random 10000 --seed 7 --no-fixed > FILE

One row per destination connection id as a client sends it to the VIP: ids a server
issued (the ident is its server id), and ids a client chose or forged (any length
1..20; an 8-byte one still decodes to some 16-bit ident).
"""
import argparse
import csv
import ipaddress
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cheetah_cookie as cc  # noqa: E402

COLUMNS = ["seq", "mode", "key", "vip", "vip_port", "dcid", "hash", "ident", "initial_hash",
           "weight_total", "slot"]


def row(w, seq, mode, key, vip, vport, dcid, weight_total, server_id=None):
    if len(dcid) == cc.QUIC_CID_LEN:
        h = cc.quic_hash(mode, key, vip, vport, dcid)
        ident = cc.quic_ident(mode, key, vip, vport, dcid)
    else:
        h, ident = 0, -1
    if server_id is not None:
        assert ident == server_id, (seq, ident, server_id)
    ih = cc.quic_initial_hash(key, dcid)
    w.writerow([seq, mode, key.hex(), vip, vport, dcid.hex(), f"{h:016x}", ident, f"{ih:08x}",
                weight_total, cc.quic_initial_slot(ih, weight_total)])


def server_row(w, seq, mode, key, vip, vport, server_id, nonce, weight_total):
    cid = cc.quic_cid(mode, key, vip, vport, server_id, nonce)
    row(w, seq, mode, key, vip, vport, cid, weight_total, server_id)


def fixed_rows(w):
    key0, key1 = bytes(16), bytes(range(16))
    keyf = b"\xff" * 16
    for mode in cc.HASH_MODES:
        for i, (key, vip, vport, sid, nonce) in enumerate([
                (key0, "0.0.0.0", 0, 1, bytes(6)),
                (keyf, "255.255.255.255", 65535, cc.SERVER_ID_MAX, b"\xff" * 6),
                (key1, "10.200.0.10", 443, 4321, bytes.fromhex("0123456789ab")),
                (key1, "10.200.0.10", 443, 4321, bytes.fromhex("0123456789ac")),
                (key1, "10.200.0.11", 443, 4321, bytes.fromhex("0123456789ab")),
                (key1, "10.200.0.10", 4433, 4321, bytes.fromhex("0123456789ab")),
                (key1, "10.200.0.10", 443, 2, bytes.fromhex("0123456789ab"))]):
            server_row(w, f"fixed-{mode}-srv{i}", mode, key, vip, vport, sid, nonce, 3)
        # client-chosen ids: every length RFC 9000 allows in a long header
        for n in range(1, cc.QUIC_MAX_CID_LEN + 1):
            row(w, f"fixed-{mode}-client-len{n}", mode, key1, "10.200.0.10", 443,
                bytes((7 * j + n) & 0xFF for j in range(n)), 1 + n * 37)


def random_rows(w, rng, count, prefix):
    for i in range(count):
        mode = "crc32c" if rng.random() < 0.1 else "siphash13"
        key = rng.randbytes(16)
        vip = str(ipaddress.IPv4Address(rng.getrandbits(32)))
        vport = rng.randint(1, 65535)
        total = rng.randint(1, 100000)
        if rng.random() < 0.6:
            server_row(w, f"{prefix}srv{i}", mode, key, vip, vport, rng.randint(1, cc.SERVER_ID_MAX),
                       rng.randbytes(cc.QUIC_NONCE_LEN), total)
        else:   # a client's (or a forger's) id
            n = cc.QUIC_CID_LEN if rng.random() < 0.5 else rng.randint(1, cc.QUIC_MAX_CID_LEN)
            row(w, f"{prefix}client{i}", mode, key, vip, vport, rng.randbytes(n), total)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--random", type=int, default=300, help="random rows (default 300)")
    p.add_argument("--seed", type=int, default=20261127)
    p.add_argument("--no-fixed", action="store_true", help="random rows only")
    a = p.parse_args()
    out = sys.stdout
    out.write("# Cheetah QUIC connection-id vectors: p4/COOKIE-SPEC.md section 13.6, written by "
              "p4/model/gen_quic_vectors.py\n")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    if not a.no_fixed:
        fixed_rows(w)
    random_rows(w, random.Random(a.seed), a.random, "" if a.no_fixed else "rand-")


if __name__ == "__main__":
    main()
