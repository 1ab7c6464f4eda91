#!/usr/bin/env python3
"""Control API and live-traffic tests: hlb-smux on net_af_packet over a veth pair in a
private network namespace (as in the emulation), driven over HTTP and fed with real
frames (scapy-built, sent and received on raw AF_PACKET sockets).

Covers: --table-state (a restarted SMux forwards with the last accepted table; a damaged
file is not used); GET /health, /table, /metrics (also through prometheus_client's parser), /stats (JSON, the same counters); PUT valid, invalid (400 naming the field),
malformed and stale (409) tables with the old table still forwarding; whole-table
swaps under traffic with no loss; connection pinning across a DIP addition through
the API; flow pins (POST/DELETE/GET /pins) on real frames; an idle SMux not spinning its core.  Every test runs twice: against an SMux
with one worker, and with two (lcores 0 and 1, af_packet's fanout giving each a
queue); the packet-in/packet-out fixture also with two workers on single-queue ports
(software distribution, a shared tx queue).

Run as root. Creates namespace hlbdpapi<id> and removes it at the end."""
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import unittest
import urllib.error
import urllib.request
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import IP, TCP, Ether, Raw, wrpcap  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

import dp_testlib as tl  # noqa: E402

SMUX_IF, TEST_IF = "hlbdpa0", "hlbdpa1"
PCAP_IF, PCAP_PEER = "hlbdpa2", "hlbdpa3"   # net_pcap instance (rx_iface, tx_pcap file)
V1 = "100.64.0.1"
VP = "100.64.0.7"   # test_flow_pins' VIP: its connections stay out of the other tests' counts


def table(version, dips, conn=False, selection="crc32", vip=V1):
    return {"version": version, "vips": [
        {"vip": vip, "aggregate": "100.64.0.0/24", "selection": selection, "connTable": conn,
         "ports": [{"proto": "tcp", "port": 80,
                    "dips": [{"ip": d, "weight": 1} for d in dips]}]}]}


def http(method, path, body=None):
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", data=data, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def metrics():
    status, text = http("GET", "/metrics")
    assert status == 200
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            out[series] = float(value)
    return out


class Wire:
    """Raw AF_PACKET socket on the test side of the veth."""

    def __init__(self, ifname, smux_mac):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.s.bind((ifname, 0))
        self.s.settimeout(0.2)
        self.smux_mac = bytes.fromhex(smux_mac.replace(":", ""))

    def send(self, frame):
        self.s.send(bytes(frame))

    def drain(self):
        try:
            while True:
                self.s.recv(65535)
        except (socket.timeout, BlockingIOError):
            pass

    def collect(self, want, timeout=5.0):
        """Frames the SMux sent (by source MAC), until `want` of them or the timeout."""
        got, end = [], time.time() + timeout
        while len(got) < want and time.time() < end:
            try:
                data, addr = self.s.recvfrom(65535)
            except socket.timeout:
                continue
            if addr[2] != socket.PACKET_OUTGOING and data[6:12] == self.smux_mac:
                got.append(data)
        return got


def flow(i, flags="A", vip=V1):
    return (Ether(src=tl.CLIENT_MAC, dst="02:00:00:00:00:aa") /
            IP(src=f"198.51.{i // 250}.{i % 250 + 1}", dst=vip) /
            TCP(sport=30000 + i, dport=80, flags=flags) / Raw(b"hello"))


def outer_dst(frame):
    return socket.inet_ntoa(frame[30:34])


def dst_by_flow(frames):
    """Flow index (from the inner TCP source port, as flow() numbers them) -> outer
    destination: with several workers, frames of different flows may leave in another
    order than they came (each flow's own order is kept)."""
    return {int.from_bytes(f[54:56], "big") - 30000: outer_dst(f) for f in frames}


def lcores(workers):
    return ",".join(str(k) for k in range(workers))


