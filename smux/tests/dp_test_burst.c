/* The burst's lean first pass against the general code: mixed bursts of valid,
 * pinned, malformed and special frames must come out byte for byte as they do from
 * hlb_dp_burst_reference (every frame through the general code) and, when no ARP
 * from the gateway changes its MAC mid-burst, as they do one frame at a time.
 * Verdicts, output ports, frame bytes, every counter and the connection table are
 * compared. */
#include "dp_testutil.h"
#include "cheetah.h"

#include "conn_table.h"

#define ROUNDS 400

/* The VIPs both tables share, before and after the pinned ones. */
#define TABLE_HEAD \
    "{\"version\":1,\"vips\":[" \
    /* crc32 + IP-in-IP, unpinned, weights and a hostIp */ \
    "{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\",\"connTable\":false,\"ports\":[" \
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.1\",\"weight\":1}," \
    "{\"ip\":\"10.0.1.2\",\"weight\":2,\"hostIp\":\"172.16.0.2\"},{\"ip\":\"10.0.1.3\",\"weight\":3}]}," \
    /* 10.254.255.255: an outer address whose checksum sum carries out of 32 bits */ \
    "{\"proto\":\"udp\",\"port\":53,\"dips\":[{\"ip\":\"10.0.1.4\"},{\"ip\":\"10.254.255.255\"}]}]}," \
    /* ovs + GRE, unpinned */ \
    "{\"vip\":\"100.64.0.2\",\"selection\":\"ovs\",\"hashBasis\":7,\"encap\":\"gre\"," \
    "\"connTable\":false,\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[" \
    "{\"ip\":\"10.0.2.1\",\"weight\":1},{\"ip\":\"10.0.2.2\",\"weight\":4},{\"ip\":\"10.0.2.3\",\"weight\":0}]}]},"
#define TABLE_TAIL \
    /* empty pool (no_backend), and a pool too heavy for the slot array */ \
    "{\"vip\":\"100.64.0.5\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[]}]}," \
    "{\"vip\":\"100.64.0.6\",\"selection\":\"crc32\",\"connTable\":false,\"ports\":[" \
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.6.1\",\"weight\":5000}," \
    "{\"ip\":\"10.0.6.2\",\"weight\":3000},{\"ip\":\"10.0.6.3\",\"weight\":1}]}]}," \
    /* cheetah: siphash13, IP-in-IP, pinned fallback, round robin over a drained DIP; \
     * crc32c, GRE, every port, weighted round robin */ \
    "{\"vip\":\"100.64.0.7\",\"selection\":\"crc32\",\"connTable\":true,\"affinity\":\"cheetah\"," \
    "\"cookieKey\":\"00112233445566778899aabbccddeeff\",\"mechanism\":\"rr\",\"ports\":[" \
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.7.1\",\"serverId\":101}," \
    "{\"ip\":\"10.0.7.2\",\"serverId\":102,\"weight\":0},{\"ip\":\"10.0.7.3\",\"serverId\":103}]}]}," \
    "{\"vip\":\"100.64.0.8\",\"selection\":\"crc32\",\"connTable\":false,\"encap\":\"gre\"," \
    "\"affinity\":\"cheetah\",\"cookieKey\":\"ffeeddccbbaa99887766554433221100\"," \
    "\"cookieHash\":\"crc32c\",\"mechanism\":\"wrr\",\"ports\":[{\"proto\":\"tcp\",\"port\":0," \
    "\"dips\":[{\"ip\":\"10.0.8.1\",\"serverId\":201},{\"ip\":\"10.0.8.2\",\"serverId\":202," \
    "\"weight\":2},{\"ip\":\"10.0.8.3\",\"serverId\":203}]}]}," \
    /* cheetah-stateful: this SMux (worker_init's 192.0.2.10) is owner 1 of 2 */ \
    "{\"vip\":\"100.64.0.10\",\"selection\":\"crc32\",\"connTable\":false," \
    "\"affinity\":\"cheetah-stateful\",\"cookieKey\":\"0f0e0d0c0b0a09080706050403020100\"," \
    "\"mechanism\":\"rr\",\"statefulOwners\":[\"192.0.2.99\",\"192.0.2.10\"],\"ports\":[" \
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.10.1\",\"serverId\":301}," \
    "{\"ip\":\"10.0.10.2\",\"serverId\":302}]}]}" \
    "]}"

static const char *TABLE =
    TABLE_HEAD
    /* crc32, every TCP port, pinned */
    "{\"vip\":\"100.64.0.3\",\"selection\":\"crc32\",\"connTable\":true,\"ports\":["
    "{\"proto\":\"tcp\",\"port\":0,\"dips\":[{\"ip\":\"10.0.3.1\"},{\"ip\":\"10.0.3.2\"},{\"ip\":\"10.0.3.3\"}]},"
    "{\"proto\":\"udp\",\"port\":53,\"dips\":[{\"ip\":\"10.0.3.4\"},{\"ip\":\"10.0.3.5\"}]}]},"
    /* ovs + GRE, pinned */
    "{\"vip\":\"100.64.0.4\",\"selection\":\"ovs\",\"encap\":\"gre\",\"connTable\":true,\"ports\":["
    "{\"proto\":\"tcp\",\"port\":443,\"dips\":[{\"ip\":\"10.0.4.1\"},{\"ip\":\"10.0.4.2\",\"weight\":3}]}]},"
    TABLE_TAIL;

/* TABLE after a change of the pinned pools: 100.64.0.3 loses 10.0.3.2 and gains
 * 10.0.3.9, 100.64.0.4 loses 10.0.4.1 (their connections are re-pinned). */
static const char *TABLE2 =
    TABLE_HEAD
    "{\"vip\":\"100.64.0.3\",\"selection\":\"crc32\",\"connTable\":true,\"ports\":["
    "{\"proto\":\"tcp\",\"port\":0,\"dips\":[{\"ip\":\"10.0.3.1\"},{\"ip\":\"10.0.3.3\"},{\"ip\":\"10.0.3.9\"}]},"
    "{\"proto\":\"udp\",\"port\":53,\"dips\":[{\"ip\":\"10.0.3.4\"},{\"ip\":\"10.0.3.5\"}]}]},"
    "{\"vip\":\"100.64.0.4\",\"selection\":\"ovs\",\"encap\":\"gre\",\"connTable\":true,\"ports\":["
    "{\"proto\":\"tcp\",\"port\":443,\"dips\":[{\"ip\":\"10.0.4.2\",\"weight\":3}]}]},"
    TABLE_TAIL;

