#include "cookie_maps.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "decap_policy.h"

static const char *const shared_maps[] = { "hlb_cookie_conns", "hlb_cookie_vips",
                                           "hlb_cookie_host", "hlb_cookie_counters" };
#define N_SHARED (sizeof shared_maps / sizeof shared_maps[0])

static int parse_key(const char *hex, struct hlb_cookie_vip *v)
{
    uint8_t b[16];
    if (strlen(hex) != 32) {
        return -1;
    }
    for (int i = 0; i < 16; i++) {
        if (sscanf(hex + 2 * i, "%2hhx", &b[i]) != 1 || !strchr("0123456789abcdefABCDEF", hex[2 * i])
            || !strchr("0123456789abcdefABCDEF", hex[2 * i + 1])) {
            return -1;
        }
    }
    v->k0 = v->k1 = 0;
    for (int i = 7; i >= 0; i--) {
        v->k0 = v->k0 << 8 | b[i];
        v->k1 = v->k1 << 8 | b[8 + i];
    }
    return 0;
}

int hlb_cookie_config_read(const char *path, struct hlb_cookie_config *cfg, char *err,
                           size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[256];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char what[32], a[64], b[32], c[64];
        unsigned long n;
        char *endp;
        int fields = sscanf(line, "%31s %63s %31s %63s", what, a, b, c);
        if (fields <= 0 || what[0] == '#') {
            continue;
        }
        if (!strcmp(what, "server_id") || !strcmp(what, "keepalive")) {
            n = fields == 2 ? strtoul(a, &endp, 10) : 0;
            if (fields != 2 || *endp || n > (!strcmp(what, "server_id") ? HLB_COOKIE_SERVER_ID_MAX : 3600)) {
                snprintf(err, errlen, "%s:%d: %s: out of range or not a number: '%s'", path,
                         lineno, what, fields >= 2 ? a : "");
                rc = -1;
            } else if (what[0] == 's') {
                cfg->server_id = (uint16_t) n;
            } else {
                cfg->keepalive_s = (uint16_t) n;
            }
        } else if (!strcmp(what, "generation")) {
            unsigned long long g = fields == 2 ? strtoull(a, &endp, 10) : 0;
            if (fields != 2 || *endp) {
                snprintf(err, errlen, "%s:%d: generation: not a number: '%s'", path, lineno,
                         fields >= 2 ? a : "");
                rc = -1;
            } else {
                cfg->generation = g;
            }
        } else if (!strcmp(what, "vip") && fields == 4) {
            struct hlb_prefix_list one = { .n = 0 };
            struct hlb_cookie_vip v = { 0 };
            v.mode = !strcmp(b, "siphash13") ? HLB_COOKIE_SIPHASH13
                     : !strcmp(b, "crc32c") ? HLB_COOKIE_CRC32C : 0;
            if (cfg->n_vips >= HLB_COOKIE_MAX_VIPS) {
                snprintf(err, errlen, "%s:%d: vip: more than %d", path, lineno, HLB_COOKIE_MAX_VIPS);
                rc = -1;
            } else if (hlb_prefix_list_add(&one, "vip", a) != 0) {
                snprintf(err, errlen, "%s:%d: vip: bad prefix '%s'", path, lineno, a);
                rc = -1;
            } else if (!v.mode) {
                snprintf(err, errlen, "%s:%d: mode: expected siphash13 or crc32c, got '%s'", path,
                         lineno, b);
                rc = -1;
            } else if (parse_key(c, &v) != 0) {
                snprintf(err, errlen, "%s:%d: key: expected 32 hex digits", path, lineno);
                rc = -1;
            } else {
                cfg->prefixes[cfg->n_vips].prefixlen = one.items[0].prefixlen;
                cfg->prefixes[cfg->n_vips].addr = one.items[0].addr;
                cfg->vips[cfg->n_vips++] = v;
            }
        } else {
            snprintf(err, errlen, "%s:%d: unknown line '%s'", path, lineno, what);
            rc = -1;
        }
    }
    fclose(f);
    return rc;
}

int hlb_cookie_share_maps(struct bpf_object *from, struct bpf_object *to)
{
    for (size_t i = 0; i < N_SHARED; i++) {
        int fd = bpf_object__find_map_fd_by_name(from, shared_maps[i]);
        struct bpf_map *m = bpf_object__find_map_by_name(to, shared_maps[i]);
        if (fd < 0 || !m || bpf_map__reuse_fd(m, fd) != 0) {
            return -1;
        }
    }
    return 0;
}

/* The generation of a host entry pinned by a build with another layout (unpinned at
 * start): the first hlb_cookie_config_apply() counts on from it. */
static uint32_t carried_gen;

/* A map pinned by a build with another layout cannot be reused (libbpf checks
 * max_entries and value_size): unpin it, so that an upgrade keeps the connections'
 * state.  The counters start again from 0; the host entry's generation (its first
 * field in every layout) is carried over, so that no connection's state, pinned with
 * a generation of the old keys, passes for current. */
