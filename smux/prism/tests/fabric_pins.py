#!/usr/bin/env python3
"""The controller and fabric of Prism's fabric steering (mode b), in miniature, for the
test topology: an HTTP server with the controller's pin API of one VIP
(POST /prism/{vip}/pins {client, clientPort, vipPort, backend}, DELETE with the
query client, clientPort, vipPort; 400 naming the field) that writes each pin into
the test mux's pin map (tests/mux_encap.bpf.c) before it answers, as the controller
answers once the HMux or SMux acknowledged the pin.  The controller's own pin
lifecycle is tested in app/core (PrismPinsTest).

    fabric_pins.py --listen 127.0.0.1:9600 --vip VIP --rules rules.json --map PINNED_MAP
Prints {"ready": true} once it serves."""
import argparse
import json
import os
import socket
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "frontend"))
import handoff  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--listen", required=True)
    p.add_argument("--vip", required=True)
    p.add_argument("--rules", required=True)
    p.add_argument("--map", required=True)
    p.add_argument("--build-dir", default=handoff.DEFAULT_BUILD)
    a = p.parse_args()
    with open(a.rules) as f:
        backends = {n: b["address"] for n, b in json.load(f)["backends"].items()}
    lib = handoff.Lib(a.build_dir).lib
    fd = lib.prism_steer_open(a.map.encode())
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
