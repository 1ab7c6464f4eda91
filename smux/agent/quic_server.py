#!/usr/bin/env python3
"""A QUIC server (HTTP/0.9, ALPN "hq-interop") for a Cheetah VIP on a DIP host: every
connection id it issues carries this host's server id (p4/COOKIE-SPEC.md §13), so the
SMux places the connection's packets on this host with no state.

    quic_server.py --vip 10.200.0.11 --port 4433 --cookie-config /var/lib/hlb-agent/cookie.json \\
                   --cert server.pem --key server.key

The server id, hash mode and key come from the host agent's cookie document (the
file of its --cookie-config, which PUT /cookie rewrites; smux/agent/cookie_config.py),
read again whenever the file changes: a new key applies to the ids issued after it.
Replies leave from the VIP (bind the VIP, which the host agent puts on lo): direct
server return.  A request is `GET /path`; the answer names the server id, then the
path, and pads to `?bytes=N` bytes.

aioquic (PyPI) does the protocol through its sans-I/O QuicConnection; this module only
chooses the connection ids (aioquic has no hook for it: QuicConnection's first id and
its _replenish_connection_ids are replaced, checked by smux/tests/agent_quic_e2e.py)
and routes datagrams to connections by id.  Connection migration is not supported
(COOKIE-SPEC §13.2).  Prints one JSON line {"event": "ready", ...} when it listens; on
SIGTERM or SIGINT it closes every connection (CONNECTION_CLOSE) and exits.
"""
import argparse
import asyncio
import json
import os
import signal
import sys
import urllib.parse

from aioquic.buffer import Buffer
from aioquic.quic import events
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection, QuicConnectionId
from aioquic.quic.packet import QuicPacketType, encode_quic_version_negotiation, pull_quic_header

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cookie_config  # noqa: E402
from cookie_config import cc  # noqa: E402
from quic_hq import ALPN  # noqa: E402
MAX_RESPONSE = 1 << 20


class CookieIds:
    """Issues the connection ids of one VIP port from the host agent's cookie document."""

    def __init__(self, path, vip, port):
        self.path, self.vip, self.port = path, vip, port
        self._stamp = None
        self.server_id = self.mode = self.key = None
        self.reload()

    def reload(self):
        """Re-reads the document when it changed; a bad or missing one keeps the last
        good one (raises only at start, when there is none)."""
        try:
            st = os.stat(self.path)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
            if stamp == self._stamp:
                return
            cfg = cookie_config.load(self.path)
            if cfg is None:
                raise cookie_config.CookieConfigError(f"--cookie-config: {self.path}: no such file")
        except (OSError, cookie_config.CookieConfigError) as e:
            if self.server_id is None:
                raise cookie_config.CookieConfigError(str(e)) from None
            log("warn", "cookie document unreadable: keeping the last one", error=str(e))
            return
        self._stamp = stamp
        self.server_id = cfg["serverId"]
        self.mode, key = cookie_config.for_vip(cfg, self.vip)
        self.key = bytes.fromhex(key)

    def new_cid(self):
        self.reload()
        return cc.quic_cid(self.mode, self.key, self.vip, self.port, self.server_id,
                           os.urandom(cc.QUIC_NONCE_LEN))


class CookieConnection(QuicConnection):
    """An aioquic server connection whose own connection ids come from new_cid()."""

    def __init__(self, *, new_cid, **kw):
        self._new_cid = new_cid
        super().__init__(**kw)
        first = self._host_cids[0]
        first.cid = new_cid()
        self.host_cid = first.cid
        self._local_initial_source_connection_id = first.cid

    def _replenish_connection_ids(self):
        while len(self._host_cids) < min(8, self._remote_active_connection_id_limit):
            self._host_cids.append(QuicConnectionId(
                cid=self._new_cid(), sequence_number=self._host_cid_seq,
                stateless_reset_token=os.urandom(16)))
            self._host_cid_seq += 1


