#!/usr/bin/env python3
"""Stand-in for the SMux's control API health endpoint in the FRR test:
GET /health -> 200.  SIGUSR1 closes the listening socket (the endpoint stops
answering while the process lives on), SIGUSR2 opens it again.

usage: frr_health_standin.py HOST PORT PIDFILE
"""
import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass   # probes that gave up while we were stopped (SIGSTOP): expected here


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        code = 200 if self.path == "/health" else 404
        body = json.dumps({"status": "ok"}).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    host, port, pidfile = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    state = {"server": None}
    lock = threading.Lock()

    def open_server():
        with lock:
            if state["server"] is None:
                QuietServer.allow_reuse_address = True
                state["server"] = QuietServer((host, port), Handler)
                threading.Thread(target=state["server"].serve_forever, daemon=True).start()

    def close_server():
        with lock:
            srv, state["server"] = state["server"], None
        if srv:
            srv.shutdown()
            srv.server_close()

    signal.signal(signal.SIGUSR1, lambda *_: threading.Thread(target=close_server).start())
    signal.signal(signal.SIGUSR2, lambda *_: threading.Thread(target=open_server).start())
    open_server()
    with open(pidfile, "w") as f:
        f.write(f"{os.getpid()}\n")
    print(json.dumps({"ready": True}), flush=True)
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
