/* Cheetah cookies in the SMux (src/cheetah.h, p4/COOKIE-SPEC.md): the shared vectors
 * and 10,000 random rows of the Python model through the C hash and decode and
 * through the packet core, the table fields and their errors, placement across pool
 * changes, forged cookies, the SYN mechanisms, the timestamp-less fallback and
 * option layouts.  Vector files: $HLB_COOKIE_VECTORS (committed) and
 * $HLB_COOKIE_VECTORS_RANDOM (written by the model at build time). */
#include "dp_testutil.h"
#include "cheetah.h"
#include <jansson.h>

static const char *const DIPS[3] = {"10.9.0.1", "10.9.0.2", "10.9.0.3"};

struct row {
    char seq[64], mode[16], key[40], vip[16], client[16];
    unsigned vip_port, client_port, ident, cookie;
    unsigned long long hash;
    unsigned tsval, wire_tsval, last_sent, wire_tsecr, tsecr;
};

static int read_row(const char *line, struct row *r)
{
    return sscanf(line, "%63[^,],%15[^,],%39[^,],%15[^,],%u,%15[^,],%u,%u,%llx,%u,%x,%x,%x,%x,%x",
                  r->seq, r->mode, r->key, r->vip, &r->vip_port, r->client, &r->client_port,
                  &r->ident, &r->hash, &r->cookie, &r->tsval, &r->wire_tsval, &r->last_sent,
                  &r->wire_tsecr, &r->tsecr) == 15;
}

/* A cheetah table: one VIP, port vport, three DIPs with server ids ids[0..2]. */
static struct hlb_vip_table *ck_table(const char *vip, unsigned vport, const char *mode,
                                      const char *key, const unsigned ids[3], const char *extra)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"version\":1,\"vips\":[{\"vip\":\"%s\",\"selection\":\"crc32\",\"connTable\":false,"
             "\"affinity\":\"cheetah\",\"cookieKey\":\"%s\",\"cookieHash\":\"%s\"%s,"
             "\"ports\":[{\"proto\":\"tcp\",\"port\":%u,\"dips\":["
             "{\"ip\":\"%s\",\"serverId\":%u},{\"ip\":\"%s\",\"serverId\":%u},"
             "{\"ip\":\"%s\",\"serverId\":%u}]}]}]}",
             vip, key, mode, extra, vport, DIPS[0], ids[0], DIPS[1], ids[1], DIPS[2], ids[2]);
    return table_ok(json, 0);
}

/* Every row: C hash = the model's H, cookie and ident; and the client's echo through
 * the packet core (lean pass and general code) reaches the DIP of that server id, or,
 * for a stateful ident (no stateful SMux here), is dropped as bad_cookie. */
