"""Cheetah experiments on the emulation (issue "Cheetah", section Experiments), with real Linux
TCP clients in the client hosts and the real hybridlbd driving SMuxes, HMuxes and agents.

  churn    per-connection consistency while the pool grows and shrinks, an SMux dies and comes
           back, and VIPs move off the HMuxes (NSDI'20 Fig. 9 analogue)
  balance  p99 latency and per-server load spread of hash, RR and WRR in front of
           request-serialising servers (topologies/hlb_work_server.py) at ~70% load
  wraps    one live connection held across two wraps of the 16 low TSval bits
  iperf    iperf3 through a cookie VIP and through the same servers behind a hash VIP

The functions take a running emulation (hlbemu.Emu with the daemon started); cheetah_bench.py
starts the emulations and prints the tables, test_cheetah.py runs a short churn in the suite.
"""
import json
import os
import statistics
import threading
import time

from conftest import wait_for

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPO = os.path.join(REPO, "topologies")
PY = "/usr/bin/python3"
AGG = "10.100.0.0/16"


def dip_ips(e):
    """The DIP hosts' addresses, in host-name order (host-0-0-0, host-0-0-1, ...)."""
    return [e.fab["hosts"][h]["ip"] for h in sorted(e.fab["hosts"]) if e.fab["hosts"][h]["role"] == "dip"]


def clients(e):
    return sorted(h for h, v in e.fab["hosts"].items() if v["role"] == "client")


def vip_doc(vip, port, dips, affinity="hash", mechanism=None):
    d = {"vip": vip, "aggregate": AGG, "ports": [{"proto": "tcp", "port": port, "dips": [{"ip": i} for i in dips]}]}
    if affinity != "hash":
        d["affinity"] = affinity
        d["mechanism"] = mechanism or "wrr"
    return d


def add_vip(e, doc):
    code, ans = e.api("POST", "/vips", doc)
    if code not in (200, 201):
        raise RuntimeError("POST /vips %s: %s %s" % (doc["vip"], code, ans))


def api_ok(e, method, path, body=None):
    code, ans = e.api(method, path, body)
    if not 200 <= code < 300:
        raise RuntimeError("%s %s: %s %s" % (method, path, code, ans))
    return ans


def set_weights(e, vip, weights):
    """PUT /vips/{vip} with the DIPs of `weights` ({ip: weight}) set so (0: drained, its
    connections finish where they are, no new ones)."""
    doc = api_ok(e, "GET", "/vips/%s" % vip)
    for p in doc["ports"]:
        for d in p["dips"]:
            if d["ip"] in weights:
                d["weight"] = weights[d["ip"]]
    api_ok(e, "PUT", "/vips/%s" % vip, doc)


def placement(e):
    return e.api("GET", "/assignment")[1]["installed"]


class PlacementLog:
    """Polls /assignment once a second: where each watched VIP was, and its moves."""

    def __init__(self, e, vips):
        self.e, self.vips, self.moves, self.now = e, vips, {v: [] for v in vips}, {}
        self.stop = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while not self.stop.is_set():
            try:
                p = placement(self.e)
            except Exception:
                p = {}
            for v in self.vips:
                where = p.get(v)
                if where is None:
                    continue
                last = self.now.get(v)
                if last is not None and where != last:
                    self.moves[v].append((last, where))
                self.now[v] = where
            self.stop.wait(1.0)

    def finish(self):
        self.stop.set()
        self.t.join()
        return {v: {"hmuxToSmux": sum(1 for a, b in m if a != "smux" and b == "smux"),
                    "smuxToHmux": sum(1 for a, b in m if a == "smux" and b != "smux"),
                    "hmuxToHmux": sum(1 for a, b in m if a != "smux" and b != "smux")} for v, m in self.moves.items()}


def peers_announcing(e):
    out = e.ns_run(["vtysh", "--vty_socket", e.fab["routeServer"]["vtyDir"], "-c", "show bgp ipv4 unicast json"]).stdout
    routes = json.loads(out).get("routes", {}) if out.strip() else {}
    return sorted({p.get("peerId") or p.get("nexthops", [{}])[0].get("ip") for r in routes.values() for p in r})


def cookie_counters(e, agents=True):
    """Cheetah counters summed over the SMuxes and (agents) the host agents."""
    out = {"smuxDecoded": 0, "smuxInvalid": 0, "smuxBadCookieDrops": 0, "agentEncoded": 0, "agentRestored": 0,
           "agentMisrouted": 0}
    for s in e.fab["smuxes"]:
        try:
            text = e.smux_metrics(s["id"])
        except Exception:
            continue
        for line in text.splitlines():
            key = {'hlb_smux_cookie_packets_total{event="decoded"}': "smuxDecoded",
                   'hlb_smux_cookie_packets_total{event="invalid"}': "smuxInvalid",
                   'hlb_smux_drops_total{reason="bad_cookie"}': "smuxBadCookieDrops"}.get(line.rsplit(" ", 1)[0])
            if key:
                out[key] += int(float(line.rsplit(" ", 1)[1]))
    for h, v in e.fab["hosts"].items():
        if v["role"] != "dip" or not agents:
            continue
        try:
            ck = e.agent_stats(h).get("cookie", {})
        except Exception:
            continue
        out["agentEncoded"] += ck.get("encoded", 0) + ck.get("encoded_slow_path", 0)
        out["agentRestored"] += ck.get("restored", 0)
        out["agentMisrouted"] += ck.get("misrouted", 0)
    return out


