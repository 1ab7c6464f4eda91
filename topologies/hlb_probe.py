#!/usr/bin/python3
"""Client-side probes run inside a client host of the emulation (bounded in time and rate).

  udp   paced UDP stream to VIP:port from --flows fixed source ports (each one flow, so one
        DIP); the DIP echoes each datagram with its name (hlb_http_server.py). Reports sent,
        received, lost, the DIPs each flow reached and the outages (per flow: first lost ->
        that flow answered again, at the client); the longest is the failover time.
  tcp   --conns long-lived HTTP/1.1 keep-alive connections, one GET every --interval each.
        Reports per connection: requests answered, errors (reset/timeout), DIPs seen,
        retransmissions (TCP_INFO), the longest wait for an answer.
  quic  --conns long-lived QUIC connections (HTTP/0.9, smux/agent/quic_server.py), one GET every
        --interval each, in the tcp kind's shape: per connection, requests answered, errors
        ("timed out: ..." no answer in --timeout, or the idle timer ended the connection;
        "closed by peer: ..." the server's CONNECTION_CLOSE; "closed by this client: ...";
        "connect: <type>..."; "<type>: ..." any other, e.g. an answer naming no server id),
        the server ids that answered ("dips"; the connection id names the server, so one per
        connection), the longest wait for an answer.
  http  a new TCP connection per GET at --rate (offered load): answered, failed, per DIP.
        --sine-period P makes the rate sinusoidal around --rate (amplitude --sine-amplitude,
        a fraction of it), starting at the mean and rising.

The result is one JSON document on stdout. --progress FILE rewrites a small live summary.
"""
import argparse
import json
import math
import os
import socket
import struct
import sys
import threading
import time

from emu_base import QUIC_PORT

STOP = threading.Event()       # SIGTERM/SIGINT: stop sending, report what was measured


def now():
    return time.monotonic()


def udp_probe(a):
    socks = []
    for _ in range(a.flows):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", 0))
        s.setblocking(False)
        socks.append(s)
    n_total = int(a.rate * a.duration)
    sent_at = [0.0] * n_total
    got = {}           # seq -> (name, t)
    lock = threading.Lock()
    done = threading.Event()

    def receiver():
        import selectors
        sel = selectors.DefaultSelector()
        for i, s in enumerate(socks):
            sel.register(s, selectors.EVENT_READ, i)
        while not done.is_set():
            for key, _ in sel.select(0.05):
                try:
                    while True:
                        data = key.fileobj.recv(2048)
                        name, _, seq = data.decode(errors="replace").partition(" ")
                        with lock:
                            got[int(seq)] = (name, now(), key.data)
                except (BlockingIOError, ValueError):
                    pass

    t = threading.Thread(target=receiver, daemon=True)
    t.start()
    start = now()
    period = 1.0 / a.rate
    for seq in range(n_total):
        if STOP.is_set():
            n_total = seq
            break
        target = start + seq * period
        d = target - now()
        if d > 0:
            time.sleep(d)
        sent_at[seq] = now()
        try:
            socks[seq % a.flows].sendto(str(seq).encode(), (a.vip, a.port))
        except OSError:
            pass
        if a.progress and seq % int(a.rate) == 0:
            with lock:
                write_progress(a.progress, {"sent": seq + 1, "received": len(got)})
    time.sleep(a.grace)
    done.set()
    sent_at = sent_at[:n_total]
    t.join(1)
    with lock:
        received = dict(got)
    lost = [s for s in range(n_total) if s not in received]
    flows = []
    for f in range(a.flows):
        names = sorted({received[s][0] for s in range(f, n_total, a.flows) if s in received})
        flows.append({"flow": f, "dips": names, "lost": sum(1 for s in lost if s % a.flows == f)})
    # Outages, per flow (a flow is one connection's view: one 5-tuple, one path): a run of the
    # flow's consecutive lost datagrams, from the first lost send to the flow's next answered
    # send. Judged over all flows together, a failure that cuts half the flows for a second
    # would show as short gaps between the other half's answers.
    outages = []
    for f in range(a.flows):
        run_start = None
        for s in range(f, n_total, a.flows):
            if s not in received:
                if run_start is None:
                    run_start = s
            elif run_start is not None:
                outages.append({"flow": f, "fromSeq": run_start, "lost": (s - run_start) // a.flows,
                                "ms": round((sent_at[s] - sent_at[run_start]) * 1000, 1),
                                "atS": round(sent_at[run_start] - start, 3)})
                run_start = None
        if run_start is not None:
            outages.append({"flow": f, "fromSeq": run_start, "lost": (n_total - run_start + a.flows - 1) // a.flows,
                            "ms": None, "atS": round(sent_at[run_start] - start, 3), "unrecovered": True})
    outages.sort(key=lambda o: o["fromSeq"])
    return {"mode": "udp", "vip": a.vip, "port": a.port, "rate": a.rate, "sent": n_total,
            "startedAt": round(time.time() - (now() - start), 3),   # wall clock of atS 0, to match logs
            "received": len(received), "lost": len(lost), "flows": flows, "outages": outages,
            "maxOutageMs": None if any(o.get("unrecovered") for o in outages)
            else max([o["ms"] for o in outages], default=0.0)}


