#!/usr/bin/python3
"""A DIP's request-serialising HTTP service for the balance experiments: ONE worker answers
one request at a time (the others wait in the listen queue, as requests wait for a busy
CPU-bound worker), each GET /?ms=N holding that worker N milliseconds, then answering the
host's name. The work is a sleep: the queueing is real while the emulation's two shared
cores stay free for the muxes and the clients (a busy loop would measure the CPU scheduler
of the machine, not the balancing)."""
import argparse
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlsplit

from hlb_http_server import answer_name

MAX_MS = 10000


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--name", required=True)
    p.add_argument("--port", type=int, default=8080)
    a = p.parse_args()
    body = (a.name + "\n").encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"    # one request per connection: the worker is free after it

        def do_GET(self):
            try:
                ms = float(parse_qs(urlsplit(self.path).query).get("ms", ["0"])[0])
            except ValueError:
                ms = -1
            if not 0 <= ms <= MAX_MS:
                self.send_error(400, "ms: expected 0..%d" % MAX_MS)
                return
            time.sleep(ms / 1000.0)
            answer_name(self, body)

        def log_message(self, *_):
            pass

    HTTPServer.request_queue_size = 1024   # waiting requests queue, they are not refused
    HTTPServer(("0.0.0.0", a.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
