/* An SMux holding several owner ids of a cheetah-stateful VIP (its address at several
 * positions of statefulOwners: src/sf_owners.h, p4/COOKIE-SPEC.md §7): each id its own
 * index space, through the packet core (hlb_dp_burst, whose lean pass takes the SYN
 * id's segments and leaves the others to the general code, against the reference, the
 * general code alone), the close and adoption reports, the idle sweep, an id given
 * away and back, the base id kept while the running table holds it and moved once it
 * does not, the clear ordered in the worker's ring, the hold of hints when an id
 * becomes the SYN id, and one owner list for every cheetah-stateful VIP. */
#include "dp_sf_testutil.h"

#include <pthread.h>
#include <sched.h>

#define OWNERS_0_2 "\"" SELF "\",\"" OTHER "\",\"" SELF "\""      /* ids 0 and 2 */
#define OWNERS_0 "\"" SELF "\",\"" OTHER "\""                      /* id 0 */
#define OWNERS_2 "\"" OTHER "\",\"" OTHER "\",\"" SELF "\""        /* id 2 */
#define O_ "\"" OTHER "\","
#define OWNERS_1 O_ "\"" SELF "\""                                     /* id 1 */
#define OWNERS_5 O_ O_ O_ O_ O_ "\"" SELF "\""                         /* id 5 */
#define OWNERS_7 O_ O_ O_ O_ O_ O_ O_ "\"" SELF "\""                   /* id 7 */

/* The control thread's step before publishing t over cur (control.c). */
static void prepare(struct hlb_sf_owners *o, struct hlb_worker *w,
                    const struct hlb_vip_table *cur, const struct hlb_vip_table *t,
                    uint32_t grace_ms)
{
    struct hlb_worker *ws[1] = {w};
    struct hlb_table_error err = {{0}, {0}};
    if (hlb_sf_owners_prepare(o, ws, 1, cur, t, grace_ms, &err) != 0)
        fail_msg("prepare: %s: %s", err.field, err.reason);
}

/* A worker of 2 partitions and the control thread's record, after the step that
 * publishes `first` over an empty table. */
static void start(struct hlb_worker *w, struct hlb_sf_owners *o, const struct hlb_vip_table *first)
{
    sf_worker(w, 2, 60000);
    hlb_sf_owners_init(o);
    struct hlb_vip_table *empty = hlb_table_empty();
    prepare(o, w, empty, first, 0);
    hlb_table_free(empty);
}

/* Frees w's tables and the n VIP tables. */
static void finish(struct hlb_worker *w, struct hlb_vip_table **t, int n)
{
    hlb_sf_worker_free(w);
    for (int k = 0; k < n; k++)
        hlb_table_free(t[k]);
}

/* A client port (from `from` on) whose H falls in partition p of the worker's tables. */
static uint16_t port_in_part(const struct hlb_worker *w, const struct hlb_service *s,
                             uint32_t p, uint16_t from)
{
    while (hlb_sf_part_of(w->sf, hlb_ck_hash(s, ip4("10.77.0.1"), htons(from), htons(80)), 0) !=
           p)
        from++;
    return from;
}

/* Adopts connection cport with ident on server into worker w: the answer's counts. */
static json_t *adopt1(struct hlb_vip_table *t, struct hlb_worker *w, uint16_t cport,
                      uint32_t ident, unsigned server, uint32_t now)
{
    struct hlb_table_error err = {{0}, {0}};
    struct hlb_adopt_batch *b = adopt_report(t, w, &cport, &ident, &server, 1, &err);
    if (!b)
        fail_msg("adopt refused: %s: %s", err.field, err.reason);
    return adopt_answer(b, w, now);
}

/* The echo of (cport, ident) through hlb_dp_burst (lean pass, then the general code
 * for what it leaves) and through the reference (the general code alone): its DIP
 * (outer destination), or 0 when both drop it; a failure when they disagree. */
