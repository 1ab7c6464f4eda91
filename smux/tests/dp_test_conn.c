/* Connection table: insert/lookup, per-state timeouts, sweep, bounded eviction
 * (a SYN flood never evicts established connections), the TCP state machine. */
#include "conn_table.h"
#include "dp_testutil.h"

static struct hlb_5tuple tuple(uint32_t i)
{
    return (struct hlb_5tuple){.src_ip = hlb_htonl(0x0a000000u + i), .dst_ip = ip4("100.64.0.1"),
                               .src_port = hlb_htons((uint16_t)(1000 + (i & 0x7fff))),
                               .dst_port = hlb_htons(80), .proto = 6};
}

static const struct hlb_conn_timeouts TO = {.syn_ms = 100, .est_ms = 1000, .fin_ms = 50,
                                            .udp_ms = 300};

/* Capacities past the limit are refused, not rounded: near 2^64 the rounding loop
 * used to wrap and never end. */
static void test_create_rejects_too_large(void **state)
{
    (void)state;
    assert_null(hlb_conn_table_create(UINT64_MAX, &TO));
    assert_null(hlb_conn_table_create((1ull << 63) + 1, &TO));
    assert_null(hlb_conn_table_create(HLB_CONN_MAX_CAPACITY + 1, &TO));
    struct hlb_conn_table *ct = hlb_conn_table_create(1, &TO);
    assert_non_null(ct);
    assert_int_equal(ct->capacity, HLB_CONN_WAYS);
    hlb_conn_table_free(ct);
}

static void test_insert_find_expire(void **state)
{
    (void)state;
    struct hlb_conn_table *ct = hlb_conn_table_create(1024, &TO);
    assert_non_null(ct);
    assert_int_equal(ct->capacity, 1024);
    struct hlb_conn_ref ref;
    uint64_t k0, k1;
    for (uint32_t i = 0; i < 200; i++) {
        struct hlb_5tuple t = tuple(i);
        hlb_conn_key(&t, &k0, &k1);
        assert_int_equal(hlb_conn_insert(ct, hlb_conn_hash(&t), k0, k1, HLB_CONN_EST, 0, &ref), 0);
        ref.b->e[ref.i].dip_ip = i;
    }
    assert_int_equal(ct->st.entries, 200);
    for (uint32_t i = 0; i < 200; i++) {
        struct hlb_5tuple t = tuple(i);
        hlb_conn_key(&t, &k0, &k1);
        assert_int_equal(hlb_conn_find(ct, hlb_conn_hash(&t), k0, k1, 999, &ref), 1);
        assert_int_equal(ref.b->e[ref.i].dip_ip, i);
    }
    struct hlb_5tuple other = tuple(5000);
    hlb_conn_key(&other, &k0, &k1);
    assert_int_equal(hlb_conn_find(ct, hlb_conn_hash(&other), k0, k1, 10, &ref), 0);

    /* Established timeout 1000 ms: found at 999, gone at 1000; sweep reclaims. */
    struct hlb_5tuple t0 = tuple(0);
    hlb_conn_key(&t0, &k0, &k1);
    assert_int_equal(hlb_conn_find(ct, hlb_conn_hash(&t0), k0, k1, 1000, &ref), 0);
    hlb_conn_sweep(ct, 1000, (uint32_t)ct->mask + 1);
    assert_int_equal(ct->st.entries, 0);
    assert_int_equal(ct->st.evict_timeout, 200);
    hlb_conn_table_free(ct);
}

static void test_refresh_and_wraparound(void **state)
{
    (void)state;
    struct hlb_conn_table *ct = hlb_conn_table_create(64, &TO);
    struct hlb_conn_ref ref;
    uint64_t k0, k1;
    struct hlb_5tuple t = tuple(1);
    uint32_t h = hlb_conn_hash(&t);
    hlb_conn_key(&t, &k0, &k1);
    uint32_t now = 0xffffff00u;                 /* ms clock about to wrap */
    assert_int_equal(hlb_conn_insert(ct, h, k0, k1, HLB_CONN_UDP, now, &ref), 0);
    for (int step = 0; step < 10; step++) {
        now += 200;                             /* < udp timeout 300: stays alive */
        assert_int_equal(hlb_conn_find(ct, h, k0, k1, now, &ref), 1);
        hlb_conn_set_state(ct, &ref, HLB_CONN_UDP, now);
    }
    assert_int_equal(hlb_conn_find(ct, h, k0, k1, now + 301, &ref), 0);
    hlb_conn_table_free(ct);
}

