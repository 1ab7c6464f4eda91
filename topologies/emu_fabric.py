"""Starting one emulation (`Emulation`): the private ovs-vswitchd, Mininet's hosts, the management
bridge, the fabric's flows, the DIP services and host agents, the SMuxes with their FRR, the route
server, TLS and Prometheus; and the route-server process."""
import ipaddress
import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

from emu_base import (
    AGENT, AGENT_BUILD, AGENT_PORT, DAEMON_HOST, DAEMON_PORT, FRR_SUPERVISOR, HLB_CERTS,
    HTTP_SERVER, PY, PidLog, cookie_document, SMUX_BIN, SMUX_CONTROL_PORT, log, netns, rundir, sh, tlsdir, wait_for)


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
            cmd += ["--cookie-config", cookie_document(self.dir, nid)]
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


