/* Control operations without HTTP: apply (valid / invalid / stale), the running
 * table survives a rejected one, and /metrics text (counters kept across swaps). */
#include "control.h"
#include "dp_testutil.h"

static uint64_t now_ms = 1000;

static uint64_t fake_now(void)
{
    return now_ms;
}

static const char *T1 =
    "{\"version\":1,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\",\"ports\":["
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.1\"}]}]}]}";
static const char *T2 =
    "{\"version\":2,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\",\"ports\":["
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.1\"},{\"ip\":\"10.0.1.2\"}]}]}]}";
static const char *BAD =
    "{\"version\":3,\"vips\":[{\"vip\":\"100.64.0.1\",\"ports\":["
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.9\",\"weight\":-2}]}]}]}";

#define NW 2

struct fixture {
    struct hlb_worker w;                  /* worker 0 */
    struct hlb_worker more[NW - 1];
    struct hlb_worker *wp[NW];
    unsigned n;
    struct hlb_table_slot slot;
    struct hlb_control *c;
};

static int setup_n(void **state, unsigned n)
{
    struct fixture *fx = aligned_alloc(64, sizeof(*fx));
    memset(fx, 0, sizeof(*fx));
    fx->n = n;
    fx->wp[0] = &fx->w;
    for (unsigned k = 1; k < n; k++)
        fx->wp[k] = &fx->more[k - 1];
    for (unsigned k = 0; k < n; k++) {
        worker_init(fx->wp[k], hlb_conn_table_create(1024, NULL));
        fx->wp[k]->id = (uint16_t)k;
    }
    now_ms = 1000;
    hlb_table_slot_init(&fx->slot, hlb_table_empty(), n);
    struct hlb_control_config cc = {.slot = &fx->slot, .workers = fx->wp,
                                     .now_ms = fake_now, .health_timeout_ms = 1000,
                                     .table_opt = {.default_pin = 1}};
    fx->c = hlb_control_start(&cc);
    assert_non_null(fx->c);
    *state = fx;
    return 0;
}

static int setup(void **state)
{
    return setup_n(state, 1);
}

static int setup_workers(void **state)
{
    return setup_n(state, NW);
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    hlb_control_stop(fx->c);
    hlb_table_free(hlb_table_acquire(&fx->slot));
    for (unsigned k = 0; k < fx->n; k++)
        hlb_conn_table_free(fx->wp[k]->ct);
    free(fx);
    return 0;
}

/* Flow i's SYN through worker k. */
static uint32_t send_on(struct fixture *fx, unsigned k, int i)
{
    struct tframe f;
    char src[32];
    snprintf(src, sizeof(src), "198.51.100.%d", i + 1);
    build_tcp(&f, src, "100.64.0.1", (uint16_t)(5000 + i), 80, HLB_TCP_SYN);
    struct hlb_vip_table *t = hlb_table_acquire(&fx->slot);
    uint8_t v = run1(fx->wp[k], t, &f, 0);
    hlb_table_quiesce(&fx->slot, k, t);
    return v == HLB_V_TX ? outer_dst(&f) : 0;
}

static uint32_t send_one(struct fixture *fx, int i)
{
    return send_on(fx, 0, i);
}

static char *metrics(struct fixture *fx)
{
    size_t len;
    char *m = hlb_control_metrics(fx->c, &len);
    assert_non_null(m);
    assert_int_equal(strlen(m), len);
    return m;
}

