"""Cheetah performance experiments on the emulation (cheetah_exp.py has the helpers and the churn):

  balance  p99 latency, per-server load spread and herding of hash, RR, WRR, AWRR, power of
           two choices and least-loaded in front of request-serialising servers
           (topologies/hlb_work_server.py) at ~70% load
  wraps    one live connection held across two wraps of the 16 low TSval bits
  iperf    iperf3 through a cookie VIP and through the same server behind a hash VIP
"""
import json
import os
import re
import statistics
import threading
import time

from cheetah_exp import PY, TOPO, clients

# ------------------------------------------------------------------------------------------
# balance
# ------------------------------------------------------------------------------------------

def start_work_servers(e, hosts, port=8080):
    procs = []
    for h in hosts:
        procs.append(e.popen(h, [PY, os.path.join(TOPO, "hlb_work_server.py"), "--name", h, "--port", str(port)],
                             what="work server " + h))
    return procs


def stop_procs(procs):
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except Exception:
            p.kill()


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else None


def balance_run(e, vip, servers, rate, duration, work, mean_ms, port=8080, n_clients=4):
    """Open-loop Poisson load from n_clients client hosts -> p50/p99 and the per-server spread."""
    cl = clients(e)[:n_clients]
    procs = [e.popen(c, [PY, os.path.join(TOPO, "hlb_load_client.py"), "--vip", vip, "--port", str(port),
                         "--rate", "%.3f" % (rate / n_clients), "--duration", str(duration), "--work", work,
                         "--mean-ms", str(mean_ms), "--seed", str(i + 1)], what="load client " + c)
             for i, c in enumerate(cl)]
    reqs = []
    for p in procs:
        out, err = p.communicate(timeout=duration + 120)
        if not out.strip():
            raise RuntimeError("load client printed nothing: %s" % err[-500:])
        reqs += json.loads(out)["requests"]
    ok = [r for r in reqs if r[1]]
    lat = [r[0] for r in ok]
    busy = {s: 0.0 for s in servers}
    count = {s: 0 for s in servers}
    for r in ok:
        busy[r[1]] = busy.get(r[1], 0.0) + r[2]
        count[r[1]] = count.get(r[1], 0) + 1
    util = [busy[s] / (duration * 1000.0) for s in servers]
    return {"requests": len(reqs), "failed": len(reqs) - len(ok), "p50": percentile(lat, 0.5),
            "p99": percentile(lat, 0.99), "utilMean": statistics.mean(util), "utilMax": max(util),
            "utilMin": min(util), "utilStdev": statistics.pstdev(util), "countMax": max(count.values()),
            "countMin": min(count.values()), "herding": herding(ok)}


HERD_WINDOW_S = 0.1     # the host agents' load-report period (hlbemu --agent-load-report-ms 100)


def herding(ok):
    """Herding: in each HERD_WINDOW_S of arrivals (all clients), the share of the window's
    requests that went to its most-chosen server, averaged over windows with >= 4 requests. A
    mechanism that sends every SYN to the server it last saw least loaded until the next load
    report shows a share near 1/(number of SMuxes); spreading ones near that of random choice."""
    windows = {}
    for r in ok:
        w = windows.setdefault(int(r[3] / HERD_WINDOW_S), {})
        w[r[1]] = w.get(r[1], 0) + 1
    shares = [max(w.values()) / sum(w.values()) for w in windows.values() if sum(w.values()) >= 4]
    return statistics.mean(shares) if shares else None


BALANCE_COLUMNS = ["hash", "rr", "wrr", "awrr", "p2c", "least-loaded"]


def balance_table(results):
    lines = []
    for work in ("constant", "bimodal"):
        lines.append("%s work:" % work)
        lines.append("%-28s" % "" + "".join("%14s" % c for c in BALANCE_COLUMNS))
        for title, f in (("requests (failed)", lambda r: "%d (%d)" % (r["requests"], r["failed"])),
                         ("p50 ms", lambda r: "%.0f" % r["p50"]), ("p99 ms", lambda r: "%.0f" % r["p99"]),
                         ("server load mean", lambda r: "%.0f%%" % (100 * r["utilMean"])),
                         ("server load min-max", lambda r: "%.0f-%.0f%%" % (100 * r["utilMin"], 100 * r["utilMax"])),
                         ("server load stdev", lambda r: "%.1f%%" % (100 * r["utilStdev"])),
                         ("herding (100 ms top share)", lambda r: "%.2f" % r["herding"] if r["herding"] else "-"),
                         ("p99 vs hash", None)):
            cells = []
            for c in BALANCE_COLUMNS:
                r = results.get((work, c))
                if r is None:
                    cells.append("%14s" % "not run")
                elif f is None:
                    h = results.get((work, "hash"))
                    cells.append("%14s" % ("%.2fx" % (h["p99"] / r["p99"]) if h and r["p99"] else ""))
                else:
                    cells.append("%14s" % f(r))
            lines.append("%-28s" % title + "".join(cells))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# wraps
# ------------------------------------------------------------------------------------------

WRAP_CLIENT = r"""
import json, socket, struct, sys, time
vip, seconds, every = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
s = socket.create_connection((vip, 80), timeout=10)
s.settimeout(10)
req = ("GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % vip).encode()
names, rtts, err = [], [], None
print(json.dumps({"localPort": s.getsockname()[1]}), flush=True)
start = last = time.monotonic()
end = start + seconds
import http.client
conn = http.client.HTTPConnection(vip, 80, timeout=10)
conn.sock = s
while time.monotonic() < end:
    try:
        conn.request("GET", "/")
        r = conn.getresponse()
        name = r.read().decode().strip()
    except Exception as ex:
        err = "%s: %s" % (type(ex).__name__, ex)
        break
    if name not in names:
        names.append(name)
    info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    rtts.append(struct.unpack_from("I", info, 68)[0])
    last = time.monotonic()
    time.sleep(every)
print(json.dumps({"servers": names, "requests": len(rtts), "error": err, "clientRttUs": rtts,
                  "heldS": round(last - start, 1)}), flush=True)
"""


