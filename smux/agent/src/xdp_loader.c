/* hlb-agent-xdp: loads the XDP decapsulator on one interface, tells it this
 * host's underlay addresses and allow-lists, and writes its counters to a JSON
 * file every interval until SIGTERM/SIGINT, when it detaches the program again.
 *
 *   hlb-agent-xdp --iface IF --obj xdp_decap.bpf.o --local-ip A [--local-ip B]
 *                 --stats-file F [--allow-mux PREFIX ...] [--allow-vip PREFIX ...]
 *                 [--interval-ms 1000] [--mode auto|native|generic]
 *                 [--cookie-obj cookie.bpf.o --cookie-config FILE [--cgroup DIR]
 *                  [--pin-dir DIR] [--count-established]] [--prism-pin-dir DIR]
 *                 [--prism-backend]
 *
 * --allow-mux / --allow-vip: outer sources / inner destinations accepted, as
 * A.B.C.D or A.B.C.D/LEN; none given accepts any.
 *
 * --cookie-obj / --cookie-config: Cheetah cookies (p4/COOKIE-SPEC.md).  The cookie
 * object's tc egress program goes on --iface, its sockops program on the cgroup
 * --cgroup, a path in the cgroup v2 hierarchy (default '/', every socket; the program
 * acts only in this network namespace); the XDP program restores TSecr.  The
 * cookie file (src/cookie_maps.h) is read at start and again on SIGHUP.
 * --count-established: the sockops program counts the ESTABLISHED connections to this
 * host's VIPs in this namespace, and the stats file gives them as establishedConnections
 * (since it was loaded: not pinned, a restart counts from 0); without it no connection
 * but a hinted one costs socket storage or state callbacks.  --pin-dir: a
 * bpffs directory where the per-connection state is pinned, so a restart keeps it.
 * --prism-pin-dir: a bpffs directory where the Prism steering map and its counters
 * are pinned (smux/prism: the front end writes the map; a restart keeps it).
 * --prism-backend: this host is a Prism backend: a tunnelled TCP segment of a flow
 * without a ready socket here is dropped, not answered with an RST (hlb_prism.h).
 *
 * Prints one JSON line {"attached":...,"mode":...} on stdout once attached, then one
 * line a SIGHUP: {"cookieConfig":{"generation":G}} once the maps hold the file (G is its
 * `generation` line) or {"cookieConfig":{"refused":true}}, and one line a close;
 * on SIGUSR1, one {"open":{...}} line per hinted connection in the per-connection
 * state, then {"openEnd":N} (the agent re-reports them to a new or restarted owner
 * SMux: COOKIE-SPEC §7, "Adoption"); exits 2 on bad arguments, 1 when the program cannot be loaded/attached. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <getopt.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cookie_maps.h"
#include "decap_policy.h"
#include "hlb_decap.h"
#include "hlb_prism.h"
#include "stats_file.h"

static volatile sig_atomic_t stop, reload, dump_open;

static void on_signal(int sig)
{
    if (sig == SIGHUP) {
        reload = 1;
    } else if (sig == SIGUSR1) {
        dump_open = 1;
    } else {
        stop = 1;
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: hlb-agent-xdp --iface IF --obj FILE --local-ip A [--local-ip B ...]\n"
                    "                     --stats-file F [--allow-mux PREFIX ...] "
                    "[--allow-vip PREFIX ...]\n"
                    "                     [--interval-ms N] [--mode auto|native|generic]\n"
                    "                     [--cookie-obj FILE --cookie-config FILE [--cgroup DIR] "
                    "[--pin-dir DIR] [--count-established]]\n"
                    "                     [--prism-pin-dir DIR] [--prism-backend]\n");
    exit(2);
}

/* Sums the per-CPU counters of both maps into one snapshot. */
static int snapshot(int counters_fd, int vips_fd, int ncpu, uint64_t counters[HLB_C_MAX],
                    struct hlb_vip_entry *entries, size_t max, size_t *n)
{
    uint64_t percpu[ncpu];
    for (uint32_t i = 0; i < HLB_C_MAX; i++) {
        counters[i] = 0;
        if (bpf_map_lookup_elem(counters_fd, &i, percpu) == 0) {
            for (int c = 0; c < ncpu; c++) {
                counters[i] += percpu[c];
            }
        }
    }
    struct hlb_vip_val vals[ncpu];
    struct hlb_vip_key key, next;
    void *prev = NULL;
    *n = 0;
    while (*n < max && bpf_map_get_next_key(vips_fd, prev, &next) == 0) {
        if (bpf_map_lookup_elem(vips_fd, &next, vals) == 0) {
            struct hlb_vip_entry *e = &entries[(*n)++];
            e->key = next;
            e->val.packets = e->val.bytes = 0;
            for (int c = 0; c < ncpu; c++) {
                e->val.packets += vals[c].packets;
                e->val.bytes += vals[c].bytes;
            }
        }
        key = next;
        prev = &key;
    }
    return 0;
}

