#!/usr/bin/env python3
"""Writes p4/vectors/crc32_5tuple.json: test vectors for the CRC32 5-tuple hash and the
weighted member choice defined in p4/HASH-SPEC.md.

Computed with the crc32c package from PyPI (an implementation independent of the C
SMux and of the P4 model), from a fixed seed so the file is reproducible:
    python3 smux/tests/gen_crc32_vectors.py > p4/vectors/crc32_5tuple.json
"""
import ipaddress
import json
import random
import struct

from crc32c import crc32c


def tuple_bytes(src, dst, proto, sport, dport):
    """The 13 hashed bytes: the fields a service fixes first (HASH-SPEC.md section 1)."""
    return (ipaddress.IPv4Address(dst).packed + struct.pack("!BH", proto, dport)
            + ipaddress.IPv4Address(src).packed + struct.pack("!H", sport))


def crc32_5tuple(src, dst, proto, sport, dport):
    return crc32c(tuple_bytes(src, dst, proto, sport, dport))


def weighted_pick(h, weights):
    total = sum(weights)
    if total == 0:
        return -1
    slot = h % total
    acc = 0
    for i, w in enumerate(weights):
        acc += w
        if slot < acc:
            return i
    raise AssertionError("unreachable")


def main():
    rnd = random.Random(20261121)
    fixed = [
        ("10.0.0.1", "100.64.0.1", 6, 12345, 80),
        ("0.0.0.1", "0.0.0.0", 0, 0, 0),
        ("255.255.255.255", "255.255.255.255", 17, 65535, 65535),
        ("192.168.1.10", "100.64.0.1", 17, 53, 53),
    ]
    tuples = fixed + [
        (str(ipaddress.IPv4Address(rnd.getrandbits(32))),
         str(ipaddress.IPv4Address(rnd.getrandbits(32))),
         rnd.choice([6, 17]), rnd.getrandbits(16), rnd.getrandbits(16))
        for _ in range(60)
    ]
    pools = [[1], [1, 1], [1, 2, 3], [5, 0, 5], [0, 0, 1], [100, 1, 1, 1], [7, 11, 13, 17, 19]]
    vectors = []
    for i, (src, dst, proto, sport, dport) in enumerate(tuples):
        h = crc32_5tuple(src, dst, proto, sport, dport)
        weights = pools[i % len(pools)]
        vectors.append({
            "srcIp": src, "dstIp": dst, "proto": proto, "srcPort": sport, "dstPort": dport,
            "bytes": tuple_bytes(src, dst, proto, sport, dport).hex(),
            "crc32": h,
            "weights": weights,
            "member": weighted_pick(h, weights),
        })
    doc = {
        "description": "CRC-32C over dst_ip|proto|dst_port|src_ip|src_port "
                       "(13 bytes, network order) and the weighted member choice "
                       "slot = crc32 % sum(weights); see p4/HASH-SPEC.md",
        "generator": "smux/tests/gen_crc32_vectors.py (Python crc32c package)",
        "check": {"ascii123456789": crc32c(b"123456789")},
        "vectors": vectors,
    }
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