static unsigned check_file(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        fail_msg("cannot open %s", path);
    char line[512];
    unsigned rows = 0, placed = 0, dropped = 0, skipped = 0;
    while (fgets(line, sizeof(line), fp)) {
        struct row r;
        if (line[0] == '#' || strncmp(line, "seq,", 4) == 0)
            continue;
        assert_true(read_row(line, &r));
        rows++;
        unsigned id = r.ident;
        unsigned others[2] = {id == 16383 ? 1 : 16383, id == 16382 ? 2 : 16382};
        int stateful = (id & HLB_COOKIE_STATEFUL) != 0;
        unsigned ids[3] = {others[0], stateful ? 77 : id, others[1]};
        /* The hash and decode for every row; the packet core only for VIPs a table
         * takes (the vectors' edge cases include 0.0.0.0 and 255.255.255.255). */
        uint32_t vip = ip4(r.vip), vh = ntohl(vip);
        int routable = vh != 0 && (vh >> 28) < 0xe && (vh >> 24) != 127;
        struct hlb_vip_table *t = routable ? ck_table(r.vip, r.vip_port, r.mode, r.key, ids, "")
                                           : NULL;
        struct hlb_service alone = {.vip = vip};
        if (!t) {
            char js[200];
            snprintf(js, sizeof(js), "{\"affinity\":\"cheetah\",\"cookieKey\":\"%s\","
                     "\"cookieHash\":\"%s\"}", r.key, r.mode);
            json_t *o = json_loads(js, 0, NULL);
            assert_int_equal(hlb_ck_parse_vip(o, "vips[0]", &alone, NULL), 0);
            json_decref(o);
            alone.vip = vip;
            skipped++;
        }
        const struct hlb_service *s = t ? &t->services[0] : &alone;
        uint32_t client = ip4(r.client);
        uint16_t cport = hlb_htons((uint16_t)r.client_port), vport = hlb_htons((uint16_t)r.vip_port);

        uint64_t h = hlb_ck_hash(s, client, cport, vport);
        if (h != r.hash)
            fail_msg("%s: H = %016llx, the model says %016llx", r.seq, (unsigned long long)h,
                     r.hash);
        assert_int_equal((r.ident ^ h) & HLB_COOKIE_MASK, r.cookie);
        assert_int_equal(hlb_cookie_of(r.wire_tsval), r.cookie);
        assert_int_equal(hlb_ck_ident(s, r.wire_tsval, client, cport, vport), r.ident);
        assert_int_equal(hlb_ck_ident(s, r.wire_tsecr, client, cport, vport), r.ident);

        for (int ref = 0; t && ref < 2; ref++) {
            struct hlb_worker w;
            worker_init(&w, NULL);
            struct tframe f;
            build_tcp_ts(&f, r.client, r.vip, (uint16_t)r.client_port, (uint16_t)r.vip_port,
                         HLB_TCP_ACK, 12345, r.wire_tsecr);
            uint8_t v = 0xee;
            if (ref)
                hlb_dp_burst_reference(&w, t, &f.p, &v, 1, 0);
            else
                hlb_dp_burst(&w, t, &f.p, &v, 1, 0);
            if (stateful) {
                assert_int_equal(v, HLB_V_DROP);
                assert_int_equal(w.st.drops[HLB_DROP_BAD_COOKIE], 1);
                dropped++;
            } else {
                if (v != HLB_V_TX || outer_dst(&f) != ip4(DIPS[1]))
                    fail_msg("%s: ident %u not placed on its DIP (%s path)", r.seq, id,
                             ref ? "general" : "lean");
                assert_int_equal(w.st.ck_decoded, 1);
                assert_int_equal(w.st.lean_packets, ref ? 0 : 1);
                placed++;
            }
        }
        hlb_table_free(t);
    }
    fclose(fp);
    print_message("%s: %u rows (%u with a VIP no table takes: hash and decode only), %u "
                  "echoes placed, %u stateful echoes dropped\n", path, rows, skipped, placed / 2,
                  dropped / 2);
    assert_true(rows > 0 && placed > 0);
    return rows;
}

/* The burst form of the hash equals hlb_ck_hash() in both modes, over random keys,
 * VIPs, tuples and burst lengths (every lane and the scalar tail). */
static void test_hash_burst(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15ull;
#define NEXT() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    unsigned checked = 0;
    for (int round = 0; round < 400; round++) {
        struct hlb_service s = {.vip = (uint32_t)NEXT(), .ck_k0 = NEXT(), .ck_k1 = NEXT(),
                                .ck_crc_key = (uint32_t)NEXT(),
                                .ck_mode = round % 4 ? HLB_COOKIE_SIPHASH13 : HLB_COOKIE_CRC32C};
        uint32_t src[HLB_MAX_BURST];
        uint16_t sport[HLB_MAX_BURST], dport[HLB_MAX_BURST];
        uint64_t h[HLB_MAX_BURST];
        unsigned n = 1 + round % HLB_MAX_BURST;
        for (unsigned k = 0; k < n; k++) {
            uint64_t r = NEXT();
            src[k] = (uint32_t)r;
            sport[k] = (uint16_t)(r >> 32);
            dport[k] = (uint16_t)(r >> 48);
        }
        hlb_ck_hash_burst(&s, src, sport, dport, n, h);
        for (unsigned k = 0; k < n; k++, checked++)
            if (h[k] != hlb_ck_hash(&s, src[k], sport[k], dport[k]))
                fail_msg("round %d, tuple %u of %u: %016llx, hlb_ck_hash %016llx", round, k, n,
                         (unsigned long long)h[k],
                         (unsigned long long)hlb_ck_hash(&s, src[k], sport[k], dport[k]));
    }
#undef NEXT
    assert_true(checked > 6000);
}

static void test_shared_vectors(void **state)
{
    (void)state;
    const char *p = getenv("HLB_COOKIE_VECTORS");
    assert_non_null(p);
    assert_true(check_file(p) >= 400);
}

static void test_model_random_rows(void **state)
{
    (void)state;
    const char *p = getenv("HLB_COOKIE_VECTORS_RANDOM");
    assert_non_null(p);
    assert_true(check_file(p) >= 10000);
}

#define KEY "000102030405060708090a0b0c0d0e0f"
#define VIPHEAD "{\"version\":1,\"vips\":[{\"vip\":\"10.200.0.10\","
#define POOL(d0, d1) "\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[" d0 "," d1 "]}]}"