static uint32_t placed(struct hlb_worker *w, struct hlb_vip_table *t, uint16_t cport,
                       uint32_t ident, uint32_t now)
{
    const struct hlb_service *s = &t->services[0];
    uint32_t dst[2];
    for (int ref = 0; ref < 2; ref++) {
        struct tframe f;
        echo(&f, s, cport, ident, HLB_TCP_ACK);
        dst[ref] = run_ref(w, t, &f, now, ref) == HLB_V_TX ? outer_dst(&f) : 0;
    }
    if (dst[0] != dst[1])
        fail_msg("lean pass and reference disagree: %08x %08x", dst[0], dst[1]);
    return dst[0];
}

/* Ids 0 and 2: SYNs take id 0's indexes; a connection adopted under id 2 at the same
 * (partition, index) as an id-0 connection is another connection, and both are placed
 * by their entries; a close report for id 2 frees id 2's entry only; the idle sweep
 * frees id 2's entries; reports naming an id not held are refused, naming what is. */
static void test_two_ids(void **state)
{
    (void)state;
    struct hlb_vip_table *t = sf_table(OWNERS_0_2, "rr");
    const struct hlb_service *s = &t->services[0];
    assert_int_equal(s->sf_self, 0);
    assert_int_equal(s->sf_held, 1u << 0 | 1u << 2);
    struct hlb_worker w;
    struct hlb_sf_owners o;
    start(&w, &o, t);
    assert_int_equal(o.base, 0);
    assert_null(w.sf_of[0]);                        /* id 0: the worker's first table */
    assert_non_null(w.sf_of[2]);                    /* id 2: a table of its own */
    assert_ptr_not_equal(w.sf_of[2], w.sf);
    assert_int_equal(w.sf_extra, 1u << 2);
    struct hlb_sf_table *sf0 = hlb_sf_of(&w, 0), *sf2 = hlb_sf_of(&w, 2);
    hlb_sf_worker_drain(&w, 1);

    struct tframe f;                                 /* connection A: a SYN, id 0 */
    uint16_t a = 41000;
    syn(&f, a);
    assert_int_equal(run1(&w, t, &f, 10), HLB_V_TX);
    uint32_t hint = inner_tsecr(&f), dip_a = outer_dst(&f);
    assert_int_equal(hint >> 16, HLB_COOKIE_HINT_MAGIC);
    uint32_t ident_a = hint & 0xffff, idx = ident_a & HLB_SF_INDEX_MASK;
    assert_int_equal((ident_a >> HLB_SF_OWNER_SHIFT) & 15, 0);       /* the lowest id */
    assert_int_equal(sf0->st.entries, 1);
    assert_int_equal(sf2->st.entries, 0);

    /* Connection B adopted under id 2 at A's (partition, index), on another server. */
    uint32_t part = hlb_sf_part_of(sf0, hlb_ck_hash(s, ip4("10.77.0.1"), htons(a), htons(80)), 0);
    uint16_t b = port_in_part(&w, s, part, 42000);
    unsigned server_b = dip_a == ip4("10.9.0.1") ? 2 : 1;
    uint32_t ident_b = hlb_sf_ident(2, idx);
    json_t *j = adopt1(t, &w, b, ident_b, server_b, 20);
    assert_int_equal(jint(j, "adopted"), 1);
    assert_int_equal(json_array_size(json_object_get(j, "taken")), 0);
    json_decref(j);
    assert_int_equal(sf2->st.entries, 1);
    assert_int_equal(sf0->st.entries, 1);
    assert_int_equal(placed(&w, t, a, ident_a, 30), dip_a);
    assert_int_equal(placed(&w, t, b, ident_b, 30), ip4(server_b == 1 ? "10.9.0.1" : "10.9.0.2"));
    assert_int_equal(sf2->st.hits, 2);
    /* Each connection's ident under the other id: the entry there is not its own. */
    assert_int_equal(placed(&w, t, b, hlb_sf_ident(0, idx), 30), 0);
    assert_int_equal(placed(&w, t, a, hlb_sf_ident(2, idx), 30), 0);
    /* An ident naming id 1 (another SMux's): forwarded there, IP-in-IP. */
    echo(&f, s, a, hlb_sf_ident(1, idx), HLB_TCP_ACK);
    assert_int_equal(run1(&w, t, &f, 30), HLB_V_TX);
    assert_int_equal(outer_dst(&f), ip4(OTHER));

    /* Reports naming id 1 are refused, naming the ids held; nothing queued. */
    struct hlb_table_error err = {{0}, {0}};
    uint32_t ident_1 = hlb_sf_ident(1, idx);
    unsigned server1 = 1;
    assert_null(adopt_report(t, &w, &b, &ident_1, &server1, 1, &err));
    assert_string_equal(err.field, "adopt[0].ident");
    if (!strstr(err.reason, "names owner 1; this SMux holds owner ids 0, 2"))
        fail_msg("reason: %s", err.reason);
    char body[256];
    unsigned queued = 0;
    snprintf(body, sizeof(body), "{\"closed\":[{\"vip\":\"" VIP "\",\"port\":80,\"client\":"
             "\"10.77.0.1\",\"clientPort\":%u,\"ident\":%u}]}", a, ident_1);
    assert_int_equal(closed_report(t, &w, body, &queued, &err), -1);
    assert_string_equal(err.field, "closed[0].ident");
    assert_int_equal(hlb_sf_drain(sf0, 40) + hlb_sf_drain(sf2, 40), 0);

    /* A's close report naming id 2 (A's index): id 0's entry stays; B's frees id 2's. */
    snprintf(body, sizeof(body), "{\"closed\":[{\"vip\":\"" VIP "\",\"port\":80,\"client\":"
             "\"10.77.0.1\",\"clientPort\":%u,\"ident\":%u}]}", a, hlb_sf_ident(2, idx));
    assert_int_equal(closed_report(t, &w, body, &queued, &err), 0);
    hlb_sf_worker_drain(&w, 50);
    assert_int_equal(sf0->st.entries, 1);
    assert_int_equal(sf2->st.entries, 1);
    snprintf(body, sizeof(body), "{\"closed\":[{\"vip\":\"" VIP "\",\"port\":80,\"client\":"
             "\"10.77.0.1\",\"clientPort\":%u,\"ident\":%u}]}", b, ident_b);
    assert_int_equal(closed_report(t, &w, body, &queued, &err), 0);
    hlb_sf_worker_drain(&w, 50);
    assert_int_equal(sf2->st.entries, 0);
    assert_int_equal(sf2->st.released, 1);
    assert_int_equal(sf0->st.entries, 1);
    assert_int_equal(placed(&w, t, a, ident_a, 60), dip_a);
    assert_int_equal(placed(&w, t, b, ident_b, 60), 0);
    assert_int_equal(hlb_sf_check(sf0), 0);
    assert_int_equal(hlb_sf_check(sf2), 0);

    /* The idle sweep reaches id 2's table: adopted entries drain out. */
    j = adopt1(t, &w, b, ident_b, server_b, 100);
    json_decref(j);
    assert_int_equal(sf2->st.entries, 1);
    hlb_sf_worker_sweep(&w, 100 + 60000, 2 * HLB_SF_INDEXES);
    assert_int_equal(sf2->st.entries, 0);
    assert_int_equal(sf2->st.idle_expired, 1);
    assert_int_equal(sf0->st.entries, 0);
    finish(&w, &t, 1);
}

