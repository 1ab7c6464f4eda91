#include "table_swap.h"

#include <sched.h>
#include <time.h>

void hlb_table_slot_init(struct hlb_table_slot *s, struct hlb_vip_table *initial,
                         unsigned n_readers)
{
    s->last_gen = 1;
    s->n_readers = n_readers < 1 ? 1 : n_readers > HLB_MAX_WORKERS ? HLB_MAX_WORKERS : n_readers;
    initial->gen = 1;
    for (unsigned k = 0; k < HLB_MAX_WORKERS; k++) {
        atomic_store(&s->reader[k].gen, 1);
        atomic_store(&s->reader[k].running, 0);
        atomic_store(&s->reader[k].epoch, 0);
        s->reader[k].pass_epoch = 0;
    }
    atomic_store(&s->epoch, 0);
    atomic_store(&s->current, initial);
}

void hlb_table_reader_online(struct hlb_table_slot *s, unsigned reader)
{
    atomic_store(&s->reader[reader].running, 1);
    /* Store-load order: the control thread must either see this worker running or
     * this worker must see the table it publishes. */
    atomic_thread_fence(memory_order_seq_cst);
}

void hlb_table_reader_offline(struct hlb_table_slot *s, unsigned reader)
{
    atomic_store(&s->reader[reader].running, 0);
}

struct hlb_vip_table *hlb_table_publish(struct hlb_table_slot *s, struct hlb_vip_table *t)
{
    t->gen = ++s->last_gen;
    if (t->gen == 0)                 /* generation 0 is never used: entries start at 0 */
        t->gen = ++s->last_gen;
    struct hlb_vip_table *old = atomic_exchange_explicit(&s->current, t, memory_order_seq_cst);
    /* Wait for every worker to finish the iteration that may still hold `old`.  Each
     * loops at least every idle-sleep period, so this is a few microseconds to ~0.1 s. */
    for (unsigned k = 0; k < s->n_readers; k++) {
        struct hlb_table_reader *r = &s->reader[k];
        while (atomic_load_explicit(&r->running, memory_order_seq_cst) &&
               atomic_load_explicit(&r->gen, memory_order_acquire) != t->gen) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
    return old;
}

void hlb_table_sync(struct hlb_table_slot *s)
{
    uint32_t e = atomic_fetch_add_explicit(&s->epoch, 1, memory_order_seq_cst) + 1;
    for (unsigned k = 0; k < s->n_readers; k++) {
        struct hlb_table_reader *r = &s->reader[k];
        while (atomic_load_explicit(&r->running, memory_order_seq_cst) &&
               atomic_load_explicit(&r->epoch, memory_order_acquire) != e) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
}
