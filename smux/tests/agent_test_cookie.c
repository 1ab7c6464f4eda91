/* The host agent's Cheetah cookie in BPF (needs root: loads BPF), p4/COOKIE-SPEC.md.
 *
 * Loads the XDP decapsulator and the cookie object the way hlb-agent-xdp does (shared
 * maps, configuration through src/cookie_maps.c) and runs them with BPF_PROG_TEST_RUN:
 *   - every row of the shared vectors (p4/vectors/cookie_vectors.csv, and any further
 *     vector files: run-tests.sh adds 10,000 random rows): a tunnelled SYN (with the
 *     stateful hint when the ident is stateful), the SYN-ACK the server sends (Linux
 *     layout), then per row a data segment out (TSval must become wire_tsval) and the
 *     client's tunnelled ACK in (TSecr must become tsecr); checksums verified;
 *   - key rotation, restore misses, misrouted cookies, segments that are not encoded;
 *   - a --pin-dir written by a build whose host entry was smaller: the maps load, and
 *     the key generation counts on from the pinned one;
 *   - scapy-built fixtures (tests/data/agent_cookie_fixtures.txt): unusual option
 *     orders, SACK blocks, RSTs, malformed lists, byte for byte.
 *
 * usage: agent_test_cookie XDP_OBJ COOKIE_OBJ FIXTURES VECTORS [VECTORS...]
 *        agent_test_cookie XDP_OBJ COOKIE_OBJ FIXTURES VECTORS --bench N */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "cookie_maps.h"
#include "hlb_cookie.h"
#include "hlb_decap.h"

#define MAX_FRAME 512
#define LOCAL "10.99.0.2"     /* this DIP host's underlay address */
#define MUX "10.77.0.1"       /* the mux that tunnels to it */

static const char *xdp_path, *cookie_path, *fixtures_path;
static const char **vector_paths;
static int n_vector_paths;
static struct bpf_object *xdp_obj, *cookie_obj;
static int xdp_fd, egress_fd;

/* ------------------------------------------------------------- packets */

struct seg {
    uint32_t src, dst;          /* network order */
    uint16_t sport, dport;      /* network order */
    uint8_t flags;              /* TCP flags byte */
    int layout;                 /* LAYOUT_* */
    uint32_t tsval, tsecr;      /* host order */
};

enum { LAYOUT_DATA, LAYOUT_SYNACK, LAYOUT_NO_TS };
#define F_FIN 0x01
#define F_SYN 0x02
#define F_RST 0x04
#define F_ACK 0x10

static uint16_t csum_fold(uint32_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t) sum;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i += 2) {
        sum += (uint32_t) p[i] << 8 | p[i + 1];
    }
    if (n & 1) {
        sum += (uint32_t) p[n - 1] << 8;
    }
    return sum;
}

/* Ones' complement sum over the pseudo-header and the TCP segment of the IPv4
 * packet at ip: 0xffff when the checksum is right. */
static uint16_t tcp_sum(const uint8_t *ip)
{
    size_t ihl = (ip[0] & 15) * 4, tot = (size_t) ip[2] << 8 | ip[3];
    uint32_t sum = csum_add(0, ip + 12, 8) + 6 + (uint32_t) (tot - ihl);
    return csum_fold(csum_add(sum, ip + ihl, tot - ihl));
}

static void ip_header(uint8_t *ip, uint32_t src, uint32_t dst, uint8_t proto, size_t tot)
{
    memset(ip, 0, 20);
    ip[0] = 0x45;
    ip[2] = (uint8_t) (tot >> 8);
    ip[3] = (uint8_t) tot;
    ip[8] = 64;
    ip[9] = proto;
    memcpy(ip + 12, &src, 4);
    memcpy(ip + 16, &dst, 4);
    uint16_t c = (uint16_t) ~csum_fold(csum_add(0, ip, 20));
    ip[10] = (uint8_t) (c >> 8);
    ip[11] = (uint8_t) c;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) (v >> 24); p[1] = (uint8_t) (v >> 16); p[2] = (uint8_t) (v >> 8); p[3] = (uint8_t) v;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

