/* Packet fixtures for the host agent's two decapsulators (needs root: loads BPF).
 *
 * The policy at the top of tests/data/agent_decap_fixtures.txt (local address,
 * allowed muxes and VIPs) is given to both backends, then every fixture (built
 * with scapy by agent_gen_decap_fixtures.py) goes
 *   - through the XDP program itself, with BPF_PROG_TEST_RUN: XDP verdict and
 *     output frame must match, and exactly the expected counter must move;
 *   - through hlb_policy_verdict(), what the user-space fallback decides with:
 *     same counter, and the inner packet it would write to the TUN must be the
 *     expected frame's IP part.
 *
 * usage: agent_test_decap XDP_OBJ FIXTURES
 *        agent_test_decap XDP_OBJ FIXTURES --bench N   (N timed runs per fixture) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>
#include <linux/bpf.h>

#include "decap_policy.h"
#include "hlb_decap.h"

#define MAX_FIXTURES 64
#define MAX_FRAME 2048

struct fixture {
    char name[64];
    char verdict[32];   /* a counter name, hlb_decap.h */
    int counter;        /* its index */
    uint8_t in[MAX_FRAME];
    size_t in_len;
    uint8_t out[MAX_FRAME];
    size_t out_len;
};

static const char *obj_path, *fixtures_path;
static struct fixture fixtures[MAX_FIXTURES];
static int n_fixtures;
static struct hlb_policy policy;   /* from the fixture file's @ lines */
static struct bpf_object *obj;
static int prog_fd, counters_fd, vips_fd;

static size_t unhex(const char *hex, uint8_t *out)
{
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        sscanf(hex + 2 * i, "%2hhx", &out[i]);
    }
    return n;
}

static int load_fixtures(void)
{
    FILE *f = fopen(fixtures_path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s: %s\n", fixtures_path, strerror(errno));
        return -1;
    }
    static const char *counter_names[] = HLB_COUNTER_NAMES;
    static char line[3 * MAX_FRAME * 2];
    while (fgets(line, sizeof line, f) && n_fixtures < MAX_FIXTURES) {
        if (line[0] == '#') {
            continue;
        }
        char key[16], value[32];
        if (line[0] == '@' && sscanf(line, "@%15s %31s", key, value) == 2) {
            int rc = -1;
            if (!strcmp(key, "local") && inet_pton(AF_INET, value, &policy.local[policy.n_local]) == 1) {
                policy.n_local++;
                rc = 0;
            } else if (!strcmp(key, "allow-mux")) {
                rc = hlb_prefix_list_add(&policy.muxes, "@allow-mux", value);
            } else if (!strcmp(key, "allow-vip")) {
                rc = hlb_prefix_list_add(&policy.vips, "@allow-vip", value);
            }
            if (rc != 0) {
                fprintf(stderr, "%s: bad policy line: %s", fixtures_path, line);
                fclose(f);
                return -1;
            }
            continue;
        }
        static char in_hex[MAX_FRAME * 2 + 1], out_hex[MAX_FRAME * 2 + 1];
        struct fixture *fx = &fixtures[n_fixtures];
        if (sscanf(line, "%63s %31s %4096s %4096s", fx->name, fx->verdict, in_hex, out_hex) != 4) {
            continue;
        }
        fx->counter = -1;
        for (int c = 0; c < HLB_C_MAX; c++) {
            if (!strcmp(fx->verdict, counter_names[c])) {
                fx->counter = c;
            }
        }
        if (fx->counter < 0) {
            fprintf(stderr, "%s: %s: unknown verdict '%s'\n", fixtures_path, fx->name, fx->verdict);
            fclose(f);
            return -1;
        }
        fx->in_len = unhex(in_hex, fx->in);
        fx->out_len = strcmp(out_hex, "-") ? unhex(out_hex, fx->out) : 0;
        n_fixtures++;
    }
    fclose(f);
    return n_fixtures > 0 && policy.n_local > 0 ? 0 : -1;
}

static int fill_allow_map(const char *name, const struct hlb_prefix_list *list)
{
    int fd = bpf_object__find_map_fd_by_name(obj, name);
    for (int i = 0; i < list->n; i++) {
        struct hlb_lpm_key key = { list->items[i].prefixlen, list->items[i].addr };
        uint8_t one = 1;
        if (fd < 0 || bpf_map_update_elem(fd, &key, &one, BPF_ANY) != 0) {
            return -1;
        }
    }
    return 0;
}

