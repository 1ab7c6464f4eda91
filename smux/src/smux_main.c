/* hlb-smux: the DPDK software mux.  EAL setup, ports and their queues, the workers
 * (one per lcore: rx -> packet core -> tx, idle backoff), gateway ARP, and the
 * control API thread.  Options: options.c; the benchmark generator: bench_gen.c.
 *
 *   hlb-smux <EAL args> -- --ip A.B.C.D --gateway G.H.I.J [options]
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "bench_gen.h"
#include "cheetah.h"
#include "control.h"
#include "io_loop.h"
#include "datapath.h"
#include "log.h"
#include "options.h"
#include "sf_owners.h"
#include "table_swap.h"

#define NB_MBUF 16383
#define NB_RXD 1024
#define NB_TXD 1024

static volatile sig_atomic_t stop_flag;
static uint64_t tsc_hz;
static uint64_t tsc_start;

/* /health answers 503 "stalled" once the worker loop has not turned for this
 * long.  The FRR supervisor withdraws the SMux's routes on it, and must do so
 * within 1 s: 0.3 s leaves it 0.7 s.  It must stay well above the longest idle
 * sleep (--idle-sleep-us, at most 0.1 s) and the heartbeat period under
 * traffic (HEARTBEAT_PERIOD_MS). */
#define HEALTH_TIMEOUT_MS 300
/* Under traffic the loop refreshes the heartbeat at most this often (one
 * clock read per period, not per burst). */
#define HEARTBEAT_PERIOD_MS 64

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Queues of port `port`: nrxq rx queues, spread by the flow hash when the device
 * hashes (RSS; virtual PMDs that steer by themselves, af_packet and af_xdp, report
 * no RSS offload and are left as they are), and ntxq tx queues. */
