/* The murmur3 steps of Open vSwitch's lib/hash.h as Debian builds it (no SSE4.2 CRC
 * variant), shared by the OVS select-group replicas (ovs_hash.c, ovs_dphash.c).
 * Written from a reading of those functions; no OVS code is copied. */
#ifndef HLB_MURMUR_H
#define HLB_MURMUR_H

#include <stdint.h>

static inline uint32_t hlb_rotl32(uint32_t x, int k)
{
    return (x << k) | (x >> (32 - k));
}

/* One murmur3 mixing step (OVS hash_add / mhash_add). */
static inline uint32_t hlb_mix_add(uint32_t hash, uint32_t data)
{
    data *= 0xcc9e2d51u;
    data = hlb_rotl32(data, 15);
    data *= 0x1b873593u;
    hash ^= data;
    hash = hlb_rotl32(hash, 13);
    return hash * 5 + 0xe6546b64u;
}

/* OVS hash_finish(hash, final): murmur3 fmix32 of hash ^ final. */
static inline uint32_t hlb_mix_finish(uint32_t hash, uint32_t final)
{
    hash ^= final;
    hash ^= hash >> 16;
    hash *= 0x85ebca6bu;
    hash ^= hash >> 13;
    hash *= 0xc2b2ae35u;
    hash ^= hash >> 16;
    return hash;
}

#endif
