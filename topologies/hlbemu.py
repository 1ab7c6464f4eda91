#!/usr/bin/python3
"""hlbemu: start and stop one hybridlb emulation (fabric + hosts + SMuxes + route server).

Everything of one emulation lives in ONE network namespace `hlbemu-<tag>` and under
/run/hlb/<tag>: a private ovs-vswitchd (userspace datapath), Mininet (its hosts are
child namespaces), a management Linux bridge, the route-server FRR, and whatever the
caller starts there (the daemon). `stop` kills exactly the PIDs recorded there,
deletes the namespace and the run directory.

It runs as a deployment should (docs/operating.md): /run/hlb/<tag>/tls holds a CA and the
certificates of every SMux and host agent (mutual TLS on their management APIs) and of
hybridlbd (HTTPS, and the client the SMuxes and agents accept writes from); hybridlbd takes
tokens (tls/admin.token, tls/viewer.token). Emu.api and Emu.cli use them.

    hlbemu.py start --tag demo [--kind fat-tree --k 4 | --kind testbed | --topology FILE]
    hlbemu.py exec  --tag demo host-0-0-0 -- curl -s http://10.100.0.1/
    hlbemu.py fail-switch --tag demo tor-0-1      (and recover-switch)
    hlbemu.py stop  --tag demo

A Prometheus server (hlb_prometheus.py) runs in the namespace too, on 127.0.0.1:9090, scraping
hybridlbd, the SMuxes and the host agents (--no-prometheus: none).
"""
import argparse
import atexit
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from emu_base import (PY, PidLog, REPO, RUN_ROOT, SMUX_BIN, SOLVER_JAR, log, netns, rundir, sh)
from emu_control import (daemon_start, daemon_stop, load_fabric, set_switch, stop)
from emu_fabric import (Emulation, route_server)
# The integration tests and experiments reach a running emulation through this module.
from emu_base import (DAEMON_BIN, DAEMON_HOST, DAEMON_URL, HERE, proc_start_time, tlsdir)  # noqa: F401
from emu_control import Emu, api_curl, mgmt_curl  # noqa: F401


def cmd_route_server(args):
    """Inside the namespace: a restarted route server, kept until SIGTERM (its daemons die with it)."""
    from hlb_topo import FabricPlan
    rs = route_server(args.tag, FabricPlan.load(os.path.join(rundir(args.tag), "topology.json")),
                      PidLog(os.path.join(rundir(args.tag), "pids.jsonl")))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while True:
            signal.pause()
    finally:
        rs.stop(remove_dir=False)


def cmd_run(args):
    """Inside the namespace: build everything, then wait for SIGTERM."""
    emu = Emulation(args)
    stopping = {"flag": False}

    def on_signal(signum, frame):
        stopping["flag"] = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    atexit.register(emu.stop)
    try:
        emu.run()
        reported = set()
        while True:
            time.sleep(1)
            # After startup a dead child is reported, not fatal: tests kill SMuxes on purpose.
            for what, p in emu.procs:
                if p.poll() is not None and what not in reported:
                    reported.add(what)
                    log("%s exited with %s" % (what, p.returncode))
    except KeyboardInterrupt:
        log("stopping")
    except Exception as e:
        log("FAILED: %s" % e)
        emu.stop()
        sys.exit(1)
    emu.stop()


# --------------------------------------------------------------------------------------
# Outside: start / stop / exec / fail-switch
# --------------------------------------------------------------------------------------

