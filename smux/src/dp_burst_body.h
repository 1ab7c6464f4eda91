/* The body of the packet core's burst function, compiled twice from this one source:
 * over struct hlb_pkt in datapath.c (hlb_dp_burst: unit tests, fuzzers, core
 * benchmark) and over DPDK mbufs in io_loop.c (the forwarding path), so that the
 * forwarding path reads and rewrites the mbufs it received with no per-packet copy.
 * No include guard: the includer defines, then this file #undefs,
 *
 *   HLB_BURST_FN                 name of the (static) burst function to define
 *   HLB_FULL_FN, HLB_FAST_FN     names for its two parts
 *   HLB_BURST_FRAME              type of one element of the frames array
 *   HLB_F_DATA(f)                uint8_t * to the first byte of the frame
 *   HLB_F_LEN(f)                 frame length
 *   HLB_F_HEADROOM(f)            writable bytes in front of the frame
 *   HLB_F_IN_PORT(f, port)       port index the frame came in on (port: the burst's)
 *   HLB_F_MULTISEG(f)            non-zero when the frame is not one contiguous buffer
 *   HLB_F_SET(f, data, len)      the frame now starts at data (same buffer) and is len long
 *   HLB_F_PUSH(f, n, len)        the frame now starts n bytes earlier and is len long
 *
 * out[i] receives the output port index of frames[i], or HLB_OUT_DROP.
 */

static __attribute__((noinline)) void
HLB_FULL_FN(struct hlb_worker *w, struct hlb_vip_table *t, HLB_BURST_FRAME *frames,
                        uint8_t *out, unsigned n, uint16_t burst_port, uint32_t now)
{
    struct hlb_parsed parsed[HLB_MAX_BURST];
    const struct hlb_service *svc[HLB_MAX_BURST];
    uint32_t hash[HLB_MAX_BURST];
    uint8_t pending[HLB_MAX_BURST];       /* frames left for stage 2 */
    unsigned n_pending = 0;
    uint64_t rx_bytes = 0;
    (void)burst_port;                     /* unused when frames carry their port */

    if (n > HLB_MAX_BURST)
        n = HLB_MAX_BURST;
    struct encap_ctx ec;
    encap_ctx_init(&ec, &w->cfg);
    struct burst_acc acc = acc_init(w, t);
    struct hlb_conn_table *ct = w->ct;
    /* The last (dst, proto, dst port) and its service: consecutive packets of one
     * service skip the index probe.  The key of a real service is never 0 (proto 0
     * is never a service), and lookup(0) is NULL, so the initial pair is valid. */
    uint64_t last_key = 0;
    const struct hlb_service *last_svc = NULL;

    /* Stage 1: parse and classify, and finish every frame except those of pinned
     * VIPs (in arrival order, so an ARP reply from the gateway serves the frames
     * behind it).  Pinned ones start fetching their connection bucket and wait for
     * stage 2, so the cache misses of a burst overlap. */
    for (unsigned i = 0; i < n; i++) {
        HLB_BURST_FRAME f = frames[i];
        if (HLB_UNLIKELY(HLB_F_MULTISEG(f))) {
            /* Jumbo frames split over segments: never expected at our MTU. */
            hlb_dp_drop(w, HLB_DROP_MULTISEG);
            out[i] = HLB_OUT_DROP;
            continue;
        }
        uint8_t *d = HLB_F_DATA(f);
        uint32_t len = HLB_F_LEN(f);
        struct hlb_parsed *pp = &parsed[n_pending];   /* kept only if pinned */
        rx_bytes += len;
        int decap = 0;                    /* opened an IP-in-IP frame from another SMux */
    reparse:;
        enum hlb_parse_result r = HLB_PARSE_IPV4;
        if (HLB_UNLIKELY(!hlb_parse_fast(d, len, pp)))
            r = hlb_parse(d, len, pp);
        if (HLB_UNLIKELY(r != HLB_PARSE_IPV4)) {
            uint8_t v = HLB_V_DROP;
            out[i] = HLB_OUT_DROP;
            switch (r) {
            case HLB_PARSE_ARP: {
                struct hlb_pkt p = {.data = d, .len = len, .headroom = HLB_F_HEADROOM(f),
                                    .in_port = HLB_F_IN_PORT(f, burst_port)};
                hlb_dp_arp(w, &p, &v);
                if (v == HLB_V_TX) {
                    HLB_F_SET(f, p.data, p.len);
                    out[i] = (uint8_t)p.out_port;
                }
                encap_ctx_init(&ec, &w->cfg);       /* the gateway MAC may have changed */
                break;
            }
            case HLB_PARSE_TRUNCATED: hlb_dp_drop(w, HLB_DROP_TRUNCATED); break;
            case HLB_PARSE_NOT_IPV4: hlb_dp_drop(w, HLB_DROP_NOT_IPV4); break;
            case HLB_PARSE_FRAGMENT: hlb_dp_drop(w, HLB_DROP_FRAGMENT); break;
            case HLB_PARSE_BAD_ARP: hlb_dp_drop(w, HLB_DROP_BAD_ARP); break;
            default: hlb_dp_drop(w, HLB_DROP_BAD_IP); break;
            }
            continue;
        }
        uint64_t key = hlb_service_key(pp->t.dst_ip, pp->t.proto, pp->t.dst_port);
        if (HLB_UNLIKELY(key != last_key)) {
            last_key = key;
            last_svc = hlb_table_lookup(t, pp->t.dst_ip, pp->t.proto, pp->t.dst_port);
        }
        const struct hlb_service *s = last_svc;
        if (HLB_UNLIKELY(!s)) {
            out[i] = HLB_OUT_DROP;
            if (pp->t.dst_ip == w->cfg.self_ip && pp->t.proto == HLB_IPPROTO_IPIP && !decap &&
                pp->ip_tot_len >= pp->ip_hlen + 20u && w->sf) {
                /* Two tiers: a segment another SMux forwards to us, the owner of its
                 * stateful index.  Its outer header goes; the inner frame is then
                 * classified like any other (once: an inner IP-in-IP is not opened). */
                uint32_t ohl = pp->ip_hlen;
                memmove(d + ohl, d, pp->l3_off);
                d += ohl;
                len = pp->l3_off + pp->ip_tot_len - ohl;
                HLB_F_SET(f, d, len);
                frames[i] = f;
                decap = 1;
                w->st.ck_decapsulated++;
                goto reparse;
            }
            if (pp->t.dst_ip == w->cfg.self_ip) {
                struct hlb_pkt p = {.data = d, .len = len, .headroom = HLB_F_HEADROOM(f),
                                    .in_port = HLB_F_IN_PORT(f, burst_port)};
                uint8_t v = HLB_V_DROP;
                hlb_dp_to_self(w, &p, pp, &v);
                if (v == HLB_V_TX) {
                    HLB_F_SET(f, p.data, p.len);
                    out[i] = (uint8_t)p.out_port;
                }
            } else {
                hlb_dp_drop(w, HLB_DROP_NO_VIP);
            }
            continue;
        }
        int dip;
        const struct hlb_dip *dst;        /* the tunnel end: t->dips[dip], an owner SMux, a pin's */
        if (HLB_UNLIKELY(hlb_svc_has_pins(s))) {
            const struct hlb_pin *pin = hlb_pin_find(t, &pp->t);
            if (pin) {                    /* before cookie, hash and connection table */
                w->st.pinned_packets++;
                dip = HLB_DIP_PINNED;
                dst = &pin->to;
                goto encap;
            }
        }
        if (HLB_UNLIKELY(hlb_aff_cookie(s->affinity)) && pp->t.proto == HLB_IPPROTO_TCP) {
            int ck = cheetah_step(w, t, s, d, pp, decap, now, &dip, &dst);
            if (ck == CK_BAD) {
                out[i] = HLB_OUT_DROP;
                continue;
            }
            if (ck == CK_FORWARD) {       /* IP-in-IP to the owner SMux, counted there */
                dip = HLB_DIP_FORWARD;
                goto encap;
            }
            if (ck == CK_PLACED)
                goto placed;
        } else if (HLB_UNLIKELY(hlb_aff_cookie(s->affinity)) && pp->t.proto == HLB_IPPROTO_UDP) {
            dip = quic_step(w, t, s, d + pp->l3_off + pp->ip_hlen, pp->ip_tot_len - pp->ip_hlen);
            if (dip < 0) {                /* counted: a bad id or header, or no backend */
                out[i] = HLB_OUT_DROP;
                continue;
            }
            goto placed;
        }
        if (s->pin && ct) {
            svc[n_pending] = s;
            uint32_t h = hlb_conn_hash(&pp->t);
            hash[n_pending] = h;
            if ((pp->tcp_flags & (HLB_TCP_SYN | HLB_TCP_ACK)) == HLB_TCP_SYN)
                hlb_conn_prefetch_bucket(ct, h);   /* likely an insert */
            else
                hlb_conn_prefetch(ct, h);
            pending[n_pending++] = (uint8_t)i;
            continue;
        }
        dip = select_dip(t, s, &pp->t);
    placed:
        if (HLB_UNLIKELY(dip < 0)) {
            hlb_dp_drop(w, HLB_DROP_NO_BACKEND);
            out[i] = HLB_OUT_DROP;
            continue;
        }
        dst = &t->dips[dip];
    encap:
#define HLB_BODY_ENCAP                                                                  \
        do {                                                                            \
            uint32_t gre = dip != HLB_DIP_FORWARD && s->encap == HLB_ENCAP_GRE;         \
            uint32_t overhead = 20u + 4u * gre;                                         \
            uint32_t headroom = HLB_F_HEADROOM(f);                                      \
            uint16_t in_port = HLB_F_IN_PORT(f, burst_port);                            \
            uint32_t inner = pp->ip_tot_len;                                            \
            if (HLB_UNLIKELY(inner + overhead > ec.mtu)) {                              \
                struct hlb_pkt p = {.data = d, .len = len, .headroom = headroom,        \
                                    .in_port = in_port};                                \
                uint8_t v = HLB_V_DROP;                                                 \
                hlb_dp_frag_needed(w, &p, pp, overhead, &v);                            \
                out[i] = HLB_OUT_DROP;                                                  \
                if (v == HLB_V_TX) {                                                    \
                    HLB_F_SET(f, p.data, p.len);                                        \
                    out[i] = (uint8_t)p.out_port;                                       \
                }                                                                       \
                break;                                                                  \
            }                                                                           \
            if (HLB_UNLIKELY(!ec.gw_known)) {                                           \
                hlb_dp_drop(w, HLB_DROP_NO_GATEWAY);                                    \
                out[i] = HLB_OUT_DROP;                                                  \
                break;                                                                  \
            }                                                                           \
            if (HLB_UNLIKELY(headroom < overhead)) {                                    \
                hlb_dp_drop(w, HLB_DROP_NO_HEADROOM);                                   \
                out[i] = HLB_OUT_DROP;                                                  \
                break;                                                                  \
            }                                                                           \
            uint16_t out_port = ec.two_port ? 1 : in_port;                              \
            uint8_t *start = d - overhead;                                              \
            uint32_t tot = encap_write(&ec, dst, gre, overhead, inner, out_port, start);   \
            HLB_F_SET(f, start, HLB_ETH_HLEN + tot);                                    \
            out[i] = (uint8_t)out_port;                                                 \
            if (dip >= 0)                                                               \
                acc_count(&acc, t, s, dip, inner, HLB_ETH_HLEN + tot);                  \
            else if (dip == HLB_DIP_PINNED)                                             \
                acc_count_pinned(&acc, t, s, inner, HLB_ETH_HLEN + tot);                \
            else                                                                        \
                acc_count_forward(&acc, HLB_ETH_HLEN + tot);                            \
        } while (0)
        HLB_BODY_ENCAP;
    }
    w->st.rx_packets += n;
    w->st.rx_bytes += rx_bytes;

    /* Stage 2: pinned VIPs. */
    for (unsigned k = 0; k < n_pending; k++) {
        unsigned i = pending[k];
        HLB_BURST_FRAME f = frames[i];
        const struct hlb_service *s = svc[k];
        struct hlb_parsed *pp = &parsed[k];
        uint8_t *d = HLB_F_DATA(f);
        uint32_t len = HLB_F_LEN(f);
        int dip = pinned_dip(w, t, s, pp, hash[k], now);
        if (HLB_UNLIKELY(dip < 0)) {
            hlb_dp_drop(w, HLB_DROP_NO_BACKEND);
            out[i] = HLB_OUT_DROP;
            continue;
        }
        const struct hlb_dip *dst = &t->dips[dip];
        HLB_BODY_ENCAP;
    }
#undef HLB_BODY_ENCAP
    acc_flush_svc(&acc, t);
    w->st.fwd_packets += acc.fwd_packets;
    w->st.fwd_bytes += acc.fwd_bytes;
    if (acc.fwd_owner)
        w->sf->st.forwarded += acc.fwd_owner;
}