static void test_apply_and_reject(void **state)
{
    struct fixture *fx = *state;
    struct hlb_table_error err;
    assert_int_equal(send_one(fx, 0), 0);                       /* empty table: dropped */
    assert_int_equal(hlb_control_apply(fx->c, T1, strlen(T1), &err), 0);
    assert_int_equal(hlb_table_acquire(&fx->slot)->version, 1);
    assert_int_equal(send_one(fx, 1), ip4("10.0.1.1"));

    /* Invalid: 400 naming the field; the running table keeps forwarding. */
    memset(&err, 0, sizeof(err));
    assert_int_equal(hlb_control_apply(fx->c, BAD, strlen(BAD), &err), 400);
    assert_string_equal(err.field, "vips[0].ports[0].dips[0].weight");
    assert_int_equal(hlb_table_acquire(&fx->slot)->version, 1);
    assert_int_equal(send_one(fx, 2), ip4("10.0.1.1"));

    /* Not newer: 409 on "version", nothing changes. */
    assert_int_equal(hlb_control_apply(fx->c, T1, strlen(T1), &err), 409);
    assert_string_equal(err.field, "version");
    assert_non_null(strstr(err.reason, "running version 1"));

    assert_int_equal(hlb_control_apply(fx->c, T2, strlen(T2), &err), 0);
    assert_int_equal(hlb_table_acquire(&fx->slot)->version, 2);
    int seen2 = 0;
    for (int i = 10; i < 60; i++)
        seen2 += send_one(fx, i) == ip4("10.0.1.2");
    assert_true(seen2 > 0);
}

static long long metric_value(const char *m, const char *series)
{
    char needle[300];
    snprintf(needle, sizeof(needle), "\n%s ", series);
    const char *p = strstr(m, needle);
    if (!p)
        fail_msg("series %s missing from metrics:\n%s", series, m);
    return atoll(p + strlen(needle));
}

