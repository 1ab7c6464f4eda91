/* User-space side of the Cheetah cookie maps (p4/COOKIE-SPEC.md): shares them between
 * the XDP decapsulator and the cookie object, fills them from the loader's cookie
 * file, attaches the tc egress and sockops programs.
 *
 * Cookie file (written by hlb_agent.py from its JSON configuration; one item a line,
 * '#' comments):
 *   server_id N            1..16383 (0: cookies off)
 *   keepalive S            sockops keep-alive bound in seconds (0: off)
 *   vip PREFIX MODE KEY    A.B.C.D[/LEN], siphash13|crc32c, 32 hex digits
 *   generation G           the writer's count of files (optional, 0): the loader names it
 *                          on stdout once the maps hold the file, so the writer knows when
 *                          a change is in force */
#ifndef HLB_COOKIE_MAPS_H
#define HLB_COOKIE_MAPS_H

#include <stddef.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "hlb_cookie.h"
#include "hlb_decap.h"

struct hlb_cookie_config {
    uint16_t server_id;
    uint16_t keepalive_s;
    uint64_t generation;
    uint32_t host_flags;   /* HLB_COOKIE_HOST_*: the loader's options, not the file's */
    int n_vips;
    struct hlb_lpm_key prefixes[HLB_COOKIE_MAX_VIPS];
    struct hlb_cookie_vip vips[HLB_COOKIE_MAX_VIPS];
};

/* Parses a cookie file; on error returns -1 and names the line and field in err. */
int hlb_cookie_config_read(const char *path, struct hlb_cookie_config *cfg, char *err,
                           size_t errlen);

/* Makes 'to' (not loaded yet) use the cookie maps of 'from' (loaded). */
int hlb_cookie_share_maps(struct bpf_object *from, struct bpf_object *to);

/* Pins the cookie maps of 'obj' (not loaded yet) under dir (on a bpffs), reusing
 * maps already pinned there: the per-connection state survives a restart. */
int hlb_cookie_pin_maps(struct bpf_object *obj, const char *dir);

/* Writes cfg into the maps of 'obj' (loaded): VIP entries first, stale ones removed,
 * then the host entry with a new generation, so that every connection's cookie is
 * recomputed under the new keys at its next segment. */
int hlb_cookie_config_apply(struct bpf_object *obj, const struct hlb_cookie_config *cfg);

/* Sums the per-CPU cookie counters. */
int hlb_cookie_counters_read(struct bpf_object *obj, uint64_t out[HLB_CK_MAX]);

/* The cookie object's count of ESTABLISHED connections to this host's VIPs
 * (bpf/cookie.bpf.c, hlb_cookie_established) into *out.  0, or -1. */
int hlb_cookie_established_read(struct bpf_object *cookie_obj, int64_t *out);

#endif
