#!/usr/bin/env python3
"""hlb-agent: the hybridlb host agent that runs on every DIP host.

- puts the VIPs on lo (and keeps the host from answering ARP for them), so
  decapsulated packets reach sockets bound to the VIP and replies leave with
  the VIP as source, straight to the client (DSR);
- runs the packet path in C: the XDP decapsulator (hlb-agent-xdp) when it can
  be attached, else the user-space fallback (hlb-agent-udecap: raw sockets +
  TUN); both decapsulate only packets from an allowed mux (--allow-mux) to a
  VIP of this host (--vip, --vip-prefix), and drop and count the others;
- probes the local service (TCP connect or HTTP GET) and reports DIP health;
- exports per-(VIP, mux, encapsulation) packet/byte counters for the
  controller's traffic matrix, as JSON (/stats) and Prometheus text (/metrics);
- with --cookie-config, does the server's part of Cheetah (p4/COOKIE-SPEC.md): the
  XDP backend's programs write the cookie into TSval and restore TSecr; this host's
  server id and keys come from that file and from PUT /cookie (cookie_config.py);
  closes of connections a stateful SMux hinted go to their owner SMux, and with
  --load-report-ms this host's load (--load-metric: busy CPUs, or ESTABLISHED connections
  to its VIPs) to every SMux listed there (smux_reports.py).

Management endpoints (HTTP on --listen; HTTPS with --tls-cert/--tls-key/--tls-ca, where
writes need a client certificate issued by that CA for client use, and only then may
--listen be another address than loopback):
  GET /health      agent + decap backend + DIP health (JSON, always 200)
  GET /dip-health  200 when the local service is healthy, 503 otherwise
  GET /stats       counters and rates per VIP (JSON)
  GET /metrics     Prometheus text format
  GET /cookie      Cheetah cookie configuration (key fingerprints) and counters
  PUT /cookie      replace it (JSON, cookie_config.py); 400 naming the field on error
"""
import argparse
import ipaddress
import json
import os
import select
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry, generate_latest, CONTENT_TYPE_LATEST
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

import cookie_config
import smux_reports

AGENT_DIR = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BUILD = os.environ.get("HLB_AGENT_BUILD",
                               os.path.join(os.path.dirname(AGENT_DIR), "build-agent"))
# Loading and verifying the XDP and cookie programs: 16 agents starting at once on a loaded
# 2-core host took over 5 s, and the fallback then left those hosts without cookies.
BACKEND_START_TIMEOUT = 30.0
LOAD_METRICS = ("cpu", "connections")   # --load-metric (smux_reports.CpuLoad, ConnectionLoad)
MAX_ALLOWED = 256   # HLB_MAX_ALLOWED in include/hlb_decap.h: prefixes per allow-list
MAX_BODY = 1 << 20  # bytes of a PUT body (413 beyond)
CONN_TIMEOUT = 10.0  # seconds a management connection may stall (TLS handshake, request)


def log(level, msg, **fields):
    """JSON lines on stderr."""
    rec = {"ts": round(time.time(), 3), "level": level, "msg": msg}
    rec.update(fields)
    print(json.dumps(rec), file=sys.stderr, flush=True)


class ConfigError(ValueError):
    pass


def ipv4(field, value):
    try:
        return str(ipaddress.IPv4Address(value))
    except ValueError:
        raise ConfigError(f"{field}: not an IPv4 address: {value!r}") from None


def ipv4_prefixes(field, values):
    """'A.B.C.D' or 'A.B.C.D/LEN' strings -> normalised prefix strings."""
    out = []
    for v in values:
        try:
            out.append(str(ipaddress.IPv4Network(v)))
        except ValueError as e:
            raise ConfigError(f"{field}: {v!r}: {e}") from None
    if len(out) > MAX_ALLOWED:
        raise ConfigError(f"{field}: at most {MAX_ALLOWED} prefixes, got {len(out)}")
    return out


def parse_check(value):
    """tcp://host:port or http://host:port/path -> (kind, host, port, url)."""
    u = urllib.parse.urlsplit(value)
    if u.scheme not in ("tcp", "http") or not u.hostname or not u.port:
        raise ConfigError(f"--check: expected tcp://HOST:PORT or http://HOST:PORT/PATH, got {value!r}")
    return u.scheme, u.hostname, u.port, value


def parse_listen(value):
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--listen: expected HOST:PORT, got {value!r}")
    return host, int(port)


