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
    /* Checked before the loop: past the limit, nb * HLB_CONN_WAYS would wrap to 0
     * and the loop would never end. */
    if (capacity > HLB_CONN_MAX_CAPACITY) {
        free(ct);
        return NULL;
    }
    uint64_t nb = 1;
    while (nb * HLB_CONN_WAYS < capacity)
        nb <<= 1;
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
    /* The flow cache: one set per 8 buckets, at most 32768 sets (2 MiB, 65536
     * flows): sized for the active flows, not for the capacity. */
    uint64_t sets = nb / 8 ? nb / 8 : 1;
    if (sets > 32768)
        sets = 32768;
    size_t fc_bytes = sets * sizeof(struct hlb_conn_fc_set);
    void *fc = mmap(NULL, fc_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fc == MAP_FAILED) {
        munmap(mem, bytes);
        free(ct);
        return NULL;
    }
    ct->fc = fc;
    ct->fc_mask = (uint32_t)(sets - 1);
    ct->b = mem;
    ct->mask = (uint32_t)(nb - 1);
    ct->capacity = nb * HLB_CONN_WAYS;
    const struct hlb_conn_timeouts def = {HLB_CONN_DEFAULT_SYN_MS, HLB_CONN_DEFAULT_EST_MS,
                                          HLB_CONN_DEFAULT_FIN_MS, HLB_CONN_DEFAULT_UDP_MS};
    if (!to)
        to = &def;
    ct->timeout_of_state[HLB_CONN_SYN] = to->syn_ms;
    ct->timeout_of_state[HLB_CONN_EST] = ct->timeout_of_state[HLB_CONN_ADOPTED] = to->est_ms;
    ct->timeout_of_state[HLB_CONN_FIN] = to->fin_ms;
    ct->timeout_of_state[HLB_CONN_UDP] = ct->timeout_of_state[HLB_CONN_UDP_FIRST] = to->udp_ms;
    return ct;
}

void hlb_conn_table_free(struct hlb_conn_table *ct)
{
    if (!ct)
        return;
    munmap(ct->b, ((size_t)ct->mask + 1) * sizeof(struct hlb_conn_bucket));
    munmap(ct->fc, ((size_t)ct->fc_mask + 1) * sizeof(struct hlb_conn_fc_set));
    free(ct);
}

static inline unsigned line_of(unsigned slot)
{
    return slot / HLB_CONN_LINE_WAYS * HLB_CONN_LINE_WAYS;
}

/* Empties slot i: the entry's home line no longer has it spilled elsewhere, and
 * the flow cache no longer has a copy of it.  Only established entries can have
 * one: copies are made of established entries, and an entry leaves that state
 * only in pinned_dip(), which drops the copy first. */
static void vacate(const struct hlb_conn_table *ct, struct hlb_conn_bucket *b, unsigned i)
{
    struct hlb_conn_entry *e = &b->e[i];
    struct hlb_5tuple t = {.src_ip = e->src_ip, .dst_ip = e->dst_ip, .src_port = e->src_port,
                           .dst_port = e->dst_port, .proto = e->proto};
    uint32_t hash = hlb_conn_hash(&t);
    if (e->state == HLB_CONN_EST) {
        uint64_t k0, k1;
        hlb_conn_key(&t, &k0, &k1);
        hlb_conn_fc_forget(ct, hash, k0, k1);
    }
    unsigned home = hlb_conn_home(hash);
    if (home != line_of(i) && b->e[home].spill)
        b->e[home].spill--;
    e->state = HLB_CONN_FREE;
}

static int usable(const struct hlb_conn_entry *e, uint32_t now)
{
    return e->state == HLB_CONN_FREE || !hlb_time_after(e->expire, now);
}

int hlb_conn_insert(struct hlb_conn_table *ct, uint32_t hash, uint64_t k0, uint64_t k1,
                    enum hlb_conn_state state, uint32_t now, struct hlb_conn_ref *ref)
{
    struct hlb_conn_bucket *b = hlb_conn_bucket_of(ct, hash);
    unsigned home = hlb_conn_home(hash);
    int slot = -1;

