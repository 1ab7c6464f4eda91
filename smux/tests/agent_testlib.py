"""Shared helpers for the AGENT/OVS/FRR suites: private network namespaces,
a private Open vSwitch userspace instance, and process teardown by PID.

Every resource is named hlb-<area>-<unique> and is removed by the object that
created it (never by process name), also when a test fails.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid

SMUX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_DIR = os.environ.get("HLB_AGENT_BUILD", os.path.join(SMUX_DIR, "build-agent"))


HLB_CERTS = os.path.join(os.path.dirname(SMUX_DIR), "app", "standalone", "deploy", "hlb-certs")


def make_certs(directory, *identities):
    """A CA in directory and each identity (kind, name, *options) of the documented
    script (app/standalone/deploy/hlb-certs, openssl); returns directory."""
    run(["bash", HLB_CERTS, directory, "ca"])
    for kind, name, *opts in identities:
        run(["bash", HLB_CERTS, directory, kind, name] + list(opts))
    return directory


def unique(prefix):
    """A short unique name (interface names are limited to 15 characters)."""
    return f"{prefix}{uuid.uuid4().hex[:6]}"


def run(cmd, ns=None, check=True, **kw):
    if ns:
        cmd = ["ip", "netns", "exec", ns] + cmd
    return subprocess.run(cmd, check=check, capture_output=True, text=True, **kw)


def stop_pid(pid, timeout=3.0):
    """SIGTERM a process we started, SIGKILL it if it does not go."""
    if not pid:
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        try:  # reap it if it is our child
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            pass
        time.sleep(0.02)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def read_pidfile(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


class Netns:
    """A network namespace of our own, deleted on close()."""

    def __init__(self, name):
        assert name.startswith("hlb"), name
        self.name = name
        run(["ip", "netns", "add", name])
        run(["ip", "link", "set", "lo", "up"], ns=name)

    def run(self, cmd, check=True, **kw):
        return run(cmd, ns=self.name, check=check, **kw)

    def popen(self, cmd, **kw):
        return subprocess.Popen(["ip", "netns", "exec", self.name] + cmd, **kw)

    def close(self):
        run(["ip", "netns", "del", self.name], check=False)


def veth_pair(ns_a, if_a, addr_a, ns_b, if_b, addr_b):
    """Connect two namespaces with a veth pair; addresses as 'a.b.c.d/len'."""
    run(["ip", "link", "add", if_a, "netns", ns_a.name, "type", "veth",
         "peer", "name", if_b, "netns", ns_b.name])
    for ns, ifname, addr in ((ns_a, if_a, addr_a), (ns_b, if_b, addr_b)):
        if addr:
            ns.run(["ip", "addr", "add", addr, "dev", ifname])
        ns.run(["ip", "link", "set", ifname, "up"])
        # Packets from the kernel otherwise carry unfinished checksums.
        ns.run(["ethtool", "-K", ifname, "tx", "off"], check=False)


class UnixctlClient:
    """JSON-RPC client for an OVS unixctl socket (what ovs-appctl speaks).

    call_many() pipelines requests on one connection, which is ~50x faster
    than one ovs-appctl process per request."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.decoder = json.JSONDecoder()
        self.buf = ""
        self.next_id = 0

    def _send(self, method, params):
        self.next_id += 1
        msg = json.dumps({"method": method, "params": params, "id": self.next_id})
        self.sock.sendall(msg.encode())
        return self.next_id

    def _recv(self):
        while True:
            stripped = self.buf.lstrip()
            if stripped:
                try:
                    obj, end = self.decoder.raw_decode(stripped)
                    self.buf = stripped[end:]
                    return obj
                except json.JSONDecodeError:
                    pass
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("unixctl connection closed")
            self.buf += chunk.decode()

    def call(self, method, *params):
        return self.call_many(method, [list(params)])[0]

    def call_many(self, method, params_list, window=64):
        """Returns the results in order; raises on any unixctl error."""
        results = []
        pending = 0
        it = iter(params_list)
        done = False
        while not done or pending:
            while not done and pending < window:
                try:
                    self._send(method, next(it))
                    pending += 1
                except StopIteration:
                    done = True
            if pending:
                reply = self._recv()
                pending -= 1
                if reply.get("error"):
                    raise RuntimeError(f"{method}: {reply['error']}")
                results.append(reply["result"])
        return results

    def close(self):
        self.sock.close()


class PrivateOVS:
    """ovsdb-server + ovs-vswitchd with a private run/db/log dir, inside a
    namespace of our own.  Userspace datapath only (no kernel module here)."""

    def __init__(self, tag=None, prefix="hlb-ovs-"):
        self.tag = tag or uuid.uuid4().hex[:6]
        self.dir = tempfile.mkdtemp(prefix=f"{prefix}{self.tag}-")
        self.ns = Netns(f"{prefix}{self.tag}")
        self.env = dict(os.environ, OVS_RUNDIR=self.dir, OVS_DBDIR=self.dir,
                        OVS_LOGDIR=self.dir)
        self.db_sock = os.path.join(self.dir, "db.sock")
        self.vswitchd_ctl = os.path.join(self.dir, "ovs-vswitchd.ctl")
        self.pids = []
        try:
            self._start()
        except Exception:
            self.close()
            raise

    def _ns_run(self, cmd):
        return subprocess.run(["ip", "netns", "exec", self.ns.name] + cmd, env=self.env,
                              check=True, capture_output=True, text=True)

    def _start(self):
        d = self.dir
        schema = "/usr/share/openvswitch/vswitch.ovsschema"
        subprocess.run(["ovsdb-tool", "create", f"{d}/conf.db", schema], check=True,
                       env=self.env, capture_output=True)
        self._ns_run(["ovsdb-server", f"{d}/conf.db", f"--remote=punix:{self.db_sock}",
                      f"--pidfile={d}/ovsdb-server.pid", f"--unixctl={d}/ovsdb-server.ctl",
                      f"--log-file={d}/ovsdb-server.log", "--detach", "--no-chdir"])
        self.pids.append(read_pidfile(f"{d}/ovsdb-server.pid"))
        self.vsctl("--no-wait", "init")
        self._ns_run(["ovs-vswitchd", f"unix:{self.db_sock}",
                      f"--pidfile={d}/ovs-vswitchd.pid", f"--unixctl={self.vswitchd_ctl}",
                      f"--log-file={d}/ovs-vswitchd.log", "--detach", "--no-chdir"])
        self.pids.append(read_pidfile(f"{d}/ovs-vswitchd.pid"))

    def vsctl(self, *args):
        return subprocess.run(["ovs-vsctl", f"--db=unix:{self.db_sock}", "--timeout=20"]
                              + list(args), check=True, capture_output=True, text=True,
                              env=self.env).stdout

    def ofctl(self, *args):
        return subprocess.run(["ovs-ofctl", "-O", "OpenFlow15"] + list(args), check=True,
                              capture_output=True, text=True, env=self.env).stdout

    def unixctl(self):
        return UnixctlClient(self.vswitchd_ctl)

    def close(self):
        for pid in reversed(self.pids):
            stop_pid(pid)
        self.pids = []
        self.ns.close()
        shutil.rmtree(self.dir, ignore_errors=True)
