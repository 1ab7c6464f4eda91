"""Prism end to end on namespaces (prism_testbed.py): real clients (h2load and
Python sockets) reach the VIP through a mux, the front end hands every request
to a backend with TCP_REPAIR, the backends answer directly (DSR), the front-end
host's agent steers the client's packets (mode a), or the fabric does (mode b:
the mux pins each handed-off flow, test_fabric_*).  Checked on a capture of the
client's link: no RST, sequence and acknowledgement numbers continuous."""
import collections
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

import capture
import prism_testbed as pt

N_BACKENDS = 3


def rules_with_pin(n=N_BACKENDS):
    """Round robin over every backend, and a header that pins a backend (for
    the tests that need to know which backend serves)."""
    doc = pt.default_rules(n)
    for i in range(1, n + 1):
        doc["rules"].append({"name": f"pin-b{i}", "priority": 10,
                             "match": {"header": {"x-pin": f"b{i}"}}, "split": {f"b{i}": 1}})
    return doc


@pytest.fixture(scope="module")
def tb():
    bed = pt.Testbed(N_BACKENDS, rules=rules_with_pin(), fe_args=["--handoff-timeout", "5"])
    yield bed
    bed.close()


def h2load(tb, n, c, path="/obj/1024", timeout=240):
    r = tb.client.run(["h2load", "--h1", "-n", str(n), "-c", str(c), "-t", "1",
                       f"http://{pt.VIP}{path}"], check=False, timeout=timeout)
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                  r"(\d+) failed, (\d+) errored, (\d+) timeout", r.stdout)
    assert m, r.stdout + r.stderr
    total, _, done, ok, failed, errored, timeouts = map(int, m.groups())
    codes = re.search(r"status codes: (\d+) 2xx", r.stdout)
    return {"done": done, "succeeded": ok, "failed": failed, "errored": errored,
            "timeout": timeouts, "2xx": int(codes.group(1)) if codes else 0}


def test_10000_requests_over_100_connections(tb):
    check_10000_requests_over_100_connections(tb)


def check_10000_requests_over_100_connections(tb, requests=10000, conns=100):
    before = tb.fe_stats()
    cap = capture.Capture(tb)
    try:
        res = h2load(tb, requests, conns)
    finally:
        cap.stop()
    try:
        assert res == {"done": requests, "succeeded": requests, "failed": 0, "errored": 0,
                       "timeout": 0, "2xx": requests}
        after = tb.fe_stats()
        # A backend chosen per request: every request was handed off, to every backend.
        assert after["handoffs"] - before.get("handoffs", 0) >= requests
        for name, b in after["backends"].items():
            assert b["handoffs"] - before["backends"][name]["handoffs"] >= requests * 3 // 10, (name, b)
        assert cap.resets_to_client() == 0
        n, bad = cap.continuity()
        assert n > 4 * requests, n   # request, response and ACK segments of the exchanges
        assert bad == [], bad[:10]
    finally:
        cap.close()


def test_pipelined_requests(tb):
    out = tb.client_run(["pipeline", "--count", "8", "--path", "/obj/20000"])
    responses = out["responses"]
    assert [r["status"] for r in responses] == [200] * 8
    assert all(r["ok"] and r["len"] == 20000 for r in responses)
    # Each request of the batch went to the next backend, in order.
    assert len({r["backend"] for r in responses}) == N_BACKENDS


def test_client_fin_while_a_backend_owns_the_connection(tb):
    before = tb.fe_stats()
    cap = capture.Capture(tb)
    tb.shape(tb.backend_ns[1], tb.if_backend[1], 50)   # 4 MB take ~0.7 s
    try:
        out = tb.client_run(["fin", "--path", "/obj/4000000", "--header", "X-Pin: b1\r\n"])
    finally:
        tb.unshape(tb.backend_ns[1], tb.if_backend[1])
        cap.stop()
    try:
        assert out == {"status": 200, "backend": "b1", "ok": True, "len": 4000000, "end": "eof"}
        assert tb.fe_stats()["closed_at_backend"] == before.get("closed_at_backend", 0) + 1
        assert cap.resets_to_client() == 0
        # The client's FIN and the backend's FIN both went out and were acknowledged.
        fins = cap.fields("ip.src", display="tcp.flags.fin==1")
        assert {row[0] for row in fins} == {pt.CLIENT_IP, pt.VIP}
        assert cap.continuity()[1] == []
    finally:
        cap.close()