struct world {
    struct hlb_worker w;
    struct hlb_conn_table *ct;
    struct hlb_vip_table *t;
};

static void world_init_table(struct world *x, const char *table)
{
    x->ct = hlb_conn_table_create(2048, NULL);   /* small: full buckets happen too */
    worker_init(&x->w, x->ct);
    x->w.sf = hlb_sf_create(2, 60000);          /* 2 partitions: echoes hit live indexes */
    x->t = table_ok(table, 1);
    x->t->gen = 1;
}

static void world_init(struct world *x)
{
    world_init_table(x, TABLE);
}

static void world_free(struct world *x)
{
    hlb_table_free(x->t);
    hlb_conn_table_free(x->ct);
    hlb_sf_free(x->w.sf);
}

static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static void fix_ip_csum(uint8_t *ip, unsigned hlen)
{
    ip[10] = ip[11] = 0;
    uint16_t cs = hlb_csum(ip, hlen);
    memcpy(ip + 10, &cs, 2);
}

/* SYNs to the cheetah VIPs: off where a run with one worker is compared with one of
 * several (each worker keeps its own round-robin position, so SYNs may differ). */
static int cheetah_syns = 1;

/* A TCP segment to a cheetah VIP: mostly echoing the cookie of one of the pool's
 * servers or of a server not in it (ids base..base+3), else a random echo, no
 * timestamp, or the timestamp after SACK blocks (the general code's walk). */
static void cheetah_frame(struct tframe *f, const char *src, const char *vip, uint16_t sport,
                          uint16_t dport, uint8_t flags)
{
    static struct hlb_vip_table *ck_t;
    if (!ck_t)
        ck_t = table_ok(TABLE, 1);
    const struct hlb_service *s = hlb_table_lookup(ck_t, ip4(vip), HLB_IPPROTO_TCP,
                                                   hlb_htons(dport));
    if (!cheetah_syns && (flags & HLB_TCP_SYN))
        flags = HLB_TCP_ACK;
    unsigned id = (vip[9] == '7' ? 101 : vip[9] == '8' ? 201 : 301) + rnd() % 4;
    if (vip[10] == '0' && rnd() % 4)          /* 100.64.0.10: a stateful ident: owner 1 (us), */
        id = hlb_sf_ident(rnd() % 4 ? 1 : rnd() % 3 ? 0 : 5, rnd() % 8);   /* 0, or none */
    uint32_t c = (uint32_t)(id ^ hlb_ck_hash(s, ip4(src), hlb_htons(sport), hlb_htons(dport))) &
                 HLB_COOKIE_MASK;
    uint32_t tsecr = (rnd() & 1u) << 31 | c << 16 | (rnd() & 0xffffu);
    unsigned k = rnd() % 10;
    if (k == 0)
        tsecr = rnd();
    if (k == 1) {
        build_tcp(f, src, vip, sport, dport, flags);
    } else if (k == 2) {
        uint8_t opt[24] = {1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2, 1, 1, 8, 10, 0, 0, 0, 9};
        uint32_t e = hlb_htonl(tsecr);
        memcpy(opt + 20, &e, 4);
        build_tcp_opts(f, src, vip, sport, dport, flags, opt, sizeof(opt));
    } else {
        build_tcp_ts(f, src, vip, sport, dport, flags, rnd(), tsecr);
    }
}

/* One frame of a random kind.  gw_arp: may emit ARP frames from the gateway that
 * change its MAC. */
static void random_frame(struct tframe *f, int gw_arp)
{
    static const char *vips[] = {"100.64.0.1", "100.64.0.2", "100.64.0.3", "100.64.0.4",
                                 "100.64.0.5", "100.64.0.6", "100.64.0.9", "100.64.0.7",
                                 "100.64.0.8", "100.64.0.10"};
    static const uint16_t ports[] = {80, 80, 8080, 443, 80, 80, 80, 80, 8080, 80};
    static const uint8_t flags[] = {HLB_TCP_SYN, HLB_TCP_ACK, HLB_TCP_ACK, HLB_TCP_ACK,
                                    HLB_TCP_FIN | HLB_TCP_ACK, HLB_TCP_RST,
                                    HLB_TCP_SYN | HLB_TCP_ACK, HLB_TCP_SYN};
    char src[32];
    /* Few clients and ports: tuples repeat within and across bursts. */
    snprintf(src, sizeof(src), "198.51.100.%u", 1 + rnd() % 6);
    uint16_t sport = (uint16_t)(40000 + rnd() % 4);
    unsigned kind = rnd() % 200;                    /* about one frame in five is special */
    unsigned v = rnd() % 10;
    uint8_t *d;
    if (kind < 55 || kind >= 140) {                                /* TCP to a VIP (or no VIP) */
        if (v >= 7) {
            cheetah_frame(f, src, vips[v], sport, v == 8 && rnd() % 2 ? 9000 : ports[v],
                          flags[rnd() % 8]);
            return;
        }
        build_tcp(f, src, vips[v], sport, ports[v], flags[rnd() % 8]);
        if (rnd() % 4 == 0) {                       /* payload, and a TOS */
            build_ip(f, src, vips[v], HLB_IPPROTO_TCP, sport, ports[v], flags[rnd() % 8],
                     rnd() % 300, 0x4000);
            f->p.data[15] = (uint8_t)rnd();
            fix_ip_csum(f->p.data + 14, 20);
        }
        return;
    }
    if (kind < 62) {                                /* UDP */
        build_ip(f, src, rnd() % 2 ? "100.64.0.1" : "100.64.0.3", HLB_IPPROTO_UDP, sport, 53,
                 0, rnd() % 40, 0);
        return;
    }
    v = rnd() % 4;
    build_tcp(f, src, vips[v], sport, ports[v], rnd() % 3 ? HLB_TCP_ACK : flags[rnd() % 8]);
    d = f->p.data;
    switch (kind) {
    case 62: case 63:                               /* bad IP checksum */
        d[24] ^= 0x10;
        break;
    case 64: case 65:                               /* truncated */
        f->p.len = 14 + rnd() % 40;
        break;
    case 66:                                        /* IPv6 */
        d[12] = 0x86;
        d[13] = 0xdd;
        break;
    case 67:                                        /* VLAN tag */
        d[12] = 0x81;
        d[13] = 0x00;
        break;
    case 68: case 69:                               /* fragment */
        build_ip(f, src, "100.64.0.1", HLB_IPPROTO_TCP, sport, 80, HLB_TCP_ACK, 40,
                 (uint16_t)(rnd() % 2 ? 0x2000 : 0x0010));
        break;
    case 70: case 71: {                             /* IP options (IHL 6): general parser */
        uint8_t tmp[2048];
        memcpy(tmp, d + 34, f->p.len - 34);
        memset(d + 34, 1, 4);                       /* four NOP options */
        memcpy(d + 38, tmp, f->p.len - 34);
        d[14] = 0x46;
        uint16_t tl;
        memcpy(&tl, d + 16, 2);
        tl = hlb_htons((uint16_t)(hlb_ntohs(tl) + 4));
        memcpy(d + 16, &tl, 2);
        fix_ip_csum(d + 14, 24);
        f->p.len += 4;
        break;
    }
    case 72: case 73:                               /* over the MTU after encapsulation */
        build_ip(f, src, vips[v], HLB_IPPROTO_TCP, sport, ports[v], flags[rnd() % 8],
                 1460 - (rnd() % 30), 0x4000);
        break;
    case 74: case 75: {                             /* ping to the SMux */
        build_ip(f, src, "192.0.2.10", HLB_IPPROTO_ICMP, 0, 0, 0, 16, 0);
        uint8_t *icmp = f->p.data + 34;
        icmp[0] = 8;
        icmp[1] = 0;
        icmp[2] = icmp[3] = 0;
        uint16_t cs = hlb_csum(icmp, 16);
        memcpy(icmp + 2, &cs, 2);
        break;
    }
    case 76:                                        /* UDP to the SMux */
        build_ip(f, src, "192.0.2.10", HLB_IPPROTO_UDP, sport, 9, 0, 4, 0);
        break;
    case 77: case 78:                               /* ARP for us */
        build_arp(f, HLB_ARP_REQUEST, T_CLIENT_MAC, "192.0.2.77", "192.0.2.10");
        break;
    case 79:                                        /* ARP not for us */
        build_arp(f, HLB_ARP_REQUEST, T_CLIENT_MAC, "192.0.2.77", "192.0.2.99");
        break;
    case 80: case 81:
        if (gw_arp) {                               /* the gateway, with a new MAC */
            uint8_t mac[6] = {0x02, 0x47, 0x57, 0, 0, (uint8_t)(rnd() % 250 + 1)};
            build_arp(f, HLB_ARP_REPLY, mac, "192.0.2.1", "192.0.2.10");
        }
        break;
    case 82:                                        /* short frames, not padded */
        f->p.len = 42 + rnd() % 6;
        break;
    case 83:                                        /* no headroom left */
        f->p.headroom = rnd() % 20;
        break;
    default:                                        /* valid TCP, IP-in-IP */
        break;
    }
}

