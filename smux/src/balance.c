/* Loads and AWRR weights of cheetah VIPs (balance.h). */
#include "balance.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

static uint32_t gcd(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

uint32_t hlb_wrr_stride(uint32_t total)
{
    if (total < 3)
        return 1;
    uint32_t s = (uint32_t)(total * 0.6180339887 + 0.5);
    while (gcd(s, total) != 1)          /* ends at total - 1 at the latest */
        s++;
    return s;
}

uint32_t hlb_awrr_weight(double li, double avg)
{
    if (avg <= 0)
        return HLB_AWRR_BASE;          /* nothing reported, or every DIP idle */
    double n = round(HLB_AWRR_BASE * avg / ((1 - HLB_AWRR_ALPHA) * li + HLB_AWRR_ALPHA * avg));
    return n < HLB_AWRR_MIN ? HLB_AWRR_MIN : n > HLB_AWRR_MAX ? HLB_AWRR_MAX : (uint32_t)n;
}

int hlb_balance_build(struct hlb_vip_table *t)
{
    size_t n = t->n_dips ? t->n_dips : 1;
    t->dip_load = calloc(n, sizeof(*t->dip_load));
    if (!t->dip_load)
        return -1;
    int any = 0;
    for (uint32_t i = 0; i < t->n_services; i++)
        any |= t->services[i].mechanism == HLB_MECH_AWRR;
    if (!any)
        return 0;
    /* 8 entries of slack, as cum: the weighted choice reads 8 at a time. */
    for (int k = 0; k < 2; k++) {
        t->awrr_cum[k] = calloc(n + 8, sizeof(uint32_t));
        if (!t->awrr_cum[k])
            return -1;
    }
    t->awrr_total = calloc(2 * (size_t)(t->n_services ? t->n_services : 1), sizeof(uint32_t));
    t->awrr_stride = calloc(2 * (size_t)(t->n_services ? t->n_services : 1), sizeof(uint32_t));
    t->awrr_sel = calloc(t->n_services ? t->n_services : 1, 1);
    if (!t->awrr_total || !t->awrr_stride || !t->awrr_sel)
        return -1;
    for (uint32_t i = 0; i < t->n_services; i++) {
        const struct hlb_service *s = &t->services[i];
        if (s->mechanism != HLB_MECH_AWRR)
            continue;
        memcpy(&t->awrr_cum[0][s->dip_first], &t->cum[s->dip_first], s->dip_count * 4);
        t->awrr_total[2 * i] = s->weight_total;
        t->awrr_stride[2 * i] = s->wrr_stride;
    }
    return 0;
}

static uint32_t load_of(const struct hlb_vip_table *t, uint32_t d)
{
    return __atomic_load_n(&t->dip_load[d], __ATOMIC_RELAXED);
}

/* DIP address -> load, open addressing (address 0 is no DIP): a table swap and a
 * report each take one pass over the table's DIPs, whatever their number. */
struct load_map {
    uint32_t *ip, *load, mask;
};

static int map_init(struct load_map *m, size_t n)
{
    uint32_t size = 16;
    while (size < 2 * n)
        size <<= 1;
    m->mask = size - 1;
    m->ip = calloc(size, sizeof(uint32_t));
    m->load = calloc(size, sizeof(uint32_t));
    return m->ip && m->load ? 0 : -1;
}

static void map_free(struct load_map *m)
{
    free(m->ip);
    free(m->load);
}

static uint32_t *map_slot(const struct load_map *m, uint32_t ip)
{
    for (uint32_t i = hlb_index_hash(ip);; i++) {
        i &= m->mask;
        if (m->ip[i] == ip || m->ip[i] == 0) {
            m->ip[i] = ip;
            return &m->load[i];
        }
    }
}

static const uint32_t *map_find(const struct load_map *m, uint32_t ip)
{
    for (uint32_t i = hlb_index_hash(ip);; i++) {
        i &= m->mask;
        if (m->ip[i] == ip)
            return &m->load[i];
        if (m->ip[i] == 0)
            return NULL;
    }
}

void hlb_balance_awrr_update(struct hlb_vip_table *t)
{
    if (!t->awrr_sel)
        return;
    for (uint32_t i = 0; i < t->n_services; i++) {
        const struct hlb_service *s = &t->services[i];
        if (s->mechanism != HLB_MECH_AWRR)
            continue;
        double sum = 0;
        uint32_t live = 0;
        for (uint32_t d = s->dip_first; d < s->dip_first + s->dip_count; d++)
            if (t->weights[d]) {
                sum += load_of(t, d);
                live++;
            }
        double avg = live ? sum / live : 0;
        /* Fill the array not in use, then flip: a worker reads one whole array. */
        uint8_t next = (uint8_t)(__atomic_load_n(&t->awrr_sel[i], __ATOMIC_RELAXED) ^ 1);
        uint32_t *cum = t->awrr_cum[next];
        uint32_t c = 0;
        for (uint32_t d = s->dip_first; d < s->dip_first + s->dip_count; d++) {
            c += t->weights[d] ? hlb_awrr_weight(load_of(t, d), avg) : 0;
            __atomic_store_n(&cum[d], c, __ATOMIC_RELAXED);
        }
        __atomic_store_n(&t->awrr_total[2 * i + next], c, __ATOMIC_RELAXED);
        __atomic_store_n(&t->awrr_stride[2 * i + next], hlb_wrr_stride(c), __ATOMIC_RELAXED);
        __atomic_store_n(&t->awrr_sel[i], next, __ATOMIC_RELEASE);
    }
}

void hlb_balance_carry(struct hlb_vip_table *t, const struct hlb_vip_table *old)
{
    if (!old || !old->dip_load || !t->dip_load)
        return;
    struct load_map m;
    if (map_init(&m, old->n_dips) == 0) {        /* (out of memory: loads start at 0) */
        for (uint32_t e = 0; e < old->n_dips; e++)
            *map_slot(&m, old->dips[e].ip) = load_of(old, e);
        for (uint32_t d = 0; d < t->n_dips; d++) {
            const uint32_t *l = map_find(&m, t->dips[d].ip);
            t->dip_load[d] = l ? *l : 0;
        }
    }
    map_free(&m);
    hlb_balance_awrr_update(t);
}

static void berr(struct hlb_table_error *err, const char *field, const char *reason)
{
    snprintf(err->field, sizeof(err->field), "%s", field);
    snprintf(err->reason, sizeof(err->reason), "%s", reason);
}

int hlb_balance_report(struct hlb_vip_table *t, json_t *doc, unsigned *matched,
                       struct hlb_table_error *err)
{
    json_t *loads = json_is_object(doc) ? json_object_get(doc, "loads") : NULL;
    if (!json_is_object(doc)) {
        berr(err, "(document)", "must be a JSON object");
        return -1;
    }
    if (!json_is_array(loads)) {
        berr(err, "loads", loads ? "must be an array" : "required");
        return -1;
    }
    size_t i;
    json_t *o;
    char f[64];
    json_array_foreach(loads, i, o) {     /* validate everything first */
        struct in_addr a;
        json_t *dip = json_object_get(o, "dip"), *load = json_object_get(o, "load");
        snprintf(f, sizeof(f), "loads[%zu]", i);
        if (!json_is_object(o)) {
            berr(err, f, "must be an object");
            return -1;
        }
        snprintf(f, sizeof(f), "loads[%zu].dip", i);
        if (!json_is_string(dip) || inet_pton(AF_INET, json_string_value(dip), &a) != 1) {
            berr(err, f, dip ? "must be an IPv4 address" : "required");
            return -1;
        }
        snprintf(f, sizeof(f), "loads[%zu].load", i);
        double v = json_is_number(load) ? json_number_value(load) : -1;
        if (!json_is_number(load) || !(v >= 0 && v <= HLB_LOAD_MAX)) {
            berr(err, f, load ? "must be a number from 0 to 1000000 (the host agents' unit: "
                              "CPUs busy or ESTABLISHED connections)"
                              : "required");
            return -1;
        }
    }
    struct load_map rep;                   /* the report: address -> load (the last wins) */
    if (map_init(&rep, json_array_size(loads)) != 0) {
        map_free(&rep);
        berr(err, "loads", "out of memory");
        return -1;
    }
    json_array_foreach(loads, i, o) {
        struct in_addr a;
        inet_pton(AF_INET, json_string_value(json_object_get(o, "dip")), &a);
        *map_slot(&rep, a.s_addr) = (uint32_t)llround(
            json_number_value(json_object_get(o, "load")) * HLB_LOAD_SCALE);
    }
    struct load_map seen;                  /* DIP addresses of t that got a load */
    if (map_init(&seen, json_array_size(loads)) != 0) {
        map_free(&rep);
        map_free(&seen);
        berr(err, "loads", "out of memory");
        return -1;
    }
    unsigned m = 0;
    for (uint32_t d = 0; d < t->n_dips; d++) {
        const uint32_t *l = t->dips[d].ip ? map_find(&rep, t->dips[d].ip) : NULL;
        if (!l)
            continue;
        __atomic_store_n(&t->dip_load[d], *l, __ATOMIC_RELAXED);
        uint32_t *s = map_slot(&seen, t->dips[d].ip);
        m += *s == 0;
        *s = 1;
    }
    map_free(&rep);
    map_free(&seen);
    hlb_balance_awrr_update(t);
    *matched = m;
    return 0;
}
