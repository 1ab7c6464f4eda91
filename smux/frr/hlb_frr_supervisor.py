#!/usr/bin/env python3
"""hlb-frr-supervisor: announces an SMux host's VIP aggregate prefixes over
BGP while the SMux is healthy, and withdraws them within a second when it
is not.

It starts its own FRR (zebra + bgpd, private run directory, as in
shared/ENVIRONMENT.md), peers with the fabric's route server(s), then every
--interval:
  healthy   = SMux process alive (--pid / --pidfile, if given)
              and GET --health-url answers 2xx within --timeout
  announce  `network P` for every --prefix after --rise healthy probes
  withdraw  `no network P` after --fall unhealthy probes in a row (or at once
            when the watched process exits)

FRR runs as children that get SIGTERM if the supervisor dies (PR_SET_PDEATHSIG),
so a dead supervisor closes the BGP session and the peer drops the routes too.

Latency budget of a withdrawal: detection <= interval + fall * timeout
(0.1 + 2 * 0.2 s by default; a refused connection takes fall probes, a process
exit is seen at once), the `no network` commands over a vty connection kept
open to bgpd (under 1 ms; a vtysh process took 85-170 ms), then BGP to the
peer's FIB ~110 ms (bgpd holds route changes 50 ms before processing them, on
each side).  That is 0.61 s at worst with the defaults.  --fall 2 because on a
busy host one answer can come late: a single late probe withdrew a healthy
SMux in the emulation when the controller's JVM started.
"""
import argparse
import ctypes
import ipaddress
import json
import os
import pwd
import select
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

FRR_BIN = os.environ.get("HLB_FRR_BIN", "/usr/lib/frr")
PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL("libc.so.6", use_errno=True)


def log(level, msg, **fields):
    rec = {"ts": round(time.time(), 3), "level": level, "msg": msg}
    rec.update(fields)
    print(json.dumps(rec), file=sys.stderr, flush=True)


def _die_with_parent():
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


# zebra switches to user frr, which clears PR_SET_PDEATHSIG, so a small reaper
# (root, keeps its PDEATHSIG) terminates the daemons if we die.  It also acts
# when we died before its handler was in place (parent PID changed).
_REAPER = """
import os, signal, sys
parent, pids = int(sys.argv[1]), [int(p) for p in sys.argv[2:]]
def reap(*_):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    os._exit(0)
signal.signal(signal.SIGTERM, reap)
if os.getppid() != parent:
    reap()
while True:
    signal.pause()
"""


class VtySession:
    """A connection to one FRR daemon's vty socket, kept open.

    It speaks what vtysh speaks to the daemons: a command is sent NUL-terminated;
    the reply is the command's output, then three NUL bytes and the status
    (0 = CMD_SUCCESS).  Announcing or withdrawing through it takes a few ms,
    where starting a vtysh process takes 85-170 ms of the 1 s budget."""

    def __init__(self, path, timeout=5.0):
        self.path = path
        self.timeout = timeout
        self.sock = None

    def _connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.path)
        except OSError:
            sock.close()
            raise
        self.sock = sock
        self._command("enable")   # a new vty starts in view mode

    def _command(self, line):
        """(status, output) of one command."""
        self.sock.sendall(line.encode() + b"\0")
        reply = b""
        while len(reply) < 4 or reply[-4:-1] != b"\0\0\0":
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError(f"{self.path}: closed by the daemon")
            reply += chunk
        return reply[-1], reply[:-4].decode(errors="replace")

    def run(self, *commands):
        """Runs the commands in order and returns their output; raises
        RuntimeError on the first one that fails.  A broken connection (daemon
        restarted, vty timed out) is reopened once and the commands resent; a
        `no network` that bgpd answers "Can't find" (already withdrawn, e.g. before
        the connection broke) has the state it asks for and is not a failure."""
        for attempt in (1, 2):
            try:
                if self.sock is None:
                    self._connect()
                out = []
                for c in commands:
                    status, text = self._command(c)
                    if c.startswith("no network ") and "Can't find" in text:
                        out.append(text)
                        continue
                    if status != 0 or "% " in text:
                        # Leave no vty half-way in config mode: start afresh next time.
                        self.close()
                        raise RuntimeError(f"vty {self.path}: {c!r}: status {status}: {text.strip()}")
                    out.append(text)
                return "".join(out)
            except OSError:
                self.close()
                if attempt == 2:
                    raise

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None


