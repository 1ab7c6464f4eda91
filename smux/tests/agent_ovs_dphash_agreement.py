"""OVS default-selection agreement: the SMux's `ovs-dphash` selection
(smux/src/ovs_dphash.c) must pick, for every flow, the bucket a real Open
vSwitch 3.1 picks for a select group WITHOUT selection_method, which is what an
OpenFlow 1.3 controller (ONOS) programs.

The same frames go
  1. through a private ovs-vswitchd (userspace datapath, started with
     --enable-dummy): in on a netdev-dummy port, `ip,nw_dst=VIP ->
     group:G`, group G added with OpenFlow 1.3 (no selection_method, no bucket
     ids), bucket k outputs to its own dummy port whose tx_pcap records what it
     got. OVS hashes with dp_hash and recirculates (the test checks that the
     datapath flows carry dp_hash, so the dp_hash method really was used);
  2. through the real hlb-smux (net_pcap in -> out) running a table whose VIPs
     use "selection": "ovs-dphash" with the same DIPs in bucket order; the
     outer destination of each encapsulated frame names the DIP it chose.
Each frame carries a unique IP id, so the two answers are matched per frame.

Groups: equal weights, unequal weights, a weight-0 bucket, 40 buckets (64
hash slots), a WCMP pool as the controller builds it (1:2:1 as weight-1 units of
repeated DIPs; the SMux pool also holds a drained DIP at weight 0, which the group
does not), and then one group after a bucket is removed (OpenFlow 1.3
modify with the remaining buckets, as ONOS sends it), against the SMux's next
table without that DIP. Also: a pool OVS would not hash with dp_hash (weights
1:100) is refused by the SMux with the field named.

Run: sudo python3 smux/tests/agent_ovs_dphash_agreement.py
     HLB_DPHASH_FLOWS=3000 for more flows per group (default 1500).
"""
import json
import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent_testlib as atl  # noqa: E402
import dp_testlib as dtl  # noqa: E402
from scapy.all import IP, TCP, UDP, Ether, rdpcap, wrpcap  # noqa: E402

N_FLOWS = int(os.environ.get("HLB_DPHASH_FLOWS", "1500"))
SEED = int(os.environ.get("HLB_DPHASH_SEED", "20261121"))
OF13 = ["ovs-ofctl", "-O", "OpenFlow13"]

# group id -> bucket weights, in bucket order
GROUPS = {
    1: [1, 1, 1, 1],
    2: [1, 3, 2],
    3: [5, 1, 0, 7, 2],
    4: [3] * 40,
    5: [1, 1, 1, 1],
}
REMOVED = (2, 1)   # group 2 loses its bucket 1 (weight 3) in the second round
# Group 5 is a WCMP pool as the controller builds it: 1:2:1 as weight-1 units of DIPs
# 0, 1, 1, 2 (bucket -> DIP position), and the SMux pool also holds DIP 3 drained at
# weight 0 (here first: a weight-0 bucket gets no slot wherever it is); OVS's group has no
# bucket for it.
UNITS = {5: [0, 1, 1, 2]}
DRAINED = {5: 3}


def vip_of(gid):
    return f"100.64.{gid}.1"


def dip_of(gid, k):
    """The DIP of bucket k of group gid (its units share one)."""
    return f"10.{gid}.0.{UNITS[gid][k] + 1 if gid in UNITS else k + 1}"


def port_of(gid, k):
    return gid * 100 + k


class DummyOVS(atl.PrivateOVS):
    """PrivateOVS whose ovs-vswitchd also offers netdev-dummy ports."""

    def _start(self):
        d = self.dir
        subprocess.run(["ovsdb-tool", "create", f"{d}/conf.db",
                        "/usr/share/openvswitch/vswitch.ovsschema"],
                       check=True, env=self.env, capture_output=True)
        self._ns_run(["ovsdb-server", f"{d}/conf.db", f"--remote=punix:{self.db_sock}",
                      f"--pidfile={d}/ovsdb-server.pid", f"--unixctl={d}/ovsdb-server.ctl",
                      f"--log-file={d}/ovsdb-server.log", "--detach", "--no-chdir"])
        self.pids.append(atl.read_pidfile(f"{d}/ovsdb-server.pid"))
        self.vsctl("--no-wait", "init")
        self._ns_run(["ovs-vswitchd", "--enable-dummy", f"unix:{self.db_sock}",
                      f"--pidfile={d}/ovs-vswitchd.pid", f"--unixctl={self.vswitchd_ctl}",
                      f"--log-file={d}/ovs-vswitchd.log", "--detach", "--no-chdir"])
        self.pids.append(atl.read_pidfile(f"{d}/ovs-vswitchd.pid"))

    def of13(self, *args):
        return subprocess.run(OF13 + list(args), check=True, capture_output=True, text=True,
                              env=self.env).stdout