def require_cookie_agents(e, timeout=60):
    """Every DIP host's agent runs the XDP backend with cookies on (an agent whose XDP backend
    did not start runs the user-space fallback, which cannot do cookies): else RuntimeError."""
    def missing():
        out = []
        for h, v in e.fab["hosts"].items():
            if v["role"] == "dip":
                try:
                    ok = e.agent_stats(h)["backend"].get("cookies")
                except Exception:
                    ok = False
                if not ok:
                    out.append(h)
        return out
    left = missing()
    if left:
        wait_for(lambda: not missing(), timeout, 2)
        left = missing()
    if left:
        raise RuntimeError("host agents without Cheetah cookies (see their logs): %s" % ", ".join(sorted(left)))


# ------------------------------------------------------------------------------------------
# churn
# ------------------------------------------------------------------------------------------

def classify(conns):
    """Long-lived connections of hlb_probe.py tcp -> counts. A connection is broken when it
    was reset, timed out, closed by the server, or answered by a second server."""
    c = {"opened": 0, "connectFailed": 0, "reset": 0, "timeout": 0, "wrongServer": 0, "otherError": 0}
    for r in conns:
        errs = " ".join(r["errors"])
        if errs.startswith("connect:"):
            c["connectFailed"] += 1
            continue
        c["opened"] += 1
        if len(r["dips"]) > 1:
            c["wrongServer"] += 1
        elif not errs:
            continue
        elif "timed out" in errs or "timeout" in errs:
            c["timeout"] += 1
        elif "Reset" in errs or "reset" in errs or "closed by peer" in errs or "Broken" in errs:
            c["reset"] += 1
        else:
            c["otherError"] += 1
    c["broken"] = c["reset"] + c["timeout"] + c["wrongServer"] + c["otherError"]
    return c


def churn(e, vips, phase_s=20.0, conns=8, interval=0.2, short_rate=4.0, drain=True, log=print):
    """Runs the churn script once, on every VIP of `vips` ({label: vip}) at the same time.

    Each phase a new batch of long-lived connections opens (so connections born under every
    pool, SMux and placement state are held) from 2 client hosts per VIP, each sending a GET
    every `interval`; new short connections arrive all along. Phases: start; +3 DIPs; SMux
    killed; SMux restarted; (drain) every switch drained, so VIPs on HMuxes move to the SMuxes;
    -3 DIPs (3 of the original ones set to weight 0: drained, the operator's way to take a DIP
    out without breaking its connections); end. The pools are put back afterwards. The VIPs must exist with the first 8 DIP hosts as their pool.
    Returns {label: counts} and the events' log."""
    ips = dip_ips(e)
    added, removed = ips[8:11], ips[0:3]
    cl = clients(e)
    victim = e.fab["smuxes"][-1]["id"]
    timeout = max(8.0, 2 * phase_s)       # a stall this long is a broken connection, not an outage
    probes = {label: [] for label in vips}
    shorts = {}
    events = []
    t0 = time.monotonic()

    def event(what):
        ck = cookie_counters(e, agents=False)
        events.append((round(time.monotonic() - t0, 1), what, ck))
        log("churn %5.1fs: %s (SMux cookies decoded %d, invalid %d)" % (time.monotonic() - t0, what,
                                                                       ck["smuxDecoded"], ck["smuxInvalid"]))

    def batch(n):
        for i, (label, vip) in enumerate(sorted(vips.items())):
            for k in range(2):
                node = cl[(2 * i + k + n) % len(cl)]
                probes[label].append(e.probe(node, "tcp", "--vip", vip, "--conns", conns, "--interval", interval,
                                             "--duration", 590, "--timeout", timeout))

    moves = PlacementLog(e, list(vips.values()))
    before = cookie_counters(e)
    switches = [s["id"] for s in e.api("GET", "/switches")[1]["switches"]]
    try:
        for i, (label, vip) in enumerate(sorted(vips.items())):
            shorts[label] = e.probe(cl[(2 * i + 1) % len(cl)], "http", "--vip", vip, "--rate", short_rate,
                                    "--duration", 590, "--timeout", timeout)
        batch(0)
        event("start: %d VIPs, pool of 8, placement %s" % (len(vips), {v: placement(e).get(v) for v in vips.values()}))
        time.sleep(phase_s)
        for ip in added:
            for vip in vips.values():
                api_ok(e, "POST", "/vips/%s/dips" % vip, {"ip": ip})
        batch(1)
        event("+3 DIPs (%s)" % ", ".join(added))
        time.sleep(phase_s)
        e.kill_smux(victim)
        batch(2)
        event("SMux %s killed" % victim)
        time.sleep(phase_s)
        e.restart_smux(victim)
        wait_for(lambda: len(peers_announcing(e)) == len(e.fab["smuxes"]), 30, 0.5)
        batch(3)
        event("SMux %s restarted and announcing" % victim)
        time.sleep(phase_s)
        if drain:
            p = placement(e)
            for sid in switches:
                api_ok(e, "POST", "/switches/%s/drain" % sid)
            batch(4)
            event("every switch drained (VIPs then on HMuxes: %s)" % {v: p.get(v) for v in vips.values()})
            time.sleep(phase_s)
        for vip in vips.values():
            set_weights(e, vip, {ip: 0 for ip in removed})
        batch(5)
        event("-3 DIPs: weight 0, drained (%s)" % ", ".join(removed))
        time.sleep(phase_s)
        event("end")
    finally:
        results = {}
        for label in vips:
            conns_all = []
            for pr in probes[label]:
                try:
                    conns_all += e.finish(pr, timeout=timeout + 30)["conns"]
                except Exception as ex:
                    log("churn: a probe of %s reported nothing: %s" % (label, ex))
            results[label] = classify(conns_all)
            try:
                s = e.finish(shorts[label], timeout=timeout + 30) if label in shorts else None
            except Exception:
                s = None
            results[label]["short"] = s["requests"] if s else 0
            results[label]["shortFailed"] = s["failed"] if s else None
        results_moves = moves.finish()
        for label, vip in vips.items():
            results[label]["moves"] = results_moves[vip]
        for sid in switches if drain else ():
            e.api("DELETE", "/switches/%s/drain" % sid)
        for vip in vips.values():           # the pool as it was: the first 8 DIP hosts, weight 1
            set_weights(e, vip, {ip: 1 for ip in removed})
            for ip in added:
                e.api("DELETE", "/vips/%s/dips/%s" % (vip, ip))
        if not wait_for(lambda: len(peers_announcing(e)) == len(e.fab["smuxes"]), 1, 0.5):
            e.restart_smux(victim) if not e.recorded_pids("smux " + victim) else None
    after = cookie_counters(e)
    return results, events, {k: after[k] - before[k] for k in after}