def server_rtt_us(e, host, vip, client_ip, cport):
    """The server's own tcpi_rtt for the connection (ss in the DIP host's namespace)."""
    out = e.run(host, ["ss", "-tinH", "state", "established", "src", "%s:80" % vip,
                       "dst", "%s:%d" % (client_ip, cport)]).stdout
    m = re.search(r"\brtt:([\d.]+)/", out)
    return float(m.group(1)) * 1000 if m else None


def wraps_start(e, vip, seconds=140.0, every=1.0):
    """One keep-alive connection to the cookie VIP held `seconds` (>= 2 wraps of the 16 low
    TSval bits at Linux's 1 kHz timestamp clock: 65.5 s each), a GET every `every` s."""
    node = clients(e)[-1]
    p = e.popen(node, [PY, "-c", WRAP_CLIENT, vip, str(seconds), str(every)], what="wrap client " + node)
    first = json.loads(p.stdout.readline())
    w = {"proc": p, "node": node, "vip": vip, "port": first["localPort"], "seconds": seconds, "serverRtts": [],
         "t0": time.monotonic()}

    def sample():              # the server's tcpi_rtt every 5 s while the client holds the connection
        while p.poll() is None:
            wraps_sample(e, w)
            time.sleep(5)
    w["sampler"] = threading.Thread(target=sample, daemon=True)
    w["sampler"].start()
    return w


def wraps_sample(e, w):
    """The server's tcpi_rtt now."""
    cip = e.fab["hosts"][w["node"]]["ip"]
    for h, v in e.fab["hosts"].items():
        if v["role"] == "dip":
            r = server_rtt_us(e, h, w["vip"], cip, w["port"])
            if r is not None:
                w["serverRtts"].append(r)
                w["server"] = h
                return r
    return None


def wraps_finish(e, w):
    out, err = w["proc"].communicate(timeout=w["seconds"] + 60)
    w["sampler"].join()
    res = json.loads(out.strip().splitlines()[-1])
    ping = e.run(w["node"], ["ping", "-c", "5", "-i", "0.2", "-q", e.fab["hosts"][w["server"]]["ip"]]).stdout \
        if w.get("server") else ""
    m = re.search(r"= [\d.]+/([\d.]+)/([\d.]+)/", ping)
    res.update(serverRttsUs=w["serverRtts"],
               pingAvgMs=float(m.group(1)) if m else None, pingMaxMs=float(m.group(2)) if m else None)
    return res


def wraps_table(r):
    c = r["clientRttUs"]
    s = r["serverRttsUs"]
    lines = ["answered for %.0f s (%d wraps of the 16 low TSval bits at 1 kHz), %d requests, error: %s" % (
        r["heldS"], int(r["heldS"] * 1000 // 65536), r["requests"], r["error"] or "none"),
        "servers seen: %s" % ", ".join(r["servers"]),
        "server tcpi_rtt (%d samples): median %.2f ms, max %.2f ms" % (
            len(s), statistics.median(s) / 1000, max(s) / 1000) if s else "server tcpi_rtt: no samples",
        "client tcpi_rtt: median %.2f ms, max %.2f ms; ping: avg %s ms, max %s ms" % (
            statistics.median(c) / 1000, max(c) / 1000, r["pingAvgMs"], r["pingMaxMs"]) if c else ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# iperf3
# ------------------------------------------------------------------------------------------

def iperf_once(e, node, vip, seconds, reverse):
    cmd = ["iperf3", "-c", vip, "-p", "5201", "-t", str(seconds), "-J"] + (["-R"] if reverse else [])
    r = e.run(node, cmd, timeout=seconds + 30)
    try:
        doc = json.loads(r.stdout)
        return doc["end"]["sum_received"]["bits_per_second"] / 1e6, None
    except (ValueError, KeyError):
        try:
            return None, json.loads(r.stdout).get("error")
        except ValueError:
            return None, (r.stderr or r.stdout).strip()[-200:]


def iperf_compare(e, vips, runs=5, seconds=5):
    """Alternating runs through each VIP ({label: vip}), both directions: median Mbit/s."""
    node = clients(e)[0]
    out = {}
    for reverse in (False, True):
        got = {label: [] for label in vips}
        for _ in range(runs):
            for label, vip in vips.items():
                v, err = iperf_once(e, node, vip, seconds, reverse)
                if v is not None:
                    got[label].append(v)
                else:
                    out.setdefault("errors", []).append("%s%s: %s" % (label, " -R" if reverse else "", err))
        for label in vips:
            out[(label, reverse)] = got[label]
    return out


def iperf_table(res, labels):
    lines = ["%-34s" % "" + "".join("%16s" % l for l in labels) + "%10s" % "ratio"]
    for reverse, title in ((False, "client -> server (Mbit/s, median)"), (True, "server -> client (-R)")):
        meds = [statistics.median(res[(l, reverse)]) if res[(l, reverse)] else None for l in labels]
        runs = [len(res[(l, reverse)]) for l in labels]
        ratio = meds[0] / meds[1] if all(meds) else None
        lines.append("%-34s" % title + "".join("%16s" % ("%.0f (%d runs)" % (m, n) if m else "-")
                                               for m, n in zip(meds, runs))
                     + "%10s" % ("%.3f" % ratio if ratio else "-"))
    for err in res.get("errors", []):
        lines.append("failed run: " + err)
    return "\n".join(lines)
