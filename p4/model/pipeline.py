"""Reference model of p4/src/v1model/hlb.p4, one profile at a time: the packet
behaviour of the P4 source as BMv2 simple_switch runs it, driven only by P4Runtime
state (p4rt_state.SwitchState).  Each step names the P4 control it mirrors; constants
(drop reasons, Cheetah events, sizes) are read from the P4 source itself.

BMv2 behaviours the model reproduces on purpose:
- an action-selector table that misses, or whose group is empty, runs no action (not
  the default action); the program marks the packet to drop before, so it is dropped;
- a selector's hash is the whole 32-bit value of its algorithm over the selector
  fields, member = hash % (number of weight units), members in ascending member id
  order; the DIP selector is `identity` over dip_hash, the ECMP selector CRC-32 (zlib);
- hash() with crc32_custom is configured as CRC-32C (p4/README.md), the hash of
  p4/HASH-SPEC.md;
- a parser error does not drop by itself: the ingress drops on parser_error;
- Ethernet padding after the IPv4 datagram stays in the payload.
"""
import os
import struct
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import cheetah_cookie  # noqa: E402
import p4src  # noqa: E402

DROP_PORT = 511                     # v1model mark_to_drop()
ETH = struct.Struct("!6s6sH")
ARP = struct.Struct("!HHBBH6sI6sI")
IPV4 = struct.Struct("!BBHHHBBHII")
GRE = struct.Struct("!HH")
TCP = struct.Struct("!HHIIBBHHH")
MSS = struct.Struct("!HH")
TS = struct.Struct("!HHII")
UDP = struct.Struct("!HHHH")