static void test_table_fields(void **state)
{
    (void)state;
    const char *d_ok = "{\"ip\":\"10.9.0.1\",\"serverId\":1}";
    const char *d_ok2 = "{\"ip\":\"10.9.0.2\",\"serverId\":2}";
    char json[1024];
#define ERR(vipfields, d0, d1, field, why)                                                   \
    do {                                                                                    \
        snprintf(json, sizeof(json), VIPHEAD "%s" POOL("%s", "%s") "]}", vipfields, d0, d1); \
        expect_table_error(json, field, why);                                                \
    } while (0)
    const char *ck = "\"affinity\":\"cheetah\",\"cookieKey\":\"" KEY "\",";
    ERR("\"affinity\":\"cookie\",", d_ok, d_ok2, "vips[0].affinity", "hash, cheetah");
    ERR("\"affinity\":\"cheetah\",", d_ok, d_ok2, "vips[0].cookieKey", "required");
    ERR("\"affinity\":\"cheetah\",\"cookieKey\":\"0001\",", d_ok, d_ok2, "vips[0].cookieKey",
        "32 hex digits");
    ERR("\"affinity\":\"cheetah\",\"cookieKey\":\"000102030405060708090a0b0c0d0e0g\",", d_ok,
        d_ok2, "vips[0].cookieKey", "32 hex digits");
    ERR("\"affinity\":\"cheetah\",\"cookieKey\":7,", d_ok, d_ok2, "vips[0].cookieKey",
        "32 hex digits");
    ERR("\"affinity\":\"cheetah\",\"cookieKey\":\"" KEY "\",\"cookieHash\":\"siphash\",", d_ok,
        d_ok2, "vips[0].cookieHash", "siphash13, crc32c");
    ERR("\"affinity\":\"cheetah\",\"cookieKey\":\"" KEY "\",\"mechanism\":\"pow2\",", d_ok, d_ok2,
        "vips[0].mechanism", "wrr, rr, hash, p2c, least-loaded, awrr");
    ERR("\"cookieKey\":\"" KEY "\",", d_ok, d_ok2, "vips[0].cookieKey", "only for affinity");
    ERR("\"mechanism\":\"rr\",", d_ok, d_ok2, "vips[0].mechanism", "only for affinity");
    ERR(ck, d_ok, "{\"ip\":\"10.9.0.2\"}", "vips[0].ports[0].dips[1].serverId", "required");
    ERR(ck, d_ok, "{\"ip\":\"10.9.0.2\",\"serverId\":0}", "vips[0].ports[0].dips[1].serverId",
        "between 1 and 16383");
    ERR(ck, d_ok, "{\"ip\":\"10.9.0.2\",\"serverId\":16384}",
        "vips[0].ports[0].dips[1].serverId", "between 1 and 16383");
    ERR(ck, d_ok, "{\"ip\":\"10.9.0.2\",\"serverId\":\"2\"}", "vips[0].ports[0].dips[1].serverId",
        "integer");
    /* one id, two hosts; one host, two ids (a hash VIP's ids are checked as well) */
    ERR(ck, d_ok, "{\"ip\":\"10.9.0.2\",\"serverId\":1}", "vips[0].ports[0].dips[1].serverId",
        "already names host 10.9.0.1");
    ERR("", d_ok, "{\"ip\":\"10.9.0.2\",\"serverId\":1}", "vips[0].ports[0].dips[1].serverId",
        "already names host 10.9.0.1");
    ERR(ck, d_ok, "{\"ip\":\"10.9.0.1\",\"serverId\":3,\"bucketId\":5}",
        "vips[0].ports[0].dips[1].serverId", "already has serverId 1");
    /* two DIPs (containers) of one host in one pool: the cookie names the host */
    ERR(ck, "{\"ip\":\"10.9.0.1\",\"hostIp\":\"172.16.0.1\",\"serverId\":4}",
        "{\"ip\":\"10.9.0.2\",\"hostIp\":\"172.16.0.1\",\"serverId\":4}",
        "vips[0].ports[0].dips[1].serverId", "could not tell them apart");
    /* across VIPs */
    expect_table_error("{\"version\":1,\"vips\":[{\"vip\":\"10.200.0.10\",\"ports\":[{\"proto\":"
                       "\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.9.0.1\",\"serverId\":9}]}]},"
                       "{\"vip\":\"10.200.0.11\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,"
                       "\"dips\":[{\"ip\":\"10.9.0.7\",\"serverId\":9}]}]}]}",
                       "vips[1].ports[0].dips[0].serverId", "already names host 10.9.0.1");
#undef ERR

    /* Accepted: a WCMP unit repeating its DIP keeps its id; GET /table never shows the
     * key, only its fingerprint (COOKIE-SPEC §8; the value is the Python model's). */
    snprintf(json, sizeof(json), VIPHEAD "%s\"mechanism\":\"rr\"," POOL("%s", "%s") "]}", ck,
             d_ok, "{\"ip\":\"10.9.0.1\",\"serverId\":1,\"bucketId\":1}");
    struct hlb_vip_table *t = table_ok(json, 0);
    assert_int_equal(t->services[0].affinity, HLB_AFF_CHEETAH);
    assert_int_equal(t->services[0].mechanism, HLB_MECH_RR);
    assert_int_equal(t->services[0].ck_mode, HLB_COOKIE_SIPHASH13);
    assert_int_equal(hlb_ck_server_dip(t, &t->services[0], 1), 0);
    assert_int_equal(hlb_ck_server_dip(t, &t->services[0], 2), -1);
    assert_int_equal(hlb_ck_server_dip(t, &t->services[0], 0), -1);
    char *doc = hlb_table_to_json(t);
    assert_null(strstr(doc, KEY));
    assert_non_null(strstr(doc, "\"cookieKeyFingerprint\":\"23c1a1b1\""));
    free(doc);
    hlb_table_free(t);
}