class Server(asyncio.DatagramProtocol):
    def __init__(self, configuration, ids):
        self.configuration, self.ids = configuration, ids
        self.loop = asyncio.get_running_loop()
        self.transport = None
        self.by_cid = {}          # every live id (and each client's first DCID) -> connection
        self.timers = {}
        self.requests = {}        # (connection, stream id) -> bytes received so far

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        try:
            header = pull_quic_header(Buffer(data=data), host_cid_length=cc.QUIC_CID_LEN)
        except ValueError:
            return
        if header.version is not None and header.packet_type != QuicPacketType.VERSION_NEGOTIATION \
                and header.version not in self.configuration.supported_versions:
            self.transport.sendto(encode_quic_version_negotiation(
                source_cid=header.destination_cid, destination_cid=header.source_cid,
                supported_versions=self.configuration.supported_versions), addr)
            return
        conn = self.by_cid.get(header.destination_cid)
        if conn is None:
            if header.packet_type != QuicPacketType.INITIAL or len(data) < 1200:
                return
            conn = CookieConnection(configuration=self.configuration, new_cid=self.ids.new_cid,
                                    original_destination_connection_id=header.destination_cid)
            self.by_cid[header.destination_cid] = conn   # the client's Initial retransmissions
            self.by_cid[conn.host_cid] = conn
        conn.receive_datagram(data, addr, now=self.loop.time())
        self.process(conn)

    def process(self, conn):
        while (ev := conn.next_event()) is not None:
            if isinstance(ev, events.ConnectionIdIssued):
                self.by_cid[ev.connection_id] = conn
            elif isinstance(ev, events.ConnectionIdRetired):
                self.by_cid.pop(ev.connection_id, None)
            elif isinstance(ev, events.StreamDataReceived):
                self.on_stream(conn, ev)
            elif isinstance(ev, events.ConnectionTerminated):
                self.forget(conn)
                return
        for data, addr in conn.datagrams_to_send(now=self.loop.time()):
            self.transport.sendto(data, addr)
        old = self.timers.pop(conn, None)
        if old:
            old.cancel()
        at = conn.get_timer()
        if at is not None:
            self.timers[conn] = self.loop.call_at(at, self.on_timer, conn)

    def on_timer(self, conn):
        self.timers.pop(conn, None)
        conn.handle_timer(now=self.loop.time())
        self.process(conn)

    def close_all(self):
        """CONNECTION_CLOSE (NO_ERROR) on every live connection, as a TCP server's exit resets its
        connections: the clients learn at once that the server is gone."""
        for conn in set(self.by_cid.values()):
            conn.close(reason_phrase="server stopping")
            for data, addr in conn.datagrams_to_send(now=self.loop.time()):
                self.transport.sendto(data, addr)

    def forget(self, conn):
        for cid in [c for c, v in self.by_cid.items() if v is conn]:
            del self.by_cid[cid]
        t = self.timers.pop(conn, None)
        if t:
            t.cancel()
        for k in [k for k in self.requests if k[0] is conn]:
            del self.requests[k]

    def on_stream(self, conn, ev):
        key = (conn, ev.stream_id)
        buf = self.requests.get(key, b"") + ev.data
        if not ev.end_stream:
            self.requests[key] = buf[:4096]
            return
        self.requests.pop(key, None)
        conn.send_stream_data(ev.stream_id, self.answer(buf), end_stream=True)

    def answer(self, request):
        """HTTP/0.9: `GET /path` -> "<server id> <path>\\n", padded to ?bytes=N."""
        parts = request.decode("latin-1").split()
        if len(parts) < 2 or parts[0] != "GET":
            return b"error: expected GET /path\n"
        url = urllib.parse.urlsplit(parts[1])
        body = f"{self.ids.server_id} {url.path}\n".encode()
        try:
            size = int(urllib.parse.parse_qs(url.query).get("bytes", ["0"])[0])
        except ValueError:
            return b"error: bytes: expected an integer\n"
        return body + b"." * max(0, min(size, MAX_RESPONSE) - len(body))


def log(level, msg, **kw):
    print(json.dumps({"level": level, "msg": msg, **kw}), file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--vip", required=True, help="the VIP (IPv4) to serve; bound, replies leave from it")
    p.add_argument("--port", type=int, default=443, help="UDP port (default 443)")
    p.add_argument("--cookie-config", required=True,
                   help="the host agent's cookie document (its --cookie-config file)")
    p.add_argument("--cert", required=True, help="TLS certificate (PEM)")
    p.add_argument("--key", required=True, help="its private key (PEM)")
    p.add_argument("--idle-timeout", type=float, default=30.0, help="seconds (default 30)")
    a = p.parse_args(argv)
    if not 1 <= a.port <= 65535:
        p.error(f"--port: expected 1..65535, got {a.port}")
    return a


async def serve(a):
    ids = CookieIds(a.cookie_config, a.vip, a.port)
    configuration = QuicConfiguration(is_client=False, alpn_protocols=ALPN,
                                      connection_id_length=cc.QUIC_CID_LEN,
                                      idle_timeout=a.idle_timeout)
    configuration.load_cert_chain(a.cert, a.key)
    loop = asyncio.get_running_loop()
    transport, server = await loop.create_datagram_endpoint(
        lambda: Server(configuration, ids), local_addr=(a.vip, a.port))
    print(json.dumps({"event": "ready", "vip": a.vip, "port": a.port,
                      "serverId": ids.server_id}), flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
        server.close_all()
    finally:
        transport.close()


def main(argv=None):
    a = parse_args(argv)
    try:
        asyncio.run(serve(a))
    except cookie_config.CookieConfigError as e:
        log("error", str(e))
        return 2
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