/* An IPv4 TCP segment with 8 payload bytes at ip; returns its length. */
static size_t tcp_segment(uint8_t *ip, const struct seg *s)
{
    static const uint8_t data_opts[12] = { 1, 1, 8, 10 };
    static const uint8_t synack_opts[20] = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 0, 0, 0, 0, 0,
                                             1, 3, 3, 7 };
    const uint8_t *opts = s->layout == LAYOUT_SYNACK ? synack_opts : data_opts;
    size_t optlen = s->layout == LAYOUT_SYNACK ? 20 : s->layout == LAYOUT_DATA ? 12 : 0;
    size_t th_len = 20 + optlen, tot = 20 + th_len + 8;
    ip_header(ip, s->src, s->dst, 6, tot);
    uint8_t *th = ip + 20;
    memset(th, 0, th_len + 8);
    memcpy(th, &s->sport, 2);
    memcpy(th + 2, &s->dport, 2);
    put32(th + 4, 0x01020304);
    put32(th + 8, s->flags & F_ACK ? 0x0a0b0c0d : 0);
    th[12] = (uint8_t) ((th_len / 4) << 4);
    th[13] = s->flags;
    th[14] = 0xff;
    memcpy(th + 20, opts, optlen);
    if (optlen) {
        int tsoff = s->layout == LAYOUT_SYNACK ? 8 : 4;
        put32(th + 20 + tsoff, s->tsval);
        put32(th + 20 + tsoff + 4, s->tsecr);
    }
    memcpy(th + th_len, "cheetah!", 8);
    uint16_t c = (uint16_t) ~tcp_sum(ip);
    th[16] = (uint8_t) (c >> 8);
    th[17] = (uint8_t) c;
    return tot;
}

static const uint8_t ETH_HDR[14] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00 };

static size_t egress_frame(uint8_t *f, const struct seg *s)
{
    memcpy(f, ETH_HDR, 14);
    return 14 + tcp_segment(f + 14, s);
}

/* The client's segment as a mux tunnels it to this host (IP-in-IP). */
static size_t ingress_frame(uint8_t *f, const struct seg *s)
{
    memcpy(f, ETH_HDR, 14);
    size_t inner = tcp_segment(f + 14 + 20, s);
    uint32_t mux, local;
    inet_pton(AF_INET, MUX, &mux);
    inet_pton(AF_INET, LOCAL, &local);
    ip_header(f + 14, mux, local, 4, 20 + inner);
    return 14 + 20 + inner;
}

/* Offset of TSval in a frame whose IP header starts at ip_off (fast layouts). */
static size_t tsval_at(const uint8_t *f, size_t ip_off)
{
    const uint8_t *th = f + ip_off + (f[ip_off] & 15) * 4;
    return (size_t) (th - f) + 20 + (th[20] == 2 ? 8 : 4);
}

static int run(int prog, const uint8_t *in, size_t len, uint8_t *out, uint32_t *out_len)
{
    LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (uint32_t) len,
                .data_out = out, .data_size_out = MAX_FRAME, .repeat = 1);
    if (bpf_prog_test_run_opts(prog, &o) != 0) {
        fail_msg("BPF_PROG_TEST_RUN: %s", strerror(errno));
    }
    *out_len = o.data_size_out;
    return (int) o.retval;
}

/* Sends s out through tc egress; returns the TSval on the wire. */
static uint32_t send_out(const struct seg *s)
{
    uint8_t in[MAX_FRAME], out[MAX_FRAME];
    uint32_t n;
    size_t len = egress_frame(in, s);
    assert_int_equal(run(egress_fd, in, len, out, &n), TC_ACT_OK);
    assert_int_equal(n, len);
    assert_int_equal(tcp_sum(out + 14), 0xffff);
    /* Only TSval and the checksum change. */
    size_t csum = 14 + (in[14] & 15) * 4 + 16;
    assert_memory_equal(out, in, csum);
    assert_memory_equal(out + csum + 2, in + csum + 2, tsval_at(in, 14) - csum - 2);
    assert_int_equal(get32(out + tsval_at(in, 14) + 4), s->tsecr);
    return get32(out + tsval_at(in, 14));
}

/* Receives s through the XDP decapsulator; returns the TSecr the kernel gets. */
static uint32_t receive(const struct seg *s)
{
    uint8_t in[MAX_FRAME], out[MAX_FRAME];
    uint32_t n;
    size_t len = ingress_frame(in, s);
    assert_int_equal(run(xdp_fd, in, len, out, &n), XDP_PASS);
    assert_int_equal(n, len - 20);
    assert_int_equal(tcp_sum(out + 14), 0xffff);
    size_t at = tsval_at(out, 14), csum = 14 + (out[14] & 15) * 4 + 16;
    /* Decapsulated; TSval kept; only TSecr and the checksum change. */
    assert_memory_equal(out + 14, in + 34, csum - 14);
    assert_memory_equal(out + csum + 2, in + 20 + csum + 2, at + 4 - csum - 2);
    return get32(out + at + 4);
}