/* All keys that land in bucket 0 of a 16-bucket table. */
static int same_bucket_tuples(struct hlb_conn_table *ct, struct hlb_5tuple *out, int n)
{
    int got = 0;
    for (uint32_t i = 0; got < n && i < 1000000; i++) {
        struct hlb_5tuple t = tuple(i);
        if ((hlb_conn_hash(&t) & ct->mask) == 0)
            out[got++] = t;
    }
    return got;
}

static void test_syn_flood_cannot_evict_established(void **state)
{
    (void)state;
    struct hlb_conn_table *ct = hlb_conn_table_create(16 * HLB_CONN_WAYS, &TO);
    struct hlb_5tuple t[40];
    assert_int_equal(same_bucket_tuples(ct, t, 40), 40);
    struct hlb_conn_ref ref;
    uint64_t k0, k1;
    /* 6 established + 2 half-open fill the bucket. */
    for (int i = 0; i < 8; i++) {
        hlb_conn_key(&t[i], &k0, &k1);
        assert_int_equal(hlb_conn_insert(ct, hlb_conn_hash(&t[i]), k0, k1,
                                         i < 6 ? HLB_CONN_EST : HLB_CONN_SYN, (uint32_t)i, &ref), 0);
    }
    /* A flood of 30 new SYNs: each displaces the oldest half-open entry only. */
    for (int i = 8; i < 38; i++) {
        hlb_conn_key(&t[i], &k0, &k1);
        assert_int_equal(hlb_conn_insert(ct, hlb_conn_hash(&t[i]), k0, k1, HLB_CONN_SYN,
                                         (uint32_t)(10 + i), &ref), 0);
    }
    assert_int_equal(ct->st.evict_displaced, 30);
    for (int i = 0; i < 6; i++) {
        hlb_conn_key(&t[i], &k0, &k1);
        assert_int_equal(hlb_conn_find(ct, hlb_conn_hash(&t[i]), k0, k1, 60, &ref), 1);
    }
    /* The two most recent SYNs are the ones kept. */
    hlb_conn_key(&t[37], &k0, &k1);
    assert_int_equal(hlb_conn_find(ct, hlb_conn_hash(&t[37]), k0, k1, 60, &ref), 1);
    hlb_conn_key(&t[8], &k0, &k1);
    assert_int_equal(hlb_conn_find(ct, hlb_conn_hash(&t[8]), k0, k1, 60, &ref), 0);

    /* Promote the two half-open ones: now the bucket is all established and a new
     * SYN is refused (counted), never evicting a live connection. */
    for (int i = 36; i < 38; i++) {
        hlb_conn_key(&t[i], &k0, &k1);
        assert_int_equal(hlb_conn_find(ct, hlb_conn_hash(&t[i]), k0, k1, 60, &ref), 1);
        hlb_conn_set_state(ct, &ref, HLB_CONN_EST, 60);
    }
    hlb_conn_key(&t[38], &k0, &k1);
    assert_int_equal(hlb_conn_insert(ct, hlb_conn_hash(&t[38]), k0, k1, HLB_CONN_SYN, 61, &ref), -1);
    assert_int_equal(ct->st.insert_failures, 1);
    assert_int_equal(ct->st.entries, 8);

    /* Once established entries expire, their slots are reused. */
    assert_int_equal(hlb_conn_insert(ct, hlb_conn_hash(&t[38]), k0, k1, HLB_CONN_SYN, 2000, &ref), 0);
    hlb_conn_table_free(ct);
}

static void test_full_table_lookups_still_bounded(void **state)
{
    (void)state;
    /* Fill a small table far beyond capacity: it never grows, inserts fail or evict
     * half-open entries, and every resident established entry is still found. */
    struct hlb_conn_table *ct = hlb_conn_table_create(256, &TO);
    struct hlb_conn_ref ref;
    uint64_t k0, k1;
    int est = 0;
    for (uint32_t i = 0; i < 200; i++) {
        struct hlb_5tuple t = tuple(i);
        hlb_conn_key(&t, &k0, &k1);
        est += hlb_conn_insert(ct, hlb_conn_hash(&t), k0, k1, HLB_CONN_EST, 0, &ref) == 0;
    }
    for (uint32_t i = 1000; i < 100000; i++) {
        struct hlb_5tuple t = tuple(i);
        hlb_conn_key(&t, &k0, &k1);
        (void)hlb_conn_insert(ct, hlb_conn_hash(&t), k0, k1, HLB_CONN_SYN, 1, &ref);
    }
    assert_true(ct->st.entries <= ct->capacity);
    int found = 0;
    for (uint32_t i = 0; i < 200; i++) {
        struct hlb_5tuple t = tuple(i);
        hlb_conn_key(&t, &k0, &k1);
        found += hlb_conn_find(ct, hlb_conn_hash(&t), k0, k1, 5, &ref);
    }
    assert_int_equal(found, est);
    assert_true(ct->st.evict_displaced > 0);
    hlb_conn_table_free(ct);
}