class FrrInstance:
    """zebra + bgpd with a private run directory; stopped by PID."""

    def __init__(self, name, run_dir, bgpd_conf):
        if not name.startswith("hlb"):
            raise ValueError(f"name: FRR instances on this machine must start with 'hlb', got {name!r}")
        self.name = name
        self.dir = run_dir
        self.procs = {}
        self.reaper = None
        self.bgpd_vty = VtySession(os.path.join(run_dir, "bgpd.vty"))
        os.makedirs(run_dir, exist_ok=True)
        frr = pwd.getpwnam("frr")
        os.chown(run_dir, frr.pw_uid, frr.pw_gid)
        # zebra drops to user frr: every parent directory must let it through.
        parent = os.path.dirname(os.path.abspath(run_dir))
        while parent != "/":
            st = os.stat(parent)
            if not st.st_mode & 0o001 and st.st_uid != frr.pw_uid:
                raise ValueError(f"run dir: user frr cannot enter {parent} (mode "
                                 f"{oct(st.st_mode & 0o777)}); use a directory it can reach")
            parent = os.path.dirname(parent)
        with open(os.path.join(run_dir, "zebra.conf"), "w") as f:
            f.write(f"hostname {name}\nlog file {run_dir}/zebra.log\n")
        with open(os.path.join(run_dir, "bgpd.conf"), "w") as f:
            f.write(bgpd_conf)
        for conf in ("zebra.conf", "bgpd.conf"):
            os.chown(os.path.join(run_dir, conf), frr.pw_uid, frr.pw_gid)

    def start(self, timeout=10.0):
        d = self.dir
        common = ["-N", self.name, "-P", "0", "-z", f"{d}/zserv.api", "--vty_socket", d]
        self._spawn("zebra", [f"{FRR_BIN}/zebra", "-i", f"{d}/zebra.pid", "-f", f"{d}/zebra.conf"]
                    + common)
        self._wait_for(f"{d}/zserv.api", timeout)
        self._spawn("bgpd", [f"{FRR_BIN}/bgpd", "-S", "-i", f"{d}/bgpd.pid", "-f", f"{d}/bgpd.conf"]
                    + common)
        self._wait_for(f"{d}/bgpd.vty", timeout)
        self.reaper = subprocess.Popen(
            [sys.executable, "-c", _REAPER, str(os.getpid())]
            + [str(p.pid) for p in self.procs.values()], preexec_fn=_die_with_parent)

    def _spawn(self, daemon, cmd):
        out = open(os.path.join(self.dir, f"{daemon}.out"), "w")
        self.procs[daemon] = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                              preexec_fn=_die_with_parent)
        out.close()

    def _wait_for(self, path, timeout):
        deadline = time.monotonic() + timeout
        while not os.path.exists(path):
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise RuntimeError(f"FRR {self.name}: {path} did not appear "
                                   f"(exited: {dead}); see {self.dir}/*.out")
            time.sleep(0.02)

    def vtysh(self, *commands, check=True):
        cmd = ["vtysh", "--vty_socket", self.dir]
        for c in commands:
            cmd += ["-c", c]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        if check and (r.returncode != 0 or "% " in r.stdout):
            raise RuntimeError(f"vtysh {commands}: {r.stdout.strip()} {r.stderr.strip()}")
        return r.stdout

    def configure_bgp(self, *commands):
        """Config commands for bgpd over the kept-open vty (see VtySession)."""
        return self.bgpd_vty.run("configure terminal", *commands, "end")

    def dead(self):
        return [n for n, p in self.procs.items() if p.poll() is not None]

    def stop(self, remove_dir=True):
        self.bgpd_vty.close()
        if self.reaper and self.reaper.poll() is None:
            self.reaper.kill()
            self.reaper.wait()
        for daemon in ("bgpd", "zebra"):
            p = self.procs.get(daemon)
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = {}
        if remove_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