static uint64_t counter(int which)
{
    uint64_t c[HLB_CK_MAX];
    assert_int_equal(hlb_cookie_counters_read(xdp_obj, c), 0);
    return c[which];
}

/* ------------------------------------------------------------- configuration */

static struct hlb_cookie_config cfg;

static void configure(uint16_t server_id, const char *vip, int mode, const uint8_t key[16])
{
    memset(&cfg, 0, sizeof cfg);
    cfg.server_id = server_id;
    cfg.keepalive_s = HLB_COOKIE_KEEPALIVE_S;
    cfg.n_vips = 1;
    cfg.prefixes[0].prefixlen = 32;
    inet_pton(AF_INET, vip, &cfg.prefixes[0].addr);
    cfg.vips[0].mode = (uint32_t) mode;
    for (int i = 7; i >= 0; i--) {
        cfg.vips[0].k0 = cfg.vips[0].k0 << 8 | key[i];
        cfg.vips[0].k1 = cfg.vips[0].k1 << 8 | key[8 + i];
    }
    assert_int_equal(hlb_cookie_config_apply(xdp_obj, &cfg), 0);
}

/* A pin directory from a build whose host entry was 16 bytes (gen, server id,
 * keep-alive, netns cookie: the layout before the flags), at generation 41: the decap
 * object pins its maps there and loads (libbpf would refuse the old map), and the first
 * configuration takes generation 42, not 1 (a connection's state pinned at a low
 * generation must not pass for current). */
static void test_pin_dir_of_an_older_layout(void **state)
{
    (void) state;
    char dir[] = "/tmp/hlb-cookie-pins-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(mount("bpf", dir, "bpf", 0, NULL), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/hlb_cookie_host", dir);
    int old = bpf_map_create(BPF_MAP_TYPE_ARRAY, "hlb_cookie_host", 4, 16, 1, NULL);
    assert_true(old >= 0);
    uint32_t zero = 0, v16[4] = { 41, 7, 0, 0 };
    assert_int_equal(bpf_map_update_elem(old, &zero, v16, BPF_ANY), 0);
    assert_int_equal(bpf_obj_pin(old, path), 0);
    close(old);

    struct bpf_object *obj = bpf_object__open_file(xdp_path, NULL);
    assert_false(!obj || libbpf_get_error(obj));
    assert_int_equal(hlb_cookie_pin_maps(obj, dir), 0);
    assert_int_equal(bpf_object__load(obj), 0);
    struct hlb_cookie_config cfg = { .server_id = 7 };
    assert_int_equal(hlb_cookie_config_apply(obj, &cfg), 0);
    struct hlb_cookie_host h;
    int fd = bpf_object__find_map_fd_by_name(obj, "hlb_cookie_host");
    assert_int_equal(bpf_map_lookup_elem(fd, &zero, &h), 0);
    assert_int_equal(h.gen, 42);
    assert_int_equal(h.server_id, 7);
    bpf_object__close(obj);
    umount(dir);    /* the pins go with the mount */
    rmdir(dir);
}

static int setup(void **state)
{
    (void) state;
    xdp_obj = bpf_object__open_file(xdp_path, NULL);
    if (!xdp_obj || libbpf_get_error(xdp_obj) || bpf_object__load(xdp_obj)) {
        fprintf(stderr, "cannot load %s (root needed)\n", xdp_path);
        return -1;
    }
    cookie_obj = bpf_object__open_file(cookie_path, NULL);
    if (!cookie_obj || libbpf_get_error(cookie_obj) || hlb_cookie_share_maps(xdp_obj, cookie_obj)
        || bpf_object__load(cookie_obj)) {
        fprintf(stderr, "cannot load %s\n", cookie_path);
        return -1;
    }
    xdp_fd = bpf_program__fd(bpf_object__find_program_by_name(xdp_obj, "hlb_xdp_decap"));
    egress_fd = bpf_program__fd(bpf_object__find_program_by_name(cookie_obj, "hlb_cookie_egress"));
    /* The decapsulator's policy: this host, any mux, any VIP. */
    uint32_t local;
    uint8_t one = 1;
    inet_pton(AF_INET, LOCAL, &local);
    struct hlb_lpm_key any = { 0, 0 };
    if (bpf_map_update_elem(bpf_object__find_map_fd_by_name(xdp_obj, "hlb_local_addrs"), &local, &one, 0)
        || bpf_map_update_elem(bpf_object__find_map_fd_by_name(xdp_obj, "hlb_allowed_muxes"), &any, &one, 0)
        || bpf_map_update_elem(bpf_object__find_map_fd_by_name(xdp_obj, "hlb_allowed_vips"), &any, &one, 0)) {
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void) state;
    bpf_object__close(cookie_obj);
    bpf_object__close(xdp_obj);
    return 0;
}

