"""Prism benchmark on the namespace testbed (smux/prism/bench.sh runs it):

1. Bandwidth (Prism paper Fig. 5 analogue): the front end's link and each
   backend's link shaped to X Mbit/s both ways (tbf); wrk fetches objects of
   64 KB .. 8 MB over persistent connections; aggregate throughput of Prism,
   HAProxy and nginx (both on the front-end host, on the same VIP, proxying to
   the same backends), and direct access to the backends.
2. Per-request cost for a 2 MB response (Table 1 analogue), one connection,
   sequential requests, client-side times: start-up = request sent -> first
   response byte (requests sent after a pause); tear-down = how much later the
   next request is served when sent right after the last byte (its start-up
   minus the paused one); total = one back-to-back request cycle.  Prism also
   with the backends' route initcwnd raised to 64 (section 5.2: an imported
   connection restarts at the initial window).  Prism twice: steering before the
   import (--steer-before-import, the default) and with the GO round trip; and
   prism-fabric: mode b, the fabric steers (a pin per hand-off in the test mux,
   installed through the controller's pin API in miniature, tests/fabric_pins.py),
   so its start-up includes the pin's round trip.  --mux smux: a real hlb-smux is the
   mux, and prism-fabric's pins go to its pin table.
   --trace: where Prism's start-up goes, the median time of each hand-off stage
   (front end and backend logs; slows Prism down a little, for diagnosis).
3. Steering cost per packet (BPF_PROG_TEST_RUN of the agent's XDP program).

Prints the tables; --json FILE also writes the figures."""
import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time

import prism_testbed as pt

SIZES = [64 << 10, 256 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20]
# The chain of a hand-off's stages in the --trace logs (be_: the backend's), from
# the client's request to its first response byte: the steps sum to the start-up.
TRACE_ORDER = ["client_sent", "read", "parsed", "be_handoff", "be_imported", "be_go",
               "be_first_byte", "client_first_byte"]
UNITS = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}

HAPROXY_CFG = """global
    maxconn 4096
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend vip
    bind {vip}:80
    default_backend pool
backend pool
    balance roundrobin
{servers}
"""

NGINX_CFG = """daemon off;
worker_processes auto;
pid {run}/nginx.pid;
error_log {run}/nginx.err warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {run}/body;
    proxy_temp_path {run}/proxy;
    fastcgi_temp_path {run}/fastcgi;
    uwsgi_temp_path {run}/uwsgi;
    scgi_temp_path {run}/scgi;
    upstream pool {{
{servers}
{keepalive}
    }}
    server {{
        listen {vip}:80;
        location / {{
            proxy_pass http://pool;
{upstream_opts}
            proxy_max_temp_file_size 0;
        }}
    }}
}}
"""


