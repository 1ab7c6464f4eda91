#!/usr/bin/env python3
"""An SMux holding two owner ids of a cheetah-stateful VIP (its address at positions 0
and 2 of statefulOwners; p4/COOKIE-SPEC.md §7), as a real hlb-smux on net_af_packet,
driven over HTTP and fed real frames (dp_api_test.py's namespace, veth and SMux, with
one worker and with two): its SYNs take id 0's indexes; POST /cheetah/adopt gives a
connection back under id 2 at the same (partition, index) as an id-0 connection, and
the echoes of both reach their own servers; an adoption naming id 1 (another SMux's)
is 400 naming the ids held; /stats and /metrics show the entries per id; a close
report for id 2 frees id 2's entry only; a table without id 2, then with it again,
leaves no stale entry refusing the adoption.  A table whose cheetah-stateful VIPs have
different statefulOwners is refused (400 naming the field and the VIP), nothing changed.

Run as root. Creates namespace hlbdpapi<id> and removes it at the end."""
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scapy.all import IP, TCP, Ether  # noqa: E402

import dp_api_test as api  # noqa: E402
import dp_testlib as tl  # noqa: E402

sys.path.insert(0, os.path.join(tl.SMUX_DIR, "..", "p4", "model"))
import cheetah_cookie as cc  # noqa: E402

KEY = "00112233445566778899aabbccddeeff"
OTHER = "192.0.2.99"
DIPS = ["10.0.8.1", "10.0.8.2"]
CLIENT = "198.51.9.1"


def sf_doc(version, owners):
    return {"version": version, "vips": [
        {"vip": api.V1, "aggregate": "100.64.0.0/24", "selection": "crc32",
         "affinity": "cheetah-stateful", "cookieKey": KEY, "mechanism": "rr",
         "statefulOwners": owners,
         "ports": [{"proto": "tcp", "port": 80, "dips": [
             {"ip": d, "serverId": k + 1} for k, d in enumerate(DIPS)]}]}]}


def frame(sport, flags, tsecr):
    return (Ether(src=tl.CLIENT_MAC, dst="02:00:00:00:00:aa") / IP(src=CLIENT, dst=api.V1) /
            TCP(sport=sport, dport=80, flags=flags,
                options=[("NOP", None), ("NOP", None), ("Timestamp", (5000, tsecr))]))


def h_of(sport):
    """The connection's H (COOKIE-SPEC §5)."""
    return cc.cookie_hash("siphash13", cc.parse_key(KEY), cc.tuple_bytes(api.V1, 80, CLIENT, sport))


def echo(sport, idnt):
    """The client's echo of ident's cookie (COOKIE-SPEC §2)."""
    cookie = cc.make_cookie("siphash13", cc.parse_key(KEY), cc.tuple_bytes(api.V1, 80, CLIENT, sport),
                            idnt)
    return frame(sport, "A", cc.encode_tsval(77, cookie))


def part(sport, partitions=64):
    """Its partition (COOKIE-SPEC §7; the SMux's default --stateful-partitions)."""
    return (h_of(sport) >> 32) & (partitions - 1)


def adoption(sport, idnt, server):
    return {"vip": api.V1, "port": 80, "client": CLIENT, "clientPort": sport, "ident": idnt,
            "serverId": server}


def stateful():
    return json.loads(api.http("GET", "/stats")[1])["cookie"]["stateful"]


