/* The packet core end to end on frames: encapsulation (IP-in-IP, GRE), selection
 * (crc32 against the spec, ovs, weights), replies (ARP, ICMP frag-needed, echo),
 * drops by reason with the accounting invariant, and connection pinning across a DIP
 * addition and removal. */
#include "dp_testutil.h"

static const char *TABLE_CRC_IPIP =
    "{\"version\":1,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\",\"ports\":["
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.1\",\"weight\":1},"
    "{\"ip\":\"10.0.1.2\",\"weight\":2,\"hostIp\":\"172.16.0.2\"},{\"ip\":\"10.0.1.3\",\"weight\":3}]},"
    "{\"proto\":\"udp\",\"port\":53,\"dips\":[]}]},"
    "{\"vip\":\"100.64.0.2\",\"encap\":\"gre\",\"selection\":\"ovs\",\"ports\":["
    "{\"proto\":\"tcp\",\"port\":0,\"dips\":[{\"ip\":\"10.0.2.1\",\"weight\":1},"
    "{\"ip\":\"10.0.2.2\",\"weight\":0},{\"ip\":\"10.0.2.3\",\"weight\":4}]}]}]}";

static uint64_t accounted(const struct hlb_worker *w)
{
    uint64_t d = total_drops(w) - w->st.drops[HLB_DROP_MULTISEG] - w->st.drops[HLB_DROP_TX_FULL];
    return w->st.fwd_packets + w->st.arp_replies + w->st.icmp_echo_replies + w->st.gw_learned + d;
}

static void test_ipip_outer_header(void **state)
{
    (void)state;
    struct hlb_worker w;
    worker_init(&w, NULL);
    struct hlb_vip_table *t = table_ok(TABLE_CRC_IPIP, 0);
    struct tframe f, orig;
    build_ip(&f, "198.51.100.7", "100.64.0.1", HLB_IPPROTO_TCP, 33000, 80, HLB_TCP_SYN, 3, 0x4000);
    orig = f;
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
    assert_ptr_equal(f.p.data, f.buf + TEST_HEADROOM - 20);
    assert_int_equal(f.p.headroom, TEST_HEADROOM - 20);
    assert_int_equal(f.p.len, 14 + 20 + 43);             /* Ethernet padding dropped */
    assert_int_equal(f.p.out_port, 0);
    const uint8_t *d = f.p.data;
    assert_memory_equal(d, T_GW_MAC, 6);
    assert_memory_equal(d + 6, T_SMUX_MAC, 6);
    assert_int_equal(d[12], 0x08);
    assert_int_equal(d[13], 0x00);
    const uint8_t *ip = d + 14;
    assert_int_equal(ip[0], 0x45);
    assert_int_equal(ip[1], 0x28);                         /* inner TOS copied */
    assert_int_equal((ip[2] << 8) | ip[3], 20 + 43);
    assert_int_equal((ip[6] << 8) | ip[7], 0x4000);       /* DF, no fragment offset */
    assert_int_equal(ip[8], 64);
    assert_int_equal(ip[9], HLB_IPPROTO_IPIP);
    assert_int_equal(hlb_csum(ip, 20), 0);                 /* checksum verifies */
    uint32_t src;
    memcpy(&src, ip + 12, 4);
    assert_int_equal(src, ip4("192.0.2.10"));
    /* Inner packet untouched, byte for byte (TTL included). */
    assert_memory_equal(ip + 20, orig.buf + TEST_HEADROOM + 14, 43);
    assert_int_equal(w.st.fwd_packets, 1);
    assert_int_equal(accounted(&w), w.st.rx_packets);
    hlb_table_free(t);
}