static int setup_bpf(void **state)
{
    (void) state;
    obj = bpf_object__open_file(obj_path, NULL);
    if (!obj || libbpf_get_error(obj) || bpf_object__load(obj)) {
        fprintf(stderr, "cannot load %s (root needed)\n", obj_path);
        return -1;
    }
    prog_fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "hlb_xdp_decap"));
    counters_fd = bpf_object__find_map_fd_by_name(obj, "hlb_counters");
    vips_fd = bpf_object__find_map_fd_by_name(obj, "hlb_vip_counters");
    int local_fd = bpf_object__find_map_fd_by_name(obj, "hlb_local_addrs");
    uint8_t one = 1;
    for (int i = 0; i < policy.n_local; i++) {
        if (bpf_map_update_elem(local_fd, &policy.local[i], &one, BPF_ANY) != 0) {
            return -1;
        }
    }
    return fill_allow_map("hlb_allowed_muxes", &policy.muxes) == 0
           && fill_allow_map("hlb_allowed_vips", &policy.vips) == 0 ? 0 : -1;
}

static int teardown_bpf(void **state)
{
    (void) state;
    bpf_object__close(obj);
    return 0;
}

static uint64_t counter(uint32_t which)
{
    int ncpu = libbpf_num_possible_cpus();
    uint64_t vals[ncpu], sum = 0;
    if (bpf_map_lookup_elem(counters_fd, &which, vals) == 0) {
        for (int c = 0; c < ncpu; c++) {
            sum += vals[c];
        }
    }
    return sum;
}

static int run_xdp(const struct fixture *fx, uint8_t *out, uint32_t *out_len, int repeat,
                   uint32_t *duration)
{
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = fx->in, .data_size_in = (uint32_t) fx->in_len,
                .data_out = out, .data_size_out = MAX_FRAME, .repeat = repeat);
    if (bpf_prog_test_run_opts(prog_fd, &opts) != 0) {
        return -1;
    }
    *out_len = opts.data_size_out;
    if (duration) {
        *duration = opts.duration;
    }
    return (int) opts.retval;
}

static void test_xdp_fixtures(void **state)
{
    (void) state;
    for (int i = 0; i < n_fixtures; i++) {
        const struct fixture *fx = &fixtures[i];
        uint8_t out[MAX_FRAME];
        uint32_t out_len = 0;
        uint64_t before[HLB_C_MAX];
        for (int c = 0; c < HLB_C_MAX; c++) {
            before[c] = counter(c);
        }
        int verdict = run_xdp(fx, out, &out_len, 1, NULL);
        print_message("xdp %-36s %s\n", fx->name, fx->verdict);
        if (!strncmp(fx->verdict, "decap_", 6)) {
            assert_int_equal(verdict, XDP_PASS);
            assert_int_equal(out_len, fx->out_len);
            assert_memory_equal(out, fx->out, fx->out_len);
        } else if (!strncmp(fx->verdict, "pass_", 5)) {
            assert_int_equal(verdict, XDP_PASS);
            assert_int_equal(out_len, fx->in_len);            /* untouched */
            assert_memory_equal(out, fx->in, fx->in_len);
        } else {
            assert_int_equal(verdict, XDP_DROP);
        }
        /* Exactly the expected counter moved, by one. */
        for (int c = 0; c < HLB_C_MAX; c++) {
            assert_int_equal(counter(c), before[c] + (c == fx->counter));
        }
    }
    /* Per-VIP counters were keyed by (VIP, mux, encap). */
    struct hlb_vip_key key = { 0 };
    inet_pton(AF_INET, "10.200.0.10", &key.vip);
    inet_pton(AF_INET, "10.77.0.1", &key.mux);
    key.encap = HLB_ENCAP_GRE;
    int ncpu = libbpf_num_possible_cpus();
    struct hlb_vip_val vals[ncpu];
    assert_int_equal(bpf_map_lookup_elem(vips_fd, &key, vals), 0);
    uint64_t packets = 0;
    for (int c = 0; c < ncpu; c++) {
        packets += vals[c].packets;
    }
    assert_int_equal(packets, 5);   /* the five GRE decap fixtures */
}