/* Copies an allow-list into its LPM trie map. */
static int fill_allow_map(int fd, const struct hlb_prefix_list *list)
{
    for (int i = 0; i < list->n; i++) {
        struct hlb_lpm_key key = { list->items[i].prefixlen, list->items[i].addr };
        uint8_t one = 1;
        if (bpf_map_update_elem(fd, &key, &one, BPF_ANY) != 0) {
            return -1;
        }
    }
    return 0;
}

/* The cookie half: its object (sharing the decapsulator's maps), the tc egress and
 * sockops attachments, and the file its configuration comes from. */
struct cookie_side {
    const char *obj_path, *config_path, *cgroup_path, *pin_dir;
    struct bpf_object *obj;
    struct bpf_tc_hook hook;
    struct bpf_tc_opts tc;
    int cgroup_fd, sockops_fd, tc_attached;
    struct ring_buffer *closed;   /* hinted connections' closes (bpf/cookie.bpf.c) */
    uint64_t generation;          /* of the cookie file the maps hold */
    int count_established;        /* --count-established */
};

/* One hinted connection per stdout line, {"KIND":{...}}. */
static void print_conn(const char *kind, const struct hlb_cookie_tuple *t, unsigned ident)
{
    char vip[INET_ADDRSTRLEN], client[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &t->vip, vip, sizeof vip);
    inet_ntop(AF_INET, &t->client, client, sizeof client);
    printf("{\"%s\":{\"vip\":\"%s\",\"port\":%u,\"client\":\"%s\",\"clientPort\":%u,"
           "\"ident\":%u}}\n",
           kind, vip, ntohs(t->vip_port), client, ntohs(t->client_port), ident);
}

/* One close per stdout line, {"closed":{...}}: the agent reads them after the readiness
 * line and reports them to the VIP's stateful SMux (smux/agent/smux_reports.py). */
static int print_closed(void *ctx, void *data, size_t size)
{
    (void) ctx;
    const struct hlb_cookie_closed *r = data;
    if (size < sizeof *r) {
        return 0;
    }
    print_conn("closed", &r->t, r->ident);
    return 0;
}

/* The hinted connections of the per-connection state, {"open":{...}} each, then
 * {"openEnd":N}.  Connections that closed but are still in the LRU map are among
 * them: the agent keeps those with a socket. */
static void print_open(struct cookie_side *ck)
{
    int fd = bpf_object__find_map_fd_by_name(ck->obj, "hlb_cookie_conns");
    struct hlb_cookie_tuple key, next;
    struct hlb_cookie_conn c;
    unsigned n = 0;
    for (int more = fd >= 0 && bpf_map_get_next_key(fd, NULL, &next) == 0; more;
         more = bpf_map_get_next_key(fd, &key, &next) == 0) {
        key = next;
        if (bpf_map_lookup_elem(fd, &key, &c) == 0 && (c.flags & HLB_CONN_HINTED)) {
            print_conn("open", &key, c.ident);
            n++;
        }
    }
    printf("{\"openEnd\":%u}\n", n);
    fflush(stdout);
}

