"""The host agent's reports to a real hlb-smux: closes of stateful Cheetah connections
(POST /cheetah/closed) and this host's load (POST /loads).

    client ns --(10.78.1.0/24)-- router ns --(10.78.2.0/24)-- DIP host ns
                                     |                        agent: XDP + tc + sockops
                              (10.78.3.0/24)                  VIP on lo, echo server
                                     |
                                 SMux ns: hlb-smux on af_packet (data 10.78.3.2,
                                 control API on the kernel's 10.78.3.3:9200)

The router sends the VIPs to the SMux, which tunnels each connection (IP-in-IP) to the
DIP host; the server answers directly (DSR). VIP_SF is cheetah-stateful, owned by this
SMux: its SYNs leave with the owner's hint, the agent takes it, and when the server's
socket closes (FIN both ways, or a reset), the agent reports the connection to the
owner, whose entry goes (/stats cookie.stateful). VIP_SL is a stateless cheetah VIP: its closes are not reported.
When the owner SMux restarts (its ConnTable empty), the agent sees its new boot id and
re-reports the open hinted connections (POST /cheetah/adopt): they go on.
"""
import json
import os
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent_testlib as tl  # noqa: E402
from agent_cookie_e2e import (AGENT, DIP, KEY, MGMT, PEERS, PORT, SERVER_ID,  # noqa: E402
                              CookieTopology, agent_err, mgmt, mgmt_ok, tl_wait, wait_for)

SMUX_BIN = os.path.join(os.environ.get("HLB_DP_BUILD", os.path.join(tl.SMUX_DIR, "build")), "hlb-smux")
VIP_SF, VIP_SL = "10.200.0.10", "10.200.0.11"
RST_PORT = 8081   # a server that reads until the client resets the connection
RST_SERVER = ("import socket\n"
              "l=socket.socket(); l.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
              f"l.bind(('0.0.0.0',{RST_PORT})); l.listen(4); print('ready',flush=True)\n"
              "while True:\n"
              " c,_=l.accept()\n"
              " try:\n"
              "  while c.recv(4096): pass\n"
              " except OSError: pass\n"
              " c.close()\n")
RST_CLIENT = ("import socket,struct,sys,time\n"
              f"s=socket.create_connection((sys.argv[1],{RST_PORT}),timeout=5); s.sendall(b'x'*100)\n"
              "time.sleep(0.3)\n"
              "s.setsockopt(socket.SOL_SOCKET,socket.SO_LINGER,struct.pack('ii',1,0)); s.close()\n")
ECHO_PORT = 8082  # an echo server for connections held open across an SMux restart
ECHO_SERVER = ("import socket,threading\n"
               "l=socket.socket(); l.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
               f"l.bind(('0.0.0.0',{ECHO_PORT})); l.listen(16); print('ready',flush=True)\n"
               "def echo(c):\n"
               " while True:\n"
               "  d=c.recv(4096)\n"
               "  if not d: break\n"
               "  c.sendall(d)\n"
               "while True:\n"
               " c,_=l.accept(); threading.Thread(target=echo,args=(c,),daemon=True).start()\n")
# Opens N connections to the VIP, one echo each, prints 'open'; on a line on stdin, one
# more echo on each (8 s to answer), prints the JSON list of which came back.
HOLD_CLIENT = ("import json,socket,sys\n"
               f"cs=[socket.create_connection((sys.argv[1],{ECHO_PORT}),timeout=5) for _ in range(int(sys.argv[2]))]\n"
               "for c in cs: c.sendall(b'one'); assert c.recv(16)==b'one'\n"
               "print('open',flush=True); sys.stdin.readline()\n"
               "ok=[]\n"
               "for c in cs:\n"
               " c.settimeout(8)\n"
               " try: c.sendall(b'two'); ok.append(c.recv(16)==b'two')\n"
               " except OSError: ok.append(False)\n"
               "print(json.dumps(ok),flush=True)\n")
