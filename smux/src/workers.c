#include "workers.h"
#include "sf_owners.h"

#include <string.h>

/* Both stats structs are plain arrays of uint64_t counters. */
_Static_assert(sizeof(struct hlb_dp_stats) % 8 == 0, "hlb_dp_stats: uint64_t fields only");
_Static_assert(sizeof(struct hlb_conn_stats) % 8 == 0, "hlb_conn_stats: uint64_t fields only");
_Static_assert(sizeof(struct hlb_sf_stats) % 8 == 0, "hlb_sf_stats: uint64_t fields only");

static void add_u64s(uint64_t *sum, const uint64_t *v, size_t bytes)
{
    for (size_t i = 0; i < bytes / 8; i++)
        sum[i] += __atomic_load_n(&v[i], __ATOMIC_RELAXED);
}

void hlb_workers_total(struct hlb_worker *const *w, unsigned n, struct hlb_workers_total *out)
{
    memset(out, 0, sizeof(*out));
    out->oldest_heartbeat_ms = UINT64_MAX;
    for (unsigned k = 0; k < n; k++) {
        add_u64s((uint64_t *)&out->st, (const uint64_t *)&w[k]->st, sizeof(out->st));
        if (w[k]->ct) {
            const struct hlb_conn_table *ct = w[k]->ct;
            add_u64s((uint64_t *)&out->ct, (const uint64_t *)&ct->st, sizeof(out->ct));
            out->ct_capacity += ct->capacity;
            out->fc_hits += __atomic_load_n(&ct->fc_hits, __ATOMIC_RELAXED);
            out->have_ct = 1;
        }
        struct hlb_sf_table *tabs[1 + HLB_SF_MAX_OWNERS];
        unsigned n_tabs = hlb_sf_worker_tables(w[k], tabs);
        for (unsigned j = 0; j < n_tabs; j++) {
            add_u64s((uint64_t *)&out->sf, (const uint64_t *)&tabs[j]->st, sizeof(out->sf));
            out->sf_capacity += (uint64_t)(tabs[j]->part_mask + 1) * HLB_SF_INDEXES;
        }
        out->gw_known |= __atomic_load_n(&w[k]->cfg.gw_known, __ATOMIC_RELAXED) != 0;
        uint64_t hb = atomic_load_explicit(&w[k]->heartbeat_ms, memory_order_relaxed);
        if (hb < out->oldest_heartbeat_ms)
            out->oldest_heartbeat_ms = hb;
    }
    if (n == 0)
        out->oldest_heartbeat_ms = 0;
}
