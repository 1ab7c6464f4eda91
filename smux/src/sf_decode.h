/* The stateful cookie decode of a lean run (dp_burst_body.h, the cookie run loop):
 * the entries a run's stateful cookies name, looked up all together before the run
 * forwards its segments one by one.  Each segment then costs the run what a
 * stateless one does (the server id's DIP), plus its share of a few vector
 * operations per 8 segments: the entries' loads in one gather, their check halves
 * compared with the 8 H's low halves, their server ids picked out.
 *
 * With AVX-512 (-march, as hlb_ck_hash_burst's lanes in cheetah.c) 8 segments to a
 * vector; otherwise the same outputs one segment at a time. */
#ifndef HLB_SF_DECODE_H
#define HLB_SF_DECODE_H

#include <stdint.h>
#include "stateful.h"
#if defined(__AVX512F__) && defined(__AVX512VL__)
#include <immintrin.h>
#endif

/* Bits 0..n-1 (n <= 64). */
static inline uint64_t hlb_sf_lanes(unsigned n)
{
    return n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
}

/* What the decode of n segments found: bit k of hit, segment k's entry holds its
 * connection (sel[k] is then its server id, pos[k] the entry's position); bit k of
 * stale, such a hit whose entry is due a refresh (hlb_sf_refresh). */
struct hlb_sf_hits {
    uint64_t hit, stale;
};

/* The entries of the n segments (n <= 64) whose idents (hlb_ck_idents) are in sel
 * and whose H in h, in table sf of owner id `owner` (HLB_SF_NOT_OWNER: none), the
 * partition from H as hlb_sf_part_of (crc: crc32c mode), the ages at tick against
 * sf->refresh_ticks.  A hit's sel[k] becomes the entry's server id; any other
 * sel[k] stays the ident: a stateful ident (bit 14) names no server of a pool
 * (hlb_ck_server_dip: -1), so the run hands such a segment (another owner's, a free
 * or reused index) to the general code, which counts it.  Nothing is written to
 * the table: the run refreshes the stale entries of the segments it forwarded
 * (hlb_sf_refresh_hits). */
static inline __attribute__((always_inline)) struct hlb_sf_hits
hlb_sf_decode_burst(const struct hlb_sf_table *sf, uint32_t owner, int crc, uint32_t tick,
                    const uint64_t *h, unsigned n, uint32_t *sel, uint32_t *pos)
{
    const uint64_t *ent = sf->ent;
    const uint32_t own_mask = HLB_COOKIE_STATEFUL | 15u << HLB_SF_OWNER_SHIFT;
    const uint32_t own = HLB_COOKIE_STATEFUL | owner << HLB_SF_OWNER_SHIFT;
    const uint32_t refresh = sf->refresh_ticks;
    struct hlb_sf_hits r = {0, 0};
#if defined(__AVX512F__) && defined(__AVX512VL__)
    const uint32_t part_shift = crc ? 16 : 32;      /* hlb_sf_part_of */
    const __m256i v_own_mask = _mm256_set1_epi32((int)own_mask), v_own = _mm256_set1_epi32((int)own);
    const __m256i v_index = _mm256_set1_epi32(HLB_SF_INDEX_MASK);
    const __m512i v_part = _mm512_set1_epi64(sf->part_mask), v_low = _mm512_set1_epi64(0xffffffffu);
    const __m512i v_server = _mm512_set1_epi64(HLB_SF_SERVER_MASK);
    const __m512i v_tick = _mm512_set1_epi64(tick), v_seen = _mm512_set1_epi64(HLB_SF_SEEN_MASK);
    const __m512i v_refresh = _mm512_set1_epi64(refresh);
    const __m128i v_part_shift = _mm_cvtsi32_si128((int)part_shift);
    const __m128i v_part_bits = _mm_cvtsi32_si128((int)sf->part_bits);
    for (unsigned k = 0; k < n; k += 8) {
        const __mmask8 lanes = (__mmask8)hlb_sf_lanes(n - k < 8 ? n - k : 8);
        const __m256i id = _mm256_maskz_loadu_epi32(lanes, sel + k);
        const __m512i hk = _mm512_maskz_loadu_epi64(lanes, h + k);
        /* this owner's stateful idents; their entries' positions (hlb_sf_pos) */
        const __mmask8 mine =
            _mm256_mask_cmpeq_epi32_mask(lanes, _mm256_and_si256(id, v_own_mask), v_own);
        const __m512i part = _mm512_and_si512(_mm512_srl_epi64(hk, v_part_shift), v_part);
        const __m512i p = _mm512_or_si512(
            _mm512_sll_epi64(_mm512_cvtepu32_epi64(_mm256_and_si256(id, v_index)), v_part_bits),
            part);
        const __m512i v = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), mine, p, ent, 8);
        /* hlb_sf_server_of: the check half is H's low half and the server id is not
         * 0 (a free entry, 0, holds no connection whatever H is) */
        const __m512i server = _mm512_and_si512(_mm512_srli_epi64(v, HLB_SF_SERVER_SHIFT), v_server);
        __mmask8 hit = _mm512_mask_cmpeq_epi64_mask(mine, _mm512_srli_epi64(v, 32),
                                                   _mm512_and_si512(hk, v_low));
        hit = _mm512_mask_test_epi64_mask(hit, server, server);
        /* hlb_sf_age(v, tick) >= refresh */
        const __mmask8 stale = _mm512_mask_cmpge_epu64_mask(
            hit, _mm512_and_si512(_mm512_sub_epi64(v_tick, v), v_seen), v_refresh);
        /* whole stores (the arrays hold 64 lanes): the loop reads sel[k] next, and a
         * masked store would not forward to those loads */
        _mm256_storeu_si256((__m256i *)(sel + k),
                            _mm256_mask_blend_epi32(hit, id, _mm512_cvtepi64_epi32(server)));
        _mm256_storeu_si256((__m256i *)(pos + k), _mm512_cvtepi64_epi32(p));
        r.hit |= (uint64_t)hit << k;
        r.stale |= (uint64_t)stale << k;
    }
#else
    for (unsigned k = 0; k < n; k++) {
        if ((sel[k] & own_mask) != own)
            continue;
        const uint32_t p = (uint32_t)hlb_sf_pos(sf->part_bits, hlb_sf_part_of(sf, h[k], crc),
                                                sel[k] & HLB_SF_INDEX_MASK);
        const uint64_t v = ent[p];
        const uint16_t server = hlb_sf_server_of(v, h[k]);
        if (server == 0)
            continue;
        sel[k] = server;
        pos[k] = p;
        r.hit |= (uint64_t)1 << k;
        r.stale |= (uint64_t)(hlb_sf_age(v, tick) >= refresh) << k;
    }
#endif
    return r;
}

/* After a run forwarded its segments 0..fwd-1 of n: counts their hits and refreshes
 * their stale entries (and that of segment fwd, if it was a hit: the general code
 * takes it next and would refresh it the same). */
static inline void hlb_sf_refresh_hits(struct hlb_sf_table *sf, struct hlb_sf_hits r,
                                       const uint32_t *pos, unsigned fwd, unsigned n,
                                       uint32_t tick)
{
    sf->st.hits += (uint64_t)__builtin_popcountll(r.hit & hlb_sf_lanes(fwd));
    for (uint64_t st = r.stale & hlb_sf_lanes(fwd < n ? fwd + 1 : n); st; st &= st - 1) {
        uint64_t *e = &sf->ent[pos[__builtin_ctzll(st)]];
        hlb_sf_refresh(sf->refresh_ticks, e, *e, tick);
    }
}

#endif
