/* Processing-only benchmark of the packet core (no DPDK, no I/O): cycles per packet
 * of hlb_dp_burst for each mode, and the raw connection-insert rate.  Times are the
 * thread's CPU time (robust to other processes sharing the cores), converted to
 * cycles with the TSC rate given on the command line (hlb-smux prints it).
 *
 *   dp-bench-core <tsc_hz> [seconds_per_mode]
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "datapath.h"
#include "hlb_pkt.h"
#include "vip_table.h"

#define FLOWS 10000
#define BURST HLB_RX_BURST   /* as the io loop receives */

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One VIP of the given selection: 4 DIPs of weights 1, 2, 1, 1, or, with
 * HLB_BENCH_CORE_DIPS=N, N DIPs of weight 1 (a pool whose weights are realised by
 * repeating weight-1 buckets, as WCMP tables do). */
static const char *table_json(const char *sel, int pin)
{
    static char buf[1 << 16];
    const char *env = getenv("HLB_BENCH_CORE_DIPS");
    int n = env ? atoi(env) : 0;
    int at = snprintf(buf, sizeof(buf),
                      "{\"version\":1,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"%s\","
                      "\"connTable\":%s,\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[",
                      sel, pin ? "true" : "false");
    if (n < 1 || n > 4096)
        at += snprintf(buf + at, sizeof(buf) - (size_t)at,
                       "{\"ip\":\"10.10.0.1\",\"weight\":1},{\"ip\":\"10.10.0.2\",\"weight\":2},"
                       "{\"ip\":\"10.10.0.3\",\"weight\":1},{\"ip\":\"10.10.0.4\",\"weight\":1}");
    for (int i = 0; n >= 1 && n <= 4096 && i < n; i++)
        at += snprintf(buf + at, sizeof(buf) - (size_t)at, "%s{\"ip\":\"10.10.%d.%d\"}",
                       i ? "," : "", i / 250, i % 250 + 1);
    snprintf(buf + at, sizeof(buf) - (size_t)at, "]}]}]}");
    return buf;
}

/* Frames live in a ring of buffers like mbufs; each iteration rewrites the 64-byte
 * frame (as the generator of the DPDK benchmark does) and processes a burst. */
struct frame {
    uint8_t buf[256];
};

static void make_frame(uint8_t *d, uint32_t f, uint8_t flags)
{
    struct hlb_eth_hdr eth = {.type = hlb_htons(HLB_ETHERTYPE_IPV4)};
    struct hlb_ipv4_hdr ip = {.ver_ihl = 0x45, .tot_len = hlb_htons(50), .ttl = 64,
                              .proto = HLB_IPPROTO_TCP,
                              .src = hlb_htonl(0x0a000000u | (f & 0xffffff)),
                              .dst = hlb_htonl(0x64400001u)};
    ip.csum = hlb_csum(&ip, 20);
    memset(d, 0, 64);
    memcpy(d, &eth, 14);
    memcpy(d + 14, &ip, 20);
    uint16_t sp = hlb_htons((uint16_t)(1024 + (f >> 24))), dp = hlb_htons(80);
    memcpy(d + 34, &sp, 2);
    memcpy(d + 36, &dp, 2);
    d[46] = 5 << 4;
    d[47] = flags;
}

