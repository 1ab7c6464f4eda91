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
    size_t n = (size_t)n_parts * HLB_SF_INDEXES;
    sf->ent = calloc(n, sizeof(*sf->ent));        /* all free: 0 (untouched pages) */
    sf->n_free = calloc(n_parts, sizeof(*sf->n_free));
    if (posix_memalign((void **)&sf->stack, 64, n * sizeof(*sf->stack)) != 0)
        sf->stack = NULL;
    if (!sf->ent || !sf->n_free || !sf->stack) {
        hlb_sf_free(sf);
        return NULL;
    }
    sf->part_mask = n_parts - 1;
    while (1u << sf->part_bits < n_parts)
        sf->part_bits++;
    for (uint32_t p = 0; p < n_parts; p++) {
        /* Index 0 on top: the first SYNs take low indexes (easier to read in tests). */
        for (uint32_t k = 0; k < HLB_SF_INDEXES; k++)
            *hlb_sf_stack_slot(sf, p, k) = (uint16_t)(HLB_SF_INDEXES - 1 - k);
        sf->n_free[p] = HLB_SF_INDEXES;
    }
    sf->idle_ms = idle_ms;
    while ((idle_ms >> sf->tick_shift) >= 1u << (HLB_SF_SEEN_BITS - 1))
        sf->tick_shift++;
    /* Freed at idle_ms or later, never earlier: with ticks of 2^s ms, an age of
     * ceil(idle / 2^s) + 1 ticks is more than idle_ms (exactly idle_ms when s = 0). */
    uint32_t tick_ms = 1u << sf->tick_shift;
    sf->idle_ticks = sf->tick_shift ? (idle_ms + tick_ms - 1) / tick_ms + 1 : idle_ms;
    uint32_t refresh_ms = idle_ms / 8 < 1000u ? (idle_ms / 8 ? idle_ms / 8 : 1) : 1000u;
    sf->refresh_ticks = refresh_ms >> sf->tick_shift ? refresh_ms >> sf->tick_shift : 1;
    return sf;
}

void hlb_sf_free(struct hlb_sf_table *sf)
{
    if (!sf)
        return;
    free(sf->ent);
    free(sf->stack);
    free(sf->n_free);
    free(sf);
}

/* Queues r; its position, or -1 when the ring is full. */
static int64_t sf_queue(struct hlb_sf_table *sf, struct hlb_sf_release r)
{
    uint32_t head = atomic_load_explicit(&sf->ring_head, memory_order_relaxed);
    uint32_t tail = atomic_load_explicit(&sf->ring_tail, memory_order_acquire);
    if (head - tail >= HLB_SF_RING)
        return -1;
    sf->ring[head % HLB_SF_RING] = r;
    atomic_store_explicit(&sf->ring_head, head + 1, memory_order_release);
    return head;
}

int hlb_sf_queue_release(struct hlb_sf_table *sf, uint32_t p, uint32_t idx, uint64_t h)
{
    return sf_queue(sf, (struct hlb_sf_release){.h = h, .part = p, .index = (uint16_t)idx}) < 0
               ? -1 : 0;
}

int64_t hlb_sf_queue_adopt(struct hlb_sf_table *sf, uint32_t p, uint32_t idx, uint64_t h,
                           uint16_t server)
{
    return sf_queue(sf, (struct hlb_sf_release){.h = h, .part = p, .index = (uint16_t)idx,
                                                .server = server & HLB_SF_SERVER_MASK});
}

uint32_t hlb_sf_adopt_result(const struct hlb_sf_table *sf, int64_t pos)
{
    uint32_t tail = atomic_load_explicit(&sf->ring_tail, memory_order_acquire);
    if ((int32_t)(tail - (uint32_t)pos) <= 0)
        return HLB_SF_ADOPT_PENDING;
    return sf->ring[(uint32_t)pos % HLB_SF_RING].part;
}

void hlb_sf_hold_hints(struct hlb_sf_table *sf, uint32_t ms)
{
    atomic_store_explicit(&sf->hold_request, ms ? ms : 1, memory_order_release);
}

void hlb_sf_request_clear(struct hlb_sf_table *sf)
{
    /* (the one producer: the head read here is the last one it stored) */
    uint32_t head = atomic_load_explicit(&sf->ring_head, memory_order_relaxed);
    atomic_store_explicit(&sf->clear_at, head, memory_order_release);
    atomic_store_explicit(&sf->clear_request, 1, memory_order_release);
}

