"""The host agent's command line checked into one configuration (build_config): every refusal
names its flag (ConfigError), and the TLS contexts the flags ask for (the management API's, the
client side of the reports to the SMuxes)."""
import argparse
import ipaddress
import os
import socket
import ssl
import urllib.parse

import cookie_config
import smux_reports
from agent_log import log

AGENT_DIR = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BUILD = os.environ.get("HLB_AGENT_BUILD",
                               os.path.join(os.path.dirname(AGENT_DIR), "build-agent"))
LOAD_METRICS = ("cpu", "connections")   # --load-metric (smux_reports.CpuLoad, ConnectionLoad)
MAX_ALLOWED = 256   # HLB_MAX_ALLOWED in include/hlb_decap.h: prefixes per allow-list


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


def warn_open_allow_lists(cfg):
    """An empty allow-list keeps older deployments working, but lets any host
    that reaches this one inject or relay packets: say so at start."""
    if not cfg.allow_mux:
        log("warn", "no --allow-mux: decapsulating tunnels from any source; any host that can "
                    "reach this one can inject packets with a spoofed client address")
    if not cfg.allow_vip:
        log("warn", "no --vip or --vip-prefix: decapsulating packets to any inner destination; "
                    "any host that can reach this one can relay through it")
