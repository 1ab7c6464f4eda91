/* EAL tests on net_ring: the DPDK glue (hlb_io_poll) moves real mbufs from an rx ring
 * through the packet core to the tx ring of the right port, rewrites data_off and
 * lengths, frees what it drops (no mbuf leak), drops chained mbufs, and follows a
 * table swap between two polls. */
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_eth_ring.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dp_testutil.h"
#include "io_loop.h"
#include "table_swap.h"

#define NB_MBUF 1023

static struct rte_mempool *pool;
static struct rte_ring *rxr[2], *txr[2];
static uint16_t port[2];
static struct hlb_worker w;
static struct hlb_table_slot slot;

static const char *TABLE =
    "{\"version\":%d,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\",\"ports\":["
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"%s\"}]}]}]}";

static void publish(int version, const char *dip)
{
    char buf[512];
    snprintf(buf, sizeof(buf), TABLE, version, dip);
    hlb_table_free(hlb_table_publish(&slot, table_ok(buf, 1)));
}

static int port_setup(uint16_t p)
{
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof(conf));
    if (rte_eth_dev_configure(p, 1, 1, &conf) < 0 ||
        rte_eth_rx_queue_setup(p, 0, 256, (unsigned)rte_socket_id(), NULL, pool) < 0 ||
        rte_eth_tx_queue_setup(p, 0, 256, (unsigned)rte_socket_id(), NULL) < 0 ||
        rte_eth_dev_start(p) < 0)
        return -1;
    return 0;
}

static int setup(void **state)
{
    (void)state;
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "--file-prefix=hlbdpring%d", (int)getpid());
    char *argv[] = {"test", "--no-huge", "--no-pci", "-m", "64", "--no-shconf",
                    "--no-telemetry", prefix, "-l", "0", "--log-level=warning", NULL};
    if (rte_eal_init(11, argv) < 0)
        return -1;
    pool = rte_pktmbuf_pool_create("hlb_test_pool", NB_MBUF, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                   (int)rte_socket_id());
    if (!pool)
        return -1;
    for (int i = 0; i < 2; i++) {
        char n[32];
        snprintf(n, sizeof(n), "hlb_rx%d", i);
        rxr[i] = rte_ring_create(n, 512, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
        snprintf(n, sizeof(n), "hlb_tx%d", i);
        txr[i] = rte_ring_create(n, 512, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
        snprintf(n, sizeof(n), "hlb_ring%d", i);
        int pid = rte_eth_from_rings(n, &rxr[i], 1, &txr[i], 1, (unsigned)rte_socket_id());
        if (pid < 0 || port_setup((uint16_t)pid) != 0)
            return -1;
        port[i] = (uint16_t)pid;
    }
    worker_init(&w, hlb_conn_table_create(1024, NULL));
    for (int i = 0; i < 2; i++) {
        struct rte_ether_addr mac;
        rte_eth_macaddr_get(port[i], &mac);
        memcpy(w.cfg.port_mac[i], mac.addr_bytes, 6);
    }
    hlb_table_slot_init(&slot, hlb_table_empty(), 1);
    publish(1, "10.0.1.1");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    hlb_table_free(hlb_table_acquire(&slot));
    hlb_conn_table_free(w.ct);
    for (int i = 0; i < 2; i++) {
        rte_eth_dev_stop(port[i]);
        rte_eth_dev_close(port[i]);
    }
    rte_eal_cleanup();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf /var/run/dpdk/hlbdpring%d", (int)getpid());
    return system(cmd) == 0 ? 0 : -1;
}

static void inject(int p, const struct tframe *f)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
    assert_non_null(m);
    uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)f->p.len);
    memcpy(d, f->p.data, f->p.len);
    assert_int_equal(rte_ring_enqueue(rxr[p], m), 0);
}

static struct rte_mbuf *take(int p)
{
    void *m = NULL;
    if (rte_ring_dequeue(txr[p], &m) != 0)
        return NULL;
    return m;
}

