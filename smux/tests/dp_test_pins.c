/* Flow pins (pins.h) through the control operations and the packet core: a pinned
 * flow goes to its pin's DIP before cookie, hash and connection table, the VIP's other
 * flows as before; a removal gives the flow back; bad input changes nothing; a full
 * table refuses; pins go on across table swaps; and a put is answered only once every
 * running worker finished a pass it entered after the put (the pin is in force). */
#include <pthread.h>
#include <time.h>
#include "control.h"
#include "dp_testutil.h"
#include "pins.h"

static uint64_t now_ms = 1000;

static uint64_t fake_now(void)
{
    return now_ms;
}

#define VIP "100.64.0.1"
static const char *T1 =
    "{\"version\":1,\"vips\":[{\"vip\":\"" VIP "\",\"selection\":\"crc32\",\"ports\":["
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.1\"},{\"ip\":\"10.0.1.2\"}]}]},"
    "{\"vip\":\"100.64.0.2\",\"selection\":\"crc32\",\"ports\":["
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.2.1\"}]}]}]}";
static const char *T2 =
    "{\"version\":2,\"vips\":[{\"vip\":\"" VIP "\",\"selection\":\"crc32\",\"ports\":["
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.1\"},{\"ip\":\"10.0.1.2\"},"
    "{\"ip\":\"10.0.1.3\"}]}]}]}";

#define PIN(port, dip) \
    "{\"client\":\"198.51.100.7\",\"clientPort\":" #port ",\"vip\":\"" VIP "\",\"vipPort\":80," \
    "\"dip\":\"" dip "\"}"

struct fixture {
    struct hlb_worker w;
    struct hlb_worker *wp[1];
    struct hlb_table_slot slot;
    struct hlb_control *c;
};

static int setup(void **state)
{
    struct fixture *fx = aligned_alloc(64, sizeof(*fx));
    memset(fx, 0, sizeof(*fx));
    worker_init(&fx->w, hlb_conn_table_create(1024, NULL));
    hlb_table_slot_init(&fx->slot, hlb_table_empty(), 1);
    fx->wp[0] = &fx->w;
    struct hlb_control_config cc = {.slot = &fx->slot, .workers = fx->wp, .now_ms = fake_now,
                                     .health_timeout_ms = 1000, .max_pins = 3,
                                     .table_opt = {.default_pin = 1}};
    fx->c = hlb_control_start(&cc);
    assert_non_null(fx->c);
    struct hlb_table_error err;
    assert_int_equal(hlb_control_apply(fx->c, T1, strlen(T1), &err), 0);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    hlb_table_reader_offline(&fx->slot, 0);     /* (a failed check may leave it online) */
    hlb_control_stop(fx->c);
    hlb_table_free(hlb_table_acquire(&fx->slot));
    hlb_conn_table_free(fx->w.ct);
    free(fx);
    return 0;
}

static int pin(struct fixture *fx, int put, const char *body, struct hlb_table_error *err)
{
    int found = -1;
    memset(err, 0, sizeof(*err));
    int rc = hlb_control_pin(fx->c, put, body, strlen(body), err, &found);
    assert_true(rc != 0 || found == 0 || found == 1);
    return rc;
}

/* A segment of client port sport to vip:80 through one pass; its outer destination
 * (0: dropped).  reference: the burst without its lean pass. */
static uint32_t send_flow(struct fixture *fx, const char *vip, uint16_t sport, uint8_t flags,
                          int reference)
{
    struct tframe f;
    build_tcp(&f, "198.51.100.7", vip, sport, 80, flags);
    struct hlb_vip_table *t = hlb_table_enter(&fx->slot, 0);
    uint8_t v = 0xee;
    if (reference)
        hlb_dp_burst_reference(&fx->w, t, &f.p, &v, 1, 0);
    else
        hlb_dp_burst(&fx->w, t, &f.p, &v, 1, 0);
    hlb_table_quiesce(&fx->slot, 0, t);
    return v == HLB_V_TX ? outer_dst(&f) : 0;
}

static int svc_has_pins(struct fixture *fx, const char *vip)
{
    const struct hlb_vip_table *t = hlb_table_acquire(&fx->slot);
    return hlb_svc_has_pins(hlb_table_lookup(t, ip4(vip), HLB_IPPROTO_TCP, htons(80)));
}

