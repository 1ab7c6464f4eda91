#!/usr/bin/python3
"""Emulation smoke test (no daemon): the data path the daemon relies on, programmed by hand
exactly as the contract says (E2E-CONTRACT.md), then a clean stop.

1. underlay: clients in every pod and the Internet client reach DIP hosts;
2. HMux: a VIP flow + select group on one switch GRE-encapsulates there; the host agents
   decapsulate (their by_mux is that switch's tunnel address); replies go direct (DSR);
3. SMux: the VIP table on both SMuxes + the aggregate group on every switch; requests are
   served through the SMuxes (their counters) by the right DIPs;
4. the route server has both SMuxes' announcements; killing an SMux withdraws its path;
5. an Agg switch fails: the fabric routes around it;
6. stop leaves nothing: namespace, run directory and every recorded PID gone.
Prints one line per check; exit 1 on the first failure.
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hlbemu  # noqa: E402
import hlb_topo  # noqa: E402
import hmux_layout as layout  # noqa: E402

VIP_H, VIP_S = "10.100.7.1", "10.100.7.2"
AGG = "10.100.0.0/16"


def check(ok, what, detail=""):
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, (": " + str(detail)) if not ok else ""), flush=True)
    if not ok:
        raise SystemExit(1)


def curl(emu, node, url, n=1):
    return [emu.run(node, ["curl", "-s", "-m", "3", url]).stdout.strip() for _ in range(n)]


def main():
    tag = "sm%d" % (os.getpid() % 100000)
    entries = []
    try:
        subprocess.run([hlbemu.PY, os.path.join(HERE, "hlbemu.py"), "start", "--tag", tag], check=True)
        emu = hlbemu.Emu(tag)
        fab = emu.fab
        hosts = fab["hosts"]
        dips = [h for h in sorted(hosts) if hosts[h]["role"] == "dip"]
        d1, d2 = dips[-1], dips[4]                  # pod 3 and pod 1
        for c in ("client-0-0", "client-2-1", "internet"):
            out = curl(emu, c, "http://%s/" % hosts[d1]["ip"])[0]
            check(out == d1, "underlay %s -> %s" % (c, d1), out)

        # HMux on core-1, by hand, in the layout the daemon writes (hmux-layout.json).
        sw = fab["switches"]["core-1"]
        hmux_group = layout.CONTROLLER_GROUP_ID_BASE
        agg_group = hmux_group + 1
        group = "group_id=%d,%s" % (hmux_group, layout.SELECT_GROUP)
        for i, d in enumerate((d1, d2)):
            group += ",bucket=bucket_id:%d,weight:1,actions=set_field:%s->tun_dst,output:%d" % (
                i, hosts[d]["ip"], sw["tunnel"]["ofport"])
        emu.ofctl(sw["bridge"], "add-group", group)
        emu.ofctl(sw["bridge"], "add-flow", "cookie=0x%x,table=%d,priority=%d,ip,nw_dst=%s,actions=%s,group:%d"
                  % (layout.cookie("entry"), fab["tables"]["vip"], layout.entry_priority("any", 0), VIP_H,
                     sw["tunnel"]["actionsPrefix"], hmux_group))
        route = fab["locationRoute"].replace("{location}", str(sw["location"]))
        for sid, s in fab["switches"].items():
            if sid != "core-1":
                emu.ofctl(s["bridge"], "add-flow", "cookie=0x%x,table=%d,priority=%d,ip,nw_dst=%s,actions=%s"
                          % (layout.cookie("route", sw["location"]), fab["tables"]["vip"], layout.PRIORITY["route"],
                             VIP_H, route))
        served = (curl(emu, "client-0-1", "http://%s/" % VIP_H, 6) + curl(emu, "client-3-0", "http://%s/" % VIP_H, 3)
                  + curl(emu, "internet", "http://%s/" % VIP_H, 6))
        check(set(served) <= {d1, d2} and len(set(served)) == 2, "HMux VIP served by both DIPs via core-1", served)
        by_mux = set()
        for _ in range(20):      # the agents refresh their counters every second
            by_mux = {m["mux"] for d in (d1, d2) for m in emu.agent_stats(d)["vips"].get(VIP_H, {}).get("by_mux", [])}
            if by_mux:
                break
            time.sleep(0.5)
        check(by_mux == {sw["tunnel"]["localIp"]}, "agents decapsulated GRE from core-1 only", by_mux)

        # SMux path.
        table = {"version": 1, "vips": [{"vip": vip, "aggregate": AGG, "selection": layout.OVS["smuxSelection"],
                                         "encap": layout.OVS["smuxEncap"],
                                         "ports": [{"proto": "tcp", "port": 0, "dips": [
                                             {"ip": hosts[d1]["ip"], "bucketId": 0},
                                             {"ip": hosts[d2]["ip"], "bucketId": 1}]}]} for vip in (VIP_S, VIP_H)]}
        for s in fab["smuxes"]:
            put = ["-X", "PUT", "--data", json.dumps(table), s["controlUrl"] + "/table"]
            code = emu.ns_run(["curl", "-s", "-m", "3", "-o", "/dev/null", "-w", "%{http_code}"]
                              + hlbemu.mgmt_curl(emu.tag) + put).stdout
            check(code == "401", "SMux %s refused the table without a client certificate" % s["id"], code)
            r = emu.ns_run(["curl", "-s", "-m", "3"] + hlbemu.mgmt_curl(emu.tag, write=True) + put)
            check('"version":1' in r.stdout, "SMux %s took the table" % s["id"], r.stdout)
        agg = "group_id=%d,%s" % (agg_group, layout.SELECT_GROUP)
        for i, s in enumerate(fab["smuxes"]):
            agg += ",bucket=bucket_id:%d,actions=%s" % (
                i, fab["locationRoute"].replace("{location}", str(hosts[s["host"]]["location"])))
        for sid, s in fab["switches"].items():
            emu.ofctl(s["bridge"], "add-group", agg)
            for table in (fab["tables"]["vip"], fab["tables"]["fallback"]):
                emu.ofctl(s["bridge"], "add-flow", "cookie=0x%x,table=%d,priority=%d,ip,nw_dst=%s,actions=group:%d"
                          % (layout.cookie("aggregate"), table, layout.PRIORITY["aggregate"], AGG, agg_group))
        served = curl(emu, "client-3-1", "http://%s/" % VIP_S, 12)
        check(set(served) <= {d1, d2} and len(set(served)) == 2, "aggregate -> SMuxes -> both DIPs", served)
        per_smux = []
        for s in fab["smuxes"]:
            m = [l for l in emu.smux_metrics(s["id"]).splitlines()
                 if l.startswith("hlb_smux_vip_packets_total{") and VIP_S in l]
            per_smux.append(int(float(m[0].rsplit(" ", 1)[1])) if m else 0)
        check(sum(per_smux) >= 12 * 3, "SMuxes counted the VIP's packets", per_smux)

        # The HMux core-1 fails, and no controller runs here: its VIP's packets turn to the SMuxes
        # in the data path. First at the switch next to the failure (local repair: the location's
        # fast-failover group hands a packet it cannot forward to the fallback table), then end to end.
        emu.fail_switch("core-1")
        agg = fab["switches"]["agg-0-0"]
        trace = emu.ns_run(["env", "OVS_RUNDIR=" + fab["ovs"]["rundir"], "ovs-appctl", "ofproto/trace", agg["bridge"],
                            "in_port=%d,tcp,dl_dst=%s,nw_src=10.253.0.10,nw_dst=%s,tp_src=40000,tp_dst=80"
                            % (agg["ports"]["tor-0-0"], hlb_topo.location_mac(sw["location"]), VIP_H)]).stdout
        check("group:%d" % agg_group in trace, "core-1 failed: agg-0-0 hands core-1's VIP packets to the SMuxes itself",
              trace[-1500:])
        served = curl(emu, "client-0-1", "http://%s/" % VIP_H, 6) + curl(emu, "internet", "http://%s/" % VIP_H, 6)
        check(set(served) <= {d1, d2} and len(set(served)) == 2, "core-1 failed: its VIP served by the SMuxes", served)
        emu.recover_switch("core-1")

        # BGP: both SMuxes announce; kill one, its path goes.
        rs = fab["routeServer"]["vtyDir"]

        def paths():
            out = emu.ns_run(["vtysh", "--vty_socket", rs, "-c", "show bgp ipv4 unicast %s json" % AGG]).stdout
            return len(json.loads(out).get("paths", [])) if out.strip() else 0
        ok = False
        for _ in range(40):
            ok = paths() == 2
            if ok:
                break
            time.sleep(0.5)
        check(ok, "route server has both SMux paths for %s" % AGG, paths())
        emu.kill_smux(fab["smuxes"][0]["id"])
        ok = False
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10 and not ok:
            ok = paths() == 1
            time.sleep(0.1)
        check(ok, "SMux killed -> FRR withdrew its path (%.1f s)" % (time.monotonic() - t0))

        # Agg failure: routing around it.
        emu.fail_switch("agg-0-0")
        outs = [curl(emu, "client-0-0", "http://%s/" % hosts[d]["ip"])[0] for d in (d1, d2)]
        check(outs == [d1, d2], "agg-0-0 failed: pod 0 still reaches pods 1 and 3", outs)
        emu.recover_switch("agg-0-0")
        entries = emu.pids.entries()
    finally:
        hlbemu.stop(tag, quiet=True)
    left = [e for e in entries if e["start"] and hlbemu.proc_start_time(e["pid"]) == e["start"]]
    check(not os.path.exists("/run/netns/hlbemu-" + tag) and not os.path.exists(hlbemu.rundir(tag)) and not left,
          "stop left nothing behind", left)
    return 0


if __name__ == "__main__":
    sys.exit(main())
