"""P4 switches in the emulation (`hlbemu.py start --p4-switches tor-1-0,agg-1-0`): the chosen
fabric switches are run by hlb-p4switch (p4/switch/, the P4 programs' reference model serving
P4Runtime) instead of an Open vSwitch bridge, on the same veths and port numbers.

The emulation programs their share of the fabric over P4Runtime, as it programs the OVS
bridges over OpenFlow: the gateway ARP answer, a /32 route per host (its port when the host is
local, else an ECMP group towards the host's ToR, fabric.next_hops) and the switch's tunnel
source.  It does not program VIPs: HMux entries and VIP routes on P4 switches are the
controller's (its P4Runtime southbound).  A P4 switch routes every packet by IP, so the OVS
fabric's location-MAC forwarding (VIP routes pinned at the first hop) does not cross it.
"""
import os
import sys

from mininet.node import Switch

from emu_base import PY, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
P4_SWITCH = os.path.join(REPO, "p4", "switch", "hlb_p4switch.py")
sys.path.insert(0, os.path.join(REPO, "p4", "switch"))

DEFAULT_PROFILE = "hlb_cheetah"
DEVICE_ID = 1
ELECTION_ID = 1                    # the emulation's; a controller arbitrates above it
TUNNEL_TTL = 64
LOCAL_NEXT_BASE = 0x8000           # next ids of directly attached hosts: base + port
WRITE_BATCH = 500
START_TIMEOUT = 30


def grpc_address(rundir, sid):
    return "unix:%s/p4/%s.sock" % (rundir, sid)


def check_names(topology, names):
    """The --p4-switches names that are not fabric switches of the topology (the border
    is the emulation's own and stays OVS)."""
    ids = {s["id"] for s in topology["switches"]}
    return [n for n in names if n not in ids]


class P4ModelSwitch(Switch):
    """A Mininet switch whose data plane is an hlb-p4switch process."""

    def __init__(self, name, emu=None, sid=None, **params):
        super().__init__(name, **params)
        self.emu, self.sid = emu, sid
        self.address = grpc_address(emu.dir, sid)
        self.proc = None

    def start(self, controllers):
        os.makedirs(os.path.join(self.emu.dir, "p4"), exist_ok=True)
        cmd = [PY, P4_SWITCH, "--grpc", self.address, "--device-id", str(DEVICE_ID)]
        for intf in self.intfList():
            port = self.ports.get(intf, 0)
            if port > 0:
                cmd += ["--port", "%d=%s" % (port, intf.name)]
        self.proc = self.emu.spawn("p4switch " + self.sid, cmd, log_name="p4switch-" + self.sid)
        sock = self.address[len("unix:"):]
        wait_for(lambda: os.path.exists(sock) or self.proc.poll() is not None, START_TIMEOUT,
                 "hlb-p4switch %s" % self.sid)
        if self.proc.poll() is not None:
            raise RuntimeError("hlb-p4switch %s exited (logs/p4switch-%s.log)" % (self.sid, self.sid))


def switch_factory(emu, p4_sids, ovs_class):
    """Mininet's switch constructor: P4 model switches for the chosen ids, OVS for the rest."""
    by_bridge = {emu.plan.switches[sid]["bridge"]: sid for sid in p4_sids}

    def make(name, **params):
        if name in by_bridge:
            return P4ModelSwitch(name, emu=emu, sid=by_bridge[name], **params)
        return ovs_class(name, **params)
    return make


def program_fabric(emu, sid, profile):
    """Pipeline, gateway ARP, host routes and tunnel source of one P4 switch."""
    from hlb_topo import GATEWAY_IP, GATEWAY_MAC
    from p4rt_client import P4RuntimeClient
    plan = emu.plan
    client = P4RuntimeClient(grpc_address(emu.dir, sid), device_id=DEVICE_ID,
                             election_id=ELECTION_ID, profile=profile)
    try:
        if client.open_stream().status.code != 0:
            raise RuntimeError("hlb-p4switch %s: not primary for the emulation" % sid)
        client.set_pipeline()
        b = client.b
        ups = [b.update("INSERT", b.table_entry("HlbIngress.arp.gateway_arp", {"target_addr": GATEWAY_IP},
                                                "HlbIngress.arp.arp_reply", {"mac": GATEWAY_MAC})),
               b.update("MODIFY", b.table_entry("HlbIngress.hmux_encap.tunnel_source", default=True,
                                                action="HlbIngress.hmux_encap.set_tunnel_source",
                                                params={"src_addr": plan.switches[sid]["tunnelIp"],
                                                        "ttl": TUNNEL_TTL}))]
        member = [0]

        def next_group(next_id, hops):
            mids = []
            for port, dmac in hops:
                member[0] += 1
                mids.append(member[0])
                ups.append(b.update("INSERT", b.member("HlbIngress.routing.ecmp_selector", member[0],
                                                       "HlbIngress.routing.set_next_hop", port=port,
                                                       smac=GATEWAY_MAC, dmac=dmac)))
            ups.append(b.update("INSERT", b.group("HlbIngress.routing.ecmp_selector", next_id, mids)))
            ups.append(b.update("INSERT", b.table_entry("HlbIngress.routing.next_hop",
                                                        {"next_id": next_id}, group=next_id)))

        for tid, t in plan.switches.items():
            if tid != sid:              # no member when unreachable: dropped, as OVS does
                next_group(t["location"], [(p, GATEWAY_MAC) for p in plan.next_hops(sid, tid)])
        for nid, n in plan.nodes.items():
            if n["tor"] == sid:
                next_id = LOCAL_NEXT_BASE + n["port"]
                next_group(next_id, [(n["port"], n["mac"])])
            else:
                next_id = plan.switches[n["tor"]]["location"]
            ups.append(b.update("INSERT", b.table_entry("HlbIngress.routing.routing_v4",
                                                        {"dst_addr": (n["ip"], 32)},
                                                        "HlbIngress.routing.set_next_id",
                                                        {"next_id": next_id})))
        for i in range(0, len(ups), WRITE_BATCH):
            client.write(ups[i:i + WRITE_BATCH])
    finally:
        client.close()


def fabric_json_entry(emu, sid, profile):
    return {"grpc": grpc_address(emu.dir, sid), "deviceId": DEVICE_ID, "profile": profile,
            "p4info": os.path.join(REPO, "p4", "p4info", profile + ".p4info.txtpb")}
