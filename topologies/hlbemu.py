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
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "smux", "frr"))

RUN_ROOT = "/run/hlb"
SOLVER_JAR = os.path.join(REPO, "solver", "tools", "target", "hybridlb-solver.jar")
SMUX_BIN = os.environ.get("HLB_SMUX_BIN", os.path.join(REPO, "smux", "build", "hlb-smux"))
AGENT = os.path.join(REPO, "smux", "agent", "hlb_agent.py")
AGENT_BUILD = os.environ.get("HLB_AGENT_BUILD", os.path.join(REPO, "smux", "build", "agent"))
FRR_SUPERVISOR = os.path.join(REPO, "smux", "frr", "hlb_frr_supervisor.py")
HTTP_SERVER = os.path.join(HERE, "hlb_http_server.py")
PY = "/usr/bin/python3"            # Debian's python: Mininet lives there
RECONVERGE_PARALLEL = 4             # ovs-ofctl processes at once when the fabric reconverges
SMUX_CONTROL_PORT = 8000
AGENT_PORT = 9100
DAEMON_HOST, DAEMON_PORT = "127.0.0.1", 8080
DAEMON_BIN = os.path.join(REPO, "app", "standalone", "bin", "hybridlbd")
CLI_BIN = os.path.join(REPO, "app", "standalone", "bin", "hybridlb")
HLB_CERTS = os.path.join(REPO, "app", "standalone", "deploy", "hlb-certs")
DAEMON_URL = "https://%s:%d" % (DAEMON_HOST, DAEMON_PORT)


def netns(tag):
    return "hlbemu-" + tag


def rundir(tag):
    return os.path.join(RUN_ROOT, tag)


def tlsdir(tag):
    """The emulation's CA, certificates and API tokens."""
    return os.path.join(rundir(tag), "tls")


def log(msg):
    print("[hlbemu %s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def sh(cmd, check=True, env=None, **kw):
    r = subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, env=env, **kw)
    if check and r.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s%s" % (r.returncode, cmd, r.stdout, r.stderr))
    return r.stdout


