"""Cheetah cookies end to end: a real Linux TCP connection through the host agent.

    client ns --(10.78.1.0/24)-- router ns --(10.78.2.0/24)-- DIP host ns
                                 mux (TUN)                    agent: XDP + tc + sockops
                                                              VIP on lo, server

The client's segments to the VIP are routed into the router's TUN, where a small
mux (agent_cookie_peers.py) tunnels them (IP-in-IP) to the DIP host and decodes the
cookie in every non-SYN segment's TSecr with the reference model.  The server answers
directly (DSR) through the router, whose egress veth has offloads off, so every
segment's checksum is computed or checked in software before the client's
capture checks it.  With net.ipv4.tcp_timestamps=1 (per-connection random offsets),
and the DIP host's uplink offloads both off and on (TSO/GSO and checksum; the tc
program sees GSO super-packets either way):
  - every server segment on the wire carries the model's cookie, with a right checksum;
  - the mux decodes this host's server id from every client segment;
  - the server's kernel sees its own timestamps back (tcpi_rtt sane, no TSecr or
    PAWS rejections), and the accepted socket got the 25 s keep-alive;
  - a connection to the host's own address (no VIP) is left alone.
"""
import json
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "p4", "model"))
import agent_testlib as tl  # noqa: E402
import cheetah_cookie as cc  # noqa: E402

TESTS = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.join(TESTS, "agent_cookie_peers.py")
AGENT = os.path.join(tl.SMUX_DIR, "agent", "hlb_agent.py")
VIP, PORT, MGMT = "10.200.0.10", 8080, 9100
CLIENT, ROUTER_C, ROUTER_D, DIP = "10.78.1.2", "10.78.1.1", "10.78.2.1", "10.78.2.2"
SERVER_ID = 4321
KEY = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"


def cgroup2_root():
    """Where this host mounts the cgroup v2 hierarchy (hybrid layouts: .../unified)."""
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, where, kind = line.split()[:3]
            if kind == "cgroup2":
                return where
    raise RuntimeError("no cgroup2 mount")


def rx_packets(ns, ifname):
    """Frames ifname received, from the kernel's counters (a capture may miss some under load)."""
    link = json.loads(ns.run(["ip", "-j", "-s", "link", "show", "dev", ifname]).stdout)[0]
    return link["stats64"]["rx"]["packets"]


def netstat(ns, name):
    lines = ns.run(["cat", "/proc/net/netstat"]).stdout.splitlines()
    for head, vals in zip(lines[::2], lines[1::2]):
        keys = head.split()
        if name in keys:
            return int(vals.split()[keys.index(name)])
    raise KeyError(name)