#define HLB_PASTE2(a, b) a##b
#define HLB_PASTE(a, b) HLB_PASTE2(a, b)
#define HLB_RUN_FN HLB_PASTE(HLB_FAST_FN, _run)
#define HLB_PEND_FN HLB_PASTE(HLB_FAST_FN, _pend)
#define HLB_PRUN_FN HLB_PASTE(HLB_FAST_FN, _prun)
#define HLB_ORUN_FN HLB_PASTE(HLB_FAST_FN, _orun)
#define HLB_TAKES_FN HLB_PASTE(HLB_FAST_FN, _takes)
#define HLB_CRUN_FN HLB_PASTE(HLB_FAST_FN, _crun)
#define HLB_SRUN_FN HLB_PASTE(HLB_FAST_FN, _srun)

/* The outer header of one forwarded frame (the lean pass's encapsulation) to the DIP
 * of index dip, whose tunnel destination is outer, counted on the DIP: expects
 * two_port, burst_port, eth0, eth1 and dctr in scope.  out[] is not written:
 * HLB_BURST_FN set every frame's to its lean port beforehand.  The run loops add up
 * their forwarded frames at the end (lean_run_done); the others use
 * HLB_LEAN_FORWARD, which also counts fwd and fwd_bytes. */
#define HLB_LEAN_ENCAP(fe, de, gre, ip_hdr, bsum, dip, outer, inner)                  \
    do {                                                                                \
        uint32_t overhead = 20u + 4u * (gre);                                           \
        uint16_t out_port = two_port ? 1 : HLB_F_IN_PORT(fe, burst_port);               \
        uint8_t *start = de - overhead;                                                 \
        uint32_t tos = de[HLB_ETH_HLEN + 1];                                            \
        uint32_t tot = (inner) + overhead;                                              \
        uint32_t tot_be = hlb_tot_be(tot);                                              \
        uint32_t odst = (outer);                                                        \
        /* One's complement sum: the destination added as one 32-bit word with      \
         * end-around carry (2^32 - 1 is a multiple of 0xffff), then folded in one     \
         * step: the upper half of sum + (sum rotated by 16) is its two halves added   \
         * with end-around carry. */                                                    \
        uint32_t sum;                                                                   \
        uint32_t carry = __builtin_add_overflow((bsum) + (tos << 8) + tot_be, odst, &sum); \
        sum += carry;                                                                   \
        sum = (sum + (sum << 16 | sum >> 16)) >> 16;                                    \
        /* The templates, then this frame's fields over them (plain stores: an      \
         * insert into a vector register costs two operations). */                      \
        _mm_storeu_si128((__m128i *)start, out_port ? eth1 : eth0);                     \
        _mm_storeu_si128((__m128i *)(start + 16), (ip_hdr));                            \
        uint32_t ver_tos_len = 0x45u | tos << 8 | tot_be << 16;                         \
        uint16_t csum = (uint16_t)~sum;                                                 \
        memcpy(start + 14, &ver_tos_len, 4);                                            \
        memcpy(start + 24, &csum, 2);                                                   \
        memcpy(start + 30, &odst, 4);                                                   \
        if (gre) {                                                                      \
            uint32_t g = hlb_htonl(HLB_ETHERTYPE_IPV4);  /* flags/version 0, IPv4 */    \
            memcpy(start + 34, &g, 4);                                                  \
        }                                                                               \
        uint32_t flen = HLB_ETH_HLEN + tot;                                             \
        HLB_F_PUSH(fe, overhead, flen);                                                 \
        dctr[dip].packets++;                                                            \
        dctr[dip].bytes += (inner);                                                     \
    } while (0)

/* HLB_LEAN_ENCAP, counted in fwd and fwd_bytes (in scope) as well. */
#define HLB_LEAN_FORWARD(fe, de, gre, ip_hdr, bsum, dip, outer, inner)                \
    do {                                                                                \
        HLB_LEAN_ENCAP(fe, de, gre, ip_hdr, bsum, dip, outer, inner);                   \
        fwd_bytes += HLB_ETH_HLEN + (inner) + 20u + 4u * (gre);                         \
        fwd++;                                                                          \
    } while (0)

/* Frame f goes on a run of frames to the service of `key`: one contiguous buffer, a
 * common frame (hlb_parse_fast() accepts it, into *pl) to that service, within the
 * MTU and its headroom once encapsulated.  The run loops take frames while this
 * holds. */
static inline __attribute__((always_inline)) int
HLB_TAKES_FN(HLB_BURST_FRAME f, uint64_t key, uint32_t overhead, uint32_t mtu,
             struct hlb_parsed *pl)
{
    if (HLB_UNLIKELY(HLB_F_MULTISEG(f)))
        return 0;
    if (HLB_UNLIKELY(!hlb_parse_fast(HLB_F_DATA(f), HLB_F_LEN(f), pl)))
        return 0;
    if (HLB_UNLIKELY(hlb_service_key(pl->t.dst_ip, pl->t.proto, pl->t.dst_port) != key))
        return 0;
    return HLB_LIKELY(pl->ip_tot_len + overhead <= mtu && HLB_F_HEADROOM(f) >= overhead);
}

/* What a run of frames to one unpinned service needs (crc32 with a slot array:
 * HLB_RUN_FN; ovs: HLB_ORUN_FN), and what the run adds up. */
struct lean_run {
    struct hlb_vip_table *t;
    const struct hlb_service *s;
    struct hlb_counter *dctr;
    const struct hlb_slot *slot;          /* crc32 */
    uint64_t key, m;
    __m128i eth0, eth1, ip;
    uint32_t crc, port0, total, gre, bsum, mtu, two_port;
    struct hlb_sf_table *sf;              /* cheetah-stateful: the SYN id's entries
                                             (hlb_sf_run_table) */
    uint32_t now;
    struct hlb_worker *w;                 /* cheetah SYNs: the mechanism's state, counters */
    /* out */
    uint64_t rx_bytes, fwd_bytes, inner_bytes;
    unsigned fwd;
};

