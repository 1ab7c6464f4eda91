"""The host agent's --load-metric connections: the ESTABLISHED connections to this host's
VIPs, counted by the cookie sockops program, reported to a real hlb-smux (POST /loads).

The topology is agent_smux_reports.py's (client, router, DIP host, hlb-smux in namespaces
of their own; the DIP's echo server in the cgroup the agent watches). Real TCP
connections: to the stateful VIP (hinted: their closes are reported too), to the DIP's
own address (no VIP), and to a VIP address served in another namespace by a listener of
the same cgroup (so the same sockops program sees it). Only the first kind counts.
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_cookie_e2e import AGENT, DIP, KEY, MGMT, agent_err, mgmt, mgmt_ok, tl_wait  # noqa: E402
from agent_smux_reports import (ECHO_PORT, ECHO_SERVER, SMUX_DATA, VIP_SF, VIP_SL,  # noqa: E402
                                smux_reporting, topo)  # noqa: F401 (topo: the fixture)

# Reads commands on stdin: 'open HOST,PORT,N' opens N connections (one echo each, so
# each is ESTABLISHED at the server), 'close N' closes the N oldest; 'ok' after each.
CONN_CLIENT = ("import socket,sys\n"
               "cs=[]\n"
               "for line in sys.stdin:\n"
               " cmd,arg=line.split()\n"
               " if cmd=='open':\n"
               "  h,p,n=arg.split(',')\n"
               "  for _ in range(int(n)):\n"
               "   c=socket.create_connection((h,int(p)),timeout=5); c.sendall(b'x')\n"
               "   assert c.recv(16)==b'x'; cs.append(c)\n"
               " else:\n"
               "  for c in cs[:int(arg)]: c.close()\n"
               "  del cs[:int(arg)]\n"
               " print('ok',flush=True)\n")


class Client:
    def __init__(self, t, ns):
        self.p = t.start(ns, [sys.executable, "-c", CONN_CLIENT], stdin=subprocess.PIPE)

    def do(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        assert self.p.stdout.readline().strip() == "ok", self.p.stderr.read()


def agent_stats(t):
    return mgmt(t.dip, "/stats")[1]


def load_settles_at(t, n, timeout=10):
    """The loader's count is n, and the agent reported n to the SMux, which matched it."""
    def at():
        st = agent_stats(t)
        loads = st["reports"]["loads"]
        return (st["establishedConnections"], loads["lastLoad"], loads["lastMatched"]) == (n, n, 1)
    return tl_wait(at, timeout=timeout)


