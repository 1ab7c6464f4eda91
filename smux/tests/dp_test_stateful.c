/* Stateful Cheetah (src/stateful.h, p4/COOKIE-SPEC.md §7) and the load-aware SYN
 * mechanisms (src/balance.h): the ConnStack's invariants under random use, the SYN
 * hint and the decode of its cookie through the packet core (lean pass and general
 * code), exhaustion -> stateless SYNs -> recovery after close reports, the close
 * report's checks, the idle sweep, the two tiers (forward to a foreign owner, and
 * the owner taking the forwarded frame), the shared vectors' stateful rows, p2c,
 * least-loaded and AWRR's weights, and the table fields' errors. */
#include "dp_sf_testutil.h"
#include "balance.h"

/* Random inserts and deletes against a model: no index is ever given twice, a
 * deleted one comes back, an empty stack refuses (counted), and hlb_sf_check()
 * holds throughout. */
static void test_stack_invariants(void **state)
{
    (void)state;
    assert_null(hlb_sf_create(3, 1000));             /* not a power of two */
    assert_null(hlb_sf_create(0, 1000));
    assert_null(hlb_sf_create(HLB_SF_MAX_PARTITIONS * 2, 1000));
    struct hlb_sf_table *sf = hlb_sf_create(2, 1000);
    assert_non_null(sf);
    static uint8_t used[2][HLB_SF_INDEXES];
    memset(used, 0, sizeof(used));
    unsigned n_used[2] = {0, 0};
    uint64_t x = 12345;
    for (int op = 0; op < 200000; op++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t p = (uint32_t)(x >> 40) & 1;
        /* phases: mostly inserts (fill to exhaustion), then mostly deletes */
        int insert = ((op / 20000) & 1) ? (x & 7) == 0 : (x & 7) != 0;
        if (insert) {
            int idx = hlb_sf_insert(sf, p, 5, x | 1, 0);
            if (n_used[p] == HLB_SF_INDEXES) {
                assert_int_equal(idx, -1);
                continue;
            }
            assert_true(idx >= 0 && idx < (int)HLB_SF_INDEXES);
            if (used[p][idx])
                fail_msg("index %d of partition %u given twice", idx, p);
            used[p][idx] = 1;
            n_used[p]++;
        } else if (n_used[p]) {
            uint32_t idx = (uint32_t)(x >> 20) % HLB_SF_INDEXES;
            while (!used[p][idx])
                idx = (idx + 1) % HLB_SF_INDEXES;
            hlb_sf_delete(sf, p, idx);
            used[p][idx] = 0;
            n_used[p]--;
        }
        if (op % 997 == 0)
            assert_int_equal(hlb_sf_check(sf), 0);
    }
    assert_int_equal(hlb_sf_check(sf), 0);
    assert_int_equal(sf->st.entries, n_used[0] + n_used[1]);
    assert_true(sf->st.exhausted > 0);               /* the fill phases hit the bottom */
    hlb_sf_free(sf);

    /* Exhaustion and recovery, in one partition of eight: 1024 distinct indexes,
     * then refusals (counted, nothing changed); the indexes freed are the ones the
     * next SYNs get, no more. */
    sf = hlb_sf_create(8, 1000);
    assert_non_null(sf);
    memset(used, 0, sizeof(used));
    for (uint32_t k = 0; k < HLB_SF_INDEXES; k++) {
        int idx = hlb_sf_insert(sf, 5, 7, 1000 + k, 0);
        assert_true(idx >= 0 && idx < (int)HLB_SF_INDEXES);
        if (used[0][idx]++)
            fail_msg("index %d given twice while filling", idx);
    }
    assert_int_equal(hlb_sf_insert(sf, 5, 7, 1, 0), -1);
    assert_int_equal(hlb_sf_insert(sf, 5, 7, 2, 0), -1);
    assert_int_equal(sf->st.exhausted, 2);
    assert_int_equal(sf->st.entries, HLB_SF_INDEXES);
    assert_int_equal(hlb_sf_insert(sf, 4, 7, 3, 0), 0);      /* other partitions unaffected */
    assert_int_equal(hlb_sf_check(sf), 0);
    const uint32_t freed[3] = {17, 600, 1023};
    for (int k = 0; k < 3; k++) {
        hlb_sf_delete(sf, 5, freed[k]);
        used[0][freed[k]] = 0;
    }
    assert_int_equal(hlb_sf_check(sf), 0);
    for (int k = 0; k < 3; k++) {
        int idx = hlb_sf_insert(sf, 5, 7, 5000 + (uint64_t)k, 0);
        assert_true(idx == 17 || idx == 600 || idx == 1023);
        if (used[0][idx]++)
            fail_msg("freed index %d given twice", idx);
    }
    assert_int_equal(hlb_sf_insert(sf, 5, 7, 6000, 0), -1);
    assert_int_equal(sf->st.exhausted, 3);
    assert_int_equal(hlb_sf_check(sf), 0);
    hlb_sf_free(sf);

    sf = hlb_sf_create(2, 1000);
    assert_non_null(sf);
    /* hlb_sf_check() itself notices a lost index and a doubly freed one */
    int idx = hlb_sf_insert(sf, 0, 5, 99, 0);
    if (idx >= 0) {
        uint64_t *e = hlb_sf_entry(sf, 0, (uint32_t)idx), v = *e;
        *e = 0;                                      /* freed without its push */
        assert_int_equal(hlb_sf_check(sf), -1);
        *e = v;
        assert_int_equal(hlb_sf_check(sf), 0);
    }
    hlb_sf_free(sf);
}

/* The owner's SYN: placed by the mechanism, an index popped, the hint in TSecr with
 * a right TCP checksum; then the client's echo of that ident's cookie reaches the
 * same DIP through both paths of the packet core, and a forged index does not. */
