"""Test clients for the Prism experiments, run inside the client namespace.
Each mode prints one JSON line.  Responses are read with http.client and their
bodies checked against hlb-prism-objserver's pattern (byte i = (i*131+7) mod 256).

  get        --conns C --requests R --path P   C persistent connections, R requests each
  pipeline   --count K --path P                K requests written at once on one connection
  fin        --path P                          request, our FIN once the response started; read to the end
  killed     --path P --timeout T              read until the connection ends; how it ended
  concurrent --conns N --path P                N connections send their request together
  second     --path P --gap S                  a request, S seconds later a second one on the
                                               same connection; both responses, or how it ended
"""
import argparse
import collections
import http.client
import json
import socket
import threading
import time

VIP = "10.210.0.10"
BLOCK = bytes((i * 131 + 7) & 0xFF for i in range(256))


def pattern_ok(body):
    n = len(body)
    return body == (BLOCK * (n // 256 + 1))[:n]


def request_bytes(path, extra=""):
    return f"GET {path} HTTP/1.1\r\nHost: {VIP}\r\n{extra}\r\n".encode()


class _OneFile:
    """Lets consecutive HTTPResponse objects share one buffered reader (which a
    finished response would otherwise close)."""

    class _Reader:
        def __init__(self, f):
            self.f = f

        def __getattr__(self, name):
            return getattr(self.f, name)

        def close(self):
            pass

    def __init__(self, f):
        self.f = f

    def makefile(self, *a, **k):
        return self._Reader(self.f)


def read_response(f):
    r = http.client.HTTPResponse(_OneFile(f))
    r.begin()
    body = r.read()
    return r.status, r.getheader("X-Backend"), body


def cmd_get(a):
    stats = collections.Counter()
    backends = collections.Counter()
    errors = []
    lock = threading.Lock()

    def worker():
        try:
            s = socket.create_connection((VIP, 80), timeout=a.timeout)
            f = s.makefile("rb")
            for _ in range(a.requests):
                s.sendall(request_bytes(a.path, a.header))
                status, backend, body = read_response(f)
                with lock:
                    ok = status == 200 and (a.no_check or pattern_ok(body))
                    stats["ok" if ok else "bad"] += 1
                    backends[backend] += 1
            s.close()
        except Exception as e:   # noqa: BLE001 -- every failure is counted and sampled
            with lock:
                stats["errors"] += 1
                errors.append(repr(e))

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(a.conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"ok": stats["ok"], "bad": stats["bad"], "errors": stats["errors"],
                      "error_samples": errors[:5], "backends": dict(backends),
                      "seconds": round(time.monotonic() - t0, 3)}))


def cmd_pipeline(a):
    s = socket.create_connection((VIP, 80), timeout=a.timeout)
    s.sendall(b"".join(request_bytes(a.path, a.header) for _ in range(a.count)))
    f = s.makefile("rb")
    out = []
    for _ in range(a.count):
        status, backend, body = read_response(f)
        out.append({"status": status, "backend": backend, "ok": pattern_ok(body), "len": len(body)})
    s.close()
    print(json.dumps({"responses": out}))


def cmd_fin(a):
    s = socket.create_connection((VIP, 80), timeout=a.timeout)
    s.sendall(request_bytes(a.path, a.header))
    s.recv(1, socket.MSG_PEEK)     # the response has started: a backend holds the connection
    s.shutdown(socket.SHUT_WR)
    f = s.makefile("rb")
    status, backend, body = read_response(f)
    try:
        tail = f.read()
        end = "eof" if tail == b"" else "extra-bytes"
    except ConnectionResetError:
        end = "reset"
    s.close()
    print(json.dumps({"status": status, "backend": backend, "ok": pattern_ok(body),
                      "len": len(body), "end": end}))


def cmd_killed(a):
    s = socket.create_connection((VIP, 80), timeout=a.timeout)
    s.sendall(request_bytes(a.path, a.header))
    t0 = time.monotonic()
    n, end = 0, "timeout"
    try:
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                end = "eof"
                break
            n += len(chunk)
    except ConnectionResetError:
        end = "reset"
    except socket.timeout:
        end = "timeout"
    print(json.dumps({"end": end, "bytes": n, "seconds": round(time.monotonic() - t0, 3)}))


def cmd_second(a):
    s = socket.create_connection((VIP, 80), timeout=a.timeout)
    s.sendall(request_bytes(a.path, a.header))
    time.sleep(a.gap)
    s.sendall(request_bytes(a.path, a.header))
    f = s.makefile("rb")
    out, end = [], "ok"
    try:
        for _ in range(2):
            status, backend, body = read_response(f)
            out.append({"status": status, "backend": backend, "ok": pattern_ok(body)})
    except ConnectionResetError:
        end = "reset"
    except (OSError, http.client.HTTPException) as e:
        end = repr(e)
    print(json.dumps({"responses": out, "end": end}))


def cmd_concurrent(a):
    socks = [socket.create_connection((VIP, 80), timeout=a.timeout) for _ in range(a.conns)]
    barrier = threading.Barrier(a.conns)
    results = collections.Counter()
    lock = threading.Lock()

    def worker(s):
        try:
            barrier.wait()
            s.sendall(request_bytes(a.path, a.header))
            status, _, body = read_response(s.makefile("rb"))
            ok = status == 200 and pattern_ok(body)
        except (OSError, http.client.HTTPException):
            ok = False
        with lock:
            results["ok" if ok else "bad"] += 1

    threads = [threading.Thread(target=worker, args=(s,)) for s in socks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in socks:
        s.close()
    print(json.dumps({"ok": results["ok"], "bad": results["bad"]}))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("get", "pipeline", "fin", "killed", "concurrent", "second"))
    p.add_argument("--conns", type=int, default=1)
    p.add_argument("--requests", type=int, default=1)
    p.add_argument("--count", type=int, default=4)
    p.add_argument("--path", default="/obj/1024")
    p.add_argument("--header", default="", help="extra header lines, CRLF-terminated")
    p.add_argument("--timeout", type=float, default=20.0)
    p.add_argument("--gap", type=float, default=0.5, help="second: seconds between the requests")
    p.add_argument("--no-check", action="store_true", help="skip the body pattern check")
    a = p.parse_args()
    a.header = a.header.encode().decode("unicode_escape")
    globals()[f"cmd_{a.mode}"](a)


if __name__ == "__main__":
    main()
