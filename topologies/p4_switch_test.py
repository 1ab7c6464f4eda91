#!/usr/bin/python3
"""The emulation with P4 switches (`hlbemu.py start --p4-switches`): a k=4 fat-tree whose
tor-0-0 and agg-0-0 are hlb-p4switch (the P4 model switch) among Open vSwitch bridges,
fabric only.  Hosts under the P4 ToR reach hosts in their rack, their pod and other pods
(pings both ways through P4 and OVS switches), the P4 switch's route counters read over
P4Runtime prove the path, fabric.json names the P4 switches, and stop leaves nothing.
Prints one line per check; exit 1 on the first failure."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hlbemu  # noqa: E402
import hlb_p4  # noqa: E402,F401  (puts p4/switch on the path)
import hlb_topo  # noqa: E402
from p4rt_client import P4RuntimeClient  # noqa: E402

P4_SWITCHES = ["tor-0-0", "agg-0-0"]
PINGS = 5


def check(ok, what, detail=""):
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, (": " + str(detail)) if not ok else ""), flush=True)
    if not ok:
        raise SystemExit(1)


def route_packets(fab, sid, ip):
    c = P4RuntimeClient(fab["switches"][sid]["p4"]["grpc"], profile=fab["switches"][sid]["p4"]["profile"])
    try:
        entry, = c.read_direct_counters(c.b.table_entry("HlbIngress.routing.routing_v4",
                                                       {"dst_addr": (ip, 32)}))
        return entry.table_entry.counter_data.packet_count
    finally:
        c.close()


def main():
    tag = "p4t%d" % (os.getpid() % 10000)
    topo = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(hlb_topo._solver_fat_tree(4), topo)
    topo.close()
    try:
        bad = subprocess.run([hlbemu.PY, os.path.join(HERE, "hlbemu.py"), "start", "--tag", tag + "x",
                              "--topology", topo.name, "--no-services", "--p4-switches", "tor-9-9"],
                             capture_output=True, text=True)
        check(bad.returncode != 0 and "tor-9-9" in bad.stderr, "an unknown --p4-switches name is refused",
              bad.stderr)
        subprocess.run([hlbemu.PY, os.path.join(HERE, "hlbemu.py"), "start", "--tag", tag, "--topology", topo.name,
                        "--no-services", "--p4-switches", ",".join(P4_SWITCHES), "--p4-profile", "hlb_hmux"],
                       check=True)
        emu = hlbemu.Emu(tag)
        fab = emu.fab
        check(all("p4" in fab["switches"][s] for s in P4_SWITCHES)
              and not any("p4" in v for k, v in fab["switches"].items() if k not in P4_SWITCHES),
              "fabric.json marks the P4 switches")
        src = "host-0-0-0"
        for dst in ("host-0-0-1", "host-0-1-0", "host-2-1-1", "client-3-0"):
            before = route_packets(fab, "tor-0-0", fab["hosts"][dst]["ip"])
            r = emu.run(src, ["ping", "-c", str(PINGS), "-i", "0.2", "-W", "2", fab["hosts"][dst]["ip"]])
            check(r.returncode == 0 and " 0% packet loss" in r.stdout, "ping %s -> %s across tor-0-0 (P4)"
                  % (src, dst), r.stdout[-200:])
            after = route_packets(fab, "tor-0-0", fab["hosts"][dst]["ip"])
            check(after - before >= PINGS, "tor-0-0 counted the pings to %s" % dst, (before, after))
        r = emu.run("host-1-1-0", ["ping", "-c", str(PINGS), "-i", "0.2", "-W", "2", fab["hosts"][src]["ip"]])
        check(r.returncode == 0, "ping from pod 1 into the P4 rack", r.stdout[-200:])
    finally:
        subprocess.run([hlbemu.PY, os.path.join(HERE, "hlbemu.py"), "stop", "--tag", tag])
        os.unlink(topo.name)
    check(not os.path.exists(hlbemu.rundir(tag)) and not os.path.exists("/run/netns/" + hlbemu.netns(tag)),
          "stop removed the run directory and the namespace")
    print("p4 switches in the emulation: 1 passed, 0 failed")


if __name__ == "__main__":
    main()
