"""FRR glue test: hlb-frr-supervisor announces the VIP aggregates to a route
server while the SMux health endpoint answers, and withdraws them within one
second when the endpoint stops answering or the SMux process exits.

Two namespaces of our own, one FRR each:
    smux ns (AS 65001, supervisor + stand-in SMux health endpoint)
      --veth 10.88.0.0/24--  route server ns (AS 65000)
Withdrawal latency is measured from the moment the health endpoint is stopped
(or the process killed) to the kernel route deletion on the route server,
timestamped by `ip -ts monitor route` there.
"""
import datetime
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import signal

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "frr"))
import agent_testlib as tl  # noqa: E402
import hlb_frr_supervisor as frr  # noqa: E402

TESTS = os.path.dirname(os.path.abspath(__file__))
SUPERVISOR = os.path.join(tl.SMUX_DIR, "frr", "hlb_frr_supervisor.py")
PREFIXES = ["10.100.0.0/16", "10.101.0.0/16"]
RS_IP, SMUX_IP = "10.88.0.1", "10.88.0.2"
HEALTH_PORT = 9200
WITHDRAW_LIMIT_S = 1.0


class RouteMonitor:
    """`ip -ts monitor route` in a namespace: route events with timestamps."""

    LINE = re.compile(r"^\[(\S+)\] (Deleted )?(\d+\.\d+\.\d+\.\d+/\d+) ")

    def __init__(self, ns):
        self.events = []   # (unix time, "add"|"del", prefix)
        self.proc = ns.popen(["ip", "-ts", "monitor", "route"], stdout=subprocess.PIPE, text=True)
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            m = self.LINE.match(line)
            if m:
                ts = datetime.datetime.fromisoformat(m.group(1)).timestamp()
                self.events.append((ts, "del" if m.group(2) else "add", m.group(3)))

    def first(self, kind, prefix, after, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for ts, k, p in list(self.events):
                if k == kind and p == prefix and ts >= after:
                    return ts
            time.sleep(0.01)
        return None

    def close(self):
        tl.stop_pid(self.proc.pid)


def fib_has(ns, prefix):
    return prefix in ns.run(["ip", "route", "show", prefix]).stdout


@pytest.fixture
def lab():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, FRR)")
    tag = tl.unique("")
    smux = tl.Netns(f"hlb-frs-{tag}")
    rs = tl.Netns(f"hlb-frr-{tag}")
    rs_frr = monitor = None
    procs = []
    try:
        tl.veth_pair(smux, f"hlbs{tag}", f"{SMUX_IP}/24", rs, f"hlbr{tag}", f"{RS_IP}/24")
        rs_dir = tempfile.mkdtemp(prefix=f"hlb-frr-rs-{tag}-")
        rs_frr = frr.FrrInstance(f"hlbrs{tag}", rs_dir,
                                 frr.bgpd_config(f"hlbrs{tag}", 65000, RS_IP, [(SMUX_IP, 65001)],
                                                 f"{rs_dir}/bgpd.log"))
        # Start the route server's FRR inside its namespace.
        rs_frr_start_in_ns(rs, rs_frr)
        monitor = RouteMonitor(rs)
        yield {"tag": tag, "smux": smux, "rs": rs, "rs_frr": rs_frr, "monitor": monitor,
               "procs": procs}
    finally:
        for p in reversed(procs):
            tl.stop_pid(p.pid)
        if monitor:
            monitor.close()
        if rs_frr:
            for p in rs_frr.procs.values():
                tl.stop_pid(p.pid)
            rs_frr.stop()
        smux.close()
        rs.close()


def rs_frr_start_in_ns(ns, inst):
    """FrrInstance.start() spawns in the caller's namespace; wrap the daemons
    with `ip netns exec` for the route server."""
    orig = inst._spawn

    def spawn(daemon, cmd):
        orig(daemon, ["ip", "netns", "exec", ns.name] + cmd)
    inst._spawn = spawn
    inst.start()


def start_standin(lab, pidfile):
    p = lab["smux"].popen([sys.executable, os.path.join(TESTS, "frr_health_standin.py"), "127.0.0.1",
                           str(HEALTH_PORT), pidfile], stdout=subprocess.PIPE, text=True)
    lab["procs"].append(p)
    assert json.loads(p.stdout.readline())["ready"]
    return p


