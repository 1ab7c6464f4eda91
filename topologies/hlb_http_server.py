#!/usr/bin/python3
"""A DIP host's services, so a client (and a test) knows which DIP served it:
- HTTP/1.1 on --port (keep-alive): every GET is answered with the host's name;
- UDP echo on --udp-port: "<name> <payload>" sent back FROM the address the datagram was
  sent to (IP_PKTINFO), i.e. from the VIP: the reply goes straight to the client (DSR).
Both bind 0.0.0.0, so they answer on every VIP the host serves (VIPs are local there)."""
import argparse
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

IP_PKTINFO = getattr(socket, "IP_PKTINFO", 8)


def udp_echo(name, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_IP, IP_PKTINFO, 1)
    s.bind(("0.0.0.0", port))
    prefix = name.encode() + b" "
    while True:
        data, anc, _flags, peer = s.recvmsg(2048, socket.CMSG_SPACE(12))
        # in_pktinfo {ifindex, spec_dst, addr}: reply from the datagram's destination (the VIP).
        cmsg = [(lvl, typ, d) for lvl, typ, d in anc if lvl == socket.IPPROTO_IP and typ == IP_PKTINFO]
        try:
            s.sendmsg([prefix + data], [(socket.IPPROTO_IP, IP_PKTINFO,
                                         b"\0\0\0\0" + cmsg[0][2][8:12] + b"\0\0\0\0")] if cmsg else [], 0, peer)
        except OSError:
            pass


def answer_name(handler, body):
    """200 with the host's name as the body (what clients and tests read the DIP from)."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--name", required=True)
    p.add_argument("--port", type=int, default=80)
    p.add_argument("--udp-port", type=int, default=9000)
    a = p.parse_args()
    body = (a.name + "\n").encode()
    threading.Thread(target=udp_echo, args=(a.name, a.udp_port), daemon=True).start()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            answer_name(self, body)

        def log_message(self, *_):
            pass

    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer(("0.0.0.0", a.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
