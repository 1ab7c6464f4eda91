/* Cheetah over QUIC in the SMux (src/quic_cookie.h, src/dp_quic.h, p4/COOKIE-SPEC.md
 * §13): the shared vectors and 10,000 random rows of the Python model through the C
 * hash and decode and through the packet core (short headers by their connection
 * id, long headers by their DCID), header bounds, forged ids, handshakes of one
 * client on one server across packet types, workers and weights.  Vector files:
 * $HLB_QUIC_VECTORS (committed) and $HLB_QUIC_VECTORS_RANDOM (written by the model
 * at build time). */
#include "dp_testutil.h"
#include "quic_cookie.h"
#include <jansson.h>

static const char *const DIPS[3] = {"10.9.0.1", "10.9.0.2", "10.9.0.3"};
#define VIP "10.200.0.10"
#define KEY "000102030405060708090a0b0c0d0e0f"

struct row {
    char seq[64], mode[16], key[40], vip[16], dcid_hex[48];
    unsigned vip_port, initial_hash, weight_total, slot;
    int ident;
    unsigned long long hash;
    uint8_t dcid[20];
    unsigned dcid_len;
};

static int read_row(const char *line, struct row *r)
{
    if (sscanf(line, "%63[^,],%15[^,],%39[^,],%15[^,],%u,%47[^,],%llx,%d,%x,%u,%u", r->seq,
               r->mode, r->key, r->vip, &r->vip_port, r->dcid_hex, &r->hash, &r->ident,
               &r->initial_hash, &r->weight_total, &r->slot) != 11)
        return 0;
    r->dcid_len = (unsigned)strlen(r->dcid_hex) / 2;
    for (unsigned i = 0; i < r->dcid_len; i++) {
        unsigned b;
        if (sscanf(r->dcid_hex + 2 * i, "%2x", &b) != 1)
            return 0;
        r->dcid[i] = (uint8_t)b;
    }
    return r->dcid_len >= 1 && r->dcid_len <= 20;
}

/* A cheetah VIP with UDP port vport (and TCP port vport), three DIPs with server ids
 * ids[0..2] and weights w[0..2]. */
static struct hlb_vip_table *quic_table(const char *vip, unsigned vport, const char *mode,
                                        const char *key, const unsigned ids[3], const unsigned w[3])
{
    char dips[400], json[1200];
    snprintf(dips, sizeof(dips),
             "{\"ip\":\"%s\",\"serverId\":%u,\"weight\":%u},{\"ip\":\"%s\",\"serverId\":%u,"
             "\"weight\":%u},{\"ip\":\"%s\",\"serverId\":%u,\"weight\":%u}",
             DIPS[0], ids[0], w[0], DIPS[1], ids[1], w[1], DIPS[2], ids[2], w[2]);
    snprintf(json, sizeof(json),
             "{\"version\":1,\"vips\":[{\"vip\":\"%s\",\"selection\":\"crc32\",\"connTable\":false,"
             "\"affinity\":\"cheetah\",\"mechanism\":\"rr\",\"cookieKey\":\"%s\",\"cookieHash\":\"%s\","
             "\"ports\":[{\"proto\":\"udp\",\"port\":%u,\"dips\":[%s]},"
             "{\"proto\":\"tcp\",\"port\":%u,\"dips\":[%s]}]}]}",
             vip, key, mode, vport, dips, vport, dips);
    return table_ok(json, 0);
}

/* A UDP datagram from client:cport to vip:vport whose payload is the QUIC header
 * hdr (hlen bytes) followed by filler up to plen bytes. */
static void build_quic(struct tframe *f, const char *client, uint16_t cport, const char *vip,
                       uint16_t vport, const uint8_t *hdr, uint32_t hlen, uint32_t plen)
{
    build_ip(f, client, vip, HLB_IPPROTO_UDP, cport, vport, 0, plen, 0x4000);
    memcpy(f->p.data + 42, hdr, hlen < plen ? hlen : plen);
}

/* Short header: first byte (fixed bit set), then the 8-byte connection id. */
static void build_short(struct tframe *f, const char *client, uint16_t cport, const char *vip,
                        uint16_t vport, const uint8_t *cid)
{
    uint8_t h[1 + HLB_QUIC_CID_LEN] = {0x41};
    memcpy(h + 1, cid, HLB_QUIC_CID_LEN);
    build_quic(f, client, cport, vip, vport, h, sizeof(h), 60);
}