def build_config(argv):
    p = argparse.ArgumentParser(prog="hlb-agent", description=__doc__.split("\n\n")[0])
    p.add_argument("--iface", help="uplink interface (XDP attaches here)")
    p.add_argument("--local-ip", action="append", default=[], required=True,
                   help="this host's underlay address(es): outer destination of tunnels")
    p.add_argument("--vip", action="append", default=[], help="VIP to serve (put on lo)")
    p.add_argument("--vip-prefix", action="append", default=[],
                   help="VIPs served here but not put on lo by the agent, e.g. an aggregate "
                        "routed 'local' to lo (A.B.C.D/LEN, repeatable)")
    p.add_argument("--allow-mux", action="append", default=[],
                   help="tunnel source address or prefix of the SMuxes and HMux switches "
                        "(repeatable); none: accept any, with a warning")
    p.add_argument("--dip", help="address reported as this DIP (default: first --local-ip)")
    p.add_argument("--decap", choices=("auto", "xdp", "userspace"), default="auto")
    p.add_argument("--xdp-mode", choices=("auto", "native", "generic"), default="auto")
    p.add_argument("--tun-name", default="hlbdecap0", help="TUN device of the fallback")
    p.add_argument("--check", action="append", default=[],
                   help="tcp://HOST:PORT or http://HOST:PORT/PATH of a local service (repeatable: "
                        "the DIP is healthy when every check passes)")
    p.add_argument("--check-interval", type=float, default=1.0)
    p.add_argument("--check-timeout", type=float, default=0.5)
    p.add_argument("--rise", type=int, default=2, help="successes before healthy")
    p.add_argument("--fall", type=int, default=2, help="failures before unhealthy")
    p.add_argument("--listen", default="127.0.0.1:9100",
                   help="management HOST:PORT (another address than loopback needs the --tls-* options)")
    p.add_argument("--tls-cert", help="this agent's server certificate (PEM; app/standalone/deploy/hlb-certs)")
    p.add_argument("--tls-key", help="its private key (PEM)")
    p.add_argument("--tls-ca", help="CA (PEM) of the controllers' client certificates: only they may write")
    p.add_argument("--stats-interval-ms", type=int, default=1000)
    p.add_argument("--build-dir", default=DEFAULT_BUILD, help="where the C binaries are")
    p.add_argument("--no-vip-setup", action="store_true",
                   help="do not add VIPs to lo nor touch arp sysctls")
    p.add_argument("--cookie-config", help="Cheetah cookie configuration (JSON, kept across "
                   "restarts; PUT /cookie rewrites it); without it, no cookies")
    p.add_argument("--cgroup", default="/",
                   help="path in the cgroup v2 hierarchy whose sockets get the cookie "
                        "keep-alive (default: all of this network namespace)")
    p.add_argument("--load-report-ms", type=int, default=0,
                   help="report this host's load to the SMuxes of the cookie "
                        "configuration's smuxes every N ms (ToN: about 100); 0: off")
    p.add_argument("--load-metric", choices=LOAD_METRICS, default="cpu",
                   help="the load --load-report-ms reports: 'cpu' (default: CPUs this machine "
                        "kept busy, 1 = one CPU, as ToN IV-B; for one DIP per machine) or "
                        "'connections' (ESTABLISHED connections to this host's VIPs, counted "
                        "by the cookie sockops program: needs --cookie-config and the XDP "
                        "backend; for DIPs sharing a machine). Every DIP of a VIP must report "
                        "the same metric: the SMuxes compare their loads with each other")
    p.add_argument("--owner-check-ms", type=int, default=1000,
                   help="ask the stateful owner SMuxes of the cookie configuration for their "
                        "boot id every N ms, and re-report this host's connections to one that "
                        "is new or restarted (COOKIE-SPEC §7, Adoption); 0: off")
    p.add_argument("--smux-tls-cert", help="this agent's client certificate for https:// SMuxes "
                   "(PEM; app/standalone/deploy/hlb-certs DIR client NAME)")
    p.add_argument("--smux-tls-key", help="its private key (PEM)")
    p.add_argument("--smux-tls-ca", help="CA (PEM) of the SMuxes' server certificates")
    p.add_argument("--pin-dir", help="bpffs directory to pin the cookie state in (kept "
                   "across restarts of the agent)")
    p.add_argument("--prism-pin-dir", help="bpffs directory to pin the Prism steering map in "
                   "(front-end hosts of a Prism VIP: the front end steers handed-off "
                   "connections through it; smux/prism/README.md); needs the XDP backend")
    p.add_argument("--prism-backend", action="store_true",
                   help="this host is a backend of a Prism VIP: a tunnelled TCP segment of a "
                        "flow without a ready socket here (not imported yet) is dropped, not "
                        "answered with an RST (the front ends' --steer-before-import needs it); "
                        "needs the XDP backend")
    a = p.parse_args(argv)
    try:
        a.local_ip = [ipv4("--local-ip", x) for x in a.local_ip]
        a.vip = [ipv4("--vip", x) for x in a.vip]
        a.vip_prefix = ipv4_prefixes("--vip-prefix", a.vip_prefix)
        a.allow_mux = ipv4_prefixes("--allow-mux", a.allow_mux)
        # Inner destinations the backends accept: the VIPs as /32s and the prefixes.
        a.allow_vip = ipv4_prefixes("--vip/--vip-prefix", [f"{v}/32" for v in a.vip] + a.vip_prefix)
        a.dip = ipv4("--dip", a.dip) if a.dip else a.local_ip[0]
        a.check = [parse_check(c) for c in a.check]
        a.listen = parse_listen(a.listen)
        a.tls = tls_context(a.tls_cert, a.tls_key, a.tls_ca)
        if a.tls is None and not is_loopback(a.listen[0]):
            raise ConfigError(f"--listen: {a.listen[0]} is not a loopback address: the agent serves other "
                              "hosts only with mutual TLS (--tls-cert, --tls-key, --tls-ca)")
        if a.decap in ("auto", "xdp") and not a.iface:
            raise ConfigError(f"--iface: required for --decap {a.decap}")
        if a.iface and not os.path.exists(f"/sys/class/net/{a.iface}"):
            raise ConfigError(f"--iface: no interface {a.iface!r}")
        if not 0 < len(a.tun_name) < 16:
            raise ConfigError(f"--tun-name: must be 1..15 characters, got {a.tun_name!r}")
        for name in ("check_interval", "check_timeout"):
            if getattr(a, name) <= 0:
                raise ConfigError(f"--{name.replace('_', '-')}: must be > 0")
        if a.rise < 1 or a.fall < 1:
            raise ConfigError("--rise/--fall: must be >= 1")
        if a.stats_interval_ms < 10:
            raise ConfigError("--stats-interval-ms: must be >= 10")
        if a.cookie_config:
            cookie_config.load(a.cookie_config)   # a bad file is refused at start
        a.smux_tls = smux_tls(a.smux_tls_cert, a.smux_tls_key, a.smux_tls_ca)
        if a.load_report_ms and not 10 <= a.load_report_ms <= 60000:
            raise ConfigError(f"--load-report-ms: expected 10..60000 (or 0: off), got {a.load_report_ms}")
        if a.owner_check_ms and not 100 <= a.owner_check_ms <= 60000:
            raise ConfigError(f"--owner-check-ms: expected 100..60000 (or 0: off), got {a.owner_check_ms}")
        if a.load_report_ms and not a.cookie_config:
            raise ConfigError("--load-report-ms: needs --cookie-config (its smuxes list names the SMuxes)")
        if a.load_metric == "connections":
            if not a.cookie_config:
                raise ConfigError("--load-metric connections: needs --cookie-config (the cookie "
                                  "sockops program counts the connections)")
            if a.decap == "userspace":
                raise ConfigError("--load-metric connections: the count comes with the XDP "
                                  "backend's cookie programs, not with --decap userspace")
        if a.prism_pin_dir and a.decap == "userspace":
            raise ConfigError("--prism-pin-dir: Prism steering runs in the XDP backend, "
                              "not with --decap userspace")
        if a.prism_backend and a.decap == "userspace":
            raise ConfigError("--prism-backend: the guard runs in the XDP backend, "
                              "not with --decap userspace")
        if a.prism_pin_dir or a.prism_backend:
            a.decap = "xdp"   # no silent fallback to a backend that cannot steer
        if a.load_metric == "connections" and a.load_report_ms:
            a.decap = "xdp"   # nor to one that cannot count
    except (ConfigError, cookie_config.CookieConfigError) as e:
        p.error(str(e))
    return a


