#include "control.h"
#include "control_internal.h"
#include "balance.h"
#include "cheetah.h"
#include "cookie_reports.h"
#include "log.h"
#include "pins.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

#define MAX_BODY (64u << 20)
/* Request bodies buffered at once, at most MAX_BODY each: with a thread per connection,
 * 64 connections could otherwise hold 4 GiB.  The others are read, dropped and answered
 * 503 (a controller pushes one table at a time). */
#define MAX_UPLOADS 4u

/* ---- operations ------------------------------------------------------------------ */

/* The accepted table to cfg.table_state: a temporary file, fsync, rename, so that a
 * crash leaves the old table or the new one. Under c->lock: files in version order. */
static void keep_state(struct hlb_control *c, const char *body, size_t len, uint64_t version)
{
    const char *path = c->cfg.table_state;
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
        HLB_LOG_ERR("--table-state %s: path too long", path);
        return;
    }
    FILE *f = fopen(tmp, "w");
    int ok = f && fwrite(body, 1, len, f) == len && fflush(f) == 0 && fsync(fileno(f)) == 0;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        __atomic_fetch_add(&c->state_errors, 1, __ATOMIC_RELAXED);
        HLB_LOG_ERR("--table-state %s: table version %llu not kept: %s (it runs; a restart "
                    "would start from the previous one)", path, (unsigned long long)version,
                    strerror(errno));
        unlink(tmp);
    }
}

/* Parsing and validation run outside the lock, so that requests on other
 * connections are answered meanwhile; the version check and the swap under it. */
static int apply(struct hlb_control *c, const char *body, size_t len,
                 struct hlb_table_error *err, int initial, uint64_t *version)
{
    struct hlb_vip_table *t = hlb_table_from_json(body, len, &c->cfg.table_opt, err);
    if (!t) {
        __atomic_fetch_add(&c->rejected, 1, __ATOMIC_RELAXED);
        return 400;
    }
    pthread_mutex_lock(&c->lock);
    struct hlb_vip_table *cur = hlb_table_acquire(c->cfg.slot);
    /* The --table file may carry the running version (0) only while nothing has been
     * swapped in: a PUT that came first (the API is up before the file is read) wins. */
    if (initial && c->swaps == 0 ? t->version < cur->version : t->version <= cur->version) {
        snprintf(err->field, sizeof(err->field), "version");
        snprintf(err->reason, sizeof(err->reason), "must be %s the running version %llu",
                 initial ? "at least" : "greater than", (unsigned long long)cur->version);
        pthread_mutex_unlock(&c->lock);
        hlb_table_free(t);
        __atomic_fetch_add(&c->rejected, 1, __ATOMIC_RELAXED);
        return 409;
    }
    hlb_balance_carry(t, cur);         /* the DIPs' last reported loads go on */
    t->pins = c->pins;                 /* and the flow pins */
    hlb_pins_mark(t, c->pins);
    /* The owner ids t gives this SMux get their tables (sf_owners.h); an id that
     * becomes a VIP's SYN id holds hints: its host agents re-report the id's
     * connections, and no SYN takes one of their indexes meanwhile (COOKIE-SPEC §7,
     * "Adoption"). */
    if (hlb_sf_owners_prepare(&c->sf_owners, c->cfg.workers, c->cfg.slot->n_readers, cur, t,
                              c->cfg.adopt_grace_ms, err) != 0) {
        pthread_mutex_unlock(&c->lock);
        hlb_table_free(t);
        __atomic_fetch_add(&c->rejected, 1, __ATOMIC_RELAXED);
        return 503;
    }
    uint64_t v = t->version;           /* t belongs to the slot once published */
    struct hlb_vip_table *old = hlb_table_publish(c->cfg.slot, t);
    hlb_control_retire(c, old, t);                 /* t stays readable: swaps are serialised by c->lock */
    c->swaps++;
    __atomic_store_n(&c->running_version, v, __ATOMIC_RELEASE);
    if (c->cfg.table_state && !initial)
        keep_state(c, body, len, v);
    pthread_mutex_unlock(&c->lock);
    if (version)
        *version = v;
    return 0;
}

/* A request body as JSON, or NULL with err naming the document. */
static json_t *load_body(const char *body, size_t len, struct hlb_table_error *err)
{
    json_error_t je;
    json_t *doc = json_loadb(body, len, 0, &je);
    if (!doc) {
        snprintf(err->field, sizeof(err->field), "(document)");
        snprintf(err->reason, sizeof(err->reason), "not JSON: %s (line %d)", je.text, je.line);
    }
    return doc;
}

