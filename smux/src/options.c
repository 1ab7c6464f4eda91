#include "options.h"
#include "control.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
            "  --table-state FILE    every table PUT /table accepts is written here before the\n"
            "                        answer, and read at start (over --table when newer): a\n"
            "                        restarted SMux forwards with the controller's last table\n"
            "  --conn-table on|off   default connection pinning for VIPs (default on)\n"
            "  --conn-capacity N     connection-table slots, 1..2147483648 (default 1048576),\n"
            "                        shared out among the workers\n"
            "  --rx-distribution queues|software\n"
            "                        how flows reach the workers (one per EAL lcore): rx queue k\n"
            "                        of every port for worker k, or worker 0 hands them out\n"
            "                        (default: queues when every port has one per worker)\n"
            "  --tcp-syn-timeout S --tcp-timeout S --tcp-fin-timeout S --udp-timeout S\n"
            "                        idle timeouts in seconds, 0.001..1000000\n"
            "  --stateful-partitions N\n"
            "                        cheetah-stateful ConnStack partitions per worker of 1024\n"
            "                        indexes each, a power of two 1..65536 (default 64)\n"
            "  --stateful-idle S     free a stateful entry idle this long, seconds\n"
            "                        0.001..1000000 (default 120; the host agent's close\n"
            "                        report frees it at once)\n"
            "  --stateful-adopt-grace S\n"
            "                        give no stateful index for S seconds after start and\n"
            "                        after taking an owner id, while the host agents\n"
            "                        re-report its connections, 0..600 (default 5, 0 = off)\n"
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
int hlb_parse_options(int argc, char **argv, struct options *o)
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
        {"rx-distribution", 1, 0, 13}, {"tls-cert", 1, 0, 14}, {"tls-key", 1, 0, 15},
        {"tls-ca", 1, 0, 16}, {"stateful-partitions", 1, 0, 17}, {"stateful-idle", 1, 0, 18},
        {"table-state", 1, 0, 19}, {"stateful-adopt-grace", 1, 0, 20},
        {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    *o = (struct options){.mode = "one-arm", .mtu = 1500, .ttl = 64, .mgmt_addr = mgmt_addr,
                          .mgmt_port = 9180, .conn_table = 1, .conn_capacity = 1u << 20,
                          .timeouts = {HLB_CONN_DEFAULT_SYN_MS, HLB_CONN_DEFAULT_EST_MS,
                                       HLB_CONN_DEFAULT_FIN_MS, HLB_CONN_DEFAULT_UDP_MS},
                          .idle_sleep_us = 200,
                          .stateful_partitions = HLB_SF_DEFAULT_PARTITIONS,
                          .stateful_idle_ms = HLB_SF_DEFAULT_IDLE_MS,
                          .stateful_adopt_grace_ms = HLB_SF_DEFAULT_ADOPT_GRACE_MS};
    int c, li = -1;
    char addr[64];
    uint64_t v = 0;
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
        case 19: o->table_state = arg; break;
        case 14: o->tls_cert = arg; break;
        case 15: o->tls_key = arg; break;
        case 16: o->tls_ca = arg; break;
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
        case 17:
            if (!(bad = opt_uint(opt, arg, 1, HLB_SF_MAX_PARTITIONS, &v)) && (v & (v - 1)))
                bad = bad_value(opt, arg, "must be a power of two");
            o->stateful_partitions = (uint32_t)v;
            break;
        case 18: bad = opt_timeout(opt, arg, &o->stateful_idle_ms); break;
        case 20: {
            double g = 0;
            if (!(bad = opt_double(opt, arg, 0, 600, &g)))
                o->stateful_adopt_grace_ms = (uint32_t)(g * 1000 + 0.5);
            break;
        }
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
