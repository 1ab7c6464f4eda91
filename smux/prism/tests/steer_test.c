/* prism-steer-test: the host agent's XDP program (xdp_decap.bpf.o) with the
 * Prism steering map, through BPF_PROG_TEST_RUN on a tunnelled TCP segment:
 *   - no entry for the flow: decapsulated (XDP_PASS, outer header gone);
 *   - LOCKED: XDP_DROP, counter locked_drop;
 *   - FORWARD: XDP_TX, outer destination = the owner, outer source = this host,
 *     outer checksum valid, MACs swapped, inner packet untouched, counter forwarded;
 *   - a backend host (hlb_prism_backend = 1), real sockets of this network
 *     namespace on 127.0.0.1: a segment of a flow without a socket, of a flow
 *     that only meets a listener, of a socket in repair mode is dropped (counter
 *     unready_drop); a SYN, an established socket out of repair mode, and any
 *     segment with the guard off are delivered.
 * Then the cost per packet of each case (--repeat runs in the kernel, median of
 * --rounds; the kernel's time includes its clock reads).
 *   prism-steer-test OBJ [--repeat N] [--rounds R]
 * Prints one JSON object; exits 1 if a check fails. */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <linux/if_ether.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlb_decap.h"
#include "hlb_prism.h"

#define MUX "10.78.2.1"
#define HOST "10.78.2.2"
#define OWNER "10.78.12.2"
#define CLIENT "10.78.1.2"
#define VIP "10.210.0.10"

static int failures;

#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "FAIL: %s\n", what); failures++; } } while (0)

static uint16_t csum(const void *p, size_t n)
{
    const uint16_t *w = p;
    uint32_t s = 0;
    for (size_t i = 0; i < n / 2; i++) {
        s += w[i];
    }
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    return (uint16_t) ~s;
}

static uint32_t ip(const char *s)
{
    uint32_t a;
    inet_pton(AF_INET, s, &a);
    return a;
}

/* Ethernet + outer IPv4 (proto 4) + inner IPv4 + TCP (ACK, 20 bytes). */
static size_t build(uint8_t *pkt)
{
    memset(pkt, 0, 128);
    struct ethhdr *eth = (void *) pkt;
    memcpy(eth->h_dest, "\x02\0\0\0\0\x02", 6);     /* this host */
    memcpy(eth->h_source, "\x02\0\0\0\0\x01", 6);   /* the router */
    eth->h_proto = htons(ETH_P_IP);
    struct hlb_ip4 *outer = (void *) (eth + 1), *inner = outer + 1;
    *outer = (struct hlb_ip4) { .ver_ihl = 0x45, .tot_len = htons(60), .ttl = 64, .protocol = 4,
                                .saddr = ip(MUX), .daddr = ip(HOST) };
    outer->check = csum(outer, 20);
    *inner = (struct hlb_ip4) { .ver_ihl = 0x45, .tot_len = htons(40), .ttl = 64, .protocol = 6,
                                .saddr = ip(CLIENT), .daddr = ip(VIP) };
    inner->check = csum(inner, 20);
    uint8_t *tcp = (uint8_t *) (inner + 1);
    uint16_t ports[2] = { htons(40000), htons(80) };
    memcpy(tcp, ports, 4);
    tcp[12] = 5 << 4;
    tcp[13] = 0x10;
    return 14 + 60;
}

/* The test packet with inner addresses and ports of our own and TCP flags. */
static void retuple(uint8_t *pkt, const char *src, uint16_t sport, const char *dst, uint16_t dport,
                    uint8_t flags)
{
    struct hlb_ip4 *inner = (void *) (pkt + 14 + 20);
    inner->saddr = ip(src);
    inner->daddr = ip(dst);
    inner->check = 0;
    inner->check = csum(inner, 20);
    uint8_t *tcp = (uint8_t *) (inner + 1);
    uint16_t ports[2] = { htons(sport), htons(dport) };
    memcpy(tcp, ports, 4);
    tcp[13] = flags;
}

/* A TCP socket bound to 127.0.0.1 on a free port; its port in *port. */
static int bound_socket(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t n = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *) &a, sizeof a) || getsockname(fd, (struct sockaddr *) &a, &n)) {
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

struct run {
    int verdict;
    uint8_t out[256];
    uint32_t out_len;
    uint32_t ns;
};

static int run(int prog, const uint8_t *pkt, size_t len, int repeat, struct run *r)
{
    DECLARE_LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = (uint32_t) len,
                        .data_out = r->out, .data_size_out = sizeof r->out, .repeat = repeat);
    int rc = bpf_prog_test_run_opts(prog, &o);
    r->verdict = (int) o.retval;
    r->out_len = o.data_size_out;
    r->ns = o.duration;
    return rc;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    return x < y ? -1 : x > y;
}

