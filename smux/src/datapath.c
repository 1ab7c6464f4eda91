#include "datapath.h"

#include <string.h>
#if defined(__SSE4_1__) && defined(__POPCNT__)
#include <smmintrin.h>
#endif

const char *const hlb_drop_names[HLB_DROP_MAX] = {
    [HLB_DROP_TRUNCATED] = "truncated",
    [HLB_DROP_NOT_IPV4] = "not_ipv4",
    [HLB_DROP_BAD_IP] = "bad_ip_header",
    [HLB_DROP_FRAGMENT] = "ip_fragment",
    [HLB_DROP_BAD_ARP] = "bad_arp",
    [HLB_DROP_ARP_NOT_FOR_US] = "arp_not_for_us",
    [HLB_DROP_TO_SELF] = "to_self",
    [HLB_DROP_NO_VIP] = "no_vip",
    [HLB_DROP_NO_BACKEND] = "no_backend",
    [HLB_DROP_NO_GATEWAY] = "no_gateway",
    [HLB_DROP_FRAG_NEEDED] = "frag_needed",
    [HLB_DROP_NO_HEADROOM] = "no_headroom",
    [HLB_DROP_MULTISEG] = "multi_segment",
    [HLB_DROP_TX_FULL] = "tx_full",
};

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "outer headers are stored as little-endian words");

static const uint8_t bcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

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
 * the service's): the crc32 hash then only adds the terms of the fields that vary to
 * the service's precomputed ones.  Equal to hlb_crc32_5tuple() of the tuple. */
static inline __attribute__((always_inline)) int
select_dip(const struct hlb_vip_table *t, const struct hlb_service *s,
           const struct hlb_5tuple *tuple)
{
    int rel;
    if (s->selection == HLB_SEL_CRC32) {
        if (s->weight_total == 0)      /* empty pool or all weights 0 */
            return -1;
        uint32_t h = s->crc_fixed ^ hlb_crc32_src(tuple->src_ip) ^
                     hlb_crc32_sport(tuple->src_port);
        if (s->port == 0)
            h ^= hlb_crc32_dport(tuple->dst_port);
        uint32_t slot = hlb_fastmod(h, s->weight_mod_m, s->weight_total);
        return (int)s->dip_first + pick_slot(&t->cum[s->dip_first], (int)s->dip_count, slot);
    }
    if (s->dip_count == 0)
        return -1;
    rel = hlb_ovs_select_bucket(hlb_ovs_select_hash(tuple, s->basis),
                                &t->bucket_ids[s->dip_first], &t->weights[s->dip_first],
                                (int)s->dip_count);
    return rel < 0 ? -1 : (int)s->dip_first + rel;
}

int hlb_select_dip(const struct hlb_vip_table *t, const struct hlb_service *s,
                   const struct hlb_5tuple *tuple)
{
    return select_dip(t, s, tuple);
}

/* Finds a pinned DIP in the current table's pool (after a swap). */
static int find_in_pool(const struct hlb_vip_table *t, const struct hlb_service *s, uint32_t ip)
{
    for (uint32_t d = s->dip_first; d < s->dip_first + s->dip_count; d++)
        if (t->dips[d].ip == ip)
            return (int)d;
    return -1;
}

static inline void drop(struct hlb_worker *w, uint8_t *verdict, enum hlb_drop_reason r)
{
    w->st.drops[r]++;
    *verdict = HLB_V_DROP;
}

/* ---- replies built in place ------------------------------------------------------ */

static void handle_arp(struct hlb_worker *w, struct hlb_pkt *p, uint8_t *verdict)
{
    struct hlb_dp_config *c = &w->cfg;
    struct hlb_arp_ipv4 arp;
    memcpy(&arp, p->data + HLB_ETH_HLEN, sizeof(arp));
    int from_gw = c->gw_ip != 0 && arp.spa == c->gw_ip;

    if (from_gw && !c->gw_static) {
        memcpy(c->gw_mac, arp.sha, 6);
        c->gw_known = 1;
    }
    if (arp.op == hlb_htons(HLB_ARP_REQUEST) && arp.tpa == c->self_ip && c->self_ip != 0) {
        const uint8_t *mac = c->port_mac[p->in_port];
        struct hlb_eth_hdr eth;
        memcpy(eth.dst, arp.sha, 6);
        memcpy(eth.src, mac, 6);
        eth.type = hlb_htons(HLB_ETHERTYPE_ARP);
        arp.op = hlb_htons(HLB_ARP_REPLY);
        memcpy(arp.tha, arp.sha, 6);
        arp.tpa = arp.spa;
        memcpy(arp.sha, mac, 6);
        arp.spa = c->self_ip;
        memcpy(p->data, &eth, sizeof(eth));
        memcpy(p->data + HLB_ETH_HLEN, &arp, sizeof(arp));
        p->len = HLB_ETH_HLEN + sizeof(arp);
        p->out_port = p->in_port;
        w->st.arp_replies++;
        w->st.replies++;
        *verdict = HLB_V_TX;
        return;
    }
    if (from_gw) {
        w->st.gw_learned++;
        *verdict = HLB_V_DROP;
        return;
    }
    drop(w, verdict, HLB_DROP_ARP_NOT_FOR_US);
}

