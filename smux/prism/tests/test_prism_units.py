"""Unit tests without namespaces: the rule engine (validation naming the field,
priorities, backup rules, weighted round robin, least-loaded, sticky cookies),
the control wire constants against include/hlb_prism.h, and the TCP state
encoding's checks (through libhlbprism.so)."""
import ctypes
import os
import re
import socket
import struct
import sys

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
PRISM = os.path.dirname(TESTS)
sys.path.insert(0, os.path.join(PRISM, "frontend"))
sys.path.insert(0, os.path.join(PRISM, "..", "..", "p4", "model"))
import cheetah_cookie as cc  # noqa: E402  COOKIE-SPEC's model: the wire TSval, s32
import handoff  # noqa: E402
import request  # noqa: E402
import rules  # noqa: E402
import wire  # noqa: E402


class FakeLink:
    def __init__(self, up=True, owned=0):
        self.up, self.owned = up, owned


def ruleset(rule_list, n=3):
    rs = rules.validate({"backends": {f"b{i}": {"address": f"10.0.0.{i}", "controlPort": 9500}
                                      for i in range(1, n + 1)}, "rules": rule_list})
    for b in rs.backends.values():
        b.link = FakeLink()
    return rs


def req(path="/", headers=(), method="GET"):
    return rules.Request(method, path, list(headers))


def pick(rs, r):
    rule, b = rs.choose(r)
    return (rule.name, b.name) if b else (None, None)


@pytest.mark.parametrize("doc,error", [
    ({"rules": []}, "backends: required"),
    ({"backends": {"b1": {"address": "10.0.0.300", "controlPort": 1}}, "rules": [{}]},
     "backends.b1.address: not an IPv4 address"),
    ({"backends": {"b1": {"address": "10.0.0.1", "controlPort": 0}}, "rules": [{}]},
     "backends.b1.controlPort: expected 1..65535"),
    ({"backends": {"b1": {"address": "10.0.0.1", "controlPort": 1, "x": 1}}, "rules": [{}]},
     "backends.b1.x: unknown field"),
    ({"backends": {"b1": {"address": "10.0.0.1", "controlPort": 1}}, "rules": []},
     "rules: expected a non-empty list"),
    ({"backends": {"b1": {"address": "10.0.0.1", "controlPort": 1}},
      "rules": [{"name": "r", "priority": "high", "split": {"b1": 1}}]},
     "rules[0].priority: expected an integer"),
    ({"backends": {"b1": {"address": "10.0.0.1", "controlPort": 1}},
      "rules": [{"name": "r", "priority": 1, "split": {"b2": 1}}]},
     "rules[0].split.b2: unknown backend 'b2'"),
    ({"backends": {"b1": {"address": "10.0.0.1", "controlPort": 1}},
      "rules": [{"name": "r", "priority": 1, "split": {"b1": 0}}]},
     "rules[0].split.b1: expected a weight > 0"),
    ({"backends": {"b1": {"address": "10.0.0.1", "controlPort": 1}},
      "rules": [{"name": "r", "priority": 1, "split": {"b1": 1}, "balance": "random"}]},
     "rules[0].balance: expected one of round-robin, least-loaded"),
    ({"backends": {"b1": {"address": "10.0.0.1", "controlPort": 1}},
      "rules": [{"name": "r", "priority": 1, "split": {"b1": 1}, "match": {"uri": "/x"}}]},
     "rules[0].match.uri: unknown field"),
    ({"backends": {"b1": {"address": "10.0.0.1", "controlPort": 1}},
      "rules": [{"name": "r", "priority": 1, "split": {"b1": 1}, "match": {"header": {"h": 3}}}]},
     "rules[0].match.header.h: expected a string glob"),
    ({"backends": {"b1": {"address": "10.0.0.1", "controlPort": 1}},
      "rules": [{"name": "r", "priority": 1, "split": {"b1": 1}},
                {"name": "r", "priority": 2, "split": {"b1": 1}}]},
     "rules[1].name: duplicate rule name 'r'"),
    ({"backends": {"b1": {"address": "10.0.0.1", "controlPort": 1}},
      "rules": [{"priority": 1, "split": {"b1": 1}}]},
     "rules[0].name: required"),
])
def test_validation_names_the_field(doc, error):
    with pytest.raises(rules.RuleError) as e:
        rules.validate(doc)
    assert str(e.value).startswith(error), str(e.value)


