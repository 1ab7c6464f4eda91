// Parser, deparser and checksum controls of the v1model pipelines.
#ifndef HLB_V1MODEL_PARSER_P4
#define HLB_V1MODEL_PARSER_P4

parser HlbParser(packet_in packet, out hlb_headers_t hdr, inout hlb_meta_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_ARP: parse_arp;
            default: accept;
        }
    }

    state parse_arp {
        packet.extract(hdr.arp);
        transition accept;
    }

    // Only a whole datagram without IPv4 options has its L4 header parsed: a fragment
    // carries no reliable ports (HASH-SPEC.md section 1), and options are rare enough
    // to be carried as payload (routed, never balanced).
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.flags[0:0], hdr.ipv4.frag_offset,
                          hdr.ipv4.protocol) {
            (IPV4_MIN_IHL, 0, 0, IP_PROTO_TCP): parse_tcp;
            (IPV4_MIN_IHL, 0, 0, IP_PROTO_UDP): parse_udp;
            (IPV4_MIN_IHL, 0, 0, IP_PROTO_GRE): parse_gre;
            (IPV4_MIN_IHL, _, _, _): accept;
            default: mark_ip_options;
        }
    }

    state mark_ip_options {
        meta.ip_options = 1;
        transition accept;
    }

    state parse_tcp {
        packet.extract(hdr.tcp);
        meta.l4_src_port = hdr.tcp.src_port;
        meta.l4_dst_port = hdr.tcp.dst_port;
        // Fewer than 12 option bytes (data offset < 8): no timestamp layout fits.
        transition select(hdr.tcp.data_offset) {
            8: parse_tcp_options_12;
            9: parse_tcp_options_16;
            10 &&& 0xe: parse_tcp_options_16;       // 10, 11
            12 &&& 0xc: parse_tcp_options_16;       // 12 .. 15
            default: accept;
        }
    }

    // The layouts of COOKIE-SPEC.md section 10; any other keeps the timestamp in the
    // payload and the packet takes the hash path.
    state parse_tcp_options_12 {
        transition select(packet.lookahead<bit<32>>()) {
            TCP_OPT_NOP_NOP_TS: parse_tcp_ts;
            default: accept;
        }
    }

    state parse_tcp_options_16 {
        transition select(packet.lookahead<bit<64>>()) {
            64w0x0101080a00000000 &&& 64w0xffffffff00000000: parse_tcp_ts;    // NOP, NOP, TS
            64w0x020400000402080a &&& 64w0xffff0000ffffffff: parse_tcp_mss;   // MSS, SACK-ok, TS
            64w0x020400000101080a &&& 64w0xffff0000ffffffff: parse_tcp_mss;   // MSS, NOP, NOP, TS
            default: accept;
        }
    }

    state parse_tcp_mss {
        packet.extract(hdr.tcp_mss);
        transition parse_tcp_ts;
    }

    state parse_tcp_ts {
        packet.extract(hdr.tcp_ts);
        transition accept;
    }

    state parse_udp {
        packet.extract(hdr.udp);
        meta.l4_src_port = hdr.udp.src_port;
        meta.l4_dst_port = hdr.udp.dst_port;
        transition accept;
    }

    state parse_gre {
        packet.extract(hdr.gre);
        transition accept;
    }
}

control HlbDeparser(packet_out packet, in hlb_headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.arp);
        packet.emit(hdr.tunnel_ipv4);
        packet.emit(hdr.tunnel_gre);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.gre);
        packet.emit(hdr.tcp);
        packet.emit(hdr.tcp_mss);
        packet.emit(hdr.tcp_ts);
        packet.emit(hdr.udp);
    }
}

control HlbVerifyChecksum(inout hlb_headers_t hdr, inout hlb_meta_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid() && hdr.ipv4.ihl == IPV4_MIN_IHL,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

// Headers with options keep the checksum the routing stage updated incrementally.
control HlbComputeChecksum(inout hlb_headers_t hdr, inout hlb_meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid() && hdr.ipv4.ihl == IPV4_MIN_IHL,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
        update_checksum(hdr.tunnel_ipv4.isValid(),
            { hdr.tunnel_ipv4.version, hdr.tunnel_ipv4.ihl, hdr.tunnel_ipv4.tos,
              hdr.tunnel_ipv4.total_len, hdr.tunnel_ipv4.identification, hdr.tunnel_ipv4.flags,
              hdr.tunnel_ipv4.frag_offset, hdr.tunnel_ipv4.ttl, hdr.tunnel_ipv4.protocol,
              hdr.tunnel_ipv4.src_addr, hdr.tunnel_ipv4.dst_addr },
            hdr.tunnel_ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

#endif
