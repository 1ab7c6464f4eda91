"""hlb_probe.py quic against smux/agent/quic_server.py on loopback (no emulation, no root): how a
server that goes away mid-run is reported, and how the churn's classify() counts it. A stall
(the server killed) must count as a timeout, also when the connection's idle timeout ends it
first; a server that stops (SIGTERM: it sends CONNECTION_CLOSE) as a reset, like TCP's."""
import json
import os
import signal
import socket
import subprocess
import time

import pytest

import cheetah_exp as cx
from emu_base import HLB_CERTS, PY, QUIC_SERVER

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(os.path.dirname(HERE), "topologies", "hlb_probe.py")
KEY = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
SERVER_ID = 4321


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("quic-certs"))
    for args in (["ca"], ["server", "quic", "--ip", "127.0.0.1"]):
        subprocess.run(["bash", HLB_CERTS, d] + args, check=True, capture_output=True)
    cookie = os.path.join(d, "cookie.json")
    with open(cookie, "w") as f:
        json.dump({"serverId": SERVER_ID, "key": KEY}, f)
    return d


def run(certs, sig, server_idle, probe_timeout):
    """Two probe connections to a fresh server, `sig` sent to the server 2 s in -> the probe's report."""
    port = free_udp_port()
    server = subprocess.Popen([PY, QUIC_SERVER, "--vip", "127.0.0.1", "--port", str(port), "--idle-timeout",
                               str(server_idle), "--cookie-config", os.path.join(certs, "cookie.json"),
                               "--cert", os.path.join(certs, "quic.pem"), "--key", os.path.join(certs, "quic.key")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    probe = None
    try:
        assert json.loads(server.stdout.readline())["event"] == "ready", server.stderr.read()
        probe = subprocess.Popen([PY, PROBE, "quic", "--vip", "127.0.0.1", "--port", str(port), "--conns", "2",
                                  "--interval", "0.2", "--duration", "30", "--timeout", str(probe_timeout)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(2)
        server.send_signal(sig)
        server.wait(10)
        out, err = probe.communicate(timeout=probe_timeout + 20)
        return json.loads(out)
    finally:
        for p in (probe, server):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


def test_a_killed_server_is_a_timeout(certs):
    rep = run(certs, signal.SIGKILL, server_idle=120, probe_timeout=2)
    assert [c["errors"] for c in rep["conns"]] == [["timed out: no answer in 2 s"]] * 2
    assert all(c["ok"] > 0 and c["dips"] == [str(SERVER_ID)] for c in rep["conns"])
    c = cx.classify(rep["conns"])
    assert (c["opened"], c["timeout"], c["broken"]) == (2, 2, 2)


def test_a_stall_ended_by_the_idle_timeout_is_a_timeout(certs):
    """The server's idle timeout (1 s) is shorter than the probe's wait (10 s): the connection
    ends idle before the probe gives up, which is still the stall it is."""
    rep = run(certs, signal.SIGKILL, server_idle=1, probe_timeout=10)
    for conn in rep["conns"]:
        assert len(conn["errors"]) == 1 and conn["errors"][0].startswith(
            "timed out: the connection's idle timeout ended it"), conn
    c = cx.classify(rep["conns"])
    assert (c["timeout"], c["otherError"]) == (2, 0)


def test_a_stopped_server_closes_its_connections_like_a_reset(certs):
    rep = run(certs, signal.SIGTERM, server_idle=120, probe_timeout=10)
    for conn in rep["conns"]:
        assert conn["errors"] == ["closed by peer: QUIC error 0x0 (server stopping)"], conn
    c = cx.classify(rep["conns"])
    assert (c["reset"], c["timeout"], c["otherError"]) == (2, 0, 0)
