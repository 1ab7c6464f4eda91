"""How the client's packets reach whoever owns a connection now, and how no old
owner answers them with an RST (README.md, "Steering").

The front end calls, for one hand-off and back:
    lock(flow)              before it exports: no packet of the flow may reach a
                            socket until the next call (they are dropped; TCP resends)
    to_backend(flow, b, done)  steer to backend b, call done() once that is in force:
                            after the backend's IMPORTED (it waits for GO before it
                            sends), or, with `before_import`, in place of lock() before
                            the export (the backend serves at import)
    lock(flow)              the backend asks for the connection back
    to_frontend(flow)       the front end has imported it again
    forget(flow)            the connection is gone from this front end
A flow is (client address, client port, VIP, VIP port).

Mode a (AgentSteering): the front-end host's agent, through the steering map its
XDP program reads (bpf/prism_steer.bpf.h).
Mode c (CookieSteering): the Cheetah cookie.  The host that imports the connection
makes its agent write its own server id into the cookie (src/prism_cookie.h), so the
mux sends the client's packets to the owner by the echo; this host's map handles the
packets that still carry its cookie (dropped while locked, re-encapsulated to the
backend), and the backend's host re-encapsulates those carrying its cookie to this
host after the hand-back (src/prism_linger.h).
Mode b (FabricSteering): the fabric, through a pin per handed-off flow the controller
installs (POST /prism/{vip}/pins) and acknowledges before the backend serves; the
front-end host's map still drops or re-encapsulates the packets that reach it (a
locked flow, stragglers sent before the pin was in force)."""
import http.client
import json
import socket
import urllib.parse

import handoff


class AgentSteering:
    """Mode a: the map pinned by this host's agent (--prism-pin-dir)."""

    name = "agent"

    def __init__(self, lib, pin_dir, before_import=False):
        """before_import: every backend's host agent runs with --prism-backend: it
        drops a flow's packets while no socket of the flow is ready there (none
        yet, or one still in repair mode), where its kernel would answer with an
        RST.  The front end then steers to the backend before it sends the state,
        and the backend serves at import.  Without it the backend waits for GO:
        steered only after IMPORTED, the client's ACKs of the first response
        segments would be dropped here, and an imported connection has no RTT
        sample yet, so the backend would wait for its initial 1 s retransmission
        timeout (measured: a 2 MB response at 100 Mbit/s took 1.35 s, not 0.17 s)."""
        self.map = handoff.SteerMap(lib, pin_dir)
        self.before_import = before_import

    def lock(self, flow):
        self.map.lock(flow)

    def to_backend(self, flow, backend, done):
        self.map.forward(flow, backend.address)
        done()

    def handoff_entry(self, flow, backend):
        """With before_import: the entry the front end's one-call hand-off
        (handoff.Lib.hand_off) writes in place of to_backend()."""
        return self.map.entry(flow, backend.address)

    def to_frontend(self, flow):
        self.map.delete(flow)

    def forget(self, flow):
        self.map.delete(flow)

    def counters(self):
        return self.map.counters()

    def close(self):
        self.map.close()


class CookieSteering(AgentSteering):
    """Mode c: as mode a on this host (lock, stragglers re-encapsulated), and the
    cookie of every import names the importing host: `lib.cookie_enable(cookie_pin_dir)`
    makes the hand-off calls do it.  The backends' hosts drop a flow's early packets
    (--prism-backend), so the flow is steered before the import (before_import)."""

    name = "cookie"

    def __init__(self, lib, pin_dir, cookie_pin_dir):
        super().__init__(lib, pin_dir, before_import=True)
        self.server_id = lib.cookie_enable(cookie_pin_dir)

    def counters(self):
        return {**super().counters(), "server_id": self.server_id}


class PinRefused(Exception):
    """The controller did not install or remove a pin (its answer says why)."""