/* Id 2 given away, then back: its entries from before are cleared by the worker at its
 * first drain under the table that gives it back, so they refuse no adoption; id 0's
 * entries stay throughout. */
static void test_id_given_back(void **state)
{
    (void)state;
    struct hlb_vip_table *t[3] = {sf_table(OWNERS_0_2, "rr"), sf_table(OWNERS_0, "rr"),
                                  sf_table(OWNERS_0_2, "rr")};
    struct hlb_vip_table *t02 = t[0], *t0 = t[1], *t02b = t[2];
    const struct hlb_service *s = &t02->services[0];
    struct hlb_worker w;
    struct hlb_sf_owners o;
    start(&w, &o, t02);
    hlb_sf_worker_drain(&w, 1);
    struct tframe f;
    syn(&f, 43000);                                 /* an id-0 connection */
    assert_int_equal(run1(&w, t02, &f, 5), HLB_V_TX);
    uint32_t ident_a = inner_tsecr(&f) & 0xffff, dip_a = outer_dst(&f);
    uint16_t c = port_in_part(&w, s, 0, 44000), d = port_in_part(&w, s, 0, (uint16_t)(c + 1));
    json_t *j = adopt1(t02, &w, c, hlb_sf_ident(2, 7), 1, 10);     /* C at (0, 7) of id 2 */
    assert_int_equal(jint(j, "adopted"), 1);
    json_decref(j);

    prepare(&o, &w, t02, t0, 0);                     /* id 2 given away */
    hlb_sf_worker_drain(&w, 20);
    assert_int_equal(hlb_sf_of(&w, 2)->st.entries, 1);   /* left to idle out */
    prepare(&o, &w, t0, t02b, 0);                    /* and back */
    hlb_sf_worker_drain(&w, 30);
    assert_int_equal(hlb_sf_of(&w, 2)->st.entries, 0);
    assert_int_equal(hlb_sf_of(&w, 2)->st.cleared, 1);
    j = adopt1(t02b, &w, d, hlb_sf_ident(2, 7), 2, 40);            /* D at (0, 7) of id 2 */
    assert_int_equal(jint(j, "adopted"), 1);
    assert_int_equal(json_array_size(json_object_get(j, "taken")), 0);
    json_decref(j);
    assert_int_equal(placed(&w, t02b, d, hlb_sf_ident(2, 7), 50), ip4("10.9.0.2"));
    assert_int_equal(placed(&w, t02b, 43000, ident_a, 50), dip_a);       /* id 0 kept */
    assert_int_equal(hlb_sf_of(&w, 0)->st.cleared, 0);
    finish(&w, t, 3);
}