static void test_crc32_selection_matches_spec(void **state)
{
    (void)state;
    struct hlb_worker w;
    worker_init(&w, NULL);
    struct hlb_vip_table *t = table_ok(TABLE_CRC_IPIP, 0);
    const uint32_t outers[3] = {ip4("10.0.1.1"), ip4("172.16.0.2"), ip4("10.0.1.3")};
    const uint32_t cum[3] = {1, 3, 6};
    int hits[3] = {0};
    for (int i = 0; i < 3000; i++) {
        struct tframe f;
        char src[32];
        snprintf(src, sizeof(src), "198.51.%d.%d", i / 250, i % 250 + 1);
        uint16_t sport = (uint16_t)(1024 + i * 7);
        build_tcp(&f, src, "100.64.0.1", sport, 80, HLB_TCP_ACK);
        struct hlb_5tuple tp = {.src_ip = ip4(src), .dst_ip = ip4("100.64.0.1"),
                                .src_port = hlb_htons(sport), .dst_port = hlb_htons(80), .proto = 6};
        /* Expected from the spec's definition (HASH-SPEC.md) over the 13 bytes, not
         * from the per-service split the core uses. */
        uint8_t bytes[13];
        hlb_5tuple_bytes(&tp, bytes);
        int want = hlb_weighted_pick(hlb_crc32_bytes(bytes, 13), cum, 3);
        assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
        assert_int_equal(outer_dst(&f), outers[want]);
        hits[want]++;
    }
    /* Weights 1:2:3 */
    assert_in_range(hits[0], 400, 600);
    assert_in_range(hits[1], 880, 1120);
    assert_in_range(hits[2], 1350, 1650);
    hlb_table_free(t);
}

/* A crc32 service on every port (port 0): the destination port is hashed per
 * packet, not folded into the service's precomputed terms. */
static void test_crc32_every_port_matches_spec(void **state)
{
    (void)state;
    static const char *json =
        "{\"version\":1,\"vips\":[{\"vip\":\"100.64.0.9\",\"selection\":\"crc32\",\"ports\":["
        "{\"proto\":\"tcp\",\"port\":0,\"dips\":[{\"ip\":\"10.0.9.1\",\"weight\":3},"
        "{\"ip\":\"10.0.9.2\",\"weight\":1},{\"ip\":\"10.0.9.3\",\"weight\":2}]}]}]}";
    struct hlb_worker w;
    worker_init(&w, NULL);
    struct hlb_vip_table *t = table_ok(json, 0);
    const uint32_t outers[3] = {ip4("10.0.9.1"), ip4("10.0.9.2"), ip4("10.0.9.3")};
    const uint32_t cum[3] = {3, 4, 6};
    int hits[3] = {0};
    for (int i = 0; i < 2000; i++) {
        struct tframe f;
        uint16_t sport = 40000, dport = (uint16_t)(1 + i * 31);
        build_tcp(&f, "198.51.100.77", "100.64.0.9", sport, dport, HLB_TCP_ACK);
        struct hlb_5tuple tp = {.src_ip = ip4("198.51.100.77"), .dst_ip = ip4("100.64.0.9"),
                                .src_port = hlb_htons(sport), .dst_port = hlb_htons(dport),
                                .proto = 6};
        uint8_t bytes[13];
        hlb_5tuple_bytes(&tp, bytes);
        int want = hlb_weighted_pick(hlb_crc32_bytes(bytes, 13), cum, 3);
        assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
        assert_int_equal(outer_dst(&f), outers[want]);
        hits[want]++;
    }
    assert_true(hits[0] > 0 && hits[1] > 0 && hits[2] > 0);
    hlb_table_free(t);
}

static void test_gre_ovs_weights(void **state)
{
    (void)state;
    struct hlb_worker w;
    worker_init(&w, NULL);
    struct hlb_vip_table *t = table_ok(TABLE_CRC_IPIP, 0);
    int hits[3] = {0};
    const uint32_t dips[3] = {ip4("10.0.2.1"), ip4("10.0.2.2"), ip4("10.0.2.3")};
    for (int i = 0; i < 2000; i++) {
        struct tframe f;
        char src[32];
        snprintf(src, sizeof(src), "203.0.%d.%d", i / 200, i % 200 + 1);
        build_tcp(&f, src, "100.64.0.2", (uint16_t)(2000 + i), (uint16_t)(8000 + i % 3), HLB_TCP_ACK);
        assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
        const uint8_t *ip = f.p.data + 14;
        assert_int_equal(ip[9], HLB_IPPROTO_GRE);
        assert_int_equal((ip[2] << 8) | ip[3], 20 + 4 + 40);
        assert_int_equal(hlb_csum(ip, 20), 0);
        assert_int_equal(ip[20] | ip[21], 0);                  /* no GRE flags, version 0 */
        assert_int_equal((ip[22] << 8) | ip[23], 0x0800);
        assert_int_equal(ip[24], 0x45);                         /* inner IPv4 follows */
        int k;
        for (k = 0; k < 3 && dips[k] != outer_dst(&f); k++)
            ;
        assert_true(k < 3);
        hits[k]++;
        /* The same flow always gets the same DIP, and it is the OVS replica's pick. */
        struct hlb_5tuple tp = {.src_ip = ip4(src), .dst_ip = ip4("100.64.0.2"),
                                .src_port = hlb_htons((uint16_t)(2000 + i)),
                                .dst_port = hlb_htons((uint16_t)(8000 + i % 3)), .proto = 6};
        const uint32_t bids[3] = {0, 1, 2};
        const uint16_t ws[3] = {1, 0, 4};
        assert_int_equal(k, hlb_ovs_select_bucket(hlb_ovs_select_hash(&tp, 0), bids, ws, 3));
    }
    assert_int_equal(hits[1], 0);                               /* weight 0: never */
    /* OVS scores a bucket as (16-bit hash) x weight and takes the best, so weights
     * 1:4 give P(first) = 1/8, not 1/5: the replica inherits that exactly. */
    assert_in_range(hits[0], 170, 330);
    assert_int_equal(hits[0] + hits[2], 2000);
    hlb_table_free(t);
}

