#!/usr/bin/env python3
"""Instructions per packet of hlb-smux's benchmark modes, counted by callgrind.

Timing on this shared 2-core machine moves by a few percent between runs; the
instruction count of a run does not.  For each binary and mode this runs the mode of
dp_bench.py under valgrind (about 50 times slower, so a few million packets) and
prints, per function, the instructions it executed divided by the packets received.
Start-up functions (the dynamic loader, EAL init) appear with small one-off counts.

  python3 smux/tests/dp_instr_count.py [BIN ...] [--modes crc32,conn] [--seconds 3]

Needs valgrind (smux/install-deps.sh installs it) and root (DPDK).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dp_bench as b  # noqa: E402
import dp_testlib as tl  # noqa: E402

LINE = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+(\S+)(?:\s+\[(\S+)\])?")


def per_function(callgrind_out):
    """[(instructions, function)] from callgrind_annotate, largest first."""
    text = subprocess.run(["callgrind_annotate", callgrind_out], capture_output=True,
                          text=True, check=True).stdout
    rows = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m and not m.group(2).startswith("PROGRAM"):
            name = m.group(2).split(":", 1)[-1]
            if name.startswith("0x") and m.group(3):     # no symbol: name its library
                name += " in " + os.path.basename(m.group(3))
            rows.append((int(m.group(1).replace(",", "")), name))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bins", nargs="*", default=[tl.SMUX_BIN], metavar="BIN")
    ap.add_argument("--modes", default="crc32,conn")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--min", type=float, default=1.0,
                    help="show functions with at least this many instructions per packet")
    o = ap.parse_args()
    modes = [m for m in b.MODES if m["key"] in o.modes.split(",")]
    for binary in o.bins:
        tl.SMUX_BIN = binary
        for m in modes:
            with tempfile.TemporaryDirectory(prefix="hlb-callgrind") as d:
                out = os.path.join(d, "callgrind.out")
                r = b.run_smux(m, o.seconds, 1, timeout=600,
                               wrapper=["valgrind", "--tool=callgrind",
                                        f"--callgrind-out-file={out}"])
                rows = per_function(out)
            print(f"{binary} {m['key']}: {r['pkts']} packets")
            for ir, name in rows:
                if ir / r["pkts"] >= o.min:
                    print(f"  {ir / r['pkts']:8.1f}  {name}")


if __name__ == "__main__":
    main()
