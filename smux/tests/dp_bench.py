#!/usr/bin/env python3
"""SMux benchmark driver (called by smux/bench.sh).

One core, net_null -> hlb-smux -> net_null (one-armed: the same net_null port receives
and transmits, exactly like dpdk-testpmd io-forward with --port-topology=loop on the
same vdev), 64-byte TCP packets over 10k flows.  Modes are interleaved with testpmd
runs, repeated, and the medians compared, so every ratio comes from one run of this
script on one machine state.

Two rates are reported for every run:
  * wall  - packets / elapsed time;
  * core  - packets / CPU time of the forwarding thread (what one dedicated core
            does; robust when other processes share the 2 cores, as here).
Ratios use the per-core rates; both are printed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dp_testlib as tl  # noqa: E402

VIP = "100.64.0.1"


def table(selection, conn):
    return {"version": 1, "vips": [{
        "vip": VIP, "selection": selection, "connTable": conn,
        "ports": [{"proto": "tcp", "port": 80, "dips": [
            {"ip": f"10.10.0.{i}", "weight": 1 + i % 2} for i in range(1, 9)]}]}]}


def thread_cpu(pid, comm_prefix):
    total = 0.0
    tck = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                comm = f.read().strip()
            if not comm.startswith(comm_prefix):
                continue
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tck
        except FileNotFoundError:
            pass
    return total


def run_testpmd(seconds, core):
    """io-forward on one net_null port (loop topology); forwarding on lcore `core`,
    testpmd's default burst (32): the reference of the ratios."""
    prefix = f"hlbdptp{os.getpid()}"
    cmd = ["dpdk-testpmd"] + tl.eal_args(prefix, ["net_null0"], core=f"0,{core}") + [
        "--", "-i", "--port-topology=loop", "--forward-mode=io", "--nb-cores=1",
        "--total-num-mbufs=16384"]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(2.0)
        p.stdin.write("start\n")
        p.stdin.flush()
        time.sleep(1.0)
        p.stdin.write("show port stats all\n")
        p.stdin.flush()
        t0, c0 = time.time(), thread_cpu(p.pid, f"rte-worker-{core}")
        time.sleep(seconds)
        p.stdin.write("show port stats all\n")
        p.stdin.flush()
        t1, c1 = time.time(), thread_cpu(p.pid, f"rte-worker-{core}")
        p.stdin.write("stop\nquit\n")
        p.stdin.flush()
        out, _ = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
        tl.cleanup_prefix(prefix)
    rx = [int(l.split()[1]) for l in out.splitlines() if l.strip().startswith("RX-packets:")]
    # The two "show port stats" calls print the cumulative RX count first.
    pkts = rx[1] - rx[0]
    return {"pkts": pkts, "wall": t1 - t0, "cpu": c1 - c0}


def run_smux(mode, seconds, core, wrapper=(), timeout=60):
    """One mode of hlb-smux for `seconds`; `wrapper` runs it under another program
    (valgrind), which then needs a longer `timeout` than the default start-up slack."""
    prefix = f"hlbdpbench{os.getpid()}"
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(table(mode["selection"], mode["conn"]), f)
        tfile = f.name
    args = ["--ip", tl.SMUX_IP, "--gateway-mac", tl.GW_MAC, "--mgmt", "127.0.0.1:0",
            "--table", tfile, "--bench-vip", f"{VIP}:80", "--run-seconds", str(seconds),
            "--idle-sleep-us", "0", "--conn-capacity", str(4 << 20)] + mode["args"]
    cmd = (list(wrapper) + [tl.SMUX_BIN] + tl.eal_args(prefix, ["net_null0"], core=core)
           + ["--"] + args)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + timeout)
    finally:
        tl.cleanup_prefix(prefix)
        os.unlink(tfile)
    done = next(json.loads(l) for l in p.stdout.splitlines() if '"event":"exit"' in l)
    return {"pkts": done["rx"], "wall": done["seconds"], "cpu": done["cpuSeconds"],
            "inserts": done["connInserts"], "fwd": done["forwarded"], "tsc": done["tscHz"],
            "failures": done["connInsertFailures"], "entries": done["connEntries"],
            "hits": done["connHits"], "cacheHits": done.get("connCacheHits", 0)}


