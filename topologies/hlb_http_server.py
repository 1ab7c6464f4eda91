#!/usr/bin/python3
"""A DIP host's service: answers every GET with its own host name, so a client (and a
test) knows which DIP served the request. Binds 0.0.0.0, so it also answers on every VIP
the host serves (the VIPs are local addresses there)."""
import argparse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--name", required=True)
    p.add_argument("--port", type=int, default=80)
    a = p.parse_args()
    body = (a.name + "\n").encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Served-By", a.name)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer(("0.0.0.0", a.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
