#!/usr/bin/python3
"""End-to-end benchmark on the emulated k=4 fat-tree with the real hybridlbd; prints medians.

  failover   HMux -> SMux failover time at the client (paced UDP outage), with the daemon's
             breakdown from its log: detection (fail -> "switch X is down"), compute (-> the
             withdrawal starts), program (the withdrawal's own duration)
  migration  datagrams lost per migrated VIP (its switch drained: HMux -> SMux -> another HMux)
  loop       1,000 VIPs on k=4: PUT /vips until every VIP is installed (SMux tables + aggregate
             + verify), then one POST /reassign (assign + plan + program + verify)
  latency    HTTP request latency (new connection each) through an HMux VIP vs an SMux VIP,
             same client, same rate

    integration-tests/bench.sh [--runs 3]
"""
import argparse
import calendar
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "topologies"))
import hlbemu  # noqa: E402

AGG = "10.100.0.0/16"


def wait_for(cond, timeout, step=0.25):
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() > deadline:
            return v
        time.sleep(step)


def placement(emu):
    code, a = emu.api("GET", "/assignment")
    return a.get("installed", {}) if code == 200 else {}


def log_time(emu, pattern, after):
    """Wall-clock time of the first daemon log line matching pattern after `after` (epoch s)."""
    with open(os.path.join(emu.dir, "logs", "hybridlbd.log")) as f:
        for line in f:
            m = re.match(r"(\d{4}-\d\d-\d\dT[\d:.]+)Z (.*)", line)
            if not m or not re.search(pattern, m.group(2)):
                continue
            dt = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f")
            t = calendar.timegm(dt.timetuple()) + dt.microsecond / 1e6
            if t >= after:
                return t, m.group(2)
    return None, None


