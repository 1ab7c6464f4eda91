#include "control.h"
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

#define MAX_BODY (64u << 20)
/* Request bodies buffered at once, at most MAX_BODY each: with a thread per connection,
 * 64 connections could otherwise hold 4 GiB.  The others are read, dropped and answered
 * 503 (a controller pushes one table at a time). */
#define MAX_UPLOADS 4u

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
};

#define RD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* ---- counters that survive table swaps ------------------------------------------ */

static void svc_key(const struct hlb_service *s, char *buf, size_t n)
{
    char vip[16];
    hlb_ip_str(s->vip, vip);
    snprintf(buf, n, "%s|%s|%u", vip, hlb_proto_name(s->proto), ntohs(s->port));
}

static void dip_key(const struct hlb_service *s, const struct hlb_dip *d, char *buf, size_t n)
{
    char svc[64], ip[16];
    svc_key(s, svc, sizeof(svc));
    hlb_ip_str(d->ip, ip);
    snprintf(buf, n, "%s|%s", svc, ip);
}

/* Each DIP's counters in the running table, summed over its entries in the pool (a DIP
 * repeats as its WCMP units, dip_first_of) at its first entry; NULL when out of memory.
 * /metrics and /stats report one series per DIP from these. */
static struct hlb_counter *dip_sums(const struct hlb_vip_table *t)
{
    struct hlb_counter *sum = calloc(t->n_dips ? t->n_dips : 1, sizeof(*sum));
    for (uint32_t d = 0; sum && d < t->n_dips; d++) {
        struct hlb_counter unit = hlb_counter_total(t, 1, d);   /* over the workers */
        sum[t->dip_first_of[d]].packets += unit.packets;
        sum[t->dip_first_of[d]].bytes += unit.bytes;
    }
    return sum;
}

static void retired_add(json_t *retired, const char *key, const struct hlb_counter *c)
{
    json_t *v = json_object_get(retired, key);
    json_int_t p = 0, b = 0;
    if (v) {
        p = json_integer_value(json_array_get(v, 0));
        b = json_integer_value(json_array_get(v, 1));
    }
    json_object_set_new(retired, key, json_pack("[I,I]", p + (json_int_t)c->packets,
                                                b + (json_int_t)c->bytes));
}

static void retired_get(json_t *retired, const char *key, uint64_t *p, uint64_t *b)
{
    json_t *v = json_object_get(retired, key);
    *p = v ? (uint64_t)json_integer_value(json_array_get(v, 0)) : 0;
    *b = v ? (uint64_t)json_integer_value(json_array_get(v, 1)) : 0;
}

/* A service's or DIP's counts since its entry appeared: the replaced tables' plus the
 * running one's.  /metrics and /stats both report these. */
static void totals(struct hlb_control *c, const char *key, struct hlb_counter live,
                   uint64_t *p, uint64_t *b)
{
    retired_get(c->retired, key, p, b);
    *p += live.packets;
    *b += live.bytes;
}

/* The old table's counters into the retired totals, then the totals of the entries the
 * new table still has kept and the rest dropped: a series goes on across swaps while its
 * entry stays; an entry removed ends its series (re-added, it starts again from 0, a counter
 * reset Prometheus expects), so that a controller churning DIPs does not grow this object
 * without bound. */
static void retire(struct hlb_control *c, struct hlb_vip_table *old, const struct hlb_vip_table *now)
{
    char key[128];
    for (uint32_t s = 0; s < old->n_services; s++) {
        const struct hlb_service *sv = &old->services[s];
        svc_key(sv, key, sizeof(key));
        struct hlb_counter sum = hlb_counter_total(old, 0, s);
        retired_add(c->retired, key, &sum);
        for (uint32_t d = sv->dip_first; d < sv->dip_first + sv->dip_count; d++) {
            dip_key(sv, &old->dips[d], key, sizeof(key));
            sum = hlb_counter_total(old, 1, d);
            retired_add(c->retired, key, &sum);
        }
    }
    hlb_table_free(old);
    json_t *kept = json_object();
    for (uint32_t s = 0; kept && s < now->n_services; s++) {
        const struct hlb_service *sv = &now->services[s];
        svc_key(sv, key, sizeof(key));
        json_t *v = json_object_get(c->retired, key);
        if (v)
            json_object_set(kept, key, v);
        for (uint32_t d = sv->dip_first; d < sv->dip_first + sv->dip_count; d++) {
            dip_key(sv, &now->dips[d], key, sizeof(key));
            if ((v = json_object_get(c->retired, key)))
                json_object_set(kept, key, v);
        }
    }
    if (kept) {                         /* out of memory: keep them all rather than lose any */
        json_decref(c->retired);
        c->retired = kept;
    }
}

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
    uint64_t v = t->version;           /* t belongs to the slot once published */
    struct hlb_vip_table *old = hlb_table_publish(c->cfg.slot, t);
    retire(c, old, t);                 /* t stays readable: swaps are serialised by c->lock */
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

