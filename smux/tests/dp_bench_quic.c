/* Processing-only benchmark of Cheetah's two decodes in the packet core (no DPDK, no
 * I/O), in one run: cycles per packet of hlb_dp_burst for a TCP segment whose TSecr
 * echoes a cookie (66-byte frames, the lean pass's cookie loop) and for a QUIC
 * short-header packet whose connection id carries one (p4/COOKIE-SPEC.md §13; 80-byte
 * frames, the general code), 10,000 flows each on one cheetah VIP of four servers.
 * The two modes alternate for `reps` rounds; medians and their ratio are printed.
 * Times are the thread's CPU time, converted with the TSC rate given.
 *
 *   dp-bench-quic <tsc_hz> [seconds_per_round] [reps]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "datapath.h"
#include "hlb_pkt.h"
#include "quic_cookie.h"
#include "vip_table.h"

#define FLOWS 10000
#define BURST HLB_RX_BURST
#define MAX_REPS 15
#define QUIC_LEN 80                      /* Ethernet + IP + UDP + 38 bytes of QUIC */

static uint8_t tcp_tmpl[FLOWS][66], quic_tmpl[FLOWS][QUIC_LEN];

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Ethernet + IPv4 from flow f's client to the VIP, proto, ip_len bytes of IP. */
static void make_ip(uint8_t *d, uint32_t f, uint8_t proto, uint16_t ip_len)
{
    struct hlb_eth_hdr eth = {.type = hlb_htons(HLB_ETHERTYPE_IPV4)};
    struct hlb_ipv4_hdr ip = {.ver_ihl = 0x45, .tot_len = hlb_htons(ip_len), .ttl = 64,
                              .proto = proto, .src = hlb_htonl(0x0a000000u | f),
                              .dst = hlb_htonl(0x64400001u)};
    ip.csum = hlb_csum(&ip, 20);
    memset(d, 0, 14u + ip_len);
    memcpy(d, &eth, 14);
    memcpy(d + 14, &ip, 20);
}

static void make_frames(const struct hlb_service *s)
{
    for (uint32_t f = 0; f < FLOWS; f++) {
        uint32_t ident = 1 + f % 4;
        uint16_t sp = hlb_htons(1024), tcp_port = hlb_htons(80), quic_port = hlb_htons(443);
        /* TCP: NOP, NOP, timestamp whose TSecr carries the cookie (COOKIE-SPEC §2). */
        uint8_t *d = tcp_tmpl[f];
        make_ip(d, f, HLB_IPPROTO_TCP, 52);
        memcpy(d + 34, &sp, 2);
        memcpy(d + 36, &tcp_port, 2);
        d[46] = 8 << 4;
        d[47] = HLB_TCP_ACK;
        uint64_t h = hlb_ck_hash(s, hlb_htonl(0x0a000000u | f), sp, tcp_port);
        uint32_t tsecr = hlb_htonl(1u << 31 | ((ident ^ (uint32_t)h) & HLB_COOKIE_MASK) << 16 | 7);
        memcpy(d + 54, (const uint8_t[]){1, 1, 8, 10, 0, 0, 3, 0xe8}, 8);
        memcpy(d + 62, &tsecr, 4);
        /* QUIC: short header, the server's 8-byte id (§13.1). */
        d = quic_tmpl[f];
        make_ip(d, f, HLB_IPPROTO_UDP, QUIC_LEN - 14);
        uint16_t ulen = hlb_htons(QUIC_LEN - 34);
        memcpy(d + 34, &sp, 2);
        memcpy(d + 36, &quic_port, 2);
        memcpy(d + 38, &ulen, 2);
        uint8_t *cid = d + 43;
        d[42] = 0x41;
        for (int i = 0; i < 6; i++)
            cid[2 + i] = (uint8_t)((f * 2654435761u) >> (4 * i));
        uint32_t field = (ident ^ (uint32_t)hlb_quic_hash(s, quic_port, cid)) & 0xffff;
        cid[0] = (uint8_t)(field >> 8);
        cid[1] = (uint8_t)field;
    }
}