def h2load_with_loss(tb, links):
    """2,000 requests over 20 connections while tests/loss.bpf.c drops 1 % on each
    (namespace, interface, direction) of links, captured: (h2load's result, the capture)."""
    for ns, ifname, direction in links:
        tb.lossy(ns, ifname, direction)
    cap = capture.Capture(tb)
    try:
        return h2load(tb, 2000, 20, path="/obj/16384"), cap
    finally:
        cap.stop()
        for ns, ifname, direction in links:
            tb.lossless(ns, ifname, direction)


def test_1pct_loss_during_handoffs(tb):
    """1% random loss (tests/loss.bpf.c: no netem in this kernel) on the front
    end's link, both ways, and on every backend's link."""
    # The front end's link both ways (ingress after the agent's XDP: the router's
    # end carries the mux's own tc program), each backend's outgoing data.
    links = [(tb.fe, tb.if_fe, "egress"), (tb.fe, tb.if_fe, "ingress")] + \
            [(tb.backend_ns[i], tb.if_backend[i], "egress") for i in tb.backend_ns]
    res, cap = h2load_with_loss(tb, links)
    try:
        assert res["succeeded"] == 2000 and res["failed"] == res["errored"] == 0, res
        assert cap.resets_to_client() == 0
        # The backends' segments are lost before the client's link: a hole counts
        # only if no retransmission fills it.
        assert cap.continuity(loss_before_capture=True)[1] == []
    finally:
        cap.close()


def test_100_concurrent_handoffs(tb):
    before = tb.fe_stats()["handoffs"]
    out = tb.client_run(["concurrent", "--conns", "100", "--path", "/obj/65536"])
    assert out == {"ok": 100, "bad": 0}
    assert tb.fe_stats()["handoffs"] - before == 100


def test_backend_killed_mid_response(tb):
    """The client gets an RST (from the backend's kernel: the library sets
    SO_LINGER 0 on imported sockets) within the hand-off timeout; nothing hangs:
    the front end forgets the connection and serves the next clients."""
    victim = 3
    tb.shape(tb.backend_ns[victim], tb.if_backend[victim], 20)   # 8 MB take ~3 s
    result = {}
    client = threading.Thread(target=lambda: result.update(tb.client_run(
        ["killed", "--path", "/obj/8000000", "--header", f"X-Pin: b{victim}\r\n",
         "--timeout", "10"])))
    try:
        client.start()
        time.sleep(0.6)
        tb.backends[victim].send_signal(signal.SIGKILL)
        client.join(15)
    finally:
        tb.unshape(tb.backend_ns[victim], tb.if_backend[victim])
    assert not client.is_alive()
    assert result["end"] == "reset", result
    assert 0 < result["bytes"] < 8000000
    assert result["seconds"] < 5, result    # the hand-off timeout of this front end
    pt.wait_until(lambda: not tb.fe_stats()["backends"][f"b{victim}"]["up"], 5,
                  what="the front end to see the backend down")
    assert tb.fe_stats()["connections"] == 0
    # The others still serve.
    res = h2load(tb, 200, 10)
    assert res["succeeded"] == 200, res
    tb.backends[victim].wait(5)
    tb.start_backend(victim)
    pt.wait_until(lambda: tb.fe_stats()["backends"][f"b{victim}"]["up"], 5,
                  what="the backend back up")


def segment_before_import(tb):
    """The front end steers a flow to backend 1 before the backend has imported it
    (--steer-before-import): the backend is stopped while it gets the state, and the
    client's next request reaches the backend's host before any socket of the flow
    exists there.  Returns the client's result and the RSTs it received."""
    cap = capture.Capture(tb)
    proc = tb.backends[1]
    result = {}
    client = threading.Thread(target=lambda: result.update(tb.client_run(
        ["second", "--path", "/obj/20000", "--header", "X-Pin: b1\r\n", "--gap", "0.5",
         "--timeout", "8"])))
    proc.send_signal(signal.SIGSTOP)
    try:
        client.start()
        time.sleep(1.5)   # the client sent both requests; the second one met no socket
    finally:
        proc.send_signal(signal.SIGCONT)
    client.join(15)
    cap.stop()
    try:
        return result, cap.resets_to_client()
    finally:
        cap.close()


