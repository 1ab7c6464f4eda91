/* EAL tests on net_ring: the DPDK glue (hlb_io_poll) moves real mbufs from an rx ring
 * through the packet core to the tx ring of the right port, rewrites data_off and
 * lengths, frees what it drops (no mbuf leak), drops chained mbufs, and follows a
 * table swap between two polls.  With two workers: on a port with a queue per worker
 * (frames put on the queue of their flow's owner, as a NIC's flow hash would), and on
 * a port with one rx and one tx queue (software distribution through the inboxes, a
 * tx queue shared under its lock), sequentially and with the second worker on its
 * own lcore while tables are swapped. */
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_eth_ring.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dp_testutil.h"
#include "io_loop.h"
#include "table_swap.h"

#define NB_MBUF 2047

static struct rte_mempool *pool;
static struct rte_ring *rxr[2], *txr[2];
static uint16_t port[2];
static struct hlb_worker w;
static struct hlb_table_slot slot;

/* Two workers: port mq has a queue pair per worker, port sq one queue pair. */
#define NW 2
static struct rte_ring *mq_rx[NW], *mq_tx[NW], *sq_rx, *sq_tx;
static uint16_t mq_port, sq_port;
static struct hlb_worker mw[NW];
static struct hlb_table_slot mslot;
static struct hlb_io_shared msh;

static const char *TABLE =
    "{\"version\":%d,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\",\"ports\":["
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"%s\"}]}]}]}";

static void publish(int version, const char *dip)
{
    char buf[512];
    snprintf(buf, sizeof(buf), TABLE, version, dip);
    hlb_table_free(hlb_table_publish(&slot, table_ok(buf, 1)));
}

static int port_setup_q(uint16_t p, uint16_t nq)
{
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof(conf));
    if (rte_eth_dev_configure(p, nq, nq, &conf) < 0)
        return -1;
    for (uint16_t q = 0; q < nq; q++)
        if (rte_eth_rx_queue_setup(p, q, 256, (unsigned)rte_socket_id(), NULL, pool) < 0 ||
            rte_eth_tx_queue_setup(p, q, 256, (unsigned)rte_socket_id(), NULL) < 0)
            return -1;
    return rte_eth_dev_start(p) < 0 ? -1 : 0;
}

static int port_setup(uint16_t p)
{
    return port_setup_q(p, 1);
}

static struct rte_ring *ring_of(const char *name, int k, unsigned size)
{
    char n[32];
    snprintf(n, sizeof(n), "%s%d", name, k);
    return rte_ring_create(n, size, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
}

static struct rte_ring *ring(const char *name, int k)
{
    return ring_of(name, k, 1024);
}

/* The two-worker ports, workers and table slot. */
static int setup_workers(void)
{
    for (int k = 0; k < NW; k++) {
        mq_rx[k] = ring("hlb_mqrx", k);
        mq_tx[k] = ring("hlb_mqtx", k);
    }
    sq_rx = ring("hlb_sqrx", 0);
    sq_tx = ring("hlb_sqtx", 0);
    int mp = rte_eth_from_rings("hlb_mq", mq_rx, NW, mq_tx, NW, (unsigned)rte_socket_id());
    int sp = rte_eth_from_rings("hlb_sq", &sq_rx, 1, &sq_tx, 1, (unsigned)rte_socket_id());
    if (mp < 0 || sp < 0 || port_setup_q((uint16_t)mp, NW) != 0 || port_setup((uint16_t)sp) != 0)
        return -1;
    mq_port = (uint16_t)mp;
    sq_port = (uint16_t)sp;
    for (int k = 0; k < NW; k++) {
        worker_init(&mw[k], hlb_conn_table_create(4096, NULL));
        mw[k].id = (uint16_t)k;
        msh.inbox[k][0] = ring_of("hlb_inbox", k, 64);  /* (worker 0's is never used) */
    }
    for (int q = 0; q < NW; q++)
        rte_spinlock_init(&msh.tx_lock[0][q]);
    msh.n_workers = NW;
    hlb_table_slot_init(&mslot, hlb_table_empty(), NW);
    return 0;
}

static int setup(void **state)
{
    (void)state;
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "--file-prefix=hlbdpring%d", (int)getpid());
    /* Two lcores: the second worker's thread runs on lcore 1 in one test. */
    char *argv[] = {"test", "--no-huge", "--no-pci", "-m", "64", "--no-shconf",
                    "--no-telemetry", prefix, "-l", "0,1", "--log-level=warning", NULL};
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
    return setup_workers();
}