/* ------------------------------------------------------------- vectors */

struct row {
    char seq[64], mode[16], key[40], vip[16], client[16];
    unsigned vip_port, client_port, ident, cookie;
    uint32_t tsval, wire_tsval, last_sent, wire_tsecr, tsecr;
};

static int parse_row(char *line, struct row *r)
{
    unsigned long long hash;
    return sscanf(line, "%63[^,],%15[^,],%39[^,],%15[^,],%u,%15[^,],%u,%u,%llx,%u,%x,%x,%x,%x,%x",
                  r->seq, r->mode, r->key, r->vip, &r->vip_port, r->client, &r->client_port,
                  &r->ident, &hash, &r->cookie, &r->tsval, &r->wire_tsval, &r->last_sent,
                  &r->wire_tsecr, &r->tsecr) == 15 ? 0 : -1;
}

static void row_segment(const struct row *r, struct seg *s, int out)
{
    uint32_t vip, client;
    inet_pton(AF_INET, r->vip, &vip);
    inet_pton(AF_INET, r->client, &client);
    *s = (struct seg) { .src = out ? vip : client, .dst = out ? client : vip,
                        .sport = htons((uint16_t) (out ? r->vip_port : r->client_port)),
                        .dport = htons((uint16_t) (out ? r->client_port : r->vip_port)),
                        .flags = F_ACK, .layout = LAYOUT_DATA };
}

/* The first segment of a vector connection: the client's SYN (carrying the stateful
 * hint for a stateful ident) and the server's SYN-ACK, whose TSval is the row's. */
static void open_connection(const struct row *r)
{
    uint8_t key[16];
    for (int i = 0; i < 16; i++) {
        sscanf(r->key + 2 * i, "%2hhx", &key[i]);
    }
    int stateful = (r->ident & HLB_COOKIE_STATEFUL) != 0;
    /* A stateless ident is the host's server id; a stateful one comes in the SYN. */
    configure(stateful ? 1 : (uint16_t) r->ident, r->vip,
              strcmp(r->mode, "crc32c") ? HLB_COOKIE_SIPHASH13 : HLB_COOKIE_CRC32C, key);
    struct seg syn;
    row_segment(r, &syn, 0);
    syn.flags = F_SYN;
    syn.tsval = 0x55aa0000;
    syn.tsecr = stateful ? HLB_COOKIE_HINT_MAGIC << 16 | r->ident : 0;
    uint64_t hints = counter(HLB_CK_SYN_HINT);
    assert_int_equal(receive(&syn), 0);   /* a hint never reaches the stack */
    assert_int_equal(counter(HLB_CK_SYN_HINT), hints + (uint64_t) stateful);
    struct seg synack;
    row_segment(r, &synack, 1);
    synack.flags = F_SYN | F_ACK;
    synack.layout = LAYOUT_SYNACK;
    synack.tsval = r->tsval;
    synack.tsecr = syn.tsval;
    assert_int_equal(send_out(&synack), r->wire_tsval);
}