def tcp_retrans(s):
    try:
        info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
        return struct.unpack_from("I", info, 100)[0]
    except OSError:
        return None


def conns_report(mode, a, results):
    """The report of a long-lived-connections kind (tcp, quic): per connection, and how many broke."""
    return {"mode": mode, "vip": a.vip, "port": a.port, "conns": sorted(results, key=lambda r: r["conn"]),
            "broken": sum(1 for r in results if r["errors"]),
            "maxWaitMs": max((r["maxWaitMs"] for r in results), default=0.0)}


def connect_error(e):
    """A failed connect as the probes record it: "connect: <type>[: <message>]" (a bare
    ConnectionError or TimeoutError has no message)."""
    return "connect: %s" % ("%s: %s" % (type(e).__name__, e) if str(e) else type(e).__name__)


def tcp_probe(a):
    req = ("GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % a.vip).encode()
    results = []

    def one(i):
        r = {"conn": i, "ok": 0, "errors": [], "dips": [], "maxWaitMs": 0.0, "retrans": None}
        results.append(r)
        try:
            s = socket.create_connection((a.vip, a.port), timeout=a.timeout)
        except OSError as e:
            r["errors"].append(connect_error(e))
            r["errorAt"] = time.time()
            return
        r["localPort"] = s.getsockname()[1]
        s.settimeout(a.timeout)
        end = now() + a.duration
        buf = b""
        while now() < end and not STOP.is_set():
            t0 = now()
            try:
                s.sendall(req)
                while b"\r\n\r\n" not in buf:
                    chunk = s.recv(4096)
                    if not chunk:
                        raise ConnectionResetError("closed by peer")
                    buf += chunk
                head, _, rest = buf.partition(b"\r\n\r\n")
                length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0])
                while len(rest) < length:
                    chunk = s.recv(4096)
                    if not chunk:
                        raise ConnectionResetError("closed by peer")
                    rest += chunk
                name, buf = rest[:length].decode().strip(), rest[length:]
            except (OSError, IndexError, ValueError) as e:
                r["errors"].append("%s: %s" % (type(e).__name__, e))
                r["errorAt"] = time.time()      # wall clock: to line up with the caller's events
                break
            r["ok"] += 1
            if name not in r["dips"]:
                r["dips"].append(name)
            r["maxWaitMs"] = max(r["maxWaitMs"], round((now() - t0) * 1000, 1))
            time.sleep(max(0.0, a.interval - (now() - t0)))
        r["retrans"] = tcp_retrans(s)
        s.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(a.conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return conns_report("tcp", a, results)


def quic_probe(a):
    import asyncio
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "smux", "agent"))
    import quic_hq
    results = []

    async def one(i):
        r = {"conn": i, "ok": 0, "errors": [], "dips": [], "maxWaitMs": 0.0}
        results.append(r)

        def error(what):
            r["errors"].append(what)
            r["errorAt"] = time.time()      # wall clock: to line up with the caller's events
        try:
            # The idle timeout (the smaller of both sides') outlasts --timeout, if the server's
            # does too (Emu.start_quic_servers): a stall is reported as this probe's timeout.
            conn = quic_hq.open_connection(a.vip, a.port, idle_timeout=a.timeout + 30)
            proto = await asyncio.wait_for(conn.__aenter__(), a.timeout)
        except (OSError, asyncio.TimeoutError) as e:      # ConnectionError is an OSError
            error(connect_error(e))
            return
        r["localPort"] = proto._transport.get_extra_info("sockname")[1]
        end = now() + a.duration
        n = 0
        try:
            while now() < end and not STOP.is_set():
                t0 = now()
                try:
                    answer = await quic_hq.get(proto, "/c%d/%d" % (i, n), a.timeout)
                    sid = str(quic_hq.server_id_of(answer))
                except asyncio.TimeoutError:
                    error("timed out: no answer in %g s" % a.timeout)
                    break
                except quic_hq.ConnectionClosed as e:
                    # classify() in integration-tests/cheetah_exp.py files these as TCP's: a
                    # CONNECTION_CLOSE from the server as a reset, the idle timer as a timeout
                    error("closed by peer: %s" % e if e.by_peer else
                          "timed out: the connection's idle timeout ended it (%s)" % e if e.idle else
                          "closed by this client: %s" % e)
                    break
                except (ValueError, OSError) as e:
                    error("%s: %s" % (type(e).__name__, e))
                    break
                n += 1
                r["ok"] += 1
                if sid not in r["dips"]:
                    r["dips"].append(sid)
                r["maxWaitMs"] = max(r["maxWaitMs"], round((now() - t0) * 1000, 1))
                await asyncio.sleep(max(0.0, a.interval - (now() - t0)))
        finally:
            try:
                await asyncio.wait_for(conn.__aexit__(None, None, None), 2)
            except (asyncio.TimeoutError, OSError):
                pass

    async def main():
        await asyncio.gather(*(one(i) for i in range(a.conns)))
    asyncio.run(main())
    return conns_report("quic", a, results)


