/* Processing-only benchmark of the packet core (no DPDK, no I/O): cycles per packet
 * of hlb_dp_burst for each mode, and the raw connection-insert rate.  Times are the
 * thread's CPU time (robust to other processes sharing the cores), converted to
 * cycles with the TSC rate given on the command line (hlb-smux prints it).
 *
 *   dp-bench-core <tsc_hz> [seconds_per_mode] [stateless|conn|crc32|cheetah|pins]
 *
 * The cheetah modes (also alone with "cheetah"): the decode of stateless cookies,
 * of stateful ones (the owner's entries of the 10k flows), and a stateful SYN per
 * packet (index popped, hint written) with the close reports of the connections
 * opened 30-32k SYNs earlier applied as the host agents would send them (queued in
 * batches, untimed; applied by the worker, timed), against the connection table
 * with every packet new.  New connections' frames come from a template with the
 * flow's fields patched in, in both modes.  HLB_BENCH_CORE_CHEETAH=stateless,
 * stateful or syn runs that cheetah mode alone (to profile it; no ratios).
 *
 * "pins": Prism's fabric steering on the SMux (pins.h), the cost per packet of a
 * pinned flow: PIN_FLOWS flows of a crc32 VIP hashed, then the same flows each with a
 * pin, in one run (ratio printed).
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cheetah.h"
#include "datapath.h"
#include "hlb_pkt.h"
#include "pins.h"
#include "vip_table.h"

#define FLOWS 10000
#define PIN_FLOWS 1000       /* a table copy per pin put: kept small */
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

/* A make_frame() frame's IP total length (< 256) and checksum. */
static void set_ip_len(uint8_t *d, uint8_t len)
{
    uint16_t sum = 0;
    d[17] = len;
    memcpy(d + 24, &sum, 2);
    sum = hlb_csum(d + 14, 20);
    memcpy(d + 24, &sum, 2);
}

/* The frame of flow f with NOP, NOP, timestamp (tsval, tsecr): 66 bytes. */
static void make_ts_frame(uint8_t *d, uint32_t f, uint8_t flags, uint32_t tsecr)
{
    make_frame(d, f, flags);
    set_ip_len(d, 52);
    d[46] = 8 << 4;
    uint32_t v = hlb_htonl(1000 + f), e = hlb_htonl(tsecr);
    memcpy(d + 54, (const uint8_t[]){1, 1, 8, 10}, 4);
    memcpy(d + 58, &v, 4);
    memcpy(d + 62, &e, 4);
}

/* A Linux client's SYN of flow f: MSS, SACK permitted + timestamp, NOP, window scale
 * (74 bytes; the timestamp's TSecr, where the hint goes, at frame byte 66). */
static void make_syn_frame(uint8_t *d, uint32_t f)
{
    make_frame(d, f, HLB_TCP_SYN);
    set_ip_len(d, 60);
    d[46] = 10 << 4;
    uint32_t v = hlb_htonl(1000 + f);
    memcpy(d + 54, (const uint8_t[]){2, 4, 5, 0xb4, 4, 2, 8, 10}, 8);
    memcpy(d + 62, &v, 4);
    memset(d + 66, 0, 4);
    memcpy(d + 70, (const uint8_t[]){1, 3, 3, 7}, 4);
}
#define SYN_TSECR_AT 66                 /* in the received frame */

/* The frames of new connections, as the NIC would hand them over: a template per
 * mode with the source address and port of flow f and its IP checksum patched in
 * (the generator's cost, in every mode's figure, stays small next to the packet
 * core's: the flow's whole frame built anew costs as much as a SYN's handling). */
struct new_flows {
    uint8_t tmpl[80];
    uint32_t len, sum;                  /* sum: the IP header's without source and checksum */
    int syn;                            /* make_syn_frame()'s: TSval 1000 + f as well */
};