/* The 13-byte tuple of a flow to 10.200.0.10:80 from client c:p, its H under KEY. */
static uint32_t cookie_for(const struct hlb_service *s, const char *client, uint16_t port,
                           unsigned id)
{
    uint64_t h = hlb_ck_hash(s, ip4(client), hlb_htons(port), hlb_htons(80));
    return (uint32_t)((id ^ h) & HLB_COOKIE_MASK);
}

/* The frames of n flows, each echoing the cookie of server id ids[k] in a TSecr with
 * the version bit set on odd flows. */
static void flows_with_cookies(struct tframe *f, unsigned n, const struct hlb_service *s,
                               const unsigned *ids)
{
    for (unsigned k = 0; k < n; k++) {
        char client[16];
        snprintf(client, sizeof(client), "10.77.%u.%u", k / 200, 1 + k % 200);
        uint32_t c = cookie_for(s, client, (uint16_t)(20000 + k), ids[k]);
        build_tcp_ts(&f[k], client, "10.200.0.10", (uint16_t)(20000 + k), 80,
                     HLB_TCP_ACK | (k % 3 == 0 ? 0x08 : 0), 777 + k,
                     (k & 1u) << 31 | c << 16 | (k * 7919u & 0xffff));
    }
}

/* Runs frames [0, n) in bursts of up to 32 (lean pass), returning verdicts. */
static void run_bursts(struct hlb_worker *w, struct hlb_vip_table *t, struct tframe *f,
                       unsigned n, uint8_t *v)
{
    for (unsigned i = 0; i < n; i += 32) {
        unsigned m = n - i < 32 ? n - i : 32;
        struct hlb_pkt p[32];
        for (unsigned k = 0; k < m; k++)
            p[k] = f[i + k].p;
        hlb_dp_burst(w, t, p, v + i, m, 0);
        for (unsigned k = 0; k < m; k++)
            f[i + k].p = p[k];
    }
}

#define NFLOW 400
static const char *const POOL_A =
    "{\"version\":1,\"vips\":[{\"vip\":\"10.200.0.10\",\"selection\":\"crc32\","
    "\"affinity\":\"cheetah\",\"cookieKey\":\"" KEY "\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,"
    "\"dips\":[{\"ip\":\"10.9.0.1\",\"serverId\":1},{\"ip\":\"10.9.0.2\",\"serverId\":2},"
    "{\"ip\":\"10.9.0.3\",\"serverId\":3},{\"ip\":\"10.9.0.4\",\"serverId\":4}]}]}]}";
/* 10.9.0.4 removed, 10.9.0.5 added, the order shuffled, 10.9.0.2 drained. */
static const char *const POOL_B =
    "{\"version\":2,\"vips\":[{\"vip\":\"10.200.0.10\",\"selection\":\"crc32\","
    "\"affinity\":\"cheetah\",\"cookieKey\":\"" KEY "\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,"
    "\"dips\":[{\"ip\":\"10.9.0.5\",\"serverId\":5},{\"ip\":\"10.9.0.3\",\"serverId\":3},"
    "{\"ip\":\"10.9.0.2\",\"serverId\":2,\"weight\":0},{\"ip\":\"10.9.0.1\",\"serverId\":1}]}]}]}";

