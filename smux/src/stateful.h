/* Stateful Cheetah in the SMux (p4/COOKIE-SPEC.md §7; NSDI 2020 §3.2, ToN 2021
 * §III-B): a ConnTable + ConnStack per worker.  A SYN to a cheetah-stateful VIP this
 * SMux owns pops a free index of partition p = (H >> 32) & (m - 1) (crc32c mode:
 * H >> 16) and stores (server id, the low 32 bits of H) there; the ident
 * 1 << 14 | owner << 10 | index goes to the host in the SYN's TSecr, and the host's
 * cookie carries it from then on.  A later segment names (p, index) through its
 * cookie and H: one 8-byte load, checked against the stored bits of H.
 *
 * Per worker, not per SMux: each worker owns its stacks and writes them alone.  The
 * index space is split per worker by the flow: every segment of a connection
 * reaches the worker its SYN reached (hlb_flow_worker(), or the NIC's flow hash), so
 * the cookie need not name the worker; two workers may give the same (p, index) to
 * two connections, which the stored H tells apart as it does two VIPs' connections.
 * A packet another SMux forwards (two tiers) arrives IP-in-IP: hlb_flow_worker()
 * reads the inner tuple of an IP-in-IP frame, so it too reaches the owning worker.
 *
 * Entries leave by the host agent's close report (POST /cheetah/closed: the control
 * thread queues (p, index, H) to every worker's release ring, as only the NIC knows
 * which worker a flow reaches; a worker frees the entry only while it holds that H,
 * so another worker's entry, or a reused index after a late report, stays) or by
 * the idle sweep.  An empty stack leaves the SYN stateless (its
 * server id, no hint): a SYN flood fills the stacks, then degrades to stateless
 * cookies, counted, and the stacks refill as entries are released.
 *
 * An SMux holding several owner ids keeps one such table per id in each worker
 * (sf_owners.h): each id is an index space of its own.
 *
 * EAL-free; the ring and the control thread's requests are the only parts another
 * thread touches. */
#ifndef HLB_STATEFUL_H
#define HLB_STATEFUL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "hlb_cookie.h"

#define HLB_SF_INDEXES 1024u          /* the 10 index bits of a stateful ident */
#define HLB_SF_OWNER_SHIFT 10
#define HLB_SF_INDEX_MASK (HLB_SF_INDEXES - 1)
#define HLB_SF_MAX_PARTITIONS 65536u
#define HLB_SF_DEFAULT_PARTITIONS 64u
#define HLB_SF_DEFAULT_IDLE_MS 120000u  /* > 4 host keep-alives (COOKIE-SPEC §6: 25 s) */
/* Hints held after start and after taking an owner id (COOKIE-SPEC §7, "Adoption"):
 * longer than the host agents take to see the change (1 s) and re-report. */
#define HLB_SF_DEFAULT_ADOPT_GRACE_MS 5000u
#define HLB_SF_RING 4096u               /* releases queued per worker */

/* An entry is one 64-bit word, so that the default 64 partitions' entries and stacks
 * (640 KiB) stay in a core's L2 cache; a free entry is 0.
 *   bits 63..32  check: the low 32 bits of the connection's H (COOKIE-SPEC §7)
 *   bits 31..18  server id, 1..16383 (HLB_COOKIE_SERVER_ID_MAX)
 *   bits 17..0   seen: the clock of the last refresh in ticks (hlb_sf_tick), mod 2^18 */
#define HLB_SF_SEEN_BITS 18
#define HLB_SF_SEEN_MASK ((1u << HLB_SF_SEEN_BITS) - 1)
#define HLB_SF_SERVER_SHIFT HLB_SF_SEEN_BITS
#define HLB_SF_SERVER_MASK 0x3fffu

/* A control request to a worker: a release (server 0) or an adoption (server id):
 * a connection whose host agent re-reports it (POST /cheetah/adopt, after this SMux
 * took its owner id or restarted) gets its entry back at its (part, index).  The
 * worker writes an adoption's outcome (enum hlb_sf_adopt_result) into part. */
struct hlb_sf_release {
    uint64_t h;
    uint32_t part;
    uint16_t index;
    uint16_t server;
};