def generate_topology(args, path):
    if args.topology:
        shutil.copyfile(args.topology, path)
        return
    if args.kind == "fat-tree":
        tors = ",".join("tor-%d-0" % p for p in range(0, args.k, max(1, args.k // args.smuxes)))[:]
        tors = ",".join(tors.split(",")[:args.smuxes])
        extra = ["--k=%d" % args.k, "--smux-tor=" + tors]
        if args.hosts_per_tor:
            extra.append("--hosts-per-tor=%d" % args.hosts_per_tor)
        for t in ("host", "ecmp", "tunnel"):
            v = getattr(args, t + "_table")
            if v is not None:
                extra.append("--%s-table=%d" % (t, v))
    else:
        extra = []
    sh(["java", "-jar", SOLVER_JAR, "topology", args.kind, "--out=" + path] + extra)


def cmd_start(args):
    tag = args.tag
    d = rundir(tag)
    if os.path.exists(d) or os.path.exists("/run/netns/" + netns(tag)):
        sys.exit("hlbemu: emulation %r exists (%s); run: hlbemu.py stop --tag %s" % (tag, d, tag))
    if not os.path.exists(SMUX_BIN) and not args.no_services:
        sys.exit("hlbemu: %s missing: build smux first (meson setup smux/build smux && ninja -C smux/build)"
                 % SMUX_BIN)
    os.makedirs(os.path.join(d, "logs"), exist_ok=True)
    os.chmod(RUN_ROOT, 0o755)
    generate_topology(args, os.path.join(d, "topology.json"))
    if args.vips:
        shutil.copyfile(args.vips, os.path.join(d, "vips.json"))
    if args.p4_switches:
        import hlb_p4
        with open(os.path.join(d, "topology.json")) as f:
            unknown = hlb_p4.check_names(json.load(f), args.p4_switches)
        if unknown:
            shutil.rmtree(d, ignore_errors=True)
            sys.exit("hlbemu: --p4-switches: %s not a switch of the topology" % ", ".join(unknown))
    sh(["ip", "netns", "add", netns(tag)])
    argv = [PY, os.path.abspath(__file__), "_run", "--tag", tag, "--smux-idle-sleep-us", str(args.smux_idle_sleep_us)]
    if args.smux_udp_timeout is not None:
        argv += ["--smux-udp-timeout", str(args.smux_udp_timeout)]
    if args.smux_tcp_timeout is not None:
        argv += ["--smux-tcp-timeout", str(args.smux_tcp_timeout)]
    if args.smux_conn_table:
        argv += ["--smux-conn-table", args.smux_conn_table]
    argv += ["--agent-load-report-ms", str(args.agent_load_report_ms), "--agent-load-metric", args.agent_load_metric,
             "--standby-smuxes", str(args.standby_smuxes)]
    for a in args.aggregate:
        argv += ["--aggregate", a]
    if args.no_services:
        argv.append("--no-services")
    if args.no_agents:
        argv.append("--no-agents")
    if args.p4_switches:
        argv += ["--p4-switches", ",".join(args.p4_switches), "--p4-profile", args.p4_profile]
    if args.no_prometheus:
        argv.append("--no-prometheus")
    out = open(os.path.join(d, "logs", "emulation.log"), "w")
    p = subprocess.Popen(["ip", "netns", "exec", netns(tag)] + argv, stdout=out, stderr=subprocess.STDOUT,
                         start_new_session=True)
    out.close()
    PidLog(os.path.join(d, "pids.jsonl")).add(p.pid, "runner")
    with open(os.path.join(d, "runner.pid"), "w") as f:
        f.write("%d\n" % p.pid)
    deadline = time.monotonic() + args.timeout
    while not os.path.exists(os.path.join(d, "ready")):
        if p.poll() is not None or time.monotonic() > deadline:
            print(open(os.path.join(d, "logs", "emulation.log")).read()[-3000:], file=sys.stderr)
            stop(tag)
            sys.exit("hlbemu: emulation %r failed to start" % tag)
        time.sleep(0.2)
    print("hlbemu: %s ready: %s/fabric.json (netns %s)" % (tag, d, netns(tag)))


def cmd_stop(args):
    stop(args.tag)


def cmd_exec(args):
    fab = load_fabric(args.tag)
    if args.node not in fab["hosts"]:
        sys.exit("hlbemu: node: unknown host %r (known: %s)" % (args.node, ", ".join(sorted(fab["hosts"]))))
    cmd = args.command[1:] if args.command and args.command[0] == "--" else args.command
    os.execvp("nsenter", ["nsenter", "-t", str(fab["hosts"][args.node]["pid"]), "-n", "--"] + cmd)


def main(argv=None):
    p = argparse.ArgumentParser(prog="hlbemu", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("start")
    s.add_argument("--tag", default="demo")
    s.add_argument("--kind", choices=("fat-tree", "testbed"), default="fat-tree")
    s.add_argument("--k", type=int, default=4)
    s.add_argument("--smuxes", type=int, default=2, help="SMux hosts (fat-tree: on tor-<p>-0 of spread pods)")
    s.add_argument("--hosts-per-tor", type=int)
    s.add_argument("--host-table", type=int)
    s.add_argument("--ecmp-table", type=int)
    s.add_argument("--tunnel-table", type=int)
    s.add_argument("--topology", help="a solver topology JSON instead of generating one")
    s.add_argument("--aggregate", action="append", help="VIP aggregate (default 10.100.0.0/16)")
    s.add_argument("--vips", help="VIP file (solver schema) the daemon loads on its first start")
    s.add_argument("--no-services", action="store_true", help="fabric only: no agents, SMuxes, FRR")
    s.add_argument("--no-agents", action="store_true")
    s.add_argument("--no-prometheus", action="store_true", help="no Prometheus server in the emulation")
    s.add_argument("--smux-idle-sleep-us", type=int, default=1000)
    s.add_argument("--smux-udp-timeout", type=float,
                   help="seconds a UDP flow stays pinned on the SMuxes after its last packet (SMux default 60)")
    s.add_argument("--smux-tcp-timeout", type=float,
                   help="seconds an idle established TCP connection stays pinned (SMux default 300)")
    s.add_argument("--smux-conn-table", choices=("on", "off"),
                   help="the SMuxes' connection pinning for VIPs (SMux default on; off: stateless hashing)")
    s.add_argument("--timeout", type=float, default=180)
    r = sub.add_parser("_run")
    with open(os.path.join(REPO, "p4", "profiles.json")) as f:
        p4_profiles = sorted(json.load(f)["profiles"])
    for x in (s, r):
        x.add_argument("--p4-switches", type=lambda v: [n for n in v.split(",") if n],
                       help="switches run by the P4 model switch hlb-p4switch, e.g. tor-1-0,agg-1-0 "
                            "(topologies/hlb_p4.py)")
        x.add_argument("--p4-profile", default="hlb_cheetah", choices=p4_profiles,
                       help="P4 program of those switches (p4/profiles.json)")
    r.add_argument("--tag", required=True)
    r.add_argument("--aggregate", action="append")
    r.add_argument("--no-services", action="store_true")
    r.add_argument("--no-agents", action="store_true")
    r.add_argument("--no-prometheus", action="store_true")
    r.add_argument("--smux-idle-sleep-us", type=int, default=1000)
    r.add_argument("--smux-udp-timeout", type=float)
    r.add_argument("--smux-tcp-timeout", type=float)
    r.add_argument("--smux-conn-table", choices=("on", "off"))
    for x in (s, r):
        x.add_argument("--standby-smuxes", type=int, default=0,
                       help="the last N SMuxes of the topology are set up but not started: Emu.add_smux "
                            "starts one, an SMux added at run time (default 0)")
        x.add_argument("--agent-load-report-ms", type=int, default=100,
                       help="how often a host agent reports its load to the SMuxes, for the VIPs that place "
                            "SYNs by load (p2c, least-loaded, awrr); 0: never (default 100, as ToN IV-B)")
        x.add_argument("--agent-load-metric", choices=("connections", "cpu"), default="connections",
                       help="the load the host agents report (hlb_agent.py --load-metric): 'connections' "
                            "(default: ESTABLISHED connections to the host's VIPs; the DIP hosts are network "
                            "namespaces of one machine, which all read the same /proc/stat) or 'cpu'")
    rsp = sub.add_parser("_route-server")
    rsp.add_argument("--tag", required=True)
    st = sub.add_parser("stop")
    st.add_argument("--tag", default="demo")
    e = sub.add_parser("exec")
    e.add_argument("--tag", default="demo")
    e.add_argument("node")
    e.add_argument("command", nargs=argparse.REMAINDER)
    for name in ("daemon-start", "daemon-stop"):
        f = sub.add_parser(name)
        f.add_argument("--tag", default="demo")
    for name in ("fail-switch", "recover-switch"):
        f = sub.add_parser(name)
        f.add_argument("--tag", default="demo")
        f.add_argument("switch")
    a = p.parse_args(argv)
    if getattr(a, "aggregate", None) is None and a.cmd in ("start", "_run"):
        a.aggregate = ["10.100.0.0/16"]
    if getattr(a, "aggregate", None):
        for agg in a.aggregate:
            try:
                ipaddress.IPv4Network(agg)
            except ValueError as ex:
                p.error("--aggregate: %s" % ex)
    if getattr(a, "tag", None) is not None and (not a.tag.isalnum() or len(a.tag) > 8):
        p.error("--tag: 1-8 letters/digits (names derived from it must fit 15 characters), got %r" % a.tag)
    if os.geteuid() != 0:
        sys.exit("hlbemu: needs root (namespaces, OVS, DPDK)")
    {"start": cmd_start, "_run": cmd_run, "_route-server": cmd_route_server, "stop": cmd_stop, "exec": cmd_exec,
     "daemon-start": lambda x: print("hybridlbd pid %d" % daemon_start(x.tag).pid),
     "daemon-stop": lambda x: daemon_stop(x.tag),
     "fail-switch": lambda x: set_switch(x.tag, x.switch, False),
     "recover-switch": lambda x: set_switch(x.tag, x.switch, True)}[a.cmd](a)


if __name__ == "__main__":
    main()