static void test_metrics(void **state)
{
    struct fixture *fx = *state;
    struct hlb_table_error err;
    assert_int_equal(hlb_control_apply(fx->c, T1, strlen(T1), &err), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(send_one(fx, i), ip4("10.0.1.1"));
    char *m = metrics(fx);
    assert_int_equal(metric_value(m, "hlb_smux_table_version"), 1);
    assert_int_equal(metric_value(m, "hlb_smux_vip_packets_total{vip=\"100.64.0.1\",proto=\"tcp\","
                                     "port=\"80\"}"), 5);
    assert_int_equal(metric_value(m, "hlb_smux_vip_bytes_total{vip=\"100.64.0.1\",proto=\"tcp\","
                                     "port=\"80\"}"), 200);
    assert_int_equal(metric_value(m, "hlb_smux_dip_packets_total{vip=\"100.64.0.1\",proto=\"tcp\","
                                     "port=\"80\",dip=\"10.0.1.1\"}"), 5);
    assert_int_equal(metric_value(m, "hlb_smux_conn_table_entries"), 5);
    assert_int_equal(metric_value(m, "hlb_smux_conn_table_capacity"), 1024);
    assert_int_equal(metric_value(m, "hlb_smux_drops_total{reason=\"no_vip\"}"), 0);
    assert_non_null(strstr(m, "# TYPE hlb_smux_dip_packets_total counter\n"));
    free(m);

    /* Counters survive the swap: 5 old + 3 new packets to 10.0.1.1's series. */
    assert_int_equal(hlb_control_apply(fx->c, T2, strlen(T2), &err), 0);
    int to1 = 0;
    for (int i = 0; i < 5; i++)                                 /* pinned: same DIP */
        to1 += send_one(fx, i) == ip4("10.0.1.1");
    assert_int_equal(to1, 5);
    m = metrics(fx);
    assert_int_equal(metric_value(m, "hlb_smux_vip_packets_total{vip=\"100.64.0.1\",proto=\"tcp\","
                                     "port=\"80\"}"), 10);
    assert_int_equal(metric_value(m, "hlb_smux_dip_packets_total{vip=\"100.64.0.1\",proto=\"tcp\","
                                     "port=\"80\",dip=\"10.0.1.1\"}"), 10);
    assert_int_equal(metric_value(m, "hlb_smux_dip_packets_total{vip=\"100.64.0.1\",proto=\"tcp\","
                                     "port=\"80\",dip=\"10.0.1.2\"}"), 0);
    assert_int_equal(metric_value(m, "hlb_smux_table_swaps_total"), 2);
    assert_int_equal(metric_value(m, "hlb_smux_conn_lookups_total{result=\"hit\"}"), 5);
    free(m);

    /* A DIP taken out of the table takes its series with it: added back, it starts from 0
     * (the counters of removed entries are not kept, so their memory is bounded by the
     * running table's), while the VIP's series, never removed, goes on. */
    const char *without = "{\"version\":3,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\","
                          "\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.2\"}]}]}]}";
    char back[400];
    snprintf(back, sizeof(back), "%s", T2);
    back[11] = '4';                                             /* "version":4 */
    assert_int_equal(hlb_control_apply(fx->c, without, strlen(without), &err), 0);
    m = metrics(fx);
    assert_null(strstr(m, "dip=\"10.0.1.1\""));
    free(m);
    assert_int_equal(hlb_control_apply(fx->c, back, strlen(back), &err), 0);
    m = metrics(fx);
    assert_int_equal(metric_value(m, "hlb_smux_dip_packets_total{vip=\"100.64.0.1\",proto=\"tcp\","
                                     "port=\"80\",dip=\"10.0.1.1\"}"), 0);
    assert_int_equal(metric_value(m, "hlb_smux_vip_packets_total{vip=\"100.64.0.1\",proto=\"tcp\","
                                     "port=\"80\"}"), 10);
    free(m);

    /* A drop shows under its reason. */
    struct tframe f;
    build_tcp(&f, "198.51.100.1", "100.64.0.77", 1, 80, HLB_TCP_SYN);
    run1(&fx->w, hlb_table_acquire(&fx->slot), &f, 0);
    m = metrics(fx);
    assert_int_equal(metric_value(m, "hlb_smux_drops_total{reason=\"no_vip\"}"), 1);
    free(m);
}

/* Two workers: the metrics add up both workers' counters (their slices of the VIP
 * table, their connection tables), before and after a swap; each worker's own rx
 * count is there too; /health is stalled as soon as either worker is. */
static void test_workers(void **state)
{
    struct fixture *fx = *state;
    struct hlb_table_error err;
    assert_int_equal(hlb_control_apply(fx->c, T1, strlen(T1), &err), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(send_on(fx, 0, i), ip4("10.0.1.1"));
    for (int i = 10; i < 14; i++)
        assert_int_equal(send_on(fx, 1, i), ip4("10.0.1.1"));
    char *m = metrics(fx);
    const char *vip = "hlb_smux_vip_packets_total{vip=\"100.64.0.1\",proto=\"tcp\",port=\"80\"}";
    const char *dip1 = "hlb_smux_dip_packets_total{vip=\"100.64.0.1\",proto=\"tcp\",port=\"80\","
                       "dip=\"10.0.1.1\"}";
    assert_int_equal(metric_value(m, vip), 7);
    assert_int_equal(metric_value(m, dip1), 7);
    assert_int_equal(metric_value(m, "hlb_smux_rx_packets_total"), 7);
    assert_int_equal(metric_value(m, "hlb_smux_worker_rx_packets_total{worker=\"0\"}"), 3);
    assert_int_equal(metric_value(m, "hlb_smux_worker_rx_packets_total{worker=\"1\"}"), 4);
    assert_int_equal(metric_value(m, "hlb_smux_conn_table_entries"), 7);
    assert_int_equal(metric_value(m, "hlb_smux_conn_table_capacity"), 2048);
    assert_int_equal(metric_value(m, "hlb_smux_conn_table_inserts_total"), 7);
    free(m);

    /* The old table's slices are retired together; pinned flows stay on their DIP. */
    assert_int_equal(hlb_control_apply(fx->c, T2, strlen(T2), &err), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(send_on(fx, 0, i), ip4("10.0.1.1"));
    for (int i = 10; i < 14; i++)
        assert_int_equal(send_on(fx, 1, i), ip4("10.0.1.1"));
    m = metrics(fx);
    assert_int_equal(metric_value(m, vip), 14);
    assert_int_equal(metric_value(m, dip1), 14);
    assert_int_equal(metric_value(m, "hlb_smux_conn_lookups_total{result=\"hit\"}"), 7);
    assert_int_equal(metric_value(m, "hlb_smux_conn_lookups_total{result=\"miss\"}"), 7);
    free(m);

    /* /health: the oldest heartbeat counts. */
    unsigned status;
    now_ms = 5000;
    atomic_store(&fx->wp[0]->heartbeat_ms, 4900);
    atomic_store(&fx->wp[1]->heartbeat_ms, 4990);
    json_t *h = hlb_control_health(fx->c, &status);
    assert_int_equal(status, 200);
    assert_string_equal(json_string_value(json_object_get(h, "status")), "ok");
    assert_int_equal(json_integer_value(json_object_get(h, "lastLoopMsAgo")), 100);
    json_decref(h);
    atomic_store(&fx->wp[1]->heartbeat_ms, 3999);        /* 1001 ms: over the 1000 ms limit */
    h = hlb_control_health(fx->c, &status);
    assert_int_equal(status, 503);
    assert_string_equal(json_string_value(json_object_get(h, "status")), "stalled");
    assert_int_equal(json_integer_value(json_object_get(h, "lastLoopMsAgo")), 1001);
    json_decref(h);
    atomic_store(&fx->wp[1]->heartbeat_ms, 5000);
    atomic_store(&fx->wp[0]->heartbeat_ms, 3000);
    h = hlb_control_health(fx->c, &status);
    assert_int_equal(status, 503);
    json_decref(h);
}

/* WCMP units: one series per DIP, however many units it has, counting the packets of all
 * of them, and going on across a swap that changes its units. */
#define UNITS_TABLE(version, units) \
    "{\"version\":" version ",\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\",\"ports\":[" \
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.1\",\"bucketId\":0}" units "]}]}]}"
#define UNIT2(id) ",{\"ip\":\"10.0.1.2\",\"bucketId\":" #id "}"

static void test_metrics_of_wcmp_units(void **state)
{
    struct fixture *fx = *state;
    struct hlb_table_error err;
    const char *units = UNITS_TABLE("1", UNIT2(1) UNIT2(2) UNIT2(3));
    assert_int_equal(hlb_control_apply(fx->c, units, strlen(units), &err), 0);
    int to2 = 0;
    for (int i = 0; i < 200; i++)
        to2 += send_one(fx, i) == ip4("10.0.1.2");
    assert_true(to2 > 100 && to2 < 200);                        /* 3 units of 4 */
    char *m = metrics(fx);
    const char *series = "hlb_smux_dip_packets_total{vip=\"100.64.0.1\",proto=\"tcp\",port=\"80\","
                         "dip=\"10.0.1.2\"}";
    assert_int_equal(metric_value(m, series), to2);
    assert_int_equal(metric_value(m, "hlb_smux_dip_packets_total{vip=\"100.64.0.1\",proto=\"tcp\","
                                     "port=\"80\",dip=\"10.0.1.1\"}"), 200 - to2);
    const char *first = strstr(m, series);
    assert_null(strstr(first + 1, series));                    /* one series, not one per unit */
    free(m);

    /* one unit fewer: the series goes on (its pinned connections stay, as does the count) */
    const char *fewer = UNITS_TABLE("2", UNIT2(1) UNIT2(3));
    assert_int_equal(hlb_control_apply(fx->c, fewer, strlen(fewer), &err), 0);
    int again = 0;
    for (int i = 0; i < 200; i++)
        again += send_one(fx, i) == ip4("10.0.1.2");
    assert_int_equal(again, to2);                               /* pinned: nothing moved */
    m = metrics(fx);
    assert_int_equal(metric_value(m, series), 2 * to2);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_apply_and_reject, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workers, setup_workers, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_of_wcmp_units, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
