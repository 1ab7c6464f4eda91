"""The host agent's management API (module docstring of hlb_agent.py lists the endpoints): the
server, whose TLS handshakes run in each connection's thread, and the request handler."""
import json
import ssl
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import generate_latest, CONTENT_TYPE_LATEST

import cookie_config
from agent_log import log

MAX_BODY = 1 << 20  # bytes of a PUT body (413 beyond)
CONN_TIMEOUT = 10.0  # seconds a management connection may stall (TLS handshake, request)


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