static void test_syn_hint_and_decode(void **state)
{
    (void)state;
    struct hlb_vip_table *t = sf_table("\"" OTHER "\",\"192.0.2.30\",\"" SELF "\"", "rr");
    const struct hlb_service *s = &t->services[0];
    assert_int_equal(s->sf_self, 2);
    assert_int_equal(s->sf_n_owners, 3);
    struct hlb_worker w;
    sf_worker(&w, 4, 60000);
    const char *want[3] = {"10.9.0.1", "10.9.0.2", "10.9.0.3"};
    uint32_t ident[3];
    for (int k = 0; k < 3; k++) {
        struct tframe f;
        syn(&f, (uint16_t)(50000 + k));
        assert_int_equal(run1(&w, t, &f, 10), HLB_V_TX);
        assert_int_equal(outer_dst(&f), ip4(want[k]));
        uint32_t hint = inner_tsecr(&f);
        assert_int_equal(hint >> 16, HLB_COOKIE_HINT_MAGIC);
        ident[k] = hint & 0xffff;
        assert_int_equal(ident[k] & HLB_COOKIE_STATEFUL, HLB_COOKIE_STATEFUL);
        assert_int_equal((ident[k] >> HLB_SF_OWNER_SHIFT) & 15, 2);
        assert_int_equal(tcp_sum(f.p.data + 14 + 20), 0xffff);
    }
    /* A SYN whose TSecr is not zero (RFC 7323 leaves it unused): the hint replaces it,
     * the checksum still right. */
    struct tframe g;
    build_tcp_ts(&g, "10.77.0.1", VIP, 50003, 80, HLB_TCP_SYN, 1000, 0x9abcdef1u);
    fix_tcp_csum(g.p.data + 14);
    assert_int_equal(run1(&w, t, &g, 10), HLB_V_TX);
    assert_int_equal(inner_tsecr(&g) >> 16, HLB_COOKIE_HINT_MAGIC);
    assert_int_equal(tcp_sum(g.p.data + 14 + 20), 0xffff);
    assert_int_equal(w.sf->st.inserts, 4);
    assert_int_equal(w.st.ck_syns[HLB_MECH_RR], 4);
    assert_int_equal(hlb_sf_check(w.sf), 0);
    for (int ref = 0; ref < 2; ref++)
        for (int k = 0; k < 3; k++) {
            struct tframe f;
            echo(&f, s, (uint16_t)(50000 + k), ident[k], HLB_TCP_ACK);
            assert_int_equal(run_ref(&w, t, &f, 20, ref), HLB_V_TX);
            assert_int_equal(outer_dst(&f), ip4(want[k]));
        }
    assert_int_equal(w.sf->st.hits, 6);
    assert_int_equal(w.st.ck_decoded, 6);
    /* Another connection (of the same partition) echoing connection 0's ident: the
     * entry's H is not its own -> bad_cookie; an index never given -> bad_cookie. */
    struct tframe f;
    uint16_t other = 50100;
    while (hlb_sf_part_of(w.sf, hlb_ck_hash(s, ip4("10.77.0.1"), htons(other), htons(80)), 0) !=
           hlb_sf_part_of(w.sf, hlb_ck_hash(s, ip4("10.77.0.1"), htons(50000), htons(80)), 0))
        other++;
    echo(&f, s, other, ident[0], HLB_TCP_ACK);
    assert_int_equal(run1(&w, t, &f, 30), HLB_V_DROP);
    echo(&f, s, 50000, hlb_sf_ident(2, 777), HLB_TCP_ACK);
    assert_int_equal(run1(&w, t, &f, 30), HLB_V_DROP);
    assert_int_equal(w.st.drops[HLB_DROP_BAD_COOKIE], 2);
    assert_int_equal(w.sf->st.misses, 2);
    /* A stateless ident still decodes on a stateful VIP (a host without the hint). */
    echo(&f, s, 50009, 3, HLB_TCP_ACK);
    assert_int_equal(run1(&w, t, &f, 30), HLB_V_TX);
    assert_int_equal(outer_dst(&f), ip4("10.9.0.3"));
    /* Server 3 leaves the pool while connection 2's entry lives: its echo is dropped
     * (bad_cookie) and its entry counted one hit a segment, by the lean pass (which
     * leaves the segment to the general code) as by the general code. */
    const char *two =
        "{\"version\":1,\"vips\":[{\"vip\":\"" VIP "\",\"selection\":\"crc32\","
        "\"connTable\":false,\"affinity\":\"cheetah-stateful\",\"cookieKey\":\"" KEY "\","
        "\"mechanism\":\"rr\",\"statefulOwners\":[\"" OTHER "\",\"192.0.2.30\",\"" SELF "\"],"
        "\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":["
        "{\"ip\":\"10.9.0.1\",\"serverId\":1},{\"ip\":\"10.9.0.2\",\"serverId\":2}]}]}]}";
    struct hlb_table_error err = {{0}, {0}};
    struct hlb_table_options opt = {.n_workers = 1, .self_ip = ip4(SELF)};
    struct hlb_vip_table *t2 = hlb_table_from_json(two, strlen(two), &opt, &err);
    assert_non_null(t2);
    const struct hlb_service *s2 = &t2->services[0];
    for (int ref = 0; ref < 2; ref++) {
        uint64_t hits0 = w.sf->st.hits, bad0 = w.st.drops[HLB_DROP_BAD_COOKIE];
        echo(&f, s2, 50002, ident[2], HLB_TCP_ACK);
        assert_int_equal(run_ref(&w, t2, &f, 40, ref), HLB_V_DROP);
        assert_int_equal(w.st.drops[HLB_DROP_BAD_COOKIE] - bad0, 1);
        assert_int_equal(w.sf->st.hits - hits0, 1);
    }
    hlb_table_free(t2);
    hlb_sf_free(w.sf);
    hlb_table_free(t);
}

/* One partition (1024 indexes): SYN 1025 finds the stack empty and goes stateless
 * (placed, no hint, counted); close reports free indexes (a stale one frees
 * nothing) and the next SYNs are stateful again.  Bad reports name their field and
 * queue nothing. */
static void test_exhaustion_and_release(void **state)
{
    (void)state;
    struct hlb_vip_table *t = sf_table("\"" SELF "\"", "rr");
    struct hlb_worker w;
    sf_worker(&w, 1, 60000);
    uint32_t idents[HLB_SF_INDEXES];
    for (unsigned k = 0; k < HLB_SF_INDEXES; k++) {
        struct tframe f;
        syn(&f, (uint16_t)(10000 + k));
        assert_int_equal(run1(&w, t, &f, 1), HLB_V_TX);
        assert_int_equal(inner_tsecr(&f) >> 16, HLB_COOKIE_HINT_MAGIC);
        idents[k] = inner_tsecr(&f) & 0xffff;
    }
    struct tframe f;
    syn(&f, 20000);
    assert_int_equal(run1(&w, t, &f, 1), HLB_V_TX);            /* still placed */
    assert_int_equal(inner_tsecr(&f), 0);                       /* no hint: stateless */
    assert_int_equal(w.sf->st.exhausted, 1);
    assert_int_equal(w.st.ck_stateless_syns, 1);
    assert_int_equal(w.sf->st.entries, HLB_SF_INDEXES);

    char body[1024];
    unsigned queued = 0;
    struct hlb_table_error err = {{0}, {0}};
    snprintf(body, sizeof(body), "{\"closed\":[{\"vip\":\"" VIP "\",\"port\":80,\"client\":"
             "\"10.77.0.1\",\"clientPort\":10005,\"ident\":%u},{\"vip\":\"" VIP "\",\"port\":80,"
             "\"client\":\"10.77.0.1\",\"clientPort\":10006,\"ident\":%u},{\"vip\":\"" VIP "\","
             "\"port\":80,\"client\":\"10.77.0.1\",\"clientPort\":30000,\"ident\":%u}]}",
             idents[5], idents[6], idents[7]);               /* the third: wrong tuple */
    assert_int_equal(closed_report(t, &w, body, &queued, &err), 0);
    assert_int_equal(queued, 3);
    assert_int_equal(w.sf->st.entries, HLB_SF_INDEXES);    /* the worker applies them */
    assert_int_equal(hlb_sf_drain(w.sf, 2), 3);
    assert_int_equal(w.sf->st.released, 2);                 /* not the wrong tuple's */
    assert_int_equal(w.sf->st.entries, HLB_SF_INDEXES - 2);
    assert_int_equal(hlb_sf_check(w.sf), 0);
    /* the released connection's echo no longer decodes; new SYNs take its index */
    echo(&f, &t->services[0], 10005, idents[5], HLB_TCP_ACK);
    assert_int_equal(run1(&w, t, &f, 2), HLB_V_DROP);
    for (int k = 0; k < 2; k++) {
        syn(&f, (uint16_t)(20001 + k));
        assert_int_equal(run1(&w, t, &f, 2), HLB_V_TX);
        uint32_t id = inner_tsecr(&f) & 0xffff;
        assert_int_equal(inner_tsecr(&f) >> 16, HLB_COOKIE_HINT_MAGIC);
        assert_true(id == idents[5] || id == idents[6]);
    }
    syn(&f, 20003);
    assert_int_equal(run1(&w, t, &f, 2), HLB_V_TX);
    assert_int_equal(inner_tsecr(&f), 0);
    assert_int_equal(w.sf->st.exhausted, 2);

    /* bad reports: the field, and nothing queued */
    const struct {
        const char *body, *field, *why;
    } bad[] = {
        {"[]", "(document)", "JSON object"},
        {"{\"closed\":{}}", "closed", "array"},
        {"{\"closed\":[{\"vip\":\"" VIP "\",\"port\":80,\"client\":\"10.77.0.1\","
         "\"clientPort\":1,\"ident\":3}]}", "closed[0].ident", "stateful ident"},
        {"{\"closed\":[{\"vip\":\"" VIP "\",\"port\":81,\"client\":\"10.77.0.1\","
         "\"clientPort\":1,\"ident\":16384}]}", "closed[0].vip", "no cheetah-stateful VIP"},
        {"{\"closed\":[{\"vip\":\"" VIP "\",\"port\":80,\"client\":\"10.77.0.1\","
         "\"clientPort\":1,\"ident\":17408}]}", "closed[0].ident", "names owner 1"},
        {"{\"closed\":[{\"vip\":\"" VIP "\",\"port\":80,\"client\":\"10.77.0.1\","
         "\"clientPort\":1,\"ident\":16384},{\"vip\":\"x\"}]}", "closed[1].vip", "IPv4"},
        {"{\"closed\":[{\"vip\":\"" VIP "\",\"port\":80,\"client\":\"10.77.0.1\","
         "\"clientPort\":70000,\"ident\":16384}]}", "closed[0].clientPort", "0..65535"},
    };
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        memset(&err, 0, sizeof(err));
        queued = 99;
        json_t *doc = json_loads(bad[k].body, 0, NULL);
        unsigned full = 0;
        struct hlb_worker *ws[1] = {&w};
        assert_int_equal(hlb_cookie_closed(t, ws, 1, doc, &queued, &full, &err), -1);
        json_decref(doc);
        if (strcmp(err.field, bad[k].field) != 0 || !strstr(err.reason, bad[k].why))
            fail_msg("report %zu: %s: %s, expected %s: ...%s...", k, err.field, err.reason,
                     bad[k].field, bad[k].why);
        assert_int_equal(hlb_sf_drain(w.sf, 2), 0);          /* nothing was queued */
    }
    hlb_sf_free(w.sf);
    hlb_table_free(t);
}