/* The outputs of a run of frames first..i-1. */
static inline void lean_run_done(struct lean_run *r, unsigned first, unsigned i,
                                 uint64_t rx_bytes, uint64_t inner_bytes, uint32_t overhead)
{
    r->fwd = i - first;
    r->rx_bytes = rx_bytes;
    r->inner_bytes = inner_bytes;
    r->fwd_bytes = inner_bytes + (uint64_t)(i - first) * (HLB_ETH_HLEN + overhead);
}

/* The lean pass's inner loop for such a run: frames i, i+1, ... as long as each is
 * a frame the lean pass accepts for that same service; returns the index of the
 * first frame it did not take (the lean pass goes on from there).  A function of
 * its own, with every input copied into locals, so that its few values stay in
 * registers instead of competing with the whole lean pass's; gre, port0 and
 * two_port are constants in the common instance (IP-in-IP, one port, one-armed). */
static inline __attribute__((always_inline)) unsigned
HLB_PASTE(HLB_RUN_FN, _impl)(struct lean_run *r, HLB_BURST_FRAME *frames, unsigned i,
                             unsigned n, uint16_t burst_port, const uint32_t gre,
                             const uint32_t port0, const int two_port)
{
    struct hlb_counter *dctr = r->dctr;
    const struct hlb_slot *slot = r->slot;
    const uint64_t key = r->key, m = r->m;
    const __m128i eth0 = r->eth0, eth1 = r->eth1, ip = r->ip;
    const uint32_t crc = r->crc, total = r->total;
    const uint32_t bsum = r->bsum, mtu = r->mtu, overhead = 20u + 4u * gre;
    const unsigned first = i;
    uint64_t rx_bytes = 0, inner_bytes = 0;
    (void)burst_port;
    for (; i < n; i++) {
        HLB_BURST_FRAME f = frames[i];
        struct hlb_parsed pl;
        if (!HLB_TAKES_FN(f, key, overhead, mtu, &pl))
            break;
        uint8_t *d = HLB_F_DATA(f);
        uint32_t len = HLB_F_LEN(f);
        uint32_t inner = pl.ip_tot_len;
        uint32_t c = port0 ? hlb_crc32c_u16(crc, pl.t.dst_port) : crc;
        uint32_t h = hlb_crc32_finish(c, pl.t.src_ip, pl.t.src_port);
        const struct hlb_slot *sl = &slot[hlb_fastmod(h, m, total)];
        int dip = (int)sl->dip;
        HLB_LEAN_ENCAP(f, d, gre, ip, bsum, dip, sl->outer, inner);
        rx_bytes += len;
        inner_bytes += inner;
    }
    lean_run_done(r, first, i, rx_bytes, inner_bytes, overhead);
    return i;
}

static __attribute__((noinline)) unsigned
HLB_RUN_FN(struct lean_run *r, HLB_BURST_FRAME *frames, unsigned i, unsigned n,
           uint16_t burst_port)
{
    if (HLB_LIKELY(!r->gre && !r->port0 && !r->two_port))
        return HLB_PASTE(HLB_RUN_FN, _impl)(r, frames, i, n, burst_port, 0, 0, 0);
    return HLB_PASTE(HLB_RUN_FN, _impl)(r, frames, i, n, burst_port, r->gre, r->port0,
                                        (int)r->two_port);
}

/* The lean pass's loop for a run of frames to an unpinned ovs service with a live
 * bucket: frames i, i+1, ... as long as each is a frame the lean pass accepts for
 * that service (frame i is), returns the index of the first it did not take.  The
 * frames are taken first, their DIPs then picked all together (hlb_ovs_pick_burst:
 * the flow hashes and the bucket scores in vector lanes, a packet a lane), and the
 * outer headers written last. */
static inline __attribute__((always_inline)) unsigned
HLB_PASTE(HLB_ORUN_FN, _impl)(struct lean_run *r, HLB_BURST_FRAME *frames, unsigned i,
                              unsigned n, uint16_t burst_port, const uint32_t gre,
                              const int two_port)
{
    struct hlb_counter *dctr = r->dctr;
    const struct hlb_dip *dips = r->t->dips;
    const uint64_t key = r->key;
    const __m128i eth0 = r->eth0, eth1 = r->eth1, ip = r->ip;
    const uint32_t bsum = r->bsum, mtu = r->mtu, overhead = 20u + 4u * gre;
    uint32_t src[HLB_MAX_BURST], inner[HLB_MAX_BURST], dip[HLB_MAX_BURST];
    uint16_t sport[HLB_MAX_BURST], dport[HLB_MAX_BURST];
    src[0] = sport[0] = dport[0] = 0;     /* (frame i is always taken: for the compiler) */
    const unsigned first = i;
    uint64_t rx_bytes = 0, inner_bytes = 0;
    (void)burst_port;
    for (; i < n; i++) {
        HLB_BURST_FRAME f = frames[i];
        struct hlb_parsed pl;
        if (!HLB_TAKES_FN(f, key, overhead, mtu, &pl))
            break;
        src[i - first] = pl.t.src_ip;
        sport[i - first] = pl.t.src_port;
        dport[i - first] = pl.t.dst_port;
        inner[i - first] = pl.ip_tot_len;
        rx_bytes += HLB_F_LEN(f);
    }
    hlb_ovs_pick_burst(r->t, r->s, src, sport, dport, i - first, dip);
    for (unsigned k = 0; k < i - first; k++) {
        HLB_BURST_FRAME f = frames[first + k];
        uint8_t *d = HLB_F_DATA(f);
        HLB_LEAN_ENCAP(f, d, gre, ip, bsum, dip[k], dips[dip[k]].outer, inner[k]);
        inner_bytes += inner[k];
    }
    lean_run_done(r, first, i, rx_bytes, inner_bytes, overhead);
    return i;
}

static __attribute__((noinline)) unsigned
HLB_ORUN_FN(struct lean_run *r, HLB_BURST_FRAME *frames, unsigned i, unsigned n,
            uint16_t burst_port)
{
    if (HLB_LIKELY(!r->gre && !r->two_port))
        return HLB_PASTE(HLB_ORUN_FN, _impl)(r, frames, i, n, burst_port, 0, 0);
    return HLB_PASTE(HLB_ORUN_FN, _impl)(r, frames, i, n, burst_port, r->gre, (int)r->two_port);
}

/* The lean pass's loop for a run of frames to a cheetah service: frames i, i+1, ...
 * as long as each is a frame the lean pass accepts for that service, a TCP segment
 * without SYN whose options start NOP, NOP, timestamp (§10's common layout) and
 * whose cookie names a server of the pool; returns the index of the first frame it
 * did not take (possibly i: the general code then has it, e.g. a SYN, a segment
 * without a timestamp, or a bad cookie to count).  The same decode as
 * cheetah_step(), with the service's key and map in registers and the hashes of
 * the run computed together. */
static inline __attribute__((always_inline)) unsigned
HLB_PASTE(HLB_CRUN_FN, _impl)(struct lean_run *r, HLB_BURST_FRAME *frames, unsigned i,
                              unsigned n, uint16_t burst_port, const uint32_t gre,
                              const int two_port, const uint8_t mode)
{
    struct hlb_counter *dctr = r->dctr;
    const struct hlb_vip_table *t = r->t;
    const struct hlb_dip *dips = t->dips;
    struct hlb_service sv = *r->s;
    sv.ck_mode = mode;
    const uint64_t key = r->key;
    const __m128i eth0 = r->eth0, eth1 = r->eth1, ip = r->ip;
    const uint32_t bsum = r->bsum, mtu = r->mtu, overhead = 20u + 4u * gre;
    const uint32_t nop_nop_ts = hlb_htonl(0x0101080au);
    const unsigned first = i;
    uint64_t rx_bytes = 0, inner_bytes = 0;
    struct hlb_sf_table *sf = r->sf;
    uint32_t src[HLB_MAX_BURST], echo[HLB_MAX_BURST], inner[HLB_MAX_BURST];
    uint16_t sport[HLB_MAX_BURST], dport[HLB_MAX_BURST];
    uint64_t h[HLB_MAX_BURST];
    (void)burst_port;
    /* The frames taken, then their hashes all together (hlb_ck_hash_burst: vector
     * lanes), then each decoded and forwarded, up to the first whose cookie does
     * not name a server of the pool. */
    unsigned m = 0;
    for (; i < n; i++, m++) {
        HLB_BURST_FRAME f = frames[i];
        struct hlb_parsed pl;
        if (!HLB_TAKES_FN(f, key, overhead, mtu, &pl))
            break;
        const uint8_t *tcp = HLB_F_DATA(f) + HLB_ETH_HLEN + 20;
        uint32_t opt, e;
        memcpy(&opt, tcp + 20, 4);
        if (pl.t.proto != HLB_IPPROTO_TCP || (pl.tcp_flags & HLB_TCP_SYN) || tcp[12] < 0x80 ||
            pl.ip_tot_len < 20u + (tcp[12] >> 4) * 4u || opt != nop_nop_ts)
            break;
        memcpy(&e, tcp + 28, 4);
        echo[m] = __builtin_bswap32(e);
        src[m] = pl.t.src_ip;
        sport[m] = pl.t.src_port;
        dport[m] = pl.t.dst_port;
        inner[m] = pl.ip_tot_len;
    }
    /* The cookies' idents; stateful, this SMux the owner: the entries they name,
     * each a hit's server id in its sel (sf_decode.h).  A stateful ident left in
     * sel names no server: the loop below stops there and the general code takes
     * (and counts) the segment, as it does a bad cookie. */
    uint32_t sel[HLB_MAX_BURST], pos[HLB_MAX_BURST];
    struct hlb_sf_hits hits = {0, 0};
    const uint32_t tick = sf ? hlb_sf_tick(sf, r->now) : 0;
    if (m) {
        hlb_ck_hash_burst(r->s, src, sport, dport, m, h);
        hlb_ck_idents(echo, h, m, sel);
        if (sf && sv.sf_self != HLB_SF_NOT_OWNER)   /* (an SMux owning nothing has no entry) */
            hits = hlb_sf_decode_burst(sf, sv.sf_self, mode == HLB_COOKIE_CRC32C, tick, h, m,
                                       sel, pos);
    }
    unsigned k = 0;
    for (; k < m; k++) {
        int dip = hlb_ck_server_dip(t, &sv, sel[k]);
        if (dip < 0)
            break;
        HLB_BURST_FRAME f = frames[first + k];
        uint8_t *d = HLB_F_DATA(f);
        uint32_t len = HLB_F_LEN(f);
        HLB_LEAN_ENCAP(f, d, gre, ip, bsum, dip, dips[dip].outer, inner[k]);
        rx_bytes += len;
        inner_bytes += inner[k];
    }
    if (hits.hit)
        hlb_sf_refresh_hits(sf, hits, pos, k, m, tick);
    lean_run_done(r, first, first + k, rx_bytes, inner_bytes, overhead);
    return first + k;
}