uint32_t hlb_build_arp_request(const struct hlb_dp_config *cfg, uint16_t port, uint8_t *buf)
{
    struct hlb_eth_hdr eth;
    struct hlb_arp_ipv4 arp;
    memcpy(eth.dst, bcast_mac, 6);
    memcpy(eth.src, cfg->port_mac[port], 6);
    eth.type = hlb_htons(HLB_ETHERTYPE_ARP);
    arp.htype = hlb_htons(1);
    arp.ptype = hlb_htons(HLB_ETHERTYPE_IPV4);
    arp.hlen = 6;
    arp.plen = 4;
    arp.op = hlb_htons(HLB_ARP_REQUEST);
    memcpy(arp.sha, cfg->port_mac[port], 6);
    arp.spa = cfg->self_ip;
    memset(arp.tha, 0, 6);
    arp.tpa = cfg->gw_ip;
    memset(buf, 0, 60);
    memcpy(buf, &eth, sizeof(eth));
    memcpy(buf + HLB_ETH_HLEN, &arp, sizeof(arp));
    return 60;
}

/* Turns the frame into an IPv4 reply to its sender: new IP header (from us, TTL 64)
 * followed by the ICMP message; eth goes back to the MAC it came from. */
static void icmp_reply(struct hlb_worker *w, struct hlb_pkt *p, const struct hlb_parsed *pp,
                       const uint8_t *icmp, uint32_t icmp_len, uint8_t *verdict)
{
    const struct hlb_dp_config *c = &w->cfg;
    struct hlb_eth_hdr eth;
    struct hlb_ipv4_hdr ip;
    memcpy(&eth, p->data, sizeof(eth));
    memcpy(eth.dst, eth.src, 6);
    memcpy(eth.src, c->port_mac[p->in_port], 6);
    ip.ver_ihl = 0x45;
    ip.tos = 0;
    ip.tot_len = hlb_htons(20 + icmp_len);
    ip.id = 0;
    ip.frag_off = 0;
    ip.ttl = 64;
    ip.proto = HLB_IPPROTO_ICMP;
    ip.csum = 0;
    ip.src = c->self_ip;
    ip.dst = pp->t.src_ip;
    ip.csum = hlb_csum(&ip, sizeof(ip));
    /* icmp may point into the frame: move it first (memmove), then the headers. */
    memmove(p->data + HLB_ETH_HLEN + 20, icmp, icmp_len);
    memcpy(p->data, &eth, sizeof(eth));
    memcpy(p->data + HLB_ETH_HLEN, &ip, sizeof(ip));
    p->len = HLB_ETH_HLEN + 20 + icmp_len;
    p->out_port = p->in_port;
    w->st.replies++;
    *verdict = HLB_V_TX;
}

/* RFC 792/1191: type 3 code 4 with the next-hop MTU, quoting the original IP header
 * and the first 8 bytes of its payload. */
static void frag_needed(struct hlb_worker *w, struct hlb_pkt *p, const struct hlb_parsed *pp,
                        uint32_t overhead, uint8_t *verdict)
{
    uint8_t msg[8 + 60 + 8];
    uint32_t quote = pp->ip_hlen + 8u;
    if (quote > pp->ip_tot_len)
        quote = pp->ip_tot_len;
    struct hlb_icmp_hdr h = {.type = 3, .code = 4, .csum = 0, .unused = 0,
                             .next_mtu = hlb_htons(w->cfg.mtu - overhead)};
    memcpy(msg, &h, sizeof(h));
    memcpy(msg + 8, p->data + HLB_ETH_HLEN, quote);
    uint16_t cs = hlb_csum(msg, 8 + quote);
    memcpy(msg + 2, &cs, 2);
    w->st.drops[HLB_DROP_FRAG_NEEDED]++;
    w->st.icmp_frag_needed++;
    icmp_reply(w, p, pp, msg, 8 + quote, verdict);
}

