#!/usr/bin/env python3
"""Command-line tests of hlb-smux on net_ring: every numeric option is range-checked
(full string, no wrap), errors name the option and its value and exit 2, --help goes
to stdout with exit 0, the initial --table may have version 0, and an idle SMux with
a long --idle-sleep-us really sleeps.

Run as root (DPDK EAL without hugepages)."""
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dp_testlib as tl  # noqa: E402

PREFIX = f"hlbdpopt{os.getpid()}"
BASE = ["--ip", tl.SMUX_IP, "--gateway-mac", tl.GW_MAC, "--mgmt", "127.0.0.1:0"]


def run(args, base=BASE, timeout=30, lcores=None, vdevs=("net_ring0",)):
    """Runs hlb-smux to completion: (returncode, stdout, stderr).  A hang fails."""
    cmd = [tl.SMUX_BIN] + tl.eal_args(PREFIX, list(vdevs), core=lcores) + ["--"] + base + args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    finally:
        tl.cleanup_prefix(PREFIX)
    return p.returncode, p.stdout, p.stderr


def events(stdout):
    return {e["event"]: e for e in (json.loads(l) for l in stdout.splitlines()
                                    if l.startswith("{"))}


class Options(unittest.TestCase):
    def assert_rejected(self, opt, value, reason=None):
        for form in ([f"--{opt}", value], [f"--{opt}={value}"]):
            rc, out, err = run(form + ["--run-seconds", "0.2"], timeout=20)
            self.assertEqual(rc, 2, f"{form}: rc={rc}\n{err}")
            self.assertIn(f"invalid value for --{opt}: {value} (", err, form)
            if reason:
                self.assertIn(reason, err, form)
            self.assertNotIn("ready", out, form)

    def test_numeric_values_checked(self):
        cases = [
            ("conn-capacity", "-1"), ("conn-capacity", "18446744073709551615"),
            ("conn-capacity", "2147483649"), ("conn-capacity", "10abc"),
            ("conn-capacity", "0"),
            ("run-seconds", "abc"), ("run-seconds", "-1"), ("run-seconds", "nan"),
            ("run-seconds", "1e10"),
            ("mtu", "70000"), ("mtu", "-1"), ("mtu", "1500abc"), ("mtu", "100"),
            ("mtu", "65536"), ("mtu", ""),
            ("ttl", "300"), ("ttl", "-1"), ("ttl", "0"),
            ("bench-flows", "abc"), ("bench-prefill", "-3"),
            ("idle-sleep-us", "abc"), ("idle-sleep-us", "100001"),
            ("idle-sleep-us", "4294967296"),
            ("tcp-timeout", "abc"), ("tcp-timeout", "-5"), ("tcp-syn-timeout", "inf"),
            ("tcp-fin-timeout", "0"), ("udp-timeout", "1e12"),
            ("exit-when-idle", "abc"), ("exit-when-idle", "-1"),
            ("stateful-partitions", "0"), ("stateful-partitions", "3"),
            ("stateful-partitions", "131072"), ("stateful-idle", "0"),
            ("stateful-adopt-grace", "601"), ("stateful-adopt-grace", "-1"),
            ("stateful-adopt-grace", "x"),
        ]
        for opt, value in cases:
            with self.subTest(opt=opt, value=value):
                self.assert_rejected(opt, value)
        self.assert_rejected("mtu", "70000", "576..65535")
        self.assert_rejected("conn-capacity", "-1", "1..2147483648")
        self.assert_rejected("stateful-partitions", "48", "must be a power of two")

    def test_other_values_checked(self):
        for opt, value in [("gateway-mac", "1ff:2:3:4:5:6:7"), ("gateway-mac", "1:2:3:4:5:6junk"),
                           ("gateway-mac", "1:2:3:4:5:6"), ("gateway-mac", "ff:ff:ff:ff:ff:ff"),
                           ("gateway-mac", "01:00:5e:00:00:01"), ("mgmt", "127.0.0.1:"),
                           ("mgmt", ":9180"), ("mgmt", "127.0.0.1:+80"), ("bench-vip", "1.2.3.4:"),
                           ("ip", "0.0.0.0"), ("ip", "1.2.3"), ("gateway", "0.0.0.0"),
                           ("mode", "three-port"), ("conn-table", "maybe"),
                           ("rx-distribution", "rss")]:
            with self.subTest(opt=opt, value=value):
                self.assert_rejected(opt, value)

    def test_good_values_accepted(self):
        rc, out, err = run(["--mtu", "9000", "--ttl=255", "--conn-capacity", "1000",
                            "--tcp-timeout", "0.5", "--udp-timeout", "86400",
                            "--idle-sleep-us", "100000", "--exit-when-idle", "0",
                            "--bench-prefill", "0", "--run-seconds", "0.3"])
        self.assertEqual(rc, 0, err)
        self.assertIn("exit", events(out))

    def test_messages(self):
        rc, _, err = run(["--mtu", "100"])
        self.assertIn("invalid value for --mtu: 100 (must be an integer 576..65535)", err)
        rc, _, err = run([], base=["--gateway-mac", tl.GW_MAC])
        self.assertEqual(rc, 2)
        self.assertIn("--ip is required", err)
        rc, _, err = run(["--bench-new-flows"])
        self.assertEqual(rc, 2)
        self.assertIn("--bench-new-flows needs --bench-vip", err)
        rc, _, err = run(["--bench-flows", "10"])
        self.assertIn("--bench-flows needs --bench-vip", err)
        rc, _, err = run(["stray"])
        self.assertEqual(rc, 2)
        self.assertIn("unexpected argument: stray", err)
        rc, _, err = run(["--no-such-option"])
        self.assertEqual(rc, 2)

    def test_help_exits_0_on_stdout(self):
        for flag in ("--help", "-h"):
            rc, out, err = run([flag], base=[])
            self.assertEqual(rc, 0, err)
            self.assertIn("usage: hlb-smux", out)
            self.assertIn("--conn-capacity", out)

    def test_table_file_errors_name_the_cause(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out, err = run(["--table", d])
            self.assertEqual(rc, 1)
            self.assertIn("Is a directory", err)
            rc, out, err = run(["--table", os.path.join(d, "missing.json")])
            self.assertEqual(rc, 1)
            self.assertIn("No such file or directory", err)

    def test_initial_table_version_0(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump({"version": 0, "vips": [{"vip": "100.64.0.1", "ports": [
                {"proto": "tcp", "port": 80, "dips": [{"ip": "10.0.1.1", "weight": 1}]}]}]}, f)
            f.flush()
            rc, out, err = run(["--table", f.name, "--run-seconds", "0.2"])
            self.assertEqual(rc, 0, err)
            self.assertIn("ready", events(out))

    def test_no_gateway_warns(self):
        rc, out, err = run(["--run-seconds", "0.2"], base=["--ip", tl.SMUX_IP, "--mgmt",
                                                             "127.0.0.1:0"])
        self.assertEqual(rc, 0, err)
        self.assertIn("neither --gateway nor --gateway-mac given", err)

    def test_bench_generator_flows_all_forwarded(self):
        # The benchmark modes' flows (--bench-flows) are valid segments: every frame the
        # generator feeds is forwarded.  The stateful mode's cookies name the entries the
        # generator makes before the worker starts; a table's start-up clear of its owner
        # id applied after them (at the worker's first drain) made every frame a miss.
        import dp_bench
        for key in ("crc32", "cheetah", "cheetahsf"):
            mode = next(m for m in dp_bench.MODES if m["key"] == key)
            r = dp_bench.run_smux(mode, 0.5, 0)
            self.assertGreater(r["pkts"], 0, key)
            self.assertEqual(r["fwd"], r["pkts"], key)

    def test_long_idle_sleep_does_not_spin(self):
        # The backoff reaches its longest sleep (0.1 s) within 0.2 s of doubling; a sleep
        # that fails (a bad timespec) would spin for the rest of the run.
        rc, out, err = run(["--idle-sleep-us", "100000", "--run-seconds", "3.5"])
        self.assertEqual(rc, 0, err)
        done = events(out)["exit"]
        self.assertLess(done["cpuSeconds"], 0.5, done)

    def test_workers_from_lcores(self):
        # Two lcores, two workers: net_ring0 has queues to spare, so each worker gets
        # one; software distribution when asked for.
        rc, out, err = run(["--run-seconds", "0.3"], lcores="0,1")
        self.assertEqual(rc, 0, err)
        ready, done = events(out)["ready"], events(out)["exit"]
        self.assertEqual((ready["workers"], ready["rxDistribution"]), (2, "queues"))
        self.assertEqual(len(done["workerRx"]), 2)
        rc, out, err = run(["--run-seconds", "0.3", "--rx-distribution", "software"],
                           lcores="0,1")
        self.assertEqual(events(out)["ready"]["rxDistribution"], "software", err)
        rc, out, err = run(["--run-seconds", "0.3"], lcores="0")
        self.assertEqual(events(out)["ready"]["rxDistribution"], "none")
        # A port of one rx queue (net_pcap with one file): software distribution by
        # default, and queues, asked for, is an error naming the cure.
        with tempfile.TemporaryDirectory() as d:
            empty = os.path.join(d, "empty.pcap")
            with open(empty, "wb") as f:     # pcap global header only, Ethernet
                f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
            pcap = [f"net_pcap0,rx_pcap={empty},tx_pcap={os.path.join(d, 'out.pcap')}"]
            rc, out, err = run(["--run-seconds", "0.3"], lcores="0,1", vdevs=pcap)
            self.assertEqual(rc, 0, err)
            self.assertEqual(events(out)["ready"]["rxDistribution"], "software")
            rc, out, err = run(["--run-seconds", "0.3", "--rx-distribution", "queues"],
                               lcores="0,1", vdevs=pcap)
            self.assertEqual(rc, 1)
            self.assertIn("fewer rx queues than the 2 workers", err)
            self.assertNotIn("ready", out)

    def test_long_idle_sleep_does_not_spin_two_workers(self):
        rc, out, err = run(["--idle-sleep-us", "100000", "--run-seconds", "3.5"], lcores="0,1")
        self.assertEqual(rc, 0, err)
        done = events(out)["exit"]
        self.assertLess(done["cpuSeconds"], 1.0, done)
        self.assertTrue(all(c < 0.5 for c in done["workerCpuSeconds"]), done)


if __name__ == "__main__":
    unittest.main(verbosity=2)