class ControlApi(unittest.TestCase):
    """Against an SMux of WORKERS workers (its own process, started for the class)."""
    WORKERS = 1
    DISTRIBUTION = "none"
    version = 100

    @classmethod
    def setUpClass(cls):
        global PORT, SMUX, WIRE
        cls.prefix = f"hlbdpapi{os.getpid()}w{cls.WORKERS}"
        vdev = f"net_af_packet0,iface={SMUX_IF}"
        if cls.WORKERS > 1:
            vdev += f",qpairs={cls.WORKERS}"      # fanout: a socket (rx queue) per worker
        cmd = [tl.SMUX_BIN] + tl.eal_args(cls.prefix, [vdev], core=lcores(cls.WORKERS)) + [
            "--", "--ip", tl.SMUX_IP, "--gateway-mac", tl.GW_MAC, "--mgmt", "127.0.0.1:0",
            "--idle-sleep-us", "500",
            "--stateful-adopt-grace", "0"]    # its first SYNs get stateful hints at once
        SMUX = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        cls.ready = json.loads(SMUX.stdout.readline())
        PORT = cls.ready["mgmtPort"]
        WIRE = Wire(TEST_IF, cls.ready["macs"][0])

    @classmethod
    def tearDownClass(cls):
        SMUX.terminate()
        try:
            SMUX.wait(timeout=10)
        except subprocess.TimeoutExpired:
            SMUX.kill()
        SMUX.stdout.close()
        tl.cleanup_prefix(cls.prefix)
        WIRE.s.close()

    @classmethod
    def next_version(cls):
        cls.version += 1
        return cls.version

    def setUp(self):
        WIRE.drain()

    def put(self, doc):
        return http("PUT", "/table", doc)

    def send_and_collect(self, frames, timeout=5.0):
        for f in frames:
            WIRE.send(f)
        return WIRE.collect(len(frames), timeout)

    def test_health_and_get_table(self):
        status, body = http("GET", "/health")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["status"], "ok")
        v = self.next_version()
        doc = table(v, ["10.0.1.1", "10.0.1.2"], selection="ovs")
        doc["vips"][0]["hashBasis"] = "0xFEDCBA9876543210"   # above INT64_MAX: a string
        status, body = self.put(doc)
        self.assertEqual((status, json.loads(body)), (200, {"version": v}))
        status, body = http("GET", "/table")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body), doc)
        self.assertEqual(http("GET", "/nope")[0], 404)

    def test_wrong_method_405_with_allow(self):
        cases = [("DELETE", "/table", "GET, PUT, POST"), ("POST", "/metrics", "GET"),
                 ("DELETE", "/metrics", "GET"), ("PUT", "/health", "GET"),
                 ("POST", "/connections/diverging", "GET"), ("PUT", "/stats", "GET")]
        for method, path, allow in cases:
            req = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", method=method,
                                         data=b"{}" if method in ("PUT", "POST") else None)
            with self.assertRaises(urllib.error.HTTPError) as cm:
                urllib.request.urlopen(req, timeout=10)
            self.assertEqual(cm.exception.code, 405, (method, path))
            self.assertEqual(cm.exception.headers.get("Allow"), allow, (method, path))
            self.assertEqual(json.loads(cm.exception.read())["method"], method)

    def test_body_over_64_mib_is_413_and_counted(self):
        before = metrics()["hlb_smux_table_rejected_total"]
        version = json.loads(http("GET", "/table")[1])["version"]
        status, body = http("PUT", "/table", b" " * ((64 << 20) + 1))
        self.assertEqual((status, json.loads(body)["error"]), (413, "body too large"))
        self.assertEqual(metrics()["hlb_smux_table_rejected_total"], before + 1)
        self.assertEqual(json.loads(http("GET", "/table")[1])["version"], version)

    def test_uploads_at_once_are_bounded(self):
        # Four bodies half sent hold every upload slot: a fifth PUT is read, dropped and
        # answered 503, and goes through once they close.
        held = []
        try:
            for _ in range(4):
                s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
                s.sendall(b"PUT /table HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
                held.append(s)
            # The slots are taken when the server has read their headers: wait for that
            # (on a loaded machine a PUT sent at once could come first, and pass).
            deadline = time.time() + 10
            while metrics()["hlb_smux_table_uploads_in_progress"] < 4 and time.time() < deadline:
                time.sleep(0.05)
            self.assertEqual(metrics()["hlb_smux_table_uploads_in_progress"], 4)
            status, body = self.put(table(self.next_version(), ["10.0.1.1"]))
            self.assertEqual((status, json.loads(body).get("error")),
                             (503, "busy: too many uploads at once, retry"), body)
        finally:
            for s in held:
                s.close()
        deadline = time.time() + 5
        while True:                          # and freed when those requests end
            status, body = self.put(table(self.next_version(), ["10.0.1.1"]))
            if status == 200 or time.time() > deadline:
                break
        self.assertEqual(status, 200, body)

    def test_path_that_is_not_utf8_is_404(self):
        # The error body names the path; a path JSON cannot hold must not crash the SMux.
        status, body = http("GET", "/%ff")
        self.assertEqual((status, json.loads(body)["error"]), (404, "not found"))
        self.assertEqual(http("GET", "/health")[0], 200)

    def test_invalid_tables_rejected_old_table_forwards(self):
        v = self.next_version()
        self.assertEqual(self.put(table(v, ["10.0.1.1"]))[0], 200)
        bad = table(v + 1, ["10.0.1.7"])
        bad["vips"][0]["ports"][0]["dips"][0]["ip"] = "10.0.1"
        bad_basis = table(v + 1, ["10.0.1.7"], selection="ovs")
        bad_basis["vips"][0]["hashBasis"] = "18446744073709551616"   # 2^64
        cases = [
            (bad, 400, "vips[0].ports[0].dips[0].ip"),
            (bad_basis, 400, "vips[0].hashBasis"),
            (b'{"version": 999, "vips": [', 400, "(document) line 1 column 26"),
            (table(v, ["10.0.1.7"]), 409, "version"),
            ({"version": v + 1, "vips": [{"vip": V1, "ports": [], "colour": 1}]}, 400,
             "vips[0].colour"),
        ]
        before = metrics()["hlb_smux_table_rejected_total"]
        for doc, code, field in cases:
            status, body = self.put(doc)
            self.assertEqual(status, code, body)
            self.assertEqual(json.loads(body)["field"], field, body)
        self.assertEqual(metrics()["hlb_smux_table_rejected_total"], before + len(cases))
        status, body = http("GET", "/table")
        self.assertEqual(json.loads(body)["version"], v)
        out = self.send_and_collect([flow(i) for i in range(20)])
        self.assertEqual(len(out), 20)
        self.assertEqual({outer_dst(f) for f in out}, {"10.0.1.1"})

    def test_large_put_does_not_block_health(self):
        # The FRR supervisor probes /health with a 200 ms timeout and withdraws the
        # routes after two misses: a PUT parsed for seconds must not hold it up.
        v = self.next_version()
        vips = [{"vip": f"100.65.{i // 250}.{i % 250 + 1}", "ports": [
            {"proto": "tcp", "port": 80,
             "dips": [{"ip": f"10.{d}.{i // 250}.{i % 250 + 1}", "weight": 1}
                      for d in range(16)]}]} for i in range(15000)]
        body = json.dumps({"version": v, "vips": vips}).encode()
        waits, done = [], threading.Event()

        def probe():
            while not done.is_set():
                t0 = time.time()
                status, _ = http("GET", "/health")
                waits.append((time.time() - t0, status))
                time.sleep(0.05)
        th = threading.Thread(target=probe)
        th.start()
        t0 = time.time()
        try:
            status, reply = http("PUT", "/table", body)
        finally:
            took = time.time() - t0
            done.set()
            th.join()
        self.assertEqual((status, json.loads(reply)), (200, {"version": v}))
        # probes every 50 ms all along the PUT: it was long enough to have held them up
        self.assertGreater(len(waits), 5, f"PUT took {took:.2f} s")
        self.assertEqual({st for _, st in waits}, {200})
        # one parse thread kept /health waiting about 5 s; 1 s leaves room for a loaded CI box
        self.assertLess(max(w for w, _ in waits), 1.0, waits)

    def test_concurrent_puts_serialised(self):
        # Connections have threads of their own: swaps must still be one at a time,
        # the highest version must win, and every PUT be counted once.  Over four
        # uploads at once get 503 (test_uploads_at_once_are_bounded): a client
        # retries those, as a controller would.
        m0 = metrics()
        base = type(self).version
        type(self).version += 10
        results = [None] * 10

        def put(i):
            for _ in range(100):
                results[i] = self.put(table(base + 1 + i, [f"10.0.5.{i + 1}"]))[0]
                if results[i] != 503:
                    return
                time.sleep(0.02)
        threads = [threading.Thread(target=put, args=(i,)) for i in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertLessEqual(set(results), {200, 409})
        self.assertEqual(results[9], 200)
        self.assertEqual(json.loads(http("GET", "/table")[1])["version"], base + 10)
        self.assertEqual(json.loads(http("GET", "/health")[1])["version"], base + 10)
        m1 = metrics()
        self.assertEqual(m1["hlb_smux_table_swaps_total"] - m0["hlb_smux_table_swaps_total"],
                         results.count(200))
        self.assertEqual(m1["hlb_smux_table_rejected_total"]
                         - m0["hlb_smux_table_rejected_total"], results.count(409))

    def test_metrics_counts_traffic(self):
        v = self.next_version()
        self.assertEqual(self.put(table(v, ["10.0.3.1", "10.0.3.2"]))[0], 200)
        m0 = metrics()
        out = self.send_and_collect([flow(i) for i in range(50)])
        self.assertEqual(len(out), 50)
        WIRE.send(Ether(src=tl.CLIENT_MAC) / IP(src="198.51.100.1", dst="100.64.9.9") / TCP())
        time.sleep(0.3)
        m1 = metrics()
        key = 'hlb_smux_vip_packets_total{vip="100.64.0.1",proto="tcp",port="80"}'
        self.assertEqual(m1[key] - m0.get(key, 0), 50)
        dips = [f'hlb_smux_dip_packets_total{{vip="100.64.0.1",proto="tcp",port="80",dip="{d}"}}'
                for d in ("10.0.3.1", "10.0.3.2")]
        per_dip = [m1[k] - m0.get(k, 0) for k in dips]
        self.assertEqual(sum(per_dip), 50)
        self.assertEqual(per_dip[0], sum(outer_dst(f) == "10.0.3.1" for f in out))
        self.assertEqual(m1['hlb_smux_drops_total{reason="no_vip"}']
                         - m0['hlb_smux_drops_total{reason="no_vip"}'], 1)
        self.assertEqual(m1["hlb_smux_table_version"], v)
        self.assertIn("hlb_smux_conn_table_capacity", m1)

    def test_stateful_cheetah_hints_close_reports_and_loads(self):
        """A cheetah-stateful VIP this SMux owns: least-loaded SYNs follow POST /loads,
        each SYN leaves with its stateful hint in TSecr, POST /cheetah/closed frees the
        reported indexes (the workers apply them), bad reports are 400 naming the
        field, and /stats and /metrics count it all."""
        v = self.next_version()
        dips = ["10.0.7.1", "10.0.7.2", "10.0.7.3"]
        doc = {"version": v, "vips": [
            {"vip": V1, "aggregate": "100.64.0.0/24", "selection": "crc32",
             "affinity": "cheetah-stateful", "cookieKey": "00112233445566778899aabbccddeeff",
             "mechanism": "least-loaded", "statefulOwners": ["192.0.2.99", tl.SMUX_IP],
             "ports": [{"proto": "tcp", "port": 80, "dips": [
                 {"ip": d, "serverId": k + 1} for k, d in enumerate(dips)]}]}]}
        self.assertEqual(self.put(doc)[0], 200)
        status, body = http("POST", "/loads", {"loads": [
            {"dip": "10.0.7.1", "load": 0.9}, {"dip": "10.0.7.2", "load": 0.1},
            {"dip": "10.0.7.3", "load": 0.5}, {"dip": "10.0.99.1", "load": 0.5}]})
        self.assertEqual((status, json.loads(body)), (200, {"matched": 3}))
        s0 = json.loads(http("GET", "/stats")[1])["cookie"]["stateful"]
        syns = [Ether(src=tl.CLIENT_MAC, dst="02:00:00:00:00:aa") /
                IP(src=f"198.51.7.{i + 1}", dst=V1) /
                TCP(sport=31000 + i, dport=80, flags="S",
                    options=[("NOP", None), ("NOP", None), ("Timestamp", (1000 + i, 0))])
                for i in range(6)]
        out = self.send_and_collect(syns)
        self.assertEqual(len(out), 6)
        idents = {}
        for f in out:
            inner = IP(f[34:])
            self.assertEqual(outer_dst(f), "10.0.7.2")          # the least loaded
            tsecr = dict(inner[TCP].options)["Timestamp"][1]
            self.assertEqual(tsecr >> 16, 0xCEE7)
            ident = tsecr & 0xFFFF
            self.assertEqual(ident >> 10, 0x10 | 1)               # stateful, owner 1
            idents[inner[TCP].sport] = (inner[IP].src, ident)
            chk = inner[TCP].chksum                               # the hint kept it right
            del inner[TCP].chksum
            self.assertEqual(IP(bytes(inner))[TCP].chksum, chk)
        self.assertEqual(len(idents), 6)     # (idents repeat across partitions: H picks those)
        closed = [{"vip": V1, "port": 80, "client": src, "clientPort": sport, "ident": ident}
                  for sport, (src, ident) in sorted(idents.items())[:4]]
        status, body = http("POST", "/cheetah/closed", {"closed": closed})
        self.assertEqual((status, json.loads(body)), (200, {"queued": 4, "ring_full": 0}))
        bad = dict(closed[0], ident=closed[0]["ident"] & ~(1 << 10))   # owner 0: not us
        status, body = http("POST", "/cheetah/closed", {"closed": [closed[1], bad]})
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body)["field"], "closed[1].ident")
        status, body = http("POST", "/loads", {"loads": [{"dip": "10.0.7.1", "load": "x"}]})
        self.assertEqual((status, json.loads(body)["field"]), (400, "loads[0].load"))
        self.assertEqual(http("GET", "/loads")[0], 405)
        deadline = time.time() + 5
        while time.time() < deadline:
            s1 = json.loads(http("GET", "/stats")[1])["cookie"]["stateful"]
            if s1["released"] - s0["released"] >= 4:
                break
            time.sleep(0.05)
        self.assertEqual(s1["inserted"] - s0["inserted"], 6)
        self.assertEqual(s1["released"] - s0["released"], 4)
        self.assertEqual(s1["entries"] - s0["entries"], 2)
        m = metrics()
        self.assertEqual(m['hlb_smux_cookie_stateful_total{event="released"}'], s1["released"])
        self.assertGreaterEqual(m['hlb_smux_cookie_syns_total{mechanism="least-loaded"}'], 6)

    def test_stats_json_counts_what_metrics_counts(self):
        v = self.next_version()
        doc = table(v, ["10.0.6.1", "10.0.6.2"])
        doc["vips"][0]["ports"].append({"proto": "udp", "port": 53,
                                        "dips": [{"ip": "10.0.6.3", "weight": 1}]})
        self.assertEqual(self.put(doc)[0], 200)
        status, body = http("GET", "/stats")
        self.assertEqual(status, 200)
        s0 = json.loads(body)
        out = self.send_and_collect([flow(i) for i in range(40)])
        self.assertEqual(len(out), 40)
        time.sleep(0.3)
        status, body = http("GET", "/stats")
        self.assertEqual(status, 200)
        s1 = json.loads(body)
        m = metrics()
        self.assertEqual(s1["version"], v)
        by_svc = {(x["vip"], x["proto"], x["port"]): x for x in s1["services"]}
        self.assertEqual(set(by_svc), {(V1, "tcp", 80), (V1, "udp", 53)})
        tcp, udp = by_svc[(V1, "tcp", 80)], by_svc[(V1, "udp", 53)]
        before = {(x["vip"], x["proto"], x["port"]): x for x in s0["services"]}[(V1, "tcp", 80)]
        self.assertEqual(tcp["packets"] - before["packets"], 40)
        # each frame: IP 20 + TCP 20 + "hello" 5 inner bytes
        self.assertEqual(tcp["bytes"] - before["bytes"], 40 * 45)
        self.assertEqual((udp["packets"], udp["bytes"]), (0, 0))
        # the same counters as /metrics, service and DIPs
        labels = 'vip="100.64.0.1",proto="tcp",port="80"'
        self.assertEqual(tcp["bytes"], m["hlb_smux_vip_bytes_total{%s}" % labels])
        self.assertEqual(tcp["packets"], m["hlb_smux_vip_packets_total{%s}" % labels])
        self.assertEqual([d["ip"] for d in tcp["dips"]], ["10.0.6.1", "10.0.6.2"])
        for d in tcp["dips"]:
            self.assertEqual(d["bytes"], m['hlb_smux_dip_bytes_total{%s,dip="%s"}' % (labels, d["ip"])])
        self.assertEqual(sum(d["packets"] for d in tcp["dips"]) - sum(d["packets"] for d in before["dips"]), 40)
        self.assertEqual(http("POST", "/stats", b"")[0], 405)

    def test_metrics_prometheus_format(self):
        v = self.next_version()
        doc = table(v, ["10.0.4.1", "10.0.4.2"])
        doc["vips"][0]["ports"].append({"proto": "udp", "port": 53,
                                        "dips": [{"ip": "10.0.4.3", "weight": 1}]})
        self.assertEqual(self.put(doc)[0], 200)
        self.assertEqual(len(self.send_and_collect([flow(i) for i in range(5)])), 5)
        status, text = http("GET", "/metrics")
        self.assertEqual(status, 200)
        # The official parser: a sample away from its family's HELP/TYPE lines
        # starts a new family of type "unknown", and leaves the typed one empty.
        families = list(text_string_to_metric_families(text))
        names = [f.name for f in families]
        self.assertEqual(len(names), len(set(names)), names)
        for fam in families:
            self.assertNotEqual(fam.type, "unknown", fam.name)
            self.assertTrue(fam.samples, f"{fam.name} has no samples")
        by_name = {f.name: f for f in families}
        for name, n in [("hlb_smux_vip_packets", 2), ("hlb_smux_vip_bytes", 2),
                        ("hlb_smux_dip_packets", 3), ("hlb_smux_dip_bytes", 3)]:
            self.assertEqual(by_name[name].type, "counter")
            self.assertEqual(len(by_name[name].samples), n, name)

    def test_swap_under_traffic_loses_nothing(self):
        a, b = ["10.0.1.1", "10.0.1.2"], ["10.0.2.1", "10.0.2.2", "10.0.2.3"]
        self.assertEqual(self.put(table(self.next_version(), a))[0], 200)
        frames = [bytes(flow(i % 64)) for i in range(4000)]
        received, done = [], threading.Event()

        def receive():
            received.extend(WIRE.collect(len(frames), timeout=30))
            done.set()

        rx = threading.Thread(target=receive)
        rx.start()
        m0 = metrics()
        swaps = 0

        def send():
            for i, f in enumerate(frames):
                WIRE.send(f)
                if i % 50 == 49:
                    time.sleep(0.002)

        tx = threading.Thread(target=send)
        tx.start()
        while tx.is_alive():
            swaps += 1
            status, body = self.put(table(self.next_version(), b if swaps % 2 else a))
            self.assertEqual(status, 200, body)
            time.sleep(0.01)
        tx.join()
        rx.join()
        m1 = metrics()
        self.assertGreaterEqual(swaps, 5)
        self.assertEqual(len(received), len(frames), "packets lost across swaps")
        dsts = {outer_dst(f) for f in received}
        self.assertTrue(dsts <= set(a + b), dsts)
        self.assertTrue(dsts & set(a) and dsts & set(b))
        for reason in ("no_vip", "no_backend", "tx_full", "no_gateway"):
            k = f'hlb_smux_drops_total{{reason="{reason}"}}'
            self.assertEqual(m1[k] - m0[k], 0, k)
        self.assertEqual(m1["hlb_smux_forwarded_packets_total"]
                         - m0["hlb_smux_forwarded_packets_total"], len(frames))

    def test_pinning_across_dip_addition(self):
        self.assertEqual(self.put(table(self.next_version(), ["10.0.4.1", "10.0.4.2"],
                                        conn=True))[0], 200)
        flows = range(1000, 1150)
        first = dst_by_flow(self.send_and_collect([flow(i, "S") for i in flows]))
        self.assertEqual(sorted(first), list(flows))
        self.assertEqual(self.put(table(self.next_version(),
                                        ["10.0.4.1", "10.0.4.2", "10.0.4.3"], conn=True))[0], 200)
        again = dst_by_flow(self.send_and_collect([flow(i, "A") for i in flows]))
        self.assertEqual(again, first, "a live connection moved when a DIP was added")
        # The connections a stateless mux would now move (what keeps the VIP off the HMux).
        grown = ["10.0.4.1", "10.0.4.2", "10.0.4.3"]
        expect = sum(grown[tl.crc32_pick(f"198.51.{i // 250}.{i % 250 + 1}", V1, 6, 30000 + i, 80,
                                         [1, 1, 1])] != first[i] for i in flows)
        self.assertGreater(expect, 0)
        status, body = http("GET", "/connections/diverging")
        self.assertEqual(status, 200, body)
        svc = json.loads(body)["services"]
        self.assertEqual([(s["vip"], s["proto"], s["port"], s["connections"], s["diverging"]) for s in svc],
                         [(V1, "tcp", 80, len(flows), expect)])
        fresh = [outer_dst(f) for f in self.send_and_collect([flow(i, "S") for i in
                                                              range(2000, 2150)])]
        self.assertIn("10.0.4.3", fresh)
        # Without the connection table the same addition does move flows.
        self.assertEqual(self.put(table(self.next_version(), ["10.0.4.1", "10.0.4.2"]))[0], 200)
        base = dst_by_flow(self.send_and_collect([flow(i, "A") for i in flows]))
        self.assertEqual(self.put(table(self.next_version(),
                                        ["10.0.4.1", "10.0.4.2", "10.0.4.3"]))[0], 200)
        moved = dst_by_flow(self.send_and_collect([flow(i, "A") for i in flows]))
        self.assertEqual(sorted(base), sorted(moved))
        self.assertNotEqual(base, moved)

    def test_flow_pins(self):
        """POST /pins: a pinned flow's next frames go to its pin's DIP (the answer means in
        force), the VIP's other flows where they went; pins go on across a table swap;
        bad input is a 400 naming the field and changes nothing; DELETE /pins gives the
        flow back to its connection-table DIP."""
        self.assertEqual(self.put(table(self.next_version(), ["10.0.6.1", "10.0.6.2"],
                                        conn=True, vip=VP))[0], 200)
        flows = range(8000, 8040)
        base = dst_by_flow(self.send_and_collect([flow(i, "S", VP) for i in flows]))
        self.assertEqual(sorted(base), list(flows))
        pinned = (8003, 8017)

        def pin(i, dip=None):
            body = {"client": f"198.51.{i // 250}.{i % 250 + 1}", "clientPort": 30000 + i,
                    "vip": VP, "vipPort": 80}
            return dict(body, dip=dip) if dip else body

        before = metrics()["hlb_smux_pinned_packets_total"]
        for i in pinned:
            status, body = http("POST", "/pins", pin(i, "10.0.7.9"))
            self.assertEqual((status, json.loads(body)), (200, {"replaced": False}))
        got = dst_by_flow(self.send_and_collect([flow(i, "A", VP) for i in flows]))
        self.assertEqual(got, {i: "10.0.7.9" if i in pinned else base[i] for i in flows})
        self.assertEqual(metrics()["hlb_smux_pinned_packets_total"] - before, len(pinned))
        status, body = http("GET", "/pins")
        self.assertEqual(status, 200)
        listed = json.loads(body)
        self.assertEqual(listed["count"], 2)
        self.assertEqual(sorted(p["clientPort"] for p in listed["pins"]), [38003, 38017])
        self.assertEqual({(p["vip"], p["vipPort"], p["proto"], p["dip"], p["tunnel"])
                          for p in listed["pins"]}, {(VP, 80, "tcp", "10.0.7.9", "10.0.7.9")})
        stats = json.loads(http("GET", "/stats")[1])["pins"]
        self.assertEqual((stats["count"], stats["packets"] - before), (2, len(pinned)))

        # Bad input: 400 naming the field; a PUT is 405; the pins stay as they were.
        for body, field in ((dict(pin(8005, "10.0.7.8"), clientPort="x"), "clientPort"),
                            ({"vip": VP}, "client"),
                            (dict(pin(8005, "10.0.7.8"), dip="10.0.7"), "dip"),
                            (pin(8005), "dip"), (b"{", "(document)")):
            status, text = http("POST", "/pins", body)
            self.assertEqual((status, json.loads(text)["field"]), (400, field), text)
        status, _ = http("DELETE", "/pins", {"client": "198.51.12.4", "vip": VP, "vipPort": 80})
        self.assertEqual(status, 400)
        self.assertEqual(http("PUT", "/pins", pin(8005, "10.0.7.8"))[0], 405)
        self.assertEqual(json.loads(http("GET", "/pins")[1])["count"], 2)

        # A table swap keeps them; a removal gives the flow back, the other stays.
        self.assertEqual(self.put(table(self.next_version(), ["10.0.6.1", "10.0.6.2"],
                                        conn=True, vip=VP))[0], 200)
        status, body = http("DELETE", "/pins", pin(8003))
        self.assertEqual((status, json.loads(body)), (200, {"removed": True}))
        self.assertEqual(json.loads(http("DELETE", "/pins", pin(8003))[1]), {"removed": False})
        got = dst_by_flow(self.send_and_collect([flow(i, "A", VP) for i in flows]))
        self.assertEqual(got, {i: "10.0.7.9" if i == 8017 else base[i] for i in flows})
        self.assertEqual(http("DELETE", "/pins", pin(8017))[0], 200)
        self.assertEqual(json.loads(http("GET", "/pins")[1])["count"], 0)

    def test_workers_share_traffic(self):
        """Each worker takes a share of the flows (af_packet's fanout hash), counted in
        its own series; the totals add up, each connection pinned once."""
        self.assertEqual((self.ready["workers"], self.ready["rxDistribution"]),
                         (self.WORKERS, self.DISTRIBUTION))
        self.assertEqual(self.put(table(self.next_version(), ["10.0.6.1", "10.0.6.2"],
                                        conn=True))[0], 200)
        m0 = metrics()
        out = self.send_and_collect([flow(i, "S") for i in range(3000, 3200)])
        self.assertEqual(len(out), 200)
        m1 = metrics()
        per = [m1[f'hlb_smux_worker_rx_packets_total{{worker="{k}"}}']
               - m0[f'hlb_smux_worker_rx_packets_total{{worker="{k}"}}']
               for k in range(self.WORKERS)]
        self.assertNotIn(f'hlb_smux_worker_rx_packets_total{{worker="{self.WORKERS}"}}', m1)
        self.assertEqual(sum(per), m1["hlb_smux_rx_packets_total"]
                         - m0["hlb_smux_rx_packets_total"])
        for k, n in enumerate(per):
            self.assertGreater(n, 200 // self.WORKERS // 3, f"worker {k} took {per}")
        self.assertEqual(m1["hlb_smux_conn_table_inserts_total"]
                         - m0["hlb_smux_conn_table_inserts_total"], 200)

    def test_wcmp_units_are_one_dip_for_pins_diverging_and_stats(self):
        """The controller repeats a DIP as its WCMP units (weight 1, an id each) and keeps a
        drained DIP at weight 0: connections stay pinned to their DIP whichever unit picked it,
        /connections/diverging counts a connection only when the stateless choice is another
        DIP, and /stats and /metrics give one DIP one entry."""
        a, b, c = "10.0.7.1", "10.0.7.2", "10.0.7.3"

        def doc(pool):
            d = table(self.next_version(), [], conn=True, selection="ovs")
            d["vips"][0]["ports"][0]["dips"] = [{"ip": ip, "weight": w, "bucketId": bid} for ip, w, bid in pool]
            return d

        def sent(idx, flags):
            got = dst_by_flow(self.send_and_collect([flow(i, flags) for i in idx]))
            return [got.get(i) for i in idx]

        def pick(i, pool):
            k = tl.ovs_pick(f"198.51.{i // 250}.{i % 250 + 1}", V1, 6, 30000 + i, 80,
                            [w for _, w, _ in pool], [bid for _, _, bid in pool])
            return pool[k][0]

        one_two_one = [(a, 1, 0), (b, 1, 1), (b, 1, 2), (c, 1, 3)]
        self.assertEqual(self.put(doc(one_two_one))[0], 200)
        flows = range(6000, 6400)
        first = sent(flows, "S")
        self.assertEqual(first, [pick(i, one_two_one) for i in flows], "the SMux picks what OVS would")
        n_b = first.count(b)
        self.assertTrue(150 < n_b < 250, n_b)   # 2 of 4 units
        status, body = http("GET", "/stats")
        svc = json.loads(body)["services"][0]
        self.assertEqual([d["ip"] for d in svc["dips"]], [a, b, c], "one entry per DIP")
        self.assertEqual({d["ip"]: d["packets"] for d in svc["dips"]},
                         {ip: first.count(ip) for ip in (a, b, c)})
        status, body = http("GET", "/connections/diverging")
        self.assertEqual(json.loads(body)["services"][0]["diverging"], 0)

        # b drained (weight 0, one bucket with its first unit's id, as the controller sends it):
        # its pinned connections stay on it, new ones never reach it, and every one of them diverges
        drained = [(a, 1, 0), (b, 0, 1), (c, 1, 3)]
        self.assertEqual(self.put(doc(drained))[0], 200)
        again = sent(flows, "A")
        self.assertEqual(again, first, "pinned connections stay, on the drained DIP too")
        status, body = http("GET", "/connections/diverging")
        self.assertEqual(json.loads(body)["services"][0]["diverging"], n_b)
        later = range(7000, 7200)
        fresh = sent(later, "S")
        self.assertNotIn(b, fresh)
        self.assertEqual(fresh, [pick(i, drained) for i in later])

        # b back with three units (ids 1, 2 and a new one): nothing pinned moves; diverging counts
        # only the connections whose stateless choice is now another DIP, not another unit of theirs
        grown = [(a, 1, 0), (b, 1, 1), (b, 1, 2), (c, 1, 3), (b, 1, 4)]
        self.assertEqual(self.put(doc(grown))[0], 200)
        again = sent(flows, "A")
        self.assertEqual(again, first)
        expect = (sum(pick(i, grown) != first[k] for k, i in enumerate(flows))
                  + sum(pick(i, grown) != fresh[k] for k, i in enumerate(later)))
        self.assertGreater(expect, 0)
        status, body = http("GET", "/connections/diverging")
        self.assertEqual(json.loads(body)["services"][0]["diverging"], expect)
        m = metrics()
        series = [k for k in m if k.startswith("hlb_smux_dip_packets_total{") and 'dip="%s"' % b in k]
        self.assertEqual(len(series), 1, series)

    def test_port_not_promiscuous(self):
        """A NIC of a non-promiscuous port drops frames for other hosts' MACs (on a
        shared segment, every SMux would otherwise encapsulate a flooded frame).
        Only the port's mode is checked: af_packet on a veth, as here, receives
        other hosts' frames whatever the mode."""
        link = json.loads(subprocess.run(["ip", "-d", "-j", "link", "show", SMUX_IF],
                                         check=True, capture_output=True, text=True).stdout)[0]
        self.assertNotIn("PROMISC", link["flags"])
        self.assertEqual(link["promiscuity"], 0)

    def test_idle_smux_does_not_spin(self):
        time.sleep(0.5)
        def cpu():
            with open(f"/proc/{SMUX.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        c0, t0 = cpu(), time.time()
        time.sleep(2.0)
        share = (cpu() - c0) / (time.time() - t0)
        self.assertLess(share, 0.3, f"idle SMux used {share:.0%} of a core")


class ControlApiTwoWorkers(ControlApi):
    WORKERS = 2
    DISTRIBUTION = "queues"


class PcapSwapFixture(unittest.TestCase):
    """Table swaps under traffic and pinning across a DIP addition as a packet-in /
    packet-out fixture: frames crafted with scapy go in on a veth (af_packet), every
    encapsulated frame is written by a net_pcap port to a pcap file, and each one is
    compared field by field with the frame expected from the spec for the table that
    was running (crc32 via the `crc32c` package).  (net_pcap's own rx_iface capture was tried first:
    libpcap lost frames now and then, af_packet never did.)"""
    LCORES = "1"
    DISTRIBUTION = "none"

    def test_swap_and_pinning_fixture(self):
        import tempfile
        from scapy.all import rdpcap
        a = ["10.0.5.1", "10.0.5.2"]
        b = a + ["10.0.5.3"]
        with tempfile.TemporaryDirectory(prefix="hlbdp-swap-") as d:
            out = os.path.join(d, "out.pcap")
            empty = os.path.join(d, "empty.pcap")
            wrpcap(empty, [], linktype=1)
            prefix = f"hlbdpswap{os.getpid()}"
            # Two-port mode: frames come in on af_packet (the veth), encapsulated frames
            # leave by port 1, a net_pcap port writing every frame to out.pcap.
            vdevs = [f"net_af_packet0,iface={PCAP_IF}",
                     f"net_pcap1,rx_pcap={empty},tx_pcap={out}"]
            cmd = [tl.SMUX_BIN] + tl.eal_args(prefix, vdevs, core=self.LCORES) + [
                "--", "--ip", tl.SMUX_IP, "--gateway-mac", tl.GW_MAC, "--mgmt", "127.0.0.1:0",
                "--idle-sleep-us", "200", "--mode", "two-port"]
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
            try:
                ready = json.loads(p.stdout.readline())
                self.assertEqual(ready["rxDistribution"], self.DISTRIBUTION)
                port = ready["mgmtPort"]

                def put(doc):
                    req = urllib.request.Request(f"http://127.0.0.1:{port}/table",
                                                 data=json.dumps(doc).encode(), method="PUT")
                    with urllib.request.urlopen(req, timeout=10) as r:
                        self.assertEqual(r.status, 200)

                s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
                s.bind((PCAP_PEER, 0))
                sent = {}          # ip id -> (frame, flow index, phase)
                ident = [0]

                def send(i, flags, phase):
                    ident[0] += 1
                    f = (Ether(src=tl.CLIENT_MAC, dst="02:00:00:00:00:aa") /
                         IP(src=f"198.51.{i // 250}.{i % 250 + 1}", dst=V1, id=ident[0]) /
                         TCP(sport=30000 + i, dport=80, flags=flags) / Raw(b"fixture"))
                    sent[ident[0]] = (f, i, phase)
                    s.send(bytes(f))

                version = [0]

                def table_with(dips):
                    version[0] += 1
                    return table(version[0], dips, conn=True)

                put(table_with(a))
                time.sleep(0.2)
                pinned = range(0, 120)                 # connections opened under A
                for i in pinned:
                    send(i, "S", "A")
                time.sleep(0.5)
                # Under traffic: A -> B -> A -> B ... while the pinned connections keep
                # sending ACKs and new connections open.
                for rnd in range(6):
                    put(table_with(b if rnd % 2 == 0 else a))
                    for i in pinned:
                        send(i, "A", "pinned")
                    for i in range(1000 + rnd * 40, 1040 + rnd * 40):
                        send(i, "S", "B" if rnd % 2 == 0 else "A")
                    time.sleep(0.3)
                time.sleep(0.5)
            finally:
                p.terminate()
                rest, _ = p.communicate(timeout=10)
                tl.cleanup_prefix(prefix)
                s.close()
            frames = rdpcap(out)
            done = json.loads(rest.strip().splitlines()[-1])

        def pick(i, dips):
            return dips[tl.crc32_pick(f"198.51.{i // 250}.{i % 250 + 1}", V1, 6, 30000 + i, 80,
                                      [1] * len(dips))]

        got = {}
        for o in frames:
            self.assertEqual(o[Ether].dst, tl.GW_MAC)
            self.assertEqual(o[IP].proto, 4)
            self.assertTrue(tl.ip_checksum_ok(bytes(o[IP])[:20]))
            self.assertEqual((o[IP].src, o[IP].ttl, o[IP].flags), (tl.SMUX_IP, 64, "DF"))
            inner = bytes(o[IP])[20:]
            ident = int.from_bytes(inner[4:6], "big")
            self.assertIn(ident, sent)
            self.assertNotIn(ident, got, "a frame was sent twice")
            self.assertEqual(inner, bytes(sent[ident][0][IP]))
            got[ident] = o[IP].dst
        self.assertEqual(len(got), len(sent), f"frames lost; SMux saw: {done}")
        first = {}
        for ident, (f, i, phase) in sorted(sent.items()):
            if phase == "A" and i < 120:
                self.assertEqual(got[ident], pick(i, a))
                first[i] = got[ident]
            elif phase == "pinned":
                self.assertEqual(got[ident], first[i], "pinned connection moved")
            else:
                self.assertEqual(got[ident], pick(i, b if phase == "B" else a))
        moved_by_hash = sum(pick(i, b) != first[i] for i in pinned)
        self.assertGreater(moved_by_hash, 10)      # without pinning they would move
        self.assertEqual(len(done["workerRx"]), len(self.LCORES.split(",")))
        self.assertTrue(all(n > 0 for n in done["workerRx"]), done["workerRx"])


class PcapSwapFixtureTwoWorkers(PcapSwapFixture):
    """Both ports have one queue: worker 0 receives and hands worker 1 its flows;
    both send on net_pcap's one tx queue."""
    LCORES = "0,1"
    DISTRIBUTION = "software"


class TableState(unittest.TestCase):
    """--table-state: the table the API accepted is what a restarted SMux forwards with,
    before any controller speaks to it; a damaged file is logged and not used."""

    def start(self, state):
        self.prefix = f"hlbdpst{os.getpid()}"
        cmd = [tl.SMUX_BIN] + tl.eal_args(self.prefix, [f"net_af_packet0,iface={SMUX_IF}"]) + [
            "--", "--ip", tl.SMUX_IP, "--gateway-mac", tl.GW_MAC, "--mgmt", "127.0.0.1:0",
            "--idle-sleep-us", "500", "--table-state", state]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: p.poll() is not None or (p.kill(), p.wait()))   # a failed check stops it too
        ready = json.loads(p.stdout.readline())
        global PORT
        PORT = ready["mgmtPort"]
        return p, Wire(TEST_IF, ready["macs"][0])

    def stop(self, p, wire, sig=9):
        p.send_signal(sig)
        p.wait(timeout=10)
        err = p.stderr.read()
        p.stdout.close()
        p.stderr.close()
        wire.s.close()
        tl.cleanup_prefix(self.prefix)
        return err

    def test_a_restarted_smux_forwards_with_the_last_accepted_table(self):
        state = f"/tmp/hlb-dp-state-{os.getpid()}.json"
        try:
            p, wire = self.start(state)
            self.assertEqual(http("PUT", "/table", table(7, ["10.0.7.1", "10.0.7.2"]))[0], 200)
            self.assertEqual(http("PUT", "/table", table(6, ["10.0.7.9"]))[0], 409)   # refused: not kept
            self.stop(p, wire)                                     # SIGKILL: no shutdown path
            p, wire = self.start(state)
            status, body = http("GET", "/table")
            self.assertEqual((status, json.loads(body)["version"]), (200, 7))
            wire.drain()
            for i in range(20):
                wire.send(flow(i))
            out = wire.collect(20)
            self.assertEqual(len(out), 20, "the kept table forwards before any PUT")
            self.assertEqual({outer_dst(f) for f in out}, {"10.0.7.1", "10.0.7.2"})
            self.assertEqual(http("PUT", "/table", table(7, ["10.0.7.3"]))[0], 409, "its version runs")
            self.stop(p, wire, sig=15)
            with open(state, "w") as f:
                f.write('{"version": 9, "vips": [{"vip": "not an address"}]}')
            p, wire = self.start(state)
            status, body = http("GET", "/table")
            self.assertEqual((status, json.loads(body)["version"]), (200, 0))
            err = self.stop(p, wire, sig=15)
            self.assertIn("--table-state %s: not used" % state, err)
        finally:
            for f in (state, state + ".tmp"):
                if os.path.exists(f):
                    os.remove(f)
            tl.cleanup_prefix(self.prefix)


def in_namespace_main():
    prog = unittest.main(exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


def main(script=__file__):
    """Runs the tests of `script` (this file, or one that uses its SMux) in a namespace
    of their own."""
    if os.environ.get("HLB_DP_IN_NETNS"):
        return in_namespace_main()
    ns = f"hlbdpapi{uuid.uuid4().hex[:6]}"
    sh = lambda *c: subprocess.run(c, check=True)  # noqa: E731
    sh("ip", "netns", "add", ns)
    try:
        sh("ip", "-n", ns, "link", "add", SMUX_IF, "type", "veth", "peer", "name", TEST_IF)
        sh("ip", "-n", ns, "link", "add", PCAP_IF, "type", "veth", "peer", "name", PCAP_PEER)
        for i in (SMUX_IF, TEST_IF, PCAP_IF, PCAP_PEER):
            sh("ip", "netns", "exec", ns, "sysctl", "-q", f"net.ipv6.conf.{i}.disable_ipv6=1")
            sh("ip", "-n", ns, "link", "set", i, "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        env = dict(os.environ, HLB_DP_IN_NETNS="1")
        return subprocess.run(["ip", "netns", "exec", ns, sys.executable,
                               os.path.abspath(script)] + sys.argv[1:], env=env).returncode
    finally:
        subprocess.run(["ip", "netns", "del", ns])


if __name__ == "__main__":
    sys.exit(main())
