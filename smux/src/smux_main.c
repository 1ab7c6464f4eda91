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
    const char *tls_cert, *tls_key, *tls_ca;   /* the control API's mutual TLS */
    const char *table_file;
    int conn_table;
    uint64_t conn_capacity;
    struct hlb_conn_timeouts timeouts;
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
static _Atomic uint64_t heartbeat_ms;

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
            "  --mgmt ADDR:PORT      control API address (default 127.0.0.1:9180; port 0 = any);\n"
            "                        another address than loopback needs the --tls-* options\n"
            "  --tls-cert FILE --tls-key FILE --tls-ca FILE\n"
            "                        HTTPS with mutual TLS (PEM): only client certificates of\n"
            "                        that CA may write (app/standalone/deploy/hlb-certs)\n"
            "  --table FILE          initial VIP table (JSON, same schema as PUT /table)\n"
            "  --conn-table on|off   default connection pinning for VIPs (default on)\n"
            "  --conn-capacity N     connection-table slots, 1..2147483648 (default 1048576)\n"
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
        {"tls-cert", 1, 0, 13}, {"tls-key", 1, 0, 14}, {"tls-ca", 1, 0, 15},
        {"help", 0, 0, 'h'},
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
        case 13: o->tls_cert = arg; break;
        case 14: o->tls_key = arg; break;
        case 15: o->tls_ca = arg; break;
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
    int tls = !!o->tls_cert + !!o->tls_key + !!o->tls_ca;
    if (tls != 0 && tls != 3) {
        fprintf(stderr, "--tls-cert, --tls-key and --tls-ca go together\n");
        return -1;
    }
    char why[160];
    if (hlb_control_check_listen(o->mgmt_addr, tls == 3, why, sizeof(why)) != 0) {
        fprintf(stderr, "--mgmt: %s\n", why);
        return -1;
    }
    return 0;
}

static int port_init(uint16_t port, struct rte_mempool *pool)
{
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof(conf));
    uint16_t nrx = NB_RXD, ntx = NB_TXD;
    int rc = rte_eth_dev_configure(port, 1, 1, &conf);
    if (rc < 0)
        return rc;
    rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
    if ((rc = rte_eth_rx_queue_setup(port, 0, nrx, rte_eth_dev_socket_id(port), NULL, pool)) < 0)
        return rc;
    if ((rc = rte_eth_tx_queue_setup(port, 0, ntx, rte_eth_dev_socket_id(port), NULL)) < 0)
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
    uint32_t flows;
    uint32_t next;
    int new_flows;
    __m128i *chunk1;                /* bytes 16-31 of flow f's frame, or NULL */
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

