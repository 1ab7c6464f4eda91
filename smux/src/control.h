/* Control API: HTTP+JSON on a local management address (libmicrohttpd + jansson), HTTPS
 * with mutual TLS (GnuTLS) when given a certificate, its key and a CA: then anyone who trusts
 * the certificate may read, and only a client certificate of that CA for client use may write
 * (401 without one, 403 with another); without TLS it listens on loopback only.
 *
 *   PUT /table    whole versioned VIP table -> 200 | 400 (field, reason) | 409 (version)
 *   GET /table    running table document and version
 *   GET /metrics  Prometheus text exposition
 *   GET /health   200 while every worker loop is alive, 503 otherwise
 *   POST /cheetah/closed  host agents' close reports of stateful Cheetah connections
 *   POST /loads           the DIPs' loads (cookie_reports.h)
 *   POST /pins    a flow pin (pins.h), answered once every worker uses it -> 200 | 400 | 507
 *   DELETE /pins  the pin of a flow (body: the flow), answered once no worker uses it
 *   GET /pins     the pins in force
 */
#ifndef HLB_CONTROL_H
#define HLB_CONTROL_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "datapath.h"
#include "table_swap.h"
#include "workers.h"

struct hlb_control;
struct json_t;

/* Extra metrics source (e.g. ethdev port counters), called under the control lock. */
typedef void (*hlb_metrics_fn)(FILE *out, void *arg);

struct hlb_control_config {
    const char *listen_addr;       /* IPv4 address, e.g. 127.0.0.1 */
    uint16_t listen_port;          /* 0: any free port (see hlb_control_port) */
    struct hlb_table_slot *slot;   /* its reader count is the number of workers */
    struct hlb_worker *const *workers;  /* slot->n_readers of them, by id; read racily
                                           (workers.h); heartbeat_ms: their loops' last
                                           turns, monotonic ms */
    uint64_t (*now_ms)(void);
    uint32_t health_timeout_ms;
    struct hlb_table_options table_opt;
    hlb_metrics_fn extra_metrics;
    void *extra_metrics_arg;
    /* PEM files, all three or none: the server's certificate and key, and the CA whose
     * client certificates may write (docs/operating.md, app/standalone/deploy/hlb-certs). */
    const char *tls_cert, *tls_key, *tls_ca;
    /* --table-state: every table the API accepts is written here (atomically, synced)
     * before the answer, so that a restarted SMux runs it at once; NULL: not kept. */
    const char *table_state;
    /* Flow pins held at most (POST /pins answers 507 beyond); 0: HLB_MAX_PINS. */
    uint32_t max_pins;
    /* --stateful-adopt-grace: the workers hold stateful hints this long when a table
     * gives this SMux an owner id of a VIP it did not have (COOKIE-SPEC §7, "Adoption");
     * 0: never. */
    uint32_t adopt_grace_ms;
};

/* Whether the control API may listen on addr (IPv4) with or without TLS: 0, or -1 with the
 * reason in why (not an address; another address than loopback without mutual TLS). */
int hlb_control_check_listen(const char *addr, int tls, char *why, size_t n);

/* Starts the HTTP server thread. NULL on failure (message on stderr). */
struct hlb_control *hlb_control_start(const struct hlb_control_config *cfg);
uint16_t hlb_control_port(const struct hlb_control *c);
void hlb_control_stop(struct hlb_control *c);

/* The operations behind the endpoints, also used for --table at startup and by tests.
 * Apply: 0 ok; 400 invalid (err filled); 409 version not newer (err filled). */
int hlb_control_apply(struct hlb_control *c, const char *body, size_t len,
                      struct hlb_table_error *err);
/* The same for the initial table (--table): its version may equal the running one,
 * so that a table of version 0 can be loaded into an SMux that starts at 0. */
int hlb_control_apply_initial(struct hlb_control *c, const char *body, size_t len,
                              struct hlb_table_error *err);
char *hlb_control_metrics(struct hlb_control *c, size_t *len);   /* caller frees */
/* POST /loads, POST /cheetah/closed: 0 (*done: DIPs matched, or indexes queued;
 * *full: releases a full ring refused), or 400 (err filled, nothing changed). */
enum hlb_report { HLB_REPORT_LOADS, HLB_REPORT_CLOSED };

/* POST /cheetah/adopt (cookie_reports.h): queued to the workers, waited for (at most
 * a second), answered in *answer.  0, or 400 with err (nothing queued). */
int hlb_control_adopt(struct hlb_control *c, const char *body, size_t len,
                      struct hlb_table_error *err, struct json_t **answer);
int hlb_control_report(struct hlb_control *c, enum hlb_report kind, const char *body,
                       size_t len, struct hlb_table_error *err, unsigned *done,
                       unsigned *full);
/* POST /pins (put 1) and DELETE /pins (put 0): 0 (in force; *found: a pin of the flow was
 * there and is replaced or removed), 400 (err filled, nothing changed) or 507 (the table is
 * full: nothing changed).  GET /pins: {pins, count, capacity}. */
int hlb_control_pin(struct hlb_control *c, int put, const char *body, size_t len,
                    struct hlb_table_error *err, int *found);
json_t *hlb_control_pins(struct hlb_control *c);
/* GET /health: the body, and 200 while every worker's loop turned within
 * health_timeout_ms, else 503 ("stalled"). */
json_t *hlb_control_health(struct hlb_control *c, unsigned *status);

#endif
