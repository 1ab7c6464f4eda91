#!/usr/bin/env python3
"""Writes starting corpora for the fuzzers: a few well-formed frames (TCP/UDP to the
harness's VIPs, ARP, ICMP) and table documents.  Usage: seeds.py PACKET_DIR TABLE_DIR"""
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
]
for i, f in enumerate(frames):
    with open(os.path.join(pkt_dir, f"seed{i}"), "wb") as fh:
        fh.write(bytes(f))
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