def bgpd_config(name, asn, router_id, neighbors, log_file):
    """A bgpd.conf tuned for fast convergence (ENVIRONMENT.md)."""
    lines = ["frr defaults datacenter", f"hostname {name}", f"log file {log_file}",
             f"router bgp {asn}", f" bgp router-id {router_id}", " no bgp ebgp-requires-policy",
             " no bgp network import-check", " timers bgp 1 3",
             " bgp bestpath as-path multipath-relax"]
    for ip, remote_as in neighbors:
        lines += [f" neighbor {ip} remote-as {remote_as}", f" neighbor {ip} timers connect 1",
                  f" neighbor {ip} advertisement-interval 0"]
    lines += [" address-family ipv4 unicast", "  maximum-paths 16"]
    lines += [f"  neighbor {ip} activate" for ip, _ in neighbors]
    lines += [" exit-address-family", ""]
    return "\n".join(lines)


class ConfigError(ValueError):
    pass


def parse_args(argv):
    p = argparse.ArgumentParser(prog="hlb-frr-supervisor", description=__doc__.split("\n\n")[0])
    p.add_argument("--name", required=True, help="FRR pathspace name (must start with hlb)")
    p.add_argument("--run-dir", help="private FRR run directory (default: a new temp dir)")
    p.add_argument("--asn", type=int, required=True, help="this SMux host's AS number")
    p.add_argument("--router-id", required=True)
    p.add_argument("--neighbor", action="append", default=[], required=True,
                   help="route server as IP:ASN (repeatable)")
    p.add_argument("--prefix", action="append", default=[], required=True,
                   help="VIP aggregate to announce, e.g. 10.100.0.0/16 (repeatable)")
    p.add_argument("--health-url", required=True, help="the SMux's GET /health URL (http:// on loopback, "
                   "or https:// when the SMux's control API runs TLS)")
    p.add_argument("--health-ca", help="CA (PEM) of the SMux's certificate, for an https:// --health-url "
                   "(default: the system's CAs)")
    p.add_argument("--pid", type=int, help="SMux process to watch")
    p.add_argument("--pidfile", help="file holding the SMux PID (re-read, survives restarts)")
    p.add_argument("--interval", type=float, default=0.1, help="seconds between probes")
    p.add_argument("--timeout", type=float, default=0.2, help="probe timeout, seconds")
    p.add_argument("--rise", type=int, default=2, help="healthy probes before announcing")
    p.add_argument("--fall", type=int, default=2, help="failed probes in a row before withdrawing")
    a = p.parse_args(argv)
    try:
        if not a.name.startswith("hlb"):
            raise ConfigError(f"--name: must start with 'hlb', got {a.name!r}")
        if not 0 < a.asn < 2 ** 32:
            raise ConfigError(f"--asn: out of range: {a.asn}")
        try:
            ipaddress.IPv4Address(a.router_id)
        except ValueError:
            raise ConfigError(f"--router-id: not an IPv4 address: {a.router_id!r}") from None
        neighbors = []
        for n in a.neighbor:
            ip, _, asn = n.rpartition(":")
            try:
                ipaddress.IPv4Address(ip)
                asn = int(asn)
            except ValueError:
                raise ConfigError(f"--neighbor: expected IP:ASN, got {n!r}") from None
            neighbors.append((ip, asn))
        a.neighbor = neighbors
        prefixes = []
        for pfx in a.prefix:
            try:
                prefixes.append(str(ipaddress.IPv4Network(pfx)))
            except ValueError as e:
                raise ConfigError(f"--prefix: {pfx!r}: {e}") from None
        a.prefix = prefixes
        if not a.health_url.startswith(("http://", "https://")):
            raise ConfigError(f"--health-url: expected an http(s) URL, got {a.health_url!r}")
        a.tls = None
        if a.health_url.startswith("https://"):
            try:
                a.tls = ssl.create_default_context(cafile=a.health_ca)
            except (OSError, ssl.SSLError) as e:
                raise ConfigError(f"--health-ca: cannot load {a.health_ca}: {e}") from None
        elif a.health_ca:
            raise ConfigError("--health-ca: only with an https:// --health-url")
        if a.interval <= 0 or a.timeout <= 0:
            raise ConfigError("--interval/--timeout: must be > 0")
        if a.rise < 1 or a.fall < 1:
            raise ConfigError("--rise/--fall: must be >= 1")
        if a.pid is not None and a.pidfile:
            raise ConfigError("--pid/--pidfile: give one of them")
    except ConfigError as e:
        p.error(str(e))
    return a