MODES = [
    # "baseline": no packet core, frames go back out as they came (nothing is "forwarded")
    {"name": "rx/tx only (no generator)", "key": "rxtx", "selection": "crc32",
     "conn": False, "baseline": True, "args": ["--bench-raw-forward"]},
    {"name": "baseline: generator + rx/tx only", "key": "raw", "selection": "crc32",
     "conn": False, "baseline": True, "args": ["--bench-flows", "10000", "--bench-raw-forward"]},
    {"name": "stateless crc32 + IP-in-IP", "key": "crc32", "selection": "crc32", "conn": False,
     "args": ["--bench-flows", "10000"]},
    {"name": "stateless ovs + IP-in-IP", "key": "ovs", "selection": "ovs", "conn": False,
     "args": ["--bench-flows", "10000"]},
    {"name": "conn table, 1M live conns", "key": "conn", "selection": "crc32", "conn": True,
     "args": ["--bench-flows", "10000", "--bench-prefill", "1000000"]},
    {"name": "conn table, every packet new", "key": "new", "selection": "crc32", "conn": True,
     "args": ["--bench-new-flows"]},
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--core", type=int, default=1)
    a = ap.parse_args()

    res = {"testpmd": []}
    for m in MODES:
        res[m["key"]] = []
    tsc = None
    for rep in range(a.reps):
        res["testpmd"].append(run_testpmd(a.seconds, a.core))
        for m in MODES:
            r = run_smux(m, a.seconds, a.core)
            tsc = r["tsc"]
            if not m.get("baseline") and r["fwd"] != r["pkts"]:
                raise SystemExit(f"{m['name']}: {r['pkts'] - r['fwd']} packets not forwarded")
            res[m["key"]].append(r)
        print(f"# repetition {rep + 1}/{a.reps} done", flush=True)

    def med(key, what):
        vals = []
        for r in res[key]:
            if what == "wall":
                vals.append(r["pkts"] / r["wall"] / 1e6)
            elif what == "core":
                vals.append(r["pkts"] / r["cpu"] / 1e6 if r["cpu"] > 0 else 0.0)
            elif what == "ins":
                vals.append(r["inserts"] / r["cpu"] / 1e6)
        return statistics.median(vals)

    tp_core, tp_wall = med("testpmd", "core"), med("testpmd", "wall")
    rows = [("dpdk-testpmd io-forward", "testpmd")] + [(m["name"], m["key"]) for m in MODES]
    print()
    print(f"{'mode':34} {'Mpps/core':>10} {'Mpps wall':>10} {'cycles/pkt':>11} {'x testpmd':>10}")
    summary = {"tscHz": tsc, "modes": {}}
    for name, key in rows:
        core, wall = med(key, "core"), med(key, "wall")
        cpp = tsc / (core * 1e6) if core else 0
        ratio = core / tp_core if tp_core else 0
        print(f"{name:34} {core:10.2f} {wall:10.2f} {cpp:11.1f} {ratio:10.2f}")
        summary["modes"][key] = {"mppsPerCore": round(core, 3), "mppsWall": round(wall, 3),
                                 "cyclesPerPacket": round(cpp, 1), "ratio": round(ratio, 3)}
    ins = med("new", "ins")
    print(f"\nnew-connection insert rate (datapath, every packet a new SYN): {ins:.2f} M/s per core")
    gen = summary["modes"]["raw"]["cyclesPerPacket"] - summary["modes"]["rxtx"]["cyclesPerPacket"]
    print(f"the frame generator (standing in for a NIC's DMA) costs {gen:.1f} cycles per packet "
          f"(baseline minus rx/tx only); every hlb-smux row includes it")
    pre = res["conn"][0]
    print(f"1M-connection run: table held {pre['entries']} entries, "
          f"{pre['failures']} insert failures; {pre['cacheHits']} of {pre['hits']} "
          f"connection hits decided from the flow cache")
    print(f"wall-clock ratios: stateless {med('crc32', 'wall') / tp_wall:.2f}x, "
          f"conn {med('conn', 'wall') / tp_wall:.2f}x")
    targets = [("stateless selection+encap >= 0.5x testpmd", summary["modes"]["crc32"]["ratio"] >= 0.5),
               ("conn table with 1M live >= 0.4x testpmd", summary["modes"]["conn"]["ratio"] >= 0.4),
               ("new-connection inserts >= 5 M/s", ins >= 5.0)]
    print()
    for t, ok in targets:
        print(f"target {t}: {'MET' if ok else 'NOT MET'}")
    summary["insertMpps"] = round(ins, 3)
    summary["targets"] = {t: ok for t, ok in targets}
    print("\nJSON " + json.dumps(summary))


if __name__ == "__main__":
    main()
