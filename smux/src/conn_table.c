#include "conn_table.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct hlb_conn_table *hlb_conn_table_create(uint64_t capacity,
                                             const struct hlb_conn_timeouts *to)
{
    struct hlb_conn_table *ct = calloc(1, sizeof(*ct));
    if (!ct)
        return NULL;
    uint64_t nb = 1;
    while (nb * HLB_CONN_WAYS < capacity)
        nb <<= 1;
    if (nb > (1ull << 31)) {
        free(ct);
        return NULL;
    }
    size_t bytes = nb * sizeof(struct hlb_conn_bucket);
    /* Anonymous mapping: zeroed lazily by the kernel, and large tables get
     * transparent huge pages, which saves a TLB miss per lookup. */
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        free(ct);
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    madvise(mem, bytes, MADV_HUGEPAGE);
#endif
    ct->b = mem;
    ct->mask = (uint32_t)(nb - 1);
    ct->capacity = nb * HLB_CONN_WAYS;
    if (to)
        ct->to = *to;
    else
        ct->to = (struct hlb_conn_timeouts){HLB_CONN_DEFAULT_SYN_MS, HLB_CONN_DEFAULT_EST_MS,
                                            HLB_CONN_DEFAULT_FIN_MS, HLB_CONN_DEFAULT_UDP_MS};
    return ct;
}

void hlb_conn_table_free(struct hlb_conn_table *ct)
{
    if (!ct)
        return;
    munmap(ct->b, ((size_t)ct->mask + 1) * sizeof(struct hlb_conn_bucket));
    free(ct);
}

int hlb_conn_insert(struct hlb_conn_table *ct, uint32_t hash, uint64_t k0, uint64_t k1,
                    enum hlb_conn_state state, uint32_t now, struct hlb_conn_ref *ref)
{
    struct hlb_conn_bucket *b = hlb_conn_bucket_of(ct, hash);
    int free_slot = -1, expired = -1, oldest_syn = -1;

    for (int i = 0; i < HLB_CONN_WAYS; i++) {
        if (b->state[i] == HLB_CONN_FREE) {
            if (free_slot < 0)
                free_slot = i;
            continue;
        }
        if (!hlb_time_after(b->expire[i], now)) {
            /* An expired entry for this very tuple must be the one reused, or a
             * stale duplicate would linger next to the new entry. */
            if (expired < 0 || (b->e[i].k0 == k0 && b->e[i].k1 == k1))
                expired = i;
            continue;
        }
        if (b->state[i] == HLB_CONN_SYN &&
            (oldest_syn < 0 || hlb_time_after(b->expire[oldest_syn], b->expire[i])))
            oldest_syn = i;
    }

    int slot;
    if (expired >= 0 && b->e[expired].k0 == k0 && b->e[expired].k1 == k1) {
        slot = expired;
        ct->st.evict_timeout++;
    } else if (free_slot >= 0) {
        slot = free_slot;
        ct->st.entries++;
    } else if (expired >= 0) {
        slot = expired;
        ct->st.evict_timeout++;
    } else if (oldest_syn >= 0) {
        /* Only half-open entries are ever displaced: a flood of SYNs cannot evict
         * an established connection. */
        slot = oldest_syn;
        ct->st.evict_syn++;
    } else {
        ct->st.insert_failures++;
        return -1;
    }
    b->sig[slot] = hlb_conn_sig(hash);
    b->state[slot] = (uint8_t)state;
    b->expire[slot] = now + hlb_conn_timeout_of(ct, state);
    b->e[slot].k0 = k0;
    b->e[slot].k1 = k1;
    ct->st.inserts++;
    ref->b = b;
    ref->i = slot;
    return 0;
}

void hlb_conn_delete(struct hlb_conn_table *ct, struct hlb_conn_ref *ref)
{
    if (ref->b->state[ref->i] != HLB_CONN_FREE) {
        ref->b->state[ref->i] = HLB_CONN_FREE;
        ct->st.entries--;
        ct->st.closed++;
    }
}

void hlb_conn_sweep(struct hlb_conn_table *ct, uint32_t now, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        struct hlb_conn_bucket *b = &ct->b[ct->sweep_pos];
        ct->sweep_pos = (ct->sweep_pos + 1) & ct->mask;
        for (int i = 0; i < HLB_CONN_WAYS; i++) {
            if (b->state[i] != HLB_CONN_FREE && !hlb_time_after(b->expire[i], now)) {
                b->state[i] = HLB_CONN_FREE;
                ct->st.entries--;
                ct->st.evict_timeout++;
            }
        }
    }
}

enum hlb_conn_state hlb_conn_initial_state(uint8_t proto, uint8_t tcp_flags)
{
    if (proto != HLB_IPPROTO_TCP)
        return HLB_CONN_UDP;
    if (tcp_flags & HLB_TCP_RST)
        return HLB_CONN_FREE;                  /* nothing to pin */
    if (tcp_flags & HLB_TCP_FIN)
        return HLB_CONN_FIN;
    if ((tcp_flags & (HLB_TCP_SYN | HLB_TCP_ACK)) == HLB_TCP_SYN)
        return HLB_CONN_SYN;
    /* Mid-connection packet of a tuple we never saw: a connection taken over from
     * a failed HMux or a restarted SMux. Pin it where the hash sends it now. */
    return HLB_CONN_EST;
}

enum hlb_conn_state hlb_conn_next_state(enum hlb_conn_state cur, uint8_t proto,
                                        uint8_t tcp_flags, int *restart)
{
    *restart = 0;
    if (proto != HLB_IPPROTO_TCP)
        return HLB_CONN_UDP;
    if (tcp_flags & HLB_TCP_RST)
        return HLB_CONN_FREE;
    int pure_syn = (tcp_flags & (HLB_TCP_SYN | HLB_TCP_ACK)) == HLB_TCP_SYN;
    switch (cur) {
    case HLB_CONN_SYN:
        if (tcp_flags & HLB_TCP_FIN)
            return HLB_CONN_FIN;
        return pure_syn ? HLB_CONN_SYN : HLB_CONN_EST;
    case HLB_CONN_EST:
        return (tcp_flags & HLB_TCP_FIN) ? HLB_CONN_FIN : HLB_CONN_EST;
    case HLB_CONN_FIN:
        if (pure_syn) {
            *restart = 1;                      /* tuple reused by a new connection */
            return HLB_CONN_SYN;
        }
        return HLB_CONN_FIN;
    default:
        return hlb_conn_initial_state(proto, tcp_flags);
    }
}
