/* Replica of Open vSwitch 3.1's default select-group choice (dp_hash method);
 * see include/hlb_ovs_dphash.h.  Written from a reading of OVS's
 * ofproto-dpif.c (group_setup_dp_hash_table), odp-execute.c (hash action),
 * lib/flow.c (flow_hash_symmetric_l3l4) and lib/hash.h; no OVS code is copied. */
#include "hlb_ovs_dphash.h"
#include "hlb_murmur.h"

uint32_t hlb_ovs_dphash_sym_l4(const struct hlb_5tuple *t)
{
    /* Fields are the raw network-order words, as OVS reads them from struct
     * flow; the basis (0) is both the seed and the finishing word. */
    uint32_t h = hlb_mix_add(0, t->src_ip ^ t->dst_ip);
    h = hlb_mix_add(h, t->proto);
    if (t->proto == 6 || t->proto == 132)
        h = hlb_mix_add(h, (uint16_t)(t->src_port ^ t->dst_port));
    return hlb_mix_finish(h, 0);
}

int hlb_ovs_dphash_slots(const uint16_t *weights, int n)
{
    uint64_t total = 0;
    uint32_t min_w = 0;
    for (int i = 0; i < n; i++) {
        total += weights[i];
        if (weights[i] && (!min_w || weights[i] < min_w))
            min_w = weights[i];
    }
    if (total == 0)
        return 0;
    uint64_t need = (total + min_w - 1) / min_w;   /* the smallest bucket gets >= 1 slot */
    uint64_t slots = 16;
    while (slots < need)
        slots *= 2;
    return slots > HLB_OVS_DPHASH_MAX_SLOTS ? -1 : (int)slots;
}

void hlb_ovs_dphash_fill(const uint16_t *weights, int n, int n_slots, uint32_t *map)
{
    /* Webster: each slot goes to the bucket with the largest weight / divisor
     * (divisors 1, 3, 5, ...), the first such bucket on ties.  OVS compares
     * doubles; with weights < 2^16 and divisors < 2^8 the quotients of two
     * different fractions differ by far more than a rounding error, so the
     * exact integer comparison below decides every case the same way. */
    uint16_t divisor[HLB_OVS_DPHASH_MAX_BUCKETS];   /* 1 + 2 * slots won: <= 129 */
    if (n > HLB_OVS_DPHASH_MAX_BUCKETS)
        n = HLB_OVS_DPHASH_MAX_BUCKETS;
    for (int i = 0; i < n; i++)
        divisor[i] = 1;
    for (int s = 0; s < n_slots; s++) {
        int win = 0;
        for (int i = 1; i < n; i++)
            if ((uint64_t)weights[i] * divisor[win] > (uint64_t)weights[win] * divisor[i])
                win = i;
        divisor[win] += 2;
        map[s] = (uint32_t)win;
    }
}