static struct hlb_io io_for(int nports)
{
    struct hlb_io io = {.w = &w, .n_ports = nports};
    io.port_ids[0] = port[0];
    io.port_ids[1] = port[1];
    return io;
}

static unsigned poll_once(struct hlb_io *io)
{
    struct hlb_vip_table *t = hlb_table_acquire(&slot);
    unsigned n = hlb_io_poll(io, t, 0);
    hlb_table_quiesce(&slot, 0, t);
    return n;
}

static void test_encap_through_mbufs(void **state)
{
    (void)state;
    struct hlb_io io = io_for(1);
    unsigned avail = rte_mempool_avail_count(pool);
    struct tframe f;
    build_ip(&f, "198.51.100.7", "100.64.0.1", HLB_IPPROTO_TCP, 4000, 80, HLB_TCP_SYN, 100, 0x4000);
    inject(0, &f);
    build_tcp(&f, "198.51.100.7", "100.64.0.99", 4000, 80, HLB_TCP_SYN);   /* no VIP: dropped */
    inject(0, &f);
    build_arp(&f, HLB_ARP_REQUEST, T_CLIENT_MAC, "192.0.2.77", "192.0.2.10");
    inject(0, &f);
    assert_int_equal(poll_once(&io), 3);

    struct rte_mbuf *m = take(0);
    assert_non_null(m);
    assert_int_equal(m->pkt_len, 14 + 20 + 140);
    assert_int_equal(m->data_len, m->pkt_len);
    assert_int_equal(rte_pktmbuf_headroom(m), RTE_PKTMBUF_HEADROOM - 20);
    const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
    assert_memory_equal(d, T_GW_MAC, 6);
    assert_memory_equal(d + 6, w.cfg.port_mac[0], 6);
    assert_int_equal(d[14 + 9], HLB_IPPROTO_IPIP);
    assert_int_equal(hlb_csum(d + 14, 20), 0);
    uint32_t dst;
    memcpy(&dst, d + 30, 4);
    assert_int_equal(dst, ip4("10.0.1.1"));
    rte_pktmbuf_free(m);

    m = take(0);                                                /* the ARP reply */
    assert_non_null(m);
    assert_int_equal(m->pkt_len, 42);
    d = rte_pktmbuf_mtod(m, const uint8_t *);
    assert_int_equal(d[12], 0x08);
    assert_int_equal(d[13], 0x06);
    assert_int_equal(d[21], HLB_ARP_REPLY);
    rte_pktmbuf_free(m);
    assert_null(take(0));
    assert_int_equal(w.st.drops[HLB_DROP_NO_VIP], 1);
    /* Every mbuf is back in the pool: drops were freed, nothing leaked. */
    assert_int_equal(rte_mempool_avail_count(pool), avail);
}

static void test_chained_mbuf_dropped(void **state)
{
    (void)state;
    struct hlb_io io = io_for(1);
    unsigned avail = rte_mempool_avail_count(pool);
    struct tframe f;
    build_tcp(&f, "198.51.100.7", "100.64.0.1", 4001, 80, HLB_TCP_SYN);
    struct rte_mbuf *a = rte_pktmbuf_alloc(pool), *b = rte_pktmbuf_alloc(pool);
    memcpy(rte_pktmbuf_append(a, 30), f.p.data, 30);
    memcpy(rte_pktmbuf_append(b, 30), f.p.data + 30, 30);
    assert_int_equal(rte_pktmbuf_chain(a, b), 0);
    assert_int_equal(rte_ring_enqueue(rxr[0], a), 0);
    uint64_t before = w.st.drops[HLB_DROP_MULTISEG];
    assert_int_equal(poll_once(&io), 1);
    assert_null(take(0));
    assert_int_equal(w.st.drops[HLB_DROP_MULTISEG], before + 1);
    assert_int_equal(rte_mempool_avail_count(pool), avail);
}

