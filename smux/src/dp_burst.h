/* Internal to the packet core: the per-packet steps the burst function is made of,
 * inline, so that the burst body (dp_burst_body.h) can be compiled both over
 * struct hlb_pkt (datapath.c: tests, fuzzers) and directly over DPDK mbufs
 * (io_loop.c) from the same source.  Rare cases (ARP, ICMP replies) are ordinary
 * functions in datapath.c working on a struct hlb_pkt. */
#ifndef HLB_DP_BURST_H
#define HLB_DP_BURST_H

#include <string.h>
#ifndef __SSE4_1__
#error "the packet core needs SSE4.1 and SSE4.2 (-march=corei7 or newer)"
#endif
#include <smmintrin.h>

#include "cheetah.h"
#include "datapath.h"
#include "hlb_pkt.h"
#include "hlb_ovs_dphash.h"
#include "ovs_select.h"
#include "pins.h"
#include "sf_decode.h"
#include "sf_owners.h"

_Static_assert(HLB_MAX_BURST <= 64, "a run's stateful hits are a 64-bit mask (sf_decode.h)");

/* dip of a frame sent elsewhere than to a DIP of its pool: to the owner SMux of its
 * stateful cookie (two tiers, IP-in-IP), or by a flow pin (the service's encap). */
#define HLB_DIP_FORWARD (-1)
#define HLB_DIP_PINNED  (-2)

#define HLB_LIKELY(x) __builtin_expect(!!(x), 1)
#define HLB_UNLIKELY(x) __builtin_expect(!!(x), 0)

static inline void hlb_dp_drop(struct hlb_worker *w, enum hlb_drop_reason r)
{
    w->st.drops[r]++;
}

/* Cold paths (datapath.c).  Each sets *verdict; on HLB_V_TX, p->data, p->len and
 * p->out_port describe the reply built in place. */
void hlb_dp_arp(struct hlb_worker *w, struct hlb_pkt *p, uint8_t *verdict);
void hlb_dp_frag_needed(struct hlb_worker *w, struct hlb_pkt *p, const struct hlb_parsed *pp,
                        uint32_t overhead, uint8_t *verdict);
void hlb_dp_to_self(struct hlb_worker *w, struct hlb_pkt *p, const struct hlb_parsed *pp,
                    uint8_t *verdict);

/* An outer IP total length in network order, as a register value (a 16-bit swap
 * is compiled into a store and a MOVBE load from the stack on some targets). */
static inline uint32_t hlb_tot_be(uint32_t tot)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap32(tot) >> 16;
#else
    return tot;
#endif
}

/* Index in t->cum of the member whose cumulative-weight interval holds slot
 * (hlb_weighted_pick_m without its checks: the caller has a non-zero total). */
static inline __attribute__((always_inline)) int
pick_slot(const uint32_t *cum, int n, uint32_t slot)
{
#if defined(__SSE4_1__) && defined(__POPCNT__)
    if (n <= 8) {
        /* Count cum[i] <= slot over 8 lanes (max(cum, slot) == slot), keep the n
         * lanes of this pool (the table allocates 8 entries of slack after cum[]). */
        __m128i sl = _mm_set1_epi32((int)slot);
        __m128i a = _mm_loadu_si128((const __m128i *)cum);
        __m128i b = _mm_loadu_si128((const __m128i *)(cum + 4));
        unsigned bits = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(
                            _mm_cmpeq_epi32(_mm_max_epu32(a, sl), sl))) |
                        (unsigned)_mm_movemask_ps(_mm_castsi128_ps(
                            _mm_cmpeq_epi32(_mm_max_epu32(b, sl), sl))) << 4;
        return __builtin_popcount(bits & ((1u << n) - 1));
    }
