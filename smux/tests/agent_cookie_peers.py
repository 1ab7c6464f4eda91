#!/usr/bin/env python3
"""Processes of the cookie end-to-end test (agent_cookie_e2e.py), each run inside one
of its namespaces:

  mux    TUN_NAME OUTER_SRC DIP KEY SERVER_ID STATS_FILE
         a stateless mux in miniature: packets routed to the TUN are tunnelled
         (IP-in-IP) to the DIP host; the cookie in every non-SYN client segment's
         TSecr is decoded with the reference model and the idents counted
  server PORT REPORT_FILE
         accepts TCP connections, echoes what it receives, and reports each
         socket's tcpi_rtt and keep-alive options
  client ADDR PORT NBYTES IFACE [RESUME_FILE]
         sends NBYTES and checks the echo, while capturing the server's segments:
         their TSvals and whether their TCP checksums are right; with RESUME_FILE,
         prints "paused" after a first exchange, waits for the file to exist, and
         does a second one on the same connection
"""
import fcntl
import json
import os
import select
import signal
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "p4", "model"))
import cheetah_cookie as cc  # noqa: E402

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000


def ts_option(tcp):
    """(TSval, TSecr) of a raw TCP header, or None."""
    off = (tcp[12] >> 4) * 4
    i = 20
    while i < off:
        kind = tcp[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= off or tcp[i + 1] < 2:
            break
        if kind == 8 and tcp[i + 1] == 10:
            return struct.unpack("!II", tcp[i + 2:i + 10])
        i += tcp[i + 1]
    return None


def ip_checksum(hdr):
    s = sum(struct.unpack(f"!{len(hdr) // 2}H", hdr))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def mux(tun_name, outer_src, dip, key_hex, server_id, stats_file):
    key = cc.parse_key(key_hex)
    tun = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(tun, TUNSETIFF, struct.pack("16sH", tun_name.encode(), IFF_TUN | IFF_NO_PI))
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    stats = {"tunnelled": 0, "decoded": 0, "wrong_ident": 0, "syn": 0, "no_ts": 0}
    stopping = []
    signal.signal(signal.SIGTERM, lambda *a: stopping.append(1))
    print("ready", flush=True)
    src, dst = socket.inet_aton(outer_src), socket.inet_aton(dip)
    ident = 0
    while not stopping:
        if not select.select([tun], [], [], 0.2)[0]:
            continue
        pkt = os.read(tun, 65535)
        if len(pkt) < 40 or pkt[0] >> 4 != 4:
            continue
        ihl = (pkt[0] & 15) * 4
        if pkt[9] == 6:
            tcp = pkt[ihl:]
            ts = ts_option(tcp)
            if tcp[13] & 0x02:
                stats["syn"] += 1
            elif ts is None:
                stats["no_ts"] += 1
            else:
                tup = cc.tuple_bytes(socket.inet_ntoa(pkt[16:20]), struct.unpack("!H", tcp[2:4])[0],
                                     socket.inet_ntoa(pkt[12:16]), struct.unpack("!H", tcp[0:2])[0])
                ident = cc.decode_ident("siphash13", key, tup, cc.cookie_of(ts[1]))
                stats["decoded"] += 1
                stats["wrong_ident"] += ident != int(server_id)
        outer = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(pkt), 0, 0, 64, 4, 0, src, dst))
        outer[10:12] = struct.pack("!H", ip_checksum(bytes(outer)))
        raw.sendto(bytes(outer) + pkt, (dip, 0))
        stats["tunnelled"] += 1
        if stats["tunnelled"] % 50 == 0:
            _write(stats_file, stats)
    _write(stats_file, stats)


def _write(path, doc):
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f)
    os.replace(path + ".tmp", path)


def server(port, report_file):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", int(port)))
    ls.listen(16)
    reports = []
    print("ready", flush=True)
    while True:
        c, peer = ls.accept()
        while True:   # requests until the client closes: an 8-byte length, then the bytes
            hdr = _recv_exact(c, 8, allow_eof=True)
            if len(hdr) < 8:
                break
            left = struct.unpack("!Q", hdr)[0]
            while left:
                chunk = c.recv(min(left, 1 << 16))
                if not chunk:
                    break
                c.sendall(chunk)   # bulk data from the server: TSO super-packets when on
                left -= len(chunk)
        info = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
        reports.append({"local": c.getsockname()[0], "peer": peer[0],
                        "rtt_us": struct.unpack_from("I", info, 68)[0],
                        "keepalive": c.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
                        "keepidle": c.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
                        "keepintvl": c.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL)})
        _write(report_file, reports)
        c.close()


def _recv_exact(c, n, allow_eof=False):
    buf = b""
    while len(buf) < n:
        chunk = c.recv(n - len(buf))
        if not chunk:
            if allow_eof:
                return buf
            raise ConnectionError("peer closed")
        buf += chunk
    return buf


def tcp_checksum_ok(ip):
    ihl = (ip[0] & 15) * 4
    seg = ip[ihl:struct.unpack("!H", ip[2:4])[0]]
    pseudo = ip[12:20] + struct.pack("!BBH", 0, 6, len(seg))
    data = pseudo + seg + (b"\0" if len(seg) % 2 else b"")
    return ip_checksum(data) == 0


def client(addr, port, nbytes, iface, resume_file=None):
    nbytes = int(nbytes)
    cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    cap.bind((iface, 0))
    seen = []
    done = threading.Event()
    phase = [1]

    def capture():
        cap.settimeout(0.1)
        while not done.is_set():
            try:
                frame, meta = cap.recvfrom(70000)
            except socket.timeout:
                continue
            ip = frame[14:]
            if meta[2] == socket.PACKET_OUTGOING or ip[9] != 6 or socket.inet_ntoa(ip[12:16]) != addr:
                continue
            tcp = ip[(ip[0] & 15) * 4:]
            ts = ts_option(tcp)
            seen.append({"tsval": ts[0] if ts else None, "flags": tcp[13],
                         "csum_ok": tcp_checksum_ok(ip), "len": len(ip), "phase": phase[0],
                         "client_port": struct.unpack("!H", tcp[2:4])[0]})

    def exchange(s):
        payload = os.urandom(nbytes)
        sender = threading.Thread(target=s.sendall, args=(struct.pack("!Q", nbytes) + payload,))
        sender.start()
        echo = _recv_exact(s, nbytes)
        sender.join()
        return echo == payload

    t = threading.Thread(target=capture)
    t.start()
    s = socket.create_connection((addr, int(port)), timeout=20)
    ok = exchange(s)
    if resume_file:
        print("paused", flush=True)
        while not os.path.exists(resume_file):
            time.sleep(0.05)
        phase[0] = 2
        ok = exchange(s) and ok
    time.sleep(0.2)
    local_port = s.getsockname()[1]
    s.close()
    time.sleep(0.2)
    done.set()
    t.join()
    print(json.dumps({"echo_ok": ok, "client_port": local_port, "segments": seen}))


if __name__ == "__main__":
    {"mux": mux, "server": server, "client": client}[sys.argv[1]](*sys.argv[2:])
