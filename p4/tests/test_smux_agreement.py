#!/usr/bin/env python3
"""The P4 model and the SMux pick the same DIP for every flow: 10,000 random tuples
through the model (real packets, P4Runtime entries, members per weight unit) against
the SMux's own C code (smux/include/hlb_pkt.h, built into a ctypes shim with and
without SSE4.2), for the one selection mode they share, `crc32` (p4/HASH-SPEC.md).
The `ovs` and `ovs-dphash` modes replicate Open vSwitch's hashes, which a P4 action
selector cannot compute; a P4 HMux's VIPs use `crc32`.  Also: the committed vectors."""
import ctypes
import ipaddress
import json
import os
import random
import shutil
import subprocess
import tempfile
import unittest

from scapy.all import ICMP, IP, TCP, UDP, Ether

import hlb_testbed as tb

REPO = os.path.dirname(tb.P4)
SMUX_INCLUDE = os.path.join(REPO, "smux", "include")
SHIM = os.path.join(tb.HERE, "smux_hash_shim.c")
TUPLES = 10000
POOLS = 50


def build_shim(tmp, flags):
    out = os.path.join(tmp, f"shim{len(os.listdir(tmp))}.so")
    cc = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-fno-strict-aliasing", *flags,
                    "-I", SMUX_INCLUDE, "-o", out, SHIM], check=True)
    lib = ctypes.CDLL(out)
    lib.shim_crc32_5tuple.restype = ctypes.c_uint32
    lib.shim_crc32_5tuple.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint8,
                                      ctypes.c_uint16, ctypes.c_uint16]
    for fn in (lib.shim_weighted_pick, lib.shim_weighted_pick_m):
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32), ctypes.c_int]
    return lib


class SmuxAgreementTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hlb-p4-shim-")
        cls.libs = {"sse4.2": build_shim(cls.tmp, ["-msse4.2"]),
                    "portable": build_shim(cls.tmp, ["-mno-sse4.2"])}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def smux_pick(self, lib, src, dst, proto, sport, dport, weights):
        h = lib.shim_crc32_5tuple(int(ipaddress.IPv4Address(src)), int(ipaddress.IPv4Address(dst)),
                                  proto, sport, dport)
        cum, total = [], 0
        for w in weights:
            total += w
            cum.append(total)
        arr = (ctypes.c_uint32 * len(cum))(*cum)
        picks = {lib.shim_weighted_pick(h, arr, len(cum)),
                 lib.shim_weighted_pick_m(h, arr, len(cum))}
        self.assertEqual(len(picks), 1, "the SMux's two pick functions disagree")
        return h, picks.pop()

    def test_committed_vectors(self):
        with open(os.path.join(tb.P4, "vectors", "crc32_5tuple.json")) as f:
            vectors = json.load(f)["vectors"]
        for v in vectors:
            data = bytes.fromhex(v["bytes"])
            self.assertEqual(tb.pipeline.cheetah_cookie.crc32c(data), v["crc32"])
            for lib in self.libs.values():
                h, pick = self.smux_pick(lib, v["srcIp"], v["dstIp"], v["proto"], v["srcPort"],
                                         v["dstPort"], v["weights"])
                self.assertEqual((h, pick), (v["crc32"], v["member"]))

    def test_10000_random_tuples_model_equals_smux(self):
        rng = random.Random(20)
        sw = tb.ModelSwitch("hlb_hmux")
        tb.fabric(sw)
        pools = []
        for sid in range(1, POOLS + 1):
            n = rng.randrange(1, 17)
            weights = [rng.choice([0, 1, 1, 2, 3, 5]) for _ in range(n)]
            if not any(weights):
                weights[0] = 1
            dips = [f"10.{sid}.{i // 250}.{i % 250 + 1}" for i in range(n)]
            vip = f"100.64.{sid}.1"
            kind = rng.choice(["tcp80", "any", "whole"])
            if kind == "tcp80":
                sw.add_service(sid, vip, 6, 80, dips, weights)
            elif kind == "any":
                sw.add_service(sid, vip, 17, 0, dips, weights)
            else:
                sw.add_service(sid, vip, None, None, dips, weights)
            pools.append((vip, kind, dips, weights))
        mismatches = []
        for i in range(TUPLES):
            vip, kind, dips, weights = pools[i % POOLS]
            src = str(ipaddress.IPv4Address(rng.getrandbits(32) & 0xDFFFFFFF | 0x01000000))
            sport = rng.randrange(65536)
            if kind == "tcp80":
                proto, dport, l4 = 6, 80, TCP(sport=sport, dport=80, flags="A")
            elif kind == "any":
                dport = rng.randrange(65536)
                proto, l4 = 17, UDP(sport=sport, dport=dport)
            else:
                proto, sport, dport, l4 = 1, 0, 0, ICMP()
            res = sw.process(Ether(dst=tb.ROUTER_MAC) / IP(src=src, dst=vip) / l4)
            got = dips.index(IP(res.outputs[0][1][14:]).dst)
            model_hash = tb.pipeline.cheetah_cookie.crc32c(
                ipaddress.IPv4Address(vip).packed + bytes([proto]) + dport.to_bytes(2, "big")
                + ipaddress.IPv4Address(src).packed + sport.to_bytes(2, "big"))
            for name, lib in self.libs.items():
                h, want = self.smux_pick(lib, src, vip, proto, sport, dport, weights)
                if (h, want) != (model_hash, got):
                    mismatches.append((name, src, vip, proto, sport, dport, weights, got, want))
        self.assertEqual(mismatches[:5], [], f"{len(mismatches)} of {TUPLES} tuples disagree")


if __name__ == "__main__":
    unittest.main()
