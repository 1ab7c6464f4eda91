// The HMux (Duet section 3.2): VIP service lookup, DIP selection by the crc32 hash of
// p4/HASH-SPEC.md over weight-unit members, and IP-in-IP or GRE encapsulation.
#ifndef HLB_V1MODEL_HMUX_P4
#define HLB_V1MODEL_HMUX_P4

// Finds the VIP service of a packet and picks a DIP by hash.  Lookups go from the
// most to the least specific: (VIP, protocol, port), then (VIP, protocol) for a
// service on every port (the SMux's port 0), then the VIP alone (every protocol).
control HmuxLookup(inout hlb_headers_t hdr, inout hlb_meta_t meta) {
    counter(HMUX_SERVICE_SIZE, CounterType.packets_and_bytes) service_counter;
    // The selector takes the hash as it is (identity): the CRC-32C of HASH-SPEC.md is
    // computed by hash() below, a named calculation BMv2 lets the controller set to
    // CRC-32C (set_crc32_parameters); an action selector's own crc32_custom cannot be
    // set at run time on BMv2 and would stay CRC-32.
    action_selector(HashAlgorithm.identity, HMUX_SELECTOR_SIZE, 32) dip_selector;

    action set_service(service_id_t service_id, bit<2> encap) {
        meta.is_service = 1;
        meta.service_id = service_id;
        meta.encap = encap;
        meta.affinity = AFFINITY_HASH;
    }

#ifdef WITH_CHEETAH
    // A Cheetah VIP: the cookie key, and this switch's owner id for stateful idents.
    action set_cookie_service(service_id_t service_id, bit<2> encap, bit<2> affinity,
                              cookie_key_t cookie_key, bit<4> owner_id) {
        meta.is_service = 1;
        meta.service_id = service_id;
        meta.encap = encap;
        meta.affinity = affinity;
        meta.cookie_key = cookie_key;
        meta.owner_id = owner_id;
    }
#endif

    table vip_service {
        key = {
            hdr.ipv4.dst_addr: exact @name("dst_addr");
            hdr.ipv4.protocol: exact @name("protocol");
            meta.l4_dst_port: exact @name("dst_port");
        }
        actions = {
            set_service;
#ifdef WITH_CHEETAH
            set_cookie_service;
#endif
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = HMUX_SERVICE_SIZE;
    }

    table vip_service_any_port {
        key = {
            hdr.ipv4.dst_addr: exact @name("dst_addr");
            hdr.ipv4.protocol: exact @name("protocol");
        }
        actions = {
            set_service;
#ifdef WITH_CHEETAH
            set_cookie_service;
#endif
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = HMUX_SERVICE_SIZE;
    }

    table vip_whole {
        key = {
            hdr.ipv4.dst_addr: exact @name("dst_addr");
        }
        actions = {
            set_service;
#ifdef WITH_CHEETAH
            set_cookie_service;
#endif
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = HMUX_SERVICE_SIZE;
    }

    // One member per weight unit of a DIP, in pool order (HASH-SPEC.md section 3);
    // a weight-0 DIP has no member.
    action set_dip(ipv4_addr_t tunnel_dst, bucket_id_t bucket) {
        meta.has_dip = 1;
        meta.tunnel_dst = tunnel_dst;
        meta.bucket = bucket;
    }

    // member = dip_hash % members.  On a miss or an empty group BMv2 runs no action (not
    // the default): has_dip stays 0 and the packet is dropped.
    table dip_select {
        key = {
            meta.service_id: exact @name("service_id");
            meta.dip_hash: selector;
        }
        actions = {
            set_dip;
        }
        implementation = dip_selector;
        size = HMUX_SERVICE_SIZE;
    }

    apply {
        if (!vip_service.apply().hit) {
            if (!vip_service_any_port.apply().hit) {
                vip_whole.apply();
            }
        }
        if (meta.is_service == 1) {
            if (meta.ip_options == 1 || hdr.ipv4.flags[0:0] == 1 || hdr.ipv4.frag_offset != 0) {
                meta.drop = 1;
                meta.drop_reason = DROP_VIP_UNBALANCED;
                return;
            }
            service_counter.count((bit<32>)meta.service_id);
            // HASH-SPEC.md: CRC-32C over the 5-tuple, in its section 1 order.
            hash(meta.dip_hash, HashAlgorithm.crc32_custom, 32w0,
                 { hdr.ipv4.dst_addr, hdr.ipv4.protocol, meta.l4_dst_port, hdr.ipv4.src_addr,
                   meta.l4_src_port },
                 64w0x100000000);
            dip_select.apply();
        }
    }
}

// Counts the chosen bucket and encapsulates towards the DIP (or the stateful owner).
// The outer header is the SMux's: version 4, IHL 5, the inner TOS, DF, ID 0, the
// switch's TTL and source, checksum by HlbComputeChecksum; the inner packet is not
// modified (no TTL decrement), as in Ananta and Duet.
control HmuxEncap(inout hlb_headers_t hdr, inout hlb_meta_t meta) {
    counter(HMUX_BUCKETS, CounterType.packets_and_bytes) bucket_counter;
    ipv4_addr_t tunnel_src = 0;
    bit<8> tunnel_ttl = 0;

    action set_tunnel_source(ipv4_addr_t src_addr, bit<8> ttl) {
        tunnel_src = src_addr;
        tunnel_ttl = ttl;
    }

    // Keyless: the fabric's base configuration sets the switch's tunnel source (its address and
    // the outer TTL) as the default action; unset, the TTL stays 0 and the packet is dropped.
    table tunnel_source {
        actions = {
            set_tunnel_source;
            @defaultonly NoAction;
        }
        default_action = NoAction();
        size = 1;
    }

    action push_outer_ipv4(bit<8> protocol, bit<16> overhead) {
        hdr.tunnel_ipv4.setValid();
        hdr.tunnel_ipv4.version = IPV4_VERSION;
        hdr.tunnel_ipv4.ihl = IPV4_MIN_IHL;
        hdr.tunnel_ipv4.tos = hdr.ipv4.tos;
        hdr.tunnel_ipv4.total_len = hdr.ipv4.total_len + overhead;
        hdr.tunnel_ipv4.identification = 0;
        hdr.tunnel_ipv4.flags = IPV4_FLAGS_DF;
        hdr.tunnel_ipv4.frag_offset = 0;
        hdr.tunnel_ipv4.ttl = tunnel_ttl;
        hdr.tunnel_ipv4.protocol = protocol;
        hdr.tunnel_ipv4.hdr_checksum = 0;
        hdr.tunnel_ipv4.src_addr = tunnel_src;
        hdr.tunnel_ipv4.dst_addr = meta.tunnel_dst;
    }

    apply {
        if (meta.has_dip == 0) {
            meta.drop = 1;
            meta.drop_reason = DROP_NO_BACKEND;
            return;
        }
        tunnel_source.apply();
        if (tunnel_ttl == 0) {
            meta.drop = 1;
            meta.drop_reason = DROP_NO_TUNNEL_SOURCE;
            return;
        }
        bucket_counter.count((bit<32>)meta.bucket);
        if (meta.encap == ENCAP_GRE) {
            push_outer_ipv4(IP_PROTO_GRE, IPV4_HDR_BYTES + GRE_HDR_BYTES);
            hdr.tunnel_gre.setValid();
            hdr.tunnel_gre.flags_version = 0;
            hdr.tunnel_gre.protocol = ETHERTYPE_IPV4;
        } else {
            push_outer_ipv4(IP_PROTO_IPIP, IPV4_HDR_BYTES);
        }
        meta.fwd_dst = meta.tunnel_dst;
        meta.originated = 1;
    }
}

#endif