/* ---- flow pins (pins.h) ------------------------------------------------------------ */

static uint32_t max_pins(const struct hlb_control *c)
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
    if (put && !*found && c->pins && c->pins->n >= max_pins(c)) {
        snprintf(err->field, sizeof(err->field), "(pins)");
        snprintf(err->reason, sizeof(err->reason), "the pin table is full (%u pins): remove "
                 "pins before adding more", max_pins(c));
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
                            "capacity", (int)max_pins(c));
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

static void metric_head(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

char *hlb_control_metrics(struct hlb_control *c, size_t *len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    struct hlb_workers_total tot;
    hlb_workers_total(c->cfg.workers, c->cfg.slot->n_readers, &tot);
    const struct hlb_dp_stats *st = &tot.st;
    pthread_mutex_lock(&c->lock);
    struct hlb_vip_table *t = hlb_table_acquire(c->cfg.slot);

    metric_head(f, "hlb_smux_table_version", "gauge", "Version of the running VIP table.");
    fprintf(f, "hlb_smux_table_version %llu\n", (unsigned long long)t->version);
    metric_head(f, "hlb_smux_table_swaps_total", "counter", "VIP tables accepted and swapped in.");
    fprintf(f, "hlb_smux_table_swaps_total %llu\n", (unsigned long long)c->swaps);
    metric_head(f, "hlb_smux_table_rejected_total", "counter", "VIP tables rejected (400/409/413).");
    fprintf(f, "hlb_smux_table_rejected_total %llu\n", (unsigned long long)RD(c->rejected));
    metric_head(f, "hlb_smux_table_state_errors_total", "counter",
                "Accepted VIP tables that could not be written to --table-state.");
    fprintf(f, "hlb_smux_table_state_errors_total %llu\n", (unsigned long long)RD(c->state_errors));
    metric_head(f, "hlb_smux_table_uploads_in_progress", "gauge",
                "Request bodies being received (at most 4; more are answered 503).");
    fprintf(f, "hlb_smux_table_uploads_in_progress %u\n", __atomic_load_n(&c->uploads, __ATOMIC_RELAXED));

    metric_head(f, "hlb_smux_rx_packets_total", "counter", "Frames received by the datapath.");
    fprintf(f, "hlb_smux_rx_packets_total %llu\n", (unsigned long long)RD(st->rx_packets));
    metric_head(f, "hlb_smux_rx_bytes_total", "counter", "Bytes received by the datapath.");
    fprintf(f, "hlb_smux_rx_bytes_total %llu\n", (unsigned long long)RD(st->rx_bytes));
    metric_head(f, "hlb_smux_forwarded_packets_total", "counter", "Frames encapsulated to a DIP.");
    fprintf(f, "hlb_smux_forwarded_packets_total %llu\n", (unsigned long long)RD(st->fwd_packets));
    metric_head(f, "hlb_smux_forwarded_bytes_total", "counter",
                "Bytes of encapsulated frames sent.");
    fprintf(f, "hlb_smux_forwarded_bytes_total %llu\n", (unsigned long long)RD(st->fwd_bytes));

    char key[128], vip[16], dip[16];
    uint64_t rp, rb;
    /* One family at a time: a Prometheus family's samples must follow its own
     * HELP/TYPE lines as one group, so packets and bytes take a pass each. */
    for (int bytes = 0; bytes < 2; bytes++) {
        const char *name = bytes ? "hlb_smux_vip_bytes_total" : "hlb_smux_vip_packets_total";
        metric_head(f, name, "counter",
                    bytes ? "IP bytes (inner packet) forwarded per VIP, protocol and port."
                          : "Packets forwarded per VIP, protocol and port.");
        for (uint32_t s = 0; s < t->n_services; s++) {
            const struct hlb_service *sv = &t->services[s];
            svc_key(sv, key, sizeof(key));
            totals(c, key, hlb_counter_total(t, 0, s), &rp, &rb);
            hlb_ip_str(sv->vip, vip);
            uint64_t n = bytes ? rb : rp;
            fprintf(f, "%s{vip=\"%s\",proto=\"%s\",port=\"%u\"} %llu\n", name, vip,
                    hlb_proto_name(sv->proto), ntohs(sv->port), (unsigned long long)n);
        }
    }
    struct hlb_counter *sums = dip_sums(t);
    for (int bytes = 0; sums && bytes < 2; bytes++) {
        const char *name = bytes ? "hlb_smux_dip_bytes_total" : "hlb_smux_dip_packets_total";
        metric_head(f, name, "counter",
                    bytes ? "IP bytes forwarded per DIP." : "Packets forwarded per DIP.");
        for (uint32_t s = 0; s < t->n_services; s++) {
            const struct hlb_service *sv = &t->services[s];
            hlb_ip_str(sv->vip, vip);
            for (uint32_t d = sv->dip_first; d < sv->dip_first + sv->dip_count; d++) {
                if (t->dip_first_of[d] != d)
                    continue;                   /* one more unit of a DIP already counted */
                dip_key(sv, &t->dips[d], key, sizeof(key));
                totals(c, key, sums[d], &rp, &rb);
                hlb_ip_str(t->dips[d].ip, dip);
                uint64_t n = bytes ? rb : rp;
                fprintf(f, "%s{vip=\"%s\",proto=\"%s\",port=\"%u\",dip=\"%s\"} %llu\n", name,
                        vip, hlb_proto_name(sv->proto), ntohs(sv->port), dip,
                        (unsigned long long)n);
            }
        }
    }
    free(sums);

    metric_head(f, "hlb_smux_pins", "gauge", "Flow pins in force (POST /pins).");
    fprintf(f, "hlb_smux_pins %u\n", c->pins ? c->pins->n : 0);
    metric_head(f, "hlb_smux_pin_changes_total", "counter", "Flow pins put and removed.");
    fprintf(f, "hlb_smux_pin_changes_total %llu\n", (unsigned long long)c->pin_changes);
    metric_head(f, "hlb_smux_pinned_packets_total", "counter",
                "Frames sent to the DIP of their flow's pin.");
    fprintf(f, "hlb_smux_pinned_packets_total %llu\n", (unsigned long long)RD(st->pinned_packets));

    metric_head(f, "hlb_smux_drops_total", "counter", "Frames not forwarded, by reason.");
    for (int r = 0; r < HLB_DROP_MAX; r++)
        fprintf(f, "hlb_smux_drops_total{reason=\"%s\"} %llu\n", hlb_drop_names[r],
                (unsigned long long)RD(st->drops[r]));
    metric_head(f, "hlb_smux_cookie_packets_total", "counter",
                "TCP segments to cheetah VIPs: placed by their cookie (decoded), dropped for a "
                "cookie naming no server of the pool (invalid, the bad_cookie drops), or sent "
                "the hash path for lack of a timestamp option (fallback).");
    fprintf(f, "hlb_smux_cookie_packets_total{event=\"decoded\"} %llu\n",
            (unsigned long long)RD(st->ck_decoded));
    fprintf(f, "hlb_smux_cookie_packets_total{event=\"invalid\"} %llu\n",
            (unsigned long long)RD(st->drops[HLB_DROP_BAD_COOKIE]));
    fprintf(f, "hlb_smux_cookie_packets_total{event=\"fallback\"} %llu\n",
            (unsigned long long)RD(st->ck_fallback));
    metric_head(f, "hlb_smux_cookie_quic_packets_total", "counter",
                "QUIC packets to cheetah VIPs (p4/COOKIE-SPEC.md section 13): placed by their "
                "connection id (decoded) or by the hash of a long header's DCID (initial), "
                "dropped for an id naming no server of the pool (invalid, the bad_quic_cid "
                "drops) or for a header that is no QUIC packet (malformed, bad_quic_header).");
    fprintf(f, "hlb_smux_cookie_quic_packets_total{event=\"decoded\"} %llu\n",
            (unsigned long long)RD(st->quic_decoded));
    fprintf(f, "hlb_smux_cookie_quic_packets_total{event=\"initial\"} %llu\n",
            (unsigned long long)RD(st->quic_initial));
    fprintf(f, "hlb_smux_cookie_quic_packets_total{event=\"invalid\"} %llu\n",
            (unsigned long long)RD(st->drops[HLB_DROP_BAD_QUIC_CID]));
    fprintf(f, "hlb_smux_cookie_quic_packets_total{event=\"malformed\"} %llu\n",
            (unsigned long long)RD(st->drops[HLB_DROP_BAD_QUIC_HEADER]));
    metric_head(f, "hlb_smux_cookie_syns_total", "counter",
                "SYNs with a timestamp option to cheetah VIPs, by the mechanism that placed them.");
    for (int m = 0; m < HLB_MECH_MAX; m++)
        fprintf(f, "hlb_smux_cookie_syns_total{mechanism=\"%s\"} %llu\n", hlb_mechanism_names[m],
                (unsigned long long)RD(st->ck_syns[m]));
    metric_head(f, "hlb_smux_cookie_stateless_syns_total", "counter",
                "SYNs to cheetah-stateful VIPs placed without a stateful index (this SMux is "
                "no owner, or its ConnStack partition was empty).");
    fprintf(f, "hlb_smux_cookie_stateless_syns_total %llu\n",
            (unsigned long long)RD(st->ck_stateless_syns));
    metric_head(f, "hlb_smux_cookie_stateful_total", "counter",
                "Stateful Cheetah events (p4/COOKIE-SPEC.md section 7): SYNs given an index "
                "(inserted), SYNs left stateless for an empty stack (exhausted), segments "
                "placed by their entry (hit) or naming none (miss, a bad_cookie drop), "
                "entries freed by a close report (released) or idle (idle_expired), segments sent to their owner SMux "
                "(forwarded), IP-in-IP frames from another SMux (decapsulated), and those "
                "naming yet another owner (foreign_bad, dropped).");
    {
        const struct { const char *name; uint64_t v; } ev[] = {
            {"inserted", tot.sf.inserts}, {"exhausted", tot.sf.exhausted},
            {"hit", tot.sf.hits}, {"miss", tot.sf.misses}, {"released", tot.sf.released},
{"idle_expired", tot.sf.idle_expired},
            {"forwarded", tot.sf.forwarded}, {"decapsulated", st->ck_decapsulated},
            {"foreign_bad", tot.sf.foreign_bad}};
        for (size_t k = 0; k < sizeof(ev) / sizeof(ev[0]); k++)
            fprintf(f, "hlb_smux_cookie_stateful_total{event=\"%s\"} %llu\n", ev[k].name,
                    (unsigned long long)ev[k].v);
    }
    metric_head(f, "hlb_smux_cookie_stateful_entries", "gauge",
                "Stateful Cheetah indexes in use, all workers.");
    fprintf(f, "hlb_smux_cookie_stateful_entries %llu\n", (unsigned long long)tot.sf.entries);
    metric_head(f, "hlb_smux_cookie_stateful_capacity", "gauge",
                "Stateful Cheetah indexes, all workers (partitions x 1024).");
    fprintf(f, "hlb_smux_cookie_stateful_capacity %llu\n", (unsigned long long)tot.sf_capacity);
    metric_head(f, "hlb_smux_icmp_frag_needed_total", "counter",
                "ICMP fragmentation-needed messages sent (packet over MTU after encap).");
    fprintf(f, "hlb_smux_icmp_frag_needed_total %llu\n",
            (unsigned long long)RD(st->icmp_frag_needed));
    metric_head(f, "hlb_smux_arp_replies_total", "counter", "ARP replies for our address.");
    fprintf(f, "hlb_smux_arp_replies_total %llu\n", (unsigned long long)RD(st->arp_replies));
    metric_head(f, "hlb_smux_arp_requests_total", "counter", "ARP requests sent for the gateway.");
    fprintf(f, "hlb_smux_arp_requests_total %llu\n", (unsigned long long)RD(st->arp_requests_sent));
    metric_head(f, "hlb_smux_icmp_echo_replies_total", "counter", "Pings to our address answered.");
    fprintf(f, "hlb_smux_icmp_echo_replies_total %llu\n",
            (unsigned long long)RD(st->icmp_echo_replies));
    metric_head(f, "hlb_smux_gateway_resolved", "gauge", "1 when the gateway MAC is known.");
    fprintf(f, "hlb_smux_gateway_resolved %d\n", tot.gw_known);
    metric_head(f, "hlb_smux_worker_rx_packets_total", "counter",
                "Frames received per worker (one per lcore given to the SMux).");
    for (unsigned k = 0; k < c->cfg.slot->n_readers; k++)
        fprintf(f, "hlb_smux_worker_rx_packets_total{worker=\"%u\"} %llu\n", k,
                (unsigned long long)RD(c->cfg.workers[k]->st.rx_packets));

    const struct hlb_conn_stats *ct = &tot.ct;
    if (tot.have_ct) {
        metric_head(f, "hlb_smux_conn_table_entries", "gauge",
                    "Connection-table slots in use (expired ones until reclaimed).");
        fprintf(f, "hlb_smux_conn_table_entries %llu\n", (unsigned long long)ct->entries);
        metric_head(f, "hlb_smux_conn_table_capacity", "gauge", "Connection-table slots.");
        fprintf(f, "hlb_smux_conn_table_capacity %llu\n", (unsigned long long)tot.ct_capacity);
        metric_head(f, "hlb_smux_conn_table_inserts_total", "counter", "Connections pinned.");
        fprintf(f, "hlb_smux_conn_table_inserts_total %llu\n",
                (unsigned long long)ct->inserts);
        metric_head(f, "hlb_smux_conn_table_evictions_total", "counter",
                    "Entries removed: idle timeout, displaced by a new entry (half-open, "
                    "closing, or one packet seen), or RST.");
        fprintf(f, "hlb_smux_conn_table_evictions_total{reason=\"timeout\"} %llu\n",
                (unsigned long long)ct->evict_timeout);
        fprintf(f, "hlb_smux_conn_table_evictions_total{reason=\"displaced\"} %llu\n",
                (unsigned long long)ct->evict_displaced);
        fprintf(f, "hlb_smux_conn_table_evictions_total{reason=\"rst\"} %llu\n",
                (unsigned long long)ct->closed);
        metric_head(f, "hlb_smux_conn_table_insert_failures_total", "counter",
                    "New connections not pinned: their bucket held only established "
                    "connections and confirmed UDP flows.");
        fprintf(f, "hlb_smux_conn_table_insert_failures_total %llu\n",
                (unsigned long long)ct->insert_failures);
        metric_head(f, "hlb_smux_conn_lookups_total", "counter", "Connection-table lookups.");
        fprintf(f, "hlb_smux_conn_lookups_total{result=\"hit\"} %llu\n",
                (unsigned long long)RD(st->conn_hits));
        fprintf(f, "hlb_smux_conn_lookups_total{result=\"miss\"} %llu\n",
                (unsigned long long)RD(st->conn_misses));
        metric_head(f, "hlb_smux_conn_repinned_total", "counter",
                    "Pinned connections whose DIP left the pool (re-selected).");
        fprintf(f, "hlb_smux_conn_repinned_total %llu\n",
                (unsigned long long)RD(st->conn_repinned));
    }
    if (c->cfg.extra_metrics)
        c->cfg.extra_metrics(f, c->cfg.extra_metrics_arg);
    pthread_mutex_unlock(&c->lock);
    fclose(f);
    *len = size;
    return buf;
}

/* ---- HTTP ------------------------------------------------------------------------- */

struct upload {
    char *buf;
    size_t len;
    int too_big;
    int busy;                      /* over MAX_UPLOADS: not buffered, answered 503 */
};

/* ---- connections the running table would send elsewhere ---------------------------- */

struct diverging_scan {
    const struct hlb_vip_table *t;
    uint64_t *live;                /* per service */
    uint64_t *diverging;           /* per service */
};

static int pool_has(const struct hlb_vip_table *t, const struct hlb_service *s,
                    const struct hlb_conn_entry *e)
{
    if (e->table_gen == t->gen && e->dip_index >= s->dip_first &&
        e->dip_index < s->dip_first + s->dip_count)
        return t->dips[e->dip_index].ip == e->dip_ip;
    for (uint32_t d = s->dip_first; d < s->dip_first + s->dip_count; d++)
        if (t->dips[d].ip == e->dip_ip)
            return 1;
    return 0;
}

static void count_diverging(const struct hlb_conn_entry *e, void *arg)
{
    struct diverging_scan *d = arg;
    const struct hlb_service *s = hlb_table_lookup(d->t, e->dst_ip, e->proto, e->dst_port);
    if (!s)
        return;
    uint32_t i = (uint32_t)(s - d->t->services);
    d->live[i]++;
    struct hlb_5tuple tuple = {e->src_ip, e->dst_ip, e->src_port, e->dst_port, e->proto};
    int pick = hlb_select_dip(d->t, s, &tuple);
    /* A DIP that left the pool moves its connections anyway; only those whose DIP is
     * still there and that the stateless choice would move count. */
    if (pick >= 0 && d->t->dips[pick].ip != e->dip_ip && pool_has(d->t, s, e))
        d->diverging[i]++;
}

/* Per VIP service: live pinned connections and how many of them a stateless mux (an
 * HMux, hashing like this SMux) would send to another DIP than the pinned one. The
 * controller keeps a VIP whose pool grew on the SMuxes until this is 0 (Duet §3.5.2).
 * Scans the whole connection table: seconds for tens of millions of slots. */
static json_t *diverging_report(struct hlb_control *c)
{
    pthread_mutex_lock(&c->lock);
    const struct hlb_vip_table *t = hlb_table_acquire(c->cfg.slot);
    struct diverging_scan d = {t, calloc(t->n_services + 1, 8), calloc(t->n_services + 1, 8)};
    json_t *services = json_array();
    int have_ct = 0;
    if (d.live && d.diverging) {
        for (unsigned k = 0; k < c->cfg.slot->n_readers; k++)
            if (c->cfg.workers[k]->ct) {
                hlb_conn_for_each_live(c->cfg.workers[k]->ct, count_diverging, &d);
                have_ct = 1;
            }
        for (uint32_t i = 0; i < t->n_services; i++) {
            const struct hlb_service *s = &t->services[i];
            char vip[16];
            hlb_ip_str(s->vip, vip);
            json_array_append_new(services, json_pack("{s:s,s:s,s:i,s:I,s:I}", "vip", vip,
                "proto", hlb_proto_name(s->proto), "port", ntohs(s->port),
                "connections", (json_int_t)d.live[i], "diverging", (json_int_t)d.diverging[i]));
        }
    }
    json_t *out = json_pack("{s:I,s:b,s:o}", "version", (json_int_t)t->version,
                            "connTable", have_ct, "services", services);
    pthread_mutex_unlock(&c->lock);
    free(d.live);
    free(d.diverging);
    return out;
}

/* GET /stats: per VIP service of the running table, the packets and IP bytes forwarded
 * (in all, and per DIP) since the entry appeared: the counters of /metrics as JSON, which
 * the controller builds its traffic matrix from. */
static json_t *stats_report(struct hlb_control *c)
{
    char key[128], vip[16], dip[16];
    uint64_t p, b;
    pthread_mutex_lock(&c->lock);
    const struct hlb_vip_table *t = hlb_table_acquire(c->cfg.slot);
    struct hlb_counter *sums = dip_sums(t);
    json_t *services = sums ? json_array() : NULL;
    for (uint32_t s = 0; services && s < t->n_services; s++) {
        const struct hlb_service *sv = &t->services[s];
        json_t *dips = json_array();
        for (uint32_t d = sv->dip_first; dips && d < sv->dip_first + sv->dip_count; d++) {
            if (t->dip_first_of[d] != d)
                continue;                       /* one more unit of a DIP already counted */
            dip_key(sv, &t->dips[d], key, sizeof(key));
            totals(c, key, sums[d], &p, &b);
            hlb_ip_str(t->dips[d].ip, dip);
            json_array_append_new(dips, json_pack("{s:s,s:I,s:I}", "ip", dip, "packets", (json_int_t)p,
                                                  "bytes", (json_int_t)b));
        }
        svc_key(sv, key, sizeof(key));
        totals(c, key, hlb_counter_total(t, 0, s), &p, &b);
        hlb_ip_str(sv->vip, vip);
        json_array_append_new(services, json_pack("{s:s,s:s,s:i,s:I,s:I,s:o*}", "vip", vip,
            "proto", hlb_proto_name(sv->proto), "port", ntohs(sv->port), "packets", (json_int_t)p,
            "bytes", (json_int_t)b, "dips", dips));
    }
    struct hlb_workers_total tot;
    hlb_workers_total(c->cfg.workers, c->cfg.slot->n_readers, &tot);
    json_t *syns = json_object();
    for (int m = 0; m < HLB_MECH_MAX; m++)
        json_object_set_new(syns, hlb_mechanism_names[m], json_integer((json_int_t)tot.st.ck_syns[m]));
    json_t *stateful = json_pack(
        "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
        "entries", (json_int_t)tot.sf.entries, "capacity", (json_int_t)tot.sf_capacity,
        "inserted", (json_int_t)tot.sf.inserts, "exhausted", (json_int_t)tot.sf.exhausted,
        "hit", (json_int_t)tot.sf.hits, "miss", (json_int_t)tot.sf.misses,
        "released", (json_int_t)tot.sf.released,
        "idle_expired", (json_int_t)tot.sf.idle_expired, "forwarded", (json_int_t)tot.sf.forwarded,
        "decapsulated", (json_int_t)tot.st.ck_decapsulated,
        "foreign_bad", (json_int_t)tot.sf.foreign_bad,
        "stateless_syns", (json_int_t)tot.st.ck_stateless_syns);
    json_t *quic = json_pack("{s:I,s:I,s:I,s:I}", "decoded", (json_int_t)tot.st.quic_decoded,
                             "initial", (json_int_t)tot.st.quic_initial,
                             "invalid", (json_int_t)tot.st.drops[HLB_DROP_BAD_QUIC_CID],
                             "malformed", (json_int_t)tot.st.drops[HLB_DROP_BAD_QUIC_HEADER]);
    json_t *cookie = json_pack("{s:I,s:I,s:I,s:o,s:o,s:o}", "decoded", (json_int_t)tot.st.ck_decoded,
                               "invalid", (json_int_t)tot.st.drops[HLB_DROP_BAD_COOKIE],
                               "fallback", (json_int_t)tot.st.ck_fallback, "syns", syns,
                               "stateful", stateful, "quic", quic);
    json_t *pins = json_pack("{s:i,s:i,s:I,s:I}", "count", c->pins ? (int)c->pins->n : 0,
                             "capacity", (int)max_pins(c), "packets",
                             (json_int_t)tot.st.pinned_packets, "changes", (json_int_t)c->pin_changes);
    json_t *out = json_pack("{s:I,s:o*,s:o,s:o}", "version", (json_int_t)t->version, "services",
                            services, "cookie", cookie, "pins", pins);
    pthread_mutex_unlock(&c->lock);
    free(sums);
    return out;
}

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
    return json_pack("{s:s,s:I,s:b,s:I}", "status", alive ? "ok" : "stalled", "version",
                     (json_int_t)v, "gatewayResolved", tot.gw_known, "lastLoopMsAgo",
                     (json_int_t)(now - hb));
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
                                           rc == 400 ? "invalid table" : "stale version",
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
            return send_json(conn, 200, stats_report(c));
    } else if (strcmp(url, "/connections/diverging") == 0) {
        if (strcmp(method, "GET") == 0)
            return send_json(conn, 200, diverging_report(c));
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
    c->cfg.table_opt.n_workers = cfg->slot ? cfg->slot->n_readers : 1;  /* counter slices */
    c->retired = json_object();
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