static void test_frag_needed(void **state)
{
    (void)state;
    struct hlb_worker w;
    worker_init(&w, NULL);
    struct hlb_vip_table *t = table_ok(TABLE_CRC_IPIP, 0);
    struct tframe f, orig;
    /* 1480-byte IP packet + 20 = 1500 fits; 1481 does not. */
    build_ip(&f, "198.51.100.7", "100.64.0.1", HLB_IPPROTO_TCP, 1, 80, HLB_TCP_ACK, 1440, 0x4000);
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
    assert_int_equal(w.st.icmp_frag_needed, 0);
    build_ip(&f, "198.51.100.7", "100.64.0.1", HLB_IPPROTO_TCP, 1, 80, HLB_TCP_ACK, 1441, 0x4000);
    orig = f;
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
    assert_int_equal(w.st.icmp_frag_needed, 1);
    assert_int_equal(w.st.drops[HLB_DROP_FRAG_NEEDED], 1);
    const uint8_t *d = f.p.data;
    assert_ptr_equal(d, f.buf + TEST_HEADROOM);
    assert_memory_equal(d, T_CLIENT_MAC, 6);                    /* back where it came from */
    assert_memory_equal(d + 6, T_SMUX_MAC, 6);
    const uint8_t *ip = d + 14;
    assert_int_equal(hlb_csum(ip, 20), 0);
    assert_int_equal(ip[9], HLB_IPPROTO_ICMP);
    uint32_t a;
    memcpy(&a, ip + 12, 4);
    assert_int_equal(a, ip4("192.0.2.10"));
    memcpy(&a, ip + 16, 4);
    assert_int_equal(a, ip4("198.51.100.7"));
    const uint8_t *icmp = ip + 20;
    assert_int_equal(icmp[0], 3);
    assert_int_equal(icmp[1], 4);
    assert_int_equal((icmp[6] << 8) | icmp[7], 1480);           /* next-hop MTU */
    assert_int_equal(f.p.len, 14 + 20 + 8 + 20 + 8);
    assert_int_equal(hlb_csum(icmp, 8 + 28), 0);
    assert_memory_equal(icmp + 8, orig.buf + TEST_HEADROOM + 14, 28);        /* quoted header + 8 */

    /* GRE overhead is 24: next-hop MTU 1476. */
    build_ip(&f, "198.51.100.7", "100.64.0.2", HLB_IPPROTO_TCP, 1, 80, HLB_TCP_ACK, 1440, 0x4000);
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
    assert_int_equal(f.p.data[14 + 9], HLB_IPPROTO_ICMP);
    assert_int_equal((f.p.data[14 + 20 + 6] << 8) | f.p.data[14 + 20 + 7], 1476);
    assert_int_equal(accounted(&w), w.st.rx_packets);
    hlb_table_free(t);
}