def test_segment_reaches_the_backend_before_its_import(tb):
    """The backend host's agent (--prism-backend) drops it: TCP resends it once the
    connection is imported, and both requests are served without an RST."""
    result, resets = segment_before_import(tb)
    assert result["end"] == "ok", result
    assert [(r["status"], r["backend"], r["ok"]) for r in result["responses"]] == [(200, "b1", True)] * 2
    assert resets == 0


def test_without_the_guard_the_backend_host_resets_it():
    """The same with backends' agents lacking --prism-backend: the backend's kernel
    answers the early segment with an RST (why the guard exists)."""
    bed = pt.Testbed(1, rules=rules_with_pin(1), fe_args=["--handoff-timeout", "5"], guard=False)
    try:
        result, resets = segment_before_import(bed)
    finally:
        bed.close()
    assert result["end"] == "reset" and resets >= 1, (result, resets)


def test_handoffs_with_the_go_round_trip():
    """Backends whose hosts lack the guard: the front end locks, sends HANDOFF_HOLD,
    steers after IMPORTED and sends GO; every request served, no RST, continuity."""
    bed = pt.Testbed(2, fe_args=["--handoff-timeout", "5"], before_import=False)
    try:
        cap = capture.Capture(bed)
        try:
            res = h2load(bed, 1000, 10)
        finally:
            cap.stop()
        assert res["succeeded"] == 1000 and res["failed"] == res["errored"] == 0, res
        assert bed.fe_stats()["handoffs"] >= 1000
        assert cap.resets_to_client() == 0
        assert cap.continuity()[1] == []
        cap.close()
    finally:
        bed.close()


def test_rules_route_by_url_header_cookie_and_stick(tb):
    doc = pt.default_rules(N_BACKENDS)
    doc["rules"] = [
        {"name": "big", "priority": 5, "match": {"url": "/obj/2????"}, "split": {"b2": 1}},
        {"name": "gold", "priority": 4, "match": {"header": {"x-tier": "gold"}}, "split": {"b3": 1}},
        {"name": "session", "priority": 3, "match": {"cookie": {"sid": "*"}},
         "split": {"b1": 1, "b2": 1, "b3": 1}, "sticky": "sid"},
        {"name": "rest", "priority": 0, "match": {}, "split": {"b1": 1}},
    ]
    assert tb.admin("PUT", "/rules", doc)[0] == 200
    pt.wait_until(lambda: tb.admin("GET", "/rules")[1] == doc, 2, what="the new rules")
    got = tb.client_run(["get", "--requests", "4", "--path", "/obj/20000"])
    assert got["backends"] == {"b2": 4}
    got = tb.client_run(["get", "--requests", "4", "--header", "X-Tier: gold\r\n"])
    assert got["backends"] == {"b3": 4}
    got = tb.client_run(["get", "--requests", "4"])
    assert got["backends"] == {"b1": 4}
    for sid in ("alpha", "beta", "gamma"):
        got = tb.client_run(["get", "--requests", "6", "--header", f"Cookie: sid={sid}\r\n"])
        assert len(got["backends"]) == 1 and sum(got["backends"].values()) == 6, got
    # A bad document is refused with the field named, and changes nothing.
    bad = dict(doc, rules=doc["rules"] + [{"name": "x", "priority": 1, "split": {"b9": 1}}])
    status, body = tb.admin("PUT", "/rules", bad)
    assert status == 400 and body["error"].startswith("rules[4].split.b9: unknown backend")
    assert tb.admin("GET", "/rules")[1] == doc
    assert tb.admin("PUT", "/rules", rules_with_pin())[0] == 200


HYBRIDLBD_JAR = os.path.join(pt.SMUX, "..", "app", "standalone", "target", "hybridlbd.jar")


