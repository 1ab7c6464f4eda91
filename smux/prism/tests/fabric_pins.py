#!/usr/bin/env python3
"""The controller and fabric of Prism's fabric steering (mode b), in miniature, for the
test topology: an HTTP server with the controller's pin API of one VIP
(POST /prism/{vip}/pins {client, clientPort, vipPort, backend}, DELETE with the
query client, clientPort, vipPort; 400 naming the field) that writes each pin into
the test mux's pin map (tests/mux_encap.bpf.c) before it answers, as the controller
answers once the HMux or SMux acknowledged the pin.  The controller's own pin
lifecycle is tested in app/core (PrismPinsTest).

    fabric_pins.py --listen 127.0.0.1:9600 --vip VIP --rules rules.json --map PINNED_MAP
    fabric_pins.py ... --smux 127.0.0.1:9180 --smux-netns NS
The second form puts each pin on a real hlb-smux instead (its POST/DELETE /pins, which
answers once its workers use the pin), whose control API listens on the loopback of
network namespace NS.  Prints {"ready": true} once it serves."""
import argparse
import ctypes
import http.client
import json
import os
import socket
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "frontend"))
import handoff  # noqa: E402


class SmuxPins:
    """The pin API of an hlb-smux whose control API is on the loopback of another network
    namespace: each call's socket is made in that namespace (setns(2) on this thread,
    then back), the HTTP exchange then runs in this one."""
    CLONE_NEWNET = 0x40000000

    def __init__(self, addr, netns):
        self.host, port = addr.rsplit(":", 1)
        self.port = int(port)
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        self.there = os.open(f"/run/netns/{netns}", os.O_RDONLY)
        self.lock = threading.Lock()

    def _socket(self):
        with self.lock:
            if self.libc.setns(self.there, self.CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns")
            try:
                return socket.create_connection((self.host, self.port), timeout=5)
            finally:
                if self.libc.setns(self.home, self.CLONE_NEWNET) != 0:
                    os._exit(70)      # this thread is stuck in the other namespace: stop

    def call(self, method, doc):
        c = http.client.HTTPConnection(self.host, self.port, timeout=5)
        c.sock = self._socket()
        try:
            c.request(method, "/pins", json.dumps(doc), {"Content-Type": "application/json"})
            r = c.getresponse()
            return r.status, json.loads(r.read() or b"null")
        finally:
            c.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--listen", required=True)
    p.add_argument("--vip", required=True)
    p.add_argument("--rules", required=True)
    p.add_argument("--map")
    p.add_argument("--smux")
    p.add_argument("--smux-netns")
    p.add_argument("--build-dir", default=handoff.DEFAULT_BUILD)
    a = p.parse_args()
    if (a.map is None) == (a.smux is None) or (a.smux is None) != (a.smux_netns is None):
        sys.exit("--map, or --smux with --smux-netns")
    with open(a.rules) as f:
        backends = {n: b["address"] for n, b in json.load(f)["backends"].items()}
    smux = SmuxPins(a.smux, a.smux_netns) if a.smux else None
    lib = None if smux else handoff.Lib(a.build_dir).lib
    fd = lib.prism_steer_open(a.map.encode()) if lib else 0
    if fd < 0:
        sys.exit(f"cannot open {a.map}")
    path = f"/prism/{a.vip}/pins"
    vip = int.from_bytes(socket.inet_aton(a.vip), sys.byteorder)

    def key(client, cport, vport):
        return (int.from_bytes(socket.inet_aton(client), sys.byteorder), socket.htons(cport), vip,
                socket.htons(vport))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True   # headers and body are two writes

        def send(self, code, doc):
            body = json.dumps(doc).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def refuse(self, field, reason):
            self.send(400, {"error": "invalid request", "field": field, "reason": reason})

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path != path:
                return self.send(404, {"error": "not found", "field": "vip", "reason": self.path})
            try:
                doc = json.loads(body)
                client, cport, vport = doc["client"], int(doc["clientPort"]), int(doc["vipPort"])
                socket.inet_aton(client)
            except (ValueError, KeyError, TypeError, OSError) as e:
                return self.refuse("/", f"bad pin: {e}")
            if doc.get("backend") not in backends:
                return self.refuse("/backend", f"unknown backend {doc.get('backend')!r}")
            dip = backends[doc["backend"]]
            if smux:
                status, out = smux.call("POST", {"client": client, "clientPort": cport, "vip": a.vip,
                                                 "vipPort": vport, "dip": dip})
                if status != 200:
                    return self.send(503, {"error": "unavailable", "reason": f"the SMux answered {status}: {out}"})
                return self.send(200, {"vip": a.vip, "vipPort": vport, "client": client, "clientPort": cport,
                                       "backend": doc["backend"], "dip": dip})
            rc = lib.prism_steer_set(fd, *key(client, cport, vport), handoff.STEER_FORWARD,
                                     int.from_bytes(socket.inet_aton(dip), sys.byteorder))
            if rc < 0:
                return self.send(503, {"error": "unavailable", "reason": f"map update failed ({rc})"})
            self.send(200, {"vip": a.vip, "vipPort": vport, "client": client, "clientPort": cport,
                            "backend": doc["backend"], "dip": dip})

        def do_DELETE(self):
            u = urllib.parse.urlsplit(self.path)
            q = dict(urllib.parse.parse_qsl(u.query))
            if u.path != path:
                return self.send(404, {"error": "not found", "field": "vip", "reason": u.path})
            for field in ("client", "clientPort", "vipPort"):
                if field not in q:
                    return self.refuse(field, "required")
            if smux:
                status, out = smux.call("DELETE", {"client": q["client"], "clientPort": int(q["clientPort"]),
                                                   "vip": a.vip, "vipPort": int(q["vipPort"])})
                if status != 200:
                    return self.send(503, {"error": "unavailable", "reason": f"the SMux answered {status}: {out}"})
                return self.send(200, {"removed": out["removed"]})
            rc = lib.prism_steer_delete(fd, *key(q["client"], int(q["clientPort"]), int(q["vipPort"])))
            self.send(200, {"removed": rc == 0})

        def log_message(self, fmt, *args):
            pass

    host, port = a.listen.rsplit(":", 1)
    server = ThreadingHTTPServer((host, int(port)), Handler)
    print(json.dumps({"ready": True}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
