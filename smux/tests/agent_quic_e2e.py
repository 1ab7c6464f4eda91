"""Cheetah over QUIC end to end: a real aioquic client, the real hlb-smux, two DIP hosts
with the host agent (XDP decapsulation) and the cookie QUIC server (agent/quic_server.py).

    client ns --(10.78.1.0/24)-- router ns --(10.78.2.0/24)-- DIP host 1: agent, QUIC server id 4321
                                  |      \\--(10.78.4.0/24)-- DIP host 2: agent, QUIC server id 4322
                           (10.78.3.0/24)
                                  |
                             SMux ns: hlb-smux on af_packet

The VIP's UDP port is a `cheetah` service of the SMux with both DIPs (p4/COOKIE-SPEC.md
§13). Each QUIC server reads its server id and key from its host agent's cookie
document. The servers answer directly (DSR). Shown:
  - one client Initial sent from several source ports reaches one DIP, the one the
    model's hash of its DCID picks (no state: any port, any SMux);
  - whole connections (handshake, then short-header packets by the ids the server
    issued) stay on the server that answered their first Initial; every id the
    client got decodes, in the model, to that server's id;
  - forged short-header ids are dropped and counted, and reach no DIP.
"""
import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "p4", "model"))
import agent_testlib as tl  # noqa: E402
import cheetah_cookie as cc  # noqa: E402
from agent_cookie_e2e import (AGENT, DIP, KEY, MGMT, SERVER_ID, agent_err,  # noqa: E402
                              cgroup2_root, mgmt_ok, tl_wait)
from agent_smux_reports import (CERTS, SMUX_BIN, SMUX_CTL, SMUX_DATA, VIP_SL, ReportTopology,  # noqa: E402
                                smux_api)  # noqa: E402

TESTS = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(tl.SMUX_DIR, "agent", "quic_server.py")
CLIENT = os.path.join(TESTS, "agent_quic_client.py")
VIP, QPORT = VIP_SL, 4433
ROUTER_D2, DIP2, SERVER_ID2 = "10.78.4.1", "10.78.4.2", SERVER_ID + 1


class QuicTopology(ReportTopology):
    """ReportTopology (client, router, SMux, DIP host) with a second DIP host."""

    def __init__(self, tmp):
        super().__init__(tmp)
        tag = self.cgroup_rel[len("hlb-ck-"):]
        self.dip2 = tl.Netns(f"hlb-ckq-{tag}")
        self.if_rd2, self.if_d2 = f"hlbu{tag}", f"hlbv{tag}"
        tl.veth_pair(self.router, self.if_rd2, f"{ROUTER_D2}/24", self.dip2, self.if_d2, f"{DIP2}/24")
        for ns, dev in ((self.router, self.if_rd2), (self.dip2, self.if_d2)):
            ns.run(["ip", "link", "set", dev, "mtu", "1600"])
        self.dip2.run(["ip", "route", "add", "default", "via", ROUTER_D2])
        self.router.run(["sysctl", "-qw", f"net.ipv4.conf.{self.if_rd2}.rp_filter=0"])
        self.cgroup2_rel = f"{self.cgroup_rel}-2"
        os.mkdir(os.path.join(cgroup2_root(), self.cgroup2_rel))
        subprocess.run([CERTS, self.certs, "server", "quic", "--ip", VIP], check=True,
                       capture_output=True)

    def close(self):
        super().close()
        self.dip2.close()
        try:
            os.rmdir(os.path.join(cgroup2_root(), self.cgroup2_rel))
        except OSError:
            pass


@pytest.fixture
def topo(tmp_path):
    if not os.access(SMUX_BIN, os.X_OK):
        pytest.fail(f"{SMUX_BIN} is not built (smux/README.md, Build)")
    t = QuicTopology(str(tmp_path))
    try:
        yield t
    finally:
        t.close()


