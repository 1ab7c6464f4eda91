#!/usr/bin/env python3
"""Runs cookie segments through the reference model after the P4Runtime updates a controller
wrote, so a controller's test can check that its entries decode each cookie to the right host.

  decode_written.py PROFILE UPDATES CASES

UPDATES: a binary p4.v1.WriteRequest whose updates are applied in order onto a model switch of
PROFILE with the testbed's fabric (hosts 10.0.0.0/8 on port 1, hlb_testbed.fabric). CASES: a JSON
list of {"seq", "vip", "vip_port", "client", "client_port", "wire_tsecr"} (the columns of
vectors/cookie_vectors.csv). Prints one JSON object: seq -> the outer destination of the
encapsulated frame, or "drop:<reason>"."""
import json
import sys

from p4.v1 import p4runtime_pb2
from scapy.all import IP

import hlb_testbed as tb
from test_model import client_tcp, ts_options


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    profile, updates, cases = argv[1:]
    sw = tb.ModelSwitch(profile)
    tb.fabric(sw)
    request = p4runtime_pb2.WriteRequest()
    with open(updates, "rb") as f:
        request.ParseFromString(f.read())
    for u in request.updates:
        sw.state.write(u)
    with open(cases) as f:
        rows = json.load(f)
    out = {}
    for r in rows:
        pkt = client_tcp(src=r["client"], dst=r["vip"], sport=int(r["client_port"]),
                         dport=int(r["vip_port"]),
                         options=ts_options(1234, int(r["wire_tsecr"], 16)))
        res = sw.process(pkt)
        out[r["seq"]] = (IP(res.outputs[0][1][14:]).dst if res.outputs
                         else "drop:%s" % res.drop_reason)
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv)
