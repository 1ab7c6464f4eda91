"""Session fixtures: one emulation (k=4 fat-tree, small host tables so that some VIPs do not
fit on HMuxes, 2 DPDK SMuxes + FRR, host agents) and one real hybridlbd, started once per
session and torn down at the end (also on Ctrl-C: hlbemu.stop kills exactly what it started).
"""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "topologies"))
import hlbemu  # noqa: E402

AGG = "10.100.0.0/16"
# host table of 4: at most 4 VIP services fit on the HMuxes (fabric-wide /32s), the rest
# stay on the SMuxes.
HOST_TABLE = 4
N_VIPS = 6
# UDP flows unpin 10 s after their last datagram (SMux default 60 s), idle established TCP
# connections after 30 s (300 s; one whose FIN the SMux never saw stays pinned that long): a VIP
# held on the SMuxes (its pool grew) returns to an HMux sooner once the tests' traffic ends.
SMUX_PIN_TIMEOUTS = ["--smux-udp-timeout", "10", "--smux-tcp-timeout", "30"]


def vip_config(topo):
    hosts = [h["ip"] for h in topo["hosts"]]
    vips = []
    for i in range(N_VIPS):
        a, b = hosts[(2 * i) % len(hosts)], hosts[(2 * i + 9) % len(hosts)]
        vips.append({"vip": "10.100.1.%d" % (i + 1), "aggregate": AGG,
                     "ports": [{"proto": "any", "port": 0, "dips": [{"ip": a}, {"ip": b}]}]})
    return {"vips": vips}