ROUTER_S, SMUX_DATA, SMUX_CTL = "10.78.3.1", "10.78.3.2", "10.78.3.3"
SMUX_URL = f"https://{SMUX_CTL}:9200"
CERTS = os.path.join(tl.SMUX_DIR, "..", "app", "standalone", "deploy", "hlb-certs")


class ReportTopology(CookieTopology):
    """CookieTopology with a real hlb-smux in its own namespace instead of the TUN mux."""

    def __init__(self, tmp):
        super().__init__(tmp, offload=False)
        tag = self.cgroup_rel[len("hlb-ck-"):]
        self.smux = tl.Netns(f"hlb-cks-{tag}")
        self.if_rs, self.if_s = f"hlbx{tag}", f"hlby{tag}"
        tl.veth_pair(self.router, self.if_rs, f"{ROUTER_S}/24", self.smux, self.if_s, f"{SMUX_CTL}/24")
        for ns, dev in ((self.router, self.if_rs), (self.smux, self.if_s)):
            ns.run(["ip", "link", "set", dev, "mtu", "1600"])
            ns.run(["ethtool", "-K", dev, "tx", "off", "tso", "off", "gso", "off", "gro", "off"])
        self.router.run(["sysctl", "-qw", f"net.ipv4.conf.{self.if_rs}.rp_filter=0"])
        self.smux.run(["ip", "route", "add", "default", "via", ROUTER_S])
        for vip in (VIP_SF, VIP_SL):
            self.router.run(["ip", "route", "add", f"{vip}/32", "via", SMUX_DATA])
        self.prefix = f"hlbcks{tag}"
        # The control API off loopback is mutual TLS: the SMux's server certificate,
        # the agent's client certificate, one CA.
        self.certs = os.path.join(tmp, "certs")
        for args in (["ca"], ["server", "smux", "--ip", SMUX_CTL], ["client", "agent"]):
            subprocess.run([CERTS, self.certs] + args, check=True, capture_output=True)
        self.agent_tls = ["--smux-tls-cert", f"{self.certs}/agent.pem",
                          "--smux-tls-key", f"{self.certs}/agent.key", "--smux-tls-ca", f"{self.certs}/ca.pem"]

    def start_smux(self, adopt_grace="0"):
        gw_mac = self.router.run(["cat", f"/sys/class/net/{self.if_rs}/address"]).stdout.strip()
        p = self.start(self.smux, [SMUX_BIN, "--no-huge", "--no-pci", "-m", "128", "--no-shconf",
                                   "--no-telemetry", f"--file-prefix={self.prefix}", "-l", "0",
                                   "--log-level=warning", "--vdev", f"net_af_packet0,iface={self.if_s}",
                                   "--", "--ip", SMUX_DATA, "--gateway-mac", gw_mac,
                                   "--mgmt", f"{SMUX_CTL}:9200", "--idle-sleep-us", "500",
                                   "--stateful-adopt-grace", adopt_grace,
                                   "--tls-cert", f"{self.certs}/smux.pem", "--tls-key",
                                   f"{self.certs}/smux.key", "--tls-ca", f"{self.certs}/ca.pem"])
        ready = json.loads(p.stdout.readline() or "{}")
        assert ready.get("event") == "ready", p.stderr.read()
        return p

    def close(self):
        super().close()
        self.smux.close()
        subprocess.run(["rm", "-rf", f"/var/run/dpdk/{self.prefix}"], check=False)