static int run_vector_file(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512], seq[64] = "";
    int n = 0;
    uint64_t encoded = counter(HLB_CK_ENCODED), restored = counter(HLB_CK_RESTORED);
    uint64_t misrouted = counter(HLB_CK_MISROUTED);
    while (fgets(line, sizeof line, f)) {
        struct row r;
        if (line[0] == '#' || !strncmp(line, "seq,", 4)) {
            continue;
        }
        if (parse_row(line, &r) != 0) {
            fail_msg("%s: bad row: %s", path, line);
        }
        struct seg out, in;
        if (strcmp(r.seq, seq) != 0) {
            strcpy(seq, r.seq);
            open_connection(&r);        /* the SYN-ACK sends this row's TSval */
        } else {
            row_segment(&r, &out, 1);
            out.tsval = r.tsval;
            out.tsecr = 0x77777777;
            uint32_t wire = send_out(&out);
            if (wire != r.wire_tsval) {
                fail_msg("%s: egress TSval %08x, expected %08x", r.seq, wire, r.wire_tsval);
            }
        }
        row_segment(&r, &in, 0);
        in.tsval = 0x66666666;
        in.tsecr = r.wire_tsecr;
        uint32_t tsecr = receive(&in);
        if (tsecr != r.tsecr) {
            fail_msg("%s: restored TSecr %08x, expected %08x (last sent %08x)", r.seq, tsecr,
                     r.tsecr, r.last_sent);
        }
        n++;
    }
    fclose(f);
    assert_int_equal(counter(HLB_CK_ENCODED), encoded + (uint64_t) n);
    assert_int_equal(counter(HLB_CK_RESTORED), restored + (uint64_t) n);
    assert_int_equal(counter(HLB_CK_MISROUTED), misrouted);
    print_message("%s: %d segments out and in, all as the model says\n", path, n);
    return n;
}

static void test_vectors(void **state)
{
    (void) state;
    int total = 0;
    for (int i = 0; i < n_vector_paths; i++) {
        total += run_vector_file(vector_paths[i]);
    }
    assert_true(total > 0);
}

/* ------------------------------------------------------------- behaviour */