    /* Fast path: a free or expired slot in the home line (one cache line). */
    for (unsigned i = home; i < home + HLB_CONN_LINE_WAYS && slot < 0; i++)
        if (usable(&b->e[i], now))
            slot = (int)i;
    /* Then anywhere in the bucket; failing that, the displaceable entry whose timer
     * was set longest ago (its expiry minus its state's timeout): nearest-expiry first
     * would displace a real SYN (10 s) before a forged adopted entry (300 s).  An
     * established connection is never displaced. */
    int victim = -1;
    uint32_t victim_set = 0;
    for (unsigned i = 0; i < HLB_CONN_WAYS && slot < 0; i++) {
        if (line_of(i) == home)
            continue;
        if (usable(&b->e[i], now)) {
            slot = (int)i;
            break;
        }
    }
    if (slot < 0) {
        for (unsigned i = 0; i < HLB_CONN_WAYS; i++) {
            const struct hlb_conn_entry *e = &b->e[i];
            if (!hlb_conn_displaceable(e->state))
                continue;
            uint32_t set = e->expire - hlb_conn_timeout_of(ct, (enum hlb_conn_state)e->state);
            if (victim < 0 || hlb_time_after(victim_set, set)) {
                victim = (int)i;
                victim_set = set;
            }
        }
        if (victim < 0) {
            ct->st.insert_failures++;
            return -1;
        }
        slot = victim;
    }

    struct hlb_conn_entry *e = &b->e[slot];
    if (e->state == HLB_CONN_FREE) {
        ct->st.entries++;
    } else {
        if (slot == victim)
            ct->st.evict_displaced++;
        else
            ct->st.evict_timeout++;
        vacate(ct, b, (unsigned)slot);
    }
    if (line_of((unsigned)slot) != home)
        b->e[home].spill++;
    memcpy(e, &k0, 8);                           /* src, dst */
    e->src_port = (uint16_t)k1;
    e->dst_port = (uint16_t)(k1 >> 16);
    e->proto = (uint8_t)(k1 >> 32);
    e->state = (uint8_t)state;                   /* spill of this line is left as is */
    e->expire = now + hlb_conn_timeout_of(ct, state);
    ct->st.inserts++;
    ref->b = b;
    ref->i = slot;
    return 0;
}

void hlb_conn_delete(struct hlb_conn_table *ct, struct hlb_conn_ref *ref)
{
    if (ref->b->e[ref->i].state != HLB_CONN_FREE) {
        vacate(ct, ref->b, (unsigned)ref->i);
        ct->st.entries--;
        ct->st.closed++;
    }
}

void hlb_conn_sweep(struct hlb_conn_table *ct, uint32_t now, uint32_t n)
{
    __atomic_store_n(&ct->clock, now, __ATOMIC_RELAXED);
    for (uint32_t k = 0; k < n; k++) {
        struct hlb_conn_bucket *b = &ct->b[ct->sweep_pos];
        ct->sweep_pos = (ct->sweep_pos + 1) & ct->mask;
        for (unsigned i = 0; i < HLB_CONN_WAYS; i++) {
            if (b->e[i].state != HLB_CONN_FREE && !hlb_time_after(b->e[i].expire, now)) {
                vacate(ct, b, i);
                ct->st.entries--;
                ct->st.evict_timeout++;
            }
        }
    }
}

void hlb_conn_for_each_live(const struct hlb_conn_table *ct,
                            void (*fn)(const struct hlb_conn_entry *e, void *arg), void *arg)
{
    uint32_t now = __atomic_load_n(&ct->clock, __ATOMIC_RELAXED);
    for (uint64_t k = 0; k <= ct->mask; k++) {
        for (unsigned i = 0; i < HLB_CONN_WAYS; i++) {
            struct hlb_conn_entry e = ct->b[k].e[i];   /* a copy: the owner keeps writing */
            if (e.state != HLB_CONN_FREE && hlb_time_after(e.expire, now))
                fn(&e, arg);
        }
    }
}

enum hlb_conn_state hlb_conn_initial_state(uint8_t proto, uint8_t tcp_flags)
{
    if (proto != HLB_IPPROTO_TCP)
        return HLB_CONN_UDP_FIRST;
    if (tcp_flags & HLB_TCP_RST)
        return HLB_CONN_FREE;                  /* nothing to pin */
    if (tcp_flags & HLB_TCP_FIN)
        return HLB_CONN_FIN;
    if ((tcp_flags & (HLB_TCP_SYN | HLB_TCP_ACK)) == HLB_TCP_SYN)
        return HLB_CONN_SYN;
    /* Mid-connection packet of a tuple we never saw: a connection taken over from
     * a failed HMux or a restarted SMux.  Pin it where the hash sends it now; one
     * segment is all a forged source needs to send, so the pin is unconfirmed until
     * a second one comes. */
    return HLB_CONN_ADOPTED;
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
    case HLB_CONN_ADOPTED:
        if (pure_syn) {
            *restart = 1;                      /* a new connection on this tuple */
            return HLB_CONN_SYN;
        }
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