def test_rules_pushed_by_the_controller_choose_the_backend(tb, tmp_path):
    """The controller's Prism hand-off code (PrismHandoff, through hybridlb-prism-sync in the
    front end's namespace, where its admin API listens) validates a VIP with a Prism hand-off,
    pushes its rules, and a request reaches the backend the rule selects."""
    assert os.path.exists(HYBRIDLBD_JAR), "build it first: mvn -B -q -pl app/standalone -am package -DskipTests"
    prism = pt.default_rules(N_BACKENDS)
    prism["rules"] = [
        {"name": "big", "priority": 2, "match": {"url": "/obj/3????"}, "split": {"b3": 1}},
        {"name": "gold", "priority": 1, "match": {"header": {"x-tier": "gold"}}, "split": {"b2": 1}},
        {"name": "rest", "priority": 0, "match": {}, "split": {"b1": 1}},
    ]
    vip = {"vip": pt.VIP, "aggregate": "10.210.0.0/24",
           "ports": [{"proto": "tcp", "port": pt.VIP_PORT, "dips": [{"ip": pt.FE_IP}]}],
           "prism": {"frontends": [{"ip": pt.FE_IP, "admin": f"http://127.0.0.1:{pt.ADMIN_PORT}"}], **prism}}
    path = tmp_path / "vips.json"
    path.write_text(json.dumps({"vips": [vip]}))
    sync = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", HYBRIDLBD_JAR,
            "org.hybridlb.standalone.PrismSync", "--vips", str(path)]
    try:
        r = tb.fe.run(sync, check=False, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        assert re.search(rf"{re.escape(pt.FE_IP)}\s+in-sync\s+1\s", r.stdout), r.stdout
        pt.wait_until(lambda: tb.admin("GET", "/rules")[1] == prism, 2, what="the pushed rules in force")
        assert tb.client_run(["get", "--requests", "3", "--path", "/obj/30000"])["backends"] == {"b3": 3}
        assert tb.client_run(["get", "--requests", "3", "--header", "X-Tier: gold\r\n"])["backends"] == {"b2": 3}
        assert tb.client_run(["get", "--requests", "3"])["backends"] == {"b1": 3}
        # In force already: a second round pushes nothing.
        r = tb.fe.run(sync, check=False, timeout=60)
        assert r.returncode == 0 and re.search(rf"{re.escape(pt.FE_IP)}\s+in-sync\s+0\s", r.stdout), r.stdout
        # A rule naming an unknown backend: refused naming the field, nothing pushed.
        bad = json.loads(json.dumps(vip))
        bad["prism"]["rules"][1]["split"] = {"b9": 1}
        path.write_text(json.dumps({"vips": [bad]}))
        r = tb.fe.run(sync, check=False, timeout=60)
        assert r.returncode == 2 and "/vips/0/prism/rules/1/split/b9: unknown backend 'b9'" in r.stderr, r.stderr
        assert tb.admin("GET", "/rules")[1] == prism
    finally:
        assert tb.admin("PUT", "/rules", rules_with_pin())[0] == 200


def test_the_controller_pushes_over_mutual_tls(tb, tmp_path):
    """Off loopback the admin API is HTTPS with the agent's mutual TLS: the controller's client
    certificate may push the rules, a client without one may read but not write."""
    certs = pt.tl.make_certs(str(tmp_path / "tls"), ("server", "fe", "--ip", pt.FE_IP), ("client", "ctl"))
    port = pt.ADMIN_PORT + 43
    rules_file = tmp_path / "start-rules.json"
    rules_file.write_text(json.dumps(pt.default_rules(N_BACKENDS)))
    fe = tb.start(tb.fe, [sys.executable, os.path.join(pt.PRISM, "frontend", "prism_fe.py"),
                          "--listen", f"{pt.VIP}:{pt.VIP_PORT + 1}", "--rules", str(rules_file),
                          "--prism-pin-dir", tb.bpffs, "--admin", f"{pt.FE_IP}:{port}",
                          "--tls-cert", f"{certs}/fe.pem", "--tls-key", f"{certs}/fe.key", "--tls-ca", f"{certs}/ca.pem"])
    try:
        prism = pt.default_rules(N_BACKENDS)
        prism["rules"][0]["split"] = {"b2": 1}
        vip = {"vip": pt.VIP, "aggregate": "10.210.0.0/24",
               "ports": [{"proto": "tcp", "port": pt.VIP_PORT + 1, "dips": [{"ip": pt.FE_IP}]}],
               "prism": {"frontends": [{"ip": pt.FE_IP, "admin": f"https://{pt.FE_IP}:{port}"}], **prism}}
        path = tmp_path / "vips.json"
        path.write_text(json.dumps({"vips": [vip]}))
        sync = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", HYBRIDLBD_JAR,
                "org.hybridlb.standalone.PrismSync", "--vips", str(path), "--ca", f"{certs}/ca.pem"]
        code = ("import json,ssl,sys,urllib.request,urllib.error\n"
                "ctx=ssl.create_default_context(cafile=sys.argv[2])\n"
                "req=urllib.request.Request(sys.argv[1],method=sys.argv[3],data=sys.argv[4].encode() or None)\n"
                "try:\n r=urllib.request.urlopen(req,timeout=5,context=ctx); print(r.status); print(r.read().decode())\n"
                "except urllib.error.HTTPError as e:\n print(e.code); print(e.read().decode())\n")

        def admin(method, body=""):
            out = tb.fe.run([sys.executable, "-c", code, f"https://{pt.FE_IP}:{port}/rules",
                             f"{certs}/ca.pem", method, body], check=False).stdout
            status, _, rest = out.partition("\n")
            return int(status or 0), json.loads(rest) if rest.strip() else None

        pt.wait_until(lambda: admin("GET")[0] == 200, 10, what="the front end's HTTPS admin API")
        r = tb.fe.run(sync, check=False, timeout=60)
        assert r.returncode == 1 and "refused" in r.stdout and "client certificate" in r.stdout, r.stdout + r.stderr
        assert admin("GET")[1] == pt.default_rules(N_BACKENDS), "without a client certificate nothing changed"
        assert admin("PUT", json.dumps(prism))[0] == 401
        r = tb.fe.run(sync + ["--client-cert", f"{certs}/ctl.p12"], check=False, timeout=60)
        assert r.returncode == 0 and re.search(rf"{re.escape(pt.FE_IP)}\s+in-sync\s+1\s", r.stdout), r.stdout + r.stderr
        pt.wait_until(lambda: admin("GET")[1] == prism, 2, what="the rules pushed over mutual TLS")
    finally:
        pt.tl.stop_pid(fe.pid)
        tb.procs.remove((tb.fe, fe))