/* Holding id 2, then given id 0 too: id 0 becomes the SYN id (the lowest) and gets a
 * table of its own (the first serves id 2, still held); hints are held on id 0's table
 * alone, and a SYN then is stateless; id 2's adopted connections go on. */
static void test_new_lowest_id_holds_hints(void **state)
{
    (void)state;
    struct hlb_vip_table *t[2] = {sf_table(OWNERS_2, "rr"), sf_table(OWNERS_0_2, "rr")};
    struct hlb_vip_table *t2 = t[0], *t02 = t[1];
    const struct hlb_service *s2 = &t2->services[0];
    assert_int_equal(s2->sf_self, 2);
    struct hlb_worker w;
    struct hlb_sf_owners o;
    start(&w, &o, t2);
    assert_int_equal(o.base, 2);
    assert_int_equal(w.sf_extra, 0);
    hlb_sf_worker_drain(&w, 1);
    struct tframe f;
    syn(&f, 45000);                                 /* its SYNs: id 2 */
    assert_int_equal(run1(&w, t2, &f, 5), HLB_V_TX);
    uint32_t ident_a = inner_tsecr(&f) & 0xffff, dip_a = outer_dst(&f);
    assert_int_equal((ident_a >> HLB_SF_OWNER_SHIFT) & 15, 2);

    prepare(&o, &w, t2, t02, 1000);
    assert_int_equal(o.base, 2);
    assert_non_null(w.sf_of[0]);
    assert_int_equal(w.sf_extra, 1u << 0);
    hlb_sf_worker_drain(&w, 10);
    assert_int_equal(hlb_sf_of(&w, 0)->hints_held, 1);
    assert_int_equal(hlb_sf_of(&w, 2)->hints_held, 0);
    syn(&f, 45001);
    assert_int_equal(run1(&w, t02, &f, 20), HLB_V_TX);
    assert_int_equal(inner_tsecr(&f), 0);           /* stateless meanwhile */
    assert_int_equal(hlb_sf_of(&w, 0)->st.held_syns, 1);
    assert_int_equal(placed(&w, t02, 45000, ident_a, 20), dip_a);   /* id 2 goes on */
    hlb_sf_worker_drain(&w, 1100);                  /* the hold is over: id 0's indexes */
    syn(&f, 45002);
    assert_int_equal(run1(&w, t02, &f, 1200), HLB_V_TX);
    assert_int_equal((inner_tsecr(&f) >> HLB_SF_OWNER_SHIFT) & 15, 0);
    assert_int_equal(hlb_sf_of(&w, 0)->st.inserts, 1);
    finish(&w, t, 2);
}