def smux_api(t, method, path, body=None):
    code = ("import sys,ssl,urllib.request,urllib.error\n"
            "c=ssl.create_default_context(cafile=sys.argv[4]+'/ca.pem')\n"
            "c.load_cert_chain(sys.argv[4]+'/agent.pem',sys.argv[4]+'/agent.key')\n"
            "r=urllib.request.Request(sys.argv[1],data=sys.argv[3].encode() or None,method=sys.argv[2],"
            "headers={'Content-Type':'application/json'})\n"
            "try:\n o=urllib.request.urlopen(r,timeout=3,context=c); print(o.status); print(o.read().decode())\n"
            "except urllib.error.HTTPError as e:\n print(e.code); print(e.read().decode())\n")
    out = t.smux.run([sys.executable, "-c", code, f"{SMUX_URL}{path}", method,
                      json.dumps(body) if body is not None else "", t.certs]).stdout
    status, _, text = out.partition("\n")
    return int(status), json.loads(text)


def smux_table(version):
    def vip(addr, affinity):
        v = {"vip": addr, "aggregate": "10.200.0.0/24", "selection": "crc32", "affinity": affinity,
             "cookieKey": KEY, "mechanism": "rr",
             "ports": [{"proto": "tcp", "port": p, "dips": [{"ip": DIP, "serverId": SERVER_ID}]}
                       for p in (PORT, RST_PORT, ECHO_PORT)]}
        if affinity == "cheetah-stateful":
            v["statefulOwners"] = [SMUX_DATA]
        return v
    return {"version": version, "vips": [vip(VIP_SF, "cheetah-stateful"), vip(VIP_SL, "cheetah")]}


@pytest.fixture
def topo(tmp_path):
    if not os.access(SMUX_BIN, os.X_OK):
        pytest.fail(f"{SMUX_BIN} is not built (smux/README.md, Build)")
    t = ReportTopology(str(tmp_path))
    try:
        yield t
    finally:
        t.close()


def connect(t, vip):
    out = t.client.run([sys.executable, PEERS, "client", vip, str(PORT), "20000", t.if_c],
                       timeout=30).stdout
    res = json.loads(out)
    assert res["echo_ok"]
    return res["client_port"]


def smux_reporting(t, loads=True):
    """The SMux started with smux_table(1) (its process), and the path of a cookie file that
    names it as the owner and, with loads, as the SMux to report loads to."""
    smux = t.start_smux()
    assert smux_api(t, "PUT", "/table", smux_table(1))[0] == 200
    cfg = os.path.join(t.tmp, "cookie.json")
    with open(cfg, "w") as f:
        json.dump({"serverId": SERVER_ID, "key": KEY, "statefulOwners": [SMUX_URL],
                   **({"smuxes": [SMUX_URL]} if loads else {})}, f)
    return smux, cfg