def smux_tls(cert, key, ca):
    """The client side of the reports to https:// SMuxes (smux_reports.py); all or none."""
    names = ("--smux-tls-cert", "--smux-tls-key", "--smux-tls-ca")
    given = [o for o, v in zip(names, (cert, key, ca)) if v]
    if given and len(given) != 3:
        raise ConfigError(f"{sorted(set(names) - set(given))[0]}: required with {', '.join(given)}")
    try:
        return smux_reports.client_tls(cert, key, ca)
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"--smux-tls-cert/--smux-tls-key/--smux-tls-ca: cannot load them: {e}") from None


def is_loopback(host):
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False


def tls_context(cert, key, ca):
    """The management API's TLS: our certificate, and the CA whose client certificates may
    write (asked for, not required: reads need none). None without TLS options."""
    given = [o for o, v in (("--tls-cert", cert), ("--tls-key", key), ("--tls-ca", ca)) if v]
    if not given:
        return None
    if len(given) != 3:
        missing = sorted({"--tls-cert", "--tls-key", "--tls-ca"} - set(given))
        raise ConfigError(f"{missing[0]}: required with {', '.join(given)}")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"--tls-cert/--tls-key: cannot load {cert} with {key}: {e}") from None
    try:
        ctx.load_verify_locations(cafile=ca)
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"--tls-ca: cannot load {ca}: {e}") from None
    # OpenSSL checks a client certificate for the client purpose: a server certificate of
    # the same CA (another agent's, an SMux's) cannot write.
    ctx.verify_mode = ssl.CERT_OPTIONAL
    return ctx