enum hlb_sf_adopt_result {
    HLB_SF_ADOPT_PENDING = 0xffffffffu,  /* queued, not applied yet (the producer's mark) */
    HLB_SF_ADOPTED = 0,                  /* the free index now holds the connection */
    HLB_SF_ADOPT_HELD,                   /* the index already held this connection */
    HLB_SF_ADOPT_TAKEN,                  /* the index holds another connection: refused */
};

struct hlb_sf_stats {
    uint64_t entries;           /* indexes in use */
    uint64_t inserts;           /* SYNs given an index */
    uint64_t exhausted;         /* SYNs left stateless: their partition's stack was empty */
    uint64_t hits;              /* segments placed by their entry */
    uint64_t misses;            /* segments naming a free index or another H: bad_cookie */
    uint64_t released;          /* entries freed by a close report */
    uint64_t idle_expired;      /* entries freed by the idle sweep */
    uint64_t forwarded;         /* segments sent to their owner SMux (two tiers) */
    uint64_t foreign_bad;       /* decapsulated segments naming another owner: dropped */
    uint64_t adopted;           /* entries given back by an adoption (POST /cheetah/adopt) */
    uint64_t adopt_taken;       /* adoptions refused: the index held another connection */
    uint64_t held_syns;         /* owner SYNs left stateless while hints are held */
    uint64_t cleared;           /* entries dropped as their owner id was given anew */
};

struct hlb_sf_table {
    /* The ConnTable, partitions interleaved: partition p's entry i at ent[i * m + p].
     * Partitions side by side, not one after the other, so that the indexes in use
     * (the low ones first: the stacks start with index 0 on top) share lines, and
     * the same index of every partition does not fall in the same cache set. */
    uint64_t *ent;
    /* The ConnStacks, interleaved the same way: partition p's free indexes at
     * stack[k * m + p], k below n_free[p], the top last (partitions whose stacks
     * are about as full have their tops on the same lines). */
    uint16_t *stack;
    uint16_t *n_free;
    uint32_t part_mask;         /* m - 1 (m a power of two) */
    uint32_t part_bits;         /* log2(m) */
    uint32_t idle_ms;
    /* The clock of the entries: ms >> tick_shift, the smallest shift that keeps
     * idle_ms under 2^17 ticks (exact to the ms up to 131 s), so that an age, read
     * mod 2^18, stays right for 2^17 ticks past the idle time: an entry the sweep
     * reaches later than that is freed late, never early. */
    uint32_t tick_shift;
    uint32_t idle_ticks;        /* an entry this many ticks old or more is idle */
    uint32_t refresh_ticks;     /* seen is rewritten at most this often per entry */
    uint32_t sweep_pos;         /* next entry of the sweep: its position in ent */
    struct hlb_sf_stats st;
    /* Hints held (COOKIE-SPEC §7, "Adoption"): while set, this worker gives no index
     * to a SYN, so that the indexes the host agents are re-reporting stay free for
     * them.  Written by the worker alone (hlb_sf_drain), from hold_request. */
    uint32_t hints_held, hints_until;
    /* A hold of this many ms asked by the control thread (at start, and when this
     * SMux takes an owner id), taken up by the worker's next drain. */
    _Atomic uint32_t hold_request;
    /* Set by the control thread when a table gives this SMux the table's owner id
     * anew (sf_owners.h): the worker's next drain frees every entry, left from when
     * the id was last held.  clear_at: the ring's head at the request; the drain
     * applies the requests queued before it, then clears, then applies the rest. */
    _Atomic uint32_t clear_request;
    _Atomic uint32_t clear_at;
    /* Release ring: one producer at a time (the control thread, under its lock),
     * one consumer (the owning worker). */
    _Alignas(64) _Atomic uint32_t ring_head;   /* written by the producer */
    _Alignas(64) _Atomic uint32_t ring_tail;   /* written by the consumer */
    struct hlb_sf_release ring[HLB_SF_RING];
};

/* n_parts: a power of two, 1..HLB_SF_MAX_PARTITIONS; NULL otherwise or out of memory. */
struct hlb_sf_table *hlb_sf_create(uint32_t n_parts, uint32_t idle_ms);
void hlb_sf_free(struct hlb_sf_table *sf);

/* The partition of a connection's H (COOKIE-SPEC §7). */
static inline uint32_t hlb_sf_part_of(const struct hlb_sf_table *sf, uint64_t h, int crc)
{
    return (uint32_t)(crc ? h >> 16 : h >> 32) & sf->part_mask;
}