static double run_mode(const char *name, struct hlb_worker *w, struct hlb_vip_table *t,
                       uint32_t flows, int new_flows, double seconds, double tsc_hz)
{
    static struct frame fr[BURST];
    static uint8_t tmpl[FLOWS][64];
    for (uint32_t f = 0; f < FLOWS; f++)
        make_frame(tmpl[f], f, HLB_TCP_ACK);
    struct hlb_pkt pk[BURST];
    uint8_t verdict[BURST];
    uint64_t pkts = 0, fwd0 = w->st.fwd_packets;
    uint32_t next = 0, uniq = 0;
    double t0 = thread_cpu(), t1;
    do {
        for (int iter = 0; iter < 1000; iter++) {
            for (int i = 0; i < BURST; i++) {
                uint8_t *d = fr[i].buf + 128;
                if (new_flows) {
                    make_frame(d, uniq++, HLB_TCP_SYN);
                } else {
                    memcpy(d, tmpl[next], 64);
                    if (++next == flows)
                        next = 0;
                }
                pk[i] = (struct hlb_pkt){.data = d, .len = 64, .headroom = 128};
            }
            hlb_dp_burst(w, t, pk, verdict, BURST, 1000);
            pkts += BURST;
        }
        t1 = thread_cpu();
    } while (t1 - t0 < seconds);
    double cpp = (t1 - t0) * tsc_hz / (double)pkts;
    printf("{\"mode\":\"%s\",\"packets\":%" PRIu64 ",\"forwarded\":%" PRIu64
           ",\"mppsPerCore\":%.2f,\"cyclesPerPacket\":%.1f}\n",
           name, pkts, w->st.fwd_packets - fwd0, (double)pkts / (t1 - t0) / 1e6, cpp);
    return cpp;
}