static void test_arp(void **state)
{
    (void)state;
    struct hlb_worker w;
    worker_init(&w, NULL);
    w.cfg.gw_known = 0;
    memset(w.cfg.gw_mac, 0, 6);
    struct hlb_vip_table *t = table_ok(TABLE_CRC_IPIP, 0);
    struct tframe f;

    /* No gateway MAC yet: VIP traffic is dropped and counted. */
    build_tcp(&f, "198.51.100.7", "100.64.0.1", 1, 80, HLB_TCP_SYN);
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_DROP);
    assert_int_equal(w.st.drops[HLB_DROP_NO_GATEWAY], 1);

    /* ARP request for our address: answered in place. */
    build_arp(&f, HLB_ARP_REQUEST, T_CLIENT_MAC, "192.0.2.77", "192.0.2.10");
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
    struct hlb_arp_ipv4 a;
    memcpy(&a, f.p.data + 14, sizeof(a));
    assert_memory_equal(f.p.data, T_CLIENT_MAC, 6);
    assert_memory_equal(f.p.data + 6, T_SMUX_MAC, 6);
    assert_int_equal(hlb_ntohs(a.op), HLB_ARP_REPLY);
    assert_memory_equal(a.sha, T_SMUX_MAC, 6);
    assert_int_equal(a.spa, ip4("192.0.2.10"));
    assert_memory_equal(a.tha, T_CLIENT_MAC, 6);
    assert_int_equal(a.tpa, ip4("192.0.2.77"));
    assert_int_equal(w.st.arp_replies, 1);

    /* ARP for someone else: ignored, counted. */
    build_arp(&f, HLB_ARP_REQUEST, T_CLIENT_MAC, "192.0.2.77", "192.0.2.99");
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_DROP);
    assert_int_equal(w.st.drops[HLB_DROP_ARP_NOT_FOR_US], 1);

    /* The gateway's reply to our request resolves it; traffic then flows to its MAC. */
    build_arp(&f, HLB_ARP_REPLY, T_GW_MAC, "192.0.2.1", "192.0.2.10");
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_DROP);
    assert_int_equal(w.cfg.gw_known, 1);
    assert_memory_equal(w.cfg.gw_mac, T_GW_MAC, 6);
    build_tcp(&f, "198.51.100.7", "100.64.0.1", 1, 80, HLB_TCP_SYN);
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
    assert_memory_equal(f.p.data, T_GW_MAC, 6);

    /* The request we send for the gateway. */
    uint8_t buf[64];
    assert_int_equal(hlb_build_arp_request(&w.cfg, 0, buf), 60);
    struct hlb_parsed pp;
    assert_int_equal(hlb_parse(buf, 60, &pp), HLB_PARSE_ARP);
    memcpy(&a, buf + 14, sizeof(a));
    assert_int_equal(hlb_ntohs(a.op), HLB_ARP_REQUEST);
    assert_int_equal(a.tpa, ip4("192.0.2.1"));
    assert_int_equal(a.spa, ip4("192.0.2.10"));
    assert_int_equal(accounted(&w), w.st.rx_packets);
    hlb_table_free(t);
}

static void test_ping_self(void **state)
{
    (void)state;
    struct hlb_worker w;
    worker_init(&w, NULL);
    struct hlb_vip_table *t = table_ok(TABLE_CRC_IPIP, 0);
    struct tframe f;
    build_ip(&f, "198.51.100.7", "192.0.2.10", HLB_IPPROTO_ICMP, 0, 0, 0, 16, 0);
    uint8_t *icmp = f.p.data + 34;
    icmp[0] = 8;
    icmp[1] = 0;
    icmp[2] = icmp[3] = 0;
    uint16_t cs = hlb_csum(icmp, 16);
    memcpy(icmp + 2, &cs, 2);
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
    assert_int_equal(f.p.data[34], 0);
    assert_int_equal(hlb_csum(f.p.data + 34, 16), 0);
    uint32_t dst;
    memcpy(&dst, f.p.data + 30, 4);
    assert_int_equal(dst, ip4("198.51.100.7"));
    /* Anything else to our address is dropped. */
    build_tcp(&f, "198.51.100.7", "192.0.2.10", 1, 22, HLB_TCP_SYN);
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_DROP);
    assert_int_equal(w.st.drops[HLB_DROP_TO_SELF], 1);
    hlb_table_free(t);
}