/* Connections whose server wrote its id's cookie stay on their DIP through the pool
 * change (where the hash alone would move many of them); those of the removed
 * server are dropped and counted, never sent elsewhere. */
static void test_pool_change(void **state)
{
    (void)state;
    struct hlb_vip_table *a = table_ok(POOL_A, 0), *b = table_ok(POOL_B, 0);
    static struct tframe f[NFLOW];
    unsigned ids[NFLOW];
    uint8_t v[NFLOW];
    /* The server each connection's SYN found under A (hash), as its cookie says. */
    for (unsigned k = 0; k < NFLOW; k++) {
        char client[16];
        snprintf(client, sizeof(client), "10.77.%u.%u", k / 200, 1 + k % 200);
        struct hlb_5tuple tp = {.src_ip = ip4(client), .dst_ip = ip4("10.200.0.10"),
                                .src_port = hlb_htons((uint16_t)(20000 + k)),
                                .dst_port = hlb_htons(80), .proto = HLB_IPPROTO_TCP};
        ids[k] = a->server_ids[hlb_select_dip(a, &a->services[0], &tp)];
    }
    flows_with_cookies(f, NFLOW, &b->services[0], ids);
    unsigned moved_by_hash = 0, gone = 0;
    for (unsigned k = 0; k < NFLOW; k++) {
        struct hlb_5tuple tp = {.proto = HLB_IPPROTO_TCP};
        memcpy(&tp.src_ip, f[k].p.data + 26, 4);
        memcpy(&tp.dst_ip, f[k].p.data + 30, 4);
        memcpy(&tp.src_port, f[k].p.data + 34, 2);
        memcpy(&tp.dst_port, f[k].p.data + 36, 2);
        moved_by_hash += ids[k] != 4 && b->server_ids[hlb_select_dip(b, &b->services[0], &tp)] != ids[k];
        gone += ids[k] == 4;
    }
    struct hlb_worker w;
    worker_init(&w, NULL);
    run_bursts(&w, b, f, NFLOW, v);
    for (unsigned k = 0; k < NFLOW; k++) {
        if (ids[k] == 4) {
            assert_int_equal(v[k], HLB_V_DROP);
            continue;
        }
        char want[16];
        snprintf(want, sizeof(want), "10.9.0.%u", ids[k]);
        assert_int_equal(v[k], HLB_V_TX);
        assert_int_equal(outer_dst(&f[k]), ip4(want));
    }
    print_message("pool change: %u of %u connections kept their DIP (hash would move %u), %u "
                  "of the removed server dropped\n", NFLOW - gone, NFLOW, moved_by_hash, gone);
    assert_true(moved_by_hash > NFLOW / 4);
    assert_true(gone > 40);
    assert_int_equal(w.st.drops[HLB_DROP_BAD_COOKIE], gone);
    assert_int_equal(w.st.ck_decoded, NFLOW - gone);
    assert_int_equal(w.st.fwd_packets, NFLOW - gone);
    hlb_table_free(a);
    hlb_table_free(b);
}

/* Forged and random cookies: every one a pool's server cannot claim is dropped and
 * counted; the few that hit an id of the pool (about pool/32768 of them) reach only
 * that pool's DIPs. */
static void test_forged_cookies(void **state)
{
    (void)state;
    struct hlb_vip_table *t = table_ok(POOL_B, 0);
    static struct tframe f[4096];
    uint8_t v[4096];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (unsigned k = 0; k < 4096; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        char client[16];
        snprintf(client, sizeof(client), "10.66.%u.%u", k / 250, 1 + k % 250);
        build_tcp_ts(&f[k], client, "10.200.0.10", (uint16_t)(1024 + k), 80, HLB_TCP_ACK,
                     (uint32_t)x, (uint32_t)(x >> 32));
    }
    struct hlb_worker w;
    worker_init(&w, NULL);
    run_bursts(&w, t, f, 4096, v);
    unsigned accepted = 0;
    for (unsigned k = 0; k < 4096; k++) {
        if (v[k] != HLB_V_TX)
            continue;
        accepted++;
        uint32_t o = outer_dst(&f[k]);
        assert_true(o == ip4("10.9.0.5") || o == ip4("10.9.0.3") || o == ip4("10.9.0.2") ||
                    o == ip4("10.9.0.1"));
    }
    print_message("random cookies: %u of 4096 accepted (a pool of 4: expected about 0.5)\n",
                  accepted);
    assert_true(accepted <= 4);
    assert_int_equal(w.st.drops[HLB_DROP_BAD_COOKIE], 4096 - accepted);

    /* A stateful ident (bit 14), and ident 0, even when well formed for the tuple. */
    const struct hlb_service *s = &t->services[0];
    unsigned bad[3] = {HLB_COOKIE_STATEFUL | 5, 0, 4 /* removed */};
    for (int i = 0; i < 3; i++) {
        struct tframe g;
        build_tcp_ts(&g, "10.77.0.9", "10.200.0.10", 5555, 80, HLB_TCP_ACK, 1,
                     cookie_for(s, "10.77.0.9", 5555, bad[i]) << 16);
        assert_int_equal(run1(&w, t, &g, 0), HLB_V_DROP);
    }
    assert_int_equal(w.st.drops[HLB_DROP_BAD_COOKIE], 4096 - accepted + 3);
    hlb_table_free(t);
}