/* Long header of type bits `type` (0 Initial, 1 0-RTT, 2 Handshake), version 1. */
static void build_long(struct tframe *f, const char *client, uint16_t cport, const char *vip,
                       uint16_t vport, uint8_t type, const uint8_t *dcid, unsigned n)
{
    uint8_t h[64] = {(uint8_t)(0xc0 | type << 4), 0, 0, 0, 1, (uint8_t)n};
    memcpy(h + 6, dcid, n);
    h[6 + n] = 8;                      /* SCID length, then the SCID: filler */
    build_quic(f, client, cport, vip, vport, h, 7 + n, 1200);
}

/* One frame through the lean pass (ref 0) or the general code alone (ref 1). */
static uint8_t run_one(struct hlb_worker *w, struct hlb_vip_table *t, struct tframe *f, int ref)
{
    uint8_t v = 0xee;
    if (ref)
        hlb_dp_burst_reference(w, t, &f->p, &v, 1, 0);
    else
        hlb_dp_burst(w, t, &f->p, &v, 1, 0);
    return v;
}

static struct hlb_service alone_service(const struct row *r)
{
    char js[200];
    struct hlb_service s = {.vip = ip4(r->vip)};
    snprintf(js, sizeof(js), "{\"affinity\":\"cheetah\",\"cookieKey\":\"%s\",\"cookieHash\":\"%s\"}",
             r->key, r->mode);
    json_t *o = json_loads(js, 0, NULL);
    assert_int_equal(hlb_ck_parse_vip(o, "vips[0]", &s, NULL), 0);
    json_decref(o);
    s.vip = ip4(r->vip);
    return s;
}

/* Every row: C hash, ident, handshake hash and slot = the model's; and through the
 * packet core (both paths), for a VIP a table takes: an 8-byte id naming a server id
 * (given to DIP 1) is placed there, short or long header; a short header whose id
 * names none is dropped as bad_quic_cid; a long header whose DCID names none goes to
 * the slot of equal weights (1, 1, 1) its hash picks. */
static unsigned check_file(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        fail_msg("cannot open %s", path);
    char line[512];
    unsigned rows = 0, decoded = 0, dropped = 0, hashed = 0;
    while (fgets(line, sizeof(line), fp)) {
        struct row r;
        if (line[0] == '#' || strncmp(line, "seq,", 4) == 0)
            continue;
        if (!read_row(line, &r))
            fail_msg("bad row: %s", line);
        rows++;
        struct hlb_service s = alone_service(&r);
        uint16_t vport = hlb_htons((uint16_t)r.vip_port);
        if (r.dcid_len == HLB_QUIC_CID_LEN) {
            uint64_t h = hlb_quic_hash(&s, vport, r.dcid);
            if (h != r.hash)
                fail_msg("%s: H = %016llx, the model says %016llx", r.seq, (unsigned long long)h,
                         r.hash);
            assert_int_equal(hlb_quic_ident(&s, vport, r.dcid), r.ident);
        }
        uint32_t ih = hlb_quic_initial_hash(&s, r.dcid, r.dcid_len);
        if (ih != r.initial_hash)
            fail_msg("%s: initial hash %08x, the model says %08x", r.seq, ih, r.initial_hash);
        assert_int_equal(hlb_quic_initial_slot(ih, r.weight_total), r.slot);

        uint32_t vh = ntohl(s.vip);
        if (vh == 0 || (vh >> 28) >= 0xe || (vh >> 24) == 127 || r.vip_port == 0)
            continue;                  /* no table takes it: hash and decode only */
        int names_server = r.ident >= 1 && r.ident <= (int)HLB_COOKIE_SERVER_ID_MAX;
        unsigned ids[3] = {r.ident == 16383 ? 1 : 16383, names_server ? (unsigned)r.ident : 77,
                           r.ident == 16382 ? 2 : 16382};
        unsigned w1[3] = {1, 1, 1};
        struct hlb_vip_table *t = quic_table(r.vip, r.vip_port, r.mode, r.key, ids, w1);
        unsigned by_hash = hlb_quic_initial_slot(ih, 3);
        for (int ref = 0; ref < 2; ref++) {
            struct hlb_worker w;
            worker_init(&w, NULL);
            struct tframe f;
            if (r.dcid_len == HLB_QUIC_CID_LEN) {
                build_short(&f, "198.51.100.7", 50000, r.vip, (uint16_t)r.vip_port, r.dcid);
                uint8_t v = run_one(&w, t, &f, ref);
                if (names_server) {
                    if (v != HLB_V_TX || outer_dst(&f) != ip4(DIPS[1]))
                        fail_msg("%s: short header for server %d not on its DIP", r.seq, r.ident);
                    assert_int_equal(w.st.quic_decoded, 1);
                    decoded++;
                } else {
                    assert_int_equal(v, HLB_V_DROP);
                    assert_int_equal(w.st.drops[HLB_DROP_BAD_QUIC_CID], 1);
                    dropped++;
                }
            }
            build_long(&f, "198.51.100.7", 50000, r.vip, (uint16_t)r.vip_port, 0, r.dcid,
                       r.dcid_len);
            uint8_t v = run_one(&w, t, &f, ref);
            assert_int_equal(v, HLB_V_TX);
            const char *want = names_server ? DIPS[1] : DIPS[by_hash];
            if (outer_dst(&f) != ip4(want))
                fail_msg("%s: Initial on the wrong DIP (want %s)", r.seq, want);
            if (!names_server) {
                assert_int_equal(w.st.quic_initial, 1);
                hashed++;
            }
        }
        hlb_table_free(t);
    }
    fclose(fp);
    print_message("%s: %u rows; through the packet core: %u short headers placed, %u dropped, "
                  "%u long headers by the DCID hash\n", path, rows, decoded / 2, dropped / 2,
                  hashed / 2);
    assert_true(rows > 0 && decoded > 0 && dropped > 0 && hashed > 0);
    return rows;
}