def rate_at(a, t):
    """The http probe's request rate t seconds after its start: --rate, or a sine around it."""
    if not a.sine_period:
        return a.rate
    return a.rate * (1.0 + a.sine_amplitude * math.sin(2 * math.pi * t / a.sine_period))


def http_probe(a):
    req = ("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % a.vip).encode()
    per_dip, failed, latencies = {}, 0, []
    start = now()
    i, due = 0, 0.0               # request i is due `due` seconds after start
    while due < a.duration:
        if STOP.is_set():
            break
        d = start + due - now()
        if d > 0:
            time.sleep(d)
        due += 1.0 / rate_at(a, due)
        t0 = now()
        try:
            with socket.create_connection((a.vip, a.port), timeout=a.timeout) as s:
                s.settimeout(a.timeout)
                s.sendall(req)
                data = b""
                while True:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    data += chunk
            name = data.partition(b"\r\n\r\n")[2].decode().strip()
            if not name:
                raise OSError("empty answer")
            per_dip[name] = per_dip.get(name, 0) + 1
            latencies.append((now() - t0) * 1000)
        except OSError:
            failed += 1
        if a.progress and i % max(1, int(a.rate)) == 0:
            write_progress(a.progress, {"sent": i + 1, "failed": failed, "dips": per_dip})
        i += 1
    latencies.sort()
    return {"mode": "http", "vip": a.vip, "requests": i, "answered": len(latencies), "failed": failed,
            "dips": per_dip, "medianMs": round(latencies[len(latencies) // 2], 2) if latencies else None}


def write_progress(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=("udp", "tcp", "quic", "http"))
    p.add_argument("--vip", required=True)
    p.add_argument("--port", type=int)
    p.add_argument("--rate", type=float, default=200.0, help="udp: datagrams/s in total; http: requests/s")
    p.add_argument("--flows", type=int, default=4)
    p.add_argument("--conns", type=int, default=4)
    p.add_argument("--interval", type=float, default=0.02)
    p.add_argument("--duration", type=float, default=5.0)
    p.add_argument("--timeout", type=float, default=3.0)
    # how long answers to the last datagrams are awaited after the last send: under load, 0.5 s
    # counted late answers of the last ~60 ms of sends as lost
    p.add_argument("--grace", type=float, default=1.5)
    p.add_argument("--progress")
    p.add_argument("--sine-period", type=float, help="http: seconds per period of a sinusoidal rate (default: constant)")
    p.add_argument("--sine-amplitude", type=float, default=0.75,
                   help="http: the sine's amplitude as a fraction of --rate, 0 <= a < 1 (default 0.75)")
    a = p.parse_args()
    if a.sine_period is not None and (a.sine_period <= 0 or not 0 <= a.sine_amplitude < 1):
        p.error("--sine-period > 0 and 0 <= --sine-amplitude < 1 (the rate must stay positive)")
    if a.duration > 600 or a.rate > 5000 or a.rate <= 0:
        p.error("--duration <= 600 s and 0 < --rate <= 5000 (the emulation shares 2 cores)")
    if a.port is None:
        a.port = {"udp": 9000, "tcp": 80, "quic": QUIC_PORT, "http": 80}[a.mode]
    import signal
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: STOP.set())
    out = {"udp": udp_probe, "tcp": tcp_probe, "quic": quic_probe, "http": http_probe}[a.mode](a)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