static void test_two_port_and_swap(void **state)
{
    (void)state;
    struct hlb_io io = io_for(2);
    w.cfg.two_port = 1;
    struct tframe f;
    build_tcp(&f, "198.51.100.8", "100.64.0.1", 4002, 80, HLB_TCP_ACK);
    inject(0, &f);
    assert_int_equal(poll_once(&io), 1);
    assert_null(take(0));
    struct rte_mbuf *m = take(1);                               /* out of port 1 */
    assert_non_null(m);
    uint32_t dst;
    memcpy(&dst, rte_pktmbuf_mtod(m, uint8_t *) + 30, 4);
    assert_int_equal(dst, ip4("10.0.1.1"));
    assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *) + 6, w.cfg.port_mac[1], 6);
    rte_pktmbuf_free(m);

    /* The next poll after a swap uses the new table (new flow; the old one is pinned). */
    publish(2, "10.0.7.7");
    build_tcp(&f, "198.51.100.9", "100.64.0.1", 4003, 80, HLB_TCP_SYN);
    inject(0, &f);
    build_tcp(&f, "198.51.100.8", "100.64.0.1", 4002, 80, HLB_TCP_ACK);
    inject(0, &f);
    assert_int_equal(poll_once(&io), 2);
    m = take(1);
    memcpy(&dst, rte_pktmbuf_mtod(m, uint8_t *) + 30, 4);
    assert_int_equal(dst, ip4("10.0.7.7"));
    rte_pktmbuf_free(m);
    m = take(1);
    memcpy(&dst, rte_pktmbuf_mtod(m, uint8_t *) + 30, 4);
    assert_int_equal(dst, ip4("10.0.7.7"));                     /* pinned DIP left the pool */
    assert_int_equal(w.st.conn_repinned, 1);
    rte_pktmbuf_free(m);
    w.cfg.two_port = 0;
}

/* A mixed burst through the mbuf instantiation of the packet core (lean pass over
 * mbufs, then the general code) against the general code over plain buffers: the
 * same frames leave, in the same order, byte for byte, with the same counters. */
static void test_mixed_burst_matches_reference(void **state)
{
    (void)state;
    struct hlb_io io = io_for(1);
    unsigned avail = rte_mempool_avail_count(pool);
    struct hlb_vip_table *t = hlb_table_acquire(&slot);
    /* The reference world: same configuration and table document, own table. */
    struct hlb_worker ref;
    worker_init(&ref, hlb_conn_table_create(1024, NULL));
    ref.cfg = w.cfg;
    char *doc = hlb_table_to_json(t);
    struct hlb_vip_table *rt = table_ok(doc, 1);
    free(doc);
    rt->gen = t->gen;
    struct hlb_dp_stats before = w.st;

    enum { N = HLB_RX_BURST };                          /* one poll takes them all */
    static struct tframe f[N];
    for (int i = 0; i < N; i++) {
        char src[32];
        snprintf(src, sizeof(src), "203.0.113.%d", 1 + i % 9);
        switch (i % 8) {
        case 3:                                          /* bad checksum */
            build_tcp(&f[i], src, "100.64.0.1", (uint16_t)(5000 + i), 80, HLB_TCP_ACK);
            f[i].p.data[24] ^= 1;
            break;
        case 5:                                          /* no VIP */
            build_tcp(&f[i], src, "100.64.0.77", 5000, 80, HLB_TCP_SYN);
            break;
        case 6:                                          /* ARP for us */
            build_arp(&f[i], HLB_ARP_REQUEST, T_CLIENT_MAC, "192.0.2.77", "192.0.2.10");
            break;
        case 7:                                          /* truncated */
            build_tcp(&f[i], src, "100.64.0.1", 5000, 80, HLB_TCP_ACK);
            f[i].p.len = 30;
            break;
        default:                                         /* pinned flows: SYN, then data */
            build_ip(&f[i], src, "100.64.0.1", HLB_IPPROTO_TCP, (uint16_t)(5000 + i % 3), 80,
                     i < 16 ? HLB_TCP_SYN : HLB_TCP_ACK, (uint32_t)(i * 3), 0x4000);
            break;
        }
        inject(0, &f[i]);
    }
    assert_int_equal(poll_once(&io), N);

    struct hlb_pkt p[N];
    uint8_t v[N];
    for (int i = 0; i < N; i++)
        p[i] = f[i].p;
    hlb_dp_burst_reference(&ref, rt, p, v, N, 0);
    int sent = 0;
    for (int i = 0; i < N; i++) {
        if (v[i] != HLB_V_TX)
            continue;
        struct rte_mbuf *m = take(0);
        assert_non_null(m);
        assert_int_equal(m->data_len, p[i].len);
        assert_int_equal(m->pkt_len, p[i].len);
        assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), p[i].data, p[i].len);
        rte_pktmbuf_free(m);
        sent++;
    }
    assert_null(take(0));
    assert_true(sent > N / 2);
    assert_int_equal(w.st.fwd_packets - before.fwd_packets, ref.st.fwd_packets);
    assert_int_equal(w.st.fwd_bytes - before.fwd_bytes, ref.st.fwd_bytes);
    assert_int_equal(w.st.rx_bytes - before.rx_bytes, ref.st.rx_bytes);
    assert_int_equal(w.st.arp_replies - before.arp_replies, ref.st.arp_replies);
    for (int r = 0; r < HLB_DROP_MAX; r++)
        assert_int_equal(w.st.drops[r] - before.drops[r], ref.st.drops[r]);
    assert_true(w.st.lean_packets - before.lean_packets > 0);
    assert_int_equal(rte_mempool_avail_count(pool), avail);
    hlb_table_free(rt);
    hlb_conn_table_free(ref.ct);
}

