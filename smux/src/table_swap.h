/* Lock-free publication of whole VIP tables to the workers (quiescent-state RCU).
 *
 * Each worker loads the current table pointer once per loop iteration, processes its
 * bursts against it, then reports the generation it used in its own reader slot.
 * The control thread swaps the pointer and waits until every running worker reports
 * the new generation: from then on the old table is unreachable and may be read
 * (counters) and freed.  No lock and no reference count in the fast path; no packet
 * is held or dropped by a swap.  A worker that is not running (before its loop
 * starts, after it ends) is not waited for: it will load the new pointer.
 */
#ifndef HLB_TABLE_SWAP_H
#define HLB_TABLE_SWAP_H

#include <stdatomic.h>
#include <stdint.h>
#include "vip_table.h"

#define HLB_MAX_WORKERS 64

struct hlb_table_reader {           /* one worker's slot, on a cache line of its own */
    _Atomic uint32_t gen;           /* generation the worker last finished a pass with */
    _Atomic int running;            /* 0: nothing to wait for */
} __attribute__((aligned(64)));

struct hlb_table_slot {
    _Atomic(struct hlb_vip_table *) current;
    uint32_t last_gen;              /* control side only */
    unsigned n_readers;
    struct hlb_table_reader reader[HLB_MAX_WORKERS];
};

static inline struct hlb_vip_table *hlb_table_acquire(struct hlb_table_slot *s)
{
    return atomic_load_explicit(&s->current, memory_order_acquire);
}

/* Worker `reader` is done with t (and with every older table). */
static inline void hlb_table_quiesce(struct hlb_table_slot *s, unsigned reader,
                                     const struct hlb_vip_table *t)
{
    atomic_store_explicit(&s->reader[reader].gen, t->gen, memory_order_release);
}

/* Worker `reader` starts or stops taking tables (its loop's first and last lines). */
void hlb_table_reader_online(struct hlb_table_slot *s, unsigned reader);
void hlb_table_reader_offline(struct hlb_table_slot *s, unsigned reader);

/* n_readers: the workers (1..HLB_MAX_WORKERS). */
void hlb_table_slot_init(struct hlb_table_slot *s, struct hlb_vip_table *initial,
                         unsigned n_readers);

/* Publishes t (assigning its generation) and returns the previous table once no
 * worker can still be using it.  Control thread only (callers serialise). */
struct hlb_vip_table *hlb_table_publish(struct hlb_table_slot *s, struct hlb_vip_table *t);

#endif