def table(version):
    dips = [{"ip": DIP, "serverId": SERVER_ID}, {"ip": DIP2, "serverId": SERVER_ID2}]
    return {"version": version, "vips": [{
        "vip": VIP, "aggregate": "10.200.0.0/24", "selection": "crc32", "affinity": "cheetah",
        "cookieKey": KEY, "mechanism": "rr", "ports": [{"proto": "udp", "port": QPORT, "dips": dips}]}]}


def start_host(t, ns, iface, local_ip, cgroup_rel, server_id):
    """The host agent with its cookie document, and the QUIC server reading it."""
    cfg = os.path.join(t.tmp, f"cookie-{server_id}.json")
    with open(cfg, "w") as f:
        json.dump({"serverId": server_id, "key": KEY}, f)
    agent = t.start(ns, [sys.executable, AGENT, "--iface", iface, "--local-ip", local_ip,
                         "--vip", VIP, "--allow-mux", SMUX_DATA, "--decap", "xdp",
                         "--listen", f"127.0.0.1:{MGMT}", "--cookie-config", cfg,
                         "--cgroup", cgroup_rel, "--stats-interval-ms", "100"])
    assert tl_wait(lambda: mgmt_ok(ns), timeout=90), agent_err(agent)   # (slow under load)
    server = t.start(ns, [sys.executable, SERVER, "--vip", VIP, "--port", str(QPORT),
                          "--cookie-config", cfg, "--cert", f"{t.certs}/quic.pem",
                          "--key", f"{t.certs}/quic.key"])
    line = server.stdout.readline()
    assert json.loads(line or "{}").get("serverId") == server_id, server.stderr.read()


def client(t, mode, n):
    out = t.client.run([sys.executable, CLIENT, mode, VIP, str(QPORT), str(n)], timeout=60).stdout
    return json.loads(out)


def stats(t):
    st = smux_api(t, "GET", "/stats")[1]
    svc = next(s for s in st["services"] if s["vip"] == VIP and s["proto"] == "udp")
    return st["cookie"]["quic"], {d["ip"]: d["packets"] for d in svc["dips"]}


def hashed_dip(dcid_hex):
    """The DIP the model's §13.4 hash of a client-chosen DCID picks (weights 1, 1)."""
    h = cc.quic_initial_hash(bytes.fromhex(KEY), bytes.fromhex(dcid_hex))
    return [DIP, DIP2][cc.quic_initial_slot(h, 2)]


def ident(cid_hex):
    return cc.quic_ident("siphash13", bytes.fromhex(KEY), VIP, QPORT, bytes.fromhex(cid_hex))


