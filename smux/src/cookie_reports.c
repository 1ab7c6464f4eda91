/* The host agents' close reports (cookie_reports.h). */
#include "cookie_reports.h"
#include "cheetah.h"
#include "sf_owners.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct closed {
    const struct hlb_service *s;
    uint32_t client;
    uint16_t cport, vport;     /* network order */
    uint32_t ident;
    uint16_t server;           /* an adoption's: the connection's server id */
    uint8_t owner;             /* the owner id the ident names (one this SMux holds) */
};

/* The owner ids of mask held, "0, 2", into buf. */
static void held_str(uint16_t held, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    for (uint32_t m = held; m && at < len; m &= m - 1)
        at += (size_t)snprintf(buf + at, len - at, "%s%d", at ? ", " : "", __builtin_ctz(m));
}

/* An error in entry i of the report's list (closed or adopt), at key. */
static int rerr(struct hlb_table_error *err, const char *list, size_t i, const char *key,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int rerr(struct hlb_table_error *err, const char *list, size_t i, const char *key,
                const char *fmt, ...)
{
    va_list ap;
    snprintf(err->field, sizeof(err->field), "%s[%zu]%s%s", list, i, *key ? "." : "", key);
    va_start(ap, fmt);
    vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
    va_end(ap);
    return -1;
}

static int get_ip(json_t *o, const char *key, uint32_t *ip)
{
    struct in_addr a;
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v) || inet_pton(AF_INET, json_string_value(v), &a) != 1)
        return -1;
    *ip = a.s_addr;
    return 0;
}

static int get_uint(json_t *o, const char *key, long long max, long long *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
        return -1;
    *out = json_integer_value(v);
    return 0;
}

/* Entry i of the report's list (closed or adopt: an adoption also names the server),
 * checked against t. */
static int parse_one(const struct hlb_vip_table *t, const char *list, json_t *o, size_t i,
                     struct closed *c, struct hlb_table_error *err)
{
    uint32_t vip;
    long long port, cport, ident;
    if (!json_is_object(o))
        return rerr(err, list, i, "", "must be an object");
    if (get_ip(o, "vip", &vip) != 0)
        return rerr(err, list, i, "vip", "must be an IPv4 address");
    if (get_uint(o, "port", 65535, &port) != 0 || port == 0)
        return rerr(err, list, i, "port", "must be the VIP's TCP port, 1..65535");
    if (get_ip(o, "client", &c->client) != 0)
        return rerr(err, list, i, "client", "must be an IPv4 address");
    if (get_uint(o, "clientPort", 65535, &cport) != 0)
        return rerr(err, list, i, "clientPort", "must be an integer 0..65535");
    if (get_uint(o, "ident", HLB_COOKIE_MASK, &ident) != 0 || !(ident & HLB_COOKIE_STATEFUL))
        return rerr(err, list, i, "ident", "must be a stateful ident, 16384..32767 (bit 14 set)");
    c->s = hlb_table_lookup(t, vip, HLB_IPPROTO_TCP, htons((uint16_t)port));
    if (!c->s || c->s->affinity != HLB_AFF_CHEETAH_STATEFUL)
        return rerr(err, list, i, "vip", "no cheetah-stateful VIP %s tcp port %lld in the running "
                    "table", json_string_value(json_object_get(o, "vip")), port);
    uint32_t owner = ((uint32_t)ident >> HLB_SF_OWNER_SHIFT) & 15u;
    if (c->s->sf_self == HLB_SF_NOT_OWNER)
        return rerr(err, list, i, "ident", "this SMux is no owner of the VIP (not in its "
                    "statefulOwners): send the report to owner %u", owner);
    if (!(c->s->sf_held >> owner & 1)) {
        char ids[64];
        held_str(c->s->sf_held, ids, sizeof(ids));
        return rerr(err, list, i, "ident", "names owner %u; this SMux holds owner id%s %s of "
                    "the VIP", owner, c->s->sf_held & (c->s->sf_held - 1) ? "s" : "", ids);
    }
    c->owner = (uint8_t)owner;
    c->server = 0;
    if (strcmp(list, "adopt") == 0) {
        long long server;
        if (get_uint(o, "serverId", HLB_COOKIE_SERVER_ID_MAX, &server) != 0 || server == 0)
            return rerr(err, list, i, "serverId", "must be a server id, 1..%u",
                        HLB_COOKIE_SERVER_ID_MAX);
        if (hlb_ck_server_dip(t, c->s, (uint32_t)server) < 0)
            return rerr(err, list, i, "serverId", "server %lld is no server of the VIP's pool",
                        server);
        c->server = (uint16_t)server;
    }
    c->cport = htons((uint16_t)cport);
    c->vport = htons((uint16_t)port);
    c->ident = (uint32_t)ident;
    return 0;
}

