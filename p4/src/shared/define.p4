// Constants and types shared by every hybridlb P4 program and target.
#ifndef HLB_DEFINE_P4
#define HLB_DEFINE_P4

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<16> l4_port_t;
typedef bit<9>  port_num_t;      // v1model port width
typedef bit<16> next_id_t;       // routing next hop (an ECMP group or one port)
typedef bit<16> service_id_t;    // one HMux VIP service (VIP, protocol, port)
typedef bit<16> bucket_id_t;     // per-DIP counter index of an HMux service
typedef bit<14> server_id_t;     // Cheetah server id, p4/COOKIE-SPEC.md section 4
typedef bit<16> cookie_pool_t;   // the set of server ids a Cheetah VIP accepts
typedef bit<128> cookie_key_t;   // per-VIP cookie key (COOKIE-SPEC.md section 8)

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_ARP  = 0x0806;
const bit<8>  IP_PROTO_IPIP  = 4;
const bit<8>  IP_PROTO_TCP   = 6;
const bit<8>  IP_PROTO_UDP   = 17;
const bit<8>  IP_PROTO_GRE   = 47;
const bit<16> ARP_OPER_REQUEST = 1;
const bit<16> ARP_OPER_REPLY   = 2;

const bit<8> TCP_FLAG_FIN = 0x01;
const bit<8> TCP_FLAG_SYN = 0x02;
const bit<8> TCP_FLAG_RST = 0x04;
const bit<8> TCP_FLAG_ACK = 0x10;

// The NOP, NOP, timestamp lead of COOKIE-SPEC.md section 10 (the parser's other
// layouts are 64-bit masks in parser.p4).
const bit<32> TCP_OPT_NOP_NOP_TS = 0x0101080a;   // NOP, NOP, kind 8 length 10

// Outer header of the HMux tunnels: the SMux's (smux/README.md, Encapsulate).
const bit<4>  IPV4_VERSION = 4;
const bit<4>  IPV4_MIN_IHL = 5;
const bit<16> IPV4_HDR_BYTES = 20;
const bit<16> GRE_HDR_BYTES = 4;
const bit<3>  IPV4_FLAGS_DF = 0b010;

// HMux service modes (the `mode` parameter of hmux.set_service).
const bit<2> AFFINITY_HASH = 0;             // crc32 selection only (p4/HASH-SPEC.md)
const bit<2> AFFINITY_CHEETAH = 1;          // stateless cookies
const bit<2> AFFINITY_CHEETAH_STATEFUL = 2; // this switch owns stateful idents
// Encapsulation of an HMux service (the `encap` parameter of hmux.set_service).
const bit<2> ENCAP_IPIP = 0;
const bit<2> ENCAP_GRE = 1;

// Cheetah cookie layout (COOKIE-SPEC.md sections 2, 4, 7).
const bit<15> COOKIE_STATEFUL_FLAG = 0x4000;
const bit<16> COOKIE_SYN_HINT_MAGIC = 0xcee7;

// Indexes of hlb_drops (the drop-reason counter) and cheetah_events.  The model
// (p4/model/pipeline_consts.py) reads them from here.
const bit<8> DROP_BAD_IPV4 = 0;        // version, IHL or header checksum wrong
const bit<8> DROP_TTL = 1;             // TTL 0 or 1 on a routed packet
const bit<8> DROP_NO_ROUTE = 2;        // routing miss, or an empty ECMP group
const bit<8> DROP_VIP_UNBALANCED = 3;  // fragment or IPv4 options to a VIP service
const bit<8> DROP_NO_BACKEND = 4;      // VIP service without a member (empty group)
const bit<8> DROP_COOKIE_INVALID = 5;  // Cheetah ident not valid for the VIP
const bit<8> DROP_NOT_IPV4 = 6;        // neither IPv4 nor an ARP request this switch answers
const bit<8> DROP_PARSER_ERROR = 7;    // truncated headers
const bit<8> DROP_NO_TUNNEL_SOURCE = 8; // VIP packet to encapsulate, tunnel_source not set (TTL 0)
const bit<32> DROP_REASONS = 9;

const bit<8> CHEETAH_DECODED = 0;        // stateless ident accepted
const bit<8> CHEETAH_INVALID = 1;        // stateless ident rejected (dropped)
const bit<8> CHEETAH_FALLBACK = 2;       // cookie VIP, no timestamp in a known layout: hash
const bit<8> CHEETAH_SYN = 3;            // SYN of a cookie VIP (picked by the selector)
const bit<8> CHEETAH_TO_OWNER = 4;       // stateful ident of another owner, forwarded
const bit<8> CHEETAH_STATEFUL_HIT = 5;   // stateful ident of this switch, entry checked
const bit<8> CHEETAH_STATEFUL_INVALID = 6; // stateful ident whose entry does not match
const bit<8> CHEETAH_STATEFUL_POP = 7;   // SYN given a ConnTable index (hint written)
const bit<8> CHEETAH_STACK_EMPTY = 8;    // SYN of a stateful VIP, no free index: stateless
const bit<32> CHEETAH_EVENTS = 9;

#endif