/* An owner restarts (or another SMux takes its owner id): its ConnTable is empty.
 * It gives no index while hints are held; the host agents' re-reports put each
 * connection back at its (partition, index), computed here from H as COOKIE-SPEC §7
 * says; the client's echoes then land on their servers again; a re-report of a held
 * entry changes nothing; an index another connection holds is refused, naming it;
 * and the adopted indexes are off the stacks (no SYN gets one).  Bad reports name
 * their field and queue nothing. */
static void test_adopt_after_owner_restart(void **state)
{
    (void)state;
    struct hlb_vip_table *t = sf_table("\"" SELF "\"", "rr");
    const struct hlb_service *s = &t->services[0];
    struct hlb_worker old, w;
    sf_worker(&old, 8, 60000);
    enum { N = 40 };
    uint16_t cport[N];
    uint32_t ident[N], dip[N];
    unsigned server[N];
    struct tframe f;
    for (unsigned k = 0; k < N; k++) {                  /* the first incarnation's SYNs */
        cport[k] = (uint16_t)(30000 + k);
        syn(&f, cport[k]);
        assert_int_equal(run1(&old, t, &f, 1), HLB_V_TX);
        assert_int_equal(inner_tsecr(&f) >> 16, HLB_COOKIE_HINT_MAGIC);
        ident[k] = inner_tsecr(&f) & 0xffff;
        dip[k] = outer_dst(&f);
        server[k] = dip[k] == ip4("10.9.0.1") ? 1 : dip[k] == ip4("10.9.0.2") ? 2 : 3;
    }
    hlb_sf_free(old.sf);

    sf_worker(&w, 8, 60000);                            /* restarted: empty, hints held */
    hlb_sf_hold_hints(w.sf, 1000);
    assert_int_equal(hlb_sf_drain(w.sf, 100), 0);
    syn(&f, 40000);
    assert_int_equal(run1(&w, t, &f, 200), HLB_V_TX);   /* placed, stateless */
    assert_int_equal(inner_tsecr(&f), 0);
    assert_int_equal(w.sf->st.held_syns, 1);
    assert_int_equal(w.sf->st.entries, 0);
    echo(&f, s, cport[0], ident[0], HLB_TCP_ACK);       /* not adopted yet: held back */
    assert_int_equal(run1(&w, t, &f, 200), HLB_V_DROP);

    /* every other connection first, newest first (an adopted index is mostly not on
     * its stack's top), then all of them: the first ones are held */
    uint16_t rport[N];
    uint32_t rident[N];
    unsigned rserver[N];
    for (unsigned k = 0; k < N; k++) {
        unsigned from = k < N / 2 ? N - 1 - 2 * k : N - 2 - 2 * (k - N / 2);
        rport[k] = cport[from];
        rident[k] = ident[from];
        rserver[k] = server[from];
    }
    struct hlb_table_error err = {{0}, {0}};
    for (unsigned n = N / 2; n <= N; n += N / 2) {
        struct hlb_adopt_batch *b = adopt_report(t, &w, rport, rident, rserver, n, &err);
        assert_non_null(b);
        json_t *j = adopt_answer(b, &w, 300);
        assert_int_equal(jint(j, "adopted"), N / 2);
        assert_int_equal(jint(j, "held"), n - N / 2);
        assert_int_equal(json_array_size(json_object_get(j, "taken")), 0);
        json_decref(j);
        assert_int_equal(hlb_sf_check(w.sf), 0);
    }
    assert_int_equal(w.sf->st.entries, N);
    assert_int_equal(w.sf->st.adopted, N);
    assert_int_equal(hlb_sf_check(w.sf), 0);
    for (unsigned k = 0; k < N; k++) {
        /* the entry sits where §7 puts it: partition (H >> 32) mod m, the ident's index */
        uint64_t h = hlb_ck_hash(s, ip4("10.77.0.1"), htons(cport[k]), htons(80));
        uint64_t e = w.sf->ent[(size_t)(ident[k] & 1023u) * 8 + (uint32_t)(h >> 32) % 8];
        assert_int_equal(e >> 32, (uint32_t)h);
        assert_int_equal(e >> HLB_SF_SERVER_SHIFT & HLB_SF_SERVER_MASK, server[k]);
        echo(&f, s, cport[k], ident[k], HLB_TCP_ACK);
        assert_int_equal(run1(&w, t, &f, 400), HLB_V_TX);
        assert_int_equal(outer_dst(&f), dip[k]);
    }

    /* again: held, nothing changes; another connection naming a held index: refused */
    uint32_t part0 = hlb_sf_part_of(w.sf, hlb_ck_hash(s, ip4("10.77.0.1"), htons(cport[0]),
                                                      htons(80)), 0);
    uint16_t other = 50000;
    while (hlb_sf_part_of(w.sf, hlb_ck_hash(s, ip4("10.77.0.1"), htons(other), htons(80)), 0) !=
           part0)
        other++;
    uint16_t ports2[2] = {cport[0], other};
    uint32_t idents2[2] = {ident[0], ident[0]};
    unsigned servers2[2] = {server[0], server[0] % 3 + 1};
    struct hlb_adopt_batch *b = adopt_report(t, &w, ports2, idents2, servers2, 2, &err);
    assert_non_null(b);
    json_t *j = adopt_answer(b, &w, 500);
    assert_int_equal(jint(j, "adopted"), 0);
    assert_int_equal(jint(j, "held"), 1);
    json_t *taken = json_object_get(j, "taken");
    assert_int_equal(json_array_size(taken), 1);
    char why[128];
    snprintf(why, sizeof(why), "index %u of partition %u holds another connection",
             ident[0] & 1023u, part0);
    assert_string_equal(json_string_value(json_object_get(json_array_get(taken, 0), "field")),
                        "adopt[1].ident");
    assert_string_equal(json_string_value(json_object_get(json_array_get(taken, 0), "reason")),
                        why);
    json_decref(j);
    assert_int_equal(w.sf->st.adopt_taken, 1);
    assert_int_equal(w.sf->st.entries, N);
    echo(&f, s, cport[0], ident[0], HLB_TCP_ACK);       /* the first holder keeps it */
    assert_int_equal(run1(&w, t, &f, 600), HLB_V_TX);
    assert_int_equal(outer_dst(&f), dip[0]);

    /* the hold ends; SYNs fill every stack and never get an adopted index */
    assert_int_equal(hlb_sf_drain(w.sf, 1100), 0);
    for (unsigned k = 0; k < 29000 && w.sf->st.entries < 8 * HLB_SF_INDEXES; k++) {
        syn(&f, (uint16_t)(1000 + k));                 /* other ports than the adopted */
        run1(&w, t, &f, 1200);
        uint32_t hint = inner_tsecr(&f);
        if (hint >> 16 != HLB_COOKIE_HINT_MAGIC)
            continue;
        uint64_t h = hlb_ck_hash(s, ip4("10.77.0.1"), htons((uint16_t)(1000 + k)), htons(80));
        uint32_t p = hlb_sf_part_of(w.sf, h, 0);
        for (unsigned a = 0; a < N; a++) {
            uint64_t ha = hlb_ck_hash(s, ip4("10.77.0.1"), htons(cport[a]), htons(80));
            if (hlb_sf_part_of(w.sf, ha, 0) == p && (ident[a] & 1023u) == (hint & 1023u))
                fail_msg("SYN %u got adopted index %u of partition %u", k, hint & 1023u, p);
        }
    }
    assert_int_equal(w.sf->st.entries, 8 * HLB_SF_INDEXES);    /* every index in use */
    assert_int_equal(w.sf->st.inserts, 8 * HLB_SF_INDEXES - N);
    assert_int_equal(hlb_sf_check(w.sf), 0);
    for (unsigned k = 0; k < N; k++) {                  /* and the adopted ones still hold */
        echo(&f, s, cport[k], ident[k], HLB_TCP_ACK);
        assert_int_equal(run1(&w, t, &f, 1300), HLB_V_TX);
        assert_int_equal(outer_dst(&f), dip[k]);
    }

    /* bad reports: the field, nothing queued */
    const struct {
        uint32_t ident;
        unsigned server;
        const char *field, *why;
    } bad[] = {
        {hlb_sf_ident(0, 3), 0, "adopt[0].serverId", "1..16383"},
        {hlb_sf_ident(0, 3), 9, "adopt[0].serverId", "no server of the VIP's pool"},
        {hlb_sf_ident(1, 3), 1, "adopt[0].ident", "names owner 1"},
        {3, 1, "adopt[0].ident", "stateful ident"},
    };
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        memset(&err, 0, sizeof(err));
        uint16_t p1 = 7;
        assert_null(adopt_report(t, &w, &p1, &bad[k].ident, &bad[k].server, 1, &err));
        if (strcmp(err.field, bad[k].field) != 0 || !strstr(err.reason, bad[k].why))
            fail_msg("report %zu: %s: %s, expected %s: ...%s...", k, err.field, err.reason,
                     bad[k].field, bad[k].why);
        assert_int_equal(hlb_sf_drain(w.sf, 1400), 0);
    }
    hlb_sf_free(w.sf);
    hlb_table_free(t);
}