static void assert_same_frame(const struct tframe *a, uint8_t va, const struct tframe *b,
                              uint8_t vb, int i)
{
    if (va != vb)
        fail_msg("frame %d: verdict %u vs %u", i, va, vb);
    if (va != HLB_V_TX)
        return;
    if (a->p.out_port != b->p.out_port || a->p.len != b->p.len ||
        a->p.data - a->buf != b->p.data - b->buf || a->p.headroom != b->p.headroom)
        fail_msg("frame %d: out port %u/%u, len %u/%u, offset %td/%td", i, a->p.out_port,
                 b->p.out_port, a->p.len, b->p.len, a->p.data - a->buf, b->p.data - b->buf);
    if (memcmp(a->p.data, b->p.data, a->p.len) != 0)
        fail_msg("frame %d: bytes differ", i);
}

static void assert_same_world(const struct world *a, const struct world *b)
{
    struct hlb_dp_stats sa = a->w.st, sb = b->w.st;
    sa.lean_packets = sb.lean_packets = 0;
    assert_memory_equal(&sa, &sb, sizeof(sa));
    assert_memory_equal(a->w.cfg.gw_mac, b->w.cfg.gw_mac, 6);
    assert_memory_equal(&a->ct->st, &b->ct->st, sizeof(a->ct->st));
    assert_int_equal(a->t->n_services, b->t->n_services);
    assert_memory_equal(a->t->svc_counters, b->t->svc_counters,
                        a->t->n_services * sizeof(struct hlb_counter));
    assert_memory_equal(a->t->dip_counters, b->t->dip_counters,
                        a->t->n_dips * sizeof(struct hlb_counter));
    if (a->t->rr_next)
        assert_memory_equal(a->t->rr_next, b->t->rr_next, a->t->n_services * sizeof(uint32_t));
    size_t buckets = (size_t)a->ct->mask + 1;
    assert_memory_equal(a->ct->b, b->ct->b, buckets * sizeof(*a->ct->b));
    if (a->w.sf) {                            /* stateful entries, stacks and counters */
        assert_memory_equal(&a->w.sf->st, &b->w.sf->st, sizeof(a->w.sf->st));
        assert_true(hlb_sf_same(a->w.sf, b->w.sf));
    }
}

static struct tframe fa[HLB_MAX_BURST], fb[HLB_MAX_BURST];

/* fa[0..n) through hlb_dp_burst on a, fb[0..n) through the reference on b, as whole
 * bursts: every frame, verdict and the worlds' state must come out the same. */
static void burst_both_and_compare(struct world *a, struct world *b, unsigned n, uint32_t now)
{
    struct hlb_pkt pa[HLB_MAX_BURST], pb[HLB_MAX_BURST];
    uint8_t va[HLB_MAX_BURST], vb[HLB_MAX_BURST];
    for (unsigned i = 0; i < n; i++) {
        pa[i] = fa[i].p;
        pb[i] = fb[i].p;
    }
    hlb_dp_burst(&a->w, a->t, pa, va, n, now);
    hlb_dp_burst_reference(&b->w, b->t, pb, vb, n, now);
    for (unsigned i = 0; i < n; i++) {
        fa[i].p = pa[i];
        fb[i].p = pb[i];
        assert_same_frame(&fa[i], va[i], &fb[i], vb[i], (int)i);
    }
    assert_same_world(a, b);
}