class SfOwners(unittest.TestCase):
    WORKERS = 1
    DISTRIBUTION = "none"
    version = 500
    setUpClass = classmethod(api.ControlApi.setUpClass.__func__)
    tearDownClass = classmethod(api.ControlApi.tearDownClass.__func__)

    def put(self, owners):
        SfOwners.version += 1
        status, body = api.http("PUT", "/table", sf_doc(SfOwners.version, owners))
        self.assertEqual(status, 200, body)

    def send(self, frames):
        for f in frames:
            api.WIRE.send(f)
        return api.WIRE.collect(len(frames), 5.0)

    def adopt(self, entries):
        status, body = api.http("POST", "/cheetah/adopt", {"adopt": entries})
        return status, json.loads(body)

    def owners(self):
        return {o["id"]: (o["held"], o["entries"]) for o in stateful()["owners"]}

    def test_two_owner_ids(self):
        api.WIRE.drain()
        self.put([tl.SMUX_IP, OTHER, tl.SMUX_IP])
        out = self.send([frame(41000, "S", 0)])                 # connection A: a SYN
        self.assertEqual(len(out), 1)
        hint = dict(IP(out[0][34:])[TCP].options)["Timestamp"][1]
        self.assertEqual(hint >> 16, 0xCEE7)
        ident_a, dip_a = hint & 0xFFFF, api.outer_dst(out[0])
        self.assertEqual(ident_a >> 10, 0x10 | 0)               # SYNs: id 0, the lowest
        # Connection B under id 2 at A's (partition, index), on the other server.
        b = next(p for p in range(42000, 50000) if part(p) == part(41000))
        server_b = 2 if dip_a == DIPS[0] else 1
        ident_b = cc.stateful_ident(2, ident_a & 0x3FF)
        status, body = self.adopt([adoption(b, ident_b, server_b)])
        self.assertEqual((status, body["adopted"], body["taken"]), (200, 1, []), body)
        self.assertEqual(self.owners(), {0: (True, 1), 2: (True, self.WORKERS)})
        out = self.send([echo(41000, ident_a), echo(b, ident_b)])
        self.assertEqual(len(out), 2)
        got = {int.from_bytes(f[54:56], "big"): api.outer_dst(f) for f in out}
        self.assertEqual(got, {41000: dip_a, b: DIPS[server_b - 1]})
        m = api.metrics()
        self.assertEqual(m['hlb_smux_cookie_stateful_owner_entries{owner="2"}'], self.WORKERS)
        self.assertEqual(m['hlb_smux_cookie_stateful_owner_held{owner="2"}'], 1)
        # Id 1 is another SMux's: refused, naming what this SMux holds.
        status, body = self.adopt([adoption(b, cc.stateful_ident(1, 5), 1)])
        self.assertEqual((status, body["field"]), (400, "adopt[0].ident"))
        self.assertIn("names owner 1; this SMux holds owner ids 0, 2", body["reason"])
        # B's close (id 2) frees id 2's entries only.
        status, body = api.http("POST", "/cheetah/closed", {"closed": [
            {"vip": api.V1, "port": 80, "client": CLIENT, "clientPort": b, "ident": ident_b}]})
        self.assertEqual(status, 200, body)
        deadline = time.time() + 5
        while self.owners()[2][1] and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.owners(), {0: (True, 1), 2: (True, 0)})
        # Id 2 adopted again, given away (its entries idle out; still listed), back:
        # cleared, so another connection's adoption at that index is not refused.
        status, body = self.adopt([adoption(b, ident_b, server_b)])
        self.assertEqual((status, body["adopted"]), (200, 1), body)
        self.put([tl.SMUX_IP, OTHER])
        self.assertEqual(self.owners(), {0: (True, 1), 2: (False, self.WORKERS)})
        status, body = self.adopt([adoption(b, ident_b, server_b)])
        self.assertEqual(status, 400, body)
        self.put([tl.SMUX_IP, OTHER, tl.SMUX_IP])
        c = next(p for p in range(b + 1, 60000) if part(p) == part(b))
        status, body = self.adopt([adoption(c, ident_b, 1)])
        self.assertEqual((status, body["adopted"], body["taken"]), (200, 1, []), body)
        out = self.send([echo(c, ident_b), echo(41000, ident_a)])
        got = {int.from_bytes(f[54:56], "big"): api.outer_dst(f) for f in out}
        self.assertEqual(got, {c: DIPS[0], 41000: dip_a})
        self.assertGreaterEqual(stateful()["cleared"], self.WORKERS)

    def test_owner_lists_differ(self):
        """Owner ids are SMux-wide: two cheetah-stateful VIPs with different
        statefulOwners are refused, naming the field and the VIP; nothing changes."""
        self.put([tl.SMUX_IP, OTHER])
        running = api.http("GET", "/table")[1]
        doc = sf_doc(SfOwners.version + 1, [tl.SMUX_IP, OTHER])
        second = json.loads(json.dumps(doc["vips"][0]))
        second.update(vip="100.64.0.2", statefulOwners=[OTHER, tl.SMUX_IP])
        doc["vips"].append(second)
        status, body = api.http("PUT", "/table", doc)
        self.assertEqual(status, 400, body)
        err = json.loads(body)
        self.assertEqual(err["field"], "vips[1].statefulOwners")
        self.assertIn("VIP 100.64.0.2: must be the list of vips[0] (VIP %s)" % api.V1,
                      err["reason"])
        self.assertEqual(api.http("GET", "/table")[1], running)
        second["statefulOwners"] = [tl.SMUX_IP, OTHER]         # the same list: taken
        status, body = api.http("PUT", "/table", doc)
        self.assertEqual(status, 200, body)
        SfOwners.version += 1


class SfOwnersTwoWorkers(SfOwners):
    WORKERS = 2
    DISTRIBUTION = "queues"


if __name__ == "__main__":
    sys.exit(api.main(__file__))