/* A table that moves a VIP's SYN id (the lowest held) to another owner id, gives it
 * one where it held nothing, or names a stateful VIP the running table has not (a
 * fresh SMux's first table) asks for a hold on that id; the same id, losing the id, or
 * an id given beside the SYN id does not. */
static void test_new_syn_ids(void **state)
{
    (void)state;
    struct hlb_vip_table *none = sf_table("\"" OTHER "\"", "rr");
    struct hlb_vip_table *own0 = sf_table("\"" SELF "\",\"" OTHER "\"", "rr");
    struct hlb_vip_table *own1 = sf_table("\"" OTHER "\",\"" SELF "\"", "rr");
    struct hlb_vip_table *own02 = sf_table("\"" SELF "\",\"" OTHER "\",\"" SELF "\"", "rr");
    struct hlb_vip_table *own2 = sf_table("\"" OTHER "\",\"" OTHER "\",\"" SELF "\"", "rr");
    struct hlb_vip_table *empty = hlb_table_empty();
    assert_int_equal(hlb_cookie_new_syn_ids(none, own0), 1u << 0);
    assert_int_equal(hlb_cookie_new_syn_ids(own0, own1), 1u << 1);
    assert_int_equal(hlb_cookie_new_syn_ids(own0, own0), 0);
    assert_int_equal(hlb_cookie_new_syn_ids(empty, own0), 1u << 0);
    assert_int_equal(hlb_cookie_new_syn_ids(own0, none), 0);
    assert_int_equal(hlb_cookie_new_syn_ids(own0, own02), 0);      /* id 2 beside id 0 */
    assert_int_equal(hlb_cookie_new_syn_ids(own2, own02), 1u << 0); /* id 0 the new lowest */
    assert_int_equal(hlb_cookie_new_syn_ids(own02, own2), 1u << 2); /* id 2 the lowest now */
    hlb_table_free(none);
    hlb_table_free(own0);
    hlb_table_free(own1);
    hlb_table_free(own02);
    hlb_table_free(own2);
    hlb_table_free(empty);
}

/* Entries idle for idle_ms go; a segment within the period keeps its entry. */
static void test_idle_sweep(void **state)
{
    (void)state;
    struct hlb_vip_table *t = sf_table("\"" SELF "\"", "rr");
    struct hlb_worker w;
    sf_worker(&w, 1, 8000);
    uint32_t id[2];
    for (int k = 0; k < 2; k++) {
        struct tframe f;
        syn(&f, (uint16_t)(61000 + k));
        assert_int_equal(run1(&w, t, &f, 1000), HLB_V_TX);
        id[k] = inner_tsecr(&f) & 0xffff;
    }
    struct tframe f;
    echo(&f, &t->services[0], 61000, id[0], HLB_TCP_ACK);   /* connection 0 is active */
    assert_int_equal(run1(&w, t, &f, 6000), HLB_V_TX);
    hlb_sf_sweep(w.sf, 8999, HLB_SF_INDEXES);
    assert_int_equal(w.sf->st.entries, 2);
    hlb_sf_sweep(w.sf, 9000, HLB_SF_INDEXES);                /* 8 s after connection 1's SYN */
    assert_int_equal(w.sf->st.entries, 1);
    assert_int_equal(w.sf->st.idle_expired, 1);
    echo(&f, &t->services[0], 61001, id[1], HLB_TCP_ACK);
    assert_int_equal(run1(&w, t, &f, 9001), HLB_V_DROP);
    echo(&f, &t->services[0], 61000, id[0], HLB_TCP_ACK);
    assert_int_equal(run1(&w, t, &f, 9001), HLB_V_TX);
    hlb_sf_sweep(w.sf, 17000, HLB_SF_INDEXES);
    assert_int_equal(w.sf->st.entries, 1);
    hlb_sf_sweep(w.sf, 17001, HLB_SF_INDEXES);               /* 8 s after its last refresh */
    assert_int_equal(w.sf->st.entries, 0);
    assert_int_equal(hlb_sf_check(w.sf), 0);
    hlb_sf_free(w.sf);
    hlb_table_free(t);
}

/* The entries' clock (stateful.h): exact to the ms up to 131 s of idle time; longer
 * ones in ticks of 2^s ms, freed within two ticks after the idle time, never
 * before; an entry kept active lives across wraps of the 18-bit seen field and of
 * the 32-bit ms clock; an entry checks the connection's H. */