static inline uint32_t hlb_sf_ident(uint32_t owner, uint32_t index)
{
    return HLB_COOKIE_STATEFUL | owner << HLB_SF_OWNER_SHIFT | index;
}

/* The position in ent (and stack) of index idx of partition p, part_bits = log2(m). */
static inline size_t hlb_sf_pos(uint32_t part_bits, uint32_t p, uint32_t idx)
{
    return (size_t)idx << part_bits | p;
}

/* The entry of index idx of partition p. */
static inline uint64_t *hlb_sf_entry(const struct hlb_sf_table *sf, uint32_t p, uint32_t idx)
{
    return &sf->ent[hlb_sf_pos(sf->part_bits, p, idx)];
}

/* Slot k of partition p's stack. */
static inline uint16_t *hlb_sf_stack_slot(const struct hlb_sf_table *sf, uint32_t p, uint32_t k)
{
    return &sf->stack[hlb_sf_pos(sf->part_bits, p, k)];
}

/* The entries' clock at ms clock now. */
static inline uint32_t hlb_sf_tick(const struct hlb_sf_table *sf, uint32_t now)
{
    return (now >> sf->tick_shift) & HLB_SF_SEEN_MASK;
}

/* The entry of connection h on server (1..16383) seen at tick. */
static inline uint64_t hlb_sf_word(uint64_t h, uint16_t server, uint32_t tick)
{
    return h << 32 | (uint64_t)(server & HLB_SF_SERVER_MASK) << HLB_SF_SERVER_SHIFT | tick;
}

/* The server id of entry e if it holds the connection of hash h, else 0 (a free
 * entry, 0, holds none). */
static inline uint16_t hlb_sf_server_of(uint64_t e, uint64_t h)
{
    return (uint32_t)(e >> 32) == (uint32_t)h ? (uint16_t)(e >> HLB_SF_SERVER_SHIFT & HLB_SF_SERVER_MASK)
                                              : 0;
}

/* The ticks since entry e was seen (mod 2^18). */
static inline uint32_t hlb_sf_age(uint64_t e, uint32_t tick)
{
    return (tick - (uint32_t)e) & HLB_SF_SEEN_MASK;
}

/* The table's arrays and layout, for a loop to hold in locals: the build has no
 * strict aliasing, so every store to an entry or a stack slot would otherwise make
 * the compiler read them from the table again. */
struct hlb_sf_arrays {
    uint64_t *ent;
    uint16_t *stack, *n_free;
    uint32_t part_bits;
};

static inline struct hlb_sf_arrays hlb_sf_arrays_of(const struct hlb_sf_table *sf)
{
    return (struct hlb_sf_arrays){.ent = sf->ent, .stack = sf->stack, .n_free = sf->n_free,
                                  .part_bits = sf->part_bits};
}

/* Pops a free index of partition p and stores entry word v there: the index, or -1
 * (stack empty).  Counts nothing: hlb_sf_insert() or the caller does. */
static inline __attribute__((always_inline)) int
hlb_sf_pop(struct hlb_sf_arrays a, uint32_t p, uint64_t v)
{
    uint32_t nf = a.n_free[p];
    if (nf == 0)
        return -1;
    a.n_free[p] = (uint16_t)--nf;
    uint32_t idx = a.stack[hlb_sf_pos(a.part_bits, p, nf)];
    a.ent[hlb_sf_pos(a.part_bits, p, idx)] = v;
    return (int)idx;
}

/* Pops a free index of partition p for (server, h): the index, or -1 (stack empty:
 * counted in exhausted). */
static inline int hlb_sf_insert(struct hlb_sf_table *sf, uint32_t p, uint16_t server,
                                uint64_t h, uint32_t now)
{
    /* (the word first: a 16-bit server id kept aside and read back as part of a
     * wider load would stall the read until the write retires) */
    const uint64_t v = hlb_sf_word(h, server, hlb_sf_tick(sf, now));
    int idx = hlb_sf_pop(hlb_sf_arrays_of(sf), p, v);
    if (idx < 0) {
        sf->st.exhausted++;
        return -1;
    }
    sf->st.inserts++;
    sf->st.entries++;
    return idx;
}