/* Sleeps for ms, printing closes as they come (at once, not at the next interval). */
static void wait_draining(struct cookie_side *ck, int ms)
{
    if (!ck->closed) {
        usleep((useconds_t) ms * 1000);
        return;
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int left = ms; left > 0 && !stop && !reload && !dump_open;) {   /* answered now */
        if (ring_buffer__poll(ck->closed, left) > 0) {
            fflush(stdout);
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        left = ms - (int) ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
    }
}

/* One snapshot of the counters, the cookie counters and the established connections
 * (with cookies) into the stats file. */
static void write_stats(const char *path, const char *attached, int counters_fd, int vips_fd,
                        int ncpu, struct hlb_vip_entry *entries, size_t max,
                        struct bpf_object *obj, struct cookie_side *ck)
{
    uint64_t counters[HLB_C_MAX], cookie[HLB_CK_MAX];
    int64_t established = 0;
    size_t n = 0;
    snapshot(counters_fd, vips_fd, ncpu, counters, entries, max, &n);
    int with_cookies = ck->obj_path && hlb_cookie_counters_read(obj, cookie) == 0;
    int with_established = ck->obj && ck->count_established
                           && hlb_cookie_established_read(ck->obj, &established) == 0;
    if (hlb_stats_write(path, "xdp", attached, counters, entries, n, with_cookies ? cookie : NULL,
                        with_established ? &established : NULL) != 0) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
    }
}

static int cookie_reload(struct cookie_side *ck, struct bpf_object *xdp_obj)
{
    static struct hlb_cookie_config cfg;
    char err[512];
    if (hlb_cookie_config_read(ck->config_path, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "--cookie-config: %s\n", err);
        return -1;
    }
    cfg.host_flags = ck->count_established ? HLB_COOKIE_HOST_COUNT_ESTABLISHED : 0;
    if (hlb_cookie_config_apply(xdp_obj, &cfg) != 0) {
        fprintf(stderr, "cannot write the cookie maps: %s\n", strerror(errno));
        return -1;
    }
    ck->generation = cfg.generation;
    return 0;
}

/* Opens 'rel' in the cgroup v2 hierarchy.  `ip netns exec` hides the host's cgroup
 * mounts under a fresh /sys, so without a visible cgroup2 mount one is made on a
 * private directory for the time it takes to open the directory. */
static int open_cgroup(const char *rel)
{
    char path[PATH_MAX];
    FILE *mounts = setmntent("/proc/self/mounts", "r");
    struct mntent *m;
    while (mounts && (m = getmntent(mounts))) {
        if (!strcmp(m->mnt_type, "cgroup2")) {
            snprintf(path, sizeof path, "%s/%s", m->mnt_dir, rel);
            endmntent(mounts);
            return open(path, O_RDONLY | O_DIRECTORY);
        }
    }
    if (mounts) {
        endmntent(mounts);
    }
    char dir[] = "/tmp/hlb-cgroup2-XXXXXX";
    if (!mkdtemp(dir)) {
        return -1;
    }
    int fd = -1;
    if (mount("none", dir, "cgroup2", 0, NULL) == 0) {
        snprintf(path, sizeof path, "%s/%s", dir, rel);
        fd = open(path, O_RDONLY | O_DIRECTORY);
        umount2(dir, MNT_DETACH);
    }
    rmdir(dir);
    return fd;
}