static int port_init(uint16_t port, struct rte_mempool *pool, uint16_t nrxq, uint16_t ntxq)
{
    struct rte_eth_conf conf;
    struct rte_eth_dev_info info;
    memset(&conf, 0, sizeof(conf));
    int rc = rte_eth_dev_info_get(port, &info);
    if (rc < 0)
        return rc;
    uint64_t rss = (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
                   info.flow_type_rss_offloads;
    if (nrxq > 1 && rss) {
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
        conf.rx_adv_conf.rss_conf.rss_hf = rss;
    }
    uint16_t nrx = NB_RXD, ntx = NB_TXD;
    if ((rc = rte_eth_dev_configure(port, nrxq, ntxq, &conf)) < 0)
        return rc;
    rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
    for (uint16_t q = 0; q < nrxq; q++)
        if ((rc = rte_eth_rx_queue_setup(port, q, nrx, rte_eth_dev_socket_id(port), NULL,
                                         pool)) < 0)
            return rc;
    for (uint16_t q = 0; q < ntxq; q++)
        if ((rc = rte_eth_tx_queue_setup(port, q, ntx, rte_eth_dev_socket_id(port), NULL)) < 0)
            return rc;
    if ((rc = rte_eth_dev_start(port)) < 0)
        return rc;
    /* Not promiscuous: a NIC then drops unicast frames for other hosts' MACs, so a
     * frame flooded on a shared segment is not encapsulated by every SMux on it.
     * (af_packet/af_xdp on a veth see every frame either way; the packet core does
     * not check the destination MAC: README "Status and limits".) */
    return 0;
}

/* ---- metrics from the ethdev layer --------------------------------------------------- */
struct port_set {
    uint16_t ids[HLB_MAX_PORTS];
    int n;
};

static void port_metrics(FILE *f, void *arg)
{
    struct port_set *ps = arg;
    fprintf(f, "# HELP hlb_smux_port_packets_total Frames per port and direction (ethdev).\n"
               "# TYPE hlb_smux_port_packets_total counter\n");
    for (int i = 0; i < ps->n; i++) {
        struct rte_eth_stats s;
        if (rte_eth_stats_get(ps->ids[i], &s) != 0)
            continue;
        fprintf(f, "hlb_smux_port_packets_total{port=\"%d\",dir=\"rx\"} %" PRIu64 "\n", i,
                s.ipackets);
        fprintf(f, "hlb_smux_port_packets_total{port=\"%d\",dir=\"tx\"} %" PRIu64 "\n", i,
                s.opackets);
        fprintf(f, "hlb_smux_port_packets_total{port=\"%d\",dir=\"rx_missed\"} %" PRIu64 "\n", i,
                s.imissed);
    }
}

/* EAL leaves /var/run/dpdk/<prefix> behind even with --no-shconf: remove it. */
static void remove_runtime_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static char runtime_dir[PATH_MAX];

/* Exit path after EAL init: release EAL and its runtime directory. */
static int eal_exit(int code)
{
    rte_eal_cleanup();
    remove_runtime_dir(runtime_dir);
    return code;
}

/* The whole file, or NULL with errno set (a directory opens but does not read). */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, r;
    do {
        if (n + 65536 > cap) {
            cap = cap ? cap * 2 : 131072;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb;
        }
        r = fread(buf + n, 1, cap - n, f);
        n += r;
    } while (r > 0);
    if (ferror(f)) {
        int e = errno;
        free(buf);
        fclose(f);
        errno = e;
        return NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* The table a previous run kept (--table-state). A missing file is a first start; one
 * that cannot be read or is refused is logged and left for the controller to replace:
 * the SMux starts with what it has rather than not at all. */
static void load_table_state(struct hlb_control *ctl, const char *path)
{
    size_t len;
    char *text = read_file(path, &len);
    if (!text) {
        if (errno != ENOENT)
            HLB_LOG_ERR("--table-state %s: cannot read: %s; starting without it", path, strerror(errno));
        return;
    }
    struct hlb_table_error err = {{0}, {0}};
    if (hlb_control_apply_initial(ctl, text, len, &err) != 0)
        HLB_LOG_ERR("--table-state %s: not used: %s: %s", path, err.field, err.reason);
    else
        HLB_LOG_INFO("--table-state %s: running the kept table until the controller sends one", path);
    free(text);
}

/* ---- the workers ----------------------------------------------------------------- */

/* One worker: what its lcore owns.  Each on cache lines of its own. */
struct worker_ctx {
    struct hlb_worker w;
    struct hlb_io io;
    struct bench_gen gen;
    unsigned lcore;
    double cpu_seconds;               /* CPU time of the loop, set when it ends */
    /* For --exit-when-idle (worker 0 reads them all): ms of the last frame, and
     * whether any came. */
    _Atomic uint32_t last_rx_ms;
    _Atomic int seen_traffic;
} __attribute__((aligned(64)));

/* Set before the workers start, read-only while they run. */
static struct {
    const struct options *o;
    struct hlb_table_slot slot;
    struct hlb_io_shared sh;
    struct rte_mempool *pool;
    struct port_set ports;
    unsigned n_workers;
    struct worker_ctx *ctx;           /* [n_workers] */
    uint64_t ms_per_tsc_q64;          /* 2^64 / (TSC cycles per ms) */
    uint64_t run_until;               /* TSC, 0: no limit */
    uint64_t loop_cycles;             /* worker 0's loop, for the exit line */
} run;

static inline uint32_t tsc_ms(uint64_t tsc)
{
    /* Milliseconds from TSC cycles by a multiply-high with 2^64 / (cycles per ms): a
     * 64-bit division per poll cost about a cycle per packet at full rate. */
    return (uint32_t)(((unsigned __int128)(tsc - tsc_start) * run.ms_per_tsc_q64) >> 64);
}

/* Worker 0's extra duties, between its polls: the gateway's ARP, and the end of a test
 * run once every worker has been idle for --exit-when-idle. */
static void worker0_duties(struct worker_ctx *x, uint32_t now, uint32_t *next_arp)
{
    const struct options *o = run.o;
    struct hlb_worker *w = &x->w;
    /* Gateway resolution: every second until known, then refresh every 30 s. */
    if (w->cfg.gw_ip && !w->cfg.gw_static && (int32_t)(now - *next_arp) >= 0) {
        struct rte_mbuf *m = rte_pktmbuf_alloc(run.pool);
        uint16_t out = w->cfg.two_port ? 1 : 0;
        if (m) {
            uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, 60);
            hlb_build_arp_request(&w->cfg, out, d);
            if (hlb_io_tx(&x->io, out, &m, 1) == 1)
                w->st.arp_requests_sent++;
            else
                rte_pktmbuf_free(m);
        }
        *next_arp = now + (w->cfg.gw_known ? 30000 : 1000);
    }
    if (o->exit_when_idle_ms) {
        /* Idle: no worker took a frame for that long, and no inbox holds one (a
         * worker that has not run for a while must still get its frames). */
        int seen = 0, idle = 1;
        for (unsigned k = 0; k < run.n_workers; k++) {
            struct worker_ctx *y = &run.ctx[k];
            for (int pi = 0; run.sh.software_rx && k > 0 && pi < run.ports.n; pi++)
                idle &= rte_ring_empty(run.sh.inbox[k][pi]);
            if (!atomic_load_explicit(&y->seen_traffic, memory_order_relaxed))
                continue;
            seen = 1;
            idle &= (uint32_t)(now - atomic_load_explicit(&y->last_rx_ms, memory_order_relaxed)) >
                    o->exit_when_idle_ms;
        }
        if (seen && idle)
            stop_flag = 1;
    }
}

static int worker_loop(void *arg)
{
    struct worker_ctx *x = arg;
    const struct options *o = run.o;
    struct hlb_worker *w = &x->w;
    uint32_t next_arp = 0;
    uint32_t idle_polls = 0, sleep_us = 1, sweep_tick = 0, last_beat = 0, table_gen = 0;
    struct timespec cpu0, cpu1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
    uint64_t loop_start = rte_rdtsc();
    hlb_table_reader_online(&run.slot, w->id);

    while (!stop_flag) {
        uint64_t tsc = rte_rdtsc();
        uint32_t now = tsc_ms(tsc);
        hlb_sf_worker_drain(w, now);  /* the host agents' close and adopt reports (control.c) */
        struct hlb_vip_table *t = hlb_table_enter(&run.slot, w->id);
        if (__builtin_expect(t->gen != table_gen, 0)) {
            /* A new table: the clears and holds of hints the control thread asked
             * before publishing it apply before its first packet at the latest (a
             * clear may also apply at the drain above, under the old table: safe,
             * sf_owners.h). */
            table_gen = t->gen;
            hlb_sf_worker_drain(w, now);
        }
        unsigned total_rx = hlb_io_poll(&x->io, t, now);
        hlb_table_quiesce(&run.slot, w->id, t);

        if (total_rx) {
            idle_polls = 0;
            sleep_us = 1;
            if (o->exit_when_idle_ms) {
                atomic_store_explicit(&x->last_rx_ms, now, memory_order_relaxed);
                atomic_store_explicit(&x->seen_traffic, 1, memory_order_relaxed);
            }
            /* Incremental expiry; skipped while the table is empty so an unused
             * table's pages are never touched. */
            if (w->ct->st.entries && (++sweep_tick & 7) == 0)
                hlb_conn_sweep(w->ct, now, 1);
            if ((sweep_tick & 7) == 0)
                hlb_sf_worker_sweep(w, now, 4);
        } else {
            if (w->ct->st.entries)
                hlb_conn_sweep(w->ct, now, 16);
            hlb_sf_worker_sweep(w, now, 64);
            /* Back off: after a run of empty polls, sleep 1, 2, 4 ... idle_sleep_us. */
            if (o->idle_sleep_us && ++idle_polls > 256) {
                /* tv_nsec must stay below 1e9 (else EINVAL and no sleep at all);
                 * idle_sleep_us <= 100000 (1e5), so the doubling cannot wrap. */
                struct timespec ts = {sleep_us / 1000000, (long)(sleep_us % 1000000) * 1000};
                nanosleep(&ts, NULL);
                if (sleep_us < o->idle_sleep_us)
                    sleep_us = sleep_us * 2 > o->idle_sleep_us ? o->idle_sleep_us : sleep_us * 2;
            }
        }
        /* Elapsed time, not "now & 63 == 0": a worker descheduled during that
         * one millisecond would skip a whole period, and a few skips in a row
         * would read as a stall under HEALTH_TIMEOUT_MS.  Not on every empty poll
         * either: a worker waiting on its inbox polls empty at full speed, and the
         * clock read (a system clock, for /health to compare) would be most of it. */
        if (now - last_beat >= HEARTBEAT_PERIOD_MS) {
            atomic_store_explicit(&w->heartbeat_ms, mono_ms(), memory_order_relaxed);
            last_beat = now;
        }
        if (w->id == 0)
            worker0_duties(x, now, &next_arp);
        if (run.run_until && tsc > run.run_until)
            break;
    }
    if (w->id == 0)
        run.loop_cycles = rte_rdtsc() - loop_start;
    hlb_table_reader_offline(&run.slot, w->id);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
    x->cpu_seconds = (double)(cpu1.tv_sec - cpu0.tv_sec) +
                     (double)(cpu1.tv_nsec - cpu0.tv_nsec) * 1e-9;
    return 0;
}

/* Each port's queues for n workers (rx queue k and tx queue k for worker k, tx queues
 * shared under a lock where a port has fewer), or one rx queue and the software
 * distribution stage.  Fills run.sh. */
static int ports_init(int software, struct hlb_worker *const *wp)
{
    struct hlb_io_shared *sh = &run.sh;
    unsigned n = run.n_workers;
    sh->n_workers = n;
    sh->software_rx = n > 1 && software;
    for (int i = 0; i < run.ports.n; i++) {
        struct rte_eth_dev_info info;
        uint16_t pid = run.ports.ids[i];
        int rc = rte_eth_dev_info_get(pid, &info);
        if (rc < 0) {
            HLB_LOG_ERR("port %u: %s", pid, rte_strerror(-rc));
            return -1;
        }
        uint16_t nrxq = sh->software_rx ? 1 : (uint16_t)n;
        uint16_t ntxq = (uint16_t)(info.max_tx_queues < n ? info.max_tx_queues : n);
        sh->n_txq[i] = ntxq;
        for (unsigned q = 0; q < ntxq; q++)
            rte_spinlock_init(&sh->tx_lock[i][q]);
        if ((rc = port_init(pid, run.pool, nrxq, ntxq)) < 0) {
            HLB_LOG_ERR("port %u init (%u rx, %u tx queues) failed: %s", pid, nrxq, ntxq,
                        rte_strerror(-rc));
            return -1;
        }
        struct rte_ether_addr mac;
        rte_eth_macaddr_get(pid, &mac);
        for (unsigned k = 0; k < n; k++)
            memcpy(wp[k]->cfg.port_mac[i], mac.addr_bytes, 6);
        for (unsigned k = 1; sh->software_rx && k < n; k++) {
            char name[RTE_RING_NAMESIZE];
            snprintf(name, sizeof(name), "hlb_inbox_%u_%d", k, i);
            sh->inbox[k][i] = rte_ring_create(name, 1024, rte_socket_id(),
                                              RING_F_SP_ENQ | RING_F_SC_DEQ);
            if (!sh->inbox[k][i]) {
                HLB_LOG_ERR("inbox ring %s: %s", name, rte_strerror(rte_errno));
                return -1;
            }
        }
    }
    return 0;
}

/* Software distribution is needed when some port cannot give every worker an rx
 * queue of its own. */
static int ports_need_software(unsigned n)
{
    for (int i = 0; i < run.ports.n; i++) {
        struct rte_eth_dev_info info;
        if (rte_eth_dev_info_get(run.ports.ids[i], &info) < 0 || info.max_rx_queues < n)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int eal_args = rte_eal_init(argc, argv);
    if (eal_args < 0) {
        fprintf(stderr, "EAL init failed: %s\n", rte_strerror(rte_errno));
        return 1;
    }
    snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
    argc -= eal_args;
    argv += eal_args;
    static struct options o;
    int prc = hlb_parse_options(argc, argv, &o);
    if (prc != 0)
        return eal_exit(prc > 0 ? 0 : 2);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    tsc_hz = rte_get_tsc_hz();
    tsc_start = rte_rdtsc();
    run.o = &o;
    run.ms_per_tsc_q64 = (uint64_t)(((unsigned __int128)1 << 64) / (tsc_hz / 1000));

    /* One worker per lcore: the main lcore is worker 0. */
    unsigned n = rte_lcore_count();
    if (n > HLB_MAX_WORKERS) {
        HLB_LOG_ERR("%u lcores given, at most %d workers", n, HLB_MAX_WORKERS);
        return eal_exit(1);
    }
    run.n_workers = n;
    int two_port = strcmp(o.mode, "two-port") == 0;
    run.ports.n = two_port ? 2 : 1;
    uint16_t pid, found = 0;
    RTE_ETH_FOREACH_DEV(pid) {
        if (found < run.ports.n)
            run.ports.ids[found] = pid;
        found++;
    }
    if (found < run.ports.n) {
        HLB_LOG_ERR("mode %s needs %d ports, found %u (give --vdev arguments)", o.mode,
                    run.ports.n, found);
        return eal_exit(1);
    }
    int software = o.rx_distribution ? strcmp(o.rx_distribution, "software") == 0
                                     : ports_need_software(n);
    if (!software && ports_need_software(n)) {
        HLB_LOG_ERR("--rx-distribution queues: a port has fewer rx queues than the %u workers "
                    "(give the PMD more, e.g. af_packet qpairs=%u, or use software)", n, n);
        return eal_exit(1);
    }
    /* Every queue's descriptors, every lcore's mempool cache, the inboxes, with room
     * to spare; a power of two minus one, as the mempool prefers. */
    unsigned want = (unsigned)run.ports.n * n * (NB_RXD + NB_TXD) + n * (256 + 2 * HLB_RX_BURST) +
                    (software ? n * (unsigned)run.ports.n * 1024 : 0) + 2048;
    unsigned nb_mbuf = NB_MBUF;
    while (nb_mbuf < want)
        nb_mbuf = nb_mbuf * 2 + 1;
    run.pool = rte_pktmbuf_pool_create("hlb_mbufs", nb_mbuf, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                       rte_socket_id());
    if (!run.pool) {
        HLB_LOG_ERR("mbuf pool of %u: %s", nb_mbuf, rte_strerror(rte_errno));
        return eal_exit(1);
    }

    run.ctx = aligned_alloc(64, n * sizeof(*run.ctx));
    if (!run.ctx) {
        HLB_LOG_ERR("out of memory");
        return eal_exit(1);
    }
    memset(run.ctx, 0, n * sizeof(*run.ctx));
    static struct hlb_worker *wp[HLB_MAX_WORKERS];
    /* The connection table is shared out: each worker's holds its own flows. */
    uint64_t capacity = (o.conn_capacity + n - 1) / n;
    unsigned lcore = rte_get_main_lcore();
    for (unsigned k = 0; k < n; k++) {
        struct worker_ctx *x = &run.ctx[k];
        struct hlb_worker *w = &x->w;
        wp[k] = w;
        x->lcore = lcore;
        lcore = rte_get_next_lcore(lcore, 1, 0);
        w->id = (uint16_t)k;
        w->cfg.self_ip = o.self_ip;
        w->cfg.gw_ip = o.gw_ip;
        w->cfg.mtu = o.mtu;
        w->cfg.outer_ttl = o.ttl;
        w->cfg.two_port = (uint8_t)two_port;
        if (o.gw_mac_set) {
            memcpy(w->cfg.gw_mac, o.gw_mac, 6);
            w->cfg.gw_known = w->cfg.gw_static = 1;
        }
        /* The connection table exists whenever pinning could be asked for: the
         * default is on, or a VIP may say connTable:true. */
        w->ct = hlb_conn_table_create(capacity, &o.timeouts);
        if (!w->ct) {
            HLB_LOG_ERR("cannot allocate a connection table of %" PRIu64 " slots", capacity);
            return eal_exit(1);
        }
        w->sf = hlb_sf_create(o.stateful_partitions, o.stateful_idle_ms);
        if (!w->sf) {
            HLB_LOG_ERR("cannot allocate %u stateful partitions", o.stateful_partitions);
            return eal_exit(1);
        }
        /* A restarted owner's host agents re-report its connections: their indexes
         * stay free for them meanwhile (COOKIE-SPEC §7, "Adoption"). */
        if (o.stateful_adopt_grace_ms)
            hlb_sf_hold_hints(w->sf, o.stateful_adopt_grace_ms);
        w->rng = 0x9e3779b97f4a7c15ull * (k + 1);
        atomic_store(&w->heartbeat_ms, mono_ms());
    }
    if (ports_init(software, wp) != 0)
        return eal_exit(1);
    for (unsigned k = 0; k < n; k++) {
        struct hlb_io *io = &run.ctx[k].io;
        io->w = wp[k];
        io->n_ports = run.ports.n;
        memcpy(io->port_ids, run.ports.ids, sizeof(io->port_ids));
        io->sh = n > 1 ? &run.sh : NULL;
        io->raw_forward = o.bench_raw_forward;   /* without a generator: rx and tx alone */
    }

    /* Legitimate (ARP and ping are answered, a gateway may be added by a restart),
     * but nothing is forwarded: say so. */
    if (!o.gw_ip && !o.gw_mac_set)
        HLB_LOG_WARN("neither --gateway nor --gateway-mac given: every packet to a VIP "
                     "will be dropped (no_gateway)");

    hlb_table_slot_init(&run.slot, hlb_table_empty(), n);
    struct hlb_control_config cc = {
        .listen_addr = o.mgmt_addr, .listen_port = o.mgmt_port, .slot = &run.slot,
        .workers = wp, .now_ms = mono_ms, .health_timeout_ms = HEALTH_TIMEOUT_MS,
        .table_opt = {.default_pin = o.conn_table, .self_ip = o.self_ip}, .extra_metrics = port_metrics,
        .extra_metrics_arg = &run.ports, .tls_cert = o.tls_cert, .tls_key = o.tls_key,
        .tls_ca = o.tls_ca, .table_state = o.table_state,
        .adopt_grace_ms = o.stateful_adopt_grace_ms};
    struct hlb_control *ctl = hlb_control_start(&cc);
    if (!ctl)
        return eal_exit(1);
    if (o.table_file) {
        size_t len;
        char *text = read_file(o.table_file, &len);
        struct hlb_table_error err = {{0}, {0}};
        if (!text) {
            HLB_LOG_ERR("table %s: cannot read: %s", o.table_file, strerror(errno));
            return eal_exit(1);
        }
        if (hlb_control_apply_initial(ctl, text, len, &err) != 0) {
            HLB_LOG_ERR("table %s rejected: %s: %s", o.table_file, err.field, err.reason);
            free(text);
            return eal_exit(1);
        }
        free(text);
    }
    if (o.table_state)
        load_table_state(ctl, o.table_state);
    const char *dist = n == 1 ? "none" : run.sh.software_rx ? "software" : "queues";
    printf("{\"event\":\"ready\",\"mgmtPort\":%u,\"ports\":%d,\"mode\":\"%s\",\"workers\":%u,"
           "\"rxDistribution\":\"%s\",\"macs\":[",
           hlb_control_port(ctl), run.ports.n, o.mode, n, dist);
    for (int i = 0; i < run.ports.n; i++) {
        const uint8_t *m = wp[0]->cfg.port_mac[i];
        printf("%s\"%02x:%02x:%02x:%02x:%02x:%02x\"", i ? "," : "", m[0], m[1], m[2], m[3], m[4],
               m[5]);
    }
    printf("]}\n");
    fflush(stdout);

    int bench = o.bench_flows || o.bench_new_flows;
    for (unsigned k = 0; bench && k < n; k++) {
        struct worker_ctx *x = &run.ctx[k];
        /* The worker not started yet: the table's start-up requests (a clear of each
         * owner id it gives this SMux) applied now, as its first drain would, so that
         * they do not free the entries the generator's flows get below. */
        hlb_sf_worker_drain(wp[k], tsc_ms(rte_rdtsc()));
        bench_gen_init(&x->gen, &o, wp[k]->cfg.port_mac[0], k, n, hlb_table_acquire(&run.slot),
                       wp[k]->sf, tsc_ms(rte_rdtsc()));
        x->io.rx_hook = bench_gen_hook;
        x->io.rx_hook_arg = &x->gen;
    }
    if (bench)                        /* the same template for every worker's frames */
        rte_mempool_obj_iter(run.pool, bench_gen_fill_one, &run.ctx[0].gen);
    if (o.bench_prefill)
        bench_prefill(wp, n, hlb_table_acquire(&run.slot), &o);

    uint64_t start = rte_rdtsc();
    run.run_until = o.run_seconds > 0 ? start + (uint64_t)(o.run_seconds * tsc_hz) : 0;
    for (unsigned k = 1; k < n; k++)
        rte_eal_remote_launch(worker_loop, &run.ctx[k], run.ctx[k].lcore);
    worker_loop(&run.ctx[0]);
    stop_flag = 1;                    /* worker 0 stopped (run time, idle exit): all stop */
    rte_eal_mp_wait_lcore();

    /* Final statistics as one JSON line (the benchmark and tests read it). */
    struct hlb_workers_total tot;
    hlb_workers_total(wp, n, &tot);
    double secs = (double)run.loop_cycles / (double)tsc_hz, cpu_secs = 0;
    for (unsigned k = 0; k < n; k++)
        cpu_secs += run.ctx[k].cpu_seconds;
    uint64_t drops = 0;
    for (int r = 0; r < HLB_DROP_MAX; r++)
        drops += tot.st.drops[r];
    printf("{\"event\":\"exit\",\"seconds\":%.6f,\"cpuSeconds\":%.6f,\"rx\":%" PRIu64 ",\"forwarded\":%" PRIu64
           ",\"drops\":%" PRIu64 ",\"mpps\":%.3f,\"cyclesPerPacket\":%.1f,\"connEntries\":%" PRIu64
           ",\"connInserts\":%" PRIu64 ",\"connInsertFailures\":%" PRIu64
           ",\"connEvictDisplaced\":%" PRIu64 ",\"connHits\":%" PRIu64 ",\"connCacheHits\":%" PRIu64
           ",\"tscHz\":%" PRIu64 ",\"workers\":%u,\"workerRx\":[",
           secs, cpu_secs, tot.st.rx_packets, tot.st.fwd_packets, drops,
           secs > 0 ? (double)tot.st.rx_packets / secs / 1e6 : 0.0,
           tot.st.rx_packets ? (double)run.loop_cycles * n / (double)tot.st.rx_packets : 0.0,
           tot.ct.entries, tot.ct.inserts, tot.ct.insert_failures, tot.ct.evict_displaced,
           tot.st.conn_hits, tot.fc_hits, tsc_hz, n);
    for (unsigned k = 0; k < n; k++)
        printf("%s%" PRIu64, k ? "," : "", wp[k]->st.rx_packets);
    printf("],\"workerCpuSeconds\":[");
    for (unsigned k = 0; k < n; k++)
        printf("%s%.6f", k ? "," : "", run.ctx[k].cpu_seconds);
    printf("],\"dropReasons\":{");
    int first = 1;
    for (int r = 0; r < HLB_DROP_MAX; r++)
        if (tot.st.drops[r]) {
            printf("%s\"%s\":%" PRIu64, first ? "" : ",", hlb_drop_names[r], tot.st.drops[r]);
            first = 0;
        }
    printf("},\"cookie\":{\"decoded\":%" PRIu64 ",\"invalid\":%" PRIu64 ",\"fallback\":%" PRIu64,
           tot.st.ck_decoded, tot.st.drops[HLB_DROP_BAD_COOKIE], tot.st.ck_fallback);
    for (int m = 0; m < HLB_MECH_MAX; m++)
        printf(",\"syn_%s\":%" PRIu64, hlb_mechanism_names[m], tot.st.ck_syns[m]);
    printf(",\"quic_decoded\":%" PRIu64 ",\"quic_initial\":%" PRIu64 "}}\n", tot.st.quic_decoded,
           tot.st.quic_initial);
    fflush(stdout);

    hlb_control_stop(ctl);
    for (int i = 0; i < run.ports.n; i++) {
        rte_eth_dev_stop(run.ports.ids[i]);
        rte_eth_dev_close(run.ports.ids[i]);
    }
    hlb_table_free(hlb_table_acquire(&run.slot));
    for (unsigned k = 0; k < n; k++) {
        hlb_conn_table_free(wp[k]->ct);
        hlb_sf_worker_free(wp[k]);
        free(run.ctx[k].gen.chunk1);
        free(run.ctx[k].gen.tsecr);
    }
    free(run.ctx);
    return eal_exit(0);
}