static void test_shared_vectors(void **state)
{
    (void)state;
    const char *p = getenv("HLB_QUIC_VECTORS");
    assert_non_null(p);
    assert_true(check_file(p) >= 300);
}

static void test_model_random_rows(void **state)
{
    (void)state;
    const char *p = getenv("HLB_QUIC_VECTORS_RANDOM");
    assert_non_null(p);
    assert_true(check_file(p) >= 10000);
}

/* The id a server with `sid` issues for nonce (as the model's quic_cid). */
static void make_cid(const struct hlb_service *s, uint16_t vport_be, unsigned sid,
                     const uint8_t nonce[6], uint8_t cid[8])
{
    memcpy(cid + 2, nonce, 6);
    uint32_t field = (sid ^ (uint32_t)hlb_quic_hash(s, vport_be, cid)) & 0xffff;
    cid[0] = (uint8_t)(field >> 8);
    cid[1] = (uint8_t)field;
}

/* Random 8-byte ids in short headers: dropped and counted; those few that pass name
 * a server of the pool (a pool of 3: about 3/65536 of them). */
static void test_forged_ids(void **state)
{
    (void)state;
    const unsigned ids[3] = {11, 12, 13}, w1[3] = {1, 1, 1};
    struct hlb_vip_table *t = quic_table(VIP, 443, "siphash13", KEY, ids, w1);
    struct hlb_worker w;
    worker_init(&w, NULL);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    unsigned accepted = 0, n = 20000;
    for (unsigned k = 0; k < n; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint8_t cid[8];
        memcpy(cid, &x, 8);
        struct tframe f;
        build_short(&f, "198.51.100.9", (uint16_t)(1024 + k), VIP, 443, cid);
        if (run_one(&w, t, &f, (int)(k & 1)) == HLB_V_TX) {
            accepted++;
            uint32_t o = outer_dst(&f);
            assert_true(o == ip4(DIPS[0]) || o == ip4(DIPS[1]) || o == ip4(DIPS[2]));
        }
    }
    print_message("random ids: %u of %u accepted (a pool of 3: expected about 1)\n", accepted, n);
    assert_true(accepted <= 5);
    assert_int_equal(w.st.drops[HLB_DROP_BAD_QUIC_CID], n - accepted);
    assert_int_equal(w.st.quic_decoded, accepted);

    /* Well formed for the tuple, but not a server of this pool: a removed server,
     * ident 0, a stateful or 16-bit ident (QUIC ids carry server ids only). */
    const struct hlb_service *s = &t->services[0];
    const unsigned bad[4] = {14, 0, HLB_COOKIE_STATEFUL | 5, 0xc000 | 11};
    const uint8_t nonce[6] = {1, 2, 3, 4, 5, 6};
    for (int i = 0; i < 4; i++) {
        uint8_t cid[8];
        make_cid(s, hlb_htons(443), bad[i], nonce, cid);
        for (int ref = 0; ref < 2; ref++) {   /* the lean pass and the general code */
            struct tframe f;
            build_short(&f, "198.51.100.9", 4000, VIP, 443, cid);
            assert_int_equal(run_one(&w, t, &f, ref), HLB_V_DROP);
        }
    }
    assert_int_equal(w.st.drops[HLB_DROP_BAD_QUIC_CID], n - accepted + 8);
    /* An id of another VIP port, or under another key: dropped too (with the odds
     * above of naming some server). */
    uint8_t cid[8];
    make_cid(s, hlb_htons(444), 12, nonce, cid);
    struct tframe f;
    build_short(&f, "198.51.100.9", 4000, VIP, 443, cid);
    assert_int_equal(run_one(&w, t, &f, 0), HLB_V_DROP);
    hlb_table_free(t);
}