def proc_start_time(pid):
    """The start time of a live process (None: gone, or a zombie nobody reaped yet). A process
    whose main thread has exited while its other threads still run (a SIGKILLed JVM tearing down)
    shows its main thread as a zombie: it is alive until the last thread is gone, and until then
    it may still hold its files and sockets."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        threads = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return None
    return None if fields[0] == "Z" and threads == [str(pid)] else fields[19]


class PidLog:
    """Every process we start, as (pid, start time): stop kills exactly these, never by name."""

    def __init__(self, path):
        self.path = path

    def add(self, pid, what):
        with open(self.path, "a") as f:
            f.write(json.dumps({"pid": pid, "start": proc_start_time(pid), "what": what}) + "\n")

    def entries(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path) as f:
            return [json.loads(l) for l in f if l.strip()]


def kill_recorded(entries, sig=signal.SIGTERM):
    alive = []
    for e in entries:
        if e["start"] and proc_start_time(e["pid"]) == e["start"]:
            try:
                os.kill(e["pid"], sig)
                alive.append(e)
            except ProcessLookupError:
                pass
    return alive


# --------------------------------------------------------------------------------------
# The runner: lives inside the namespace for the lifetime of the emulation.
# --------------------------------------------------------------------------------------

class Emulation:
    def __init__(self, args):
        self.args = args
        self.tag = args.tag
        self.dir = rundir(self.tag)
        self.ovsdir = os.path.join(self.dir, "ovs")
        self.tls = tlsdir(self.tag)
        self.pids = PidLog(os.path.join(self.dir, "pids.jsonl"))
        self.procs = []          # Popen objects we own, stopped in reverse order
        self.net = None
        self.rs = None
        self.env = dict(os.environ, OVS_RUNDIR=self.ovsdir, OVS_DBDIR=self.ovsdir, OVS_LOGDIR=self.ovsdir,
                        HLB_AGENT_BUILD=AGENT_BUILD)
        os.environ.update(OVS_RUNDIR=self.ovsdir, OVS_DBDIR=self.ovsdir, OVS_LOGDIR=self.ovsdir)
        from hlb_topo import FabricPlan
        self.plan = FabricPlan.load(os.path.join(self.dir, "topology.json"))
        self.aggregates = args.aggregate
        self.p4_switches = args.p4_switches or []      # run by hlb-p4switch (hlb_p4.py)
        self.p4_profile = args.p4_profile

    # ---- processes ----
    def spawn(self, what, cmd, node=None, log_name=None, **kw):
        out = open(os.path.join(self.dir, "logs", (log_name or what) + ".log"), "w")
        if node is not None:
            p = node.popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=self.env, **kw)
        else:
            p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=self.env,
                                 start_new_session=True, **kw)
        out.close()
        self.procs.append((what, p))
        self.pids.add(p.pid, what)
        return p

    # ---- OVS ----
    def start_ovs(self):
        d = self.ovsdir
        os.makedirs(d, exist_ok=True)
        sh(["ovsdb-tool", "create", d + "/conf.db", "/usr/share/openvswitch/vswitch.ovsschema"])
        self.spawn("ovsdb-server", ["ovsdb-server", d + "/conf.db", "--remote=punix:" + d + "/db.sock",
                                    "--pidfile=" + d + "/ovsdb-server.pid", "--unixctl=" + d + "/ovsdb-server.ctl",
                                    "--log-file=" + d + "/ovsdb-server.log"])
        wait_for(lambda: os.path.exists(d + "/db.sock"), 10, "ovsdb-server socket")
        sh(["ovs-vsctl", "--no-wait", "init"], env=self.env)
        self.spawn("ovs-vswitchd", ["ovs-vswitchd", "unix:" + d + "/db.sock", "--pidfile=" + d + "/ovs-vswitchd.pid",
                                    "--log-file=" + d + "/ovs-vswitchd.log"])
        wait_for(lambda: os.path.exists(d + "/ovs-vswitchd.pid"), 10, "ovs-vswitchd pidfile")
        sh(["ovs-vsctl", "--timeout=10", "show"], env=self.env)

    def ofctl(self, *args):
        return sh(["ovs-ofctl", "-O", "OpenFlow15"] + list(args), env=self.env)

    def appctl(self, *args):
        return sh(["ovs-appctl"] + list(args), env=self.env)

    # ---- Mininet ----
    def start_mininet(self):
        from mininet.net import Mininet
        from mininet.link import Link
        from mininet.node import OVSSwitch
        from mininet.log import setLogLevel
        from hlb_topo import FabricTopo
        setLogLevel("warning")

        class HlbSwitch(OVSSwitch):
            def __init__(self, name, **params):
                params.update(datapath="user", protocols="OpenFlow13,OpenFlow15", failMode="secure")
                super().__init__(name, **params)

        switch = HlbSwitch
        if self.p4_switches:
            import hlb_p4
            switch = hlb_p4.switch_factory(self, self.p4_switches, HlbSwitch)
        self.net = Mininet(topo=FabricTopo(plan=self.plan), switch=switch, link=Link, controller=None,
                           autoSetMacs=False, autoStaticArp=False, build=True, waitConnected=False)
        self.net.start()
        # Room for the GRE header (24 bytes) on every link; hosts still send 1500-byte packets
        # (route mtu below), so encapsulated full-size packets cross the fabric.
        for sw in self.net.switches:
            for intf in sw.intfList():
                if intf.name != "lo" and intf.name.startswith(sw.name + "-"):
                    sh(["ip", "link", "set", intf.name, "mtu", "1600"])
        for h in self.net.hosts:
            self.pids.add(h.pid, "mininet host " + h.name)

    def node(self, nid):
        return self.net.get(self.plan.nodes[nid]["name"])

    def configure_hosts(self):
        from hlb_topo import GATEWAY_IP
        for nid, n in self.plan.nodes.items():
            h = self.node(nid)
            i = self.iface(nid)
            cmds = ["sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1",
                    "ip addr flush dev " + i, "ip link set %s up" % i, "ip link set lo up",
                    "ethtool -K %s tx off >/dev/null 2>&1" % i,
                    "ip route add %s dev %s" % (GATEWAY_IP, i),
                    "ip neigh replace %s lladdr %s dev %s nud permanent" % (GATEWAY_IP, self.plan_gateway_mac(), i),
                    "ip link set %s mtu 1600" % i,
                    "ip route add default via %s dev %s onlink mtu 1500" % (GATEWAY_IP, i)]
            if n["role"] != "smux":          # the SMux owns its address in DPDK, not in the kernel
                cmds.insert(2, "ip addr add %s/32 dev %s" % (n["ip"], i))
            for c in cmds:
                h.cmd(c)

    def iface(self, nid):
        return self.node(nid).defaultIntf().name

    def plan_gateway_mac(self):
        from hlb_topo import GATEWAY_MAC
        return GATEWAY_MAC

    def start_mgmt(self):
        from hlb_topo import MGMT_HOST_IP
        br = "hlbm-" + self.tag
        br = br[:15]
        self.mgmt_bridge = br
        sh(["ip", "link", "add", br, "type", "bridge"])
        sh(["ip", "addr", "add", MGMT_HOST_IP + "/16", "dev", br])
        sh(["ip", "link", "set", br, "up"])
        sh(["ip", "link", "set", "lo", "up"])
        for nid, n in self.plan.nodes.items():
            if not n["mgmtIp"]:
                continue
            h = self.node(nid)
            outer = "hlbm%d" % n["location"]
            sh(["ip", "link", "add", outer, "type", "veth", "peer", "name", "mgmt0", "netns", str(h.pid)])
            sh(["ip", "link", "set", outer, "master", br, "up"])
            h.cmd("ip addr add %s/16 dev mgmt0 && ip link set mgmt0 up" % n["mgmtIp"])

    # ---- fabric flows + GRE plumbing ----
    def program_fabric(self):
        from hlb_topo import TUNNEL_OFPORT, GATEWAY_MAC, TUNNEL_GATEWAY_IP, TUNNEL_NET_PLEN
        tmp = os.path.join(self.dir, "flows")
        os.makedirs(tmp, exist_ok=True)
        for sid, s in self.plan.switches.items():
            if sid in self.p4_switches:
                import hlb_p4
                hlb_p4.program_fabric(self, sid, self.p4_profile)
                continue
            br = s["bridge"]
            gre = "gre%d" % s["location"]
            sh(["ovs-vsctl", "add-port", br, gre, "--", "set", "interface", gre, "type=gre",
                "options:remote_ip=flow", "options:key=%d" % s["location"], "options:packet_type=legacy_l3",
                "ofport_request=%d" % TUNNEL_OFPORT], env=self.env)
            # Underlay address on the bridge's own port: OVS's native tunnel sends from here.
            sh(["ip", "addr", "add", "%s/%d" % (s["tunnelIp"], TUNNEL_NET_PLEN), "dev", br])
            sh(["ip", "link", "set", br, "up"])
            groups = os.path.join(tmp, br + ".groups")
            with open(groups, "w") as f:
                f.write("\n".join(self.plan.fabric_groups(sid)) + "\n")
            flows = os.path.join(tmp, br + ".flows")
            with open(flows, "w") as f:
                f.write("\n".join(self.plan.fabric_flows(sid, self.aggregates)) + "\n")
            self.ofctl("add-groups", br, groups)
            self.ofctl("add-flows", br, flows)
            # Each switch's tunnelled packets leave from that switch: one route per pkt_mark.
            self.appctl("ovs/route/add", "0.0.0.0/0", br, TUNNEL_GATEWAY_IP, "pkt_mark=%d" % s["location"])
            self.appctl("tnl/neigh/set", br, TUNNEL_GATEWAY_IP, GATEWAY_MAC)

    # ---- services on hosts ----
    def agent_allow_lists(self):
        """What the host agents may decapsulate: tunnels from the switches' underlay
        network (the HMuxes) and from the SMuxes, to the VIP aggregates."""
        from hlb_topo import TUNNEL_NET_PLEN
        any_switch = next(iter(self.plan.switches.values()))["tunnelIp"]
        args = ["--allow-mux", str(ipaddress.ip_network("%s/%d" % (any_switch, TUNNEL_NET_PLEN), strict=False))]
        for n in self.plan.by_role("smux").values():
            args += ["--allow-mux", n["ip"]]
        for agg in self.aggregates:
            args += ["--vip-prefix", agg]
        return args

    def start_dip_services(self):
        allow = self.agent_allow_lists()
        for nid, n in self.plan.by_role("dip").items():
            h = self.node(nid)
            for agg in self.aggregates:
                # Any VIP of the aggregate is local (AnyIP): replies leave with the VIP as source (DSR).
                h.cmd("ip route add local %s dev lo" % agg)
            h.cmd("sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2")
            self.spawn("http " + nid, [PY, HTTP_SERVER, "--name", nid, "--port", "80"], node=h, log_name="http-" + nid)
            self.spawn("iperf3 " + nid, ["iperf3", "-s", "-p", "5201"], node=h, log_name="iperf3-" + nid)
            if self.args.no_agents:
                continue
            cmd = [PY, AGENT, "--iface", self.iface(nid), "--local-ip", n["ip"], "--no-vip-setup",
                   "--check", "http://%s:80/" % n["ip"], "--check-interval", "0.2", "--fall", "2", "--rise", "2",
                   "--listen", "%s:%d" % (n["mgmtIp"], AGENT_PORT), "--build-dir", AGENT_BUILD] + allow + self.tls_args("agent-" + nid)
            # Cheetah: the agent keeps its cookie configuration here; hybridlbd fills it with
            # PUT /cookie (server id, the keys of this host's VIPs) and it survives a restart.
            cmd += ["--cookie-config", os.path.join(self.dir, "cookie-%s.json" % nid)]
            # Stateful closes and loads go to the SMuxes' control APIs the cookie document names,
            # over mutual TLS: a client certificate of this agent's own (smux/agent/README.md).
            cmd += ["--smux-tls-cert", os.path.join(self.tls, "agent-%s-client.pem" % nid),
                    "--smux-tls-key", os.path.join(self.tls, "agent-%s-client.key" % nid),
                    "--smux-tls-ca", os.path.join(self.tls, "ca.pem"),
                    "--load-report-ms", str(self.args.agent_load_report_ms),
                    # Every DIP host here is a namespace of one machine: they read the same
                    # /proc/stat, so a CPU load would be the same figure for every DIP.
                    "--load-metric", self.args.agent_load_metric]
            with open(os.path.join(self.dir, "agent-%s.cmd" % nid), "w") as f:
                json.dump(cmd, f)
            self.spawn("agent " + nid, cmd, node=h, log_name="agent-" + nid)

    def start_route_server(self):
        self.rs = route_server(self.tag, self.plan, self.pids)

    def standby_smuxes(self):
        """The last --standby-smuxes SMuxes of the topology: set up everywhere (certificates, route
        server, agents' allow lists, fabric.json) but not started; Emu.add_smux starts one."""
        ids = list(self.plan.by_role("smux"))
        n = self.args.standby_smuxes
        if n and not 0 < n < len(ids):
            raise RuntimeError("--standby-smuxes %d: the topology has %d SMuxes, at least one must run" % (n, len(ids)))
        return ids[len(ids) - n:] if n else []

    def start_smuxes(self):
        from hlb_topo import GATEWAY_IP, MGMT_HOST_IP, ROUTE_SERVER_ASN, SMUX_ASN_BASE
        standby = self.standby_smuxes()
        with open(os.path.join(self.dir, "standby-smuxes.json"), "w") as f:
            json.dump(standby, f)
        for i, (nid, n) in enumerate(self.plan.by_role("smux").items()):
            h = self.node(nid)
            prefix = "hlb%s%d" % (self.tag, i)
            cmd = [SMUX_BIN, "--no-huge", "--no-pci", "-m", "256", "--no-shconf", "--no-telemetry",
                   "--file-prefix=" + prefix, "-l", str(i % os.cpu_count()),
                   "--vdev", "net_af_packet0,iface=" + self.iface(nid), "--",
                   "--ip", n["ip"], "--gateway", GATEWAY_IP, "--mgmt", "%s:%d" % (n["mgmtIp"], SMUX_CONTROL_PORT),
                   "--idle-sleep-us", str(self.args.smux_idle_sleep_us), "--mtu", "1600",
                   "--table-state", os.path.join(self.dir, "smux-%s.table.json" % nid)] + self.tls_args("smux-" + nid)
            if self.args.smux_udp_timeout is not None:
                cmd += ["--udp-timeout", str(self.args.smux_udp_timeout)]
            if self.args.smux_tcp_timeout is not None:
                cmd += ["--tcp-timeout", str(self.args.smux_tcp_timeout)]
            if self.args.smux_conn_table:
                cmd += ["--conn-table", self.args.smux_conn_table]
            with open(os.path.join(self.dir, "smux-%s.cmd" % nid), "w") as f:
                json.dump(cmd, f)
            pidfile = os.path.join(self.dir, "smux-%s.pid" % nid)
            if nid not in standby:
                p = self.spawn("smux " + nid, cmd, node=h, log_name="smux-" + nid)
                with open(pidfile, "w") as f:
                    f.write("%d\n" % p.pid)
            frrdir = os.path.join(self.dir, "frr", nid)
            sup = [PY, FRR_SUPERVISOR, "--name", ("hlbs%s%d" % (self.tag, i))[:30], "--run-dir", frrdir,
                   "--asn", str(SMUX_ASN_BASE + i), "--router-id", n["mgmtIp"],
                   "--neighbor", "%s:%d" % (MGMT_HOST_IP, ROUTE_SERVER_ASN),
                   "--health-url", "https://%s:%d/health" % (n["mgmtIp"], SMUX_CONTROL_PORT),
                   "--health-ca", os.path.join(self.tls, "ca.pem"), "--pidfile", pidfile]
            for agg in self.aggregates:
                sup += ["--prefix", agg]
            with open(os.path.join(self.dir, "frr-supervisor-%s.cmd" % nid), "w") as f:
                json.dump(sup, f)
            if nid not in standby:
                self.spawn("frr-supervisor " + nid, sup, node=h, log_name="frr-" + nid)

    def write_files(self):
        fab = self.plan.fabric_json("topology.json", self.ovsdir, os.path.join(self.dir, "frr", "rs"),
                                    SMUX_CONTROL_PORT, AGENT_PORT, scheme="https")
        fab["netns"] = netns(self.tag)
        fab["aggregates"] = self.aggregates
        if self.p4_switches:
            import hlb_p4
            for sid in self.p4_switches:
                fab["switches"][sid]["p4"] = hlb_p4.fabric_json_entry(self, sid, self.p4_profile)
        for nid, h in fab["hosts"].items():
            h["pid"] = self.node(nid).pid
            h["iface"] = self.iface(nid)
        with open(os.path.join(self.dir, "fabric.json"), "w") as f:
            json.dump(fab, f, indent=2)
        # The daemon's config (app/standalone/README.md); the VIP file is loaded on first start only.
        conf = {"fabric": "fabric.json", "stateDir": os.path.join(self.dir, "hybridlbd"),
                "listen": "%s:%d" % (DAEMON_HOST, DAEMON_PORT),
                "tls": {"keystore": "tls/hybridlbd.p12", "passwordFile": "tls/hybridlbd.p12.pass", "ca": "tls/ca.pem"},
                "tokens": "tls/tokens.json"}
        if os.path.exists(os.path.join(self.dir, "vips.json")):
            conf["vips"] = "vips.json"
        with open(os.path.join(self.dir, "hybridlbd.json"), "w") as f:
            json.dump(conf, f, indent=2)

    def wait_services(self, timeout=60):
        import ssl
        import urllib.request
        ctx = ssl.create_default_context(cafile=os.path.join(self.tls, "ca.pem"))
        deadline = time.monotonic() + timeout
        pending = {}
        for nid, n in self.plan.by_role("smux").items():
            if nid not in self.standby_smuxes():
                pending[nid] = "https://%s:%d/health" % (n["mgmtIp"], SMUX_CONTROL_PORT)
        if not self.args.no_agents:
            for nid, n in self.plan.by_role("dip").items():
                pending[nid] = "https://%s:%d/health" % (n["mgmtIp"], AGENT_PORT)
        while pending and time.monotonic() < deadline:
            for nid, url in list(pending.items()):
                try:
                    urllib.request.urlopen(url, timeout=1, context=ctx).read()
                    del pending[nid]
                except Exception:
                    pass
            self.check_children()
            time.sleep(0.3)
        if pending:
            raise RuntimeError("not ready after %ds: %s" % (timeout, sorted(pending)))

    def make_tls(self):
        """A CA, a server certificate for each SMux's and host agent's management address,
        and hybridlbd's identity (HTTPS on loopback, and the client the SMuxes and agents take
        writes from): app/standalone/deploy/hlb-certs, as an operator would."""
        sh(["bash", HLB_CERTS, self.tls, "ca"])
        jobs = [["controller", "hybridlbd", "--ip", DAEMON_HOST, "--dns", "localhost"]]
        for nid, n in self.plan.by_role("smux").items():
            jobs.append(["server", "smux-" + nid, "--ip", n["mgmtIp"]])
        for nid, n in self.plan.by_role("dip").items():
            if n["mgmtIp"]:
                jobs.append(["server", "agent-" + nid, "--ip", n["mgmtIp"]])
                jobs.append(["client", "agent-%s-client" % nid])
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda j: sh(["bash", HLB_CERTS, self.tls] + j), jobs))

    def tls_args(self, name):
        return ["--tls-cert", os.path.join(self.tls, name + ".pem"), "--tls-key", os.path.join(self.tls, name + ".key"),
                "--tls-ca", os.path.join(self.tls, "ca.pem")]

    def start_prometheus(self):
        """Debian's prometheus, in this namespace, its data under the run directory."""
        import hlb_prometheus
        if not hlb_prometheus.available():
            raise RuntimeError("%s missing: run topologies/install-deps.sh" % hlb_prometheus.PROMETHEUS_BIN)
        d = os.path.join(self.dir, "prometheus")
        os.makedirs(os.path.join(d, "data"), exist_ok=True)
        smuxes = {nid: "%s:%d" % (n["mgmtIp"], SMUX_CONTROL_PORT) for nid, n in self.plan.by_role("smux").items()}
        agents = {} if self.args.no_agents else {
            nid: "%s:%d" % (n["mgmtIp"], AGENT_PORT) for nid, n in self.plan.by_role("dip").items()}
        # every target over HTTPS under the emulation's CA; hybridlbd with the viewer token
        # (written when the daemon first starts: Prometheus reads the file at each scrape)
        hlb_prometheus.write_config(os.path.join(d, "prometheus.yml"), "%s:%d" % (DAEMON_HOST, DAEMON_PORT),
                                    smuxes, agents, ca_file=os.path.join(self.tls, "ca.pem"),
                                    token_file=os.path.join(self.tls, "viewer.token"))
        self.spawn("prometheus", hlb_prometheus.command(os.path.join(d, "prometheus.yml"), os.path.join(d, "data")))

    def check_children(self):
        for what, p in self.procs:
            if p.poll() is not None and not what.startswith(("iperf3",)):
                raise RuntimeError("%s exited with %s (see %s/logs)" % (what, p.returncode, self.dir))

    def run(self):
        os.makedirs(os.path.join(self.dir, "logs"), exist_ok=True)
        t0 = time.monotonic()
        self.start_ovs()
        self.start_mininet()
        log("fabric up: %d switches, %d hosts (%.1fs)" % (len(self.net.switches), len(self.net.hosts),
                                                          time.monotonic() - t0))
        self.configure_hosts()
        self.make_tls()
        self.start_mgmt()
        self.program_fabric()
        log("fabric routing + GRE plumbing installed (%.1fs)" % (time.monotonic() - t0))
        self.write_files()
        if not self.args.no_services:
            self.start_dip_services()
            self.start_route_server()
            self.start_smuxes()
            self.wait_services()
            if not self.args.no_prometheus:
                self.start_prometheus()
        log("ready (%.1fs)" % (time.monotonic() - t0))
        with open(os.path.join(self.dir, "ready"), "w") as f:
            f.write("%d\n" % os.getpid())

    def stop(self):
        for what, p in reversed(self.procs):
            if p.poll() is None:
                try:
                    p.terminate()
                except OSError:
                    pass
        deadline = time.monotonic() + 8
        for what, p in reversed(self.procs):
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []
        if self.rs:
            self.rs.stop(remove_dir=False)
            self.rs = None
        if self.net:
            try:
                self.net.stop()
            except Exception as e:
                log("mininet stop: %s" % e)
            self.net = None