static __attribute__((noinline)) unsigned
HLB_CRUN_FN(struct lean_run *r, HLB_BURST_FRAME *frames, unsigned i, unsigned n,
            uint16_t burst_port)
{
    if (HLB_LIKELY(!r->gre && !r->two_port && r->s->ck_mode == HLB_COOKIE_SIPHASH13))
        return HLB_PASTE(HLB_CRUN_FN, _impl)(r, frames, i, n, burst_port, 0, 0,
                                             HLB_COOKIE_SIPHASH13);
    return HLB_PASTE(HLB_CRUN_FN, _impl)(r, frames, i, n, burst_port, r->gre, (int)r->two_port,
                                         r->s->ck_mode);
}

#include "dp_burst_quic_body.h"   /* its QUIC counterpart: HLB_FAST_FN##_qrun */

/* The lean pass's loop for a run of SYNs to a cheetah service that this SMux places
 * (not one to forward to its owner; a pool with a live DIP): frames i, i+1, ... as
 * long as each is a frame the lean pass accepts for that service and a TCP SYN with
 * a timestamp option; returns the index of the first frame it did not take.  The
 * same steps as cheetah_step()'s for a SYN, in passes: the SYNs taken; for a
 * stateful VIP with owners, their H (hlb_ck_hash_burst: vector lanes); then each
 * SYN placed in arrival order. */
static inline __attribute__((always_inline)) unsigned
HLB_PASTE(HLB_SRUN_FN, _impl)(struct lean_run *r, HLB_BURST_FRAME *frames, unsigned i,
                              unsigned n, uint16_t burst_port, const uint32_t gre,
                              const int two_port)
{
    struct hlb_counter *dctr = r->dctr;
    struct hlb_vip_table *t = r->t;
    const struct hlb_service *s = r->s;
    const struct hlb_dip *dips = t->dips;
    const uint64_t key = r->key;
    const __m128i eth0 = r->eth0, eth1 = r->eth1, ip = r->ip;
    const uint32_t bsum = r->bsum, mtu = r->mtu, overhead = 20u + 4u * gre;
    struct hlb_sf_table *sf = r->sf;
    const int sf_syn = sf && s->sf_n_owners;         /* cheetah_sf_syn(): an index each */
    struct hlb_parsed pl[HLB_MAX_BURST];
    uint32_t src[HLB_MAX_BURST];
    uint16_t sport[HLB_MAX_BURST], dport[HLB_MAX_BURST];
    uint64_t h[HLB_MAX_BURST];
    uint8_t ts_off[HLB_MAX_BURST];
    const unsigned first = i;
    uint64_t rx_bytes = 0, inner_bytes = 0;
    (void)burst_port;
    unsigned m = 0;
    for (; i < n; i++, m++) {
        HLB_BURST_FRAME f = frames[i];
        if (!HLB_TAKES_FN(f, key, overhead, mtu, &pl[m]) || pl[m].t.proto != HLB_IPPROTO_TCP ||
            !(pl[m].tcp_flags & HLB_TCP_SYN) || pl[m].ip_tot_len < 40u)
            break;
        int off = hlb_ck_ts_off(HLB_F_DATA(f) + HLB_ETH_HLEN + 20, pl[m].ip_tot_len - 20u);
        if (off < 0)
            break;                        /* no timestamp: the connection-table path */
        ts_off[m] = (uint8_t)off;
        src[m] = pl[m].t.src_ip;
        sport[m] = pl[m].t.src_port;
        dport[m] = pl[m].t.dst_port;
        h[m] = 0;
    }
    if (sf_syn && m)
        hlb_ck_hash_burst(s, src, sport, dport, m, h);
    /* An owner's SYNs pop an index each (cheetah_syn_placed()): their partitions,
     * and the stack tops they will pop fetched together.  The table's arrays, the
     * round-robin position and the counters stay in locals for the run. */
    /* (an owner whose agents are re-reporting its connections places SYNs stateless) */
    const int held = sf_syn && s->sf_self != HLB_SF_NOT_OWNER && sf->hints_held;
    const int owner = sf_syn && s->sf_self != HLB_SF_NOT_OWNER && !held;
    const struct hlb_sf_arrays sa = owner ? hlb_sf_arrays_of(sf) : (struct hlb_sf_arrays){0};
    const int crc = s->ck_mode == HLB_COOKIE_CRC32C;
    uint32_t part[HLB_MAX_BURST];
    for (unsigned k = 0; owner && k < m; k++) {
        part[k] = hlb_sf_part_of(sf, h[k], crc);
        uint32_t top = (sa.n_free[part[k]] - 1u) & HLB_SF_INDEX_MASK;
        __builtin_prefetch(&sa.stack[hlb_sf_pos(sa.part_bits, part[k], top)], 1);
    }
    const uint32_t tick = owner ? hlb_sf_tick(sf, r->now) : 0;
    const uint32_t hint = HLB_COOKIE_HINT_MAGIC << 16 | hlb_sf_ident(s->sf_self, 0);
    const uint16_t *const server_ids = t->server_ids;
    /* not an owner: stateless SYNs of a cheetah-stateful VIP (cheetah_syn_placed()) */
    const uint32_t not_owner_stateless = sf_syn || s->affinity == HLB_AFF_CHEETAH_STATEFUL;
    const int rr = s->mechanism == HLB_MECH_RR;
    uint32_t *const rr_pos = &hlb_rr_next(t, r->w->id)[s - t->services];
    uint32_t pos = *rr_pos;
    const uint16_t *const weights = &t->weights[s->dip_first];
    const uint32_t n_dips = s->dip_count, dip_first = s->dip_first;
    uint64_t inserts = 0, exhausted = 0, stateless = 0;
    unsigned k = 0;
    for (; k < m; k++) {
        HLB_BURST_FRAME f = frames[first + k];
        uint8_t *d = HLB_F_DATA(f);
        uint8_t *tcp = d + HLB_ETH_HLEN + 20;
        uint32_t len = HLB_F_LEN(f), inner = pl[k].ip_tot_len;
        int dip;
        if (rr) {
            dip = (int)(dip_first + rr_live_next(weights, n_dips, &pos));
        } else {
            dip = cheetah_syn_dip(r->w, t, s, &pl[k].t);
            if (dip < 0)
                break;                    /* (nothing changed: the general code counts it) */
        }
        if (owner) {
            int idx = hlb_sf_pop(sa, part[k], hlb_sf_word(h[k], server_ids[dip], tick));
            if (HLB_LIKELY(idx >= 0)) {
                inserts++;
                ck_write_tsecr(tcp, tcp + ts_off[k], hint | (uint32_t)idx);
            } else {
                exhausted++;
            }
        } else {
            stateless += not_owner_stateless;
        }
        HLB_LEAN_ENCAP(f, d, gre, ip, bsum, dip, dips[dip].outer, inner);
        rx_bytes += len;
        inner_bytes += inner;
    }
    if (rr)
        *rr_pos = pos;
    r->w->st.ck_syns[s->mechanism] += k;
    r->w->st.ck_stateless_syns += stateless + exhausted;
    if (owner) {
        sf->st.inserts += inserts;
        sf->st.entries += inserts;
        sf->st.exhausted += exhausted;
    }
    if (held)
        sf->st.held_syns += k;
    lean_run_done(r, first, first + k, rx_bytes, inner_bytes, overhead);
    return first + k;
}