static void test_idle_clock(void **state)
{
    (void)state;
    const uint64_t h = 0x0123456789abcdefull;
    /* The default, 120 s: one-ms ticks, freed at exactly 120 000 ms. */
    struct hlb_sf_table *sf = hlb_sf_create(1, HLB_SF_DEFAULT_IDLE_MS);
    assert_int_equal(sf->tick_shift, 0);
    uint32_t t0 = 0xfffff000u;                   /* the ms clock wraps in between */
    int idx = hlb_sf_insert(sf, 0, 9, h, t0);
    assert_int_equal(hlb_sf_lookup(sf, 0, (uint32_t)idx, h, t0 + 5), 9);
    assert_int_equal(hlb_sf_lookup(sf, 0, (uint32_t)idx, h ^ 1, t0 + 5), 0);   /* another H */
    assert_int_equal(hlb_sf_lookup(sf, 0, (uint32_t)idx, h ^ (1ull << 31), t0 + 5), 0);
    hlb_sf_sweep(sf, t0 + HLB_SF_DEFAULT_IDLE_MS - 1, HLB_SF_INDEXES);
    assert_int_equal(sf->st.entries, 1);
    hlb_sf_sweep(sf, t0 + HLB_SF_DEFAULT_IDLE_MS, HLB_SF_INDEXES);
    assert_int_equal(sf->st.entries, 0);
    hlb_sf_free(sf);

    /* 300 s: ticks of 4 ms (2^18 ticks: 1048 s).  A connection with a segment every
     * 10 s for 2500 s, swept all the while, stays; then idle, it goes within two
     * ticks after 300 s, not before, whatever the ms within its tick. */
    const uint32_t idle = 300000;
    for (uint32_t j = 0; j < 4; j++) {
        sf = hlb_sf_create(1, idle);
        assert_int_equal(sf->tick_shift, 2);
        uint32_t now = t0 + j;
        idx = hlb_sf_insert(sf, 0, 9, h, now);
        for (int k = 0; k < 250; k++) {
            now += 10000;
            assert_int_equal(hlb_sf_lookup(sf, 0, (uint32_t)idx, h, now), 9);
            hlb_sf_sweep(sf, now + 9999, HLB_SF_INDEXES);
            assert_int_equal(sf->st.entries, 1);
        }
        uint32_t tick_ms = 1u << sf->tick_shift;
        for (uint32_t d = idle - 3 * tick_ms; d < idle; d++) {
            hlb_sf_sweep(sf, now + d, HLB_SF_INDEXES);
            if (sf->st.entries != 1)
                fail_msg("freed %u ms after its last segment (idle %u ms)", d, idle);
        }
        hlb_sf_sweep(sf, now + idle + 2 * tick_ms, HLB_SF_INDEXES);
        assert_int_equal(sf->st.entries, 0);
        assert_int_equal(sf->st.idle_expired, 1);
        assert_int_equal(hlb_sf_check(sf), 0);
        hlb_sf_free(sf);
    }
}

/* Two tiers: this SMux (owner 0) gets a segment of owner 1's connection and sends it
 * IP-in-IP to owner 1, inner frame untouched; owner 1 opens it and places it by its
 * entry.  A SYN at an SMux that owns nothing goes to an owner; a decapsulated frame
 * naming yet another owner is dropped (never forwarded twice); an owner id past the
 * list is a bad cookie. */
static void test_two_tiers(void **state)
{
    (void)state;
    const char *owners = "\"" SELF "\",\"" OTHER "\"";
    struct hlb_vip_table *t0 = sf_table_at(owners, "rr", SELF, "siphash13");
    struct hlb_vip_table *t1 = sf_table_at(owners, "rr", OTHER, "siphash13");
    assert_int_equal(t0->services[0].sf_self, 0);
    assert_int_equal(t1->services[0].sf_self, 1);
    struct hlb_worker w0, w1;
    sf_worker(&w0, 4, 60000);
    sf_worker(&w1, 4, 60000);
    w1.cfg.self_ip = ip4(OTHER);

    /* owner 1 takes a connection's SYN */
    struct tframe f;
    syn(&f, 42000);
    assert_int_equal(run1(&w1, t1, &f, 5), HLB_V_TX);
    uint32_t ident = inner_tsecr(&f) & 0xffff;
    assert_int_equal((ident >> HLB_SF_OWNER_SHIFT) & 15, 1);
    uint32_t dip = outer_dst(&f);

    for (int ref = 0; ref < 2; ref++) {
        /* its next segment lands on SMux 0 (ECMP): forwarded to owner 1 */
        echo(&f, &t0->services[0], 42000, ident, HLB_TCP_ACK);
        uint8_t inner_copy[128];
        memcpy(inner_copy, f.p.data + 14, 64);
        assert_int_equal(run_ref(&w0, t0, &f, 6, ref), HLB_V_TX);
        assert_int_equal(outer_dst(&f), ip4(OTHER));
        assert_int_equal(f.p.data[14 + 9], HLB_IPPROTO_IPIP);
        assert_memory_equal(f.p.data + 34, inner_copy, 64);
        /* SMux 1 receives that frame (its Ethernet header is the gateway's) */
        f.p.in_port = 0;
        assert_int_equal(hlb_flow_worker(f.p.data, f.p.len, 4),
                         hlb_flow_worker_tuple(ip4("10.77.0.1"), ip4(VIP), htons(42000),
                                               htons(80), HLB_IPPROTO_TCP, 4));
        assert_int_equal(run_ref(&w1, t1, &f, 7, ref), HLB_V_TX);
        assert_int_equal(outer_dst(&f), dip);
        assert_int_equal(f.p.data[14 + 9], HLB_IPPROTO_IPIP);
        assert_int_equal(f.p.data[34 + 9], HLB_IPPROTO_TCP);   /* one header, the inner TCP */
        assert_memory_equal(f.p.data + 34, inner_copy, 64);       /* the client's segment */
        assert_int_equal(f.p.len, 14 + 20 + ((uint32_t)inner_copy[2] << 8 | inner_copy[3]));
    }
    assert_int_equal(w0.sf->st.forwarded, 2);
    assert_int_equal(w1.st.ck_decapsulated, 2);
    assert_int_equal(w1.sf->st.hits, 2);

    /* A forwarded frame whose inner header claims more bytes than the frame holds:
     * dropped after the outer header goes, never read past its end. */
    echo(&f, &t0->services[0], 42000, ident, HLB_TCP_ACK);
    assert_int_equal(run1(&w0, t0, &f, 7), HLB_V_TX);
    uint8_t *in = f.p.data + 34;
    uint16_t claimed = (uint16_t)(((uint32_t)in[2] << 8 | in[3]) + 20);
    in[2] = (uint8_t)(claimed >> 8);
    in[3] = (uint8_t)claimed;
    in[10] = in[11] = 0;
    uint16_t ics = hlb_csum(in, 20);
    memcpy(in + 10, &ics, 2);
    uint64_t drops0 = total_drops(&w1);
    assert_int_equal(run1(&w1, t1, &f, 7), HLB_V_DROP);
    assert_int_equal(total_drops(&w1), drops0 + 1);
    assert_int_equal(w1.sf->st.hits, 2);

    /* Owner tables that disagree: SMux 1 forwards owner 0's segment to SMux 0, whose
     * table makes it owner 1 of the VIP: the frame is dropped there, not sent on. */
    echo(&f, &t0->services[0], 42001, hlb_sf_ident(0, 3), HLB_TCP_ACK);
    assert_int_equal(run1(&w1, t1, &f, 8), HLB_V_TX);
    assert_int_equal(outer_dst(&f), ip4(SELF));
    struct hlb_vip_table *tw = sf_table_at("\"192.0.2.50\",\"" SELF "\"", "rr", SELF,
                                           "siphash13");
    assert_int_equal(tw->services[0].sf_self, 1);
    assert_int_equal(run1(&w0, tw, &f, 9), HLB_V_DROP);
    assert_int_equal(w0.sf->st.foreign_bad, 1);
    assert_int_equal(w0.sf->st.forwarded, 3);             /* not sent on */
    hlb_table_free(tw);

    /* owner id 5 of a two-owner VIP */
    echo(&f, &t0->services[0], 42002, hlb_sf_ident(5, 1), HLB_TCP_ACK);
    assert_int_equal(run1(&w0, t0, &f, 9), HLB_V_DROP);

    /* an SMux that owns nothing sends SYNs to an owner, unchanged */
    struct hlb_vip_table *tn = sf_table_at(owners, "rr", "192.0.2.99", "siphash13");
    assert_int_equal(tn->services[0].sf_self, HLB_SF_NOT_OWNER);
    int to_owner[2] = {0, 0};
    for (int k = 0; k < 64; k++) {
        syn(&f, (uint16_t)(43000 + k));
        assert_int_equal(run1(&w0, tn, &f, 10), HLB_V_TX);
        assert_int_equal(inner_tsecr(&f), 0);
        to_owner[outer_dst(&f) == ip4(OTHER)]++;
        assert_true(outer_dst(&f) == ip4(SELF) || outer_dst(&f) == ip4(OTHER));
    }
    assert_true(to_owner[0] > 10 && to_owner[1] > 10);     /* both owners get SYNs */
    hlb_table_free(tn);
    hlb_sf_free(w0.sf);
    hlb_sf_free(w1.sf);
    hlb_table_free(t0);
    hlb_table_free(t1);
}

