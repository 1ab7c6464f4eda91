// Headers and metadata of the hybridlb pipelines.
#ifndef HLB_HEADER_P4
#define HLB_HEADER_P4

#include "define.p4"

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16> ether_type;
}

header arp_t {                  // Ethernet/IPv4 ARP
    bit<16> hw_type;
    bit<16> proto_type;
    bit<8> hw_addr_len;
    bit<8> proto_addr_len;
    bit<16> oper;
    mac_addr_t sender_hw_addr;
    ipv4_addr_t sender_proto_addr;
    mac_addr_t target_hw_addr;
    ipv4_addr_t target_proto_addr;
}

header ipv4_t {
    bit<4> version;
    bit<4> ihl;
    bit<8> tos;
    bit<16> total_len;
    bit<16> identification;
    bit<3> flags;
    bit<13> frag_offset;
    bit<8> ttl;
    bit<8> protocol;
    bit<16> hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

header gre_t {                  // RFC 2784 base header, no optional fields
    bit<16> flags_version;
    bit<16> protocol;
}

header tcp_t {
    l4_port_t src_port;
    l4_port_t dst_port;
    bit<32> seq_no;
    bit<32> ack_no;
    bit<4> data_offset;
    bit<4> reserved;
    bit<8> flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgent_ptr;
}

// The MSS option that leads the SYN layouts of COOKIE-SPEC.md section 10.
header tcp_opt_mss_t {
    bit<16> kind_len;
    bit<16> mss;
}

// A timestamp option with the two bytes before it (NOP,NOP or SACK-permitted).
header tcp_opt_ts_t {
    bit<16> lead;
    bit<16> kind_len;
    bit<32> tsval;
    bit<32> tsecr;
}

header udp_t {
    l4_port_t src_port;
    l4_port_t dst_port;
    bit<16> len;
    bit<16> checksum;
}

struct hlb_headers_t {
    ethernet_t ethernet;
    arp_t arp;
    ipv4_t tunnel_ipv4;         // outer header the HMux adds
    gre_t tunnel_gre;
    ipv4_t ipv4;                // the IPv4 header as received
    gre_t gre;                  // GRE of a received tunnel packet (routed on its outer header)
    tcp_t tcp;
    tcp_opt_mss_t tcp_mss;
    tcp_opt_ts_t tcp_ts;
    udp_t udp;
}

struct hlb_meta_t {
    l4_port_t l4_src_port;      // TCP/UDP ports, 0 for other protocols (HASH-SPEC.md section 1)
    l4_port_t l4_dst_port;
    bit<1> ip_options;          // IHL > 5: L4 not parsed
    bit<1> drop;                // a stage decided to drop; reason in drop_reason
    bit<8> drop_reason;
    ipv4_addr_t fwd_dst;        // the address routing looks up (outer destination once encapsulated)
    bit<1> originated;          // the packet was encapsulated here: no TTL decrement
    next_id_t next_id;
    // HMux service
    service_id_t service_id;
    bit<1> is_service;
    bit<2> affinity;
    bit<2> encap;
    bit<32> dip_hash;           // HASH-SPEC.md crc32 of the 5-tuple
    bit<1> has_dip;
    ipv4_addr_t tunnel_dst;
    bucket_id_t bucket;
    // Cheetah
    cookie_key_t cookie_key;
    cookie_pool_t cookie_pool;
    bit<4> owner_id;            // this switch's owner id for the VIP (stateful)
    bit<32> cookie_hash;        // H = CRC-32C(key || tuple)
    bit<15> ident;
    server_id_t server_id;
    bit<4> ident_owner;
    bit<10> ident_index;
    bit<32> conn_slot;
}

#endif
