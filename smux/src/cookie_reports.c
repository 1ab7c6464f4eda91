/* The host agents' close reports (cookie_reports.h). */
#include "cookie_reports.h"
#include "cheetah.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>

struct closed {
    const struct hlb_service *s;
    uint32_t client;
    uint16_t cport, vport;     /* network order */
    uint32_t ident;
};

static int rerr(struct hlb_table_error *err, size_t i, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int rerr(struct hlb_table_error *err, size_t i, const char *key, const char *fmt, ...)
{
    va_list ap;
    snprintf(err->field, sizeof(err->field), "closed[%zu]%s%s", i, *key ? "." : "", key);
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

/* Entry i of the report, checked against t. */
static int parse_one(const struct hlb_vip_table *t, json_t *o, size_t i, struct closed *c,
                     struct hlb_table_error *err)
{
    uint32_t vip;
    long long port, cport, ident;
    if (!json_is_object(o))
        return rerr(err, i, "", "must be an object");
    if (get_ip(o, "vip", &vip) != 0)
        return rerr(err, i, "vip", "must be an IPv4 address");
    if (get_uint(o, "port", 65535, &port) != 0 || port == 0)
        return rerr(err, i, "port", "must be the VIP's TCP port, 1..65535");
    if (get_ip(o, "client", &c->client) != 0)
        return rerr(err, i, "client", "must be an IPv4 address");
    if (get_uint(o, "clientPort", 65535, &cport) != 0)
        return rerr(err, i, "clientPort", "must be an integer 0..65535");
    if (get_uint(o, "ident", HLB_COOKIE_MASK, &ident) != 0 || !(ident & HLB_COOKIE_STATEFUL))
        return rerr(err, i, "ident", "must be a stateful ident, 16384..32767 (bit 14 set)");
    c->s = hlb_table_lookup(t, vip, HLB_IPPROTO_TCP, htons((uint16_t)port));
    if (!c->s || c->s->affinity != HLB_AFF_CHEETAH_STATEFUL)
        return rerr(err, i, "vip", "no cheetah-stateful VIP %s tcp port %lld in the running "
                    "table", json_string_value(json_object_get(o, "vip")), port);
    uint32_t owner = ((uint32_t)ident >> HLB_SF_OWNER_SHIFT) & 15u;
    if (c->s->sf_self == HLB_SF_NOT_OWNER)
        return rerr(err, i, "ident", "this SMux is no owner of the VIP (not in its "
                    "statefulOwners): send the report to owner %u", owner);
    if (owner != c->s->sf_self)
        return rerr(err, i, "ident", "names owner %u; this SMux is owner %u of the VIP",
                    owner, c->s->sf_self);
    c->cport = htons((uint16_t)cport);
    c->vport = htons((uint16_t)port);
    c->ident = (uint32_t)ident;
    return 0;
}

int hlb_cookie_closed(const struct hlb_vip_table *t, struct hlb_worker *const *w, unsigned n,
                      json_t *doc, unsigned *queued, unsigned *full,
                      struct hlb_table_error *err)
{
    json_t *a = json_is_object(doc) ? json_object_get(doc, "closed") : NULL;
    if (!json_is_object(doc)) {
        snprintf(err->field, sizeof(err->field), "(document)");
        snprintf(err->reason, sizeof(err->reason), "must be a JSON object");
        return -1;
    }
    if (!json_is_array(a)) {
        snprintf(err->field, sizeof(err->field), "closed");
        snprintf(err->reason, sizeof(err->reason), a ? "must be an array" : "required");
        return -1;
    }
    size_t i;
    json_t *o;
    struct closed c;
    json_array_foreach(a, i, o)                /* validate everything first */
        if (parse_one(t, o, i, &c, err) != 0)
            return -1;
    for (unsigned k = 0; k < n; k++)
        if (!w[k]->sf) {
            snprintf(err->field, sizeof(err->field), "closed");
            snprintf(err->reason, sizeof(err->reason), "this SMux keeps no stateful entries");
            return -1;
        }
    *queued = *full = 0;
    json_array_foreach(a, i, o) {
        parse_one(t, o, i, &c, err);
        const struct hlb_service *s = c.s;
        uint64_t h = hlb_ck_hash(s, c.client, c.cport, c.vport);
        /* To every worker: which one the flow reaches is the NIC's (or the kernel's)
         * hash with multi-queue ports; the H check frees only the connection's entry. */
        int all = 1;
        for (unsigned k = 0; k < n; k++) {
            struct hlb_sf_table *sf = w[k]->sf;
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
