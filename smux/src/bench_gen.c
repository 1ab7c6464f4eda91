#include "bench_gen.h"

#include <stdlib.h>
#include <string.h>

#include "cheetah.h"
#include "hlb_pkt.h"

/* Bytes 16-31 of flow f's frame.  Flow f: source 10.<f bits 16-23>.<f bits 8-15>.<f
 * bits 0-7>, source port 1024 + f >> 24 (bytes 32-47, see bench_gen_hook). */
static inline __m128i bench_gen_chunk1(__m128i c1, uint32_t base_sum, uint32_t f)
{
    uint16_t hi = hlb_htons((uint16_t)(0x0a00 | ((f >> 16) & 0xff)));
    uint16_t lo = hlb_htons((uint16_t)(f & 0xffff));
    uint16_t cs = hlb_csum_fold(base_sum - hlb_htons(0x0a00) + hi + lo);
    __m128i x1 = _mm_insert_epi16(c1, cs, 4);                  /* bytes 24-25 */
    x1 = _mm_insert_epi16(x1, hi, 5);                           /* 26-27 */
    return _mm_insert_epi16(x1, lo, 6);                         /* 28-29 */
}

void bench_gen_init(struct bench_gen *g, const struct options *o, const uint8_t *dst_mac,
                    unsigned k, unsigned n, const struct hlb_vip_table *t,
                    struct hlb_sf_table *sf, uint32_t now)
{
    const struct hlb_service *ck = hlb_table_lookup(t, o->bench_vip, HLB_IPPROTO_TCP,
                                                    hlb_htons(o->bench_port));
    if (ck && (!hlb_aff_cookie(ck->affinity) || ck->dip_count == 0 || o->bench_new_flows))
        ck = NULL;
    memset(g, 0, sizeof(*g));
    struct hlb_eth_hdr eth = {.type = hlb_htons(HLB_ETHERTYPE_IPV4)};
    memcpy(eth.dst, dst_mac, 6);
    memcpy(eth.src, (uint8_t[]){0x02, 0, 0, 0, 0, 0x01}, 6);
    struct hlb_ipv4_hdr ip = {.ver_ihl = 0x45, .tot_len = hlb_htons(ck ? 52 : 50), .ttl = 64,
                              .proto = HLB_IPPROTO_TCP, .src = hlb_htonl(0x0a000000),
                              .dst = o->bench_vip};
    memcpy(g->tmpl, &eth, 14);
    memcpy(g->tmpl + 14, &ip, 20);
    uint8_t *tcp = g->tmpl + 34;
    uint16_t dport = hlb_htons(o->bench_port);
    uint16_t sport = hlb_htons(1024);
    memcpy(tcp, &sport, 2);
    memcpy(tcp + 2, &dport, 2);
    tcp[12] = (ck ? 8 : 5) << 4;
    tcp[13] = o->bench_new_flows ? HLB_TCP_SYN : HLB_TCP_ACK;
    if (ck)
        memcpy(tcp + 20, (const uint8_t[]){1, 1, 8, 10, 0, 0, 0x12, 0x34}, 8);
    g->base_sum = hlb_csum_partial(g->tmpl + 14, 20, 0);
    uint32_t all = o->bench_flows ? o->bench_flows : 1;
    g->flows = all > k ? (all - k + n - 1) / n : 1;
    g->first = k;
    g->step = n;
    g->new_flows = o->bench_new_flows;
    if (!g->new_flows && g->flows <= BENCH_GEN_TABLE_MAX) {
        g->chunk1 = aligned_alloc(16, (size_t)g->flows * sizeof(__m128i));
        __m128i c1 = _mm_loadu_si128((const __m128i *)(g->tmpl + 16));
        for (uint32_t f = 0; g->chunk1 && f < g->flows; f++)
            g->chunk1[f] = bench_gen_chunk1(c1, g->base_sum, k + f * n);
        if (ck)
            g->tsecr = malloc((size_t)g->flows * sizeof(*g->tsecr));
        for (uint32_t f = 0; g->tsecr && f < g->flows; f++) {
            uint32_t flow = k + f * n;
            uint16_t id = t->server_ids[ck->dip_first + flow % ck->dip_count];
            uint64_t h = hlb_ck_hash(ck, hlb_htonl(0x0a000000u | (flow & 0xffffffu)),
                                     hlb_htons((uint16_t)(1024 + (flow >> 24))),
                                     hlb_htons(o->bench_port));
            uint32_t ident = id;
            if (ck->affinity == HLB_AFF_CHEETAH_STATEFUL && ck->sf_self != HLB_SF_NOT_OWNER &&
                sf) {
                /* the entry the flow's SYN would have made on this worker */
                int idx = hlb_sf_insert(sf, hlb_sf_part_of(sf, h, ck->ck_mode == HLB_COOKIE_CRC32C),
                                        id, h, now);
                if (idx >= 0)
                    ident = hlb_sf_ident(ck->sf_self, (uint32_t)idx);
            }
            g->tsecr[f] = hlb_htonl((uint32_t)((ident ^ h) & HLB_COOKIE_MASK) << 16 | (flow & 0xffff));
        }
    }
}

