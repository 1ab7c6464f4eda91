#!/usr/bin/env python3
"""hlb-prism-fe: the Prism front end of a VIP, on a front-end DIP host.

It accepts client connections on the VIP (on lo, as for DSR), reads and parses
each HTTP/1.1 request (request.py), asks the rules (rules.py) which backend serves it,
and hands the live TCP connection to that backend (TCP_REPAIR, handoff.py); the
backend answers the client directly and hands the connection back for the next
request.  Steering (steering.py) keeps the client's packets on the owner.

    prism_fe.py --listen VIP:PORT --rules rules.json --prism-pin-dir DIR
                [--admin 127.0.0.1:9400] [--handoff-timeout 30] [--idle-timeout 60]
                [--steer-before-import] [--trace]

Admin HTTP (--admin): GET /rules, PUT /rules (400 naming the field; nothing
changes), GET /stats, GET /connections.  On loopback plain HTTP; on another
address only HTTPS with --tls-cert/--tls-key/--tls-ca (the host agent's TLS:
PUT needs a client certificate of that CA, the controller's).  Logs: JSON lines
on stderr; --trace adds one "handoff trace" line per hand-off with the time of
each stage (CLOCK_MONOTONIC ns, the clock the backend's --trace uses too)."""
import argparse
import collections
import http
import ipaddress
import json
import os
import selectors
import socket
import ssl
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "agent"))
from agent_config import ConfigError, tls_context  # noqa: E402  the agent's management TLS
from agent_mgmt import ManagementServer  # noqa: E402

import handoff
import request as request_mod
import rules as rules_mod
import steering as steering_mod
import wire

RECONNECT_S = 1.0
TICK_S = 0.02
READ_CHUNK = 65536

# Client connection states.
READING, WAIT_IMPORTED, REMOTE, WAIT_RETURN = "reading", "wait-imported", "remote", "wait-return"


def log(level, msg, **fields):
    rec = {"ts": round(time.time(), 3), "level": level, "msg": msg}
    rec.update(fields)
    print(json.dumps(rec), file=sys.stderr, flush=True)


def simple_response(status, reason, body):
    """A response the front end sends itself (errors), closing the connection."""
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Length: {len(body)}\r\n"
            "Content-Type: text/plain\r\nConnection: close\r\n\r\n").encode() + body


class BackendLink:
    """The control connection to one backend; it is live while connected."""

    def __init__(self, fe, address, port):
        self.fe, self.address, self.port = fe, address, port
        self.sock = None
        self.rx = b""
        self.owned = 0
        self.handoffs = 0
        self.next_try = 0.0
        self.users = 0    # backends of the current rules that use this link

    @property
    def up(self):
        return self.sock is not None

    def connect(self):
        s = socket.socket()
        s.settimeout(0.5)
        try:
            s.connect((self.address, self.port))
        except OSError as e:
            s.close()
            self.next_try = time.monotonic() + RECONNECT_S
            return e
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # Blocking with a send timeout (the hand-off's send is in C, handoff.py):
        # small messages the backend reads at once.
        s.settimeout(None)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 2, 0))
        self.sock = s
        self.fe.sel.register(s, selectors.EVENT_READ, ("link", self))
        log("info", "backend up", backend=f"{self.address}:{self.port}")
        return None

    def send(self, msg_type, conn_id, body=b""):
        try:
            self.sock.sendall(wire.pack(msg_type, conn_id, body))
            return True
        except (OSError, AttributeError):
            self.fe.link_down(self, "send failed")
            return False

    def readable(self):
        try:
            data = self.sock.recv(READ_CHUNK)
        except OSError:
            data = b""
        if not data:
            self.fe.link_down(self, "closed by the backend")
            return
        try:
            msgs, self.rx = wire.unpack_all(self.rx + data)
        except wire.WireError as e:
            self.fe.link_down(self, str(e))
            return
        for msg_type, conn_id, body in msgs:
            self.fe.on_message(self, msg_type, conn_id, body)

    def close(self):
        if self.sock is not None:
            self.fe.sel.unregister(self.sock)
            self.sock.close()
            self.sock = None
            self.rx = b""
            self.next_try = time.monotonic() + RECONNECT_S


