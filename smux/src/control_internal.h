/* The control API's state, shared by its request handling (control.c) and its reports
 * (control_report.c).  Private to those two files. */
#ifndef HLB_CONTROL_INTERNAL_H
#define HLB_CONTROL_INTERNAL_H

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdint.h>
#include "control.h"
#include "pins.h"
#include "sf_owners.h"

struct hlb_control {
    struct hlb_control_config cfg;
    struct MHD_Daemon *daemon;
    pthread_mutex_t lock;          /* serialises table swaps and reads of the table */
    json_t *retired;               /* counters of replaced tables, by label key */
    uint64_t swaps;
    uint64_t rejected;             /* atomic: counted outside the lock */
    uint64_t state_errors;         /* atomic: accepted tables --table-state did not keep */
    /* Version of the running table, readable without the lock (/health must not
     * wait for a swap, nor read a table a concurrent swap may free). */
    uint64_t running_version;
    unsigned uploads;              /* atomic: bodies being buffered (MAX_UPLOADS) */
    char *pem[3];                  /* TLS: certificate, key, CA (NULL: plain HTTP) */
    struct hlb_pin_table *pins;    /* the flow pins in force (pins.h); NULL: none */
    uint64_t pin_changes;          /* pins put and removed */
    struct hlb_sf_owners sf_owners;  /* the owner ids' tables in the workers */
    /* This process's random id, in /health: a host agent that sees it change
     * re-reports the stateful connections of this SMux's owner id (its ConnTable
     * started empty; COOKIE-SPEC §7, "Adoption"). */
    char boot[17];
};

#define RD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* The old table's counters into the totals that go on across swaps; frees old. */
void hlb_control_retire(struct hlb_control *c, struct hlb_vip_table *old,
                        const struct hlb_vip_table *now);
/* The GET /stats and GET /connections/diverging documents. */
json_t *hlb_control_stats_report(struct hlb_control *c);
json_t *hlb_control_diverging_report(struct hlb_control *c);
/* The most pins this SMux holds (--max-pins, at most HLB_MAX_PINS). */
uint32_t hlb_control_max_pins(const struct hlb_control *c);

#endif
