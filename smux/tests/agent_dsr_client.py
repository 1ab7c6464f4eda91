#!/usr/bin/env python3
"""Test client for the host agent's decap + DSR test (agent_host_agent.py).

Plays a mux and a client at once: it sends IP-in-IP / GRE encapsulated
packets (inner source = the client) into the DIP host from the *mux*
namespace, and watches for the replies in the *client* namespace, where they
must arrive directly (source VIP, not encapsulated), while nothing from the VIP
comes back through the mux link.  One process holds sockets in both namespaces
(setns before opening each socket).

Input: a JSON object on argv[1] (see agent_host_agent.py); output: JSON list of
exchange results on stdout.
"""
import ctypes
import json
import os
import random
import sys
import time

from scapy.all import GRE, IP, TCP, UDP, Ether, Raw, conf  # noqa: E402
from scapy.sendrecv import AsyncSniffer

CLONE_NEWNET = 0x40000000
libc = ctypes.CDLL("libc.so.6", use_errno=True)


def enter_netns(name):
    fd = os.open(f"/var/run/netns/{name}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {name}")
    finally:
        os.close(fd)


def encapsulate(cfg, inner, encap, outer_src=None):
    outer = Ether(src=cfg["mux_mac"], dst=cfg["host_mac"]) / IP(src=outer_src or cfg["mux_ip"],
                                                                 dst=cfg["host_ip"])
    if encap == "gre":
        return outer / GRE(proto=0x0800) / inner
    outer[IP].proto = 4           # IP-in-IP (set explicitly: inner may be raw bytes)
    return outer / inner


def from_vip(cfg):
    def match(p):
        return IP in p and p[IP].src == cfg["vip"] and p[IP].dst == cfg["client_ip"]
    return match


class Sniffer:
    """AsyncSniffer on an already opened socket, whose packets can be read
    while it runs (AsyncSniffer.results only exists after stop())."""

    def __init__(self, sock, lfilter=None):
        self.packets = []
        self.sniffer = AsyncSniffer(opened_socket=sock, store=False, lfilter=lfilter,
                                    prn=self.packets.append)

    def start(self):
        self.sniffer.start()

    def stop(self):
        self.sniffer.stop()


def wait_for(sniffer, pred, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in list(sniffer.packets):
            if pred(p):
                return p
        time.sleep(0.02)
    return None


def describe(p):
    if p is None:
        return None
    ip = p[IP]
    d = {"src": ip.src, "dst": ip.dst, "proto": ip.proto,
         "encapsulated": ip.proto in (4, 47)}
    l4 = p[TCP] if TCP in p else p[UDP] if UDP in p else None
    if l4 is not None:   # raw bytes: scapy may dissect the payload (DNS, ...)
        d["payload"] = bytes(l4.payload).decode(errors="replace")
    if TCP in p:
        d["tcp_flags"] = str(p[TCP].flags)
    return d


def exchange_udp(cfg, send, client_sniff, encap, payload):
    sport = random.randrange(20000, 60000)
    inner = IP(src=cfg["client_ip"], dst=cfg["vip"]) / UDP(sport=sport, dport=cfg["udp_port"]) / Raw(payload)
    send.send(encapsulate(cfg, inner, encap))
    reply = wait_for(client_sniff, lambda p: from_vip(cfg)(p) and UDP in p and p[UDP].dport == sport)
    return {"reply": describe(reply), "sent": 1}


def exchange_tcp(cfg, send, client_sniff, encap, payload):
    sport = random.randrange(20000, 60000)
    base = IP(src=cfg["client_ip"], dst=cfg["vip"])
    isn = random.randrange(1 << 31)
    send.send(encapsulate(cfg, base / TCP(sport=sport, dport=cfg["tcp_port"], flags="S", seq=isn), encap))

    def is_synack(p):
        return from_vip(cfg)(p) and TCP in p and p[TCP].dport == sport and p[TCP].flags == "SA"
    synack = wait_for(client_sniff, is_synack)
    if synack is None:
        return {"synack": None, "reply": None, "sent": 1}
    ack = synack[TCP].seq + 1
    send.send(encapsulate(cfg, base / TCP(sport=sport, dport=cfg["tcp_port"], flags="A",
                                          seq=isn + 1, ack=ack), encap))
    send.send(encapsulate(cfg, base / TCP(sport=sport, dport=cfg["tcp_port"], flags="PA",
                                          seq=isn + 1, ack=ack) / Raw(payload), encap))

    def is_data(p):
        return from_vip(cfg)(p) and TCP in p and p[TCP].dport == sport and len(p[TCP].payload) > 0
    reply = wait_for(client_sniff, is_data)
    send.send(encapsulate(cfg, base / TCP(sport=sport, dport=cfg["tcp_port"], flags="R",
                                          seq=isn + 1 + len(payload)), encap))
    return {"synack": describe(synack), "reply": describe(reply), "sent": 4}


def send_malformed(cfg, send, client_sniff, encap, payload):
    """Encapsulated packets whose inner IPv4 header is cut short."""
    inner = Raw(b"\x45\x00")
    n = 5
    for _ in range(n):
        send.send(encapsulate(cfg, inner, encap))
    return {"reply": None, "sent": n}


def send_spoofed(cfg, send, client_sniff, encap, payload, outer_src=None, inner_dst=None):
    """UDP to the echo port from another outer source (a host that is not a
    mux) or to another inner destination (relaying through the DIP host).
    Reports an echo from the VIP and anything that reached the client
    namespace carrying the payload (a relayed packet)."""
    sport = random.randrange(20000, 60000)
    inner = (IP(src=cfg["client_ip"], dst=inner_dst or cfg["vip"])
             / UDP(sport=sport, dport=cfg["udp_port"]) / Raw(payload))
    n = 3
    for _ in range(n):
        send.send(encapsulate(cfg, inner, encap, outer_src))
    reply = wait_for(client_sniff, lambda p: from_vip(cfg)(p) and UDP in p and p[UDP].dport == sport,
                     timeout=1.0)
    relayed = next((p for p in client_sniff.packets
                    if UDP in p and p[UDP].sport == sport and bytes(p[UDP].payload) == payload.encode()),
                   None)
    return {"reply": describe(reply), "relayed": describe(relayed), "sent": n}


def main():
    cfg = json.loads(sys.argv[1])
    conf.verb = 0
    enter_netns(cfg["client_ns"])
    client_sniff = Sniffer(conf.L2listen(iface=cfg["client_if"]))
    enter_netns(cfg["mux_ns"])
    mux_sniff = Sniffer(conf.L2listen(iface=cfg["mux_if"]),
                        lfilter=lambda p: IP in p and p[IP].src == cfg["vip"])
    send = conf.L2socket(iface=cfg["mux_if"])
    client_sniff.start()
    mux_sniff.start()
    time.sleep(0.3)
    results = []
    for ex in cfg["exchanges"]:
        if ex["proto"] == "spoofed":
            r = send_spoofed(cfg, send, client_sniff, ex["encap"], ex["payload"],
                             ex.get("outer_src"), ex.get("inner_dst"))
        else:
            fn = {"tcp": exchange_tcp, "udp": exchange_udp, "malformed": send_malformed}[ex["proto"]]
            r = fn(cfg, send, client_sniff, ex["encap"], ex["payload"])
        r.update(ex)
        results.append(r)
    time.sleep(0.2)
    client_sniff.stop()
    mux_sniff.stop()
    send.close()
    print(json.dumps({"exchanges": results,
                      "vip_packets_on_mux_link": len(mux_sniff.packets)}))


if __name__ == "__main__":
    main()