/* The worker: every entry freed (counted in cleared).  A scan of the whole table:
 * only when an owner id is given anew, and only if the table holds entries. */
static void sf_clear(struct hlb_sf_table *sf)
{
    uint32_t total = (sf->part_mask + 1) * HLB_SF_INDEXES;
    for (uint32_t pos = 0; sf->st.entries && pos < total; pos++)
        if (sf->ent[pos] != 0) {
            hlb_sf_delete(sf, pos & sf->part_mask, pos >> sf->part_bits);
            sf->st.cleared++;
        }
}

/* The worker: index idx of partition p (free) taken off its stack for h on server,
 * at tick; 1, or 0 if it is on no stack (never, while hlb_sf_check() holds).  A scan
 * of the stack (at most 1024 slots): adoptions are rare. */
static int sf_adopt_free(struct hlb_sf_table *sf, uint32_t p, uint32_t idx, uint64_t h,
                         uint16_t server, uint32_t tick)
{
    uint32_t n = sf->n_free[p];
    for (uint32_t k = 0; k < n; k++) {
        uint16_t *slot = hlb_sf_stack_slot(sf, p, k);
        if (*slot == idx) {
            *slot = *hlb_sf_stack_slot(sf, p, n - 1);   /* the top fills the hole */
            sf->n_free[p] = (uint16_t)(n - 1);
            *hlb_sf_entry(sf, p, idx) = hlb_sf_word(h, server, tick);
            sf->st.entries++;
            sf->st.adopted++;
            return 1;
        }
    }
    return 0;
}

/* The worker: adoption r (its outcome into r->part). */
static void sf_adopt(struct hlb_sf_table *sf, struct hlb_sf_release *r, uint32_t tick)
{
    uint32_t p = r->part & sf->part_mask, idx = r->index & HLB_SF_INDEX_MASK;
    uint64_t e = *hlb_sf_entry(sf, p, idx);
    if (e == 0 && sf_adopt_free(sf, p, idx, r->h, r->server, tick)) {
        r->part = HLB_SF_ADOPTED;
    } else if (hlb_sf_server_of(e, r->h)) {
        r->part = HLB_SF_ADOPT_HELD;
    } else {
        sf->st.adopt_taken++;
        r->part = HLB_SF_ADOPT_TAKEN;
    }
}

static inline void sf_prefetch_release(const struct hlb_sf_table *sf, uint32_t k)
{
    const struct hlb_sf_release *r = &sf->ring[k % HLB_SF_RING];
    __builtin_prefetch(hlb_sf_entry(sf, r->part & sf->part_mask, r->index & HLB_SF_INDEX_MASK), 1);
}

/* The worker: the ring's requests from tail up to end applied; their count. */
static unsigned sf_apply(struct hlb_sf_table *sf, uint32_t tail, uint32_t end, uint32_t now)
{
    uint32_t start = tail;
    /* The entries are too many to stay cached: each is fetched HLB_SF_DRAIN_AHEAD
     * releases before its turn, so that the misses overlap instead of being waited
     * for one after the other. */
    for (uint32_t k = tail; k != end && k - tail < HLB_SF_DRAIN_AHEAD; k++)
        sf_prefetch_release(sf, k);
    /* The arrays, the layout and the count in locals: without strict aliasing,
     * every entry or stack store would otherwise reload them from the table. */
    const struct hlb_sf_arrays a = hlb_sf_arrays_of(sf);
    const uint32_t part_mask = sf->part_mask;
    unsigned released = 0;
    for (; tail != end; tail++) {
        if (end - tail > HLB_SF_DRAIN_AHEAD)
            sf_prefetch_release(sf, tail + HLB_SF_DRAIN_AHEAD);
        struct hlb_sf_release *r = &sf->ring[tail % HLB_SF_RING];
        if (r->server) {
            sf_adopt(sf, r, hlb_sf_tick(sf, now));
            continue;
        }
        uint32_t p = r->part & part_mask, idx = r->index & HLB_SF_INDEX_MASK;
        if (hlb_sf_server_of(a.ent[hlb_sf_pos(a.part_bits, p, idx)], r->h)) {
            hlb_sf_push(a, p, idx);
            released++;
        }
    }
    sf->st.entries -= released;
    sf->st.released += released;
    return end - start;
}