static __attribute__((noinline)) unsigned
HLB_SRUN_FN(struct lean_run *r, HLB_BURST_FRAME *frames, unsigned i, unsigned n,
            uint16_t burst_port)
{
    if (HLB_LIKELY(!r->gre && !r->two_port))
        return HLB_PASTE(HLB_SRUN_FN, _impl)(r, frames, i, n, burst_port, 0, 0);
    return HLB_PASTE(HLB_SRUN_FN, _impl)(r, frames, i, n, burst_port, r->gre, (int)r->two_port);
}

/* The frames of pinned services kept by the lean pass, in arrival order, and what
 * their loop (HLB_PEND_FN) needs and adds up. */
struct lean_pend {
    /* A frame's tuple as the connection table's key words (bytes 12..19 of the IPv4
     * header, then the ports and the protocol), with the TCP flags in bits 40..47
     * and the IP total length in bits 48..63 of k1. */
    uint64_t k0[HLB_MAX_BURST], k1[HLB_MAX_BURST];
    const struct hlb_service *svc[HLB_MAX_BURST];
    uint32_t hash[HLB_MAX_BURST];
    uint8_t idx[HLB_MAX_BURST];
    __m128i eth0, eth1, ip_ipip, ip_gre;
    uint32_t base_sum[2];
    int two_port;
    /* out */
    uint64_t fwd_bytes;
    unsigned fwd;
    unsigned dropped;                 /* frames with no backend (out[] says so) */
};

/* A packed k1 (struct lean_pend) of a TCP segment with SYN and without ACK. */
static inline int lean_pure_syn(uint64_t k1)
{
    return (uint8_t)(k1 >> 32) == HLB_IPPROTO_TCP &&
           ((k1 >> 40) & (HLB_TCP_SYN | HLB_TCP_ACK)) == HLB_TCP_SYN;
}

/* The pinned frames after the lean pass's loop (their flow-cache sets were prefetched
 * meanwhile): the full body's stage 2, with the common case decided here.  A
 * function of its own so that its values stay in registers; `single` (a constant
 * in each instance) says that every frame goes to one IP-in-IP service, one-armed. */
static inline __attribute__((always_inline)) void
HLB_PASTE(HLB_PEND_FN, _impl)(struct hlb_worker *w, struct hlb_vip_table *t,
                              struct lean_pend *p, unsigned n_pend, HLB_BURST_FRAME *frames,
                              uint8_t *out, uint16_t burst_port, uint32_t now, const int single)
{
    const __m128i eth0 = p->eth0, eth1 = p->eth1, ip_ipip = p->ip_ipip, ip_gre = p->ip_gre;
    const uint32_t base_sum[2] = {p->base_sum[0], p->base_sum[1]};
    const int two_port = single ? 0 : p->two_port;
    const struct hlb_service *const svc0 = p->svc[0];
    const struct hlb_dip *dips = t->dips;
    struct burst_acc acc = acc_init(w, t);
    struct hlb_counter *dctr = acc.dctr;
    uint64_t fwd_bytes = 0;
    unsigned fwd = 0;
    (void)burst_port;
    struct hlb_conn_table *ct = w->ct;
    /* The common case decided here: an established TCP segment (no FIN, no RST)
     * whose live entry sits in its home line, pinned under the running table,
     * with its timer not due for a refresh.  That is exactly the case in which
     * pinned_dip() only counts a hit and returns the entry's DIP; every other
     * case goes to pinned_dip() itself, which finds the same entry.  The entry is
     * read from the flow cache when it holds a copy (equal to the entry, see
     * struct hlb_conn_fc_entry), else from the table, and then copied there. */
    const uint32_t est_to = hlb_conn_timeout_of(ct, HLB_CONN_EST);
    const uint32_t est_slack = est_to / 4 < 1000u ? est_to / 4 : 1000u;
    const uint32_t gen = t->gen;
    uint64_t hits = 0, fc_hits = 0;
    unsigned dropped = 0;
    /* The cache sets were prefetched by the lean pass; the table lines of the
     * frames the cache does not hold are fetched now, all together.  (Only a hint:
     * the decision below looks again, in arrival order.) */
    for (unsigned k = 0; k < n_pend; k++)
        if (!lean_pure_syn(p->k1[k]) &&
            !hlb_conn_fc_find(ct, p->hash[k], p->k0[k], p->k1[k] & HLB_CONN_K1_MASK))
            hlb_conn_prefetch(ct, p->hash[k]);
    for (unsigned k = 0; k < n_pend; k++) {
        unsigned fi = p->idx[k];
        const struct hlb_service *ps = single ? svc0 : p->svc[k];
        uint64_t k0 = p->k0[k], k1 = p->k1[k];
        uint32_t h = p->hash[k];
        int dip = -1;
        const int est_segment = (uint8_t)(k1 >> 32) == HLB_IPPROTO_TCP &&
                                !((k1 >> 40) & (HLB_TCP_RST | HLB_TCP_FIN));
        /* Pure SYNs (their whole bucket is prefetched: likely inserts) skip the
         * cache; the table gives the same answer. */
        const struct hlb_conn_fc_entry *c =
            est_segment && !lean_pure_syn(k1) ? hlb_conn_fc_find(ct, h, k0, k1 & HLB_CONN_K1_MASK)
                                              : NULL;
        if (c && c->table_gen == gen && hlb_time_after(c->expire, now) &&
            (uint32_t)(c->expire - now) + est_slack >= est_to) {
            dip = (int)c->dip_index;
            hits++;
            fc_hits++;
            goto decided;
        }
        const struct hlb_conn_bucket *cb = hlb_conn_bucket_of(ct, h);
        unsigned home = hlb_conn_home(h);
        for (unsigned j = home; j < home + HLB_CONN_LINE_WAYS; j++) {
            const struct hlb_conn_entry *e = &cb->e[j];
            uint64_t w0, w1;
            memcpy(&w0, e, 8);
            memcpy(&w1, (const uint8_t *)e + 8, 8);
            if (w0 != k0 || ((w1 ^ k1) & HLB_CONN_K1_MASK) || e->state == HLB_CONN_FREE ||
                !hlb_time_after(e->expire, now))
                continue;
            /* The entry hlb_conn_find() returns. */
            if (HLB_LIKELY(e->state == HLB_CONN_EST && est_segment && e->table_gen == gen &&
                           (uint32_t)(e->expire - now) + est_slack >= est_to)) {
                dip = (int)e->dip_index;
                hits++;
                hlb_conn_fc_store(ct, h, k0, k1 & HLB_CONN_K1_MASK, e);
            }
            break;
        }
        if (dip < 0) {
            dip = pinned_dip_packed(w, t, ps, k0, k1, h, now);
            if (HLB_UNLIKELY(dip < 0)) {
                hlb_dp_drop(w, HLB_DROP_NO_BACKEND);
                out[fi] = HLB_OUT_DROP;
                dropped++;
                continue;
            }
        }
    decided:;
        uint32_t inner = (uint32_t)(k1 >> 48);
        const uint32_t pgre = single ? 0 : ps->encap == HLB_ENCAP_GRE;
        HLB_BURST_FRAME pf = frames[fi];
        uint8_t *pd = HLB_F_DATA(pf);
        HLB_LEAN_FORWARD(pf, pd, pgre, pgre ? ip_gre : ip_ipip, base_sum[pgre], dip,
                       dips[dip].outer, inner);
        if (ps != acc.svc) {
            acc_flush_svc(&acc, t);
            acc.svc = ps;
        }
        acc.svc_packets++;
        acc.svc_bytes += inner;
    }
    acc_flush_svc(&acc, t);
    w->st.conn_hits += hits;
    ct->fc_hits += fc_hits;
    p->fwd = fwd;
    p->dropped = dropped;
    p->fwd_bytes = fwd_bytes;
}

static __attribute__((noinline)) void
HLB_PEND_FN(struct hlb_worker *w, struct hlb_vip_table *t, struct lean_pend *p, unsigned n_pend,
            HLB_BURST_FRAME *frames, uint8_t *out, uint16_t burst_port, uint32_t now)
{
    int single = !p->two_port && p->svc[0]->encap != HLB_ENCAP_GRE;
    for (unsigned k = 1; k < n_pend && single; k++)
        single = p->svc[k] == p->svc[0];
    if (HLB_LIKELY(single))
        HLB_PASTE(HLB_PEND_FN, _impl)(w, t, p, n_pend, frames, out, burst_port, now, 1);
    else
        HLB_PASTE(HLB_PEND_FN, _impl)(w, t, p, n_pend, frames, out, burst_port, now, 0);
}

/* The first step of the lean pass for a run of frames to one pinned service:
 * frames i, i+1, ... as long as each is a frame the lean pass accepts for it, are
 * added to the pending frames (from index np on) with their bucket lines
 * prefetched; returns the index of the first frame it did not take.  Only called
 * while no frame has been left to the full body (the pinned frames' order).
 *
 * With `decide`, frames are finished here instead, as long as the flow cache
 * decides them (the common case of HLB_PEND_FN, from a copy), up to the first
 * frame it does not: from there on every frame is added to the pending ones.  The
 * caller allows it only when no pinned frame of the burst is pending yet (so the
 * connection table is exactly as the frame would find it in arrival order: a
 * decision from the cache writes nothing) and the burst holds no ARP frame (the
 * full body runs pinned frames after every other frame, so a gateway ARP anywhere
 * in the burst changes the MAC of every pinned frame). */
