/* Bit-exact replica of the bucket choice Open vSwitch 3.1 makes for an OpenFlow
 * select group with selection_method=hash,
 * fields(ip_src,ip_dst,nw_proto,tcp_src,tcp_dst) (or udp_src/udp_dst) and
 * selection_method_param=<basis>.
 *
 * The SMux uses it so that a software mux and an OVS-based mux holding the same
 * group pick the same DIP for the same connection (Duet: HMux/SMux agreement).
 * Verified against a live ovs-vswitchd (ofproto/trace) by
 * smux/tests/agent_ovs_agreement.py.
 *
 * Notes that matter to callers:
 *  - ports are hashed only for proto 6/17/132 (TCP/UDP/SCTP), i.e. for a group
 *    whose fields() list that protocol's port fields; other protocols hash
 *    (src, dst, proto) only;
 *  - buckets of weight 0 are never chosen (OVS treats them as not live);
 *  - the murmur variant of OVS's lib/hash.h is replicated: OVS builds compiled
 *    with SSE4.2 (-march with crc32) use a CRC32-based hash and pick differently.
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

/* Addition to the contract: OVS skips the L4 port fields of a non-first IP
 * fragment (nw_frag=later: their prerequisite fails), so such a packet hashes
 * over (src, dst, proto) only.  Ports in t are ignored. */
uint32_t hlb_ovs_select_hash_later_fragment(const struct hlb_5tuple *t, uint64_t basis);

#ifdef __cplusplus
}
#endif

#endif /* HLB_OVS_HASH_H */