static void test_pinned_flow_goes_to_its_dip(void **state)
{
    struct fixture *fx = *state;
    struct hlb_table_error err;
    uint32_t before = send_flow(fx, VIP, 40000, HLB_TCP_SYN, 0);
    assert_true(before == ip4("10.0.1.1") || before == ip4("10.0.1.2"));
    uint32_t others[32];
    for (int i = 0; i < 32; i++)
        others[i] = send_flow(fx, VIP, (uint16_t)(41000 + i), HLB_TCP_SYN, 0);
    assert_false(svc_has_pins(fx, VIP));

    /* The DIP of the pin need not be in the pool; its tunnel end is the outer destination. */
    const char *p1 = "{\"client\":\"198.51.100.7\",\"clientPort\":40000,\"vip\":\"" VIP
                     "\",\"vipPort\":80,\"proto\":\"tcp\",\"dip\":\"10.0.9.9\","
                     "\"tunnel\":\"10.0.8.8\"}";
    assert_int_equal(pin(fx, 1, p1, &err), 0);
    assert_true(svc_has_pins(fx, VIP));
    assert_false(svc_has_pins(fx, "100.64.0.2"));
    for (int reference = 0; reference < 2; reference++) {
        assert_int_equal(send_flow(fx, VIP, 40000, HLB_TCP_ACK, reference), ip4("10.0.8.8"));
        assert_int_equal(send_flow(fx, VIP, 40000, HLB_TCP_SYN, reference), ip4("10.0.8.8"));
    }
    assert_int_equal(fx->w.st.pinned_packets, 4);
    /* The VIP's other flows (in the connection table or new) as before. */
    for (int i = 0; i < 32; i++)
        assert_int_equal(send_flow(fx, VIP, (uint16_t)(41000 + i), HLB_TCP_ACK, i & 1), others[i]);
    assert_int_equal(send_flow(fx, "100.64.0.2", 40000, HLB_TCP_ACK, 0), ip4("10.0.2.1"));
    assert_int_equal(fx->w.st.pinned_packets, 4);

    /* A burst mixing the pinned flow with others (the lean pass leaves the pinned
     * service's frames to the full body): each frame where it goes alone. */
    struct tframe f[8];
    struct hlb_pkt pk[8];
    uint8_t v[8];
    for (int i = 0; i < 8; i++) {
        build_tcp(&f[i], "198.51.100.7", i == 5 ? "100.64.0.2" : VIP,
                  (uint16_t)(i % 3 == 0 ? 40000 : 41000 + i), 80, HLB_TCP_ACK);
        pk[i] = f[i].p;
    }
    struct hlb_vip_table *t = hlb_table_enter(&fx->slot, 0);
    hlb_dp_burst(&fx->w, t, pk, v, 8, 0);
    hlb_table_quiesce(&fx->slot, 0, t);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(v[i], HLB_V_TX);
        f[i].p = pk[i];
        uint32_t want = i % 3 == 0 ? ip4("10.0.8.8") : i == 5 ? ip4("10.0.2.1") : others[i];
        assert_int_equal(outer_dst(&f[i]), want);
    }
    assert_int_equal(fx->w.st.pinned_packets, 7);

    /* The same flow pinned again: replaced (tunnel defaults to the DIP). */
    int found = 0;
    const char *p2 = PIN(40000, "10.0.9.7");
    assert_int_equal(hlb_control_pin(fx->c, 1, p2, strlen(p2), &err, &found), 0);
    assert_int_equal(found, 1);
    assert_int_equal(send_flow(fx, VIP, 40000, HLB_TCP_ACK, 0), ip4("10.0.9.7"));
    json_t *l = hlb_control_pins(fx->c);
    assert_int_equal(json_integer_value(json_object_get(l, "count")), 1);
    json_t *e = json_array_get(json_object_get(l, "pins"), 0);
    assert_string_equal(json_string_value(json_object_get(e, "dip")), "10.0.9.7");
    assert_string_equal(json_string_value(json_object_get(e, "client")), "198.51.100.7");
    assert_int_equal(json_integer_value(json_object_get(e, "clientPort")), 40000);
    assert_int_equal(json_integer_value(json_object_get(e, "vipPort")), 80);
    json_decref(l);

    /* Removed: the flow is back where its connection-table entry says, the VIP unmarked. */
    assert_int_equal(hlb_control_pin(fx->c, 0, p2, strlen(p2), &err, &found), 0);
    assert_int_equal(found, 1);
    assert_false(svc_has_pins(fx, VIP));
    assert_int_equal(send_flow(fx, VIP, 40000, HLB_TCP_ACK, 0), before);
    assert_int_equal(hlb_control_pin(fx->c, 0, p2, strlen(p2), &err, &found), 0);
    assert_int_equal(found, 0);                                 /* nothing to remove */
    assert_int_equal(fx->w.st.pinned_packets, 8);
}

static void expect_pin_error(struct fixture *fx, int put, const char *body, const char *field,
                             const char *reason_part)
{
    struct hlb_table_error err;
    assert_int_equal(pin(fx, put, body, &err), 400);
    if (strcmp(err.field, field) != 0 || !strstr(err.reason, reason_part))
        fail_msg("error %s: %s, expected %s: ...%s...", err.field, err.reason, field, reason_part);
}

