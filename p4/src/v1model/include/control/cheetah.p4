// Cheetah cookies on the HMux (p4/COOKIE-SPEC.md; Cheetah NSDI 2020 section 4 and
// App. C, ToN 2021 section IV-C).  Decode only: the host agent on the DIP host writes
// the cookie, and the switch never rewrites a TSecr except for the stateful SYN hint.
//
// The cookie hash is COOKIE-SPEC's crc32c mode, H = CRC-32C(key || tuple): a switch
// has no keyed PRF (see the aimability warning in COOKIE-SPEC.md section 5).
#ifndef HLB_V1MODEL_CHEETAH_P4
#define HLB_V1MODEL_CHEETAH_P4

control Cheetah(inout hlb_headers_t hdr, inout hlb_meta_t meta,
                in standard_metadata_t standard_metadata) {
    counter(CHEETAH_EVENTS, CounterType.packets) cheetah_events;

    // AllServers (the papers' table): server id -> DIP, one entry per DIP host.
    action set_server(ipv4_addr_t dip) {
        meta.tunnel_dst = dip;
    }

    table all_servers {
        key = {
            meta.server_id: exact @name("server_id");
        }
        actions = {
            set_server;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = CHEETAH_SERVERS_SIZE;
    }

    // VIPToServers: the server ids a service accepts (those in its pool now or while
    // a connection may still carry them), and the bucket counter of each.
    action accept_server(bucket_id_t bucket) {
        meta.bucket = bucket;
    }

    table vip_servers {
        key = {
            meta.service_id: exact @name("service_id");
            meta.server_id: exact @name("server_id");
        }
        actions = {
            accept_server;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = CHEETAH_POOL_SERVERS_SIZE;
    }

    // The stateful muxes owning a service's stateful idents (COOKIE-SPEC.md section 7).
    action set_owner(ipv4_addr_t owner_addr, bucket_id_t bucket) {
        meta.tunnel_dst = owner_addr;
        meta.bucket = bucket;
    }

    table owners {
        key = {
            meta.service_id: exact @name("service_id");
            meta.ident_owner: exact @name("owner");
        }
        actions = {
            set_owner;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = CHEETAH_OWNERS_SIZE;
    }

#ifdef WITH_CHEETAH_STATEFUL
    // ConnTable: H and DIP per connection, partition-major (slot = partition << 10 |
    // index), and when it was last seen (ingress timestamp >> 16, about 65 ms units)
    // for the controller's idle sweep.
    register<bit<32>>(CHEETAH_CONN_ENTRIES) conn_table_hash;
    register<ipv4_addr_t>(CHEETAH_CONN_ENTRIES) conn_table_dip;
    register<bit<32>>(CHEETAH_CONN_ENTRIES) conn_table_seen;
    // ConnStack: the free indexes of each partition.  A SYN pops in the data plane;
    // under DSR only the controller learns that a connection ended (from the host
    // agent), so it pushes.  Two writers cannot share one top-of-stack register
    // without a race, so each side owns a counter: pops (head, pipeline) and pushes
    // (tail, controller: it writes conn_stack[p << 10 | tail % 1024] first, then tail).
    // Free indexes of p = tail[p] - head[p].
    register<bit<16>>(CHEETAH_CONN_ENTRIES) conn_stack;
    register<bit<32>>(CHEETAH_PARTITIONS) conn_stack_head;
    register<bit<32>>(CHEETAH_PARTITIONS) conn_stack_tail;
#endif

    // RFC 1624 eq. 3 over the two 16-bit words of TSecr.
    action rewrite_tsecr(bit<32> tsecr) {
        bit<32> sum = (bit<32>)(~hdr.tcp.checksum)
                    + (bit<32>)(~hdr.tcp_ts.tsecr[31:16]) + (bit<32>)(~hdr.tcp_ts.tsecr[15:0])
                    + (bit<32>)tsecr[31:16] + (bit<32>)tsecr[15:0];
        sum = (sum & 0xffff) + (sum >> 16);
        sum = (sum & 0xffff) + (sum >> 16);
        hdr.tcp.checksum = ~sum[15:0];
        hdr.tcp_ts.tsecr = tsecr;
    }

    apply {
        if (!hdr.tcp.isValid() || !hdr.tcp_ts.isValid()) {
            cheetah_events.count((bit<32>)CHEETAH_FALLBACK);   // the selector's DIP stands
            return;
        }
        // COOKIE-SPEC.md section 5, crc32c mode; the same hash call on BMv2 needs
        // set_crc32_parameters like the selector (p4/README.md).
        hash(meta.cookie_hash, HashAlgorithm.crc32_custom, 32w0,
             { meta.cookie_key, hdr.ipv4.dst_addr, hdr.ipv4.protocol, meta.l4_dst_port,
               hdr.ipv4.src_addr, meta.l4_src_port },
             64w0x100000000);
        if ((hdr.tcp.flags & TCP_FLAG_SYN) != 0) {
            cheetah_events.count((bit<32>)CHEETAH_SYN);
#ifdef WITH_CHEETAH_STATEFUL
            if (meta.affinity == AFFINITY_CHEETAH_STATEFUL && meta.has_dip == 1
                    && (hdr.tcp.flags & TCP_FLAG_ACK) == 0) {
                bit<32> partition = (meta.cookie_hash >> 16) & (CHEETAH_PARTITIONS - 1);
                bit<32> head;
                bit<32> tail;
                conn_stack_head.read(head, partition);
                conn_stack_tail.read(tail, partition);
                if (tail == head) {
                    cheetah_events.count((bit<32>)CHEETAH_STACK_EMPTY);   // the host uses its server id
                    return;
                }
                bit<16> index;
                conn_stack.read(index, (partition << CHEETAH_INDEX_BITS)
                                       | (head & ((1 << CHEETAH_INDEX_BITS) - 1)));
                conn_stack_head.write(partition, head + 1);
                meta.conn_slot = (partition << CHEETAH_INDEX_BITS) | (bit<32>)index[9:0];
                conn_table_hash.write(meta.conn_slot, meta.cookie_hash);
                conn_table_dip.write(meta.conn_slot, meta.tunnel_dst);
                conn_table_seen.write(meta.conn_slot,
                                      (bit<32>)(standard_metadata.ingress_global_timestamp >> 16));
                meta.ident = COOKIE_STATEFUL_FLAG | ((bit<15>)meta.owner_id << 10)
                             | (bit<15>)index[9:0];
                rewrite_tsecr(COOKIE_SYN_HINT_MAGIC ++ 1w0 ++ meta.ident);
                cheetah_events.count((bit<32>)CHEETAH_STATEFUL_POP);
            }
#endif
            return;
        }
        meta.ident = hdr.tcp_ts.tsecr[30:16] ^ meta.cookie_hash[14:0];
        if (meta.ident[14:14] == 0) {
            meta.server_id = meta.ident[13:0];
            if (vip_servers.apply().hit) {
                if (all_servers.apply().hit) {
                    meta.has_dip = 1;
                    cheetah_events.count((bit<32>)CHEETAH_DECODED);
                    return;
                }
            }
            meta.drop = 1;
            meta.drop_reason = DROP_COOKIE_INVALID;
            cheetah_events.count((bit<32>)CHEETAH_INVALID);
            return;
        }
        meta.ident_owner = meta.ident[13:10];
        meta.ident_index = meta.ident[9:0];
#ifdef WITH_CHEETAH_STATEFUL
        if (meta.affinity == AFFINITY_CHEETAH_STATEFUL && meta.ident_owner == meta.owner_id) {
            bit<32> partition = (meta.cookie_hash >> 16) & (CHEETAH_PARTITIONS - 1);
            meta.conn_slot = (partition << CHEETAH_INDEX_BITS) | (bit<32>)meta.ident_index;
            bit<32> stored_hash;
            conn_table_hash.read(stored_hash, meta.conn_slot);
            if (stored_hash == meta.cookie_hash) {
                conn_table_dip.read(meta.tunnel_dst, meta.conn_slot);
                conn_table_seen.write(meta.conn_slot,
                                      (bit<32>)(standard_metadata.ingress_global_timestamp >> 16));
                meta.has_dip = 1;
                cheetah_events.count((bit<32>)CHEETAH_STATEFUL_HIT);
            } else {
                meta.drop = 1;
                meta.drop_reason = DROP_COOKIE_INVALID;
                cheetah_events.count((bit<32>)CHEETAH_STATEFUL_INVALID);
            }
            return;
        }
#endif
        if (owners.apply().hit) {
            meta.has_dip = 1;
            cheetah_events.count((bit<32>)CHEETAH_TO_OWNER);
        } else {
            meta.drop = 1;
            meta.drop_reason = DROP_COOKIE_INVALID;
            cheetah_events.count((bit<32>)CHEETAH_INVALID);
        }
    }
}

#endif
