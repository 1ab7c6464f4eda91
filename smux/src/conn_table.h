/* Connection table: pins each live connection to the DIP it was first sent to, so a
 * later change of the DIP pool (a DIP added) never moves it (Duet §3.5.2).
 *
 * Bounded, EAL-free, single writer (the worker that owns it).  Set-associative: a
 * flow hashes to one bucket of HLB_CONN_WAYS 32-byte entries (four cache lines) and,
 * within it, to a home line of two entries.  An entry holds its whole key, state,
 * timer and DIP, so a lookup normally reads exactly one cache line; only when the
 * home line overflowed (its spill count is non-zero) are the bucket's other lines
 * read.  Entries expire by per-state timeouts; a full bucket reuses an expired entry
 * first, then displaces the displaceable entry whose timer was set longest ago
 * (oldest first, whatever its timeout): half-open (SYN only), closing (FIN seen), or
 * unconfirmed (a TCP flow adopted from one mid-flow segment, a UDP flow of one
 * datagram, until a second packet).  An established connection or a UDP flow that
 * has seen two packets is never displaced.  So a flood of SYNs, or of ACKs, FINs or
 * datagrams from forged sources, fills the table but cannot push established
 * connections out or make lookups slower; a new connection keeps its pin unless 8
 * newer displaceable entries land in its bucket before its second packet.
 */
#ifndef HLB_CONN_TABLE_H
#define HLB_CONN_TABLE_H

#include <stdint.h>
#include <string.h>
#include "hlb_pkt.h"

#define HLB_CONN_WAYS 8
/* At most 2^28 buckets: the bucket bits must not reach the home-line bits of the
 * hash.  That is 2^31 slots (64 GiB of entries). */
#define HLB_CONN_MAX_BUCKETS (1ull << 28)
#define HLB_CONN_MAX_CAPACITY (HLB_CONN_MAX_BUCKETS * HLB_CONN_WAYS)

enum hlb_conn_state {
    HLB_CONN_FREE = 0,
    HLB_CONN_SYN,          /* TCP, only SYN seen so far (half-open) */
    HLB_CONN_EST,          /* TCP, data/ACK seen */
    HLB_CONN_FIN,          /* TCP, FIN seen: short linger for the last ACKs */
    HLB_CONN_UDP,          /* UDP (or other), idle timeout */
    HLB_CONN_ADOPTED,      /* TCP, one mid-connection segment of a tuple never seen
                              (a connection taken over from a failed HMux or a
                              restarted SMux): unconfirmed, est timeout */
    HLB_CONN_UDP_FIRST,    /* UDP (or other), one datagram: unconfirmed, udp timeout */
};

/* May be pushed out of a full bucket by a new entry: one packet from a forged source
 * makes such an entry, and a closing connection only needs its pin for its last
 * segments. */
#define HLB_CONN_DISPLACEABLE                                                                 \
    (1u << HLB_CONN_SYN | 1u << HLB_CONN_FIN | 1u << HLB_CONN_ADOPTED | 1u << HLB_CONN_UDP_FIRST)
static inline int hlb_conn_displaceable(uint8_t state)
{
    /* One mask test: four compares in the victim scan of a full bucket cost about
     * 10 cycles per insert when every packet is a new connection. */
    return state < 32 && ((HLB_CONN_DISPLACEABLE >> state) & 1u);
}

struct hlb_conn_timeouts {  /* milliseconds */
    uint32_t syn_ms;
    uint32_t est_ms;
    uint32_t fin_ms;
    uint32_t udp_ms;
};

#define HLB_CONN_DEFAULT_SYN_MS  10000u
#define HLB_CONN_DEFAULT_EST_MS  300000u
#define HLB_CONN_DEFAULT_FIN_MS  10000u
#define HLB_CONN_DEFAULT_UDP_MS  60000u