struct lean_prun {
    const struct hlb_conn_table *ct;
    const struct hlb_service *s;
    const uint32_t *pre_hash;         /* valid when prefetched */
    uint64_t key;
    uint32_t mtu, overhead;
    int prefetched;
    /* deciding here (see above) */
    int decide;
    const struct hlb_vip_table *t;
    struct hlb_counter *dctr;         /* this worker's DIP counters */
    __m128i eth0, eth1, ip;
    uint32_t gre, bsum, gen, now;
    int two_port;
    /* out */
    uint64_t rx_bytes;                /* of the frames added to the pending ones */
    unsigned np;                      /* pending frames now */
    unsigned decided;                 /* frames finished here */
    uint64_t decided_rx_bytes, fwd_bytes, inner_bytes;
};

static inline __attribute__((always_inline)) unsigned
HLB_PASTE(HLB_PRUN_FN, _impl)(struct lean_prun *r, struct lean_pend *pend, unsigned np,
                              HLB_BURST_FRAME *frames, unsigned i, unsigned n,
                              uint16_t burst_port, const uint32_t gre, const int two_port,
                              const int prefetched)
{
    const struct hlb_conn_table *ct = r->ct;
    const struct hlb_service *s = r->s;
    const uint32_t *pre_hash = r->pre_hash;
    const uint64_t key = r->key;
    const uint32_t mtu = r->mtu, overhead = r->overhead;
    uint64_t rx_bytes = 0;
    int decide = r->decide;
    const struct hlb_dip *dips = r->t->dips;
    struct hlb_counter *dctr = r->dctr;
    const __m128i eth0 = r->eth0, eth1 = r->eth1, ip = r->ip;
    const uint32_t bsum = r->bsum, gen = r->gen, now = r->now;
    const uint32_t est_to = hlb_conn_timeout_of(ct, HLB_CONN_EST);
    const uint32_t est_slack = est_to / 4 < 1000u ? est_to / 4 : 1000u;
    uint64_t fwd_bytes = 0, inner_bytes = 0, decided_rx_bytes = 0;
    unsigned fwd = 0;
    (void)burst_port;
    for (; i < n; i++) {
        HLB_BURST_FRAME f = frames[i];
        struct hlb_parsed pl;
        if (!HLB_TAKES_FN(f, key, overhead, mtu, &pl))
            break;
        uint8_t *d = HLB_F_DATA(f);
        uint32_t len = HLB_F_LEN(f);
        uint32_t inner = pl.ip_tot_len;
        uint32_t h = prefetched ? pre_hash[i] : hlb_conn_hash(&pl.t);
        uint8_t tcp_flags = pl.t.proto == HLB_IPPROTO_TCP ? d[HLB_ETH_HLEN + 20 + 13] : 0;
        if ((tcp_flags & (HLB_TCP_SYN | HLB_TCP_ACK)) == HLB_TCP_SYN)
            hlb_conn_prefetch_bucket(ct, h);   /* likely an insert */
        else if (!prefetched)
            hlb_conn_fc_prefetch(ct, h);
        uint64_t k0, k1;
        hlb_conn_key_at(d + HLB_ETH_HLEN, pl.t.proto, &k0, &k1);
        if (decide) {
            /* HLB_PEND_FN's decision from the cache, for the same frames. */
            const struct hlb_conn_fc_entry *c = NULL;
            if (pl.t.proto == HLB_IPPROTO_TCP && !(tcp_flags & (HLB_TCP_RST | HLB_TCP_FIN)) &&
                (tcp_flags & (HLB_TCP_SYN | HLB_TCP_ACK)) != HLB_TCP_SYN)
                c = hlb_conn_fc_find(ct, h, k0, k1);
            if (c && c->table_gen == gen && hlb_time_after(c->expire, now) &&
                (uint32_t)(c->expire - now) + est_slack >= est_to) {
                int dip = (int)c->dip_index;
                HLB_LEAN_FORWARD(f, d, gre, ip, bsum, dip, dips[dip].outer, inner);
                inner_bytes += inner;
                decided_rx_bytes += len;
                continue;
            }
            decide = 0;
        }
        pend->k0[np] = k0;
        pend->k1[np] = k1 | (uint64_t)tcp_flags << 40 | (uint64_t)inner << 48;
        pend->svc[np] = s;
        pend->hash[np] = h;
        pend->idx[np++] = (uint8_t)i;
        rx_bytes += len;
    }
    r->rx_bytes = rx_bytes;
    r->np = np;
    r->decided = fwd;
    r->decided_rx_bytes = decided_rx_bytes;
    r->fwd_bytes = fwd_bytes;
    r->inner_bytes = inner_bytes;
    return i;
}

/* HLB_PRUN_FN_impl with gre, two_port and prefetched constant in the common instance
 * (IP-in-IP, one-armed, flow-cache sets prefetched), as HLB_RUN_FN. */
static __attribute__((noinline)) unsigned
HLB_PRUN_FN(struct lean_prun *r, struct lean_pend *pend, unsigned np, HLB_BURST_FRAME *frames,
            unsigned i, unsigned n, uint16_t burst_port)
{
    if (HLB_LIKELY(!r->gre && !r->two_port && r->prefetched))
        return HLB_PASTE(HLB_PRUN_FN, _impl)(r, pend, np, frames, i, n, burst_port, 0, 0, 1);
    return HLB_PASTE(HLB_PRUN_FN, _impl)(r, pend, np, frames, i, n, burst_port, r->gre,
                                         r->two_port, r->prefetched);
}

/* The lean pass run first over a burst.  It finishes the common frames: untagged
 * IPv4 TCP/UDP without options, forwarded to an unpinned service, or to a pinned
 * one through the same connection-table step as the full body (pinned_dip, after
 * the loop, with the frames' bucket lines prefetched meanwhile).  Every other frame
 * is left, untouched and uncounted, to the full body (its index in slow[]), which
 * sees those frames in arrival order.  The outcome of every frame is the full
 * body's on the whole burst, because the only state frames share is kept in order:
 *   - the gateway MAC: the pass stops at the first ARP frame from the gateway and
 *     hands it, the frames behind it and the pinned frames before it to the full
 *     body (which runs pinned frames after all the others, that ARP included);
 *   - the connection table: a pinned frame behind any frame left to the full body
 *     is left to it too, so pinned frames reach the table in arrival order.
 * The pass only does the same work with fewer instructions: the service of the
 * previous frame is reused, and the outer header comes from two 16-byte registers
 * prepared once per burst, into which only the TOS, the length and the checksum
 * are inserted, plus a 4-byte store of the destination.  out[] holds every frame's
 * lean port on entry (HLB_BURST_FN); the pass writes only drops (pinned frames
 * with no backend, counted in *dropped).
 * Returns the number of frames left in slow[]. */
