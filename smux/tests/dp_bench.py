#!/usr/bin/env python3
"""SMux benchmark driver (called by smux/bench.sh).

net_null -> hlb-smux -> net_null (one-armed: the same net_null port receives and
transmits, exactly like dpdk-testpmd io-forward with --port-topology=loop on the same
vdev), 64-byte TCP packets over 10k flows; with one worker on one core, then with
WORKERS workers on cores 0..WORKERS-1 (net_null gives each worker an rx queue of its
own, and each worker's generator its own share of the flows).  dpdk-testpmd runs on
the same cores the same way (one forwarding core, then WORKERS, a queue each).  Modes
are interleaved with the testpmd runs, repeated, and the medians compared, so every
ratio comes from one run of this script on one machine state.

Two rates are reported for every run:
  * wall  - packets / elapsed time (what the SMux forwards; the scaling figure);
  * core  - packets / CPU time of the forwarding threads (what one dedicated core
            does; robust when other processes share the cores, as here).
Ratios to testpmd use the per-core rates; the scaling ratio the wall rates.
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


def table(selection, conn, cheetah=False):
    vip = {"vip": VIP, "selection": selection, "connTable": conn,
           "ports": [{"proto": "tcp", "port": 80, "dips": [
               {"ip": f"10.10.0.{i}", "weight": 1 + i % 2} for i in range(1, 9)]}]}
    if cheetah:
        vip.update(affinity="cheetah", cookieKey="000102030405060708090a0b0c0d0e0f")
        if cheetah == "stateful":        # this SMux the owner: the generator's flows have entries
            vip.update(affinity="cheetah-stateful", statefulOwners=[tl.SMUX_IP])
        for i, d in enumerate(vip["ports"][0]["dips"]):
            d["serverId"] = 100 + i
    return {"version": 1, "vips": [vip]}


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


def run_testpmd(seconds, core, workers=1):
    """io-forward on one net_null port (loop topology), testpmd's default burst (32):
    the reference of the ratios.  One forwarding lcore on cpu `core`, or `workers`
    of them on cpus 0..workers-1 with a queue each (testpmd's own lcore, idle at its
    prompt, shares cpu 0)."""
    prefix = f"hlbdptp{os.getpid()}"
    if workers == 1:
        eal, fwd = tl.eal_args(prefix, ["net_null0"], core=f"0,{core}"), ["--nb-cores=1"]
    else:
        lcores = ",".join(["0@0"] + [f"{k + 1}@{k}" for k in range(workers)])
        eal = [a for a in tl.eal_args(prefix, ["net_null0"]) if a not in ("-l", "0")]
        eal += ["--lcores", lcores]
        fwd = [f"--nb-cores={workers}", f"--rxq={workers}", f"--txq={workers}"]
    cmd = ["dpdk-testpmd"] + eal + [
        "--", "-i", "--port-topology=loop", "--forward-mode=io",
        "--total-num-mbufs=16384"] + fwd
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(2.0)
        p.stdin.write("start\n")
        p.stdin.flush()
        time.sleep(1.0)
        p.stdin.write("show port stats all\n")
        p.stdin.flush()
        thread = f"rte-worker-{core}" if workers == 1 else "rte-worker-"
        t0, c0 = time.time(), thread_cpu(p.pid, thread)
        time.sleep(seconds)
        p.stdin.write("show port stats all\n")
        p.stdin.flush()
        t1, c1 = time.time(), thread_cpu(p.pid, thread)
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


def run_smux(mode, seconds, core, wrapper=(), timeout=60, workers=1):
    """One mode of hlb-smux for `seconds`, one worker on cpu `core` or `workers` on
    cpus 0..workers-1; `wrapper` runs it under another program (valgrind), which
    then needs a longer `timeout` than the default start-up slack."""
    prefix = f"hlbdpbench{os.getpid()}"
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(table(mode["selection"], mode["conn"], mode.get("cheetah", False)), f)
        tfile = f.name
    args = ["--ip", tl.SMUX_IP, "--gateway-mac", tl.GW_MAC, "--mgmt", "127.0.0.1:0",
            "--table", tfile, "--bench-vip", f"{VIP}:80", "--run-seconds", str(seconds),
            "--idle-sleep-us", "0", "--conn-capacity", str(4 << 20),
            "--stateful-adopt-grace", "0"] + mode["args"]     # stateful SYNs hinted from the start
    lcores = core if workers == 1 else ",".join(str(k) for k in range(workers))
    null = "net_null0,size=66" if mode.get("cheetah") else "net_null0"
    cmd = (list(wrapper) + [tl.SMUX_BIN] + tl.eal_args(prefix, [null], core=lcores)
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
            "hits": done["connHits"], "cacheHits": done.get("connCacheHits", 0),
            "workerRx": done.get("workerRx", [done["rx"]])}


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
    {"name": "stateless ovs-dphash + IP-in-IP", "key": "dphash", "selection": "ovs-dphash",
     "conn": False, "args": ["--bench-flows", "10000"]},
    # Every frame a data segment echoing its server's cookie (66-byte frames: the
    # timestamp option), decoded with SipHash-1-3.
    {"name": "cheetah cookie decode + IP-in-IP", "key": "cheetah", "selection": "crc32",
     "conn": False, "cheetah": True, "args": ["--bench-flows", "10000"]},
    # The same with stateful cookies: every flow has its entry in the owner's (this
    # SMux's) ConnTable, made by the generator as the flow's SYN would have.
    {"name": "cheetah-stateful decode + IP-in-IP", "key": "cheetahsf", "selection": "crc32",
     "conn": False, "cheetah": "stateful", "args": ["--bench-flows", "10000"]},
    {"name": "conn table, 1M live conns", "key": "conn", "selection": "crc32", "conn": True,
     "args": ["--bench-flows", "10000", "--bench-prefill", "1000000"]},
    {"name": "conn table, every packet new", "key": "new", "selection": "crc32", "conn": True,
     "args": ["--bench-new-flows"]},
    # Several workers only: worker 0 reads queue 0 and hands the other workers their
    # flows through their inboxes (the stage of ports with one rx queue).
    {"name": "crc32, software distribution", "key": "crc32sw", "selection": "crc32",
     "conn": False, "multi": True, "base": "crc32",
     "args": ["--bench-flows", "10000", "--rx-distribution", "software"]},
]


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--core", type=int, default=1, help="the one-worker runs' cpu")
    ap.add_argument("--workers", type=int, default=2,
                    help="the multi-worker runs: cpus 0..N-1 (1: none)")
    ap.add_argument("--modes", default=",".join(m["key"] for m in MODES),
                    help="the modes to run (the table's keys; rxtx, raw, crc32 and conn at least)")
    a = ap.parse_args()
    modes = [m for m in MODES if m["key"] in a.modes.split(",")]
    configs = [1] + ([a.workers] if a.workers > 1 else [])

    res = {(key, w): [] for w in configs for key in ["testpmd"] + [m["key"] for m in modes]}
    tsc = None
    loads = [loadavg()]
    print(f"# CPU {cpu_model()}, {os.cpu_count()} cpus; load average {loads[0]} at the start",
          flush=True)
    for rep in range(a.reps):
        for w in configs:
            res[("testpmd", w)].append(run_testpmd(a.seconds, a.core, w))
            for m in modes:
                if m.get("multi") and w == 1:
                    continue
                r = run_smux(m, a.seconds, a.core, workers=w)
                tsc = r["tsc"]
                if not m.get("baseline") and r["fwd"] != r["pkts"]:
                    raise SystemExit(f"{m['name']}, {w} workers: {r['pkts'] - r['fwd']} "
                                     "packets not forwarded")
                if len(r["workerRx"]) != w or min(r["workerRx"]) == 0:
                    raise SystemExit(f"{m['name']}: a worker forwarded nothing: {r['workerRx']}")
                res[(m["key"], w)].append(r)
        loads.append(loadavg())
        print(f"# repetition {rep + 1}/{a.reps} done (load average {loads[-1]})", flush=True)

    def med(key, w, what):
        vals = []
        for r in res[(key, w)]:
            if what == "wall":
                vals.append(r["pkts"] / r["wall"] / 1e6)
            elif what == "core":
                vals.append(r["pkts"] / r["cpu"] / 1e6 if r["cpu"] > 0 else 0.0)
            elif what == "ins":
                vals.append(r["inserts"] / r["cpu"] / 1e6)
            elif what == "ins_wall":
                vals.append(r["inserts"] / r["wall"] / 1e6)
        return statistics.median(vals)

    rows = [("dpdk-testpmd io-forward", "testpmd")] + [(m["name"], m["key"]) for m in modes]
    summary = {"tscHz": tsc, "cpu": cpu_model(), "loadAverages": loads, "workers": configs,
               "modes": {}}
    for w in configs:
        tp_core, tp_wall = med("testpmd", w, "core"), med("testpmd", w, "wall")
        print(f"\n{w} worker{'s' if w > 1 else ''} (cpu{'s 0-' + str(w - 1) if w > 1 else ' ' + str(a.core)})")
        print(f"{'mode':34} {'Mpps/core':>10} {'Mpps wall':>10} {'cycles/pkt':>11} {'x testpmd':>10}")
        for name, key in rows:
            if not res[(key, w)]:
                continue
            core, wall = med(key, w, "core"), med(key, w, "wall")
            cpp = tsc / (core * 1e6) if core else 0
            ratio = core / tp_core if tp_core else 0
            print(f"{name:34} {core:10.2f} {wall:10.2f} {cpp:11.1f} {ratio:10.2f}")
            summary["modes"].setdefault(key, {})[w] = {
                "mppsPerCore": round(core, 3), "mppsWall": round(wall, 3),
                "cyclesPerPacket": round(cpp, 1), "ratio": round(ratio, 3)}
        if ("new", w) in res:
            ins, ins_wall = med("new", w, "ins"), med("new", w, "ins_wall")
            print(f"new-connection insert rate (every packet a new SYN): {ins:.2f} M/s per core, "
                  f"{ins_wall:.2f} M/s in all")
            summary.setdefault("insertMpps", {})[w] = round(ins, 3)
        pre = res[("conn", w)][0]
        print(f"1M-connection run: tables held {pre['entries']} entries, {pre['failures']} insert "
              f"failures; {pre['cacheHits']} of {pre['hits']} connection hits decided from the "
              f"flow cache")
        print(f"wall-clock ratios: stateless {med('crc32', w, 'wall') / tp_wall:.2f}x, "
              f"conn {med('conn', w, 'wall') / tp_wall:.2f}x")
    one = summary["modes"]
    have = lambda *keys: all(k in one for k in keys)  # noqa: E731
    gen = one["raw"][1]["cyclesPerPacket"] - one["rxtx"][1]["cyclesPerPacket"]
    print(f"\nthe frame generator (standing in for a NIC's DMA) costs {gen:.1f} cycles per packet "
          f"(baseline minus rx/tx only, one worker); every hlb-smux row includes it")
    targets = [("stateless crc32 + encap >= 0.5x testpmd per core", one["crc32"][1]["ratio"] >= 0.5),
               ("conn table with 1M live >= 0.4x testpmd", one["conn"][1]["ratio"] >= 0.4)]
    if have("ovs"):
        ovs_vs_crc = one["ovs"][1]["cyclesPerPacket"] / one["crc32"][1]["cyclesPerPacket"]
        print(f"ovs against crc32 (one worker): {ovs_vs_crc:.2f}x the cycles per packet")
        targets.append(("ovs <= 1.3x the cycles per packet of crc32", ovs_vs_crc <= 1.3))
    if have("cheetah"):
        ck_vs_crc = one["cheetah"][1]["cyclesPerPacket"] / one["crc32"][1]["cyclesPerPacket"]
        print(f"cheetah cookie decode against crc32 (one worker): {ck_vs_crc:.2f}x the cycles "
              f"per packet")
        targets.append(("cheetah decode <= 1.15x the cycles per packet of crc32",
                        ck_vs_crc <= 1.15))
    if have("cheetah", "cheetahsf"):
        sf_vs_ck = one["cheetahsf"][1]["cyclesPerPacket"] / one["cheetah"][1]["cyclesPerPacket"]
        print(f"cheetah-stateful decode against stateless cookies (one worker): {sf_vs_ck:.2f}x "
              f"the cycles per packet")
        targets.append(("stateful decode <= 1.1x the cycles per packet of stateless cookies",
                        sf_vs_ck <= 1.1))
    if have("new"):
        targets.append(("new-connection inserts >= 5 M/s", summary["insertMpps"][1] >= 5.0))
    if len(configs) > 1:
        w = configs[1]
        print(f"\nscaling, {w} workers against 1 (wall packet rate; per-core rate kept):")
        scaling = {}
        for name, key in rows:
            if w not in one.get(key, {}):
                continue
            base = next((m.get("base", key) for m in modes if m["key"] == key), key)
            sw = one[key][w]["mppsWall"] / one[base][1]["mppsWall"]
            sc = one[key][w]["mppsPerCore"] / one[base][1]["mppsPerCore"]
            scaling[key] = round(sw, 3)
            print(f"  {name:34} {sw:5.2f}x wall, {sc:5.2f} per core")
        summary["scaling"] = scaling
        for key, label in (("crc32", "stateless crc32"), ("conn", "1M connections")):
            targets.append((f"{w} workers >= 1.8x the packet rate of 1, {label}",
                            scaling[key] >= 1.8))
    print(f"\nload average: {' -> '.join(loads)} (other processes on these cpus lower the wall "
          "rates and the scaling; the per-core rates much less)")
    print()
    for t, ok in targets:
        print(f"target {t}: {'MET' if ok else 'NOT MET'}")
    summary["targets"] = {t: ok for t, ok in targets}
    print("\nJSON " + json.dumps(summary))


if __name__ == "__main__":
    main()