static const uint8_t KEY_A[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static const uint8_t KEY_B[16] = { 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7,
                                   0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf };

static void conn(struct seg *out, struct seg *in, uint16_t cport)
{
    uint32_t vip, client;
    inet_pton(AF_INET, "10.200.0.10", &vip);
    inet_pton(AF_INET, "10.77.1.9", &client);
    *out = (struct seg) { vip, client, htons(80), htons(cport), F_ACK, LAYOUT_DATA, 0, 0 };
    *in = (struct seg) { client, vip, htons(cport), htons(80), F_ACK, LAYOUT_DATA, 0, 0 };
}

static void test_key_rotation(void **state)
{
    (void) state;
    configure(33, "10.200.0.10", HLB_COOKIE_SIPHASH13, KEY_A);
    struct seg out, in;
    conn(&out, &in, 41000);
    out.flags = F_SYN | F_ACK;
    out.layout = LAYOUT_SYNACK;
    out.tsval = 0x00100000;
    uint16_t cookie_a = hlb_cookie_of(send_out(&out));
    configure(33, "10.200.0.10", HLB_COOKIE_SIPHASH13, KEY_B);
    out.flags = F_ACK;
    out.layout = LAYOUT_DATA;
    out.tsval = 0x00100010;
    uint16_t cookie_b = hlb_cookie_of(send_out(&out));
    assert_int_not_equal(cookie_a, cookie_b);   /* re-encoded under the new key */
    uint64_t misrouted = counter(HLB_CK_MISROUTED);
    in.tsecr = hlb_cookie_encode(0x00100000, cookie_a);   /* echo sent before the rotation */
    assert_int_equal(receive(&in), 0x00100000);
    in.tsecr = hlb_cookie_encode(0x00100010, cookie_b);
    assert_int_equal(receive(&in), 0x00100010);
    assert_int_equal(counter(HLB_CK_MISROUTED), misrouted);
    in.tsecr = hlb_cookie_encode(0x00100010, (uint16_t) (cookie_b ^ 0x155));
    assert_int_equal(receive(&in), 0x00100010);   /* ours all the same: restored */
    assert_int_equal(counter(HLB_CK_MISROUTED), misrouted + 1);
}

static void test_restore_miss_and_misrouted(void **state)
{
    (void) state;
    configure(44, "10.200.0.10", HLB_COOKIE_SIPHASH13, KEY_A);
    struct seg out, in;
    conn(&out, &in, 42000);
    struct hlb_cookie_tuple t = { in.dst, in.src, in.dport, in.sport };
    uint64_t miss = counter(HLB_CK_RESTORE_MISS), misrouted = counter(HLB_CK_MISROUTED);
    uint16_t ours = hlb_cookie_make(&cfg.vips[0], &t, 44);
    /* Server 45's cookie reaching server 44: misrouted, TSecr 0, no state made. */
    in.tsecr = hlb_cookie_encode(0x12345678, hlb_cookie_make(&cfg.vips[0], &t, 45));
    assert_int_equal(receive(&in), 0);
    assert_int_equal(counter(HLB_CK_RESTORE_MISS), miss + 1);
    assert_int_equal(counter(HLB_CK_MISROUTED), misrouted + 1);
    out.tsval = 0x12345680;
    assert_int_equal(send_out(&out), 0x12345680);   /* still not encoded */
    /* Our own cookie, but no state (evicted, or a restart without --pin-dir): TSecr 0,
     * not misrouted, and the connection is taken up again. */
    in.tsecr = hlb_cookie_encode(0x12345678, ours);
    assert_int_equal(receive(&in), 0);
    assert_int_equal(counter(HLB_CK_RESTORE_MISS), miss + 2);
    assert_int_equal(counter(HLB_CK_MISROUTED), misrouted + 1);
    out.tsval = 0x12350001;   /* the next segment out: encoded, and sets the newest TSval */
    assert_int_equal(send_out(&out), hlb_cookie_encode(0x12350001, ours));
    in.tsecr = hlb_cookie_encode(0x1234fff0, ours);
    assert_int_equal(receive(&in), 0x1234fff0);
    assert_int_equal(counter(HLB_CK_RESTORE_MISS), miss + 2);
}

static void test_not_encoded(void **state)
{
    (void) state;
    configure(55, "10.200.0.10", HLB_COOKIE_SIPHASH13, KEY_A);
    struct seg out, in;
    conn(&out, &in, 43000);
    uint64_t no_state = counter(HLB_CK_EGRESS_NO_STATE), no_ts = counter(HLB_CK_EGRESS_NO_TS);
    uint64_t encoded = counter(HLB_CK_ENCODED);
    /* Mid-connection without state: never starts encoding. */
    out.tsval = 0xabcd1234;
    assert_int_equal(send_out(&out), 0xabcd1234);
    assert_int_equal(counter(HLB_CK_EGRESS_NO_STATE), no_state + 1);
    /* From a VIP without a timestamp option. */
    uint8_t f[MAX_FRAME], o[MAX_FRAME];
    uint32_t n;
    out.layout = LAYOUT_NO_TS;
    size_t len = egress_frame(f, &out);
    assert_int_equal(run(egress_fd, f, len, o, &n), TC_ACT_OK);
    assert_memory_equal(o, f, len);
    assert_int_equal(counter(HLB_CK_EGRESS_NO_TS), no_ts + 1);
    /* From an address that is no cookie VIP: untouched, not counted. */
    out.layout = LAYOUT_SYNACK;
    out.flags = F_SYN | F_ACK;
    inet_pton(AF_INET, "10.200.0.11", &out.src);
    assert_int_equal(send_out(&out), 0xabcd1234);
    /* Server id 0: cookies off. */
    configure(0, "10.200.0.10", HLB_COOKIE_SIPHASH13, KEY_A);
    conn(&out, &in, 43001);
    out.flags = F_SYN | F_ACK;
    out.layout = LAYOUT_SYNACK;
    out.tsval = 0x0000ffff;
    assert_int_equal(send_out(&out), 0x0000ffff);
    assert_int_equal(counter(HLB_CK_ENCODED), encoded);
}

/* ------------------------------------------------------------- scapy fixtures */

static size_t unhex(const char *hex, uint8_t *out)
{
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        sscanf(hex + 2 * i, "%2hhx", &out[i]);
    }
    return n;
}

/* 1 when 'name' is one of the comma-separated names in 'list'. */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0')) {
            return 1;
        }
    }
    return 0;
}

/* Lines: '@ server_id VIP MODE KEY' configures; 'NAME DIR COUNTERS IN OUT' runs one
 * frame (DIR out = tc egress, in = XDP), expects exactly the COUNTERS (comma-separated,
 * '-' none) to move, by one each, and the frame OUT. */