static void test_spilled_entries_stay_reachable(void **state)
{
    (void)state;
    /* Five connections with the same bucket and the same home line (2 slots): three
     * spill into other lines.  Removing the two in the home line must not hide the
     * spilled ones (the home line's spill count sends lookups on), and removing
     * everything returns the count to zero. */
    struct hlb_conn_table *ct = hlb_conn_table_create(16 * HLB_CONN_WAYS, &TO);
    struct hlb_5tuple t[5];
    int got = 0;
    uint32_t want_home = 0xffffffffu;
    for (uint32_t i = 0; got < 5 && i < 5000000; i++) {
        struct hlb_5tuple c = tuple(i);
        uint32_t h = hlb_conn_hash(&c);
        if ((h & ct->mask) != 3)
            continue;
        if (want_home == 0xffffffffu)
            want_home = hlb_conn_home(h);
        if (hlb_conn_home(h) == want_home)
            t[got++] = c;
    }
    assert_int_equal(got, 5);
    struct hlb_conn_ref ref[5];
    uint64_t k0, k1;
    for (int i = 0; i < 5; i++) {
        hlb_conn_key(&t[i], &k0, &k1);
        assert_int_equal(hlb_conn_insert(ct, hlb_conn_hash(&t[i]), k0, k1, HLB_CONN_EST, 0, &ref[i]), 0);
        ref[i].b->e[ref[i].i].dip_ip = (uint32_t)i;
    }
    struct hlb_conn_bucket *b = &ct->b[3];
    assert_int_equal(b->e[want_home].spill, 3);
    hlb_conn_delete(ct, &ref[0]);
    hlb_conn_delete(ct, &ref[1]);
    for (int i = 2; i < 5; i++) {
        struct hlb_conn_ref r;
        hlb_conn_key(&t[i], &k0, &k1);
        assert_int_equal(hlb_conn_find(ct, hlb_conn_hash(&t[i]), k0, k1, 10, &r), 1);
        assert_int_equal(r.b->e[r.i].dip_ip, (uint32_t)i);
        hlb_conn_delete(ct, &r);
    }
    assert_int_equal(b->e[want_home].spill, 0);
    assert_int_equal(ct->st.entries, 0);

    /* An expired duplicate next to a live entry for the same tuple is skipped. */
    hlb_conn_key(&t[0], &k0, &k1);
    struct hlb_conn_ref r0, r1;
    assert_int_equal(hlb_conn_insert(ct, hlb_conn_hash(&t[0]), k0, k1, HLB_CONN_SYN, 0, &r0), 0);
    assert_int_equal(hlb_conn_insert(ct, hlb_conn_hash(&t[1]), 0, 0, HLB_CONN_EST, 0, &r1), 0);
    /* t[0] expired at 100; a new connection on it is inserted at 200 */
    assert_int_equal(hlb_conn_find(ct, hlb_conn_hash(&t[0]), k0, k1, 200, &r1), 0);
    assert_int_equal(hlb_conn_insert(ct, hlb_conn_hash(&t[0]), k0, k1, HLB_CONN_EST, 200, &r1), 0);
    r1.b->e[r1.i].dip_ip = 77;
    assert_int_equal(hlb_conn_find(ct, hlb_conn_hash(&t[0]), k0, k1, 300, &r1), 1);
    assert_int_equal(r1.b->e[r1.i].dip_ip, 77);
    hlb_conn_table_free(ct);
}

