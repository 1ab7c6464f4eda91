/* Replica of Open vSwitch 3.1's select-group bucket choice for
 * selection_method=hash (ofproto/ofproto-dpif-xlate.c:
 * xlate_hash_fields_select_group + group_best_live_bucket), with the
 * murmur-based hash of lib/hash.h / lib/hash.c that OVS uses when it is built
 * without SSE4.2 (Debian's x86-64 and arm64 builds; see smux/agent/README.md).
 *
 * Written from a reading of those functions; no OVS code is copied. */
#include "hlb_ovs_hash.h"
#include "hlb_murmur.h"

#include <string.h>

/* OVS hash_bytes() for n <= 4: the bytes as they sit in memory, read as a
 * host-order word, zero padded, then finished with the byte count. */
static inline uint32_t hash_field(const void *field, unsigned n, uint32_t basis)
{
    uint32_t word = 0;
    memcpy(&word, field, n);
    return hlb_mix_finish(hlb_mix_add(basis, word), n);
}

/* OVS hash_uint64(x) = hash_uint64_basis(x, 0). */
static inline uint32_t hash_u64(uint64_t x)
{
    return hlb_mix_finish(hlb_mix_add(hlb_mix_add(0, (uint32_t) x), (uint32_t) (x >> 32)), 8);
}

/* OVS hash_int(x, basis) = hash_2words(x, basis). */
static inline uint32_t hash_int_basis(uint32_t x, uint32_t basis)
{
    return hlb_mix_finish(hlb_mix_add(hlb_mix_add(x, 0), basis), 8);
}

static inline int proto_has_ports(uint8_t proto)
{
    return proto == 6 || proto == 17 || proto == 132;   /* TCP, UDP, SCTP */
}

static uint32_t select_hash(const struct hlb_5tuple *t, uint64_t basis, int with_ports)
{
    /* OVS walks the group's fields in meta-flow id order (nw_src, nw_dst,
     * nw_proto, tp_src, tp_dst) whatever order fields() lists them in, and
     * chains one hash_bytes() per field.  L4 port fields whose prerequisite
     * fails (another protocol, or a non-first fragment) are skipped, not
     * hashed as zero. */
    uint32_t h = hash_u64(basis);
    h = hash_field(&t->src_ip, 4, h);
    h = hash_field(&t->dst_ip, 4, h);
    h = hash_field(&t->proto, 1, h);
    if (with_ports && proto_has_ports(t->proto)) {
        h = hash_field(&t->src_port, 2, h);
        h = hash_field(&t->dst_port, 2, h);
    }
    return h;
}

uint32_t hlb_ovs_select_hash(const struct hlb_5tuple *t, uint64_t basis)
{
    return select_hash(t, basis, 1);
}

uint32_t hlb_ovs_select_hash_later_fragment(const struct hlb_5tuple *t, uint64_t basis)
{
    return select_hash(t, basis, 0);
}

int hlb_ovs_select_bucket(uint32_t hash, const uint32_t *bucket_ids,
                          const uint16_t *weights, int n)
{
    int best = -1;
    uint32_t best_score = 0;

    for (int i = 0; i < n; i++) {
        /* OVS 3.1 treats a select-group bucket of weight 0 as not live. */
        if (weights[i] == 0) {
            continue;
        }
        uint32_t score = (hash_int_basis(bucket_ids[i], hash) & 0xffff) * weights[i];
        /* ">=": a later bucket wins ties, as in OVS (a score of 0 too). */
        if (score >= best_score) {
            best = i;
            best_score = score;
        }
    }
    return best;
}
