package org.hybridlb.app.core.p4;

/**
 * Names and ids of the hybridlb P4 programs (profiles hlb_hmux, hlb_cheetah, hlb_cheetah_stateful), from their
 * P4Info (p4/p4info/*.p4info.txtpb). Written by p4/tools/p4info_gen.py: do not edit.
 */
public final class HlbP4Info {

    private HlbP4Info() {
    }

    public static final String PROFILE_HLB_HMUX = "hlb_hmux";
    public static final String PROFILE_HLB_CHEETAH = "hlb_cheetah";
    public static final String PROFILE_HLB_CHEETAH_STATEFUL = "hlb_cheetah_stateful";

    /** table. */
    public static final String ARP_GATEWAY_ARP = "HlbIngress.arp.gateway_arp";
    public static final int ARP_GATEWAY_ARP_ID = 0x02f7324a;
    /** match field 1, 32 bits. */
    public static final String ARP_GATEWAY_ARP_TARGET_ADDR = "target_addr";
    public static final int ARP_GATEWAY_ARP_TARGET_ADDR_ID = 1;
    public static final int ARP_GATEWAY_ARP_TARGET_ADDR_BITS = 32;
    /** table. */
    public static final String HMUX_VIP_SERVICE = "HlbIngress.hmux.vip_service";
    public static final int HMUX_VIP_SERVICE_ID = 0x024b4061;
    /** match field 1, 32 bits. */
    public static final String HMUX_VIP_SERVICE_DST_ADDR = "dst_addr";
    public static final int HMUX_VIP_SERVICE_DST_ADDR_ID = 1;
    public static final int HMUX_VIP_SERVICE_DST_ADDR_BITS = 32;
    /** match field 2, 8 bits. */
    public static final String HMUX_VIP_SERVICE_PROTOCOL = "protocol";
    public static final int HMUX_VIP_SERVICE_PROTOCOL_ID = 2;
    public static final int HMUX_VIP_SERVICE_PROTOCOL_BITS = 8;
    /** match field 3, 16 bits. */
    public static final String HMUX_VIP_SERVICE_DST_PORT = "dst_port";
    public static final int HMUX_VIP_SERVICE_DST_PORT_ID = 3;
    public static final int HMUX_VIP_SERVICE_DST_PORT_BITS = 16;
    /** table. */
    public static final String HMUX_VIP_SERVICE_ANY_PORT = "HlbIngress.hmux.vip_service_any_port";
    public static final int HMUX_VIP_SERVICE_ANY_PORT_ID = 0x02d545f5;
    /** match field 1, 32 bits. */
    public static final String HMUX_VIP_SERVICE_ANY_PORT_DST_ADDR = "dst_addr";
    public static final int HMUX_VIP_SERVICE_ANY_PORT_DST_ADDR_ID = 1;
    public static final int HMUX_VIP_SERVICE_ANY_PORT_DST_ADDR_BITS = 32;
    /** match field 2, 8 bits. */
    public static final String HMUX_VIP_SERVICE_ANY_PORT_PROTOCOL = "protocol";
    public static final int HMUX_VIP_SERVICE_ANY_PORT_PROTOCOL_ID = 2;
    public static final int HMUX_VIP_SERVICE_ANY_PORT_PROTOCOL_BITS = 8;
    /** table. */
    public static final String HMUX_VIP_WHOLE = "HlbIngress.hmux.vip_whole";
    public static final int HMUX_VIP_WHOLE_ID = 0x027da2d8;
    /** match field 1, 32 bits. */
    public static final String HMUX_VIP_WHOLE_DST_ADDR = "dst_addr";
    public static final int HMUX_VIP_WHOLE_DST_ADDR_ID = 1;
    public static final int HMUX_VIP_WHOLE_DST_ADDR_BITS = 32;
    /** table. */
    public static final String HMUX_DIP_SELECT = "HlbIngress.hmux.dip_select";
    public static final int HMUX_DIP_SELECT_ID = 0x026fb726;
    /** match field 1, 16 bits. */
    public static final String HMUX_DIP_SELECT_SERVICE_ID = "service_id";
    public static final int HMUX_DIP_SELECT_SERVICE_ID_ID = 1;
    public static final int HMUX_DIP_SELECT_SERVICE_ID_BITS = 16;
    /** table. */
    public static final String HMUX_ENCAP_TUNNEL_SOURCE = "HlbIngress.hmux_encap.tunnel_source";
    public static final int HMUX_ENCAP_TUNNEL_SOURCE_ID = 0x029ba7a7;
    /** table. */
    public static final String ROUTING_ROUTING_V4 = "HlbIngress.routing.routing_v4";
    public static final int ROUTING_ROUTING_V4_ID = 0x025ad4ff;
    /** match field 1, 32 bits. */
    public static final String ROUTING_ROUTING_V4_DST_ADDR = "dst_addr";
    public static final int ROUTING_ROUTING_V4_DST_ADDR_ID = 1;
    public static final int ROUTING_ROUTING_V4_DST_ADDR_BITS = 32;
    /** table. */
    public static final String ROUTING_NEXT_HOP = "HlbIngress.routing.next_hop";
    public static final int ROUTING_NEXT_HOP_ID = 0x0294cb55;
    /** match field 1, 16 bits. */
    public static final String ROUTING_NEXT_HOP_NEXT_ID = "next_id";
    public static final int ROUTING_NEXT_HOP_NEXT_ID_ID = 1;
    public static final int ROUTING_NEXT_HOP_NEXT_ID_BITS = 16;
    /** action. */
    public static final String ARP_ARP_REPLY = "HlbIngress.arp.arp_reply";
    public static final int ARP_ARP_REPLY_ID = 0x01b4da4d;
    /** param 1, 48 bits. */
    public static final String ARP_ARP_REPLY_MAC = "mac";
    public static final int ARP_ARP_REPLY_MAC_ID = 1;
    public static final int ARP_ARP_REPLY_MAC_BITS = 48;
    /** action. */
    public static final String NOACTION = "NoAction";
    public static final int NOACTION_ID = 0x01445b37;
    /** action. */
    public static final String HMUX_SET_SERVICE = "HlbIngress.hmux.set_service";
    public static final int HMUX_SET_SERVICE_ID = 0x010e1090;
    /** param 1, 16 bits. */
    public static final String HMUX_SET_SERVICE_SERVICE_ID = "service_id";
    public static final int HMUX_SET_SERVICE_SERVICE_ID_ID = 1;
    public static final int HMUX_SET_SERVICE_SERVICE_ID_BITS = 16;
    /** param 2, 2 bits. */
    public static final String HMUX_SET_SERVICE_ENCAP = "encap";
    public static final int HMUX_SET_SERVICE_ENCAP_ID = 2;
    public static final int HMUX_SET_SERVICE_ENCAP_BITS = 2;
    /** action. */
    public static final String HMUX_SET_DIP = "HlbIngress.hmux.set_dip";
    public static final int HMUX_SET_DIP_ID = 0x01e78912;
    /** param 1, 32 bits. */
    public static final String HMUX_SET_DIP_TUNNEL_DST = "tunnel_dst";
    public static final int HMUX_SET_DIP_TUNNEL_DST_ID = 1;
    public static final int HMUX_SET_DIP_TUNNEL_DST_BITS = 32;
    /** param 2, 16 bits. */
    public static final String HMUX_SET_DIP_BUCKET = "bucket";
    public static final int HMUX_SET_DIP_BUCKET_ID = 2;
    public static final int HMUX_SET_DIP_BUCKET_BITS = 16;
    /** action. */
    public static final String HMUX_ENCAP_PUSH_OUTER_IPV4 = "HlbIngress.hmux_encap.push_outer_ipv4";
    public static final int HMUX_ENCAP_PUSH_OUTER_IPV4_ID = 0x01f5902d;
    /** action. */
    public static final String HMUX_ENCAP_SET_TUNNEL_SOURCE = "HlbIngress.hmux_encap.set_tunnel_source";
    public static final int HMUX_ENCAP_SET_TUNNEL_SOURCE_ID = 0x016a5287;
    /** param 1, 32 bits. */
    public static final String HMUX_ENCAP_SET_TUNNEL_SOURCE_SRC_ADDR = "src_addr";
    public static final int HMUX_ENCAP_SET_TUNNEL_SOURCE_SRC_ADDR_ID = 1;
    public static final int HMUX_ENCAP_SET_TUNNEL_SOURCE_SRC_ADDR_BITS = 32;
    /** param 2, 8 bits. */
    public static final String HMUX_ENCAP_SET_TUNNEL_SOURCE_TTL = "ttl";
    public static final int HMUX_ENCAP_SET_TUNNEL_SOURCE_TTL_ID = 2;
    public static final int HMUX_ENCAP_SET_TUNNEL_SOURCE_TTL_BITS = 8;
    /** action. */
    public static final String ROUTING_DECREMENT_TTL = "HlbIngress.routing.decrement_ttl";
    public static final int ROUTING_DECREMENT_TTL_ID = 0x01d1d37a;
    /** action. */
    public static final String ROUTING_SET_NEXT_ID = "HlbIngress.routing.set_next_id";
    public static final int ROUTING_SET_NEXT_ID_ID = 0x01cfff72;
    /** param 1, 16 bits. */
    public static final String ROUTING_SET_NEXT_ID_NEXT_ID = "next_id";
    public static final int ROUTING_SET_NEXT_ID_NEXT_ID_ID = 1;
    public static final int ROUTING_SET_NEXT_ID_NEXT_ID_BITS = 16;
    /** action. */
    public static final String ROUTING_DROP_NO_ROUTE = "HlbIngress.routing.drop_no_route";
    public static final int ROUTING_DROP_NO_ROUTE_ID = 0x0156bc91;
    /** action. */
    public static final String ROUTING_SET_NEXT_HOP = "HlbIngress.routing.set_next_hop";
    public static final int ROUTING_SET_NEXT_HOP_ID = 0x01e5ed34;
    /** param 1, 9 bits. */
    public static final String ROUTING_SET_NEXT_HOP_PORT = "port";
    public static final int ROUTING_SET_NEXT_HOP_PORT_ID = 1;
    public static final int ROUTING_SET_NEXT_HOP_PORT_BITS = 9;
    /** param 2, 48 bits. */
    public static final String ROUTING_SET_NEXT_HOP_SMAC = "smac";
    public static final int ROUTING_SET_NEXT_HOP_SMAC_ID = 2;
    public static final int ROUTING_SET_NEXT_HOP_SMAC_BITS = 48;
    /** param 3, 48 bits. */
    public static final String ROUTING_SET_NEXT_HOP_DMAC = "dmac";
    public static final int ROUTING_SET_NEXT_HOP_DMAC_ID = 3;
    public static final int ROUTING_SET_NEXT_HOP_DMAC_BITS = 48;
    /** action profile. */
    public static final String HMUX_DIP_SELECTOR = "HlbIngress.hmux.dip_selector";
    public static final int HMUX_DIP_SELECTOR_ID = 0x11ac7765;
    /** action profile. */
    public static final String ROUTING_ECMP_SELECTOR = "HlbIngress.routing.ecmp_selector";
    public static final int ROUTING_ECMP_SELECTOR_ID = 0x1140084d;
    /** counter. */
    public static final String DROPS = "HlbIngress.drops";
    public static final int DROPS_ID = 0x12d9966e;
    /** counter. */
    public static final String HMUX_SERVICE_COUNTER = "HlbIngress.hmux.service_counter";
    public static final int HMUX_SERVICE_COUNTER_ID = 0x122f2412;
    /** counter. */
    public static final String HMUX_ENCAP_BUCKET_COUNTER = "HlbIngress.hmux_encap.bucket_counter";
    public static final int HMUX_ENCAP_BUCKET_COUNTER_ID = 0x129fa51d;
    /** direct counter. */
    public static final String ROUTING_ROUTING_V4_COUNTER = "HlbIngress.routing.routing_v4_counter";
    public static final int ROUTING_ROUTING_V4_COUNTER_ID = 0x135e65e9;
    /** table. */
    public static final String CHEETAH_ALL_SERVERS = "HlbIngress.cheetah.all_servers";
    public static final int CHEETAH_ALL_SERVERS_ID = 0x028aa95f;
    /** match field 1, 14 bits. */
    public static final String CHEETAH_ALL_SERVERS_SERVER_ID = "server_id";
    public static final int CHEETAH_ALL_SERVERS_SERVER_ID_ID = 1;
    public static final int CHEETAH_ALL_SERVERS_SERVER_ID_BITS = 14;
    /** table. */
    public static final String CHEETAH_VIP_SERVERS = "HlbIngress.cheetah.vip_servers";
    public static final int CHEETAH_VIP_SERVERS_ID = 0x020f4112;
    /** match field 1, 16 bits. */
    public static final String CHEETAH_VIP_SERVERS_SERVICE_ID = "service_id";
    public static final int CHEETAH_VIP_SERVERS_SERVICE_ID_ID = 1;
    public static final int CHEETAH_VIP_SERVERS_SERVICE_ID_BITS = 16;
    /** match field 2, 14 bits. */
    public static final String CHEETAH_VIP_SERVERS_SERVER_ID = "server_id";
    public static final int CHEETAH_VIP_SERVERS_SERVER_ID_ID = 2;
    public static final int CHEETAH_VIP_SERVERS_SERVER_ID_BITS = 14;
    /** table. */
    public static final String CHEETAH_OWNERS = "HlbIngress.cheetah.owners";
    public static final int CHEETAH_OWNERS_ID = 0x029a7351;
    /** match field 1, 16 bits. */
    public static final String CHEETAH_OWNERS_SERVICE_ID = "service_id";
    public static final int CHEETAH_OWNERS_SERVICE_ID_ID = 1;
    public static final int CHEETAH_OWNERS_SERVICE_ID_BITS = 16;
    /** match field 2, 4 bits. */
    public static final String CHEETAH_OWNERS_OWNER = "owner";
    public static final int CHEETAH_OWNERS_OWNER_ID = 2;
    public static final int CHEETAH_OWNERS_OWNER_BITS = 4;
    /** action. */
    public static final String HMUX_SET_COOKIE_SERVICE = "HlbIngress.hmux.set_cookie_service";
    public static final int HMUX_SET_COOKIE_SERVICE_ID = 0x017cf51c;
    /** param 1, 16 bits. */
    public static final String HMUX_SET_COOKIE_SERVICE_SERVICE_ID = "service_id";
    public static final int HMUX_SET_COOKIE_SERVICE_SERVICE_ID_ID = 1;
    public static final int HMUX_SET_COOKIE_SERVICE_SERVICE_ID_BITS = 16;
    /** param 2, 2 bits. */
    public static final String HMUX_SET_COOKIE_SERVICE_ENCAP = "encap";
    public static final int HMUX_SET_COOKIE_SERVICE_ENCAP_ID = 2;
    public static final int HMUX_SET_COOKIE_SERVICE_ENCAP_BITS = 2;
    /** param 3, 2 bits. */
    public static final String HMUX_SET_COOKIE_SERVICE_AFFINITY = "affinity";
    public static final int HMUX_SET_COOKIE_SERVICE_AFFINITY_ID = 3;
    public static final int HMUX_SET_COOKIE_SERVICE_AFFINITY_BITS = 2;
    /** param 4, 128 bits. */
    public static final String HMUX_SET_COOKIE_SERVICE_COOKIE_KEY = "cookie_key";
    public static final int HMUX_SET_COOKIE_SERVICE_COOKIE_KEY_ID = 4;
    public static final int HMUX_SET_COOKIE_SERVICE_COOKIE_KEY_BITS = 128;
    /** param 5, 4 bits. */
    public static final String HMUX_SET_COOKIE_SERVICE_OWNER_ID = "owner_id";
    public static final int HMUX_SET_COOKIE_SERVICE_OWNER_ID_ID = 5;
    public static final int HMUX_SET_COOKIE_SERVICE_OWNER_ID_BITS = 4;
    /** action. */
    public static final String CHEETAH_SET_SERVER = "HlbIngress.cheetah.set_server";
    public static final int CHEETAH_SET_SERVER_ID = 0x01f56945;
    /** param 1, 32 bits. */
    public static final String CHEETAH_SET_SERVER_DIP = "dip";
    public static final int CHEETAH_SET_SERVER_DIP_ID = 1;
    public static final int CHEETAH_SET_SERVER_DIP_BITS = 32;
    /** action. */
    public static final String CHEETAH_ACCEPT_SERVER = "HlbIngress.cheetah.accept_server";
    public static final int CHEETAH_ACCEPT_SERVER_ID = 0x0155eff5;
    /** param 1, 16 bits. */
    public static final String CHEETAH_ACCEPT_SERVER_BUCKET = "bucket";
    public static final int CHEETAH_ACCEPT_SERVER_BUCKET_ID = 1;
    public static final int CHEETAH_ACCEPT_SERVER_BUCKET_BITS = 16;
    /** action. */
    public static final String CHEETAH_SET_OWNER = "HlbIngress.cheetah.set_owner";
    public static final int CHEETAH_SET_OWNER_ID = 0x014785f4;
    /** param 1, 32 bits. */
    public static final String CHEETAH_SET_OWNER_OWNER_ADDR = "owner_addr";
    public static final int CHEETAH_SET_OWNER_OWNER_ADDR_ID = 1;
    public static final int CHEETAH_SET_OWNER_OWNER_ADDR_BITS = 32;
    /** param 2, 16 bits. */
    public static final String CHEETAH_SET_OWNER_BUCKET = "bucket";
    public static final int CHEETAH_SET_OWNER_BUCKET_ID = 2;
    public static final int CHEETAH_SET_OWNER_BUCKET_BITS = 16;
    /** counter. */
    public static final String CHEETAH_CHEETAH_EVENTS = "HlbIngress.cheetah.cheetah_events";
    public static final int CHEETAH_CHEETAH_EVENTS_ID = 0x1224fb74;
    /** action. */
    public static final String CHEETAH_REWRITE_TSECR = "HlbIngress.cheetah.rewrite_tsecr";
    public static final int CHEETAH_REWRITE_TSECR_ID = 0x01dd8850;
    /** register. */
    public static final String CHEETAH_CONN_TABLE_HASH = "HlbIngress.cheetah.conn_table_hash";
    public static final int CHEETAH_CONN_TABLE_HASH_ID = 0x16da09cb;
    /** register. */
    public static final String CHEETAH_CONN_TABLE_DIP = "HlbIngress.cheetah.conn_table_dip";
    public static final int CHEETAH_CONN_TABLE_DIP_ID = 0x163dd4fa;
    /** register. */
    public static final String CHEETAH_CONN_TABLE_SEEN = "HlbIngress.cheetah.conn_table_seen";
    public static final int CHEETAH_CONN_TABLE_SEEN_ID = 0x16ff1801;
    /** register. */
    public static final String CHEETAH_CONN_STACK = "HlbIngress.cheetah.conn_stack";
    public static final int CHEETAH_CONN_STACK_ID = 0x16ddbe05;
    /** register. */
    public static final String CHEETAH_CONN_STACK_HEAD = "HlbIngress.cheetah.conn_stack_head";
    public static final int CHEETAH_CONN_STACK_HEAD_ID = 0x16973714;
    /** register. */
    public static final String CHEETAH_CONN_STACK_TAIL = "HlbIngress.cheetah.conn_stack_tail";
    public static final int CHEETAH_CONN_STACK_TAIL_ID = 0x160da0ef;
    public static final long ETHERTYPE_IPV4 = 2048L;
    public static final long ETHERTYPE_ARP = 2054L;
    public static final long IP_PROTO_IPIP = 4L;
    public static final long IP_PROTO_TCP = 6L;
    public static final long IP_PROTO_UDP = 17L;
    public static final long IP_PROTO_GRE = 47L;
    public static final long ARP_OPER_REQUEST = 1L;
    public static final long ARP_OPER_REPLY = 2L;
    public static final long TCP_FLAG_FIN = 1L;
    public static final long TCP_FLAG_SYN = 2L;
    public static final long TCP_FLAG_RST = 4L;
    public static final long TCP_FLAG_ACK = 16L;
    public static final long TCP_OPT_NOP_NOP_TS = 16844810L;
    public static final long IPV4_VERSION = 4L;
    public static final long IPV4_MIN_IHL = 5L;
    public static final long IPV4_HDR_BYTES = 20L;
    public static final long GRE_HDR_BYTES = 4L;
    public static final long IPV4_FLAGS_DF = 2L;
    public static final long AFFINITY_HASH = 0L;
    public static final long AFFINITY_CHEETAH = 1L;
    public static final long AFFINITY_CHEETAH_STATEFUL = 2L;
    public static final long ENCAP_IPIP = 0L;
    public static final long ENCAP_GRE = 1L;
    public static final long COOKIE_STATEFUL_FLAG = 16384L;
    public static final long COOKIE_SYN_HINT_MAGIC = 52967L;
    public static final long DROP_BAD_IPV4 = 0L;
    public static final long DROP_TTL = 1L;
    public static final long DROP_NO_ROUTE = 2L;
    public static final long DROP_VIP_UNBALANCED = 3L;
    public static final long DROP_NO_BACKEND = 4L;
    public static final long DROP_COOKIE_INVALID = 5L;
    public static final long DROP_NOT_IPV4 = 6L;
    public static final long DROP_PARSER_ERROR = 7L;
    public static final long DROP_NO_TUNNEL_SOURCE = 8L;
    public static final long DROP_REASONS = 9L;
    public static final long CHEETAH_DECODED = 0L;
    public static final long CHEETAH_INVALID = 1L;
    public static final long CHEETAH_FALLBACK = 2L;
    public static final long CHEETAH_SYN = 3L;
    public static final long CHEETAH_TO_OWNER = 4L;
    public static final long CHEETAH_STATEFUL_HIT = 5L;
    public static final long CHEETAH_STATEFUL_INVALID = 6L;
    public static final long CHEETAH_STATEFUL_POP = 7L;
    public static final long CHEETAH_STACK_EMPTY = 8L;
    public static final long CHEETAH_EVENTS = 9L;
    public static final long ROUTING_V4_SIZE = 4096L;
    public static final long NEXT_SIZE = 1024L;
    public static final long ECMP_SELECTOR_SIZE = 4096L;
    public static final long GATEWAY_ARP_SIZE = 64L;
    public static final long HMUX_SERVICE_SIZE = 4096L;
    public static final long HMUX_SELECTOR_SIZE = 16384L;
    public static final long HMUX_BUCKETS = 16384L;
    public static final long CHEETAH_SERVERS_SIZE = 16384L;
    public static final long CHEETAH_POOL_SERVERS_SIZE = 16384L;
    public static final long CHEETAH_OWNERS_SIZE = 256L;
    public static final long CHEETAH_PARTITIONS = 4L;
    public static final long CHEETAH_INDEX_BITS = 10L;
    public static final long CHEETAH_CONN_ENTRIES = 4096L;
}
