#!/usr/bin/env python3
"""hlb-agent: the hybridlb host agent that runs on every DIP host.

- puts the VIPs on lo (and keeps the host from answering ARP for them), so
  decapsulated packets reach sockets bound to the VIP and replies leave with
  the VIP as source, straight to the client (DSR);
- runs the packet path in C: the XDP decapsulator (hlb-agent-xdp) when it can
  be attached, else the user-space fallback (hlb-agent-udecap: raw sockets +
  TUN); both decapsulate only packets from an allowed mux (--allow-mux) to a
  VIP of this host (--vip, --vip-prefix), and drop and count the others;
- probes the local service (TCP connect or HTTP GET) and reports DIP health;
- exports per-(VIP, mux, encapsulation) packet/byte counters for the
  controller's traffic matrix, as JSON (/stats) and Prometheus text (/metrics);
- with --cookie-config, does the server's part of Cheetah (p4/COOKIE-SPEC.md): the
  XDP backend's programs write the cookie into TSval and restore TSecr; this host's
  server id and keys come from that file and from PUT /cookie (cookie_config.py);
  closes of connections a stateful SMux hinted go to their owner SMux, and with
  --load-report-ms this host's load (--load-metric: busy CPUs, or ESTABLISHED connections
  to its VIPs) to every SMux listed there (smux_reports.py).

Management endpoints (HTTP on --listen; HTTPS with --tls-cert/--tls-key/--tls-ca, where
writes need a client certificate issued by that CA for client use, and only then may
--listen be another address than loopback):
  GET /health      agent + decap backend + DIP health (JSON, always 200)
  GET /dip-health  200 when the local service is healthy, 503 otherwise
  GET /stats       counters and rates per VIP (JSON)
  GET /metrics     Prometheus text format
  GET /cookie      Cheetah cookie configuration (key fingerprints) and counters
  PUT /cookie      replace it (JSON, cookie_config.py); 400 naming the field on error
"""
import os
import signal
import sys
import tempfile
import threading
import time

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

import cookie_config
import smux_reports
from agent_log import log
from agent_config import build_config, warn_open_allow_lists
from agent_mgmt import ManagementServer, make_handler
from decap_backend import DecapBackend, VipSetup
from dip_health import DipHealth