static void to_self(struct hlb_worker *w, struct hlb_pkt *p, const struct hlb_parsed *pp,
                    uint8_t *verdict)
{
    uint8_t *icmp = p->data + HLB_ETH_HLEN + pp->ip_hlen;
    uint32_t icmp_len = pp->ip_tot_len - pp->ip_hlen;
    if (pp->t.proto != HLB_IPPROTO_ICMP || icmp_len < 8 || icmp[0] != 8 || icmp[1] != 0 ||
        hlb_csum(icmp, icmp_len) != 0) {
        drop(w, verdict, HLB_DROP_TO_SELF);
        return;
    }
    icmp[0] = 0;                                  /* echo reply, same id/seq/data */
    icmp[2] = icmp[3] = 0;
    uint16_t cs = hlb_csum(icmp, icmp_len);
    memcpy(icmp + 2, &cs, 2);
    w->st.icmp_echo_replies++;
    icmp_reply(w, p, pp, icmp, icmp_len, verdict);
}

/* ---- encapsulation ----------------------------------------------------------------- */

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

static void encap_ctx_init(struct encap_ctx *e, const struct hlb_dp_config *c)
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
    uint32_t svc;                     /* service index of the current run, or ~0 */
    uint32_t svc_packets;
    uint64_t svc_bytes;
};

static inline void acc_flush_svc(struct burst_acc *a, struct hlb_vip_table *t)
{
    if (a->svc_packets) {
        t->svc_counters[a->svc].packets += a->svc_packets;
        t->svc_counters[a->svc].bytes += a->svc_bytes;
    }
    a->svc_packets = 0;
    a->svc_bytes = 0;
}

static inline __attribute__((always_inline)) void
encapsulate(struct hlb_worker *w, const struct encap_ctx *ec, struct burst_acc *acc,
            struct hlb_vip_table *t, const struct hlb_service *s, int dip,
            struct hlb_pkt *p, const struct hlb_parsed *pp, uint8_t *verdict)
{
    uint32_t gre = s->encap == HLB_ENCAP_GRE;
    uint32_t overhead = 20u + 4u * gre;

    if (__builtin_expect(pp->ip_tot_len + overhead > ec->mtu, 0)) {
        frag_needed(w, p, pp, overhead, verdict);
        return;
    }
    if (__builtin_expect(!ec->gw_known, 0)) {
        drop(w, verdict, HLB_DROP_NO_GATEWAY);
        return;
    }
    if (__builtin_expect(p->headroom < overhead, 0)) {
        drop(w, verdict, HLB_DROP_NO_HEADROOM);
        return;
    }
    uint16_t out_port = ec->two_port ? 1 : p->in_port;
    uint32_t tos = p->data[HLB_ETH_HLEN + 1];
    uint8_t *start = p->data - overhead;
    uint32_t tot = pp->ip_tot_len + overhead;
    const struct hlb_dip *d = &t->dips[dip];

    /* Checksum from precomputed partial sums (RFC 1071): only TOS, length and the
     * destination vary per packet. */
    uint32_t sum = ec->base_sum[gre] + (tos) + tot + d->outer_sum;
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
    p->data = start;
    p->headroom -= overhead;
    /* Drop Ethernet padding of short frames: the inner packet is tot_len long. */
    p->len = HLB_ETH_HLEN + tot;
    p->out_port = out_port;

    uint32_t si = (uint32_t)(s - t->services);
    if (si != acc->svc) {
        acc_flush_svc(acc, t);
        acc->svc = si;
    }
    acc->svc_packets++;
    acc->svc_bytes += pp->ip_tot_len;
    t->dip_counters[dip].packets++;
    t->dip_counters[dip].bytes += pp->ip_tot_len;
    acc->fwd_packets++;
    acc->fwd_bytes += p->len;
    *verdict = HLB_V_TX;
}

/* ---- connection pinning -------------------------------------------------------- */

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