/* lean + general (hlb_dp_burst) against the general code alone, whole bursts. */
static void test_burst_equals_reference(void **state)
{
    (void)state;
    struct world a, b;
    world_init(&a);
    world_init(&b);
    uint32_t now = 1000;
    rng_state = 12345;
    for (int r = 0; r < ROUNDS; r++) {
        unsigned n = r % 5 == 0 ? HLB_MAX_BURST : 1 + rnd() % HLB_MAX_BURST;
        for (unsigned i = 0; i < n; i++) {
            random_frame(&fa[i], 1);
            fa[i].p.in_port = (uint16_t)(rnd() % 2);
            fb[i] = fa[i];
            fb[i].p.data = fb[i].buf + (fa[i].p.data - fa[i].buf);
        }
        if (r == ROUNDS / 2)                          /* two-port mode for the rest */
            a.w.cfg.two_port = b.w.cfg.two_port = 1;
        if (r % 50 == 7)                              /* gateway unknown for a while */
            a.w.cfg.gw_known = b.w.cfg.gw_known = 0;
        burst_both_and_compare(&a, &b, n, now);
        now += rnd() % 3000;                          /* timeouts expire in between */
    }
    print_message("stateful VIP: %llu SYNs given an index, %llu segments placed by their "
                  "entry, %llu misses, %llu forwarded to the other owner\n",
                  (unsigned long long)a.w.sf->st.inserts, (unsigned long long)a.w.sf->st.hits,
                  (unsigned long long)a.w.sf->st.misses, (unsigned long long)a.w.sf->st.forwarded);
    assert_true(a.w.sf->st.inserts > 0 && a.w.sf->st.hits > 0 && a.w.sf->st.forwarded > 0);
    /* The lean pass did finish most frames (the comparison is not vacuous). */
    print_message("lean pass finished %llu of %llu frames; cheetah: %llu decoded, %llu bad "
                  "cookies, %llu fallbacks, %llu rr and %llu wrr SYNs\n",
                  (unsigned long long)a.w.st.lean_packets, (unsigned long long)a.w.st.rx_packets,
                  (unsigned long long)a.w.st.ck_decoded,
                  (unsigned long long)a.w.st.drops[HLB_DROP_BAD_COOKIE],
                  (unsigned long long)a.w.st.ck_fallback,
                  (unsigned long long)a.w.st.ck_syns[HLB_MECH_RR],
                  (unsigned long long)a.w.st.ck_syns[HLB_MECH_WRR]);
    assert_true(a.w.st.ck_decoded > 100 && a.w.st.drops[HLB_DROP_BAD_COOKIE] > 20 &&
                a.w.st.ck_fallback > 10 && a.w.st.ck_syns[HLB_MECH_RR] > 10 &&
                a.w.st.ck_syns[HLB_MECH_WRR] > 10);
    assert_true(a.w.st.lean_packets > a.w.st.rx_packets / 5);
    assert_int_equal(b.w.st.lean_packets, 0);
    assert_true(a.w.st.conn_hits > 100 && a.w.st.conn_misses > 100);
    assert_true(a.w.st.icmp_frag_needed > 0 && a.w.st.gw_learned > 0);
    world_free(&a);
    world_free(&b);
}

/* The same comparison while the connection table changes under the flow cache in
 * every way it can: the idle sweep runs between bursts, the table is swapped
 * between two versions (connections of removed DIPs are re-pinned, the others stay
 * with a new generation), RSTs and FINs close entries, timers come due, and time
 * moves in small steps most of the time, so established flows are decided from the
 * cache between those changes.  The small table's cache (32 sets of 2) holds fewer
 * flows than the bursts use, so copies are also replaced. */
static void test_burst_equals_reference_cache_coherence(void **state)
{
    (void)state;
    struct world a, b;
    world_init(&a);
    world_init(&b);
    uint32_t now = 1000, gen = 1;
    rng_state = 4242;
    for (int r = 0; r < 2 * ROUNDS; r++) {
        unsigned n = 1 + rnd() % HLB_MAX_BURST;
        /* Every other burst only TCP segments to the pinned VIPs (no ARP, no short
         * frame: the lean pass may then decide cached flows in its parse loop). */
        int clean = r % 2 == 0;
        for (unsigned i = 0; i < n; i++) {
            if (clean || rnd() % 4) {                 /* mostly established segments */
                char src[32];
                snprintf(src, sizeof(src), "198.51.100.%u", 1 + rnd() % 6);
                int v4 = rnd() % 2;
                static const uint8_t fl[] = {HLB_TCP_FIN | HLB_TCP_ACK, HLB_TCP_RST,
                                             HLB_TCP_SYN, HLB_TCP_SYN | HLB_TCP_ACK};
                unsigned c = rnd() % 24;
                build_tcp(&fa[i], src, v4 ? "100.64.0.4" : "100.64.0.3",
                          (uint16_t)(40000 + rnd() % 8), v4 ? 443 : 80,
                          c < 4 ? fl[c] : HLB_TCP_ACK);
            } else {
                random_frame(&fa[i], 0);
            }
            if (clean && r % 8 == 0 && i == n - 1 && n > 1) {
                /* The gateway's MAC changes at the end of the burst: the full
                 * body gives the new MAC to every pinned frame of the burst. */
                uint8_t mac[6] = {0x02, 0x47, 0x57, 0, 0, (uint8_t)(rnd() % 250 + 1)};
                build_arp(&fa[i], HLB_ARP_REPLY, mac, "192.0.2.1", "192.0.2.10");
            }
            fb[i] = fa[i];
            fb[i].p.data = fb[i].buf + (fa[i].p.data - fa[i].buf);
        }
        burst_both_and_compare(&a, &b, n, now);
        if (r % 41 == 40) {                           /* table swap */
            const char *doc = gen % 2 ? TABLE2 : TABLE;
            gen++;
            hlb_table_free(a.t);
            hlb_table_free(b.t);
            a.t = table_ok(doc, 1);
            b.t = table_ok(doc, 1);
            a.t->gen = b.t->gen = gen;
        }
        unsigned step = rnd() % 8;
        now += step == 0 ? rnd() % 20000 : step == 1 ? 1000 + rnd() % 2000 : rnd() % 100;
        uint32_t sweep = 4 + rnd() % 64;              /* the same buckets in both */
        hlb_conn_sweep(a.ct, now, sweep);
        hlb_conn_sweep(b.ct, now, sweep);
    }
    print_message("flow cache decided %llu of %llu connection hits; %llu re-pinned\n",
                  (unsigned long long)a.ct->fc_hits, (unsigned long long)a.w.st.conn_hits,
                  (unsigned long long)a.w.st.conn_repinned);
    assert_true(a.ct->fc_hits > 200);
    assert_int_equal(b.ct->fc_hits, 0);
    assert_true(a.w.st.conn_repinned > 0);
    assert_true(a.ct->st.evict_timeout > 0 && a.ct->st.closed > 0);
    world_free(&a);
    world_free(&b);
}

