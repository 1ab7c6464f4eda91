/* Bit-exact replica of the bucket choice Open vSwitch 3.1 makes for an OpenFlow
 * select group with selection_method=hash,
 * fields(ip_src,ip_dst,nw_proto,tcp_src,tcp_dst) (or udp_src/udp_dst) and
 * selection_method_param=<basis>.
 *
 * The SMux uses it so that a software mux and an OVS-based mux holding the same
 * group pick the same DIP for the same connection (Duet: HMux/SMux agreement).
 * Verified against a live ovs-vswitchd by smux/agent/tests (ofproto/trace).
 */
#ifndef HLB_OVS_HASH_H
#define HLB_OVS_HASH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fields in NETWORK byte order, as they sit in the packet. */
struct hlb_5tuple {
    uint32_t src_ip;
    uint32_t dst_ip;
    uint16_t src_port;   /* 0 for non-TCP/UDP/SCTP */
    uint16_t dst_port;
    uint8_t  proto;
};

/* Flow hash OVS 3.1 computes for a select group with selection_method=hash and
 * fields(ip_src,ip_dst,nw_proto,tcp_src,tcp_dst) (or udp_*), with
 * selection_method_param = basis. */
uint32_t hlb_ovs_select_hash(const struct hlb_5tuple *t, uint64_t basis);

/* Bucket OVS picks among n live buckets given that hash: returns index 0..n-1, or -1 when
 * n == 0 or all weights are 0. bucket_ids are the OpenFlow bucket_id values, weights the
 * bucket weights, in the order the buckets are listed in the group. */
int hlb_ovs_select_bucket(uint32_t hash, const uint32_t *bucket_ids,
                          const uint16_t *weights, int n);

#ifdef __cplusplus
}
#endif

#endif /* HLB_OVS_HASH_H */
