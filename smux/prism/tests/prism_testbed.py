"""The Prism test topology, on namespaces and veths of our own:

    client ns --- router ns (the mux: IP-in-IP to the front end) --- front-end ns
    10.78.1.2     10.78.{1,2,10+i}.1                                  10.78.2.2
                        |--- backend i ns 10.78.(10+i).2   (i = 1..n)

The VIP is on lo of the front end and of every backend (the host agent puts it
there); every host runs the real host agent (XDP decapsulation), the front end's
with the Prism steering map pinned; replies go straight to the client (DSR).
The backends are hlb-prism-objserver (hand-offs on :9500, ordinary HTTP on
:8080 for the baselines).  By default the backends' agents guard unready flows
(--prism-backend) and the front end steers before the import
(--steer-before-import); before_import=False runs the GO round trip instead.
steering="fabric" (or pins=True, to switch modes later) runs mode b: the mux pins
each handed-off flow (its pin map,
written by tests/fabric_pins.py, which plays the controller's pin API on the front
end's loopback) and the front end runs --steering fabric.
mux="smux" puts a real hlb-smux in place of that test mux (its own namespace, on a veth
to the router, which routes the VIP to it): it hashes the VIP to the front end, and in mode
b fabric_pins.py puts each pin in the SMux's pin table (POST /pins) instead of the map.
steering="cookie" runs mode c on the real SMux (implies mux="smux"): the VIP is a cheetah
VIP whose pool is the front end (weight 1: every SYN) and the backends (weight 0: their
server ids decode, no SYN goes to them); every agent writes cookies (serverId FE_ID, or
BACKEND_ID_BASE + i) with its cookie state pinned, the backends' steering maps pinned
too, the backends run with --cookie-pin-dir/--prism-pin-dir and the front end with
--steering cookie.
trace=True: the front end and the backends log each hand-off's stages (fe.log,
b<i>.log in run_dir).  Every resource is ours and removed on close()."""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

TESTS = os.path.dirname(os.path.abspath(__file__))
PRISM = os.path.dirname(TESTS)
SMUX = os.path.dirname(PRISM)
sys.path.insert(0, os.path.join(SMUX, "tests"))
sys.path.insert(0, os.path.join(PRISM, "frontend"))
import agent_testlib as tl  # noqa: E402

BUILD = os.environ.get("HLB_PRISM_BUILD", os.path.join(SMUX, "build-prism"))
AGENT_BUILD = os.environ.get("HLB_AGENT_BUILD", os.path.join(SMUX, "build-agent"))
SMUX_BIN = os.path.join(os.environ.get("HLB_DP_BUILD", os.path.join(SMUX, "build")), "hlb-smux")
SMUX_IP, SMUX_GW, SMUX_MGMT = "10.78.0.2", "10.78.0.1", "127.0.0.1:9180"
VIP, VIP_PORT = "10.210.0.10", 80
CLIENT_IP, FE_IP = "10.78.1.2", "10.78.2.2"
CTL_PORT, HTTP_PORT, ADMIN_PORT, AGENT_PORT, PINS_PORT = 9500, 8080, 9400, 9100, 9600
# Mode c: the VIP's cookie key and the hosts' server ids (COOKIE-SPEC §4).
COOKIE_KEY = "8f14e45fceea167a5a36dedd4bea2543"
FE_ID, BACKEND_ID_BASE = 1, 10


def backend_ip(i):
    return f"10.78.{10 + i}.2"


