/* Load-aware SYN mechanisms of cheetah VIPs (ToN 2021 §IV-B): the DIPs' loads as
 * their host agents report them (POST /loads), power of two choices, least-loaded,
 * and automatic weighted round robin (AWRR), whose weights follow the loads:
 *
 *   N_i = round(10 * L_avg / ((1 - a) * L_i + a * L_avg)),  a = 0.5,  clamped to [2, 30]
 *
 * (10 for every server of a balanced pool; an idle server gets up to 3x that, an
 * overloaded one down to 2).  L_avg is the mean over the pool's DIPs of weight > 0;
 * a DIP of weight 0 keeps 0 (draining).  The weights are recomputed on every
 * report, so they follow the agents' period (about 100 ms).
 *
 * Loads live in the table (t->dip_load, thousandths), written by the control
 * thread under its lock and carried over to the next table by DIP address; the
 * workers read them with relaxed loads.  EAL-free. */
#ifndef HLB_BALANCE_H
#define HLB_BALANCE_H

#include <stdint.h>
#include "vip_table.h"

#define HLB_AWRR_BASE 10u
#define HLB_AWRR_MIN 2u
#define HLB_AWRR_MAX 30u
#define HLB_AWRR_ALPHA 0.5
/* A load in the host agents' unit (--load-metric: CPUs busy, or ESTABLISHED
 * connections), kept in thousandths: up to a million connections fit 32 bits. */
#define HLB_LOAD_SCALE 1000u        /* a load of 1.0 */
#define HLB_LOAD_MAX 1000000.0      /* a report above this is refused */

/* Weighted round robin interleaves: a worker's position p walks the pool's
 * cumulative weights (slot p goes to the DIP whose run of slots holds it) by a step
 * coprime with the total, p -> (p + stride) mod total, so every round of `total`
 * SYNs still gives each DIP its weight's share, but spread over the round (a step
 * near 0.618 of the total lands each next SYN in another DIP's run) instead of w
 * SYNs in a row, which sent a whole load-report period of SYNs to one server. */
uint32_t hlb_wrr_stride(uint32_t total);

/* The AWRR weight of a DIP of load li in a pool of mean load avg (both >= 0). */
uint32_t hlb_awrr_weight(double li, double avg);

/* Allocates the loads and the AWRR arrays of a table being built (its weights as
 * configured until the first report).  0, or -1 out of memory. */
int hlb_balance_build(struct hlb_vip_table *t);

/* Recomputes the AWRR weights of every awrr service of t from t->dip_load. */
void hlb_balance_awrr_update(struct hlb_vip_table *t);

/* Copies the loads of the DIPs old and t share (by address) into t, then
 * recomputes t's AWRR weights: a new table starts from the last reports. */
void hlb_balance_carry(struct hlb_vip_table *t, const struct hlb_vip_table *old);

struct json_t;
/* POST /loads: {"loads": [{"dip": "10.0.0.1", "load": 0.73}, ...]}.  Validated whole
 * first (an error names the field; nothing changes), then every entry of t with
 * that DIP address takes the load; *matched counts the DIPs found.  0 or -1. */
int hlb_balance_report(struct hlb_vip_table *t, struct json_t *doc, unsigned *matched,
                       struct hlb_table_error *err);

#endif