def test_priority_then_document_order_and_backup_rules():
    rs = ruleset([
        {"name": "css", "priority": 3, "match": {"url": "*.css"}, "split": {"b1": 1}},
        {"name": "css-backup", "priority": 2, "match": {"url": "*.css"}, "split": {"b3": 1}},
        {"name": "jpg", "priority": 3, "match": {"url": "*.jpg"}, "split": {"b2": 1}},
        {"name": "rest", "priority": 0, "match": {}, "split": {"b3": 1}},
    ])
    assert pick(rs, req("/a/b.css")) == ("css", "b1")
    assert pick(rs, req("/x.jpg?size=2")) == ("jpg", "b2")   # the query is not the path
    assert pick(rs, req("/index.html")) == ("rest", "b3")
    rs.backends["b1"].link.up = False                           # primary down: its backup
    assert pick(rs, req("/a/b.css")) == ("css-backup", "b3")
    rs.backends["b3"].link.up = False
    assert pick(rs, req("/a/b.css")) == (None, None)


def test_match_host_method_header_cookie():
    rs = ruleset([{"name": "api", "priority": 1,
                   "match": {"host": "api.*", "method": "GET", "header": {"X-Tier": "gold*"},
                             "cookie": {"sid": "s-*"}}, "split": {"b1": 1}},
                  {"name": "rest", "priority": 0, "match": {}, "split": {"b2": 1}}])
    good = [("Host", "API.example.com:8080"), ("x-tier", "golden"), ("Cookie", "a=1; sid=s-42")]
    assert pick(rs, req("/", good)) == ("api", "b1")
    assert pick(rs, req("/", good, method="POST")) == ("rest", "b2")
    assert pick(rs, req("/", good[:2])) == ("rest", "b2")            # no cookie
    assert pick(rs, req("/", [good[0], ("x-tier", "silver"), good[2]])) == ("rest", "b2")
    assert pick(rs, req("/", [("Host", "www.example.com")] + good[1:])) == ("rest", "b2")


def test_weighted_round_robin_follows_the_weights_exactly():
    rs = ruleset([{"name": "w", "priority": 0, "split": {"b1": 3, "b2": 1}}])
    picks = [pick(rs, req())[1] for _ in range(400)]
    assert picks.count("b1") == 300 and picks.count("b2") == 100
    assert "b1b1b1b1" not in "".join(picks)   # smooth: b2 is spread out


def test_least_loaded():
    rs = ruleset([{"name": "ll", "priority": 0, "split": {"b1": 1, "b2": 2, "b3": 1},
                   "balance": "least-loaded"}])
    rs.backends["b1"].link.owned, rs.backends["b2"].link.owned, rs.backends["b3"].link.owned = 5, 2, 2
    assert pick(rs, req())[1] == "b2"          # fewest held; the tie goes to the heavier weight
    rs.backends["b2"].link.owned = 7
    assert pick(rs, req())[1] == "b3"


def test_sticky_cookie_keeps_a_session_on_its_backend_while_it_lives():
    rs = ruleset([{"name": "s", "priority": 0, "split": {"b1": 1, "b2": 1, "b3": 1},
                   "sticky": "sid"}])
    first = {sid: pick(rs, req("/", [("Cookie", f"sid={sid}")]))[1] for sid in "abcdef"}
    assert len(set(first.values())) == 3        # new sessions are spread
    for _ in range(5):
        for sid, b in first.items():
            assert pick(rs, req("/", [("Cookie", f"sid={sid}")]))[1] == b
    victim = first["a"]
    rs.backends[victim].link.up = False
    moved = pick(rs, req("/", [("Cookie", "sid=a")]))[1]
    assert moved != victim
    rs.backends[victim].link.up = True
    assert pick(rs, req("/", [("Cookie", "sid=a")]))[1] == moved   # it stays where it went


def header_defines():
    with open(os.path.join(PRISM, "include", "hlb_prism.h")) as f:
        text = f.read()
    defines = dict(re.findall(r"#define (PRISM_\w+) \(?([0-9a-fx]+)u?", text))
    enum = re.search(r"enum prism_msg \{(.*?)\};", text, re.S).group(1)
    msgs = dict(re.findall(r"PRISM_MSG_(\w+) = (\d+)", enum))
    return defines, msgs