/* Repeated addresses parse; 17 positions, 0.0.0.0 do not (dp_test_stateful's
 * test_table_fields has the other errors). */
static void test_owner_table(void **state)
{
    (void)state;
    struct hlb_vip_table *t = sf_table("\"" SELF "\",\"" SELF "\",\"" OTHER "\",\"" SELF "\"",
                                       "rr");
    assert_int_equal(t->services[0].sf_self, 0);
    assert_int_equal(t->services[0].sf_held, 1u << 0 | 1u << 1 | 1u << 3);
    assert_int_equal(hlb_sf_held_ids(t), 1u << 0 | 1u << 1 | 1u << 3);
    hlb_table_free(t);
    char owners[512] = "";
    for (int k = 0; k < 17; k++)
        strcat(owners, k ? ",\"" SELF "\"" : "\"" SELF "\"");
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"version\":1,\"vips\":[{\"vip\":\"" VIP "\",\"affinity\":\"cheetah-stateful\","
             "\"cookieKey\":\"" KEY "\",\"statefulOwners\":[%s],\"ports\":[{\"proto\":\"tcp\","
             "\"port\":80,\"dips\":[{\"ip\":\"10.9.0.1\",\"serverId\":1}]}]}]}", owners);
    expect_table_error(json, "vips[0].statefulOwners", "must be an array of 1 to 16 IPv4 addresses");
}

/* A SYN under t from a client port of partition p (from `from` on): its ident. */
static uint32_t syn_ident(struct hlb_worker *w, struct hlb_vip_table *t, uint32_t p,
                          uint16_t from, uint16_t *cport, uint32_t now)
{
    struct tframe f;
    *cport = port_in_part(w, &t->services[0], p, from);
    syn(&f, *cport);
    assert_int_equal(run1(w, t, &f, now), HLB_V_TX);
    uint32_t hint = inner_tsecr(&f);
    assert_int_equal(hint >> 16, HLB_COOKIE_HINT_MAGIC);
    return hint & 0xffff;
}

/* A table moving this SMux from id 1 to id 5: the base (the first table) stays id 1's
 * while the running table gives id 1, so the SYNs the worker still takes under the old
 * table (after the clear of id 5's table ran) land in id 1's table and never refuse id
 * 5's re-reports; id 5 gets a table of its own.  Then a table giving id 7 only: no
 * table gives id 1 any more, so the base moves to id 7, its table (the first) cleared
 * of id 1's entries; id 5's table keeps its entry. */
