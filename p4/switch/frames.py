#!/usr/bin/env python3
"""Raw frames on one interface (run inside a lab host with ip netns exec), for the
packet test and the benchmark:

    frames.py sniff IFACE --count N --timeout S [--ip-proto P]   one JSON line per frame (hex)
    frames.py blast IFACE --frame HEX --seconds S [--pps R]       send a frame repeatedly, print the count
    frames.py count IFACE --seconds S [--ip-proto P]              count received frames
"""
import argparse
import json
import socket
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def open_sock(iface):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    return s


def matches(frame, proto):
    return proto is None or (len(frame) > 23 and frame[12:14] == b"\x08\x00" and frame[23] == proto)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["sniff", "blast", "count"])
    ap.add_argument("iface")
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--ip-proto", type=int)
    ap.add_argument("--frame")
    ap.add_argument("--pps", type=float, default=0, help="0: as fast as possible")
    args = ap.parse_args()
    s = open_sock(args.iface)
    if args.cmd == "blast":
        frame = bytes.fromhex(args.frame)
        sent, start = 0, time.monotonic()
        end = start + args.seconds
        while time.monotonic() < end:
            s.send(frame)
            sent += 1
            if args.pps:
                delay = start + sent / args.pps - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
        print(json.dumps({"sent": sent, "seconds": round(time.monotonic() - start, 3)}))
        return 0
    print(json.dumps({"ready": True}), flush=True)
    got = 0
    end = time.monotonic() + (args.timeout if args.cmd == "sniff" else args.seconds)
    while time.monotonic() < end and (args.cmd == "count" or got < args.count):
        s.settimeout(max(0.01, end - time.monotonic()))
        try:
            frame, addr = s.recvfrom(65535)
        except socket.timeout:
            break
        if addr[2] == PACKET_OUTGOING or not matches(frame, args.ip_proto):
            continue
        got += 1
        if args.cmd == "sniff":
            print(json.dumps({"frame": frame.hex()}), flush=True)
    if args.cmd == "count":
        print(json.dumps({"received": got}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
