"""Host agent test: decapsulation into the local stack, DSR, health, counters.

Three namespaces of our own:

    mux ns  --(underlay 10.77.0.0/24)--  host ns  --(172.31.0.0/24)--  client ns
                                          VIP on lo
                                          route 198.51.100.0/24 -> client ns

The test client (agent_dsr_client.py) sends IP-in-IP and GRE packets from
the mux namespace whose inner source is the client 198.51.100.5; a real TCP
and UDP socket bound to the VIP in the host namespace must receive them (and
see the client as peer) and its replies must reach the client namespace
directly, unencapsulated, with nothing from the VIP on the mux link.  Both
decap backends run the same cases: XDP (native on veth) and the user-space
fallback (raw sockets + TUN).  Packets from a host that is not a mux, or to an
inner destination that is not a VIP, must be dropped and counted.
"""
import json
import os
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent_testlib as tl  # noqa: E402

TESTS = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.join(tl.SMUX_DIR, "agent", "hlb_agent.py")
VIP = "10.200.0.10"
MUX_IP, HOST_IP = "10.77.0.1", "10.77.0.2"
CLIENT_IP = "198.51.100.5"
UNKNOWN_MUX = "10.77.0.9"   # on the underlay, but not a mux
NOT_A_VIP = "172.31.0.6"    # the client namespace's address, one hop from the DIP host
TCP_PORT, UDP_PORT, HEALTH_PORT, HTTP_PORT, MGMT_PORT = 8080, 5353, 9090, 8081, 9100


def mac_of(ns, ifname):
    return json.loads(ns.run(["ip", "-j", "link", "show", "dev", ifname]).stdout)[0]["address"]


def ns_http(ns, path):
    """(status, body) of GET http://127.0.0.1:MGMT_PORT/path inside ns."""
    code = ("import sys,urllib.request,urllib.error\n"
            "try:\n r=urllib.request.urlopen(sys.argv[1],timeout=3); print(r.status); print(r.read().decode())\n"
            "except urllib.error.HTTPError as e:\n print(e.code); print(e.read().decode())\n")
    out = ns.run([sys.executable, "-c", code, f"http://127.0.0.1:{MGMT_PORT}{path}"]).stdout
    status, _, body = out.partition("\n")
    return int(status), body


def wait_until(pred, timeout, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


class Topology:
    def __init__(self):
        tag = tl.unique("")
        self.mux = tl.Netns(f"hlb-agm-{tag}")
        self.host = tl.Netns(f"hlb-agh-{tag}")
        self.client = tl.Netns(f"hlb-agc-{tag}")
        self.if_mux, self.if_up = f"hlbm{tag}", f"hlbu{tag}"
        self.if_down, self.if_client = f"hlbd{tag}", f"hlbc{tag}"
        self.procs = []
        tl.veth_pair(self.mux, self.if_mux, f"{MUX_IP}/24", self.host, self.if_up, f"{HOST_IP}/24")
        tl.veth_pair(self.host, self.if_down, "172.31.0.1/24", self.client, self.if_client,
                     "172.31.0.6/24")
        self.host.run(["ip", "route", "add", "198.51.100.0/24", "via", "172.31.0.6"])

    def start(self, ns, cmd, **kw):
        p = ns.popen(cmd, **kw)
        self.procs.append(p)
        return p

    def close(self):
        for p in reversed(self.procs):
            if p.stdin:
                p.stdin.close()
            tl.stop_pid(p.pid)
        for ns in (self.mux, self.host, self.client):
            ns.close()


@pytest.fixture(scope="module")
def topo():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, XDP)")
    t = Topology()
    try:
        yield t
    finally:
        t.close()


def start_agent(topo, backend, allow_lists=True):
    """allow_lists=False: no --allow-mux and no --vip (the VIP is then put on
    lo by the test), as a deployment from before the allow-lists."""
    allow = ["--allow-mux", MUX_IP, "--vip", VIP] if allow_lists else ["--no-vip-setup"]
    cmd = [sys.executable, AGENT, "--iface", topo.if_up, "--local-ip", HOST_IP] + allow + [
           "--decap", backend, "--check", f"tcp://{VIP}:{HEALTH_PORT}",
           "--check", f"http://{VIP}:{HTTP_PORT}/healthz", "--check-interval", "0.1",
           "--check-timeout", "0.2", "--rise", "1", "--fall", "2",
           "--listen", f"127.0.0.1:{MGMT_PORT}", "--stats-interval-ms", "100",
           "--tun-name", f"hlbt{backend[:2]}"]
    agent = topo.start(topo.host, cmd, stderr=subprocess.PIPE, text=True)
    ok = wait_until(lambda: agent.poll() is None and _mgmt_up(topo), 10)
    if not ok:
        tl.stop_pid(agent.pid)
        pytest.fail(f"agent ({backend}) did not come up: {agent.stderr.read() if agent.poll() is not None else ''}")
    return agent