def csum16(data):
    """Internet checksum (HashAlgorithm.csum16) of bytes."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def csum_replace(checksum, old_words, new_words):
    """RFC 1624 eq. 3, as the P4 actions compute it (two folds)."""
    s = (~checksum & 0xFFFF) + sum(~w & 0xFFFF for w in old_words) + sum(new_words)
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


class Ipv4:
    __slots__ = ("version", "ihl", "tos", "total_len", "ident", "flags", "frag",
                 "ttl", "proto", "csum", "src", "dst")

    @classmethod
    def unpack(cls, data, off):
        h = cls()
        vi, h.tos, h.total_len, h.ident, ff, h.ttl, h.proto, h.csum, h.src, h.dst = \
            IPV4.unpack_from(data, off)
        h.version, h.ihl, h.flags, h.frag = vi >> 4, vi & 15, ff >> 13, ff & 0x1FFF
        return h

    def pack(self):
        return IPV4.pack(self.version << 4 | self.ihl, self.tos, self.total_len, self.ident,
                         self.flags << 13 | self.frag, self.ttl, self.proto, self.csum,
                         self.src, self.dst)

    def header_checksum(self):
        saved, self.csum = self.csum, 0
        value = csum16(self.pack())
        self.csum = saved
        return value


class Parsed:
    """The headers of hlb_headers_t that are valid, as Python values, and the rest."""

    def __init__(self):
        self.eth = self.arp = self.ipv4 = self.gre = self.tcp = None
        self.mss = self.ts = self.udp = None
        self.tunnel_ipv4 = self.tunnel_gre = None
        self.payload = b""
        self.parser_error = False
        self.ip_options = 0
        self.l4_src = self.l4_dst = 0


def parse(frame):
    """HlbParser."""
    p = Parsed()
    n, off = len(frame), 0

    def have(k):
        if off + k > n:
            p.parser_error = True
            return False
        return True

    if not have(14):
        p.payload = frame
        return p
    p.eth = list(ETH.unpack_from(frame, 0))
    off = 14
    if p.eth[2] == 0x0806:
        if have(28):
            p.arp = list(ARP.unpack_from(frame, off))
            off += 28
    elif p.eth[2] == 0x0800 and have(20):
        ip = p.ipv4 = Ipv4.unpack(frame, off)
        off += 20
        whole = ip.ihl == 5 and not ip.flags & 1 and ip.frag == 0
        if ip.ihl != 5:
            p.ip_options = 1
        elif whole and ip.proto == 6 and have(20):
            p.tcp = list(TCP.unpack_from(frame, off))
            off += 20
            p.l4_src, p.l4_dst = p.tcp[0], p.tcp[1]
            doff = p.tcp[4] >> 4
            if doff == 8 and have(4):
                if struct.unpack_from("!I", frame, off)[0] == 0x0101080A and have(12):
                    p.ts = list(TS.unpack_from(frame, off))
                    off += 12
            elif doff > 8 and have(8):
                v = struct.unpack_from("!Q", frame, off)[0]
                if v & 0xFFFFFFFF00000000 == 0x0101080A00000000 and have(12):
                    p.ts = list(TS.unpack_from(frame, off))
                    off += 12
                elif v & 0xFFFF0000FFFFFFFF in (0x020400000402080A, 0x020400000101080A) \
                        and have(16):
                    p.mss = list(MSS.unpack_from(frame, off))
                    p.ts = list(TS.unpack_from(frame, off + 4))
                    off += 16
        elif whole and ip.proto == 17 and have(8):
            p.udp = list(UDP.unpack_from(frame, off))
            off += 8
            p.l4_src, p.l4_dst = p.udp[0], p.udp[1]
        elif whole and ip.proto == 47 and have(4):
            p.gre = list(GRE.unpack_from(frame, off))
            off += 4
    p.payload = frame[off:]
    return p


def deparse(p):
    """HlbDeparser."""
    out = [ETH.pack(*p.eth)]
    if p.arp:
        out.append(ARP.pack(*p.arp))
    if p.tunnel_ipv4:
        out.append(p.tunnel_ipv4.pack())
    if p.tunnel_gre:
        out.append(GRE.pack(*p.tunnel_gre))
    if p.ipv4:
        out.append(p.ipv4.pack())
    for h, st in ((p.gre, GRE), (p.tcp, TCP), (p.mss, MSS), (p.ts, TS), (p.udp, UDP)):
        if h:
            out.append(st.pack(*h))
    out.append(p.payload)
    return b"".join(out)


class Meta:
    __slots__ = ("drop", "drop_reason", "fwd_dst", "originated", "next_id", "service_id",
                 "is_service", "affinity", "encap", "has_dip", "tunnel_dst", "bucket",
                 "cookie_key", "owner_id", "cookie_hash", "ident")

    def __init__(self):
        for s in self.__slots__:
            setattr(self, s, 0)


class Result:
    """What one packet did: the frames sent (port, bytes) and, when dropped, why."""

    def __init__(self):
        self.outputs = []
        self.drop_reason = None
        self.events = []            # Cheetah events counted
        self.trace = []             # tables hit, for tests and debugging


class HlbPipeline:
    def __init__(self, state, profile):
        self.state = state
        self.profile = profile
        prog = p4src.parse_program(profile)
        self.c = prog.constants
        defines = set(prog.defines)
        self.with_cheetah = "WITH_CHEETAH" in defines
        self.with_stateful = "WITH_CHEETAH_STATEFUL" in defines
        self.partitions = prog.macros["CHEETAH_PARTITIONS"]
        self.index_bits = prog.macros["CHEETAH_INDEX_BITS"]
        self.t0 = time.monotonic()
        s = state
        self.t_arp = s.table("HlbIngress.arp.gateway_arp")
        self.t_service = s.table("HlbIngress.hmux.vip_service")
        self.t_service_any = s.table("HlbIngress.hmux.vip_service_any_port")
        self.t_whole = s.table("HlbIngress.hmux.vip_whole")
        self.t_dip = s.table("HlbIngress.hmux.dip_select")
        self.t_tunnel = s.table("HlbIngress.hmux_encap.tunnel_source")
        self.t_routes = s.table("HlbIngress.routing.routing_v4")
        self.t_next = s.table("HlbIngress.routing.next_hop")
        if self.with_cheetah:
            self.t_servers = s.table("HlbIngress.cheetah.all_servers")
            self.t_vip_servers = s.table("HlbIngress.cheetah.vip_servers")
            self.t_owners = s.table("HlbIngress.cheetah.owners")

    # -------------------------------------------------------------- helpers
    def _drop(self, meta, reason):
        meta.drop = 1
        meta.drop_reason = self.c[reason]

    def _hit(self, res, t, entry):
        if entry is not None and t.has_direct_counter:
            entry.packets += 1
            entry.bytes += self._len
        res.trace.append((t.info.preamble.name, entry is not None))
        return entry

    def _event(self, res, name):
        self.state.count("HlbIngress.cheetah.cheetah_events", self.c[name], self._len)
        res.events.append(name)

    # -------------------------------------------------------------- ingress
    def process(self, frame, ingress_port):
        """One packet through parser, verify, ingress, egress, compute, deparser."""
        res = Result()
        self._len = len(frame)
        p = parse(frame)
        checksum_error = bool(p.ipv4 and p.ipv4.ihl == 5 and p.ipv4.header_checksum() != p.ipv4.csum)
        meta = Meta()
        egress = DROP_PORT                             # mark_to_drop() first
        if p.parser_error:
            self._drop(meta, "DROP_PARSER_ERROR")
        elif p.arp:
            egress = self._gateway_arp(p, meta, res, ingress_port)
        elif p.ipv4 is None:
            self._drop(meta, "DROP_NOT_IPV4")
        elif p.ipv4.version != 4 or p.ipv4.ihl < 5 or checksum_error:
            self._drop(meta, "DROP_BAD_IPV4")
        else:
            meta.fwd_dst = p.ipv4.dst
            self._hmux_lookup(p, meta, res)
            if meta.is_service and not meta.drop:
                if self.with_cheetah and meta.affinity != self.c["AFFINITY_HASH"]:
                    self._cheetah(p, meta, res)
                if not meta.drop:
                    self._hmux_encap(p, meta, res)
            if not meta.drop:
                egress = self._routing(p, meta, res, egress)
        if meta.drop:
            egress = DROP_PORT
            self.state.count("HlbIngress.drops", meta.drop_reason, self._len)
            res.drop_reason = meta.drop_reason
        if egress == DROP_PORT:
            if res.drop_reason is None:
                res.drop_reason = -1                   # dropped without a counted reason
            return res
        self._compute_checksums(p)
        res.outputs.append((egress, deparse(p)))
        return res

    def _gateway_arp(self, p, meta, res, ingress_port):
        arp = p.arp
        e = None
        if arp[4] == 1:                                # request
            e = self._hit(res, self.t_arp, self.state.lookup_exact(self.t_arp, (arp[8],)))
        if e is None or e.action.name != "HlbIngress.arp.arp_reply":
            self._drop(meta, "DROP_NOT_IPV4")
            return DROP_PORT
        mac = e.action.params["mac"].to_bytes(6, "big")
        asked = arp[8]
        arp[4], arp[7], arp[5] = 2, arp[5], mac
        arp[8], arp[6] = arp[6], asked
        p.eth[0], p.eth[1] = p.eth[1], mac
        return ingress_port

    def _service_action(self, meta, action):
        prm = action.params
        meta.is_service = 1
        meta.service_id = prm["service_id"]
        meta.encap = prm["encap"]
        if action.name.endswith(".set_cookie_service"):
            meta.affinity = prm["affinity"]
            meta.cookie_key = prm["cookie_key"]
            meta.owner_id = prm["owner_id"]
        else:
            meta.affinity = self.c["AFFINITY_HASH"]

    def _hmux_lookup(self, p, meta, res):
        """HmuxLookup."""
        ip, st = p.ipv4, self.state
        for t, key in ((self.t_service, (ip.dst, ip.proto, p.l4_dst)),
                       (self.t_service_any, (ip.dst, ip.proto)),
                       (self.t_whole, (ip.dst,))):
            e = self._hit(res, t, st.lookup_exact(t, key))
            if e is not None:
                if e.action.name != "NoAction":
                    self._service_action(meta, e.action)
                break
        if not meta.is_service:
            return
        if p.ip_options or ip.flags & 1 or ip.frag:
            self._drop(meta, "DROP_VIP_UNBALANCED")
            return
        st.count("HlbIngress.hmux.service_counter", meta.service_id, self._len)
        dip_hash = cheetah_cookie.crc32c(self.tuple_bytes(p))      # hash(crc32_custom = CRC-32C)
        e = self._hit(res, self.t_dip, st.lookup_exact(self.t_dip, (meta.service_id,)))
        if e is not None:
            action = st.selector_action(self.t_dip, e, dip_hash)     # identity selector
            if action is not None:                     # set_dip
                meta.has_dip = 1
                meta.tunnel_dst = action.params["tunnel_dst"]
                meta.bucket = action.params["bucket"]

    @staticmethod
    def tuple_bytes(p):
        """The selector field list / HASH-SPEC.md section 1 bytes."""
        ip = p.ipv4
        return struct.pack("!IBHIH", ip.dst, ip.proto, p.l4_dst, ip.src, p.l4_src)

    def _hmux_encap(self, p, meta, res):
        """HmuxEncap."""
        if not meta.has_dip:
            self._drop(meta, "DROP_NO_BACKEND")
            return
        t = self.t_tunnel
        src = ttl = 0
        if t.default is not None and t.default.name.endswith(".set_tunnel_source"):
            src, ttl = t.default.params["src_addr"], t.default.params["ttl"]
        if ttl == 0:                        # tunnel_source not set: no outer header to give
            self._drop(meta, "DROP_NO_TUNNEL_SOURCE")
            return
        self.state.count("HlbIngress.hmux_encap.bucket_counter", meta.bucket, self._len)
        gre = meta.encap == self.c["ENCAP_GRE"]
        outer = Ipv4()
        outer.version, outer.ihl, outer.tos = 4, 5, p.ipv4.tos
        outer.total_len = (p.ipv4.total_len + 20 + (4 if gre else 0)) & 0xFFFF
        outer.ident, outer.flags, outer.frag, outer.ttl = 0, 0b010, 0, ttl
        outer.proto = 47 if gre else 4
        outer.csum, outer.src, outer.dst = 0, src, meta.tunnel_dst
        p.tunnel_ipv4 = outer
        if gre:
            p.tunnel_gre = [0, 0x0800]
        meta.fwd_dst = meta.tunnel_dst
        meta.originated = 1

    def _routing(self, p, meta, res, egress):
        """Routing."""
        st = self.state
        if not meta.originated and p.ipv4.ttl <= 1:
            self._drop(meta, "DROP_TTL")
            return egress
        e = self._hit(res, self.t_routes, st.lookup_lpm(self.t_routes, meta.fwd_dst))
        action = e.action if e is not None else self.t_routes.default
        if action.name.endswith(".drop_no_route"):
            self._drop(meta, "DROP_NO_ROUTE")
            return egress
        meta.next_id = action.params["next_id"]
        e = self._hit(res, self.t_next, st.lookup_exact(self.t_next, (meta.next_id,)))
        hop = None
        if e is not None:
            hop = st.selector_action(self.t_next, e, zlib.crc32(self.tuple_bytes(p)))
        if hop is None:
            self._drop(meta, "DROP_NO_ROUTE")
            return egress
        egress = hop.params["port"]
        p.eth[1] = hop.params["smac"].to_bytes(6, "big")
        p.eth[0] = hop.params["dmac"].to_bytes(6, "big")
        if not meta.originated:
            ip = p.ipv4
            ip.csum = csum_replace(ip.csum, [ip.ttl << 8 | ip.proto], [(ip.ttl - 1) << 8 | ip.proto])
            ip.ttl -= 1
        return egress

    def _compute_checksums(self, p):
        """HlbComputeChecksum."""
        if p.ipv4 and p.ipv4.ihl == 5:
            p.ipv4.csum = p.ipv4.header_checksum()
        if p.tunnel_ipv4:
            p.tunnel_ipv4.csum = p.tunnel_ipv4.header_checksum()

    # -------------------------------------------------------------- cheetah
    def _cheetah(self, p, meta, res):
        """Cheetah."""
        st, c = self.state, self.c
        if p.tcp is None or p.ts is None:
            self._event(res, "CHEETAH_FALLBACK")
            return
        key = meta.cookie_key.to_bytes(16, "big")
        meta.cookie_hash = cheetah_cookie.crc32c(key + self.tuple_bytes(p))
        flags = p.tcp[5]
        if flags & 0x02:
            self._event(res, "CHEETAH_SYN")
            if (self.with_stateful and meta.affinity == c["AFFINITY_CHEETAH_STATEFUL"]
                    and meta.has_dip and not flags & 0x10):
                self._stateful_pop(p, meta, res)
            return
        meta.ident = ((p.ts[3] >> 16) & 0x7FFF) ^ (meta.cookie_hash & 0x7FFF)
        if not meta.ident & 0x4000:
            server_id = meta.ident & 0x3FFF
            e = self._hit(res, self.t_vip_servers,
                          st.lookup_exact(self.t_vip_servers, (meta.service_id, server_id)))
            if e is not None and e.action.name.endswith(".accept_server"):
                meta.bucket = e.action.params["bucket"]
                s = self._hit(res, self.t_servers, st.lookup_exact(self.t_servers, (server_id,)))
                if s is not None and s.action.name.endswith(".set_server"):
                    meta.tunnel_dst = s.action.params["dip"]
                    meta.has_dip = 1
                    self._event(res, "CHEETAH_DECODED")
                    return
            self._drop(meta, "DROP_COOKIE_INVALID")
            self._event(res, "CHEETAH_INVALID")
            return
        owner, index = (meta.ident >> 10) & 0xF, meta.ident & 0x3FF
        if (self.with_stateful and meta.affinity == c["AFFINITY_CHEETAH_STATEFUL"]
                and owner == meta.owner_id):
            slot = (self._partition(meta) << self.index_bits) | index
            if st.register("HlbIngress.cheetah.conn_table_hash")[slot] == meta.cookie_hash:
                meta.tunnel_dst = st.register("HlbIngress.cheetah.conn_table_dip")[slot]
                st.register("HlbIngress.cheetah.conn_table_seen")[slot] = self._now()
                meta.has_dip = 1
                self._event(res, "CHEETAH_STATEFUL_HIT")
            else:
                self._drop(meta, "DROP_COOKIE_INVALID")
                self._event(res, "CHEETAH_STATEFUL_INVALID")
            return
        e = self._hit(res, self.t_owners, st.lookup_exact(self.t_owners, (meta.service_id, owner)))
        if e is not None and e.action.name.endswith(".set_owner"):
            meta.tunnel_dst = e.action.params["owner_addr"]
            meta.bucket = e.action.params["bucket"]
            meta.has_dip = 1
            self._event(res, "CHEETAH_TO_OWNER")
        else:
            self._drop(meta, "DROP_COOKIE_INVALID")
            self._event(res, "CHEETAH_INVALID")

    def _partition(self, meta):
        return (meta.cookie_hash >> 16) & (self.partitions - 1)

    def _now(self):
        """(ingress_global_timestamp >> 16) & 0xffffffff, the timestamp in microseconds."""
        return (int((time.monotonic() - self.t0) * 1e6) >> 16) & 0xFFFFFFFF

    def _stateful_pop(self, p, meta, res):
        st = self.state
        part = self._partition(meta)
        head_reg = st.register("HlbIngress.cheetah.conn_stack_head")
        head, tail = head_reg[part], st.register("HlbIngress.cheetah.conn_stack_tail")[part]
        if tail == head:
            self._event(res, "CHEETAH_STACK_EMPTY")
            return
        mask = (1 << self.index_bits) - 1
        index = st.register("HlbIngress.cheetah.conn_stack")[(part << self.index_bits) | (head & mask)]
        head_reg[part] = (head + 1) & 0xFFFFFFFF
        slot = (part << self.index_bits) | (index & mask)
        st.register("HlbIngress.cheetah.conn_table_hash")[slot] = meta.cookie_hash
        st.register("HlbIngress.cheetah.conn_table_dip")[slot] = meta.tunnel_dst
        st.register("HlbIngress.cheetah.conn_table_seen")[slot] = self._now()
        meta.ident = 0x4000 | (meta.owner_id << 10) | (index & mask)
        hint = 0xCEE7 << 16 | meta.ident
        old = p.ts[3]
        p.tcp[7] = csum_replace(p.tcp[7], [old >> 16, old & 0xFFFF], [hint >> 16, hint & 0xFFFF])
        p.ts[3] = hint
        self._event(res, "CHEETAH_STATEFUL_POP")