/* Cycles per packet of one round of frames from tmpl (len bytes each). */
static double run(struct hlb_worker *w, struct hlb_vip_table *t, const uint8_t *tmpl,
                  size_t stride, uint32_t len, double seconds, double tsc_hz, uint64_t *fwd)
{
    static uint8_t buf[BURST][256];
    struct hlb_pkt pk[BURST];
    uint8_t verdict[BURST];
    uint64_t pkts = 0, fwd0 = w->st.fwd_packets;
    uint32_t next = 0;
    double t0 = thread_cpu(), t1;
    do {
        for (int iter = 0; iter < 1000; iter++) {
            for (int i = 0; i < BURST; i++) {
                memcpy(buf[i] + 128, tmpl + (size_t)next * stride, len);
                next = next + 1 == FLOWS ? 0 : next + 1;
                pk[i] = (struct hlb_pkt){.data = buf[i] + 128, .len = len, .headroom = 128};
            }
            hlb_dp_burst(w, t, pk, verdict, BURST, 1000);
            pkts += BURST;
        }
        t1 = thread_cpu();
    } while (t1 - t0 < seconds);
    *fwd += w->st.fwd_packets - fwd0;
    return (t1 - t0) * tsc_hz / (double)pkts;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    double tsc_hz = argc > 1 ? atof(argv[1]) : 2.45e9;
    double secs = argc > 2 ? atof(argv[2]) : 1.0;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    if (tsc_hz <= 0 || secs <= 0 || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "usage: dp-bench-quic <tsc_hz> [seconds_per_round] [reps 1..%d]\n",
                MAX_REPS);
        return 2;
    }
    const char *dips = "{\"ip\":\"10.10.0.1\",\"serverId\":1},{\"ip\":\"10.10.0.2\",\"serverId\":2},"
                       "{\"ip\":\"10.10.0.3\",\"serverId\":3},{\"ip\":\"10.10.0.4\",\"serverId\":4}";
    char j[1024];
    snprintf(j, sizeof(j),
             "{\"version\":1,\"vips\":[{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\","
             "\"connTable\":false,\"affinity\":\"cheetah\",\"cookieKey\":"
             "\"000102030405060708090a0b0c0d0e0f\",\"mechanism\":\"rr\",\"ports\":["
             "{\"proto\":\"tcp\",\"port\":80,\"dips\":[%s]},{\"proto\":\"udp\",\"port\":443,"
             "\"dips\":[%s]}]}]}", dips, dips);
    struct hlb_table_error err;
    struct hlb_table_options opt = {.self_ip = hlb_htonl(0xc000020a)};
    struct hlb_vip_table *t = hlb_table_from_json(j, strlen(j), &opt, &err);
    if (!t) {
        fprintf(stderr, "table: %s: %s\n", err.field, err.reason);
        return 2;
    }
    t->gen = 1;
    make_frames(&t->services[0]);
    struct hlb_worker w;
    memset(&w, 0, sizeof(w));
    w.cfg.self_ip = hlb_htonl(0xc000020a);
    w.cfg.gw_known = 1;
    w.cfg.outer_ttl = 64;
    w.cfg.mtu = 1500;
    double tcp[MAX_REPS], quic[MAX_REPS];
    uint64_t tcp_fwd = 0, quic_fwd = 0;
    for (int r = 0; r < reps; r++) {
        tcp[r] = run(&w, t, &tcp_tmpl[0][0], sizeof(tcp_tmpl[0]), 66, secs, tsc_hz, &tcp_fwd);
        quic[r] = run(&w, t, &quic_tmpl[0][0], sizeof(quic_tmpl[0]), QUIC_LEN, secs, tsc_hz,
                      &quic_fwd);
    }
    uint64_t drops = 0;
    for (int i = 0; i < HLB_DROP_MAX; i++)
        drops += w.st.drops[i];
    double mt = median(tcp, reps), mq = median(quic, reps);
    printf("{\"mode\":\"cheetah-tcp-decode\",\"cyclesPerPacket\":%.1f,\"forwarded\":%" PRIu64 "}\n",
           mt, tcp_fwd);
    printf("{\"mode\":\"cheetah-quic-short-decode\",\"cyclesPerPacket\":%.1f,\"forwarded\":%" PRIu64
           ",\"quicDecoded\":%" PRIu64 "}\n", mq, quic_fwd, w.st.quic_decoded);
    printf("{\"mode\":\"cheetah-quic-vs-tcp\",\"reps\":%d,\"ratio\":%.3f,\"drops\":%" PRIu64 "}\n",
           reps, mq / mt, drops);
    hlb_table_free(t);
    return drops != 0 || w.st.quic_decoded != quic_fwd;   /* every packet must be decoded */
}
