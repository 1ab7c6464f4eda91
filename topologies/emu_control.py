"""Acting on a running emulation: stopping it (exactly the PIDs it recorded), failing and
recovering switches, reprogramming the fabric, starting and stopping hybridlbd in it, and `Emu`,
the handle the integration tests and experiments drive it with."""
import json
import os
import shutil
import selectors
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from emu_base import (
    CLI_BIN, DAEMON_BIN, DAEMON_PORT, DAEMON_URL, HERE, HLB_CERTS, HTTP_SERVER, PY, QUIC_PORT, QUIC_SERVER, PidLog,
    RECONVERGE_PARALLEL, cookie_document, end_recorded_entries, kill_recorded, netns, proc_start_time, rundir, sh, tlsdir)


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


def quic_label(vip=None, host=None):
    """The PID log's label of a QUIC server (`quic <vip> <host>`), or of a VIP's (`quic <vip>`),
    or of all (`quic`)."""
    return " ".join(["quic"] + [x for x in (vip, host) if x])


def load_fabric(tag):
    with open(os.path.join(rundir(tag), "fabric.json")) as f:
        return json.load(f)


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
    end_recorded_entries(entries, sig, grace=timeout)
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

    def start_quic_servers(self, vip, hosts, port=QUIC_PORT, idle_timeout=120.0, timeout=60.0):
        """The Cheetah QUIC server (smux/agent/quic_server.py) on each DIP host of `hosts`, bound
        to vip:port (UDP), its connection ids carrying the host's server id and the VIP's key from
        the host agent's cookie document. Waits (up to `timeout` s) until hybridlbd has written
        each host's document with the VIP (it does once the host is in the VIP's pool: ids issued
        before would carry no server id the SMuxes know). `idle_timeout` (s) must outlast every
        client's wait for an answer: QUIC takes the smaller of both sides' idle timeouts, and a
        connection that ends idle reads as closed, not stalled. Its certificate names the VIP
        (hlb-certs, under the emulation's CA). Returns {host: Popen} once each server listens;
        the PIDs are recorded as `quic <vip> <host>` (`stop_quic_servers`, and stop, end them)."""
        def missing():
            out = []
            for h in hosts:
                try:
                    with open(cookie_document(self.dir, h)) as f:
                        if any(v.get("prefix") == vip + "/32" for v in json.load(f).get("vips", [])):
                            continue
                except (OSError, ValueError):
                    pass
                out.append(h)
            return out
        deadline = time.monotonic() + timeout
        while missing():
            if time.monotonic() > deadline:
                raise RuntimeError("the cookie documents of %s do not name %s after %g s"
                                   % (", ".join(missing()), vip, timeout))
            time.sleep(0.2)
        cert = os.path.join(tlsdir(self.tag), "quic-" + vip)
        if not os.path.exists(cert + ".pem"):
            sh(["bash", HLB_CERTS, tlsdir(self.tag), "server", "quic-" + vip, "--ip", vip])
        procs = {}
        for h in hosts:
            err = open(os.path.join(self.dir, "logs", "quic-%s.log" % h), "a")
            procs[h] = self.popen(h, [PY, QUIC_SERVER, "--vip", vip, "--port", str(port), "--idle-timeout",
                                      str(idle_timeout), "--cookie-config", cookie_document(self.dir, h),
                                      "--cert", cert + ".pem", "--key", cert + ".key"],
                                  what=quic_label(vip, h), stderr=err)
            err.close()
        deadline = time.monotonic() + timeout
        for h, p in procs.items():      # its one stdout line: {"event": "ready", ...}
            with selectors.DefaultSelector() as sel:
                sel.register(p.stdout, selectors.EVENT_READ)
                line = p.stdout.readline() if sel.select(max(0.0, deadline - time.monotonic())) else ""
            if not line.strip():
                why = "not listening after %g s" % timeout if p.poll() is None else "exited with %s" % p.wait()
                for other in procs:
                    self.end_recorded(quic_label(vip, other))
                raise RuntimeError("QUIC server for %s on %s %s (logs/quic-%s.log)" % (vip, h, why, h))
        return procs

    def stop_quic_servers(self, vip=None, grace=5.0):
        """Ends the QUIC servers of `vip` (None: of every VIP); see end_recorded."""
        return self.end_recorded(quic_label(vip), grace)

    def end_recorded(self, label, grace=5.0):
        """SIGTERM to the recorded processes labelled `label` or `label <more>`, SIGKILL (by PID)
        to those still alive `grace` s later; returns once all are gone (or 2 s after the
        SIGKILL), with the number it signalled."""
        entries = [e for e in self.pids.entries() if e["what"] == label or e["what"].startswith(label + " ")]
        return end_recorded_entries(entries, grace=grace)

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