static int cookie_start(struct cookie_side *ck, struct bpf_object *xdp_obj, int ifindex)
{
    ck->obj = bpf_object__open_file(ck->obj_path, NULL);
    if (!ck->obj || libbpf_get_error(ck->obj) || hlb_cookie_share_maps(xdp_obj, ck->obj) != 0
        || bpf_object__load(ck->obj) != 0) {
        fprintf(stderr, "cannot load BPF object %s: %s\n", ck->obj_path, strerror(errno));
        return -1;
    }
    if (cookie_reload(ck, xdp_obj) != 0) {
        return -1;
    }
    struct bpf_program *egress = bpf_object__find_program_by_name(ck->obj, "hlb_cookie_egress");
    struct bpf_program *sockops = bpf_object__find_program_by_name(ck->obj, "hlb_cookie_sockops");
    if (!egress || !sockops) {
        fprintf(stderr, "BPF object %s lacks its programs\n", ck->obj_path);
        return -1;
    }
    ck->hook = (struct bpf_tc_hook) { .sz = sizeof ck->hook, .ifindex = ifindex,
                                      .attach_point = BPF_TC_EGRESS };
    int rc = bpf_tc_hook_create(&ck->hook);   /* the clsact qdisc; may exist already */
    if (rc && rc != -EEXIST) {
        fprintf(stderr, "cannot create the clsact qdisc: %s\n", strerror(-rc));
        return -1;
    }
    ck->tc = (struct bpf_tc_opts) { .sz = sizeof ck->tc, .prog_fd = bpf_program__fd(egress) };
    if ((rc = bpf_tc_attach(&ck->hook, &ck->tc)) != 0) {
        fprintf(stderr, "cannot attach the tc egress program: %s\n", strerror(-rc));
        return -1;
    }
    ck->tc_attached = 1;
    int closed_fd = bpf_object__find_map_fd_by_name(ck->obj, "hlb_cookie_closed");
    ck->closed = closed_fd < 0 ? NULL : ring_buffer__new(closed_fd, print_closed, NULL, NULL);
    if (!ck->closed) {
        fprintf(stderr, "cannot open the close ring of %s: %s\n", ck->obj_path, strerror(errno));
        return -1;
    }
    ck->cgroup_fd = open_cgroup(ck->cgroup_path);
    ck->sockops_fd = bpf_program__fd(sockops);
    if (ck->cgroup_fd < 0
        || bpf_prog_attach(ck->sockops_fd, ck->cgroup_fd, BPF_CGROUP_SOCK_OPS, BPF_F_ALLOW_MULTI)) {
        fprintf(stderr, "--cgroup: cannot attach sockops to '%s' (a path in the cgroup v2 "
                "hierarchy): %s\n",
                ck->cgroup_path, strerror(errno));
        return -1;
    }
    return 0;
}

static void cookie_stop(struct cookie_side *ck)
{
    if (ck->cgroup_fd > 0) {
        bpf_prog_detach2(ck->sockops_fd, ck->cgroup_fd, BPF_CGROUP_SOCK_OPS);
        close(ck->cgroup_fd);
    }
    if (ck->tc_attached) {
        ck->tc.flags = ck->tc.prog_fd = ck->tc.prog_id = 0;
        bpf_tc_detach(&ck->hook, &ck->tc);
    }
    if (ck->closed) {
        ring_buffer__poll(ck->closed, 0);   /* the last closes, before the ring goes */
        fflush(stdout);
        ring_buffer__free(ck->closed);
    }
    if (ck->obj) {
        bpf_object__close(ck->obj);
    }
}

/* The Prism steering map and counters (smux/prism/include/hlb_prism.h), pinned
 * so that the front end can open them; reused as they are when already pinned. */