int hlb_control_report(struct hlb_control *c, enum hlb_report kind, const char *body,
                       size_t len, struct hlb_table_error *err, unsigned *done,
                       unsigned *full)
{
    json_t *doc = load_body(body, len, err);
    if (!doc)
        return 400;
    *full = 0;
    /* Under the lock: the table stays the running one meanwhile, and one producer
     * at a time fills the workers' release rings. */
    pthread_mutex_lock(&c->lock);
    struct hlb_vip_table *t = hlb_table_acquire(c->cfg.slot);
    int rc = kind == HLB_REPORT_LOADS
                 ? hlb_balance_report(t, doc, done, err)
                 : hlb_cookie_closed(t, c->cfg.workers, c->cfg.slot->n_readers, doc, done, full,
                                     err);
    pthread_mutex_unlock(&c->lock);
    json_decref(doc);
    return rc == 0 ? 0 : 400;
}

int hlb_control_adopt(struct hlb_control *c, const char *body, size_t len,
                      struct hlb_table_error *err, json_t **answer)
{
    json_t *doc = load_body(body, len, err);
    if (!doc)
        return 400;
    /* Under the lock from queue to answer: one producer, and the ring slots keep the
     * workers' outcomes until the next request.  A worker drains at every turn of its
     * loop (at most --idle-sleep-us apart). */
    pthread_mutex_lock(&c->lock);
    struct hlb_vip_table *t = hlb_table_acquire(c->cfg.slot);
    struct hlb_worker *const *w = c->cfg.workers;
    struct hlb_adopt_batch *b = hlb_cookie_adopt(t, w, c->cfg.slot->n_readers, doc, err);
    json_decref(doc);
    if (!b) {
        pthread_mutex_unlock(&c->lock);
        return 400;
    }
    uint64_t until = c->cfg.now_ms() + 1000;
    while (hlb_adopt_pending(b, w) && c->cfg.now_ms() < until)
        nanosleep(&(struct timespec){0, 100000}, NULL);
    *answer = hlb_adopt_answer(b, w);
    pthread_mutex_unlock(&c->lock);
    hlb_adopt_batch_free(b);
    return 0;
}

/* ---- flow pins (pins.h) ------------------------------------------------------------ */

uint32_t hlb_control_max_pins(const struct hlb_control *c)
{
    return c->cfg.max_pins && c->cfg.max_pins < HLB_MAX_PINS ? c->cfg.max_pins : HLB_MAX_PINS;
}

/* The running table takes p (marking the services with pins) and the call returns once
 * every worker's pass started after that: the change is in force.  The previous pin
 * table is then unreachable and freed.  Under c->lock. */
static void pins_install(struct hlb_control *c, struct hlb_pin_table *p)
{
    struct hlb_vip_table *t = hlb_table_acquire(c->cfg.slot);
    __atomic_store_n(&t->pins, p, __ATOMIC_RELEASE);
    hlb_pins_mark(t, p);
    hlb_table_sync(c->cfg.slot);
    hlb_pins_free(c->pins);
    c->pins = p;
    c->pin_changes++;
}

