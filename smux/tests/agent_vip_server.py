#!/usr/bin/env python3
"""A real service bound to the VIP, for the host agent test: TCP and UDP
echo ("echo:" + data), and optionally GET /healthz over HTTP.  Prints one JSON
line per payload received, with the peer address the socket saw (must be the
client, not the mux: DSR).

usage: agent_vip_server.py VIP [--tcp PORT] [--udp PORT] [--http PORT]
"""
import argparse
import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Healthz(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/healthz" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def report(proto, peer, data):
    print(json.dumps({"proto": proto, "peer": peer[0], "data": data.decode(errors="replace")}),
          flush=True)


def serve_tcp(sock):
    while True:
        conn, peer = sock.accept()
        with conn:
            conn.settimeout(5)
            try:
                data = conn.recv(4096)
            except OSError:
                continue
            if data:   # health probes connect and close without data
                report("tcp", peer, data)
                conn.sendall(b"echo:" + data)


def serve_udp(sock):
    while True:
        data, peer = sock.recvfrom(4096)
        report("udp", peer, data)
        sock.sendto(b"echo:" + data, peer)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("vip")
    p.add_argument("--tcp", type=int)
    p.add_argument("--udp", type=int)
    p.add_argument("--http", type=int)
    a = p.parse_args()
    threads = []
    if a.tcp:
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        t.bind((a.vip, a.tcp))
        t.listen(16)
        threads.append(threading.Thread(target=serve_tcp, args=(t,), daemon=True))
    if a.udp:
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind((a.vip, a.udp))
        threads.append(threading.Thread(target=serve_udp, args=(u,), daemon=True))
    if a.http:
        h = ThreadingHTTPServer((a.vip, a.http), Healthz)
        threads.append(threading.Thread(target=h.serve_forever, daemon=True))
    for th in threads:
        th.start()
    print(json.dumps({"ready": True}), flush=True)
    sys.stdin.read()   # run until the test closes our stdin (or kills us)


if __name__ == "__main__":
    main()