static const char *const MECH_TABLE =
    "{\"version\":1,\"vips\":[{\"vip\":\"10.200.0.10\",\"selection\":\"crc32\",\"connTable\":%s,"
    "\"affinity\":\"cheetah\",\"cookieKey\":\"" KEY "\",\"mechanism\":\"%s\",\"ports\":[{\"proto\":"
    "\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.9.0.1\",\"serverId\":1},"
    "{\"ip\":\"10.9.0.2\",\"serverId\":2,\"weight\":0},{\"ip\":\"10.9.0.3\",\"serverId\":3,"
    "\"weight\":2}]}]}]}";

/* SYNs with a timestamp: rr takes the live DIPs in turn, wrr by weight, hash as the
 * VIP's selection; a SYN retransmitted under rr may go to another DIP (its
 * connection then opens there: the first SYN's server never answered the client). */
static void test_syn_mechanisms(void **state)
{
    (void)state;
    char json[1024];
    const struct {
        const char *mech;
        const char *want[6];
    } cases[] = {
        {"rr", {"10.9.0.1", "10.9.0.3", "10.9.0.1", "10.9.0.3", "10.9.0.1", "10.9.0.3"}},
        {"wrr", {"10.9.0.1", "10.9.0.3", "10.9.0.3", "10.9.0.1", "10.9.0.3", "10.9.0.3"}},
    };
    for (int c = 0; c < 2; c++) {
        snprintf(json, sizeof(json), MECH_TABLE, "false", cases[c].mech);
        struct hlb_vip_table *t = table_ok_n(json, 0, 2);
        struct hlb_worker w, w1;
        worker_init(&w, NULL);
        worker_init(&w1, NULL);
        w1.id = 1;
        for (int k = 0; k < 6; k++) {
            struct tframe f;
            /* the same SYN six times: a retransmission is placed afresh */
            build_tcp_ts(&f, "10.77.0.1", "10.200.0.10", 40000, 80, HLB_TCP_SYN, 100 + k, 0);
            assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
            assert_int_equal(outer_dst(&f), ip4(cases[c].want[k]));
        }
        /* worker 1 keeps its own position */
        struct tframe f;
        build_tcp_ts(&f, "10.77.0.1", "10.200.0.10", 40001, 80, HLB_TCP_SYN, 1, 0);
        assert_int_equal(run1(&w1, t, &f, 0), HLB_V_TX);
        assert_int_equal(outer_dst(&f), ip4("10.9.0.1"));
        assert_int_equal(w.st.ck_syns[c == 0 ? HLB_MECH_RR : HLB_MECH_WRR], 6);
        assert_int_equal(w.st.ck_decoded + w.st.ck_fallback, 0);
        hlb_table_free(t);
    }
    snprintf(json, sizeof(json), MECH_TABLE, "false", "hash");
    struct hlb_vip_table *t = table_ok(json, 0);
    struct hlb_worker w;
    worker_init(&w, NULL);
    for (int k = 0; k < 50; k++) {
        struct tframe f;
        build_tcp_ts(&f, "10.77.0.1", "10.200.0.10", (uint16_t)(41000 + k), 80, HLB_TCP_SYN, 1, 0);
        struct hlb_5tuple tp = {.src_ip = ip4("10.77.0.1"), .dst_ip = ip4("10.200.0.10"),
                                .src_port = hlb_htons((uint16_t)(41000 + k)),
                                .dst_port = hlb_htons(80), .proto = HLB_IPPROTO_TCP};
        int dip = hlb_select_dip(t, &t->services[0], &tp);
        assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
        assert_int_equal(outer_dst(&f), t->dips[dip].ip);
    }
    assert_int_equal(w.st.ck_syns[HLB_MECH_HASH], 50);
    hlb_table_free(t);
}

