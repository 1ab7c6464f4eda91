/* hlb-smux: the DPDK software mux.  EAL setup, ports, the worker loop (rx -> packet
 * core -> tx), gateway ARP, idle backoff, and the control API thread.
 *
 *   hlb-smux <EAL args> -- --ip A.B.C.D --gateway G.H.I.J [options]
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <smmintrin.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "control.h"
#include "io_loop.h"
#include "datapath.h"
#include "log.h"
#include "table_swap.h"

#define NB_MBUF 16383
#define NB_RXD 1024
#define NB_TXD 1024

struct options {
    const char *mode;                 /* one-arm | two-port */
    uint32_t self_ip, gw_ip;
    uint8_t gw_mac[6];
    int gw_mac_set;
    uint16_t mtu;
    uint8_t ttl;
    const char *mgmt_addr;
    uint16_t mgmt_port;
    const char *table_file;
    int conn_table;
    uint64_t conn_capacity;
    struct hlb_conn_timeouts timeouts;
    const char *rx_distribution;      /* NULL (by the ports), "queues" or "software" */
    uint32_t idle_sleep_us;           /* 0: busy poll */
    uint32_t exit_when_idle_ms;       /* tests: exit once traffic stopped this long */
    double run_seconds;               /* stop after this long (0 = until signal) */
    /* benchmark generator (fills rx mbufs of a net_null port with real packets) */
    uint32_t bench_flows;
    int bench_new_flows;
    int bench_raw_forward;
    uint32_t bench_prefill;
    uint32_t bench_vip;
    uint16_t bench_port;
};

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

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hlb-smux <EAL args> -- --ip ADDR [options]\n"
            "  --ip ADDR             SMux address (outer source, ARP, ICMP)\n"
            "  --gateway ADDR        next hop for encapsulated packets (ARP-resolved)\n"
            "  --gateway-mac MAC     static gateway MAC (no ARP), as 02:00:00:00:00:01\n"
            "  --mode one-arm|two-port   (default one-arm; two-port sends out of port 1)\n"
            "  --mtu N               egress IP MTU, 576..65535 (default 1500)\n"
            "  --ttl N               outer TTL, 1..255 (default 64)\n"
            "  --mgmt ADDR:PORT      control API address (default 127.0.0.1:9180; port 0 = any)\n"
            "  --table FILE          initial VIP table (JSON, same schema as PUT /table)\n"
            "  --conn-table on|off   default connection pinning for VIPs (default on)\n"
            "  --conn-capacity N     connection-table slots, 1..2147483648 (default 1048576),\n"
            "                        shared out among the workers\n"
            "  --rx-distribution queues|software\n"
            "                        how flows reach the workers (one per EAL lcore): rx queue k\n"
            "                        of every port for worker k, or worker 0 hands them out\n"
            "                        (default: queues when every port has one per worker)\n"
            "  --tcp-syn-timeout S --tcp-timeout S --tcp-fin-timeout S --udp-timeout S\n"
            "                        idle timeouts in seconds, 0.001..1000000\n"
            "  --idle-sleep-us N     sleep up to N us when polls come back empty, 0..100000\n"
            "                        (default 200, 0 = busy poll)\n"
            "  --exit-when-idle MS   exit MS after the last packet, 0..86400000 (tests)\n"
            "  --run-seconds S       exit after S seconds, 0..1000000 (0 = until a signal)\n"
            "  --bench-flows N       benchmark: overwrite rx frames with TCP packets of N flows\n"
            "  --bench-new-flows     benchmark: every packet a new connection (SYN)\n"
            "  --bench-prefill N     benchmark: pin N connections before starting\n"
            "  --bench-vip ADDR:PORT benchmark: destination of generated packets\n"
            "  --bench-raw-forward   benchmark baseline: rx/tx (and the generator, with\n"
            "                        --bench-flows) only, no packet core\n"
            "  -h, --help            this text\n");
}

static int parse_ip(const char *s, uint32_t *out)
{
    struct in_addr a;
    if (inet_pton(AF_INET, s, &a) != 1)
        return -1;
    *out = a.s_addr;
    return 0;
}