CHURN_COLUMNS = ["hash", "hash+table", "cheetah", "cheetah-stateful"]


def churn_table(results):
    rows = [("long-lived connections", "opened"), ("broken", "broken"), ("  reset", "reset"),
            ("  timeout", "timeout"), ("  wrong server", "wrongServer"), ("  other error", "otherError"),
            ("connect failed", "connectFailed"), ("short requests", "short"), ("short failed", "shortFailed")]
    w = 24
    lines = ["%-*s" % (w, "") + "".join("%18s" % c for c in CHURN_COLUMNS)]
    for title, key in rows:
        cells = []
        for c in CHURN_COLUMNS:
            r = results.get(c)
            cells.append("%18s" % ("not run" if r is None else r[key]))
        lines.append("%-*s" % (w, title) + "".join(cells))
    cells = []
    for c in CHURN_COLUMNS:
        r = results.get(c)
        cells.append("%18s" % ("" if r is None else "%.2f%%" % (100.0 * r["broken"] / max(1, r["opened"]))))
    lines.append("%-*s" % (w, "broken share") + "".join(cells))
    cells = []
    for c in CHURN_COLUMNS:
        r = results.get(c)
        cells.append("%18s" % ("" if r is None else "%d/%d/%d" % (r["moves"]["hmuxToSmux"], r["moves"]["smuxToHmux"],
                                                               r["moves"]["hmuxToHmux"])))
    lines.append("%-*s" % (w, "moves H>S / S>H / H>H") + "".join(cells))
    return "\n".join(lines)


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
            "utilMin": min(util), "countMax": max(count.values()), "countMin": min(count.values())}


BALANCE_COLUMNS = ["hash", "rr", "wrr", "awrr", "p2c", "least-loaded"]


def balance_table(results):
    lines = []
    for work in ("constant", "bimodal"):
        lines.append("%s work:" % work)
        lines.append("%-26s" % "" + "".join("%14s" % c for c in BALANCE_COLUMNS))
        for title, f in (("requests (failed)", lambda r: "%d (%d)" % (r["requests"], r["failed"])),
                         ("p50 ms", lambda r: "%.0f" % r["p50"]), ("p99 ms", lambda r: "%.0f" % r["p99"]),
                         ("server load mean", lambda r: "%.0f%%" % (100 * r["utilMean"])),
                         ("server load min-max", lambda r: "%.0f-%.0f%%" % (100 * r["utilMin"], 100 * r["utilMax"])),
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
            lines.append("%-26s" % title + "".join(cells))
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
    import re
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
    import re
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