def test_wire_constants_match_the_header():
    defines, msgs = header_defines()
    assert int(defines["PRISM_WIRE_MAGIC"], 16) == wire.MAGIC
    assert int(defines["PRISM_WIRE_VERSION"]) == wire.VERSION
    assert int(defines["PRISM_WIRE_HDR_LEN"]) == wire.HDR.size
    assert {n: int(v) for n, v in msgs.items()} == {v: k for k, v in wire.NAMES.items()}


def test_wire_framing_and_refusals():
    msgs, rest = wire.unpack_all(wire.pack(wire.GO, 7) + wire.pack(wire.RETURN, 8, b"xyz") + b"\x50")
    assert msgs == [(wire.GO, 7, b""), (wire.RETURN, 8, b"xyz")] and rest == b"\x50"
    with pytest.raises(wire.WireError, match="bad magic"):
        wire.unpack_all(b"\0" * 16)
    with pytest.raises(wire.WireError, match="unknown message type 99"):
        wire.unpack_all(wire.HDR.pack(wire.MAGIC, wire.VERSION, 99, 1, 0))


@pytest.fixture(scope="module")
def exported():
    """A real exported state: a loopback connection with bytes in both queues."""
    lib = handoff.Lib()
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen()
    c = socket.create_connection(ls.getsockname())
    s, _ = ls.accept()
    c.sendall(b"GET / HTTP/1.1\r\n\r\nnext")
    assert s.recv(4) == b"GET "
    blob = lib.export(s, prefix=b"GET ")
    lib.release(s)
    yield lib, blob, c
    c.close()
    ls.close()


def test_export_import_keeps_the_stream(exported):
    lib, blob, c = exported
    s = lib.import_(blob)
    try:
        s.settimeout(2)
        # The prefix the application had read, then the receive queue, in order.
        assert s.recv(100) == b"GET / HTTP/1.1\r\n\r\nnext"
        s.sendall(b"reply")
        c.settimeout(2)
        assert c.recv(100) == b"reply"
        blob2 = lib.export(s)
        lib.release(s)
    except Exception:
        s.close()
        raise
    s2 = lib.import_(blob2)
    s2.sendall(b"again")
    assert c.recv(100) == b"again"
    lib.export(s2)
    lib.release(s2)


@pytest.mark.parametrize("mutate,error", [
    (lambda b: b[:60], "state: shorter than its fixed part"),
    (lambda b: b"XXXX" + b[4:], "state.magic: not a Prism TCP state"),
    (lambda b: b[:4] + b"\x09" + b[5:], "state.version: unsupported version"),
    (lambda b: b[:5] + b"\x40" + b[6:], "state.options: unknown option bits"),
    (lambda b: b[:6] + b"\x0f" + b[7:], "state.wscale: window scale above 14"),
    (lambda b: b[:8] + b"\x00\x10" + b[10:], "state.mss: below 64"),
    (lambda b: b[:12] + b"\0\0\0\0" + b[16:], "state.tuple: zero address or port"),
    (lambda b: b[:60] + struct.pack("!I", 1 << 30) + b[64:], "state.unsent_len: larger than sendq_len"),
    (lambda b: b + b"!", "state.queues: sendq_len + recvq_len differ"),
    (lambda b: b[:5] + bytes([b[5] & ~1 | 8]) + b[6:], "state.options: cookies without timestamps"),
    (lambda b: b[:5] + bytes([b[5] | 8]) + b[6:], "state.queues: sendq_len + recvq_len differ"),
])
def test_import_refuses_a_bad_state_naming_the_field(exported, mutate, error):
    lib, blob, _ = exported
    with pytest.raises(handoff.HandoffError) as e:
        lib.import_(mutate(blob))
    assert str(e.value).startswith(error) or error in str(e.value), str(e.value)


