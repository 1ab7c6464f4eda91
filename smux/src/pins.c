#include "pins.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t pow2_at_least(uint32_t n)
{
    uint32_t s = 16;
    while (s < n)
        s <<= 1;
    return s;
}

static void put_pin(struct hlb_pin_table *p, const struct hlb_pin *e)
{
    uint32_t i = hlb_conn_hash_words(e->k0, e->k1) & p->mask;
    while (p->slot[i].k1 != 0)
        i = (i + 1) & p->mask;
    p->slot[i] = *e;
}

static void put_svc_key(struct hlb_pin_table *p, uint64_t key)
{
    uint32_t i = hlb_index_hash(key) & p->svc_mask;
    while (p->svc_keys[i] != 0 && p->svc_keys[i] != key)
        i = (i + 1) & p->svc_mask;
    p->svc_keys[i] = key;
}

static int has_svc_key(const struct hlb_pin_table *p, uint64_t key)
{
    uint32_t i = hlb_index_hash(key) & p->svc_mask;
    for (;; i = (i + 1) & p->svc_mask) {
        if (p->svc_keys[i] == key)
            return 1;
        if (p->svc_keys[i] == 0)
            return 0;
    }
}

/* The flow's (vip, proto, port) from the key words of hlb_conn_key(). */
static uint64_t pin_svc_key(const struct hlb_pin *e, int any_port)
{
    uint32_t vip = (uint32_t)(e->k0 >> 32);
    uint8_t proto = (uint8_t)(e->k1 >> 32);
    uint16_t port = any_port ? 0 : (uint16_t)(e->k1 >> 16);
    return hlb_service_key(vip, proto, port);
}

void hlb_pins_free(struct hlb_pin_table *p)
{
    if (!p)
        return;
    free(p->slot);
    free(p->svc_keys);
    free(p);
}

struct hlb_pin_table *hlb_pins_change(const struct hlb_pin_table *old, const struct hlb_pin *add,
                                      const struct hlb_pin *del, int *found)
{
    const struct hlb_pin *flow = add ? add : del;
    *found = old && flow && hlb_pin_find_key(old, flow->k0, flow->k1) != NULL;
    uint32_t n = (old ? old->n : 0) - (uint32_t)*found + (add ? 1u : 0u);
    struct hlb_pin_table *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->n = n;
    p->mask = pow2_at_least(2 * n) - 1;
    p->svc_mask = pow2_at_least(4 * n) - 1;     /* two keys per pin, at most half full */
    p->slot = calloc((size_t)p->mask + 1, sizeof(*p->slot));
    p->svc_keys = calloc((size_t)p->svc_mask + 1, sizeof(*p->svc_keys));
    if (!p->slot || !p->svc_keys) {
        hlb_pins_free(p);
        return NULL;
    }
    for (uint32_t i = 0; old && i <= old->mask; i++) {
        const struct hlb_pin *e = &old->slot[i];
        if (e->k1 == 0 || (flow && e->k0 == flow->k0 && e->k1 == flow->k1))
            continue;
        put_pin(p, e);
    }
    if (add)
        put_pin(p, add);
    for (uint32_t i = 0; i <= p->mask; i++)
        if (p->slot[i].k1 != 0) {
            put_svc_key(p, pin_svc_key(&p->slot[i], 0));
            put_svc_key(p, pin_svc_key(&p->slot[i], 1));
        }
    return p;
}

void hlb_pins_mark(struct hlb_vip_table *t, const struct hlb_pin_table *p)
{
    for (uint32_t i = 0; i < t->n_services; i++) {
        struct hlb_service *s = &t->services[i];
        uint8_t want = p && p->n && has_svc_key(p, hlb_service_key(s->vip, s->proto, s->port));
        if (__atomic_load_n(&s->has_pins, __ATOMIC_RELAXED) != want)
            __atomic_store_n(&s->has_pins, want, __ATOMIC_RELEASE);
    }
}

static void set_err(struct hlb_table_error *err, const char *field, const char *reason)
{
    snprintf(err->field, sizeof(err->field), "%s", field);
    snprintf(err->reason, sizeof(err->reason), "%s", reason);
}

static int get_port(json_t *o, const char *key, uint16_t *out, struct hlb_table_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!v) {
        set_err(err, key, "required");
        return -1;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65535) {
        set_err(err, key, "must be an integer from 1 to 65535");
        return -1;
    }
    *out = htons((uint16_t)json_integer_value(v));
    return 0;
}

int hlb_pin_from_json(json_t *o, int with_target, struct hlb_pin *out, struct hlb_table_error *err)
{
    static const char *const keys[] = {"client", "clientPort", "vip", "vipPort", "proto",
                                       "dip", "tunnel", NULL};
    static const char *const protos[] = {"tcp", "udp", NULL};
    if (!json_is_object(o)) {
        set_err(err, "(document)", "must be a JSON object");
        return -1;
    }
    struct hlb_5tuple t = {0};
    int proto = 0, has_tunnel = 0;
    uint32_t dip = 0, tunnel = 0;
    if (hlb_json_check_keys(o, keys, "", err) != 0 ||
        hlb_json_get_ip(o, "client", "", 1, &t.src_ip, NULL, err) != 0 ||
        get_port(o, "clientPort", &t.src_port, err) != 0 ||
        hlb_json_get_ip(o, "vip", "", 1, &t.dst_ip, NULL, err) != 0 ||
        get_port(o, "vipPort", &t.dst_port, err) != 0 ||
        hlb_json_get_enum(o, "proto", "", protos, 0, &proto, err) != 0)
        return -1;
    if (with_target && (hlb_json_get_ip(o, "dip", "", 1, &dip, NULL, err) != 0 ||
                        hlb_json_get_ip(o, "tunnel", "", 0, &tunnel, &has_tunnel, err) != 0))
        return -1;
    t.proto = proto == 0 ? HLB_IPPROTO_TCP : HLB_IPPROTO_UDP;
    memset(out, 0, sizeof(*out));
    hlb_conn_key(&t, &out->k0, &out->k1);
    out->to.ip = dip;
    out->to.outer = has_tunnel ? tunnel : dip;
    uint32_t h = ntohl(out->to.outer);
    out->to.outer_sum = (h >> 16) + (h & 0xffff);
    return 0;
}

json_t *hlb_pin_to_json(const struct hlb_pin *p)
{
    char client[16], vip[16], dip[16], tunnel[16];
    hlb_ip_str((uint32_t)p->k0, client);
    hlb_ip_str((uint32_t)(p->k0 >> 32), vip);
    hlb_ip_str(p->to.ip, dip);
    hlb_ip_str(p->to.outer, tunnel);
    return json_pack("{s:s,s:i,s:s,s:i,s:s,s:s,s:s}", "client", client, "clientPort",
                     ntohs((uint16_t)p->k1), "vip", vip, "vipPort", ntohs((uint16_t)(p->k1 >> 16)),
                     "proto", hlb_proto_name((uint8_t)(p->k1 >> 32)), "dip", dip, "tunnel", tunnel);
}