def start_supervisor(lab, pidfile, run_dir):
    cmd = [sys.executable, SUPERVISOR, "--name", f"hlbsm{lab['tag']}", "--run-dir", run_dir,
           "--asn", "65001", "--router-id", SMUX_IP, "--neighbor", f"{RS_IP}:65000",
           "--health-url", f"http://127.0.0.1:{HEALTH_PORT}/health", "--pidfile", pidfile]
    for p in PREFIXES:
        cmd += ["--prefix", p]
    log = open(os.path.join(run_dir + ".log"), "w")
    p = lab["smux"].popen(cmd, stderr=log)
    lab["procs"].append(p)
    return p


def test_announce_and_withdraw_within_one_second(lab):
    rs, mon = lab["rs"], lab["monitor"]
    base = tempfile.mkdtemp(prefix=f"hlb-frr-sm-{lab['tag']}-")
    os.chmod(base, 0o755)   # FRR's zebra runs as user frr
    pidfile, run_dir = os.path.join(base, "smux.pid"), os.path.join(base, "frr")
    try:
        standin = start_standin(lab, pidfile)
        sup = start_supervisor(lab, pidfile, run_dir)

        # 1. Announce seen on the route server (session setup takes a few s).
        t_start = time.time()
        for prefix in PREFIXES:
            assert mon.first("add", prefix, t_start - 1, 30), f"{prefix} never announced"
        bgp = json.loads(lab["rs_frr"].vtysh("show ip bgp json"))
        for prefix in PREFIXES:
            path = bgp["routes"][prefix][0]
            assert path["peerId"] == SMUX_IP and path["path"] == "65001"

        # 2. Health endpoint stops answering (process still alive): withdraw < 1 s.
        t0 = time.time()
        os.kill(standin.pid, signal.SIGUSR1)
        t_del = [mon.first("del", p, t0, 5) for p in PREFIXES]
        assert all(t_del), "routes not withdrawn after the health endpoint stopped"
        health_latency = max(t_del) - t0

        # 3. Endpoint answers again: announced again.
        t1 = time.time()
        os.kill(standin.pid, signal.SIGUSR2)
        t_add = [mon.first("add", p, t1, 10) for p in PREFIXES]
        assert all(t_add), "routes not re-announced when health came back"
        reannounce_latency = max(t_add) - t1

        # 4. The SMux hangs (SIGSTOP: connections are accepted by the kernel but
        #    never answered, the process lives on), the worst case for detection:
        #    every probe has to time out.  Withdraw < 1 s, then announce again.
        time.sleep(0.5)
        t3 = time.time()
        os.kill(standin.pid, signal.SIGSTOP)
        t_del3 = [mon.first("del", p, t3, 5) for p in PREFIXES]
        os.kill(standin.pid, signal.SIGCONT)
        assert all(t_del3), "routes not withdrawn after the health endpoint hung"
        hang_latency = max(t_del3) - t3
        t4 = time.time()
        assert all(mon.first("add", p, t4, 10) for p in PREFIXES), "not re-announced after the hang"

        # 5. The SMux process exits: withdraw < 1 s.
        time.sleep(0.5)
        t2 = time.time()
        os.kill(standin.pid, signal.SIGKILL)
        t_del2 = [mon.first("del", p, t2, 5) for p in PREFIXES]
        assert all(t_del2), "routes not withdrawn after the SMux process exited"
        exit_latency = max(t_del2) - t2

        print(f"\nFRR withdraw latency: health endpoint stopped {health_latency * 1000:.0f} ms, "
              f"hung {hang_latency * 1000:.0f} ms, SMux process exited {exit_latency * 1000:.0f} ms "
              f"(re-announce {reannounce_latency * 1000:.0f} ms)")
        assert health_latency < WITHDRAW_LIMIT_S
        assert hang_latency < WITHDRAW_LIMIT_S
        assert exit_latency < WITHDRAW_LIMIT_S
        assert not any(fib_has(rs, p) for p in PREFIXES)

        # 6. The supervisor stops cleanly: its FRR daemons are gone.
        frr_pids = [tl.read_pidfile(os.path.join(run_dir, f"{d}.pid")) for d in ("zebra", "bgpd")]
        assert all(frr_pids)
        tl.stop_pid(sup.pid)
        assert sup.wait(5) == 0
        for pid in frr_pids:
            assert not os.path.exists(f"/proc/{pid}"), f"FRR daemon {pid} left running"
    finally:
        import shutil
        if not os.environ.get("HLB_KEEP"):
            shutil.rmtree(base, ignore_errors=True)
        else:
            print("kept", base)