static void unpin_other_layout(const char *path, uint32_t entries, uint32_t value_size)
{
    int fd = bpf_obj_get(path);
    if (fd < 0) {
        return;
    }
    struct bpf_map_info info = { 0 };
    __u32 len = sizeof info;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0
        && (info.max_entries != entries || info.value_size != value_size)) {
        uint8_t old[256];
        uint32_t zero = 0;
        if (!strcmp(info.name, "hlb_cookie_host") && info.value_size >= sizeof carried_gen
            && info.value_size <= sizeof old && bpf_map_lookup_elem(fd, &zero, old) == 0) {
            memcpy(&carried_gen, old, sizeof carried_gen);
        }
        fprintf(stderr, "%s: pinned with %u entries of %u bytes, this build has %u of %u: "
                "made anew%s\n", path, info.max_entries, info.value_size, entries, value_size,
                carried_gen ? " (the key generation carried over)" : "");
        unlink(path);
    }
    close(fd);
}

int hlb_cookie_pin_maps(struct bpf_object *obj, const char *dir)
{
    /* All of them: the state, the generation a restart must keep counting up from,
     * the counters; the configuration is rewritten at every start anyway. */
    char path[512];
    for (size_t i = 0; i < N_SHARED; i++) {
        struct bpf_map *m = bpf_object__find_map_by_name(obj, shared_maps[i]);
        snprintf(path, sizeof path, "%s/%s", dir, shared_maps[i]);
        if (!m) {
            return -1;
        }
        unpin_other_layout(path, bpf_map__max_entries(m), bpf_map__value_size(m));
        if (bpf_map__set_pin_path(m, path) != 0) {
            return -1;
        }
    }
    return 0;
}

static uint64_t own_netns_cookie(void)
{
    uint64_t cookie = 0;
    socklen_t len = sizeof cookie;
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s >= 0) {
        if (getsockopt(s, SOL_SOCKET, 71 /* SO_NETNS_COOKIE */, &cookie, &len) != 0) {
            cookie = 0;
        }
        close(s);
    }
    return cookie;
}

int hlb_cookie_config_apply(struct bpf_object *obj, const struct hlb_cookie_config *cfg)
{
    int vips_fd = bpf_object__find_map_fd_by_name(obj, "hlb_cookie_vips");
    int host_fd = bpf_object__find_map_fd_by_name(obj, "hlb_cookie_host");
    if (vips_fd < 0 || host_fd < 0) {
        return -1;
    }
    for (int i = 0; i < cfg->n_vips; i++) {
        if (bpf_map_update_elem(vips_fd, &cfg->prefixes[i], &cfg->vips[i], BPF_ANY) != 0) {
            return -1;
        }
    }
    struct hlb_lpm_key key, next, stale[HLB_COOKIE_MAX_VIPS];
    int n_stale = 0;
    void *prev = NULL;
    while (bpf_map_get_next_key(vips_fd, prev, &next) == 0 && n_stale < HLB_COOKIE_MAX_VIPS) {
        int keep = 0;
        for (int i = 0; i < cfg->n_vips; i++) {
            keep |= !memcmp(&next, &cfg->prefixes[i], sizeof next);
        }
        if (!keep) {
            stale[n_stale++] = next;
        }
        key = next;
        prev = &key;
    }
    for (int i = 0; i < n_stale; i++) {
        bpf_map_delete_elem(vips_fd, &stale[i]);
    }
    uint32_t zero = 0;
    struct hlb_cookie_host host = { 0 };
    bpf_map_lookup_elem(host_fd, &zero, &host);
    if (host.gen < carried_gen) {
        host.gen = carried_gen;
    }
    host.gen = host.gen + 1 ? host.gen + 1 : 1;
    host.server_id = cfg->server_id;
    host.keepalive_s = cfg->keepalive_s;
    host.netns_cookie = own_netns_cookie();
    host.flags = cfg->host_flags;
    return bpf_map_update_elem(host_fd, &zero, &host, BPF_ANY);
}

int hlb_cookie_counters_read(struct bpf_object *obj, uint64_t out[HLB_CK_MAX])
{
    int fd = bpf_object__find_map_fd_by_name(obj, "hlb_cookie_counters");
    int ncpu = libbpf_num_possible_cpus();
    if (fd < 0 || ncpu <= 0) {
        return -1;
    }
    uint64_t vals[ncpu];
    for (uint32_t i = 0; i < HLB_CK_MAX; i++) {
        out[i] = 0;
        if (bpf_map_lookup_elem(fd, &i, vals) == 0) {
            for (int c = 0; c < ncpu; c++) {
                out[i] += vals[c];
            }
        }
    }
    return 0;
}

int hlb_cookie_established_read(struct bpf_object *cookie_obj, int64_t *out)
{
    int fd = bpf_object__find_map_fd_by_name(cookie_obj, "hlb_cookie_established");
    uint32_t zero = 0;
    return fd < 0 ? -1 : bpf_map_lookup_elem(fd, &zero, out);
}