static int teardown(void **state)
{
    (void)state;
    hlb_table_free(hlb_table_acquire(&slot));
    hlb_table_free(hlb_table_acquire(&mslot));
    hlb_conn_table_free(w.ct);
    for (int k = 0; k < NW; k++)
        hlb_conn_table_free(mw[k].ct);
    uint16_t all[] = {port[0], port[1], mq_port, sq_port};
    for (int i = 0; i < 4; i++) {
        rte_eth_dev_stop(all[i]);
        rte_eth_dev_close(all[i]);
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

/* ---- two workers --------------------------------------------------------------- */

static void mpublish(int version, const char *dips)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"version\":%d,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\","
             "\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[%s]}]}]}", version, dips);
    hlb_table_free(hlb_table_publish(&mslot, table_ok_n(buf, 1, NW)));
}

static struct hlb_io mio(int k, uint16_t p)
{
    struct hlb_io io = {.w = &mw[k], .n_ports = 1, .sh = &msh};
    io.port_ids[0] = p;
    return io;
}

static unsigned mpoll(struct hlb_io *io)
{
    struct hlb_vip_table *t = hlb_table_acquire(&mslot);
    unsigned n = hlb_io_poll(io, t, 0);
    hlb_table_quiesce(&mslot, io->w->id, t);
    return n;
}

/* Connection c's segment with these flags. */
static void conn_frame(struct tframe *f, int c, uint8_t flags)
{
    char src[32];
    snprintf(src, sizeof(src), "203.0.113.%d", 1 + c % 200);
    build_tcp(f, src, "100.64.0.1", (uint16_t)(6000 + c), 80, flags);
}

static unsigned owner(const struct tframe *f)
{
    return hlb_flow_worker(f->p.data, f->p.len, NW);
}

static void put(struct rte_ring *r, const struct tframe *f)
{
    struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
    assert_non_null(m);
    memcpy(rte_pktmbuf_append(m, (uint16_t)f->p.len), f->p.data, f->p.len);
    assert_int_equal(rte_ring_enqueue(r, m), 0);
}

/* Worker k's connection table holds connection c. */
static int holds(int k, int c)
{
    struct tframe f;
    struct hlb_parsed pp = {.t = {0}};
    struct hlb_conn_ref ref;
    uint64_t k0, k1;
    conn_frame(&f, c, HLB_TCP_ACK);
    assert_int_equal(hlb_parse(f.p.data, f.p.len, &pp), HLB_PARSE_IPV4);
    hlb_conn_key(&pp.t, &k0, &k1);
    return hlb_conn_find(mw[k].ct, hlb_conn_hash(&pp.t), k0, k1, 0, &ref);
}

/* An encapsulated frame's connection (from its inner source port) and outer
 * destination; frees it. */
static int conn_of(struct rte_mbuf *m, uint32_t *dst, uint8_t *gw_mac)
{
    const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
    uint16_t sport;
    memcpy(dst, d + 30, 4);
    memcpy(&sport, d + 34 + 20, 2);
    if (gw_mac)
        memcpy(gw_mac, d, 6);
    rte_pktmbuf_free(m);
    return hlb_ntohs(sport) - 6000;
}

static struct rte_mbuf *take_ring(struct rte_ring *r)
{
    void *m = NULL;
    return rte_ring_dequeue(r, &m) == 0 ? m : NULL;
}

/* A queue per worker: each leaves by its own worker's tx queue, each connection is in
 * its owner's table only, a gateway MAC learned by worker 1 is used by worker 0 from
 * its next poll, and connections stay on their DIPs across a swap. */