static void test_bad_pins_change_nothing(void **state)
{
    struct fixture *fx = *state;
    struct hlb_table_error err;
    assert_int_equal(pin(fx, 1, PIN(40001, "10.0.9.9"), &err), 0);
    expect_pin_error(fx, 1, "{\"client\":", "(document)", "not JSON");
    expect_pin_error(fx, 1, "[]", "(document)", "object");
    expect_pin_error(fx, 1, "{\"clientPort\":1,\"vip\":\"" VIP "\",\"vipPort\":80,\"dip\":\"10.0.9.9\"}",
                     "client", "required");
    expect_pin_error(fx, 1, PIN(0, "10.0.9.9"), "clientPort", "1 to 65535");
    expect_pin_error(fx, 1, PIN(65536, "10.0.9.9"), "clientPort", "1 to 65535");
    expect_pin_error(fx, 1, PIN(40002, "10.0.9"), "dip", "IPv4");
    expect_pin_error(fx, 1, PIN(40002, "127.0.0.1"), "dip", "unicast");
    expect_pin_error(fx, 1, "{\"client\":\"198.51.100.7\",\"clientPort\":5,\"vip\":\"" VIP
                     "\",\"vipPort\":80}", "dip", "required");
    expect_pin_error(fx, 1, "{\"client\":\"198.51.100.7\",\"clientPort\":5,\"vip\":\"" VIP
                     "\",\"vipPort\":80,\"proto\":\"sctp\",\"dip\":\"10.0.9.9\"}", "proto", "tcp");
    expect_pin_error(fx, 1, "{\"client\":\"198.51.100.7\",\"clientPort\":5,\"vip\":\"" VIP
                     "\",\"vipPort\":80,\"dip\":\"10.0.9.9\",\"owner\":1}", "owner", "unknown");
    expect_pin_error(fx, 0, "{\"client\":\"198.51.100.7\",\"vip\":\"" VIP "\",\"vipPort\":80}",
                     "clientPort", "required");
    /* The pin in force is untouched and the flow still pinned. */
    json_t *l = hlb_control_pins(fx->c);
    assert_int_equal(json_integer_value(json_object_get(l, "count")), 1);
    json_decref(l);
    assert_int_equal(send_flow(fx, VIP, 40001, HLB_TCP_ACK, 0), ip4("10.0.9.9"));

    /* Full at max_pins (3): a new flow is refused, the ones in force can change. */
    assert_int_equal(pin(fx, 1, PIN(40002, "10.0.9.9"), &err), 0);
    assert_int_equal(pin(fx, 1, PIN(40003, "10.0.9.9"), &err), 0);
    assert_int_equal(pin(fx, 1, PIN(40004, "10.0.9.9"), &err), 507);
    assert_string_equal(err.field, "(pins)");
    assert_non_null(strstr(err.reason, "full (3 pins)"));
    assert_int_not_equal(send_flow(fx, VIP, 40004, HLB_TCP_SYN, 0), ip4("10.0.9.9"));
    assert_int_equal(pin(fx, 1, PIN(40003, "10.0.9.8"), &err), 0);
    assert_int_equal(send_flow(fx, VIP, 40003, HLB_TCP_SYN, 0), ip4("10.0.9.8"));
}

static void test_pins_go_on_across_table_swaps(void **state)
{
    struct fixture *fx = *state;
    struct hlb_table_error err;
    assert_int_equal(pin(fx, 1, PIN(40010, "10.0.9.9"), &err), 0);
    assert_int_equal(hlb_control_apply(fx->c, T2, strlen(T2), &err), 0);
    assert_true(svc_has_pins(fx, VIP));
    assert_int_equal(send_flow(fx, VIP, 40010, HLB_TCP_ACK, 0), ip4("10.0.9.9"));
    char *m;
    size_t len;
    m = hlb_control_metrics(fx->c, &len);
    assert_non_null(strstr(m, "\nhlb_smux_pins 1\n"));
    assert_non_null(strstr(m, "\nhlb_smux_pinned_packets_total 1\n"));
    free(m);
}

/* ---- the answer means "in force" -------------------------------------------------- */

struct put_call {
    struct fixture *fx;
    _Atomic int done;
};

static void *put_thread(void *arg)
{
    struct put_call *pc = arg;
    struct hlb_table_error err;
    const char *b = PIN(40020, "10.0.9.9");
    int found;
    assert_int_equal(hlb_control_pin(pc->fx->c, 1, b, strlen(b), &err, &found), 0);
    atomic_store(&pc->done, 1);
    return NULL;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_put_answers_once_workers_use_it(void **state)
{
    struct fixture *fx = *state;
    hlb_table_reader_online(&fx->slot, 0);
    /* A pass entered before the put: finishing it does not answer the put, as the
     * pass may have read the table without the pin. */
    struct hlb_vip_table *t = hlb_table_enter(&fx->slot, 0);
    struct put_call pc = {.fx = fx};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, put_thread, &pc), 0);
    for (int k = 0; k < 2000 && atomic_load(&fx->slot.epoch) == 0 && !atomic_load(&pc.done); k++)
        sleep_ms(1);                        /* the put waits for the workers now */
    hlb_table_quiesce(&fx->slot, 0, t);
    sleep_ms(50);
    assert_int_equal(atomic_load(&pc.done), 0);
    /* A pass entered after it: the pin is seen, and the put answered. */
    assert_int_equal(send_flow(fx, VIP, 40020, HLB_TCP_ACK, 0), ip4("10.0.9.9"));
    pthread_join(th, NULL);
    assert_int_equal(atomic_load(&pc.done), 1);
    hlb_table_reader_offline(&fx->slot, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pinned_flow_goes_to_its_dip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_pins_change_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pins_go_on_across_table_swaps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_answers_once_workers_use_it, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
