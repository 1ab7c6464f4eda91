# Captures the route server's `show bgp ipv4 unicast json` with two announcing peers, then one,
# then none, into /tmp/hlbd-frr/ (copy them next to this file). Run as root: sudo python3 capture.py
import os, subprocess, sys, time, json
from pathlib import Path
# smux/frr of this checkout: this file is app/standalone/src/test/resources/frr/capture.py
sys.path.insert(0, str(Path(__file__).resolve().parents[6] / "smux" / "frr"))
import hlb_frr_supervisor as frr

def sh(*a): subprocess.run(list(a), check=True)
ns = ["hlbdfrs", "hlbdfa1", "hlbdfa2"]
insts = []
os.makedirs("/tmp/hlbd-frr", exist_ok=True)
try:
    for n in ns: sh("ip", "netns", "add", n)
    sh("ip", "link", "add", "hlbdfv1", "netns", "hlbdfrs", "type", "veth", "peer", "name", "hlbdfv1p", "netns", "hlbdfa1")
    sh("ip", "link", "add", "hlbdfv2", "netns", "hlbdfrs", "type", "veth", "peer", "name", "hlbdfv2p", "netns", "hlbdfa2")
    for n, dev, ip in [("hlbdfrs", "hlbdfv1", "10.254.1.1/24"), ("hlbdfrs", "hlbdfv2", "10.254.2.1/24"),
                       ("hlbdfa1", "hlbdfv1p", "10.254.1.21/24"), ("hlbdfa2", "hlbdfv2p", "10.254.2.22/24")]:
        sh("ip", "-n", n, "addr", "add", ip, "dev", dev); sh("ip", "-n", n, "link", "set", dev, "up")
        sh("ip", "-n", n, "link", "set", "lo", "up")
    base = "/run/hlb/hlbdfrr"; os.makedirs(base, exist_ok=True); os.chmod(base, 0o755)
    specs = [("hlbdfrs", 65000, "10.254.1.1", [("10.254.1.21", 65001), ("10.254.2.22", 65002)], []),
             ("hlbdfa1", 65001, "10.254.1.21", [("10.254.1.1", 65000)], ["10.100.0.0/16", "10.101.0.0/16"]),
             ("hlbdfa2", 65002, "10.254.2.22", [("10.254.2.1", 65000)], ["10.100.0.0/16"])]
    for name, asn, rid, nbrs, prefixes in specs:
        conf = frr.bgpd_config(name, asn, rid, nbrs, f"{base}/{name}/bgpd.log")
        if prefixes:
            conf = conf.replace(" exit-address-family", "".join(f"  network {p}\n" for p in prefixes) + " exit-address-family")
        inst = frr.FrrInstance(name, f"{base}/{name}", conf)
        orig = inst._spawn
        inst._spawn = (lambda o, n: (lambda d, c: o(d, ["ip", "netns", "exec", n] + c)))(orig, name)
        inst.start(); insts.append(inst)
    rs = insts[0]
    for _ in range(100):
        out = rs.vtysh("show bgp ipv4 unicast json")
        j = json.loads(out)
        if len(j.get("routes", {}).get("10.100.0.0/16", [])) == 2 and "10.101.0.0/16" in j.get("routes", {}):
            break
        time.sleep(0.2)
    open("/tmp/hlbd-frr/rib-two-peers.json", "w").write(out)
    insts[2].vtysh("configure terminal", "router bgp 65002", "address-family ipv4 unicast", "no network 10.100.0.0/16")
    for _ in range(100):
        out = rs.vtysh("show bgp ipv4 unicast json")
        if len(json.loads(out)["routes"].get("10.100.0.0/16", [])) == 1: break
        time.sleep(0.1)
    open("/tmp/hlbd-frr/rib-one-peer.json", "w").write(out)
    # all gone
    for i, p in ((1, "10.100.0.0/16"), (1, "10.101.0.0/16")):
        insts[i].vtysh("configure terminal", "router bgp 65001", "address-family ipv4 unicast", f"no network {p}")
    for _ in range(100):
        out = rs.vtysh("show bgp ipv4 unicast json")
        if not json.loads(out).get("routes"): break
        time.sleep(0.1)
    open("/tmp/hlbd-frr/rib-empty.json", "w").write(out)
    t0 = time.time()
    for _ in range(10): rs.vtysh("show bgp ipv4 unicast json")
    print("vtysh per call ms", (time.time() - t0) * 100)
finally:
    for inst in insts:
        try: inst.stop()
        except Exception as e: print("stop", e)
    for n in ns: subprocess.run(["ip", "netns", "del", n])
