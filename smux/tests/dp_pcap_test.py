#!/usr/bin/env python3
"""Packet-in/packet-out fixtures on net_pcap: input frames crafted with scapy, run
through the real hlb-smux process (rx_pcap -> SMux -> tx_pcap), and every output
frame compared field by field with the frame expected from the specification
(crc32: p4/HASH-SPEC.md via the crc32c package; ovs: the OVS replica; RFC 792/1191 for ICMP).

Each case lists its input and either the expected output or None (dropped); the
outputs must appear in order, and the drop reasons the process reports at exit must
match the dropped cases exactly."""
import json
import logging
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import ARP, ICMP, IP, TCP, UDP, Ether, IPv6, Raw, rdpcap, wrpcap  # noqa: E402
from scapy.layers.inet import IPerror  # noqa: E402

import dp_testlib as tl  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "p4",
                                "model"))
import cheetah_cookie as cc  # noqa: E402

V1, V2, V3 = "100.64.0.1", "100.64.0.2", "100.64.0.3"
V1_POOL = [("10.0.1.1", 1, None), ("10.0.1.2", 2, "172.16.0.2"), ("10.0.1.3", 3, None)]
V2_POOL = [("10.0.2.1", 1, None), ("10.0.2.2", 0, None), ("10.0.2.3", 1, None)]
V2_BASIS = 7

TABLE = {
    "version": 1,
    "vips": [
        {"vip": V1, "aggregate": "100.64.0.0/24", "selection": "crc32", "connTable": False,
         "ports": [{"proto": "tcp", "port": 80, "dips": [
             dict({"ip": ip, "weight": w}, **({"hostIp": h} if h else {}))
             for ip, w, h in V1_POOL]}]},
        {"vip": V2, "selection": "ovs", "encap": "gre", "hashBasis": V2_BASIS,
         "ports": [{"proto": "tcp", "port": 0, "dips": [
             {"ip": ip, "weight": w} for ip, w, _ in V2_POOL]}]},
        {"vip": V3, "selection": "crc32", "ports": [{"proto": "udp", "port": 53, "dips": []}]},
    ],
}


def client(i):
    return f"198.51.{(i // 250) % 250}.{i % 250 + 1}"


class Case:
    def __init__(self, name, frame, expect=None, drop=None):
        self.name, self.frame, self.expect, self.drop = name, frame, expect, drop


def tcp_to(vip, i, dport=80, flags="A", payload=b"", df=True):
    return (Ether(src=tl.CLIENT_MAC, dst="02:00:00:00:00:aa") /
            IP(src=client(i), dst=vip, ttl=60, tos=0x10, flags="DF" if df else 0, id=i) /
            TCP(sport=20000 + i, dport=dport, flags=flags) / Raw(payload))