static void test_workers_queues(void **state)
{
    (void)state;
    enum { C = 40 };
    msh.software_rx = 0;
    msh.n_txq[0] = NW;
    mpublish(1, "{\"ip\":\"10.0.1.1\"},{\"ip\":\"10.0.1.2\"}");
    unsigned avail = rte_mempool_avail_count(pool);
    struct hlb_io io[NW] = {mio(0, mq_port), mio(1, mq_port)};
    unsigned per[NW] = {0};
    uint32_t dip_of[C];
    struct tframe f;
    for (int c = 0; c < C; c++) {
        conn_frame(&f, c, HLB_TCP_SYN);
        per[owner(&f)]++;
        put(mq_rx[owner(&f)], &f);
    }
    assert_true(per[0] > 5 && per[1] > 5);
    for (int k = 0; k < NW; k++)
        assert_int_equal(mpoll(&io[k]), per[k]);
    for (int k = 0; k < NW; k++) {
        unsigned got = 0;
        struct rte_mbuf *m;
        while ((m = take_ring(mq_tx[k])) != NULL) {
            uint32_t dst;
            int c = conn_of(m, &dst, NULL);
            assert_true(c >= 0 && c < C);
            conn_frame(&f, c, HLB_TCP_SYN);
            assert_int_equal(owner(&f), k);
            dip_of[c] = dst;
            got++;
        }
        assert_int_equal(got, per[k]);
    }
    for (int c = 0; c < C; c++) {
        conn_frame(&f, c, HLB_TCP_SYN);
        assert_true(holds((int)owner(&f), c));
        assert_false(holds(1 - (int)owner(&f), c));
    }

    /* The gateway answers with a new MAC, on worker 1's queue. */
    static const uint8_t new_mac[6] = {0x02, 0x47, 0x57, 0, 0, 0x99};
    build_arp(&f, HLB_ARP_REPLY, new_mac, "192.0.2.1", "192.0.2.10");
    put(mq_rx[1], &f);
    assert_int_equal(mpoll(&io[1]), 1);
    assert_int_equal(mw[1].st.gw_learned, 1);

    mpublish(2, "{\"ip\":\"10.0.1.1\"},{\"ip\":\"10.0.1.2\"},{\"ip\":\"10.0.1.3\"}");
    for (int c = 0; c < C; c++) {
        conn_frame(&f, c, HLB_TCP_ACK);
        put(mq_rx[owner(&f)], &f);
    }
    for (int k = 0; k < NW; k++)
        assert_int_equal(mpoll(&io[k]), per[k]);
    for (int k = 0; k < NW; k++) {
        struct rte_mbuf *m;
        while ((m = take_ring(mq_tx[k])) != NULL) {
            uint32_t dst;
            uint8_t mac[6];
            int c = conn_of(m, &dst, mac);
            assert_int_equal(dst, dip_of[c]);
            assert_memory_equal(mac, new_mac, 6);
        }
        assert_int_equal(mw[k].st.conn_hits, per[k]);
    }
    assert_int_equal(rte_mempool_avail_count(pool), avail);
}

/* One queue pair: worker 0 receives everything and hands worker 1's flows to its
 * inbox; both send on the one tx queue; a full inbox holds worker 0's reception
 * back (no drop). */
static void test_workers_software(void **state)
{
    (void)state;
    enum { C = 40, FLOOD = 200 };
    msh.software_rx = 1;
    msh.n_txq[0] = 1;
    mpublish(3, "{\"ip\":\"10.0.2.1\"},{\"ip\":\"10.0.2.2\"}");
    unsigned avail = rte_mempool_avail_count(pool);
    struct hlb_io io[NW] = {mio(0, sq_port), mio(1, sq_port)};
    uint64_t rx0 = mw[0].st.rx_packets, rx1 = mw[1].st.rx_packets;
    unsigned per[NW] = {0};
    struct tframe f;
    for (int c = 100; c < 100 + C; c++) {
        conn_frame(&f, c, HLB_TCP_SYN);
        per[owner(&f)]++;
        put(sq_rx, &f);
    }
    assert_int_equal(mpoll(&io[0]) + mpoll(&io[0]), C);   /* received: all of them */
    assert_int_equal(mpoll(&io[1]), per[1]);              /* from its inbox */
    assert_int_equal(mw[0].st.rx_packets - rx0, per[0]);
    assert_int_equal(mw[1].st.rx_packets - rx1, per[1]);
    unsigned got = 0;
    struct rte_mbuf *m;
    while ((m = take_ring(sq_tx)) != NULL) {
        uint32_t dst;
        conn_of(m, &dst, NULL);
        got++;
    }
    assert_int_equal(got, C);
    for (int c = 100; c < 100 + C; c++) {
        conn_frame(&f, c, HLB_TCP_SYN);
        assert_true(holds((int)owner(&f), c));
        assert_false(holds(1 - (int)owner(&f), c));
    }

    /* Worker 1 does not poll: once its inbox (63 frames) is full, worker 0 stops
     * receiving; the rest waits in the port's rx queue, and nothing is dropped. */
    unsigned sent1 = 0;
    for (int c = 1000; sent1 < FLOOD; c++) {
        conn_frame(&f, c, HLB_TCP_SYN);
        if (owner(&f) != 1)
            continue;
        put(sq_rx, &f);
        sent1++;
    }
    unsigned took = 0;
    for (int i = 0; i < 10; i++)
        took += mpoll(&io[0]);
    assert_int_equal(took, 63);
    assert_int_equal(rte_ring_count(sq_rx), FLOOD - 63);
    unsigned fwd = 0;
    for (int i = 0; i < 50 && fwd < FLOOD; i++) {
        mpoll(&io[0]);
        fwd += mpoll(&io[1]);
    }
    assert_int_equal(fwd, FLOOD);
    assert_int_equal(mw[0].st.drops[HLB_DROP_TX_FULL] + mw[1].st.drops[HLB_DROP_TX_FULL], 0);
    unsigned out = 0;
    while ((m = take_ring(sq_tx)) != NULL) {
        rte_pktmbuf_free(m);
        out++;
    }
    assert_int_equal(out, FLOOD);
    assert_int_equal(rte_mempool_avail_count(pool), avail);
}