@pytest.fixture(scope="module")
def tb_fabric():
    bed = pt.Testbed(N_BACKENDS, rules=rules_with_pin(), fe_args=["--handoff-timeout", "5"], steering="fabric")
    yield bed
    bed.close()


def test_fabric_steering_10000_requests_over_100_connections(tb_fabric):
    """Mode b, with the checks of mode a; and the client's packets went to the
    backends through the mux's pins, not through the front-end host."""
    before = tb_fabric.fe_stats()["steering"]
    check_10000_requests_over_100_connections(tb_fabric)
    st = pt.wait_until(lambda: (lambda s: s if s["pinned"] == 0 else None)(tb_fabric.fe_stats()["steering"]),
                       10, what="every pin released")
    assert st["mode"] == "fabric"
    assert st["pins"] - before["pins"] >= 10000
    assert st["unpins"] - before["unpins"] == st["pins"] - before["pins"], st
    assert st["pin_failures"] == 0
    # Mode a re-encapsulates every client packet of a handed-off connection at the
    # front-end host (>= one ACK per response); here only stragglers get there.
    assert st["forwarded"] - before["forwarded"] < 1000, st


@pytest.fixture(scope="module")
def tb_smux():
    bed = pt.Testbed(N_BACKENDS, rules=rules_with_pin(), fe_args=["--handoff-timeout", "5"], steering="fabric",
                     mux="smux")
    yield bed
    bed.close()


@pytest.fixture(scope="module")
def tb_smux_agent():
    bed = pt.Testbed(N_BACKENDS, fe_args=["--handoff-timeout", "5"], steering="agent", mux="smux")
    yield bed
    bed.close()


def test_agent_steering_of_2mb_responses_through_a_real_smux(tb_smux_agent):
    """Mode a with hlb-smux as the mux: the SMux hashes the VIP to the front end, whose
    host's agent re-encapsulates the client's packets of a handed-off connection to its
    backend. 2 MB responses (the bandwidth case): every one served, no RST."""
    cap = capture.Capture(tb_smux_agent)
    try:
        res = h2load(tb_smux_agent, 60, 10, path="/obj/2097152", timeout=90)
    finally:
        cap.stop()
    assert res["succeeded"] == 60 and res["failed"] == res["errored"] == res["timeout"] == 0, res
    assert cap.resets_to_client() == 0
    assert tb_smux_agent.fe_stats()["handoffs"] >= 60