/* The array doc.list, every entry valid against t, and every worker keeping stateful
 * entries; else -1 with err. */
static json_t *parse_all(const struct hlb_vip_table *t, struct hlb_worker *const *w, unsigned n,
                         json_t *doc, const char *list, struct hlb_table_error *err)
{
    json_t *a = json_is_object(doc) ? json_object_get(doc, list) : NULL;
    if (!json_is_object(doc)) {
        snprintf(err->field, sizeof(err->field), "(document)");
        snprintf(err->reason, sizeof(err->reason), "must be a JSON object");
        return NULL;
    }
    if (!json_is_array(a)) {
        snprintf(err->field, sizeof(err->field), "%s", list);
        snprintf(err->reason, sizeof(err->reason), a ? "must be an array" : "required");
        return NULL;
    }
    size_t i;
    json_t *o;
    struct closed c;
    json_array_foreach(a, i, o)                /* validate everything first */
        if (parse_one(t, list, o, i, &c, err) != 0)
            return NULL;
    for (unsigned k = 0; k < n; k++)
        if (!w[k]->sf) {
            snprintf(err->field, sizeof(err->field), "%s", list);
            snprintf(err->reason, sizeof(err->reason), "this SMux keeps no stateful entries");
            return NULL;
        }
    return a;
}

int hlb_cookie_closed(const struct hlb_vip_table *t, struct hlb_worker *const *w, unsigned n,
                      json_t *doc, unsigned *queued, unsigned *full,
                      struct hlb_table_error *err)
{
    json_t *a = parse_all(t, w, n, doc, "closed", err);
    if (!a)
        return -1;
    size_t i;
    json_t *o;
    struct closed c;
    *queued = *full = 0;
    json_array_foreach(a, i, o) {
        parse_one(t, "closed", o, i, &c, err);
        const struct hlb_service *s = c.s;
        uint64_t h = hlb_ck_hash(s, c.client, c.cport, c.vport);
        /* To every worker: which one the flow reaches is the NIC's (or the kernel's)
         * hash with multi-queue ports; the H check frees only the connection's entry. */
        int all = 1;
        for (unsigned k = 0; k < n; k++) {
            struct hlb_sf_table *sf = hlb_sf_of(w[k], c.owner);
            uint32_t p = hlb_sf_part_of(sf, h, s->ck_mode == HLB_COOKIE_CRC32C);
            all &= hlb_sf_queue_release(sf, p, c.ident & HLB_SF_INDEX_MASK, h) == 0;
        }
        if (all)
            (*queued)++;
        else
            (*full)++;
    }
    return 0;
}

struct hlb_adopt_batch {
    size_t n;                  /* entries */
    unsigned workers;
    uint32_t *part, *index;    /* per entry */
    uint8_t *owner;            /* per entry: the owner id, whose tables hold the slots */
    int64_t *pos;              /* per entry and worker: its ring slot, -1 ring full */
};

struct hlb_adopt_batch *hlb_cookie_adopt(const struct hlb_vip_table *t,
                                         struct hlb_worker *const *w, unsigned n, json_t *doc,
                                         struct hlb_table_error *err)
{
    json_t *a = parse_all(t, w, n, doc, "adopt", err);
    if (!a)
        return NULL;
    struct hlb_adopt_batch *b = calloc(1, sizeof(*b));
    size_t m = json_array_size(a);
    if (b) {
        b->n = m;
        b->workers = n;
        b->part = calloc(m + 1, sizeof(*b->part));
        b->index = calloc(m + 1, sizeof(*b->index));
        b->owner = calloc(m + 1, sizeof(*b->owner));
        b->pos = calloc(m * n + 1, sizeof(*b->pos));
    }
    if (!b || !b->part || !b->index || !b->owner || !b->pos) {
        hlb_adopt_batch_free(b);
        snprintf(err->field, sizeof(err->field), "adopt");
        snprintf(err->reason, sizeof(err->reason), "out of memory");
        return NULL;
    }
    size_t i;
    json_t *o;
    struct closed c;
    json_array_foreach(a, i, o) {
        parse_one(t, "adopt", o, i, &c, err);
        uint64_t h = hlb_ck_hash(c.s, c.client, c.cport, c.vport);
        b->index[i] = c.ident & HLB_SF_INDEX_MASK;
        b->owner[i] = c.owner;
        /* Every worker, as for a close report: the flow reaches one the NIC picks; a
         * copy in another is never refreshed and leaves by the idle sweep. */
        for (unsigned k = 0; k < n; k++) {
            struct hlb_sf_table *sf = hlb_sf_of(w[k], c.owner);
            uint32_t p = hlb_sf_part_of(sf, h, c.s->ck_mode == HLB_COOKIE_CRC32C);
            b->part[i] = p;
            b->pos[i * n + k] = hlb_sf_queue_adopt(sf, p, b->index[i], h, c.server);
        }
    }
    return b;
}

