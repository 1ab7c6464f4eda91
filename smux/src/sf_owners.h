/* The owner ids this SMux holds (p4/COOKIE-SPEC.md §7, "Owner table"): its address at
 * one or several positions of the cheetah-stateful VIPs' statefulOwners (one list for
 * every such VIP: the table is refused otherwise, cheetah.h).  Each id is its own
 * index space (an (index, partition) of id 0 and the same of id 2 are two
 * connections), so each id held has its own ConnTable + ConnStack in every worker:
 *
 *   - the worker's first table (w->sf, made at start) holds the entries of the base
 *     id: the first id the SMux holds; once neither the running table nor the new
 *     one gives that id, the base moves to the lowest id the new table gives that
 *     has no table of its own (an SMux holding one id keeps one table per worker);
 *   - every other id held gets a table of its own (w->sf_of[id]), made by the control
 *     thread before it publishes the VIP table that gives the id, and kept for the
 *     SMux's life (a worker may still read it after a swap; its entries idle out
 *     when the id is given away);
 *   - an id given anew (given by the new VIP table, not by the running one) has its
 *     table cleared, so that entries left from when the id was last held never
 *     refuse an adoption.  The control thread requests the clear before it
 *     publishes the table; the worker may apply it at any drain from then on, also
 *     one before it first sees the new table.  That is safe because nothing writes
 *     that table under the running table: the table is either the id's own, which
 *     the running table reaches only through the id, which it does not give (no SYN
 *     takes an index under it, no segment is placed by it: dp_burst.h), or the first
 *     table, when the id is or becomes the base, and the base moves only once the
 *     running table does not give the old base either (next_base); the control
 *     thread queues adoptions and releases of an id only under a table that gives
 *     it.  The clear is ordered in the worker's ring (hlb_sf_request_clear): requests
 *     queued before it are applied before it, those queued after (the first
 *     adoptions under the new table) after it.  A hold of hints asked there too
 *     applies at the latest at the drain the worker runs when it first sees the new
 *     table, before its first packet under it (smux_main.c).
 *
 * Which ids are "given anew" is judged from the tables this SMux receives: an SMux
 * that got no table while an id was away from it never sees the gap and keeps the
 * id's entries (harmless: the controller never takes an SMux's lowest id, its SYN id).
 *
 * SYNs take their index under the lowest id held (hlb_service.sf_self); a segment
 * naming another id held is placed by that id's table (dp_burst.h). */
#ifndef HLB_SF_OWNERS_H
#define HLB_SF_OWNERS_H

#include "datapath.h"
#include "vip_table.h"

/* Worker w's table of owner id `id` (0..15): its own, or the worker's first. */
static inline struct hlb_sf_table *hlb_sf_of(const struct hlb_worker *w, uint32_t id)
{
    struct hlb_sf_table *sf = w->sf_of[id & (HLB_SF_MAX_OWNERS - 1)];
    return sf ? sf : w->sf;
}

/* The table a lean run of cheetah service s uses (dp_burst_body.h): the SYN id's
 * (the lowest held), the worker's first when this SMux holds no id of s, NULL when s
 * is not cheetah-stateful or the worker keeps no entries. */
static inline struct hlb_sf_table *hlb_sf_run_table(const struct hlb_worker *w,
                                                    const struct hlb_service *s)
{
    if (s->affinity != HLB_AFF_CHEETAH_STATEFUL)
        return NULL;
    return s->sf_self != HLB_SF_NOT_OWNER ? hlb_sf_of(w, s->sf_self) : w->sf;
}

/* Worker w's tables: the first, then the ids' own (up to 1 + HLB_SF_MAX_OWNERS) into
 * out; their count. */
unsigned hlb_sf_worker_tables(struct hlb_worker *w, struct hlb_sf_table **out);

/* The worker: hlb_sf_drain() on each of its tables. */
void hlb_sf_worker_drain(struct hlb_worker *w, uint32_t now);

/* The worker: hlb_sf_sweep() of n entries on each of its tables holding entries. */
void hlb_sf_worker_sweep(struct hlb_worker *w, uint32_t now, uint32_t n);

/* Frees every table of w (after its loop ended). */
void hlb_sf_worker_free(struct hlb_worker *w);

/* The owner ids this SMux holds in t: bit k for id k, over every cheetah-stateful VIP. */
uint16_t hlb_sf_held_ids(const struct hlb_vip_table *t);

/* The control thread's record of the workers' tables. */
struct hlb_sf_owners {
    uint8_t base;      /* the id whose entries the workers' first tables hold, or
                          HLB_SF_NOT_OWNER (none yet) */
};

void hlb_sf_owners_init(struct hlb_sf_owners *o);

/* The control thread, under its lock, before it publishes t (cur: the running table):
 * every id t gives this SMux gets a table in each of the n workers, each id given anew
 * its tables cleared, and each id that becomes a VIP's SYN id (its lowest) hints held
 * for grace_ms (0: none; COOKIE-SPEC §7, "Adoption").  0, or -1 with err (out of
 * memory: nothing changed). */
int hlb_sf_owners_prepare(struct hlb_sf_owners *o, struct hlb_worker *const *w, unsigned n,
                          const struct hlb_vip_table *cur, const struct hlb_vip_table *t,
                          uint32_t grace_ms, struct hlb_table_error *err);

/* The entries of owner id `id` summed over the n workers; valid for an id held or
 * with a table (hlb_sf_owners_listed). */
uint64_t hlb_sf_owner_entries(struct hlb_worker *const *w, unsigned n, uint32_t id);

/* The ids /stats lists: those t gives this SMux, those with a table of their own, and
 * the base id (whose entries may still be draining). */
uint16_t hlb_sf_owners_listed(const struct hlb_sf_owners *o, struct hlb_worker *const *w,
                              unsigned n, const struct hlb_vip_table *t);

#endif
