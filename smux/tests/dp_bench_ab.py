#!/usr/bin/env python3
"""Interleaved comparison of two or more hlb-smux binaries in one session (for speed work).

Each repetition runs dpdk-testpmd io-forward once, then every chosen mode on every
binary, the binaries' order rotating between repetitions (the one that runs first
is not always the same), so all see the same machine load.  Prints per-core Mpps,
cycles/packet and the ratio to that repetition's testpmd, and the medians.  Uses
dp_bench.py's runners.

  python3 smux/tests/dp_bench_ab.py OLD_BIN NEW_BIN [MORE_BINS...] [--reps 5]
      [--seconds 2] [--modes crc32,conn] [--workers 1]
"""
import argparse
import statistics
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dp_bench as b  # noqa: E402
import dp_testlib as tl  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bins", nargs="+", metavar="BIN", help="hlb-smux binaries (two or more)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--core", type=int, default=1)
    ap.add_argument("--modes", default="crc32,conn")
    ap.add_argument("--workers", type=int, default=1,
                    help="workers of every run (cpus 0..N-1 when over 1; testpmd the same)")
    o = ap.parse_args()
    if len(o.bins) < 2:
        ap.error("give at least two binaries to compare")
    names = [chr(ord("A") + i) for i in range(len(o.bins))]
    binary = dict(zip(names, o.bins))
    modes = [m for m in b.MODES if m["key"] in o.modes.split(",")]
    ratio = {(m["key"], v): [] for m in modes for v in names}
    cycles = {(m["key"], v): [] for m in modes for v in names}
    for rep in range(o.reps):
        tp = b.run_testpmd(o.seconds, o.core, o.workers)
        tp_rate = tp["pkts"] / tp["cpu"]
        k = rep % len(names)
        order = names[k:] + names[:k]
        line = [f"rep {rep + 1}: testpmd {tp_rate / 1e6:.2f} Mpps/core"]
        for m in modes:
            for v in order:
                tl.SMUX_BIN = binary[v]
                r = b.run_smux(m, o.seconds, o.core, workers=o.workers)
                if r["fwd"] != r["pkts"] and not m.get("baseline"):
                    raise SystemExit(f"{v} {m['key']}: not every packet forwarded")
                rate = r["pkts"] / r["cpu"]
                ratio[(m["key"], v)].append(rate / tp_rate)
                cycles[(m["key"], v)].append(r["tsc"] / rate)
                line.append(f"{m['key']}-{v} {rate / 1e6:.2f} ({r['tsc'] / rate:.1f} cyc, "
                            f"{rate / tp_rate:.3f}x)")
        print("; ".join(line), flush=True)
    print()
    for m in modes:
        for v in names:
            key = (m["key"], v)
            print(f"{m['key']:6} {v} ({binary[v]}): median "
                  f"{statistics.median(cycles[key]):.1f} cycles/pkt, "
                  f"{statistics.median(ratio[key]):.3f}x testpmd")


if __name__ == "__main__":
    main()