static __attribute__((noinline)) unsigned
HLB_FAST_FN(struct hlb_worker *w, struct hlb_vip_table *t, HLB_BURST_FRAME *frames,
            uint8_t *out, unsigned n, uint16_t burst_port, uint8_t *slow, unsigned *dropped,
            uint32_t now)
{
    const struct hlb_dp_config *c = &w->cfg;
    unsigned n_slow = 0, i = 0;
    *dropped = 0;
    (void)burst_port;
    if (HLB_UNLIKELY(!c->gw_known))
        goto rest;

    /* Outer header bytes 0..15 per output port: gateway MAC, port MAC, type IPv4,
     * version/IHL (TOS inserted per packet); bytes 16..31 per encapsulation: length
     * and checksum inserted per packet, ID 0, DF, TTL, protocol, source, and the
     * first half of the destination, overwritten by a 4-byte store of it. */
    uint8_t hdr[HLB_MAX_PORTS + 2][16];
    for (int port = 0; port < HLB_MAX_PORTS; port++) {
        memcpy(hdr[port], c->gw_mac, 6);
        memcpy(hdr[port] + 6, c->port_mac[port], 6);
        hdr[port][12] = 0x08;
        hdr[port][13] = 0x00;
        hdr[port][14] = 0x45;
        hdr[port][15] = 0;
    }
    uint32_t base_sum[2];
    for (int gre = 0; gre < 2; gre++) {
        uint8_t *b = hdr[HLB_MAX_PORTS + gre];
        uint8_t proto = gre ? HLB_IPPROTO_GRE : HLB_IPPROTO_IPIP;
        memset(b, 0, 16);
        b[4] = HLB_IP_DF >> 8;
        b[6] = c->outer_ttl;
        b[7] = proto;
        memcpy(b + 10, &c->self_ip, 4);
        /* In memory order: the header's 16-bit words as little-endian loads see
         * them.  A one's complement sum commutes with swapping the bytes of every
         * word (RFC 1071 2.B), so the checksum comes out ready to store. */
        base_sum[gre] = 0x45u + hlb_htons(HLB_IP_DF) + ((uint32_t)proto << 8 | c->outer_ttl) +
                        (c->self_ip >> 16) + (c->self_ip & 0xffff);
    }
    const __m128i eth0 = _mm_loadu_si128((const __m128i *)hdr[0]);
    const __m128i eth1 = _mm_loadu_si128((const __m128i *)hdr[1]);
    const __m128i ip_ipip = _mm_loadu_si128((const __m128i *)hdr[HLB_MAX_PORTS]);
    const __m128i ip_gre = _mm_loadu_si128((const __m128i *)hdr[HLB_MAX_PORTS + 1]);
    const uint32_t mtu = c->mtu;
    const int two_port = c->two_port;
    const int pin_ok = w->ct != NULL;

    uint64_t rx_bytes = 0, fwd_bytes = 0;
    unsigned fwd = 0, handled = 0;
    /* The service of the previous frame (NULL: none, or not for this pass), and the
     * counts of the current run of frames to it. */
    uint64_t last_key = 0;
    const struct hlb_service *s = NULL;
    int s_pinned = 0;
    /* What the frames of service s need, read once per run of frames to it. */
    uint32_t sv_gre = 0, sv_overhead = 20, sv_bsum = base_sum[0];
    __m128i sv_ip = ip_ipip;
    int sv_slots = 0;                     /* crc32 with a slot array: the short path */
    int sv_ovs = 0;                       /* ovs with a live bucket: its run loop */
    int sv_cheetah = 0;                   /* cheetah: its run loop, else the general code */
    uint32_t sv_crc = 0, sv_port0 = 0, sv_total = 1;
    uint64_t sv_m = 0;
    const struct hlb_slot *sv_slot = NULL;
    uint32_t run_packets = 0;
    uint64_t run_bytes = 0;
    struct hlb_counter *sctr = hlb_svc_counters(t, w->id);
    struct hlb_counter *dctr = hlb_dip_counters(t, w->id);
    const struct hlb_dip *dips = t->dips;
    /* Frames of pinned services, looked up after the loop (their bucket lines are
     * prefetched meanwhile).  The connection table must see them in arrival order
     * relative to the pinned frames the full body handles after this pass, so a
     * pinned frame behind any frame left to the full body is left to it as well. */
    struct lean_pend pend;
    uint64_t pend_rx_bytes = 0;
    unsigned n_pend = 0;
    unsigned decided = 0;                 /* pinned frames finished by HLB_PRUN_FN */

    /* Connection-table prefetch pass: while pinned traffic flows, the flow-cache
     * set of every frame is prefetched before any frame is processed (the table
     * lines of the frames it does not hold are prefetched together later, in
     * HLB_PEND_FN).  A line of a large table usually misses the TLB too, and the
     * prefetch then holds up retirement during the page walk; issued together,
     * many walks overlap instead of one or two per frame of the main loop.  The
     * hash is read at the fixed offsets of an untagged IPv4 header without options:
     * for every frame hlb_parse_fast() accepts, these are the bytes it parses, so
     * pre_hash[i] equals hlb_conn_hash() of its tuple.  For other frames the
     * prefetch is only wasted. */
    uint32_t pre_hash[HLB_MAX_BURST];
    const int prefetched = pin_ok && w->pinned_recently;
    int arp_in_burst = 0;                 /* any ARP frame: see HLB_PRUN_FN's decide */
    if (prefetched) {
        const struct hlb_conn_table *pct = w->ct;
        for (unsigned k = 0; k < n; k++) {
            HLB_BURST_FRAME pf = frames[k];
            if (HLB_UNLIKELY(HLB_F_LEN(pf) < HLB_ETH_HLEN + 24)) {
                arp_in_burst = 1;         /* (a short frame: not worth telling apart) */
                continue;
            }
            uint16_t type;
            memcpy(&type, HLB_F_DATA(pf) + 12, 2);
            arp_in_burst |= type == hlb_htons(HLB_ETHERTYPE_ARP);
            const uint8_t *pd = HLB_F_DATA(pf) + HLB_ETH_HLEN;
            uint64_t k0, k1;
            uint8_t proto = pd[9];
            hlb_conn_key_at(pd, proto, &k0, &k1);
            uint32_t h = hlb_conn_hash_words(k0, k1);
            pre_hash[k] = h;
            /* A pure SYN probably opens a connection: its table line (the loop
             * adds its bucket); any other frame: its cache set (its table line
             * follows in HLB_PEND_FN if the cache does not hold it). */
            uint8_t flags = HLB_F_LEN(pf) >= HLB_ETH_HLEN + 20 + 14 ? pd[20 + 13] : 0;
            if (proto == HLB_IPPROTO_TCP && (flags & (HLB_TCP_SYN | HLB_TCP_ACK)) == HLB_TCP_SYN)
                hlb_conn_prefetch(pct, h);
            else
                hlb_conn_fc_prefetch(pct, h);
        }
    }

    for (; i < n; i++) {
        HLB_BURST_FRAME f = frames[i];
        if (HLB_UNLIKELY(HLB_F_MULTISEG(f)))
            goto slow_frame;
        uint8_t *d = HLB_F_DATA(f);
        uint32_t len = HLB_F_LEN(f);
        struct hlb_parsed pl;
        if (HLB_UNLIKELY(!hlb_parse_fast(d, len, &pl)))
            goto slow_frame;
        uint64_t key = hlb_service_key(pl.t.dst_ip, pl.t.proto, pl.t.dst_port);
        if (HLB_UNLIKELY(key != last_key)) {
            if (run_packets) {
                struct hlb_counter *sc = &sctr[s - t->services];
                sc->packets += run_packets;
                sc->bytes += run_bytes;
                run_packets = 0;
                run_bytes = 0;
            }
            last_key = key;
            s = hlb_table_lookup(t, pl.t.dst_ip, pl.t.proto, pl.t.dst_port);
            if (s && HLB_UNLIKELY(hlb_svc_has_pins(s)))
                s = NULL;                 /* flow pins: the full body looks them up */
            s_pinned = s && s->pin && pin_ok && !hlb_aff_cookie(s->affinity);
            if (s) {
                sv_gre = s->encap == HLB_ENCAP_GRE;
                sv_overhead = 20u + 4u * sv_gre;
                sv_bsum = base_sum[sv_gre];
                sv_ip = sv_gre ? ip_gre : ip_ipip;
                sv_slots = s->selection == HLB_SEL_CRC32 && s->weight_total != 0 &&
                           s->slot_first != HLB_NO_SLOTS;
                sv_crc = s->crc_fixed;
                sv_port0 = s->port == 0;
                sv_total = s->weight_total;
                sv_m = s->weight_mod_m;
                sv_slot = sv_slots ? &t->slots[s->slot_first] : NULL;
                sv_ovs = s->selection == HLB_SEL_OVS && s->ovs_live != 0;
                sv_cheetah = hlb_aff_cookie(s->affinity);
            }
        }
        if (HLB_UNLIKELY(!s))
            goto slow_frame;
        uint32_t inner = pl.ip_tot_len;
        if (HLB_UNLIKELY(inner + sv_overhead > mtu || HLB_F_HEADROOM(f) < sv_overhead))
            goto slow_frame;
        if (s_pinned) {
            if (HLB_UNLIKELY(n_slow))
                goto slow_frame;
            if (n_pend == 0 && prefetched && !arp_in_burst) {
                /* Frames of this service from this one on: decided by the flow
                 * cache where it can (HLB_PRUN_FN), the rest pending. */
                struct lean_prun r = {.ct = w->ct, .s = s, .pre_hash = pre_hash,
                                      .key = last_key, .mtu = mtu, .overhead = sv_overhead,
                                      .prefetched = prefetched, .decide = 1, .t = t, .dctr = dctr,
                                      .eth0 = eth0, .eth1 = eth1, .ip = sv_ip, .gre = sv_gre,
                                      .bsum = sv_bsum, .gen = t->gen, .now = now,
                                      .two_port = two_port};
                unsigned next = HLB_PRUN_FN(&r, &pend, n_pend, frames, i, n, burst_port);
                if (HLB_LIKELY(next > i)) {
                    n_pend = r.np;
                    pend_rx_bytes += r.rx_bytes;
                    if (r.decided) {
                        struct hlb_counter *sc = &sctr[s - t->services];
                        sc->packets += r.decided;
                        sc->bytes += r.inner_bytes;
                        decided += r.decided;
                        handled += r.decided;
                        fwd += r.decided;
                        fwd_bytes += r.fwd_bytes;
                        rx_bytes += r.decided_rx_bytes;
                    }
                    i = next - 1;
                    continue;
                }
            }
            uint32_t h = prefetched ? pre_hash[i] : hlb_conn_hash(&pl.t);
            /* Read here rather than taken from pl: only pinned frames need the
             * flags, and the compiler then drops them for the others. */
            uint8_t tcp_flags = pl.t.proto == HLB_IPPROTO_TCP ? d[HLB_ETH_HLEN + 20 + 13] : 0;
            if ((tcp_flags & (HLB_TCP_SYN | HLB_TCP_ACK)) == HLB_TCP_SYN)
                hlb_conn_prefetch_bucket(w->ct, h);   /* likely an insert */
            else if (!prefetched)
                hlb_conn_fc_prefetch(w->ct, h);
            hlb_conn_key(&pl.t, &pend.k0[n_pend], &pend.k1[n_pend]);
            pend.k1[n_pend] |= (uint64_t)tcp_flags << 40 | (uint64_t)inner << 48;
            pend_rx_bytes += len;
            pend.svc[n_pend] = s;
            pend.hash[n_pend] = h;
            pend.idx[n_pend++] = (uint8_t)i;
            if (i + 1 < n) {
                /* The frames behind, while they go to the same service: its own loop. */
                struct lean_prun r = {.ct = w->ct, .s = s, .pre_hash = pre_hash,
                                      .key = last_key, .mtu = mtu, .overhead = sv_overhead,
                                      .prefetched = prefetched, .t = t};
                unsigned next = HLB_PRUN_FN(&r, &pend, n_pend, frames, i + 1, n, burst_port);
                n_pend = r.np;
                pend_rx_bytes += r.rx_bytes;
                i = next - 1;
            }
            continue;
        }
/* A run loop's frames into the lean pass's totals, and on after them. */
#define HLB_RUN_ADD(r, next)                                                            \
        do {                                                                            \
            rx_bytes += (r).rx_bytes;                                                   \
            fwd_bytes += (r).fwd_bytes;                                                 \
            fwd += (r).fwd;                                                             \
            handled += (r).fwd;                                                         \
            run_packets += (r).fwd;                                                     \
            run_bytes += (r).inner_bytes;                                               \
            i = (next) - 1;                                                             \
        } while (0)
        if (HLB_UNLIKELY(sv_cheetah)) {   /* this frame and those behind it to s */
            struct lean_run r = {.t = t, .s = s, .dctr = dctr, .key = last_key, .eth0 = eth0,
                                 .eth1 = eth1, .ip = sv_ip, .gre = sv_gre, .bsum = sv_bsum,
                                 .mtu = mtu, .two_port = (uint32_t)two_port,
                                 .sf = hlb_sf_run_table(w, s),
                                 .now = now, .w = w};
            int quic = pl.t.proto == HLB_IPPROTO_UDP;
            unsigned next = quic ? HLB_PASTE(HLB_FAST_FN, _qrun)(&r, frames, i, n, burst_port)
                                 : HLB_CRUN_FN(&r, frames, i, n, burst_port);
            if (next == i) {
                /* SYNs, in arrival order with the general code's frames: only while
                 * it has none yet (the mechanism's position, the stacks).  A pool of
                 * weight total 0 has no DIP for them, a non-owner forwards them. */
                if (!quic && n_slow == 0 && s->weight_total != 0 &&
                    !(r.sf && s->sf_n_owners && s->sf_self == HLB_SF_NOT_OWNER))
                    next = HLB_SRUN_FN(&r, frames, i, n, burst_port);
                if (next == i)
                    goto slow_frame;
            } else if (quic) {
                w->st.quic_decoded += r.fwd;
            } else {
                w->st.ck_decoded += r.fwd;
            }
            HLB_RUN_ADD(r, next);
            continue;
        }
        if (sv_ovs) {                     /* this frame and those behind it to s */
            struct lean_run r = {.t = t, .s = s, .dctr = dctr, .key = last_key, .eth0 = eth0,
                                 .eth1 = eth1, .ip = sv_ip, .gre = sv_gre, .bsum = sv_bsum,
                                 .mtu = mtu, .two_port = (uint32_t)two_port};
            unsigned next = HLB_ORUN_FN(&r, frames, i, n, burst_port);
            HLB_RUN_ADD(r, next);
            continue;
        }
        int dip;
        uint32_t outer;
        if (HLB_LIKELY(sv_slots)) {       /* select_dip() with the service's fields at hand */
            uint32_t c = sv_port0 ? hlb_crc32c_u16(sv_crc, pl.t.dst_port) : sv_crc;
            uint32_t h = hlb_crc32_finish(c, pl.t.src_ip, pl.t.src_port);
            const struct hlb_slot *sl = &sv_slot[hlb_fastmod(h, sv_m, sv_total)];
            dip = (int)sl->dip;
            outer = sl->outer;
        } else {
            dip = select_dip(t, s, &pl.t);
            if (HLB_UNLIKELY(dip < 0))
                goto slow_frame;
            outer = dips[dip].outer;
        }
        HLB_LEAN_FORWARD(f, d, sv_gre, sv_ip, sv_bsum, dip, outer, inner);
        rx_bytes += len;
        handled++;
        run_packets++;
        run_bytes += inner;
        if (HLB_LIKELY(sv_slots) && i + 1 < n) {
            /* The frames behind, while they go to the same service: its own loop. */
            struct lean_run r = {.t = t, .dctr = dctr, .slot = sv_slot, .key = last_key,
                                 .m = sv_m, .eth0 = eth0, .eth1 = eth1, .ip = sv_ip,
                                 .crc = sv_crc, .port0 = sv_port0, .total = sv_total,
                                 .gre = sv_gre, .bsum = sv_bsum, .mtu = mtu,
                                 .two_port = (uint32_t)two_port};
            unsigned next = HLB_RUN_FN(&r, frames, i + 1, n, burst_port);
            HLB_RUN_ADD(r, next);
        }
#undef HLB_RUN_ADD
        continue;
    slow_frame:
        slow[n_slow++] = (uint8_t)i;
        if (HLB_F_LEN(f) >= HLB_ETH_HLEN + 28 && !HLB_F_MULTISEG(f)) {
            uint16_t type;
            uint32_t spa;
            memcpy(&type, HLB_F_DATA(f) + 12, 2);
            memcpy(&spa, HLB_F_DATA(f) + HLB_ETH_HLEN + 14, 4);
            if (HLB_UNLIKELY(type == hlb_htons(HLB_ETHERTYPE_ARP) && spa == c->gw_ip)) {
                /* The full body runs pinned frames after every unpinned one, this
                 * ARP included: the pinned frames kept so far go to it as well
                 * (slow[] stays in arrival order). */
                if (n_pend) {
                    uint8_t merged[HLB_MAX_BURST];
                    unsigned a = 0, b = 0, m = 0;
                    while (a < n_slow || b < n_pend)
                        merged[m++] = b == n_pend || (a < n_slow && slow[a] < pend.idx[b])
                                          ? slow[a++] : pend.idx[b++];
                    memcpy(slow, merged, m);
                    n_slow = m;
                    n_pend = 0;
                    pend_rx_bytes = 0;
                }
                i++;
                break;
            }
        }
    }
    if (run_packets) {
        struct hlb_counter *sc = &sctr[s - t->services];
        sc->packets += run_packets;
        sc->bytes += run_bytes;
    }
    /* Pinned frames: the full body's stage 2 (same connection-table steps). */
    if (n_pend) {
        pend.eth0 = eth0;
        pend.eth1 = eth1;
        pend.ip_ipip = ip_ipip;
        pend.ip_gre = ip_gre;
        pend.base_sum[0] = base_sum[0];
        pend.base_sum[1] = base_sum[1];
        pend.two_port = two_port;
        HLB_PEND_FN(w, t, &pend, n_pend, frames, out, burst_port, now);
        rx_bytes += pend_rx_bytes;
        handled += n_pend;
        fwd += pend.fwd;
        *dropped = pend.dropped;
        fwd_bytes += pend.fwd_bytes;
    }
    w->pinned_recently = n_pend + decided != 0;
    if (decided) {
        w->st.conn_hits += decided;
        w->ct->fc_hits += decided;
    }
    w->st.rx_packets += handled;
    w->st.lean_packets += handled;
    w->st.rx_bytes += rx_bytes;
    w->st.fwd_packets += fwd;
    w->st.fwd_bytes += fwd_bytes;
rest:
    for (; i < n; i++)
        slow[n_slow++] = (uint8_t)i;
    return n_slow;
}