static void test_userspace_fixtures(void **state)
{
    static const char *names[] = HLB_COUNTER_NAMES;
    (void) state;
    for (int i = 0; i < n_fixtures; i++) {
        const struct fixture *fx = &fixtures[i];
        print_message("userspace %-30s %s\n", fx->name, fx->verdict);
        /* The fallback's raw socket gets the IP packet, without Ethernet;
         * frames too short or not IPv4 never reach it. */
        if (fx->in_len < 14 + 20 || fx->in[12] != 0x08 || fx->in[13] != 0x00) {
            assert_int_equal(fx->counter, HLB_C_PASS_NOT_ENCAP);
            continue;
        }
        struct hlb_encap_info info = { 0 };
        enum hlb_counter verdict = hlb_policy_verdict(&policy, fx->in + 14, fx->in_len - 14, &info);
        assert_string_equal(names[verdict], fx->verdict);
        if (verdict == HLB_C_DECAP_IPIP || verdict == HLB_C_DECAP_GRE) {
            assert_true(14 + info.inner_len <= fx->out_len);
            assert_memory_equal(fx->in + 14 + info.outer_len, fx->out + 14, info.inner_len);
        }
    }
}

/* The --allow-mux/--allow-vip values both backends parse. */
static void test_prefix_list_parsing(void **state)
{
    (void) state;
    struct hlb_prefix_list list = { .n = 0 };
    assert_int_equal(hlb_prefix_list_add(&list, "--allow-mux", "10.77.0.1"), 0);
    assert_int_equal(hlb_prefix_list_add(&list, "--allow-mux", "10.78.0.0/16"), 0);
    assert_int_equal(list.n, 2);
    assert_int_equal(list.items[0].prefixlen, 32);
    assert_int_equal(list.items[1].prefixlen, 16);
    const char *bad[] = { "", "10.77.0", "10.77.0.256", "10.78.0.1/16", "10.78.0.0/33",
                          "10.78.0.0/", "10.78.0.0/1x", "10.78.0.0/-1", "fe80::1", "x/8" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        print_message("rejects '%s'\n", bad[i]);
        assert_int_equal(hlb_prefix_list_add(&list, "--allow-mux", bad[i]), -1);
    }
    assert_int_equal(list.n, 2);
    uint32_t a;
    inet_pton(AF_INET, "10.78.200.1", &a);
    assert_true(hlb_prefix_list_match(&list, a));
    inet_pton(AF_INET, "10.79.0.1", &a);
    assert_false(hlb_prefix_list_match(&list, a));
    /* An empty list accepts any address; a non-empty one is left alone. */
    struct hlb_prefix_list any = { .n = 0 };
    hlb_prefix_list_default_any(&any);
    assert_true(hlb_prefix_list_match(&any, a));
    hlb_prefix_list_default_any(&list);
    assert_int_equal(list.n, 2);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    return (x > y) - (x < y);
}

/* One BPF_PROG_TEST_RUN per sample: with repeat > 1 the kernel would rerun
 * the program on the already decapsulated buffer.  The kernel's per-run time
 * includes its clock reads, so these are upper bounds. */
static int bench(int samples)
{
    if (setup_bpf(NULL) != 0) {
        return 1;
    }
    const char *names[] = { "ipip_udp", "gre_tcp", "gre_csum_key_seq", "plain_udp", "not_local_outer_dst" };
    uint32_t *ns = calloc((size_t) samples, sizeof *ns);
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        for (int i = 0; i < n_fixtures; i++) {
            if (strcmp(fixtures[i].name, names[n]) != 0) {
                continue;
            }
            uint8_t out[MAX_FRAME];
            uint32_t out_len;
            for (int k = 0; k < samples; k++) {
                run_xdp(&fixtures[i], out, &out_len, 1, &ns[k]);
            }
            qsort(ns, (size_t) samples, sizeof *ns, cmp_u32);
            printf("xdp_decap %-20s %-5s median %4u ns/packet, p99 %5u ns (%d runs, BPF_PROG_TEST_RUN)\n",
                   names[n], fixtures[i].verdict, ns[samples / 2], ns[samples * 99 / 100], samples);
        }
    }
    free(ns);
    teardown_bpf(NULL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: agent_test_decap XDP_OBJ FIXTURES [--bench N]\n");
        return 2;
    }
    obj_path = argv[1];
    fixtures_path = argv[2];
    libbpf_set_print(NULL);
    if (load_fixtures() != 0) {
        return 2;
    }
    if (argc == 5 && strcmp(argv[3], "--bench") == 0) {
        return bench(atoi(argv[4]));
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xdp_fixtures),
        cmocka_unit_test(test_userspace_fixtures),
        cmocka_unit_test(test_prefix_list_parsing),
    };
    return cmocka_run_group_tests(tests, setup_bpf, teardown_bpf);
}
