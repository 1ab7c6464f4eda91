#include "ovs_select.h"

#include <stdlib.h>
#include <string.h>

/* hash_uint64(basis) (ovs_hash.c's hash_u64). */
static uint32_t basis_hash(uint64_t basis)
{
    return hlb_mix_finish(hlb_mix_add(hlb_mix_add(0, (uint32_t)basis), (uint32_t)(basis >> 32)), 8);
}

static void *aligned_zero(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 64) != 0)
        return NULL;
    return memset(p, 0, n ? n : 64);
}

typedef uint32_t vec __attribute__((vector_size(4 * HLB_OVS_LANES)));

static inline vec v_rotl(vec x, int k)
{
    return (x << k) | (x >> (32 - k));
}

static inline vec v_mix_word(vec x)
{
    return v_rotl(x * 0xcc9e2d51u, 15) * 0x1b873593u;
}

static inline vec v_fmix(vec h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    return h ^ (h >> 16);
}

/* hlb_ovs_field() in every lane. */
static inline vec v_field(vec h, vec mixed, uint32_t n)
{
    return v_fmix((v_rotl(h ^ mixed, 13) * 5 + 0xe6546b64u) ^ n);
}

void hlb_ovs_pick_burst(const struct hlb_vip_table *t, const struct hlb_service *s,
                        const uint32_t *src_ip, const uint16_t *src_port,
                        const uint16_t *dst_port, unsigned n, uint32_t *dip)
{
    const uint32_t *a = &t->ovs_a[s->ovs_first], *w = &t->ovs_w[s->ovs_first];
    const uint32_t *dips = &t->ovs_dip[s->ovs_first];
    const uint32_t live = s->ovs_live;
    for (unsigned p = 0; p < n; p += HLB_OVS_LANES) {
        /* Packets p.. in the lanes (the lanes past n hash zeros, and are not used). */
        union { vec v; uint32_t u[HLB_OVS_LANES]; } src = {.v = {0}}, sp = {.v = {0}},
                                                    dp = {.v = {0}}, pick;
        unsigned m = n - p < HLB_OVS_LANES ? n - p : HLB_OVS_LANES;
        for (unsigned k = 0; k < m; k++) {
            src.u[k] = src_ip[p + k];
            sp.u[k] = src_port[p + k];
            dp.u[k] = dst_port[p + k];
        }
        vec h = v_field((vec){0} + s->ovs_h0, v_mix_word(src.v), 4);
        h = v_field(h, (vec){0} + s->ovs_dst, 4);
        h = v_field(h, (vec){0} + s->ovs_proto, 1);
        h = v_field(h, v_mix_word(sp.v), 2);
        h = v_field(h, s->port ? (vec){0} + s->ovs_dport : v_mix_word(dp.v), 2);
        /* Every live bucket, in list order, for all the lanes: the best score so far
         * and its bucket (">=": a later bucket wins a tie, a score of 0 too). */
        const vec d = v_mix_word(h);
        vec best = {0}, best_i = {0};
        for (uint32_t b = 0; b < live; b++) {
            vec x = v_fmix((v_rotl(d ^ a[b], 13) * 5 + 0xe6546b64u) ^ 8);
            vec score = (x & 0xffff) * w[b];
            vec take = (vec)(score >= best);
            best = (score & take) | (best & ~take);
            best_i = (((vec){0} + b) & take) | (best_i & ~take);
        }
        pick.v = best_i;
        for (unsigned k = 0; k < m; k++)
            dip[p + k] = dips[pick.u[k]];
    }
}

int hlb_ovs_select_build(struct hlb_vip_table *t)
{
    uint32_t total = 0;
    for (uint32_t i = 0; i < t->n_services; i++) {
        const struct hlb_service *s = &t->services[i];
        if (s->selection != HLB_SEL_OVS)
            continue;
        uint32_t live = 0;
        for (uint32_t d = s->dip_first; d < s->dip_first + s->dip_count; d++)
            live += t->weights[d] != 0;
        total += (live + HLB_OVS_BLOCK - 1) / HLB_OVS_BLOCK * HLB_OVS_BLOCK;
    }
    t->ovs_a = aligned_zero(total * sizeof(uint32_t));
    t->ovs_w = aligned_zero(total * sizeof(uint32_t));
    t->ovs_dip = aligned_zero(total * sizeof(uint32_t));
    if (!t->ovs_a || !t->ovs_w || !t->ovs_dip)
        return -1;
    uint32_t at = 0;
    for (uint32_t i = 0; i < t->n_services; i++) {
        struct hlb_service *s = &t->services[i];
        if (s->selection != HLB_SEL_OVS)
            continue;
        /* The fields a packet of this service cannot change, mixed once (the words
         * hash_bytes() reads: the bytes as they lie, zero padded). */
        uint32_t proto = s->proto, dport = s->port;
        s->ovs_h0 = basis_hash(s->basis);
        s->ovs_dst = hlb_ovs_mix_word(s->vip);
        s->ovs_proto = hlb_ovs_mix_word(proto);
        s->ovs_dport = hlb_ovs_mix_word(dport);
        s->ovs_first = at;
        s->ovs_live = 0;
        /* Live buckets in list order (ties go to the later one). hash_int(id, h)'s
         * first step, mhash_add(id, 0), depends on the id alone. */
        for (uint32_t d = s->dip_first; d < s->dip_first + s->dip_count; d++) {
            if (t->weights[d] == 0)
                continue;
            t->ovs_a[at + s->ovs_live] = hlb_mix_add(t->bucket_ids[d], 0);
            t->ovs_w[at + s->ovs_live] = t->weights[d];
            t->ovs_dip[at + s->ovs_live] = d;
            s->ovs_live++;
        }
        at += (s->ovs_live + HLB_OVS_BLOCK - 1) / HLB_OVS_BLOCK * HLB_OVS_BLOCK;
    }
    return 0;
}