static uint32_t median_ns(int prog, const uint8_t *pkt, size_t len, int repeat, int rounds)
{
    uint32_t *v = calloc((size_t) rounds, sizeof *v);
    struct run r;
    for (int i = 0; i < rounds; i++) {
        run(prog, pkt, len, repeat, &r);
        v[i] = r.ns;
    }
    qsort(v, (size_t) rounds, sizeof *v, cmp_u32);
    uint32_t m = v[rounds / 2];
    free(v);
    return m;
}

static uint64_t counter(int fd, uint32_t which)
{
    int ncpu = libbpf_num_possible_cpus();
    uint64_t *per = calloc((size_t) ncpu, sizeof *per), sum = 0;
    if (bpf_map_lookup_elem(fd, &which, per) == 0) {
        for (int c = 0; c < ncpu; c++) {
            sum += per[c];
        }
    }
    free(per);
    return sum;
}

int main(int argc, char **argv)
{
    int repeat = 1000, rounds = 101;
    if (argc < 2) {
        fprintf(stderr, "usage: prism-steer-test OBJ [--repeat N] [--rounds R]\n");
        return 2;
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--repeat")) {
            repeat = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--rounds")) {
            rounds = atoi(argv[i + 1]);
        }
    }
    struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
    if (!obj || bpf_object__load(obj)) {
        fprintf(stderr, "cannot load %s (root needed)\n", argv[1]);
        return 1;
    }
    int prog = bpf_program__fd(bpf_object__find_program_by_name(obj, "hlb_xdp_decap"));
    int local = bpf_object__find_map_fd_by_name(obj, "hlb_local_addrs");
    int muxes = bpf_object__find_map_fd_by_name(obj, "hlb_allowed_muxes");
    int vips = bpf_object__find_map_fd_by_name(obj, "hlb_allowed_vips");
    int flows = bpf_object__find_map_fd_by_name(obj, PRISM_PIN_FLOWS);
    int counters = bpf_object__find_map_fd_by_name(obj, PRISM_PIN_COUNTERS);
    uint8_t one = 1;
    uint32_t host = ip(HOST);
    struct hlb_lpm_key any = { .prefixlen = 0, .addr = 0 };
    bpf_map_update_elem(local, &host, &one, BPF_ANY);
    bpf_map_update_elem(muxes, &any, &one, BPF_ANY);
    bpf_map_update_elem(vips, &any, &one, BPF_ANY);

    uint8_t pkt[128];
    size_t len = build(pkt);
    struct prism_flow_key key = { .client = ip(CLIENT), .vip = ip(VIP), .client_port = htons(40000),
                                  .vip_port = htons(80) };
    struct run r;

    /* No entry: decapsulated. */
    run(prog, pkt, len, 1, &r);
    CHECK(r.verdict == XDP_PASS && r.out_len == len - 20, "no entry: decapsulated");
    CHECK(r.out_len >= 34 && !memcmp(r.out + 14, pkt + 34, 40), "no entry: inner packet delivered");
    uint32_t ns_miss = median_ns(prog, pkt, len, repeat, rounds);

    /* LOCKED: dropped. */
    struct prism_flow_val v = { .action = PRISM_STEER_LOCKED };
    bpf_map_update_elem(flows, &key, &v, BPF_ANY);
    uint64_t drops0 = counter(counters, PRISM_C_LOCKED_DROP);
    run(prog, pkt, len, 1, &r);
    CHECK(r.verdict == XDP_DROP, "locked: dropped");
    CHECK(counter(counters, PRISM_C_LOCKED_DROP) == drops0 + 1, "locked: counted once");
    uint32_t ns_locked = median_ns(prog, pkt, len, repeat, rounds);

    /* FORWARD: re-encapsulated to the owner, sent back out. */
    v = (struct prism_flow_val) { .action = PRISM_STEER_FORWARD, .owner_dip = ip(OWNER) };
    bpf_map_update_elem(flows, &key, &v, BPF_ANY);
    uint64_t fwd0 = counter(counters, PRISM_C_FORWARDED);
    run(prog, pkt, len, 1, &r);
    struct hlb_ip4 *o = (void *) (r.out + 14);
    CHECK(r.verdict == XDP_TX && r.out_len == len, "forward: XDP_TX, same length");
    CHECK(o->daddr == ip(OWNER) && o->saddr == ip(HOST), "forward: outer this host -> owner");
    CHECK(csum(o, 20) == 0, "forward: outer checksum valid");
    CHECK(!memcmp(r.out, pkt + 6, 6) && !memcmp(r.out + 6, pkt, 6), "forward: MACs swapped");
    CHECK(!memcmp(r.out + 34, pkt + 34, 40), "forward: inner packet untouched");
    CHECK(counter(counters, PRISM_C_FORWARDED) == fwd0 + 1, "forward: counted once");
    uint32_t ns_fwd = median_ns(prog, pkt, len, repeat, rounds);

    /* A backend host: segments of flows without a ready socket are dropped. */
    bpf_map_delete_elem(flows, &key);
    int backend = bpf_object__find_map_fd_by_name(obj, PRISM_BACKEND_MAP);
    uint32_t zero = 0, on = 1, off = 0;
    bpf_map_update_elem(backend, &zero, &on, BPF_ANY);
    uint16_t lport, rport, cport = 40001;
    int lfd = bound_socket(&lport), rfd = bound_socket(&rport);
    CHECK(lfd >= 0 && rfd >= 0 && listen(lfd, 8) == 0, "guard: test sockets");
    uint64_t unready0 = counter(counters, PRISM_C_UNREADY_DROP);
    retuple(pkt, "127.0.0.1", cport, "127.0.0.1", 1, 0x10);   /* port 1: nobody */
    run(prog, pkt, len, 1, &r);
    CHECK(r.verdict == XDP_DROP, "guard: no socket: dropped");
    retuple(pkt, "127.0.0.1", cport, "127.0.0.1", 1, 0x02);
    run(prog, pkt, len, 1, &r);
    CHECK(r.verdict == XDP_PASS, "guard: a SYN without a socket: delivered");
    retuple(pkt, "127.0.0.1", cport, "127.0.0.1", lport, 0x10);
    run(prog, pkt, len, 1, &r);
    CHECK(r.verdict == XDP_DROP, "guard: only a listener: dropped");
    /* A socket being imported: repair mode, connected without a SYN. */
    int repair_on = 1, no_probe = -1;   /* TCP_REPAIR_OFF_NO_WP */
    struct sockaddr_in peer = { .sin_family = AF_INET, .sin_port = htons(cport),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    CHECK(setsockopt(rfd, IPPROTO_TCP, TCP_REPAIR, &repair_on, sizeof repair_on) == 0
          && connect(rfd, (struct sockaddr *) &peer, sizeof peer) == 0, "guard: repair-mode socket");
    retuple(pkt, "127.0.0.1", cport, "127.0.0.1", rport, 0x10);
    run(prog, pkt, len, 1, &r);
    CHECK(r.verdict == XDP_DROP, "guard: socket in repair mode: dropped");
    CHECK(counter(counters, PRISM_C_UNREADY_DROP) == unready0 + 3, "guard: three drops counted");
    setsockopt(rfd, IPPROTO_TCP, TCP_REPAIR, &no_probe, sizeof no_probe);
    run(prog, pkt, len, 1, &r);
    CHECK(r.verdict == XDP_PASS, "guard: socket out of repair mode: delivered");
    uint32_t ns_guard = median_ns(prog, pkt, len, repeat, rounds);
    bpf_map_update_elem(backend, &zero, &off, BPF_ANY);
    retuple(pkt, "127.0.0.1", cport, "127.0.0.1", 1, 0x10);
    run(prog, pkt, len, 1, &r);
    CHECK(r.verdict == XDP_PASS, "guard off: no socket: delivered");
    struct linger abort_close = { 1, 0 };
    setsockopt(rfd, SOL_SOCKET, SO_LINGER, &abort_close, sizeof abort_close);
    close(rfd);
    close(lfd);

    printf("{\"checks_failed\":%d,\"ns_per_packet\":{\"decap_no_entry\":%u,\"locked_drop\":%u,"
           "\"forward\":%u,\"backend_ready_socket\":%u},\"repeat\":%d,\"rounds\":%d}\n",
           failures, ns_miss, ns_locked, ns_fwd, ns_guard, repeat, rounds);
    bpf_object__close(obj);
    return failures ? 1 : 0;
}
