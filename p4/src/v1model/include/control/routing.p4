// Basic L3 routing (LPM -> next id -> ECMP action selector -> port and MACs) and the
// gateway ARP responder, so the switch can sit in the fabric.  VIP routes are plain
// LPM entries: the /32 of a VIP towards its HMux switch beats the VIP aggregate
// towards the SMuxes (longest prefix wins).
#ifndef HLB_V1MODEL_ROUTING_P4
#define HLB_V1MODEL_ROUTING_P4

control Routing(inout hlb_headers_t hdr, inout hlb_meta_t meta,
                inout standard_metadata_t standard_metadata) {
    direct_counter(CounterType.packets_and_bytes) routing_v4_counter;
    action_selector(HashAlgorithm.crc32, ECMP_SELECTOR_SIZE, 32) ecmp_selector;
    bit<1> has_next_hop = 0;

    action set_next_id(next_id_t next_id) {
        meta.next_id = next_id;
    }

    action drop_no_route() {
        meta.drop = 1;
        meta.drop_reason = DROP_NO_ROUTE;
    }

    table routing_v4 {
        key = {
            meta.fwd_dst: lpm @name("dst_addr");
        }
        actions = {
            set_next_id;
            @defaultonly drop_no_route;
        }
        const default_action = drop_no_route();
        counters = routing_v4_counter;
        size = ROUTING_V4_SIZE;
    }

    action set_next_hop(port_num_t port, mac_addr_t smac, mac_addr_t dmac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
        has_next_hop = 1;
    }

    // An action selector: on a miss or an empty group BMv2 runs no action at all
    // (not the default), so the caller has already marked the packet to drop and
    // only set_next_hop forwards it.
    table next_hop {
        key = {
            meta.next_id: exact @name("next_id");
            hdr.ipv4.dst_addr: selector;
            hdr.ipv4.protocol: selector;
            meta.l4_dst_port: selector;
            hdr.ipv4.src_addr: selector;
            meta.l4_src_port: selector;
        }
        actions = {
            set_next_hop;
        }
        implementation = ecmp_selector;
        size = NEXT_SIZE;
    }

    // TTL - 1 with the header checksum updated incrementally (RFC 1624 eq. 3), so that
    // a header with options, which the checksum stage does not recompute, stays right.
    action decrement_ttl() {
        bit<32> sum = (bit<32>)(~hdr.ipv4.hdr_checksum)
                    + (bit<32>)(~(hdr.ipv4.ttl ++ hdr.ipv4.protocol))
                    + (bit<32>)((hdr.ipv4.ttl - 1) ++ hdr.ipv4.protocol);
        sum = (sum & 0xffff) + (sum >> 16);
        sum = (sum & 0xffff) + (sum >> 16);
        hdr.ipv4.hdr_checksum = ~sum[15:0];
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    apply {
        if (meta.originated == 0 && hdr.ipv4.ttl <= 1) {
            meta.drop = 1;
            meta.drop_reason = DROP_TTL;
            return;
        }
        if (routing_v4.apply().hit) {
            next_hop.apply();
            if (has_next_hop == 0) {
                meta.drop = 1;
                meta.drop_reason = DROP_NO_ROUTE;
                return;
            }
            if (meta.originated == 0) {
                decrement_ttl();
            }
        }
    }
}

// Answers ARP requests for the addresses the switch owns (the hosts' gateway).
control GatewayArp(inout hlb_headers_t hdr, inout hlb_meta_t meta,
                   inout standard_metadata_t standard_metadata) {
    action arp_reply(mac_addr_t mac) {
        hdr.arp.oper = ARP_OPER_REPLY;
        hdr.arp.target_hw_addr = hdr.arp.sender_hw_addr;
        hdr.arp.sender_hw_addr = mac;
        ipv4_addr_t asked = hdr.arp.target_proto_addr;
        hdr.arp.target_proto_addr = hdr.arp.sender_proto_addr;
        hdr.arp.sender_proto_addr = asked;
        hdr.ethernet.dst_addr = hdr.ethernet.src_addr;
        hdr.ethernet.src_addr = mac;
        standard_metadata.egress_spec = standard_metadata.ingress_port;
    }

    table gateway_arp {
        key = {
            hdr.arp.target_proto_addr: exact @name("target_addr");
        }
        actions = {
            arp_reply;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = GATEWAY_ARP_SIZE;
    }

    apply {
        if (hdr.arp.oper != ARP_OPER_REQUEST || !gateway_arp.apply().hit) {
            meta.drop = 1;
            meta.drop_reason = DROP_NOT_IPV4;
        }
    }
}

#endif
