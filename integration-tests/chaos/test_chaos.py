"""Chaos: faults outside the designed ones, on the live emulation with the real hybridlbd
(integration-tests/chaos.sh). Each test injects one kind of fault, measures the recovery at real
clients and prints one `chaos:` line with its figures; each leaves the fabric as it found it.

Bounded: the SIGKILL test stops after CHAOS_KILLS interrupted migrations or CHAOS_KILL_BUDGET_S.
"""
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time

import pytest

import hlbemu
from conftest import placement, wait_for, wait_quiet

KILLS = int(os.environ.get("CHAOS_KILLS", "20"))
KILL_BUDGET_S = float(os.environ.get("CHAOS_KILL_BUDGET_S", "1500"))
RESULTS = os.environ.get("CHAOS_RESULTS", "/tmp/hlb-chaos-results.json")
UDP_RATE = 100           # datagrams/s per VIP stream
STATE = "state.json"


def record(name, **figures):
    """Prints the figures and keeps them in CHAOS_RESULTS (one object per test)."""
    print("chaos: %s: %s" % (name, ", ".join("%s=%s" % kv for kv in figures.items())))
    try:
        with open(RESULTS) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        doc = {}
    doc[name] = dict(figures, when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    with open(RESULTS, "w") as f:
        json.dump(doc, f, indent=1)


def clients(emu, avoid=()):
    return sorted(h for h, v in emu.fab["hosts"].items() if v["role"] == "client" and v["tor"] not in avoid)


def streams(emu, vips, rate=UDP_RATE, duration=600, avoid=()):
    """A paced UDP stream to each VIP, each from its own client: {vip: probe}."""
    cs = clients(emu, avoid)
    return {v: emu.probe(cs[i % len(cs)], "udp", "--vip", v, "--rate", rate, "--flows", 4, "--duration", duration)
            for i, v in enumerate(vips)}


def finish(emu, probes):
    return {v: emu.finish(p) for v, p in probes.items()}


def all_served(emu, vips):
    """Every VIP answers a short paced stream now (each run to its end): {vip: lost}, empty when
    every VIP answered every datagram."""
    probes = streams(emu, vips, rate=50, duration=1.5)
    r = {v: json.loads(p.communicate(timeout=60)[0]) for v, p in probes.items()}
    return {v: x["lost"] for v, x in r.items() if x["lost"] or not x["received"]}


def state_path(emu):
    with open(os.path.join(emu.dir, "hybridlbd.json")) as f:
        return os.path.join(json.load(f)["stateDir"], STATE)


def smux_tables(emu):
    out = {}
    for s in emu.fab["smuxes"]:
        r = emu.ns_run(["curl", "-s", "-m", "3"] + hlbemu.mgmt_curl(emu.tag) + [s["controlUrl"] + "/table"])
        out[s["id"]] = sorted({v["vip"] for v in json.loads(r.stdout).get("vips", [])}) if r.stdout.strip() else None
    return out


def metric(emu, name):
    """A value of hybridlbd's own /metrics (not through Prometheus: no scrape delay)."""
    r = emu.ns_run(["curl", "-s", "-m", "5"] + hlbemu.api_curl(emu.tag, "viewer") + [hlbemu.DAEMON_URL + "/metrics"])
    m = re.search(r"^%s(?:\{[^}]*\})? ([0-9.eE+-]+)$" % re.escape(name), r.stdout, re.M)
    return float(m.group(1)) if m else None


def migrations(emu):
    return emu.api("GET", "/migrations")[1]


# --------------------------------------------------------------------------------------------

def test_hybridlbd_sigkilled_at_random_points_of_migrations(emu, placed):
    """SIGKILL of hybridlbd while a migration runs (random delay into it), restart, again: at least
    KILLS interrupted migrations. Paced UDP streams to every VIP run throughout: a migration goes
    through the SMuxes wave by wave and every device keeps a backstop, so none may be lost. After
    each restart the VIPs are those before, every VIP answers, the interrupted migration is
    reported, and once quiet the SMux tables hold exactly the installed VIPs."""
    rng = random.Random(int(os.environ.get("CHAOS_SEED", "22")))
    vips = [v["vip"] for v in emu.vips]
    config = emu.api("GET", "/vips")[1]
    probes = streams(emu, vips)
    interrupted, kills, restarts_s, t_end = 0, 0, [], time.monotonic() + KILL_BUDGET_S
    drained = None
    try:
        while interrupted < KILLS and time.monotonic() < t_end:
            wait_quiet(emu, 60)
            hmux = sorted({at for at in placement(emu).values() if at != "smux"} - {drained})
            if drained:   # undrained with the next drain: one reconcile, one migration
                assert emu.api("DELETE", "/switches/%s/drain" % drained)[0] == 200
                drained = None
            if not hmux:
                emu.api("POST", "/reassign")
                continue
            drained = rng.choice(hmux)
            code, body = emu.api("POST", "/switches/%s/drain" % drained)
            assert code == 200, body
            seen = wait_for(lambda: migrations(emu).get("inFlight"), 5, 0.02)
            if not seen:
                continue                                                       # nothing to move this time
            time.sleep(rng.uniform(0, 0.8))                                    # somewhere in its waves
            emu.daemon_stop(signal.SIGKILL)
            kills += 1
            with open(state_path(emu)) as f:
                on_disk = json.load(f).get("migration") or {}
            was_running = on_disk.get("state") == "running"
            interrupted += was_running
            t0 = time.monotonic()
            emu.daemon_start()
            restarts_s.append(time.monotonic() - t0)
            assert emu.api("GET", "/vips")[1] == config, "the VIP configuration changed across the kill"
            if was_running:
                recent = migrations(emu).get("recent", [])
                assert any(r["id"] == on_disk["id"] and r["state"] == "interrupted" for r in recent), recent
            wait_quiet(emu, 60)
            installed = sorted(placement(emu))
            assert installed == sorted(vips), "VIPs not installed after the restart: %s" % placement(emu)
            tables = smux_tables(emu)
            assert all(t == installed for t in tables.values()), "SMux tables %s, installed %s" % (tables, installed)
        unserved = all_served(emu, vips)
    finally:
        if drained:
            emu.api("DELETE", "/switches/%s/drain" % drained)
        results = finish(emu, probes)
    lost = {v: r["lost"] for v, r in results.items()}
    sent = sum(r["sent"] for r in results.values())
    record("sigkill", kills=kills, interruptedMigrations=interrupted, datagramsSent=sent, datagramsLost=sum(lost.values()),
           lostPerVip=lost, restartMedianS=round(sorted(restarts_s)[len(restarts_s) // 2], 2) if restarts_s else None)
    assert interrupted >= KILLS, "only %d of %d kills landed in a migration within %d s" % (interrupted, kills,
                                                                                            KILL_BUDGET_S)
    assert not unserved, "VIPs unserved at the end: %s" % unserved
    assert sum(lost.values()) == 0, "datagrams lost across the kills: %s; outages %s" % (
        lost, {v: r["outages"][:4] for v, r in results.items() if r["lost"]})
    # consistency: a fresh daemon finds the devices exactly as its state says (nothing to repair)
    emu.daemon_stop()
    emu.daemon_start()
    wait_quiet(emu, 60)
    assert metric(emu, "hybridlb_repairs_total") == 0, "a fresh daemon repaired %s entries" % metric(
        emu, "hybridlb_repairs_total")


def test_ovs_vswitchd_restart_flows_gone_controller_reinstalls_everything(emu, placed):
    """ovs-vswitchd killed and started again: every flow and group is gone. The emulation puts its
    fabric routing back (what BGP/ECMP would); hybridlbd must notice and reinstall every HMux entry,
    VIP route and SMux aggregate. Measured: until every VIP answers again, per VIP."""
    vips = [v["vip"] for v in emu.vips]
    wait_quiet(emu, 60)
    before = placement(emu)
    repairs0 = metric(emu, "hybridlb_repairs_total") or 0
    probes = streams(emu, vips)
    time.sleep(2)
    t0 = time.monotonic()
    ovs_s, fabric_s = emu.restart_vswitchd()
    served = wait_for(lambda: not all_served(emu, vips), 120, 0.2)
    recovered_s = time.monotonic() - t0
    time.sleep(2)
    results = finish(emu, probes)
    outage = {v: r["maxOutageMs"] for v, r in results.items()}
    repairs = (metric(emu, "hybridlb_repairs_total") or 0) - repairs0
    record("ovs-restart", ovsAnsweredS=round(ovs_s, 2), fabricRestoredS=round(fabric_s, 2),
           allVipsServedS=round(recovered_s, 2), longestOutageMsPerVip=outage, repairs=repairs)
    assert served, "VIPs still unserved 120 s after the restart: %s" % all_served(emu, vips)
    assert not any(o.get("unrecovered") for r in results.values() for o in r["outages"]), outage
    assert repairs > 0, "hybridlbd reinstalled nothing (the VIPs answered through what?)"
    wait_quiet(emu, 60)
    hmux_before = {v for v, at in before.items() if at != "smux"}
    assert any(placement(emu).get(v) != "smux" for v in hmux_before) or not hmux_before, placement(emu)


def test_route_server_frr_restarted(emu, placed):
    """The route server's FRR (zebra + bgpd) restarted: its RIB is empty until the SMuxes' sessions
    come back. SMux-served VIPs must keep being served (the daemon must not take an empty RIB for
    "every SMux is dead"); measured: until both SMuxes are in its RIB again, and the outage."""
    rs = emu.fab["routeServer"]["vtyDir"]

    def announcers():
        out = emu.ns_run(["vtysh", "--vty_socket", rs, "-c", "show bgp ipv4 unicast json"]).stdout
        try:
            routes = json.loads(out).get("routes", {}) if out.strip() else {}
        except ValueError:
            return []
        return sorted({p.get("peerId") for r in routes.values() for p in r})

    assert wait_for(lambda: len(announcers()) == len(emu.fab["smuxes"]), 20, 0.5), announcers()
    wait_quiet(emu, 60)
    p = placement(emu)
    on_smux = sorted(v for v, at in p.items() if at == "smux")
    probes = streams(emu, on_smux or sorted(p)[:1])
    time.sleep(2)
    t0 = time.monotonic()
    emu.restart_route_server()
    back = wait_for(lambda: len(announcers()) == len(emu.fab["smuxes"]), 60, 0.1)
    back_s = time.monotonic() - t0
    live = wait_for(lambda: all(s["live"] for s in emu.api("GET", "/smuxes")[1]["smuxes"]), 30, 0.2)
    time.sleep(3)
    results = finish(emu, probes)
    lost = sum(r["lost"] for r in results.values())
    record("route-server-restart", smuxesBackInRibS=round(back_s, 2), datagramsLost=lost,
           longestOutageMs=max((r["maxOutageMs"] or 0) for r in results.values()), vips=len(results))
    assert back, "SMuxes not back in the route server's RIB: %s" % announcers()
    assert live, emu.api("GET", "/smuxes")[1]
    assert not any(o.get("unrecovered") for r in results.values() for o in r["outages"])
    assert lost == 0, "SMux-served VIPs lost %d datagrams while the route server restarted: %s" % (
        lost, {v: r["outages"][:3] for v, r in results.items()})


def test_host_agent_killed_and_restarted(emu, placed):
    """A DIP host's agent SIGKILLed (its decapsulator with it or not) and started again: the DIP's
    traffic continues or recovers; measured at a paced stream whose flows reach that DIP."""
    wait_quiet(emu, 60)
    vip = sorted(placement(emu))[0]
    dip = [d["ip"] for v in emu.vips if v["vip"] == vip for d in v["ports"][0]["dips"]][0]
    host = next(h for h, v in emu.fab["hosts"].items() if v["ip"] == dip)
    probe = emu.probe(clients(emu)[0], "udp", "--vip", vip, "--rate", 200, "--flows", 16, "--duration", 120)
    time.sleep(2)
    t0 = time.monotonic()
    emu.kill_agent(host)
    time.sleep(1)
    emu.restart_agent(host)
    healthy = wait_for(lambda: emu.ns_run(["curl", "-s", "-m", "1"] + hlbemu.mgmt_curl(emu.tag) + [emu.fab["hosts"][host]["agentUrl"] + "/health"])
                       .returncode == 0 and dip not in json.dumps(emu.api("GET", "/assignment")[1]
                                                                  .get("unhealthyDips", [])), 60, 0.2)
    healthy_s = time.monotonic() - t0
    time.sleep(3)
    r = emu.finish(probe)
    to_dip = [f for f in r["flows"] if host in f["dips"]]
    record("agent-restart", agentHealthyAgainS=round(healthy_s, 2), datagramsLost=r["lost"], sent=r["sent"],
           longestOutageMs=r["maxOutageMs"], flowsOnThatDip=len(to_dip))
    assert healthy, "agent of %s not healthy again: %s" % (host, emu.api("GET", "/assignment")[1].get("dipHealth"))
    assert not any(o.get("unrecovered") for o in r["outages"]), r["outages"]


def test_smux_hung_with_sigstop_is_withdrawn_within_a_second(emu, placed):
    """An SMux that hangs (SIGSTOP) rather than exits: its FRR supervisor's health probes time out
    and it withdraws the aggregates; within 1 s the route server has no path through it, and the
    traffic of SMux-served VIPs recovers. SIGCONT: it announces again."""
    rs = emu.fab["routeServer"]["vtyDir"]

    def announcers():
        out = emu.ns_run(["vtysh", "--vty_socket", rs, "-c", "show bgp ipv4 unicast json"]).stdout
        routes = json.loads(out).get("routes", {}) if out.strip() else {}
        return {p.get("peerId") for r in routes.values() for p in r}

    assert wait_for(lambda: len(announcers()) == len(emu.fab["smuxes"]), 20, 0.3), announcers()
    victim = emu.fab["smuxes"][0]
    mgmt = victim["controlUrl"].split("//")[1].split(":")[0]
    wait_quiet(emu, 60)
    on_smux = sorted(v for v, at in placement(emu).items() if at == "smux") or sorted(placement(emu))[:1]
    probes = streams(emu, on_smux, rate=200)
    time.sleep(2)
    t0 = time.monotonic()
    emu.kill_smux(victim["id"], signal.SIGSTOP)
    try:
        gone = wait_for(lambda: not any(a == mgmt for a in announcers()), 5, 0.02)
        withdrawn_s = time.monotonic() - t0
        dropped = wait_for(lambda: not [s for s in emu.api("GET", "/smuxes")[1]["smuxes"]
                                        if s["id"] == victim["id"] and s["live"]], 10, 0.1)
        time.sleep(3)
        results = finish(emu, probes)
    finally:
        emu.kill_smux(victim["id"], signal.SIGCONT)
    back = wait_for(lambda: len(announcers()) == len(emu.fab["smuxes"]), 20, 0.3)
    record("smux-sigstop", withdrawnFromRibS=round(withdrawn_s, 3),
           longestOutageMs=max((r["maxOutageMs"] or 0) for r in results.values()),
           datagramsLost=sum(r["lost"] for r in results.values()))
    assert gone and withdrawn_s <= 1.0, "the hung SMux was withdrawn after %.2f s" % withdrawn_s
    assert dropped, "the daemon still uses the hung SMux"
    assert not any(o.get("unrecovered") for r in results.values() for o in r["outages"])
    assert back, "the SMux did not announce again after SIGCONT"


@pytest.mark.parametrize("damage", ["truncated", "empty", "garbage"])
def test_state_file_damaged_recovers_from_the_last_good_copy_or_refuses_clearly(emu, placed, damage):
    """The state file truncated, emptied or overwritten: with its last good copy beside it the
    daemon starts from that copy (the same VIPs) and sets the bad file aside; without it, it refuses
    to start: exit 2, one line naming the file and what to do, no stack trace."""
    path = state_path(emu)
    wait_quiet(emu, 60)
    config = emu.api("GET", "/vips")[1]
    emu.daemon_stop()
    keep = path + ".chaos-kept"
    shutil.copyfile(path, keep)
    shutil.copyfile(path + ".prev", keep + ".prev")
    try:
        def spoil():
            text = open(keep).read()
            spoilt = {"truncated": text[:len(text) // 2], "empty": "", "garbage": "\x00\x17not json\xff"}[damage]
            with open(path, "w") as f:
                f.write(spoilt)
        spoil()
        log_path = os.path.join(emu.dir, "logs", "hybridlbd.log")
        offset = os.path.getsize(log_path)
        t0 = time.monotonic()
        emu.daemon_start()
        start_s = time.monotonic() - t0
        with open(log_path) as f:
            f.seek(offset)
            log = f.read()
        assert "is unreadable" in log and "recovered from its last good copy" in log, (
            open(path).read()[:200], log[-3000:])
        assert emu.api("GET", "/vips")[1] == config, "not the VIPs of the last good copy"
        assert [f for f in os.listdir(os.path.dirname(path)) if f.startswith(STATE + ".unreadable-")]
        all_vips = [v["vip"] for v in emu.vips]
        wait_quiet(emu, 60)
        assert not all_served(emu, all_vips)
        emu.daemon_stop()

        # now without a good copy: refused
        spoil()
        with open(path + ".prev", "w") as f:
            f.write("{\"format\":1,\"desi")
        out = subprocess.run(["ip", "netns", "exec", emu.ns, hlbemu.DAEMON_BIN,
                              "--config", os.path.join(emu.dir, "hybridlbd.json")],
                             capture_output=True, text=True, timeout=120)
        refusal = [l for l in out.stderr.splitlines() if l.startswith("state file " + path)]
        record("state-" + damage, recoveredStartS=round(start_s, 2), refusedExit=out.returncode,
               refusal=refusal[0] if refusal else None)
        assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
        assert refusal and "Restore the state from a backup" in refusal[0], out.stderr
        assert "\tat " not in out.stderr and "Exception" not in out.stderr, "a stack trace: " + out.stderr[-2000:]
    finally:
        emu.daemon_stop()
        shutil.copyfile(keep, path)
        shutil.copyfile(keep + ".prev", path + ".prev")
        for f in os.listdir(os.path.dirname(path)):
            if f.startswith(STATE + ".unreadable-") or f.startswith(STATE + ".chaos-kept"):
                os.unlink(os.path.join(os.path.dirname(path), f))
        emu.daemon_start()
    assert emu.api("GET", "/vips")[1] == config


def test_state_directory_full(emu, placed):
    """The state directory's file system fills up: writes fail visibly (the API says why, naming the
    file), nothing already applied is lost (every VIP still answers, the file on disk intact), and
    once space is freed changes are accepted again."""
    path = state_path(emu)
    d = os.path.dirname(path)
    wait_quiet(emu, 60)
    config = emu.api("GET", "/vips")[1]
    emu.daemon_stop()
    saved = d + ".chaos-saved"
    shutil.copytree(d, saved)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "hlbchaos", d], check=True)
    filler = os.path.join(d, "filler")
    try:
        for f in os.listdir(saved):
            shutil.copy2(os.path.join(saved, f), os.path.join(d, f))
        emu.daemon_start()
        wait_quiet(emu, 60)
        subprocess.run(["dd", "if=/dev/zero", "of=" + filler, "bs=4k"], capture_output=True)   # until ENOSPC
        assert os.statvfs(d).f_bavail == 0, "the state directory is not full"
        pid = int(open(os.path.join(emu.dir, "hybridlbd.pid")).read())
        assert " %s " % d in open("/proc/%d/mountinfo" % pid).read(), "the daemon does not see the small file system"
        on_disk = open(path).read()
        vip = "10.100.1.200"
        host = emu.topo["hosts"][0]["ip"]
        code, body = emu.api("POST", "/vips", {"vip": vip, "aggregate": "10.100.0.0/16",
                                               "ports": [{"proto": "any", "port": 0, "dips": [{"ip": host}]}]})
        assert code in (503, 507), (code, body)
        assert "No space left on device" in body["reason"] and path in body["reason"], body
        refused = (code, body["reason"])
        assert emu.api("GET", "/vips")[1] == config, "the refused VIP is not there"
        emu.api("POST", "/reassign")
        lasterr = wait_for(lambda: emu.api("GET", "/assignment")[1].get("lastError"), 30, 0.5)
        assert lasterr and "cannot write the controller state" in lasterr and path in lasterr, lasterr
        assert metric(emu, "hybridlb_state_writable") == 0
        unserved = all_served(emu, [v["vip"] for v in emu.vips])
        assert not unserved, "VIPs unserved while the disk is full: %s" % unserved
        assert open(path).read() == on_disk, "the state file changed while it could not be written"
        os.unlink(filler)
        code, body = emu.api("POST", "/vips", {"vip": vip, "aggregate": "10.100.0.0/16",
                                               "ports": [{"proto": "any", "port": 0, "dips": [{"ip": host}]}]})
        assert code == 201, body
        assert emu.api("DELETE", "/vips/%s" % vip)[0] == 204
        record("state-dir-full", refused=refused, lastError=lasterr)
    finally:
        emu.daemon_stop()
        keep = {f: open(os.path.join(d, f), "rb").read() for f in os.listdir(d) if f.startswith(STATE)}
        subprocess.run(["umount", d], check=True)
        for f, data in keep.items():
            with open(os.path.join(d, f), "wb") as out:
                out.write(data)
        shutil.rmtree(saved, ignore_errors=True)
        emu.daemon_start()