/* Header bounds: what cannot be a QUIC packet a client sends is dropped as
 * bad_quic_header, never read past its end. */
static void test_malformed_headers(void **state)
{
    (void)state;
    const unsigned ids[3] = {11, 12, 13}, w1[3] = {1, 1, 1};
    struct hlb_vip_table *t = quic_table(VIP, 443, "siphash13", KEY, ids, w1);
    struct hlb_worker w;
    worker_init(&w, NULL);
    uint8_t dcid[21] = {0};
    uint8_t hdr[64] = {0x41};
    struct {
        const char *name;
        uint32_t plen;                 /* UDP payload length */
        uint8_t first, dcid_len;
        uint32_t version;
    } cases[] = {
        {"empty datagram", 0, 0, 0, 0},
        {"short header below the header-protection sample", HLB_QUIC_SHORT_MIN - 1, 0x41, 0, 0},
        {"long header cut in its version", 4, 0xc0, 0, 1},
        {"long header cut in its DCID", 6 + 7, 0xc0, 8, 1},
        {"DCID longer than 20 bytes", 1200, 0xc0, 21, 1},
        {"version negotiation (only servers send it)", 1200, 0x80, 8, 0},
    };
    unsigned n = sizeof(cases) / sizeof(cases[0]);
    for (unsigned i = 0; i < n; i++) {
        struct tframe f;
        memset(hdr, 0, sizeof(hdr));
        hdr[0] = cases[i].first;
        uint32_t ver = hlb_htonl(cases[i].version);
        if (cases[i].first & 0x80) {
            memcpy(hdr + 1, &ver, 4);
            hdr[5] = cases[i].dcid_len;
            memcpy(hdr + 6, dcid, cases[i].dcid_len);
        }
        build_quic(&f, "198.51.100.9", 4000, VIP, 443, hdr, sizeof(hdr), cases[i].plen);
        if (run_one(&w, t, &f, (int)(i & 1)) != HLB_V_DROP ||
            w.st.drops[HLB_DROP_BAD_QUIC_HEADER] != i + 1)
            fail_msg("%s: not dropped as bad_quic_header", cases[i].name);
    }
    /* The shortest well-formed ones pass. */
    struct tframe f;
    build_quic(&f, "198.51.100.9", 4000, VIP, 443, hdr, 0, 0);
    uint8_t cid[8];
    const uint8_t nonce[6] = {9, 9, 9, 9, 9, 9};
    make_cid(&t->services[0], hlb_htons(443), 13, nonce, cid);
    uint8_t sh[1 + 8] = {0x40};
    memcpy(sh + 1, cid, 8);
    build_quic(&f, "198.51.100.9", 4000, VIP, 443, sh, sizeof(sh), HLB_QUIC_SHORT_MIN);
    assert_int_equal(run_one(&w, t, &f, 0), HLB_V_TX);
    assert_int_equal(outer_dst(&f), ip4(DIPS[2]));
    uint8_t lh[7] = {0xc0, 0, 0, 0, 1, 1, 0xab};
    build_quic(&f, "198.51.100.9", 4000, VIP, 443, lh, sizeof(lh), sizeof(lh));
    assert_int_equal(run_one(&w, t, &f, 1), HLB_V_TX);
    assert_int_equal(w.st.drops[HLB_DROP_BAD_QUIC_HEADER], n);
    hlb_table_free(t);
}

