#!/usr/bin/env python3
"""Tests of the Cheetah cookie reference model (p4/COOKIE-SPEC.md) and of the
committed vectors.  Independent implementations check the two hashes: the
`siphash24` and `crc32c` packages from PyPI.

    python3 p4/model/test_cheetah_cookie.py
"""
import csv
import json
import os
import random
import sys
import unittest

import crc32c as crc32c_pkg
import siphash24

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cheetah_cookie as cc  # noqa: E402
import gen_cookie_vectors  # noqa: E402
import gen_quic_vectors  # noqa: E402

VECTORS = os.path.join(HERE, "..", "vectors", "cookie_vectors.csv")
QUIC_VECTORS = os.path.join(HERE, "..", "vectors", "quic_cookie_vectors.csv")
HASH_VECTORS = os.path.join(HERE, "..", "vectors", "crc32_5tuple.json")


def load_vectors(path=VECTORS):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def rand_tuple(rng):
    return rng.randbytes(13)


class HashTest(unittest.TestCase):
    def test_siphash24_reference_vector(self):
        # The SipHash paper's example: key 00..0f, message 00..0e.
        self.assertEqual(cc.siphash(bytes(range(16)), bytes(range(15)), 2, 4), 0xA129CA6149BE45E5)

    def test_siphash13_matches_independent_implementation(self):
        rng = random.Random(1)
        for n in range(2000):
            key, data = rng.randbytes(16), rng.randbytes(n % 40)
            want = int.from_bytes(bytes.fromhex(siphash24.siphash13(data, key=key).hexdigest()),
                                  "little")
            self.assertEqual(cc.siphash(key, data), want, (key.hex(), data.hex()))

    def test_crc32c_matches_package_and_check_value(self):
        self.assertEqual(cc.crc32c(b"123456789"), 0xE3069283)
        rng = random.Random(2)
        for n in range(500):
            data = rng.randbytes(n % 64)
            self.assertEqual(cc.crc32c(data), crc32c_pkg.crc32c(data))

    def test_tuple_bytes_are_the_hash_spec_bytes(self):
        with open(HASH_VECTORS) as f:
            vectors = [v for v in json.load(f)["vectors"] if v["proto"] == cc.IPPROTO_TCP]
        self.assertTrue(vectors)
        for v in vectors:
            self.assertEqual(cc.tuple_bytes(v["dstIp"], v["dstPort"], v["srcIp"], v["srcPort"]).hex(),
                             v["bytes"])

    def test_bad_mode_and_key_refused(self):
        with self.assertRaisesRegex(ValueError, "mode"):
            cc.cookie_hash("crc32", bytes(16), bytes(13))
        for text in ("", "00" * 15, "zz" * 16, "00" * 17):
            with self.assertRaisesRegex(ValueError, "key"):
                cc.parse_key(text)


class CookieTest(unittest.TestCase):
    def test_roundtrip_both_modes(self):
        rng = random.Random(3)
        for mode in cc.HASH_MODES:
            for _ in range(2000):
                key, tup, ident = rng.randbytes(16), rand_tuple(rng), rng.randrange(1 << 15)
                cookie = cc.make_cookie(mode, key, tup, ident)
                self.assertEqual(cc.decode_ident(mode, key, tup, cookie), ident)
                tsval = rng.getrandbits(32)
                wire = cc.encode_tsval(tsval, cookie)
                self.assertEqual(cc.cookie_of(wire), cookie)
                self.assertEqual(wire & 0xFFFF, tsval & 0xFFFF)
                self.assertEqual(wire >> 31, (tsval >> 16) & 1)

    def test_other_key_or_tuple_decodes_elsewhere(self):
        rng = random.Random(4)
        same = 0
        for _ in range(2000):
            key, tup = rng.randbytes(16), rand_tuple(rng)
            cookie = cc.make_cookie("siphash13", key, tup, 5)
            same += cc.decode_ident("siphash13", rng.randbytes(16), tup, cookie) == 5
            same += cc.decode_ident("siphash13", key, rand_tuple(rng), cookie) == 5
        self.assertLess(same, 4)   # chance: 4000 / 32768

    def test_idents(self):
        self.assertEqual(cc.split_ident(17), ("server", 17))
        self.assertEqual(cc.split_ident(cc.stateful_ident(3, 1000)), ("stateful", 3, 1000))
        self.assertEqual(cc.stateful_ident(15, 1023), 0x7FFF)
        with self.assertRaises(ValueError):
            cc.stateful_ident(16, 0)
        with self.assertRaises(ValueError):
            cc.make_cookie("siphash13", bytes(16), bytes(13), 1 << 15)

    def test_syn_hint(self):
        ident = cc.stateful_ident(2, 77)
        self.assertEqual(cc.parse_syn_hint(cc.syn_hint(ident)), ident)
        for tsecr in (0, 17, cc.SYN_HINT_MAGIC << 16 | 5, 0xCEE8 << 16 | ident,
                      cc.SYN_HINT_MAGIC << 16 | 0x8000 | ident):
            self.assertIsNone(cc.parse_syn_hint(tsecr), hex(tsecr))
        with self.assertRaises(ValueError):
            cc.syn_hint(5)   # a server id is never hinted