static void test_drops_by_reason(void **state)
{
    (void)state;
    struct hlb_worker w;
    worker_init(&w, NULL);
    struct hlb_vip_table *t = table_ok(TABLE_CRC_IPIP, 0);
    struct tframe f;
    build_tcp(&f, "198.51.100.7", "100.64.0.9", 1, 80, HLB_TCP_SYN);      /* unknown VIP */
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_DROP);
    build_tcp(&f, "198.51.100.7", "100.64.0.1", 1, 81, HLB_TCP_SYN);      /* unknown port */
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_DROP);
    assert_int_equal(w.st.drops[HLB_DROP_NO_VIP], 2);
    build_ip(&f, "198.51.100.7", "100.64.0.1", HLB_IPPROTO_UDP, 1, 53, 0, 10, 0);  /* empty pool */
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_DROP);
    assert_int_equal(w.st.drops[HLB_DROP_NO_BACKEND], 1);
    build_tcp(&f, "198.51.100.7", "100.64.0.1", 1, 80, HLB_TCP_SYN);
    f.p.len = 20;
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_DROP);
    assert_int_equal(w.st.drops[HLB_DROP_TRUNCATED], 1);
    build_tcp(&f, "198.51.100.7", "100.64.0.1", 1, 80, HLB_TCP_SYN);
    f.p.data[12] = 0x86;
    f.p.data[13] = 0xdd;
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_DROP);
    assert_int_equal(w.st.drops[HLB_DROP_NOT_IPV4], 1);
    build_tcp(&f, "198.51.100.7", "100.64.0.1", 1, 80, HLB_TCP_SYN);
    f.p.data[25] ^= 1;
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_DROP);
    assert_int_equal(w.st.drops[HLB_DROP_BAD_IP], 1);
    build_ip(&f, "198.51.100.7", "100.64.0.1", HLB_IPPROTO_TCP, 1, 80, 0, 100, 0x2000);
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_DROP);
    assert_int_equal(w.st.drops[HLB_DROP_FRAGMENT], 1);
    build_tcp(&f, "198.51.100.7", "100.64.0.1", 1, 80, HLB_TCP_SYN);
    f.p.headroom = 10;
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_DROP);
    assert_int_equal(w.st.drops[HLB_DROP_NO_HEADROOM], 1);
    assert_int_equal(w.st.fwd_packets, 0);
    assert_int_equal(accounted(&w), w.st.rx_packets);
    assert_int_equal(w.st.rx_packets, 8);

    /* Per-service and per-DIP counters only move for forwarded packets. */
    for (uint32_t s = 0; s < t->n_services; s++)
        assert_int_equal(t->svc_counters[s].packets, 0);
    build_tcp(&f, "198.51.100.7", "100.64.0.1", 1, 80, HLB_TCP_SYN);
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
    assert_int_equal(t->svc_counters[0].packets, 1);
    assert_int_equal(t->svc_counters[0].bytes, 40);
    uint64_t dsum = 0;
    for (uint32_t d = 0; d < t->n_dips; d++)
        dsum += t->dip_counters[d].packets;
    assert_int_equal(dsum, 1);
    hlb_table_free(t);
}

static void test_two_port_mode(void **state)
{
    (void)state;
    struct hlb_worker w;
    worker_init(&w, NULL);
    w.cfg.two_port = 1;
    struct hlb_vip_table *t = table_ok(TABLE_CRC_IPIP, 0);
    struct tframe f;
    build_tcp(&f, "198.51.100.7", "100.64.0.1", 1, 80, HLB_TCP_SYN);
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
    assert_int_equal(f.p.out_port, 1);
    assert_memory_equal(f.p.data + 6, w.cfg.port_mac[1], 6);
    /* Replies leave by the port the request came in on. */
    build_arp(&f, HLB_ARP_REQUEST, T_CLIENT_MAC, "192.0.2.77", "192.0.2.10");
    f.p.in_port = 1;
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
    assert_int_equal(f.p.out_port, 1);
    hlb_table_free(t);
}

/* ---- connection pinning ---------------------------------------------------------- */

static const char *POOL2 =
    "{\"version\":1,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"%s\",\"ports\":["
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.1\"},{\"ip\":\"10.0.1.2\"}%s]}]}]}";

static struct hlb_vip_table *pool_table(const char *sel, const char *extra, int pin, uint32_t gen)
{
    char buf[512];
    snprintf(buf, sizeof(buf), POOL2, sel, extra);
    struct hlb_vip_table *t = table_ok(buf, pin);
    t->gen = gen;
    return t;
}

static uint32_t send_flow(struct hlb_worker *w, struct hlb_vip_table *t, int i, uint8_t flags,
                          uint32_t now)
{
    struct tframe f;
    char src[32];
    snprintf(src, sizeof(src), "198.51.%d.%d", i / 200, i % 200 + 1);
    build_tcp(&f, src, "100.64.0.1", (uint16_t)(3000 + i), 80, flags);
    if (run1(w, t, &f, now) != HLB_V_TX)
        return 0;
    return outer_dst(&f);
}