static int prism_pin_maps(struct bpf_object *obj, const char *dir)
{
    const char *names[] = { PRISM_PIN_FLOWS, PRISM_PIN_COUNTERS };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[PATH_MAX];
        struct bpf_map *m = bpf_object__find_map_by_name(obj, names[i]);
        if (!m || snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int) sizeof path
            || bpf_map__set_pin_path(m, path) != 0) {
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct cookie_side ck = { .cgroup_path = "/", .cgroup_fd = -1 };
    const char *iface = NULL, *obj_path = NULL, *stats_path = NULL, *mode = "auto";
    const char *prism_pin_dir = NULL;
    int prism_backend = 0;
    static struct hlb_policy policy;
    int interval_ms = 1000;
    static const struct option opts[] = {
        { "iface", required_argument, 0, 'i' },    { "obj", required_argument, 0, 'o' },
        { "local-ip", required_argument, 0, 'l' }, { "stats-file", required_argument, 0, 's' },
        { "interval-ms", required_argument, 0, 't' }, { "mode", required_argument, 0, 'm' },
        { "allow-mux", required_argument, 0, 'M' }, { "allow-vip", required_argument, 0, 'V' },
        { "cookie-obj", required_argument, 0, 'C' }, { "cookie-config", required_argument, 0, 'F' },
        { "cgroup", required_argument, 0, 'G' }, { "pin-dir", required_argument, 0, 'P' },
        { "prism-pin-dir", required_argument, 0, 'R' }, { "prism-backend", no_argument, 0, 'B' },
        { "count-established", no_argument, 0, 'E' },
        { 0, 0, 0, 0 }
    };
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'i': iface = optarg; break;
        case 'o': obj_path = optarg; break;
        case 's': stats_path = optarg; break;
        case 'm': mode = optarg; break;
        case 'C': ck.obj_path = optarg; break;
        case 'F': ck.config_path = optarg; break;
        case 'G': ck.cgroup_path = optarg; break;
        case 'P': ck.pin_dir = optarg; break;
        case 'R': prism_pin_dir = optarg; break;
        case 'B': prism_backend = 1; break;
        case 'E': ck.count_established = 1; break;
        case 't':
            interval_ms = atoi(optarg);
            if (interval_ms < 10) {
                fprintf(stderr, "--interval-ms: must be >= 10, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'l':
        case 'M':
        case 'V':
            if (hlb_policy_option(&policy, c, optarg) != 0) {
                return 2;
            }
            break;
        default: usage();
        }
    }
    if (!iface || !obj_path || !stats_path || policy.n_local == 0
        || !ck.obj_path != !ck.config_path) {
        usage();
    }
    if (ck.count_established && !ck.obj_path) {
        fprintf(stderr, "--count-established: needs --cookie-obj (the sockops program counts)\n");
        return 2;
    }
    hlb_prefix_list_default_any(&policy.muxes);
    hlb_prefix_list_default_any(&policy.vips);
    if (strcmp(mode, "auto") && strcmp(mode, "native") && strcmp(mode, "generic")) {
        fprintf(stderr, "--mode: must be auto, native or generic, got '%s'\n", mode);
        return 2;
    }
    int ifindex = (int) if_nametoindex(iface);
    if (!ifindex) {
        fprintf(stderr, "--iface: no interface '%s'\n", iface);
        return 2;
    }

    struct bpf_object *obj = bpf_object__open_file(obj_path, NULL);
    if (!obj || libbpf_get_error(obj)) {
        fprintf(stderr, "cannot open BPF object %s\n", obj_path);
        return 1;
    }
    if (ck.pin_dir && hlb_cookie_pin_maps(obj, ck.pin_dir) != 0) {
        fprintf(stderr, "--pin-dir: cannot pin in '%s'\n", ck.pin_dir);
        return 1;
    }
    if (prism_pin_dir && prism_pin_maps(obj, prism_pin_dir) != 0) {
        fprintf(stderr, "--prism-pin-dir: cannot pin in '%s'\n", prism_pin_dir);
        return 1;
    }
    if (bpf_object__load(obj)) {
        fprintf(stderr, "cannot load BPF object %s: %s\n", obj_path, strerror(errno));
        return 1;
    }
    struct bpf_program *prog = bpf_object__find_program_by_name(obj, "hlb_xdp_decap");
    int local_fd = bpf_object__find_map_fd_by_name(obj, "hlb_local_addrs");
    int vips_fd = bpf_object__find_map_fd_by_name(obj, "hlb_vip_counters");
    int counters_fd = bpf_object__find_map_fd_by_name(obj, "hlb_counters");
    int muxes_fd = bpf_object__find_map_fd_by_name(obj, "hlb_allowed_muxes");
    int allowed_vips_fd = bpf_object__find_map_fd_by_name(obj, "hlb_allowed_vips");
    if (!prog || local_fd < 0 || vips_fd < 0 || counters_fd < 0 || muxes_fd < 0
        || allowed_vips_fd < 0) {
        fprintf(stderr, "BPF object %s lacks hlb_xdp_decap or its maps\n", obj_path);
        return 1;
    }
    for (int i = 0; i < policy.n_local; i++) {
        uint8_t one = 1;
        bpf_map_update_elem(local_fd, &policy.local[i], &one, BPF_ANY);
    }
    /* Filled before the program is attached: no packet meets an empty list. */
    if (fill_allow_map(muxes_fd, &policy.muxes) != 0
        || fill_allow_map(allowed_vips_fd, &policy.vips) != 0) {
        fprintf(stderr, "cannot fill the allow-lists of %s: %s\n", obj_path, strerror(errno));
        return 1;
    }
    if (prism_backend) {
        int fd = bpf_object__find_map_fd_by_name(obj, PRISM_BACKEND_MAP);
        uint32_t zero = 0, one = 1;
        if (fd < 0 || bpf_map_update_elem(fd, &zero, &one, BPF_ANY) != 0) {
            fprintf(stderr, "--prism-backend: cannot set %s in %s\n", PRISM_BACKEND_MAP, obj_path);
            return 1;
        }
    }

    /* Never replace someone else's XDP program (UPDATE_IF_NOEXIST). */
    int prog_fd = bpf_program__fd(prog);
    const char *attached = NULL;
    uint32_t flags = XDP_FLAGS_UPDATE_IF_NOEXIST;
    if (strcmp(mode, "generic") != 0) {
        if (bpf_xdp_attach(ifindex, prog_fd, flags | XDP_FLAGS_DRV_MODE, NULL) == 0) {
            attached = "native";
            flags |= XDP_FLAGS_DRV_MODE;
        }
    }
    if (!attached && strcmp(mode, "native") != 0) {
        if (bpf_xdp_attach(ifindex, prog_fd, flags | XDP_FLAGS_SKB_MODE, NULL) == 0) {
            attached = "generic";
            flags |= XDP_FLAGS_SKB_MODE;
        }
    }
    if (!attached) {
        fprintf(stderr, "cannot attach XDP to %s (mode %s): %s\n", iface, mode, strerror(errno));
        return 1;
    }

    if (ck.obj_path && cookie_start(&ck, obj, ifindex) != 0) {
        cookie_stop(&ck);
        bpf_xdp_detach(ifindex, flags & ~XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
        return 1;
    }

    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGHUP, on_signal);
    signal(SIGUSR1, on_signal);
    printf("{\"attached\":\"%s\",\"mode\":\"%s\",\"cookies\":%s}\n", iface, attached,
           ck.obj_path ? "true" : "false");
    fflush(stdout);

    int ncpu = libbpf_num_possible_cpus();
    size_t max = HLB_MAX_VIP_COUNTERS;
    struct hlb_vip_entry *entries = calloc(max, sizeof *entries);
    int rc = 0;
    while (!stop) {
        if (reload && ck.obj_path) {
            reload = 0;
            /* A bad file keeps the maps as they were; the error goes to stderr. */
            /* The agent answers PUT /cookie only when this line names its file: only then
             * does the host encode what the controller is about to tell the SMuxes. */
            if (cookie_reload(&ck, obj) == 0) {
                printf("{\"cookieConfig\":{\"generation\":%llu}}\n", (unsigned long long) ck.generation);
            } else {
                printf("{\"cookieConfig\":{\"refused\":true}}\n");
            }
            fflush(stdout);
        }
        if (dump_open) {
            dump_open = 0;
            if (ck.obj_path) {
                print_open(&ck);
            } else {
                printf("{\"openEnd\":0}\n");
                fflush(stdout);
            }
        }
        write_stats(stats_path, attached, counters_fd, vips_fd, ncpu, entries, max, obj, &ck);
        wait_draining(&ck, interval_ms);
    }
    write_stats(stats_path, attached, counters_fd, vips_fd, ncpu, entries, max, obj, &ck);
    cookie_stop(&ck);
    if (bpf_xdp_detach(ifindex, flags & ~XDP_FLAGS_UPDATE_IF_NOEXIST, NULL) != 0) {
        fprintf(stderr, "cannot detach XDP from %s: %s\n", iface, strerror(errno));
        rc = 1;
    }
    free(entries);
    bpf_object__close(obj);
    return rc;
}
