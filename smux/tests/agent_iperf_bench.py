"""iperf3 through a Cheetah cookie VIP against the same VIP without cookies (a benchmark,
not a test: it prints a table).

    client ns -- router ns -- DIP host ns (agent: XDP decap [+ tc cookie encode], iperf3 -s)
                     |
                 SMux ns: a real hlb-smux on af_packet

One VIP, one DIP, one SMux (agent_smux_reports.ReportTopology). The two cases differ
only in what the cookies add: `cheetah` (the SMux decodes every client segment's cookie,
the agent encodes every server segment and restores TSecr) and `hash` (the SMux hashes,
the agent only decapsulates). Rounds alternate the cases (the agent restarted with or
without its cookie configuration, the SMux table replaced) so a noisy neighbour hits both
alike; each direction is measured (upload: data through the SMux; download `-R`: data
through the tc encoder). Prints per-case medians and cheetah / hash ratios.

    sudo python3 smux/tests/agent_iperf_bench.py [--rounds 7] [--seconds 5]
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent_testlib as tl  # noqa: E402
from agent_cookie_e2e import AGENT, DIP, KEY, MGMT, SERVER_ID, agent_err, mgmt_ok, tl_wait  # noqa: E402
from agent_smux_reports import SMUX_BIN, SMUX_DATA, VIP_SL, ReportTopology, smux_api  # noqa: E402

IPERF_PORT = 5201
CASES = ("hash", "cheetah")


def table(version, affinity):
    vip = {"vip": VIP_SL, "aggregate": "10.200.0.0/24", "selection": "crc32", "affinity": affinity,
           "ports": [{"proto": "tcp", "port": IPERF_PORT, "dips": [{"ip": DIP, "serverId": SERVER_ID}]}]}
    if affinity == "cheetah":
        vip.update(cookieKey=KEY, mechanism="rr")
    return {"version": version, "vips": [vip]}


def start_agent(t, cookies):
    args = [AGENT, "--iface", t.if_d, "--local-ip", DIP, "--vip", VIP_SL, "--allow-mux", SMUX_DATA,
            "--decap", "xdp", "--listen", f"127.0.0.1:{MGMT}", "--cgroup", t.cgroup_rel]
    if cookies:
        cfg = os.path.join(t.tmp, "cookie.json")
        with open(cfg, "w") as f:
            json.dump({"serverId": SERVER_ID, "key": KEY}, f)
        args += ["--cookie-config", cfg]
    agent = t.start(t.dip, [sys.executable] + args)
    if not tl_wait(lambda: mgmt_ok(t.dip)):
        raise RuntimeError(f"agent did not start: {agent_err(agent)}")
    return agent


def iperf(t, seconds, reverse):
    cmd = ["iperf3", "-c", VIP_SL, "-p", str(IPERF_PORT), "-t", str(seconds), "-J"]
    out = t.client.run(cmd + (["-R"] if reverse else []), check=False, timeout=seconds + 30).stdout
    res = json.loads(out)
    if "error" in res:
        raise RuntimeError(f"iperf3: {res['error']}")
    return (res["end"]["sum_received"]["bits_per_second"] / 1e6,
            res["end"]["sum_sent"].get("retransmits", 0))


def smux_counters(t):
    return smux_api(t, "GET", "/stats")[1].get("cookie", {})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7, help="rounds per case and direction (default 7)")
    ap.add_argument("--seconds", type=int, default=5, help="seconds per iperf3 run (default 5)")
    a = ap.parse_args()
    if not os.access(SMUX_BIN, os.X_OK):
        sys.exit(f"{SMUX_BIN} is not built (smux/README.md, Build)")
    tmp = tl.run(["mktemp", "-d", "/tmp/hlb-iperf-XXXXXX"]).stdout.strip()
    t = ReportTopology(tmp)
    results = {(c, d): [] for c in CASES for d in ("upload", "download")}
    retrans = {(c, d): 0 for c in CASES for d in ("upload", "download")}
    invalid = 0
    try:
        t.start_smux()
        t.start(t.dip, ["iperf3", "-s", "-p", str(IPERF_PORT)], cgroup=True)
        if not tl_wait(lambda: f":{IPERF_PORT} " in t.dip.run(["ss", "-ltnH"]).stdout):
            raise RuntimeError("iperf3 server did not listen")
        version = 0
        for r in range(a.rounds):
            order = CASES if r % 2 == 0 else CASES[::-1]
            for case in order:
                version += 1
                status, body = smux_api(t, "PUT", "/table", table(version, case))
                if status != 200:
                    raise RuntimeError(f"PUT /table: {status} {body}")
                agent = start_agent(t, case == "cheetah")
                before = smux_counters(t)
                for direction in ("upload", "download"):
                    mbps, rtx = iperf(t, a.seconds, direction == "download")
                    results[(case, direction)].append(mbps)
                    retrans[(case, direction)] += rtx
                after = smux_counters(t)
                invalid += after.get("invalid", 0) - before.get("invalid", 0)
                if case == "cheetah" and after.get("decoded", 0) <= before.get("decoded", 0):
                    raise RuntimeError(f"no cookie decoded by the SMux in a cheetah round: {after}")
                tl.stop_pid(agent.pid)
                t.procs.remove(agent)
                time.sleep(0.5)   # the XDP program detached before the next agent attaches
            print(f"round {r + 1}/{a.rounds}: " + ", ".join(
                f"{c} {d} {results[(c, d)][-1]:.0f}" for c in CASES for d in ("upload", "download")),
                flush=True)
    finally:
        t.close()
        tl.run(["rm", "-rf", tmp], check=False)
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"\niperf3 Mbit/s, medians of {a.rounds} alternating rounds of {a.seconds} s (load {load})")
    print(f"{'direction':<10} {'hash':>10} {'cheetah':>10} {'cheetah/hash':>13}"
          f" {'retransmits hash':>17} {'cheetah':>8}")
    for d in ("upload", "download"):
        h = statistics.median(results[("hash", d)])
        c = statistics.median(results[("cheetah", d)])
        print(f"{d:<10} {h:>10.0f} {c:>10.0f} {c / h:>13.3f}"
              f" {retrans[('hash', d)]:>17} {retrans[('cheetah', d)]:>8}")
    print(f"cookies the SMux found invalid (dropped) in the cheetah rounds: {invalid}")


if __name__ == "__main__":
    main()
