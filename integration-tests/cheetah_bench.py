#!/usr/bin/python3
"""The Cheetah benchmark: churn, balance, wraps and iperf3 on the emulation, one table each
(cheetah_exp.py and cheetah_perf.py say what each measures). Root needed; builds nothing
(integration-tests/build-missing.sh first).

    sudo integration-tests/cheetah_bench.py                  # everything, ~20 min
    sudo integration-tests/cheetah_bench.py --quick              # short phases and cells: ~8 min

Two emulations, one after the other (k=4 fat-tree, 16 DIP hosts, 8 clients, 2 SMuxes running
and a third on standby, which the churn adds after killing one): the SMuxes without connection
table (`hash`: stateless hashing everywhere), then with it (today's default), where the
`hash+table`, `cheetah` and `cheetah-stateful` VIPs go through the same churn at the same time
and balance, wraps and iperf3 run afterwards.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "topologies"))
sys.path.insert(0, HERE)
import hlbemu  # noqa: E402
import cheetah_exp as cx  # noqa: E402
import cheetah_perf as perf  # noqa: E402

CHURN_PORT, WORK_PORT, IPERF_PORT = 80, 8080, 5201
SMUX_TORS = "tor-0-0,tor-1-0,tor-2-0"    # the last SMux (smux-2, on tor-2-0) on standby
CHURN_VIPS = {"hash+table": "10.100.1.1", "cheetah": "10.100.1.2", "cheetah-stateful": "10.100.1.3"}
QUIC_VIPS = {"cheetah-quic": "10.100.1.4"}    # UDP QUIC_PORT, served by smux/agent/quic_server.py
BALANCE_VIPS = {"hash": "10.100.2.1", "rr": "10.100.2.2", "wrr": "10.100.2.3", "awrr": "10.100.2.4",
                "p2c": "10.100.2.5", "least-loaded": "10.100.2.6"}


def log(msg):
    print("[cheetah-bench %s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def start(tag, workdir, vips, conn_table):
    topo = os.path.join(workdir, "topology.json")
    subprocess.run(["java", "-jar", hlbemu.SOLVER_JAR, "topology", "fat-tree", "--k=4",
                    "--smux-tor=" + SMUX_TORS, "--out=" + topo], check=True, capture_output=True)
    with open(topo) as f:
        ips = [h["ip"] for h in json.load(f)["hosts"]]
    vfile = os.path.join(workdir, "vips-%s.json" % tag)
    with open(vfile, "w") as f:
        json.dump({"vips": vips(ips)}, f)
    subprocess.run([hlbemu.PY, os.path.join(hlbemu.HERE, "hlbemu.py"), "start", "--tag", tag, "--topology", topo,
                    "--vips", vfile, "--smux-conn-table", conn_table, "--no-prometheus", "--standby-smuxes", "1"], check=True, timeout=300)
    e = hlbemu.Emu(tag)
    e.set_daemon_intervals(2000, 1000)
    e.daemon_start()
    cx.require_cookie_agents(e)
    return e


def keep_logs(tag, workdir):
    """The emulation's logs (hybridlbd, SMuxes, FRR, agents) into the workdir before it stops:
    hlbemu stop removes its run directory, and a broken connection is read in them."""
    src = os.path.join(hlbemu.rundir(tag), "logs")
    if os.path.isdir(src):
        dst = os.path.join(workdir, "logs-" + tag)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst)
        log("logs of %s kept in %s" % (tag, dst))


def show(table):
    """A table as soon as it is measured (all of them are printed again at the end)."""
    print("\n" + table + "\n", flush=True)
    return table


def warm_up(e, vips, seconds):
    """Traffic on the VIPs so the controller measures them and places the hash ones on HMuxes."""
    cl = cx.clients(e)
    ps = [e.probe(cl[i % len(cl)], "http", "--vip", v, "--rate", 10, "--duration", seconds)
          for i, v in enumerate(vips)]
    for p in ps:
        p.communicate(timeout=seconds + 60)   # to its end: a SIGTERM before it is up would kill it silently


def churn_vips(ips):
    return [cx.vip_doc(CHURN_VIPS["hash+table"], CHURN_PORT, ips[:8]),
            cx.vip_doc(CHURN_VIPS["cheetah"], CHURN_PORT, ips[:8], "cheetah", "rr"),
            cx.vip_doc(CHURN_VIPS["cheetah-stateful"], CHURN_PORT, ips[:8], "cheetah-stateful", "rr"),
            cx.vip_doc(QUIC_VIPS["cheetah-quic"], cx.QUIC_PORT, ips[:8], "cheetah", "rr", proto="udp")]


def other_vips(ips):
    dips = ips[:12]
    return churn_vips(ips) + [
        cx.vip_doc(vip, WORK_PORT, dips, *(() if label == "hash" else ("cheetah", label)))
        for label, vip in BALANCE_VIPS.items()] + [
        cx.vip_doc("10.100.3.1", IPERF_PORT, ips[15:16]), cx.vip_doc("10.100.3.2", IPERF_PORT, ips[15:16], "cheetah")]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="churn,balance,wraps,iperf")
    p.add_argument("--quick", action="store_true", help="short phases and runs (a smoke test, not figures)")
    p.add_argument("--workdir", default="/tmp/hlb-cheetah-bench")
    a = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("cheetah_bench: needs root (namespaces, OVS, DPDK)")
    only = set(a.only.split(","))
    os.makedirs(a.workdir, exist_ok=True)
    phase = 8.0 if a.quick else 20.0
    tables = []
    churn, churn_notes = {}, []
    tag_prefix = "cb%d" % (os.getpid() % 10000)
    if "churn" in only:
        tag = tag_prefix + "s"
        log("emulation %s: SMuxes without connection table" % tag)
        e = start(tag, a.workdir, lambda ips: churn_vips(ips)[:1], "off")
        try:
            warm_up(e, ["10.100.1.1"], 10)
            r, events, ck = cx.churn(e, {"hash": "10.100.1.1"}, phase_s=phase, log=log)
            churn.update(r)
            churn_notes.append(show("hash emulation " + cx.churn_details(r, events)))
        finally:
            keep_logs(tag, a.workdir)
            hlbemu.stop(tag, quiet=True)
    if only - {"churn"} or "churn" in only:
        tag = tag_prefix + "t"
        log("emulation %s: SMuxes with connection table" % tag)
        e = start(tag, a.workdir, other_vips if only - {"churn"} else churn_vips, "on")
        try:
            wraps = None
            if "wraps" in only:
                wraps = perf.wraps_start(e, "10.100.1.2", seconds=40 if a.quick else 140)
                log("wraps: a connection held on the cookie VIP from client port %d" % wraps["port"])
            if "churn" in only:
                warm_up(e, list(CHURN_VIPS.values()), 10)
                r, events, ck = cx.churn(e, CHURN_VIPS, phase_s=phase, log=log, quic=QUIC_VIPS)
                churn.update(r)
                churn_notes.append(show("hash+table/cheetah emulation " + cx.churn_details(r, events)))
                show(cx.churn_table(churn))
                tables.append("cookie counters during the churn (hash+table/cheetah emulation): %s" % ck)
            if "balance" in only:
                servers = [h for h in sorted(e.fab["hosts"]) if e.fab["hosts"][h]["role"] == "dip"][:12]
                procs = perf.start_work_servers(e, servers, WORK_PORT)
                try:
                    time.sleep(2)
                    mean_ms, load = 100.0, 0.7
                    rate = load * len(servers) * 1000.0 / mean_ms
                    dur = 15 if a.quick else 40
                    bal = {}
                    for work in ("constant", "bimodal"):
                        for label, vip in BALANCE_VIPS.items():
                            bal[(work, label)] = perf.balance_run(e, vip, servers, rate, dur, work, mean_ms, WORK_PORT)
                            log("balance %s %s (%s): %s" % (work, label, cx.placement(e).get(vip), bal[(work, label)]))
                    tables.append(show("BALANCE: %d servers, one request at a time each, mean work %.0f ms, offered load "
                                  "%.0f%% (%.0f req/s, Poisson, new connection each), %d s per cell\n%s"
                                  % (len(servers), mean_ms, 100 * load, rate, dur, perf.balance_table(bal))))
                finally:
                    perf.stop_procs(procs)
            if "iperf" in only:
                # both VIPs on the SMuxes (an HMux would be another path): every switch drained
                sw = [s["id"] for s in e.api("GET", "/switches")[1]["switches"]]
                for s in sw:
                    cx.api_ok(e, "POST", "/switches/%s/drain" % s)
                cx.wait_for(lambda: cx.placement(e).get("10.100.3.1") == "smux", 60, 1)
                res = perf.iperf_compare(e, {"cheetah": "10.100.3.2", "hash": "10.100.3.1"},
                                       runs=3 if a.quick else 7, seconds=3 if a.quick else 5)
                tables.append("IPERF3 through the SMuxes to one DIP (placement %s):\n%s" % (
                    {v: cx.placement(e).get(v) for v in ("10.100.3.1", "10.100.3.2")},
                    perf.iperf_table(res, ["cheetah", "hash"])))
                for s in sw:
                    e.api("DELETE", "/switches/%s/drain" % s)
            if wraps:
                tables.append("WRAPS (cookie VIP 10.100.1.2):\n" + perf.wraps_table(perf.wraps_finish(e, wraps)))
        finally:
            keep_logs(tag, a.workdir)
            hlbemu.stop(tag, quiet=True)
    if churn:
        tables.insert(0, "CHURN (phases of %.0f s; long-lived connections: a GET every 200 ms; short: one GET each, "
                         "4/s per VIP on average, sinusoidal +-75%% over two phases)\n%s\n%s"
                      % (phase, cx.churn_table(churn), "\n".join(churn_notes)))
    print()
    print("\n\n".join(tables))


if __name__ == "__main__":
    main()