def route_server(tag, plan, pids):
    """The route-server FRR (zebra + bgpd) of emulation `tag`, started; inside its namespace."""
    from hlb_frr_supervisor import FrrInstance, bgpd_config
    from hlb_topo import MGMT_HOST_IP, ROUTE_SERVER_ASN, SMUX_ASN_BASE
    neighbors = [(n["mgmtIp"], SMUX_ASN_BASE + i) for i, n in enumerate(plan.by_role("smux").values())]
    d = os.path.join(rundir(tag), "frr", "rs")
    os.makedirs(os.path.dirname(d), exist_ok=True)
    os.chmod(rundir(tag), 0o755)
    os.chmod(os.path.dirname(d), 0o755)
    conf = bgpd_config("hlbrs" + tag, ROUTE_SERVER_ASN, MGMT_HOST_IP, neighbors, d + "/bgpd.log")
    rs = FrrInstance(("hlbrs" + tag)[:30], d, conf)
    rs.start()
    for name, p in rs.procs.items():
        pids.add(p.pid, "route server " + name)
    pids.add(rs.reaper.pid, "route server reaper")
    return rs


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


def wait_for(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out waiting for " + what)
        time.sleep(0.05)


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


def stop(tag, quiet=False):
    d = rundir(tag)
    ns = netns(tag)
    pids = PidLog(os.path.join(d, "pids.jsonl"))
    entries = pids.entries()
    runner = [e for e in entries if e["what"] == "runner"]
    if runner and kill_recorded(runner):
        deadline = time.monotonic() + 30
        while kill_recorded(runner, 0) and time.monotonic() < deadline:
            time.sleep(0.2)
    # Anything still alive that we recorded, then anything left in our own namespace.
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if kill_recorded(pids.entries(), sig):
            time.sleep(1)
    if os.path.exists("/run/netns/" + ns):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            left = sh(["ip", "netns", "pids", ns], check=False).split()
            for pid in left:
                try:
                    os.kill(int(pid), sig)
                except (ProcessLookupError, ValueError):
                    pass
            if left:
                time.sleep(1)
        sh(["ip", "netns", "del", ns], check=False)
    for i in range(16):
        shutil.rmtree("/var/run/dpdk/hlb%s%d" % (tag, i), ignore_errors=True)
    shutil.rmtree(d, ignore_errors=True)
    if not quiet:
        print("hlbemu: %s stopped" % tag)


def cmd_stop(args):
    stop(args.tag)


def load_fabric(tag):
    with open(os.path.join(rundir(tag), "fabric.json")) as f:
        return json.load(f)


def cmd_exec(args):
    fab = load_fabric(args.tag)
    if args.node not in fab["hosts"]:
        sys.exit("hlbemu: node: unknown host %r (known: %s)" % (args.node, ", ".join(sorted(fab["hosts"]))))
    cmd = args.command[1:] if args.command and args.command[0] == "--" else args.command
    os.execvp("nsenter", ["nsenter", "-t", str(fab["hosts"][args.node]["pid"]), "-n", "--"] + cmd)


def switch_ports(tag, fab, sid):
    """Ports of switch sid and its neighbours' ports facing it."""
    sw = fab["switches"].get(sid) or ({"bridge": fab["border"]["bridge"], "ports": {}} if sid == "border" else None)
    if sw is None:
        sys.exit("hlbemu: switch: unknown switch %r" % sid)
    own = [(sw["bridge"], p) for p in sw["ports"].values()]
    facing = [(o["bridge"], o["ports"][sid]) for oid, o in fab["switches"].items() if sid in o["ports"]]
    return own, facing


def set_switch(tag, sid, up):
    """A failed switch: every one of its links down at once (one `ip -batch` of `link set down` on
    its veths, microseconds apart; one `ovs-ofctl mod-port` per port took ~0.2 s each, so the
    switch died port by port). The neighbours' ports facing it lose carrier (link_state down),
    the fabric's select groups (watch_port) and the VIP routes' fast-failover groups route around
    it, and the daemon sees all its ports down."""
    fab = load_fabric(tag)
    own, _facing = switch_ports(tag, fab, sid)
    p4 = {s_id for s_id, s in fab["switches"].items() if "p4" in s}
    listing = sh(["ip", "netns", "exec", netns(tag), "ovs-vsctl", "--db=unix:%s/db.sock" % fab["ovs"]["rundir"],
                  "--format=csv", "--no-headings", "--columns=name,ofport", "list", "Interface"])
    ofport_of = dict(line.rsplit(",", 1) for line in listing.split())
    names = [n for n, p in ofport_of.items() if n.startswith(own[0][0] + "-") and int(p) in {q for _, q in own}] \
        if own else []
    if sid in p4:                       # not an OVS bridge: Mininet's interface names
        names = ["%s-eth%d" % (b, q) for b, q in own]
    batch = "".join("link set dev %s %s\n" % (n, "up" if up else "down") for n in names)
    sh(["ip", "netns", "exec", netns(tag), "ip", "-batch", "-"], input=batch)
    # Then the fabric's own routing reconverges around the failed switches (what BGP/ECMP
    # does in a real fabric; watch_port only covers the failed switch's direct neighbours).
    from hlb_topo import FabricPlan
    down_file = os.path.join(rundir(tag), "down.json")
    down = set(json.load(open(down_file))) if os.path.exists(down_file) else set()
    before = FabricPlan.load(os.path.join(rundir(tag), "topology.json"), down=down)
    down = (down - {sid}) if up else (down | {sid})
    with open(down_file, "w") as f:
        json.dump(sorted(down), f)
    plan = FabricPlan.load(os.path.join(rundir(tag), "topology.json"), down=down)
    cmds = []
    for s_id, s in plan.switches.items():
        if s_id in p4:                  # P4 switches keep their ECMP members (hlb_p4.py)
            continue
        # only the groups whose next hops changed: rewriting all of them makes every bridge
        # revalidate its datapath flows at once, which stalls forwarding in the shared vswitchd
        old = set(before.fabric_groups(s_id))
        changed = [g for g in plan.fabric_groups(s_id) if g not in old]
        if not changed:
            continue
        path = os.path.join(rundir(tag), "flows", s["bridge"] + ".mod-groups")
        with open(path, "w") as f:
            f.write("".join("modify " + g + "\n" for g in changed))
        cmds.append(["ovs-ofctl", "-O", "OpenFlow15", "add-groups",
                     "unix:%s/%s.mgmt" % (fab["ovs"]["rundir"], s["bridge"]), path])
    # in parallel, as routers reconverge (one switch after the other took ~0.5 s, which flows
    # needing the new paths waited for), but 4 at a time: all 19 at once stalled the shared
    # ovs-vswitchd for ~100 ms, every flow included. The sockets are files: no need to enter the
    # namespace.
    with ThreadPoolExecutor(RECONVERGE_PARALLEL) as pool:
        for c, r in zip(cmds, pool.map(lambda c: subprocess.run(c, capture_output=True, text=True), cmds)):
            if r.returncode != 0:
                sys.exit("hlbemu: %s failed: %s" % (" ".join(c), r.stderr.strip()))


def ensure_tokens(tag):
    """hybridlbd's token file with an admin and a viewer token (made once, with the CLI as an
    operator would); the tokens themselves in tls/<role>.token and as a curl header file."""
    t = tlsdir(tag)
    tokens = os.path.join(t, "tokens.json")
    for role in ("admin", "viewer"):
        path = os.path.join(t, role + ".token")
        if os.path.exists(path):
            continue
        token = sh([CLI_BIN, "token", "create", "--tokens", tokens, "--name", "hlbemu-" + role, "--role", role]).strip()
        for name, text in ((path, token + "\n"), (os.path.join(t, role + ".header"), "Authorization: Bearer %s\n" % token)):
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(text)


def api_curl(tag, role="admin"):
    """curl's options for hybridlbd's API: trust the emulation's CA, send the role's token."""
    t = tlsdir(tag)
    return ["--cacert", os.path.join(t, "ca.pem"), "-H", "@" + os.path.join(t, role + ".header")]


def mgmt_curl(tag, write=False):
    """curl's options for an SMux's or host agent's management API (writes: hybridlbd's client certificate)."""
    t = tlsdir(tag)
    opts = ["--cacert", os.path.join(t, "ca.pem")]
    if write:
        opts += ["--cert", os.path.join(t, "hybridlbd.pem"), "--key", os.path.join(t, "hybridlbd.key")]
    return opts


def reprogram_fabric(tag):
    """What the emulated fabric's routing owns, put back on a fresh ovs-vswitchd (from outside the
    namespace): each bridge's underlay address, its tunnel route and neighbour, its fabric groups
    and flows (around the switches marked failed)."""
    from hlb_topo import FabricPlan, GATEWAY_MAC, TUNNEL_GATEWAY_IP, TUNNEL_NET_PLEN
    fab = load_fabric(tag)
    d = fab["ovs"]["rundir"]
    down_file = os.path.join(rundir(tag), "down.json")
    down = set(json.load(open(down_file))) if os.path.exists(down_file) else set()
    plan = FabricPlan.load(os.path.join(rundir(tag), "topology.json"), down=down)
    env = dict(os.environ, OVS_RUNDIR=d, OVS_DBDIR=d, OVS_LOGDIR=d)
    batch = []
    for sid, s in plan.switches.items():
        br = s["bridge"]
        batch += ["addr replace %s/%d dev %s" % (s["tunnelIp"], TUNNEL_NET_PLEN, br), "link set %s mtu 1600 up" % br]
    sh(["ip", "netns", "exec", netns(tag), "ip", "-batch", "-"], input="\n".join(batch) + "\n")

    def one(item):
        sid, s = item
        br, mgmt = s["bridge"], "unix:%s/%s.mgmt" % (d, s["bridge"])
        groups = os.path.join(rundir(tag), "flows", br + ".groups")
        flows = os.path.join(rundir(tag), "flows", br + ".restore-flows")
        with open(groups, "w") as f:
            f.write("\n".join(plan.fabric_groups(sid)) + "\n")
        with open(flows, "w") as f:
            f.write("\n".join(plan.fabric_flows(sid, fab.get("aggregates", []))) + "\n")
        for cmd in (["ovs-ofctl", "-O", "OpenFlow15", "add-groups", mgmt, groups],
                    ["ovs-ofctl", "-O", "OpenFlow15", "add-flows", mgmt, flows],
                    ["ip", "netns", "exec", netns(tag), "ovs-appctl", "ovs/route/add", "0.0.0.0/0", br,
                     TUNNEL_GATEWAY_IP, "pkt_mark=%d" % s["location"]],
                    ["ip", "netns", "exec", netns(tag), "ovs-appctl", "tnl/neigh/set", br, TUNNEL_GATEWAY_IP,
                     GATEWAY_MAC]):
            sh(cmd, env=env)
    with ThreadPoolExecutor(RECONVERGE_PARALLEL) as pool:
        list(pool.map(one, plan.switches.items()))


def daemon_start(tag, extra_args=(), timeout=180):
    """Start hybridlbd inside the emulation's namespace; returns its PID once the REST API answers."""
    d = rundir(tag)
    if not os.path.exists(DAEMON_BIN):
        raise RuntimeError("%s missing: build app/standalone (mvn -B -q -pl app/standalone -am package)" % DAEMON_BIN)
    ensure_tokens(tag)
    out = open(os.path.join(d, "logs", "hybridlbd.log"), "a")
    p = subprocess.Popen(["ip", "netns", "exec", netns(tag), DAEMON_BIN, "--config", os.path.join(d, "hybridlbd.json")]
                         + list(extra_args), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    out.close()
    PidLog(os.path.join(d, "pids.jsonl")).add(p.pid, "hybridlbd")
    with open(os.path.join(d, "hybridlbd.pid"), "w") as f:
        f.write("%d\n" % p.pid)
    deadline = time.monotonic() + timeout
    while True:
        if p.poll() is not None:
            raise RuntimeError("hybridlbd exited with %s; see %s/logs/hybridlbd.log" % (p.returncode, d))
        r = subprocess.run(["ip", "netns", "exec", netns(tag), "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                            "-m", "1"] + api_curl(tag, "viewer") + [DAEMON_URL + "/vips"], capture_output=True, text=True)
        if r.stdout.strip() == "200":
            return p
        if time.monotonic() > deadline:
            raise RuntimeError("hybridlbd REST API not answering after %ds" % timeout)
        time.sleep(0.3)


def daemon_stop(tag, sig=signal.SIGTERM, timeout=20):
    path = os.path.join(rundir(tag), "hybridlbd.pid")
    if not os.path.exists(path):
        return
    pid = int(open(path).read())
    entries = [e for e in PidLog(os.path.join(rundir(tag), "pids.jsonl")).entries() if e["pid"] == pid]
    deadline = time.monotonic() + timeout
    if kill_recorded(entries, sig):
        while kill_recorded(entries, 0) and time.monotonic() < deadline:
            time.sleep(0.1)
        kill_recorded(entries, signal.SIGKILL)
    os.unlink(path)
    # the next daemon_start binds the same port: return once nothing listens on it any more
    listening = ["ip", "netns", "exec", netns(tag), "ss", "-Hltnp", "sport = :%d" % DAEMON_PORT]
    while sh(listening).strip():
        if time.monotonic() > deadline + 10:
            raise RuntimeError("port %d still in use after hybridlbd stopped: %s" % (DAEMON_PORT, sh(listening)))
        time.sleep(0.1)


class Emu:
    """Handle on a running emulation, for scripts and tests (outside the namespace)."""

    def __init__(self, tag):
        self.tag = tag
        self.dir = rundir(tag)
        self.fab = load_fabric(tag)
        self.pids = PidLog(os.path.join(self.dir, "pids.jsonl"))
        self.ns = netns(tag)

    def host_cmd(self, node, cmd, mount=False):
        """cmd in host `node`'s network namespace (mount: and its mount namespace, whose /sys shows
        its interfaces, as Mininet's mnexec gives the host's own processes)."""
        return ["nsenter", "-t", str(self.fab["hosts"][node]["pid"]), "-n"] + (["-m"] if mount else []) + ["--"] \
            + list(cmd)

    def run(self, node, cmd, timeout=60, check=False):
        return subprocess.run(self.host_cmd(node, cmd), capture_output=True, text=True, timeout=timeout, check=check)

    def popen(self, node, cmd, what=None, mount=False, **kw):
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        p = subprocess.Popen(self.host_cmd(node, cmd, mount), text=True, start_new_session=True, **kw)
        self.pids.add(p.pid, what or "client %s" % node)
        return p

    def probe(self, node, *args):
        """Start hlb_probe.py in a client host; .communicate() gives its JSON."""
        return self.popen(node, [PY, os.path.join(HERE, "hlb_probe.py")] + [str(a) for a in args],
                          what="probe %s %s" % (node, args[0]))

    @staticmethod
    def finish(p, timeout=60):
        """Stop a probe (SIGTERM: it reports what it measured so far) and parse its JSON."""
        if p.poll() is None:
            p.terminate()
        out, err = p.communicate(timeout=timeout)
        if not out.strip():
            raise RuntimeError("probe printed nothing: %s" % err[-500:])
        return json.loads(out)

    def ns_run(self, cmd, timeout=60, check=False, stdin_text=None):
        return subprocess.run(["ip", "netns", "exec", self.ns] + list(cmd), capture_output=True, text=True,
                              timeout=timeout, check=check, input=stdin_text)

    def api(self, method, path, body=None, timeout=30, role="admin"):
        """REST call to hybridlbd (it listens inside the namespace, HTTPS with the emulation's
        CA, the role's token; role None: no token): (status, parsed JSON or text)."""
        auth = api_curl(self.tag, role) if role else ["--cacert", os.path.join(tlsdir(self.tag), "ca.pem")]
        cmd = ["curl", "-s", "-m", str(timeout), "-X", method, "-w", "\n%{http_code}"] + auth + [DAEMON_URL + path]
        data = None
        if body is not None:
            # on stdin, not argv: a 1,000-VIP document exceeds the argument-size limit
            data = body if isinstance(body, str) else json.dumps(body)
            cmd += ["-H", "Content-Type: application/json", "--data-binary", "@-"]
        r = self.ns_run(cmd, timeout=timeout + 5, stdin_text=data)
        text, _, code = r.stdout.rpartition("\n")
        try:
            return int(code), json.loads(text) if text.strip() else None
        except ValueError:
            return int(code or 0), text

    @property
    def ca(self):
        """The emulation's CA (PEM): every management API's certificate is signed by it."""
        return os.path.join(tlsdir(self.tag), "ca.pem")

    def webview_url(self, role="viewer"):
        """The daemon's live web view with the role's token in the fragment (the page sends it to the API)."""
        with open(os.path.join(tlsdir(self.tag), role + ".token")) as f:
            return DAEMON_URL + "/ui/#token=" + f.read().strip()

    def promql(self, query):
        """An instant query to the emulation's Prometheus: [(labels, value)]."""
        import hlb_prometheus
        return hlb_prometheus.query(self.ns_run, query)

    def cli(self, *args):
        t = tlsdir(self.tag)
        return self.ns_run([CLI_BIN, "--url", DAEMON_URL, "--ca", os.path.join(t, "ca.pem"),
                            "--token-file", os.path.join(t, "admin.token")] + list(args)).stdout

    def ofctl(self, bridge, *args):
        return self.ns_run(["ovs-ofctl", "-O", "OpenFlow15"] + [args[0], "unix:%s/%s.mgmt" % (
            self.fab["ovs"]["rundir"], bridge)] + list(args[1:]), check=True).stdout

    def smux_metrics(self, smux_id):
        url = [s for s in self.fab["smuxes"] if s["id"] == smux_id][0]["controlUrl"]
        return self.ns_run(["curl", "-s", "-m", "3"] + mgmt_curl(self.tag) + [url + "/metrics"]).stdout

    def agent_stats(self, host):
        return json.loads(self.ns_run(["curl", "-s", "-m", "3"] + mgmt_curl(self.tag) + [self.fab["hosts"][host]["agentUrl"]
                                                                                     + "/stats"]).stdout)

    def smux_pid(self, smux_id):
        with open(os.path.join(self.dir, "smux-%s.pid" % smux_id)) as f:
            return int(f.read())

    def kill_smux(self, smux_id, sig=signal.SIGKILL):
        pid = self.smux_pid(smux_id)
        kill_recorded([e for e in self.pids.entries() if e["pid"] == pid], sig)

    def standby_smuxes(self):
        """SMuxes of the topology that hlbemu start --standby-smuxes left unstarted (add_smux starts them)."""
        path = os.path.join(self.dir, "standby-smuxes.json")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [s for s in json.load(f) if not os.path.exists(os.path.join(self.dir, "smux-%s.pid" % s))]

    def add_smux(self, smux_id):
        """Starts a standby SMux and its FRR supervisor: a new SMux joins (it announces the VIP
        aggregates once healthy, and hybridlbd learns it from the route server)."""
        if smux_id not in self.standby_smuxes():
            raise ValueError("add_smux: %s is not a standby SMux of %s (%s)" % (smux_id, self.tag, self.standby_smuxes()))
        p = self.restart_smux(smux_id)
        with open(os.path.join(self.dir, "frr-supervisor-%s.cmd" % smux_id)) as f:
            sup = json.load(f)
        out = open(os.path.join(self.dir, "logs", "frr-%s.log" % smux_id), "a")
        self.popen(smux_id, sup, what="frr-supervisor " + smux_id, stdout=out, stderr=subprocess.STDOUT)
        out.close()
        return p

    def restart_smux(self, smux_id):
        """A new SMux process with the same arguments; the FRR supervisor follows the pidfile."""
        with open(os.path.join(self.dir, "smux-%s.cmd" % smux_id)) as f:
            cmd = json.load(f)
        shutil.rmtree("/var/run/dpdk/" + [c for c in cmd if c.startswith("--file-prefix=")][0].split("=", 1)[1],
                      ignore_errors=True)
        out = open(os.path.join(self.dir, "logs", "smux-%s.log" % smux_id), "a")
        p = self.popen(smux_id, cmd, what="smux " + smux_id, stdout=out, stderr=subprocess.STDOUT)
        out.close()
        with open(os.path.join(self.dir, "smux-%s.pid" % smux_id), "w") as f:
            f.write("%d\n" % p.pid)
        return p

    def recorded_pids(self, what):
        """Live PIDs this emulation recorded as `what` (prefix match), newest last."""
        return [e["pid"] for e in self.pids.entries()
                if e["what"].startswith(what) and proc_start_time(e["pid"]) == e["start"]]

    def signal_recorded(self, what, sig):
        return kill_recorded([e for e in self.pids.entries() if e["what"].startswith(what)], sig)

    def kill_agent(self, host, sig=signal.SIGKILL):
        return self.signal_recorded("agent " + host, sig)

    def restart_agent(self, host):
        """A new host agent with the same arguments (the daemon polls its health endpoint)."""
        with open(os.path.join(self.dir, "agent-%s.cmd" % host)) as f:
            cmd = json.load(f)
        out = open(os.path.join(self.dir, "logs", "agent-%s.log" % host), "a")
        p = self.popen(host, cmd, what="agent " + host, mount=True, stdout=out, stderr=subprocess.STDOUT)
        out.close()
        return p

    def restart_route_server(self, timeout=30):
        """Stops the route-server FRR (zebra, bgpd: SIGTERM, by recorded PID) and starts it again
        with the same configuration; returns once its vty answers."""
        for what in ("route server reaper", "route server bgpd", "route server zebra", "route-server"):
            self.signal_recorded(what, signal.SIGKILL if what.endswith("reaper") else signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while self.recorded_pids("route server b") or self.recorded_pids("route server z"):
            if time.monotonic() > deadline:
                raise RuntimeError("route server did not stop")
            time.sleep(0.05)
        for sock in ("bgpd.vty", "zebra.vty", "zserv.api"):
            try:
                os.unlink(os.path.join(self.fab["routeServer"]["vtyDir"], sock))
            except FileNotFoundError:
                pass
        out = open(os.path.join(self.dir, "logs", "route-server-restart.log"), "a")
        p = subprocess.Popen(["ip", "netns", "exec", self.ns, PY, os.path.abspath(__file__), "_route-server",
                              "--tag", self.tag], stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        out.close()
        self.pids.add(p.pid, "route-server")
        while not os.path.exists(os.path.join(self.fab["routeServer"]["vtyDir"], "bgpd.vty")):
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("route server did not start again (see logs/route-server-restart.log)")
            time.sleep(0.05)
        return p

    def restart_vswitchd(self, timeout=60):
        """ovs-vswitchd killed and started again: every OpenFlow flow and group is gone, the bridges'
        internal ports are new. The emulation then puts back what the fabric's own routing owns
        (underlay addresses, tunnel routes, fabric flows and groups; what a real fabric's BGP/ECMP
        restores); what hybridlbd owns is left to hybridlbd. Returns (seconds until the new
        ovs-vswitchd answered, seconds until the fabric's own part was back)."""
        d = self.fab["ovs"]["rundir"]
        t0 = time.monotonic()
        self.signal_recorded("ovs-vswitchd", signal.SIGKILL)
        while self.recorded_pids("ovs-vswitchd"):
            time.sleep(0.02)
        for f in os.listdir(d):
            if f.endswith(".mgmt") or f.startswith("ovs-vswitchd."):
                try:
                    os.unlink(os.path.join(d, f))
                except FileNotFoundError:
                    pass
        out = open(os.path.join(d, "ovs-vswitchd.restart.log"), "a")
        p = subprocess.Popen(["ip", "netns", "exec", self.ns, "ovs-vswitchd", "unix:%s/db.sock" % d,
                              "--pidfile=%s/ovs-vswitchd.pid" % d, "--log-file=%s/ovs-vswitchd.log" % d],
                             stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                             env=dict(os.environ, OVS_RUNDIR=d, OVS_DBDIR=d, OVS_LOGDIR=d))
        out.close()
        self.pids.add(p.pid, "ovs-vswitchd")
        bridges = [s["bridge"] for s in self.fab["switches"].values()] + (
            [self.fab["border"]["bridge"]] if self.fab.get("border") else [])
        deadline = time.monotonic() + timeout
        while not all(os.path.exists("%s/%s.mgmt" % (d, b)) for b in bridges):
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("ovs-vswitchd did not come back (%s/ovs-vswitchd.log)" % d)
            time.sleep(0.05)
        answered = time.monotonic() - t0
        reprogram_fabric(self.tag)
        return answered, time.monotonic() - t0

    def service_pid(self, host):
        for e in self.pids.entries():
            if e["what"] == "http " + host and proc_start_time(e["pid"]) == e["start"]:
                return e["pid"]
        return None

    def stop_service(self, host):
        pid = self.service_pid(host)
        if pid:
            os.kill(pid, signal.SIGTERM)

    def start_service(self, host):
        return self.popen(host, [PY, HTTP_SERVER, "--name", host, "--port", "80"], what="http " + host,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def fail_switch(self, sid):
        set_switch(self.tag, sid, False)

    def recover_switch(self, sid):
        set_switch(self.tag, sid, True)

    def daemon_start(self, extra_args=()):
        return daemon_start(self.tag, extra_args)

    def set_daemon_intervals(self, reconcile_ms, stats_ms):
        """hybridlbd's reconcile and statistics periods (its config file; read when it starts)."""
        conf_path = os.path.join(self.dir, "hybridlbd.json")
        with open(conf_path) as f:
            conf = json.load(f)
        conf["intervals"] = {"reconcileMs": reconcile_ms, "statsMs": stats_ms}
        with open(conf_path, "w") as f:
            json.dump(conf, f)

    def daemon_stop(self, sig=signal.SIGTERM):
        daemon_stop(self.tag, sig)


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