class Agent:
    def __init__(self, cfg, run_dir):
        self.cfg = cfg
        self.started = time.time()
        self.vips = None if cfg.no_vip_setup else VipSetup(cfg.vip)
        self.cookies = (cookie_config.CookieControl(cfg.cookie_config, cfg.allow_vip, run_dir)
                        if cfg.cookie_config else None)
        current = (lambda: self.cookies.cfg) if self.cookies else (lambda: None)
        self.closed = smux_reports.ClosedReporter(current, log, cfg.smux_tls) if self.cookies else None
        self.loads = None
        try:
            self.decap = DecapBackend(cfg, run_dir, self.cookies,
                                      self.closed.add if self.closed else None)
        except Exception:
            self.stop_reports()
            if self.vips:
                self.vips.undo()
            raise
        if cfg.load_report_ms:
            metric = (smux_reports.ConnectionLoad(self.decap.snapshot) if cfg.load_metric == "connections"
                      else smux_reports.CpuLoad())
            self.loads = smux_reports.LoadReporter(cfg.dip, cfg.load_report_ms / 1000, current, log,
                                                   metric, cfg.smux_tls)
        self.owners = (smux_reports.OwnerWatch(current, self.decap.open_hinted, log,
                                               cfg.owner_check_ms / 1000, cfg.smux_tls)
                       if self.cookies and cfg.owner_check_ms else None)
        self.dip_health = DipHealth(cfg)
        self.prev = None          # (time, {key: (packets, bytes)}) for rates
        self.rates = {}
        self.lock = threading.Lock()

    def stats(self):
        snap = self.decap.snapshot() or {"counters": {}, "vips": [], "time": None}
        now = snap.get("time") or time.time()
        current = {(v["vip"], v["mux"], v["encap"]): (v["packets"], v["bytes"]) for v in snap["vips"]}
        with self.lock:
            if self.prev and now > self.prev[0]:
                dt = now - self.prev[0]
                self.rates = {k: ((p - self.prev[1].get(k, (0, 0))[0]) / dt,
                                  (b - self.prev[1].get(k, (0, 0))[1]) / dt)
                              for k, (p, b) in current.items()}
            if not self.prev or now > self.prev[0]:
                self.prev = (now, current)
            rates = dict(self.rates)
        per_vip = {}
        for (vip, mux, encap), (packets, nbytes) in current.items():
            entry = per_vip.setdefault(vip, {"packets": 0, "bytes": 0, "pps": 0.0,
                                             "bytes_per_s": 0.0, "by_mux": []})
            pps, bps = rates.get((vip, mux, encap), (0.0, 0.0))
            entry["packets"] += packets
            entry["bytes"] += nbytes
            entry["pps"] += pps
            entry["bytes_per_s"] += bps
            entry["by_mux"].append({"mux": mux, "encap": encap, "packets": packets,
                                    "bytes": nbytes, "pps": pps, "bytes_per_s": bps})
        return {"dip": self.cfg.dip, "time": now, "backend": self.decap.info,
                "counters": snap["counters"], "vips": per_vip, "cookie": snap.get("cookie", {}),
                "establishedConnections": snap.get("establishedConnections"),
                "reports": self.reports()}

    def reports(self):
        """Counters of what went to the SMuxes (smux_reports.py)."""
        out = {}
        if self.closed:
            out["closed"] = dict(self.closed.counters)
        if self.loads:
            out["loads"] = dict(self.loads.counters, metric=self.loads.metric.unit,
                                lastLoad=self.loads.last_load, lastMatched=self.loads.last_matched)
        if self.owners:
            out["adopt"] = dict(self.owners.counters)
        return out

    def stop_reports(self):
        for r in (self.closed, self.loads, getattr(self, "owners", None)):
            if r:
                r.stop()

    def health(self):
        return {"status": "ok" if self.decap.alive() else "degraded",
                "uptime_s": round(time.time() - self.started, 3),
                "decap": dict(self.decap.info, alive=self.decap.alive()),
                "service": self.dip_health.state(), "vips": self.cfg.vip,
                "allowed_muxes": self.cfg.allow_mux or "any",
                "allowed_vips": self.cfg.allow_vip or "any"}

    def collect(self):
        """prometheus_client collector interface."""
        s = self.stats()
        pk = CounterMetricFamily("hlb_agent_vip_packets", "Packets decapsulated to a VIP",
                                 labels=["vip", "mux", "encap"])
        by = CounterMetricFamily("hlb_agent_vip_bytes", "Inner IP bytes decapsulated to a VIP",
                                 labels=["vip", "mux", "encap"])
        for vip, e in s["vips"].items():
            for m in e["by_mux"]:
                pk.add_metric([vip, m["mux"], m["encap"]], m["packets"])
                by.add_metric([vip, m["mux"], m["encap"]], m["bytes"])
        res = CounterMetricFamily("hlb_agent_decap_packets", "Decap verdicts", labels=["result"])
        for name, value in s["counters"].items():
            res.add_metric([name], value)
        h = self.dip_health.state()
        healthy = GaugeMetricFamily("hlb_agent_dip_healthy", "1 when every service check passes",
                                    labels=["dip"])
        healthy.add_metric([h["dip"]], 1 if h["healthy"] else 0)
        per_check = GaugeMetricFamily("hlb_agent_check_healthy", "1 when this service check passes",
                                      labels=["dip", "check"])
        for c in h["checks"]:
            per_check.add_metric([h["dip"], c["check"]], 1 if c["healthy"] else 0)
        ck = CounterMetricFamily("hlb_agent_cookie_packets", "Cheetah cookie events "
                                 "(p4/COOKIE-SPEC.md section 11)", labels=["event"])
        for name, value in s["cookie"].items():
            ck.add_metric([name], value)
        up = GaugeMetricFamily("hlb_agent_decap_up", "1 while the decap backend runs",
                               labels=["backend", "mode"])
        up.add_metric([self.decap.info.get("backend", ""), self.decap.info.get("mode", "")],
                      1 if self.decap.alive() else 0)
        sent = CounterMetricFamily("hlb_agent_smux_reports", "Reports to the SMuxes: closes of "
                                   "stateful connections, loads, and re-reports of open ones to a new or restarted owner (adopt)", labels=["kind", "result"])
        for kind, counters in s["reports"].items():
            for result, value in counters.items():
                if not result.startswith("last") and result != "metric":
                    sent.add_metric([kind, result], value)
        out = [pk, by, res, ck, sent, healthy, per_check, up]
        if s["establishedConnections"] is not None:
            est = GaugeMetricFamily("hlb_agent_established_connections", "ESTABLISHED connections to "
                                    "this host's VIPs (the cookie sockops program's count)")
            est.add_metric([], s["establishedConnections"])
            out.append(est)
        return out

    def stop(self):
        self.dip_health.stop()
        self.decap.stop()
        self.stop_reports()
        if self.vips:
            self.vips.undo()


def main(argv=None):
    cfg = build_config(argv if argv is not None else sys.argv[1:])
    warn_open_allow_lists(cfg)
    run_dir = tempfile.mkdtemp(prefix="hlb-agent-")
    try:
        agent = Agent(cfg, run_dir)
    except Exception as e:
        log("error", "agent failed to start", error=str(e))
        return 1
    registry = CollectorRegistry()
    registry.register(agent)
    try:
        server = ManagementServer(cfg.listen, make_handler(agent, registry), cfg.tls)
    except OSError as e:
        agent.stop()
        log("error", "cannot listen", listen=f"{cfg.listen[0]}:{cfg.listen[1]}", error=str(e))
        return 1
    stopping = threading.Event()

    def on_signal(signum, frame):
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    log("info", "agent ready", listen=f"{cfg.listen[0]}:{cfg.listen[1]}", tls=bool(cfg.tls), **agent.decap.info)
    rc = 0
    while not stopping.wait(0.2):
        if not agent.decap.alive():
            log("error", "decap backend exited", rc=agent.decap.proc.returncode)
            rc = 1
            break
    server.shutdown()
    agent.stop()
    try:
        os.remove(agent.decap.stats_file)
        os.rmdir(run_dir)
    except OSError:
        pass
    return rc


if __name__ == "__main__":
    sys.exit(main())