struct hlb_conn_entry {
    uint32_t src_ip, dst_ip;    /* the 5-tuple, network order ... */
    uint16_t src_port, dst_port;
    uint8_t  proto;
    uint8_t  state;             /* enum hlb_conn_state; FREE = empty slot */
    uint16_t spill;             /* entry 0 of a line only: entries whose home is this
                                   line but that live in another line of the bucket */
    uint32_t expire;            /* ms clock, wrap-safe compare */
    uint32_t dip_ip;            /* pinned DIP (network order): survives table swaps */
    uint32_t table_gen;         /* table generation dip_index refers to */
    uint32_t dip_index;         /* index into that table's dips[] (fast path) */
};

#define HLB_CONN_LINE_WAYS 2    /* entries per 64-byte line */

struct hlb_conn_bucket {
    struct hlb_conn_entry e[HLB_CONN_WAYS];
} __attribute__((aligned(64)));

struct hlb_conn_stats {
    uint64_t entries;           /* occupied slots (expired ones until reclaimed) */
    uint64_t inserts;
    uint64_t insert_failures;   /* bucket full of live entries none displaceable */
    uint64_t evict_timeout;     /* expired entries reclaimed (sweep or reuse) */
    uint64_t evict_displaced;   /* displaceable entries pushed out by new ones */
    uint64_t closed;            /* removed on RST */
};

/* Active-flow cache: copies of established TCP entries that the lean pass found in
 * their home line, so that a packet of an active flow reads one line of this small
 * array instead of a line of the whole table (in a large table, a lookup usually
 * misses the TLB too).  Two entries per 64-byte set; a flow's set is hash & fc_mask.
 *
 * Coherence: a copy is only ever used while it equals the table entry it was made
 * from.  It is made from a live entry and dropped whenever that entry may change:
 * every write to an entry happens either in pinned_dip() for the entry's own key
 * (which drops the key's copy first: hlb_conn_fc_forget) or in vacate() (removal by
 * RST, sweep, or reuse of the slot by an insert), which drops the copy of the key
 * it removes.  Entries never move between slots, and an insert fills a free or
 * vacated slot.  A copy holds the fields the common-case decision reads (key,
 * expiry, table generation, DIP; its state is always ESTABLISHED), and the decision
 * made from it is the one made from the entry: it counts a hit and returns the DIP,
 * nothing else (dp-burst compares whole bursts, counters and tables against the
 * general code, with sweeps, swaps and re-pinning). */
struct hlb_conn_fc_entry {
    uint64_t k0;                /* as hlb_conn_key(); k1 == 0: empty (proto 0 is never cached) */
    uint64_t k1;                /* ports + proto only (HLB_CONN_K1_MASK) */
    uint32_t expire;
    uint32_t table_gen;
    uint32_t dip_index;
    uint32_t pad;
};

struct hlb_conn_fc_set {
    struct hlb_conn_fc_entry e[2];
} __attribute__((aligned(64)));

struct hlb_conn_table {
    struct hlb_conn_bucket *b;
    struct hlb_conn_fc_set *fc; /* active-flow cache (above) */
    uint32_t fc_mask;           /* n_sets - 1 */
    uint64_t fc_hits;           /* packets decided from the cache */
    uint32_t mask;              /* n_buckets - 1 */
    uint32_t sweep_pos;
    uint32_t clock;             /* the owner's ms clock at its last sweep (readers
                                   on other threads judge expiry by it) */
    uint32_t timeout_of_state[8]; /* the timeouts by enum hlb_conn_state (FREE: 0): one
                                     load where a switch cost 25 cycles per insert in
                                     the victim scan of a full bucket */
    struct hlb_conn_stats st;
    uint64_t capacity;
};

struct hlb_conn_ref {
    struct hlb_conn_bucket *b;
    int i;
};

#define HLB_CONN_K1_MASK 0xffffffffffull   /* ports + proto; not state and spill */

static inline int hlb_conn_key_eq(const struct hlb_conn_entry *e, uint64_t k0, uint64_t k1)
{
    uint64_t a, b;
    memcpy(&a, e, 8);
    memcpy(&b, (const uint8_t *)e + 8, 8);
    return a == k0 && (b & HLB_CONN_K1_MASK) == k1;
}

static inline int hlb_time_after(uint32_t a, uint32_t b)   /* a later than b */
{
    return (int32_t)(a - b) > 0;
}