static int pinned_dip(struct hlb_worker *w, struct hlb_vip_table *t, const struct hlb_service *s,
                      const struct hlb_parsed *pp, uint32_t hash, uint32_t now)
{
    struct hlb_conn_table *ct = w->ct;
    struct hlb_conn_ref ref;
    uint64_t k0, k1;
    hlb_conn_key(&pp->t, &k0, &k1);

    if (hlb_conn_find(ct, hash, k0, k1, now, &ref)) {
        struct hlb_conn_entry *e = &ref.b->e[ref.i];
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
    /* A failed insert (bucket full of established connections) still forwards by
     * hash: the flow is only unpinned, and counted. */
    return dip;
}

/* ---- the burst ------------------------------------------------------------------- */


void hlb_dp_burst(struct hlb_worker *w, struct hlb_vip_table *t, struct hlb_pkt *pkts,
                  uint8_t *verdict, unsigned n, uint32_t now)
{
    struct hlb_parsed parsed[HLB_MAX_BURST];
    const struct hlb_service *svc[HLB_MAX_BURST];
    uint32_t hash[HLB_MAX_BURST];
    uint8_t pending[HLB_MAX_BURST];       /* indices left for stage 2 */
    unsigned n_pending = 0;
    uint64_t rx_bytes = 0;

    if (n > HLB_MAX_BURST)
        n = HLB_MAX_BURST;
    struct encap_ctx ec;
    encap_ctx_init(&ec, &w->cfg);
    struct burst_acc acc = {.svc = ~0u};
    struct hlb_conn_table *ct = w->ct;

    /* Stage 1: parse and classify, and finish every frame except those of pinned
     * VIPs (in arrival order, so an ARP reply from the gateway serves the frames
     * behind it).  Pinned ones start fetching their connection bucket and wait for
     * stage 2, so the cache misses of a burst overlap. */
    for (unsigned i = 0; i < n; i++) {
        struct hlb_pkt *p = &pkts[i];
        struct hlb_parsed *pp = &parsed[i];
        rx_bytes += p->len;
        enum hlb_parse_result r = HLB_PARSE_IPV4;
        if (__builtin_expect(!hlb_parse_fast(p->data, p->len, pp), 0))
            r = hlb_parse(p->data, p->len, pp);
        if (__builtin_expect(r != HLB_PARSE_IPV4, 0)) {
            switch (r) {
            case HLB_PARSE_ARP:
                handle_arp(w, p, &verdict[i]);
                encap_ctx_init(&ec, &w->cfg);       /* the gateway MAC may have changed */
                break;
            case HLB_PARSE_TRUNCATED: drop(w, &verdict[i], HLB_DROP_TRUNCATED); break;
            case HLB_PARSE_NOT_IPV4: drop(w, &verdict[i], HLB_DROP_NOT_IPV4); break;
            case HLB_PARSE_FRAGMENT: drop(w, &verdict[i], HLB_DROP_FRAGMENT); break;
            case HLB_PARSE_BAD_ARP: drop(w, &verdict[i], HLB_DROP_BAD_ARP); break;
            default: drop(w, &verdict[i], HLB_DROP_BAD_IP); break;
            }
            continue;
        }
        const struct hlb_service *s = hlb_table_lookup(t, pp->t.dst_ip, pp->t.proto,
                                                       pp->t.dst_port);
        if (__builtin_expect(!s, 0)) {
            if (pp->t.dst_ip == w->cfg.self_ip)
                to_self(w, p, pp, &verdict[i]);
            else
                drop(w, &verdict[i], HLB_DROP_NO_VIP);
            continue;
        }
        if (!(s->pin && ct)) {
            int dip = select_dip(t, s, &pp->t);
            if (__builtin_expect(dip < 0, 0))
                drop(w, &verdict[i], HLB_DROP_NO_BACKEND);
            else
                encapsulate(w, &ec, &acc, t, s, dip, p, pp, &verdict[i]);
            continue;
        }
        svc[i] = s;
        hash[i] = hlb_conn_hash(&pp->t);
        if ((pp->tcp_flags & (HLB_TCP_SYN | HLB_TCP_ACK)) == HLB_TCP_SYN)
            hlb_conn_prefetch_bucket(ct, hash[i]);   /* likely an insert */
        else
            hlb_conn_prefetch(ct, hash[i]);
        pending[n_pending++] = (uint8_t)i;
    }
    w->st.rx_packets += n;
    w->st.rx_bytes += rx_bytes;

    /* Stage 2: pinned VIPs. */
    for (unsigned k = 0; k < n_pending; k++) {
        unsigned i = pending[k];
        const struct hlb_service *s = svc[i];
        int dip = pinned_dip(w, t, s, &parsed[i], hash[i], now);
        if (dip < 0)
            drop(w, &verdict[i], HLB_DROP_NO_BACKEND);
        else
            encapsulate(w, &ec, &acc, t, s, dip, &pkts[i], &parsed[i], &verdict[i]);
    }
    acc_flush_svc(&acc, t);
    w->st.fwd_packets += acc.fwd_packets;
    w->st.fwd_bytes += acc.fwd_bytes;
}