class ClientConn:
    def __init__(self, conn_id, sock, flow):
        self.id = conn_id
        self.sock = sock          # None while a backend holds the connection
        self.flow = flow          # (client, client port, VIP, VIP port)
        self.buf = b""            # read, not yet handed on
        self.state = READING
        self.link = None          # the owner's control link while handed off
        self.snapshot = None      # the state as this front end exported it last
        self.deadline = 0.0
        self.requests = 0
        self.marks = None         # --trace: [(stage, monotonic ns)] of the hand-off under way


class FrontEnd:
    def __init__(self, cfg, ruleset, steer, lib):
        self.cfg = cfg
        self.lib = lib
        self.steer = steer
        self.sel = selectors.DefaultSelector()
        self.links = {}
        self.conns = {}
        self.next_id = 1
        self.lingering = collections.deque()    # (time, flow): closed at a backend
        self.stats = collections.Counter()
        self.pending_rules = None
        self.ruleset = None
        self.apply_rules(ruleset)
        self.listeners = []
        for host, port in cfg.listen:
            ls = socket.socket()
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            ls.bind((host, port))
            ls.listen(1024)
            ls.setblocking(False)
            self.sel.register(ls, selectors.EVENT_READ, ("listen", ls))
            self.listeners.append(ls)

    # ------------------------------------------------------------ rules

    def apply_rules(self, ruleset):
        """Installs a validated rule set: links are kept for backends that stay."""
        for b in ruleset.backends.values():
            key = (b.address, b.control_port)
            if key not in self.links:
                self.links[key] = BackendLink(self, *key)
            b.link = self.links[key]
        old, self.ruleset = self.ruleset, ruleset
        used = {(b.address, b.control_port) for b in ruleset.backends.values()}
        for key, link in list(self.links.items()):
            if key not in used and link.owned == 0:
                link.close()
                del self.links[key]
        if old is not None:
            log("info", "rules replaced", rules=len(ruleset.rules), backends=len(used))

    # ------------------------------------------------------------ clients

    def accept(self, ls):
        while True:
            try:
                s, (cip, cport) = ls.accept()
            except BlockingIOError:
                return
            s.setblocking(False)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            vip, vport = s.getsockname()
            c = ClientConn(self.next_id, s, (cip, cport, vip, vport))
            self.next_id = (self.next_id + 1) & 0xFFFFFFFF or 1
            c.deadline = time.monotonic() + self.cfg.idle_timeout
            self.conns[c.id] = c
            self.sel.register(s, selectors.EVENT_READ, ("client", c))
            self.stats["accepted"] += 1

    def client_readable(self, c):
        try:
            data = c.sock.recv(READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.close_client(c)   # the client's FIN (or RST): close our side too
            return
        c.buf += data
        c.deadline = time.monotonic() + self.cfg.idle_timeout
        if self.cfg.trace:
            c.marks = [("read", time.monotonic_ns())]
        self.try_request(c)

    def try_request(self, c):
        """Parses c.buf; hands off once a whole request is there."""
        if len(c.buf) > self.cfg.max_request_bytes:
            self.reply_and_close(c, 413, "Content Too Large", b"request too large\n")
            return
        try:
            req = request_mod.parse(c.buf)
        except request_mod.BadRequest as e:
            self.stats["bad_requests"] += 1
            self.reply_and_close(c, e.status, http.HTTPStatus(e.status).phrase, f"{e}\n".encode())
            return
        if req is None:
            return
        rule, backend = self.ruleset.choose(req)
        if backend is None:
            self.stats["no_backend"] += 1
            self.reply_and_close(c, 503, "Service Unavailable", b"no backend available\n")
            return
        self.hand_off(c, backend.link, rule.name)

    def reply_and_close(self, c, status, reason, body):
        try:
            c.sock.send(simple_response(status, reason, body))
        except OSError:
            pass
        self.close_client(c)

    def close_client(self, c):
        if c.sock is not None:
            self.sel.unregister(c.sock)
            c.sock.close()
            c.sock = None
        self.conns.pop(c.id, None)

    # ------------------------------------------------------------ hand-off

    def mark(self, c, stage):
        if c.marks is not None:
            c.marks.append((stage, time.monotonic_ns()))

    def hand_off(self, c, link, rule_name):
        self.mark(c, "parsed")
        early = self.steer.before_import
        if early:
            # The backend's host drops the flow's packets until its import is
            # complete: steering there (written by the one-call hand-off) locks
            # the flow as well, and the backend serves at import (HANDOFF).
            try:
                entry = self.steer.handoff_entry(c.flow, link)
            except steering_mod.PinRefused as e:
                # The fabric could not be told: the connection stays here.
                self.stats["steering_failed"] += 1
                log("warn", "steering refused", conn=c.id, error=str(e))
                self.reply_and_close(c, 503, "Service Unavailable", b"cannot steer the connection\n")
                return
        else:
            # Locked; the backend serves after GO, once the flow is steered to it.
            self.steer.lock(c.flow)
            entry = None
        # The bookkeeping comes first: once the state is sent, the backend serves,
        # and this process should be out of its way (on a shared CPU) at once.
        self.sel.unregister(c.sock)
        sock, buf = c.sock, c.buf
        c.sock, c.buf, c.state, c.link = None, b"", WAIT_IMPORTED, link
        c.deadline = time.monotonic() + self.cfg.handoff_timeout
        link.owned += 1
        try:
            c.snapshot, sent = self.lib.hand_off(sock, buf, link.sock,
                                                 wire.HANDOFF if early else wire.HANDOFF_HOLD, c.id,
                                                 steer=entry)
        except handoff.HandoffError as e:
            # Not ESTABLISHED any more: the client half-closed before the hand-off,
            # and TCP_REPAIR cannot move a half-closed connection.
            link.owned -= 1
            c.sock, c.buf, c.state, c.link = sock, buf, READING, None
            self.sel.register(c.sock, selectors.EVENT_READ, ("client", c))
            self.steer.forget(c.flow)
            self.stats["export_failed"] += 1
            log("warn", "export failed", conn=c.id, error=str(e))
            self.reply_and_close(c, 503, "Service Unavailable", b"cannot hand off a half-closed connection\n")
            return
        if not sent:
            self.link_down(link, "send failed")   # resets this client from its snapshot
            return
        c.requests += 1
        link.handoffs += 1
        self.stats["handoffs"] += 1
        self.stats[f"rule:{rule_name}"] += 1
        self.mark(c, "sent")
        if early:
            self.end_trace(c)

    def end_trace(self, c):
        if c.marks is not None:
            log("debug", "handoff trace", conn=c.id, request=c.requests, marks=dict(c.marks))
            c.marks = None

    def on_message(self, link, msg_type, conn_id, body):
        c = self.conns.get(conn_id)
        if c is None or c.link is not link:
            return   # a connection this front end already gave up
        if msg_type == wire.IMPORTED and c.state == WAIT_IMPORTED:
            c.state = REMOTE
            if not self.steer.before_import:
                self.mark(c, "imported")

                def go():
                    link.send(wire.GO, c.id)
                    self.mark(c, "go")
                    self.end_trace(c)
                self.steer.to_backend(c.flow, link, go)
        elif msg_type == wire.RECLAIM and c.state == REMOTE:
            try:
                self.steer.lock(c.flow)
            except steering_mod.PinRefused as e:
                # Still pinned to the backend: this host cannot take it back.
                self.stats["steering_failed"] += 1
                self.fail(c, f"unpin failed: {e}")
                return
            c.state = WAIT_RETURN
            link.send(wire.LOCKED, c.id)
        elif msg_type == wire.RETURN and c.state == WAIT_RETURN:
            self.take_back(c, body)
        elif msg_type == wire.CLOSED:
            # The backend finished the client's close: keep steering there for
            # the last ACKs (the flow may be locked if the close crossed a
            # RECLAIM), then forget the flow.
            self.stats["closed_at_backend"] += 1
            self.steer.to_backend(c.flow, link, lambda: None)
            self.lingering.append((time.monotonic() + self.cfg.closed_linger, c.flow))
            self.drop_remote(c, forget=False)
        elif msg_type == wire.FAILED:
            self.stats["failed_at_backend"] += 1
            self.fail(c, "backend failed", abort=False)

    def take_back(self, c, blob):
        try:
            s = self.lib.import_(blob)
        except handoff.HandoffError as e:
            log("warn", "import of a returned connection failed", conn=c.id, error=str(e))
            self.fail(c, "import failed", abort=False)
            return
        s.setblocking(False)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.steer.to_frontend(c.flow)
        c.link.owned -= 1
        c.sock, c.link, c.state = s, None, READING
        c.snapshot = None
        c.deadline = time.monotonic() + self.cfg.idle_timeout
        self.stats["returns"] += 1
        self.sel.register(s, selectors.EVENT_READ, ("client", c))
        # Bytes the client sent meanwhile (a pipelined request) are in the socket:
        # the selector reports them.

    def drop_remote(self, c, forget=True):
        if c.link is not None:
            c.link.owned -= 1
            c.link = None
        if forget:
            self.steer.forget(c.flow)
        self.conns.pop(c.id, None)

    def fail(self, c, why, abort=True):
        """Gives a connection up: the client gets an RST (from the backend's
        kernel when it died or failed, else from here)."""
        self.stats["client_resets"] += 1
        log("warn", "connection reset", conn=c.id, why=why, client=f"{c.flow[0]}:{c.flow[1]}")
        if abort and c.link is not None and c.link.up:
            c.link.send(wire.ABORT, c.id)
        snapshot = c.snapshot
        self.drop_remote(c)
        if snapshot is not None:
            try:
                self.lib.reset_peer(snapshot)
            except handoff.HandoffError as e:
                log("warn", "reset from the snapshot failed", conn=c.id, error=str(e))

    def link_down(self, link, why):
        log("warn", "backend down", backend=f"{link.address}:{link.port}", why=why)
        link.close()
        for c in [c for c in self.conns.values() if c.link is link]:
            self.fail(c, f"backend down: {why}", abort=False)

    # ------------------------------------------------------------ loop

    def tick(self):
        now = time.monotonic()
        if self.pending_rules is not None:
            rs, self.pending_rules = self.pending_rules, None
            self.apply_rules(rs)
        for link in self.links.values():
            if not link.up and now >= link.next_try:
                link.connect()
        for c in list(self.conns.values()):
            if now < c.deadline:
                continue
            if c.state == READING:
                self.stats["idle_closed"] += 1
                self.close_client(c)
            else:
                self.stats["handoff_timeouts"] += 1
                self.fail(c, f"hand-off timeout in state {c.state}")
        while self.lingering and self.lingering[0][0] <= now:
            self.steer.forget(self.lingering.popleft()[1])

    def run(self, stop):
        last = 0.0
        while not stop.is_set():
            for key, _ in self.sel.select(TICK_S):
                kind, obj = key.data
                if kind == "client":
                    if obj.sock is not None:
                        self.client_readable(obj)
                elif kind == "link":
                    if obj.sock is not None:
                        obj.readable()
                else:
                    self.accept(obj)
            now = time.monotonic()
            if now - last >= TICK_S:
                last = now
                self.tick()

    def snapshot_stats(self):
        out = dict(self.stats)
        out["connections"] = len(self.conns)
        out["backends"] = {b.name: {"address": b.address, "up": b.up, "owned": b.owned,
                                    "handoffs": b.link.handoffs if b.link else 0}
                           for b in self.ruleset.backends.values()}
        out["steering"] = {"mode": self.steer.name, **self.steer.counters()}
        return out

    def backend_name(self, address):
        """The rules' name of the backend at address (pins name backends)."""
        for name, b in self.ruleset.backends.items():
            if b.address == address:
                return name
        raise steering_mod.PinRefused(f"no backend at {address} in the rules in force")

    def connections(self):
        return [{"id": c.id, "client": f"{c.flow[0]}:{c.flow[1]}", "state": c.state,
                 "owner": f"{c.link.address}" if c.link else "frontend",
                 "requests": c.requests} for c in list(self.conns.values())]


def make_admin(fe):
    class Handler(BaseHTTPRequestHandler):
        def _send(self, code, obj):
            data = (json.dumps(obj) + "\n").encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/rules":
                self._send(200, fe.ruleset.doc)
            elif self.path == "/stats":
                self._send(200, fe.snapshot_stats())
            elif self.path == "/connections":
                self._send(200, fe.connections())
            else:
                self._send(404, {"error": f"path: no such endpoint {self.path!r}"})

        def do_PUT(self):
            if self.path != "/rules":
                self._send(404, {"error": f"path: no such endpoint {self.path!r}"})
                return
            if isinstance(self.connection, ssl.SSLSocket) and not self.connection.getpeercert():
                self._send(401, {"error": "client certificate: PUT needs a client certificate issued by --tls-ca"})
                return
            try:
                doc = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                fe.pending_rules = rules_mod.validate(doc)   # the loop swaps it in
            except ValueError as e:   # bad JSON or a RuleError naming the field
                self._send(400, {"error": str(e)})
                return
            self._send(200, {"rules": len(doc["rules"])})

        def log_message(self, fmt, *args):
            pass

    return Handler


def host_port(field, value):
    host, _, port = value.rpartition(":")
    try:
        socket.inet_aton(host)
        p = int(port)
        if not 0 < p < 65536:
            raise ValueError
    except (OSError, ValueError):
        raise argparse.ArgumentTypeError(f"{field}: expected A.B.C.D:PORT, got {value!r}") from None
    return host, p


def parser():
    p = argparse.ArgumentParser(prog="hlb-prism-fe", description=__doc__.split("\n\n")[0])
    p.add_argument("--listen", action="append", required=True,
                   type=lambda v: host_port("--listen", v), help="VIP:PORT (repeatable)")
    p.add_argument("--rules", required=True, help="rule document (JSON, rules.py)")
    p.add_argument("--prism-pin-dir", required=True,
                   help="where this host's agent pinned the steering map (--prism-pin-dir)")
    p.add_argument("--admin", type=lambda v: host_port("--admin", v),
                   default=("127.0.0.1", 9400))
    p.add_argument("--tls-cert", help="the admin API's server certificate (PEM; app/standalone/deploy/hlb-certs)")
    p.add_argument("--tls-key", help="its private key (PEM)")
    p.add_argument("--tls-ca", help="CA (PEM) of the controllers' client certificates: only they may PUT /rules")
    p.add_argument("--handoff-timeout", type=float, default=30.0,
                   help="seconds a backend may hold a connection for one request")
    p.add_argument("--idle-timeout", type=float, default=60.0)
    p.add_argument("--closed-linger", type=float, default=2.0,
                   help="seconds the flow of a connection a backend closed stays steered there")
    p.add_argument("--max-request-bytes", type=int, default=1 << 20)
    p.add_argument("--steer-before-import", action="store_true",
                   help="steer a flow to its backend before sending the state, and let the "
                        "backend serve at import (no GO round trip); needs every backend's host "
                        "agent with --prism-backend, which drops the flow's packets until the "
                        "import is complete")
    p.add_argument("--steering", choices=("agent", "fabric", "cookie"), default="agent",
                   help="agent: this host's agent steers the flows (mode a); fabric: the "
                        "controller pins each handed-off flow in the fabric (mode b, the VIP's "
                        "prism steering: fabric; implies --steer-before-import); cookie: the "
                        "owner's host agent writes its server id into the Cheetah cookie (mode c, "
                        "steering: cookie; a cheetah VIP; implies --steer-before-import)")
    p.add_argument("--cookie-pin-dir", help="with --steering cookie: where this host's agent pinned "
                                            "its cookie state (its --pin-dir)")
    p.add_argument("--controller", help="with --steering fabric: the controller's REST base URL "
                                        "(e.g. https://ctl:8181/hybridlb/v1)")
    p.add_argument("--controller-token-file", help="a file with a write token for the controller's API")
    p.add_argument("--trace", action="store_true",
                   help="log the time of each stage of every hand-off (debug)")
    p.add_argument("--build-dir", default=handoff.DEFAULT_BUILD)
    return p


def build_config(argv):
    p = parser()
    a = p.parse_args(argv)
    try:
        a.tls = tls_context(a.tls_cert, a.tls_key, a.tls_ca)
    except ConfigError as e:
        p.error(str(e))
    if a.tls is None and not ipaddress.ip_address(a.admin[0]).is_loopback:
        p.error(f"--admin: {a.admin[0]} is not a loopback address: without --tls-cert/--tls-key/--tls-ca the "
                "admin API has no authentication (docs/operating.md); keep it on loopback")
    for name in ("handoff_timeout", "idle_timeout", "closed_linger"):
        if getattr(a, name) <= 0:
            p.error(f"--{name.replace('_', '-')}: must be > 0")
    a.token = None
    if a.steering == "fabric":
        if not a.controller:
            p.error("--controller: required with --steering fabric")
        if len({h for h, _ in a.listen}) != 1:
            p.error("--listen: with --steering fabric every address must be the one VIP the pins are for")
        a.steer_before_import = True
        try:
            steering_mod.ControllerPins(a.controller, a.listen[0][0])
        except ValueError as e:
            p.error(str(e))
        if a.controller_token_file:
            try:
                with open(a.controller_token_file) as f:
                    a.token = f.read().strip()
            except OSError as e:
                p.error(f"--controller-token-file: {e}")
    elif a.controller or a.controller_token_file:
        p.error("--controller: only with --steering fabric")
    if a.steering == "cookie":
        if not a.cookie_pin_dir:
            p.error("--cookie-pin-dir: required with --steering cookie")
    elif a.cookie_pin_dir:
        p.error("--cookie-pin-dir: only with --steering cookie")
    if a.max_request_bytes < 1024:
        p.error("--max-request-bytes: must be >= 1024")
    try:
        with open(a.rules) as f:
            a.ruleset = rules_mod.validate(json.load(f))
    except (OSError, ValueError) as e:
        p.error(f"--rules: {a.rules}: {e}")
    return a


def main(argv=None):
    cfg = build_config(sys.argv[1:] if argv is None else argv)
    lib = handoff.Lib(cfg.build_dir)
    fe = None
    try:
        if cfg.steering == "fabric":
            pins = steering_mod.ControllerPins(cfg.controller, cfg.listen[0][0], cfg.token)
            steer = steering_mod.FabricSteering(lib, cfg.prism_pin_dir, pins,
                                                lambda address: fe.backend_name(address))
        elif cfg.steering == "cookie":
            steer = steering_mod.CookieSteering(lib, cfg.prism_pin_dir, cfg.cookie_pin_dir)
        else:
            steer = steering_mod.AgentSteering(lib, cfg.prism_pin_dir,
                                               before_import=cfg.steer_before_import)
    except handoff.HandoffError as e:
        log("error", "no steering map or cookie maps: is the agent running with --prism-pin-dir "
            "(and, for --steering cookie, --pin-dir and a cookie configuration)?", error=str(e))
        return 1
    fe = FrontEnd(cfg, cfg.ruleset, steer, lib)
    admin = ManagementServer(cfg.admin, make_admin(fe), cfg.tls)
    threading.Thread(target=admin.serve_forever, daemon=True).start()
    stop = threading.Event()
    import signal
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    log("info", "front end ready", listen=[f"{h}:{p}" for h, p in cfg.listen],
        admin=f"{cfg.admin[0]}:{cfg.admin[1]}", tls=cfg.tls is not None, steering=steer.name)
    fe.run(stop)
    admin.shutdown()
    log("info", "front end stopped", **{k: v for k, v in fe.stats.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
