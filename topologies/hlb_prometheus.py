"""The emulation's Prometheus: Debian's prometheus server, run inside the emulation's namespace
with its own data directory and port, scraping hybridlbd, every SMux and every host agent.

    scrape_config(...)   the configuration (YAML; written as JSON, which YAML reads)
    command(...)         the prometheus command line
    query(emu, promql)   an instant query through the HTTP API, as [(labels, value)]

The queries the main job prints are QUERIES below (name, PromQL, what it answers).
"""
import json
import os

PROMETHEUS_BIN = "/usr/bin/prometheus"
PORT = 9090
# Fast enough to see a failover or a migration in the graphs (~20 targets here); a scrape may
# take up to the interval (a loaded machine), then it counts as failed.
SCRAPE_INTERVAL = "2s"
RETENTION = "6h"

# What an operator asks first: (title, PromQL). The main job prints each with its answer.
QUERIES = [
    ("targets up, by job", "sum by (job) (up)"),
    ("VIPs by mux", "sum by (mux) (hybridlb_vips)"),
    ("HMux share of the traffic", "sum(hybridlb_traffic_bytes_per_second{mux=\"hmux\"}) / "
                                  "sum(hybridlb_traffic_bytes_per_second)"),
    ("reconciles by cause", "sum by (cause) (hybridlb_reconciles_total)"),
    ("migrations by outcome", "sum by (outcome) (hybridlb_migrations_total)"),
    ("median migration time (s)", "histogram_quantile(0.5, sum by (le) (hybridlb_migration_duration_seconds_bucket))"),
    ("failovers", "sum by (kind) (hybridlb_failovers_total)"),
    ("slowest southbound call kind, p90 (s)",
     "topk(1, histogram_quantile(0.9, sum by (southbound, operation, le) "
     "(hybridlb_southbound_duration_seconds_bucket)))"),
    ("SMux table version: controller vs SMuxes",
     "hybridlb_smux_table_version or max by (job) (hlb_smux_table_version)"),
    ("packets/s through the SMuxes (1 m)", "sum(rate(hlb_smux_forwarded_packets_total[1m]))"),
    ("packets/s decapsulated by the host agents (1 m)", "sum(rate(hlb_agent_vip_packets_total[1m]))"),
]


def scrape_config(daemon, smuxes, agents, ca_file=None, token_file=None):
    """daemon: "host:port" of hybridlbd; smuxes / agents: {id: "host:port"} of their APIs.
    ca_file: scrape over HTTPS trusting that CA (PEM); token_file: hybridlbd's bearer token
    (a viewer's is enough for /metrics)."""
    def static(targets, label):
        return [{"targets": [t], "labels": {label: i}} for i, t in sorted(targets.items())]

    def job(name, targets, auth=False):
        j = {"job_name": name, "static_configs": targets}
        if ca_file:
            j.update({"scheme": "https", "tls_config": {"ca_file": ca_file}})
        if auth and token_file:
            j["authorization"] = {"type": "Bearer", "credentials_file": token_file}
        return j
    return {
        "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": SCRAPE_INTERVAL,
                   "scrape_timeout": SCRAPE_INTERVAL},
        "scrape_configs": [
            job("hybridlbd", [{"targets": [daemon]}], auth=True),
            job("smux", static(smuxes, "smux")),
            job("agent", static(agents, "host")),
        ],
    }


def write_config(path, daemon, smuxes, agents, ca_file=None, token_file=None):
    with open(path, "w") as f:
        json.dump(scrape_config(daemon, smuxes, agents, ca_file, token_file), f, indent=1)


def command(config, data_dir, listen="127.0.0.1:%d" % PORT):
    return [PROMETHEUS_BIN, "--config.file=" + config, "--storage.tsdb.path=" + data_dir,
            "--storage.tsdb.retention.time=" + RETENTION, "--web.listen-address=" + listen,
            "--log.level=warn"]


def available():
    return os.access(PROMETHEUS_BIN, os.X_OK)


def query(ns_run, promql, url="http://127.0.0.1:%d" % PORT, timeout=10):
    """Instant query; ns_run runs a command in the namespace (Emu.ns_run). Returns
    [(labels dict, float value)], or raises RuntimeError with Prometheus's error."""
    r = ns_run(["curl", "-s", "-m", str(timeout), "--get", url + "/api/v1/query",
                "--data-urlencode", "query=" + promql], timeout=timeout + 5)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        raise RuntimeError("prometheus did not answer %r: %s %s" % (promql, r.stdout[:200], r.stderr[:200]))
    if doc.get("status") != "success":
        raise RuntimeError("prometheus refused %r: %s" % (promql, doc.get("error")))
    data = doc["data"]
    if data["resultType"] == "scalar":
        return [({}, float(data["result"][1]))]
    return [(s["metric"], float(s["value"][1])) for s in data["result"]]


def targets(ns_run, url="http://127.0.0.1:%d" % PORT):
    """The active targets: [(job, instance, health, last error)]."""
    r = ns_run(["curl", "-s", "-m", "5", url + "/api/v1/targets?state=active"], timeout=10)
    doc = json.loads(r.stdout)
    return [(t["labels"].get("job"), t["labels"].get("instance"), t["health"], t.get("lastError", ""))
            for t in doc["data"]["activeTargets"]]


def format_answer(result):
    """One line per series: {labels} value (value rounded for reading)."""
    if not result:
        return "  (no data)"
    lines = []
    for labels, value in result:
        shown = ",".join("%s=%s" % (k, v) for k, v in sorted(labels.items()) if k != "__name__")
        lines.append("  %s%s" % ("{%s} " % shown if shown else "", "%.4g" % value))
    return "\n".join(lines)