def med(xs):
    xs = [x for x in xs if x is not None]
    return round(statistics.median(xs), 1) if xs else None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--tag", default="bench")
    p.add_argument("--logs", default="/tmp/hlb-bench-logs", help="where the emulation's logs are copied")
    p.add_argument("--details", help="write every run's failed/drained switch and outages (JSON) here")
    p.add_argument("--failover-only", action="store_true",
                   help="only the failovers (per-switch outages with --details), no drain, latency or 1,000-VIP loop")
    a = p.parse_args()
    tag = a.tag
    topo_file = "/tmp/hlb-bench-topo-%d.json" % os.getpid()
    subprocess.run(["java", "-jar", hlbemu.SOLVER_JAR, "topology", "fat-tree", "--k=4", "--smux-tor=tor-0-0,tor-2-0",
                    "--host-table=3", "--out=" + topo_file], check=True, capture_output=True)
    topo = json.load(open(topo_file))
    hosts = [h["ip"] for h in topo["hosts"]]
    vips = [{"vip": "10.100.2.%d" % (i + 1), "aggregate": AGG,
             "ports": [{"proto": "any", "port": 0, "dips": [{"ip": hosts[(2 * i) % 16]}, {"ip": hosts[(2 * i + 9) % 16]}]}]}
            for i in range(5)]
    vip_file = "/tmp/hlb-bench-vips-%d.json" % os.getpid()
    json.dump({"vips": vips}, open(vip_file, "w"))
    res = {"failoverMs": [], "detectMs": [], "computeMs": [], "programMs": [], "migrationLost": [], "details": []}
    try:
        subprocess.run([hlbemu.PY, os.path.join(REPO, "topologies", "hlbemu.py"), "start", "--tag", tag,
                        "--topology", topo_file, "--vips", vip_file], check=True)
        emu = hlbemu.Emu(tag)
        conf = json.load(open(os.path.join(emu.dir, "hybridlbd.json")))
        conf["intervals"] = {"reconcileMs": 2000, "statsMs": 1000}
        json.dump(conf, open(os.path.join(emu.dir, "hybridlbd.json"), "w"))
        emu.daemon_start()
        clients = sorted(h for h, v in emu.fab["hosts"].items() if v["role"] == "client")
        load = [emu.probe(clients[i], "http", "--vip", v["vip"], "--rate", 6, "--duration", 600, "--timeout", 1)
                for i, v in enumerate(vips)]
        tors = {h["ip"]: h["tor"] for h in emu.fab["hosts"].values()}

        def failable():
            pl = placement(emu)
            for v in vips:
                sw = pl.get(v["vip"], "smux")
                cur = emu.api("GET", "/vips/%s" % v["vip"])[1]
                if sw != "smux" and sw not in {tors.get(d["ip"]) for pt in cur["ports"] for d in pt["dips"]}:
                    return v["vip"], sw
            return None

        # Latency: an HMux VIP vs an SMux VIP (host table 3: two VIPs stay on the SMuxes).
        wait_for(failable, 120, 1)
        pl = placement(emu)
        on_h = [v["vip"] for v in vips if pl.get(v["vip"], "smux") != "smux"]
        on_s = [v["vip"] for v in vips if pl.get(v["vip"]) == "smux"]
        if on_h and on_s and not a.failover_only:
            lat = {}
            for kind, vip in (("hmux", on_h[0]), ("smux", on_s[0])):
                r = json.loads(emu.probe(clients[5], "http", "--vip", vip, "--rate", 20,
                                         "--duration", 5).communicate(timeout=120)[0])
                lat[kind] = r["medianMs"]
            res["latency"] = lat

        for run in range(a.runs):
            found = wait_for(failable, 120, 1)
            if not found:
                break
            vip, sw = found
            probe_client = [c for c in clients if emu.fab["hosts"][c]["tor"] != sw][0]
            udp = emu.probe(probe_client, "udp", "--vip", vip, "--rate", 1000, "--flows", 8, "--duration", 300)
            time.sleep(2)
            t_fail = time.time()
            emu.fail_switch(sw)
            wait_for(lambda: placement(emu).get(vip) != sw, 90, 0.2)
            time.sleep(2)
            u = emu.finish(udp)
            emu.recover_switch(sw)
            res["failoverMs"].append(u["maxOutageMs"])
            res["details"].append({"failed": sw, "vip": vip, "client": probe_client, "lost": u["lost"],
                                   "outages": u["outages"][:12]})
            t_det, _ = log_time(emu, r"switch %s .* is down" % re.escape(sw), t_fail - 1)
            t_wd, line = log_time(emu, r"withdrew .* failed switch %s" % re.escape(sw), t_fail - 1)
            if t_det:
                res["detectMs"].append((t_det - t_fail) * 1000)
            if t_wd and line:
                prog = float(re.search(r"in ([\d.]+) ms", line).group(1))
                res["programMs"].append(prog)
                if t_det:
                    res["computeMs"].append((t_wd - t_det) * 1000 - prog)
            # Sticky migration HMux -> SMux -> another HMux (Duet §3.7.3): drain the VIP's switch.
            found = None if a.failover_only else wait_for(failable, 120, 1)
            if not found:
                continue
            vip, sw = found
            seen = {r["id"] for r in emu.api("GET", "/migrations")[1].get("recent", [])}
            udp = emu.probe(clients[1], "udp", "--vip", vip, "--rate", 1000, "--flows", 16, "--duration", 300)
            time.sleep(2)
            emu.api("POST", "/switches/%s/drain" % sw)
            wait_for(lambda: placement(emu).get(vip) != sw and [
                r for r in emu.api("GET", "/migrations")[1].get("recent", [])
                if r["id"] not in seen and r.get("state") != "running"], 120, 0.5)
            time.sleep(2)
            u = emu.finish(udp)
            res["migrationLost"].append(u["lost"])
            res["details"].append({"drained": sw, "vip": vip, "lost": u["lost"], "outages": u["outages"][:12]})
            emu.api("DELETE", "/switches/%s/drain" % sw)

        for pr in load:
            emu.finish(pr)
        if not a.failover_only:
            # Control loop for 1,000 VIPs (3 DIPs each).
            big = [{"vip": "10.100.%d.%d" % (10 + i // 250, 1 + i % 250), "aggregate": AGG,
                    "ports": [{"proto": "tcp", "port": 80, "dips": [{"ip": hosts[(i + j * 5) % 16]} for j in range(3)]}]}
                   for i in range(1000)]
            t0 = time.monotonic()
            code, body = emu.api("PUT", "/vips", {"vips": big}, timeout=300)
            t_put = time.monotonic() - t0
            ok = wait_for(lambda: len(placement(emu)) >= 1000, 300, 0.5)
            t_installed = time.monotonic() - t0
            t1 = time.monotonic()
            code2, _ = emu.api("POST", "/reassign", timeout=300)
            t_reassign = time.monotonic() - t1
            res["loop"] = {"put": (code, round(t_put, 2)), "installed": round(t_installed, 2) if ok else None,
                           "reassign": (code2, round(t_reassign, 2))}
    finally:
        logs = os.path.join(hlbemu.rundir(tag), "logs")
        if os.path.isdir(logs):  # the daemon's, SMuxes', FRR's logs, to explain a figure
            shutil.rmtree(a.logs, ignore_errors=True)
            shutil.copytree(logs, a.logs)
        hlbemu.stop(tag, quiet=True)
        for f in (topo_file, vip_file):
            if os.path.exists(f):
                os.unlink(f)
    if a.details:
        with open(a.details, "w") as f:
            json.dump(res["details"], f, indent=1)
    n = len(res["failoverMs"])
    print("hybridlb end-to-end bench: k=4 fat-tree emulation, real hybridlbd, %d runs (medians)" % n)
    print("  HMux->SMux failover at the client (paced UDP 1000/s, longest outage of any flow): %s ms   runs %s" % (
        med(res["failoverMs"]), res["failoverMs"]))
    print("    failed switches: %s" % [d["failed"] for d in res["details"] if "failed" in d])
    print("    the data path fails over by itself (fast-failover groups); the controller's withdrawal follows:")
    print("    breakdown (daemon log): detection %s ms, compute/queue %s ms, program %s ms" % (
        med(res["detectMs"]), med(res["computeMs"]), med(res["programMs"])))
    if res["migrationLost"]:
        print("  datagrams lost per migrated VIP (switch drained, HMux->SMux->HMux): %s   runs %s" % (
            med(res["migrationLost"]), res["migrationLost"]))
    if "loop" in res:
        l = res["loop"]
        print("  1,000 VIPs: PUT /vips %s in %s s; all installed (SMuxes + aggregate, verified) after %s s; "
              "POST /reassign %s in %s s" % (l["put"][0], l["put"][1], l["installed"], l["reassign"][0], l["reassign"][1]))
    if "latency" in res:
        print("  HTTP latency (new connection, 20 req/s): via HMux %s ms, via SMux %s ms" % (
            res["latency"]["hmux"], res["latency"]["smux"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