static void test_fixtures(void **state)
{
    (void) state;
    static const char *names[] = HLB_COOKIE_COUNTER_NAMES;
    FILE *f = fopen(fixtures_path, "r");
    assert_non_null(f);
    static char line[4 * MAX_FRAME + 256];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char name[64], dir[8], ctr[32], in_hex[2 * MAX_FRAME + 1], out_hex[2 * MAX_FRAME + 1];
        unsigned sid;
        char vip[16], mode[16], keyhex[40];
        if (line[0] == '#') {
            continue;
        }
        if (sscanf(line, "@ %u %15s %15s %39s", &sid, vip, mode, keyhex) == 4) {
            uint8_t key[16];
            for (int i = 0; i < 16; i++) {
                sscanf(keyhex + 2 * i, "%2hhx", &key[i]);
            }
            configure((uint16_t) sid, vip, strcmp(mode, "crc32c") ? HLB_COOKIE_SIPHASH13
                                                                  : HLB_COOKIE_CRC32C, key);
            continue;
        }
        if (sscanf(line, "%63s %7s %31s %1024s %1024s", name, dir, ctr, in_hex, out_hex) != 5) {
            continue;
        }
        uint8_t in[MAX_FRAME], want[MAX_FRAME], got[MAX_FRAME];
        size_t in_len = unhex(in_hex, in), want_len = unhex(out_hex, want);
        uint64_t before[HLB_CK_MAX];
        for (int c = 0; c < HLB_CK_MAX; c++) {
            before[c] = counter(c);
        }
        uint32_t got_len;
        int out = !strcmp(dir, "out");
        int rc = run(out ? egress_fd : xdp_fd, in, in_len, got, &got_len);
        print_message("%-28s %-3s %s\n", name, dir, ctr);
        assert_int_equal(rc, out ? TC_ACT_OK : XDP_PASS);
        assert_int_equal(got_len, want_len);
        assert_memory_equal(got, want, want_len);
        for (int c = 0; c < HLB_CK_MAX; c++) {
            if (counter(c) != before[c] + (uint64_t) listed(ctr, names[c])) {
                fail_msg("%s: counter %s moved by %llu", name, names[c],
                         (unsigned long long) (counter(c) - before[c]));
            }
        }
        n++;
    }
    fclose(f);
    assert_true(n >= 10);
}

/* ------------------------------------------------------------- benchmark */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    return (x > y) - (x < y);
}

/* Host egress encode cost: a data segment (NOP NOP TS) of a connection with state. */
static int bench(int samples)
{
    if (setup(NULL) != 0) {
        return 1;
    }
    configure(7, "10.200.0.10", HLB_COOKIE_SIPHASH13, KEY_A);
    struct seg out, in;
    conn(&out, &in, 44000);
    out.flags = F_SYN | F_ACK;
    out.layout = LAYOUT_SYNACK;
    out.tsval = 0x00200000;
    send_out(&out);
    out.flags = F_ACK;
    out.layout = LAYOUT_DATA;
    uint8_t frame[MAX_FRAME], res[MAX_FRAME];
    size_t len = egress_frame(frame, &out);
    uint32_t *single = calloc((size_t) samples, sizeof *single);
    uint32_t batch[200];
    for (int k = 0; k < samples; k++) {
        LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = (uint32_t) len,
                    .data_out = res, .data_size_out = MAX_FRAME, .repeat = 1);
        bpf_prog_test_run_opts(egress_fd, &o);
        single[k] = o.duration;
    }
    for (int k = 0; k < 200; k++) {
        LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = (uint32_t) len,
                    .data_out = res, .data_size_out = MAX_FRAME, .repeat = 1000);
        bpf_prog_test_run_opts(egress_fd, &o);
        batch[k] = o.duration;
    }
    uint64_t before = counter(HLB_CK_ENCODED);
    qsort(single, (size_t) samples, sizeof *single, cmp_u32);
    qsort(batch, 200, sizeof *batch, cmp_u32);
    printf("cookie_egress encode  median %4u ns/packet over 200 x 1000 repeats "
           "(single runs: median %u, p99 %u ns, %d runs; BPF_PROG_TEST_RUN)\n",
           batch[100], single[samples / 2], single[samples * 99 / 100], samples);
    free(single);
    int ok = before > 0;
    teardown(NULL);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: agent_test_cookie XDP_OBJ COOKIE_OBJ FIXTURES VECTORS... "
                        "[--bench N]\n");
        return 2;
    }
    xdp_path = argv[1];
    cookie_path = argv[2];
    fixtures_path = argv[3];
    vector_paths = (const char **) argv + 4;
    n_vector_paths = argc - 4;
    libbpf_set_print(NULL);
    if (argc == 7 && !strcmp(argv[5], "--bench")) {
        return bench(atoi(argv[6]));
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_key_rotation),
        cmocka_unit_test(test_restore_miss_and_misrouted),
        cmocka_unit_test(test_not_encoded),
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_pin_dir_of_an_older_layout),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
