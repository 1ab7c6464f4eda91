/* Control operations without HTTP: apply (valid / invalid / stale), the running
 * table survives a rejected one, and /metrics text (counters kept across swaps). */
#include "control.h"
#include "dp_testutil.h"

static uint64_t fake_now(void)
{
    return 1000;
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

struct fixture {
    struct hlb_worker w;
    struct hlb_table_slot slot;
    _Atomic uint64_t hb;
    struct hlb_control *c;
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));
    worker_init(&fx->w, hlb_conn_table_create(1024, NULL));
    hlb_table_slot_init(&fx->slot, hlb_table_empty());
    struct hlb_control_config cc = {.slot = &fx->slot, .worker = &fx->w, .heartbeat_ms = &fx->hb,
                                     .now_ms = fake_now, .health_timeout_ms = 1000,
                                     .table_opt = {.default_pin = 1}};
    fx->c = hlb_control_start(&cc);
    assert_non_null(fx->c);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    hlb_control_stop(fx->c);
    hlb_table_free(hlb_table_acquire(&fx->slot));
    hlb_conn_table_free(fx->w.ct);
    free(fx);
    return 0;
}

static uint32_t send_one(struct fixture *fx, int i)
{
    struct tframe f;
    char src[32];
    snprintf(src, sizeof(src), "198.51.100.%d", i + 1);
    build_tcp(&f, src, "100.64.0.1", (uint16_t)(5000 + i), 80, HLB_TCP_SYN);
    struct hlb_vip_table *t = hlb_table_acquire(&fx->slot);
    uint8_t v = run1(&fx->w, t, &f, 0);
    hlb_table_quiesce(&fx->slot, t);
    return v == HLB_V_TX ? outer_dst(&f) : 0;
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
        cmocka_unit_test_setup_teardown(test_metrics_of_wcmp_units, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