int hlb_adopt_pending(const struct hlb_adopt_batch *b, struct hlb_worker *const *w)
{
    for (size_t i = 0; i < b->n; i++)
        for (unsigned k = 0; k < b->workers; k++) {
            int64_t pos = b->pos[i * b->workers + k];
            if (pos >= 0 &&
                hlb_sf_adopt_result(hlb_sf_of(w[k], b->owner[i]), pos) == HLB_SF_ADOPT_PENDING)
                return 1;
        }
    return 0;
}

json_t *hlb_adopt_answer(const struct hlb_adopt_batch *b, struct hlb_worker *const *w)
{
    json_int_t adopted = 0, held = 0, pending = 0, full = 0;
    json_t *taken = json_array();
    for (size_t i = 0; i < b->n; i++) {
        /* An entry's outcome: refused by some worker, else not applied by some, else
         * adopted by some, else held by all. */
        int t = 0, pend = 0, ful = 0, adopt = 0;
        json_t *refused = json_array();
        for (unsigned k = 0; k < b->workers; k++) {
            int64_t pos = b->pos[i * b->workers + k];
            uint32_t r = pos < 0 ? HLB_SF_ADOPT_PENDING
                                 : hlb_sf_adopt_result(hlb_sf_of(w[k], b->owner[i]), pos);
            ful |= pos < 0;
            pend |= pos >= 0 && r == HLB_SF_ADOPT_PENDING;
            adopt |= r == HLB_SF_ADOPTED;
            if (r == HLB_SF_ADOPT_TAKEN) {
                t = 1;
                json_array_append_new(refused, json_integer(k));
            }
        }
        if (t) {
            char field[32], reason[160];
            snprintf(field, sizeof(field), "adopt[%zu].ident", i);
            snprintf(reason, sizeof(reason), "index %u of partition %u holds another "
                     "connection", b->index[i], b->part[i]);
            json_array_append_new(taken, json_pack("{s:s,s:s,s:o}", "field", field, "reason",
                                                   reason, "workers", refused));
        } else {
            json_decref(refused);
            if (ful)
                full++;
            else if (pend)
                pending++;
            else if (adopt)
                adopted++;
            else
                held++;
        }
    }
    return json_pack("{s:I,s:I,s:I,s:I,s:o}", "adopted", adopted, "held", held, "pending",
                     pending, "ring_full", full, "taken", taken);
}

void hlb_adopt_batch_free(struct hlb_adopt_batch *b)
{
    if (!b)
        return;
    free(b->part);
    free(b->index);
    free(b->owner);
    free(b->pos);
    free(b);
}

uint16_t hlb_cookie_new_syn_ids(const struct hlb_vip_table *cur, const struct hlb_vip_table *t)
{
    uint16_t ids = 0;
    for (uint32_t i = 0; i < t->n_services; i++) {
        const struct hlb_service *s = &t->services[i];
        if (s->affinity != HLB_AFF_CHEETAH_STATEFUL || s->sf_self == HLB_SF_NOT_OWNER)
            continue;
        const struct hlb_service *o = hlb_table_lookup_exact(cur, hlb_service_key(s->vip, s->proto,
                                                                                   s->port));
        if (!o || o->affinity != HLB_AFF_CHEETAH_STATEFUL || o->sf_self != s->sf_self)
            ids |= (uint16_t)(1u << s->sf_self);
    }
    return ids;
}
