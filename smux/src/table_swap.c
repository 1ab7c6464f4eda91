#include "table_swap.h"

#include <sched.h>
#include <time.h>

void hlb_table_slot_init(struct hlb_table_slot *s, struct hlb_vip_table *initial)
{
    s->last_gen = 1;
    initial->gen = 1;
    atomic_store(&s->worker_gen, 1);
    atomic_store(&s->worker_running, 0);
    atomic_store(&s->current, initial);
}

struct hlb_vip_table *hlb_table_publish(struct hlb_table_slot *s, struct hlb_vip_table *t)
{
    t->gen = ++s->last_gen;
    if (t->gen == 0)                 /* generation 0 is never used: entries start at 0 */
        t->gen = ++s->last_gen;
    struct hlb_vip_table *old = atomic_exchange_explicit(&s->current, t, memory_order_seq_cst);
    /* Wait for the worker to finish the iteration that may still hold `old`.  It
     * loops at least every idle-sleep period, so this is a few microseconds to ~1 ms. */
    while (atomic_load_explicit(&s->worker_running, memory_order_seq_cst) &&
           atomic_load_explicit(&s->worker_gen, memory_order_acquire) != t->gen) {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
    return old;
}
