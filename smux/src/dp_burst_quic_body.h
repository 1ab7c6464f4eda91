/* Part of the burst body (dp_burst_body.h includes it after its cookie run loop, once
 * per compilation of the body): the lean pass's loop for a run of QUIC short-header
 * packets to a cheetah service (p4/COOKIE-SPEC.md §13.3, dp_quic.h): frames i, i+1,
 * ... as long as each is a frame the lean pass accepts for that service, a UDP
 * datagram whose first QUIC byte has bit 7 clear, long enough for a short header,
 * whose connection id names a server of the pool; returns the index of the first
 * frame it did not take (possibly i: the general code then has it, e.g. a long
 * header, a bad id to count).  The same decode as quic_step(), with the service's
 * key and map in registers.  No include guard. */

static inline __attribute__((always_inline)) unsigned
HLB_PASTE(HLB_FAST_FN, _qrun_impl)(struct lean_run *r, HLB_BURST_FRAME *frames, unsigned i,
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
        const uint8_t *quic = d + HLB_ETH_HLEN + 20 + 8;
        uint32_t inner = pl.ip_tot_len;
        if (pl.t.proto != HLB_IPPROTO_UDP || inner < 20u + 8u + HLB_QUIC_SHORT_MIN ||
            (quic[0] & 0x80))
            break;
        uint32_t ident = hlb_quic_ident(&sv, pl.t.dst_port, quic + 1);
        int dip = ident <= HLB_COOKIE_SERVER_ID_MAX ? hlb_ck_server_dip(t, &sv, ident) : -1;
        if (dip < 0)
            break;
        HLB_LEAN_ENCAP(f, d, gre, ip, bsum, dip, dips[dip].outer, inner);
        rx_bytes += len;
        inner_bytes += inner;
    }
    lean_run_done(r, first, i, rx_bytes, inner_bytes, overhead);
    return i;
}

static __attribute__((noinline)) unsigned
HLB_PASTE(HLB_FAST_FN, _qrun)(struct lean_run *r, HLB_BURST_FRAME *frames, unsigned i,
                              unsigned n, uint16_t burst_port)
{
    if (HLB_LIKELY(!r->gre && !r->two_port && r->s->ck_mode == HLB_COOKIE_SIPHASH13))
        return HLB_PASTE(HLB_FAST_FN, _qrun_impl)(r, frames, i, n, burst_port, 0, 0,
                                                  HLB_COOKIE_SIPHASH13);
    return HLB_PASTE(HLB_FAST_FN, _qrun_impl)(r, frames, i, n, burst_port, r->gre,
                                              (int)r->two_port, r->s->ck_mode);
}
