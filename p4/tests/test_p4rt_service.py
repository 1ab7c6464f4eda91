#!/usr/bin/env python3
"""hlb-p4switch's P4Runtime service through real gRPC (a unix socket): arbitration
with election ids, primary and backups and their notifications, pipeline config
checked against the P4Info, Write/Read error semantics and atomicity, counters and
registers read back."""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

import grpc

import hlb_testbed as tb

SWITCH_DIR = os.path.join(tb.P4, "switch")
sys.path.insert(0, SWITCH_DIR)
import p4rt_client  # noqa: E402
from p4rt_client import P4RuntimeClient, status_details  # noqa: E402

OK, NOT_FOUND, ALREADY_EXISTS, ABORTED = 0, 5, 6, 10
START_TIMEOUT = 30


class SwitchProcess:
    """hlb_p4switch.py in a subprocess, no packet ports, gRPC on a unix socket."""

    def __init__(self, ports=(), netns=None):
        self.dir = tempfile.mkdtemp(prefix="hlb-p4sw-")
        self.address = f"unix:{self.dir}/p4rt.sock"
        cmd = [sys.executable, os.path.join(SWITCH_DIR, "hlb_p4switch.py"), "--grpc", self.address]
        for n, ifname in ports:
            cmd += ["--port", f"{n}={ifname}"]
        if netns:
            cmd = ["ip", "netns", "exec", netns] + cmd
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("hlb-p4switch did not start: " + self.proc.stderr.read())
        self.ready = json.loads(line)

    def stop(self):
        self.proc.terminate()
        out, err = self.proc.communicate(timeout=START_TIMEOUT)
        self.stderr = err
        for f in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, f))
        os.rmdir(self.dir)
        lines = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
        return lines[-1] if lines else {"stderr": err}


class ServiceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sw = SwitchProcess()

    @classmethod
    def tearDownClass(cls):
        cls.exit = cls.sw.stop()

    def setUp(self):
        # The switch remembers the highest election id it has seen (election_id_past):
        # every test starts above the previous one.
        ServiceTest.base = getattr(ServiceTest, "base", 0) + 1000
        self.clients = []

    def tearDown(self):
        for c in self.clients:
            c.close()

    def client(self, election_id, profile="hlb_hmux"):
        c = P4RuntimeClient(self.sw.address, election_id=self.base + election_id, profile=profile)
        self.clients.append(c)
        return c

    def test_arbitration_primary_backup_and_notifications(self):
        a = self.client(10)
        self.assertEqual(a.open_stream().status.code, OK)
        b = self.client(5)
        self.assertEqual(b.open_stream().status.code, ALREADY_EXISTS)   # backup
        a.set_pipeline()
        with self.assertRaises(grpc.RpcError) as cm:
            b.insert(b.b.table_entry("HlbIngress.routing.routing_v4", {"dst_addr": ("10.0.0.0", 8)},
                                     "HlbIngress.routing.set_next_id", {"next_id": 1}))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        # a duplicate election id is refused on the stream
        dup = self.client(10)
        with self.assertRaises(grpc.RpcError) as cm:
            dup.open_stream()
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        # a higher id takes over: everyone is told
        c = self.client(20)
        self.assertEqual(c.open_stream().status.code, OK)
        self.assertEqual(a.next_arbitration().status.code, ALREADY_EXISTS)
        self.assertEqual(b.next_arbitration().status.code, ALREADY_EXISTS)
        with self.assertRaises(grpc.RpcError) as cm:
            a.set_pipeline()
        self.assertEqual(cm.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        # the primary leaves: no primary until someone reaches the highest id seen
        c.close()
        self.clients.remove(c)
        for x in (a, b):
            upd = x.next_arbitration()
            self.assertEqual((upd.status.code, upd.election_id.low), (NOT_FOUND, self.base + 20))
        a.arbitrate(self.base + 20)
        self.assertEqual(a.next_arbitration().status.code, OK)
        self.assertEqual(b.next_arbitration().status.code, ALREADY_EXISTS)

    def test_a_client_that_goes_away_ends_its_stream_quietly(self):
        sw = SwitchProcess()
        try:
            for i in range(3):
                c = P4RuntimeClient(sw.address, election_id=10 + i, profile="hlb_hmux")
                self.assertEqual(c.open_stream().status.code, OK)
                c.close()                       # the stream is cancelled under the switch's reader
            time.sleep(0.5)
        finally:
            sw.stop()
        self.assertNotIn("Traceback", sw.stderr)

    def test_write_errors_per_update_and_atomicity(self):
        p = self.client(100)
        p.open_stream()
        p.set_pipeline()
        b = p.b
        route = b.table_entry("HlbIngress.routing.routing_v4", {"dst_addr": ("10.1.0.0", 16)},
                              "HlbIngress.routing.set_next_id", {"next_id": 7})
        p.insert(route)
        missing = b.table_entry("HlbIngress.routing.routing_v4", {"dst_addr": ("10.2.0.0", 16)},
                                "HlbIngress.routing.set_next_id", {"next_id": 8})
        fresh = b.table_entry("HlbIngress.routing.routing_v4", {"dst_addr": ("10.3.0.0", 16)},
                              "HlbIngress.routing.set_next_id", {"next_id": 9})
        batch = [b.update("INSERT", fresh), b.update("INSERT", route), b.update("MODIFY", missing),
                 b.update("DELETE", missing)]
        with self.assertRaises(grpc.RpcError) as cm:
            p.write(batch)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNKNOWN)
        self.assertEqual([c for c, _ in status_details(cm.exception)],
                         [OK, ALREADY_EXISTS, NOT_FOUND, NOT_FOUND])
        self.assertEqual(len(p.read(b.table_entry("HlbIngress.routing.routing_v4",
                                                  {"dst_addr": ("10.3.0.0", 16)}))), 1)
        for atomicity in ("ROLLBACK_ON_ERROR", "DATAPLANE_ATOMIC"):
            other = b.table_entry("HlbIngress.routing.routing_v4", {"dst_addr": ("10.4.0.0", 16)},
                                  "HlbIngress.routing.set_next_id", {"next_id": 1})
            with self.assertRaises(grpc.RpcError) as cm:
                p.write([b.update("INSERT", other), b.update("INSERT", route)], atomicity)
            self.assertEqual([c for c, _ in status_details(cm.exception)], [ABORTED, ALREADY_EXISTS])
            self.assertEqual(p.read(b.table_entry("HlbIngress.routing.routing_v4",
                                                  {"dst_addr": ("10.4.0.0", 16)})), [], atomicity)
        # malformed entries name the field
        bad = b.table_entry("HlbIngress.routing.routing_v4", {"dst_addr": ("10.5.0.1", 16)},
                            "HlbIngress.routing.set_next_id", {"next_id": 1})
        with self.assertRaises(grpc.RpcError) as cm:
            p.insert(bad)
        (code, msg), = status_details(cm.exception)
        self.assertEqual(code, 3)
        self.assertIn("dst_addr", msg)
        # a member used by a group cannot go; a group with an unknown member is NOT_FOUND
        p.insert(b.member(tb.DIPS, 1, "HlbIngress.hmux.set_dip", tunnel_dst="10.0.0.9", bucket=0))
        p.insert(b.group(tb.DIPS, 1, [1]))
        with self.assertRaises(grpc.RpcError) as cm:
            p.write([b.update("DELETE", b.member(tb.DIPS, 1, "HlbIngress.hmux.set_dip",
                                                 tunnel_dst="10.0.0.9", bucket=0))])
        self.assertEqual(status_details(cm.exception)[0][0], 9)
        with self.assertRaises(grpc.RpcError) as cm:
            p.insert(b.group(tb.DIPS, 2, [1, 99]))
        self.assertEqual(status_details(cm.exception)[0][0], NOT_FOUND)
        # read back: group members, and the const default action cannot change
        g = p.read(b.group(tb.DIPS, 1, []))[0].action_profile_group
        self.assertEqual([(m.member_id, m.weight) for m in g.members], [(1, 1)])
        with self.assertRaises(grpc.RpcError) as cm:
            p.modify(b.table_entry("HlbIngress.routing.routing_v4", default=True,
                                   action="HlbIngress.routing.drop_no_route"))
        self.assertEqual(status_details(cm.exception)[0][0], 7)

    def test_pipeline_config_is_checked_against_the_p4info(self):
        p = self.client(200)
        p.open_stream()
        info = p4rt_client.p4rt_build.load_p4info("hlb_hmux")
        info.tables[0].match_fields[0].bitwidth += 1
        with self.assertRaises(grpc.RpcError) as cm:
            p.set_pipeline(p4info=info)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        p.set_pipeline("hlb_cheetah_stateful")
        p.modify(p.b.register_entry("HlbIngress.cheetah.conn_stack_tail", 3, 77))
        reg = p.read(p.b.register_entry("HlbIngress.cheetah.conn_stack_tail", 3))[0]
        self.assertEqual(int.from_bytes(reg.register_entry.data.bitstring, "big"), 77)
        self.assertEqual(len(p.read(p.b.register_entry("HlbIngress.cheetah.conn_stack"))), 4096)
        self.assertEqual(p.counter("HlbIngress.drops", 2), (0, 0))


if __name__ == "__main__":
    unittest.main()
