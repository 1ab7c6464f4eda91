"""hybridlb emulated fabric: the solver's topology JSON as a Mininet topology, plus the
fabric's own static routing (OpenFlow tables 0/1/2, cookie 0x1) and the GRE plumbing
every switch needs to act as an HMux.

The plan (addresses, MACs, locations, ports) is pure data computed from the topology
file, so the emulator, the fabric.json writer and the tests all agree on it.

Also usable on its own with Mininet's command line (no HMux plumbing, no routing):
    mn --custom topologies/hlb_topo.py --topo hlbfattree,4 --switch ovs,datapath=user \
       --controller none
"""
import ipaddress
import json
from collections import deque

from mininet.topo import Topo

import hmux_layout

FABRIC_COOKIE = "0x1"
GATEWAY_IP = "169.254.0.1"          # every host's default gateway, answered by its ToR
GATEWAY_MAC = "02:fe:00:00:00:01"
TUNNEL_NET_PLEN = 16                # switch underlay addresses 172.31.<hi>.<lo>/16 on each bridge's port
TUNNEL_GATEWAY_IP = "172.31.255.254"  # next hop of every encapsulated packet (never ARPed: tnl/neigh/set)
TUNNEL_OFPORT = 100                 # the flow-based GRE port on every bridge
MGMT_NET = "10.254.0.0/16"
MGMT_HOST_IP = "10.254.0.1"         # the emulation namespace itself (daemon, route server)
ROUTE_SERVER_ASN = 65000
SMUX_ASN_BASE = 65001
CLIENT_NET = "10.253.0.0/16"        # one client per ToR: 10.253.<tor index>.10
INTERNET_CLIENT_IP = "198.51.100.10"
BORDER_ID = "border"
HOST_LOCATION_BASE = 1000
BORDER_UP_GROUP = 60000             # border switch: ECMP over the cores
# A packet routed towards a location carries it in its destination MAC from the first hop on
# (LOCATION_MAC | location), so transit switches forward it by location instead of looking its
# VIP up again: while VIP routes change switch by switch (a migration, a failover), a packet
# never bounces between switches that disagree.
HAIRPIN = "load:0->NXM_OF_IN_PORT[],"
LOCATION_MAC = "02:4c:42:00:00:00"
LOCATION_MAC_MASK = "ff:ff:ff:00:00:00"
LOCATION_ROUTE = ("set_field:%s->eth_dst,load:{location}->NXM_OF_ETH_DST[0..23],"
                  "load:{location}->NXM_NX_REG0[],resubmit(,2)" % LOCATION_MAC)
# Table the daemon fills with the VIP aggregates (to the SMuxes) for packets whose HMux is
# unreachable (fabric.json tables.fallback).
FALLBACK_TABLE = 3
# Local repair: every switch forwards towards a switch location through a fast-failover group
# (LOCAL_REPAIR_BASE + location). Its first bucket is the location's ECMP group; when that has
# no live port left (the HMux or the only link to it failed), the second bucket turns the
# packet back into a plain VIP packet and hands it to the fallback table: the /32 is
# unreachable, so the aggregate route (the SMuxes) takes it, as in a router's longest-prefix
# match. The switch next to the failure repairs as soon as its port is down, without waiting
# for the fabric's routing to reconverge.
LOCAL_REPAIR_BASE = 0xe0000000
REPAIR_GROUP = LOCAL_REPAIR_BASE     # (no switch has location 0) always alive, indirect: the second buckets watch it