/* A pinned frame the lean pass drops (its VIP's pool has no DIP with weight: a new
 * connection has no backend) in a burst the lean pass otherwise forwards entirely:
 * the drop is counted and freed, never sent out as it came in. */
static void test_lean_drop_not_sent(void **state)
{
    (void)state;
    struct hlb_io io = io_for(1);
    unsigned avail = rte_mempool_avail_count(pool);
    hlb_table_free(hlb_table_publish(&slot, table_ok(
        "{\"version\":3,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\","
        "\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.1.1\","
        "\"weight\":0}]}]},{\"vip\":\"100.64.0.2\",\"selection\":\"crc32\",\"ports\":["
        "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.2.2\"}]}]}]}", 1)));
    uint64_t before = w.st.drops[HLB_DROP_NO_BACKEND];
    struct tframe f;
    build_tcp(&f, "198.51.100.20", "100.64.0.2", 4100, 80, HLB_TCP_SYN);
    inject(0, &f);
    build_tcp(&f, "198.51.100.21", "100.64.0.1", 4101, 80, HLB_TCP_SYN);   /* no backend */
    inject(0, &f);
    build_tcp(&f, "198.51.100.22", "100.64.0.2", 4102, 80, HLB_TCP_SYN);
    inject(0, &f);
    assert_int_equal(poll_once(&io), 3);
    for (int k = 0; k < 2; k++) {
        struct rte_mbuf *m = take(0);
        assert_non_null(m);
        uint32_t dst;
        memcpy(&dst, rte_pktmbuf_mtod(m, uint8_t *) + 30, 4);
        assert_int_equal(dst, ip4("10.0.2.2"));
        rte_pktmbuf_free(m);
    }
    assert_null(take(0));
    assert_int_equal(w.st.drops[HLB_DROP_NO_BACKEND], before + 1);
    assert_int_equal(rte_mempool_avail_count(pool), avail);
    publish(4, "10.0.1.1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encap_through_mbufs),
        cmocka_unit_test(test_chained_mbuf_dropped),
        cmocka_unit_test(test_two_port_and_swap),
        cmocka_unit_test(test_mixed_burst_matches_reference),
        cmocka_unit_test(test_lean_drop_not_sent),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