static atomic_int mstop;

static int worker1_loop(void *arg)
{
    struct hlb_io *io = arg;
    hlb_table_reader_online(&mslot, 1);
    while (!atomic_load(&mstop))
        mpoll(io);
    hlb_table_reader_offline(&mslot, 1);
    return 0;
}

/* Software distribution with worker 1 on its own lcore, both sending on the shared tx
 * queue, while tables (each adding a DIP) are swapped: every frame leaves exactly
 * once, every connection keeps its DIP, nothing leaks. */
static void test_workers_threads(void **state)
{
    (void)state;
    enum { C = 300, FRAMES = 30000, INFLIGHT = 48, BASE = 2000 };  /* connections no other
                                                                      test has opened */
    msh.software_rx = 1;
    msh.n_txq[0] = 1;
    int version = 10;
    char dips[4096] = "{\"ip\":\"10.0.3.1\"}";
    mpublish(version++, dips);
    unsigned avail = rte_mempool_avail_count(pool);
    static struct hlb_io io[NW];
    io[0] = mio(0, sq_port);
    io[1] = mio(1, sq_port);
    static uint32_t dip_of[C];
    static uint8_t seen[C];
    memset(seen, 0, sizeof(seen));
    uint64_t rx1 = mw[1].st.rx_packets;
    atomic_store(&mstop, 0);
    unsigned lcore1 = rte_get_next_lcore(rte_get_main_lcore(), 1, 0);
    assert_int_equal(rte_eal_remote_launch(worker1_loop, &io[1], lcore1), 0);
    unsigned injected = 0, out = 0, swaps = 0;
    uint32_t rnd = 7;
    struct tframe f;
    unsigned idle = 0;                           /* polls without a frame out */
    while (out < FRAMES && idle < 2000000) {
        unsigned out_before = out;
        for (int b = 0; injected < FRAMES && injected - out < INFLIGHT && b < 16; b++) {
            rnd = rnd * 1103515245u + 12345u;
            int c = (int)((rnd >> 8) % C);
            conn_frame(&f, BASE + c, seen[c] ? HLB_TCP_ACK : HLB_TCP_SYN);
            seen[c] = 1;
            put(sq_rx, &f);
            injected++;
        }
        hlb_table_reader_online(&mslot, 0);
        mpoll(&io[0]);
        hlb_table_reader_offline(&mslot, 0);      /* publish below waits for worker 1 only */
        struct rte_mbuf *m;
        while ((m = take_ring(sq_tx)) != NULL) {
            uint32_t dst;
            int c = conn_of(m, &dst, NULL) - BASE;
            assert_true(c >= 0 && c < C);
            if (seen[c] == 1) {
                dip_of[c] = dst;
                seen[c] = 2;
            }
            assert_int_equal(dst, dip_of[c]);
            out++;
        }
        if (swaps < 40 && injected / 700 > swaps) {
            char more[32];
            snprintf(more, sizeof(more), ",{\"ip\":\"10.0.3.%u\"}", 2 + swaps++);
            strcat(dips, more);
            mpublish(version++, dips);
        }
        idle = out == out_before ? idle + 1 : 0;
    }
    atomic_store(&mstop, 1);
    rte_eal_mp_wait_lcore();
    print_message("%u frames, %u swaps, worker 1 took %llu\n", out, swaps,
                  (unsigned long long)(mw[1].st.rx_packets - rx1));
    assert_int_equal(out, FRAMES);
    assert_true(swaps >= 20);
    assert_true(mw[1].st.rx_packets - rx1 > FRAMES / 4);
    for (int k = 0; k < NW; k++) {
        assert_int_equal(mw[k].st.conn_repinned, 0);
        assert_int_equal(mw[k].st.drops[HLB_DROP_TX_FULL], 0);
    }
    assert_null(take_ring(sq_tx));
    assert_int_equal(rte_mempool_avail_count(pool), avail);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encap_through_mbufs),
        cmocka_unit_test(test_chained_mbuf_dropped),
        cmocka_unit_test(test_two_port_and_swap),
        cmocka_unit_test(test_mixed_burst_matches_reference),
        cmocka_unit_test(test_lean_drop_not_sent),
        cmocka_unit_test(test_workers_queues),
        cmocka_unit_test(test_workers_software),
        cmocka_unit_test(test_workers_threads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
