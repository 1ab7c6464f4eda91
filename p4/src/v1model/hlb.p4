// hybridlb switch pipeline for v1model (BMv2 simple_switch): L3 fabric routing, the
// HMux, and with WITH_CHEETAH / WITH_CHEETAH_STATEFUL the Cheetah cookie decoder.
// Profiles (p4/profiles.json) fix the valid combinations of the WITH_* defines.
#include <core.p4>
#include <v1model.p4>

#include "../shared/define.p4"
#include "../shared/size.p4"
#include "../shared/header.p4"
#include "include/parser.p4"
#include "include/control/routing.p4"
#include "include/control/hmux.p4"
#if defined(WITH_CHEETAH_STATEFUL) && !defined(WITH_CHEETAH)
#error "WITH_CHEETAH_STATEFUL needs WITH_CHEETAH"
#endif
#ifdef WITH_CHEETAH
#include "include/control/cheetah.p4"
#endif

control HlbIngress(inout hlb_headers_t hdr, inout hlb_meta_t meta,
                   inout standard_metadata_t standard_metadata) {
    counter(DROP_REASONS, CounterType.packets) drops;
    GatewayArp() arp;
    HmuxLookup() hmux;
#ifdef WITH_CHEETAH
    Cheetah() cheetah;
#endif
    HmuxEncap() hmux_encap;
    Routing() routing;

    apply {
        // Drop unless a stage forwards: BMv2 runs no action when an action-selector
        // table misses or its group is empty, and would otherwise send the packet
        // out of port 0.
        mark_to_drop(standard_metadata);
        if (standard_metadata.parser_error != error.NoError) {
            meta.drop = 1;
            meta.drop_reason = DROP_PARSER_ERROR;
        } else if (hdr.arp.isValid()) {
            arp.apply(hdr, meta, standard_metadata);
        } else if (!hdr.ipv4.isValid()) {
            meta.drop = 1;
            meta.drop_reason = DROP_NOT_IPV4;
        } else if (hdr.ipv4.version != IPV4_VERSION || hdr.ipv4.ihl < IPV4_MIN_IHL
                   || standard_metadata.checksum_error == 1) {
            meta.drop = 1;
            meta.drop_reason = DROP_BAD_IPV4;
        } else {
            meta.fwd_dst = hdr.ipv4.dst_addr;
            hmux.apply(hdr, meta);
            if (meta.is_service == 1 && meta.drop == 0) {
#ifdef WITH_CHEETAH
                if (meta.affinity != AFFINITY_HASH) {
                    cheetah.apply(hdr, meta, standard_metadata);
                }
#endif
                if (meta.drop == 0) {
                    hmux_encap.apply(hdr, meta);
                }
            }
            if (meta.drop == 0) {
                routing.apply(hdr, meta, standard_metadata);
            }
        }
        if (meta.drop == 1) {
            mark_to_drop(standard_metadata);
            drops.count((bit<32>)meta.drop_reason);
        }
    }
}

control HlbEgress(inout hlb_headers_t hdr, inout hlb_meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply { }
}

V1Switch(HlbParser(), HlbVerifyChecksum(), HlbIngress(), HlbEgress(), HlbComputeChecksum(),
         HlbDeparser()) main;