def _mac(n):
    return "02:00:00:%02x:%02x:%02x" % ((n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff)


def location_mac(location):
    return "02:4c:42:%02x:%02x:%02x" % ((location >> 16) & 0xff, (location >> 8) & 0xff, location & 0xff)


class FabricPlan:
    """Every name, address and port of one emulated fabric, derived from the topology."""

    def __init__(self, topology, border=True, clients=True, down=()):
        self.topology = topology
        self.down = set(down)      # failed switches: the fabric's routing avoids them
        self.name = topology.get("name", "fabric")
        self.switches = {}   # id -> {bridge, location, role, dpid, tunnelIp}
        self.nodes = {}      # host-like nodes: id -> {name, ip, mac, location, role, tor, mgmtIp}
        self.links = []      # (a, b, port_a, port_b)
        self.ports = {}      # switch id -> {neighbour id: port}
        ids = [s["id"] for s in topology["switches"]]
        if border:
            ids.append(BORDER_ID)
        role = {s["id"]: s.get("role", "tor") for s in topology["switches"]}
        role[BORDER_ID] = "border"
        for i, sid in enumerate(ids, start=1):
            self.switches[sid] = {"bridge": "s%d" % i, "location": i, "role": role[sid], "dpid": "%016x" % i,
                                  "tunnelIp": "172.31.%d.%d" % (i // 256, i % 256)}
            self.ports[sid] = {}
        loc = HOST_LOCATION_BASE

        def add_node(nid, ip, tor, kind, mgmt):
            nonlocal loc
            loc += 1
            n = len(self.nodes) + 1
            self.nodes[nid] = {"name": "h%d" % n, "ip": ip, "mac": _mac(loc), "location": loc, "role": kind,
                               "tor": tor,
                               "mgmtIp": "10.254.%d.%d" % (loc // 256, loc % 256) if mgmt else None}

        for h in topology["hosts"]:
            add_node(h["id"], h["ip"], h["tor"], "dip", True)
        for s in topology.get("smuxes", []):
            add_node(s["id"], s["ip"], s["tor"], "smux", True)
        tors = [s["id"] for s in topology["switches"] if s.get("role") == "tor"]
        if clients:
            for i, tor in enumerate(tors):
                add_node("client-" + tor[len("tor-"):] if tor.startswith("tor-") else "client-" + tor,
                         "10.253.%d.10" % i, tor, "client", False)
        if border:
            add_node("internet", INTERNET_CLIENT_IP, BORDER_ID, "internet", False)

        # Switch-switch links first (ports 1..), then host ports.
        def next_port(sid):
            return len(self.ports[sid]) + 1

        for l in topology["links"]:
            a, b = l["a"], l["b"]
            pa, pb = next_port(a), next_port(b)
            self.ports[a][b], self.ports[b][a] = pa, pb
            self.links.append((a, b, pa, pb))
        if border:
            for s in topology["switches"]:
                if s.get("role") == "core":
                    pa, pb = next_port(BORDER_ID), next_port(s["id"])
                    self.ports[BORDER_ID][s["id"]], self.ports[s["id"]][BORDER_ID] = pa, pb
                    self.links.append((BORDER_ID, s["id"], pa, pb))
        for nid, n in self.nodes.items():
            p = next_port(n["tor"])
            self.ports[n["tor"]][nid] = p
            n["port"] = p
        self._distances()

    @classmethod
    def load(cls, path, **kw):
        with open(path) as f:
            return cls(json.load(f), **kw)

    def _distances(self):
        adj = {s: [n for n in self.ports[s] if n in self.switches and n not in self.down and s not in self.down]
               for s in self.switches}
        self.dist = {}
        for src in self.switches:
            d = {src: 0}
            q = deque([src])
            while q:
                u = q.popleft()
                if u == BORDER_ID and src != BORDER_ID:
                    # The border switch is an edge, never a transit hop between DC switches
                    # (it does not carry the daemon's VIP routes): reached, not expanded.
                    continue
                for v in adj[u]:
                    if v not in d:
                        d[v] = d[u] + 1
                        q.append(v)
            self.dist[src] = d
        self.adj = adj

    def next_hops(self, sid, target):
        """Ports of switch sid on shortest paths toward switch target (ECMP set)."""
        d = self.dist[target]
        if sid not in d:
            return []
        return sorted(self.ports[sid][n] for n in self.adj[sid] if d.get(n, 1 << 30) == d[sid] - 1
                      and (n != BORDER_ID or target == BORDER_ID))

    def by_role(self, role):
        return {k: v for k, v in self.nodes.items() if v["role"] == role}

    # ---- OpenFlow text for ovs-ofctl (always -O OpenFlow15) ----

    def fabric_groups(self, sid):
        """One select group per other switch: ECMP toward it, buckets watch their port."""
        out = []
        for target in self.switches:
            if target == sid:
                continue
            # Always defined (flows point to it); no bucket = unreachable = drop.
            hops = self.next_hops(sid, target) if sid not in self.down else []
            buckets = ",".join("bucket=bucket_id:%d,watch_port:%d,actions=output:%d" % (i, p, p)
                               for i, p in enumerate(hops))
            out.append("group_id=%d,type=select,selection_method=hash,"
                       "fields(ip_src,ip_dst,nw_proto,tcp_src,tcp_dst,udp_src,udp_dst)%s"
                       % (self.switches[target]["location"], "," + buckets if buckets else ""))
        out.append("group_id=%d,type=indirect,bucket=actions=set_field:%s->eth_dst,resubmit(,%d)"
                   % (REPAIR_GROUP, GATEWAY_MAC, FALLBACK_TABLE))
        for target, t in self.switches.items():
            if target != sid:
                out.append("group_id=%d,type=ff,bucket=bucket_id:0,watch_group:%d,actions=group:%d,"
                           "bucket=bucket_id:1,watch_group:%d,actions=group:%d"
                           % (LOCAL_REPAIR_BASE + t["location"], t["location"], t["location"],
                              REPAIR_GROUP, REPAIR_GROUP))
        if self.switches[sid]["role"] == "border":
            cores = sorted(p for n, p in self.ports[sid].items() if self.switches.get(n, {}).get("role") == "core")
            buckets = ",".join("bucket=bucket_id:%d,watch_port:%d,actions=output:%d" % (i, p, p)
                               for i, p in enumerate(cores))
            out.append("group_id=%d,type=select,selection_method=hash,"
                       "fields(ip_src,ip_dst,nw_proto,tcp_src,tcp_dst,udp_src,udp_dst),%s" % (BORDER_UP_GROUP, buckets))
        return out

    def _toward(self, sid, node):
        # in_port cleared first: like a router, a switch may send a packet back out the port it
        # came in on (OVS skips output to the input port otherwise), e.g. a VIP packet reaching
        # the HMux-to-be before its entry is there, routed back towards the current HMux
        n = self.nodes[node]
        if n["tor"] == sid:
            return HAIRPIN + "set_field:%s->eth_dst,output:%d" % (n["mac"], n["port"])
        return HAIRPIN + "group:%d" % self.switches[n["tor"]]["location"]

    def fabric_flows(self, sid, aggregates=()):
        c = "cookie=%s," % FABRIC_COOKIE
        sw = self.switches[sid]
        flows = [
            c + "table=0,priority=0,actions=goto_table:1",
            # ARP responder for the gateway address (hosts and SMuxes resolve it).
            c + "table=0,priority=500,arp,arp_op=1,arp_tpa=%s,actions=move:eth_src->eth_dst,"
                "set_field:%s->eth_src,set_field:2->arp_op,move:arp_sha->arp_tha,move:arp_spa->arp_tpa,"
                "set_field:%s->arp_sha,set_field:%s->arp_spa,in_port"
            % (GATEWAY_IP, GATEWAY_MAC, GATEWAY_MAC, GATEWAY_IP),
            c + "table=0,priority=400,arp,actions=drop",
            # routed by location (LOCATION_ROUTE at an earlier hop): forward, do not route again
            c + "table=0,priority=4000,dl_dst=%s/%s,actions=move:NXM_OF_ETH_DST[0..23]->NXM_NX_REG0[0..23],"
                "resubmit(,2)" % (LOCATION_MAC, LOCATION_MAC_MASK),
            # ... unless this switch is the location (an HMux): look the VIP up here
            c + "table=0,priority=4100,dl_dst=%s,actions=set_field:%s->eth_dst,resubmit(,0)"
            % (location_mac(sw["location"]), GATEWAY_MAC),
            c + "table=1,priority=0,actions=drop",
            c + "table=2,priority=0,actions=drop",
        ]
        for nid, n in self.nodes.items():
            flows.append(c + "table=1,priority=100,ip,nw_dst=%s,actions=%s" % (n["ip"], self._toward(sid, nid)))
            flows.append(c + "table=2,priority=100,reg0=%d,actions=%s" % (n["location"], self._toward(sid, nid)))
        if self.switches[sid]["role"] == "border":
            # The Internet's way in: VIP aggregates go up to the cores (the DC routes them from there).
            for agg in aggregates:
                flows.append(c + "table=1,priority=50,ip,nw_dst=%s,actions=group:%d" % (agg, BORDER_UP_GROUP))
        for tid, t in self.switches.items():
            if tid != sid:
                flows.append(c + "table=2,priority=100,reg0=%d,actions=%sgroup:%d" % (t["location"], HAIRPIN,
                                                                                     LOCAL_REPAIR_BASE + t["location"]))
        return flows

    def tunnel_actions_prefix(self, sid):
        return "set_field:%d->pkt_mark" % self.switches[sid]["location"]

    # ---- files for the daemon ----

    def fabric_json(self, topology_file, ovs_rundir, frr_rs_dir, smux_control_port=8000, agent_port=9100,
                    scheme="http"):
        """scheme: of the SMuxes' control APIs and the host agents (https: mutual TLS)."""
        switches = {}
        for sid, s in self.switches.items():
            if sid == BORDER_ID:
                continue
            switches[sid] = {"bridge": s["bridge"], "location": s["location"], "dpid": s["dpid"],
                             "ports": {n: p for n, p in self.ports[sid].items()},
                             "tunnel": {"ofport": TUNNEL_OFPORT, "localIp": s["tunnelIp"], "greKey": s["location"],
                                        "actionsPrefix": self.tunnel_actions_prefix(sid)}}
        hosts = {}
        for nid, n in self.nodes.items():
            h = {"ip": n["ip"], "location": n["location"], "role": n["role"], "tor": n["tor"],
                 "mac": n["mac"], "node": n["name"]}
            if n["mgmtIp"]:
                h["mgmtIp"] = n["mgmtIp"]
            if n["role"] == "dip":
                h["agentUrl"] = "%s://%s:%d" % (scheme, n["mgmtIp"], agent_port)
            hosts[nid] = h
        smuxes = []
        for i, (nid, n) in enumerate(self.by_role("smux").items()):
            smuxes.append({"id": nid, "host": nid, "ip": n["ip"], "tor": n["tor"],
                           "controlUrl": "%s://%s:%d" % (scheme, n["mgmtIp"], smux_control_port),
                           "bgpPeer": n["mgmtIp"], "asn": SMUX_ASN_BASE + i})
        return {
            "name": self.name,
            "topology": topology_file,
            "ovs": {"rundir": ovs_rundir},
            # table 3: the VIP aggregates again, for VIP routes whose HMux became unreachable
            # (fast-failover groups watch the location's ECMP group, whose buckets watch ports)
            "tables": {"vip": 0, "underlay": 1, "location": 2, "fallback": FALLBACK_TABLE},
            "locationWatchGroup": "{location}",
            "fabricCookie": FABRIC_COOKIE,
            "controllerCookie": hmux_layout.CONTROLLER_COOKIE,
            "controllerGroupIdBase": hmux_layout.CONTROLLER_GROUP_ID_BASE,
            "locationRoute": LOCATION_ROUTE,
            "gateway": {"ip": GATEWAY_IP, "mac": GATEWAY_MAC},
            "border": {"bridge": self.switches[BORDER_ID]["bridge"],
                       "location": self.switches[BORDER_ID]["location"]} if BORDER_ID in self.switches else None,
            "switches": switches,
            "hosts": hosts,
            "smuxes": smuxes,
            "routeServer": {"vtyDir": frr_rs_dir, "asn": ROUTE_SERVER_ASN, "ip": MGMT_HOST_IP},
        }


class FabricTopo(Topo):
    """Mininet topology of a FabricPlan: bridges s<location>, hosts h<n>, fixed port numbers."""

    def build(self, plan=None, **_opts):
        for sid, s in plan.switches.items():
            self.addSwitch(s["bridge"], dpid=s["dpid"])
        for nid, n in plan.nodes.items():
            self.addHost(n["name"], ip=None, mac=n["mac"])
        for a, b, pa, pb in plan.links:
            self.addLink(plan.switches[a]["bridge"], plan.switches[b]["bridge"], port1=pa, port2=pb)
        for nid, n in plan.nodes.items():
            self.addLink(n["name"], plan.switches[n["tor"]]["bridge"], port1=0, port2=n["port"])


def _solver_fat_tree(k):
    """A fat-tree in the solver's schema without running the solver (for `mn --custom`)."""
    switches, links, hosts = [], [], []
    half = k // 2
    switches += [{"id": "core-%d" % i, "role": "core"} for i in range(half * half)]
    base = int(ipaddress.IPv4Address("10.0.0.0"))
    rack = 0
    for p in range(k):
        for j in range(half):
            switches.append({"id": "agg-%d-%d" % (p, j), "role": "agg", "pod": p})
            for c in range(j * half, j * half + half):
                links.append({"a": "agg-%d-%d" % (p, j), "b": "core-%d" % c})
        for t in range(half):
            tor = "tor-%d-%d" % (p, t)
            switches.append({"id": tor, "role": "tor", "pod": p})
            for j in range(half):
                links.append({"a": "agg-%d-%d" % (p, j), "b": tor})
            for h in range(half):
                hosts.append({"id": "host-%d-%d-%d" % (p, t, h),
                              "ip": str(ipaddress.IPv4Address(base + rack * 64 + h + 1)), "tor": tor})
            rack += 1
    return {"name": "fat-tree-k%d" % k, "switches": switches, "links": links, "hosts": hosts, "smuxes": []}


class MnFatTree(FabricTopo):
    def build(self, k=4, **opts):
        super().build(plan=FabricPlan(_solver_fat_tree(int(k)), border=False, clients=False))


class MnFromFile(FabricTopo):
    def build(self, path="topology.json", **opts):
        super().build(plan=FabricPlan.load(path, border=False, clients=False))


topos = {"hlbfattree": MnFatTree, "hlbtopofile": MnFromFile}