@pytest.fixture(scope="session")
def emu(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("needs root (namespaces, OVS, DPDK)")
    if not os.path.exists(hlbemu.DAEMON_BIN) or not os.path.exists(
            os.path.join(REPO, "app", "standalone", "target", "hybridlbd.jar")) or not os.path.exists(hlbemu.SOLVER_JAR):
        pytest.fail("hybridlbd or the solver CLI is not built (mvn -B -pl app/standalone,solver/tools -am package)")
    tag = "it%d" % (os.getpid() % 100000)
    d = tmp_path_factory.mktemp("emu")
    topo_file = str(d / "topology.json")
    subprocess.run(["java", "-jar", hlbemu.SOLVER_JAR, "topology", "fat-tree", "--k=4",
                    "--smux-tor=tor-0-0,tor-2-0", "--host-table=%d" % HOST_TABLE, "--out=" + topo_file],
                   check=True, capture_output=True)
    with open(topo_file) as f:
        topo = json.load(f)
    vips = vip_config(topo)
    vip_file = str(d / "vips.json")
    with open(vip_file, "w") as f:
        json.dump(vips, f)
    try:
        subprocess.run([hlbemu.PY, os.path.join(REPO, "topologies", "hlbemu.py"), "start", "--tag", tag,
                        "--topology", topo_file, "--vips", vip_file,
                        *SMUX_PIN_TIMEOUTS], check=True, timeout=240)
        e = start_daemon(tag)
        e.topo = topo
        e.vips = vips["vips"]
        e.load = []
        # Background load on every VIP (what the controller measures to place them).
        clients = sorted(h for h, v in e.fab["hosts"].items() if v["role"] == "client")
        for i, v in enumerate(e.vips):
            e.load.append(e.probe(clients[i % len(clients)], "http", "--vip", v["vip"], "--rate", 8 if i < 4 else 4,
                                  "--duration", 600, "--timeout", 1))
        yield e
    finally:
        stop(tag, os.environ.get("HLB_IT_LOGS", "/tmp/hlb-it-logs"))


def start_daemon(tag):
    """The emulation's hybridlbd, reconciling every 2 s and sampling traffic every second."""
    e = hlbemu.Emu(tag)
    e.set_daemon_intervals(2000, 1000)
    e.daemon_start()
    return e


def stop(tag, keep):
    """Stops the emulation, keeping the logs of every process (daemon, SMuxes, FRR, agents) in keep."""
    logs = os.path.join(hlbemu.rundir(tag), "logs")
    if os.path.isdir(logs):
        shutil.rmtree(keep, ignore_errors=True)
        shutil.copytree(logs, keep)
        print("\nintegration-tests: emulation logs copied to %s" % keep)
    hlbemu.stop(tag, quiet=True)


def pytest_collection_modifyitems(items):
    """The API fuzzing (test_api_fuzz.py) runs last: it sends the live daemon everything the
    OpenAPI document allows, and the other tests expect the fabric as the fixtures left it. The
    P4 HMux case (test_p4_hmux.py) runs first: its own emulation is stopped before the session's
    starts (two at once would share the machine's two cores)."""
    items.sort(key=lambda item: {"test_p4_hmux": 0, "test_api_fuzz": 2}.get(item.module.__name__, 1))


def wait_for(cond, timeout, step=0.25):
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            return v
        time.sleep(step)


def placement(e):
    code, a = e.api("GET", "/assignment")
    assert code == 200, a
    return a["installed"]


def wait_quiet(e, timeout=30):
    """Waits until no migration is in flight."""
    return wait_for(lambda: not e.api("GET", "/migrations")[1].get("inFlight"), timeout, 0.5)


def newest_migration(e):
    """Id of the newest migration, running or finished (0: none yet)."""
    m = e.api("GET", "/migrations")[1]
    ids = [r["id"] for r in m.get("recent", [])] + ([m["inFlight"]["id"]] if m.get("inFlight") else [])
    return max(ids, default=0)


def between_migrations(e, measure, tries=3):
    """measure() run while no migration starts or runs; returns its result. The periodic
    re-assignment (every 2 s here) moves VIPs as the tests' own traffic shifts, and a VIP that
    moves in the middle of a measurement is not the case the test is about: measure again."""
    for _ in range(tries):
        wait_quiet(e)
        before = newest_migration(e)
        result = measure()
        after = newest_migration(e)
        if after == before:
            return result
        print("migration %d ran during the measurement: measuring again" % after)
    raise AssertionError("a migration ran during each of %d measurements: %s" % (tries, e.api("GET", "/migrations")[1]))


@pytest.fixture(scope="session")
def placed(emu):
    """Waits until the controller has put VIPs with traffic on HMuxes and the placement has
    settled (the first measured traffic intervals re-place VIPs); returns the placement."""
    seen = []

    def settled():
        p = placement(emu)
        if sum(1 for v in p.values() if v != "smux") < 2 or emu.api("GET", "/migrations")[1].get("inFlight"):
            seen.clear()
            return None
        seen.append(p)
        return p if len(seen) >= 3 and all(q == p for q in seen[-3:]) else None
    p = wait_for(settled, 90, 2)
    assert p, "no settled placement with VIPs on HMuxes after 90 s: %s" % emu.cli("assignment")
    return p


def dip_tors(emu, vip):
    code, v = emu.api("GET", "/vips/%s" % vip)
    ips = {d["ip"] for p in v["ports"] for d in p["dips"]}
    return {h["tor"] for h in emu.fab["hosts"].values() if h["ip"] in ips}


def hmux_vip(emu):
    """A VIP on an HMux whose failure would not cut its own DIPs off (a failed ToR takes its hosts)."""
    def pick():
        p = placement(emu)
        for vip in sorted(p):
            if p[vip] != "smux" and vip.startswith("10.100.1.") and p[vip] not in dip_tors(emu, vip):
                return vip, p[vip]
        return None
    r = wait_for(pick, 90, 1)
    assert r, "no VIP on an HMux: %s" % emu.cli("assignment")
    return r


def hmux_vip_under_traffic(emu, start, tries=3, warmup=2):
    """An HMux VIP with the test's traffic running: start(vip, sid) starts the probes and
    returns them. The new traffic can make the periodic re-assignment move the VIP (and a
    migration may have been in flight when it was picked): the test is about a VIP on an
    HMux, so once the traffic runs and no migration is in flight the VIP must still be where
    it was picked, or the probes stop and another pick is made. Returns (vip, sid, probes)."""
    for _ in range(tries):
        wait_quiet(emu)
        vip, sid = hmux_vip(emu)
        probes = start(vip, sid)
        time.sleep(warmup)
        wait_quiet(emu)
        now = placement(emu).get(vip)
        if now == sid:
            return vip, sid, probes
        for p in probes:
            emu.finish(p)
        print("VIP %s moved from %s to %s as the test's traffic started: picking again" % (vip, sid, now))
    raise AssertionError("no HMux VIP stayed put under the test's traffic in %d tries: %s"
                         % (tries, emu.api("GET", "/migrations")[1]))


def applied_steps(emu, seen, vip):
    """(action, switchId) of every wave applied for vip by the migrations whose ids are not in
    seen, oldest first. Every reconcile (the periodic one too) stops the migration in flight at
    its wave boundary ("superseded") and the next one carries the remaining steps, so one change
    can span several records; rolled-back waves are not counted."""
    recs = sorted((r for r in emu.api("GET", "/migrations")[1]["recent"]
                   if r["id"] not in seen and r.get("state") in ("done", "superseded")), key=lambda r: r["id"])
    return [(s["action"], s.get("switchId")) for r in recs for w in r["plan"]["waves"][:r.get("nextWave", 0)]
            for s in w["steps"] if s["vip"] == vip]


def migration_of(emu, dip, timeout=120):
    """The finished migration record that carried the addition/removal of dip: the one it
    triggered, or, when a reconcile (an event or the periodic one) superseded that one, the later
    migration whose plan took the DIP step over."""
    def carries(r):
        return dip in r.get("trigger", "") or any(
            st.get("dip") == dip for w in r.get("plan", {}).get("waves", []) for st in w.get("steps", []))

    def done():
        code, m = emu.api("GET", "/migrations")
        recs = [r for r in m.get("recent", []) if carries(r)
                and r.get("state") in ("done", "rolled-back", "failed")] if code == 200 else []
        return recs[0] if recs else None  # newest first
    return wait_for(done, timeout, 0.5)
