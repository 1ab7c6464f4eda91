#!/usr/bin/env python3
"""Real packets through hlb-p4switch between two network namespaces, programmed by a
P4Runtime client over gRPC: Linux hosts resolve their gateway by ARP (answered by the
pipeline), UDP and ping cross the L3 routes both ways, a TCP connection attempt to a
VIP leaves the switch IP-in-IP encapsulated towards the DIP, and the switch's counters
(read over P4Runtime) account for every packet.  Needs root (namespaces, AF_PACKET)."""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

from scapy.all import IP, TCP, Ether

import hlb_testbed as tb

SWITCH_DIR = os.path.join(tb.P4, "switch")
sys.path.insert(0, SWITCH_DIR)
import netns_lab  # noqa: E402
from p4rt_client import P4RuntimeClient  # noqa: E402

FRAMES = os.path.join(SWITCH_DIR, "frames.py")
VIP = "100.64.0.1"
UDP_DATAGRAMS = 50
STREAM_RATE = 300                 # datagrams/s, a probe's rate in the emulation's migration tests
STREAM_SECONDS = 4
STALL_SECONDS = 1.5               # the kernel's default queue (~270 small frames) holds under 1 s of it


@unittest.skipUnless(os.geteuid() == 0, "needs root for network namespaces")
class PacketTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lab = netns_lab.Lab(f"hlbp4t{os.getpid() % 10000}")
        cls.lab.start_switch()
        cls.client = P4RuntimeClient(cls.lab.address, election_id=1, profile="hlb_hmux")
        assert cls.client.open_stream().status.code == 0
        cls.client.set_pipeline()
        cls.lab.program_fabric(cls.client)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.exit = cls.lab.stop_switch()
        cls.lab.close()

    def route_packets(self, prefix):
        entries = self.client.read_direct_counters(self.client.b.table_entry(
            "HlbIngress.routing.routing_v4", {"dst_addr": (prefix, 24)}))
        self.assertEqual(len(entries), 1)
        return entries[0].table_entry.counter_data.packet_count

    def test_1_udp_and_ping_cross_the_routes(self):
        lab = self.lab
        before = self.route_packets("10.0.2.0"), self.route_packets("10.0.1.0")
        echo = lab.popen("b", sys.executable, "-c", (
            "import socket,sys\n"
            "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.bind(('10.0.2.10',9000))\n"
            "print('ready',flush=True);s.settimeout(10)\n"
            f"for _ in range({UDP_DATAGRAMS}):\n"
            "    d,a=s.recvfrom(2048);s.sendto(d,a)\n"), stdout=subprocess.PIPE, text=True)
        self.assertEqual(echo.stdout.readline().strip(), "ready")
        out = lab.exec("a", sys.executable, "-c", (
            "import socket\n"
            "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.settimeout(2)\n"
            "ok=0\n"
            f"for i in range({UDP_DATAGRAMS}):\n"
            "    s.sendto(b'x%d'%i,('10.0.2.10',9000))\n"
            "    try:\n"
            "        ok+= s.recvfrom(2048)[0]==b'x%d'%i\n"
            "    except OSError: pass\n"
            "print(ok)\n")).stdout
        echo.wait(timeout=15)
        self.assertEqual(int(out), UDP_DATAGRAMS)
        ping = lab.exec("a", "ping", "-c", "3", "-i", "0.2", "-W", "2", "10.0.2.10", check=False)
        self.assertEqual(ping.returncode, 0, ping.stdout)
        self.assertIn("ttl=63", ping.stdout)          # one routed hop, TTL decremented
        after = self.route_packets("10.0.2.0"), self.route_packets("10.0.1.0")
        self.assertGreaterEqual(after[0] - before[0], UDP_DATAGRAMS + 3)
        self.assertGreaterEqual(after[1] - before[1], UDP_DATAGRAMS + 3)

    def test_2_vip_connection_is_encapsulated_to_the_dip(self):
        lab, c = self.lab, self.client
        b = c.b
        c.write([b.update("INSERT", b.member(tb.DIPS, 1, "HlbIngress.hmux.set_dip",
                                             tunnel_dst="10.0.2.10", bucket=5)),
                 b.update("INSERT", b.group(tb.DIPS, 1, [1])),
                 b.update("INSERT", b.table_entry("HlbIngress.hmux.vip_service",
                                                  {"dst_addr": VIP, "protocol": 6, "dst_port": 80},
                                                  "HlbIngress.hmux.set_service",
                                                  {"service_id": 1, "encap": 0})),
                 b.update("INSERT", b.table_entry("HlbIngress.hmux.dip_select", {"service_id": 1},
                                                  group=1))], "DATAPLANE_ATOMIC")
        sniff = lab.popen("b", sys.executable, FRAMES, "sniff", f"{lab.tag}b0", "--count", "1",
                          "--timeout", "10", "--ip-proto", "4", stdout=subprocess.PIPE, text=True)
        self.assertIn("ready", sniff.stdout.readline())
        lab.exec("a", sys.executable, "-c", (
            "import socket\n"
            "s=socket.socket();s.settimeout(1)\n"
            f"try: s.connect(('{VIP}',80))\n"
            "except OSError: pass\n"), check=False)
        line = sniff.stdout.readline()
        sniff.wait(timeout=15)
        self.assertTrue(line, "no encapsulated frame reached the DIP's host")
        frame = Ether(bytes.fromhex(json.loads(line)["frame"]))
        outer, inner = frame[IP], frame[IP].payload
        self.assertEqual((outer.src, outer.dst, outer.proto, outer.ttl, outer.flags.DF),
                         ("172.31.0.1", "10.0.2.10", 4, 64, True))
        self.assertEqual((inner.src, inner.dst, inner[TCP].dport, inner[TCP].flags.S),
                         ("10.0.1.10", VIP, 80, True))
        self.assertEqual(frame.dst, lab.macs["b"])
        self.assertGreaterEqual(c.counter("HlbIngress.hmux_encap.bucket_counter", 5)[0], 1)
        self.assertGreaterEqual(c.counter("HlbIngress.hmux.service_counter", 1)[0], 1)

    def test_3_a_stalled_switch_delays_packets_and_loses_none(self):
        """The model switch's pipeline stops while a P4Runtime Write or Read holds it, and a
        loaded host stops the whole process: what its ports receive meanwhile waits in their
        receive queues, none is dropped (it was: a stall at a migration's Write cut a UDP stream
        for 0.3 s)."""
        lab = self.lab
        n = STREAM_RATE * STREAM_SECONDS
        sink = lab.popen("b", sys.executable, "-c", (
            "import socket\n"
            "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.bind(('10.0.2.10',9001))\n"
            # the switch sends what it queued in one burst: room for all of it here too
            "s.setsockopt(socket.SOL_SOCKET,socket.SO_RCVBUF,1<<22)\n"
            "print('ready',flush=True);s.settimeout(5);got=set()\n"
            "try:\n"
            f"    while len(got)<{n}: got.add(int(s.recv(64)))\n"
            "except OSError: pass\n"
            "print(len(got))\n"), stdout=subprocess.PIPE, text=True)
        self.assertEqual(sink.stdout.readline().strip(), "ready")
        sender = lab.popen("a", sys.executable, "-c", (
            "import socket,time\n"
            "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);t0=time.monotonic()\n"
            f"for i in range({n}):\n"
            f"    time.sleep(max(0,t0+i/{STREAM_RATE}-time.monotonic()))\n"
            "    s.sendto(b'%d'%i,('10.0.2.10',9001))\n"))
        time.sleep(1)
        os.kill(lab.switch.pid, signal.SIGSTOP)
        try:
            time.sleep(STALL_SECONDS)
        finally:
            os.kill(lab.switch.pid, signal.SIGCONT)
        sender.wait(timeout=30)
        out, _ = sink.communicate(timeout=30)
        self.assertEqual(int(out), n, "datagrams lost while the switch was stopped")


if __name__ == "__main__":
    unittest.main()