int hlb_control_pin(struct hlb_control *c, int put, const char *body, size_t len,
                    struct hlb_table_error *err, int *found)
{
    json_t *doc = load_body(body, len, err);
    if (!doc)
        return 400;
    struct hlb_pin pin;
    int rc = hlb_pin_from_json(doc, put, &pin, err);
    json_decref(doc);
    if (rc != 0)
        return 400;
    pthread_mutex_lock(&c->lock);
    struct hlb_pin_table *p = NULL;
    *found = c->pins && hlb_pin_find_key(c->pins, pin.k0, pin.k1) != NULL;
    if (put && !*found && c->pins && c->pins->n >= hlb_control_max_pins(c)) {
        snprintf(err->field, sizeof(err->field), "(pins)");
        snprintf(err->reason, sizeof(err->reason), "the pin table is full (%u pins): remove "
                 "pins before adding more", hlb_control_max_pins(c));
        rc = 507;
    } else if (put || *found) {
        p = hlb_pins_change(c->pins, put ? &pin : NULL, put ? NULL : &pin, found);
        if (p)
            pins_install(c, p);
        else {
            snprintf(err->field, sizeof(err->field), "(pins)");
            snprintf(err->reason, sizeof(err->reason), "out of memory");
            rc = 507;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

json_t *hlb_control_pins(struct hlb_control *c)
{
    json_t *list = json_array();
    pthread_mutex_lock(&c->lock);
    const struct hlb_pin_table *p = c->pins;
    for (uint32_t i = 0; p && list && i <= p->mask; i++)
        if (p->slot[i].k1 != 0)
            json_array_append_new(list, hlb_pin_to_json(&p->slot[i]));
    json_t *out = json_pack("{s:o*,s:i,s:i}", "pins", list, "count", p ? (int)p->n : 0,
                            "capacity", (int)hlb_control_max_pins(c));
    pthread_mutex_unlock(&c->lock);
    return out;
}

int hlb_control_apply(struct hlb_control *c, const char *body, size_t len,
                      struct hlb_table_error *err)
{
    return apply(c, body, len, err, 0, NULL);
}

int hlb_control_apply_initial(struct hlb_control *c, const char *body, size_t len,
                              struct hlb_table_error *err)
{
    return apply(c, body, len, err, 1, NULL);
}

/* ---- HTTP ------------------------------------------------------------------------- */

struct upload {
    char *buf;
    size_t len;
    int too_big;
    int busy;                      /* over MAX_UPLOADS: not buffered, answered 503 */
};

json_t *hlb_control_health(struct hlb_control *c, unsigned *status)
{
    /* The heartbeats first: read after the clock, a beat a worker stores in between
     * would be newer than "now" and the difference wrap around.  The oldest one
     * counts: a stalled worker's flows go nowhere. */
    struct hlb_workers_total tot;
    hlb_workers_total(c->cfg.workers, c->cfg.slot->n_readers, &tot);
    uint64_t hb = tot.oldest_heartbeat_ms, now = c->cfg.now_ms();
    int alive = now - hb <= c->cfg.health_timeout_ms;
    uint64_t v = __atomic_load_n(&c->running_version, __ATOMIC_ACQUIRE);
    *status = alive ? 200 : 503;
    return json_pack("{s:s,s:I,s:b,s:I,s:s}", "status", alive ? "ok" : "stalled", "version",
                     (json_int_t)v, "gatewayResolved", tot.gw_known, "lastLoopMsAgo",
                     (json_int_t)(now - hb), "boot", c->boot);
}

/* allow: the methods of the path, sent as "Allow" (with 405), or NULL. */
static enum MHD_Result send_text_allow(struct MHD_Connection *conn, unsigned status, char *text,
                                       size_t len, const char *ctype, const char *allow)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", ctype);
    if (allow)
        MHD_add_response_header(r, "Allow", allow);
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned status, char *text,
                                 size_t len, const char *ctype)
{
    return send_text_allow(conn, status, text, len, ctype, NULL);
}

static enum MHD_Result send_json_allow(struct MHD_Connection *conn, unsigned status, json_t *j,
                                       const char *allow)
{
    /* j is NULL when json_pack() refused a value, e.g. a path that is not valid UTF-8. */
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!s)
        s = strdup(status == 404 ? "{\"error\":\"not found\"}" : "{\"error\":\"unprintable\"}");
    size_t n = s ? strlen(s) : 0;
    char *line = s ? realloc(s, n + 2) : NULL;
    if (!line) {
        free(s);
        return MHD_NO;                  /* out of memory: drop the connection */
    }
    line[n] = '\n';
    line[n + 1] = 0;
    return send_text_allow(conn, status, line, n + 1, "application/json", allow);
}

static enum MHD_Result send_json(struct MHD_Connection *conn, unsigned status, json_t *j)
{
    return send_json_allow(conn, status, j, NULL);
}

/* Whether the connection may write: 0, or 401 (no client certificate) / 403 (one that is not
 * from the configured CA for client use, e.g. another SMux's server certificate). */
static unsigned writer_refusal(const struct hlb_control *c, struct MHD_Connection *conn,
                               const char **why)
{
    if (!c->pem[0])
        return 0;                       /* plain HTTP: loopback only (hlb_control_start) */
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    gnutls_session_t s = ci ? (gnutls_session_t)ci->tls_session : NULL;
    unsigned n = 0;
    if (!s || !gnutls_certificate_get_peers(s, &n) || n == 0) {
        *why = "writes need a client certificate issued by this SMux's --tls-ca";
        return 401;
    }
    gnutls_typed_vdata_st purpose = {.type = GNUTLS_DT_KEY_PURPOSE_OID,
                                     .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT};
    unsigned status = 0;
    if (gnutls_certificate_verify_peers(s, &purpose, 1, &status) < 0 || status != 0) {
        *why = "the client certificate is not one of this SMux's --tls-ca for client use";
        return 403;
    }
    return 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls)
{
    struct hlb_control *c = cls;
    (void)version;
    const char *allow = "GET";           /* methods of the known path, for a 405 */
    int is_put = strcmp(method, "PUT") == 0 || strcmp(method, "POST") == 0 ||
                 strcmp(method, "DELETE") == 0;      /* (with a body: DELETE /pins) */

    if (is_put) {
        struct upload *u = *con_cls;
        if (!u) {
            const char *why = NULL;
            unsigned refused = writer_refusal(c, conn, &why);
            if (refused)                /* answered before the body is read: nothing changes */
                return send_json(conn, refused, json_pack("{s:s,s:s,s:s}", "error",
                                 refused == 401 ? "unauthorized" : "forbidden",
                                 "field", "client certificate", "reason", why));
            if (!(u = calloc(1, sizeof(*u))))
                return MHD_NO;
            if (__atomic_add_fetch(&c->uploads, 1, __ATOMIC_RELAXED) > MAX_UPLOADS) {
                __atomic_sub_fetch(&c->uploads, 1, __ATOMIC_RELAXED);
                u->busy = 1;
            }
            *con_cls = u;
            return MHD_YES;
        }
        if (*upload_data_size) {
            if (u->len + *upload_data_size > MAX_BODY) {
                u->too_big = 1;
            } else if (!u->too_big && !u->busy) {
                char *nb = realloc(u->buf, u->len + *upload_data_size + 1);
                if (!nb) {
                    u->too_big = 1;
                } else {
                    u->buf = nb;
                    memcpy(u->buf + u->len, upload_data, *upload_data_size);
                    u->len += *upload_data_size;
                }
            }
            *upload_data_size = 0;
            return MHD_YES;
        }
    }

    if (is_put && ((struct upload *)*con_cls)->busy)
        return send_json(conn, 503, json_pack("{s:s}", "error",
                                              "busy: too many uploads at once, retry"));
    if (strcmp(url, "/table") == 0) {
        if (is_put && strcmp(method, "DELETE") != 0) {
            struct upload *u = *con_cls;
            if (u->too_big) {
                __atomic_fetch_add(&c->rejected, 1, __ATOMIC_RELAXED);
                return send_json(conn, 413, json_pack("{s:s}", "error", "body too large"));
            }
            struct hlb_table_error err = {{0}, {0}};
            uint64_t v = 0;
            int rc = apply(c, u->buf ? u->buf : "", u->len, &err, 0, &v);
            if (rc != 0)
                return send_json(conn, (unsigned)rc,
                                 json_pack("{s:s,s:s,s:s}", "error",
                                           rc == 400 ? "invalid table" : rc == 409
                                           ? "stale version" : "not applied",
                                           "field", err.field, "reason", err.reason));
            return send_json(conn, 200, json_pack("{s:I}", "version", (json_int_t)v));
        }
        if (strcmp(method, "GET") == 0) {
            pthread_mutex_lock(&c->lock);
            struct hlb_vip_table *t = hlb_table_acquire(c->cfg.slot);
            json_t *doc = json_deep_copy((json_t *)t->doc);
            pthread_mutex_unlock(&c->lock);
            return send_json(conn, 200, doc);
        }
        allow = "GET, PUT, POST";
    } else if (strcmp(url, "/loads") == 0 || strcmp(url, "/cheetah/closed") == 0) {
        if (strcmp(method, "POST") == 0) {
            struct upload *u = *con_cls;
            if (u->too_big)
                return send_json(conn, 413, json_pack("{s:s}", "error", "body too large"));
            struct hlb_table_error err = {{0}, {0}};
            int loads = strcmp(url, "/loads") == 0;
            unsigned done = 0, full = 0;
            int rc = hlb_control_report(c, loads ? HLB_REPORT_LOADS : HLB_REPORT_CLOSED,
                                        u->buf ? u->buf : "", u->len, &err, &done, &full);
            if (rc != 0)
                return send_json(conn, (unsigned)rc,
                                 json_pack("{s:s,s:s,s:s}", "error", "invalid report", "field",
                                           err.field, "reason", err.reason));
            return send_json(conn, 200, loads ? json_pack("{s:i}", "matched", (int)done)
                                              : json_pack("{s:i,s:i}", "queued", (int)done,
                                                          "ring_full", (int)full));
        }
        allow = "POST";
    } else if (strcmp(url, "/cheetah/adopt") == 0) {
        if (strcmp(method, "POST") == 0) {
            struct upload *u = *con_cls;
            if (u->too_big)
                return send_json(conn, 413, json_pack("{s:s}", "error", "body too large"));
            struct hlb_table_error err = {{0}, {0}};
            json_t *answer = NULL;
            if (hlb_control_adopt(c, u->buf ? u->buf : "", u->len, &err, &answer) != 0)
                return send_json(conn, 400, json_pack("{s:s,s:s,s:s}", "error", "invalid report",
                                                      "field", err.field, "reason", err.reason));
            return send_json(conn, 200, answer);
        }
        allow = "POST";
    } else if (strcmp(url, "/pins") == 0) {
        if (is_put && strcmp(method, "PUT") != 0) {
            struct upload *u = *con_cls;
            if (u->too_big)
                return send_json(conn, 413, json_pack("{s:s}", "error", "body too large"));
            struct hlb_table_error err = {{0}, {0}};
            int found = 0, put = strcmp(method, "POST") == 0;
            int rc = hlb_control_pin(c, put, u->buf ? u->buf : "", u->len, &err, &found);
            if (rc != 0)
                return send_json(conn, (unsigned)rc,
                                 json_pack("{s:s,s:s,s:s}", "error",
                                           rc == 400 ? "invalid pin" : "pin table full",
                                           "field", err.field, "reason", err.reason));
            return send_json(conn, 200, json_pack("{s:b}",
                                                  put ? "replaced" : "removed", found));
        }
        if (strcmp(method, "GET") == 0)
            return send_json(conn, 200, hlb_control_pins(c));
        allow = "GET, POST, DELETE";
    } else if (strcmp(url, "/metrics") == 0) {
        if (strcmp(method, "GET") == 0) {
            size_t len;
            char *m = hlb_control_metrics(c, &len);
            return send_text(conn, 200, m, len, "text/plain; version=0.0.4; charset=utf-8");
        }
    } else if (strcmp(url, "/stats") == 0) {
        if (strcmp(method, "GET") == 0)
            return send_json(conn, 200, hlb_control_stats_report(c));
    } else if (strcmp(url, "/connections/diverging") == 0) {
        if (strcmp(method, "GET") == 0)
            return send_json(conn, 200, hlb_control_diverging_report(c));
    } else if (strcmp(url, "/health") == 0) {
        if (strcmp(method, "GET") == 0) {
            unsigned status;
            json_t *j = hlb_control_health(c, &status);
            return send_json(conn, status, j);
        }
    } else {
        return send_json(conn, 404, json_pack("{s:s,s:s}", "error", "not found", "path", url));
    }
    /* A known path, another method: 405 with the methods it takes (RFC 9110). */
    return send_json_allow(conn, 405, json_pack("{s:s,s:s}", "error", "method not allowed",
                                                "method", method), allow);
}

static void request_done(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct hlb_control *c = cls;
    (void)conn;
    (void)toe;
    struct upload *u = *con_cls;
    if (u) {
        if (!u->busy)
            __atomic_sub_fetch(&c->uploads, 1, __ATOMIC_RELAXED);
        free(u->buf);
        free(u);
        *con_cls = NULL;
    }
}

static char *read_pem(const char *option, const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t len = 0;
    if (f) {
        FILE *m = open_memstream(&buf, &len);
        char chunk[4096];
        size_t n;
        while (m && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
            fwrite(chunk, 1, n, m);
        if (m)
            fclose(m);
        fclose(f);
    }
    if (!buf || len == 0) {
        fprintf(stderr, "control: %s: cannot read %s\n", option, path);
        free(buf);
        return NULL;
    }
    return buf;
}

int hlb_control_check_listen(const char *addr, int tls, char *why, size_t n)
{
    struct in_addr a;
    why[0] = 0;
    if (inet_pton(AF_INET, addr, &a) != 1) {
        snprintf(why, n, "bad listen address %s", addr);
        return -1;
    }
    if (!tls && (ntohl(a.s_addr) >> 24) != 127) {
        snprintf(why, n, "%s is not a loopback address: the control API serves other hosts only "
                         "with mutual TLS (--tls-cert, --tls-key, --tls-ca)", addr);
        return -1;
    }
    return 0;
}

/* The TLS files of the config into memory (libmicrohttpd takes PEM text): 0, or -1 said. */
static int load_tls(struct hlb_control *c)
{
    const char *files[3] = {c->cfg.tls_cert, c->cfg.tls_key, c->cfg.tls_ca};
    static const char *const names[3] = {"--tls-cert", "--tls-key", "--tls-ca"};
    int given = !!files[0] + !!files[1] + !!files[2];
    if (given == 0)
        return 0;
    for (int i = 0; i < 3; i++)
        if (!files[i]) {
            fprintf(stderr, "control: %s: required with the other --tls-* options\n", names[i]);
            return -1;
        }
    for (int i = 0; i < 3; i++)
        if (!(c->pem[i] = read_pem(names[i], files[i])))
            return -1;
    return 0;
}

struct hlb_control *hlb_control_start(const struct hlb_control_config *cfg)
{
    struct hlb_control *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->cfg = *cfg;
    uint64_t boot = 0;
    if (getrandom(&boot, sizeof(boot), 0) != (ssize_t)sizeof(boot))
        boot = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid();
    snprintf(c->boot, sizeof(c->boot), "%016llx", (unsigned long long)boot);
    c->cfg.table_opt.n_workers = cfg->slot ? cfg->slot->n_readers : 1;  /* counter slices */
    c->retired = json_object();
    hlb_sf_owners_init(&c->sf_owners);
    pthread_mutex_init(&c->lock, NULL);
    const struct hlb_vip_table *t0 = cfg->slot ? hlb_table_acquire(cfg->slot) : NULL;
    c->running_version = t0 ? t0->version : 0;
    if (!cfg->listen_addr)
        return c;                      /* no HTTP server (tests, one-shot tools) */
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(cfg->listen_port)};
    char why[160];
    if (load_tls(c) != 0) {                /* it said why */
        hlb_control_stop(c);
        return NULL;
    }
    if (hlb_control_check_listen(cfg->listen_addr, c->pem[0] != NULL, why, sizeof(why)) != 0) {
        fprintf(stderr, "control: %s\n", why);
        hlb_control_stop(c);
        return NULL;
    }
    inet_pton(AF_INET, cfg->listen_addr, &sa.sin_addr);
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, c->pem[0]},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, c->pem[1]},
        {MHD_OPTION_HTTPS_MEM_TRUST, 0, c->pem[2]},   /* asks for a client certificate */
        {MHD_OPTION_END, 0, NULL},
    };
    /* A thread per connection: a large PUT /table is parsed for seconds, and
     * /health (the FRR supervisor's probe, 250 ms timeout) must answer meanwhile.
     * Swaps stay serialised by c->lock. */
    c->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
                                     MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG |
                                     (c->pem[0] ? MHD_USE_TLS : 0),
                                 cfg->listen_port, NULL, NULL, handle, c,
                                 MHD_OPTION_ARRAY, c->pem[0] ? tls : tls + 3,
                                 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                                 MHD_OPTION_CONNECTION_LIMIT, 64u,
                                 MHD_OPTION_NOTIFY_COMPLETED, request_done, c,
                                 MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    if (!c->daemon) {
        fprintf(stderr, "control: cannot listen on %s:%u\n", cfg->listen_addr, cfg->listen_port);
        hlb_control_stop(c);
        return NULL;
    }
    return c;
}

uint16_t hlb_control_port(const struct hlb_control *c)
{
    if (!c->daemon)
        return 0;
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(c->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return i ? i->port : 0;
}

void hlb_control_stop(struct hlb_control *c)
{
    if (!c)
        return;
    if (c->daemon)
        MHD_stop_daemon(c->daemon);
    if (c->pins && c->cfg.slot) {      /* the running table lets go of them first */
        struct hlb_vip_table *t = hlb_table_acquire(c->cfg.slot);
        __atomic_store_n(&t->pins, NULL, __ATOMIC_RELEASE);
        hlb_pins_mark(t, NULL);
        hlb_table_sync(c->cfg.slot);
    }
    hlb_pins_free(c->pins);
    for (int i = 0; i < 3; i++)
        free(c->pem[i]);
    json_decref(c->retired);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