static void pinning_across_dip_addition(const char *sel)
{
    struct hlb_conn_table *ct = hlb_conn_table_create(4096, NULL);
    struct hlb_worker w;
    worker_init(&w, ct);
    enum { N = 400 };
    uint32_t first[N];
    struct hlb_vip_table *a = pool_table(sel, "", 1, 1);
    for (int i = 0; i < N; i++)
        first[i] = send_flow(&w, a, i, HLB_TCP_SYN, 10);
    assert_int_equal(ct->st.entries, N);

    /* DIP added (new table generation): every live connection stays on its DIP... */
    struct hlb_vip_table *b = pool_table(sel, ",{\"ip\":\"10.0.1.3\",\"weight\":3}", 1, 2);
    int moved_by_hash = 0, new_to_c = 0;
    for (int i = 0; i < N; i++) {
        assert_int_equal(send_flow(&w, b, i, HLB_TCP_ACK, 20), first[i]);
        /* ...although the hash alone would move many of them (the test can fail). */
        struct hlb_5tuple tp;
        char src[32];
        snprintf(src, sizeof(src), "198.51.%d.%d", i / 200, i % 200 + 1);
        tp = (struct hlb_5tuple){.src_ip = ip4(src), .dst_ip = ip4("100.64.0.1"),
                                 .src_port = hlb_htons((uint16_t)(3000 + i)),
                                 .dst_port = hlb_htons(80), .proto = 6};
        const struct hlb_service *s = hlb_table_lookup(b, tp.dst_ip, 6, tp.dst_port);
        moved_by_hash += b->dips[hlb_select_dip(b, s, &tp)].ip != first[i];
    }
    assert_true(moved_by_hash > N / 4);
    /* New connections do use the new DIP. */
    for (int i = N; i < 2 * N; i++)
        new_to_c += send_flow(&w, b, i, HLB_TCP_SYN, 20) == ip4("10.0.1.3");
    assert_true(new_to_c > N / 4);

    /* FIN then a new SYN on the same tuple: a new connection, chosen afresh. */
    int reselected = 0;
    for (int i = 0; i < N; i++) {
        send_flow(&w, b, i, HLB_TCP_FIN | HLB_TCP_ACK, 30);
        reselected += send_flow(&w, b, i, HLB_TCP_SYN, 31) != first[i];
    }
    assert_true(reselected > 0);

    /* RST removes the entry. */
    uint64_t before = ct->st.entries;
    send_flow(&w, b, 0, HLB_TCP_RST, 40);
    assert_int_equal(ct->st.entries, before - 1);

    /* DIP removed: its connections are re-pinned to a live DIP and counted. */
    struct hlb_vip_table *c = pool_table(sel, "", 1, 3);
    (void)c;
    char one[512];
    snprintf(one, sizeof(one),
             "{\"version\":1,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"%s\",\"ports\":["
             "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.2\"}]}]}]}", sel);
    struct hlb_vip_table *d = table_ok(one, 1);
    d->gen = 4;
    for (int i = N; i < 2 * N; i++)
        assert_int_equal(send_flow(&w, d, i, HLB_TCP_ACK, 50), ip4("10.0.1.2"));
    assert_true(w.st.conn_repinned > 0);
    assert_int_equal(accounted(&w), w.st.rx_packets);
    hlb_table_free(a);
    hlb_table_free(b);
    hlb_table_free(c);
    hlb_table_free(d);
    hlb_conn_table_free(ct);
}

static void test_pinning_crc32(void **state)
{
    (void)state;
    pinning_across_dip_addition("crc32");
}

static void test_pinning_ovs(void **state)
{
    (void)state;
    pinning_across_dip_addition("ovs");
}

static void test_unpinned_vip_moves(void **state)
{
    (void)state;
    /* connTable false: the same DIP addition does move connections (stateless). */
    struct hlb_conn_table *ct = hlb_conn_table_create(4096, NULL);
    struct hlb_worker w;
    worker_init(&w, ct);
    struct hlb_vip_table *a = pool_table("crc32", "", 0, 1);
    struct hlb_vip_table *b = pool_table("crc32", ",{\"ip\":\"10.0.1.3\",\"weight\":3}", 0, 2);
    int moved = 0;
    for (int i = 0; i < 200; i++) {
        uint32_t d1 = send_flow(&w, a, i, HLB_TCP_SYN, 0);
        moved += send_flow(&w, b, i, HLB_TCP_ACK, 0) != d1;
    }
    assert_true(moved > 50);
    assert_int_equal(ct->st.entries, 0);
    hlb_table_free(a);
    hlb_table_free(b);
    hlb_conn_table_free(ct);
}