/* Weighted round robin interleaves (balance.h, hlb_wrr_stride): weights 5, 3, 2 give
 * each round of 10 SYNs exactly 5, 3 and 2, with no DIP taking more than two SYNs in a
 * row (walking the cumulative weights in order gave the first DIP 5 in a row: with
 * AWRR's weights of about 10, a whole load-report period of SYNs went to one server). */
static void test_wrr_interleaves(void **state)
{
    (void)state;
    const char *json =
        "{\"version\":1,\"vips\":[{\"vip\":\"10.200.0.10\",\"selection\":\"crc32\","
        "\"affinity\":\"cheetah\",\"cookieKey\":\"" KEY "\",\"mechanism\":\"wrr\",\"ports\":[{"
        "\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.9.0.1\",\"serverId\":1,\"weight\":5},"
        "{\"ip\":\"10.9.0.2\",\"serverId\":2,\"weight\":3},{\"ip\":\"10.9.0.3\",\"serverId\":3,"
        "\"weight\":2}]}]}]}";
    struct hlb_vip_table *t = table_ok(json, 0);
    struct hlb_worker w;
    worker_init(&w, NULL);
    uint32_t last = 0;
    int run = 0, longest = 0;
    for (int round = 0; round < 3; round++) {
        int share[3] = {0};
        for (int k = 0; k < 10; k++) {
            struct tframe f;
            build_tcp_ts(&f, "10.77.0.1", "10.200.0.10", (uint16_t)(40000 + round * 10 + k), 80,
                         HLB_TCP_SYN, 1, 0);
            assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
            uint32_t d = outer_dst(&f);
            share[(ntohl(d) & 0xff) - 1]++;
            run = d == last ? run + 1 : 1;
            longest = run > longest ? run : longest;
            last = d;
        }
        assert_int_equal(share[0], 5);
        assert_int_equal(share[1], 3);
        assert_int_equal(share[2], 2);
    }
    assert_true(longest <= 2);
    hlb_table_free(t);
}

/* A client without timestamps (SYN and segments without the option, e.g. Windows):
 * the hash + connection-table path, counted as fallback; its connection stays
 * pinned when a DIP is added.  UDP to a cheetah VIP is hashed, not counted. */
static void test_fallback_without_timestamps(void **state)
{
    (void)state;
    char json[1024];
    snprintf(json, sizeof(json), MECH_TABLE, "true", "rr");
    struct hlb_vip_table *t = table_ok(json, 1);
    struct hlb_conn_table *ct = hlb_conn_table_create(1024, NULL);
    struct hlb_worker w;
    worker_init(&w, ct);
    struct tframe f;
    build_tcp(&f, "10.77.0.1", "10.200.0.10", 40000, 80, HLB_TCP_SYN);
    struct hlb_5tuple tp = {.src_ip = ip4("10.77.0.1"), .dst_ip = ip4("10.200.0.10"),
                            .src_port = hlb_htons(40000), .dst_port = hlb_htons(80),
                            .proto = HLB_IPPROTO_TCP};
    uint32_t want = t->dips[hlb_select_dip(t, &t->services[0], &tp)].ip;
    assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
    assert_int_equal(outer_dst(&f), want);
    assert_int_equal(w.st.conn_misses, 1);
    /* a DIP added: the pinned connection stays */
    const char *more = strstr(json, "]}]}]}");
    char json2[1100];
    snprintf(json2, sizeof(json2), "%.*s,{\"ip\":\"10.9.0.8\",\"serverId\":8,\"weight\":50}]}]}]}",
             (int)(more - json), json);
    struct hlb_vip_table *t2 = table_ok(json2, 1);
    t2->gen = 2;
    for (int k = 0; k < 5; k++) {
        build_tcp(&f, "10.77.0.1", "10.200.0.10", 40000, 80, HLB_TCP_ACK);
        assert_int_equal(run1(&w, t2, &f, 1), HLB_V_TX);
        assert_int_equal(outer_dst(&f), want);
    }
    assert_int_equal(w.st.ck_fallback, 6);
    assert_int_equal(w.st.conn_hits, 5);
    assert_int_equal(w.st.ck_syns[HLB_MECH_RR], 0);
    build_ip(&f, "10.77.0.1", "10.200.0.10", HLB_IPPROTO_UDP, 5, 80, 0, 10, 0);
    run1(&w, t2, &f, 1);
    assert_int_equal(w.st.ck_fallback, 6);
    hlb_table_free(t);
    hlb_table_free(t2);
    hlb_conn_table_free(ct);
}

