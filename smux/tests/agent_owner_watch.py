"""The host agent's re-reports to a new or restarted owner SMux (smux_reports.OwnerWatch,
COOKIE-SPEC §7 "Adoption"), against a stand-in SMux control API (http.server): which slots are
re-reported and when, what is sent, and how refusals are handled. The real SMux and agent
together: agent_smux_reports.py."""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "agent"))
import smux_reports  # noqa: E402

VIP = "10.200.0.10"


def ident(owner, index):
    return 1 << 14 | owner << 10 | index


class FakeSmux:
    """GET /health answers {"boot": self.boot}; POST /cheetah/adopt records the batch and
    answers what self.answer(batch) returns: (status, document); POST /cheetah/closed
    records the reports in self.closed."""

    def __init__(self):
        self.boot = "b1"
        self.batches = []
        self.closed = []
        self.answer = lambda batch: (200, {"adopted": len(batch), "held": 0, "pending": 0,
                                           "ring_full": 0, "taken": []})
        fake = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, code, doc):
                body = json.dumps(doc).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self._send(200, {"status": "ok", "boot": fake.boot})

            def do_POST(self):
                doc = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path == "/cheetah/closed":
                    fake.closed.extend(doc["closed"])
                    self._send(200, {"freed": len(doc["closed"])})
                    return
                fake.batches.append(doc["adopt"])
                self._send(*fake.answer(doc["adopt"]))

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()


def conn(cport, idt):
    return {"vip": VIP, "port": 80, "client": "10.77.0.1", "clientPort": cport, "ident": idt}


def watch(cfg, conns, live=None):
    logs = []
    if live is None:
        live = {(c["vip"], c["port"], c["client"], c["clientPort"]) for c in conns}
    w = smux_reports.OwnerWatch(lambda: cfg, lambda: list(conns), lambda *a, **k: logs.append((a, k)),
                                period_s=3600, live=lambda: live)
    w.logs = logs
    return w


def test_each_slot_gets_its_open_connections_once_per_smux_incarnation():
    a, b = FakeSmux(), FakeSmux()
    try:
        cfg = {"serverId": 7, "statefulOwners": [a.url, "http://0.0.0.2:9", b.url]}
        conns = [conn(1000, ident(0, 5)), conn(1001, ident(2, 9)), conn(1002, ident(0, 6)),
                 conn(1003, ident(1, 3)), conn(1004, ident(2, 1))]
        # 1002 closed: still in the loader's state, no socket any more
        live = {(VIP, 80, "10.77.0.1", p) for p in (1000, 1001, 1003, 1004)}
        w = watch(cfg, conns, live)
        w.check()
        assert a.batches == [[dict(conn(1000, ident(0, 5)), serverId=7)]]
        assert b.batches == [[dict(conn(1001, ident(2, 9)), serverId=7),
                              dict(conn(1004, ident(2, 1)), serverId=7)]]
        w.check()                                   # nothing changed: nothing sent
        assert len(a.batches) == 1 and len(b.batches) == 1
        b.boot = "b2"                               # slot 2's SMux restarted
        w.check()
        assert len(a.batches) == 1 and len(b.batches) == 2 and len(b.batches[1]) == 2
        cfg["statefulOwners"][0] = b.url            # slot 0 given to another SMux
        w.check()
        assert b.batches[2] == [dict(conn(1000, ident(0, 5)), serverId=7)]
        assert w.counters["adopted"] == 6 and w.counters["failed"] == 0
    finally:
        a.close()
        b.close()


def test_a_slot_moved_to_an_smux_holding_another_slot_is_re_reported_there_alone():
    """Slot 2 goes from SMux b to SMux a, which holds slot 0 (the controller gives a lost
    owner's slot to a live SMux as an extra: the same URL at two positions). Only slot 2's
    connections are re-reported to a; slot 0's were already there. Closes of slot 2's
    connections then go to a."""
    a, b = FakeSmux(), FakeSmux()
    a.boot, b.boot = "boot-a", "boot-b"
    closed = None
    try:
        cfg = {"serverId": 7, "statefulOwners": [a.url, "http://0.0.0.2:9", b.url]}
        conns = [conn(1000, ident(0, 5)), conn(1001, ident(2, 9)), conn(1002, ident(2, 1))]
        w = watch(cfg, conns)
        w.check()
        assert a.batches == [[dict(conn(1000, ident(0, 5)), serverId=7)]]
        assert len(b.batches) == 1
        cfg["statefulOwners"] = [a.url, "http://0.0.0.2:9", a.url]   # b lost: slot 2 to a
        w.check()
        assert a.batches[1:] == [[dict(conn(1001, ident(2, 9)), serverId=7),
                                  dict(conn(1002, ident(2, 1)), serverId=7)]], a.batches
        assert w.known == {0: (a.url, "boot-a"), 2: (a.url, "boot-a")}
        w.check()                                   # done: neither slot sent again
        assert len(a.batches) == 2 and len(b.batches) == 1

        closed = smux_reports.ClosedReporter(lambda: cfg, lambda *a, **k: None)
        for c in (conn(1001, ident(2, 9)), conn(1000, ident(0, 5))):
            closed.add(c)
        deadline = time.monotonic() + 10
        while closed.counters["reported"] < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sorted(c["clientPort"] for c in a.closed) == [1000, 1001] and b.closed == []
        assert closed.counters == {"reported": 2, "failed": 0, "dropped": 0, "no_owner": 0}
    finally:
        if closed:
            closed.stop()
        a.close()
        b.close()


def test_refusals_an_entry_left_out_the_smux_not_yet_owner_tried_again():
    a = FakeSmux()
    try:
        cfg = {"serverId": 7, "statefulOwners": [a.url]}
        conns = [conn(1000 + k, ident(0, k)) for k in range(3)]
        w = watch(cfg, conns)
        # not yet the owner in its table: refused on ident, the slot stays to do
        a.answer = lambda batch: (400, {"error": "invalid report", "field": "adopt[0].ident",
                                        "reason": "this SMux is no owner of the VIP"})
        w.check()
        w.check()
        assert len(a.batches) == 2 and w.counters["failed"] == 2

        # one entry's server left the pool: that one left out, the rest sent again, done
        def answer(batch):
            ports = [c["clientPort"] for c in batch]
            if 1001 in ports:
                return 400, {"error": "invalid report", "field": "adopt[%d].serverId" % ports.index(1001),
                             "reason": "server 7 is no server of the VIP's pool"}
            return 200, {"adopted": len(batch), "held": 0, "pending": 0, "ring_full": 0, "taken": []}
        a.answer = answer
        w.check()
        assert [c["clientPort"] for c in a.batches[-1]] == [1000, 1002]
        assert w.counters["refused"] == 1 and w.counters["adopted"] == 2
        w.check()
        assert len(a.batches) == 4                  # done: not sent again
        # entries still pending: sent again the next period; an index held by another logged
        a.boot = "b2"
        a.answer = lambda batch: (200, {"adopted": 0, "held": 1, "pending": 1, "ring_full": 0, "taken": [
            {"field": "adopt[2].ident", "reason": "index 2 of partition 0 holds another connection",
             "workers": [0]}]})
        w.check()
        w.check()
        assert len(a.batches) == 6 and w.counters["taken"] == 2
        assert any("held by another" in str(x) for x in w.logs)
    finally:
        a.close()


def test_an_smux_that_does_not_answer_is_left_for_later():
    cfg = {"serverId": 7, "statefulOwners": ["http://127.0.0.1:9"]}
    w = watch(cfg, [conn(1000, ident(0, 1))])
    w.check()
    assert w.known == {} and w.counters["failed"] == 0