class Bench:
    def __init__(self, args):
        self.a = args
        # Mode c needs a testbed of its own: a cheetah VIP, every agent writing cookies.
        self.tb = pt.Testbed(args.backends, frontend=False, trace=args.trace,
                             pins="prism-fabric" in args.modes, mux=args.mux,
                             steering="cookie" if "prism-cookie" in args.modes else "agent")
        self.proxy = None
        self.stages = {}
        self.trace_mark = {}

    # ------------------------------------------------------------ modes

    def start_mode(self, mode):
        tb = self.tb
        if mode in ("prism", "prism-go", "prism-fabric", "prism-cookie"):
            tb.before_import = mode != "prism-go"
            tb.steering = {"prism-fabric": "fabric", "prism-cookie": "cookie"}.get(mode, "agent")
            tb.start_frontend(pt.default_rules(self.a.backends))
            self.proxy = tb.fe_proc
            return
        if mode == "direct":
            return
        servers = [(f"b{i}", pt.backend_ip(i)) for i in range(1, self.a.backends + 1)]
        run = os.path.join(tb.run_dir, mode)
        os.makedirs(run, exist_ok=True)
        cfg = os.path.join(run, f"{mode}.conf")
        if mode == "haproxy":
            text = HAPROXY_CFG.format(vip=pt.VIP, servers="\n".join(
                f"    server {n} {ip}:{pt.HTTP_PORT}" for n, ip in servers))
            cmd = ["haproxy", "-db", "-f", cfg]
        else:
            # nginx: upstream keep-alive, as operators configure it; nginx-newconn:
            # nginx's default, a new upstream connection per request (the paper's proxy).
            newconn = mode == "nginx-newconn"
            keep = "" if newconn else "        keepalive 64;"
            opts = "" if newconn else ('            proxy_http_version 1.1;\n'
                                       '            proxy_set_header Connection "";')
            text = NGINX_CFG.format(run=run, vip=pt.VIP, keepalive=keep, upstream_opts=opts,
                                    servers="\n".join(
                f"        server {ip}:{pt.HTTP_PORT};" for _, ip in servers))
            cmd = ["nginx", "-p", run, "-c", cfg]
        with open(cfg, "w") as f:
            f.write(text)
        self.proxy = tb.start(tb.fe, cmd)
        pt.wait_until(lambda: self.port_open(), 10, what=f"{mode} listening on the VIP")

    def port_open(self):
        r = self.tb.fe.run(["ss", "-Hltn", f"sport = :{pt.VIP_PORT}"], check=False)
        return pt.VIP in r.stdout

    def stop_mode(self):
        if self.proxy is not None:
            pt.tl.stop_pid(self.proxy.pid)
            self.proxy.wait(5)
            self.proxy = None
            pt.wait_until(lambda: not self.port_open(), 10, what="the VIP port to be free")
        if self.tb.steering == "fabric":
            self.tb.stop_pins()
            self.tb.steering = "agent"

    def shape_all(self, rate):
        tb = self.tb
        links = [(tb.fe, tb.if_fe), (tb.router, tb.if_rt_fe)]
        for i in tb.backend_ns:
            links += [(tb.backend_ns[i], tb.if_backend[i]), (tb.router, tb.if_rt_backend[i])]
        for ns, ifname in links:
            if rate:
                tb.shape(ns, ifname, rate)
            else:
                tb.unshape(ns, ifname)

    # ------------------------------------------------------------ bandwidth

    def wrk(self, urls, conns, seconds):
        """Sum over one wrk per URL: (bytes/s, requests, errors)."""
        per = max(1, conns // len(urls))
        procs = [self.tb.client.popen(["wrk", "-t", "1", "-c", str(per), "-d", f"{seconds}s",
                                       "--timeout", "10s", u], stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True) for u in urls]
        rate = reqs = errors = 0
        for p in procs:
            out = p.communicate(timeout=seconds + 60)[0]
            m = re.search(r"Transfer/sec:\s+([\d.]+)([KMG]?B)", out)
            n = re.search(r"(\d+) requests in", out)
            if not m or not n:
                raise RuntimeError(f"wrk output not understood: {out}")
            rate += float(m.group(1)) * UNITS[m.group(2)]
            reqs += int(n.group(1))
            e = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
            errors += sum(map(int, e.groups())) if e else 0
            bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
            errors += int(bad.group(1)) if bad else 0
        return rate, reqs, errors

    def bandwidth(self):
        rows = {}
        self.shape_all(self.a.rate)
        try:
            for mode in self.a.modes:
                self.start_mode(mode)
                try:
                    for size in SIZES:
                        if mode == "direct":
                            urls = [f"http://{pt.backend_ip(i)}:{pt.HTTP_PORT}/obj/{size}"
                                    for i in range(1, self.a.backends + 1)]
                        else:
                            urls = [f"http://{pt.VIP}/obj/{size}"]
                        rate, reqs, errors = self.wrk(urls, self.a.conns, self.a.seconds)
                        rows[(mode, size)] = {"mbit": rate * 8 / 1e6, "requests": reqs,
                                              "errors": errors}
                        print(f"  {mode:8s} {size >> 10:6d} KB  {rate * 8 / 1e6:8.1f} Mbit/s  "
                              f"{reqs} requests, {errors} errors", file=sys.stderr, flush=True)
                finally:
                    self.stop_mode()
        finally:
            self.shape_all(None)
        return rows

    # ------------------------------------------------------------ per-request cost

    def timings(self, host, port, size, n, pause):
        """Runs tests/prism_client.py-like timing inside the client ns: per request
        (start-up, transfer) in microseconds."""
        code = (
            "import socket,sys,time,json\n"
            "host,port,size,n,pause=sys.argv[1],int(sys.argv[2]),int(sys.argv[3]),int(sys.argv[4]),float(sys.argv[5])\n"
            "s=socket.create_connection((host,port)); s.setsockopt(socket.IPPROTO_TCP,socket.TCP_NODELAY,1)\n"
            "req=('GET /obj/%d HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'%size).encode(); out=[]\n"
            "for i in range(n+1):\n"
            " if pause: time.sleep(pause)\n"
            " t0=time.perf_counter(); s.sendall(req); buf=s.recv(65536); t1=time.perf_counter()\n"
            " head,_,body=buf.partition(b'\\r\\n\\r\\n'); got=len(body)\n"
            " while got<size:\n"
            "  got+=len(s.recv(1<<20))\n"
            " t2=time.perf_counter()\n"
            " if i: out.append(((t1-t0)*1e6,(t2-t1)*1e6,(t2-t0)*1e6,t0*1e9,t1*1e9))\n"
            "print(json.dumps(out))\n")
        r = self.tb.client.run([sys.executable, "-c", code, host, str(port), str(size), str(n),
                                str(pause)], timeout=300, check=False)
        if r.returncode != 0:
            raise RuntimeError(f"timing client to {host}:{port} failed: {r.stderr[-1500:]}")
        return json.loads(r.stdout)

    def per_request(self):
        """Each mode's series in turn, --rounds times: on a shared machine the load
        drifts, and every mode gets its samples from every part of the run."""
        size, n = 2 << 20, self.a.requests
        modes = [("direct", "direct"), ("haproxy", "haproxy"), ("nginx", "nginx"),
                 ("nginx-newconn", "nginx-newconn"), ("prism", "prism"), ("prism-go", "prism-go"),
                 ("prism-iw64", "prism"), ("prism-fabric", "prism-fabric"), ("prism-cookie", "prism-cookie")]
        modes = [(label, mode) for label, mode in modes
                 if (mode if mode != "prism-go" else "prism") in self.a.modes]
        rows = {label: ([], []) for label, _ in modes}   # paused, back to back
        self.shape_all(self.a.rate)
        try:
            for _ in range(self.a.rounds):
                for label, mode in modes:
                    paused, b2b = self.series(label, mode, size, n)
                    rows[label][0].extend(paused)
                    rows[label][1].extend(b2b)
        finally:
            self.shape_all(None)
        out = {}
        med = lambda rows, k: statistics.median(r[k] for r in rows)  # noqa: E731
        p90 = lambda rows, k: sorted(r[k] for r in rows)[int(0.9 * len(rows))]  # noqa: E731
        for label, (paused, b2b) in rows.items():
            out[label] = {"startup_us": med(paused, 0), "startup_p90_us": p90(paused, 0),
                          "transfer_us": med(paused, 1),
                          "teardown_us": med(b2b, 0) - med(paused, 0),
                          "total_us": med(b2b, 2), "total_p90_us": p90(b2b, 2)}
            print(f"  {label:10s} {out[label]}", file=sys.stderr, flush=True)
        return out

    def series(self, label, mode, size, n):
        """(paused rows, back-to-back rows) of one mode."""
        if label == "prism-iw64":
            self.set_initcwnd(64)
        self.start_mode(mode)
        try:
            host, port = ((pt.backend_ip(1), pt.HTTP_PORT) if mode == "direct"
                          else (pt.VIP, pt.VIP_PORT))
            if self.a.trace:
                self.trace_mark = self.trace_size()
            paused = self.timings(host, port, size, n, 0.05)
            if self.a.trace and mode.startswith("prism"):
                self.stages[label] = self.trace_stages(paused)
            return paused, self.timings(host, port, size, n, 0.0)
        finally:
            self.stop_mode()
            if label == "prism-iw64":
                self.set_initcwnd(None)

    # ------------------------------------------------------------ --trace

    def trace_logs(self):
        return [os.path.join(self.tb.run_dir, f) for f in sorted(os.listdir(self.tb.run_dir))
                if f.endswith(".log")]

    def trace_size(self):
        return {p: os.path.getsize(p) for p in self.trace_logs()}

    def trace_stages(self, client_rows):
        """Median µs of each stage of the hand-offs logged since trace_mark: the front
        end's records joined with the backend's (same connection, the first backend
        record after the front end parsed the request) and with the client's request
        (sent, first byte received: the one whose start-up holds the front end's read;
        the client's clock is CLOCK_MONOTONIC too)."""
        fe, be = [], {}
        for path in self.trace_logs():
            with open(path) as f:
                f.seek(self.trace_mark.get(path, 0))
                for line in f:
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue
                    if rec.get("msg") != "handoff trace":
                        continue
                    if os.path.basename(path) == "fe.log":
                        fe.append(rec)
                    else:
                        be.setdefault(rec["conn"], []).append(rec["marks"])
        deltas = {}
        for rec in fe:
            m = dict(rec["marks"])
            later = [b for b in be.get(rec["conn"], []) if b["handoff"] >= m["parsed"]]
            if not later:
                continue
            b = min(later, key=lambda b: b["handoff"])
            m.update({"be_" + k: v for k, v in b.items() if v})
            for row in client_rows:
                if row[3] <= m["read"] <= row[4]:
                    m["client_sent"], m["client_first_byte"] = row[3], row[4]
            stages = [(k, m[k]) for k in TRACE_ORDER if k in m]
            for (a, ta), (z, tz) in zip(stages, stages[1:]):
                deltas.setdefault(f"{a}->{z}", []).append((tz - ta) / 1000)
            deltas.setdefault("read->first_byte", []).append((m["be_first_byte"] - m["read"]) / 1000)
        return {k: round(statistics.median(v), 1) for k, v in deltas.items()}

    def set_initcwnd(self, iw):
        for i, ns in self.tb.backend_ns.items():
            gw = f"10.78.{10 + i}.1"
            extra = ["initcwnd", str(iw)] if iw else []
            ns.run(["ip", "route", "change", "default", "via", gw] + extra)

    def steering_cost(self):
        r = subprocess.run([os.path.join(pt.BUILD, "prism-steer-test"),
                            os.path.join(pt.AGENT_BUILD, "xdp_decap.bpf.o"), "--repeat", "1000",
                            "--rounds", "201"], capture_output=True, text=True, check=True)
        return json.loads(r.stdout)["ns_per_packet"]

    def close(self):
        self.stop_mode()
        self.tb.close()


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rate", type=int, default=100, help="X: each link's rate, Mbit/s")
    p.add_argument("--backends", type=int, default=2)
    p.add_argument("--conns", type=int, default=8, help="client connections (wrk)")
    p.add_argument("--seconds", type=int, default=5, help="wrk duration per point")
    p.add_argument("--requests", type=int, default=30, help="2 MB requests per timing series")
    p.add_argument("--rounds", type=int, default=1,
                   help="per-request series of every mode in turn, this many times (pooled)")
    p.add_argument("--modes", default="prism,prism-fabric,haproxy,nginx,nginx-newconn,direct",
                   help="prism: steering by the front-end host's agent (mode a); prism-fabric: "
                        "by pins in the fabric (mode b, the test mux's pin map); prism-cookie: by the "
                        "Cheetah cookie (mode c, on hlb-smux; not with the other prism modes)")
    p.add_argument("--mux", choices=("bpf", "smux"), default="bpf",
                   help="the mux: the test's BPF mux, or a real hlb-smux (its pin table for prism-fabric)")
    p.add_argument("--skip-bandwidth", action="store_true")
    p.add_argument("--trace", action="store_true",
                   help="also print where Prism's start-up goes (median µs per hand-off stage)")
    p.add_argument("--json")
    a = p.parse_args()
    a.modes = a.modes.split(",")
    if "prism-cookie" in a.modes and {"prism", "prism-go", "prism-fabric"} & set(a.modes):
        p.error("--modes: prism-cookie needs a testbed of its own (a cheetah VIP whose hosts all write "
                "cookies): run the other prism modes separately")
    if "prism-cookie" in a.modes:
        a.mux = "smux"   # the testbed's mode c runs on hlb-smux, which decodes the cookies
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = os.getloadavg()[0]
    b = Bench(a)
    try:
        bw = {} if a.skip_bandwidth else b.bandwidth()
        cost = b.per_request()
        steer = b.steering_cost()
    finally:
        b.close()
    print(f"\nPrism benchmark, {started}, CPU {cpu_model()} ({os.cpu_count()} cores), "
          f"load average {load:.1f} at start; links X = {a.rate} Mbit/s, {a.backends} backends; "
          f"mux: {'hlb-smux' if a.mux == 'smux' else 'the test BPF mux'}")
    if bw:
        print(f"\nAggregate throughput, Mbit/s ({a.conns} persistent connections, wrk, "
              f"{a.seconds} s per point; X = {a.rate})")
        print(f"{'object':>8} " + " ".join(f"{m:>9}" for m in a.modes))
        for size in SIZES:
            print(f"{size >> 10:>6}KB " + " ".join(
                f"{bw[(m, size)]['mbit']:9.1f}" for m in a.modes))
        errs = {m: sum(bw[(m, s)]["errors"] for s in SIZES) for m in a.modes}
        print("errors: " + ", ".join(f"{m} {e}" for m, e in errs.items()))
    print("\nPer request, 2 MB response, one connection, medians in microseconds "
          f"({a.requests} requests per series, {a.rounds} round(s) of every mode in turn)")
    print(f"{'':12}{'start-up':>10}{'(p90)':>9}{'tear-down':>11}{'transfer':>10}{'total':>10}{'(p90)':>9}")
    for label, r in cost.items():
        print(f"{label:12}{r['startup_us']:10.0f}{r['startup_p90_us']:9.0f}{r['teardown_us']:11.0f}"
              f"{r['transfer_us']:10.0f}{r['total_us']:10.0f}{r['total_p90_us']:9.0f}")
    for label, st in b.stages.items():
        print(f"\n{label}: median µs per hand-off stage (front end, be_ = backend; --trace)")
        for k, v in st.items():
            print(f"  {k:32}{v:9.1f}")
    print("\nSteering cost per packet (BPF_PROG_TEST_RUN, agent XDP program, median ns): "
          + ", ".join(f"{k} {v}" for k, v in steer.items()))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"date": started, "cpu": cpu_model(), "load": load, "rate_mbit": a.rate,
                       "requests": a.requests, "rounds": a.rounds,
                       "bandwidth": {f"{m}/{s}": v for (m, s), v in bw.items()},
                       "per_request": cost, "stages": b.stages, "steering_ns": steer}, f, indent=1)


if __name__ == "__main__":
    main()