def test_killed_supervisor_takes_frr_down_and_routes_away(lab):
    """SIGKILL of the supervisor: its bgpd and zebra get SIGTERM (PDEATHSIG),
    the BGP session closes and the route server drops the routes."""
    mon = lab["monitor"]
    base = tempfile.mkdtemp(prefix=f"hlb-frr-sm-{lab['tag']}-")
    os.chmod(base, 0o755)
    pidfile, run_dir = os.path.join(base, "smux.pid"), os.path.join(base, "frr")
    try:
        start_standin(lab, pidfile)
        sup = start_supervisor(lab, pidfile, run_dir)
        t_start = time.time()
        assert mon.first("add", PREFIXES[0], t_start - 1, 30), "never announced"
        frr_pids = [tl.read_pidfile(os.path.join(run_dir, f"{d}.pid")) for d in ("zebra", "bgpd")]
        t0 = time.time()
        os.kill(sup.pid, signal.SIGKILL)
        t_del = mon.first("del", PREFIXES[0], t0, 5)
        assert t_del, "routes stayed after the supervisor was killed"
        print(f"\nFRR withdraw latency after supervisor SIGKILL: {(t_del - t0) * 1000:.0f} ms")
        assert t_del - t0 < WITHDRAW_LIMIT_S
        deadline = time.monotonic() + 5
        while any(os.path.exists(f"/proc/{pid}") for pid in frr_pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(os.path.exists(f"/proc/{pid}") for pid in frr_pids), "FRR outlived supervisor"
    finally:
        import shutil
        shutil.rmtree(base, ignore_errors=True)


def test_bad_arguments_name_the_field():
    r = subprocess.run([sys.executable, SUPERVISOR, "--name", "hlbx", "--asn", "65001",
                        "--router-id", "10.0.0.1", "--neighbor", "10.0.0.2:65000",
                        "--prefix", "10.100.0.0/33", "--health-url", "http://127.0.0.1:1/health"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--prefix" in r.stderr and "10.100.0.0/33" in r.stderr
    r = subprocess.run([sys.executable, SUPERVISOR, "--name", "frr1", "--asn", "65001",
                        "--router-id", "10.0.0.1", "--neighbor", "10.0.0.2:65000",
                        "--prefix", "10.100.0.0/16", "--health-url", "http://127.0.0.1:1/health"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--name" in r.stderr


def test_one_late_probe_does_not_withdraw_two_in_a_row_do(monkeypatch):
    """Default --fall 2: a single failed probe (an answer late on a busy host)
    keeps the routes; the second failure in a row withdraws them. No FRR runs:
    the announcements are recorded instead."""
    cfg = frr.parse_args(["--name", "hlbfall", "--asn", "65001", "--router-id", "10.0.0.1",
                          "--neighbor", "10.0.0.2:65000", "--prefix", "10.100.0.0/16",
                          "--health-url", "http://127.0.0.1:1/health", "--run-dir", "/nonexistent"])
    monkeypatch.setattr(frr, "FrrInstance", lambda *args: None)
    sup = frr.Supervisor(cfg)
    calls = []
    monkeypatch.setattr(sup, "set_announced", lambda on, reason: (calls.append(on), setattr(sup, "announced", on)))
    answers = iter([(True, None), (True, None), (False, "timed out"), (True, None),
                    (False, "timed out"), (False, "timed out")])
    monkeypatch.setattr(frr, "probe", lambda url, timeout, tls=None: next(answers))
    for _ in range(4):
        sup.step()
    assert calls == [True], "announced after --rise 2, kept through one late probe"
    sup.step()
    assert calls == [True]
    sup.step()
    assert calls == [True, False], "withdrawn at the second failed probe in a row"


class FakeVtyDaemon:
    """A unix socket that answers like an FRR daemon's vty: per connection, it
    records the NUL-terminated commands and replies output + 3 NULs + status.
    'show split' answers with the terminator split across two writes; 'bad'
    fails with status 2 (CMD_ERR_NO_MATCH).  hang_up() closes the connection."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(4)
        self.connections = []   # commands received, one list per connection
        self.conn = None
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conn, commands, buf = conn, [], b""
            self.connections.append(commands)
            while True:
                try:
                    data = conn.recv(4096)
                except OSError:
                    break
                if not data:
                    break
                buf += data
                while b"\0" in buf:
                    line, buf = buf.split(b"\0", 1)
                    commands.append(line.decode())
                    if line == b"show split":
                        conn.sendall(b"line 1\nline 2\n\0\0")
                        time.sleep(0.05)
                        conn.sendall(b"\0\0")
                    elif line == b"bad":
                        conn.sendall(b"% Unknown command: bad\n\0\0\0\x02")
                    elif line == b"no network 10.9.0.0/16":     # not announced
                        conn.sendall(b"% Can't find static route specified\n\0\0\0\x0d")
                    else:
                        conn.sendall(b"\0\0\0\0")
            conn.close()

    def hang_up(self):
        self.conn.shutdown(socket.SHUT_RDWR)

    def close(self):
        self.sock.close()


def test_vty_session_speaks_vtysh_protocol(tmp_path):
    """The kept-open vty connection that replaced one vtysh process per
    announce/withdraw: framing, errors and reconnection."""
    path = str(tmp_path / "bgpd.vty")
    daemon = FakeVtyDaemon(path)
    vty = frr.VtySession(path, timeout=2.0)
    try:
        # Output is read up to the terminator, even when it arrives in two pieces.
        assert vty.run("show split") == "line 1\nline 2\n"
        assert vty.run("configure terminal", "network 10.100.0.0/16", "end") == ""
        # One connection for both calls, put in enable mode once.
        assert daemon.connections == [["enable", "show split", "configure terminal",
                                        "network 10.100.0.0/16", "end"]]
        # A failing command raises with the daemon's message and stops the list;
        # the next call starts on a fresh connection (no vty left in config mode).
        with pytest.raises(RuntimeError, match="Unknown command: bad"):
            vty.run("configure terminal", "bad", "end")
        assert daemon.connections[0][-2:] == ["configure terminal", "bad"]
        assert vty.run("end") == ""
        assert daemon.connections[1] == ["enable", "end"]
        # Withdrawing what is not announced (a resend after a broken connection
        # whose first try had withdrawn it) has the state asked for: no error.
        assert "Can't find" in vty.run("configure terminal", "no network 10.9.0.0/16", "end")
        assert daemon.connections[1][-3:] == ["configure terminal", "no network 10.9.0.0/16", "end"]
        # The daemon closed the connection (restart, vty timeout): reopened, resent.
        daemon.hang_up()
        time.sleep(0.05)
        assert vty.run("show split") == "line 1\nline 2\n"
        assert daemon.connections[2] == ["enable", "show split"]
    finally:
        vty.close()
        daemon.close()


def test_https_health_probe_checks_the_smux_certificate(tmp_path):
    """An SMux whose control API runs TLS is probed over HTTPS: its certificate must be
    issued by --health-ca for the probed address, else the probe fails (and the
    aggregates would be withdrawn)."""
    import http.server
    import ssl
    certs = tl.make_certs(str(tmp_path / "tls"), ("server", "smux", "--ip", "127.0.0.1"))
    other = tl.make_certs(str(tmp_path / "other"))

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Health)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(f"{certs}/smux.pem", f"{certs}/smux.key")
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"https://127.0.0.1:{srv.server_address[1]}/health"
        args = ["--name", "hlbtls", "--asn", "65001", "--router-id", "10.0.0.1", "--neighbor", "10.0.0.2:65000",
                "--prefix", "10.100.0.0/16", "--health-url", url]
        good = frr.parse_args(args + ["--health-ca", f"{certs}/ca.pem"])
        assert frr.probe(good.health_url, 2, good.tls) == (True, None)
        bad = frr.parse_args(args + ["--health-ca", f"{other}/ca.pem"])
        ok, err = frr.probe(bad.health_url, 2, bad.tls)
        assert not ok and "CERTIFICATE_VERIFY_FAILED" in err, err
        by_name = frr.parse_args(args[:-1] + [url.replace("127.0.0.1", "localhost"), "--health-ca", f"{certs}/ca.pem"])
        ok, err = frr.probe(by_name.health_url, 2, by_name.tls)
        assert not ok and "localhost" in err, "the certificate names 127.0.0.1 only: " + str(err)
    finally:
        srv.shutdown()
    r = subprocess.run([sys.executable, SUPERVISOR] + args[:-1] + ["http://127.0.0.1:1/health", "--health-ca",
                                                                    f"{certs}/ca.pem"], capture_output=True, text=True)
    assert r.returncode == 2 and "--health-ca: only with an https:// --health-url" in r.stderr, r.stderr
