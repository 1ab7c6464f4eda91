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
    _Atomic uint32_t epoch;         /* sync epoch its last finished pass started in */
    uint32_t pass_epoch;            /* the worker's own: the running pass's */
} __attribute__((aligned(64)));

struct hlb_table_slot {
    _Atomic(struct hlb_vip_table *) current;
    /* Bumped by hlb_table_sync(): a change made inside the running table (its pins,
     * pins.h) is in force once every worker finished a pass started after the bump. */
    _Atomic uint32_t epoch;
    uint32_t last_gen;              /* control side only */
    unsigned n_readers;
    struct hlb_table_reader reader[HLB_MAX_WORKERS];
};

static inline struct hlb_vip_table *hlb_table_acquire(struct hlb_table_slot *s)
{
    return atomic_load_explicit(&s->current, memory_order_acquire);
}

/* A worker's pass starts: the sync epoch (read first, so that what a sync made
 * visible before its bump is seen by the pass), then the table. */
static inline struct hlb_vip_table *hlb_table_enter(struct hlb_table_slot *s, unsigned reader)
{
    s->reader[reader].pass_epoch = atomic_load_explicit(&s->epoch, memory_order_acquire);
    return hlb_table_acquire(s);
}

/* Worker `reader` is done with t (and with every older table). */
static inline void hlb_table_quiesce(struct hlb_table_slot *s, unsigned reader,
                                     const struct hlb_vip_table *t)
{
    struct hlb_table_reader *r = &s->reader[reader];
    atomic_store_explicit(&r->gen, t->gen, memory_order_release);
    atomic_store_explicit(&r->epoch, r->pass_epoch, memory_order_release);
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

/* Returns once every running worker finished a pass it entered (hlb_table_enter)
 * after this call began: what the caller changed in the running table before the
 * call is then seen by every packet.  Control thread only (callers serialise). */
void hlb_table_sync(struct hlb_table_slot *s);

#endif