static void test_base_switch(void **state)
{
    (void)state;
    struct hlb_vip_table *t[3] = {sf_table(OWNERS_1, "rr"), sf_table(OWNERS_5, "rr"),
                                  sf_table(OWNERS_7, "rr")};
    struct hlb_vip_table *t1 = t[0], *t5 = t[1], *t7 = t[2];
    struct hlb_worker w;
    struct hlb_sf_owners o;
    start(&w, &o, t1);
    assert_int_equal(o.base, 1);
    hlb_sf_worker_drain(&w, 1);
    uint16_t a, b, c, d;
    uint32_t ident_a = syn_ident(&w, t1, 0, 46000, &a, 5);      /* id 1's connection A */
    assert_int_equal(ident_a >> HLB_SF_OWNER_SHIFT & 15, 1);
    uint32_t dip_a = placed(&w, t1, a, ident_a, 6);
    assert_int_not_equal(dip_a, 0);

    prepare(&o, &w, t1, t5, 0);
    assert_int_equal(o.base, 1);                     /* the running table gives id 1 */
    assert_non_null(w.sf_of[5]);
    assert_ptr_not_equal(w.sf_of[5], w.sf);
    assert_ptr_equal(hlb_sf_of(&w, 1), w.sf);
    hlb_sf_worker_drain(&w, 10);                     /* the clear of id 5, under t1 still */
    uint32_t ident_b = syn_ident(&w, t1, 0, (uint16_t)(a + 1), &b, 11);   /* B: id 1 */
    assert_int_equal(ident_b >> HLB_SF_OWNER_SHIFT & 15, 1);
    assert_int_equal(placed(&w, t1, a, ident_a, 12), dip_a);     /* A's entry kept */
    assert_int_equal(w.sf->st.cleared, 0);
    /* t5 runs: C re-reported under id 5 at B's (partition, index) is adopted. */
    c = port_in_part(&w, &t5->services[0], 0, (uint16_t)(b + 1));
    uint32_t ident_c = hlb_sf_ident(5, ident_b & HLB_SF_INDEX_MASK);
    json_t *j = adopt1(t5, &w, c, ident_c, 2, 20);
    assert_int_equal(jint(j, "adopted"), 1);
    assert_int_equal(json_array_size(json_object_get(j, "taken")), 0);
    json_decref(j);
    assert_int_equal(placed(&w, t5, c, ident_c, 30), ip4("10.9.0.2"));
    assert_int_equal(w.sf->st.entries, 2);           /* A and B, idling out */

    prepare(&o, &w, t5, t7, 0);                      /* no table gives id 1 now */
    assert_int_equal(o.base, 7);
    assert_null(w.sf_of[7]);
    assert_ptr_equal(hlb_sf_of(&w, 7), w.sf);
    hlb_sf_worker_drain(&w, 40);
    assert_int_equal(w.sf->st.entries, 0);
    assert_int_equal(w.sf->st.cleared, 2);
    assert_int_equal(w.sf_of[5]->st.entries, 1);
    d = port_in_part(&w, &t7->services[0], 0, (uint16_t)(c + 1));
    uint32_t ident_d = hlb_sf_ident(7, ident_a & HLB_SF_INDEX_MASK);  /* at A's index */
    j = adopt1(t7, &w, d, ident_d, 3, 50);
    assert_int_equal(jint(j, "adopted"), 1);
    json_decref(j);
    assert_int_equal(placed(&w, t7, d, ident_d, 60), ip4("10.9.0.3"));
    uint32_t ident_e = syn_ident(&w, t7, 1, 50000, &a, 70);      /* SYNs: id 7 */
    assert_int_equal(ident_e >> HLB_SF_OWNER_SHIFT & 15, 7);
    assert_int_equal(hlb_sf_check(w.sf), 0);
    assert_int_equal(hlb_sf_check(w.sf_of[5]), 0);
    finish(&w, t, 3);
}

/* The clear in the worker's ring: an adoption queued before the request is applied,
 * then cleared; one queued after it is applied after the clear and stays. */
