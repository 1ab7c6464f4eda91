/* The owner ids this SMux holds and their tables (sf_owners.h). */
#include "sf_owners.h"
#include "cookie_reports.h"
#include "table_swap.h"

#include <stdio.h>
#include <stdlib.h>

unsigned hlb_sf_worker_tables(struct hlb_worker *w, struct hlb_sf_table **out)
{
    unsigned n = 0;
    if (!w->sf)
        return 0;
    out[n++] = w->sf;
    uint32_t more = atomic_load_explicit(&w->sf_extra, memory_order_acquire);
    for (; more; more &= more - 1)
        out[n++] = w->sf_of[__builtin_ctz(more)];
    return n;
}

void hlb_sf_worker_drain(struct hlb_worker *w, uint32_t now)
{
    struct hlb_sf_table *tabs[1 + HLB_SF_MAX_OWNERS];
    unsigned n = hlb_sf_worker_tables(w, tabs);
    for (unsigned k = 0; k < n; k++)
        hlb_sf_drain(tabs[k], now);
}

void hlb_sf_worker_sweep(struct hlb_worker *w, uint32_t now, uint32_t n)
{
    struct hlb_sf_table *tabs[1 + HLB_SF_MAX_OWNERS];
    unsigned m = hlb_sf_worker_tables(w, tabs);
    for (unsigned k = 0; k < m; k++)
        if (tabs[k]->st.entries)
            hlb_sf_sweep(tabs[k], now, n);
}

void hlb_sf_worker_free(struct hlb_worker *w)
{
    struct hlb_sf_table *tabs[1 + HLB_SF_MAX_OWNERS];
    unsigned n = hlb_sf_worker_tables(w, tabs);
    for (unsigned k = 0; k < n; k++)
        hlb_sf_free(tabs[k]);
    w->sf = NULL;
    for (unsigned id = 0; id < HLB_SF_MAX_OWNERS; id++)
        w->sf_of[id] = NULL;
    atomic_store_explicit(&w->sf_extra, 0, memory_order_relaxed);
}

uint16_t hlb_sf_held_ids(const struct hlb_vip_table *t)
{
    uint16_t held = 0;
    for (uint32_t i = 0; t && i < t->n_services; i++)
        if (t->services[i].affinity == HLB_AFF_CHEETAH_STATEFUL)
            held |= t->services[i].sf_held;
    return held;
}

void hlb_sf_owners_init(struct hlb_sf_owners *o)
{
    o->base = HLB_SF_NOT_OWNER;
}

/* The base id after t (held: the ids t gives; running: those the running table
 * gives): the running one while either table holds it, else the lowest id t gives
 * that has no table of its own.  The base never moves while the running table still
 * holds it: the worker goes on inserting that id's entries into its first table until
 * it sees t, and a clear requested for the new id would run before some of them. */
static uint8_t next_base(const struct hlb_sf_owners *o, uint16_t held, uint16_t running,
                         uint16_t extra)
{
    if (o->base != HLB_SF_NOT_OWNER && ((held | running) >> o->base & 1))
        return o->base;
    uint16_t free_ids = held & (uint16_t)~extra;
    return free_ids ? (uint8_t)__builtin_ctz(free_ids) : o->base;
}

int hlb_sf_owners_prepare(struct hlb_sf_owners *o, struct hlb_worker *const *w, unsigned n,
                          const struct hlb_vip_table *cur, const struct hlb_vip_table *t,
                          uint32_t grace_ms, struct hlb_table_error *err)
{
    if (n == 0 || !w[0]->sf)
        return 0;                       /* no stateful entries kept: every SYN stateless */
    uint16_t held = hlb_sf_held_ids(t), running = hlb_sf_held_ids(cur);
    uint16_t gained = held & (uint16_t)~running;
    uint16_t extra = atomic_load_explicit(&w[0]->sf_extra, memory_order_relaxed);
    uint8_t base = next_base(o, held, running, extra);
    uint16_t need = held & (uint16_t)~extra;
    if (base != HLB_SF_NOT_OWNER)
        need &= (uint16_t)~(1u << base);
    /* Every table first, so that running out of memory changes nothing. */
    struct hlb_sf_table *made[HLB_SF_MAX_OWNERS][HLB_MAX_WORKERS] = {{0}};
    const struct hlb_sf_table *first = w[0]->sf;
    for (uint32_t m = need; m; m &= m - 1)
        for (unsigned k = 0; k < n; k++) {
            uint32_t id = (uint32_t)__builtin_ctz(m);
            made[id][k] = hlb_sf_create(first->part_mask + 1, first->idle_ms);
            if (made[id][k])
                continue;
            for (uint32_t i = 0; i < HLB_SF_MAX_OWNERS; i++)
                for (unsigned j = 0; j < n; j++)
                    hlb_sf_free(made[i][j]);
            snprintf(err->field, sizeof(err->field), "statefulOwners");
            snprintf(err->reason, sizeof(err->reason), "out of memory for the stateful "
                     "entries of owner id %u (its own ConnTable in each worker)", id);
            return -1;
        }
    uint16_t new_syn_ids = grace_ms ? hlb_cookie_new_syn_ids(cur, t) : 0;
    for (unsigned k = 0; k < n; k++) {
        for (uint32_t m = need; m; m &= m - 1) {
            uint32_t id = (uint32_t)__builtin_ctz(m);
            w[k]->sf_of[id] = made[id][k];
            atomic_fetch_or_explicit(&w[k]->sf_extra, (uint16_t)(1u << id),
                                     memory_order_release);
        }
        /* (requested before t is published: a clear may run while the worker still
         * uses the running table, which gives none of these ids, so none of their
         * tables (sf_owners.h); a hold applies at the latest at the worker's drain on
         * first seeing t) */
        for (uint32_t m = gained; m; m &= m - 1)
            hlb_sf_request_clear(hlb_sf_of(w[k], (uint32_t)__builtin_ctz(m)));
        for (uint32_t m = new_syn_ids; m; m &= m - 1)
            hlb_sf_hold_hints(hlb_sf_of(w[k], (uint32_t)__builtin_ctz(m)), grace_ms);
    }
    o->base = base;
    return 0;
}

uint64_t hlb_sf_owner_entries(struct hlb_worker *const *w, unsigned n, uint32_t id)
{
    uint64_t sum = 0;
    for (unsigned k = 0; k < n; k++)
        if (w[k]->sf)
            sum += __atomic_load_n(&hlb_sf_of(w[k], id)->st.entries, __ATOMIC_RELAXED);
    return sum;
}

uint16_t hlb_sf_owners_listed(const struct hlb_sf_owners *o, struct hlb_worker *const *w,
                              unsigned n, const struct hlb_vip_table *t)
{
    if (n == 0 || !w[0]->sf)
        return 0;
    uint16_t ids = hlb_sf_held_ids(t) |
                   atomic_load_explicit(&w[0]->sf_extra, memory_order_relaxed);
    if (o->base != HLB_SF_NOT_OWNER)
        ids |= (uint16_t)(1u << o->base);
    return ids;
}
