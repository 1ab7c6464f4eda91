"""HTTP/0.9 over QUIC (ALPN "hq-interop") as quic_server.py speaks it, and the client
side of it on aioquic: the one place the tests' client (smux/tests/agent_quic_client.py)
and the emulation's probe (topologies/hlb_probe.py quic) take it from.

A request is `GET /path`, one per bidirectional stream; the answer is
"<server id> <path>\\n" (padded to ?bytes=N), so a client sees which server answered.
"""
import asyncio
import ssl

from aioquic.asyncio import connect
from aioquic.quic.configuration import QuicConfiguration

ALPN = ["hq-interop"]


def client_configuration(idle_timeout=60.0):
    """A client that does not check the server's certificate (the test servers' certificates
    name the VIP, which an HTTP/0.9 request does not carry)."""
    c = QuicConfiguration(is_client=True, alpn_protocols=ALPN, verify_mode=ssl.CERT_NONE,
                          idle_timeout=idle_timeout)
    c.server_name = "quic"
    return c


def open_connection(host, port, idle_timeout=60.0):
    """An async context manager: one QUIC connection, handshake done on entry."""
    return connect(host, port, configuration=client_configuration(idle_timeout), wait_connected=True)


async def get(protocol, path, timeout):
    """One request on a new stream of an open connection -> the answer's text
    (asyncio.TimeoutError when none comes within `timeout` seconds)."""
    reader, writer = await protocol.create_stream()
    writer.write(f"GET {path}\r\n".encode())
    writer.write_eof()
    return (await asyncio.wait_for(reader.read(), timeout)).decode(errors="replace").strip()


def server_id_of(answer):
    """The server id an answer names (ValueError when it names none: an error answer, or
    none at all, the stream ended by a closed connection)."""
    head = answer.split(" ", 1)[0]
    if not head.isdigit():
        raise ValueError("no server id in the answer %r" % answer[:80])
    return int(head)