static void test_clear_ring_order(void **state)
{
    (void)state;
    struct hlb_sf_table *sf = hlb_sf_create(2, 60000);
    assert_non_null(sf);
    int64_t x = hlb_sf_queue_adopt(sf, 0, 5, 0x11111111, 1);
    hlb_sf_request_clear(sf);
    int64_t y = hlb_sf_queue_adopt(sf, 0, 6, 0x22222222, 2);
    assert_int_equal(hlb_sf_drain(sf, 10), 2);
    assert_int_equal(hlb_sf_adopt_result(sf, x), HLB_SF_ADOPTED);
    assert_int_equal(hlb_sf_adopt_result(sf, y), HLB_SF_ADOPTED);
    assert_int_equal(*hlb_sf_entry(sf, 0, 5), 0);
    assert_int_equal(hlb_sf_server_of(*hlb_sf_entry(sf, 0, 6), 0x22222222), 2);
    assert_int_equal(sf->st.entries, 1);
    assert_int_equal(sf->st.cleared, 1);
    assert_int_equal(hlb_sf_check(sf), 0);
    /* A release before the request, the same connection re-adopted after: kept. */
    assert_int_equal(hlb_sf_queue_release(sf, 0, 6, 0x22222222), 0);
    hlb_sf_request_clear(sf);
    y = hlb_sf_queue_adopt(sf, 0, 6, 0x22222222, 3);
    assert_int_equal(hlb_sf_drain(sf, 20), 2);
    assert_int_equal(hlb_sf_adopt_result(sf, y), HLB_SF_ADOPTED);
    assert_int_equal(hlb_sf_server_of(*hlb_sf_entry(sf, 0, 6), 0x22222222), 3);
    assert_int_equal(sf->st.released, 1);
    assert_int_equal(hlb_sf_check(sf), 0);
    assert_int_equal(hlb_sf_drain(sf, 30), 0);       /* one request, one clear */
    assert_int_equal(sf->st.entries, 1);
    hlb_sf_free(sf);
}

struct drainer {
    struct hlb_sf_table *sf;
    _Atomic int stop;
};

static void *drain_loop(void *arg)      /* the worker: drains as fast as it can */
{
    struct drainer *d = arg;
    while (!atomic_load_explicit(&d->stop, memory_order_relaxed))
        hlb_sf_drain(d->sf, 1);
    return NULL;
}

/* Waits until the worker has applied everything queued and a drain begun after that
 * has ended (a no-op release queued and applied). */
static void wait_drained(struct hlb_sf_table *sf)
{
    while (atomic_load_explicit(&sf->clear_request, memory_order_acquire) ||
           atomic_load_explicit(&sf->ring_tail, memory_order_acquire) !=
               atomic_load_explicit(&sf->ring_head, memory_order_relaxed))
        sched_yield();
    assert_int_equal(hlb_sf_queue_release(sf, 1, 0, 0x9999), 0);
    while (atomic_load_explicit(&sf->ring_tail, memory_order_acquire) !=
           atomic_load_explicit(&sf->ring_head, memory_order_relaxed))
        sched_yield();
}

/* The same with the worker draining on a thread of its own meanwhile: a drain that
 * reads the ring's head after the clear request (and so applies an adoption queued
 * after a request it has not seen, before the clear) would lose that adoption to the
 * clear.  Rounds of (adoption, clear request, adoption): after each, the first is
 * gone and the second in place. */
static void test_clear_ring_order_threads(void **state)
{
    (void)state;
    struct drainer d = {.sf = hlb_sf_create(2, 60000)};
    assert_non_null(d.sf);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, drain_loop, &d), 0);
    unsigned lost = 0, kept = 0;
    for (uint32_t r = 0; r < 20000; r++) {
        uint32_t i = r % 512, j = 512 + r % 512;
        uint64_t h_pre = 2 * r + 1, h_post = 2 * r + 2;
        assert_true(hlb_sf_queue_adopt(d.sf, 0, i, h_pre, 1) >= 0);
        hlb_sf_request_clear(d.sf);
        assert_true(hlb_sf_queue_adopt(d.sf, 0, j, h_post, 2) >= 0);
        wait_drained(d.sf);
        kept += hlb_sf_server_of(*hlb_sf_entry(d.sf, 0, i), h_pre) != 0;
        lost += hlb_sf_server_of(*hlb_sf_entry(d.sf, 0, j), h_post) != 2;
    }
    atomic_store(&d.stop, 1);
    pthread_join(th, NULL);
    if (kept || lost)
        fail_msg("of 20000 rounds: %u kept an adoption queued before the clear, %u lost "
                 "one queued after it", kept, lost);
    assert_int_equal(d.sf->st.entries, 1);
    assert_int_equal(hlb_sf_check(d.sf), 0);
    hlb_sf_free(d.sf);
}