class VersionTest(unittest.TestCase):
    def test_restore_exact_within_window(self):
        rng = random.Random(5)
        for _ in range(20000):
            last = rng.getrandbits(32)
            age = rng.randrange(1 << 17)
            echo = (last - age) & cc.U32
            wire = cc.encode_tsval(echo, rng.randrange(1 << 15))
            self.assertEqual(cc.restore_tsecr(wire, last), echo, (hex(last), age))

    def test_restore_wrong_beyond_window(self):
        # An echo 2**17 ticks old cannot be told from a fresh one: the spec's limit.
        last = 0x00050000
        echo = last - (1 << 17)
        self.assertNotEqual(cc.restore_tsecr(cc.encode_tsval(echo, 9), last), echo)

    def test_wire_tsval_monotonic_for_paws(self):
        """Segments at most 2**16 - 1 ticks apart keep the wire TSval increasing (as
        a peer's PAWS check, s32(new - old) > 0, sees it); a gap of 2**16 or more
        can look like a step back, which the 25 s keep-alive prevents."""
        rng = random.Random(6)
        cookie = 0x1234
        for _ in range(5000):
            a = rng.getrandbits(32)
            gap = rng.randrange(1, 1 << 16)
            b = (a + gap) & cc.U32
            self.assertGreater(cc.s32(cc.encode_tsval(b, cookie) - cc.encode_tsval(a, cookie)), 0,
                               (hex(a), gap))
        a = 0x0003F000
        bad = [g for g in range(1 << 16, 3 << 16, 0x1000)
               if cc.s32(cc.encode_tsval(a + g, cookie) - cc.encode_tsval(a, cookie)) <= 0]
        self.assertTrue(bad, "some gap past 2**16 must break monotonicity")

    def test_version_logic_matters(self):
        """Flipping on the wrong bit (e.g. bit 17) breaks restores near a wrap."""
        last = 0x0002000F
        echo = 0x0001FFF0
        wire = cc.encode_tsval(echo, 3)
        self.assertEqual(cc.restore_tsecr(wire, last), echo)
        wrong_version = (wire & 0x7FFFFFFF) | ((echo >> 17) & 1) << 31
        self.assertNotEqual(cc.restore_tsecr(wrong_version, last), echo)


class CrcAimabilityTest(unittest.TestCase):
    """COOKIE-SPEC.md §5: CRC is linear, so one observed cookie lets a client that does
    not know the key aim any tuple at the same server; SipHash does not allow it."""

    @staticmethod
    def forge(tup1, cookie1, tup2):
        # crc(k|t1) ^ crc(k|t2) = crc(0|t1^t2) ^ crc(0|0) for equal lengths: the key cancels.
        zero = bytes(16)
        delta = bytes(a ^ b for a, b in zip(tup1, tup2))
        return (cookie1 ^ cc.crc32c(zero + delta) ^ cc.crc32c(zero + bytes(13))) & cc.COOKIE_MASK

    def hits(self, mode, rng, tries=2000):
        key = rng.randbytes(16)               # secret: forge() never sees it
        tup1 = cc.tuple_bytes("10.200.0.10", 80, "198.51.100.7", 40000)
        cookie1 = cc.make_cookie(mode, key, tup1, 42)   # what the client saw
        hit = 0
        for _ in range(tries):
            tup2 = cc.tuple_bytes("10.200.0.10", 80, f"203.0.113.{rng.randrange(256)}",
                                  rng.randrange(1024, 65536))
            hit += cc.decode_ident(mode, key, tup2, self.forge(tup1, cookie1, tup2)) == 42
        return hit

    def test_crc_mode_is_aimable(self):
        self.assertEqual(self.hits("crc32c", random.Random(7)), 2000)

    def test_siphash_mode_is_not(self):
        self.assertLess(self.hits("siphash13", random.Random(8)), 5)   # chance: 2000/32768