def make_flows(rng, n_per_group):
    """(ip id, frame) pairs: TCP and UDP from random clients to every group's VIP."""
    frames = []
    ip_id = 0
    for gid in GROUPS:
        for _ in range(n_per_group):
            src = socket.inet_ntoa(struct.pack("!I", rng.randrange(1 << 24, 0xdf000000)))
            sport = rng.randrange(1024, 65536)
            dport = rng.choice((80, 443, 8080, rng.randrange(1, 65536)))
            l4 = (TCP(sport=sport, dport=dport, flags="S") if rng.random() < 0.6
                  else UDP(sport=sport, dport=dport))
            ip_id = (ip_id + 1) & 0xFFFF
            frames.append((ip_id, gid, Ether(src=dtl.CLIENT_MAC, dst="02:00:00:00:00:aa") /
                           IP(src=src, dst=vip_of(gid), id=ip_id) / l4))
    assert len(frames) < 65536, "ip ids must be unique"
    return frames


class OvsDphashAgreement(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise unittest.SkipTest("needs root (namespaces, DPDK EAL)")
        cls.ovs = DummyOVS()
        cls.br = f"hlbdh{cls.ovs.tag[:4]}"
        cls.frames = make_flows(random.Random(SEED), N_FLOWS)
        cls.tmp = tempfile.mkdtemp(prefix="hlb-dphash-")

    @classmethod
    def tearDownClass(cls):
        cls.ovs.close()
        subprocess.run(["rm", "-rf", cls.tmp], check=False)

    # ---- OVS side ----------------------------------------------------------------

    def bucket_spec(self, gid, weights, skip=None):
        return "".join(f",bucket=weight:{w},actions=output:{port_of(gid, k)}"
                       for k, w in enumerate(weights) if k != skip)

    def ovs_round(self, name, mod=None):
        """Sends every frame through OVS; returns {ip id: (gid, bucket index)}."""
        ovs, br = self.ovs, self.br
        pcaps = {}
        if mod is None:
            ovs.vsctl("add-br", br, "--", "set", "bridge", br, "datapath_type=netdev",
                      "protocols=OpenFlow13", "--", "add-port", br, "p0", "--", "set",
                      "interface", "p0", "type=dummy", "ofport_request=1")
        for gid, weights in GROUPS.items():
            for k in range(len(weights)):
                pcaps[(gid, k)] = os.path.join(self.tmp, f"{name}-g{gid}-b{k}.pcap")
                port = f"hb{gid}x{k}"
                if mod is None:
                    ovs.vsctl("add-port", br, port, "--", "set", "interface", port, "type=dummy",
                              f"ofport_request={port_of(gid, k)}",
                              f"options:tx_pcap={pcaps[(gid, k)]}")
                else:
                    ovs.vsctl("set", "interface", port, f"options:tx_pcap={pcaps[(gid, k)]}")
        if mod is None:
            for gid, weights in GROUPS.items():
                # OpenFlow 1.3, as ONOS programs it: no selection_method, no bucket ids
                ovs.of13("add-group", br, f"group_id={gid},type=select" + self.bucket_spec(gid, weights))
                ovs.of13("add-flow", br, f"ip,nw_dst={vip_of(gid)},actions=group:{gid}")
        else:
            gid, k = mod
            ovs.of13("mod-group", br, f"group_id={gid},type=select"
                     + self.bucket_spec(gid, GROUPS[gid], skip=k))
        desc = ovs.of13("dump-groups", br)
        self.assertNotIn("selection_method", desc)

        client = ovs.unixctl()
        try:
            batch = 10   # netdev-dummy's receive queue drops beyond a few dozen
            for i in range(0, len(self.frames), batch):
                client.call("netdev-dummy/receive", "p0",
                            *[bytes(f).hex() for _, _, f in self.frames[i:i + batch]])
                time.sleep(0.005)
            time.sleep(0.5)
            flows = client.call("dpif/dump-flows", br)
        finally:
            client.close()
        # the dp_hash method was used: the second pass matches on masked dp_hash
        self.assertRegex(flows, r"dp_hash\(0x[0-9a-f]+/0x(f|1f|3f)\)")
        for (gid, k) in pcaps:   # close the pcaps so every frame is on disk
            ovs.vsctl("set", "interface", f"hb{gid}x{k}", "options:tx_pcap=/dev/null")
        time.sleep(0.3)
        got = {}
        for (gid, k), path in pcaps.items():
            if not os.path.exists(path):
                continue
            for p in rdpcap(path):
                self.assertNotIn(p[IP].id, got, "frame seen on two buckets")
                got[p[IP].id] = (gid, k)
        return got

    # ---- SMux side ---------------------------------------------------------------

    def smux_table(self, version, removed=None):
        vips = []
        for gid, weights in GROUPS.items():
            dips = [{"ip": f"10.{gid}.0.{DRAINED[gid] + 1}", "weight": 0}] if gid in DRAINED else []
            dips += [{"ip": dip_of(gid, k), "weight": w} for k, w in enumerate(weights)
                     if (gid, k) != removed]
            vips.append({"vip": vip_of(gid), "selection": "ovs-dphash", "connTable": False,
                         "encap": "ipip",
                         "ports": [{"proto": "tcp", "port": 0, "dips": dips},
                                   {"proto": "udp", "port": 0, "dips": dips}]})
        return {"version": version, "vips": vips}

    def smux_round(self, name, table):
        """Sends every frame through hlb-smux; returns {ip id: the DIP it chose}."""
        inp = os.path.join(self.tmp, f"{name}-smux-in.pcap")
        out = os.path.join(self.tmp, f"{name}-smux-out.pcap")
        tfile = os.path.join(self.tmp, f"{name}-table.json")
        wrpcap(inp, [f for _, _, f in self.frames], linktype=1)
        with open(tfile, "w") as f:
            json.dump(table, f)
        args = ["--ip", dtl.SMUX_IP, "--gateway-mac", dtl.GW_MAC, "--mgmt", "127.0.0.1:0",
                "--table", tfile, "--exit-when-idle", "300", "--run-seconds", "60",
                "--idle-sleep-us", "100"]
        dtl.run_smux(f"hlbdph{os.getpid()}", [f"net_pcap0,rx_pcap={inp},tx_pcap={out}"], args)
        return {p[IP].payload.id: p[IP].dst for p in rdpcap(out)}

    # ---- the comparisons -----------------------------------------------------------

    def compare(self, ovs_picks, smux_picks, removed=None):
        ids = {i: gid for i, gid, _ in self.frames}
        self.assertEqual(len(ovs_picks), len(self.frames), "OVS lost frames")
        self.assertEqual(len(smux_picks), len(self.frames), "the SMux lost frames")
        # OVS names the bucket, the SMux the DIP (a WCMP pool's units share one)
        mismatches = [(i, ovs_picks[i], smux_picks[i]) for i in ids if dip_of(*ovs_picks[i]) != smux_picks[i]]
        per_bucket = {}
        for i, (gid, k) in ovs_picks.items():
            self.assertEqual(gid, ids[i])
            per_bucket[(gid, k)] = per_bucket.get((gid, k), 0) + 1
        print(f"  {len(self.frames)} frames, {len(mismatches)} mismatches; "
              f"per bucket {dict(sorted(per_bucket.items()))}", file=sys.stderr)
        self.assertEqual(mismatches, [], mismatches[:5])
        # the data means something: weight-0 and removed buckets get nothing,
        # every other bucket of a balanced group gets flows
        for gid, weights in GROUPS.items():
            for k, w in enumerate(weights):
                n = per_bucket.get((gid, k), 0)
                if w == 0 or (gid, k) == removed:
                    self.assertEqual(n, 0, (gid, k))
                elif gid != 4 or N_FLOWS >= 1000:
                    self.assertGreater(n, 0, (gid, k))

    def test_1_agreement_then_bucket_removed(self):
        ovs1 = self.ovs_round("r1")
        smux1 = self.smux_round("r1", self.smux_table(1))
        self.compare(ovs1, smux1)
        ovs2 = self.ovs_round("r2", mod=REMOVED)
        smux2 = self.smux_round("r2", self.smux_table(2, removed=REMOVED))
        self.compare(ovs2, smux2, removed=REMOVED)
        moved = sum(1 for i, gid, _ in self.frames
                    if gid == REMOVED[0] and ovs1[i] != ovs2[i] and ovs1[i] != REMOVED)
        print(f"  removal: {moved} flows of group {REMOVED[0]} not on the removed bucket "
              f"moved anyway (OVS re-deals its dp_hash slots)", file=sys.stderr)

    def test_2_pool_outside_dp_hash_is_refused(self):
        table = {"version": 1, "vips": [{"vip": "100.64.9.1", "selection": "ovs-dphash",
                 "ports": [{"proto": "tcp", "port": 80,
                            "dips": [{"ip": "10.9.0.1", "weight": 1},
                                     {"ip": "10.9.0.2", "weight": 100}]}]}]}
        tfile = os.path.join(self.tmp, "refused.json")
        with open(tfile, "w") as f:
            json.dump(table, f)
        prefix = f"hlbdphr{os.getpid()}"
        try:
            p = subprocess.run([dtl.SMUX_BIN] + dtl.eal_args(prefix, ["net_null0"]) +
                               ["--", "--ip", dtl.SMUX_IP, "--gateway-mac", dtl.GW_MAC,
                                "--mgmt", "127.0.0.1:0", "--table", tfile, "--run-seconds", "5"],
                               capture_output=True, text=True, timeout=60)
        finally:
            dtl.cleanup_prefix(prefix)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("vips[0].ports[0].dips", p.stdout + p.stderr)
        self.assertIn("ovs-dphash", p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