#endif
    if (n <= 16) {
        int idx = 0;                   /* branch-free: random hashes, no mispredictions */
        for (int i = 0; i < n; i++)
            idx += cum[i] <= slot;
        return idx;
    }
    int lo = 0, len = n;
    while (len > 1) {
        int half = len / 2;
        lo = cum[lo + half - 1] <= slot ? lo + half : lo;
        len -= half;
    }
    return lo;
}

/* The tuple must belong to s (dst, proto and, unless s->port is 0, dst port equal to
 * the service's): the crc32 hash then goes on from the register the service's fixed
 * fields leave (s->crc_fixed).  Equal to hlb_crc32_5tuple() of the tuple. */
static inline __attribute__((always_inline)) int
select_dip(const struct hlb_vip_table *t, const struct hlb_service *s,
           const struct hlb_5tuple *tuple)
{
    if (s->selection == HLB_SEL_CRC32) {
        if (s->weight_total == 0)      /* empty pool or all weights 0 */
            return -1;
        uint32_t crc = s->port == 0 ? hlb_crc32c_u16(s->crc_fixed, tuple->dst_port)
                                    : s->crc_fixed;
        uint32_t h = hlb_crc32_finish(crc, tuple->src_ip, tuple->src_port);
        uint32_t slot = hlb_fastmod(h, s->weight_mod_m, s->weight_total);
        if (HLB_LIKELY(s->slot_first != HLB_NO_SLOTS))
            return (int)t->slots[s->slot_first + slot].dip;
        return (int)s->dip_first + pick_slot(&t->cum[s->dip_first], (int)s->dip_count, slot);
    }
    if (s->selection == HLB_SEL_OVS_DPHASH)   /* slot map from vip_table.c */
        return s->slot_first == HLB_NO_SLOTS ? -1 :
               (int)t->slots[s->slot_first + (hlb_ovs_dphash_sym_l4(tuple) & s->dphash_mask)].dip;
    return hlb_ovs_pick(t, s, hlb_ovs_flow_hash(s, tuple->src_ip, tuple->src_port,
                                                 tuple->dst_port));
}

/* The DIP of lower reported load among pool entries a and b (a on a tie). */
static inline uint32_t lower_load(const struct hlb_vip_table *t, uint32_t a, uint32_t b)
{
    return __atomic_load_n(&t->dip_load[b], __ATOMIC_RELAXED) <
           __atomic_load_n(&t->dip_load[a], __ATOMIC_RELAXED) ? b : a;
}

/* A live (weight > 0) entry of s's pool from entry k on, wrapping (the pool has
 * one: weight_total > 0). */
static inline uint32_t live_from(const struct hlb_vip_table *t, const struct hlb_service *s,
                                 uint32_t k)
{
    while (t->weights[s->dip_first + k] == 0)
        k = k + 1 < s->dip_count ? k + 1 : 0;
    return s->dip_first + k;
}

static inline uint64_t worker_rand(struct hlb_worker *w)   /* xorshift64 */
{
    uint64_t x = w->rng ? w->rng : 0x9e3779b97f4a7c15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return w->rng = x;
}

/* A cheetah service's SYN (with a timestamp option): its DIP by the service's
 * mechanism, or -1 (no live DIP).  Round robin takes the pool's live entries in
 * turn (a DIP of w WCMP units w times a round), weighted round robin walks the
 * cumulative weights interleaved (hlb_wrr_stride: a DIP of weight w takes w SYNs a
 * round, spread over it), AWRR the same over
 * the weights the loads set (balance.h); p2c takes the less loaded of two live
 * entries drawn at random, least-loaded the least loaded live entry (ties: the
 * first from a rotating start).  Each worker keeps its own position and random
 * state, so nothing is written by two workers. */
/* The next interleaved weighted round-robin position after p (< total). */
static inline uint32_t wrr_next(uint32_t p, uint32_t stride, uint32_t total)
{
    uint32_t n = p + stride;
    return n >= total ? n - total : n;
}

/* Round robin: the next entry of weight > 0 of a pool of n entries (weights w, one
 * of them at least > 0: weight_total is not 0) from position *pos, which moves past
 * it. */