def wait_for(path, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                try:
                    return json.load(f)
                except ValueError:
                    pass
        time.sleep(0.05)
    raise TimeoutError(path)


class CookieTopology:
    def __init__(self, tmp, offload):
        tag = tl.unique("")
        self.tmp = tmp
        self.client = tl.Netns(f"hlb-ckc-{tag}")
        self.router = tl.Netns(f"hlb-ckr-{tag}")
        self.dip = tl.Netns(f"hlb-ckd-{tag}")
        self.procs = []
        self.cgroup_rel = f"hlb-ck-{tag}"
        self.cgroup = os.path.join(cgroup2_root(), self.cgroup_rel)
        self.if_c, self.if_rc, self.if_rd, self.if_d = (f"hlbc{tag}", f"hlbr{tag}", f"hlbs{tag}",
                                                        f"hlbd{tag}")
        tl.veth_pair(self.client, self.if_c, f"{CLIENT}/24", self.router, self.if_rc, f"{ROUTER_C}/24")
        tl.veth_pair(self.router, self.if_rd, f"{ROUTER_D}/24", self.dip, self.if_d, f"{DIP}/24")
        for ns, dev in ((self.router, self.if_rd), (self.dip, self.if_d)):   # room for the tunnel
            ns.run(["ip", "link", "set", dev, "mtu", "1600"])
        self.client.run(["ip", "route", "add", "default", "via", ROUTER_C])
        self.dip.run(["ip", "route", "add", "default", "via", ROUTER_D])
        for ns, dev, gro in ((self.client, self.if_c, "off"), (self.router, self.if_rc, "on")):
            ns.run(["ethtool", "-K", dev, "tx", "off", "tso", "off", "gso", "off", "gro", gro])
        # On: the DIP host's stack hands super-packets and partial checksums to tc.
        self.offload = offload
        state = "on" if offload else "off"
        self.dip.run(["ethtool", "-K", self.if_d, "tx", state, "tso", state, "gso", state])
        for key in ("net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0",
                    f"net.ipv4.conf.{self.if_rd}.rp_filter=0"):
            self.router.run(["sysctl", "-qw", key])
        os.mkdir(self.cgroup)

    def start(self, ns, args, cgroup=False, **kw):
        cmd = ["ip", "netns", "exec", ns.name] + args
        if cgroup:   # the listener's sockets belong to the cgroup the agent watches
            cmd = ["sh", "-c", f'echo $$ > {self.cgroup}/cgroup.procs && exec "$@"', "sh"] + cmd
        p = tl.subprocess.Popen(cmd, stdout=tl.subprocess.PIPE, stderr=tl.subprocess.PIPE,
                                text=True, **kw)
        self.procs.append(p)
        return p

    def ready(self, p, what):
        line = p.stdout.readline()
        assert line.strip().startswith(("ready", "{")), f"{what} did not start: {p.stderr.read()}"

    def close(self):
        for p in reversed(self.procs):
            tl.stop_pid(p.pid)
        for ns in (self.client, self.router, self.dip):
            ns.close()
        try:
            os.rmdir(self.cgroup)
        except OSError:
            pass


def mgmt(ns, path, method="GET", body=None):
    code = ("import sys,urllib.request,urllib.error\n"
            "r=urllib.request.Request(sys.argv[1],data=sys.argv[3].encode() or None,method=sys.argv[2],"
            "headers={'Content-Type':'application/json'})\n"
            "try:\n o=urllib.request.urlopen(r,timeout=3); print(o.status); print(o.read().decode())\n"
            "except urllib.error.HTTPError as e:\n print(e.code); print(e.read().decode())\n")
    out = ns.run([sys.executable, "-c", code, f"http://127.0.0.1:{MGMT}{path}", method,
                  json.dumps(body) if body is not None else ""]).stdout
    status, _, text = out.partition("\n")
    return int(status), json.loads(text) if text.strip().startswith("{") else text


@pytest.fixture(params=["offload-off", "offload-on"])
def topo(request, tmp_path):
    t = CookieTopology(str(tmp_path), request.param == "offload-on")
    try:
        yield t
    finally:
        t.close()


@pytest.fixture
def plain(tmp_path):
    t = CookieTopology(str(tmp_path), False)
    try:
        yield t
    finally:
        t.close()


def start_agent(t, cfg, *extra):
    agent = t.start(t.dip, [sys.executable, AGENT, "--iface", t.if_d, "--local-ip", DIP,
                            "--vip", VIP, "--allow-mux", ROUTER_D, "--decap", "xdp",
                            "--listen", f"127.0.0.1:{MGMT}", "--cookie-config", cfg,
                            "--cgroup", t.cgroup_rel, "--stats-interval-ms", "100", *extra])
    assert tl_wait(lambda: mgmt_ok(t.dip)), agent_err(agent)
    return agent


def start_server_and_mux(t):
    server_report = os.path.join(t.tmp, "server.json")
    t.ready(t.start(t.dip, [sys.executable, PEERS, "server", str(PORT), server_report], cgroup=True),
            "server")
    mux_stats = os.path.join(t.tmp, "mux.json")
    mux = t.start(t.router, [sys.executable, PEERS, "mux", "hlbmux0", ROUTER_D, DIP, KEY,
                             str(SERVER_ID), mux_stats])
    t.ready(mux, "mux")
    t.router.run(["ip", "link", "set", "hlbmux0", "up"])
    t.router.run(["ip", "route", "add", f"{VIP}/32", "dev", "hlbmux0"])
    return server_report, mux, mux_stats


def test_cookie_connection_through_agent(topo):
    t = topo
    assert t.dip.run(["sysctl", "-n", "net.ipv4.tcp_timestamps"]).stdout.strip() == "1"
    cfg = os.path.join(t.tmp, "cookie.json")
    with open(cfg, "w") as f:
        json.dump({"serverId": SERVER_ID, "key": KEY}, f)
    start_agent(t, cfg)
    server_report, mux, mux_stats = start_server_and_mux(t)
    rejected = netstat(t.dip, "TSEcrRejected")
    paws = netstat(t.client, "PAWSEstab")

    rx = rx_packets(t.client, t.if_c)
    out = t.client.run([sys.executable, PEERS, "client", VIP, str(PORT), str(4 << 20), t.if_c],
                       timeout=60).stdout
    rx = rx_packets(t.client, t.if_c) - rx
    res = json.loads(out)
    assert res["echo_ok"]
    segs = [s for s in res["segments"] if s["client_port"] == res["client_port"]]
    assert len(segs) > 20
    cookie = cc.make_cookie("siphash13", cc.parse_key(KEY),
                            cc.tuple_bytes(VIP, PORT, CLIENT, res["client_port"]), SERVER_ID)
    assert all(s["csum_ok"] for s in segs), [s for s in segs if not s["csum_ok"]][:3]
    assert all(s["tsval"] is not None and cc.cookie_of(s["tsval"]) == cookie for s in segs)

    tl.stop_pid(mux.pid)
    m = wait_for(mux_stats)
    assert m["decoded"] > 5 and m["wrong_ident"] == 0, m

    rep = [r for r in wait_for(server_report) if r["local"] == VIP]
    assert rep and 0 < rep[0]["rtt_us"] < 200_000, rep
    assert rep[0]["keepalive"] == 1 and rep[0]["keepidle"] <= 25 and rep[0]["keepintvl"] <= 25, rep
    assert netstat(t.dip, "TSEcrRejected") == rejected
    assert netstat(t.client, "PAWSEstab") == paws

    status, body = mgmt(t.dip, "/cookie")
    ck = body["counters"]
    assert status == 200 and body["enabled"] and body["config"]["serverId"] == SERVER_ID
    assert KEY not in json.dumps(body)
    assert ck["encoded"] > 0 and ck["restored"] > 0, ck
    assert ck["misrouted"] == 0 and ck["restore_miss"] == 0, ck
    # Linux TCP hands GSO super-packets with partial checksums to tc whatever the device
    # offloads; they are segmented (and summed) after tc: in software on the DIP host's
    # uplink when its offloads are off, at the router's egress when on. So the encodes are
    # well under the frames the client received (its interface's count, which a capture
    # under load falls short of; 0.38-0.67 of it here, about 1 without super-packets).
    assert ck["encoded"] + ck["encoded_slow_path"] < 0.9 * rx, (ck, rx, len(segs))
    features = t.dip.run(["ethtool", "-k", t.if_d]).stdout
    assert f"tcp-segmentation-offload: {'on' if t.offload else 'off'}" in features

    # The host's own address is no VIP: no cookie, no keep-alive.
    out = t.client.run([sys.executable, PEERS, "client", DIP, str(PORT), "1000", t.if_c],
                       timeout=30).stdout
    direct = json.loads(out)
    plain = [s for s in direct["segments"] if s["client_port"] == direct["client_port"]]
    assert direct["echo_ok"] and plain
    assert all(cc.cookie_of(s["tsval"]) != cookie for s in plain[1:])
    rep = [r for r in wait_for(server_report) if r["local"] == DIP]
    assert rep and rep[0]["keepalive"] == 0


def test_put_cookie_answers_once_the_maps_hold_it(plain):
    """The controller publishes an SMux table that decodes a host's new key right after
    the host's 200 to PUT /cookie: a connection opened at once must already carry the
    new key's cookie. The loader's stats loop is slowed to 3 s so that an answer given
    before the maps changed shows."""
    t = plain
    cfg = os.path.join(t.tmp, "cookie.json")
    with open(cfg, "w") as f:
        json.dump({"serverId": SERVER_ID, "key": "ab" * 16}, f)
    start_agent(t, cfg, "--stats-interval-ms", "3000")
    server_report, mux, mux_stats = start_server_and_mux(t)   # the mux decodes with KEY
    status, body = mgmt(t.dip, "/cookie", "PUT", {"serverId": SERVER_ID, "key": KEY})
    assert status == 200, body
    out = t.client.run([sys.executable, PEERS, "client", VIP, str(PORT), "20000", t.if_c],
                       timeout=60).stdout
    res = json.loads(out)
    assert res["echo_ok"]
    segs = [s for s in res["segments"] if s["client_port"] == res["client_port"]]
    cookie = cc.make_cookie("siphash13", cc.parse_key(KEY),
                            cc.tuple_bytes(VIP, PORT, CLIENT, res["client_port"]), SERVER_ID)
    assert segs and all(cc.cookie_of(s["tsval"]) == cookie for s in segs), \
        [(hex(s["tsval"]), hex(cookie)) for s in segs[:3]]
    tl.stop_pid(mux.pid)
    m = wait_for(mux_stats)
    assert m["decoded"] > 0 and m["wrong_ident"] == 0, m


def test_state_survives_agent_restart(plain):
    """--pin-dir keeps the connections' state in bpffs: a connection open across a
    restart of the agent keeps its cookie and gets its timestamps restored."""
    t = plain
    cfg = os.path.join(t.tmp, "cookie.json")
    with open(cfg, "w") as f:
        json.dump({"serverId": SERVER_ID, "key": KEY}, f)
    pins = os.path.join(t.tmp, "bpf")
    os.mkdir(pins)
    tl.run(["mount", "-t", "bpf", "bpf", pins])
    try:
        agent = start_agent(t, cfg, "--pin-dir", pins)
        server_report, mux, mux_stats = start_server_and_mux(t)
        resume = os.path.join(t.tmp, "resume")
        client = t.start(t.client, [sys.executable, PEERS, "client", VIP, str(PORT), str(1 << 20),
                                    t.if_c, resume])
        assert client.stdout.readline().strip() == "paused", client.stderr.read()
        tl.stop_pid(agent.pid)
        assert agent.wait(5) == 0
        start_agent(t, cfg, "--pin-dir", pins)
        with open(resume, "w"):
            pass
        out, err = client.communicate(timeout=60)
        res = json.loads(out)
        assert res["echo_ok"], err
        cookie = cc.make_cookie("siphash13", cc.parse_key(KEY),
                                cc.tuple_bytes(VIP, PORT, CLIENT, res["client_port"]), SERVER_ID)
        after = [s for s in res["segments"] if s["phase"] == 2 and s["client_port"] == res["client_port"]]
        assert len(after) > 10
        assert all(cc.cookie_of(s["tsval"]) == cookie and s["csum_ok"] for s in after)
        _, body = mgmt(t.dip, "/cookie")
        ck = body["counters"]
        assert ck["restored"] > 0 and ck["restore_miss"] == 0 and ck["egress_no_state"] == 0, ck
        rep = [r for r in wait_for(server_report) if r["local"] == VIP]
        assert rep and 0 < rep[0]["rtt_us"] < 200_000, rep
        tl.stop_pid(mux.pid)
        m = wait_for(mux_stats)
        assert m["decoded"] > 5 and m["wrong_ident"] == 0, m
    finally:
        for p in t.procs:
            tl.stop_pid(p.pid)
        tl.run(["umount", pins], check=False)


def test_cookie_api(plain):
    t = plain
    cfg = os.path.join(t.tmp, "cookie.json")
    with open(cfg, "w") as f:   # a bad file stops the agent at start, naming the field
        json.dump({"serverId": 5, "key": KEY, "keepaliveSeconds": 60}, f)
    bad = t.dip.run([sys.executable, AGENT, "--iface", t.if_d, "--local-ip", DIP, "--vip", VIP,
                     "--cookie-config", cfg], check=False)
    assert bad.returncode == 2 and "keepaliveSeconds: expected an integer 1..25" in bad.stderr
    os.remove(cfg)
    start_agent(t, cfg)
    status, body = mgmt(t.dip, "/cookie")
    assert status == 200 and not body["enabled"] and body["config"] is None
    for bad, field in (({"serverId": 0, "key": KEY}, "serverId"),
                       ({"serverId": 16384, "key": KEY}, "serverId"),
                       ({"serverId": 5, "key": "abc"}, "key"),
                       ({"serverId": 5, "key": KEY, "hash": "crc32"}, "hash"),
                       ({"serverId": 5, "key": KEY, "vips": [{"prefix": "10.200.0.1/24"}]},
                        "vips[0].prefix"),
                       ({"serverId": 5, "key": KEY, "extra": 1}, "extra")):
        status, err = mgmt(t.dip, "/cookie", "PUT", bad)
        assert status == 400 and err["error"].startswith(field), (bad, err)
        assert not os.path.exists(cfg)
    good = {"serverId": 77, "key": KEY, "vips": [{"prefix": "10.201.0.0/16", "hash": "crc32c"}]}
    status, body = mgmt(t.dip, "/cookie", "PUT", good)
    assert status == 200 and body["enabled"] and body["config"]["serverId"] == 77
    assert body["config"]["vips"][0]["hash"] == "crc32c"
    with open(cfg) as f:
        assert json.load(f)["serverId"] == 77   # kept for the next start
    text = t.dip.run([sys.executable, "-c", "import urllib.request,sys; print(urllib.request."
                      f"urlopen('http://127.0.0.1:{MGMT}/metrics').read().decode())"]).stdout
    assert 'hlb_agent_cookie_packets_total{event="encoded"}' in text


def mgmt_ok(ns):
    try:
        return mgmt(ns, "/health")[0] == 200
    except Exception:
        return False


def tl_wait(pred, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.1)
    return False


def agent_err(p):
    if p.poll() is not None:
        return p.stderr.read()
    return "agent still starting"