def test_quic_connections_stay_on_their_server(topo):
    t = topo
    t.start_smux()
    assert smux_api(t, "PUT", "/table", table(1))[0] == 200
    start_host(t, t.dip, t.if_d, DIP, t.cgroup_rel, SERVER_ID)
    start_host(t, t.dip2, t.if_d2, DIP2, t.cgroup2_rel, SERVER_ID2)
    server_of = {SERVER_ID: DIP, SERVER_ID2: DIP2}

    # One Initial from five source ports: one DIP, the one the DCID's hash picks.
    q0, d0 = stats(t)
    sent = client(t, "initials", 5)
    assert tl_wait(lambda: stats(t)[0]["initial"] - q0["initial"] >= 5, timeout=10), stats(t)
    q1, d1 = stats(t)
    want = hashed_dip(sent["dcid"])
    assert {ip: d1[ip] - d0[ip] for ip in d1} == {DIP: 5 if want == DIP else 0,
                                                 DIP2: 5 if want == DIP2 else 0}, (sent, d0, d1)

    # Real connections: every answer from the server the first Initial reached, every
    # id the client was given decodes to that server.
    seen = set()
    for _ in range(6):
        r = client(t, "get", 3)
        sids = {int(a.split()[0]) for a in r["answers"]}
        assert len(sids) == 1 and len(r["answers"]) == 3, r
        sid = sids.pop()
        seen.add(sid)
        named = ident(r["original_dcid"])
        first = server_of.get(named, hashed_dip(r["original_dcid"]))
        assert server_of[sid] == first, r
        assert ident(r["dcid"]) == sid and r["dcid"] != r["original_dcid"], r
        assert r["spare_dcids"] and {ident(c) for c in r["spare_dcids"]} == {sid}, r
    q2, d2 = stats(t)
    assert q2["decoded"] - q1["decoded"] >= 6 * 4, (q1, q2)   # handshakes and requests by their ids
    assert q2["invalid"] == q0["invalid"] and q2["malformed"] == q0["malformed"], q2
    print(f"servers seen: {sorted(seen)}; quic counters {q2}")

    # Forged ids: dropped and counted, no DIP gets them.
    client(t, "forged", 50)
    assert tl_wait(lambda: stats(t)[0]["invalid"] - q2["invalid"] >= 50, timeout=10), stats(t)
    q3, d3 = stats(t)
    assert q3["invalid"] - q2["invalid"] == 50 and q3["decoded"] == q2["decoded"], q3
    assert d3 == d2, (d2, d3)
    metrics = t.smux.run([sys.executable, "-c", "import sys,ssl,urllib.request\n"
                          "c=ssl.create_default_context(cafile=sys.argv[2]+'/ca.pem')\n"
                          "c.load_cert_chain(sys.argv[2]+'/agent.pem',sys.argv[2]+'/agent.key')\n"
                          "print(urllib.request.urlopen(sys.argv[1],context=c,timeout=3).read().decode())",
                          f"https://{SMUX_CTL}:9200/metrics", t.certs]).stdout
    assert f'hlb_smux_cookie_quic_packets_total{{event="invalid"}} {q3["invalid"]}' in metrics
    assert f'hlb_smux_drops_total{{reason="bad_quic_cid"}} {q3["invalid"]}' in metrics


def load_server_module():
    sys.path.insert(0, os.path.join(tl.SMUX_DIR, "agent"))
    import quic_server
    return quic_server


def test_server_ids_follow_the_cookie_document(tmp_path):
    """The ids the server issues carry the document's server id and the key of the most
    specific prefix holding the VIP; a rewritten document (PUT /cookie) applies to the
    next id; an unreadable one keeps the last good one; none at start is an error."""
    qs = load_server_module()
    import cookie_config
    path = str(tmp_path / "cookie.json")
    key2 = "ff" * 16
    doc = {"serverId": 77, "key": KEY, "vips": [{"prefix": "10.200.0.0/16", "key": key2, "hash": "crc32c"},
                                               {"prefix": "10.0.0.0/8", "key": "11" * 16}]}
    cookie_config.save(path, cookie_config.parse(doc))
    ids = qs.CookieIds(path, VIP, QPORT)
    for _ in range(20):
        cid = ids.new_cid()
        assert len(cid) == cc.QUIC_CID_LEN
        assert cc.quic_ident("crc32c", bytes.fromhex(key2), VIP, QPORT, cid) == 77
    assert len({ids.new_cid() for _ in range(50)}) == 50
    doc["serverId"], doc["vips"] = 78, []
    cookie_config.save(path, cookie_config.parse(doc))
    os.utime(path, ns=(1, 1))          # a new stamp even within the clock's resolution
    assert ident(ids.new_cid().hex()) == 78
    with open(path, "w") as f:
        f.write("{not json")
    assert ident(ids.new_cid().hex()) == 78
    with pytest.raises(cookie_config.CookieConfigError):
        qs.CookieIds(str(tmp_path / "missing.json"), VIP, QPORT)


def test_http09_answers():
    qs = load_server_module()
    s = qs.Server.__new__(qs.Server)
    s.ids = type("Ids", (), {"server_id": 5})()
    assert s.answer(b"GET /a\r\n") == b"5 /a\n"
    assert len(s.answer(b"GET /a?bytes=100\r\n")) == 100
    assert s.answer(b"PUT /a\r\n").startswith(b"error")
    assert s.answer(b"GET /a?bytes=x\r\n").startswith(b"error")
