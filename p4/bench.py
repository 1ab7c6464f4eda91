#!/usr/bin/env python3
"""Benchmarks of the P4 model switch; prints its figures (medians of --runs runs).

    sudo p4/bench.py [--runs 3] [--seconds 3]

1. The pipeline alone, in process: packets per second for a routed packet, an HMux
   packet (lookup, crc32 selection over 4 weight units, IP-in-IP) and a Cheetah decode.
2. hlb-p4switch forwarding real frames between two namespaces: host a sends UDP frames
   at full speed from an AF_PACKET socket, host b counts what arrives.
3. P4Runtime writes over gRPC: route entries per second in batches of 500.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
import json

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "tests"))
sys.path.insert(0, os.path.join(HERE, "switch"))
import hlb_testbed as tb  # noqa: E402
import netns_lab  # noqa: E402
from p4rt_client import P4RuntimeClient  # noqa: E402
from scapy.all import IP, TCP, UDP, Ether, raw  # noqa: E402

FRAMES = os.path.join(HERE, "switch", "frames.py")
IN_PROCESS_PACKETS = 20000
WRITE_ENTRIES = 3000          # under the routing table's 4096 with the fabric's routes
WRITE_BATCH = 500


def in_process(runs):
    sw = tb.ModelSwitch("hlb_cheetah")
    tb.fabric(sw)
    sw.add_service(1, "100.64.0.1", 6, 80, ["10.0.1.1", "10.0.1.2", "10.0.1.3"], [1, 2, 1])
    key = bytes(range(16))
    sw.add_service(2, "100.64.0.2", 6, 80, ["10.0.1.1"], affinity="cheetah",
                   key=int.from_bytes(key, "big"))
    sw.add_server(7, "10.0.1.7")
    sw.accept_server(2, 7, 0)
    tup = bytes([100, 64, 0, 2, 6, 0, 80, 198, 51, 100, 7, 0x9c, 0x40])
    cookie = 7 ^ (tb.pipeline.cheetah_cookie.crc32c(key + tup) & 0x7FFF)
    frames = {
        "routed": raw(Ether(dst=tb.ROUTER_MAC) / IP(src="198.51.100.7", dst="10.9.9.9") / UDP()),
        "hmux_ipip": raw(Ether(dst=tb.ROUTER_MAC) / IP(src="198.51.100.7", dst="100.64.0.1")
                         / TCP(sport=40000, dport=80, flags="A")),
        "cheetah_decode": raw(Ether(dst=tb.ROUTER_MAC) / IP(src="198.51.100.7", dst="100.64.0.2")
                              / TCP(sport=40000, dport=80, flags="A", options=[
                                  ("NOP", None), ("NOP", None), ("Timestamp", (1, cookie << 16))])),
    }
    out = {}
    for name, frame in frames.items():
        assert sw.process(frame).outputs, name
        rates = []
        for _ in range(runs):
            t = time.perf_counter()
            for _ in range(IN_PROCESS_PACKETS):
                sw.pipe.process(frame, 1)
            rates.append(IN_PROCESS_PACKETS / (time.perf_counter() - t))
        out[name] = statistics.median(rates)
    return out


def through_switch(runs, seconds):
    lab = netns_lab.Lab(f"hlbp4b{os.getpid() % 10000}")
    try:
        lab.start_switch()
        c = P4RuntimeClient(lab.address, election_id=1, profile="hlb_hmux")
        c.open_stream()
        c.set_pipeline()
        lab.program_fabric(c)
        frame = raw(Ether(src=lab.macs["a"], dst=netns_lab.ROUTER_MAC)
                    / IP(src="10.0.1.10", dst="10.0.2.10") / UDP(sport=5000, dport=9999) / (b"x" * 18))
        results = []
        for _ in range(runs):
            counter = lab.popen("b", sys.executable, FRAMES, "count", f"{lab.tag}b0",
                                "--seconds", str(seconds + 2), "--ip-proto", "17",
                                stdout=subprocess.PIPE, text=True)
            counter.stdout.readline()
            sent = json.loads(lab.exec("a", sys.executable, FRAMES, "blast", f"{lab.tag}a0",
                                       "--frame", frame.hex(), "--seconds", str(seconds)).stdout)
            got = json.loads(counter.communicate(timeout=seconds + 20)[0])["received"]
            results.append((got / sent["seconds"], sent["sent"] / sent["seconds"], got, sent["sent"]))
        # writes: route entries over gRPC
        b = c.b
        rates = []
        for r in range(runs):
            ups = [b.update("INSERT", b.table_entry(
                "HlbIngress.routing.routing_v4", {"dst_addr": (f"10.{100 + r}.{i // 256}.{i % 256}", 32)},
                "HlbIngress.routing.set_next_id", {"next_id": 2})) for i in range(WRITE_ENTRIES)]
            t = time.perf_counter()
            for i in range(0, WRITE_ENTRIES, WRITE_BATCH):
                c.write(ups[i:i + WRITE_BATCH])
            rates.append(WRITE_ENTRIES / (time.perf_counter() - t))
            dels = [b.update("DELETE", u.entity.table_entry) for u in ups]
            for i in range(0, WRITE_ENTRIES, WRITE_BATCH):
                c.write(dels[i:i + WRITE_BATCH])
        c.close()
        return results, statistics.median(rates)
    finally:
        lab.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = next((line.split(":", 1)[1].strip() for line in cpu.splitlines()
                  if line.startswith("Model name")), "?")
    print(f"p4 model switch benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"CPU {model}, load average {os.getloadavg()[0]:.2f}")
    for name, rate in in_process(args.runs).items():
        print(f"pipeline in process   {name:15s} {rate:10,.0f} packets/s")
    if os.geteuid() != 0:
        print("switch forwarding: skipped (needs root for namespaces)")
        return 0
    results, write_rate = through_switch(args.runs, args.seconds)
    fwd = statistics.median(r[0] for r in results)
    offered = statistics.median(r[1] for r in results)
    print(f"hlb-p4switch forwarding routed UDP  {fwd:10,.0f} packets/s "
          f"(offered {offered:,.0f}/s; per run received/sent: "
          + ", ".join(f"{r[2]}/{r[3]}" for r in results) + ")")
    print(f"P4Runtime writes (route INSERTs, batches of {WRITE_BATCH})  {write_rate:10,.0f} entries/s")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