/* Flow f's frame into d (flow f as make_frame() and make_syn_frame() number them). */
static void new_flow_frame(const struct new_flows *g, uint8_t *d, uint32_t f)
{
    memcpy(d, g->tmpl, g->len);
    uint32_t src = hlb_htonl(0x0a000000u | (f & 0xffffff));
    uint16_t sp = hlb_htons((uint16_t)(1024 + (f >> 24)));
    uint32_t sum = g->sum + (src & 0xffff) + (src >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    uint16_t csum = (uint16_t)~sum;
    memcpy(d + 26, &src, 4);
    memcpy(d + 24, &csum, 2);
    memcpy(d + 34, &sp, 2);
    if (g->syn) {
        uint32_t v = hlb_htonl(1000 + f);
        memcpy(d + 62, &v, 4);
    }
}

/* syn: a Linux client's SYN (make_syn_frame()), else make_frame()'s SYN. */
static void new_flows_init(struct new_flows *g, int syn)
{
    if (syn)
        make_syn_frame(g->tmpl, 0);
    else
        make_frame(g->tmpl, 0, HLB_TCP_SYN);
    g->len = syn ? 74 : 64;
    g->syn = syn;
    memset(g->tmpl + 24, 0, 6);         /* checksum, source */
    g->sum = 0;
    for (int k = 14; k < 34; k += 2) {
        uint16_t v;
        memcpy(&v, g->tmpl + k, 2);
        g->sum += v;
    }
    uint8_t a[80], b[80];               /* the same bytes as the frames built whole */
    for (uint32_t f = 0; f < (1u << 25); f += 0x12345) {
        uint32_t ff = syn ? f & 0xffffff : f;
        new_flow_frame(g, a, ff);
        if (syn)
            make_syn_frame(b, ff);
        else
            make_frame(b, ff, HLB_TCP_SYN);
        if (memcmp(a, b, g->len) != 0) {
            fprintf(stderr, "new-flow frame %u differs from the frame built whole\n", ff);
            exit(2);
        }
    }
}

/* Cheetah modes: flow f's TSecr (0: no timestamp option, the 64-byte frame);
 * per-packet SYNs with a timestamp; the worker's close reports (stateful). */
static uint32_t ck_tsecr[FLOWS];
static int ck_frames, ck_new_syns;
static const struct hlb_service *ck_svc;
#define CK_LIVE 32768u                  /* stateful connections open at a time (half the
                                           default 64 partitions' indexes) */

#define CK_REPORT_BURSTS 64u           /* bursts between two batches of close reports */
#define CK_REPORTS (CK_REPORT_BURSTS * BURST)   /* reports a batch: <= HLB_SF_RING */

static uint16_t ck_ident_of[CK_LIVE];   /* SYN k's hint, at k % CK_LIVE */
static uint32_t ck_bursts;

/* The control thread's part of connection f's close report (queued for the worker);
 * not part of the worker's measured time. */
static void ck_release(struct hlb_worker *w, uint32_t f)
{
    uint32_t src = hlb_htonl(0x0a000000u | (f & 0xffffff));
    uint16_t sp = hlb_htons((uint16_t)(1024 + (f >> 24)));
    uint64_t h = hlb_ck_hash(ck_svc, src, sp, hlb_htons(80));
    uint16_t ident = ck_ident_of[f % CK_LIVE];
    if (ident & HLB_COOKIE_STATEFUL)
        hlb_sf_queue_release(w->sf, hlb_sf_part_of(w->sf, h, 0), ident & HLB_SF_INDEX_MASK, h);
}

static double run_mode(const char *name, struct hlb_worker *w, struct hlb_vip_table *t,
                       uint32_t flows, int new_flows, double seconds, double tsc_hz)
{
    static struct frame fr[BURST];
    static uint8_t tmpl[FLOWS][80];
    for (uint32_t f = 0; f < FLOWS; f++) {
        if (ck_frames)
            make_ts_frame(tmpl[f], f, HLB_TCP_ACK, ck_tsecr[f]);
        else
            make_frame(tmpl[f], f, HLB_TCP_ACK);
    }
    uint32_t flen = ck_frames ? 66 : 64;
    struct new_flows gen;
    new_flows_init(&gen, ck_new_syns);
    struct hlb_pkt pk[BURST];
    uint8_t verdict[BURST];
    uint64_t pkts = 0, fwd0 = w->st.fwd_packets;
    uint32_t next = 0, uniq = 0;
    double excluded = 0;
    double t0 = thread_cpu(), t1;
    do {
        for (int iter = 0; iter < 1000; iter++) {
            for (int i = 0; i < BURST; i++) {
                uint8_t *d = fr[i].buf + 128;
                if (new_flows && ck_new_syns) {
                    new_flow_frame(&gen, d, uniq++ & 0xffffff);
                } else if (new_flows) {
                    new_flow_frame(&gen, d, uniq++);
                } else {
                    memcpy(d, tmpl[next], flen);
                    if (++next == flows)
                        next = 0;
                }
                pk[i] = (struct hlb_pkt){.data = d, .len = ck_new_syns && new_flows ? 74 : flen,
                                         .headroom = 128};
            }
            hlb_dp_burst(w, t, pk, verdict, BURST, 1000);
            pkts += BURST;
            if (ck_new_syns && new_flows) {
                /* Each SYN's hint, kept for its close report (timed: a few cycles),
                 * then the reports queued so far applied by the worker as its loop
                 * does (hlb_sf_drain, timed). */
                for (int i = 0; i < BURST; i++) {
                    uint32_t hint;
                    memcpy(&hint, pk[i].data + 20 + SYN_TSECR_AT, 4);   /* after IP-in-IP */
                    hint = hlb_ntohl(hint);
                    ck_ident_of[(uniq - BURST + (uint32_t)i) % CK_LIVE] =
                        hint >> 16 == HLB_COOKIE_HINT_MAGIC ? (uint16_t)hint : 0;
                }
                hlb_sf_drain(w->sf, 1000);
                if (++ck_bursts % CK_REPORT_BURSTS == 0) {
                    /* The host agents' close reports of the connections opened
                     * CK_LIVE - CK_REPORTS SYNs before these CK_REPORTS: queued by
                     * the control thread, not timed (in batches: the clock read
                     * costs a system call here). */
                    double x0 = thread_cpu();
                    for (uint32_t k = uniq - CK_REPORTS; k < uniq; k++)
                        if (k >= CK_LIVE - CK_REPORTS)    /* (before their slots are reused) */
                            ck_release(w, (k - (CK_LIVE - CK_REPORTS)) & 0xffffff);
                    excluded += thread_cpu() - x0;
                }
            }
        }
        t1 = thread_cpu() - excluded;
    } while (t1 - t0 < seconds);
    double cpp = (t1 - t0) * tsc_hz / (double)pkts;
    printf("{\"mode\":\"%s\",\"packets\":%" PRIu64 ",\"forwarded\":%" PRIu64
           ",\"mppsPerCore\":%.2f,\"cyclesPerPacket\":%.1f}\n",
           name, pkts, w->st.fwd_packets - fwd0, (double)pkts / (t1 - t0) / 1e6, cpp);
    return cpp;
}

/* A cheetah VIP (siphash13) of the four DIPs of table_json(), stateless or stateful
 * with this SMux as its owner. */
static struct hlb_vip_table *ck_table(int stateful)
{
    char j[1024];
    snprintf(j, sizeof(j),
             "{\"version\":1,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\","
             "\"connTable\":false,\"affinity\":\"%s\",\"cookieKey\":"
             "\"000102030405060708090a0b0c0d0e0f\",\"mechanism\":\"rr\"%s,\"ports\":[{"
             "\"proto\":\"tcp\",\"port\":80,\"dips\":["
             "{\"ip\":\"10.10.0.1\",\"serverId\":1},{\"ip\":\"10.10.0.2\",\"serverId\":2},"
             "{\"ip\":\"10.10.0.3\",\"serverId\":3},{\"ip\":\"10.10.0.4\",\"serverId\":4}]}]}]}",
             stateful ? "cheetah-stateful" : "cheetah",
             stateful ? ",\"statefulOwners\":[\"192.0.2.10\"]" : "");
    struct hlb_table_error err;
    struct hlb_table_options opt = {.self_ip = hlb_htonl(0xc000020a)};
    struct hlb_vip_table *t = hlb_table_from_json(j, strlen(j), &opt, &err);
    if (!t) {
        fprintf(stderr, "cheetah table: %s: %s\n", err.field, err.reason);
        exit(2);
    }
    t->gen = 1;
    return t;
}

/* The cheetah modes; prints their ratios (conn_new_cpp: the connection table's
 * cycles per packet when every packet is new, 0 when not measured). */
static void cheetah_modes(struct hlb_worker *w, double secs, double tsc_hz, double conn_new_cpp)
{
    const char *only = getenv("HLB_BENCH_CORE_CHEETAH");   /* one mode alone, or all */
    struct hlb_vip_table *t = ck_table(0);
    ck_svc = &t->services[0];
    for (uint32_t f = 0; f < FLOWS; f++) {
        uint32_t src = hlb_htonl(0x0a000000u | f);
        uint32_t ident = 1 + f % 4;
        uint64_t h = hlb_ck_hash(ck_svc, src, hlb_htons(1024), hlb_htons(80));
        ck_tsecr[f] = 1u << 31 | ((ident ^ (uint32_t)h) & HLB_COOKIE_MASK) << 16 | 7;
    }
    ck_frames = 1;
    double stateless = 0, stateful = 0, fresh = 0;
    if (!only || strcmp(only, "stateless") == 0)
        stateless = run_mode("cheetah-stateless-decode", w, t, FLOWS, 0, secs, tsc_hz);
    hlb_table_free(t);

    t = ck_table(1);
    ck_svc = &t->services[0];
    w->sf = hlb_sf_create(HLB_SF_DEFAULT_PARTITIONS, HLB_SF_DEFAULT_IDLE_MS);
    for (uint32_t f = 0; f < FLOWS; f++) {       /* the 10k flows' entries, as their SYNs made */
        uint32_t src = hlb_htonl(0x0a000000u | f);
        uint64_t h = hlb_ck_hash(ck_svc, src, hlb_htons(1024), hlb_htons(80));
        int idx = hlb_sf_insert(w->sf, hlb_sf_part_of(w->sf, h, 0), (uint16_t)(1 + f % 4), h, 1000);
        uint32_t ident = idx >= 0 ? hlb_sf_ident(0, (uint32_t)idx) : 1 + f % 4;
        ck_tsecr[f] = 1u << 31 | ((ident ^ (uint32_t)h) & HLB_COOKIE_MASK) << 16 | 7;
    }
    uint64_t hits0 = w->sf->st.hits;
    if (!only || strcmp(only, "stateful") == 0)
        stateful = run_mode("cheetah-stateful-decode", w, t, FLOWS, 0, secs, tsc_hz);
    uint64_t hits = w->sf->st.hits - hits0;
    hlb_sf_free(w->sf);

    w->sf = hlb_sf_create(HLB_SF_DEFAULT_PARTITIONS, HLB_SF_DEFAULT_IDLE_MS);
    ck_frames = 0;
    ck_new_syns = 1;
    uint64_t ins0 = w->sf->st.inserts, ex0 = w->sf->st.exhausted;
    if (!only || strcmp(only, "syn") == 0)
        fresh = run_mode("cheetah-stateful-new-flows", w, t, FLOWS, 1, secs, tsc_hz);
    uint64_t ins = w->sf->st.inserts - ins0, ex = w->sf->st.exhausted - ex0;
    ck_new_syns = 0;
    hlb_sf_free(w->sf);
    w->sf = NULL;
    hlb_table_free(t);
    if (only)
        return;
    printf("{\"mode\":\"cheetah-ratios\",\"statefulHits\":%" PRIu64 ",\"statefulInserts\":%" PRIu64
           ",\"statefulExhausted\":%" PRIu64 ",\"statefulVsStateless\":%.3f,"
           "\"statefulInsertsPerSecondM\":%.2f,\"connNewVsStatefulNew\":%.3f}\n",
           hits, ins, ex, stateful / stateless, tsc_hz / fresh / 1e6,
           conn_new_cpp > 0 ? conn_new_cpp / fresh : 0.0);
    printf("target stateful decode <= 1.1x the cycles per packet of stateless decode: %s "
           "(%.2fx)\n", stateful / stateless <= 1.1 ? "MET" : "NOT MET", stateful / stateless);
    if (conn_new_cpp > 0)
        printf("target stateful, every packet a new connection, >= 2x fewer cycles than the "
               "connection table: %s (%.2fx)\n", conn_new_cpp / fresh >= 2 ? "MET" : "NOT MET",
               conn_new_cpp / fresh);
    printf("target stateful inserts >= 6.4 M/s per core (packet core, SYN to hint): %s "
           "(%.2f M/s)\n", tsc_hz / fresh / 1e6 >= 6.4 ? "MET" : "NOT MET", tsc_hz / fresh / 1e6);
}

/* The pins mode: the same PIN_FLOWS flows hashed, then each pinned to a DIP of the
 * pool (a backend, as a hand-off pins it), in one run. */
static void pins_modes(struct hlb_worker *w, double secs, double tsc_hz)
{
    struct hlb_table_error err;
    struct hlb_table_options opt = {.default_pin = 0};
    const char *j = table_json("crc32", 0);
    struct hlb_vip_table *t = hlb_table_from_json(j, strlen(j), &opt, &err);
    t->gen = 1;
    double hashed = run_mode("crc32-1k-flows", w, t, PIN_FLOWS, 0, secs, tsc_hz);
    struct hlb_pin_table *pins = NULL;
    for (uint32_t f = 0; f < PIN_FLOWS; f++) {
        /* make_frame()'s flow f */
        struct hlb_5tuple tu = {hlb_htonl(0x0a000000u | f), hlb_htonl(0x64400001u),
                                hlb_htons((uint16_t)(1024 + (f >> 24))), hlb_htons(80),
                                HLB_IPPROTO_TCP};
        struct hlb_pin pin = {.to = t->dips[f % t->n_dips]};
        hlb_conn_key(&tu, &pin.k0, &pin.k1);
        int found;
        struct hlb_pin_table *next = hlb_pins_change(pins, &pin, NULL, &found);
        if (!next) {
            fprintf(stderr, "out of memory building the pins\n");
            exit(1);
        }
        hlb_pins_free(pins);
        pins = next;
    }
    t->pins = pins;
    hlb_pins_mark(t, pins);
    uint64_t pinned0 = w->st.pinned_packets;
    double pinned = run_mode("pinned-1k-flows", w, t, PIN_FLOWS, 0, secs, tsc_hz);
    printf("{\"mode\":\"pins-ratio\",\"pinnedPackets\":%" PRIu64 ",\"pinnedOverHashed\":%.3f}\n",
           w->st.pinned_packets - pinned0, pinned / hashed);
    hlb_table_free(t);
    hlb_pins_free(pins);
}

int main(int argc, char **argv)
{
    double tsc_hz = argc > 1 ? atof(argv[1]) : 2.45e9;
    double secs = argc > 2 ? atof(argv[2]) : 1.0;
    int only_stateless = argc > 3 && strcmp(argv[3], "stateless") == 0;
    int only_conn = argc > 3 && strcmp(argv[3], "conn") == 0;
    int n_stateless = argc > 3 && strcmp(argv[3], "crc32") == 0 ? 1 : 2;
    int only_cheetah = argc > 3 && strcmp(argv[3], "cheetah") == 0;
    int only_pins = argc > 3 && strcmp(argv[3], "pins") == 0;
    struct hlb_table_error err;
    struct hlb_table_options opt = {.default_pin = 0};
    struct hlb_worker w;
    memset(&w, 0, sizeof(w));
    w.cfg.self_ip = hlb_htonl(0xc000020a);
    w.cfg.gw_known = 1;
    w.cfg.outer_ttl = 64;
    w.cfg.mtu = 1500;

    const char *modes[][2] = {{"crc32", "stateless-crc32"}, {"ovs", "stateless-ovs"}};
    if (only_pins) {
        pins_modes(&w, secs, tsc_hz);
        return 0;
    }
    if (only_cheetah) {
        /* the connection table's every-packet-new figure, measured in this run */
        w.ct = hlb_conn_table_create(4u << 20, NULL);
        const char *j = table_json("crc32", 1);
        struct hlb_vip_table *t = hlb_table_from_json(j, strlen(j), &opt, &err);
        t->gen = 1;
        double cn = getenv("HLB_BENCH_CORE_CHEETAH") ? 0 :
                    run_mode("conn-new-flows", &w, t, FLOWS, 1, secs, tsc_hz);
        hlb_table_free(t);
        hlb_conn_table_free(w.ct);
        w.ct = NULL;
        cheetah_modes(&w, secs, tsc_hz, cn);
        return 0;
    }
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
    {
        struct hlb_conn_table *keep = w.ct;
        w.ct = NULL;
        cheetah_modes(&w, secs, tsc_hz, cpp);
        w.ct = keep;
    }

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