/* Unicast host address: not 0.0.0.0 (which also means "unset"), not multicast or
 * broadcast. */
static int parse_host_ip(const char *s, uint32_t *out)
{
    uint32_t a;
    if (parse_ip(s, &a))
        return -1;
    uint32_t h = ntohl(a);
    if (h == 0 || h >= 0xe0000000u)
        return -1;
    *out = a;
    return 0;
}

/* A whole string of decimal digits (strtoull alone takes signs, spaces and trailing
 * text, and turns "-1" into its largest value). */
static int parse_u64(const char *s, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno)
        return -1;
    *out = v;
    return 0;
}

/* Exactly six bytes of two hex digits each, unicast. */
static int parse_mac(const char *s, uint8_t mac[6])
{
    if (strlen(s) != 17)
        return -1;
    for (int k = 0; k < 6; k++) {
        const char *p = s + 3 * k;
        if (!isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1]) ||
            (k < 5 && p[2] != ':'))
            return -1;
        mac[k] = (uint8_t)strtoul((char[3]){p[0], p[1], 0}, NULL, 16);
    }
    return 0;
}

static int parse_addr_port(const char *s, char *addr, size_t n, uint16_t *port)
{
    const char *colon = strrchr(s, ':');
    uint64_t p;
    if (!colon || colon == s || (size_t)(colon - s) >= n || parse_u64(colon + 1, &p) ||
        p > 65535)
        return -1;
    memcpy(addr, s, (size_t)(colon - s));
    addr[colon - s] = 0;
    *port = (uint16_t)p;
    return 0;
}

/* Prints "invalid value for --NAME: VALUE (reason)" for the option being parsed. */
static int bad_value(const struct option *opt, const char *value, const char *fmt, ...)
{
    char why[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    fprintf(stderr, "invalid value for --%s: %s (%s)\n", opt->name, value, why);
    return -1;
}

/* An integer option in lo..hi. */
static int opt_uint(const struct option *opt, const char *s, uint64_t lo, uint64_t hi,
                    uint64_t *out)
{
    uint64_t v;
    if (parse_u64(s, &v) || v < lo || v > hi)
        return bad_value(opt, s, "must be an integer %" PRIu64 "..%" PRIu64, lo, hi);
    *out = v;
    return 0;
}

/* A number option in lo..hi (strtod alone takes "nan", "inf" and trailing text). */
static int opt_double(const struct option *opt, const char *s, double lo, double hi,
                      double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v >= lo && v <= hi))
        return bad_value(opt, s, "must be a number %g..%g", lo, hi);
    *out = v;
    return 0;
}

/* A timeout in seconds, kept in ms: at least 1 ms, and at most 1e6 s so that the
 * wrap-safe ms clock compares of the connection table (2^31 ms) hold. */
static int opt_timeout(const struct option *opt, const char *s, uint32_t *ms)
{
    double v = 0;
    if (opt_double(opt, s, 0.001, 1e6, &v))
        return -1;
    *ms = (uint32_t)(v * 1000 + 0.5);
    return 0;
}