static void test_state_machine(void **state)
{
    (void)state;
    int r;
    assert_int_equal(hlb_conn_initial_state(6, HLB_TCP_SYN), HLB_CONN_SYN);
    assert_int_equal(hlb_conn_initial_state(6, HLB_TCP_ACK), HLB_CONN_ADOPTED);
    assert_int_equal(hlb_conn_initial_state(6, HLB_TCP_RST), HLB_CONN_FREE);
    assert_int_equal(hlb_conn_initial_state(6, HLB_TCP_FIN | HLB_TCP_ACK), HLB_CONN_FIN);
    assert_int_equal(hlb_conn_initial_state(17, 0), HLB_CONN_UDP_FIRST);
    /* A second packet confirms an adopted TCP flow or a UDP flow; a pure SYN after an
     * adopted segment is a new connection on the tuple (chosen afresh). */
    assert_int_equal(hlb_conn_next_state(HLB_CONN_ADOPTED, 6, HLB_TCP_ACK, &r), HLB_CONN_EST);
    assert_int_equal(r, 0);
    assert_int_equal(hlb_conn_next_state(HLB_CONN_ADOPTED, 6, HLB_TCP_FIN | HLB_TCP_ACK, &r),
                     HLB_CONN_FIN);
    assert_int_equal(hlb_conn_next_state(HLB_CONN_ADOPTED, 6, HLB_TCP_RST, &r), HLB_CONN_FREE);
    assert_int_equal(hlb_conn_next_state(HLB_CONN_ADOPTED, 6, HLB_TCP_SYN, &r), HLB_CONN_SYN);
    assert_int_equal(r, 1);
    assert_int_equal(hlb_conn_next_state(HLB_CONN_UDP_FIRST, 17, 0, &r), HLB_CONN_UDP);
    assert_int_equal(r, 0);
    /* Unconfirmed entries keep their protocol's timeout (an adopted connection that is
     * merely slow is not lost sooner than before), but may be displaced. */
    struct hlb_conn_table *ct = hlb_conn_table_create(64, &TO);
    assert_int_equal(hlb_conn_timeout_of(ct, HLB_CONN_ADOPTED), TO.est_ms);
    assert_int_equal(hlb_conn_timeout_of(ct, HLB_CONN_UDP_FIRST), TO.udp_ms);
    hlb_conn_table_free(ct);
    assert_true(hlb_conn_displaceable(HLB_CONN_SYN) && hlb_conn_displaceable(HLB_CONN_FIN) &&
                hlb_conn_displaceable(HLB_CONN_ADOPTED) && hlb_conn_displaceable(HLB_CONN_UDP_FIRST));
    assert_false(hlb_conn_displaceable(HLB_CONN_EST) || hlb_conn_displaceable(HLB_CONN_UDP));

    assert_int_equal(hlb_conn_next_state(HLB_CONN_SYN, 6, HLB_TCP_SYN, &r), HLB_CONN_SYN);
    assert_int_equal(hlb_conn_next_state(HLB_CONN_SYN, 6, HLB_TCP_ACK, &r), HLB_CONN_EST);
    assert_int_equal(hlb_conn_next_state(HLB_CONN_EST, 6, HLB_TCP_ACK, &r), HLB_CONN_EST);
    assert_int_equal(hlb_conn_next_state(HLB_CONN_EST, 6, HLB_TCP_FIN | HLB_TCP_ACK, &r),
                     HLB_CONN_FIN);
    assert_int_equal(hlb_conn_next_state(HLB_CONN_FIN, 6, HLB_TCP_ACK, &r), HLB_CONN_FIN);
    assert_int_equal(r, 0);
    assert_int_equal(hlb_conn_next_state(HLB_CONN_FIN, 6, HLB_TCP_SYN, &r), HLB_CONN_SYN);
    assert_int_equal(r, 1);
    assert_int_equal(hlb_conn_next_state(HLB_CONN_EST, 6, HLB_TCP_RST, &r), HLB_CONN_FREE);
    assert_int_equal(hlb_conn_next_state(HLB_CONN_EST, 6, HLB_TCP_SYN, &r), HLB_CONN_EST);
    assert_int_equal(r, 0);
    assert_int_equal(hlb_conn_next_state(HLB_CONN_UDP, 17, 0, &r), HLB_CONN_UDP);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insert_find_expire),
        cmocka_unit_test(test_create_rejects_too_large),
        cmocka_unit_test(test_refresh_and_wraparound),
        cmocka_unit_test(test_syn_flood_cannot_evict_established),
        cmocka_unit_test(test_full_table_lookups_still_bounded),
        cmocka_unit_test(test_spilled_entries_stay_reachable),
        cmocka_unit_test(test_state_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