static void bench_gen_init(struct bench_gen *g, const struct options *o, const uint8_t *dst_mac)
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
    g->flows = o->bench_flows ? o->bench_flows : 1;
    g->new_flows = o->bench_new_flows;
    if (!g->new_flows && g->flows <= BENCH_GEN_TABLE_MAX) {
        g->chunk1 = aligned_alloc(16, (size_t)g->flows * sizeof(__m128i));
        __m128i c1 = _mm_loadu_si128((const __m128i *)(g->tmpl + 16));
        for (uint32_t f = 0; g->chunk1 && f < g->flows; f++)
            g->chunk1[f] = bench_gen_chunk1(c1, g->base_sum, f);
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
    uint32_t base_sum = g->base_sum;
    int new_flows = g->new_flows;
    __m128i c1 = _mm_loadu_si128((const __m128i *)(g->tmpl + 16));
    __m128i c2 = _mm_loadu_si128((const __m128i *)(g->tmpl + 32));
    for (uint16_t i = 0; i < n; i++) {
        uint8_t *d = rte_pktmbuf_mtod(ms[i], uint8_t *);
        uint32_t f = next++;
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
 * generator's flows) so the table holds a realistic live population. */
static void bench_prefill(struct hlb_worker *w, struct hlb_vip_table *t, const struct options *o)
{
    const struct hlb_service *s = hlb_table_lookup(t, o->bench_vip, HLB_IPPROTO_TCP,
                                                   hlb_htons(o->bench_port));
    if (!s || !w->ct)
        return;
    for (uint32_t i = 0; i < o->bench_prefill; i++) {
        struct hlb_5tuple tp = {.src_ip = hlb_htonl(0xac100000u + (i & 0xfffff)),
                                .dst_ip = o->bench_vip,
                                .src_port = hlb_htons((uint16_t)(1024 + (i >> 20))),
                                .dst_port = hlb_htons(o->bench_port),
                                .proto = HLB_IPPROTO_TCP};
        uint64_t k0, k1;
        struct hlb_conn_ref ref;
        hlb_conn_key(&tp, &k0, &k1);
        int dip = hlb_select_dip(t, s, &tp);
        if (dip >= 0 && hlb_conn_insert(w->ct, hlb_conn_hash(&tp), k0, k1, HLB_CONN_EST, 0,
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
    struct options o;
    int prc = parse_options(argc, argv, &o);
    if (prc != 0)
        return eal_exit(prc > 0 ? 0 : 2);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    tsc_hz = rte_get_tsc_hz();
    tsc_start = rte_rdtsc();

    int two_port = strcmp(o.mode, "two-port") == 0;
    struct port_set ports = {.n = two_port ? 2 : 1};
    uint16_t pid, found = 0;
    RTE_ETH_FOREACH_DEV(pid) {
        if (found < ports.n)
            ports.ids[found] = pid;
        found++;
    }
    if (found < ports.n) {
        HLB_LOG_ERR("mode %s needs %d ports, found %u (give --vdev arguments)", o.mode, ports.n,
                    found);
        return eal_exit(1);
    }
    struct rte_mempool *pool = rte_pktmbuf_pool_create("hlb_mbufs", NB_MBUF, 256, 0,
                                                       RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
    if (!pool) {
        HLB_LOG_ERR("mbuf pool: %s", rte_strerror(rte_errno));
        return eal_exit(1);
    }

    static struct hlb_worker w;
    w.cfg.self_ip = o.self_ip;
    w.cfg.gw_ip = o.gw_ip;
    w.cfg.mtu = o.mtu;
    w.cfg.outer_ttl = o.ttl;
    w.cfg.two_port = (uint8_t)two_port;
    if (o.gw_mac_set) {
        memcpy(w.cfg.gw_mac, o.gw_mac, 6);
        w.cfg.gw_known = w.cfg.gw_static = 1;
    }
    for (int i = 0; i < ports.n; i++) {
        int rc = port_init(ports.ids[i], pool);
        if (rc < 0) {
            HLB_LOG_ERR("port %u init failed: %s", ports.ids[i], rte_strerror(-rc));
            return eal_exit(1);
        }
        struct rte_ether_addr mac;
        rte_eth_macaddr_get(ports.ids[i], &mac);
        memcpy(w.cfg.port_mac[i], mac.addr_bytes, 6);
    }
    /* The connection table exists whenever pinning could be asked for: the default
     * is on, or a VIP may say connTable:true. */
    w.ct = hlb_conn_table_create(o.conn_capacity, &o.timeouts);
    if (!w.ct) {
        HLB_LOG_ERR("cannot allocate a connection table of %" PRIu64 " slots", o.conn_capacity);
        return eal_exit(1);
    }

    /* Legitimate (ARP and ping are answered, a gateway may be added by a restart),
     * but nothing is forwarded: say so. */
    if (!o.gw_ip && !o.gw_mac_set)
        HLB_LOG_WARN("neither --gateway nor --gateway-mac given: every packet to a VIP "
                     "will be dropped (no_gateway)");

    static struct hlb_table_slot slot;
    hlb_table_slot_init(&slot, hlb_table_empty());
    atomic_store(&heartbeat_ms, mono_ms());
    struct hlb_control_config cc = {
        .listen_addr = o.mgmt_addr, .listen_port = o.mgmt_port, .slot = &slot, .worker = &w,
        .heartbeat_ms = &heartbeat_ms, .now_ms = mono_ms, .health_timeout_ms = HEALTH_TIMEOUT_MS,
        .table_opt = {.default_pin = o.conn_table}, .extra_metrics = port_metrics,
        .extra_metrics_arg = &ports, .tls_cert = o.tls_cert, .tls_key = o.tls_key, .tls_ca = o.tls_ca};
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
    printf("{\"event\":\"ready\",\"mgmtPort\":%u,\"ports\":%d,\"mode\":\"%s\",\"macs\":[",
           hlb_control_port(ctl), ports.n, o.mode);
    for (int i = 0; i < ports.n; i++) {
        const uint8_t *m = w.cfg.port_mac[i];
        printf("%s\"%02x:%02x:%02x:%02x:%02x:%02x\"", i ? "," : "", m[0], m[1], m[2], m[3], m[4],
               m[5]);
    }
    printf("]}\n");
    fflush(stdout);

    struct bench_gen gen;
    int bench = o.bench_flows || o.bench_new_flows;
    if (bench) {
        bench_gen_init(&gen, &o, w.cfg.port_mac[0]);
        rte_mempool_obj_iter(pool, bench_gen_fill_one, &gen);
    }
    if (o.bench_prefill)
        bench_prefill(&w, hlb_table_acquire(&slot), &o);

    /* ---- the worker loop ---- */
    /* Milliseconds from TSC cycles by a multiply-high with 2^64 / (cycles per ms): a
     * 64-bit division per poll cost about a cycle per packet at full rate. */
    const uint64_t ms_per_tsc_q64 = (uint64_t)(((unsigned __int128)1 << 64) / (tsc_hz / 1000));
    uint32_t next_arp = 0, last_rx_ms = 0;
    uint64_t loop_start = rte_rdtsc();
    struct timespec cpu0, cpu1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
    uint64_t run_until = o.run_seconds > 0 ? loop_start + (uint64_t)(o.run_seconds * tsc_hz) : 0;
    uint32_t idle_polls = 0, sleep_us = 1, sweep_tick = 0, last_beat = 0;
    int seen_traffic = 0;
    struct hlb_io io = {.w = &w, .n_ports = ports.n};
    memcpy(io.port_ids, ports.ids, sizeof(io.port_ids));
    if (bench) {
        io.rx_hook = bench_gen_hook;
        io.rx_hook_arg = &gen;
    }
    io.raw_forward = o.bench_raw_forward;   /* without a generator: rx and tx alone */
    atomic_store(&slot.worker_running, 1);
    /* Order the store above before the first table load (store-load: the control
     * thread must either see the worker running or the worker must see its table). */
    atomic_thread_fence(memory_order_seq_cst);

    while (!stop_flag) {
        uint64_t tsc = rte_rdtsc();
        uint32_t now = (uint32_t)(((unsigned __int128)(tsc - tsc_start) * ms_per_tsc_q64) >> 64);
        struct hlb_vip_table *t = hlb_table_acquire(&slot);
        unsigned total_rx = hlb_io_poll(&io, t, now);
        hlb_table_quiesce(&slot, t);

        if (total_rx) {
            idle_polls = 0;
            sleep_us = 1;
            seen_traffic = 1;
            last_rx_ms = now;
            /* Incremental expiry; skipped while the table is empty so an unused
             * table's pages are never touched. */
            if (w.ct->st.entries && (++sweep_tick & 7) == 0)
                hlb_conn_sweep(w.ct, now, 1);
        } else {
            if (w.ct->st.entries)
                hlb_conn_sweep(w.ct, now, 16);
            /* Back off: after a run of empty polls, sleep 1, 2, 4 ... idle_sleep_us. */
            if (o.idle_sleep_us && ++idle_polls > 256) {
                /* tv_nsec must stay below 1e9 (else EINVAL and no sleep at all);
                 * idle_sleep_us <= 100000 (1e5), so the doubling cannot wrap. */
                struct timespec ts = {sleep_us / 1000000, (long)(sleep_us % 1000000) * 1000};
                nanosleep(&ts, NULL);
                if (sleep_us < o.idle_sleep_us)
                    sleep_us = sleep_us * 2 > o.idle_sleep_us ? o.idle_sleep_us : sleep_us * 2;
            }
        }
        /* Elapsed time, not "now & 63 == 0": a worker descheduled during that
         * one millisecond would skip a whole period, and a few skips in a row
         * would read as a stall under HEALTH_TIMEOUT_MS. */
        if (!total_rx || now - last_beat >= HEARTBEAT_PERIOD_MS) {
            atomic_store_explicit(&heartbeat_ms, mono_ms(), memory_order_relaxed);
            last_beat = now;
        }

        /* Gateway resolution: every second until known, then refresh every 30 s. */
        if (w.cfg.gw_ip && !w.cfg.gw_static && (int32_t)(now - next_arp) >= 0) {
            struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
            uint16_t out = two_port ? 1 : 0;
            if (m) {
                uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, 60);
                hlb_build_arp_request(&w.cfg, out, d);
                if (rte_eth_tx_burst(ports.ids[out], 0, &m, 1) == 1)
                    w.st.arp_requests_sent++;
                else
                    rte_pktmbuf_free(m);
            }
            next_arp = now + (w.cfg.gw_known ? 30000 : 1000);
        }
        if (o.exit_when_idle_ms && seen_traffic && (uint32_t)(now - last_rx_ms) > o.exit_when_idle_ms)
            break;
        if (run_until && tsc > run_until)
            break;
    }
    uint64_t loop_cycles = rte_rdtsc() - loop_start;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
    double cpu_secs = (double)(cpu1.tv_sec - cpu0.tv_sec) + (double)(cpu1.tv_nsec - cpu0.tv_nsec) * 1e-9;
    atomic_store(&slot.worker_running, 0);

    /* Final statistics as one JSON line (the benchmark and tests read it). */
    double secs = (double)loop_cycles / (double)tsc_hz;
    uint64_t drops = 0;
    for (int r = 0; r < HLB_DROP_MAX; r++)
        drops += w.st.drops[r];
    printf("{\"event\":\"exit\",\"seconds\":%.6f,\"cpuSeconds\":%.6f,\"rx\":%" PRIu64 ",\"forwarded\":%" PRIu64
           ",\"drops\":%" PRIu64 ",\"mpps\":%.3f,\"cyclesPerPacket\":%.1f,\"connEntries\":%" PRIu64
           ",\"connInserts\":%" PRIu64 ",\"connInsertFailures\":%" PRIu64
           ",\"connEvictDisplaced\":%" PRIu64 ",\"connHits\":%" PRIu64 ",\"connCacheHits\":%" PRIu64
           ",\"tscHz\":%" PRIu64 ",\"dropReasons\":{",
           secs, cpu_secs, w.st.rx_packets, w.st.fwd_packets, drops,
           secs > 0 ? (double)w.st.rx_packets / secs / 1e6 : 0.0,
           w.st.rx_packets ? (double)loop_cycles / (double)w.st.rx_packets : 0.0,
           w.ct->st.entries, w.ct->st.inserts, w.ct->st.insert_failures, w.ct->st.evict_displaced,
           w.st.conn_hits, w.ct->fc_hits, tsc_hz);
    int first = 1;
    for (int r = 0; r < HLB_DROP_MAX; r++)
        if (w.st.drops[r]) {
            printf("%s\"%s\":%" PRIu64, first ? "" : ",", hlb_drop_names[r], w.st.drops[r]);
            first = 0;
        }
    printf("}}\n");
    fflush(stdout);

    hlb_control_stop(ctl);
    for (int i = 0; i < ports.n; i++) {
        rte_eth_dev_stop(ports.ids[i]);
        rte_eth_dev_close(ports.ids[i]);
    }
    hlb_table_free(hlb_table_acquire(&slot));
    hlb_conn_table_free(w.ct);
    if (bench)
        free(gen.chunk1);
    return eal_exit(0);
}
