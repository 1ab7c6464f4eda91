/* The workers of one SMux seen together, as the control API reports them: counters
 * added up, the oldest heartbeat (/health is stalled when any worker is), the
 * gateway as any worker has learned it.  EAL-free: read from another thread while
 * the workers write (relaxed 64-bit loads: every value read is one a worker stored,
 * and the totals only grow). */
#ifndef HLB_WORKERS_H
#define HLB_WORKERS_H

#include "datapath.h"

struct hlb_workers_total {
    struct hlb_dp_stats st;         /* summed */
    struct hlb_conn_stats ct;       /* summed over the workers' connection tables */
    uint64_t ct_capacity;           /* slots, all tables */
    uint64_t fc_hits;
    struct hlb_sf_stats sf;         /* summed over the workers' stateful tables (every
                                       owner id's: sf_owners.h) */
    uint64_t sf_capacity;           /* stateful indexes, all workers and tables */
    int have_ct;                    /* some worker has a connection table */
    int gw_known;                   /* some worker knows the gateway MAC */
    uint64_t oldest_heartbeat_ms;
};

void hlb_workers_total(struct hlb_worker *const *w, unsigned n, struct hlb_workers_total *out);

#endif
