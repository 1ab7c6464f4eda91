/* Whole-table swaps under traffic, with real threads: a worker thread processes bursts
 * continuously while the control side publishes hundreds of tables.  No packet is
 * dropped, every burst is served by exactly one table (never a mix), and replaced
 * tables are freed only after the worker has moved on (the freed table is poisoned
 * first, so a late reader would forward to the poison DIP and fail the test). */
#include <pthread.h>
#include <stdatomic.h>

#include "dp_testutil.h"
#include "table_swap.h"

#define SWAPS 300

static struct hlb_table_slot slot;
static atomic_int stop;
static uint64_t bursts, packets, mixed, bad, from_a, from_b;

static const char *TA =
    "{\"version\":%d,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\",\"connTable\":false,"
    "\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.1\"},{\"ip\":\"10.0.1.2\"}]}]}]}";
static const char *TB =
    "{\"version\":%d,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"ovs\",\"encap\":\"gre\","
    "\"connTable\":false,\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.2.1\"},"
    "{\"ip\":\"10.0.2.2\"},{\"ip\":\"10.0.2.3\"}]}]},"
    "{\"vip\":\"100.64.0.2\",\"ports\":[{\"proto\":\"udp\",\"port\":53,\"dips\":[{\"ip\":\"10.0.3.1\"}]}]}]}";

static void *worker_main(void *arg)
{
    struct hlb_worker *w = arg;
    static struct tframe f[32];
    struct hlb_pkt pk[32];
    uint8_t v[32];
    hlb_table_reader_online(&slot, 0);
    while (!atomic_load(&stop)) {
        struct hlb_vip_table *t = hlb_table_acquire(&slot);
        for (int i = 0; i < 32; i++) {
            char src[32];
            snprintf(src, sizeof(src), "198.51.100.%d", i + 1);
            build_tcp(&f[i], src, "100.64.0.1", (uint16_t)(7000 + i), 80, HLB_TCP_ACK);
            pk[i] = f[i].p;
        }
        hlb_dp_burst(w, t, pk, v, 32, 0);
        int a = 0, b = 0;
        for (int i = 0; i < 32; i++) {
            if (v[i] != HLB_V_TX) {
                bad++;
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
                bad++;
        }
        if (a && b)
            mixed++;
        from_a += a;
        from_b += b;
        packets += 32;
        bursts++;
        hlb_table_quiesce(&slot, 0, t);
    }
    hlb_table_reader_offline(&slot, 0);
    return NULL;
}

static void test_swap_under_traffic(void **state)
{
    (void)state;
    static struct hlb_worker w;
    worker_init(&w, NULL);
    hlb_table_slot_init(&slot, hlb_table_empty(), 1);
    char buf[1024];
    snprintf(buf, sizeof(buf), TA, 1);
    struct hlb_vip_table *first = table_ok(buf, 0);
    hlb_table_free(hlb_table_publish(&slot, first));

    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, worker_main, &w), 0);
    /* Swap only once the worker runs: from then on each publish waits for it to finish
     * a burst with the new table, so both tables serve traffic however the threads are
     * scheduled (on a loaded machine all the swaps could otherwise end before it starts). */
    while (!atomic_load(&slot.reader[0].running))
        sched_yield();
    for (int i = 2; i < SWAPS + 2; i++) {
        snprintf(buf, sizeof(buf), i % 2 ? TA : TB, i);
        struct hlb_vip_table *old = hlb_table_publish(&slot, table_ok(buf, 0));
        /* Poison before freeing: were the worker still reading it, packets would go to
         * 10.9.9.9 and count as bad. */
        for (uint32_t d = 0; d < old->n_dips; d++)
            old->dips[d].outer = hlb_htonl(0x0a090909u);
        hlb_table_free(old);
        if (i % 16 == 0)
            sched_yield();
    }
    atomic_store(&stop, 1);
    pthread_join(th, NULL);
    hlb_table_free(hlb_table_acquire(&slot));

    printf("# %llu bursts, %llu packets, %d swaps, A %llu, B %llu\n",
           (unsigned long long)bursts, (unsigned long long)packets, SWAPS,
           (unsigned long long)from_a, (unsigned long long)from_b);
    assert_int_equal(bad, 0);
    assert_int_equal(mixed, 0);
    assert_int_equal(w.st.fwd_packets, packets);
    assert_int_equal(total_drops(&w), 0);
    assert_true(from_a > 0 && from_b > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_swap_under_traffic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
