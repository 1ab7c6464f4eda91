"""Prism fabric steering on the suite's emulation: hybridlbd accepts a VIP with
"steering": "fabric", keeps it on the SMuxes, and a pin asked for through its REST API
(POST /prism/{vip}/pins) is in every live SMux's pin table when the answer comes; a client
connection of that flow is then sent by the pin (the SMuxes count pinned packets); the
removal takes it off every SMux."""
import json

import hlbemu
from conftest import placement, wait_for, wait_quiet

VIP = "10.100.6.1"
CLIENT_PORT = 47001


def smux_get(emu, smux, path):
    r = emu.ns_run(["curl", "-s", "-m", "3"] + hlbemu.mgmt_curl(emu.tag) + [smux["controlUrl"] + path])
    return r.stdout


def smux_pins(emu):
    """Per SMux id: the flows (client, clientPort, vip, vipPort) -> dip its pin table holds."""
    out = {}
    for s in emu.fab["smuxes"]:
        text = smux_get(emu, s, "/pins")
        if text.strip():
            out[s["id"]] = {(p["client"], p["clientPort"], p["vip"], p["vipPort"]): p["dip"]
                            for p in json.loads(text)["pins"]}
    return out


def pinned_packets(emu):
    total = 0
    for s in emu.fab["smuxes"]:
        for line in smux_get(emu, s, "/metrics").splitlines():
            if line.startswith("hlb_smux_pinned_packets_total "):
                total += int(float(line.split()[1]))
    return total


def test_hybridlbd_pins_a_flow_on_every_live_smux(emu):
    hosts = sorted((h for h, v in emu.fab["hosts"].items() if v["role"] == "dip"),
                   key=lambda h: emu.fab["hosts"][h]["ip"])
    client = sorted(h for h, v in emu.fab["hosts"].items() if v["role"] == "client")[0]
    client_ip = emu.fab["hosts"][client]["ip"]
    fe, backend = emu.fab["hosts"][hosts[0]]["ip"], emu.fab["hosts"][hosts[1]]["ip"]
    doc = {"vip": VIP, "aggregate": "10.100.0.0/16",
           "ports": [{"proto": "tcp", "port": 80, "dips": [{"ip": fe}]}],
           "prism": {"frontends": [{"ip": fe, "admin": "http://127.0.0.1:9/"}],
                     "backends": {"b1": {"address": backend, "controlPort": 9500}},
                     "rules": [{"name": "all", "priority": 0, "split": {"b1": 1}}],
                     "steering": "fabric"}}
    code, body = emu.api("POST", "/vips", doc)
    assert code == 201, body
    try:
        assert wait_for(lambda: placement(emu).get(VIP) == "smux", 60, 1), placement(emu)
        code, a = emu.api("GET", "/assignment")
        assert "prism steering fabric" in a["hashUnmatched"][VIP]["reason"], a["hashUnmatched"]

        code, pin = emu.api("POST", "/prism/%s/pins" % VIP,
                            {"client": client_ip, "clientPort": CLIENT_PORT, "vipPort": 80, "backend": "b1"})
        assert code == 200, pin
        held = smux_pins(emu)
        assert sorted(held) == sorted(s["id"] for s in emu.fab["smuxes"]), held
        flow = (client_ip, CLIENT_PORT, VIP, 80)
        assert all(pins == {flow: backend} for pins in held.values()), held

        # The client's SYNs of that flow go by the pin (whoever answers them).
        before = pinned_packets(emu)
        emu.run(client, ["python3", "-c",
                         "import socket; s = socket.socket(); s.settimeout(2);"
                         "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1);"
                         "s.bind(('%s', %d));\ntry:\n s.connect(('%s', 80))\nexcept OSError: pass"
                         % (client_ip, CLIENT_PORT, VIP)], timeout=20)
        assert wait_for(lambda: pinned_packets(emu) > before, 10, 0.5), "no pinned packet on any SMux"

        code, gone = emu.api("DELETE", "/prism/%s/pins?client=%s&clientPort=%d&vipPort=80"
                             % (VIP, client_ip, CLIENT_PORT))
        assert code == 200 and gone["removed"], gone
        assert all(pins == {} for pins in smux_pins(emu).values()), smux_pins(emu)
    finally:
        emu.api("DELETE", "/vips/%s" % VIP)
        wait_quiet(emu, 60)