static inline uint32_t rr_live_next(const uint16_t *w, uint32_t n, uint32_t *pos)
{
    uint32_t k, p = *pos;
    do {
        k = p < n ? p : 0;
        p = k + 1;
    } while (w[k] == 0);
    *pos = p;
    return k;
}

static inline int cheetah_syn_dip(struct hlb_worker *w, struct hlb_vip_table *t,
                                  const struct hlb_service *s, const struct hlb_5tuple *tuple)
{
    if (s->mechanism == HLB_MECH_HASH)
        return select_dip(t, s, tuple);
    if (s->weight_total == 0)
        return -1;
    uint32_t *pos = &hlb_rr_next(t, w->id)[s - t->services];
    switch (s->mechanism) {
    case HLB_MECH_WRR: {
        uint32_t p = *pos < s->weight_total ? *pos : 0;
        *pos = wrr_next(p, s->wrr_stride, s->weight_total);
        return (int)s->dip_first + pick_slot(&t->cum[s->dip_first], (int)s->dip_count, p);
    }
    case HLB_MECH_AWRR: {
        uint32_t i = (uint32_t)(s - t->services);
        uint8_t sel = __atomic_load_n(&t->awrr_sel[i], __ATOMIC_ACQUIRE);
        uint32_t total = __atomic_load_n(&t->awrr_total[2 * i + sel], __ATOMIC_RELAXED);
        if (total == 0)
            return -1;
        uint32_t p = *pos < total ? *pos : 0;
        *pos = wrr_next(p, __atomic_load_n(&t->awrr_stride[2 * i + sel], __ATOMIC_RELAXED), total);
        int k = pick_slot(&t->awrr_cum[sel][s->dip_first], (int)s->dip_count, p);
        /* (a report racing this read can leave p past the last entry) */
        return (int)s->dip_first + (k < (int)s->dip_count ? k : (int)s->dip_count - 1);
    }
    case HLB_MECH_P2C: {
        uint64_t r = worker_rand(w);
        uint32_t a = (uint32_t)(((r & 0xffffffffu) * s->dip_count) >> 32);
        uint32_t b = (uint32_t)(((r >> 32) * s->dip_count) >> 32);
        return (int)lower_load(t, live_from(t, s, a), live_from(t, s, b));
    }
    case HLB_MECH_LEAST_LOADED: {
        uint32_t start = *pos < s->dip_count ? *pos : 0;
        *pos = start + 1;
        uint32_t best = live_from(t, s, start);
        for (uint32_t n = 1; n < s->dip_count; n++) {
            uint32_t k = start + n < s->dip_count ? start + n : start + n - s->dip_count;
            if (t->weights[s->dip_first + k])
                best = lower_load(t, best, s->dip_first + k);
        }
        return (int)best;
    }
    default:                           /* HLB_MECH_RR */
        return (int)(s->dip_first + rr_live_next(&t->weights[s->dip_first], s->dip_count, pos));
    }
}

/* CK_FORWARD: the segment belongs to another (owner) SMux, *owner is its tunnel end. */
enum cheetah_verdict { CK_FALLBACK, CK_PLACED, CK_BAD, CK_FORWARD };

/* Writes TSecr (host order) into the timestamp option at ts (TSval's first byte)
 * of a TCP segment, the TCP checksum adjusted (RFC 1624). */