/* Bursts against the single-frame path: same DIP and bytes for every frame. */
static void test_burst_equals_one_at_a_time(void **state)
{
    (void)state;
    struct world a, b;
    world_init(&a);
    world_init(&b);
    uint8_t va[HLB_MAX_BURST];
    uint32_t now = 1000;
    rng_state = 777;
    for (int r = 0; r < ROUNDS; r++) {
        unsigned n = 1 + rnd() % HLB_MAX_BURST;
        struct hlb_pkt pa[HLB_MAX_BURST];
        for (unsigned i = 0; i < n; i++) {
            random_frame(&fa[i], 0);
            fb[i] = fa[i];
            fb[i].p.data = fb[i].buf + (fa[i].p.data - fa[i].buf);
            pa[i] = fa[i].p;
        }
        hlb_dp_burst(&a.w, a.t, pa, va, n, now);
        for (unsigned i = 0; i < n; i++) {
            fa[i].p = pa[i];
            uint8_t v = 0xee;
            hlb_dp_burst_reference(&b.w, b.t, &fb[i].p, &v, 1, now);
            assert_same_frame(&fa[i], va[i], &fb[i], v, (int)i);
        }
        assert_same_world(&a, &b);
        now += rnd() % 3000;
    }
    print_message("lean pass finished %llu of %llu frames\n", (unsigned long long)a.w.st.lean_packets, (unsigned long long)a.w.st.rx_packets);
    assert_true(a.w.st.lean_packets > a.w.st.rx_packets / 5);
    world_free(&a);
    world_free(&b);
}

/* A burst of clean frames to unpinned VIPs is finished by the lean pass alone. */
static void test_clean_burst_is_lean(void **state)
{
    (void)state;
    struct world a;
    world_init(&a);
    struct hlb_pkt p[HLB_MAX_BURST];
    uint8_t v[HLB_MAX_BURST];
    for (unsigned i = 0; i < HLB_MAX_BURST; i++) {
        char src[32];
        snprintf(src, sizeof(src), "198.51.100.%u", i + 1);
        build_tcp(&fa[i], src, i % 2 ? "100.64.0.1" : "100.64.0.2", (uint16_t)(1024 + i), 80,
                  HLB_TCP_ACK);
        p[i] = fa[i].p;
    }
    hlb_dp_burst(&a.w, a.t, p, v, HLB_MAX_BURST, 0);
    assert_int_equal(a.w.st.lean_packets, HLB_MAX_BURST);
    assert_int_equal(a.w.st.fwd_packets, HLB_MAX_BURST);
    world_free(&a);
}

/* Runs of frames to unpinned ovs services (the lean pass's ovs run loop, which picks
 * a whole run's DIPs at once): IP-in-IP and GRE, a fixed port and every port, weights
 * with zeros, one live bucket, a pool of 40 buckets; one-armed and two-port; runs
 * broken by other frames.  Against the general code, frame by frame and counter by
 * counter. */