/* A table of two VIPs: the first cheetah-stateful with owners ids, the second with
 * affinity aff2 and owners2 (NULL: none). */
static void two_vips(char *json, size_t n, const char *owners, const char *aff2,
                     const char *owners2)
{
    char second[256] = "";
    if (owners2)
        snprintf(second, sizeof(second), ",\"statefulOwners\":[%s]", owners2);
    snprintf(json, n,
             "{\"version\":1,\"vips\":[{\"vip\":\"" VIP "\",\"affinity\":\"cheetah-stateful\","
             "\"cookieKey\":\"" KEY "\",\"statefulOwners\":[%s],\"ports\":[{\"proto\":\"tcp\","
             "\"port\":80,\"dips\":[{\"ip\":\"10.9.0.1\",\"serverId\":1}]},{\"proto\":\"tcp\","
             "\"port\":443,\"dips\":[{\"ip\":\"10.9.0.1\",\"serverId\":1}]}]},"
             "{\"vip\":\"10.200.0.11\",\"affinity\":\"%s\",\"cookieKey\":\"" KEY "\"%s,"
             "\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.9.0.2\","
             "\"serverId\":2}]}]}]}", owners, aff2, second);
}

/* Owner ids are SMux-wide: every cheetah-stateful VIP has the same statefulOwners, or
 * the table is refused naming the second VIP's field and both VIPs. */
static void test_owner_lists_differ(void **state)
{
    (void)state;
    char json[2048];
    const char *why = "VIP 10.200.0.11: must be the list of vips[0] (VIP " VIP ")";
    two_vips(json, sizeof(json), OWNERS_0_2, "cheetah-stateful", OWNERS_0);
    expect_table_error(json, "vips[1].statefulOwners", why);
    two_vips(json, sizeof(json), OWNERS_0_2, "cheetah-stateful", OWNERS_2);
    expect_table_error(json, "vips[1].statefulOwners", why);
    struct hlb_table_error err = {{0}, {0}};
    struct hlb_table_options opt = {.n_workers = 1, .self_ip = ip4(SELF)};
    two_vips(json, sizeof(json), OWNERS_0_2, "cheetah-stateful", OWNERS_0_2);
    struct hlb_vip_table *t = hlb_table_from_json(json, strlen(json), &opt, &err);
    if (!t)
        fail_msg("same lists refused: %s: %s", err.field, err.reason);
    assert_int_equal(t->n_services, 3);
    assert_int_equal(hlb_sf_held_ids(t), 1u << 0 | 1u << 2);
    hlb_table_free(t);
    two_vips(json, sizeof(json), OWNERS_0_2, "cheetah", NULL);   /* one stateful VIP */
    t = hlb_table_from_json(json, strlen(json), &opt, &err);
    if (!t)
        fail_msg("refused: %s: %s", err.field, err.reason);
    hlb_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_ids),
        cmocka_unit_test(test_id_given_back),
        cmocka_unit_test(test_new_lowest_id_holds_hints),
        cmocka_unit_test(test_owner_table),
        cmocka_unit_test(test_base_switch),
        cmocka_unit_test(test_clear_ring_order),
        cmocka_unit_test(test_clear_ring_order_threads),
        cmocka_unit_test(test_owner_lists_differ),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