static void test_active_connection_never_expires(void **state)
{
    (void)state;
    /* The idle timer is refreshed lazily (every timeout/4 at most): an active
     * connection must still never expire, and an idle one must. */
    const struct hlb_conn_timeouts to = {.syn_ms = 100, .est_ms = 100, .fin_ms = 50,
                                         .udp_ms = 100};
    struct hlb_conn_table *ct = hlb_conn_table_create(1024, &to);
    struct hlb_worker w;
    worker_init(&w, ct);
    struct hlb_vip_table *t = pool_table("crc32", "", 1, 1);
    send_flow(&w, t, 7, HLB_TCP_SYN, 0);
    for (uint32_t now = 30; now <= 3000; now += 30)
        send_flow(&w, t, 7, HLB_TCP_ACK, now);
    assert_int_equal(w.st.conn_misses, 1);
    assert_int_equal(w.st.conn_hits, 100);
    send_flow(&w, t, 7, HLB_TCP_ACK, 3000 + 101);             /* idle > timeout */
    assert_int_equal(w.st.conn_misses, 2);
    hlb_table_free(t);
    hlb_conn_table_free(ct);
}

/* Forged one-packet flows (mid-flow ACKs, FINs of connections never seen) fill every
 * bucket of a small table; real new connections are still pinned (they displace the
 * forged entries), established ones are never pushed out, and a forged-looking flow
 * that sends a second segment is confirmed and stays. */
static void test_forged_flood_cannot_block_new_connections(void **state)
{
    (void)state;
    struct hlb_conn_table *ct = hlb_conn_table_create(64, NULL);   /* 8 buckets of 8 */
    struct hlb_worker w;
    worker_init(&w, ct);
    struct hlb_vip_table *t = pool_table("crc32", "", 1, 1);
    enum { REAL = 16, FLOOD = 4000, NEW = 24 };
    uint32_t dip[REAL + FLOOD + NEW];
    for (int i = 0; i < REAL; i++) {                      /* established before the flood */
        dip[i] = send_flow(&w, t, i, HLB_TCP_SYN, 10);
        send_flow(&w, t, i, HLB_TCP_ACK, 11);
    }
    for (int i = REAL; i < REAL + FLOOD; i++)             /* one forged segment each */
        send_flow(&w, t, i, i % 3 ? HLB_TCP_ACK : HLB_TCP_FIN | HLB_TCP_ACK, 20);
    assert_int_equal(ct->st.entries, ct->capacity);       /* the flood did fill it */
    /* A second segment of the last flood flow (still in the table): confirmed, no
     * longer displaceable. */
    uint64_t hits = w.st.conn_hits;
    send_flow(&w, t, REAL + FLOOD - 1, HLB_TCP_ACK, 21);
    assert_int_equal(w.st.conn_hits, hits + 1);
    uint64_t failures = ct->st.insert_failures;
    for (int i = REAL + FLOOD; i < REAL + FLOOD + NEW; i++) {   /* real new connections */
        dip[i] = send_flow(&w, t, i, HLB_TCP_SYN, 30);
        send_flow(&w, t, i, HLB_TCP_ACK, 31);
    }
    assert_int_equal(ct->st.insert_failures, failures);   /* every one was pinned */
    assert_true(ct->st.evict_displaced >= NEW);
    for (int i = 0; i < 2 * FLOOD; i++)                   /* a second flood */
        send_flow(&w, t, REAL + FLOOD + NEW + i, HLB_TCP_ACK, 40);

    /* A DIP added: every real connection and the confirmed flow stay where they
     * were pinned (the hash alone would move some: pinning_across_dip_addition). */
    struct hlb_vip_table *b = pool_table("crc32", ",{\"ip\":\"10.0.1.3\",\"weight\":3}", 1, 2);
    uint64_t misses = w.st.conn_misses;
    for (int i = 0; i < REAL; i++)
        assert_int_equal(send_flow(&w, b, i, HLB_TCP_ACK, 50), dip[i]);
    for (int i = REAL + FLOOD; i < REAL + FLOOD + NEW; i++)
        assert_int_equal(send_flow(&w, b, i, HLB_TCP_ACK, 50), dip[i]);
    send_flow(&w, b, REAL + FLOOD - 1, HLB_TCP_ACK, 50);
    assert_int_equal(w.st.conn_misses, misses);           /* all found in the table */
    assert_int_equal(accounted(&w), w.st.rx_packets);
    hlb_table_free(t);
    hlb_table_free(b);
    hlb_conn_table_free(ct);
}

