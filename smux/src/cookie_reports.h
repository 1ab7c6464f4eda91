/* Reports from the host agents that the SMux acts on (control API, control.c):
 *
 *   POST /cheetah/closed  {"closed": [{"vip": "10.0.0.10", "port": 80,
 *                                      "client": "192.0.2.7", "clientPort": 40000,
 *                                      "ident": 17408}, ...]}
 *       connections of cheetah-stateful VIPs that ended at their server (under
 *       direct server return the SMux never sees the server's FIN): each one's
 *       stateful index is released by the worker that owns it (stateful.h);
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

#endif