class ManagementServer(ThreadingHTTPServer):
    """The management API; with a TLS context, each connection's handshake runs in its
    own thread (a slow client cannot stall the accept loop) and stalls time out."""
    daemon_threads = True

    def __init__(self, addr, handler, tls):
        self.tls = tls
        super().__init__(addr, handler)

    def get_request(self):
        sock, addr = self.socket.accept()
        sock.settimeout(CONN_TIMEOUT)
        if self.tls:
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request, client_address):
        log("warn", "management connection failed", peer=client_address[0], error=str(sys.exc_info()[1]))


class VipSetup:
    """VIPs on lo + ARP sysctls for DSR; undoes exactly what it did."""

    SYSCTLS = {"net/ipv4/conf/all/arp_ignore": "1", "net/ipv4/conf/all/arp_announce": "2"}

    def __init__(self, vips):
        self.added = []
        self.saved = {}
        for key, value in self.SYSCTLS.items():
            path = f"/proc/sys/{key}"
            with open(path) as f:
                self.saved[path] = f.read().strip()
            with open(path, "w") as f:
                f.write(value)
        for vip in vips:
            r = subprocess.run(["ip", "addr", "add", f"{vip}/32", "dev", "lo"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                self.added.append(vip)
            elif "exists" not in r.stderr:
                raise RuntimeError(f"cannot add VIP {vip} to lo: {r.stderr.strip()}")

    def undo(self):
        for vip in self.added:
            subprocess.run(["ip", "addr", "del", f"{vip}/32", "dev", "lo"], capture_output=True)
        for path, value in self.saved.items():
            with open(path, "w") as f:
                f.write(value)


class DecapBackend:
    """The C packet path as a child process that writes a counter file."""

    def __init__(self, cfg, run_dir, cookies=None, on_closed=None):
        self.cfg = cfg
        self.cookies = cookies
        self.on_closed = on_closed
        self.stats_file = os.path.join(run_dir, "decap-stats.json")
        self.proc = None
        self.info = {}
        self.dump_lock = threading.Lock()
        self.dump_done = threading.Event()
        self.dump_rows = []
        kinds = {"auto": ["xdp", "userspace"], "xdp": ["xdp"], "userspace": ["userspace"]}
        errors = []
        for kind in kinds[cfg.decap]:
            err = self._start(kind)
            if err is None:
                return
            errors.append(f"{kind}: {err}")
            log("warn", "decap backend failed to start", backend=kind, error=err)
        raise RuntimeError("no decap backend could start: " + "; ".join(errors))

    def _command(self, kind):
        c = self.cfg
        locals_ = [arg for ip in c.local_ip for arg in ("--local-ip", ip)]
        interval = c.stats_interval_ms
        if c.load_metric == "connections" and c.load_report_ms:
            interval = min(interval, c.load_report_ms)   # each report reads a fresh count
        common = ["--stats-file", self.stats_file, "--interval-ms", str(interval)]
        # An empty list is not passed: the backends then accept any address.
        common += [arg for p in c.allow_mux for arg in ("--allow-mux", p)]
        common += [arg for p in c.allow_vip for arg in ("--allow-vip", p)]
        if kind == "xdp":
            if self.cookies:
                common += ["--cookie-obj", os.path.join(c.build_dir, "cookie.bpf.o"),
                           "--cookie-config", self.cookies.loader_file, "--cgroup", c.cgroup]
                common += ["--pin-dir", c.pin_dir] if c.pin_dir else []
            common += ["--prism-pin-dir", c.prism_pin_dir] if c.prism_pin_dir else []
            common += ["--prism-backend"] if c.prism_backend else []
            return [os.path.join(c.build_dir, "hlb-agent-xdp"), "--iface", c.iface,
                    "--obj", os.path.join(c.build_dir, "xdp_decap.bpf.o"),
                    "--mode", c.xdp_mode] + locals_ + common
        return [os.path.join(c.build_dir, "hlb-agent-udecap"), "--tun", c.tun_name] + locals_ + common

    def _start(self, kind):
        try:
            proc = subprocess.Popen(self._command(kind), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        except OSError as e:
            return str(e)
        ready, _, _ = select.select([proc.stdout], [], [], BACKEND_START_TIMEOUT)
        line = proc.stdout.readline() if ready else ""
        if not line:
            proc.kill()
            _, err = proc.communicate()
            return err.strip() or "no readiness line"
        self.proc = proc
        self.info = dict(json.loads(line), backend=kind)
        if self.cookies:
            self.cookies.attached(kind, proc)
        # Keep draining stderr into our log so the child never blocks on it.
        threading.Thread(target=self._drain, daemon=True).start()
        threading.Thread(target=self._events, daemon=True).start()
        log("info", "decap backend attached", **self.info)
        return None

    def _drain(self):
        for line in self.proc.stderr:
            log("warn", "decap backend", backend=self.info.get("backend"), line=line.strip())

    def open_hinted(self, timeout=5.0):
        """The hinted connections of the loader's per-connection state ({"vip", "port",
        "client", "clientPort", "ident"} each): the loader lists them on SIGUSR1."""
        if self.info.get("backend") != "xdp" or not self.alive():
            return []
        with self.dump_lock:
            self.dump_rows = []
            self.dump_done.clear()
            self.proc.send_signal(signal.SIGUSR1)
            if not self.dump_done.wait(timeout):
                raise OSError("the loader did not list its connections in %.0f s" % timeout)
            return list(self.dump_rows)

    def _events(self):
        """The loader's lines after the readiness one: closes of hinted connections,
        which cookie configuration its maps hold, and the open hinted connections it
        lists on SIGUSR1."""
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
                closed, config = event.get("closed"), event.get("cookieConfig")
            except (ValueError, AttributeError):
                event, closed = {}, None
                config = None
            if "open" in event:
                self.dump_rows.append(event["open"])
            elif "openEnd" in event:
                self.dump_done.set()
            elif config is not None and self.cookies:
                self.cookies.loader_said(config)
                if config.get("refused"):
                    log("error", "cookie file refused by the loader: its maps keep the previous keys", **config)
                else:
                    log("info", "cookie maps reloaded", **config)
            elif closed is not None:
                if self.on_closed:
                    self.on_closed(closed)
            else:
                log("warn", "decap backend: unexpected output", line=line.strip())

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def snapshot(self):
        try:
            with open(self.stats_file) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class HealthProber:
    """Probes one local service; healthy after `rise` successes in a row,
    unhealthy after `fall` failures in a row."""

    def __init__(self, cfg, check):
        self.cfg = cfg
        self.check = check
        self.healthy = False
        self.last = {"ok": None, "error": None, "latency_s": None, "time": None}
        self.successes = self.failures = 0
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        threading.Thread(target=self._loop, daemon=True).start()

    def probe_once(self):
        kind, host, port, url = self.check
        t0 = time.monotonic()
        try:
            if kind == "tcp":
                with socket.create_connection((host, port), timeout=self.cfg.check_timeout):
                    pass
            else:
                with urllib.request.urlopen(url, timeout=self.cfg.check_timeout) as r:
                    if not 200 <= r.status < 400:
                        raise OSError(f"HTTP {r.status}")
            return True, None, time.monotonic() - t0
        except (OSError, urllib.error.URLError) as e:
            return False, str(e), time.monotonic() - t0

    def _loop(self):
        while not self.stopping.is_set():
            ok, err, latency = self.probe_once()
            with self.lock:
                self.last = {"ok": ok, "error": err, "latency_s": round(latency, 6),
                             "time": time.time()}
                if ok:
                    self.successes, self.failures = self.successes + 1, 0
                    if not self.healthy and self.successes >= self.cfg.rise:
                        self.healthy = True
                        log("info", "check healthy", dip=self.cfg.dip, check=self.check[3])
                else:
                    self.successes, self.failures = 0, self.failures + 1
                    if self.healthy and self.failures >= self.cfg.fall:
                        self.healthy = False
                        log("warn", "check unhealthy", dip=self.cfg.dip, check=self.check[3],
                            error=err)
            self.stopping.wait(self.cfg.check_interval)

    def state(self):
        with self.lock:
            return {"check": self.check[3], "healthy": self.healthy, "last": dict(self.last)}


class DipHealth:
    """The DIP is healthy when every check passes (no check: healthy)."""

    def __init__(self, cfg):
        self.dip = cfg.dip
        self.probers = [HealthProber(cfg, c) for c in cfg.check]

    def state(self):
        checks = [p.state() for p in self.probers]
        return {"dip": self.dip, "healthy": all(c["healthy"] for c in checks), "checks": checks}

    def stop(self):
        for p in self.probers:
            p.stopping.set()


class Agent:
    def __init__(self, cfg, run_dir):
        self.cfg = cfg
        self.started = time.time()
        self.vips = None if cfg.no_vip_setup else VipSetup(cfg.vip)
        self.cookies = (cookie_config.CookieControl(cfg.cookie_config, cfg.allow_vip, run_dir)
                        if cfg.cookie_config else None)
        current = (lambda: self.cookies.cfg) if self.cookies else (lambda: None)
        self.closed = smux_reports.ClosedReporter(current, log, cfg.smux_tls) if self.cookies else None
        self.loads = None
        try:
            self.decap = DecapBackend(cfg, run_dir, self.cookies,
                                      self.closed.add if self.closed else None)
        except Exception:
            self.stop_reports()
            if self.vips:
                self.vips.undo()
            raise
        if cfg.load_report_ms:
            metric = (smux_reports.ConnectionLoad(self.decap.snapshot) if cfg.load_metric == "connections"
                      else smux_reports.CpuLoad())
            self.loads = smux_reports.LoadReporter(cfg.dip, cfg.load_report_ms / 1000, current, log,
                                                   metric, cfg.smux_tls)
        self.owners = (smux_reports.OwnerWatch(current, self.decap.open_hinted, log,
                                               cfg.owner_check_ms / 1000, cfg.smux_tls)
                       if self.cookies and cfg.owner_check_ms else None)
        self.dip_health = DipHealth(cfg)
        self.prev = None          # (time, {key: (packets, bytes)}) for rates
        self.rates = {}
        self.lock = threading.Lock()

    def stats(self):
        snap = self.decap.snapshot() or {"counters": {}, "vips": [], "time": None}
        now = snap.get("time") or time.time()
        current = {(v["vip"], v["mux"], v["encap"]): (v["packets"], v["bytes"]) for v in snap["vips"]}
        with self.lock:
            if self.prev and now > self.prev[0]:
                dt = now - self.prev[0]
                self.rates = {k: ((p - self.prev[1].get(k, (0, 0))[0]) / dt,
                                  (b - self.prev[1].get(k, (0, 0))[1]) / dt)
                              for k, (p, b) in current.items()}
            if not self.prev or now > self.prev[0]:
                self.prev = (now, current)
            rates = dict(self.rates)
        per_vip = {}
        for (vip, mux, encap), (packets, nbytes) in current.items():
            entry = per_vip.setdefault(vip, {"packets": 0, "bytes": 0, "pps": 0.0,
                                             "bytes_per_s": 0.0, "by_mux": []})
            pps, bps = rates.get((vip, mux, encap), (0.0, 0.0))
            entry["packets"] += packets
            entry["bytes"] += nbytes
            entry["pps"] += pps
            entry["bytes_per_s"] += bps
            entry["by_mux"].append({"mux": mux, "encap": encap, "packets": packets,
                                    "bytes": nbytes, "pps": pps, "bytes_per_s": bps})
        return {"dip": self.cfg.dip, "time": now, "backend": self.decap.info,
                "counters": snap["counters"], "vips": per_vip, "cookie": snap.get("cookie", {}),
                "establishedConnections": snap.get("establishedConnections"),
                "reports": self.reports()}

    def reports(self):
        """Counters of what went to the SMuxes (smux_reports.py)."""
        out = {}
        if self.closed:
            out["closed"] = dict(self.closed.counters)
        if self.loads:
            out["loads"] = dict(self.loads.counters, metric=self.loads.metric.unit,
                                lastLoad=self.loads.last_load, lastMatched=self.loads.last_matched)
        if self.owners:
            out["adopt"] = dict(self.owners.counters)
        return out

    def stop_reports(self):
        for r in (self.closed, self.loads, getattr(self, "owners", None)):
            if r:
                r.stop()

    def health(self):
        return {"status": "ok" if self.decap.alive() else "degraded",
                "uptime_s": round(time.time() - self.started, 3),
                "decap": dict(self.decap.info, alive=self.decap.alive()),
                "service": self.dip_health.state(), "vips": self.cfg.vip,
                "allowed_muxes": self.cfg.allow_mux or "any",
                "allowed_vips": self.cfg.allow_vip or "any"}

    def collect(self):
        """prometheus_client collector interface."""
        s = self.stats()
        pk = CounterMetricFamily("hlb_agent_vip_packets", "Packets decapsulated to a VIP",
                                 labels=["vip", "mux", "encap"])
        by = CounterMetricFamily("hlb_agent_vip_bytes", "Inner IP bytes decapsulated to a VIP",
                                 labels=["vip", "mux", "encap"])
        for vip, e in s["vips"].items():
            for m in e["by_mux"]:
                pk.add_metric([vip, m["mux"], m["encap"]], m["packets"])
                by.add_metric([vip, m["mux"], m["encap"]], m["bytes"])
        res = CounterMetricFamily("hlb_agent_decap_packets", "Decap verdicts", labels=["result"])
        for name, value in s["counters"].items():
            res.add_metric([name], value)
        h = self.dip_health.state()
        healthy = GaugeMetricFamily("hlb_agent_dip_healthy", "1 when every service check passes",
                                    labels=["dip"])
        healthy.add_metric([h["dip"]], 1 if h["healthy"] else 0)
        per_check = GaugeMetricFamily("hlb_agent_check_healthy", "1 when this service check passes",
                                      labels=["dip", "check"])
        for c in h["checks"]:
            per_check.add_metric([h["dip"], c["check"]], 1 if c["healthy"] else 0)
        ck = CounterMetricFamily("hlb_agent_cookie_packets", "Cheetah cookie events "
                                 "(p4/COOKIE-SPEC.md section 11)", labels=["event"])
        for name, value in s["cookie"].items():
            ck.add_metric([name], value)
        up = GaugeMetricFamily("hlb_agent_decap_up", "1 while the decap backend runs",
                               labels=["backend", "mode"])
        up.add_metric([self.decap.info.get("backend", ""), self.decap.info.get("mode", "")],
                      1 if self.decap.alive() else 0)
        sent = CounterMetricFamily("hlb_agent_smux_reports", "Reports to the SMuxes: closes of "
                                   "stateful connections, loads, and re-reports of open ones to a new or restarted owner (adopt)", labels=["kind", "result"])
        for kind, counters in s["reports"].items():
            for result, value in counters.items():
                if not result.startswith("last") and result != "metric":
                    sent.add_metric([kind, result], value)
        out = [pk, by, res, ck, sent, healthy, per_check, up]
        if s["establishedConnections"] is not None:
            est = GaugeMetricFamily("hlb_agent_established_connections", "ESTABLISHED connections to "
                                    "this host's VIPs (the cookie sockops program's count)")
            est.add_metric([], s["establishedConnections"])
            out.append(est)
        return out

    def stop(self):
        self.dip_health.stop()
        self.decap.stop()
        self.stop_reports()
        if self.vips:
            self.vips.undo()


def make_handler(agent, registry):
    class Handler(BaseHTTPRequestHandler):
        def _send(self, code, body, ctype="application/json"):
            data = body if isinstance(body, bytes) else (json.dumps(body) + "\n").encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            if self.authorized_writer():
                self._send(405, {"error": "method: not allowed (PUT /cookie is the only write)"})

        do_DELETE = do_POST
        do_PATCH = do_POST

        def do_GET(self):
            path = urllib.parse.urlsplit(self.path).path
            if path == "/health":
                self._send(200, agent.health())
            elif path == "/dip-health":
                st = agent.dip_health.state()
                self._send(200 if st["healthy"] else 503, st)
            elif path == "/stats":
                self._send(200, agent.stats())
            elif path == "/metrics":
                self._send(200, generate_latest(registry), CONTENT_TYPE_LATEST)
            elif path == "/cookie" and agent.cookies:
                self._send(200, agent.cookies.state(agent.stats()["cookie"]))
            else:
                self._send(404, {"error": f"path: no such endpoint {path!r}"})

        def authorized_writer(self):
            """Plain HTTP (loopback only): anyone local. TLS: a verified client certificate."""
            if not isinstance(self.connection, ssl.SSLSocket):
                return True
            if self.connection.getpeercert():
                return True
            self._send(401, {"error": "unauthorized", "field": "client certificate",
                             "reason": "writes need a client certificate issued by this agent's --tls-ca"})
            return False

        def do_PUT(self):
            path = urllib.parse.urlsplit(self.path).path
            if not self.authorized_writer():
                return
            try:
                length = int(self.headers.get("Content-Length", 0))
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY:
                self._send(413 if length > MAX_BODY else 400,
                           {"error": "Content-Length: a body of 0 to %d bytes is required" % MAX_BODY})
                return
            if path != "/cookie" or not agent.cookies:
                self._send(404, {"error": f"path: no such endpoint {path!r} (cookies need "
                                          "--cookie-config)"})
                return
            try:
                doc = json.loads(self.rfile.read(length))
                agent.cookies.put(doc)
            except ValueError as e:   # bad JSON or a CookieConfigError naming the field
                self._send(400, {"error": str(e)})
                return
            except cookie_config.CookiesUnavailable as e:
                self._send(409, {"error": str(e)})
                return
            except cookie_config.CookiesNotApplied as e:   # saved; not yet in force: ask again
                self._send(503, {"error": str(e)})
                return
            log("info", "cookie configuration replaced",
                **(cookie_config.describe(agent.cookies.cfg) or {}))
            self._send(200, agent.cookies.state(agent.stats()["cookie"]))

        def log_message(self, fmt, *args):   # keep stderr for JSON logs
            pass

    return Handler


def warn_open_allow_lists(cfg):
    """An empty allow-list keeps older deployments working, but lets any host
    that reaches this one inject or relay packets: say so at start."""
    if not cfg.allow_mux:
        log("warn", "no --allow-mux: decapsulating tunnels from any source; any host that can "
                    "reach this one can inject packets with a spoofed client address")
    if not cfg.allow_vip:
        log("warn", "no --vip or --vip-prefix: decapsulating packets to any inner destination; "
                    "any host that can reach this one can relay through it")


def main(argv=None):
    cfg = build_config(argv if argv is not None else sys.argv[1:])
    warn_open_allow_lists(cfg)
    run_dir = tempfile.mkdtemp(prefix="hlb-agent-")
    try:
        agent = Agent(cfg, run_dir)
    except Exception as e:
        log("error", "agent failed to start", error=str(e))
        return 1
    registry = CollectorRegistry()
    registry.register(agent)
    try:
        server = ManagementServer(cfg.listen, make_handler(agent, registry), cfg.tls)
    except OSError as e:
        agent.stop()
        log("error", "cannot listen", listen=f"{cfg.listen[0]}:{cfg.listen[1]}", error=str(e))
        return 1
    stopping = threading.Event()

    def on_signal(signum, frame):
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    log("info", "agent ready", listen=f"{cfg.listen[0]}:{cfg.listen[1]}", tls=bool(cfg.tls), **agent.decap.info)
    rc = 0
    while not stopping.wait(0.2):
        if not agent.decap.alive():
            log("error", "decap backend exited", rc=agent.decap.proc.returncode)
            rc = 1
            break
    server.shutdown()
    agent.stop()
    try:
        os.remove(agent.decap.stats_file)
        os.rmdir(run_dir)
    except OSError:
        pass
    return rc


if __name__ == "__main__":
    sys.exit(main())