class ControllerPins:
    """The controller's pin API of one VIP (POST/DELETE /prism/{vip}/pins), on one
    kept-alive HTTP connection.  Each call returns once the controller answered,
    that is once the fabric acknowledged the change."""

    def __init__(self, url, vip, token=None, timeout=2.0):
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"--controller: expected http(s)://HOST[:PORT], got {url!r}")
        self.https, self.host, self.port = u.scheme == "https", u.hostname, u.port
        self.base = u.path.rstrip("/") + f"/prism/{vip}/pins"
        self.headers = {"Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.timeout = timeout
        self.conn = None

    def _call(self, method, path, body=None):
        for attempt in (0, 1):   # once more on a kept-alive connection the server closed
            if self.conn is None:
                cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
                self.conn = cls(self.host, self.port, timeout=self.timeout)
                try:
                    self.conn.connect()
                    self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                except OSError as e:
                    self.conn = None
                    if attempt:
                        raise PinRefused(f"controller unreachable: {e}") from None
                    continue
            try:
                self.conn.request(method, path, body=body, headers=self.headers)
                r = self.conn.getresponse()
                text = r.read().decode(errors="replace")
            except (OSError, http.client.HTTPException) as e:
                self.conn.close()
                self.conn = None
                if attempt:
                    raise PinRefused(f"controller unreachable: {e}") from None
                continue
            if r.status != 200:
                try:
                    doc = json.loads(text)
                    why = f"{doc.get('field', '')}: {doc.get('reason', text)}"
                except ValueError:
                    why = text[:200]
                raise PinRefused(f"{method} {path}: {r.status} {why}")
            return json.loads(text)

    def pin(self, flow, backend):
        client, cport, _vip, vport = flow
        return self._call("POST", self.base, json.dumps(
            {"client": client, "clientPort": cport, "vipPort": vport, "backend": backend}))

    def unpin(self, flow):
        client, cport, _vip, vport = flow
        q = urllib.parse.urlencode({"client": client, "clientPort": cport, "vipPort": vport})
        return self._call("DELETE", f"{self.base}?{q}")

    def close(self):
        if self.conn is not None:
            self.conn.close()


class FabricSteering:
    """Mode b: a pin per handed-off flow, through the controller (ControllerPins),
    and this host's map for the packets that still reach it.

    Every backend's host runs with --prism-backend (it drops a flow's packets until
    its import is complete), so the flow is pinned before the state is sent and the
    backend serves at import (before_import).  The pin goes before the one-call
    hand-off, and is removed, acknowledged, before the front end answers RECLAIM with
    LOCKED: from then on the client's packets reach this host again, where the map
    drops them until the connection is back.  A call that fails raises PinRefused:
    the front end keeps the connection (pin) or resets it (unpin)."""

    name = "fabric"
    before_import = True

    def __init__(self, lib, pin_dir, pins, backend_name):
        """pins: ControllerPins; backend_name(address) -> the rules' name of that backend."""
        self.map = handoff.SteerMap(lib, pin_dir)
        self.pins = pins
        self.backend_name = backend_name
        self.pinned = set()
        self.stats = {"pins": 0, "unpins": 0, "pin_failures": 0}

    def _pin(self, flow, backend):
        try:
            self.pins.pin(flow, self.backend_name(backend.address))
        except PinRefused:
            self.stats["pin_failures"] += 1
            raise
        self.pinned.add(flow)
        self.stats["pins"] += 1

    def _unpin(self, flow):
        if flow in self.pinned:
            try:
                self.pins.unpin(flow)
            except PinRefused:
                self.stats["pin_failures"] += 1
                raise
            self.pinned.discard(flow)
            self.stats["unpins"] += 1

    def handoff_entry(self, flow, backend):
        """Pins the flow (acknowledged), then the map entry the one-call hand-off
        writes: packets already on their way to this host follow to the backend."""
        self._pin(flow, backend)
        return self.map.entry(flow, backend.address)

    def to_backend(self, flow, backend, done):
        # Only after a backend closed the connection (CLOSED): its last ACKs.  A
        # pin already there stays; after a RECLAIM it is gone and this host's map
        # forwards them.
        self.map.forward(flow, backend.address)
        done()

    def lock(self, flow):
        self.map.lock(flow)
        self._unpin(flow)

    def to_frontend(self, flow):
        self.map.delete(flow)

    def forget(self, flow):
        self.map.delete(flow)
        try:
            self._unpin(flow)
        except PinRefused:
            self.pinned.discard(flow)   # the controller's rounds collect it

    def counters(self):
        return {**self.map.counters(), **self.stats, "pinned": len(self.pinned)}

    def close(self):
        self.pins.close()
        self.map.close()
