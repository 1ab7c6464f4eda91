"""Helpers for the DATAPATH Python suites: run hlb-smux, and compute independently
which DIP a flow must get (crc32 from p4/HASH-SPEC.md with gen_crc32_vectors.py; ovs through the
replica's shared library)."""
import ctypes
import json
import os
import shutil
import socket
import struct
import subprocess

import gen_crc32_vectors

SMUX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_DIR = os.environ.get("HLB_DP_BUILD", os.path.join(SMUX_DIR, "build"))
SMUX_BIN = os.path.join(BUILD_DIR, "hlb-smux")

SMUX_IP = "192.0.2.10"
GW_IP = "192.0.2.1"
GW_MAC = "02:47:57:00:00:01"
CLIENT_MAC = "02:c1:1e:00:00:01"


def eal_args(prefix, vdevs, core=None):
    args = ["--no-huge", "--no-pci", "-m", "128", "--no-shconf", "--no-telemetry",
            f"--file-prefix={prefix}", "-l", str(core if core is not None else 0),
            "--log-level=warning"]
    for v in vdevs:
        args += ["--vdev", v]
    return args


def cleanup_prefix(prefix):
    shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)


def run_smux(prefix, vdevs, smux_args, timeout=60, lcores=None):
    """Runs hlb-smux to completion (on EAL lcores `lcores`, "0" by default: one worker
    per lcore); returns (ready_event, exit_event, stderr)."""
    cmd = [SMUX_BIN] + eal_args(prefix, vdevs, core=lcores) + ["--"] + smux_args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    finally:
        cleanup_prefix(prefix)
    events = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    ready = next((e for e in events if e.get("event") == "ready"), None)
    done = next((e for e in events if e.get("event") == "exit"), None)
    if p.returncode != 0 or ready is None or done is None:
        raise AssertionError(f"hlb-smux failed rc={p.returncode}\n{p.stdout}\n{p.stderr}")
    return ready, done, p.stderr


def crc32_pick(src, dst, proto, sport, dport, weights):
    """p4/HASH-SPEC.md: slot = crc32(5-tuple) % sum(weights), first cumulative > slot."""
    return gen_crc32_vectors.weighted_pick(
        gen_crc32_vectors.crc32_5tuple(src, dst, proto, sport, dport), weights)


class _Tuple(ctypes.Structure):
    _fields_ = [("src_ip", ctypes.c_uint32), ("dst_ip", ctypes.c_uint32),
                ("src_port", ctypes.c_uint16), ("dst_port", ctypes.c_uint16),
                ("proto", ctypes.c_uint8)]


_ovs = None


def ovs_pick(src, dst, proto, sport, dport, weights, bucket_ids=None, basis=0):
    """Bucket index OVS 3.1 would choose (through the replica's shared library)."""
    global _ovs
    if _ovs is None:
        _ovs = ctypes.CDLL(os.path.join(BUILD_DIR, "tests", "libdp_ovs.so"))
        _ovs.hlb_ovs_select_hash.restype = ctypes.c_uint32
        _ovs.hlb_ovs_select_hash.argtypes = [ctypes.POINTER(_Tuple), ctypes.c_uint64]
        _ovs.hlb_ovs_select_bucket.restype = ctypes.c_int
    n = len(weights)
    t = _Tuple(struct.unpack("=I", socket.inet_aton(src))[0],
               struct.unpack("=I", socket.inet_aton(dst))[0],
               socket.htons(sport), socket.htons(dport), proto)
    h = _ovs.hlb_ovs_select_hash(ctypes.byref(t), ctypes.c_uint64(basis))
    ids = (ctypes.c_uint32 * n)(*(bucket_ids or range(n)))
    ws = (ctypes.c_uint16 * n)(*weights)
    return _ovs.hlb_ovs_select_bucket(ctypes.c_uint32(h), ids, ws, n)


def ip_checksum_ok(raw_ip_header):
    s = 0
    for i in range(0, len(raw_ip_header), 2):
        s += (raw_ip_header[i] << 8) | raw_ip_header[i + 1]
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s == 0xFFFF