class ProcessWatch:
    """Liveness of the SMux process through a pidfd (exit seen at once)."""

    def __init__(self, pid=None, pidfile=None):
        self.fixed_pid, self.pidfile = pid, pidfile
        self.pid = self.fd = None

    def _current_pid(self):
        if self.fixed_pid is not None:
            return self.fixed_pid
        try:
            with open(self.pidfile) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    def alive(self):
        if self.fixed_pid is None and self.pidfile is None:
            return True
        pid = self._current_pid()
        if pid != self.pid:
            if self.fd is not None:
                os.close(self.fd)
            self.pid, self.fd = pid, None
            if pid is not None:
                try:
                    self.fd = os.pidfd_open(pid)
                except OSError:
                    self.fd = None
        if self.fd is None:
            return False
        return not select.select([self.fd], [], [], 0)[0]   # readable = exited

    def fds(self):
        return [self.fd] if self.fd is not None else []


def probe(url, timeout, tls=None):
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=tls) as r:
            return 200 <= r.status < 300, None
    except (OSError, urllib.error.URLError) as e:
        return False, str(e)


class Supervisor:
    def __init__(self, cfg):
        self.cfg = cfg
        self.own_dir = cfg.run_dir is None
        run_dir = cfg.run_dir or tempfile.mkdtemp(prefix=f"{cfg.name}-")
        self.frr = FrrInstance(cfg.name, run_dir,
                               bgpd_config(cfg.name, cfg.asn, cfg.router_id, cfg.neighbor,
                                           f"{run_dir}/bgpd.log"))
        self.watch = ProcessWatch(cfg.pid, cfg.pidfile)
        self.announced = False
        self.ok_streak = self.fail_streak = 0

    def set_announced(self, on, reason):
        verb = "" if on else "no "
        cmds = [f"router bgp {self.cfg.asn}", "address-family ipv4 unicast"]
        cmds += [f"{verb}network {p}" for p in self.cfg.prefix]
        t0 = time.monotonic()
        self.frr.configure_bgp(*cmds)
        self.announced = on
        log("info", "announced" if on else "withdrawn", prefixes=self.cfg.prefix, reason=reason,
            vty_s=round(time.monotonic() - t0, 4))

    def step(self):
        alive = self.watch.alive()
        if alive:
            ok, err = probe(self.cfg.health_url, self.cfg.timeout, self.cfg.tls)
        else:
            ok, err = False, "SMux process not running"
        if ok:
            self.ok_streak, self.fail_streak = self.ok_streak + 1, 0
            if not self.announced and self.ok_streak >= self.cfg.rise:
                self.set_announced(True, "healthy")
        else:
            self.ok_streak, self.fail_streak = 0, self.fail_streak + 1
            if self.announced and (not alive or self.fail_streak >= self.cfg.fall):
                self.set_announced(False, err)

    def run(self, stopping):
        self.frr.start()
        log("info", "FRR started", name=self.cfg.name, dir=self.frr.dir,
            neighbors=[f"{ip}:{asn}" for ip, asn in self.cfg.neighbor])
        while not stopping():
            t_next = time.monotonic() + self.cfg.interval
            self.step()
            dead = self.frr.dead()
            if dead:
                log("error", "FRR daemon exited", daemons=dead)
                return 1
            # Sleep until the next probe, but wake at once if the SMux exits.
            wait = max(0.0, t_next - time.monotonic())
            if self.watch.fds():
                select.select(self.watch.fds(), [], [], wait)
            else:
                time.sleep(wait)
        return 0

    def close(self):
        if self.announced:
            try:
                self.set_announced(False, "supervisor stopping")
            except Exception as e:  # FRR going down withdraws anyway
                log("warn", "withdraw on stop failed", error=str(e))
        self.frr.stop(remove_dir=self.own_dir)


def main(argv=None):
    cfg = parse_args(argv if argv is not None else sys.argv[1:])
    flag = {"stop": False}

    def on_signal(signum, frame):
        flag["stop"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sup = Supervisor(cfg)
    try:
        return sup.run(lambda: flag["stop"])
    except Exception as e:
        log("error", "supervisor failed", error=str(e))
        return 1
    finally:
        sup.close()


if __name__ == "__main__":
    sys.exit(main())
