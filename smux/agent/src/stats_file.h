/* Counter snapshot both decap backends write for the agent's control side:
 * one JSON object, replaced atomically (write to a temporary file, rename). */
#ifndef HLB_STATS_FILE_H
#define HLB_STATS_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "hlb_cookie.h"
#include "hlb_decap.h"

struct hlb_vip_entry {
    struct hlb_vip_key key;
    struct hlb_vip_val val;
};

/* Returns 0 on success, -1 (errno set) on failure.  cookie: the Cheetah cookie
 * counters, or NULL when this backend does not write cookies; established: the count
 * of ESTABLISHED connections to this host's VIPs (the cookie object's sockops), or
 * NULL without it. */
int hlb_stats_write(const char *path, const char *backend, const char *mode,
                    const uint64_t counters[HLB_C_MAX],
                    const struct hlb_vip_entry *entries, size_t n,
                    const uint64_t *cookie, const int64_t *established);

#endif