int main(int argc, char **argv)
{
    double tsc_hz = argc > 1 ? atof(argv[1]) : 2.45e9;
    double secs = argc > 2 ? atof(argv[2]) : 1.0;
    int only_stateless = argc > 3 && strcmp(argv[3], "stateless") == 0;
    int only_conn = argc > 3 && strcmp(argv[3], "conn") == 0;
    int n_stateless = argc > 3 && strcmp(argv[3], "crc32") == 0 ? 1 : 2;
    struct hlb_table_error err;
    struct hlb_table_options opt = {.default_pin = 0};
    struct hlb_worker w;
    memset(&w, 0, sizeof(w));
    w.cfg.self_ip = hlb_htonl(0xc000020a);
    w.cfg.gw_known = 1;
    w.cfg.outer_ttl = 64;
    w.cfg.mtu = 1500;

    const char *modes[][2] = {{"crc32", "stateless-crc32"}, {"ovs", "stateless-ovs"}};
    for (int m = 0; m < n_stateless && !only_conn; m++) {
        const char *j = table_json(modes[m][0], 0);
        struct hlb_vip_table *t = hlb_table_from_json(j, strlen(j), &opt, &err);
        t->gen = 1;
        run_mode(modes[m][1], &w, t, FLOWS, 0, secs, tsc_hz);
        hlb_table_free(t);
    }

    if (only_stateless || n_stateless == 1)
        return 0;
    /* Connection table with 1M live connections, then traffic over 10k flows. */
    const char *cap_env = getenv("HLB_BENCH_CORE_CAPACITY");
    const char *flows_env = getenv("HLB_BENCH_CORE_FLOWS");
    const char *prefill_env = getenv("HLB_BENCH_CORE_PREFILL");
    uint32_t cflows = flows_env ? (uint32_t)atoi(flows_env) : FLOWS;
    if (cflows < 1 || cflows > FLOWS) {
        fprintf(stderr, "HLB_BENCH_CORE_FLOWS must be between 1 and %d\n", FLOWS);
        return 2;
    }
    uint32_t prefill = prefill_env ? (uint32_t)atoi(prefill_env) : 1000000;
    w.ct = hlb_conn_table_create(cap_env ? (uint64_t)atoll(cap_env) : 4u << 20, NULL);
    const char *j = table_json("crc32", 1);
    struct hlb_vip_table *t = hlb_table_from_json(j, strlen(j), &opt, &err);
    t->gen = 1;
    for (uint32_t i = 0; i < prefill; i++) {
        struct hlb_5tuple tp = {.src_ip = hlb_htonl(0xac100000u + (i & 0xfffff)),
                                .dst_ip = hlb_htonl(0x64400001u),
                                .src_port = hlb_htons((uint16_t)(1024 + (i >> 20))),
                                .dst_port = hlb_htons(80), .proto = 6};
        uint64_t k0, k1;
        struct hlb_conn_ref ref;
        hlb_conn_key(&tp, &k0, &k1);
        hlb_conn_insert(w.ct, hlb_conn_hash(&tp), k0, k1, HLB_CONN_EST, 0, &ref);
    }
    long huge_kb = 0;
    FILE *sm = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    while (sm && fgets(line, sizeof(line), sm))
        if (strncmp(line, "AnonHugePages:", 14) == 0)
            huge_kb = atol(line + 14);
    if (sm)
        fclose(sm);
    printf("{\"prefilled\":%" PRIu64 ",\"insertFailures\":%" PRIu64 ",\"anonHugePagesKiB\":%ld}\n",
           w.ct->st.entries, w.ct->st.insert_failures, huge_kb);
    double before = run_mode("conn-1M-live", &w, t, cflows, 0, secs, tsc_hz);
    if (getenv("HLB_BENCH_CORE_ONLY_LIVE"))
        return 0;
    uint64_t ins0 = w.ct->st.inserts;
    double cpp = run_mode("conn-new-flows", &w, t, FLOWS, 1, secs, tsc_hz);
    printf("{\"mode\":\"insert-rate\",\"inserts\":%" PRIu64 ",\"minsertsPerSecond\":%.2f}\n",
           w.ct->st.inserts - ins0, tsc_hz / cpp / 1e6);

    /* SYN flood: keep sending new connections until the table is full (every bucket
     * holds 8 live entries), then measure the established flows again.  Their
     * lookups must neither fail nor get slower: a lookup reads one bucket whatever
     * the fill, and half-open entries only ever displace each other. */
    while (w.ct->st.entries < w.ct->capacity - w.ct->capacity / 64)
        run_mode("syn-flood", &w, t, FLOWS, 1, 0.2, tsc_hz);
    uint64_t misses0 = w.st.conn_misses;
    double after = run_mode("conn-1M-live-after-flood", &w, t, FLOWS, 0, secs, tsc_hz);
    printf("{\"mode\":\"syn-flood-effect\",\"tableEntries\":%" PRIu64 ",\"capacity\":%" PRIu64
           ",\"displacedEvictions\":%" PRIu64 ",\"establishedMissesAfterFlood\":%" PRIu64
           ",\"cyclesPerPacketBefore\":%.1f,\"cyclesPerPacketAfter\":%.1f}\n",
           w.ct->st.entries, w.ct->capacity, w.ct->st.evict_displaced, w.st.conn_misses - misses0,
           before, after);
    hlb_table_free(t);
    hlb_conn_table_free(w.ct);

    /* Raw table insert rate: fresh keys in batches of 32 into an empty 4M-slot table
     * (hash, two-stage prefetch, insert), until 2M connections are live. */
    struct hlb_conn_table *ct = hlb_conn_table_create(4u << 20, NULL);
    uint32_t next = 0;
    double t0 = thread_cpu();
    while (next < 2000000) {
        struct hlb_5tuple tp[32];
        uint32_t h[32];
        for (int i = 0; i < 32; i++, next++) {
            tp[i] = (struct hlb_5tuple){.src_ip = hlb_htonl(0x0b000000u + next),
                                        .dst_ip = hlb_htonl(0x64400001u),
                                        .src_port = hlb_htons((uint16_t)(1024 + (next & 0x3fff))),
                                        .dst_port = hlb_htons(80), .proto = 6};
            h[i] = hlb_conn_hash(&tp[i]);
            hlb_conn_prefetch(ct, h[i]);
        }
        for (int i = 0; i < 32; i++) {
            uint64_t k0, k1;
            struct hlb_conn_ref ref;
            hlb_conn_key(&tp[i], &k0, &k1);
            if (hlb_conn_insert(ct, h[i], k0, k1, HLB_CONN_SYN, 0, &ref) == 0)
                ref.b->e[ref.i].dip_ip = k0 >> 32;
        }
    }
    double t1 = thread_cpu();
    printf("{\"mode\":\"raw-insert\",\"inserts\":%" PRIu64 ",\"failures\":%" PRIu64
           ",\"minsertsPerSecond\":%.2f,\"cyclesPerInsert\":%.1f}\n",
           ct->st.inserts, ct->st.insert_failures, (double)ct->st.inserts / (t1 - t0) / 1e6,
           (t1 - t0) * tsc_hz / (double)ct->st.inserts);
    hlb_conn_table_free(ct);
    return 0;
}
