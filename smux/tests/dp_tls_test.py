#!/usr/bin/env python3
"""The SMux control API over mutual TLS (libmicrohttpd + GnuTLS), on net_ring: with
--tls-cert/--tls-key/--tls-ca anyone who trusts the SMux's certificate may read (/health,
/table, /metrics), only a client certificate of that CA for client use may write PUT /table
(401 without one, 403 with a server certificate of the same CA or a certificate of another
CA), and a refused write changes nothing; plain HTTP is not served. Without TLS, --mgmt on
another address than loopback is refused before the SMux starts (exit 2).

Certificates: app/standalone/deploy/hlb-certs (openssl). Run as root (DPDK EAL)."""
import json
import os
import ssl
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent_testlib as atl  # noqa: E402
import dp_testlib as tl  # noqa: E402

PREFIX = f"hlbdptls{os.getpid()}"
TABLE = {"version": 1, "vips": [{"vip": "10.100.0.1", "aggregate": "10.100.0.0/16", "encap": "gre",
                                 "ports": [{"proto": "tcp", "port": 80, "dips": [{"ip": "10.0.5.1"}]}]}]}


class ControlApiTls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="hlbdptls-")
        cls.certs = atl.make_certs(os.path.join(cls.dir, "tls"), ("server", "smux", "--ip", "127.0.0.1"),
                                   ("server", "other-smux", "--ip", "127.0.0.2"),
                                   ("controller", "ctl", "--ip", "127.0.0.1"))
        cls.stranger = atl.make_certs(os.path.join(cls.dir, "other-ca"), ("controller", "ctl", "--ip", "127.0.0.1"))
        c = cls.certs
        cmd = [tl.SMUX_BIN] + tl.eal_args(PREFIX, ["net_ring0"]) + [
            "--", "--ip", tl.SMUX_IP, "--gateway-mac", tl.GW_MAC, "--mgmt", "127.0.0.1:0",
            "--tls-cert", f"{c}/smux.pem", "--tls-key", f"{c}/smux.key", "--tls-ca", f"{c}/ca.pem",
            "--run-seconds", "120"]
        cls.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        cls.port = json.loads(cls.proc.stdout.readline())["mgmtPort"]
        cls.url = f"https://127.0.0.1:{cls.port}"

    @classmethod
    def tearDownClass(cls):
        atl.stop_pid(cls.proc.pid)
        cls.proc.wait()
        tl.cleanup_prefix(PREFIX)

    def call(self, method, path, cert=None, ca=None, body=None):
        """(status, parsed body) over HTTPS, presenting cert (a base name) if given."""
        ctx = ssl.create_default_context(cafile=ca or f"{self.certs}/ca.pem")
        if cert:
            ctx.load_cert_chain(cert + ".pem", cert + ".key")
        req = urllib.request.Request(self.url + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None)
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
                return r.status, json.loads(r.read() or b"null") if path != "/metrics" else None
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def test_reads_need_only_the_ca(self):
        status, health = self.call("GET", "/health")
        self.assertEqual(status, 200, health)
        self.assertEqual(self.call("GET", "/metrics")[0], 200)
        with self.assertRaises(urllib.error.URLError):   # another CA does not trust it
            self.call("GET", "/health", ca=f"{self.stranger}/ca.pem")

    def test_writes_need_a_client_certificate_of_the_ca(self):
        before = self.call("GET", "/table")
        for cert, status in ((None, 401), (f"{self.certs}/other-smux", 403), (f"{self.stranger}/ctl", 403)):
            got, body = self.call("PUT", "/table", cert=cert, body=TABLE)
            self.assertEqual(got, status, body)
            self.assertEqual(body["field"], "client certificate", body)
            self.assertEqual(self.call("GET", "/table"), before, "a refused write changed nothing")
        got, body = self.call("PUT", "/table", cert=f"{self.certs}/ctl", body=TABLE)
        self.assertEqual((got, body), (200, {"version": 1}))
        self.assertEqual(self.call("GET", "/table")[1]["vips"][0]["vip"], "10.100.0.1")

    def test_plain_http_is_not_served(self):
        with self.assertRaises((urllib.error.URLError, ConnectionError, OSError)):
            urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5).read()


class ListenRule(unittest.TestCase):
    def run_smux(self, args):
        cmd = [tl.SMUX_BIN] + tl.eal_args(PREFIX + "r", ["net_ring0"]) + [
            "--", "--ip", tl.SMUX_IP, "--gateway-mac", tl.GW_MAC, "--run-seconds", "0.2"] + args
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        finally:
            tl.cleanup_prefix(PREFIX + "r")

    def test_another_address_than_loopback_needs_tls(self):
        r = self.run_smux(["--mgmt", "0.0.0.0:0"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--mgmt: 0.0.0.0 is not a loopback address: the control API serves other hosts only "
                      "with mutual TLS (--tls-cert, --tls-key, --tls-ca)", r.stderr)
        self.assertNotIn("ready", r.stdout)
        r = self.run_smux(["--mgmt", "127.0.0.1:0", "--tls-cert", "x.pem"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--tls-cert, --tls-key and --tls-ca go together", r.stderr)
        r = self.run_smux(["--mgmt", "127.0.0.1:0", "--tls-cert", "/nonexistent.pem", "--tls-key", "/nonexistent.key",
                           "--tls-ca", "/nonexistent-ca.pem"])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("control: --tls-cert: cannot read /nonexistent.pem", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
