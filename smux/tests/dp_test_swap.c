/* Whole-table swaps under traffic, with real threads: worker threads process bursts
 * continuously while the control side publishes hundreds of tables.  No packet is
 * dropped, every burst is served by exactly one table (never a mix), and replaced
 * tables are freed only after every running worker has moved on (the freed table is
 * poisoned first, so a late reader would forward to the poison DIP and fail the
 * test).  With several workers, one of them also stops and starts again during the
 * swaps (a reader going offline is not waited for, and one coming back takes the
 * current table). */
#include <pthread.h>
#include <stdatomic.h>

#include "dp_testutil.h"
#include "table_swap.h"

#define SWAPS 300
#define MAX_W 4

static struct hlb_table_slot slot;
static atomic_int stop;

struct wstate {
    struct hlb_worker w;
    uint64_t bursts, packets, mixed, bad, from_a, from_b;
    _Atomic int restarts;          /* this worker goes offline and back this many times */
};

static const char *TA =
    "{\"version\":%d,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\",\"connTable\":false,"
    "\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.1\"},{\"ip\":\"10.0.1.2\"}]}]}]}";
static const char *TB =
    "{\"version\":%d,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"ovs\",\"encap\":\"gre\","
    "\"connTable\":false,\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.2.1\"},"
    "{\"ip\":\"10.0.2.2\"},{\"ip\":\"10.0.2.3\"}]}]},"
    "{\"vip\":\"100.64.0.2\",\"ports\":[{\"proto\":\"udp\",\"port\":53,\"dips\":[{\"ip\":\"10.0.3.1\"}]}]}]}";

static void one_burst(struct wstate *x)
{
    struct tframe f[32];
    struct hlb_pkt pk[32];
    uint8_t v[32];
    struct hlb_vip_table *t = hlb_table_acquire(&slot);
    for (int i = 0; i < 32; i++) {
        char src[32];
        snprintf(src, sizeof(src), "198.51.%d.%d", x->w.id, i + 1);
        build_tcp(&f[i], src, "100.64.0.1", (uint16_t)(7000 + i), 80, HLB_TCP_ACK);
        pk[i] = f[i].p;
    }
    hlb_dp_burst(&x->w, t, pk, v, 32, 0);
    int a = 0, b = 0;
    for (int i = 0; i < 32; i++) {
        if (v[i] != HLB_V_TX) {
            x->bad++;
            continue;
        }
        uint32_t d;
        memcpy(&d, pk[i].data + 14 + 16, 4);
        uint32_t h = hlb_ntohl(d);
        if ((h & 0xffffff00u) == 0x0a000100u)
            a++;
        else if ((h & 0xffffff00u) == 0x0a000200u)
            b++;
        else
            x->bad++;
    }
    if (a && b)
        x->mixed++;
    x->from_a += (uint64_t)a;
    x->from_b += (uint64_t)b;
    x->packets += 32;
    x->bursts++;
    hlb_table_quiesce(&slot, x->w.id, t);
}

static void *worker_main(void *arg)
{
    struct wstate *x = arg;
    hlb_table_reader_online(&slot, x->w.id);
    while (!atomic_load(&stop)) {
        one_burst(x);
        if (atomic_load(&x->restarts) && x->bursts % 50 == 0) {
            /* Offline for a moment: swaps go on without waiting for it. */
            atomic_fetch_sub(&x->restarts, 1);
            hlb_table_reader_offline(&slot, x->w.id);
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
            hlb_table_reader_online(&slot, x->w.id);
        }
    }
    hlb_table_reader_offline(&slot, x->w.id);
    return NULL;
}

static void swap_under_traffic(unsigned n)
{
    static struct wstate ws[MAX_W];
    memset(ws, 0, sizeof(ws));
    atomic_store(&stop, 0);
    hlb_table_slot_init(&slot, hlb_table_empty(), n);
    char buf[1024];
    snprintf(buf, sizeof(buf), TA, 1);
    hlb_table_free(hlb_table_publish(&slot, table_ok_n(buf, 0, n)));

    pthread_t th[MAX_W];
    for (unsigned k = 0; k < n; k++) {
        worker_init(&ws[k].w, NULL);
        ws[k].w.id = (uint16_t)k;
        atomic_store(&ws[k].restarts, n > 1 && k == n - 1 ? 3 : 0);
        assert_int_equal(pthread_create(&th[k], NULL, worker_main, &ws[k]), 0);
    }
    /* Swap only once the workers run: from then on each publish waits for every one of
     * them to finish a burst with the new table, so both tables serve traffic however
     * the threads are scheduled. */
    for (unsigned k = 0; k < n; k++)
        while (!atomic_load(&slot.reader[k].running))
            sched_yield();
    /* At least SWAPS, and on until the restarting worker has come back every time. */
    int i = 2;
    for (; i < SWAPS + 2 || atomic_load(&ws[n - 1].restarts); i++) {
        snprintf(buf, sizeof(buf), i % 2 ? TA : TB, i);
        struct hlb_vip_table *old = hlb_table_publish(&slot, table_ok_n(buf, 0, n));
        /* Poison before freeing: were a worker still reading it, packets would go to
         * 10.9.9.9 and count as bad. */
        for (uint32_t d = 0; d < old->n_dips; d++)
            old->dips[d].outer = hlb_htonl(0x0a090909u);
        hlb_table_free(old);
        if (i % 16 == 0)
            sched_yield();
    }
    atomic_store(&stop, 1);
    for (unsigned k = 0; k < n; k++)
        pthread_join(th[k], NULL);
    hlb_table_free(hlb_table_acquire(&slot));

    for (unsigned k = 0; k < n; k++) {
        struct wstate *x = &ws[k];
        printf("# worker %u: %llu bursts, %llu packets, %d swaps, A %llu, B %llu\n", k,
               (unsigned long long)x->bursts, (unsigned long long)x->packets, i - 2,
               (unsigned long long)x->from_a, (unsigned long long)x->from_b);
        assert_int_equal(x->bad, 0);
        assert_int_equal(x->mixed, 0);
        assert_int_equal(x->w.st.fwd_packets, x->packets);
        assert_int_equal(total_drops(&x->w), 0);
        assert_true(x->from_a > 0 && x->from_b > 0);
        assert_int_equal(atomic_load(&x->restarts), 0);
    }
}

static void test_swap_under_traffic(void **state)
{
    (void)state;
    swap_under_traffic(1);
}

static void test_swap_waits_for_every_worker(void **state)
{
    (void)state;
    swap_under_traffic(MAX_W);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_swap_under_traffic),
        cmocka_unit_test(test_swap_waits_for_every_worker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