class PcapFixtures(unittest.TestCase):
    maxDiff = None

    def run_fixture(self, cases, extra_args=(), two_port=False, table=TABLE):
        with tempfile.TemporaryDirectory(prefix="hlbdp-pcap-") as d:
            inp, out0, out1 = (os.path.join(d, n) for n in ("in.pcap", "out0.pcap", "out1.pcap"))
            wrpcap(inp, [bytes(c.frame) for c in cases], linktype=1)   # Ethernet
            tfile = os.path.join(d, "table.json")
            with open(tfile, "w") as f:
                json.dump(table, f)
            vdevs = [f"net_pcap0,rx_pcap={inp},tx_pcap={out0}"]
            if two_port:
                empty = os.path.join(d, "empty.pcap")
                wrpcap(empty, [], linktype=1)
                vdevs.append(f"net_pcap1,rx_pcap={empty},tx_pcap={out1}")
            args = ["--ip", tl.SMUX_IP, "--gateway", tl.GW_IP, "--mgmt", "127.0.0.1:0",
                    "--table", tfile, "--exit-when-idle", "300", "--run-seconds", "30",
                    "--idle-sleep-us", "100"] + list(extra_args)
            if two_port:
                args += ["--mode", "two-port"]
            ready, done, _ = tl.run_smux(f"hlbdppcap{os.getpid()}", vdevs, args)
            outs = [rdpcap(out0)] + ([rdpcap(out1)] if two_port else [])
        return ready, done, outs

    # ---- expected-frame checks ------------------------------------------------------

    def check_encap(self, out, case, outer_dst, smux_mac, gw_mac=tl.GW_MAC, gre=False):
        inner = bytes(case.frame[IP])
        self.assertEqual(out[Ether].dst, gw_mac, case.name)
        self.assertEqual(out[Ether].src, smux_mac, case.name)
        self.assertEqual(out[Ether].type, 0x0800, case.name)
        o = out[IP]
        raw = bytes(o)
        self.assertEqual((o.version, o.ihl), (4, 5), case.name)
        self.assertEqual(o.tos, case.frame[IP].tos, case.name)
        self.assertEqual(o.flags, "DF", case.name)
        self.assertEqual(o.frag, 0, case.name)
        self.assertEqual(o.ttl, 64, case.name)
        self.assertEqual(o.src, tl.SMUX_IP, case.name)
        self.assertEqual(o.dst, outer_dst, case.name)
        self.assertTrue(tl.ip_checksum_ok(raw[:20]), case.name)
        if gre:
            self.assertEqual(o.proto, 47, case.name)
            self.assertEqual(o.len, 20 + 4 + len(inner), case.name)
            self.assertEqual(raw[20:24], b"\x00\x00\x08\x00", case.name)
            self.assertEqual(raw[24:], inner, case.name)
        else:
            self.assertEqual(o.proto, 4, case.name)
            self.assertEqual(o.len, 20 + len(inner), case.name)
            self.assertEqual(raw[20:], inner, case.name)
        self.assertEqual(len(bytes(out)), 14 + o.len, case.name)

    def expected_v1(self, i):
        k = tl.crc32_pick(client(i), V1, 6, 20000 + i, 80, [w for _, w, _ in V1_POOL])
        ip, _, host = V1_POOL[k]
        return host or ip

    def expected_v2(self, i, dport):
        k = tl.ovs_pick(client(i), V2, 6, 20000 + i, dport, [w for _, w, _ in V2_POOL],
                        basis=V2_BASIS)
        return V2_POOL[k][0]

    # ---- the fixtures ------------------------------------------------------------------

    def test_one_arm_fixture(self):
        cases = []
        for i in range(300):                                  # crc32 + IP-in-IP, weights
            cases.append(Case(f"v1-flow{i}", tcp_to(V1, i, flags="S" if i % 2 else "A"),
                              expect=("v1", i)))
        for i in range(200):                                  # ovs + GRE, weight 0
            dport = 8000 + i % 5
            cases.append(Case(f"v2-flow{i}", tcp_to(V2, i, dport=dport), expect=("v2", i, dport)))
        cases.append(Case("arp-for-us", Ether(src=tl.CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") /
                          ARP(op=1, hwsrc=tl.CLIENT_MAC, psrc="192.0.2.77", pdst=tl.SMUX_IP),
                          expect=("arp",)))
        cases.append(Case("arp-not-for-us", Ether(src=tl.CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") /
                          ARP(op=1, hwsrc=tl.CLIENT_MAC, psrc="192.0.2.77", pdst="192.0.2.99"),
                          drop="arp_not_for_us"))
        cases.append(Case("over-mtu-ipip", tcp_to(V1, 7, payload=b"x" * 1441),
                          expect=("frag", 1480), drop="frag_needed"))
        cases.append(Case("fits-mtu-ipip", tcp_to(V1, 8, payload=b"x" * 1440), expect=("v1", 8)))
        cases.append(Case("over-mtu-gre", tcp_to(V2, 9, dport=443, payload=b"y" * 1437),
                          expect=("frag", 1476), drop="frag_needed"))
        cases.append(Case("ping-smux", Ether(src=tl.CLIENT_MAC) /
                          IP(src=client(3), dst=tl.SMUX_IP) / ICMP(id=7, seq=1) / Raw(b"ping"),
                          expect=("echo",)))
        # malformed, truncated, non-IP: dropped and counted, never forwarded
        good = bytes(tcp_to(V1, 11))
        cases.append(Case("runt", Raw(good[:10]), drop="truncated"))
        cases.append(Case("cut-ip-header", Raw(good[:30]), drop="truncated"))
        cases.append(Case("cut-payload", Raw(bytes(tcp_to(V1, 12, payload=b"z" * 40))[:70]),
                          drop="truncated"))
        bad_csum = bytearray(good)
        bad_csum[24] ^= 0xFF
        cases.append(Case("bad-ip-checksum", Raw(bytes(bad_csum)), drop="bad_ip_header"))
        bad_ver = bytearray(good)
        bad_ver[14] = 0x55
        cases.append(Case("bad-ip-version", Raw(bytes(bad_ver)), drop="bad_ip_header"))
        cases.append(Case("ipv6", Ether(src=tl.CLIENT_MAC) / IPv6(dst="2001:db8::1") / UDP(),
                          drop="not_ipv4"))
        cases.append(Case("lldp", Ether(src=tl.CLIENT_MAC, dst="01:80:c2:00:00:0e", type=0x88cc) /
                          Raw(b"\x02\x07\x04" + b"\x00" * 40), drop="not_ipv4"))
        cases.append(Case("fragment", Ether(src=tl.CLIENT_MAC) /
                          IP(src=client(13), dst=V1, flags="MF") / TCP(dport=80) / Raw(b"f" * 32),
                          drop="ip_fragment"))
        cases.append(Case("unknown-vip", tcp_to("100.64.0.99", 14), drop="no_vip"))
        cases.append(Case("unknown-port", tcp_to(V1, 15, dport=81), drop="no_vip"))
        cases.append(Case("empty-pool", Ether(src=tl.CLIENT_MAC) /
                          IP(src=client(16), dst=V3) / UDP(sport=5000, dport=53) / Raw(b"q"),
                          drop="no_backend"))
        cases.append(Case("udp-to-smux", Ether(src=tl.CLIENT_MAC) /
                          IP(src=client(17), dst=tl.SMUX_IP) / UDP(dport=9) / Raw(b"u"),
                          drop="to_self"))
        cases.append(Case("last-good", tcp_to(V1, 299), expect=("v1", 299)))

        ready, done, (out,) = self.run_fixture(cases, ["--gateway-mac", tl.GW_MAC])
        smux_mac = ready["macs"][0]
        expected = [c for c in cases if c.expect]
        self.assertEqual(len(out), len(expected),
                         f"{len(out)} frames out, {len(expected)} expected")
        v2_hits = {}
        for c, o in zip(expected, out):
            kind = c.expect[0]
            if kind == "v1":
                self.check_encap(o, c, self.expected_v1(c.expect[1]), smux_mac)
            elif kind == "v2":
                dip = self.expected_v2(c.expect[1], c.expect[2])
                self.check_encap(o, c, dip, smux_mac, gre=True)
                v2_hits[dip] = v2_hits.get(dip, 0) + 1
            elif kind == "arp":
                self.assertEqual(o[ARP].op, 2)
                self.assertEqual((o[ARP].psrc, o[ARP].hwsrc), (tl.SMUX_IP, smux_mac))
                self.assertEqual((o[ARP].pdst, o[ARP].hwdst), ("192.0.2.77", tl.CLIENT_MAC))
                self.assertEqual((o[Ether].dst, o[Ether].src), (tl.CLIENT_MAC, smux_mac))
            elif kind == "frag":
                self.assertEqual(o[Ether].dst, tl.CLIENT_MAC, c.name)
                self.assertEqual((o[IP].src, o[IP].dst), (tl.SMUX_IP, c.frame[IP].src), c.name)
                self.assertTrue(tl.ip_checksum_ok(bytes(o[IP])[:20]), c.name)
                self.assertEqual((o[ICMP].type, o[ICMP].code), (3, 4), c.name)
                self.assertEqual(o[ICMP].nexthopmtu, c.expect[1], c.name)
                quoted = bytes(o[ICMP].payload)
                self.assertEqual(quoted, bytes(c.frame[IP])[:28], c.name)
                self.assertIsInstance(o[ICMP].payload, IPerror)
            elif kind == "echo":
                self.assertEqual((o[ICMP].type, o[ICMP].id, o[ICMP].seq), (0, 7, 1))
                self.assertEqual((o[IP].src, o[IP].dst), (tl.SMUX_IP, c.frame[IP].src))
                self.assertEqual(bytes(o[Raw]), b"ping")
        self.assertNotIn("10.0.2.2", v2_hits)                # weight 0: never chosen
        self.assertEqual(set(v2_hits), {"10.0.2.1", "10.0.2.3"})

        want_drops = {}
        for c in cases:
            if c.drop:
                want_drops[c.drop] = want_drops.get(c.drop, 0) + 1
        self.assertEqual(done["dropReasons"], want_drops)
        self.assertEqual(done["rx"], len(cases))

    def test_gateway_resolved_by_arp(self):
        gw_mac = "02:47:57:00:00:99"
        cases = [Case("before-gw", tcp_to(V1, 1), drop="no_gateway"),
                 Case("gw-reply", Ether(src=gw_mac, dst="ff:ff:ff:ff:ff:ff") /
                      ARP(op=2, hwsrc=gw_mac, psrc=tl.GW_IP, pdst=tl.SMUX_IP))]
        cases += [Case(f"after-gw{i}", tcp_to(V1, i), expect=("v1", i)) for i in range(2, 12)]
        ready, done, (out,) = self.run_fixture(cases)
        smux_mac = ready["macs"][0]
        requests = [o for o in out if ARP in o and o[ARP].op == 1]
        data = [o for o in out if IP in o]
        self.assertGreaterEqual(len(requests), 1)
        r = requests[0]
        self.assertEqual((r[Ether].dst, r[ARP].pdst, r[ARP].psrc, r[ARP].hwsrc),
                         ("ff:ff:ff:ff:ff:ff", tl.GW_IP, tl.SMUX_IP, smux_mac))
        expected = [c for c in cases if c.expect]
        self.assertEqual(len(data), len(expected))
        for c, o in zip(expected, data):
            self.check_encap(o, c, self.expected_v1(c.expect[1]), smux_mac, gw_mac=gw_mac)
        self.assertEqual(done["dropReasons"], {"no_gateway": 1})

    def test_two_port_mode(self):
        cases = [Case(f"flow{i}", tcp_to(V1, i), expect=("v1", i)) for i in range(20)]
        cases.append(Case("arp", Ether(src=tl.CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") /
                          ARP(op=1, hwsrc=tl.CLIENT_MAC, psrc="192.0.2.77", pdst=tl.SMUX_IP)))
        ready, done, (out0, out1) = self.run_fixture(cases, ["--gateway-mac", tl.GW_MAC],
                                                     two_port=True)
        self.assertEqual(len(out1), 20)                      # encapsulated: egress port
        for c, o in zip(cases, out1):
            self.check_encap(o, c, self.expected_v1(c.expect[1]), ready["macs"][1])
        self.assertEqual(len(out0), 1)                       # the ARP reply: ingress port
        self.assertEqual(out0[0][ARP].op, 2)


CK_VIP, CK_KEY = "100.64.0.7", bytes.fromhex("5a5b5c5d5e5f60616263646566676869")
# The pool the connections opened under (hash), and the SMux's pool now: 10.0.7.4
# removed, 10.0.7.5 added, the order shuffled, 10.0.7.2 drained (weight 0).
CK_POOL_A = [("10.0.7.1", 1, 11), ("10.0.7.2", 1, 12), ("10.0.7.3", 1, 13), ("10.0.7.4", 1, 14)]
CK_POOL_B = [("10.0.7.5", 1, 15), ("10.0.7.3", 1, 13), ("10.0.7.2", 0, 12), ("10.0.7.1", 1, 11)]


def ck_table(mechanism):
    return {"version": 1, "vips": [
        {"vip": CK_VIP, "selection": "crc32", "connTable": False, "affinity": "cheetah",
         "cookieKey": CK_KEY.hex(), "cookieHash": "siphash13", "mechanism": mechanism,
         "ports": [{"proto": "tcp", "port": 80, "dips": [
             {"ip": ip, "weight": w, "serverId": sid} for ip, w, sid in CK_POOL_B]}]}]}


def ck_segment(i, server_id=None, tsecr=None, flags="A", options=None, tsval=1000):
    """Client i's segment to the cheetah VIP echoing server_id's cookie (as the host
    agent wrote it into a TSval the model encodes), or the raw tsecr given."""
    if server_id is not None:
        tup = cc.tuple_bytes(CK_VIP, 80, client(i), 20000 + i)
        cookie = cc.make_cookie("siphash13", CK_KEY, tup, server_id)
        tsecr = cc.encode_tsval(70000 * i + 65530, cookie)     # both version-bit values
    opts = options(tsval, tsecr) if options else [("NOP", None), ("NOP", None),
                                                   ("Timestamp", (tsval, tsecr))]
    return (Ether(src=tl.CLIENT_MAC, dst="02:00:00:00:00:aa") /
            IP(src=client(i), dst=CK_VIP, flags="DF", id=i) /
            TCP(sport=20000 + i, dport=80, flags=flags, options=opts) / Raw(b"c" * (i % 7)))


class CheetahPcapFixture(unittest.TestCase):
    """Cheetah cookies through the real hlb-smux: connections keep their server across
    a pool change that moves many of them under hashing, forged and random cookies
    are dropped exactly when the model says they name no server of the pool, a client
    without timestamps is hashed, option layouts are read, and SYNs go round robin."""
    run_fixture = PcapFixtures.run_fixture
    check_encap = PcapFixtures.check_encap

    def test_cheetah_fixture(self):
        ids_b = {sid: ip for ip, _, sid in CK_POOL_B}
        cases, moved = [], 0
        for i in range(120):                 # opened under pool A by hash: that server's id
            k = tl.crc32_pick(client(i), CK_VIP, 6, 20000 + i, 80, [w for _, w, _ in CK_POOL_A])
            sid = CK_POOL_A[k][2]
            kb = tl.crc32_pick(client(i), CK_VIP, 6, 20000 + i, 80, [w for _, w, _ in CK_POOL_B])
            moved += sid != 14 and CK_POOL_B[kb][2] != sid
            cases.append(Case(f"conn{i}-server{sid}", ck_segment(i, sid),
                              expect=("dip", ids_b[sid]) if sid in ids_b else None,
                              drop=None if sid in ids_b else "bad_cookie"))
        self.assertGreater(moved, 30)        # what hashing alone would break
        self.assertGreater(sum(c.drop == "bad_cookie" for c in cases), 10)
        forged_hits = 0
        for i in range(200, 400):            # forged and random echoes: the model decides
            tsecr = (i * 2654435761) & 0xFFFFFFFF
            tup = cc.tuple_bytes(CK_VIP, 80, client(i), 20000 + i)
            ident = cc.decode_ident("siphash13", CK_KEY, tup, cc.cookie_of(tsecr))
            hit = ident in ids_b
            forged_hits += hit
            cases.append(Case(f"forged{i}", ck_segment(i, tsecr=tsecr),
                              expect=("dip", ids_b[ident]) if hit else None,
                              drop=None if hit else "bad_cookie"))
        for i in range(400, 410):            # no timestamps (a Windows client): hashed
            kb = tl.crc32_pick(client(i), CK_VIP, 6, 20000 + i, 80, [w for _, w, _ in CK_POOL_B])
            for flags in ("S", "A"):
                cases.append(Case(f"no-ts{i}{flags}", ck_segment(i, flags=flags, options=lambda v, e: []),
                                  expect=("dip", CK_POOL_B[kb][0])))
        layouts = [                          # the timestamp elsewhere than NOP NOP TS
            lambda v, e: [("SAck", (1000, 2000, 3000, 4000)), ("NOP", None), ("NOP", None),
                          ("Timestamp", (v, e))],
            lambda v, e: [("Timestamp", (v, e)), ("NOP", None), ("NOP", None),
                          ("SAck", (1, 2))],
            lambda v, e: [("MSS", 1400), ("NOP", None), ("WScale", 7), ("Timestamp", (v, e))],
            lambda v, e: [("Timestamp", (v, e))],
        ]
        for n, lay in enumerate(layouts):
            i = 420 + n
            cases.append(Case(f"layout{n}", ck_segment(i, 13, options=lay), expect=("dip", "10.0.7.3")))
        ready, done, (out,) = self.run_fixture(cases, ["--gateway-mac", tl.GW_MAC],
                                               table=ck_table("hash"))
        smux_mac = ready["macs"][0]
        expected = [c for c in cases if c.expect]
        self.assertEqual(len(out), len(expected))
        for c, o in zip(expected, out):
            self.check_encap(o, c, c.expect[1], smux_mac)
        n_bad = sum(c.drop == "bad_cookie" for c in cases)
        self.assertEqual(done["dropReasons"], {"bad_cookie": n_bad})
        self.assertEqual(done["cookie"]["invalid"], n_bad)
        self.assertEqual(done["cookie"]["fallback"], 20)
        self.assertEqual(done["cookie"]["decoded"], len(expected) - 20)
        gone = sum(c.name.startswith("conn") and c.drop is not None for c in cases)
        print(f"\ncheetah fixture: {120 - gone} connections kept their server through the pool "
              f"change (hash would move {moved}), the removed server's {gone} dropped; "
              f"{forged_hits} of 200 forged echoes hit a server of the pool", file=sys.stderr)

    def test_cheetah_syns_round_robin(self):
        # SYNs with a timestamp option: the live DIPs in turn (the drained one skipped),
        # a retransmitted SYN (conn 0 again) placed afresh: it may land elsewhere.
        cases = [Case(f"syn{i}", ck_segment(i % 5, tsecr=0, flags="S")) for i in range(9)]
        live = [ip for ip, w, _ in CK_POOL_B if w]
        for n, c in enumerate(cases):
            c.expect = ("dip", live[n % len(live)])
        ready, done, (out,) = self.run_fixture(cases, ["--gateway-mac", tl.GW_MAC],
                                               table=ck_table("rr"))
        self.assertEqual(len(out), 9)
        for c, o in zip(cases, out):
            self.check_encap(o, c, c.expect[1], ready["macs"][0])
        self.assertNotEqual(out[0][IP].dst, out[5][IP].dst)   # conn 0's SYN, then its retransmission
        self.assertEqual(done["cookie"]["syn_rr"], 9)


if __name__ == "__main__":
    unittest.main(verbosity=2)