/* A client's handshake: Initial, its retransmissions, 0-RTT with the DCID it chose,
 * from any source port (so any worker) and through any SMux (a fresh worker), reach
 * one server; the server's id then places the Handshake and short-header packets on
 * that server.  Drained DIPs (weight 0) get no handshake by the hash; the weights
 * decide. */
static void test_handshake_on_one_server(void **state)
{
    (void)state;
    const unsigned ids[3] = {11, 12, 13}, w1[3] = {1, 0, 3};
    struct hlb_vip_table *t = quic_table(VIP, 443, "siphash13", KEY, ids, w1);
    const struct hlb_service *s = &t->services[0];
    unsigned per_dip[3] = {0};
    uint64_t x = 12345;
    for (unsigned c = 0; c < 4000; c++) {
        uint8_t dcid[8];
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(dcid, &x, 8);
        uint32_t first = 0;
        for (unsigned k = 0; k < 4; k++) {       /* Initial, retransmission, 0-RTT, other SMux */
            struct hlb_worker w;
            worker_init(&w, NULL);
            struct tframe f;
            build_long(&f, "198.51.100.20", (uint16_t)(2000 + c + 7 * k), VIP, 443,
                       k == 2 ? 1 : 0, dcid, 8);
            assert_int_equal(run_one(&w, t, &f, (int)(k & 1)), HLB_V_TX);
            uint32_t o = outer_dst(&f);
            if (k == 0)
                first = o;
            else
                assert_int_equal(o, first);
        }
        unsigned d = first == ip4(DIPS[0]) ? 0 : first == ip4(DIPS[1]) ? 1 : 2;
        uint32_t named = hlb_quic_ident(s, hlb_htons(443), dcid);
        if (named == ids[0] || named == ids[1] || named == ids[2])
            assert_int_equal(ids[d], named);   /* a random DCID that names a server: there */
        else
            per_dip[d]++;
        /* The server answers with its id: Handshake and short header follow it. */
        uint8_t cid[8];
        make_cid(s, hlb_htons(443), ids[d], dcid, cid);   /* (any 6 bytes as the nonce) */
        struct hlb_worker w;
        worker_init(&w, NULL);
        struct tframe f;
        build_long(&f, "198.51.100.20", 2000, VIP, 443, 2, cid, 8);
        assert_int_equal(run_one(&w, t, &f, 0), HLB_V_TX);
        assert_int_equal(outer_dst(&f), first);
        build_short(&f, "203.0.113.5", 9999, VIP, 443, cid);   /* a new client address */
        assert_int_equal(run_one(&w, t, &f, 1), HLB_V_TX);
        assert_int_equal(outer_dst(&f), first);
        assert_int_equal(w.st.quic_decoded, 2);
    }
    print_message("4000 handshakes (those by the hash) on weights 1, 0, 3: %u, %u, %u\n", per_dip[0], per_dip[1],
                  per_dip[2]);
    assert_int_equal(per_dip[1], 0);
    assert_true(per_dip[0] > 800 && per_dip[0] < 1200);   /* 1000 expected */
    hlb_table_free(t);
}

/* The lean pass's QUIC loop against the general code: 300 random bursts of 1-64
 * frames (short headers of the pool's servers, forged ids, long headers with client
 * DCIDs and with server ids, short headers too short, TCP segments echoing cookies,
 * to a cheetah VIP on IP-in-IP and one on GRE with crc32c) come out of hlb_dp_burst
 * exactly as out of hlb_dp_burst_reference: verdicts, every byte, every counter. */