def wait_until(pred, timeout, step=0.05, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


def default_rules(n):
    return {"backends": {f"b{i}": {"address": backend_ip(i), "controlPort": CTL_PORT}
                         for i in range(1, n + 1)},
            "rules": [{"name": "all", "priority": 0, "match": {},
                       "split": {f"b{i}": 1 for i in range(1, n + 1)}}]}


class Testbed:
    def __init__(self, n_backends=2, rules=None, frontend=True, fe_args=(), before_import=True,
                 guard=None, trace=False, steering="agent", pins=None, mux="bpf"):
        self.tag = tl.unique("")
        self.steering = steering
        self.cookies = steering == "cookie"
        self.mux = "smux" if self.cookies else mux
        self.smux_prefix = None
        self.pins = steering == "fabric" if pins is None else pins   # the mux's pin map
        self.before_import = before_import
        self.guard = before_import if guard is None else guard   # backends' --prism-backend
        self.trace = trace
        self.procs = []        # (ns, Popen), stopped in reverse order
        self.nss = []
        self.backends = {}
        self.bpffs = None
        self.run_dir = tempfile.mkdtemp(prefix="hlb-prism-")
        try:
            self._build(n_backends, rules, frontend, fe_args)
        except BaseException:
            self.close()
            raise

    def _ns(self, role):
        ns = tl.Netns(f"hlbpr-{role}-{self.tag}")
        self.nss.append(ns)
        return ns

    def _link(self, host, host_if, host_ip, rt_if, rt_ip):
        tl.veth_pair(self.router, rt_if, f"{rt_ip}/24", host, host_if, f"{host_ip}/24")
        host.run(["ip", "route", "add", "default", "via", rt_ip])

    def _build(self, n, rules, frontend, fe_args):
        t = self.tag
        self.client = self._ns("cl")
        self.router = self._ns("rt")
        self.fe = self._ns("fe")
        for key in ("net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0",
                    "net.ipv4.conf.default.rp_filter=0"):
            self.router.run(["sysctl", "-qw", key])
        self.if_client, self.if_rt_client = f"pc{t}", f"prc{t}"
        self.if_fe, self.if_rt_fe = f"pf{t}", f"prf{t}"
        self._link(self.client, self.if_client, CLIENT_IP, self.if_rt_client, "10.78.1.1")
        self._link(self.fe, self.if_fe, FE_IP, self.if_rt_fe, "10.78.2.1")
        self.backend_ns, self.if_backend, self.if_rt_backend = {}, {}, {}
        for i in range(1, n + 1):
            ns = self._ns(f"b{i}")
            self.backend_ns[i], self.if_backend[i], self.if_rt_backend[i] = ns, f"pb{i}{t}", f"prb{i}{t}"
            self._link(ns, self.if_backend[i], backend_ip(i), self.if_rt_backend[i], f"10.78.{10 + i}.1")
        self.bpffs = tempfile.mkdtemp(prefix="hlb-prism-bpf-")
        tl.run(["mount", "-t", "bpf", "bpf", self.bpffs])
        self.mux_pins = os.path.join(self.bpffs, "mux_pins")
        if self.mux == "smux":
            self.start_smux()
        else:
            self.router.run(["ip", "route", "add", f"{VIP}/32", "via", FE_IP])
            pin_args = [self.mux_pins, self.if_rt_client, "10.78.0.1"] if self.pins else []
            self.start(self.router, [os.path.join(BUILD, "prism-test-mux"),
                                     os.path.join(BUILD, "mux_encap.bpf.o"), self.if_rt_fe, VIP,
                                     "10.78.2.1", FE_IP, *pin_args], ready_line=True)
        self.start_agent(self.fe, self.if_fe, FE_IP, prism=True, server_id=FE_ID)
        for i in range(1, n + 1):
            self.start_agent(self.backend_ns[i], self.if_backend[i], backend_ip(i),
                             prism_backend=self.guard, server_id=BACKEND_ID_BASE + i)
            if self.cookies:
                # The backend's host re-encapsulates handed-back flows to the front end
                # with XDP_TX (see start_smux).
                self.router_xdp_pass(self.if_rt_backend[i])
            self.start_backend(i)
        wait_until(lambda: os.path.exists(os.path.join(self.bpffs, "hlb_prism_flows")), 10,
                   what="the front-end agent's pinned steering map")
        # The map is pinned at load; the program is attached after (slowly on a busy host).
        hosts = [(self.fe, self.if_fe)] + [(self.backend_ns[i], self.if_backend[i]) for i in self.backend_ns]
        for ns, ifname in hosts:
            wait_until(lambda ns=ns, ifname=ifname: "xdp" in ns.run(["ip", "-d", "link", "show", ifname]).stdout,
                       30, what=f"the agent's XDP program on {ifname}")
        for ns in [self.fe] + list(self.backend_ns.values()):
            wait_until(lambda ns=ns: "10.210.0.10" in ns.run(["ip", "addr", "show", "lo"]).stdout,
                       10, what=f"the VIP on lo of {ns.name}")
        if frontend:
            self.start_frontend(rules or default_rules(n), fe_args)

    def start_smux(self):
        """hlb-smux in a namespace of its own on a veth to the router (af_packet), the VIP
        routed to it, hashing the VIP to the front end (IP-in-IP, the router its gateway)."""
        self.smux_ns = self._ns("sm")
        self.if_rt_smux, self.if_smux = f"prs{self.tag}", f"ps{self.tag}"
        tl.veth_pair(self.router, self.if_rt_smux, f"{SMUX_GW}/24", self.smux_ns, self.if_smux, None)
        self.smux_ns.run(["sysctl", "-qw", f"net.ipv6.conf.{self.if_smux}.disable_ipv6=1"])
        gw_mac = self.router.run(["cat", f"/sys/class/net/{self.if_rt_smux}/address"]).stdout.strip()
        self.smux_prefix = f"hlbpr{self.tag}"
        eal = ["--no-huge", "--no-pci", "-m", "128", "--no-shconf", "--no-telemetry",
               f"--file-prefix={self.smux_prefix}", "-l", "0", "--log-level=warning",
               "--vdev", f"net_af_packet0,iface={self.if_smux}"]
        self.start(self.smux_ns, [SMUX_BIN, *eal, "--", "--ip", SMUX_IP, "--gateway-mac", gw_mac,
                                  "--mgmt", SMUX_MGMT, "--idle-sleep-us", "200"], ready_line=True)
        if self.cookies:
            # Mode c: the front end takes every SYN; the backends are servers of the pool
            # (their ids decode) that get no new connection (weight 0).
            dips = [{"ip": FE_IP, "serverId": FE_ID, "weight": 1}] + [
                {"ip": backend_ip(i), "serverId": BACKEND_ID_BASE + i, "weight": 0}
                for i in range(1, len(self.if_backend) + 1)]
            extra = {"affinity": "cheetah", "cookieKey": COOKIE_KEY}
        else:
            dips, extra = [{"ip": FE_IP}], {}
        table = {"version": 1, "vips": [{"vip": VIP, "aggregate": "10.210.0.0/24", "selection": "crc32",
                                         **extra, "ports": [{"proto": "tcp", "port": VIP_PORT,
                                                             "dips": dips}]}]}
        status, doc = self.smux_api("PUT", "/table", table)
        if status != 200:
            raise RuntimeError(f"the SMux refused the table: {status} {doc}")
        self.router.run(["ip", "route", "add", f"{VIP}/32", "via", SMUX_IP])
        # The front-end host's agent sends re-encapsulated frames back with XDP_TX, which a
        # veth delivers only to a peer with XDP or GRO on (the BPF mux's XDP program is there
        # in the other mode): an XDP_PASS program, as on the backends' links.  GRO would merge
        # the tunnelled segments into super-packets: with it, mode a's 2 MB responses stalled
        # and mode c lost a client's retransmission for seconds.
        self.router_xdp_pass(self.if_rt_fe)

    def router_xdp_pass(self, ifname):
        """tests/mux_encap.bpf.c's router_xdp_pass on a router link: NAPI for XDP_TX frames."""
        self.router.run(["ip", "link", "set", "dev", ifname, "xdpdrv", "obj",
                         os.path.join(BUILD, "mux_encap.bpf.o"), "sec", "xdp"])

    def smux_api(self, method, path, body=None):
        """(status, JSON) from the SMux's control API, inside its namespace."""
        return self.http_in(self.smux_ns, f"http://{SMUX_MGMT}{path}", method, body)

    def start(self, ns, cmd, ready_line=False, **kw):
        p = ns.popen(cmd, stdout=subprocess.PIPE if ready_line else subprocess.DEVNULL,
                     stderr=kw.pop("stderr", subprocess.DEVNULL), text=True, **kw)
        self.procs.append((ns, p))
        if ready_line:
            line = p.stdout.readline()
            if not line:
                raise RuntimeError(f"{cmd[0]} did not start")
        return p

    def host_pin_dir(self, ns, kind):
        """Mode c: a bpffs directory of this host's own (kind: "cookie" or "steer")."""
        d = os.path.join(self.bpffs, f"{kind}-{ns.name}")
        os.makedirs(d, exist_ok=True)
        return d

    def wait_cookies(self, ns):
        """Until the agent of ns encodes cookies (its loader applied the configuration)
        and has its cookie maps pinned."""
        pinned = os.path.join(self.host_pin_dir(ns, "cookie"), "hlb_cookie_host")
        wait_until(lambda: os.path.exists(pinned) and self.http_in(
            ns, f"http://127.0.0.1:{AGENT_PORT}/cookie", "GET")[1].get("enabled"), 30,
            what=f"cookies on the agent of {ns.name}")

    def start_agent(self, ns, iface, ip, prism=False, prism_backend=False, server_id=None):
        cmd = [sys.executable, os.path.join(SMUX, "agent", "hlb_agent.py"), "--iface", iface,
               "--local-ip", ip, "--vip", VIP, "--allow-mux", "10.78.0.0/16", "--decap", "xdp",
               "--listen", f"127.0.0.1:{AGENT_PORT}", "--build-dir", AGENT_BUILD]
        if prism:
            cmd += ["--prism-pin-dir", self.bpffs]
        elif self.cookies:
            cmd += ["--prism-pin-dir", self.host_pin_dir(ns, "steer")]
        if prism_backend:
            cmd += ["--prism-backend"]
        if self.cookies:
            cfg = os.path.join(self.run_dir, f"cookie-{ns.name}.json")
            with open(cfg, "w") as f:
                json.dump({"serverId": server_id, "key": COOKIE_KEY}, f)
            cmd += ["--cookie-config", cfg, "--pin-dir", self.host_pin_dir(ns, "cookie")]
        return self.start(ns, cmd)

    def start_backend(self, i, extra=()):
        ns = self.backend_ns[i]
        if self.trace:
            extra = ("--trace", *extra)
        log = open(os.path.join(self.run_dir, f"b{i}.log"), "a") if self.trace else subprocess.DEVNULL
        if self.cookies:
            self.wait_cookies(ns)
            wait_until(lambda: os.path.exists(os.path.join(self.host_pin_dir(ns, "steer"), "hlb_prism_flows")),
                       30, what=f"the agent's pinned steering map in {ns.name}")
            extra = ("--cookie-pin-dir", self.host_pin_dir(ns, "cookie"),
                     "--prism-pin-dir", self.host_pin_dir(ns, "steer"), *extra)
        p = self.start(ns, [os.path.join(BUILD, "hlb-prism-objserver"), "--ctl",
                            f"{backend_ip(i)}:{CTL_PORT}", "--http", f"{backend_ip(i)}:{HTTP_PORT}",
                            "--name", f"b{i}", *extra], ready_line=True, stderr=log)
        self.backends[i] = p
        return p

    def start_frontend(self, rules, fe_args=()):
        path = os.path.join(self.run_dir, "rules.json")
        with open(path, "w") as f:
            json.dump(rules, f)
        self.fe_log = open(os.path.join(self.run_dir, "fe.log"), "w")
        if self.steering == "fabric":
            self.start_pins()
            fe_args = ("--steering", "fabric", "--controller", f"http://127.0.0.1:{PINS_PORT}", *fe_args)
        if self.cookies:
            self.wait_cookies(self.fe)
            fe_args = ("--steering", "cookie", "--cookie-pin-dir", self.host_pin_dir(self.fe, "cookie"),
                       *fe_args)
        fe_args = (*(["--steer-before-import"] if self.before_import else []),
                   *(["--trace"] if self.trace else []), *fe_args)
        self.fe_proc = self.start(self.fe, [sys.executable, os.path.join(PRISM, "frontend", "prism_fe.py"),
                                            "--listen", f"{VIP}:{VIP_PORT}", "--rules", path,
                                            "--prism-pin-dir", self.bpffs, "--build-dir", BUILD,
                                            "--admin", f"127.0.0.1:{ADMIN_PORT}", *fe_args],
                                  stderr=self.fe_log)
        names = list(rules["backends"])
        wait_until(lambda: all(b["up"] for b in self.fe_stats()["backends"].values())
                   if self.fe_alive() else None, 15, what="the front end with every backend up")
        return names

    def start_pins(self):
        """The controller's pin API in miniature (tests/fabric_pins.py), on the front end's loopback."""
        fabric = ["--smux", SMUX_MGMT, "--smux-netns", self.smux_ns.name] if self.mux == "smux" \
            else ["--map", self.mux_pins]
        self.pins_proc = self.start(self.fe, [sys.executable, os.path.join(TESTS, "fabric_pins.py"), "--listen",
                                              f"127.0.0.1:{PINS_PORT}", "--vip", VIP, "--rules",
                                              os.path.join(self.run_dir, "rules.json"), *fabric,
                                              "--build-dir", BUILD], ready_line=True)

    def stop_pins(self):
        tl.stop_pid(self.pins_proc.pid)
        self.pins_proc.wait(5)

    def fe_alive(self):
        return self.fe_proc.poll() is None

    @staticmethod
    def http_in(ns, url, method, body=None):
        """(status, JSON) of an HTTP request made inside namespace ns (status 0: no answer)."""
        code = ("import sys,json,urllib.request,urllib.error\n"
                "req=urllib.request.Request(sys.argv[1],method=sys.argv[2],data=sys.argv[3].encode() or None)\n"
                "try:\n r=urllib.request.urlopen(req,timeout=5); print(r.status); print(r.read().decode())\n"
                "except urllib.error.HTTPError as e:\n print(e.code); print(e.read().decode())\n"
                "except OSError as e:\n print(0); print(json.dumps({'error':str(e)}))\n")
        out = ns.run([sys.executable, "-c", code, url, method, json.dumps(body) if body is not None else ""]).stdout
        status, _, rest = out.partition("\n")
        return int(status), json.loads(rest)

    def admin(self, method, path, body=None):
        """(status, JSON) from the front end's admin API, inside the front-end ns."""
        return self.http_in(self.fe, f"http://127.0.0.1:{ADMIN_PORT}{path}", method, body)

    def fe_stats(self):
        status, doc = self.admin("GET", "/stats")
        return doc if status == 200 else {"backends": {"-": {"up": False}}}

    def shape(self, ns, iface, rate_mbit):
        """Egress of iface limited to rate_mbit (tbf; this kernel has no netem)."""
        ns.run(["tc", "qdisc", "replace", "dev", iface, "root", "tbf", "rate", f"{rate_mbit}mbit",
                "burst", "32kb", "latency", "100ms"])

    def unshape(self, ns, iface):
        ns.run(["tc", "qdisc", "del", "dev", iface, "root"], check=False)

    def lossy(self, ns, iface, direction="egress"):
        """1% random loss on iface (tests/loss.bpf.c, in place of netem)."""
        ns.run(["tc", "qdisc", "replace", "dev", iface, "clsact"])
        ns.run(["tc", "filter", "replace", "dev", iface, direction, "pref", "1", "bpf", "da",
                "obj", os.path.join(BUILD, "loss.bpf.o"), "sec", "tc"])

    def lossless(self, ns, iface, direction="egress"):
        ns.run(["tc", "filter", "del", "dev", iface, direction, "pref", "1"], check=False)

    def client_run(self, args, timeout=300, check=True):
        """Runs tests/prism_client.py in the client ns; returns its JSON."""
        r = self.client.run([sys.executable, os.path.join(TESTS, "prism_client.py"), *args],
                            check=False, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"client {args} failed ({r.returncode}): {r.stderr[-2000:]}")
        return json.loads(r.stdout) if r.stdout.strip() else {}

    def close(self):
        for ns, p in reversed(self.procs):
            tl.stop_pid(p.pid)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                pass
        self.procs = []
        if self.smux_prefix:
            tl.run(["rm", "-rf", f"/var/run/dpdk/{self.smux_prefix}"], check=False)
            self.smux_prefix = None
        if self.bpffs:
            tl.run(["umount", self.bpffs], check=False)
            os.rmdir(self.bpffs)
            self.bpffs = None
        for ns in reversed(self.nss):
            ns.close()
        self.nss = []