def test_request_parsing_finds_the_first_whole_request():
    r = request.parse(b"GET /a/b.css?x=1 HTTP/1.1\r\nHost: Shop:8080\r\nCookie: sid=42\r\n\r\n"
                      b"GET /next HTTP/1.1\r\nHost: other\r\nX-Second: 1\r\n\r\n")
    assert (r.method, r.path, r.host, r.cookies) == ("GET", "/a/b.css", "shop", {"sid": "42"})
    assert r.headers == {"host": "Shop:8080", "cookie": "sid=42"}   # not the pipelined one's
    assert request.parse(b"GET /a HTTP/1.1\r\nHost: x\r\n") is None              # head not ended
    assert request.parse(b"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nab") is None
    assert request.parse(b"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nabcde").method == "POST"
    assert request.parse(b"GET http://h/abs?q HTTP/1.1\r\nHost: h\r\n\r\n").path == "/abs"
    # A bad pipelined request after a whole one is that request's own hand-off's.
    assert request.parse(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nBAD BAD\r\n\r\n").path == "/"


@pytest.mark.parametrize("data,status", [
    (b"GARBAGE\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\n\r\n", 400),                                # HTTP/1.1 without Host
    (b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * (request.MAX_HEAD + 1), 431),
])
def test_request_parsing_refuses_bad_requests(data, status):
    with pytest.raises(request.BadRequest) as e:
        request.parse(data)
    assert e.value.status == status


def test_xdp_steering_through_bpf_prog_test_run():
    """The agent's XDP object with the steering map: decapsulates flows without an
    entry, drops locked ones, re-encapsulates forwarded ones; on a backend host drops
    segments of flows without a ready socket (none, a listener, repair mode) and
    delivers the others (tests/steer_test.c checks each output byte by byte and the
    counters)."""
    import json
    import subprocess
    build = handoff.DEFAULT_BUILD
    agent_build = os.environ.get("HLB_AGENT_BUILD",
                                 os.path.join(os.path.dirname(build), "build-agent"))
    r = subprocess.run([os.path.join(build, "prism-steer-test"),
                        os.path.join(agent_build, "xdp_decap.bpf.o"), "--repeat", "10",
                        "--rounds", "3"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["checks_failed"] == 0


def test_the_admin_api_stays_on_loopback(tmp_path):
    """The admin API (PUT /rules) has no authentication: another address is refused."""
    import subprocess
    rules_file = tmp_path / "rules.json"
    rules_file.write_text('{"backends": {"b1": {"address": "127.0.0.1", "controlPort": 9500}}, '
                          '"rules": [{"name": "all", "match": {}, "split": {"b1": 1}}]}')
    fe = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "frontend", "prism_fe.py")
    r = subprocess.run([sys.executable, fe, "--listen", "127.0.0.1:8080", "--rules", str(rules_file),
                        "--prism-pin-dir", str(tmp_path), "--admin", "0.0.0.0:9400"], capture_output=True, text=True)
    assert r.returncode == 2 and "--admin: 0.0.0.0 is not a loopback address" in r.stderr, r.stderr


def test_the_controllers_vip_schema_describes_this_rule_format():
    """The controller validates a Prism VIP's rules with the VIP schema's prism definitions
    and pushes them here as they are: its fields, enums and limits are rules.py's."""
    import json
    path = os.path.join(PRISM, "..", "..", "solver", "src", "main", "resources", "org", "hybridlb",
                        "schemas", "vips.schema.json")
    with open(path) as f:
        defs = json.load(f)["$defs"]
    # frontends and steering are the controller's; backends and rules the front end's document
    assert set(defs["prism"]["properties"]) - {"frontends", "steering"} == {"backends", "rules"}
    # the VIP's steering mode is the front end's --steering choice
    import prism_fe
    steer_opt = next(a for a in prism_fe.parser()._actions if a.dest == "steering")
    assert tuple(defs["prism"]["properties"]["steering"]["enum"]) == tuple(steer_opt.choices)
    assert defs["prism"]["properties"]["steering"]["default"] == steer_opt.default
    assert tuple(defs["prismRule"]["properties"]) == rules.RULE_FIELDS
    assert set(defs["prismRule"]["required"]) == {"name", "priority", "split"}
    assert tuple(defs["prismMatch"]["properties"]) == rules.MATCH_FIELDS
    assert tuple(defs["prismBackend"]["properties"]) == rules.BACKEND_FIELDS
    assert set(defs["prismBackend"]["required"]) == set(rules.BACKEND_FIELDS)
    assert tuple(defs["prismRule"]["properties"]["balance"]["enum"]) == rules.BALANCES
    assert defs["prism"]["properties"]["rules"]["maxItems"] == rules.MAX_RULES
    # A document with every field, as the controller pushes it.
    rules.validate({"backends": {"b1": {"address": "10.0.0.1", "controlPort": 9500}},
                    "rules": [{"name": "r", "priority": 0, "match": {"cookie": {"sid": "*"}},
                               "split": {"b1": 1}, "sticky": "sid", "balance": "least-loaded"}]})


# ---------------------------------------------------------------- fabric steering (mode b)

class _PinApi:
    """The controller's pin API on loopback: records each call; answers as told."""

    def __init__(self, log):
        import http.server
        import json as js
        import threading
        self.log, self.status = log, 200
        api = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def answer(self, what):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                api.log.append((what, self.path, js.loads(body) if body else None))
                doc = ({"vip": "10.210.0.10"} if api.status == 200 else
                       {"error": "invalid request", "field": "/backend", "reason": "unknown backend 'b9'"})
                out = js.dumps(doc).encode()
                self.send_response(api.status)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def do_POST(self):
                self.answer("pin")

            def do_DELETE(self):
                self.answer("unpin")

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hybridlb/v1"

    def close(self):
        self.server.shutdown()


class _Map:
    """SteerMap's calls, recorded in the same log as the pin API's."""

    def __init__(self, log):
        self.log = log

    def entry(self, flow, dip):
        self.log.append(("map-entry", flow, dip))
        return ("entry", flow, dip)

    def lock(self, flow):
        self.log.append(("map-lock", flow))

    def forward(self, flow, dip):
        self.log.append(("map-forward", flow, dip))

    def delete(self, flow):
        self.log.append(("map-delete", flow))

    def counters(self):
        return {}

    def close(self):
        pass


@pytest.fixture
def fabric(monkeypatch):
    import steering
    log = []
    api = _PinApi(log)
    monkeypatch.setattr(handoff, "SteerMap", lambda lib, pin_dir: _Map(log))
    st = steering.FabricSteering(None, "/unused", steering.ControllerPins(api.url, "10.210.0.10"),
                                 lambda address: {"10.0.0.1": "b1"}[address])
    yield st, api, log
    st.close()
    api.close()


FLOW = ("10.9.0.7", 40001, "10.210.0.10", 80)


class _Backend:
    address = "10.0.0.1"


def test_fabric_steering_pins_before_the_state_is_sent_and_unpins_before_locked(fabric):
    st, api, log = fabric
    entry = st.handoff_entry(FLOW, _Backend())
    # The pin is acknowledged before the front end gets the entry its one-call
    # hand-off writes (and so before the backend has the state).
    assert log[0] == ("pin", "/hybridlb/v1/prism/10.210.0.10/pins",
                      {"client": "10.9.0.7", "clientPort": 40001, "vipPort": 80, "backend": "b1"})
    assert log[1] == ("map-entry", FLOW, "10.0.0.1") and entry[0] == "entry"
    log.clear()
    st.lock(FLOW)     # RECLAIM: this host drops the flow's packets, then the pin goes
    assert [e[0] for e in log] == ["map-lock", "unpin"]
    assert log[1][1] == "/hybridlb/v1/prism/10.210.0.10/pins?client=10.9.0.7&clientPort=40001&vipPort=80"
    st.to_frontend(FLOW)
    st.forget(FLOW)   # nothing pinned any more: no second unpin
    assert [e[0] for e in log] == ["map-lock", "unpin", "map-delete", "map-delete"]
    assert st.counters()["pins"] == 1 and st.counters()["unpins"] == 1 and st.counters()["pinned"] == 0


def test_fabric_steering_refused_pin_names_the_field_and_writes_nothing(fabric):
    import steering
    st, api, log = fabric
    api.status = 400
    with pytest.raises(steering.PinRefused, match=r"400 /backend: unknown backend 'b9'"):
        st.handoff_entry(FLOW, _Backend())
    assert [e[0] for e in log] == ["pin"], "no map entry: the connection stays at the front end"
    assert st.counters()["pin_failures"] == 1 and st.counters()["pinned"] == 0


def test_fabric_steering_unreachable_controller_and_a_failed_unpin(fabric):
    import steering
    st, api, log = fabric
    st.handoff_entry(FLOW, _Backend())
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    dead = s.getsockname()[1]
    s.close()      # nothing listens there: the controller is down
    st.pins.close()
    st.pins = steering.ControllerPins(f"http://127.0.0.1:{dead}", "10.210.0.10")
    with pytest.raises(steering.PinRefused, match="controller unreachable"):
        st.lock(FLOW)
    st.forget(FLOW)   # gives the flow up: the controller's rounds collect the pin
    assert st.counters()["pinned"] == 0


COOKIE_WINDOW = 30000   # PRISM_COOKIE_WINDOW, src/prism_cookie.h


def test_cookie_clock_start_keeps_the_clients_paws_check_passing():
    """Mode c: the importer's clock start (prism_cookie_ts_start) makes every wire
    TSval it sends for the next 30,000 ticks newer than the one the client holds, as
    Linux's PAWS check sees it (drop when s32(held - TSval) > 1), whatever the two
    cookies, the clock and the held value: for 200,000 random cases and the edges
    (same cookie, cookies 0 and 0x7fff, low bits 0 and 0xffff, both version bits).
    The jump is below 2^18 ticks and keeps Linux's unit bit (bit 0)."""
    import random
    lib = handoff.Lib().lib
    lib.prism_cookie_ts_start.restype = ctypes.c_uint32
    lib.prism_cookie_ts_start.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint16]
    rnd = random.Random(21)
    cases = [(rnd.getrandbits(32), rnd.getrandbits(32), rnd.getrandbits(15)) for _ in range(200000)]
    for ts in (0, 0xfffe, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff):
        for lo in (0, 1, 0x7fff, 0x8000, 0xfffe, 0xffff):
            for v in (0, 1):
                for prev, nxt in ((0, 0), (0, 0x7fff), (0x7fff, 0), (5, 5), (5, 6), (6, 5)):
                    cases.append((ts, v << 31 | prev << 16 | lo, nxt))
    # The client holds a value the previous owner sent from the same clock.
    cases += [(ts, cc.encode_tsval(ts - rnd.randrange(0, 1000), rnd.getrandbits(15)), rnd.getrandbits(15))
              for ts in (rnd.getrandbits(32) for _ in range(50000))]
    bad = []
    for ts, seen, nxt in cases:
        start = lib.prism_cookie_ts_start(ts, seen, nxt)
        jump = (start - ts) & 0xffffffff
        ok = jump < 1 << 18 and (start & 1) == (ts & 1)
        for d in (0, 1, 2, COOKIE_WINDOW // 2, COOKIE_WINDOW - 1, COOKIE_WINDOW):
            ok = ok and cc.s32(seen - cc.encode_tsval(start + d, nxt)) < 0   # strictly newer
        if not ok:
            bad.append((hex(ts), hex(seen), hex(nxt), hex(start)))
    assert bad == [], bad[:5]


def test_hand_back_forwarding_entries_linger_then_go():
    """Mode c, a backend host's hand-back entries (src/prism_linger.h) on a real BPF hash
    map: each written FORWARD to the front end, refreshed by a later hand-back, removed
    when the flow is handed here again or once its time has passed (not a tick before),
    none past the capacity, and consistent through enough churn to rebuild the table."""
    bpf = ctypes.CDLL("libbpf.so.1", use_errno=True)
    bpf.bpf_map_create.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_uint32,
                                   ctypes.c_uint32, ctypes.c_void_p]
    fd = bpf.bpf_map_create(1, b"prism_linger_t", 12, 8, 4096, None)   # BPF_MAP_TYPE_HASH
    assert fd >= 0, ctypes.get_errno()
    lib = handoff.Lib().lib
    lib.prism_linger_new.restype = ctypes.c_void_p
    lib.prism_linger_new.argtypes = [ctypes.c_int, ctypes.c_uint64, ctypes.c_uint32]
    lib.prism_linger_forward.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_uint64]
    lib.prism_linger_take.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.prism_linger_expire.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    lib.prism_linger_count.argtypes = [ctypes.c_void_p]
    lib.prism_linger_free.argtypes = [ctypes.c_void_p]
    FE = 0x0202a8c0

    def key(i):
        return struct.pack("=IIHH", 0x0a000000 + i, 0x0a0000fe, 1024 + i, 80)

    def entry(i):
        v = ctypes.create_string_buffer(8)
        return None if bpf.bpf_map_lookup_elem(fd, key(i), v) else struct.unpack("=II", v.raw)

    lin = lib.prism_linger_new(fd, 1000, 64)
    try:
        assert lib.prism_linger_forward(lin, key(1), FE, 0) == 0
        assert entry(1) == (2, FE)                                    # PRISM_STEER_FORWARD
        assert lib.prism_linger_forward(lin, key(2), FE, 500) == 0
        assert lib.prism_linger_expire(lin, 999) == 0 and entry(1)
        assert lib.prism_linger_expire(lin, 1000) == 1 and entry(1) is None and entry(2)
        assert lib.prism_linger_forward(lin, key(2), FE, 900) == 0   # handed back again
        assert lib.prism_linger_expire(lin, 1899) == 0 and entry(2)
        assert lib.prism_linger_expire(lin, 1900) == 1 and entry(2) is None
        assert lib.prism_linger_forward(lin, key(3), FE, 0) == 0
        assert lib.prism_linger_take(lin, key(3)) == 1 and entry(3) is None
        assert lib.prism_linger_take(lin, key(3)) == 0
        assert lib.prism_linger_count(lin) == 0
        for i in range(64):
            assert lib.prism_linger_forward(lin, key(100 + i), FE, 0) == 0
        assert lib.prism_linger_forward(lin, key(999), FE, 0) == -28 and entry(999) is None   # ENOSPC
        for rnd in range(20):   # 48 of 64 churn: tombstones past a quarter of the table, rebuilt
            for i in range(16, 64):
                assert lib.prism_linger_take(lin, key(100 + i)) == 1
            for i in range(16, 64):
                assert lib.prism_linger_forward(lin, key(100 + i), FE, rnd) == 0
            assert lib.prism_linger_count(lin) == 64 and all(entry(100 + i) for i in range(16))
        assert all(entry(100 + i) for i in range(64))
        assert lib.prism_linger_expire(lin, 10_000) == 64
        assert lib.prism_linger_count(lin) == 0 and not any(entry(100 + i) for i in range(64))
    finally:
        lib.prism_linger_free(lin)
        os.close(fd)