def test_closes_free_the_owners_entries_and_loads_reach_the_smux(topo):
    t = topo
    _, cfg = smux_reporting(t)
    agent = t.start(t.dip, [sys.executable, AGENT, "--iface", t.if_d, "--local-ip", DIP,
                            "--vip", VIP_SF, "--vip", VIP_SL, "--allow-mux", SMUX_DATA,
                            "--decap", "xdp", "--listen", f"127.0.0.1:{MGMT}", "--cookie-config", cfg,
                            "--cgroup", t.cgroup_rel, "--stats-interval-ms", "100",
                            "--load-report-ms", "100", *t.agent_tls])
    assert tl_wait(lambda: mgmt_ok(t.dip)), agent_err(agent)
    server_report = os.path.join(t.tmp, "server.json")
    t.ready(t.start(t.dip, [sys.executable, PEERS, "server", str(PORT), server_report], cgroup=True),
            "server")
    t.ready(t.start(t.dip, [sys.executable, "-c", RST_SERVER], cgroup=True), "reset server")

    s0 = smux_api(t, "GET", "/stats")[1]["cookie"]["stateful"]
    ports = [connect(t, VIP_SF) for _ in range(3)]
    wait_for(server_report)
    assert tl_wait(lambda: smux_api(t, "GET", "/stats")[1]["cookie"]["stateful"]["released"]
                   - s0["released"] >= 3, timeout=10), smux_api(t, "GET", "/stats")[1]["cookie"]
    s1 = smux_api(t, "GET", "/stats")[1]["cookie"]["stateful"]
    assert s1["inserted"] - s0["inserted"] == 3, s1
    assert s1["released"] - s0["released"] == 3, s1
    assert s1["entries"] == s0["entries"], s1      # every entry of the three freed
    _, ck = mgmt(t.dip, "/cookie")
    assert ck["counters"]["syn_hint"] == 3 and ck["counters"]["close_reported"] == 3, ck
    _, st = mgmt(t.dip, "/stats")
    assert st["reports"]["closed"]["reported"] == 3 and st["reports"]["closed"]["failed"] == 0, st

    # Stateless cookies: the same connections, no hint, no report.
    for _ in range(2):
        connect(t, VIP_SL)
    time.sleep(1.0)
    _, ck = mgmt(t.dip, "/cookie")
    assert ck["counters"]["close_reported"] == 3 and ck["counters"]["syn_hint"] == 3, ck
    _, st = mgmt(t.dip, "/stats")
    assert st["reports"]["closed"]["reported"] == 3, st
    assert len(set(ports)) == 3

    # A connection the client resets: the server's socket closes on the RST, reported too.
    t.client.run([sys.executable, "-c", RST_CLIENT, VIP_SF], timeout=10)
    assert tl_wait(lambda: smux_api(t, "GET", "/stats")[1]["cookie"]["stateful"]["released"]
                   - s0["released"] >= 4, timeout=10), smux_api(t, "GET", "/stats")[1]["cookie"]
    s2 = smux_api(t, "GET", "/stats")[1]["cookie"]["stateful"]
    assert (s2["inserted"] - s0["inserted"], s2["entries"]) == (4, s0["entries"]), s2
    _, ck = mgmt(t.dip, "/cookie")
    assert ck["counters"]["close_reported"] == 4 and ck["counters"]["syn_hint"] == 4, ck
    _, st = mgmt(t.dip, "/stats")

    # Loads: every 100 ms, matched by the SMux's table (the DIP is in it).
    loads = st["reports"]["loads"]
    assert loads["reported"] >= 10 and loads["failed"] == 0 and loads["lastMatched"] == 1, loads
    text = t.dip.run([sys.executable, "-c", "import urllib.request; print(urllib.request."
                      f"urlopen('http://127.0.0.1:{MGMT}/metrics').read().decode())"]).stdout
    assert 'hlb_agent_smux_reports_total{kind="closed",result="reported"} 4.0' in text