def test_fabric_steering_through_a_real_smux(tb_smux):
    """Mode b with hlb-smux as the mux: it hashes the VIP to the front end and holds a pin
    per hand-off in its pin table (POST /pins, answered once its worker uses it): every
    request served, no RST, continuity on the capture, every pin put and removed on the
    SMux, the client's packets of handed-off connections sent by the pins."""
    before = tb_smux.fe_stats()["steering"]
    s0 = tb_smux.smux_api("GET", "/stats")[1]["pins"]
    check_10000_requests_over_100_connections(tb_smux, 2000, 20)
    st = pt.wait_until(lambda: (lambda s: s if s["pinned"] == 0 else None)(tb_smux.fe_stats()["steering"]),
                       10, what="every pin released")
    pins = st["pins"] - before["pins"]
    assert pins >= 2000 and st["unpins"] - before["unpins"] == pins and st["pin_failures"] == 0, st
    s1 = tb_smux.smux_api("GET", "/stats")[1]["pins"]
    assert s1["count"] == 0 and s1["changes"] - s0["changes"] == 2 * pins, (s0, s1, pins)
    assert s1["packets"] > s0["packets"], (s0, s1)
    assert st["forwarded"] - before["forwarded"] < pins // 10, st


def test_fabric_steering_client_fin_and_pipelining(tb_fabric):
    out = tb_fabric.client_run(["pipeline", "--count", "8", "--path", "/obj/20000"])
    assert [r["status"] for r in out["responses"]] == [200] * 8
    assert all(r["ok"] and r["len"] == 20000 for r in out["responses"])


def test_fabric_steering_with_the_controller_down_answers_503(tb_fabric):
    """No pin can be installed (the controller does not answer): the connection is
    not handed off, the front end answers 503 itself, and once the controller is
    back the next connection is served."""
    # a connection an earlier test closed at its backend keeps its pin for --closed-linger (2 s)
    deadline = time.monotonic() + 10
    while tb_fabric.fe_stats()["steering"]["pinned"] and time.monotonic() < deadline:
        time.sleep(0.2)
    before = tb_fabric.fe_stats()["steering"]
    assert before["pinned"] == 0, before
    tb_fabric.stop_pins()
    try:
        out = tb_fabric.client_run(["get", "--no-check"])
        assert out["bad"] == 1 and out["errors"] == 0, out   # an answer (503), no reset, no hang
        st = tb_fabric.fe_stats()["steering"]
        assert st["pin_failures"] > before["pin_failures"]
        assert st["pinned"] == 0
    finally:
        tb_fabric.start_pins()
    out = tb_fabric.client_run(["get", "--requests", "5"])
    assert out["ok"] == 5, out


# ------------------------------------------------------------------ mode c: cookies

sys.path.insert(0, os.path.join(pt.SMUX, "..", "p4", "model"))
import cheetah_cookie as cc  # noqa: E402


@pytest.fixture(scope="module")
def tb_cookie():
    bed = pt.Testbed(N_BACKENDS, rules=rules_with_pin(), fe_args=["--handoff-timeout", "5"], steering="cookie")
    yield bed
    bed.close()


def fe_warnings(tb, n=8):
    """The front end's first warnings and errors (its log), for a failure's message."""
    with open(os.path.join(tb.run_dir, "fe.log")) as f:
        return [line.strip() for line in f if '"warn"' in line or '"error"' in line][:n]


def smux_dip_packets(tb):
    """Packets the SMux sent to each DIP of the VIP so far."""
    services = tb.smux_api("GET", "/stats")[1]["services"]
    return {d["ip"]: d["packets"] for s in services if s["vip"] == pt.VIP for d in s["dips"]}


def echoed_servers(cap):
    """Server id -> client segments whose TSecr (the client's echo) names it, decoded
    with the VIP's key as a mux does (COOKIE-SPEC §4)."""
    key = cc.parse_key(pt.COOKIE_KEY)
    ids = collections.Counter()
    for segs in cap.timestamps().values():
        for from_client, _tsval, tsecr, port in segs:
            if from_client and tsecr:
                tup = cc.tuple_bytes(pt.VIP, pt.VIP_PORT, pt.CLIENT_IP, port)
                ids[cc.decode_ident("siphash13", key, tup, cc.cookie_of(tsecr))] += 1
    return ids


