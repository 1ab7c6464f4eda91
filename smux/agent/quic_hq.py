"""HTTP/0.9 over QUIC (ALPN "hq-interop") as quic_server.py speaks it, and the client
side of it on aioquic: the one place the tests' client (smux/tests/agent_quic_client.py)
and the emulation's probe (topologies/hlb_probe.py quic) take it from.

A request is `GET /path`, one per bidirectional stream; the answer is
"<server id> <path>\\n" (padded to ?bytes=N), so a client sees which server answered.
"""
import asyncio
import ssl

from aioquic.asyncio import QuicConnectionProtocol, connect
from aioquic.quic import events
from aioquic.quic.configuration import QuicConfiguration

ALPN = ["hq-interop"]
IDLE_TIMEOUT_REASON = "Idle timeout"     # aioquic's reason when its own idle timer ends a connection


class ConnectionClosed(ConnectionError):
    """The connection ended before an answer came. `by_peer`: the server sent CONNECTION_CLOSE;
    `idle`: this client's idle timer ended it (nothing came from the server for the
    negotiated idle timeout: a stall); neither: this client closed it (a protocol error)."""

    def __init__(self, ended, closed_here):
        self.idle = ended.reason_phrase == IDLE_TIMEOUT_REASON
        self.by_peer = not closed_here and not self.idle
        super().__init__("QUIC error 0x%x%s" % (ended.error_code,
                                                 " (%s)" % ended.reason_phrase if ended.reason_phrase else ""))


class ClientProtocol(QuicConnectionProtocol):
    """Keeps how its connection ended (`ended`: aioquic's ConnectionTerminated) and whether
    this side closed it (`closed_here`): aioquic reports both ends' closes as one event, and
    only local closes go through QuicConnection.close() (a peer's CONNECTION_CLOSE and the
    idle timer set the event directly)."""

    def __init__(self, quic, **kw):
        super().__init__(quic, **kw)
        self.ended, self.closed_here = None, False
        close = quic.close

        def close_here(*args, **kwargs):
            if self.ended is None:
                self.closed_here = True
            close(*args, **kwargs)
        quic.close = close_here

    def quic_event_received(self, event):
        if isinstance(event, events.ConnectionTerminated) and self.ended is None:
            self.ended = event
        super().quic_event_received(event)

    def closed(self):
        """ConnectionClosed when the connection has ended, else None."""
        if self.ended is None:
            return None
        return ConnectionClosed(self.ended, self.closed_here)


def client_configuration(idle_timeout=60.0):
    """A client that does not check the server's certificate (the test servers' certificates
    name the VIP, which an HTTP/0.9 request does not carry)."""
    c = QuicConfiguration(is_client=True, alpn_protocols=ALPN, verify_mode=ssl.CERT_NONE,
                          idle_timeout=idle_timeout)
    c.server_name = "quic"
    return c


def open_connection(host, port, idle_timeout=60.0):
    """An async context manager: one QUIC connection, handshake done on entry."""
    return connect(host, port, configuration=client_configuration(idle_timeout), create_protocol=ClientProtocol,
                   wait_connected=True)


async def get(protocol, path, timeout):
    """One request on a new stream of an open connection (a ClientProtocol) -> the answer's
    text (asyncio.TimeoutError when none comes within `timeout` seconds, ConnectionClosed when
    the connection ends first)."""
    if protocol.closed():
        raise protocol.closed()
    reader, writer = await protocol.create_stream()
    writer.write(f"GET {path}\r\n".encode())
    writer.write_eof()
    answer = await asyncio.wait_for(reader.read(), timeout)
    if not answer and protocol.closed():        # the stream ended with the connection
        raise protocol.closed()
    return answer.decode(errors="replace").strip()


def server_id_of(answer):
    """The server id an answer names (ValueError when it names none: an error answer, or
    none at all, the stream ended by a closed connection)."""
    head = answer.split(" ", 1)[0]
    if not head.isdigit():
        raise ValueError("no server id in the answer %r" % answer[:80])
    return int(head)