/* capacity = number of slots wanted (1..HLB_CONN_MAX_CAPACITY); rounded up to a
 * power-of-two bucket count.  NULL when out of range or out of memory. */
struct hlb_conn_table *hlb_conn_table_create(uint64_t capacity,
                                             const struct hlb_conn_timeouts *to);
void hlb_conn_table_free(struct hlb_conn_table *ct);

static inline struct hlb_conn_bucket *hlb_conn_bucket_of(const struct hlb_conn_table *ct,
                                                         uint32_t hash)
{
    return &ct->b[hash & ct->mask];
}

static inline unsigned hlb_conn_home(uint32_t hash)      /* first entry of the home line */
{
    return (hash >> 30) * HLB_CONN_LINE_WAYS;
}

static inline void hlb_conn_prefetch(const struct hlb_conn_table *ct, uint32_t hash)
{
    __builtin_prefetch(&hlb_conn_bucket_of(ct, hash)->e[hlb_conn_home(hash)], 1, 3);
}

/* The whole bucket (four lines): for a packet that probably opens a connection.
 * Once the home line is full, an insert looks at every entry of the bucket (free,
 * expired or oldest half-open slot), and those lines would otherwise be fetched one
 * after another during the insert. */
static inline void hlb_conn_prefetch_bucket(const struct hlb_conn_table *ct, uint32_t hash)
{
    const struct hlb_conn_bucket *b = hlb_conn_bucket_of(ct, hash);
    for (unsigned l = 0; l < HLB_CONN_WAYS; l += HLB_CONN_LINE_WAYS)
        __builtin_prefetch(&b->e[l], 1, 3);
}

static inline struct hlb_conn_fc_set *hlb_conn_fc_set_of(const struct hlb_conn_table *ct,
                                                         uint32_t hash)
{
    return &ct->fc[hash & ct->fc_mask];
}

static inline void hlb_conn_fc_prefetch(const struct hlb_conn_table *ct, uint32_t hash)
{
    __builtin_prefetch(hlb_conn_fc_set_of(ct, hash), 1, 3);
}

/* The copy of key (k0, k1) in the cache, or NULL.  k1: ports + proto only. */
static inline const struct hlb_conn_fc_entry *
hlb_conn_fc_find(const struct hlb_conn_table *ct, uint32_t hash, uint64_t k0, uint64_t k1)
{
    const struct hlb_conn_fc_set *s = hlb_conn_fc_set_of(ct, hash);
    for (unsigned j = 0; j < 2; j++)
        if (s->e[j].k0 == k0 && s->e[j].k1 == k1)
            return &s->e[j];
    return NULL;
}

/* Drops the copy of key (k0, k1), if any (k1: ports + proto only). */
static inline void hlb_conn_fc_forget(const struct hlb_conn_table *ct, uint32_t hash,
                                      uint64_t k0, uint64_t k1)
{
    struct hlb_conn_fc_set *s = hlb_conn_fc_set_of(ct, hash);
    k1 &= HLB_CONN_K1_MASK;
    for (unsigned j = 0; j < 2; j++)
        if (s->e[j].k0 == k0 && s->e[j].k1 == k1)
            s->e[j] = (struct hlb_conn_fc_entry){0};
}

/* Stores a copy of established entry e of key (k0, k1): over the key's old copy or
 * an empty way, else the older way goes (the newer moves to way 1). */
static inline void hlb_conn_fc_store(const struct hlb_conn_table *ct, uint32_t hash,
                                     uint64_t k0, uint64_t k1,
                                     const struct hlb_conn_entry *e)
{
    struct hlb_conn_fc_set *s = hlb_conn_fc_set_of(ct, hash);
    unsigned j;
    if ((s->e[0].k0 == k0 && s->e[0].k1 == k1) || s->e[0].k1 == 0) {
        j = 0;
    } else if ((s->e[1].k0 == k0 && s->e[1].k1 == k1) || s->e[1].k1 == 0) {
        j = 1;
    } else {
        s->e[1] = s->e[0];
        j = 0;
    }
    s->e[j] = (struct hlb_conn_fc_entry){.k0 = k0, .k1 = k1, .expire = e->expire,
                                         .table_gen = e->table_gen, .dip_index = e->dip_index};
}