def _mgmt_up(topo):
    try:
        return ns_http(topo.host, "/health")[0] == 200
    except subprocess.CalledProcessError:
        return False


def start_servers(topo):
    srv = topo.start(topo.host, [sys.executable, os.path.join(TESTS, "agent_vip_server.py"), VIP,
                                 "--tcp", str(TCP_PORT), "--udp", str(UDP_PORT),
                                 "--http", str(HTTP_PORT)],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert json.loads(srv.stdout.readline())["ready"]
    health = topo.start(topo.host, [sys.executable, os.path.join(TESTS, "agent_vip_server.py"), VIP,
                                    "--tcp", str(HEALTH_PORT)],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert json.loads(health.stdout.readline())["ready"]
    return srv, health


def run_client(topo, exchanges):
    cfg = {"mux_ns": topo.mux.name, "client_ns": topo.client.name, "mux_if": topo.if_mux,
           "client_if": topo.if_client, "mux_mac": mac_of(topo.mux, topo.if_mux),
           "host_mac": mac_of(topo.host, topo.if_up), "mux_ip": MUX_IP, "host_ip": HOST_IP,
           "client_ip": CLIENT_IP, "vip": VIP, "tcp_port": TCP_PORT, "udp_port": UDP_PORT,
           "exchanges": exchanges}
    out = subprocess.run([sys.executable, os.path.join(TESTS, "agent_dsr_client.py"), json.dumps(cfg)],
                         check=True, capture_output=True, text=True, timeout=120)
    return json.loads(out.stdout.strip().splitlines()[-1])


def collect_lines(proc):
    """Collects the JSON lines a service prints, in a background thread."""
    lines = []

    def pump():
        for line in proc.stdout:
            lines.append(json.loads(line))
    threading.Thread(target=pump, daemon=True).start()
    return lines


@pytest.mark.parametrize("backend", ["xdp", "userspace"])
def test_decap_dsr_health_and_counters(topo, backend):
    agent = start_agent(topo, backend)
    srv = health = None
    try:
        status, body = ns_http(topo.host, "/health")
        info = json.loads(body)
        assert info["decap"]["backend"] == backend and info["decap"]["alive"]
        if backend == "xdp":
            assert info["decap"]["mode"] in ("native", "generic")
        srv, health = start_servers(topo)

        exchanges = [{"proto": p, "encap": e, "payload": f"{backend}-{e}-{p}-hello"}
                     for e in ("ipip", "gre") for p in ("udp", "tcp")]
        srv_lines = collect_lines(srv)
        res = run_client(topo, exchanges)

        # Every reply came straight to the client: source VIP, plain IP, and
        # nothing from the VIP went back over the mux link.
        for ex in res["exchanges"]:
            reply = ex["reply"]
            assert reply is not None, f"no reply for {ex['encap']}/{ex['proto']} ({backend})"
            assert reply["src"] == VIP and reply["dst"] == CLIENT_IP
            assert not reply["encapsulated"]
            assert reply["payload"] == "echo:" + ex["payload"]
        assert res["vip_packets_on_mux_link"] == 0

        # The real sockets on the VIP received the payloads from the client.
        got = wait_until(lambda: srv_lines if len(srv_lines) >= len(exchanges) else None, 3) or srv_lines
        assert sorted(g["data"] for g in got) == sorted(ex["payload"] for ex in exchanges)
        assert all(g["peer"] == CLIENT_IP for g in got)

        # Counters per (VIP, mux, encap), as JSON and Prometheus text.
        sent = {e: sum(ex["sent"] for ex in res["exchanges"] if ex["encap"] == e)
                for e in ("ipip", "gre")}

        def counted():
            st = json.loads(ns_http(topo.host, "/stats")[1])
            by = {m["encap"]: m for m in st["vips"].get(VIP, {}).get("by_mux", [])
                  if m["mux"] == MUX_IP}
            return st if all(by.get(e, {}).get("packets", 0) >= sent[e] for e in sent) else None
        st = wait_until(counted, 3)
        assert st, "per-VIP counters did not reach the number of packets sent"
        assert st["counters"]["decap_ipip"] >= sent["ipip"]
        assert st["counters"]["decap_gre"] >= sent["gre"]
        assert st["vips"][VIP]["bytes"] > 0
        metrics = ns_http(topo.host, "/metrics")[1]
        assert f'hlb_agent_vip_packets_total{{encap="gre",mux="{MUX_IP}",vip="{VIP}"}}' in metrics
        assert 'hlb_agent_dip_healthy{dip="10.77.0.2"} 1.0' in metrics

        # DIP health follows the local services (a TCP and an HTTP check).
        assert wait_until(lambda: ns_http(topo.host, "/dip-health")[0] == 200, 2)
        health.stdin.close()
        tl.stop_pid(health.pid)
        t0 = time.monotonic()
        assert wait_until(lambda: ns_http(topo.host, "/dip-health")[0] == 503, 3)
        print(f"\n[{backend}] DIP marked unhealthy {time.monotonic() - t0:.2f}s after the service stopped")
        checks = {c["check"]: c["healthy"] for c in json.loads(ns_http(topo.host, "/dip-health")[1])["checks"]}
        assert checks == {f"tcp://{VIP}:{HEALTH_PORT}": False, f"http://{VIP}:{HTTP_PORT}/healthz": True}
        metrics = ns_http(topo.host, "/metrics")[1]
        assert 'hlb_agent_dip_healthy{dip="10.77.0.2"} 0.0' in metrics
        assert f'hlb_agent_check_healthy{{check="http://{VIP}:{HTTP_PORT}/healthz",dip="10.77.0.2"}} 1.0' in metrics
    finally:
        for p in (srv, health):
            if p:
                if not p.stdin.closed:
                    p.stdin.close()
                tl.stop_pid(p.pid)
        tl.stop_pid(agent.pid)
    # The agent undid its changes: VIP gone from lo, no XDP program left.
    assert VIP not in topo.host.run(["ip", "-o", "addr", "show", "dev", "lo"]).stdout
    assert "xdp" not in topo.host.run(["ip", "link", "show", "dev", topo.if_up]).stdout


def spoofed_exchanges(tag):
    """UDP to the VIP's echo port from a host that is not a mux (its inner
    source, the client, is spoofed), and UDP to an address that is not a VIP
    (relayed through the DIP host), in both encapsulations."""
    return ([{"proto": "spoofed", "encap": e, "payload": f"{tag}-unknown-mux-{e}",
              "outer_src": UNKNOWN_MUX} for e in ("ipip", "gre")]
            + [{"proto": "spoofed", "encap": e, "payload": f"{tag}-relay-{e}",
                "inner_dst": NOT_A_VIP} for e in ("ipip", "gre")])


def stop_all(*procs):
    for p in procs:
        if p:
            if p.stdin and not p.stdin.closed:
                p.stdin.close()
            tl.stop_pid(p.pid)


@pytest.mark.parametrize("backend", ["xdp", "userspace"])
def test_unknown_mux_and_non_vip_are_dropped_and_counted(topo, backend):
    """Only packets from an allowed mux to a VIP of this host are
    decapsulated.  The DIP host forwards IP here, so a packet decapsulated
    towards another address would reach the client namespace."""
    topo.host.run(["sysctl", "-qw", "net.ipv4.ip_forward=1"])
    agent = start_agent(topo, backend)
    srv = health = None
    try:
        info = json.loads(ns_http(topo.host, "/health")[1])
        assert info["allowed_muxes"] == [f"{MUX_IP}/32"] and info["allowed_vips"] == [f"{VIP}/32"]
        srv, health = start_servers(topo)
        legit = {"proto": "udp", "encap": "gre", "payload": f"{backend}-legit"}
        res = run_client(topo, spoofed_exchanges(backend) + [legit])
        *spoofed, control = res["exchanges"]
        # The echo service answers an allowed mux, so silence below means dropped.
        assert control["reply"] and control["reply"]["payload"] == "echo:" + legit["payload"]
        for ex in spoofed:
            assert ex["reply"] is None, f"{backend}: echoed {ex['payload']}"
            assert ex["relayed"] is None, f"{backend}: relayed {ex['payload']}: {ex['relayed']}"

        def counted():
            st = json.loads(ns_http(topo.host, "/stats")[1])
            c = st["counters"]
            return st if c["drop_unknown_mux"] >= 6 and c["drop_not_vip"] >= 6 else None
        st = wait_until(counted, 3)
        assert st, "drops not counted"
        assert st["counters"]["drop_unknown_mux"] == 6 and st["counters"]["drop_not_vip"] == 6
        assert all(m["mux"] == MUX_IP for v in st["vips"].values() for m in v["by_mux"])
        assert NOT_A_VIP not in st["vips"]
        metrics = ns_http(topo.host, "/metrics")[1]
        assert 'hlb_agent_decap_packets_total{result="drop_unknown_mux"} 6.0' in metrics
        assert 'hlb_agent_decap_packets_total{result="drop_not_vip"} 6.0' in metrics
    finally:
        stop_all(srv, health, agent)
        topo.host.run(["sysctl", "-qw", "net.ipv4.ip_forward=0"])


def test_without_allow_lists_any_mux_and_destination_with_a_warning(topo):
    """No --allow-mux, no --vip: the behaviour from before the allow-lists
    (what a deployment that passes neither gets), announced by two warnings.
    It also shows what the allow-lists stop: a non-mux gets its spoofed packet
    answered, and a packet to a non-VIP is relayed."""
    topo.host.run(["sysctl", "-qw", "net.ipv4.ip_forward=1"])
    topo.host.run(["ip", "addr", "add", f"{VIP}/32", "dev", "lo"])
    agent = start_agent(topo, "xdp", allow_lists=False)
    srv = health = None
    try:
        info = json.loads(ns_http(topo.host, "/health")[1])
        assert info["allowed_muxes"] == "any" and info["allowed_vips"] == "any"
        srv, health = start_servers(topo)
        unknown_mux_ipip, _, relay_ipip, _ = run_client(topo, spoofed_exchanges("open"))["exchanges"]
        assert unknown_mux_ipip["reply"] is not None
        assert relay_ipip["relayed"] is not None
    finally:
        stop_all(srv, health, agent)
        topo.host.run(["sysctl", "-qw", "net.ipv4.ip_forward=0"])
        topo.host.run(["ip", "addr", "del", f"{VIP}/32", "dev", "lo"], check=False)
    log = agent.stderr.read()
    assert "no --allow-mux: decapsulating tunnels from any source" in log
    assert "no --vip or --vip-prefix: decapsulating packets to any inner destination" in log


def test_malformed_encapsulated_packets_are_counted(topo):
    """Truncated GRE / IP-in-IP packets are dropped and counted, not delivered."""
    agent = start_agent(topo, "xdp")
    try:
        run_client(topo, [{"proto": "malformed", "encap": e, "payload": ""} for e in ("gre", "ipip")])
        st = wait_until(lambda: (lambda s: s if s["counters"]["drop_malformed"] >= 10 else None)(
            json.loads(ns_http(topo.host, "/stats")[1])), 3)
        assert st, "malformed packets were not counted"
    finally:
        tl.stop_pid(agent.pid)


def test_bad_arguments_name_the_field(topo):
    r = topo.host.run([sys.executable, AGENT, "--local-ip", "10.77.0.300", "--decap", "userspace"],
                      check=False)
    assert r.returncode == 2 and "--local-ip" in r.stderr and "10.77.0.300" in r.stderr
    r = topo.host.run([sys.executable, AGENT, "--local-ip", HOST_IP, "--check", "ftp://x:1"],
                      check=False)
    assert r.returncode == 2 and "--check" in r.stderr
    r = topo.host.run([sys.executable, AGENT, "--local-ip", HOST_IP, "--allow-mux", "10.77.0.1/24"],
                      check=False)
    assert r.returncode == 2 and "--allow-mux" in r.stderr and "host bits" in r.stderr
    r = topo.host.run([sys.executable, AGENT, "--local-ip", HOST_IP, "--vip-prefix", "10.200.0.0/33"],
                      check=False)
    assert r.returncode == 2 and "--vip-prefix" in r.stderr and "10.200.0.0/33" in r.stderr
    # The C backends check their own arguments too.
    for binary in ("hlb-agent-xdp", "hlb-agent-udecap"):
        for option, value in (("--allow-mux", "10.77.0.1/24"), ("--allow-vip", "10.200.0.10/40")):
            r = topo.host.run([os.path.join(tl.BUILD_DIR, binary), "--local-ip", HOST_IP,
                               option, value], check=False)
            assert r.returncode == 2 and option in r.stderr and value in r.stderr, (binary, r.stderr)


TLS_REFUSED = ("certificate", "eof occurred in violation of protocol", "connection reset by peer")


def https(ns, method, url, ca, cert=None, body=None):
    """(status, parsed body) of an HTTPS request from inside ns, with Python's ssl;
    (0, error text) when the connection or the handshake fails."""
    code = ("import json,ssl,sys,urllib.request,urllib.error\n"
            "url,ca,cert,method,body=sys.argv[1:6]\n"
            "ctx=ssl.create_default_context(cafile=ca)\n"
            "if cert: ctx.load_cert_chain(cert+'.pem', cert+'.key')\n"
            "req=urllib.request.Request(url,method=method,data=body.encode() if body else None)\n"
            "try:\n r=urllib.request.urlopen(req,context=ctx,timeout=5); print(r.status); print(r.read().decode())\n"
            "except urllib.error.HTTPError as e:\n print(e.code); print(e.read().decode())\n"
            "except Exception as e:\n print(0); print(json.dumps(str(e)))\n")
    out = ns.run([sys.executable, "-c", code, url, ca, cert or "", method,
                  json.dumps(body) if body is not None else ""]).stdout
    status, _, text = out.partition("\n")
    return int(status), json.loads(text) if text.strip() else None


def test_management_api_over_mutual_tls(topo, tmp_path):
    """On another address than loopback the agent runs TLS: anyone with the CA may read,
    only a client certificate of that CA (client purpose) may write; a refused write
    changes nothing. Without TLS it refuses to listen there."""
    certs = tl.make_certs(str(tmp_path / "tls"), ("server", "agent", "--ip", HOST_IP),
                          ("server", "other-agent", "--ip", "10.77.0.3"), ("controller", "ctl", "--ip", "127.0.0.1"))
    cookie = tmp_path / "cookie.json"
    cookie.write_text(json.dumps({"serverId": 5, "key": "0f1e2d3c4b5a69788796a5b4c3d2e1f0"}))
    base = [sys.executable, AGENT, "--local-ip", HOST_IP, "--decap", "userspace", "--no-vip-setup",
            "--tun-name", "hlbttls", "--cookie-config", str(cookie), "--listen", f"{HOST_IP}:{MGMT_PORT}"]
    r = topo.host.run(base, check=False)
    assert r.returncode == 2 and f"--listen: {HOST_IP} is not a loopback address" in r.stderr, r.stderr
    r = topo.host.run(base + ["--tls-cert", f"{certs}/agent.pem", "--tls-key", f"{certs}/agent.key"], check=False)
    assert r.returncode == 2 and "--tls-ca: required with --tls-cert, --tls-key" in r.stderr, r.stderr
    agent = topo.start(topo.host, base + ["--tls-cert", f"{certs}/agent.pem", "--tls-key", f"{certs}/agent.key",
                                          "--tls-ca", f"{certs}/ca.pem"], stderr=subprocess.PIPE, text=True)
    url = f"https://{HOST_IP}:{MGMT_PORT}"
    ca = f"{certs}/ca.pem"
    try:
        assert wait_until(lambda: https(topo.host, "GET", url + "/health", ca)[0] == 200, 10), \
            agent.stderr.read() if agent.poll() is not None else "agent not up"
        before = https(topo.host, "GET", url + "/cookie", ca)
        assert before[0] == 200 and before[1]["config"]["serverId"] == 5, before
        new = {"serverId": 9, "key": "0f1e2d3c4b5a69788796a5b4c3d2e1f0"}
        status, body = https(topo.host, "PUT", url + "/cookie", ca, body=new)
        assert status == 401 and body["field"] == "client certificate", (status, body)
        status, body = https(topo.host, "PUT", url + "/cookie", ca, cert=f"{certs}/other-agent", body=new)
        # A server certificate cannot write: the handshake refuses it. The client sees the
        # alert naming the certificate, or, when TLS 1.3's server closes before the client
        # reads the alert, the end of the connection.
        assert status == 0 and any(m in body.lower() for m in TLS_REFUSED), (status, body)
        assert https(topo.host, "GET", url + "/cookie", ca) == before, "refused writes changed nothing"
        status, body = https(topo.host, "PUT", url + "/cookie", ca, cert=f"{certs}/ctl", body={"serverId": 0})
        assert status == 400 and "serverId" in body["error"], (status, body)   # the controller reaches the handler
        status, body = https(topo.host, "PUT", url + "/cookie", ca, cert=f"{certs}/ctl", body=new)
        assert status == 409 and "XDP backend" in body["error"], (status, body)
        plain = topo.host.run([sys.executable, "-c", "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], "
                               "timeout=3)", f"http://{HOST_IP}:{MGMT_PORT}/health"], check=False)
        assert plain.returncode != 0, "plain HTTP is not served"
    finally:
        tl.stop_pid(agent.pid)
