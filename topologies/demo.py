#!/usr/bin/python3
"""The hybridlb main job on a k=4 fat-tree (run by topologies/run-demo.sh).

1. starts the emulation (private OVS fabric, DIP hosts with host agents, 2 DPDK SMuxes with
   FRR, a route server) and hybridlbd with a set of VIPs;
2. drives skewed traffic from real clients (Zipf-like HTTP load over several VIPs, a paced UDP
   stream and long-lived TCP connections on the busiest VIP);
3. shows where each VIP lives and the HMux/SMux split (the `hybridlb` CLI);
4. fails the busiest VIP's HMux switch and shows it failing over to the SMuxes;
5. drains the HMux of another VIP (maintenance): a sticky migration HMux -> SMux -> another
   HMux with a paced UDP stream running (Duet §3.7.3);
6. adds a DIP to an HMux VIP with long-lived TCP connections open: the VIP moves to the SMuxes,
   which pin those connections, and returns to an HMux only once none of them would change DIP
   there (Duet §3.5.2);
7. prints the measured figures, a few PromQL queries with the answers of the emulation's
   Prometheus (it scrapes hybridlbd, the SMuxes and the host agents), and cleans everything up
   (also on Ctrl-C). The daemon's live web view is at /ui/; a screenshot of it taken by headless
   chromium while the HMux switch is down is kept (WEBVIEW_SHOT).
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hlbemu  # noqa: E402
import hlb_browser  # noqa: E402
import hlb_prometheus  # noqa: E402

AGG = "10.100.0.0/16"
WEBVIEW_URL = hlbemu.DAEMON_URL + "/ui/"   # opened with a viewer token: Emu.webview_url()
WEBVIEW_SHOT = "/tmp/hlb-demo-webview.png"


def say(msg):
    print("\n=== %s %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def make_vips(fab, n):
    dips = sorted((h["ip"], hid) for hid, h in fab_hosts(fab).items())
    vips = []
    for i in range(n):
        # Two DIPs per VIP from different pods, rotating over the hosts.
        a = dips[(2 * i) % len(dips)][0]
        b = dips[(2 * i + len(dips) // 2 + 1) % len(dips)][0]
        vips.append({"vip": "10.100.0.%d" % (i + 1), "aggregate": AGG,
                     "ports": [{"proto": "any", "port": 0, "dips": [{"ip": a}, {"ip": b}]}]})
    return {"vips": vips}


def fab_hosts(topo):
    return {h["id"]: h for h in topo["hosts"]}


def wait(cond, timeout, step=0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return None


def placement(emu):
    code, a = emu.api("GET", "/assignment")
    return a.get("installed", {}) if code == 200 and isinstance(a, dict) else {}


def webview_shot(emu, failed):
    """The web view in headless chromium while `failed` is down: a screenshot, and what it drew."""
    if not hlb_browser.available():
        print("web view: no screenshot (chromium, chromium-driver or certutil missing: topologies/install-deps.sh)")
        return None
    r = emu.ns_run([hlbemu.PY, hlb_browser.__file__, "shot", emu.webview_url(), WEBVIEW_SHOT, emu.ca],
                   timeout=120)
    if r.returncode != 0:
        print("web view: screenshot failed: %s" % r.stderr[-800:])
        return None
    drawn = json.loads(r.stdout)
    print("web view (%s): %d switches drawn, %s shown %s, %d VIPs placed; console errors: %d; screenshot %s" % (
        WEBVIEW_URL, len(drawn["switches"]), failed, drawn["switches"].get(failed), len(drawn["vips"]),
        len(drawn["consoleErrors"]), WEBVIEW_SHOT))
    return WEBVIEW_SHOT


def promql_tour(emu):
    """Each query of hlb_prometheus.QUERIES with its answer now; {title: [(labels, value)]}."""
    answers = {}
    for title, q in hlb_prometheus.QUERIES:
        try:
            result = emu.promql(q)
        except RuntimeError as e:
            print("\n%s\n  %s\n  error: %s" % (title, q, e))
            continue
        answers[title] = result
        print("\n%s\n  %s\n%s" % (title, q, hlb_prometheus.format_answer(result)))
    return answers


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tag", default="demo")
    p.add_argument("--vips", type=int, default=6)
    p.add_argument("--keep", action="store_true", help="leave the emulation running at the end")
    a = p.parse_args()
    tag = a.tag
    results = {}
    procs = []

    def cleanup(*_):
        for pr in procs:
            if pr.poll() is None:
                pr.terminate()
        if not a.keep:
            say("cleaning up")
            hlbemu.stop(tag)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        topo_file = "/tmp/hlb-demo-topology-%d.json" % os.getpid()
        subprocess.run(["java", "-jar", hlbemu.SOLVER_JAR, "topology", "fat-tree", "--k=4",
                        "--smux-tor=tor-0-0,tor-2-0", "--out=" + topo_file], check=True, capture_output=True)
        with open(topo_file) as f:
            topo = json.load(f)
        vips = make_vips(topo, a.vips)
        vip_file = "/tmp/hlb-demo-vips-%d.json" % os.getpid()
        with open(vip_file, "w") as f:
            json.dump(vips, f, indent=1)
        say("starting the emulated k=4 fat-tree (20 OVS switches + border, 16 DIP hosts, 2 DPDK SMuxes, FRR)")
        t0 = time.monotonic()
        subprocess.run([hlbemu.PY, os.path.join(HERE, "hlbemu.py"), "start", "--tag", tag,
                        "--topology", topo_file, "--vips", vip_file, "--smux-udp-timeout", "10"], check=True)
        os.unlink(topo_file)
        os.unlink(vip_file)
        emu = hlbemu.Emu(tag)
        with open(os.path.join(emu.dir, "hybridlbd.json")) as f:
            conf = json.load(f)
        conf["intervals"] = {"reconcileMs": 3000, "statsMs": 1000}
        with open(os.path.join(emu.dir, "hybridlbd.json"), "w") as f:
            json.dump(conf, f, indent=2)
        say("starting hybridlbd (%d VIPs, aggregate %s)" % (a.vips, AGG))
        emu.daemon_start()
        results["startupS"] = round(time.monotonic() - t0, 1)
        print(emu.cli("vips"))
        print("live web view: %s#token=<a viewer token: %s/tls/viewer.token> (inside network namespace %s; "
              "the emulation's CA: %s)" % (WEBVIEW_URL, emu.dir, emu.ns, emu.ca))

        # Skewed load: VIP i gets ~ 40/(i+1) requests/s from a client of its own.
        clients = sorted(h for h, v in emu.fab["hosts"].items() if v["role"] == "client")
        duration = 500        # stopped at the end; bounded anyway
        say("traffic: Zipf-like HTTP load on %d VIPs from %d clients" % (a.vips, min(a.vips, len(clients))))
        for i, v in enumerate(vips["vips"]):
            rate = max(2, int(40 / (i + 1)))
            procs.append(emu.probe(clients[i % len(clients)], "http", "--vip", v["vip"], "--rate", rate,
                                   "--duration", duration, "--timeout", 1))
        dip_tors = {v["vip"]: {emu.fab["hosts"][h]["tor"] for h, hv in emu.fab["hosts"].items()
                               for d in v["ports"][0]["dips"] if hv["ip"] == d["ip"]} for v in vips["vips"]}

        def failable():
            # The busiest VIP on an HMux whose failure does not also cut its own DIPs off
            # (a failed ToR takes its hosts with it).
            p = placement(emu)
            for v in vips["vips"]:
                sw = p.get(v["vip"], "smux")
                if sw != "smux" and sw not in dip_tors[v["vip"]]:
                    return v["vip"], sw
            return None

        found = wait(failable, 90, 1)
        if not found:
            print("no VIP placed on an HMux within 90 s; assignment:\n%s" % emu.cli("assignment"))
            results["placedOnHmux"] = False
            return 1
        busy, switch = found
        clients = [c for c in clients if emu.fab["hosts"][c]["tor"] != switch]
        results["placedOnHmux"] = True
        say("where each VIP lives (hybridlb assignment) — %s is on HMux %s" % (busy, switch))
        print(emu.cli("assignment"))
        time.sleep(3)
        say("traffic split (hybridlb stats)")
        print(emu.cli("stats"))

        # Failover: paced UDP stream + long-lived TCP connections through the HMux, then fail it.
        udp = emu.probe(clients[0], "udp", "--vip", busy, "--rate", 500, "--flows", 8, "--duration", 180)
        tcp = emu.probe(clients[-1], "tcp", "--vip", busy, "--conns", 4, "--interval", 0.02, "--duration", 180,
                        "--timeout", 60)
        time.sleep(4)
        say("failing HMux switch %s (all its ports down)" % switch)
        t_fail = time.monotonic()
        emu.fail_switch(switch)
        moved = wait(lambda: placement(emu).get(busy) not in (switch, None), 90, 0.2)
        results["replacedS"] = round(time.monotonic() - t_fail, 2) if moved else None
        time.sleep(3)
        udp_r = emu.finish(udp)
        tcp_r = emu.finish(tcp)
        results["failoverOutageMs"] = udp_r["maxOutageMs"] if udp_r["maxOutageMs"] is not None else "not recovered"
        results["failoverLost"] = udp_r["lost"]
        results["failoverSent"] = udp_r["sent"]
        results["tcpConnsSurvived"] = "%d/%d" % (len(tcp_r["conns"]) - tcp_r["broken"], len(tcp_r["conns"]))
        results["tcpMaxWaitMs"] = tcp_r["maxWaitMs"]
        say("after the failure (VIP %s now on %s)" % (busy, placement(emu).get(busy)))
        print(emu.cli("assignment"))
        print(emu.cli("stats"))
        results["webview"] = webview_shot(emu, switch)
        emu.recover_switch(switch)

        # Sticky migration (Duet §3.7.3): drain the switch of an HMux VIP; it moves to another HMux
        # through the SMuxes while a paced UDP stream runs.
        def hmux_vip(avoid):
            p = placement(emu)
            return next(((v["vip"], p[v["vip"]]) for v in vips["vips"]
                         if p.get(v["vip"], "smux") not in ("smux", avoid)), None)

        found = wait(lambda: hmux_vip(switch), 60, 1) or (busy, placement(emu).get(busy))
        target, drained = found
        seen = {r["id"] for r in emu.api("GET", "/migrations")[1].get("recent", [])}
        udp = emu.probe(clients[1], "udp", "--vip", target, "--rate", 500, "--flows", 8, "--duration", 180)
        time.sleep(3)
        say("draining switch %s (hybridlb drain): VIP %s moves HMux -> SMux -> HMux" % (drained, target))
        print(emu.cli("drain", drained))
        t_mig = time.monotonic()

        def migrated():
            c, m = emu.api("GET", "/migrations")
            done = [r for r in m.get("recent", []) if r["id"] not in seen and r.get("state") != "running"
                    and target in json.dumps(r["plan"])] if c == 200 else []
            return done[0] if done and placement(emu).get(target) != drained else None

        mig = wait(migrated, 120, 0.3)
        results["migrationS"] = round(time.monotonic() - t_mig, 2) if mig else None
        results["migrationState"] = mig.get("state") if mig else "not finished in 120 s"
        results["migrationTo"] = "%s -> %s" % (drained, placement(emu).get(target))
        time.sleep(2)
        udp_r = emu.finish(udp)
        results["migrationLost"] = udp_r["lost"]
        results["migrationSent"] = udp_r["sent"]
        say("migrations and switches (hybridlb migrations; hybridlb switches)")
        print(emu.cli("migrations"))
        print(emu.cli("switches"))
        print(emu.cli("undrain", drained))

        # DIP add (Duet §3.5.2) on an HMux VIP with long-lived TCP connections open.
        found = wait(lambda: hmux_vip(switch), 60, 1)
        if found:
            grown, at = found
            used = {d["ip"] for v in vips["vips"] if v["vip"] == grown for d in v["ports"][0]["dips"]}
            new_dip = next(h["ip"] for h in topo["hosts"] if h["ip"] not in used)
            tcp = emu.probe(clients[-1], "tcp", "--vip", grown, "--conns", 8, "--interval", 0.05, "--duration", 180,
                            "--timeout", 60)
            time.sleep(3)
            say("adding DIP %s to %s (on HMux %s) with 8 TCP connections open" % (new_dip, grown, at))
            code, body = emu.api("POST", "/vips/%s/dips" % grown, {"ip": new_dip, "proto": "any", "port": 0})
            print("POST /vips/%s/dips -> %s" % (grown, code))
            wait(lambda: placement(emu).get(grown) == "smux", 60, 0.5)
            time.sleep(4)
            held = emu.api("GET", "/assignment")[1].get("heldOnSmuxes", {}).get(grown)
            results["dipAddHeld"] = ("%s connections would have changed DIP" % held.get("divergingConnections")
                                     if held else "not held")
            say("VIP %s is on the SMuxes: %s pinned connections would change DIP on an HMux" % (
                grown, held.get("divergingConnections") if held else "no"))
            print(emu.cli("assignment"))
            tcp_r = emu.finish(tcp)
            results["dipAddTcp"] = "%d/%d kept their DIP" % (
                sum(1 for c in tcp_r["conns"] if not c["errors"] and len(c["dips"]) == 1), len(tcp_r["conns"]))
            t_end = time.monotonic()
            back = wait(lambda: placement(emu).get(grown) not in ("smux", None), 90, 1)
            results["dipAddReturnS"] = round(time.monotonic() - t_end, 1) if back else None
            say("connections closed: VIP %s back on an HMux %s s later (%s)" % (
                grown, results["dipAddReturnS"], placement(emu).get(grown)))

        http = [emu.finish(pr) for pr in procs]
        results["httpAnswered"] = sum(h["answered"] for h in http)
        results["httpFailed"] = sum(h["failed"] for h in http)
        code, stats = emu.api("GET", "/stats")
        results["hmuxShare"] = stats.get("hmuxShare", stats.get("hmuxTrafficShare")) if isinstance(stats, dict) else None
        say("PromQL on the emulation's Prometheus (%s:%d, scraping hybridlbd, %d SMuxes, %d host agents)" % (
            hlbemu.DAEMON_HOST, hlb_prometheus.PORT, len(emu.fab["smuxes"]),
            sum(1 for h in emu.fab["hosts"].values() if h.get("agentUrl"))))
        results["promql"] = promql_tour(emu)
        say("summary (measured in this run)")
        print("  emulation + daemon start:           %s s" % results["startupS"])
        print("  VIP %s on HMux %s; failed it:" % (busy, switch))
        print("    outage at the client (paced UDP): %s ms (%s of %s datagrams lost)" % (
            results["failoverOutageMs"], results["failoverLost"], results["failoverSent"]))
        print("    long-lived TCP connections kept:  %s (longest wait %s ms)" % (
            results["tcpConnsSurvived"], results["tcpMaxWaitMs"]))
        print("    VIP re-placed by the controller:  %s s after the failure" % results["replacedS"])
        print("  sticky migration (switch drained):  %s %s in %s s, %s of %s datagrams lost" % (
            results["migrationTo"], results["migrationState"], results["migrationS"], results["migrationLost"],
            results["migrationSent"]))
        if "dipAddTcp" in results:
            print("  DIP add with TCP connections open:  %s; held on the SMuxes (%s), back on an HMux %s s "
                  "after they closed" % (results["dipAddTcp"], results["dipAddHeld"], results["dipAddReturnS"]))
        print("  HTTP load over the whole run:       %s answered, %s failed" % (
            results["httpAnswered"], results["httpFailed"]))
        print("  HMux share of traffic (daemon):     %s" % results["hmuxShare"])
        print("  web view:                           %s in namespace %s; screenshot %s" % (
            WEBVIEW_URL, emu.ns, results["webview"]))
        with open("/tmp/hlb-demo-results.json", "w") as f:
            json.dump(results, f, indent=1)
        return 0
    finally:
        cleanup()


if __name__ == "__main__":
    sys.exit(main())