def test_cookie_steering_through_a_real_smux(tb_cookie):
    """Mode c: 2,000 requests over 20 persistent connections, each handed to a backend;
    the backend's host agent writes the backend's own server id into the cookie and the
    SMux (a cheetah VIP: the front end takes the SYNs, the backends are weight-0 servers
    of its pool) sends the client's packets to the backend by the echo, with no pin and
    no state per flow.  Every request served, no RST, continuity, no server TSval the
    client's PAWS check would drop, every server's id echoed by the client, the SMux
    delivering straight to every backend, no cookie it could not place."""
    tb = tb_cookie
    fwd0 = tb.fe_stats()["steering"]["forwarded"]
    dips0 = smux_dip_packets(tb)
    ck0 = tb.smux_api("GET", "/stats")[1]["cookie"]
    cap = capture.Capture(tb)
    try:
        res = h2load(tb, 2000, 20)
    finally:
        cap.stop()
    try:
        assert res == {"done": 2000, "succeeded": 2000, "failed": 0, "errored": 0, "timeout": 0, "2xx": 2000}, \
            (res, fe_warnings(tb), cap.paws_regressions()[1][:5])
        assert cap.resets_to_client() == 0
        n, bad = cap.continuity()
        assert n > 8000 and bad == [], bad[:10]
        n, paws = cap.paws_regressions()
        assert n > 4000 and paws == [], paws[:10]
        ids = echoed_servers(cap)
        backend_ids = [pt.BACKEND_ID_BASE + i for i in range(1, N_BACKENDS + 1)]
        # The client echoed each backend's own id (its host agent wrote it), and nothing
        # that names no server of the VIP.
        for sid in backend_ids:
            assert ids[sid] >= 300, ids
        assert set(ids) <= {pt.FE_ID, *backend_ids}, ids
    finally:
        cap.close()
    dips1 = smux_dip_packets(tb)
    ck1 = tb.smux_api("GET", "/stats")[1]["cookie"]
    # The SMux placed the client's packets by the cookie, straight to the backends.
    for i in range(1, N_BACKENDS + 1):
        assert dips1.get(pt.backend_ip(i), 0) - dips0.get(pt.backend_ip(i), 0) >= 300, (dips0, dips1)
    assert ck1["decoded"] - ck0["decoded"] > 4000, (ck0, ck1)
    assert ck1["invalid"] == ck0["invalid"], (ck0, ck1)
    st = tb.fe_stats()
    assert st["steering"]["mode"] == "cookie" and st["steering"]["server_id"] == pt.FE_ID
    # The front-end host re-encapsulated only stragglers (mode a: every client packet of a
    # handed-off connection, more than two per hand-off).
    assert st["steering"]["forwarded"] - fwd0 < 1000, st


def test_cookie_steering_pipelined_requests(tb_cookie):
    out = tb_cookie.client_run(["pipeline", "--count", "8", "--path", "/obj/20000"])
    assert [r["status"] for r in out["responses"]] == [200] * 8
    assert all(r["ok"] and r["len"] == 20000 for r in out["responses"])
    assert len({r["backend"] for r in out["responses"]}) == N_BACKENDS


def test_cookie_steering_with_1pct_loss(tb_cookie):
    """Mode c under 1% random loss both ways on the front end's link and on every backend's
    (the client's packets reach the backends straight from the SMux): lost segments are
    resent with the new owner's clock and cookie, the client's PAWS check never drops one,
    every request served, no RST, continuity."""
    tb = tb_cookie
    links = [(ns, ifname, d) for ns, ifname in [(tb.fe, tb.if_fe)] +
             [(tb.backend_ns[i], tb.if_backend[i]) for i in tb.backend_ns] for d in ("egress", "ingress")]
    res, cap = h2load_with_loss(tb, links)
    try:
        assert res["succeeded"] == 2000 and res["failed"] == res["errored"] == 0, (res, fe_warnings(tb))
        assert cap.resets_to_client() == 0
        assert cap.continuity(loss_before_capture=True)[1] == []
        n, paws = cap.paws_regressions()
        assert n > 4000 and paws == [], paws[:10]
    finally:
        cap.close()
