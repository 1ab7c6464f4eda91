#!/usr/bin/env python3
"""End-to-end decapsulation rate of the host agent's two packet paths, in one
run: a generator in a "mux" namespace blasts one 64-byte IP-in-IP (or GRE)
UDP frame over a veth into the "host" namespace, where the decap backend
(hlb-agent-xdp or hlb-agent-udecap) strips it and the kernel delivers it to
UDP on the VIP (no socket listening: counted as UdpNoPorts, so the socket
layer is not the bottleneck).  Reports offered and delivered packets/s.

Both cores of this machine are shared by the generator, the veth softirq and
the backend, so the figures are relative (XDP vs user-space), not NIC rates.

usage: agent_bench_decap.py [SECONDS]      (root; binaries from smux/build-agent)
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent_testlib as tl  # noqa: E402
from scapy.all import GRE, IP, UDP, Ether, Raw  # noqa: E402

VIP, MUX_IP, HOST_IP = "10.200.0.10", "10.77.0.1", "10.77.0.2"


def nstat(ns):
    out = ns.run(["nstat", "-az", "--json"]).stdout
    return json.loads(out)["kernel"]


def frame(mux_mac, host_mac, encap):
    inner = IP(src="198.51.100.5", dst=VIP) / UDP(sport=40000, dport=9) / Raw(b"x" * 18)
    outer = Ether(src=mux_mac, dst=host_mac) / IP(src=MUX_IP, dst=HOST_IP)
    pkt = outer / GRE(proto=0x0800) / inner if encap == "gre" else outer / inner
    if encap == "ipip":
        pkt[IP].proto = 4
    return bytes(pkt).hex()


def run(seconds):
    build = tl.BUILD_DIR
    tag = tl.unique("")
    mux, host = tl.Netns(f"hlb-abm-{tag}"), tl.Netns(f"hlb-abh-{tag}")
    if_mux, if_host = f"hlbbm{tag}", f"hlbbh{tag}"
    results = []
    try:
        tl.veth_pair(mux, if_mux, f"{MUX_IP}/24", host, if_host, f"{HOST_IP}/24")
        host.run(["ip", "addr", "add", f"{VIP}/32", "dev", "lo"])
        # A DIP host has a route back to its clients (also needed by the TUN's
        # loose reverse-path filter).
        host.run(["ip", "route", "add", "default", "via", MUX_IP])
        mux_mac = json.loads(mux.run(["ip", "-j", "link", "show", if_mux]).stdout)[0]["address"]
        host_mac = json.loads(host.run(["ip", "-j", "link", "show", if_host]).stdout)[0]["address"]
        stats = f"/tmp/hlb-agent-bench-{tag}.json"
        backends = {
            "xdp": [f"{build}/hlb-agent-xdp", "--iface", if_host, "--obj", f"{build}/xdp_decap.bpf.o"],
            "userspace": [f"{build}/hlb-agent-udecap", "--tun", f"hlbbt{tag[:4]}"],
        }
        for name, cmd in backends.items():
            for encap in ("ipip", "gre"):
                proc = host.popen(cmd + ["--local-ip", HOST_IP, "--stats-file", stats,
                                         "--interval-ms", "100"],
                                  stdout=subprocess.PIPE, text=True)
                attached = json.loads(proc.stdout.readline())
                try:
                    before = nstat(host)
                    gen = mux.run([f"{build}/agent_pktgen", if_mux, frame(mux_mac, host_mac, encap),
                                   str(seconds)])
                    time.sleep(0.3)   # let the backend drain its queue
                    after = nstat(host)
                finally:
                    tl.stop_pid(proc.pid)
                sent = json.loads(gen.stdout)
                delivered = (after.get("UdpNoPorts", 0) - before.get("UdpNoPorts", 0)
                             + after.get("UdpInDatagrams", 0) - before.get("UdpInDatagrams", 0))
                results.append({"backend": name, "mode": attached["mode"], "encap": encap,
                                "offered_pps": sent["sent"] / sent["seconds"],
                                "delivered_pps": delivered / sent["seconds"]})
        try:
            os.remove(stats)
        except OSError:
            pass
    finally:
        mux.close()
        host.close()
    return results


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    results = run(seconds)
    for r in results:
        print(f"agent decap {r['backend']:9s} ({r['mode']:9s}) {r['encap']:4s}: "
              f"offered {r['offered_pps'] / 1e3:8.1f} kpps, delivered to UDP {r['delivered_pps'] / 1e3:8.1f} kpps")
    by = {(r["backend"], r["encap"]): r["delivered_pps"] for r in results}
    for encap in ("ipip", "gre"):
        if by.get(("userspace", encap)):
            print(f"agent decap {encap}: XDP / user-space delivered ratio "
                  f"{by[('xdp', encap)] / by[('userspace', encap)]:.2f}")


if __name__ == "__main__":
    main()
