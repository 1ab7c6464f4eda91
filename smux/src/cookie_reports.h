/* Reports from the host agents that the SMux acts on (control API, control.c):
 *
 *   POST /cheetah/closed  {"closed": [{"vip": "10.0.0.10", "port": 80,
 *                                      "client": "192.0.2.7", "clientPort": 40000,
 *                                      "ident": 17408}, ...]}
 *       connections of cheetah-stateful VIPs that ended at their server (under
 *       direct server return the SMux never sees the server's FIN): each one's
 *       stateful index is released by the worker that owns it (stateful.h);
 *   POST /cheetah/adopt   {"adopt": [{... the same ..., "serverId": 7}, ...]}
 *       connections of this SMux's owner id that the host agents re-report (after
 *       this SMux took the owner id, or restarted: COOKIE-SPEC §7, "Adoption"):
 *       each one's entry is put back at its index, unless another connection holds it;
 *   POST /loads           {"loads": [{"dip": "10.0.0.1", "load": 0.73}, ...]}
 *       the DIPs' loads for p2c, least-loaded and AWRR (balance.h).
 *
 * A report is validated whole before anything changes; an error names the field. */
#ifndef HLB_COOKIE_REPORTS_H
#define HLB_COOKIE_REPORTS_H

#include "datapath.h"

struct json_t;

/* The close report doc against table t and the n workers w: every entry's index
 * queued to every worker (*queued: reports), or counted in *full when some worker's
 * ring was full (the idle sweep frees it later).  0, or -1 with err (nothing
 * queued). */
int hlb_cookie_closed(const struct hlb_vip_table *t, struct hlb_worker *const *w, unsigned n,
                      struct json_t *doc, unsigned *queued, unsigned *full,
                      struct hlb_table_error *err);

/* An adoption report queued to the workers (hlb_cookie_adopt), read back once they
 * have applied it. */
struct hlb_adopt_batch;

/* The adoption report doc against table t and the n workers w: every entry checked
 * (as a close report, and serverId a server of the VIP's pool), then queued to every
 * worker.  The batch, or NULL with err (nothing queued). */
struct hlb_adopt_batch *hlb_cookie_adopt(const struct hlb_vip_table *t,
                                         struct hlb_worker *const *w, unsigned n,
                                         struct json_t *doc, struct hlb_table_error *err);

/* 1 while some worker has not applied its part of b. */
int hlb_adopt_pending(const struct hlb_adopt_batch *b, struct hlb_worker *const *w);

/* The answer: {"adopted":A,"held":H,"pending":P,"ring_full":F,"taken":[{"field":
 * "adopt[i].ident","reason":...,"workers":[k...]}]}.  Read under the lock that
 * queued b (the ring slots hold the outcomes until the next request). */
struct json_t *hlb_adopt_answer(const struct hlb_adopt_batch *b, struct hlb_worker *const *w);

void hlb_adopt_batch_free(struct hlb_adopt_batch *b);

/* The owner ids that become a cheetah-stateful service's SYN id (its lowest held,
 * hlb_service.sf_self) in table t and were not that service's in the running table cur:
 * another id, one where it held nothing, or a service cur does not have as
 * cheetah-stateful (a fresh SMux's first table, as an SMux that took a lost owner's id
 * gets it; also a new VIP, which costs its first SYNs their index).  Bit k for id k.
 * The host agents may be about to re-report those ids' connections, and the service's
 * SYNs would take indexes from the same space.  An id given beside the SYN id is not
 * one: no SYN takes an index under it. */
uint16_t hlb_cookie_new_syn_ids(const struct hlb_vip_table *cur, const struct hlb_vip_table *t);

#endif