def test_fabric_front_end_options_are_checked(capsys):
    import prism_fe
    base = ["--listen", "10.210.0.10:80", "--rules", os.devnull, "--prism-pin-dir", "/x"]
    for extra, msg in ((["--steering", "fabric"], "--controller: required"),
                       (["--steering", "fabric", "--controller", "ftp://x"], "--controller: expected"),
                       (["--controller", "http://c:8181"], "only with --steering fabric"),
                       (["--steering", "fabric", "--controller", "http://c", "--listen", "10.210.0.11:80"],
                        "--listen: with --steering fabric")):
        with pytest.raises(SystemExit):
            prism_fe.build_config(base + extra)
        assert msg in capsys.readouterr().err


def test_cookie_front_end_options_are_checked(capsys):
    import prism_fe
    base = ["--listen", "10.210.0.10:80", "--rules", os.devnull, "--prism-pin-dir", "/x"]
    for extra, msg in ((["--steering", "cookie"], "--cookie-pin-dir: required with --steering cookie"),
                       (["--cookie-pin-dir", "/y"], "--cookie-pin-dir: only with --steering cookie")):
        with pytest.raises(SystemExit):
            prism_fe.build_config(base + extra)
        assert msg in capsys.readouterr().err


def _continuity(rows, **kw):
    """capture.Capture.continuity over rows in tshark's field order (stream, src, seq,
    len, syn, fin, ack, has ack, rst), without a capture file."""
    import capture
    cap = capture.Capture.__new__(capture.Capture)
    cap.fields = lambda *names, display=None: [[str(v) for v in r] for r in rows]
    return cap.continuity(**kw)[1]