/* The burst: the lean pass, then the full body over what it left.  Returns the
 * number of frames the lean pass did not forward (0: every frame leaves on its lean
 * port, two_port ? 1 : its input port, and out[] may be ignored). */
static unsigned HLB_BURST_FN(struct hlb_worker *w, struct hlb_vip_table *t,
                             HLB_BURST_FRAME *frames, uint8_t *out, unsigned n,
                             uint16_t burst_port, uint32_t now)
{
    uint8_t slow[HLB_MAX_BURST], slow_out[HLB_MAX_BURST];
    HLB_BURST_FRAME slow_frames[HLB_MAX_BURST];
    if (n > HLB_MAX_BURST)
        n = HLB_MAX_BURST;
    /* The lean pass forwards each frame it finishes to this port and writes out[]
     * only for its drops, so its loops carry no output store or index. */
    for (unsigned i = 0; i < n; i++)
        out[i] = w->cfg.two_port ? 1 : (uint8_t)HLB_F_IN_PORT(frames[i], burst_port);
    unsigned dropped;
    unsigned n_slow = HLB_FAST_FN(w, t, frames, out, n, burst_port, slow, &dropped, now);
    if (HLB_LIKELY(n_slow == 0))
        return dropped;
    for (unsigned k = 0; k < n_slow; k++)
        slow_frames[k] = frames[slow[k]];
    HLB_FULL_FN(w, t, slow_frames, slow_out, n_slow, burst_port, now);
    for (unsigned k = 0; k < n_slow; k++)
        out[slow[k]] = slow_out[k];
    return n_slow + dropped;
}

#undef HLB_LEAN_ENCAP
#undef HLB_RUN_FN
#undef HLB_PEND_FN
#undef HLB_PRUN_FN
#undef HLB_ORUN_FN
#undef HLB_TAKES_FN
#undef HLB_CRUN_FN
#undef HLB_SRUN_FN
#undef HLB_PASTE
#undef HLB_PASTE2
#undef HLB_BURST_FN
#undef HLB_FULL_FN
#undef HLB_FAST_FN
#undef HLB_BURST_FRAME
#undef HLB_F_DATA
#undef HLB_F_LEN
#undef HLB_F_HEADROOM
#undef HLB_F_IN_PORT
#undef HLB_F_MULTISEG
#undef HLB_F_SET
#undef HLB_F_PUSH
