/* The `ovs` selection precomputed at table load: the same bucket as the replica of
 * OVS 3.1's select group (hlb_ovs_select_hash + hlb_ovs_select_bucket, ovs_hash.c),
 * with the work that does not depend on the packet done once per service and per
 * bucket instead of per packet.
 *
 * OVS's flow hash chains one murmur step per field: hash_uint64(basis), then
 * hash_bytes() of ip_src, ip_dst, nw_proto, tp_src, tp_dst.  A step mixes its data
 * word (two multiplications and a rotation) before folding it into the running
 * hash, so for the fields a service fixes (basis, destination, protocol, and the
 * destination port unless the service is port 0) the mixed words are constants;
 * only the source address, the source port (and a port-0 service's destination
 * port) are mixed per packet.  Each bucket's score is
 *   (hash_int(bucket_id, flow_hash) & 0xffff) * weight,
 * where hash_int's first step depends on the bucket id alone (a per-bucket constant)
 * and its data word on the flow hash alone (mixed once per packet, not per bucket).
 * The live buckets (weight > 0) of a pool are stored side by side, padded to a block
 * of HLB_OVS_BLOCK, and scored a vector at a time; the best score
 * wins, a later bucket on ties (OVS's ">=").  A pool with a single live bucket needs
 * no hash at all.  Nothing here assumes anything of the bucket ids or the weights:
 * a pool whose weights are realised by repeated weight-1 buckets is the same code.
 */
#ifndef HLB_OVS_SELECT_H
#define HLB_OVS_SELECT_H

#include <stdint.h>
#include "hlb_murmur.h"
#include "vip_table.h"

/* Each pool's live buckets are padded to a block of HLB_OVS_BLOCK; the code works
 * on vectors of HLB_OVS_LANES 32-bit lanes, the widest the target has (a divisor of
 * the block, so every unit that includes this agrees on the layout). */
#define HLB_OVS_BLOCK 16
#if defined(__AVX512F__)
#define HLB_OVS_LANES 16
#elif defined(__AVX2__)
#define HLB_OVS_LANES 8
#else
#define HLB_OVS_LANES 4
#endif

/* The data word of a murmur step (OVS mhash_add's multiply-rotate-multiply). */
static inline uint32_t hlb_ovs_mix_word(uint32_t data)
{
    data *= 0xcc9e2d51u;
    data = hlb_rotl32(data, 15);
    return data * 0x1b873593u;
}

/* hash_bytes() of a field of n <= 4 bytes on top of h, its word already mixed:
 * hlb_mix_finish(hlb_mix_add(h, word), n). */
static inline uint32_t hlb_ovs_field(uint32_t h, uint32_t mixed, uint32_t n)
{
    h ^= mixed;
    h = hlb_rotl32(h, 13) * 5 + 0xe6546b64u;
    return hlb_mix_finish(h, n);
}

/* OVS's flow hash of a packet of service s (TCP or UDP: ports always hashed), from
 * its source address and ports as they lie in the packet (network order). */
static inline uint32_t hlb_ovs_flow_hash(const struct hlb_service *s, uint32_t src_ip,
                                         uint16_t src_port, uint16_t dst_port)
{
    uint32_t h = hlb_ovs_field(s->ovs_h0, hlb_ovs_mix_word(src_ip), 4);
    h = hlb_ovs_field(h, s->ovs_dst, 4);
    h = hlb_ovs_field(h, s->ovs_proto, 1);
    h = hlb_ovs_field(h, hlb_ovs_mix_word(src_port), 2);
    return hlb_ovs_field(h, s->port ? s->ovs_dport : hlb_ovs_mix_word(dst_port), 2);
}

typedef uint32_t hlb_ovs_vec __attribute__((vector_size(4 * HLB_OVS_LANES)));

/* The DIP (index into t->dips) OVS picks for flow hash h in s's pool, or -1 when no
 * bucket is live. */
static inline int hlb_ovs_pick(const struct hlb_vip_table *t, const struct hlb_service *s,
                               uint32_t h)
{
    uint32_t n = s->ovs_live;
    const uint32_t *dip = &t->ovs_dip[s->ovs_first];
    if (n <= 1)
        return n ? (int)dip[0] : -1;
    const hlb_ovs_vec *a = (const hlb_ovs_vec *)&t->ovs_a[s->ovs_first];
    const hlb_ovs_vec *w = (const hlb_ovs_vec *)&t->ovs_w[s->ovs_first];
    const uint32_t d = hlb_ovs_mix_word(h);
    uint32_t best = 0, best_i = 0;
    for (uint32_t b = 0; b * HLB_OVS_LANES < n; b++) {
        /* hash_int(bucket_id, h) for a block of buckets, then the scores. */
        hlb_ovs_vec x = a[b] ^ d;
        x = ((x << 13) | (x >> 19)) * 5 + 0xe6546b64u;
        x ^= 8;
        x ^= x >> 16;
        x *= 0x85ebca6bu;
        x ^= x >> 13;
        x *= 0xc2b2ae35u;
        x ^= x >> 16;
        union {
            hlb_ovs_vec v;
            uint32_t u[HLB_OVS_LANES];
        } score = {.v = (x & 0xffff) * w[b]};
        uint32_t m = n - b * HLB_OVS_LANES < HLB_OVS_LANES ? n - b * HLB_OVS_LANES : HLB_OVS_LANES;
        for (uint32_t i = 0; i < m; i++) {
            /* ">=": a later bucket wins a tie, as in OVS (a score of 0 too). */
            int take = score.u[i] >= best;
            best = take ? score.u[i] : best;
            best_i = take ? b * HLB_OVS_LANES + i : best_i;
        }
    }
    return (int)dip[best_i];
}

/* The DIPs (indices into t->dips) of n <= HLB_MAX_BURST packets of service s, from
 * their source addresses and ports (and destination ports, for a port-0 service) as
 * they lie in the packets: hlb_ovs_pick(hlb_ovs_flow_hash(...)) of each, computed
 * with the packets in vector lanes (the flow hashes side by side, then every bucket
 * scored for all of them at once).  s must have a live bucket (s->ovs_live > 0). */
void hlb_ovs_pick_burst(const struct hlb_vip_table *t, const struct hlb_service *s,
                        const uint32_t *src_ip, const uint16_t *src_port,
                        const uint16_t *dst_port, unsigned n, uint32_t *dip);

/* Fills the per-service constants and the live-bucket arrays of every ovs service of
 * t (its pools, bucket ids and weights set).  -1 when out of memory. */
int hlb_ovs_select_build(struct hlb_vip_table *t);

#endif