# A server stream from near the top of the sequence space: 3 segments of 100 bytes, the
# second lost before the capture and sent again at the end.
_SEQ = 0xFFFFFF80
_SEG = [(0, "vip", (_SEQ + 100 * i) & 0xFFFFFFFF, 100, 0, 0, 1, 1, 0) for i in range(3)]


def test_continuity_sees_a_skipped_byte_and_forgives_a_hole_filled_later():
    lost_then_resent = [_SEG[0], _SEG[2], _SEG[1]]
    assert _continuity(_SEG) == []
    # Without loss before the capture, a hole is a skipped byte whatever comes later.
    assert len(_continuity(lost_then_resent)) == 1
    # With it, a hole that a retransmission fills is loss; one never filled is a skip.
    assert _continuity(lost_then_resent, loss_before_capture=True) == []
    never_filled = _continuity([_SEG[0], _SEG[2]], loss_before_capture=True)
    assert never_filled == [f"stream 0 from vip: bytes {_SEQ + 100 & 0xFFFFFFFF}-"
                            f"{_SEQ + 200 & 0xFFFFFFFF} never seen"]
    # A retransmission covering part of the hole leaves the rest.
    half = (0, "vip", (_SEQ + 100) & 0xFFFFFFFF, 50, 0, 0, 1, 1, 0)
    assert len(_continuity([_SEG[0], _SEG[2], half], loss_before_capture=True)) == 1
