"""The host agent's Cheetah cookie configuration (p4/COOKIE-SPEC.md): this host's
server id and the keys of its VIPs, as the controller distributes them.

JSON, in the --cookie-config file and in PUT /cookie:
  {"serverId": 17,                      1..16383, this host's id (COOKIE-SPEC §4)
   "hash": "siphash13",                 default mode for every VIP of this host
   "key": "<32 hex digits>",            default 128-bit key
   "vips": [{"prefix": "10.200.0.0/24", "hash": "crc32c", "key": "..."}],   overrides
   "keepaliveSeconds": 25,              sockops keep-alive bound, 1..25 (§6)
   "statefulOwners": ["https://10.0.9.1:9200", ...],  optional: the control API of the
                                        stateful SMuxes, in owner-id order (COOKIE-SPEC §7):
                                        a hinted connection's close goes to the owner its
                                        ident names (POST /cheetah/closed)
   "smuxes": ["https://10.0.9.1:9200", ...]}  optional: every SMux that picks DIPs by
                                        load; --load-report-ms sends them POST /loads
                                        (https: with --smux-tls-*; http only to an SMux
                                        whose control API listens on loopback)

The agent keeps the file as the state that survives a restart, and hands the maps'
content to the XDP loader as its cookie file (src/cookie_maps.h), reloaded on SIGHUP.
"""
import ipaddress
import json
import os
import sys
import threading
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "p4", "model"))
import cheetah_cookie as cc  # noqa: E402

FIELDS = {"serverId", "hash", "key", "vips", "keepaliveSeconds", "statefulOwners", "smuxes"}
MAX_OWNERS = 16   # owner ids are 4 bits of the stateful ident (COOKIE-SPEC §7)
MAX_SMUXES = 64
VIP_FIELDS = {"prefix", "hash", "key"}


class CookieConfigError(ValueError):
    pass


class CookiesUnavailable(RuntimeError):
    pass


class CookiesNotApplied(RuntimeError):
    """The loader did not confirm a new configuration in time, or refused it."""


def fingerprint(key):
    """What APIs show instead of a key: COOKIE-SPEC §8."""
    return f"{cc.siphash(key, bytes(13)):016x}"[:8]


def _mode(field, value):
    if value not in cc.HASH_MODES:
        raise CookieConfigError(f"{field}: expected one of {', '.join(cc.HASH_MODES)}, got {value!r}")
    return value


def _key(field, value):
    try:
        return cc.parse_key(value)
    except ValueError:
        raise CookieConfigError(f"{field}: expected 32 hex digits (a 128-bit key)") from None


def _control_urls(field, value, limit):
    """http(s)://HOST:PORT of SMux control APIs (no path), at most `limit`."""
    if not isinstance(value, list):
        raise CookieConfigError(f"{field}: expected a list of http(s)://HOST:PORT")
    if len(value) > limit:
        raise CookieConfigError(f"{field}: at most {limit}, got {len(value)}")
    out = []
    for i, v in enumerate(value):
        try:
            u = urllib.parse.urlsplit(v) if isinstance(v, str) else None
            ok = u and u.scheme in ("http", "https") and u.hostname and u.port and u.path in ("", "/") \
                and not u.query and not u.fragment
        except ValueError:   # a port out of range
            ok = False
        if not ok:
            raise CookieConfigError(f"{field}[{i}]: expected http(s)://HOST:PORT, got {v!r}")
        out.append(f"{u.scheme}://{u.netloc}")
    return out


def parse(doc):
    """Validates a configuration document -> normalised dict; raises CookieConfigError
    naming the field."""
    if not isinstance(doc, dict):
        raise CookieConfigError("cookie configuration: expected a JSON object")
    unknown = set(doc) - FIELDS
    if unknown:
        raise CookieConfigError(f"{sorted(unknown)[0]}: unknown field")
    sid = doc.get("serverId")
    if not isinstance(sid, int) or isinstance(sid, bool) or not 1 <= sid <= cc.SERVER_ID_MAX:
        raise CookieConfigError(f"serverId: expected an integer 1..{cc.SERVER_ID_MAX}, got {sid!r}")
    keepalive = doc.get("keepaliveSeconds", 25)
    if not isinstance(keepalive, int) or isinstance(keepalive, bool) or not 1 <= keepalive <= 25:
        raise CookieConfigError(f"keepaliveSeconds: expected an integer 1..25, got {keepalive!r}")
    out = {"serverId": sid, "hash": _mode("hash", doc.get("hash", "siphash13")),
           "key": _key("key", doc.get("key")).hex(), "keepaliveSeconds": keepalive, "vips": [],
           "statefulOwners": _control_urls("statefulOwners", doc.get("statefulOwners", []), MAX_OWNERS),
           "smuxes": _control_urls("smuxes", doc.get("smuxes", []), MAX_SMUXES)}
    vips = doc.get("vips", [])
    if not isinstance(vips, list):
        raise CookieConfigError("vips: expected a list")
    for i, v in enumerate(vips):
        where = f"vips[{i}]"
        if not isinstance(v, dict) or set(v) - VIP_FIELDS or "prefix" not in v:
            raise CookieConfigError(f"{where}: expected an object with prefix, hash, key")
        try:
            prefix = str(ipaddress.IPv4Network(v["prefix"]))
        except (TypeError, ValueError) as e:
            raise CookieConfigError(f"{where}.prefix: {e}") from None
        out["vips"].append({"prefix": prefix, "hash": _mode(f"{where}.hash", v.get("hash", out["hash"])),
                            "key": _key(f"{where}.key", v.get("key", out["key"])).hex()})
    if len(out["vips"]) > 256:
        raise CookieConfigError("vips: at most 256")
    return out


