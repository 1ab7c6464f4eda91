/* Stateful Cheetah in the SMux (p4/COOKIE-SPEC.md §7; NSDI 2020 §3.2, ToN 2021
 * §III-B): a ConnTable + ConnStack per worker.  A SYN to a cheetah-stateful VIP this
 * SMux owns pops a free index of partition p = (H >> 32) & (m - 1) (crc32c mode:
 * H >> 16) and stores (server id, H) there; the ident 1 << 14 | owner << 10 | index
 * goes to the host in the SYN's TSecr, and the host's cookie carries it from then
 * on.  A later segment names (p, index) through its cookie and H: one load, checked
 * against the stored H.
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
 * EAL-free; the ring is the only part another thread touches. */
#ifndef HLB_STATEFUL_H
#define HLB_STATEFUL_H

#include <stdatomic.h>
#include <stdint.h>
#include "hlb_cookie.h"

#define HLB_SF_INDEXES 1024u          /* the 10 index bits of a stateful ident */
#define HLB_SF_OWNER_SHIFT 10
#define HLB_SF_INDEX_MASK (HLB_SF_INDEXES - 1)
#define HLB_SF_MAX_PARTITIONS 65536u
#define HLB_SF_DEFAULT_PARTITIONS 64u
#define HLB_SF_DEFAULT_IDLE_MS 120000u  /* > 4 host keep-alives (COOKIE-SPEC §6: 25 s) */
#define HLB_SF_RING 4096u               /* releases queued per worker */

struct hlb_sf_entry {
    uint64_t h;                 /* the connection's H: the check value */
    uint16_t server;            /* server id; 0: free */
    uint16_t pad;
    uint32_t seen;              /* ms clock of the last refresh */
};

struct hlb_sf_part {
    struct hlb_sf_entry e[HLB_SF_INDEXES];
    uint16_t free_idx[HLB_SF_INDEXES];   /* the ConnStack: free indexes, top at n_free - 1 */
    uint32_t n_free;
};

struct hlb_sf_release {
    uint64_t h;
    uint32_t part;
    uint32_t index;
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
};

struct hlb_sf_table {
    struct hlb_sf_part *parts;
    uint32_t part_mask;         /* m - 1 (m a power of two) */
    uint32_t idle_ms;
    uint32_t refresh_ms;        /* seen is rewritten at most this often per entry */
    uint32_t sweep_pos;         /* next entry of the sweep: part << 10 | index */
    struct hlb_sf_stats st;
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

/* Pops a free index of partition p for (server, h): the index, or -1 (stack empty:
 * counted in exhausted). */
static inline int hlb_sf_insert(struct hlb_sf_table *sf, uint32_t p, uint16_t server,
                                uint64_t h, uint32_t now)
{
    struct hlb_sf_part *pt = &sf->parts[p];
    if (pt->n_free == 0) {
        sf->st.exhausted++;
        return -1;
    }
    uint32_t idx = pt->free_idx[--pt->n_free];
    pt->e[idx] = (struct hlb_sf_entry){.h = h, .server = server, .seen = now};
    sf->st.inserts++;
    sf->st.entries++;
    return (int)idx;
}

/* Frees index idx of partition p (in use). */
static inline void hlb_sf_delete(struct hlb_sf_table *sf, uint32_t p, uint32_t idx)
{
    struct hlb_sf_part *pt = &sf->parts[p];
    pt->e[idx].server = 0;
    pt->free_idx[pt->n_free++] = (uint16_t)idx;
    sf->st.entries--;
}

/* The server id of (p, idx) for a segment of hash h, or 0 (free, or another
 * connection's: counted in misses).  Refreshes the idle timer at most every
 * refresh_ms, so an active entry's line is not written on every packet. */
static inline uint16_t hlb_sf_lookup(struct hlb_sf_table *sf, uint32_t p, uint32_t idx,
                                     uint64_t h, uint32_t now)
{
    struct hlb_sf_entry *e = &sf->parts[p].e[idx];
    if (e->server == 0 || e->h != h) {
        sf->st.misses++;
        return 0;
    }
    if (now - e->seen >= sf->refresh_ms)
        e->seen = now;
    sf->st.hits++;
    return e->server;
}

/* Queues a release for the worker owning sf (the control thread; callers
 * serialise).  0, or -1 when the ring is full (the idle sweep frees it later). */
int hlb_sf_queue_release(struct hlb_sf_table *sf, uint32_t p, uint32_t idx, uint64_t h);

/* The owning worker: applies the queued releases; returns how many. */
unsigned hlb_sf_drain(struct hlb_sf_table *sf);

/* The owning worker: frees the entries idle for idle_ms or more among the next n
 * (incremental, wrap-safe clock). */
void hlb_sf_sweep(struct hlb_sf_table *sf, uint32_t now, uint32_t n);

/* Checks the stacks against the entries: every index is either in use or on its
 * partition's stack exactly once, and entries counts the ones in use.  0, or -1
 * (tests and the fuzzer). */
int hlb_sf_check(const struct hlb_sf_table *sf);

#endif