unsigned hlb_sf_drain(struct hlb_sf_table *sf, uint32_t now)
{
    /* The head before the clear request: a request this drain does not see was made
     * at or after this head (the producer requests, then queues), so no request
     * queued after a clear is applied before it. */
    uint32_t head = atomic_load_explicit(&sf->ring_head, memory_order_acquire);
    uint32_t tail = atomic_load_explicit(&sf->ring_tail, memory_order_relaxed);
    unsigned n = 0;
    if (atomic_load_explicit(&sf->clear_request, memory_order_relaxed) &&
        atomic_exchange_explicit(&sf->clear_request, 0, memory_order_acquire)) {
        /* The requests queued before the clear, then the clear (clear_at is at or
         * after tail: no drain went past a request it had not seen). */
        uint32_t at = atomic_load_explicit(&sf->clear_at, memory_order_acquire);
        if ((int32_t)(at - tail) < 0)           /* (never, as said: clear at once) */
            at = tail;
        if (at - tail > head - tail)            /* made after the head read above */
            head = atomic_load_explicit(&sf->ring_head, memory_order_acquire);
        n += sf_apply(sf, tail, at, now);
        tail = at;
        sf_clear(sf);
    }
    uint32_t hold = atomic_load_explicit(&sf->hold_request, memory_order_relaxed);
    if (hold) {
        hold = atomic_exchange_explicit(&sf->hold_request, 0, memory_order_acquire);
        sf->hints_held = 1;
        sf->hints_until = now + hold;
    } else if (sf->hints_held && (int32_t)(now - sf->hints_until) >= 0) {
        sf->hints_held = 0;
    }
    n += sf_apply(sf, tail, head, now);
    atomic_store_explicit(&sf->ring_tail, head, memory_order_release);
    return n;
}

void hlb_sf_sweep(struct hlb_sf_table *sf, uint32_t now, uint32_t n)
{
    uint32_t total = (sf->part_mask + 1) * HLB_SF_INDEXES;
    uint32_t pos = sf->sweep_pos, tick = hlb_sf_tick(sf, now);
    for (uint32_t k = 0; k < n; k++, pos++) {
        if (pos >= total)
            pos = 0;
        uint32_t p = pos & sf->part_mask, idx = pos >> sf->part_bits;
        uint64_t e = sf->ent[pos];
        if (e != 0 && hlb_sf_age(e, tick) >= sf->idle_ticks) {
            hlb_sf_delete(sf, p, idx);
            sf->st.idle_expired++;
        }
    }
    sf->sweep_pos = pos >= total ? 0 : pos;
}

/* An entry in use has a server id; a free one is 0. */
static int sf_used(uint64_t e)
{
    return (e >> HLB_SF_SERVER_SHIFT & HLB_SF_SERVER_MASK) != 0;
}

int hlb_sf_check(const struct hlb_sf_table *sf)
{
    uint64_t used = 0;
    uint8_t seen[HLB_SF_INDEXES];
    for (uint32_t p = 0; p <= sf->part_mask; p++) {
        uint32_t n_free = sf->n_free[p];
        if (n_free > HLB_SF_INDEXES)
            return -1;
        memset(seen, 0, sizeof(seen));
        for (uint32_t k = 0; k < n_free; k++) {
            uint16_t i = *hlb_sf_stack_slot(sf, p, k);
            if (i >= HLB_SF_INDEXES || seen[i]++ || *hlb_sf_entry(sf, p, i) != 0)
                return -1;           /* out of range, twice on the stack, or not free */
        }
        for (uint32_t i = 0; i < HLB_SF_INDEXES; i++) {
            uint64_t e = *hlb_sf_entry(sf, p, i);
            if (sf_used(e))
                used++;
            else if (e != 0 || !seen[i])
                return -1;           /* no server but not free, or free on no stack: lost */
        }
    }
    return used == sf->st.entries ? 0 : -1;
}

int hlb_sf_same(const struct hlb_sf_table *a, const struct hlb_sf_table *b)
{
    size_t n = (size_t)(a->part_mask + 1);
    return a->part_mask == b->part_mask &&
           memcmp(a->ent, b->ent, n * HLB_SF_INDEXES * sizeof(*a->ent)) == 0 &&
           memcmp(a->n_free, b->n_free, n * sizeof(*a->n_free)) == 0 &&
           memcmp(a->stack, b->stack, n * HLB_SF_INDEXES * sizeof(*a->stack)) == 0;
}