/* Which bucket of ct the flow send_flow(i) (or its UDP twin, port 53) lands in. */
static uint32_t flow_bucket(const struct hlb_conn_table *ct, int i, uint8_t proto)
{
    char src[32];
    snprintf(src, sizeof(src), "198.51.%d.%d", i / 200, i % 200 + 1);
    struct hlb_5tuple tp = {.src_ip = ip4(src), .dst_ip = ip4("100.64.0.1"),
                            .src_port = hlb_htons((uint16_t)(3000 + i)),
                            .dst_port = hlb_htons(proto == HLB_IPPROTO_TCP ? 80 : 53),
                            .proto = proto};
    return hlb_conn_hash(&tp) & ct->mask;
}

static uint32_t send_datagram(struct hlb_worker *w, struct hlb_vip_table *t, int i, uint32_t now)
{
    struct tframe f;
    char src[32];
    snprintf(src, sizeof(src), "198.51.%d.%d", i / 200, i % 200 + 1);
    build_ip(&f, src, "100.64.0.1", HLB_IPPROTO_UDP, (uint16_t)(3000 + i), 53, 0, 8, 0);
    return run1(w, t, &f, now) == HLB_V_TX ? outer_dst(&f) : 0;
}

/* In a table full of forged adopted entries (300 s timers), a real SYN (10 s) and a
 * real first datagram (60 s) are displaced oldest first, like any displaceable
 * entry: a few forged segments into their bucket between their first and second
 * packets take older entries, not them (nearest-expiry first would take them at the
 * first forged insert). */
static void test_displacement_takes_the_oldest_entry(void **state)
{
    (void)state;
    struct hlb_conn_table *ct = hlb_conn_table_create(64, NULL);   /* 8 buckets of 8 */
    struct hlb_worker w;
    worker_init(&w, ct);
    struct hlb_vip_table *t = table_ok(
        "{\"version\":1,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\",\"ports\":["
        "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.1\"},{\"ip\":\"10.0.1.2\"}]},"
        "{\"proto\":\"udp\",\"port\":53,\"dips\":[{\"ip\":\"10.0.1.1\"},{\"ip\":\"10.0.1.2\"}]}]}]}", 1);
    t->gen = 1;
    int next = 0;
    while (ct->st.entries < ct->capacity)                   /* the forged flood */
        send_flow(&w, t, next++, HLB_TCP_ACK, 20);
    const int real_tcp = 5000, real_udp = 5001;
    for (int real = real_tcp; real <= real_udp; real++) {
        int tcp = real == real_tcp;
        uint32_t bucket = flow_bucket(ct, real, tcp ? HLB_IPPROTO_TCP : HLB_IPPROTO_UDP);
        uint32_t dip = tcp ? send_flow(&w, t, real, HLB_TCP_SYN, 30) : send_datagram(&w, t, real, 30);
        uint64_t displaced = ct->st.evict_displaced;
        for (int forged = 0; forged < HLB_CONN_WAYS / 2; next++)   /* into its bucket */
            if (flow_bucket(ct, next, HLB_IPPROTO_TCP) == bucket) {
                send_flow(&w, t, next, HLB_TCP_ACK, 31);
                forged++;
            }
        assert_int_equal(ct->st.evict_displaced, displaced + HLB_CONN_WAYS / 2);
        uint64_t hits = w.st.conn_hits;
        uint32_t again = tcp ? send_flow(&w, t, real, HLB_TCP_ACK, 32) : send_datagram(&w, t, real, 32);
        assert_int_equal(w.st.conn_hits, hits + 1);          /* still pinned */
        assert_int_equal(again, dip);
    }
    assert_int_equal(accounted(&w), w.st.rx_packets);
    hlb_table_free(t);
    hlb_conn_table_free(ct);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ipip_outer_header),
        cmocka_unit_test(test_crc32_selection_matches_spec),
        cmocka_unit_test(test_crc32_every_port_matches_spec),
        cmocka_unit_test(test_gre_ovs_weights),
        cmocka_unit_test(test_frag_needed),
        cmocka_unit_test(test_arp),
        cmocka_unit_test(test_ping_self),
        cmocka_unit_test(test_drops_by_reason),
        cmocka_unit_test(test_two_port_mode),
        cmocka_unit_test(test_pinning_crc32),
        cmocka_unit_test(test_pinning_ovs),
        cmocka_unit_test(test_unpinned_vip_moves),
        cmocka_unit_test(test_active_connection_never_expires),
        cmocka_unit_test(test_forged_flood_cannot_block_new_connections),
        cmocka_unit_test(test_displacement_takes_the_oldest_entry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
