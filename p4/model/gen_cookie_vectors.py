#!/usr/bin/env python3
"""Writes the Cheetah cookie vectors (p4/COOKIE-SPEC.md §12) from the reference model.

    python3 p4/model/gen_cookie_vectors.py > p4/vectors/cookie_vectors.csv
    python3 p4/model/gen_cookie_vectors.py --random 10000 --seed 7 --no-fixed > FILE

The committed file holds fixed edge cases, connections whose TSval crosses two or
more changes of its high bits, both hash modes, stateful idents, and random rows from
a fixed seed; tests draw further random rows with --random/--seed.
"""
import argparse
import csv
import ipaddress
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cheetah_cookie as cc  # noqa: E402

COLUMNS = ["seq", "mode", "key", "vip", "vip_port", "client", "client_port", "ident",
           "hash", "cookie", "tsval", "wire_tsval", "last_sent", "wire_tsecr", "tsecr"]


class Writer:
    def __init__(self, out):
        self.w = csv.writer(out, lineterminator="\n")
        self.n = 0

    def connection(self, seq, mode, key, vip, vport, client, cport, ident, steps):
        """steps: (tsval sent, original TSval the client echoes) in order."""
        tup = cc.tuple_bytes(vip, vport, client, cport)
        h = cc.cookie_hash(mode, key, tup)
        cookie = cc.make_cookie(mode, key, tup, ident)
        last = None
        for tsval, echo in steps:
            if last is None or cc.s32(tsval - last) > 0:
                last = tsval
            wire_tsecr = cc.encode_tsval(echo, cookie)
            assert cc.restore_tsecr(wire_tsecr, last) == echo, (seq, hex(echo), hex(last))
            assert cc.decode_ident(mode, key, tup, cc.cookie_of(wire_tsecr)) == ident
            self.w.writerow([seq, mode, key.hex(), vip, vport, client, cport, ident, f"{h:016x}",
                             cookie, f"{tsval:08x}", f"{cc.encode_tsval(tsval, cookie):08x}",
                             f"{last:08x}", f"{wire_tsecr:08x}", f"{echo:08x}"])
            self.n += 1


def rand_ip(rng):
    return str(ipaddress.IPv4Address(rng.getrandbits(32)))


def random_rows(w, rng, count, prefix):
    for i in range(count):
        mode = "crc32c" if rng.random() < 0.1 else "siphash13"
        if rng.random() < 0.2:
            ident = cc.stateful_ident(rng.randint(0, cc.OWNER_MAX), rng.randint(0, cc.INDEX_MAX))
        else:
            ident = rng.randint(1, cc.SERVER_ID_MAX)
        tsval = rng.getrandbits(32)
        echo = (tsval - rng.randrange(1 << 17)) & cc.U32
        w.connection(f"{prefix}{i}", mode, rng.randbytes(16), rand_ip(rng), rng.getrandbits(16),
                     rand_ip(rng), rng.getrandbits(16), ident, [(tsval, echo)])


def fixed_rows(w):
    key = bytes(range(16))
    vip, client = "10.200.0.10", "10.77.1.2"
    # Edge cases of one segment and its echo.
    edges = [(0x00000000, 0x00000000), (0xFFFFFFFF, 0xFFFFFFFF), (0x00010000, 0x0000FFFF),
             (0x00000005, 0xFFFFFFF0),                      # echo before the 2**32 wrap
             (0x00050000, 0x00050000 - (1 << 17) + 1),      # oldest echo restored exactly
             (0x8000FFFF, 0x7FFF0000), (0x12345678, 0x12345678)]
    for i, (tsval, echo) in enumerate(edges):
        w.connection(f"edge{i}", "siphash13", key, vip, 80, client, 40000 + i, 1, [(tsval, echo)])
    for i, ident in enumerate([1, 2, 0x2AAA, cc.SERVER_ID_MAX, cc.stateful_ident(0, 0),
                               cc.stateful_ident(cc.OWNER_MAX, cc.INDEX_MAX)]):
        for mode in cc.HASH_MODES:
            w.connection(f"ident{i}-{mode}", mode, key, vip, 443, client, 50000 + i, ident,
                         [(0x0ABC0123, 0x0ABC0100)])
    # Connections whose high bits change at least twice, echoes lagging behind.
    sequences = {
        "wrap-up": [0x0001FFF0, 0x0001FFFF, 0x00020000, 0x00020010, 0x0002FFF8, 0x00030002,
                    0x00030100, 0x0003FFFF, 0x00040000],
        "wrap-2pow32": [0xFFFEFFF0, 0xFFFF0004, 0xFFFFFFFE, 0x00000001, 0x00000100, 0x0000FFFF,
                        0x00010000],
        "wrap-jumps": [0x7FFF8000, 0x7FFFF000, 0x80000800, 0x80007000, 0x8000F000, 0x80016000],
    }
    for n, (name, sent) in enumerate(sequences.items()):
        for mode in cc.HASH_MODES:
            steps = []
            for i, tsval in enumerate(sent):
                echo = sent[max(0, i - 1 - i % 2)]   # the client lags zero, one or two segments
                steps.append((tsval, echo))
            w.connection(f"{name}-{mode}", mode, key, vip, 8080, client, 33000 + n, 7 + n, steps)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--random", type=int, default=400, help="random connections (default 400)")
    p.add_argument("--seed", type=int, default=20261201)
    p.add_argument("--no-fixed", action="store_true", help="random rows only")
    a = p.parse_args(argv)
    out = sys.stdout
    out.write("# Cheetah cookie vectors, p4/COOKIE-SPEC.md section 12; written by "
              "p4/model/gen_cookie_vectors.py\n")
    w = Writer(out)
    w.w.writerow(COLUMNS)
    if not a.no_fixed:
        fixed_rows(w)
    random_rows(w, random.Random(a.seed), a.random, "r")
    return 0


if __name__ == "__main__":
    sys.exit(main())