class QuicTest(unittest.TestCase):
    """§13: connection ids that carry the cookie."""

    def test_roundtrip_both_modes_independent_hashes(self):
        rng = random.Random(5)
        for mode in cc.HASH_MODES:
            for _ in range(300):
                key, nonce = rng.randbytes(16), rng.randbytes(cc.QUIC_NONCE_LEN)
                sid, port = rng.randint(1, cc.SERVER_ID_MAX), rng.randint(0, 65535)
                cid = cc.quic_cid(mode, key, "10.200.0.10", port, sid, nonce)
                self.assertEqual(len(cid), cc.QUIC_CID_LEN)
                self.assertEqual(cid[2:], nonce)
                msg = bytes([10, 200, 0, 10, 17]) + port.to_bytes(2, "big") + nonce
                h = (int.from_bytes(bytes.fromhex(siphash24.siphash13(msg, key=key).hexdigest()), "little")
                     if mode == "siphash13" else crc32c_pkg.crc32c(key + msg))
                self.assertEqual(int.from_bytes(cid[:2], "big"), (sid ^ h) & 0xFFFF)
                self.assertEqual(cc.quic_ident(mode, key, "10.200.0.10", port, cid), sid)

    def test_nonce_changes_the_field(self):
        # Two ids of one server differ in their cookie bytes too: a client cannot tell
        # that two of its connections share a server.
        rng = random.Random(6)
        key = rng.randbytes(16)
        fields = {cc.quic_cid("siphash13", key, "10.200.0.10", 443, 7, rng.randbytes(6))[:2]
                  for _ in range(200)}
        self.assertGreater(len(fields), 190)

    def test_random_ids_rarely_name_a_server(self):
        # A forged 8-byte id decodes to a server of a 16-server pool with probability
        # 16/65536 (an ident must also be below 2**14).
        rng = random.Random(7)
        key, pool = rng.randbytes(16), set(range(1, 17))
        hits = sum(cc.quic_ident("siphash13", key, "10.200.0.10", 443, rng.randbytes(8)) in pool
                   for _ in range(20000))
        self.assertLess(hits, 20)

    def test_initial_hash_and_slot(self):
        self.assertEqual(cc.quic_initial_hash(bytes(16), b"abc"), crc32c_pkg.crc32c(bytes(16) + b"abc"))
        self.assertEqual(cc.quic_initial_slot(0xFFFFFFFF, 3), 2)
        self.assertEqual(cc.quic_initial_slot(0, 3), 0)

    def test_committed_vectors_match_model(self):
        rows = load_vectors(QUIC_VECTORS)
        self.assertGreater(len(rows), 300)
        self.assertEqual(list(rows[0]), gen_quic_vectors.COLUMNS)
        kinds = set()
        for r in rows:
            key, dcid, port = cc.parse_key(r["key"]), bytes.fromhex(r["dcid"]), int(r["vip_port"])
            if len(dcid) == cc.QUIC_CID_LEN:
                self.assertEqual(cc.quic_hash(r["mode"], key, r["vip"], port, dcid), int(r["hash"], 16))
                self.assertEqual(cc.quic_ident(r["mode"], key, r["vip"], port, dcid), int(r["ident"]))
            else:
                self.assertEqual(int(r["ident"]), -1)
            ih = cc.quic_initial_hash(key, dcid)
            self.assertEqual(ih, int(r["initial_hash"], 16))
            self.assertEqual(cc.quic_initial_slot(ih, int(r["weight_total"])), int(r["slot"]))
            kinds.add((r["mode"], "srv" in r["seq"], len(dcid) == cc.QUIC_CID_LEN))
        self.assertEqual(len(kinds), 6)   # both modes: issued ids, client 8-byte ids, other lengths


class VectorFileTest(unittest.TestCase):
    def test_committed_vectors_match_model(self):
        rows = load_vectors()
        self.assertGreater(len(rows), 400)
        self.assertEqual(list(rows[0]), gen_cookie_vectors.COLUMNS)
        last = {}
        for r in rows:
            key = cc.parse_key(r["key"])
            tup = cc.tuple_bytes(r["vip"], int(r["vip_port"]), r["client"], int(r["client_port"]))
            self.assertEqual(cc.cookie_hash(r["mode"], key, tup), int(r["hash"], 16), r["seq"])
            cookie = cc.make_cookie(r["mode"], key, tup, int(r["ident"]))
            self.assertEqual(cookie, int(r["cookie"]))
            tsval = int(r["tsval"], 16)
            self.assertEqual(cc.encode_tsval(tsval, cookie), int(r["wire_tsval"], 16))
            prev = last.get(r["seq"])
            last[r["seq"]] = tsval if prev is None or cc.s32(tsval - prev) > 0 else prev
            self.assertEqual(last[r["seq"]], int(r["last_sent"], 16))
            self.assertEqual(cc.restore_tsecr(int(r["wire_tsecr"], 16), last[r["seq"]]),
                             int(r["tsecr"], 16))

    def test_vectors_cross_two_version_changes(self):
        rows = [r for r in load_vectors() if r["seq"].startswith("wrap-up-")]
        versions = [int(r["wire_tsval"], 16) >> 31 for r in rows]
        flips = sum(a != b for a, b in zip(versions, versions[1:]))
        self.assertGreaterEqual(flips, 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
