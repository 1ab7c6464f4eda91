"""Test fixtures: a model switch of one profile and the entries of a small fabric and
HMux, written through P4Runtime entities by P4Info name (p4rt_build.Builder).  The
HMux layout here is test data, not the controller's: the core owns that."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
P4 = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(P4, "model"))
sys.path.insert(0, os.path.join(P4, "tools"))

import hlb_p4info as K  # noqa: E402
import p4rt_build  # noqa: E402
import p4rt_state  # noqa: E402
import pipeline  # noqa: E402

ROUTER_MAC = "02:00:00:00:00:aa"
TUNNEL_SRC = "172.31.0.1"
TUNNEL_TTL = 64
ENCAP = {"ipip": K.ENCAP_IPIP, "gre": K.ENCAP_GRE}
AFFINITY = {"hash": K.AFFINITY_HASH, "cheetah": K.AFFINITY_CHEETAH,
            "cheetah-stateful": K.AFFINITY_CHEETAH_STATEFUL}
ECMP = K.ROUTING_ECMP_SELECTOR
DIPS = K.HMUX_DIP_SELECTOR


def peer_mac(port):
    return f"02:00:00:00:01:{port:02x}"


class ModelSwitch:
    """SwitchState + HlbPipeline of one profile, written only through Updates."""

    def __init__(self, profile="hlb_hmux"):
        self.profile = profile
        self.p4info = p4rt_build.load_p4info(profile)
        self.b = p4rt_build.Builder(self.p4info)
        self.state = p4rt_state.SwitchState(self.p4info)
        self.pipe = pipeline.HlbPipeline(self.state, profile)
        self._next_member = {ECMP: 1, DIPS: 1}

    def write(self, kind, msg):
        return self.state.write(self.b.update(kind, msg))

    def insert(self, msg):
        return self.write("INSERT", msg)

    def read(self, msg):
        return self.state.read(self.b.entity(msg))

    def counter(self, name, index):
        e = self.read(self.b.counter_entry(name, index))[0].counter_entry
        return e.data.packet_count, e.data.byte_count

    def process(self, frame, port=1):
        return self.pipe.process(bytes(frame), port)

    # ---- fabric
    def add_next(self, next_id, ports):
        members = []
        for port in ports:
            mid = self._next_member[ECMP]
            self._next_member[ECMP] += 1
            self.insert(self.b.member(ECMP, mid, "HlbIngress.routing.set_next_hop",
                                      port=port, smac=ROUTER_MAC, dmac=peer_mac(port)))
            members.append(mid)
        self.insert(self.b.group(ECMP, next_id, members))
        self.insert(self.b.table_entry("HlbIngress.routing.next_hop", {"next_id": next_id},
                                       group=next_id))

    def add_route(self, prefix, plen, next_id):
        self.insert(self.b.table_entry("HlbIngress.routing.routing_v4",
                                       {"dst_addr": (prefix, plen)},
                                       "HlbIngress.routing.set_next_id", {"next_id": next_id}))

    def set_tunnel_source(self, src=TUNNEL_SRC, ttl=TUNNEL_TTL):
        self.write("MODIFY", self.b.table_entry("HlbIngress.hmux_encap.tunnel_source",
                                                action="HlbIngress.hmux_encap.set_tunnel_source",
                                                params={"src_addr": src, "ttl": ttl},
                                                default=True))

    # ---- HMux
    def add_service(self, service_id, vip, proto=6, port=80, dips=(), weights=None,
                    encap="ipip", affinity="hash", key=0, owner_id=0, table=None):
        """One VIP service; its DIP pool as weight-unit members in pool order."""
        weights = weights or [1] * len(dips)
        if table is None:
            table = ("vip_whole" if proto is None else
                     "vip_service_any_port" if port == 0 else "vip_service")
        match = {"dst_addr": vip}
        if proto is not None:
            match["protocol"] = proto
        if table == "vip_service":
            match["dst_port"] = port
        if affinity == "hash":
            action, params = "HlbIngress.hmux.set_service", {"service_id": service_id,
                                                              "encap": ENCAP[encap]}
        else:
            action, params = "HlbIngress.hmux.set_cookie_service", {
                "service_id": service_id, "encap": ENCAP[encap], "affinity": AFFINITY[affinity],
                "cookie_key": key, "owner_id": owner_id}
        self.insert(self.b.table_entry(f"HlbIngress.hmux.{table}", match, action, params))
        self.set_pool(service_id, dips, weights, insert=True)

    def set_pool(self, service_id, dips, weights, insert=False):
        members = []
        for bucket, (dip, w) in enumerate(zip(dips, weights)):
            for _ in range(w):
                mid = self._next_member[DIPS]
                self._next_member[DIPS] += 1
                self.insert(self.b.member(DIPS, mid, "HlbIngress.hmux.set_dip",
                                          tunnel_dst=dip, bucket=service_id * 16 + bucket))
                members.append(mid)
        self.write("INSERT" if insert else "MODIFY", self.b.group(DIPS, service_id, members))
        if insert:
            self.insert(self.b.table_entry("HlbIngress.hmux.dip_select",
                                           {"service_id": service_id}, group=service_id))

    # ---- Cheetah
    def add_server(self, server_id, dip):
        self.insert(self.b.table_entry("HlbIngress.cheetah.all_servers", {"server_id": server_id},
                                       "HlbIngress.cheetah.set_server", {"dip": dip}))

    def accept_server(self, service_id, server_id, bucket):
        self.insert(self.b.table_entry("HlbIngress.cheetah.vip_servers",
                                       {"service_id": service_id, "server_id": server_id},
                                       "HlbIngress.cheetah.accept_server", {"bucket": bucket}))

    def add_owner(self, service_id, owner, addr, bucket=0):
        self.insert(self.b.table_entry("HlbIngress.cheetah.owners",
                                       {"service_id": service_id, "owner": owner},
                                       "HlbIngress.cheetah.set_owner",
                                       {"owner_addr": addr, "bucket": bucket}))

    def free_indexes(self, partition, indexes):
        """The controller's push: conn_stack[p << 10 | tail % 1024] = index, then tail."""
        reg = "HlbIngress.cheetah.conn_stack_tail"
        tail = self.state.register(reg)[partition]
        for index in indexes:
            self.write("MODIFY", self.b.register_entry(
                "HlbIngress.cheetah.conn_stack", (partition << 10) | (tail % 1024), index))
            tail += 1
            self.write("MODIFY", self.b.register_entry(reg, partition, tail))


def fabric(sw):
    """Hosts 10.0.0.0/8 on port 1, a VIP's HMux switch (100.64.0.0/24 /32s) on port 2,
    the aggregate 100.64.0.0/16 to the SMuxes on ports 3 and 4 (ECMP)."""
    sw.add_next(1, [1])
    sw.add_next(2, [2])
    sw.add_next(3, [3, 4])
    sw.add_route("10.0.0.0", 8, 1)
    sw.add_route("172.31.0.0", 16, 1)
    sw.add_route("100.64.0.0", 16, 3)
    sw.set_tunnel_source()