static const char *OVS_TABLE =
    "{\"version\":1,\"vips\":["
    "{\"vip\":\"100.64.1.1\",\"selection\":\"ovs\",\"hashBasis\":\"18446744073709551615\","
    "\"connTable\":false,\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":["
    "{\"ip\":\"10.1.1.1\",\"weight\":3,\"bucketId\":70000},{\"ip\":\"10.1.1.2\",\"weight\":0},"
    "{\"ip\":\"10.1.1.3\",\"weight\":65535,\"hostIp\":\"172.16.1.3\"},{\"ip\":\"10.1.1.4\"}]},"
    "{\"proto\":\"udp\",\"port\":0,\"dips\":[{\"ip\":\"10.1.2.1\"},{\"ip\":\"10.1.2.2\"}]}]},"
    "{\"vip\":\"100.64.1.2\",\"selection\":\"ovs\",\"encap\":\"gre\",\"connTable\":false,"
    "\"ports\":[{\"proto\":\"tcp\",\"port\":0,\"dips\":[{\"ip\":\"10.1.3.1\",\"weight\":0},"
    "{\"ip\":\"10.1.3.2\",\"weight\":9}]}]},"
    "{\"vip\":\"100.64.1.3\",\"selection\":\"ovs\",\"connTable\":false,\"ports\":["
    "{\"proto\":\"tcp\",\"port\":443,\"dips\":[%s]}]}]}";

static void test_ovs_runs_equal_reference(void **state)
{
    (void)state;
    char big[4096] = "", doc[8192];
    for (int i = 0; i < 40; i++)                  /* 40 weight-1 buckets, ids not positions */
        snprintf(big + strlen(big), sizeof(big) - strlen(big),
                 "%s{\"ip\":\"10.1.4.%d\",\"bucketId\":%d}", i ? "," : "", i + 1, 1000 - 7 * i);
    snprintf(doc, sizeof(doc), OVS_TABLE, big);
    struct world a, b;
    world_init(&a);
    world_init(&b);
    hlb_table_free(a.t);
    hlb_table_free(b.t);
    a.t = table_ok(doc, 0);
    b.t = table_ok(doc, 0);
    a.t->gen = b.t->gen = 1;
    static const char *vips[] = {"100.64.1.1", "100.64.1.1", "100.64.1.2", "100.64.1.3"};
    static const uint16_t ports[] = {80, 0, 0, 443};
    rng_state = 2024;
    for (int r = 0; r < ROUNDS; r++) {
        unsigned n = 1 + rnd() % HLB_MAX_BURST;
        unsigned v = rnd() % 4;
        for (unsigned i = 0; i < n; i++) {
            char src[32];
            snprintf(src, sizeof(src), "198.51.%u.%u", rnd() % 4, 1 + rnd() % 250);
            if (rnd() % 8 == 0)                       /* a run ends, another begins */
                v = rnd() % 4;
            uint16_t dport = ports[v] ? ports[v] : (uint16_t)(1 + rnd() % 65535);
            build_ip(&fa[i], src, vips[v], v == 1 ? HLB_IPPROTO_UDP : HLB_IPPROTO_TCP,
                     (uint16_t)rnd(), dport, HLB_TCP_ACK, rnd() % 64, 0x4000);
            if (rnd() % 16 == 0)                      /* over the MTU: leaves the run */
                build_ip(&fa[i], src, vips[v], HLB_IPPROTO_TCP, 1, ports[v] ? ports[v] : 7,
                         HLB_TCP_ACK, 1480, 0x4000);
            fa[i].p.in_port = (uint16_t)(rnd() % 2);
            fb[i] = fa[i];
            fb[i].p.data = fb[i].buf + (fa[i].p.data - fa[i].buf);
        }
        if (r == ROUNDS / 2)
            a.w.cfg.two_port = b.w.cfg.two_port = 1;
        burst_both_and_compare(&a, &b, n, 1000);
    }
    print_message("lean pass finished %llu of %llu frames\n",
                  (unsigned long long)a.w.st.lean_packets, (unsigned long long)a.w.st.rx_packets);
    assert_true(a.w.st.lean_packets > a.w.st.rx_packets * 3 / 4);
    unsigned used = 0;
    for (uint32_t d = 0; d < a.t->n_dips; d++)
        used += a.t->dip_counters[d].packets > 0;
    assert_true(used > 40);                           /* the pools' live buckets were picked */
    assert_int_equal(a.t->dip_counters[1].packets, 0);   /* weight 0: never */
    world_free(&a);
    world_free(&b);
}

/* ---- several workers ---------------------------------------------------------------
 * NW workers share one table (a counter slice each) and own a connection table each;
 * every burst is split by hlb_flow_worker() into one sub-burst per worker, in arrival
 * order, as the software distribution stage (or a NIC hashing flows) does. */
#define NW 3

struct multi {
    struct hlb_worker w[NW];
    struct hlb_vip_table *t;
};

static void multi_init(struct multi *m, uint64_t slots_per_worker)
{
    m->t = table_ok_n(TABLE, 1, NW);
    m->t->gen = 1;
    for (unsigned k = 0; k < NW; k++) {
        worker_init(&m->w[k], hlb_conn_table_create(slots_per_worker, NULL));
        m->w[k].sf = hlb_sf_create(2, 60000);
        m->w[k].id = (uint16_t)k;
    }
}

static void multi_free(struct multi *m)
{
    for (unsigned k = 0; k < NW; k++) {
        hlb_conn_table_free(m->w[k].ct);
        hlb_sf_free(m->w[k].sf);
    }
    hlb_table_free(m->t);
}

/* Frames fr[0..n) through the workers that own them (lean: hlb_dp_burst, else the
 * reference); verdicts in v[]. */
static void multi_burst(struct multi *m, struct tframe *fr, uint8_t *v, unsigned n, int lean,
                        uint32_t now)
{
    unsigned owner[HLB_MAX_BURST];               /* before any worker rewrites a frame */
    for (unsigned i = 0; i < n; i++)
        owner[i] = hlb_flow_worker(fr[i].p.data, fr[i].p.len, NW);
    for (unsigned k = 0; k < NW; k++) {
        struct hlb_pkt p[HLB_MAX_BURST];
        uint8_t vk[HLB_MAX_BURST];
        unsigned idx[HLB_MAX_BURST], c = 0;
        for (unsigned i = 0; i < n; i++)
            if (owner[i] == k) {
                idx[c] = i;
                p[c++] = fr[i].p;
            }
        if (!c)
            continue;
        if (lean)
            hlb_dp_burst(&m->w[k], m->t, p, vk, c, now);
        else
            hlb_dp_burst_reference(&m->w[k], m->t, p, vk, c, now);
        for (unsigned j = 0; j < c; j++) {
            fr[idx[j]].p = p[j];
            v[idx[j]] = vk[j];
        }
    }
}

static struct tframe fc[HLB_MAX_BURST];

/* N workers, lean pass, against N workers, general code: the same frames, and each
 * worker's counters, counter slice and connection table the same. */
static void test_workers_equal_reference(void **state)
{
    (void)state;
    struct multi a, b;
    multi_init(&a, 2048);
    multi_init(&b, 2048);
    uint32_t now = 1000;
    uint8_t va[HLB_MAX_BURST], vb[HLB_MAX_BURST];
    unsigned busy[NW] = {0};
    rng_state = 999;
    for (int r = 0; r < ROUNDS; r++) {
        unsigned n = 1 + rnd() % HLB_MAX_BURST;
        for (unsigned i = 0; i < n; i++) {
            random_frame(&fa[i], 1);
            fa[i].p.in_port = (uint16_t)(rnd() % 2);
            fb[i] = fa[i];
            fb[i].p.data = fb[i].buf + (fa[i].p.data - fa[i].buf);
            busy[hlb_flow_worker(fa[i].p.data, fa[i].p.len, NW)]++;
        }
        if (r == ROUNDS / 2)
            for (unsigned k = 0; k < NW; k++)
                a.w[k].cfg.two_port = b.w[k].cfg.two_port = 1;
        multi_burst(&a, fa, va, n, 1, now);
        multi_burst(&b, fb, vb, n, 0, now);
        for (unsigned i = 0; i < n; i++)
            assert_same_frame(&fa[i], va[i], &fb[i], vb[i], (int)i);
        for (unsigned k = 0; k < NW; k++) {
            struct hlb_dp_stats sa = a.w[k].st, sb = b.w[k].st;
            sa.lean_packets = sb.lean_packets = 0;
            assert_memory_equal(&sa, &sb, sizeof(sa));
            assert_memory_equal(&a.w[k].ct->st, &b.w[k].ct->st, sizeof(a.w[k].ct->st));
            assert_memory_equal(a.w[k].ct->b, b.w[k].ct->b,
                                ((size_t)a.w[k].ct->mask + 1) * sizeof(*a.w[k].ct->b));
            assert_memory_equal(hlb_svc_counters(a.t, k), hlb_svc_counters(b.t, k),
                                a.t->n_services * sizeof(struct hlb_counter));
            assert_memory_equal(hlb_dip_counters(a.t, k), hlb_dip_counters(b.t, k),
                                a.t->n_dips * sizeof(struct hlb_counter));
            assert_memory_equal(hlb_rr_next(a.t, k), hlb_rr_next(b.t, k),
                                a.t->n_services * sizeof(uint32_t));
            assert_memory_equal(&a.w[k].sf->st, &b.w[k].sf->st, sizeof(a.w[k].sf->st));
            /* Each worker counts in its own slice only (a frame sent on to its owner
             * SMux is counted there, on no service here). */
            uint64_t in_slice = 0;
            for (uint32_t s = 0; s < a.t->n_services; s++)
                in_slice += hlb_svc_counters(a.t, k)[s].packets;
            assert_int_equal(in_slice + a.w[k].sf->st.forwarded, a.w[k].st.fwd_packets);
        }
        now += rnd() % 3000;
    }
    for (unsigned k = 0; k < NW; k++) {
        print_message("worker %u: %u frames, %llu forwarded, %llu by the lean pass\n", k,
                      busy[k], (unsigned long long)a.w[k].st.fwd_packets,
                      (unsigned long long)a.w[k].st.lean_packets);
        assert_true(a.w[k].st.fwd_packets > 100);     /* every worker had real work */
        assert_true(a.w[k].st.conn_hits > 20);
    }
    multi_free(&a);
    multi_free(&b);
}

/* N workers against one: a partition by flow changes nothing a flow can see.  Every
 * frame comes out the same, and the workers' counters and counter slices add up to
 * the single worker's.  (No gateway ARP: one arriving mid-burst changes the MAC of
 * the frames behind it in its own worker's burst only.) */
static void test_workers_equal_one_worker(void **state)
{
    (void)state;
    struct multi a;
    multi_init(&a, 1 << 14);                      /* roomy: no bucket ever fills */
    struct world one;
    world_init(&one);
    hlb_conn_table_free(one.ct);
    one.ct = one.w.ct = hlb_conn_table_create(1 << 15, NULL);
    uint32_t now = 1000;
    uint8_t va[HLB_MAX_BURST], vc[HLB_MAX_BURST];
    rng_state = 31337;
    cheetah_syns = 0;
    for (int r = 0; r < ROUNDS; r++) {
        unsigned n = 1 + rnd() % HLB_MAX_BURST;
        struct hlb_pkt pc[HLB_MAX_BURST];
        for (unsigned i = 0; i < n; i++) {
            random_frame(&fa[i], 0);
            fc[i] = fa[i];
            fc[i].p.data = fc[i].buf + (fa[i].p.data - fa[i].buf);
            pc[i] = fc[i].p;
        }
        multi_burst(&a, fa, va, n, 1, now);
        hlb_dp_burst(&one.w, one.t, pc, vc, n, now);
        for (unsigned i = 0; i < n; i++) {
            fc[i].p = pc[i];
            assert_same_frame(&fa[i], va[i], &fc[i], vc[i], (int)i);
        }
        struct hlb_dp_stats sum;
        memset(&sum, 0, sizeof(sum));
        uint64_t inserts = 0, failures = 0;
        for (unsigned k = 0; k < NW; k++) {
            const uint64_t *v = (const uint64_t *)&a.w[k].st;
            for (size_t j = 0; j < sizeof(sum) / 8; j++)
                ((uint64_t *)&sum)[j] += v[j];
            inserts += a.w[k].ct->st.inserts;
            failures += a.w[k].ct->st.insert_failures;
        }
        struct hlb_dp_stats s1 = one.w.st;
        sum.lean_packets = s1.lean_packets = 0;
        assert_memory_equal(&sum, &s1, sizeof(sum));
        assert_int_equal(inserts, one.ct->st.inserts);
        assert_int_equal(failures, 0);
        for (uint32_t i = 0; i < one.t->n_services; i++) {
            struct hlb_counter c = hlb_counter_total(a.t, 0, i);
            assert_memory_equal(&c, &one.t->svc_counters[i], sizeof(c));
        }
        for (uint32_t i = 0; i < one.t->n_dips; i++) {
            struct hlb_counter c = hlb_counter_total(a.t, 1, i);
            assert_memory_equal(&c, &one.t->dip_counters[i], sizeof(c));
        }
        now += rnd() % 3000;
    }
    unsigned busy = 0;
    for (unsigned k = 0; k < NW; k++)
        busy += a.w[k].st.fwd_packets > 100;
    assert_int_equal(busy, NW);
    assert_true(one.w.st.conn_hits > 100 && one.w.st.fwd_packets > 1000);
    multi_free(&a);
    world_free(&one);
}

/* Cheetah SYNs: VIPs .20 and .21 stateful with this SMux (192.0.2.10) owner 0 of 2,
 * .22 stateless; round robin over a pool with a drained DIP.  SYN_TABLE_AWAY: the same
 * with the stateful VIPs owned by other SMuxes only (their SYNs are forwarded; one
 * owner list for every stateful VIP, COOKIE-SPEC §7). */
#define SYN_VIP(n, affinity, owners)                                                     \
    "{\"vip\":\"100.64.0." #n "\",\"selection\":\"crc32\",\"connTable\":true,"       \
    "\"affinity\":\"" affinity "\",\"cookieKey\":\"000102030405060708090a0b0c0d0e0f\","    \
    "\"mechanism\":\"rr\"" owners ",\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":["  \
    "{\"ip\":\"10.0." #n ".1\",\"serverId\":" #n "1},"                                    \
    "{\"ip\":\"10.0." #n ".2\",\"serverId\":" #n "2,\"weight\":0},"                       \
    "{\"ip\":\"10.0." #n ".3\",\"serverId\":" #n "3}]}]}"
static const char *SYN_TABLE =
    "{\"version\":1,\"vips\":["
    SYN_VIP(20, "cheetah-stateful", ",\"statefulOwners\":[\"192.0.2.10\",\"192.0.2.99\"]") ","
    SYN_VIP(21, "cheetah-stateful", ",\"statefulOwners\":[\"192.0.2.10\",\"192.0.2.99\"]") ","
    SYN_VIP(22, "cheetah", "") "]}";
static const char *SYN_TABLE_AWAY =
    "{\"version\":2,\"vips\":["
    SYN_VIP(20, "cheetah-stateful", ",\"statefulOwners\":[\"192.0.2.98\",\"192.0.2.99\"]") ","
    SYN_VIP(21, "cheetah-stateful", ",\"statefulOwners\":[\"192.0.2.98\",\"192.0.2.99\"]") ","
    SYN_VIP(22, "cheetah", "") "]}";

/* Both worlds on table json (generation gen). */
static void both_tables(struct world *a, struct world *b, const char *json, uint32_t gen)
{
    hlb_table_free(a->t);
    hlb_table_free(b->t);
    a->t = table_ok(json, 1);
    b->t = table_ok(json, 1);
    a->t->gen = b->t->gen = gen;
}

/* f becomes the IP-in-IP frame another SMux (192.0.2.99) sends this one (two tiers). */
static void wrap_ipip(struct tframe *f)
{
    uint8_t *d = f->p.data - 20;
    uint16_t inner_len = (uint16_t)(f->p.data[16] << 8 | f->p.data[17]);
    memmove(d, f->p.data, 14);
    struct hlb_ipv4_hdr ip = {.ver_ihl = 0x45, .tot_len = hlb_htons((uint16_t)(inner_len + 20)),
                              .frag_off = hlb_htons(0x4000), .ttl = 64,
                              .proto = HLB_IPPROTO_IPIP, .src = ip4("192.0.2.99"),
                              .dst = ip4(T_SELF_IP)};
    ip.csum = hlb_csum(&ip, 20);
    memcpy(d + 14, &ip, 20);
    f->p.data = d;
    f->p.len += 20;
    f->p.headroom -= 20;
}

/* A SYN (or, now and then, another segment) to one of SYN_TABLE's VIPs, in each of
 * the ways the SMux tells apart: the lean pass's SYN (Linux's SYN options, or NOP,
 * NOP, timestamp), one without a timestamp, one forwarded by another SMux, an echo. */
static void syn_frame(struct tframe *f, int lean_only)
{
    static const char *vips[] = {"100.64.0.20", "100.64.0.22", "100.64.0.20", "100.64.0.21"};
    const char *vip = vips[rnd() % (lean_only ? 2 : 4)];
    char src[32];
    snprintf(src, sizeof(src), "198.51.100.%u", 1 + rnd() % 200);
    uint16_t sport = (uint16_t)(40000 + rnd() % 1000);
    uint8_t linux_syn[20] = {2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7};
    unsigned k = rnd() % (lean_only ? 7 : 10);
    if (k < 5)
        build_tcp_opts(f, src, vip, sport, 80, HLB_TCP_SYN, linux_syn, sizeof(linux_syn));
    else if (k < 7)
        build_tcp_ts(f, src, vip, sport, 80, HLB_TCP_SYN, rnd(), 0);
    else if (k == 7)
        build_tcp(f, src, vip, sport, 80, HLB_TCP_SYN);
    else
        build_tcp_ts(f, src, vip, sport, 80, HLB_TCP_ACK, rnd(), rnd());
    if (!lean_only && vip[9] == '2' && vip[10] == '0' && rnd() % 5 == 0)
        wrap_ipip(f);
}

/* Bursts of SYNs through the lean pass's SYN loop against the general code alone:
 * the same DIPs, hints, indexes, counters and round-robin positions, in arrival
 * order with the SYNs the general code takes (forwarded to us, or to forward).
 * Every third burst has only SYNs the lean pass takes. */
static void test_cheetah_syns_equal_reference(void **state)
{
    (void)state;
    struct world a, b;
    world_init_table(&a, SYN_TABLE);
    world_init_table(&b, SYN_TABLE);
    hlb_sf_free(a.w.sf);
    hlb_sf_free(b.w.sf);
    a.w.sf = hlb_sf_create(2, 1500);            /* stacks emptied and refilled (idle sweep) */
    b.w.sf = hlb_sf_create(2, 1500);
    uint32_t now = 1000;
    rng_state = 4242;
    uint64_t lean1 = 0, rx1 = 0;                /* of the rounds on SYN_TABLE */
    for (int r = 0; r < ROUNDS + ROUNDS / 2; r++) {
        if (r == ROUNDS) {                      /* then owned by other SMuxes only */
            lean1 = a.w.st.lean_packets;
            rx1 = a.w.st.rx_packets;
            both_tables(&a, &b, SYN_TABLE_AWAY, 2);
        }
        unsigned n = r % 3 == 0 ? HLB_MAX_BURST : 1 + rnd() % HLB_MAX_BURST;
        for (unsigned i = 0; i < n; i++) {
            syn_frame(&fa[i], r % 3 == 1);
            fb[i] = fa[i];
            fb[i].p.data = fb[i].buf + (fa[i].p.data - fa[i].buf);
        }
        burst_both_and_compare(&a, &b, n, now);
        now += 10;
        hlb_sf_sweep(a.w.sf, now, 64);
        hlb_sf_sweep(b.w.sf, now, 64);
    }
    both_tables(&a, &b, SYN_TABLE, 3);
    print_message("%llu of %llu frames by the lean pass; %llu SYNs given an index, %llu "
                  "stateless, %llu forwarded, %llu opened from another SMux, %llu fallbacks\n",
                  (unsigned long long)a.w.st.lean_packets, (unsigned long long)a.w.st.rx_packets,
                  (unsigned long long)a.w.sf->st.inserts,
                  (unsigned long long)a.w.st.ck_stateless_syns,
                  (unsigned long long)a.w.sf->st.forwarded,
                  (unsigned long long)a.w.st.ck_decapsulated,
                  (unsigned long long)a.w.st.ck_fallback);
    assert_true(lean1 > rx1 / 5);
    assert_true(a.w.sf->st.inserts > 3000 && a.w.sf->st.exhausted > 0 &&
                a.w.sf->st.idle_expired > 1000 &&
                a.w.st.ck_stateless_syns > 100 && a.w.sf->st.forwarded > 100 &&
                a.w.st.ck_decapsulated > 100 && a.w.st.ck_fallback > 100);
    /* A worker without a stateful table: the SYNs of the VIP it owns are placed
     * stateless and counted so, by the lean pass's SYN loop as by the general code. */
    hlb_sf_free(a.w.sf);
    hlb_sf_free(b.w.sf);
    a.w.sf = b.w.sf = NULL;
    uint64_t stateless0 = a.w.st.ck_stateless_syns, lean0 = a.w.st.lean_packets;
    for (int r = 0; r < ROUNDS / 4; r++) {
        unsigned n = 1 + rnd() % HLB_MAX_BURST;
        for (unsigned i = 0; i < n; i++) {
            syn_frame(&fa[i], 1);
            fb[i] = fa[i];
            fb[i].p.data = fb[i].buf + (fa[i].p.data - fa[i].buf);
        }
        burst_both_and_compare(&a, &b, n, now);
        now += 10;
    }
    assert_true(a.w.st.ck_stateless_syns - stateless0 > 200 && a.w.st.lean_packets - lean0 > 400);
    world_free(&a);
    world_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_equals_reference),
        cmocka_unit_test(test_burst_equals_reference_cache_coherence),
        cmocka_unit_test(test_burst_equals_one_at_a_time),
        cmocka_unit_test(test_clean_burst_is_lean),
        cmocka_unit_test(test_ovs_runs_equal_reference),
        cmocka_unit_test(test_workers_equal_reference),
        cmocka_unit_test(test_workers_equal_one_worker),
        cmocka_unit_test(test_cheetah_syns_equal_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
