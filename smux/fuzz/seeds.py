#!/usr/bin/env python3
"""Writes starting corpora for the fuzzers: bursts of well-formed frames (TCP/UDP to the
packet harness's VIPs, pinned and not, ARP, ICMP) in its record format, and table
documents.  Usage: seeds.py PACKET_DIR TABLE_DIR"""
import json
import logging
import os
import sys

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import ARP, ICMP, IP, TCP, UDP, Ether, Raw  # noqa: E402

pkt_dir, table_dir = sys.argv[1], sys.argv[2]
os.makedirs(pkt_dir, exist_ok=True)
os.makedirs(table_dir, exist_ok=True)
frames = [
    Ether() / IP(src="198.51.100.1", dst="100.64.0.1") / TCP(sport=1234, dport=80, flags="S"),
    Ether() / IP(src="198.51.100.1", dst="100.64.0.1") / UDP(sport=53, dport=5353) / Raw(b"q"),
    Ether() / IP(src="198.51.100.1", dst="100.64.0.2", flags="DF") / TCP(dport=443) / Raw(b"x" * 1480),
    Ether() / IP(src="198.51.100.1", dst="192.0.2.10") / ICMP() / Raw(b"ping"),
    Ether(dst="ff:ff:ff:ff:ff:ff") / ARP(psrc="192.0.2.1", pdst="192.0.2.10"),
    Ether() / IP(src="198.51.100.2", dst="100.64.0.3") / TCP(sport=4000, dport=80, flags="S"),
    Ether() / IP(src="198.51.100.2", dst="100.64.0.3") / TCP(sport=4000, dport=80, flags="A"),
    Ether() / IP(src="198.51.100.3", dst="100.64.0.4") / TCP(sport=4001, dport=443, flags="A"),
    Ether() / IP(src="198.51.100.3", dst="100.64.0.3") / UDP(sport=4002, dport=53) / Raw(b"q"),
    # cheetah-stateful: a SYN (index and hint), an echo, the same forwarded to us IP-in-IP
    Ether() / IP(src="198.51.100.4", dst="100.64.0.8") / TCP(
        sport=4003, dport=80, flags="S", options=[("Timestamp", (1, 0))]),
    Ether() / IP(src="198.51.100.4", dst="100.64.0.8") / TCP(
        sport=4003, dport=80, flags="A", options=[("NOP", None), ("NOP", None),
                                                  ("Timestamp", (2, 0x45670000))]),
    Ether() / IP(src="192.0.2.20", dst="192.0.2.10") / IP(src="198.51.100.4", dst="100.64.0.8") /
    TCP(sport=4003, dport=80, flags="A", options=[("NOP", None), ("NOP", None),
                                                  ("Timestamp", (3, 0x45670000))]),
    # QUIC to the cheetah VIP's UDP port: an Initial (long header, 8-byte DCID), a short header
    Ether() / IP(src="198.51.100.5", dst="100.64.0.8") / UDP(sport=4004, dport=443) /
    Raw(bytes([0xc0, 0, 0, 0, 1, 8]) + bytes(range(8)) + bytes([0]) + b"i" * 40),
    Ether() / IP(src="198.51.100.5", dst="100.64.0.8") / UDP(sport=4004, dport=443) /
    Raw(bytes([0x41]) + bytes(range(8)) + b"s" * 30),
]


def record(frame, ends_burst=False, port=0, sweep=False, swap=False, clock_fifties=0):
    """The packet harness's record: control byte, little-endian length, the frame
    (dp_fuzz_packet.c gives the format)."""
    raw = bytes(frame)
    ctl = port | (2 if ends_burst else 0) | (8 if sweep else 0) | (16 if swap else 0) | clock_fifties << 5
    return bytes([ctl]) + len(raw).to_bytes(2, "little") + raw


# One frame each, then every frame in one burst, then bursts of pinned traffic with
# the clock moving past the timeouts between them, the sweep and a table swap after
# them; two-port mode in the last.
seeds = [bytes([0]) + record(f, True) for f in frames]
seeds.append(bytes([0]) + b"".join(record(f, port=i % 2) for i, f in enumerate(frames)))
pinned = frames[5:]
seeds.append(bytes([1]) + b"".join(record(f, ends_burst=(i == len(pinned) - 1), sweep=True,
                                          swap=(rep == 1), clock_fifties=7)
                                   for rep in range(3) for i, f in enumerate(pinned)))
# Runs of frames to one service, as real bursts are (the lean pass's run loops only
# start at a few frames in a row): unpinned crc32, unpinned ovs + GRE, pinned crc32,
# unpinned ovs + IP-in-IP.
for vip, dport, flags in (("100.64.0.1", 80, "A"), ("100.64.0.2", 22, "PA"), ("100.64.0.3", 80, "S"),
                          ("100.64.0.6", 80, "A")):
    run = [Ether() / IP(src=f"198.51.100.{k + 1}", dst=vip) / TCP(sport=5000 + k, dport=dport,
                                                                   flags=flags) / Raw(b"r" * k)
           for k in range(24)]
    seeds.append(bytes([0]) + b"".join(record(f, ends_burst=(k == 23), swap=(rep == 0))
                                       for rep in range(2) for k, f in enumerate(run)))
# The same with three workers (configuration bits 2-3: workers less one).
seeds += [bytes([seed[0] | 8]) + seed[1:] for seed in list(seeds)]
for i, seed in enumerate(seeds):
    with open(os.path.join(pkt_dir, f"seed{i}"), "wb") as fh:
        fh.write(seed)
tables = [
    {"version": 1, "vips": []},
    {"version": 2, "vips": [{"vip": "100.64.0.1", "aggregate": "100.64.0.0/24",
                             "selection": "crc32", "encap": "gre", "connTable": True,
                             "hashBasis": 5, "ports": [
                                 {"proto": "tcp", "port": 80, "dips": [
                                     {"ip": "10.0.0.1", "weight": 3, "hostIp": "172.16.0.1",
                                      "bucketId": 4}, {"ip": "10.0.0.2"}]},
                                 {"proto": 17, "port": 0, "dips": []}]}]},
    # hashBasis above INT64_MAX is written as a string (hex or decimal)
    {"version": 3, "vips": [{"vip": "100.64.0.1", "hashBasis": "0xFEDCBA9876543210", "ports": [
        {"proto": "udp", "port": 53, "dips": [{"ip": "10.0.0.1", "bucketId": 4000000000}]}]},
        {"vip": "100.64.0.2", "hashBasis": "18446744073709551615", "ports": [
            {"proto": "tcp", "port": 0, "dips": [{"ip": "10.0.0.2", "weight": 0}]}]}]},
]
for i, t in enumerate(tables):
    with open(os.path.join(table_dir, f"seed{i}.json"), "w") as fh:
        json.dump(t, fh)