void bench_gen_fill_one(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
    (void)mp;
    (void)idx;
    const struct bench_gen *g = arg;
    struct rte_mbuf *m = obj;
    memcpy((uint8_t *)m->buf_addr + RTE_PKTMBUF_HEADROOM, g->tmpl, sizeof(g->tmpl));
}

void bench_gen_hook(void *arg, struct rte_mbuf **ms, uint16_t n)
{
    struct bench_gen *g = arg;
    /* State and template in registers for the burst: stores into the frames may
     * alias anything, so reading them through g would reload them per packet. */
    uint32_t next = g->next, flows = g->flows;
    const __m128i *chunk1 = g->chunk1;
    __m128i c0 = _mm_loadu_si128((const __m128i *)g->tmpl);
    const uint32_t *tsecr = g->tsecr;
    if (tsecr != NULL) {                  /* cheetah: the flow's echo as well */
        for (uint16_t i = 0; i < n; i++) {
            uint8_t *d = rte_pktmbuf_mtod(ms[i], uint8_t *);
            _mm_storeu_si128((__m128i *)d, c0);
            _mm_storeu_si128((__m128i *)(d + 16), chunk1[next]);
            memcpy(d + 62, &tsecr[next], 4);
            if (++next == flows)
                next = 0;
        }
        g->next = next;
        return;
    }
    if (likely(chunk1 != NULL)) {
        for (uint16_t i = 0; i < n; i++) {
            uint8_t *d = rte_pktmbuf_mtod(ms[i], uint8_t *);
            _mm_storeu_si128((__m128i *)d, c0);
            _mm_storeu_si128((__m128i *)(d + 16), chunk1[next]);
            if (++next == flows)
                next = 0;
        }
        g->next = next;
        return;
    }
    uint32_t base_sum = g->base_sum, first = g->first, step = g->step;
    int new_flows = g->new_flows;
    __m128i c1 = _mm_loadu_si128((const __m128i *)(g->tmpl + 16));
    __m128i c2 = _mm_loadu_si128((const __m128i *)(g->tmpl + 32));
    for (uint16_t i = 0; i < n; i++) {
        uint8_t *d = rte_pktmbuf_mtod(ms[i], uint8_t *);
        uint32_t f = first + next++ * step;
        if (!new_flows && next == flows)
            next = 0;
        uint16_t sport = hlb_htons((uint16_t)(1024 + (f >> 24)));
        _mm_storeu_si128((__m128i *)d, c0);
        _mm_storeu_si128((__m128i *)(d + 16), bench_gen_chunk1(c1, base_sum, f));
        _mm_storeu_si128((__m128i *)(d + 32), _mm_insert_epi16(c2, sport, 1));  /* 34-35 */
    }
    g->next = next;
}

void bench_prefill(struct hlb_worker *const *w, unsigned n, struct hlb_vip_table *t,
                   const struct options *o)
{
    const struct hlb_service *s = hlb_table_lookup(t, o->bench_vip, HLB_IPPROTO_TCP,
                                                   hlb_htons(o->bench_port));
    if (!s)
        return;
    for (uint32_t i = 0; i < o->bench_prefill; i++) {
        struct hlb_conn_table *ct = w[i % n]->ct;
        struct hlb_5tuple tp = {.src_ip = hlb_htonl(0xac100000u + (i & 0xfffff)),
                                .dst_ip = o->bench_vip,
                                .src_port = hlb_htons((uint16_t)(1024 + (i >> 20))),
                                .dst_port = hlb_htons(o->bench_port),
                                .proto = HLB_IPPROTO_TCP};
        uint64_t k0, k1;
        struct hlb_conn_ref ref;
        hlb_conn_key(&tp, &k0, &k1);
        int dip = hlb_select_dip(t, s, &tp);
        if (dip >= 0 && hlb_conn_insert(ct, hlb_conn_hash(&tp), k0, k1, HLB_CONN_EST, 0,
                                        &ref) == 0) {
            ref.b->e[ref.i].dip_ip = t->dips[dip].ip;
            ref.b->e[ref.i].table_gen = t->gen;
            ref.b->e[ref.i].dip_index = (uint32_t)dip;
        }
    }
}
