#!/usr/bin/env python3
"""hlb-p4switch: the reference model of the hybridlb P4 programs as a P4Runtime switch.

It serves the P4Runtime gRPC API (the pipeline is chosen by the P4Info the controller
sets) and forwards real packets between its ports, raw AF_PACKET sockets on Linux
interfaces.  It is a model: a few thousand packets per second (p4/README.md, bench).

    hlb_p4switch.py --grpc unix:/run/sw.sock --device-id 1 --port 1=veth1 --port 2=veth2

On start it prints one JSON line {"event": "ready", ...} on stdout; SIGTERM or SIGINT
stops it and prints {"event": "exit", ...} with its packet totals.
"""
import argparse
import json
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
from concurrent import futures

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import p4rt_server  # noqa: E402

import grpc  # noqa: E402
from p4.v1 import p4runtime_pb2_grpc  # noqa: E402

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
MAX_FRAME = 65535
PORT_MAX = 510                          # v1model: 9-bit ports, 511 is the drop port
SOL_PACKET = 263
PACKET_STATISTICS = 6                   # struct tpacket_stats {tp_packets, tp_drops}
SO_RCVBUFFORCE = 33
# Each port's receive queue holds what arrives while the pipeline is held: a P4Runtime Write or
# Read takes the device lock, and a loaded host deschedules the process. With the kernel's
# default (net.core.rmem_default, 208 KiB: ~270 small frames) a stall of under a second
# overflows it and the kernel drops a run of frames, an outage no real switch would have; 8 MiB
# holds ~10,000 frames, seconds of the model's rate.
PORT_RCVBUF = 8 * 1024 * 1024
OVERFLOW_CHECK_S = 0.5
STALL_LOG_S = 0.2                       # a frame that waited this long for the pipeline is logged


class Dataplane:
    """Frames in from every port, through the device's pipeline, out by egress port."""

    def __init__(self, device, ports):
        self.device = device
        self.socks = {}
        self.by_fd = {}
        for port, ifname in ports.items():
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            s.bind((ifname, 0))
            s.setblocking(False)
            try:
                s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, PORT_RCVBUF)   # root: above rmem_max
            except PermissionError:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, PORT_RCVBUF)
            self.socks[port] = s
            self.by_fd[s.fileno()] = (port, s)
        self.stats = {"rx": 0, "tx": 0, "dropped": 0, "no_pipeline": 0, "tx_errors": 0,
                      "model_errors": 0, "rx_overflow": 0, "port_down": 0, "max_stall_ms": 0.0}
        self.checked = time.monotonic()
        self.stop = threading.Event()

    def run(self):
        poller = select.poll()
        for fd in self.by_fd:
            poller.register(fd, select.POLLIN)
        while not self.stop.is_set():
            for fd, _ in poller.poll(200):
                port, s = self.by_fd[fd]
                while True:
                    try:
                        frame, addr = s.recvfrom(MAX_FRAME)
                    except BlockingIOError:
                        break
                    except OSError:             # the link went down (ENETDOWN): it may come back
                        self.stats["port_down"] += 1
                        break
                    if addr[2] == PACKET_OUTGOING:      # our own transmissions
                        continue
                    self._one(frame, port)
            if time.monotonic() - self.checked >= OVERFLOW_CHECK_S:
                self.checked = time.monotonic()
                self._count_overflow()

    def _stalled(self, seconds):
        """How long a frame waited for the pipeline (a Write or Read holds it, or the host
        descheduled us): the longest is kept, long ones are logged."""
        ms = round(seconds * 1000, 1)
        if ms > self.stats["max_stall_ms"]:
            self.stats["max_stall_ms"] = ms
        if seconds >= STALL_LOG_S:
            print(json.dumps({"level": "warning", "event": "pipeline_stall", "ms": ms, "at": round(time.time(), 3)}),
                  file=sys.stderr, flush=True)

    def _count_overflow(self):
        """Frames the kernel dropped because a port's receive queue was full (read and reset
        by PACKET_STATISTICS): each run is logged, they are packets the switch lost."""
        for port, s in self.socks.items():
            try:
                _, drops = struct.unpack("II", s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
            except OSError:
                continue
            if drops:
                self.stats["rx_overflow"] += drops
                print(json.dumps({"level": "warning", "event": "rx_overflow", "port": port, "frames": drops,
                                  "at": round(time.time(), 3)}), file=sys.stderr, flush=True)

    def _one(self, frame, port):
        self.stats["rx"] += 1
        t0 = time.monotonic()
        try:
            res = self.device.process(frame, port)
        except Exception as e:          # noqa: BLE001 -- a model bug must not stop the ports
            self.stats["model_errors"] += 1
            print(json.dumps({"level": "error", "event": "model_error", "error": repr(e)}),
                  file=sys.stderr, flush=True)
            return
        self._stalled(time.monotonic() - t0)
        if res is None:
            self.stats["no_pipeline"] += 1
            return
        if not res.outputs:
            self.stats["dropped"] += 1
        for out_port, data in res.outputs:
            s = self.socks.get(out_port)
            if s is None:
                self.stats["dropped"] += 1
                continue
            try:
                s.send(data)
                self.stats["tx"] += 1
            except OSError:
                self.stats["tx_errors"] += 1


def parse_ports(values):
    ports = {}
    for v in values:
        num, sep, ifname = v.partition("=")
        if not sep or not num.isdigit() or not ifname:
            raise argparse.ArgumentTypeError(f"--port {v!r}: expected N=IFNAME")
        n = int(num)
        if not 0 <= n <= PORT_MAX or n in ports:
            raise argparse.ArgumentTypeError(f"--port {v!r}: port number 0..{PORT_MAX}, once each")
        ports[n] = ifname
    return ports


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grpc", default="127.0.0.1:9559",
                    help="gRPC address: host:port or unix:/path (default 127.0.0.1:9559)")
    ap.add_argument("--device-id", type=int, default=1)
    ap.add_argument("--port", action="append", default=[], metavar="N=IFNAME",
                    help="switch port N on interface IFNAME (repeatable)")
    args = ap.parse_args(argv)
    try:
        ports = parse_ports(args.port)
    except argparse.ArgumentTypeError as e:
        ap.error(str(e))
    device = p4rt_server.Device(args.device_id)
    try:
        dataplane = Dataplane(device, ports)
    except OSError as e:
        print(f"hlb-p4switch: cannot open a port: {e}", file=sys.stderr)
        return 1
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16), options=[
        ("grpc.max_receive_message_length", 64 * 1024 * 1024),
        ("grpc.max_send_message_length", 64 * 1024 * 1024)])
    p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(p4rt_server.P4RuntimeService(device), server)
    if server.add_insecure_port(args.grpc) == 0 and not args.grpc.startswith("unix:"):
        print(f"hlb-p4switch: cannot listen on {args.grpc}", file=sys.stderr)
        return 1
    server.start()
    thread = threading.Thread(target=dataplane.run, daemon=True)
    thread.start()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print(json.dumps({"event": "ready", "grpc": args.grpc, "deviceId": args.device_id,
                      "ports": {str(k): v for k, v in ports.items()}}), flush=True)
    started = time.monotonic()
    while not stop.wait(0.5):
        pass
    dataplane.stop.set()
    thread.join(2)
    dataplane._count_overflow()
    server.stop(1).wait(2)
    print(json.dumps({"event": "exit", "seconds": round(time.monotonic() - started, 3),
                      **dataplane.stats}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