struct row {
    char seq[64], mode[16], key[40], vip[16], client[16];
    unsigned vip_port, client_port, ident, cookie;
    unsigned long long hash;
    unsigned tsval, wire_tsval, last_sent, wire_tsecr, tsecr;
};

/* Runs of up to 64 segments of a stateful VIP through the lean pass, which decodes a
 * run's cookies together (sf_decode.h: 8 to a vector with AVX-512), against the
 * general code alone: live connections' echoes (hits, their entries due a refresh
 * as the clock moves), another connection's ident, free indexes, the other owner's
 * idents, stateless idents in and out of the pool, in every lane of a run.  Every
 * verdict, frame, counter and entry must come out the same. */
static struct tframe run_fa[HLB_MAX_BURST], run_fb[HLB_MAX_BURST];

static void test_runs_equal_reference(void **state)
{
    (void)state;
    enum { CONNS = 200, ROUNDS = 300 };
    struct hlb_vip_table *ta = sf_table("\"" OTHER "\",\"" SELF "\"", "rr");
    struct hlb_vip_table *tb = sf_table("\"" OTHER "\",\"" SELF "\"", "rr");
    const struct hlb_service *s = &ta->services[0];
    assert_int_equal(s->sf_self, 1);
    struct hlb_worker a, b;
    sf_worker(&a, 2, 60000);
    sf_worker(&b, 2, 60000);
    uint32_t ident[CONNS], now = 1000;
    for (int k = 0; k < CONNS; k++) {
        struct tframe f, g;
        syn(&f, (uint16_t)(20000 + k));
        syn(&g, (uint16_t)(20000 + k));
        assert_int_equal(run_ref(&a, ta, &f, now, 0), HLB_V_TX);
        assert_int_equal(run_ref(&b, tb, &g, now, 1), HLB_V_TX);
        ident[k] = inner_tsecr(&f) & 0xffff;
        assert_int_equal(inner_tsecr(&g) & 0xffff, ident[k]);
        assert_int_equal(ident[k] & HLB_COOKIE_STATEFUL, HLB_COOKIE_STATEFUL);
    }
    uint32_t rng = 777;
    for (int r = 0; r < ROUNDS; r++) {
        rng = rng * 1103515245u + 12345u;
        unsigned n = r % 3 ? 1 + (rng >> 16) % HLB_MAX_BURST : HLB_MAX_BURST;
        struct hlb_pkt pa[HLB_MAX_BURST], pb[HLB_MAX_BURST];
        uint8_t va[HLB_MAX_BURST], vb[HLB_MAX_BURST];
        for (unsigned i = 0; i < n; i++) {
            rng = rng * 1103515245u + 12345u;
            uint32_t conn = (rng >> 8) % CONNS, kind = (rng >> 24) % 32, id = ident[conn];
            if (kind == 0)
                id = ident[(conn + 1) % CONNS];             /* another connection's */
            else if (kind == 1)
                id = hlb_sf_ident(1, 900 + conn % 100);      /* a free index */
            else if (kind == 2)
                id = hlb_sf_ident(0, conn % 8);              /* the other owner's */
            else if (kind == 3)
                id = 1 + conn % 3;                           /* stateless, in the pool */
            else if (kind == 4)
                id = 9;                                      /* stateless, no such server */
            echo(&run_fa[i], s, (uint16_t)(20000 + conn), id, HLB_TCP_ACK);
            echo(&run_fb[i], s, (uint16_t)(20000 + conn), id, HLB_TCP_ACK);
            pa[i] = run_fa[i].p;
            pb[i] = run_fb[i].p;
        }
        hlb_dp_burst(&a, ta, pa, va, n, now);
        hlb_dp_burst_reference(&b, tb, pb, vb, n, now);
        for (unsigned i = 0; i < n; i++) {
            if (va[i] != vb[i] || pa[i].len != pb[i].len ||
                (va[i] == HLB_V_TX && memcmp(pa[i].data, pb[i].data, pa[i].len) != 0))
                fail_msg("round %d frame %u: verdict %u vs %u", r, i, va[i], vb[i]);
        }
        struct hlb_dp_stats sa = a.st, sb = b.st;
        sa.lean_packets = sb.lean_packets = 0;
        assert_memory_equal(&sa, &sb, sizeof(sa));
        assert_memory_equal(&a.sf->st, &b.sf->st, sizeof(a.sf->st));
        assert_true(hlb_sf_same(a.sf, b.sf));
        now += (rng >> 4) % 1500;                 /* entries come due a refresh (1 s) */
    }
    print_message("runs: %llu hits, %llu misses, %llu forwarded, lean pass %llu of %llu "
                  "frames\n", (unsigned long long)a.sf->st.hits,
                  (unsigned long long)a.sf->st.misses, (unsigned long long)a.sf->st.forwarded,
                  (unsigned long long)a.st.lean_packets, (unsigned long long)a.st.rx_packets);
    assert_true(a.sf->st.hits > 0 && a.sf->st.misses > 0 && a.sf->st.forwarded > 0);
    assert_true(a.st.lean_packets > a.st.rx_packets / 2);    /* not vacuous */
    hlb_sf_free(a.sf);
    hlb_sf_free(b.sf);
    hlb_table_free(ta);
    hlb_table_free(tb);
}

/* The shared vectors' stateful rows (p4/model): the owner their ident names, holding
 * the index in the partition the model's H picks, places the client's echo on the
 * connection's server. */