def still_at(t, n, seconds=1.0):
    """The count stays n for several report periods (a wrong count would show by then)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        st = agent_stats(t)
        if st["establishedConnections"] != n or st["reports"]["loads"]["lastLoad"] != n:
            return False
        time.sleep(0.1)
    return True


def start_agent(t, cfg, metric="connections"):
    agent = t.start(t.dip, [sys.executable, AGENT, "--iface", t.if_d, "--local-ip", DIP,
                            "--vip", VIP_SF, "--vip", VIP_SL, "--allow-mux", SMUX_DATA,
                            "--listen", f"127.0.0.1:{MGMT}", "--cookie-config", cfg,
                            "--cgroup", t.cgroup_rel, "--load-report-ms", "100",
                            "--load-metric", metric, "--owner-check-ms", "0", *t.agent_tls])
    assert tl_wait(lambda: mgmt_ok(t.dip)), agent_err(agent)
    return agent


def test_the_load_is_the_established_connections_to_the_vips(topo):
    t = topo
    _, cfg = smux_reporting(t)
    agent = start_agent(t, cfg)
    assert mgmt(t.dip, "/health")[1]["decap"]["backend"] == "xdp"
    t.ready(t.start(t.dip, [sys.executable, "-c", ECHO_SERVER], cgroup=True), "echo server")
    assert load_settles_at(t, 0), agent_stats(t)

    client = Client(t, t.client)
    client.do(f"open {VIP_SF},{ECHO_PORT},3")      # hinted by the owner SMux
    client.do(f"open {VIP_SL},{ECHO_PORT},2")      # stateless cookies: not hinted
    assert load_settles_at(t, 5), agent_stats(t)
    assert agent_stats(t)["cookie"]["counted"] == 5, agent_stats(t)

    # The DIP's own address is no VIP: its connections are not counted.
    client.do(f"open {DIP},{ECHO_PORT},3")
    assert still_at(t, 5), agent_stats(t)

    # Closes: the count drops by them; the hinted ones' closes still reach their owner.
    reported = agent_stats(t)["cookie"]["close_reported"]
    client.do("close 2")
    assert load_settles_at(t, 3), agent_stats(t)
    assert tl_wait(lambda: agent_stats(t)["cookie"]["close_reported"] - reported == 2), agent_stats(t)
    assert tl_wait(lambda: agent_stats(t)["reports"]["closed"]["reported"] == 2), agent_stats(t)
    client.do("close 3")           # the last hinted one and the two stateless ones
    assert load_settles_at(t, 0), agent_stats(t)
    assert tl_wait(lambda: agent_stats(t)["cookie"]["close_reported"] - reported == 3), agent_stats(t)
    client.do("close 3")           # the DIP-address ones: nothing to uncount
    assert still_at(t, 0), agent_stats(t)

    # A VIP address served in another namespace, by a listener of the same cgroup: the
    # sockops program sees its connections, and they are not this host's.
    t.client.run(["ip", "addr", "add", f"{VIP_SL}/32", "dev", "lo"])
    t.ready(t.start(t.client, [sys.executable, "-c", ECHO_SERVER], cgroup=True), "other echo server")
    other = Client(t, t.client)
    other.do(f"open {VIP_SL},{ECHO_PORT},4")
    client.do(f"open {VIP_SF},{ECHO_PORT},1")
    assert load_settles_at(t, 1), agent_stats(t)
    assert still_at(t, 1), agent_stats(t)
    other.do("close 4")
    client.do("close 1")
    assert load_settles_at(t, 0), agent_stats(t)
    assert agent_stats(t)["reports"]["loads"]["failed"] == 0
    other.do(f"open {VIP_SL},{ECHO_PORT},1")      # (not counted)
    client.do(f"open {VIP_SF},{ECHO_PORT},2")
    assert load_settles_at(t, 2), agent_stats(t)
    text = t.dip.run([sys.executable, "-c", "import urllib.request; print(urllib.request."
                      f"urlopen('http://127.0.0.1:{MGMT}/metrics').read().decode())"]).stdout
    assert "\nhlb_agent_established_connections 2.0\n" in text, text
    assert agent_stats(t)["reports"]["loads"]["metric"] == "connections"
    client.do("close 2")
    other.do("close 1")
    assert load_settles_at(t, 0), agent_stats(t)

    # A restarted agent counts from 0: the connections open across the restart were
    # counted by the previous program, and their closes are not taken off the new count.
    client.do(f"open {VIP_SF},{ECHO_PORT},3")
    assert load_settles_at(t, 3), agent_stats(t)
    agent.send_signal(signal.SIGTERM)
    agent.wait(timeout=15)
    start_agent(t, cfg)
    assert load_settles_at(t, 0), agent_stats(t)
    client.do("close 3")
    assert still_at(t, 0), agent_stats(t)
    client.do(f"open {VIP_SF},{ECHO_PORT},2")
    assert load_settles_at(t, 2), agent_stats(t)


def test_the_cpu_metric_counts_nothing_and_hinted_closes_are_still_reported(topo):
    """Without --load-metric connections the sockops program keeps no count (no socket
    storage, no state callbacks but a hinted connection's), and the agent shows none."""
    t = topo
    _, cfg = smux_reporting(t)
    start_agent(t, cfg, metric="cpu")
    t.ready(t.start(t.dip, [sys.executable, "-c", ECHO_SERVER], cgroup=True), "echo server")
    client = Client(t, t.client)
    client.do(f"open {VIP_SF},{ECHO_PORT},2")      # hinted by the owner SMux
    client.do(f"open {VIP_SL},{ECHO_PORT},2")      # stateless cookies: not hinted
    st = agent_stats(t)
    assert st["establishedConnections"] is None and st["reports"]["loads"]["metric"] == "cpus", st
    assert tl_wait(lambda: agent_stats(t)["cookie"]["keepalive_set"] == 4), agent_stats(t)  # the program saw them
    assert agent_stats(t)["cookie"]["counted"] == 0, agent_stats(t)
    client.do("close 4")
    assert tl_wait(lambda: agent_stats(t)["cookie"]["close_reported"] == 2), agent_stats(t)
    assert tl_wait(lambda: agent_stats(t)["reports"]["closed"]["reported"] == 2), agent_stats(t)
    text = t.dip.run([sys.executable, "-c", "import urllib.request; print(urllib.request."
                      f"urlopen('http://127.0.0.1:{MGMT}/metrics').read().decode())"]).stdout
    assert "hlb_agent_established_connections" not in text, text


def test_load_metric_errors_name_the_flag():
    def refused(*args):
        r = subprocess.run([sys.executable, AGENT, "--local-ip", "10.0.0.1", *args],
                           capture_output=True, text=True)
        assert r.returncode == 2, r.stderr
        return r.stderr.strip().splitlines()[-1]
    assert "argument --load-metric: invalid choice: 'queue'" in refused("--decap", "userspace",
                                                                         "--load-metric", "queue")
    assert "--load-metric connections: needs --cookie-config" in refused("--decap", "userspace",
                                                                         "--load-metric", "connections")


def test_connections_need_the_xdp_backend(tmp_path):
    cfg = tmp_path / "cookie.json"
    cfg.write_text(json.dumps({"serverId": 5, "key": KEY}))
    r = subprocess.run([sys.executable, AGENT, "--local-ip", "10.0.0.1", "--decap", "userspace",
                        "--cookie-config", str(cfg), "--load-metric", "connections"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--load-metric connections: the count comes with the XDP backend" \
        in r.stderr, r.stderr
