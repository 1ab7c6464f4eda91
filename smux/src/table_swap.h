/* Lock-free publication of whole VIP tables (quiescent-state RCU, one worker).
 *
 * The worker loads the current table pointer once per loop iteration, processes the
 * burst against it, then reports the generation it used.  The control thread swaps
 * the pointer and waits until the worker reports the new generation: from then on
 * the old table is unreachable and may be read (counters) and freed.  No lock and no
 * reference count in the fast path; no packet is held or dropped by a swap.
 */
#ifndef HLB_TABLE_SWAP_H
#define HLB_TABLE_SWAP_H

#include <stdatomic.h>
#include <stdint.h>
#include "vip_table.h"

struct hlb_table_slot {
    _Atomic(struct hlb_vip_table *) current;
    _Atomic uint32_t worker_gen;   /* generation the worker last finished with */
    _Atomic int worker_running;    /* 0: nobody to wait for */
    uint32_t last_gen;             /* control side only */
};

static inline struct hlb_vip_table *hlb_table_acquire(struct hlb_table_slot *s)
{
    return atomic_load_explicit(&s->current, memory_order_acquire);
}

static inline void hlb_table_quiesce(struct hlb_table_slot *s, const struct hlb_vip_table *t)
{
    atomic_store_explicit(&s->worker_gen, t->gen, memory_order_release);
}

void hlb_table_slot_init(struct hlb_table_slot *s, struct hlb_vip_table *initial);

/* Publishes t (assigning its generation) and returns the previous table once the
 * worker can no longer be using it.  Control thread only (callers serialise). */
struct hlb_vip_table *hlb_table_publish(struct hlb_table_slot *s, struct hlb_vip_table *t);

#endif