/* Option layouts other than NOP, NOP, timestamp: the general code's bounded walk
 * finds the timestamp after SACK blocks, MSS, window scale, MD5 or unknown options;
 * an EOL before it, a malformed list, or a timestamp of the wrong length leave the
 * segment without one (fallback).  Each layout through the lean pass and the general
 * code alike. */
static void test_option_layouts(void **state)
{
    (void)state;
    struct hlb_vip_table *t = table_ok(POOL_A, 0);
    const struct hlb_service *s = &t->services[0];
    uint32_t c = cookie_for(s, "10.77.0.1", 40000, 3);
    uint8_t ts[10] = {8, 10, 0, 0, 0, 1};
    uint32_t e = hlb_htonl(1u << 31 | c << 16 | 0x1234);
    memcpy(ts + 6, &e, 4);
    struct {
        const char *name;
        uint8_t opt[40];
        unsigned len;
        int decoded;
    } lay[] = {
        {"SACK blocks first", {1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2, 1, 1}, 24, 1},
        {"TS then SACK", {1, 1}, 24, 1},
        {"MSS, WS, TS", {2, 4, 5, 0xb4, 1, 3, 3, 7}, 20, 1},
        {"MD5 then TS", {19, 18}, 32, 1},
        {"unknown kind 77", {77, 4, 9, 9}, 16, 1},
        {"TS without NOPs", {0}, 12, 1},
        {"EOL before TS", {0, 0}, 12, 0},
        {"option length 1", {3, 1}, 12, 0},
        {"option past the header", {1, 1, 30, 20}, 16, 0},
        {"TS of length 12", {8, 12}, 16, 0},
        {"no options", {0}, 0, 0},
    };
    /* place the timestamp in each layout */
    memcpy(lay[0].opt + 14, ts, 10);
    memcpy(lay[1].opt + 2, ts, 10);
    memcpy(lay[1].opt + 12, (uint8_t[]){1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2}, 12);
    memcpy(lay[2].opt + 8, ts, 10);
    lay[2].opt[18] = 1, lay[2].opt[19] = 1;
    memcpy(lay[3].opt + 18, ts, 10);
    memcpy(lay[3].opt + 28, (uint8_t[]){1, 1, 1, 1}, 4);
    memcpy(lay[4].opt + 4, ts, 10);
    lay[4].opt[14] = 1, lay[4].opt[15] = 1;
    memcpy(lay[5].opt, ts, 10);
    lay[5].opt[10] = 1, lay[5].opt[11] = 1;
    memcpy(lay[6].opt + 2, ts, 10);
    memcpy(lay[7].opt + 2, ts, 10);
    memcpy(lay[8].opt + 4, ts, 10);
    lay[8].opt[14] = 1, lay[8].opt[15] = 1;
    memcpy(lay[9].opt, ts, 10);
    lay[9].opt[1] = 12;
    for (unsigned i = 0; i < sizeof(lay) / sizeof(lay[0]); i++) {
        for (int ref = 0; ref < 2; ref++) {
            struct hlb_worker w;
            worker_init(&w, NULL);
            struct tframe f;
            build_tcp_opts(&f, "10.77.0.1", "10.200.0.10", 40000, 80, HLB_TCP_ACK, lay[i].opt,
                           lay[i].len);
            uint8_t v = 0xee;
            if (ref)
                hlb_dp_burst_reference(&w, t, &f.p, &v, 1, 0);
            else
                hlb_dp_burst(&w, t, &f.p, &v, 1, 0);
            assert_int_equal(v, HLB_V_TX);
            if (w.st.ck_decoded != (uint64_t)lay[i].decoded ||
                w.st.ck_fallback != (uint64_t)!lay[i].decoded)
                fail_msg("%s: decoded %llu, fallback %llu", lay[i].name,
                         (unsigned long long)w.st.ck_decoded,
                         (unsigned long long)w.st.ck_fallback);
            if (lay[i].decoded)
                assert_int_equal(outer_dst(&f), ip4("10.9.0.3"));
        }
    }
    hlb_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_burst),
        cmocka_unit_test(test_shared_vectors),
        cmocka_unit_test(test_model_random_rows),
        cmocka_unit_test(test_table_fields),
        cmocka_unit_test(test_pool_change),
        cmocka_unit_test(test_forged_cookies),
        cmocka_unit_test(test_syn_mechanisms),
        cmocka_unit_test(test_wrr_interleaves),
        cmocka_unit_test(test_fallback_without_timestamps),
        cmocka_unit_test(test_option_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