/* Finds a live (not expired) entry. Returns 1 and fills ref, or 0. */
static inline int hlb_conn_find(const struct hlb_conn_table *ct, uint32_t hash,
                                uint64_t k0, uint64_t k1, uint32_t now,
                                struct hlb_conn_ref *ref)
{
    struct hlb_conn_bucket *b = hlb_conn_bucket_of(ct, hash);
    unsigned home = hlb_conn_home(hash);
    /* An expired entry for the key is skipped, not a miss: a newer entry for the
     * same tuple may sit further on (expired entries are reclaimed lazily). */
    for (unsigned i = home; i < home + HLB_CONN_LINE_WAYS; i++) {
        struct hlb_conn_entry *e = &b->e[i];
        if (e->state != HLB_CONN_FREE && hlb_conn_key_eq(e, k0, k1) &&
            hlb_time_after(e->expire, now)) {
            ref->b = b;
            ref->i = (int)i;
            return 1;
        }
    }
    if (b->e[home].spill == 0)
        return 0;
    for (unsigned i = 0; i < HLB_CONN_WAYS; i++) {
        struct hlb_conn_entry *e = &b->e[i];
        if (i / HLB_CONN_LINE_WAYS == home / HLB_CONN_LINE_WAYS)
            continue;
        if (e->state != HLB_CONN_FREE && hlb_conn_key_eq(e, k0, k1) &&
            hlb_time_after(e->expire, now)) {
            ref->b = b;
            ref->i = (int)i;
            return 1;
        }
    }
    return 0;
}

static inline uint32_t hlb_conn_timeout_of(const struct hlb_conn_table *ct,
                                           enum hlb_conn_state s)
{
    return ct->timeout_of_state[s & 7];
}

/* Inserts into the home line if it has a free or expired slot, else anywhere in the
 * bucket (counted in the home line's spill), else over the displaceable entry whose
 * timer was set longest ago.  Returns 0 and fills ref (key and state set; the caller
 * fills the DIP), or -1 when the bucket holds no such entry (counted). */
int hlb_conn_insert(struct hlb_conn_table *ct, uint32_t hash, uint64_t k0, uint64_t k1,
                    enum hlb_conn_state state, uint32_t now, struct hlb_conn_ref *ref);

static inline void hlb_conn_set_state(struct hlb_conn_table *ct, struct hlb_conn_ref *ref,
                                      enum hlb_conn_state s, uint32_t now)
{
    ref->b->e[ref->i].state = (uint8_t)s;
    ref->b->e[ref->i].expire = now + hlb_conn_timeout_of(ct, s);
}

void hlb_conn_delete(struct hlb_conn_table *ct, struct hlb_conn_ref *ref);

/* Reclaims expired entries in the next n buckets (incremental garbage collection). */
void hlb_conn_sweep(struct hlb_conn_table *ct, uint32_t now, uint32_t n);

/* Calls fn(entry, arg) for every live entry (not free, not expired at ct->clock).
 * Meant for another thread than the owner (the control API): entries may change
 * under it, so a count built from it is a momentary estimate, never a crash. */
void hlb_conn_for_each_live(const struct hlb_conn_table *ct,
                            void (*fn)(const struct hlb_conn_entry *e, void *arg), void *arg);

/* TCP/UDP state machine for the client->VIP direction (DSR: the SMux never sees the
 * server's packets).  Returns the state after a packet with these flags, or FREE
 * when the entry must be removed (RST). *restart is set when the packet opens a new
 * connection on a tuple whose old one was closing or only adopted (a pure SYN after
 * a FIN, or after an adopted segment). */
enum hlb_conn_state hlb_conn_next_state(enum hlb_conn_state cur, uint8_t proto,
                                        uint8_t tcp_flags, int *restart);

/* State for a tuple not in the table. */
enum hlb_conn_state hlb_conn_initial_state(uint8_t proto, uint8_t tcp_flags);

#endif