def test_a_restarted_owner_gets_the_open_connections_back(topo):
    """The owner SMux is killed and started again with an empty ConnTable: the agent sees
    its new boot id, lists its open hinted connections and re-reports them
    (POST /cheetah/adopt); every connection held open across the restart answers again,
    on its server. While the restarted SMux holds its hints (--stateful-adopt-grace), a
    new connection is stateless."""
    t = topo
    smux, cfg = smux_reporting(t, loads=False)
    agent = t.start(t.dip, [sys.executable, AGENT, "--iface", t.if_d, "--local-ip", DIP,
                            "--vip", VIP_SF, "--allow-mux", SMUX_DATA, "--decap", "xdp",
                            "--listen", f"127.0.0.1:{MGMT}", "--cookie-config", cfg,
                            "--cgroup", t.cgroup_rel, "--stats-interval-ms", "100",
                            "--owner-check-ms", "200", *t.agent_tls])
    assert tl_wait(lambda: mgmt_ok(t.dip)), agent_err(agent)
    t.ready(t.start(t.dip, [sys.executable, "-c", ECHO_SERVER], cgroup=True), "echo server")
    n = 6
    client = t.start(t.client, [sys.executable, "-c", HOLD_CLIENT, VIP_SF, str(n)],
                     stdin=subprocess.PIPE)
    assert client.stdout.readline().strip() == "open", client.stderr.read()
    s1 = smux_api(t, "GET", "/stats")[1]["cookie"]["stateful"]
    assert (s1["inserted"], s1["entries"]) == (n, n), s1

    smux.kill()
    smux.wait()
    smux = t.start_smux(adopt_grace="30")
    assert smux_api(t, "PUT", "/table", smux_table(1))[0] == 200
    assert tl_wait(lambda: smux_api(t, "GET", "/stats")[1]["cookie"]["stateful"]["adopted"] >= n,
                   timeout=10), (smux_api(t, "GET", "/stats")[1]["cookie"], mgmt(t.dip, "/stats")[1])
    s2 = smux_api(t, "GET", "/stats")[1]["cookie"]["stateful"]
    assert (s2["adopted"], s2["entries"], s2["adopt_taken"]) == (n, n, 0), s2
    _, st = mgmt(t.dip, "/stats")
    assert st["reports"]["adopt"]["adopted"] == n and st["reports"]["adopt"]["taken"] == 0, st

    # a new connection while hints are held: placed, no index
    fresh = t.start(t.client, [sys.executable, "-c", HOLD_CLIENT, VIP_SF, "1"], stdin=subprocess.PIPE)
    assert fresh.stdout.readline().strip() == "open", fresh.stderr.read()
    s3 = smux_api(t, "GET", "/stats")[1]["cookie"]["stateful"]
    assert (s3["inserted"], s3["held_syns"], s3["entries"]) == (0, 1, n), s3

    client.stdin.write("go\n")
    client.stdin.flush()
    assert json.loads(client.stdout.readline()) == [True] * n, smux_api(t, "GET", "/stats")[1]
    s4 = smux_api(t, "GET", "/stats")[1]["cookie"]["stateful"]
    assert s4["hit"] >= n and s4["miss"] == s3["miss"], s4


def test_config_errors_name_the_field(tmp_path):
    sys.path.insert(0, os.path.join(tl.SMUX_DIR, "agent"))
    import cookie_config
    base = {"serverId": 5, "key": KEY}
    for extra, field in (({"statefulOwners": "http://10.0.0.1:9200"}, "statefulOwners"),
                         ({"statefulOwners": ["10.0.0.1:9200"]}, "statefulOwners[0]"),
                         ({"statefulOwners": ["ftp://10.0.0.1:9200"]}, "statefulOwners[0]"),
                         ({"statefulOwners": ["http://10.0.0.1:9200/x"]}, "statefulOwners[0]"),
                         ({"statefulOwners": ["http://10.0.0.1:99999"]}, "statefulOwners[0]"),
                         ({"statefulOwners": [f"http://10.0.0.{i}:1" for i in range(17)]},
                          "statefulOwners"),
                         ({"smuxes": ["http://10.0.0.1"]}, "smuxes[0]"),
                         ({"smuxes": [7]}, "smuxes[0]")):
        with pytest.raises(cookie_config.CookieConfigError) as e:
            cookie_config.parse(dict(base, **extra))
        assert str(e.value).startswith(field + ":"), (extra, str(e.value))
    good = cookie_config.parse(dict(base, statefulOwners=["http://10.0.0.1:9200/"],
                                    smuxes=["http://h:1"]))
    assert good["statefulOwners"] == ["http://10.0.0.1:9200"] and good["smuxes"] == ["http://h:1"]
    r = subprocess.run([sys.executable, AGENT, "--local-ip", "10.0.0.1", "--decap", "userspace",
                        "--load-report-ms", "5"], capture_output=True, text=True)
    assert r.returncode == 2 and "--load-report-ms: expected 10..60000" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, AGENT, "--local-ip", "10.0.0.1", "--decap", "userspace",
                        "--load-report-ms", "100"], capture_output=True, text=True)
    assert r.returncode == 2 and "--load-report-ms: needs --cookie-config" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, AGENT, "--local-ip", "10.0.0.1", "--decap", "userspace",
                        "--smux-tls-cert", "x.pem"], capture_output=True, text=True)
    assert r.returncode == 2 and "--smux-tls-ca: required with --smux-tls-cert" in r.stderr, r.stderr