static void test_lean_pass_equals_general_code(void **state)
{
    (void)state;
    const char *json =
        "{\"version\":1,\"vips\":["
        "{\"vip\":\"" VIP "\",\"selection\":\"crc32\",\"connTable\":false,\"affinity\":\"cheetah\","
        "\"mechanism\":\"rr\",\"cookieKey\":\"" KEY "\",\"ports\":["
        "{\"proto\":\"udp\",\"port\":443,\"dips\":[{\"ip\":\"10.9.0.1\",\"serverId\":11},"
        "{\"ip\":\"10.9.0.2\",\"serverId\":12},{\"ip\":\"10.9.0.3\",\"serverId\":13}]},"
        "{\"proto\":\"tcp\",\"port\":443,\"dips\":[{\"ip\":\"10.9.0.1\",\"serverId\":11},"
        "{\"ip\":\"10.9.0.2\",\"serverId\":12}]}]},"
        "{\"vip\":\"10.200.0.12\",\"selection\":\"crc32\",\"connTable\":false,\"encap\":\"gre\","
        "\"affinity\":\"cheetah\",\"cookieHash\":\"crc32c\",\"cookieKey\":\"" KEY "\",\"ports\":["
        "{\"proto\":\"udp\",\"port\":0,\"dips\":[{\"ip\":\"10.9.0.1\",\"serverId\":11},"
        "{\"ip\":\"10.9.0.3\",\"serverId\":13,\"weight\":2}]}]}]}";
    struct hlb_vip_table *ta = table_ok(json, 0), *tb = table_ok(json, 0);
    static struct tframe fa[64], fb[64];
    struct hlb_pkt pa[64], pb[64];
    uint8_t va[64], vb[64];
    struct hlb_worker wa, wb;
    worker_init(&wa, NULL);
    worker_init(&wb, NULL);
    const char *vips[2] = {VIP, "10.200.0.12"};
    uint64_t x = 99;
    for (int burst = 0; burst < 300; burst++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        unsigned n = 1 + (unsigned)(x % 64);
        for (unsigned k = 0; k < n; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            unsigned v = (unsigned)(x >> 60) & 1, kind = (unsigned)(x >> 8) % 8;
            const struct hlb_service *s = hlb_table_lookup(ta, ip4(vips[v]), HLB_IPPROTO_UDP,
                                                           hlb_htons(443));
            uint8_t nonce[6], cid[8];
            memcpy(nonce, &x, 6);
            make_cid(s, hlb_htons(443), 11 + (unsigned)(x >> 20) % 3, nonce, cid);
            char client[16];
            snprintf(client, sizeof(client), "198.51.%u.%u", (unsigned)(x >> 24) & 255,
                     1 + (unsigned)(x >> 32) % 250);
            uint16_t cport = (uint16_t)(1024 + (x >> 40) % 60000);
            switch (kind) {
            case 0: case 1: case 2:   /* a server's id, short header */
                build_short(&fa[k], client, cport, vips[v], 443, cid);
                break;
            case 3:                   /* forged */
                memcpy(cid, &x, 8);
                build_short(&fa[k], client, cport, vips[v], 443, cid);
                break;
            case 4:                   /* Initial with the client's DCID, or with a server id */
                build_long(&fa[k], client, cport, vips[v], 443, 0, (x & 1) ? cid : nonce,
                           (x & 1) ? 8 : 6);
                break;
            case 5: {                 /* too short for a short header */
                uint8_t h[9] = {0x41};
                memcpy(h + 1, cid, 8);
                build_quic(&fa[k], client, cport, vips[v], 443, h, 9, HLB_QUIC_SHORT_MIN - 1);
                break;
            }
            default: {                /* TCP echoing a cookie of server 11 or 12 (VIP only) */
                const struct hlb_service *st = hlb_table_lookup(ta, ip4(VIP), HLB_IPPROTO_TCP,
                                                                hlb_htons(443));
                uint32_t sid = 11 + (unsigned)(x >> 21) % 2;
                uint64_t h = hlb_ck_hash(st, ip4(client), hlb_htons(cport), hlb_htons(443));
                build_tcp_ts(&fa[k], client, VIP, cport, 443, HLB_TCP_ACK, 5,
                             ((sid ^ (uint32_t)h) & HLB_COOKIE_MASK) << 16);
            }
            }
            fb[k] = fa[k];
            fa[k].p.data = fa[k].buf + TEST_HEADROOM;
            fb[k].p.data = fb[k].buf + TEST_HEADROOM;
            pa[k] = fa[k].p;
            pb[k] = fb[k].p;
        }
        hlb_dp_burst(&wa, ta, pa, va, n, 0);
        hlb_dp_burst_reference(&wb, tb, pb, vb, n, 0);
        for (unsigned k = 0; k < n; k++) {
            if (va[k] != vb[k] || pa[k].len != pb[k].len ||
                (va[k] == HLB_V_TX && memcmp(pa[k].data, pb[k].data, pa[k].len) != 0))
                fail_msg("burst %d frame %u: lean and general code differ", burst, k);
        }
    }
    /* A burst of the servers' short headers: every one decoded by the lean pass. */
    uint64_t lean0 = wa.st.lean_packets, dec0 = wa.st.quic_decoded;
    const struct hlb_service *s0 = hlb_table_lookup(ta, ip4(VIP), HLB_IPPROTO_UDP, hlb_htons(443));
    for (unsigned k = 0; k < 64; k++) {
        uint8_t nonce[6] = {(uint8_t)k, 1, 2, 3, 4, 5}, cid[8];
        make_cid(s0, hlb_htons(443), 11 + k % 3, nonce, cid);
        build_short(&fa[k], "198.51.100.30", (uint16_t)(3000 + k), VIP, 443, cid);
        fb[k] = fa[k];
        fb[k].p.data = fb[k].buf + TEST_HEADROOM;
        pa[k] = fa[k].p;
        pb[k] = fb[k].p;
    }
    hlb_dp_burst(&wa, ta, pa, va, 64, 0);
    hlb_dp_burst_reference(&wb, tb, pb, vb, 64, 0);
    assert_int_equal(wa.st.lean_packets - lean0, 64);
    assert_int_equal(wa.st.quic_decoded - dec0, 64);
    for (unsigned k = 0; k < 64; k++)
        assert_memory_equal(pa[k].data, pb[k].data, pa[k].len);
    wa.st.lean_packets = wb.st.lean_packets = 0;
    assert_memory_equal(&wa.st, &wb.st, sizeof(wa.st));
    for (uint32_t d = 0; d < ta->n_dips; d++) {
        assert_int_equal(hlb_dip_counters(ta, 0)[d].packets, hlb_dip_counters(tb, 0)[d].packets);
        assert_int_equal(hlb_dip_counters(ta, 0)[d].bytes, hlb_dip_counters(tb, 0)[d].bytes);
    }
    print_message("300 bursts: %llu QUIC packets decoded, %llu by the DCID hash, %llu bad ids, "
                  "%llu bad headers, %llu TCP cookies\n", (unsigned long long)wa.st.quic_decoded,
                  (unsigned long long)wa.st.quic_initial,
                  (unsigned long long)wa.st.drops[HLB_DROP_BAD_QUIC_CID],
                  (unsigned long long)wa.st.drops[HLB_DROP_BAD_QUIC_HEADER],
                  (unsigned long long)wa.st.ck_decoded);
    hlb_table_free(ta);
    hlb_table_free(tb);
}