/* Frees index idx of partition p (in use): its entry 0, the index back on top of
 * the stack.  Counts nothing: hlb_sf_delete() or the caller does. */
static inline __attribute__((always_inline)) void
hlb_sf_push(struct hlb_sf_arrays a, uint32_t p, uint32_t idx)
{
    a.ent[hlb_sf_pos(a.part_bits, p, idx)] = 0;
    a.stack[hlb_sf_pos(a.part_bits, p, a.n_free[p]++)] = (uint16_t)idx;
}

/* Frees index idx of partition p (in use). */
static inline void hlb_sf_delete(struct hlb_sf_table *sf, uint32_t p, uint32_t idx)
{
    hlb_sf_push(hlb_sf_arrays_of(sf), p, idx);
    sf->st.entries--;
}

/* Refreshes entry *e (holding a connection, read as v) at tick, at most every
 * refresh_ticks (sf->refresh_ticks), so that an active entry's line is not written
 * on every packet. */
static inline void hlb_sf_refresh(uint32_t refresh_ticks, uint64_t *e, uint64_t v, uint32_t tick)
{
    if (hlb_sf_age(v, tick) >= refresh_ticks)
        *e = (v & ~(uint64_t)HLB_SF_SEEN_MASK) | tick;
}

/* The server id of (p, idx) for a segment of hash h, or 0 (free, or another
 * connection's: counted in misses); refreshes the entry. */
static inline uint16_t hlb_sf_lookup(struct hlb_sf_table *sf, uint32_t p, uint32_t idx,
                                     uint64_t h, uint32_t now)
{
    uint64_t *e = hlb_sf_entry(sf, p, idx), v = *e;
    uint16_t server = hlb_sf_server_of(v, h);
    if (server == 0) {
        sf->st.misses++;
        return 0;
    }
    hlb_sf_refresh(sf->refresh_ticks, e, v, hlb_sf_tick(sf, now));
    sf->st.hits++;
    return server;
}

/* Queues a release for the worker owning sf (the control thread; callers
 * serialise).  0, or -1 when the ring is full (the idle sweep frees it later). */
int hlb_sf_queue_release(struct hlb_sf_table *sf, uint32_t p, uint32_t idx, uint64_t h);

/* Queues an adoption of (p, idx) for connection h on server (1..16383): the same
 * ring, the same rules; the worker writes the outcome into the ring slot, read back
 * with hlb_sf_adopt_result().  The slot's position (for the result), or -1 when
 * the ring is full. */
int64_t hlb_sf_queue_adopt(struct hlb_sf_table *sf, uint32_t p, uint32_t idx, uint64_t h,
                           uint16_t server);

/* The outcome of the adoption queued at pos: HLB_SF_ADOPT_PENDING until the worker
 * has drained it.  Valid while no other request has been queued since the worker
 * drained it (the control thread holds its lock from queue to read). */
uint32_t hlb_sf_adopt_result(const struct hlb_sf_table *sf, int64_t pos);

/* Holds hints for ms from the worker's next drain (the control thread). */
void hlb_sf_hold_hints(struct hlb_sf_table *sf, uint32_t ms);

/* Frees every entry at the worker's next drain (the control thread, the ring's
 * producer): ordered against the ring, after the requests queued so far and before
 * those queued later. */
void hlb_sf_request_clear(struct hlb_sf_table *sf);

/* The owning worker at ms clock now: applies the queued releases and adoptions, a
 * requested clear at its place among them, a requested hold of hints, ends a hold
 * that is over; returns the requests applied. */
unsigned hlb_sf_drain(struct hlb_sf_table *sf, uint32_t now);

/* The owning worker: frees the entries idle for idle_ms or more among the next n
 * (incremental, wrap-safe clock). */
void hlb_sf_sweep(struct hlb_sf_table *sf, uint32_t now, uint32_t n);

/* Checks the stacks against the entries: every index is either in use or on its
 * partition's stack exactly once (a free entry 0), and entries counts the ones in
 * use.  0, or -1 (tests and the fuzzer). */
int hlb_sf_check(const struct hlb_sf_table *sf);

/* 1 when a and b (of the same size) hold the same entries and stacks (tests and the
 * fuzzer: the lean pass against the general code). */
int hlb_sf_same(const struct hlb_sf_table *a, const struct hlb_sf_table *b);

#endif