static void test_shared_vectors_stateful(void **state)
{
    (void)state;
    const char *path = getenv("HLB_COOKIE_VECTORS");
    assert_non_null(path);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char line[512], owners[600];
    unsigned rows = 0;
    while (fgets(line, sizeof(line), fp)) {
        struct row r;
        if (line[0] == '#' || strncmp(line, "seq,", 4) == 0)
            continue;
        if (sscanf(line, "%63[^,],%15[^,],%39[^,],%15[^,],%u,%15[^,],%u,%u,%llx,%u,%x,%x,%x,%x,%x",
                   r.seq, r.mode, r.key, r.vip, &r.vip_port, r.client, &r.client_port,
                   &r.ident, &r.hash, &r.cookie, &r.tsval, &r.wire_tsval, &r.last_sent,
                   &r.wire_tsecr, &r.tsecr) != 15)
            fail_msg("bad row %s", line);
        uint32_t vh = ntohl(ip4(r.vip));
        if (!(r.ident & HLB_COOKIE_STATEFUL) || vh == 0 || (vh >> 28) >= 0xe || (vh >> 24) == 127)
            continue;
        unsigned owner = (r.ident >> HLB_SF_OWNER_SHIFT) & 15;
        owners[0] = 0;
        for (unsigned k = 0; k <= owner; k++)
            snprintf(owners + strlen(owners), sizeof(owners) - strlen(owners), "%s\"192.0.2.%u\"",
                     k ? "," : "", k == owner ? 10 : 100 + k);
        char json[1400];
        snprintf(json, sizeof(json),
                 "{\"version\":1,\"vips\":[{\"vip\":\"%s\",\"selection\":\"crc32\","
                 "\"affinity\":\"cheetah-stateful\",\"cookieKey\":\"%s\",\"cookieHash\":\"%s\","
                 "\"statefulOwners\":[%s],\"ports\":[{\"proto\":\"tcp\",\"port\":%u,\"dips\":["
                 "{\"ip\":\"10.9.0.1\",\"serverId\":1},{\"ip\":\"10.9.0.2\",\"serverId\":77}]}]}]}",
                 r.vip, r.key, r.mode, owners, r.vip_port);
        struct hlb_table_error err = {{0}, {0}};
        struct hlb_table_options opt = {.n_workers = 1, .self_ip = ip4(SELF)};
        struct hlb_vip_table *t = hlb_table_from_json(json, strlen(json), &opt, &err);
        if (!t)
            fail_msg("%s: %s: %s", r.seq, err.field, err.reason);
        struct hlb_worker w;
        sf_worker(&w, 64, 60000);
        /* COOKIE-SPEC §7's partition, written out: (H >> 32) mod m, crc32c (H >> 16) mod m */
        uint32_t p = (uint32_t)(strcmp(r.mode, "crc32c") == 0 ? r.hash >> 16 : r.hash >> 32) % 64;
        /* the index the ident names, taken from the stack as a SYN would */
        uint32_t idx = r.ident & HLB_SF_INDEX_MASK;
        for (uint32_t k = 0; k < w.sf->n_free[p]; k++)
            if (*hlb_sf_stack_slot(w.sf, p, k) == idx) {
                *hlb_sf_stack_slot(w.sf, p, k) = *hlb_sf_stack_slot(w.sf, p, --w.sf->n_free[p]);
                break;
            }
        *hlb_sf_entry(w.sf, p, idx) = hlb_sf_word(r.hash, 77, 0);
        w.sf->st.entries++;
        assert_int_equal(hlb_sf_check(w.sf), 0);
        for (int ref = 0; ref < 2; ref++) {
            struct tframe f;
            build_tcp_ts(&f, r.client, r.vip, (uint16_t)r.client_port, (uint16_t)r.vip_port,
                         HLB_TCP_ACK, 1, r.wire_tsecr);
            if (run_ref(&w, t, &f, 1, ref) != HLB_V_TX || outer_dst(&f) != ip4("10.9.0.2"))
                fail_msg("%s: stateful ident %u not placed (%s path)", r.seq, r.ident,
                         ref ? "general" : "lean");
        }
        assert_int_equal(w.sf->st.hits, 2);
        rows++;
        hlb_sf_free(w.sf);
        hlb_table_free(t);
    }
    fclose(fp);
    print_message("%s: %u stateful rows placed by their owner's entry\n", path, rows);
    assert_true(rows >= 20);
}

static void set_loads(struct hlb_vip_table *t, const double *l, unsigned n)
{
    char body[512] = "{\"loads\":[";
    for (unsigned k = 0; k < n; k++)
        snprintf(body + strlen(body), sizeof(body) - strlen(body),
                 "%s{\"dip\":\"10.9.0.%u\",\"load\":%.6f}", k ? "," : "", k + 1, l[k]);
    strcat(body, "]}");
    json_t *doc = json_loads(body, 0, NULL);
    unsigned matched = 0;
    struct hlb_table_error err = {{0}, {0}};
    assert_int_equal(hlb_balance_report(t, doc, &matched, &err), 0);
    assert_int_equal(matched, n);
    json_decref(doc);
}

/* p2c never takes the more loaded of its two draws (with three DIPs, the most
 * loaded one never); least-loaded takes the least loaded every time (herding);
 * a DIP of weight 0 is never taken. */
static void test_load_mechanisms(void **state)
{
    (void)state;
    struct hlb_worker w;
    sf_worker(&w, 1, 60000);
    w.rng = 7;
    struct hlb_vip_table *t = sf_table("\"" SELF "\"", "p2c");
    double loads[3] = {0.2, 0.9, 0.5};
    set_loads(t, loads, 3);
    unsigned got[3] = {0, 0, 0};
    for (int k = 0; k < 300; k++) {
        struct tframe f;
        syn(&f, (uint16_t)(30000 + k));
        assert_int_equal(run1(&w, t, &f, 1), HLB_V_TX);
        got[(ntohl(outer_dst(&f)) & 0xff) - 1]++;
    }
    /* P(least loaded) = 5/9, P(middle) = 3/9, P(most) = 1/9 (both draws on it) */
    print_message("p2c over loads 0.2, 0.9, 0.5: %u, %u, %u of 300\n", got[0], got[1], got[2]);
    assert_true(got[0] > 130 && got[2] > 60 && got[1] < 60);
    assert_int_equal(w.st.ck_syns[HLB_MECH_P2C], 300);
    hlb_table_free(t);

    t = sf_table("\"" SELF "\"", "least-loaded");
    set_loads(t, loads, 3);
    for (int k = 0; k < 20; k++) {
        struct tframe f;
        syn(&f, (uint16_t)(31000 + k));
        assert_int_equal(run1(&w, t, &f, 1), HLB_V_TX);
        assert_int_equal(outer_dst(&f), ip4("10.9.0.1"));
    }
    double l2[3] = {0.7, 0.9, 0.5};
    set_loads(t, l2, 3);
    struct tframe f;
    syn(&f, 31100);
    assert_int_equal(run1(&w, t, &f, 1), HLB_V_TX);
    assert_int_equal(outer_dst(&f), ip4("10.9.0.3"));
    /* connection counts (the agents' --load-metric connections): up to a million,
     * their order kept */
    double conns[3] = {4294, 1000000, 4296};
    set_loads(t, conns, 3);
    syn(&f, 31102);
    assert_int_equal(run1(&w, t, &f, 1), HLB_V_TX);
    assert_int_equal(outer_dst(&f), ip4("10.9.0.1"));
    set_loads(t, l2, 3);
    assert_int_equal(w.st.ck_syns[HLB_MECH_LEAST_LOADED], 22);
    /* a table swap keeps the reported loads (the control thread carries them) */
    struct hlb_vip_table *t2 = sf_table("\"" SELF "\"", "least-loaded");
    hlb_balance_carry(t2, t);
    syn(&f, 31101);
    assert_int_equal(run1(&w, t2, &f, 1), HLB_V_TX);
    assert_int_equal(outer_dst(&f), ip4("10.9.0.3"));
    hlb_table_free(t2);
    hlb_table_free(t);

    /* bad load reports name the field */
    t = sf_table("\"" SELF "\"", "p2c");
    const struct {
        const char *body, *field;
    } bad[] = {{"{\"loads\":[{\"dip\":\"10.9.0.1\",\"load\":-1}]}", "loads[0].load"},
               {"{\"loads\":[{\"dip\":\"10.9.0.1\",\"load\":1000001}]}", "loads[0].load"},
               {"{\"loads\":[{\"dip\":\"10.9.0.1\",\"load\":0.5},{\"dip\":\"10.9.0\",\"load\":1}]}",
                "loads[1].dip"},
               {"{\"loads\":[{\"dip\":\"10.9.0.1\"}]}", "loads[0].load"},
               {"{\"load\":[]}", "loads"}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        json_t *doc = json_loads(bad[k].body, 0, NULL);
        unsigned m = 0;
        struct hlb_table_error err = {{0}, {0}};
        assert_int_equal(hlb_balance_report(t, doc, &m, &err), -1);
        assert_string_equal(err.field, bad[k].field);
        json_decref(doc);
    }
    assert_int_equal(t->dip_load[0], 0);          /* the valid first entry was not applied */
    hlb_table_free(t);
    hlb_sf_free(w.sf);
}