/* Returns 0 to run, 1 after --help, -1 on an error (message printed). */
static int parse_options(int argc, char **argv, struct options *o)
{
    static char mgmt_addr[64] = "127.0.0.1";
    static const struct option lo[] = {
        {"ip", 1, 0, 'i'}, {"gateway", 1, 0, 'g'}, {"gateway-mac", 1, 0, 'G'},
        {"mode", 1, 0, 'm'}, {"mtu", 1, 0, 'M'}, {"ttl", 1, 0, 'T'}, {"mgmt", 1, 0, 'a'},
        {"table", 1, 0, 't'}, {"conn-table", 1, 0, 'c'}, {"conn-capacity", 1, 0, 'C'},
        {"tcp-syn-timeout", 1, 0, 1}, {"tcp-timeout", 1, 0, 2}, {"tcp-fin-timeout", 1, 0, 3},
        {"udp-timeout", 1, 0, 4}, {"idle-sleep-us", 1, 0, 5}, {"exit-when-idle", 1, 0, 6},
        {"run-seconds", 1, 0, 7}, {"bench-flows", 1, 0, 8}, {"bench-new-flows", 0, 0, 9},
        {"bench-prefill", 1, 0, 10}, {"bench-vip", 1, 0, 11}, {"bench-raw-forward", 0, 0, 12},
        {"rx-distribution", 1, 0, 13}, {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    *o = (struct options){.mode = "one-arm", .mtu = 1500, .ttl = 64, .mgmt_addr = mgmt_addr,
                          .mgmt_port = 9180, .conn_table = 1, .conn_capacity = 1u << 20,
                          .timeouts = {HLB_CONN_DEFAULT_SYN_MS, HLB_CONN_DEFAULT_EST_MS,
                                       HLB_CONN_DEFAULT_FIN_MS, HLB_CONN_DEFAULT_UDP_MS},
                          .idle_sleep_us = 200};
    int c, li = -1;
    char addr[64];
    uint64_t v;
    while ((c = getopt_long(argc, argv, "h", lo, &li)) != -1) {
        /* The option's name from the table: right for "--opt v" and "--opt=v". */
        const struct option *opt = li >= 0 ? &lo[li] : NULL;
        const char *arg = optarg;
        li = -1;
        int bad = 0;
        switch (c) {
        case 'i':
            if (parse_host_ip(arg, &o->self_ip))
                bad = bad_value(opt, arg, "must be a unicast IPv4 address");
            break;
        case 'g':
            if (parse_host_ip(arg, &o->gw_ip))
                bad = bad_value(opt, arg, "must be a unicast IPv4 address");
            break;
        case 'G':
            if (parse_mac(arg, o->gw_mac) || (o->gw_mac[0] & 1))
                bad = bad_value(opt, arg, "must be a unicast MAC of six hex bytes, "
                                          "as 02:00:00:00:00:01");
            o->gw_mac_set = 1;
            break;
        case 'm':
            if (strcmp(arg, "one-arm") && strcmp(arg, "two-port"))
                bad = bad_value(opt, arg, "must be one-arm or two-port");
            o->mode = arg;
            break;
        case 'M':
            if (!(bad = opt_uint(opt, arg, 576, 65535, &v)))
                o->mtu = (uint16_t)v;
            break;
        case 'T':
            if (!(bad = opt_uint(opt, arg, 1, 255, &v)))
                o->ttl = (uint8_t)v;
            break;
        case 'a':
            if (parse_addr_port(arg, mgmt_addr, sizeof(mgmt_addr), &o->mgmt_port))
                bad = bad_value(opt, arg, "must be ADDR:PORT, PORT 0..65535");
            break;
        case 't': o->table_file = arg; break;
        case 'c':
            if (strcmp(arg, "on") && strcmp(arg, "off"))
                bad = bad_value(opt, arg, "must be on or off");
            o->conn_table = strcmp(arg, "on") == 0;
            break;
        case 'C':
            bad = opt_uint(opt, arg, 1, HLB_CONN_MAX_CAPACITY, &o->conn_capacity);
            break;
        case 1: bad = opt_timeout(opt, arg, &o->timeouts.syn_ms); break;
        case 2: bad = opt_timeout(opt, arg, &o->timeouts.est_ms); break;
        case 3: bad = opt_timeout(opt, arg, &o->timeouts.fin_ms); break;
        case 4: bad = opt_timeout(opt, arg, &o->timeouts.udp_ms); break;
        case 5:
            /* At most 0.1 s: the backoff doubles up to it and sleeps that long, and
             * /health calls the loop stalled after 1 s without a turn. */
            if (!(bad = opt_uint(opt, arg, 0, 100000, &v)))
                o->idle_sleep_us = (uint32_t)v;
            break;
        case 6:
            /* At most a day: compared with a wrapping 32-bit ms clock. */
            if (!(bad = opt_uint(opt, arg, 0, 86400000, &v)))
                o->exit_when_idle_ms = (uint32_t)v;
            break;
        case 7: bad = opt_double(opt, arg, 0, 1e6, &o->run_seconds); break;
        case 8:
            if (!(bad = opt_uint(opt, arg, 0, UINT32_MAX, &v)))
                o->bench_flows = (uint32_t)v;
            break;
        case 9: o->bench_new_flows = 1; break;
        case 10:
            if (!(bad = opt_uint(opt, arg, 0, UINT32_MAX, &v)))
                o->bench_prefill = (uint32_t)v;
            break;
        case 12: o->bench_raw_forward = 1; break;
        case 13:
            if (strcmp(arg, "queues") && strcmp(arg, "software"))
                bad = bad_value(opt, arg, "must be queues or software");
            o->rx_distribution = arg;
            break;
        case 11:
            if (parse_addr_port(arg, addr, sizeof(addr), &o->bench_port) ||
                parse_host_ip(addr, &o->bench_vip))
                bad = bad_value(opt, arg, "must be a unicast IPv4 ADDR:PORT");
            break;
        case 'h':
            usage(stdout);
            return 1;
        default:                        /* getopt has said what was wrong */
            usage(stderr);
            return -1;
        }
        if (bad)
            return -1;
    }
    if (optind < argc) {
        fprintf(stderr, "unexpected argument: %s\n", argv[optind]);
        return -1;
    }
    if (!o->self_ip) {
        fprintf(stderr, "--ip is required\n");
        usage(stderr);
        return -1;
    }
    if ((o->bench_flows || o->bench_new_flows) && !o->bench_vip) {
        fprintf(stderr, "%s needs --bench-vip\n",
                o->bench_flows ? "--bench-flows" : "--bench-new-flows");
        return -1;
    }
    return 0;
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

/* ---- benchmark generator ------------------------------------------------------------
 * net_null hands out mbufs without writing their data, as a NIC's DMA would have.  The
 * generator stands in for that DMA: bench_gen_fill_one() writes a 64-byte TCP frame
 * into every mbuf of the pool once, before the worker loop, and bench_gen_hook()
 * then rewrites per received frame only what differs from it: bytes 0-15, which the
 * previous trip through the SMux overwrote with its outer header (net_null never
 * touches data, and the packet core writes nothing past byte 13 of the inner frame),
 * and bytes 16-31, which hold the flow's source address and the IP checksum.  Those
 * are precomputed per flow (16 bytes each, read in sequence); with every packet a
 * new flow they are computed per packet, with the source port (bytes 32-47).  The
 * generator's cost is part of every measured figure (the baseline mode shows it). */
#define BENCH_GEN_TABLE_MAX (1u << 20)    /* flows with a precomputed chunk (16 MiB) */

struct bench_gen {
    uint8_t tmpl[64];
    uint32_t base_sum;              /* IP header sum with src-ip low half = 0 */
    uint32_t flows;                 /* this worker's */
    uint32_t next;
    uint32_t first, step;           /* this worker's flows: first, first + step, ... */
    int new_flows;
    __m128i *chunk1;                /* bytes 16-31 of this worker's flow i's frame, or NULL */
};

/* Bytes 16-31 of flow f's frame.  Flow f: source 10.<f bits 16-23>.<f bits 8-15>.<f
 * bits 0-7>, source port 1024 + f >> 24 (bytes 32-47, see bench_gen_hook). */
static inline __m128i bench_gen_chunk1(__m128i c1, uint32_t base_sum, uint32_t f)
{
    uint16_t hi = hlb_htons((uint16_t)(0x0a00 | ((f >> 16) & 0xff)));
    uint16_t lo = hlb_htons((uint16_t)(f & 0xffff));
    uint16_t cs = hlb_csum_fold(base_sum - hlb_htons(0x0a00) + hi + lo);
    __m128i x1 = _mm_insert_epi16(c1, cs, 4);                  /* bytes 24-25 */
    x1 = _mm_insert_epi16(x1, hi, 5);                           /* 26-27 */
    return _mm_insert_epi16(x1, lo, 6);                         /* 28-29 */
}

/* Worker k of n generates flows k, k + n, k + 2n, ... (of --bench-flows in all). */
static void bench_gen_init(struct bench_gen *g, const struct options *o, const uint8_t *dst_mac,
                           unsigned k, unsigned n)
{
    memset(g, 0, sizeof(*g));
    struct hlb_eth_hdr eth = {.type = hlb_htons(HLB_ETHERTYPE_IPV4)};
    memcpy(eth.dst, dst_mac, 6);
    memcpy(eth.src, (uint8_t[]){0x02, 0, 0, 0, 0, 0x01}, 6);
    struct hlb_ipv4_hdr ip = {.ver_ihl = 0x45, .tot_len = hlb_htons(50), .ttl = 64,
                              .proto = HLB_IPPROTO_TCP, .src = hlb_htonl(0x0a000000),
                              .dst = o->bench_vip};
    memcpy(g->tmpl, &eth, 14);
    memcpy(g->tmpl + 14, &ip, 20);
    uint8_t *tcp = g->tmpl + 34;
    uint16_t dport = hlb_htons(o->bench_port);
    uint16_t sport = hlb_htons(1024);
    memcpy(tcp, &sport, 2);
    memcpy(tcp + 2, &dport, 2);
    tcp[12] = 5 << 4;
    tcp[13] = o->bench_new_flows ? HLB_TCP_SYN : HLB_TCP_ACK;
    g->base_sum = hlb_csum_partial(g->tmpl + 14, 20, 0);
    uint32_t all = o->bench_flows ? o->bench_flows : 1;
    g->flows = all > k ? (all - k + n - 1) / n : 1;
    g->first = k;
    g->step = n;
    g->new_flows = o->bench_new_flows;
    if (!g->new_flows && g->flows <= BENCH_GEN_TABLE_MAX) {
        g->chunk1 = aligned_alloc(16, (size_t)g->flows * sizeof(__m128i));
        __m128i c1 = _mm_loadu_si128((const __m128i *)(g->tmpl + 16));
        for (uint32_t f = 0; g->chunk1 && f < g->flows; f++)
            g->chunk1[f] = bench_gen_chunk1(c1, g->base_sum, k + f * n);
    }
}

/* The template in one mbuf's data room, where net_null's frames start
 * (rte_mempool_obj_iter callback). */
static void bench_gen_fill_one(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
    (void)mp;
    (void)idx;
    const struct bench_gen *g = arg;
    struct rte_mbuf *m = obj;
    memcpy((uint8_t *)m->buf_addr + RTE_PKTMBUF_HEADROOM, g->tmpl, sizeof(g->tmpl));
}

static void bench_gen_hook(void *arg, struct rte_mbuf **ms, uint16_t n)
{
    struct bench_gen *g = arg;
    /* State and template in registers for the burst: stores into the frames may
     * alias anything, so reading them through g would reload them per packet. */
    uint32_t next = g->next, flows = g->flows;
    const __m128i *chunk1 = g->chunk1;
    __m128i c0 = _mm_loadu_si128((const __m128i *)g->tmpl);
    if (likely(chunk1 != NULL)) {
        for (uint16_t i = 0; i < n; i++) {
            uint8_t *d = rte_pktmbuf_mtod(ms[i], uint8_t *);
            _mm_storeu_si128((__m128i *)d, c0);
            _mm_storeu_si128((__m128i *)(d + 16), chunk1[next]);
            if (++next == flows)
                next = 0;
        }
        g->next = next;
        return;
    }
    uint32_t base_sum = g->base_sum, first = g->first, step = g->step;
    int new_flows = g->new_flows;
    __m128i c1 = _mm_loadu_si128((const __m128i *)(g->tmpl + 16));
    __m128i c2 = _mm_loadu_si128((const __m128i *)(g->tmpl + 32));
    for (uint16_t i = 0; i < n; i++) {
        uint8_t *d = rte_pktmbuf_mtod(ms[i], uint8_t *);
        uint32_t f = first + next++ * step;
        if (!new_flows && next == flows)
            next = 0;
        uint16_t sport = hlb_htons((uint16_t)(1024 + (f >> 24)));
        _mm_storeu_si128((__m128i *)d, c0);
        _mm_storeu_si128((__m128i *)(d + 16), bench_gen_chunk1(c1, base_sum, f));
        _mm_storeu_si128((__m128i *)(d + 32), _mm_insert_epi16(c2, sport, 1));  /* 34-35 */
    }
    g->next = next;
}

/* Pins n synthetic established connections (source 172.16/12 range, distinct from the
 * generator's flows) so the tables hold a realistic live population: connection i in
 * worker i % n's table. */
static void bench_prefill(struct hlb_worker *const *w, unsigned n, struct hlb_vip_table *t,
                          const struct options *o)
{
    const struct hlb_service *s = hlb_table_lookup(t, o->bench_vip, HLB_IPPROTO_TCP,
                                                   hlb_htons(o->bench_port));
    if (!s)
        return;
    for (uint32_t i = 0; i < o->bench_prefill; i++) {
        struct hlb_conn_table *ct = w[i % n]->ct;
        struct hlb_5tuple tp = {.src_ip = hlb_htonl(0xac100000u + (i & 0xfffff)),
                                .dst_ip = o->bench_vip,
                                .src_port = hlb_htons((uint16_t)(1024 + (i >> 20))),
                                .dst_port = hlb_htons(o->bench_port),
                                .proto = HLB_IPPROTO_TCP};
        uint64_t k0, k1;
        struct hlb_conn_ref ref;
        hlb_conn_key(&tp, &k0, &k1);
        int dip = hlb_select_dip(t, s, &tp);
        if (dip >= 0 && hlb_conn_insert(ct, hlb_conn_hash(&tp), k0, k1, HLB_CONN_EST, 0,
                                        &ref) == 0) {
            ref.b->e[ref.i].dip_ip = t->dips[dip].ip;
            ref.b->e[ref.i].table_gen = t->gen;
            ref.b->e[ref.i].dip_index = (uint32_t)dip;
        }
    }
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

/* ---- the workers ----------------------------------------------------------------- */

/* One worker: what its lcore owns.  Each on cache lines of its own. */
struct worker_ctx {
    struct hlb_worker w;
    struct hlb_io io;
    struct bench_gen gen;
    unsigned lcore;
    int bench;
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
    uint32_t idle_polls = 0, sleep_us = 1, sweep_tick = 0, last_beat = 0;
    struct timespec cpu0, cpu1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
    uint64_t loop_start = rte_rdtsc();
    hlb_table_reader_online(&run.slot, w->id);

    while (!stop_flag) {
        uint64_t tsc = rte_rdtsc();
        uint32_t now = tsc_ms(tsc);
        struct hlb_vip_table *t = hlb_table_acquire(&run.slot);
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
        } else {
            if (w->ct->st.entries)
                hlb_conn_sweep(w->ct, now, 16);
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
         * would read as a stall under HEALTH_TIMEOUT_MS. */
        if (!total_rx || now - last_beat >= HEARTBEAT_PERIOD_MS) {
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
    int prc = parse_options(argc, argv, &o);
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
        .table_opt = {.default_pin = o.conn_table}, .extra_metrics = port_metrics,
        .extra_metrics_arg = &run.ports};
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
        bench_gen_init(&x->gen, &o, wp[k]->cfg.port_mac[0], k, n);
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
    printf("}}\n");
    fflush(stdout);

    hlb_control_stop(ctl);
    for (int i = 0; i < run.ports.n; i++) {
        rte_eth_dev_stop(run.ports.ids[i]);
        rte_eth_dev_close(run.ports.ids[i]);
    }
    hlb_table_free(hlb_table_acquire(&run.slot));
    for (unsigned k = 0; k < n; k++) {
        hlb_conn_table_free(wp[k]->ct);
        free(run.ctx[k].gen.chunk1);
    }
    free(run.ctx);
    return eal_exit(0);
}
