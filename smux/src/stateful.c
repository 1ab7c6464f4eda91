/* Stateful Cheetah's per-worker ConnTable + ConnStack (stateful.h). */
#include "stateful.h"

#include <stdlib.h>
#include <string.h>

#define HLB_SF_DRAIN_AHEAD 24u          /* releases between an entry's prefetch and its use */

struct hlb_sf_table *hlb_sf_create(uint32_t n_parts, uint32_t idle_ms)
{
    if (n_parts == 0 || n_parts > HLB_SF_MAX_PARTITIONS || (n_parts & (n_parts - 1)) ||
        idle_ms == 0)
        return NULL;
    struct hlb_sf_table *sf = NULL;
    if (posix_memalign((void **)&sf, 64, sizeof(*sf)) != 0)
        return NULL;
    memset(sf, 0, sizeof(*sf));
    if (posix_memalign((void **)&sf->parts, 64, (size_t)n_parts * sizeof(*sf->parts)) != 0) {
        free(sf);
        return NULL;
    }
    memset(sf->parts, 0, (size_t)n_parts * sizeof(*sf->parts));
    for (uint32_t p = 0; p < n_parts; p++) {
        struct hlb_sf_part *pt = &sf->parts[p];
        /* Index 0 on top: the first SYNs take low indexes (easier to read in tests). */
        for (uint32_t i = 0; i < HLB_SF_INDEXES; i++)
            pt->free_idx[i] = (uint16_t)(HLB_SF_INDEXES - 1 - i);
        pt->n_free = HLB_SF_INDEXES;
    }
    sf->part_mask = n_parts - 1;
    sf->idle_ms = idle_ms;
    sf->refresh_ms = idle_ms / 8 < 1000u ? (idle_ms / 8 ? idle_ms / 8 : 1) : 1000u;
    return sf;
}

void hlb_sf_free(struct hlb_sf_table *sf)
{
    if (!sf)
        return;
    free(sf->parts);
    free(sf);
}

int hlb_sf_queue_release(struct hlb_sf_table *sf, uint32_t p, uint32_t idx, uint64_t h)
{
    uint32_t head = atomic_load_explicit(&sf->ring_head, memory_order_relaxed);
    uint32_t tail = atomic_load_explicit(&sf->ring_tail, memory_order_acquire);
    if (head - tail >= HLB_SF_RING)
        return -1;
    sf->ring[head % HLB_SF_RING] = (struct hlb_sf_release){.h = h, .part = p, .index = idx};
    atomic_store_explicit(&sf->ring_head, head + 1, memory_order_release);
    return 0;
}

static inline void sf_prefetch_release(const struct hlb_sf_table *sf, uint32_t k)
{
    const struct hlb_sf_release *r = &sf->ring[k % HLB_SF_RING];
    __builtin_prefetch(&sf->parts[r->part & sf->part_mask].e[r->index & HLB_SF_INDEX_MASK], 1);
}

unsigned hlb_sf_drain(struct hlb_sf_table *sf)
{
    uint32_t tail = atomic_load_explicit(&sf->ring_tail, memory_order_relaxed);
    uint32_t head = atomic_load_explicit(&sf->ring_head, memory_order_acquire);
    unsigned n = 0;
    /* The entries are too many to stay cached: each is fetched HLB_SF_DRAIN_AHEAD
     * releases before its turn, so that the misses overlap instead of being waited
     * for one after the other. */
    for (uint32_t k = tail; k != head && k - tail < HLB_SF_DRAIN_AHEAD; k++)
        sf_prefetch_release(sf, k);
    for (; tail != head; tail++, n++) {
        if (head - tail > HLB_SF_DRAIN_AHEAD)
            sf_prefetch_release(sf, tail + HLB_SF_DRAIN_AHEAD);
        const struct hlb_sf_release *r = &sf->ring[tail % HLB_SF_RING];
        uint32_t p = r->part & sf->part_mask, idx = r->index & HLB_SF_INDEX_MASK;
        const struct hlb_sf_entry *e = &sf->parts[p].e[idx];
        if (e->server != 0 && e->h == r->h) {
            hlb_sf_delete(sf, p, idx);
            sf->st.released++;
        }
    }
    atomic_store_explicit(&sf->ring_tail, tail, memory_order_release);
    return n;
}

void hlb_sf_sweep(struct hlb_sf_table *sf, uint32_t now, uint32_t n)
{
    uint32_t total = (sf->part_mask + 1) * HLB_SF_INDEXES;
    uint32_t pos = sf->sweep_pos;
    for (uint32_t k = 0; k < n; k++, pos++) {
        if (pos >= total)
            pos = 0;
        uint32_t p = pos / HLB_SF_INDEXES, idx = pos % HLB_SF_INDEXES;
        const struct hlb_sf_entry *e = &sf->parts[p].e[idx];
        if (e->server != 0 && now - e->seen >= sf->idle_ms) {
            hlb_sf_delete(sf, p, idx);
            sf->st.idle_expired++;
        }
    }
    sf->sweep_pos = pos >= total ? 0 : pos;
}

int hlb_sf_check(const struct hlb_sf_table *sf)
{
    uint64_t used = 0;
    uint8_t seen[HLB_SF_INDEXES];
    for (uint32_t p = 0; p <= sf->part_mask; p++) {
        const struct hlb_sf_part *pt = &sf->parts[p];
        if (pt->n_free > HLB_SF_INDEXES)
            return -1;
        memset(seen, 0, sizeof(seen));
        for (uint32_t k = 0; k < pt->n_free; k++) {
            uint16_t i = pt->free_idx[k];
            if (i >= HLB_SF_INDEXES || seen[i]++ || pt->e[i].server != 0)
                return -1;           /* out of range, twice on the stack, or in use */
        }
        for (uint32_t i = 0; i < HLB_SF_INDEXES; i++) {
            if (pt->e[i].server != 0)
                used++;
            else if (!seen[i])
                return -1;           /* free but on no stack: lost */
        }
    }
    return used == sf->st.entries ? 0 : -1;
}