/* AWRR (ToN §IV-B): N_i = round(10 L_avg / (0.5 L_i + 0.5 L_avg)) clamped to [2, 30];
 * in a closed loop (servers of capacities 1, 1, 2, 4 under a fixed total load,
 * each period's loads from the SYN shares the last weights gave) the weights settle
 * within a few periods, at a smaller load spread than equal weights give. */
static void test_awrr_weights(void **state)
{
    (void)state;
    assert_int_equal(hlb_awrr_weight(0.5, 0.5), 10);
    assert_int_equal(hlb_awrr_weight(0, 0), 10);
    assert_int_equal(hlb_awrr_weight(0, 0.5), 20);
    assert_int_equal(hlb_awrr_weight(1.0, 0.5), 7);
    assert_int_equal(hlb_awrr_weight(100, 0.5), HLB_AWRR_MIN);
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"version\":1,\"vips\":[{\"vip\":\"" VIP "\",\"selection\":\"crc32\","
             "\"affinity\":\"cheetah\",\"cookieKey\":\"" KEY "\",\"mechanism\":\"awrr\","
             "\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":["
             "{\"ip\":\"10.9.0.1\",\"serverId\":1},{\"ip\":\"10.9.0.2\",\"serverId\":2},"
             "{\"ip\":\"10.9.0.3\",\"serverId\":3},{\"ip\":\"10.9.0.4\",\"serverId\":4},"
             "{\"ip\":\"10.9.0.5\",\"serverId\":5,\"weight\":0}]}]}]}");
    struct hlb_vip_table *t = table_ok(json, 0);
    struct hlb_worker w;
    worker_init(&w, NULL);
    const double cap[4] = {1, 1, 2, 4}, total = 4.0;
    unsigned weights[12][4];
    double spread[12];
    for (int period = 0; period < 12; period++) {
        /* this period's SYNs: one full AWRR round through the packet core */
        unsigned share[5] = {0}, n = 0;
        uint8_t sel = t->awrr_sel[0];
        unsigned round_len = t->awrr_total[sel];
        for (unsigned k = 0; k < round_len; k++, n++) {
            struct tframe f;
            build_tcp_ts(&f, "10.77.0.1", VIP, (uint16_t)(1000 + n), 80, HLB_TCP_SYN, 1, 0);
            assert_int_equal(run1(&w, t, &f, 0), HLB_V_TX);
            share[(ntohl(outer_dst(&f)) & 0xff) - 1]++;
        }
        assert_int_equal(share[4], 0);                /* weight 0: drained */
        double l[4], mx = 0, mn = 1e9;
        for (int d = 0; d < 4; d++) {
            weights[period][d] = share[d];
            l[d] = total * share[d] / n / cap[d];
            mx = l[d] > mx ? l[d] : mx;
            mn = l[d] < mn ? l[d] : mn;
        }
        spread[period] = mx / mn;
        set_loads(t, l, 4);
    }
    print_message("awrr: weights %u %u %u %u -> %u %u %u %u, load spread %.2f -> %.2f\n",
                  weights[0][0], weights[0][1], weights[0][2], weights[0][3], weights[11][0],
                  weights[11][1], weights[11][2], weights[11][3], spread[0], spread[11]);
    assert_true(spread[0] > 3.9);                     /* equal weights: 4x */
    for (int p = 6; p < 12; p++)                      /* settled */
        assert_memory_equal(weights[p], weights[5], sizeof(weights[5]));
    assert_true(spread[11] < 0.75 * spread[0]);
    assert_true(weights[11][3] > weights[11][2] && weights[11][2] > weights[11][0]);
    assert_int_equal(w.st.ck_syns[HLB_MECH_AWRR] > 0, 1);
    hlb_table_free(t);
}

static void expect_error(const char *vipfields, const char *field, const char *why)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"version\":1,\"vips\":[{\"vip\":\"" VIP "\",%s\"ports\":[{\"proto\":\"tcp\","
             "\"port\":80,\"dips\":[{\"ip\":\"10.9.0.1\",\"serverId\":1}]}]}]}", vipfields);
    expect_table_error(json, field, why);
}

static void test_table_fields(void **state)
{
    (void)state;
#define SF "\"affinity\":\"cheetah-stateful\",\"cookieKey\":\"" KEY "\","
    expect_error(SF, "vips[0].statefulOwners", "required");
    expect_error(SF "\"statefulOwners\":[],", "vips[0].statefulOwners", "1 to 16");
    expect_error(SF "\"statefulOwners\":\"10.0.0.1\",", "vips[0].statefulOwners", "1 to 16");
    expect_error(SF "\"statefulOwners\":[\"1.1.1.1\",\"1.1.1.2\",\"1.1.1.3\",\"1.1.1.4\","
                 "\"1.1.1.5\",\"1.1.1.6\",\"1.1.1.7\",\"1.1.1.8\",\"1.1.1.9\",\"1.1.1.10\","
                 "\"1.1.1.11\",\"1.1.1.12\",\"1.1.1.13\",\"1.1.1.14\",\"1.1.1.15\",\"1.1.1.16\","
                 "\"1.1.1.17\"],", "vips[0].statefulOwners", "1 to 16");
    expect_error(SF "\"statefulOwners\":[\"10.0.0.1\",\"10.0.0.x\"],",
                 "vips[0].statefulOwners[1]", "IPv4");
    expect_error(SF "\"statefulOwners\":[\"10.0.0.1\",\"0.0.0.0\"],",
                 "vips[0].statefulOwners[1]", "IPv4");
    expect_error("\"affinity\":\"cheetah\",\"cookieKey\":\"" KEY "\",\"statefulOwners\":"
                 "[\"10.0.0.1\"],", "vips[0].statefulOwners", "only for affinity \"cheetah-stateful\"");
    expect_error("\"statefulOwners\":[\"10.0.0.1\"],", "vips[0].statefulOwners",
                 "only for affinity");
    expect_error("\"affinity\":\"cheetah-stateful\",\"statefulOwners\":[\"10.0.0.1\"],",
                 "vips[0].cookieKey", "required");
    expect_error(SF "\"statefulOwners\":[\"10.0.0.1\"],\"mechanism\":\"leastloaded\",",
                 "vips[0].mechanism", "least-loaded");
#undef SF
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stack_invariants),
        cmocka_unit_test(test_syn_hint_and_decode),
        cmocka_unit_test(test_exhaustion_and_release),
        cmocka_unit_test(test_idle_sweep),
        cmocka_unit_test(test_idle_clock),
        cmocka_unit_test(test_two_tiers),
        cmocka_unit_test(test_adopt_after_owner_restart),
        cmocka_unit_test(test_new_syn_ids),
        cmocka_unit_test(test_runs_equal_reference),
        cmocka_unit_test(test_shared_vectors_stateful),
        cmocka_unit_test(test_load_mechanisms),
        cmocka_unit_test(test_awrr_weights),
        cmocka_unit_test(test_table_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