def load(path):
    """The saved configuration, or None when there is none yet."""
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise CookieConfigError(f"--cookie-config: {path}: {e}") from None
    return parse(doc)


def save(path, cfg):
    """Atomically: a crash leaves the old file or the new one."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(cfg, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def loader_lines(cfg, served_prefixes, generation=0):
    """The loader's cookie file: every prefix this host serves gets the default mode
    and key unless a "vips" entry names it."""
    lines = [f"generation {generation}", f"server_id {cfg['serverId']}",
             f"keepalive {cfg['keepaliveSeconds']}"]
    overrides = {v["prefix"]: v for v in cfg["vips"]}
    for prefix in served_prefixes:
        if prefix not in overrides:
            lines.append(f"vip {prefix} {cfg['hash']} {cfg['key']}")
    for v in cfg["vips"]:
        lines.append(f"vip {v['prefix']} {v['hash']} {v['key']}")
    return "\n".join(lines) + "\n"


def for_vip(cfg, vip):
    """(hash mode, key in hex) of a VIP: the most specific "vips" prefix holding it,
    else the defaults, as the loader's LPM map finds them."""
    addr = ipaddress.IPv4Address(vip)
    best = None
    for v in cfg["vips"]:
        net = ipaddress.IPv4Network(v["prefix"])
        if addr in net and (best is None or net.prefixlen > best[0].prefixlen):
            best = (net, v)
    v = best[1] if best else cfg
    return v["hash"], v["key"]


def describe(cfg):
    """The configuration as GET /cookie shows it: fingerprints, never keys."""
    if cfg is None:
        return None
    return {"serverId": cfg["serverId"], "hash": cfg["hash"],
            "keyFingerprint": fingerprint(bytes.fromhex(cfg["key"])),
            "keepaliveSeconds": cfg["keepaliveSeconds"],
            "statefulOwners": cfg.get("statefulOwners", []), "smuxes": cfg.get("smuxes", []),
            "vips": [{"prefix": v["prefix"], "hash": v["hash"],
                      "keyFingerprint": fingerprint(bytes.fromhex(v["key"]))} for v in cfg["vips"]]}


class CookieControl:
    """Owns the saved configuration and the loader's cookie file; a change is saved
    first, then written for the loader, which a SIGHUP makes reload its maps. put()
    returns once the loader says its maps hold the change: the controller publishes an
    SMux table that decodes a host's cookies only after that answer (COOKIE-SPEC §9)."""

    APPLY_TIMEOUT_S = 5.0

    def __init__(self, path, served_prefixes, run_dir):
        self.path = path
        self.served = served_prefixes
        self.loader_file = os.path.join(run_dir, "cookie.conf")
        self.cfg = load(path)
        self.proc = None
        self.unavailable = "the decap backend has not started"
        self.generation = 0          # of the loader file last written
        self.applied = 0             # the newest one the loader confirmed
        self.refused = False
        self._changes = threading.Lock()           # one put at a time: generations in order
        self._loader = threading.Condition()
        self._write_loader_file()

    def _write_loader_file(self):
        text = (loader_lines(self.cfg, self.served, self.generation) if self.cfg
                else "server_id 0\nkeepalive 0\n")
        tmp = f"{self.loader_file}.tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.loader_file)

    def attached(self, backend, proc):
        """Cookies need the XDP backend (its decapsulator restores TSecr)."""
        if backend == "xdp":
            self.proc, self.unavailable = proc, None
        else:
            self.unavailable = ("cookies need the XDP backend: the user-space fallback cannot "
                                "restore TSecr, so nothing is encoded either")

    def put(self, doc):
        cfg = parse(doc)
        if self.unavailable:
            raise CookiesUnavailable(f"cookies: {self.unavailable}")
        with self._changes:
            save(self.path, cfg)
            self.cfg = cfg
            with self._loader:
                self.generation += 1
                self.refused = False
                self._write_loader_file()
                self.proc.send_signal(1)   # SIGHUP: the loader rereads the file
                done = self._loader.wait_for(lambda: self.applied >= self.generation or self.refused,
                                             self.APPLY_TIMEOUT_S)
                if self.refused:
                    raise CookiesNotApplied("cookies: the loader refused the configuration (see the agent log)")
                if not done:
                    raise CookiesNotApplied(f"cookies: the loader did not apply the configuration within "
                                            f"{self.APPLY_TIMEOUT_S:.0f} s; it will when it can")
        return cfg

    def loader_said(self, line):
        """A {"cookieConfig": ...} line of the loader."""
        with self._loader:
            if line.get("refused"):
                self.refused = True
            else:
                self.applied = max(self.applied, int(line.get("generation", 0)))
            self._loader.notify_all()

    def state(self, counters):
        return {"enabled": bool(self.cfg) and not self.unavailable,
                "unavailable": self.unavailable, "config": describe(self.cfg),
                "counters": counters or {}}