static inline void ck_write_tsecr(uint8_t *tcp, uint8_t *ts, uint32_t tsecr)
{
    uint32_t old, neu = __builtin_bswap32(tsecr);
    uint16_t csum;
    memcpy(&old, ts + 4, 4);
    memcpy(&csum, tcp + 16, 2);
    uint32_t sum = (uint16_t)~csum + (uint32_t)(uint16_t)~old + (uint32_t)(uint16_t)~(old >> 16) +
                   (neu & 0xffff) + (neu >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    csum = (uint16_t)~sum;
    memcpy(ts + 4, &neu, 4);
    memcpy(tcp + 16, &csum, 2);
}

/* A cheetah SYN this SMux places on dip (-1: the pool has no live DIP), counted.
 * sf: a stateful VIP with owners, h the SYN's H; an owner then gives it an index
 * and writes the hint (COOKIE-SPEC §7) into the TSecr of its timestamp option (ts:
 * TSval's first byte). */
static inline __attribute__((always_inline)) void
cheetah_syn_placed(struct hlb_worker *w, const struct hlb_vip_table *t,
                   const struct hlb_service *s, uint8_t *tcp, uint8_t *ts, int sf, uint64_t h,
                   int dip, uint32_t now)
{
    w->st.ck_syns[s->mechanism]++;
    if (!sf) {
        w->st.ck_stateless_syns += s->affinity == HLB_AFF_CHEETAH_STATEFUL;
        return;
    }
    int idx = -1;
    /* (the SYN id's table: the lowest id this SMux holds, sf_owners.h) */
    struct hlb_sf_table *tab = s->sf_self != HLB_SF_NOT_OWNER ? hlb_sf_of(w, s->sf_self) : NULL;
    if (dip >= 0 && tab && tab->hints_held) {
        tab->st.held_syns++;            /* the agents are re-reporting: stateless */
    } else if (dip >= 0 && tab) {
        uint32_t p = hlb_sf_part_of(tab, h, s->ck_mode == HLB_COOKIE_CRC32C);
        idx = hlb_sf_insert(tab, p, t->server_ids[dip], h, now);
        if (idx >= 0)
            ck_write_tsecr(tcp, ts, HLB_COOKIE_HINT_MAGIC << 16 |
                                        hlb_sf_ident(s->sf_self, (uint32_t)idx));
    }
    if (dip >= 0 && idx < 0)
        w->st.ck_stateless_syns++;
}

/* A cheetah-stateful SYN: placed by the mechanism; an owner gives it an index and
 * writes the hint (COOKIE-SPEC §7) into its TSecr; a first-tier SMux forwards it to
 * the owner the tuple's H picks (a frame already forwarded to us is never sent on:
 * placed stateless). */
static inline int cheetah_sf_syn(struct hlb_worker *w, struct hlb_vip_table *t,
                                 const struct hlb_service *s, uint8_t *tcp, uint8_t *ts,
                                 const struct hlb_parsed *pp, int decap, uint32_t now, int *dip,
                                 const struct hlb_dip **owner)
{
    uint64_t h = hlb_ck_hash(s, pp->t.src_ip, pp->t.src_port, pp->t.dst_port);
    if (s->sf_self == HLB_SF_NOT_OWNER && !decap) {
        *owner = &t->sf_owners[s->sf_owner_first + (uint32_t)((h >> 48) % s->sf_n_owners)];
        return CK_FORWARD;
    }
    *dip = cheetah_syn_dip(w, t, s, &pp->t);
    cheetah_syn_placed(w, t, s, tcp, ts, 1, h, *dip, now);
    return CK_PLACED;
}

/* A cheetah-stateful segment whose cookie names stateful ident `ident`: placed by
 * the entry of the owner id it names when this SMux holds that id (the id's table,
 * sf_owners.h), forwarded to the id's owner otherwise (never twice: a decapsulated
 * frame naming an id not held is a bad cookie). */
static inline int cheetah_sf_segment(struct hlb_worker *w, const struct hlb_vip_table *t,
                                     const struct hlb_service *s, const struct hlb_parsed *pp,
                                     uint32_t ident, int decap, uint32_t now, int *dip,
                                     const struct hlb_dip **owner)
{
    uint32_t o = (ident >> HLB_SF_OWNER_SHIFT) & 15u;
    if (!(s->sf_held >> o & 1)) {
        if (decap || o >= s->sf_n_owners) {
            w->sf->st.foreign_bad += decap;
            hlb_dp_drop(w, HLB_DROP_BAD_COOKIE);
            return CK_BAD;
        }
        *owner = &t->sf_owners[s->sf_owner_first + o];
        return CK_FORWARD;
    }
    uint64_t h = hlb_ck_hash(s, pp->t.src_ip, pp->t.src_port, pp->t.dst_port);
    struct hlb_sf_table *sf = hlb_sf_of(w, o);
    uint32_t p = hlb_sf_part_of(sf, h, s->ck_mode == HLB_COOKIE_CRC32C);
    uint16_t server = hlb_sf_lookup(sf, p, ident & HLB_SF_INDEX_MASK, h, now);
    *dip = server ? hlb_ck_server_dip(t, s, server) : -1;
    if (*dip < 0) {
        hlb_dp_drop(w, HLB_DROP_BAD_COOKIE);
        return CK_BAD;
    }
    w->st.ck_decoded++;
    return CK_PLACED;
}

/* The general code's step for a TCP frame of a cheetah service: CK_PLACED with *dip
 * (its cookie decoded, or a SYN placed by the mechanism; *dip may be -1 for a SYN
 * to a pool with no live DIP), CK_FORWARD with *owner (cheetah-stateful: another
 * SMux owns it), CK_BAD (counted: a bad_cookie drop), or CK_FALLBACK (no timestamp
 * option: the hash + connection-table path, counted).  decap: the frame came
 * IP-in-IP from another SMux. */
static inline int cheetah_step(struct hlb_worker *w, struct hlb_vip_table *t,
                               const struct hlb_service *s, uint8_t *d,
                               const struct hlb_parsed *pp, int decap, uint32_t now, int *dip,
                               const struct hlb_dip **owner)
{
    uint8_t *tcp = d + pp->l3_off + pp->ip_hlen;
    int off;
    if (pp->ip_tot_len < pp->ip_hlen + 20u ||
        (off = hlb_ck_ts_off(tcp, pp->ip_tot_len - pp->ip_hlen)) < 0) {
        w->st.ck_fallback++;
        return CK_FALLBACK;
    }
    uint32_t tsecr;
    memcpy(&tsecr, tcp + off + 4, 4);
    tsecr = __builtin_bswap32(tsecr);
    int stateful = s->affinity == HLB_AFF_CHEETAH_STATEFUL && w->sf;
    if (pp->tcp_flags & HLB_TCP_SYN) {
        if (stateful && s->sf_n_owners)
            return cheetah_sf_syn(w, t, s, tcp, tcp + off, pp, decap, now, dip, owner);
        *dip = cheetah_syn_dip(w, t, s, &pp->t);
        cheetah_syn_placed(w, t, s, tcp, tcp + off, 0, 0, *dip, now);
        return CK_PLACED;
    }
    uint32_t ident = hlb_ck_ident(s, tsecr, pp->t.src_ip, pp->t.src_port, pp->t.dst_port);
    if (stateful && (ident & HLB_COOKIE_STATEFUL))
        return cheetah_sf_segment(w, t, s, pp, ident, decap, now, dip, owner);
    *dip = hlb_ck_server_dip(t, s, ident);
    if (*dip < 0) {
        hlb_dp_drop(w, HLB_DROP_BAD_COOKIE);
        return CK_BAD;
    }
    w->st.ck_decoded++;
    return CK_PLACED;
}

/* Finds a pinned DIP in the current table's pool (after a swap). */
static inline int find_in_pool(const struct hlb_vip_table *t, const struct hlb_service *s, uint32_t ip)
{
    for (uint32_t d = s->dip_first; d < s->dip_first + s->dip_count; d++)
        if (t->dips[d].ip == ip)
            return (int)d;
    return -1;
}

/* What a burst needs to build outer headers, derived once per burst from the
 * worker's configuration (the gateway MAC may have been learned since). */
struct encap_ctx {
    uint8_t eth[HLB_MAX_PORTS][16];   /* dst, src, type 0x0800, 2 spare bytes */
    uint32_t base_sum[2];             /* outer IP header sum without tos, len, dst */
    uint32_t ttl_proto[2];            /* outer bytes 8..9 (TTL, protocol), ipip / gre */
    uint32_t self_ip;
    uint32_t mtu;
    uint8_t gw_known, two_port;
};

static inline void encap_ctx_init(struct encap_ctx *e, const struct hlb_dp_config *c)
{
    for (int port = 0; port < HLB_MAX_PORTS; port++) {
        memcpy(e->eth[port], c->gw_mac, 6);
        memcpy(e->eth[port] + 6, c->port_mac[port], 6);
        e->eth[port][12] = 0x08;
        e->eth[port][13] = 0x00;
        e->eth[port][14] = 0x45;
        e->eth[port][15] = 0;
    }
    /* Copies of the configuration the per-packet code reads: held in this local
     * struct, the compiler keeps them in registers (frame stores cannot alias it). */
    e->self_ip = c->self_ip;
    e->mtu = c->mtu;
    e->gw_known = c->gw_known;
    e->two_port = c->two_port;
    e->ttl_proto[0] = (uint32_t)c->outer_ttl | (uint32_t)HLB_IPPROTO_IPIP << 8;
    e->ttl_proto[1] = (uint32_t)c->outer_ttl | (uint32_t)HLB_IPPROTO_GRE << 8;
    uint32_t src = hlb_ntohl(c->self_ip);
    for (int gre = 0; gre < 2; gre++)
        e->base_sum[gre] = 0x4500u + HLB_IP_DF +
                           ((uint32_t)c->outer_ttl << 8 | (gre ? HLB_IPPROTO_GRE : HLB_IPPROTO_IPIP)) +
                           (src >> 16) + (src & 0xffff);
}

/* Counters of one burst kept in registers and written once at its end: the
 * worker totals always, the per-service ones while consecutive packets hit the same
 * service (a store-to-load chain per packet on one counter otherwise). */
struct burst_acc {
    uint64_t fwd_packets, fwd_bytes;
    uint64_t fwd_owner;               /* of those, sent to an owner SMux (two tiers) */
    const struct hlb_service *svc;    /* service of the current run, or NULL */
    uint32_t svc_packets;
    uint64_t svc_bytes;
    struct hlb_counter *sctr, *dctr;  /* this worker's service and DIP counters */
};

static inline struct burst_acc acc_init(const struct hlb_worker *w, const struct hlb_vip_table *t)
{
    return (struct burst_acc){.svc = NULL, .sctr = hlb_svc_counters(t, w->id),
                              .dctr = hlb_dip_counters(t, w->id)};
}

static inline void acc_flush_svc(struct burst_acc *a, struct hlb_vip_table *t)
{
    if (a->svc_packets) {
        struct hlb_counter *c = &a->sctr[a->svc - t->services];
        c->packets += a->svc_packets;
        c->bytes += a->svc_bytes;
    }
    a->svc_packets = 0;
    a->svc_bytes = 0;
}

/* Writes the outer Ethernet + IPv4 (+ GRE) header in front of the inner packet
 * (start = inner frame - overhead); returns the outer IP total length. */
static inline __attribute__((always_inline)) uint32_t
encap_write(const struct encap_ctx *ec, const struct hlb_dip *d, uint32_t gre,
            uint32_t overhead, uint32_t inner_len, uint16_t out_port, uint8_t *start)
{
    uint32_t tos = start[overhead + HLB_ETH_HLEN + 1];
    uint32_t tot = inner_len + overhead;

    /* Checksum from precomputed partial sums (RFC 1071): only TOS, length and the
     * destination vary per packet. */
    uint32_t sum = ec->base_sum[gre] + tos + tot + d->outer_sum;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    uint16_t csum = hlb_htons((uint16_t)~sum);

    /* Wide stores of whole header words; no header is built on the stack (that
     * would cost a store-forwarding stall per packet). */
    uint8_t *ip = start + HLB_ETH_HLEN;
    memcpy(start, ec->eth[out_port], 16);                 /* eth + ip[0] = 0x45 */
    uint64_t w0 = 0x45u | tos << 8 | (uint64_t)hlb_htons((uint16_t)tot) << 16 |
                  (uint64_t)hlb_htons(HLB_IP_DF) << 48;    /* ver/ihl, tos, len, id 0, DF */
    uint32_t w1 = ec->ttl_proto[gre] | (uint32_t)csum << 16;   /* ttl, proto, checksum */
    uint64_t w2 = (uint64_t)ec->self_ip | (uint64_t)d->outer << 32;   /* src, dst */
    memcpy(ip, &w0, 8);
    memcpy(ip + 8, &w1, 4);
    memcpy(ip + 12, &w2, 8);
    if (gre) {
        uint32_t g = hlb_htonl(HLB_ETHERTYPE_IPV4);        /* flags/version 0, IPv4 */
        memcpy(ip + 20, &g, 4);
    }
    return tot;
}

/* Counts one forwarded packet: service (in the burst's run), DIP, worker totals. */
static inline __attribute__((always_inline)) void
acc_count(struct burst_acc *acc, struct hlb_vip_table *t, const struct hlb_service *s, int dip,
          uint32_t inner_len, uint32_t frame_len)
{
    if (s != acc->svc) {
        acc_flush_svc(acc, t);
        acc->svc = s;
    }
    acc->svc_packets++;
    acc->svc_bytes += inner_len;
    acc->dctr[dip].packets++;
    acc->dctr[dip].bytes += inner_len;
    acc->fwd_packets++;
    acc->fwd_bytes += frame_len;
}

/* Counts one frame forwarded to another SMux (two tiers): worker totals only (the
 * owner counts it on its service and DIP, once for the traffic matrix). */
/* A frame sent by a flow pin (pins.h): its service's counters, no DIP's (the pin's
 * DIP need not be in the pool). */
static inline void acc_count_pinned(struct burst_acc *acc, struct hlb_vip_table *t,
                                    const struct hlb_service *s, uint32_t inner_len,
                                    uint32_t frame_len)
{
    if (s != acc->svc) {
        acc_flush_svc(acc, t);
        acc->svc = s;
    }
    acc->svc_packets++;
    acc->svc_bytes += inner_len;
    acc->fwd_packets++;
    acc->fwd_bytes += frame_len;
}

static inline void acc_count_forward(struct burst_acc *acc, uint32_t frame_len)
{
    acc->fwd_packets++;
    acc->fwd_owner++;
    acc->fwd_bytes += frame_len;
}

/* The idle timer is pushed back at most every timeout/4 (and at least every second)
 * rather than on every packet: the bucket line then stays clean between refreshes
 * (no write-back traffic), and a connection still never expires while active. */
static inline int conn_refresh_due(const struct hlb_conn_table *ct,
                                   const struct hlb_conn_ref *ref, enum hlb_conn_state s,
                                   uint32_t now)
{
    uint32_t to = hlb_conn_timeout_of(ct, s);
    uint32_t slack = to / 4 < 1000u ? to / 4 : 1000u;
    return (uint32_t)(ref->b->e[ref->i].expire - now) + slack < to;
}

static inline __attribute__((always_inline)) int
pinned_dip(struct hlb_worker *w, struct hlb_vip_table *t, const struct hlb_service *s,
           const struct hlb_parsed *pp, uint32_t hash, uint32_t now)
{
    struct hlb_conn_table *ct = w->ct;
    struct hlb_conn_ref ref;
    uint64_t k0, k1;
    hlb_conn_key(&pp->t, &k0, &k1);

    if (hlb_conn_find(ct, hash, k0, k1, now, &ref)) {
        struct hlb_conn_entry *e = &ref.b->e[ref.i];
        /* The entry may be written below: its copy in the flow cache goes first.
         * Only established entries have copies (struct hlb_conn_fc_entry). */
        if (e->state == HLB_CONN_EST)
            hlb_conn_fc_forget(ct, hash, k0, k1);
        int restart = 0, dip;
        enum hlb_conn_state next;
        /* The common case inline (same result as hlb_conn_next_state): a segment of
         * an established TCP connection that neither closes nor resets it. */
        if (__builtin_expect(e->state == HLB_CONN_EST && pp->t.proto == HLB_IPPROTO_TCP &&
                             !(pp->tcp_flags & (HLB_TCP_RST | HLB_TCP_FIN)), 1))
            next = HLB_CONN_EST;
        else
            next = hlb_conn_next_state(e->state, pp->t.proto, pp->tcp_flags, &restart);
        w->st.conn_hits++;
        if (e->table_gen == t->gen && !restart) {
            dip = (int)e->dip_index;           /* the common case: nothing to rewrite */
        } else {
            if (restart) {
                dip = select_dip(t, s, &pp->t);
            } else {
                /* Table swapped since: the pinned DIP keeps the connection while it
                 * is still in the pool (even at weight 0: draining). */
                dip = find_in_pool(t, s, e->dip_ip);
                if (dip < 0) {
                    dip = select_dip(t, s, &pp->t);
                    w->st.conn_repinned++;
                }
            }
            if (dip < 0) {
                hlb_conn_delete(ct, &ref);
                return -1;
            }
            e->dip_ip = t->dips[dip].ip;
            e->table_gen = t->gen;
            e->dip_index = (uint32_t)dip;
        }
        if (next == HLB_CONN_FREE)
            hlb_conn_delete(ct, &ref);          /* RST: this packet still goes there */
        else if (next != e->state || conn_refresh_due(ct, &ref, next, now))
            hlb_conn_set_state(ct, &ref, next, now);
        return dip;
    }

    w->st.conn_misses++;
    int dip = select_dip(t, s, &pp->t);
    if (dip < 0)
        return -1;
    enum hlb_conn_state st0 = hlb_conn_initial_state(pp->t.proto, pp->tcp_flags);
    if (st0 != HLB_CONN_FREE && hlb_conn_insert(ct, hash, k0, k1, st0, now, &ref) == 0) {
        struct hlb_conn_entry *e = &ref.b->e[ref.i];
        e->dip_ip = t->dips[dip].ip;
        e->table_gen = t->gen;
        e->dip_index = (uint32_t)dip;
    }
    /* A failed insert (bucket full of entries none displaceable) still forwards by
     * hash: the flow is only unpinned, and counted. */
    return dip;
}

/* pinned_dip() for a frame the lean pass packed into key words (see struct
 * lean_pend in dp_burst_body.h): the uncommon cases, out of line so that the
 * lean loop stays small. */
static __attribute__((noinline)) int
pinned_dip_packed(struct hlb_worker *w, struct hlb_vip_table *t, const struct hlb_service *s,
                  uint64_t k0, uint64_t k1, uint32_t hash, uint32_t now)
{
    struct hlb_parsed pp = {
        .t = {.src_ip = (uint32_t)k0, .dst_ip = (uint32_t)(k0 >> 32),
              .src_port = (uint16_t)k1, .dst_port = (uint16_t)(k1 >> 16),
              .proto = (uint8_t)(k1 >> 32)},
        .l3_off = HLB_ETH_HLEN, .ip_tot_len = (uint16_t)(k1 >> 48), .ip_hlen = 20,
        .tcp_flags = (uint8_t)(k1 >> 40)};
    return pinned_dip(w, t, s, &pp, hash, now);
}

#include "dp_quic.h"   /* cheetah over QUIC: its step, on pick_slot and the drops */

#endif