/* UDP to a hash VIP is no QUIC to the SMux: placed by the 5-tuple hash, not counted. */
static void test_hash_vip_untouched(void **state)
{
    (void)state;
    struct hlb_vip_table *t = table_ok(
        "{\"version\":1,\"vips\":[{\"vip\":\"" VIP "\",\"selection\":\"crc32\",\"connTable\":false,"
        "\"ports\":[{\"proto\":\"udp\",\"port\":443,\"dips\":[{\"ip\":\"10.9.0.1\"}]}]}]}", 0);
    struct hlb_worker w;
    worker_init(&w, NULL);
    struct tframe f;
    uint8_t junk[4] = {0x40};
    build_quic(&f, "198.51.100.9", 4000, VIP, 443, junk, sizeof(junk), 4);
    assert_int_equal(run_one(&w, t, &f, 1), HLB_V_TX);
    assert_int_equal(w.st.quic_decoded + w.st.quic_initial + w.st.drops[HLB_DROP_BAD_QUIC_HEADER], 0);
    hlb_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_vectors),
        cmocka_unit_test(test_model_random_rows),
        cmocka_unit_test(test_forged_ids),
        cmocka_unit_test(test_malformed_headers),
        cmocka_unit_test(test_handshake_on_one_server),
        cmocka_unit_test(test_lean_pass_equals_general_code),
        cmocka_unit_test(test_hash_vip_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
