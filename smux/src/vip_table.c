/* VIP table: JSON document -> validated, immutable lookup structure. */
#include "vip_table.h"
#include "balance.h"
#include "cheetah.h"
#include "hlb_ovs_dphash.h"
#include "ovs_select.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_err(struct hlb_table_error *err, const char *field, const char *fmt, ...)
{
    if (!err)
        return;
    snprintf(err->field, sizeof(err->field), "%s", field);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
    va_end(ap);
}

const char *hlb_proto_name(uint8_t proto)
{
    return proto == HLB_IPPROTO_TCP ? "tcp" : proto == HLB_IPPROTO_UDP ? "udp" : "other";
}

void hlb_ip_str(uint32_t ip_net, char out[16])
{
    struct in_addr a = {.s_addr = ip_net};
    inet_ntop(AF_INET, &a, out, 16);
}

/* Strict dotted-quad IPv4 (inet_pton rejects short forms like "10.1"). */
static int parse_ipv4(const char *s, uint32_t *out)
{
    struct in_addr a;
    if (inet_pton(AF_INET, s, &a) != 1)
        return -1;
    *out = a.s_addr;
    return 0;
}

static int check_keys(json_t *obj, const char *const *allowed, const char *path,
                      struct hlb_table_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(key, *a) == 0)
                ok = 1;
        if (!ok) {
            char f[200];
            snprintf(f, sizeof(f), "%s%s%s", path, *path ? "." : "", *key ? key : "\"\"");
            set_err(err, f, "unknown field");
            return -1;
        }
    }
    return 0;
}

/* Integer field in [lo, hi]; missing -> def (or an error when required). */
static int get_int(json_t *obj, const char *key, const char *path, int required,
                   long long lo, long long hi, long long def, long long *out,
                   struct hlb_table_error *err)
{
    char f[200];
    snprintf(f, sizeof(f), "%s%s%s", path, *path ? "." : "", key);
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required) {
            set_err(err, f, "required");
            return -1;
        }
        *out = def;
        return 0;
    }
    if (!json_is_integer(v)) {
        set_err(err, f, "must be an integer");
        return -1;
    }
    long long x = json_integer_value(v);
    if (x < lo || x > hi) {
        set_err(err, f, "must be between %lld and %lld (got %lld)", lo, hi, x);
        return -1;
    }
    *out = x;
    return 0;
}

/* Unsigned 64-bit number written as text: decimal digits, or "0x"/"0X" and hex
 * digits; nothing else (no sign, no spaces).  Returns 0, -1 for junk, -2 when
 * the value does not fit in 64 bits. */
static int parse_u64_text(const char *s, uint64_t *out)
{
    int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const char *p = hex ? s + 2 : s;
    uint64_t base = hex ? 16 : 10, x = 0;
    int overflow = 0;
    if (!*p)
        return -1;
    for (; *p; p++) {
        uint64_t d;
        if (*p >= '0' && *p <= '9')
            d = (uint64_t)(*p - '0');
        else if (hex && *p >= 'a' && *p <= 'f')
            d = (uint64_t)(*p - 'a' + 10);
        else if (hex && *p >= 'A' && *p <= 'F')
            d = (uint64_t)(*p - 'A' + 10);
        else
            return -1;
        if (x > (UINT64_MAX - d) / base)
            overflow = 1;               /* keep scanning: junk later is reported as junk */
        x = x * base + d;
    }
    *out = x;
    return overflow ? -2 : 0;
}

/* hashBasis, OVS's selection_method_param: an unsigned 64-bit value.  jansson's
 * JSON integers stop at INT64_MAX, so the whole range is also accepted as a
 * string (decimal or 0x-hex).  Missing -> 0. */
static int get_basis(json_t *obj, const char *path, uint64_t *out, struct hlb_table_error *err)
{
    char f[220];
    snprintf(f, sizeof(f), "%s%shashBasis", path, *path ? "." : "");
    json_t *v = json_object_get(obj, "hashBasis");
    *out = 0;
    if (!v)
        return 0;
    if (json_is_integer(v)) {
        long long x = json_integer_value(v);
        if (x < 0) {
            set_err(err, f, "must be between 0 and %llu (got %lld)",
                    (unsigned long long)UINT64_MAX, x);
            return -1;
        }
        *out = (uint64_t)x;
        return 0;
    }
    if (!json_is_string(v)) {
        set_err(err, f, "must be an integer, or a string of decimal or 0x-hex digits "
                "(the form for values above %lld)", (long long)INT64_MAX);
        return -1;
    }
    const char *s = json_string_value(v);   /* no embedded NUL: jansson refuses \u0000 */
    int rc = parse_u64_text(s, out);
    if (rc == -2)
        set_err(err, f, "must be between 0 and %llu (0xffffffffffffffff) (got \"%.40s\")",
                (unsigned long long)UINT64_MAX, s);
    else if (rc != 0)
        set_err(err, f, "must be an unsigned integer in decimal or 0x-hex digits only "
                "(got \"%.40s\")", s);
    return rc == 0 ? 0 : -1;
}

static int get_ip(json_t *obj, const char *key, const char *path, int required,
                  uint32_t *out, int *present, struct hlb_table_error *err)
{
    char f[200];
    snprintf(f, sizeof(f), "%s%s%s", path, *path ? "." : "", key);
    json_t *v = json_object_get(obj, key);
    if (present)
        *present = v != NULL;
    if (!v) {
        if (required) {
            set_err(err, f, "required");
            return -1;
        }
        return 0;
    }
    if (!json_is_string(v) || parse_ipv4(json_string_value(v), out) != 0) {
        set_err(err, f, "must be an IPv4 address in dotted-quad form");
        return -1;
    }
    uint32_t h = ntohl(*out);
    if (h == 0 || (h >> 28) >= 0xe || (h >> 24) == 127) {   /* multicast, 240/4, broadcast */
        set_err(err, f, "must be a unicast, non-loopback address");
        return -1;
    }
    return 0;
}

int hlb_json_get_ip(json_t *obj, const char *key, const char *path, int required,
                    uint32_t *out, int *present, struct hlb_table_error *err)
{
    return get_ip(obj, key, path, required, out, present, err);
}

int hlb_json_check_keys(json_t *obj, const char *const *allowed, const char *path,
                        struct hlb_table_error *err)
{
    return check_keys(obj, allowed, path, err);
}

int hlb_json_get_enum(json_t *obj, const char *key, const char *path, const char *const *names,
                      int def, int *out, struct hlb_table_error *err)
{
    char f[200];
    snprintf(f, sizeof(f), "%s%s%s", path, *path ? "." : "", key);
    json_t *v = json_object_get(obj, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (json_is_string(v))
        for (int i = 0; names[i]; i++)
            if (strcmp(json_string_value(v), names[i]) == 0) {
                *out = i;
                return 0;
            }
    char list[120] = "";
    for (int i = 0; names[i]; i++) {
        strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
        strncat(list, names[i], sizeof(list) - strlen(list) - 1);
    }
    set_err(err, f, "must be one of: %s", list);
    return -1;
}

static int parse_proto(json_t *port_obj, const char *path, uint8_t *out,
                       struct hlb_table_error *err)
{
    char f[200];
    snprintf(f, sizeof(f), "%s.proto", path);
    json_t *v = json_object_get(port_obj, "proto");
    if (!v) {
        set_err(err, f, "required");
        return -1;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (strcasecmp(s, "tcp") == 0) { *out = HLB_IPPROTO_TCP; return 0; }
        if (strcasecmp(s, "udp") == 0) { *out = HLB_IPPROTO_UDP; return 0; }
    } else if (json_is_integer(v)) {
        long long p = json_integer_value(v);
        if (p == HLB_IPPROTO_TCP || p == HLB_IPPROTO_UDP) { *out = (uint8_t)p; return 0; }
    }
    set_err(err, f, "must be \"tcp\" or \"udp\" (or 6 or 17)");
    return -1;
}

static int parse_prefix(const char *s, uint32_t *net, int *len)
{
    char buf[32];
    const char *slash = strchr(s, '/');
    if (!slash || (size_t)(slash - s) >= sizeof(buf))
        return -1;
    memcpy(buf, s, (size_t)(slash - s));
    buf[slash - s] = 0;
    char *end;
    if (!isdigit((unsigned char)slash[1]))
        return -1;                          /* strtol would take "+24" and " 24" */
    long l = strtol(slash + 1, &end, 10);
    if (*end || l > 32)
        return -1;
    if (parse_ipv4(buf, net) != 0)
        return -1;
    *len = (int)l;
    return 0;
}

/* The slot -> DIP arrays of the small crc32 pools: slots[slot_first + k] is the
 * pool member whose cumulative-weight interval holds k, as the weighted search
 * would find it. */
static int build_slots(struct hlb_vip_table *t)
{
    uint32_t total = 0;
    for (uint32_t i = 0; i < t->n_services; i++) {
        struct hlb_service *sv = &t->services[i];
        sv->slot_first = HLB_NO_SLOTS;
        if (sv->selection == HLB_SEL_OVS_DPHASH && sv->weight_total) {
            sv->slot_first = total;           /* always: it has no other way to pick */
            total += sv->dphash_mask + 1;
            continue;
        }
        if (sv->selection != HLB_SEL_CRC32 || sv->weight_total == 0 ||
            sv->weight_total > HLB_SLOTS_MAX_POOL || total + sv->weight_total > HLB_SLOTS_MAX)
            continue;
        sv->slot_first = total;
        total += sv->weight_total;
    }
    if (total == 0)
        return 0;
    t->slots = malloc(total * sizeof(*t->slots));
    uint32_t *map = malloc(total * sizeof(*map));
    if (!t->slots || !map) {
        free(map);
        return -1;
    }
    for (uint32_t i = 0; i < t->n_services; i++) {
        const struct hlb_service *sv = &t->services[i];
        if (sv->slot_first == HLB_NO_SLOTS)
            continue;
        if (sv->selection == HLB_SEL_OVS_DPHASH) {
            uint32_t *m = &map[sv->slot_first];
            hlb_ovs_dphash_fill(&t->weights[sv->dip_first], (int)sv->dip_count,
                                (int)sv->dphash_mask + 1, m);
            for (uint32_t k = 0; k <= sv->dphash_mask; k++)
                m[k] += sv->dip_first;
            continue;
        }
        uint32_t k = 0;
        for (uint32_t d = sv->dip_first; d < sv->dip_first + sv->dip_count; d++)
            for (; k < t->cum[d]; k++)
                map[sv->slot_first + k] = d;
    }
    for (uint32_t k = 0; k < total; k++)
        t->slots[k] = (struct hlb_slot){.dip = map[k], .outer = t->dips[map[k]].outer};
    free(map);
    return 0;
}

/* Counters per worker slice: a whole number of cache lines, so that two workers never
 * write the same line. */
static uint32_t counter_stride(uint32_t n)
{
    const uint32_t per_line = 64 / sizeof(struct hlb_counter);
    return (n + per_line - 1) / per_line * per_line;
}

static struct hlb_counter *counter_slices(uint32_t n_workers, uint32_t stride)
{
    size_t bytes = (size_t)n_workers * (stride ? stride : 1) * sizeof(struct hlb_counter);
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes) != 0)
        return NULL;
    return memset(p, 0, bytes);
}

struct hlb_counter hlb_counter_total(const struct hlb_vip_table *t, int dip, uint32_t i)
{
    struct hlb_counter sum = {0, 0};
    for (uint32_t w = 0; w < t->n_workers; w++) {
        const struct hlb_counter *c = dip ? &hlb_dip_counters(t, w)[i] : &hlb_svc_counters(t, w)[i];
        sum.packets += __atomic_load_n(&c->packets, __ATOMIC_RELAXED);
        sum.bytes += __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
    }
    return sum;
}

static void table_release_arrays(struct hlb_vip_table *t)
{
    free(t->services);
    free(t->dips);
    free(t->bucket_ids);
    free(t->dip_first_of);
    free(t->weights);
    free(t->cum);
    free(t->slots);
    free(t->index);
    free(t->svc_counters);
    free(t->dip_counters);
    free(t->ovs_a);
    free(t->ovs_w);
    free(t->ovs_dip);
    free(t->servers);
    free(t->server_ids);
    free(t->rr_next);
    free(t->sf_owners);
    free(t->dip_load);
    free(t->awrr_cum[0]);
    free(t->awrr_cum[1]);
    free(t->awrr_total);
    free(t->awrr_stride);
    free(t->awrr_sel);
}

void hlb_table_free(struct hlb_vip_table *t)
{
    if (!t)
        return;
    table_release_arrays(t);
    if (t->doc)
        json_decref((json_t *)t->doc);
    free(t);
}

static int build_index(struct hlb_vip_table *t, struct hlb_table_error *err)
{
    uint32_t size = 16;
    while (size < t->n_services * 2u)
        size <<= 1;
    t->index = calloc(size, sizeof(*t->index));
    if (!t->index) {
        set_err(err, "vips", "out of memory");
        return -1;
    }
    t->index_mask = size - 1;
    for (uint32_t s = 0; s < t->n_services; s++) {
        const struct hlb_service *sv = &t->services[s];
        uint64_t key = hlb_service_key(sv->vip, sv->proto, sv->port);
        uint32_t i = hlb_index_hash(key) & t->index_mask;
        while (t->index[i].key != 0) {
            if (t->index[i].key == key) {
                const struct hlb_service *o = &t->services[t->index[i].svc];
                char f[200];
                snprintf(f, sizeof(f), "vips[%u].ports", sv->vip_index);
                set_err(err, f, "duplicate %s port %u of VIP (also in vips[%u])",
                        hlb_proto_name(sv->proto), ntohs(sv->port), o->vip_index);
                return -1;
            }
            i = (i + 1) & t->index_mask;
        }
        t->index[i].key = key;
        t->index[i].svc = s;
    }
    return 0;
}

struct hlb_vip_table *hlb_table_empty(void)
{
    struct hlb_vip_table *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->index = calloc(16, sizeof(*t->index));
    t->index_mask = 15;
    t->n_workers = 1;
    t->doc = json_pack("{s:i,s:[]}", "version", 0, "vips");
    return t;
}

static const char *const top_keys[] = {"version", "vips", NULL};
static const char *const vip_keys[] = {"vip", "aggregate", "selection", "encap", "hashBasis",
                                       "connTable", "ports", "affinity", "cookieKey",
                                       "cookieHash", "mechanism", "statefulOwners", NULL};
static const char *const port_keys[] = {"proto", "port", "dips", NULL};
static const char *const dip_keys[] = {"ip", "weight", "hostIp", "bucketId", "serverId", NULL};
static const char *const sel_names[] = {"ovs", "crc32", "ovs-dphash", NULL};
static const char *const encap_names[] = {"ipip", "gre", NULL};

struct hlb_vip_table *hlb_table_from_json(const char *text, size_t len,
                                          const struct hlb_table_options *opt,
                                          struct hlb_table_error *err)
{
    json_error_t jerr;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc) {
        char f[64];
        snprintf(f, sizeof(f), "(document) line %d column %d", jerr.line, jerr.column);
        set_err(err, f, "invalid JSON: %s", jerr.text);
        return NULL;
    }
    struct hlb_vip_table *t = calloc(1, sizeof(*t));
    if (!t) {
        json_decref(doc);
        set_err(err, "(document)", "out of memory");
        return NULL;
    }
    t->doc = doc;
    long long ll;
    char path[200];
    struct hlb_ck_ids ck_ids = {.map_host = NULL};

    if (!json_is_object(doc)) {
        set_err(err, "(document)", "must be a JSON object");
        goto fail;
    }
    if (check_keys(doc, top_keys, "", err) != 0)
        goto fail;
    if (get_int(doc, "version", "", 1, 0, INT64_MAX, 0, &ll, err) != 0)
        goto fail;
    t->version = (uint64_t)ll;
    json_t *vips = json_object_get(doc, "vips");
    if (!vips || !json_is_array(vips)) {
        set_err(err, "vips", vips ? "must be an array" : "required");
        goto fail;
    }
    if (json_array_size(vips) > 65535) {
        set_err(err, "vips", "too many VIPs (limit 65535)");
        goto fail;
    }

    /* First pass: validate everything and count, so arrays are sized once. */
    size_t n_svc = 0, n_dip = 0, i, j, k;
    json_t *vo, *po, *dobj;
    json_array_foreach(vips, i, vo) {
        snprintf(path, sizeof(path), "vips[%zu]", i);
        if (!json_is_object(vo)) {
            set_err(err, path, "must be an object");
            goto fail;
        }
        if (check_keys(vo, vip_keys, path, err) != 0)
            goto fail;
        uint32_t vip;
        int sel, enc;
        uint64_t basis;
        if (get_ip(vo, "vip", path, 1, &vip, NULL, err) != 0)
            goto fail;
        json_t *agg = json_object_get(vo, "aggregate");
        if (agg) {
            uint32_t net;
            int plen;
            char f[220];
            snprintf(f, sizeof(f), "%s.aggregate", path);
            if (!json_is_string(agg) || parse_prefix(json_string_value(agg), &net, &plen) != 0) {
                set_err(err, f, "must be an IPv4 prefix like 10.1.0.0/16");
                goto fail;
            }
            uint32_t mask = plen ? htonl(0xffffffffu << (32 - plen)) : 0;
            if ((vip & mask) != (net & mask)) {
                set_err(err, f, "does not contain the VIP %s", json_string_value(
                            json_object_get(vo, "vip")));
                goto fail;
            }
        }
        if (hlb_json_get_enum(vo, "selection", path, sel_names, HLB_SEL_OVS, &sel, err) != 0 ||
            hlb_json_get_enum(vo, "encap", path, encap_names, HLB_ENCAP_IPIP, &enc, err) != 0 ||
            get_basis(vo, path, &basis, err) != 0)
            goto fail;
        struct hlb_service ck = {0};
        if (hlb_ck_parse_vip(vo, path, &ck, err) != 0)
            goto fail;
        json_t *ctab = json_object_get(vo, "connTable");
        if (ctab && !json_is_boolean(ctab)) {
            char f[220];
            snprintf(f, sizeof(f), "%s.connTable", path);
            set_err(err, f, "must be true or false");
            goto fail;
        }
        json_t *ports = json_object_get(vo, "ports");
        if (!ports || !json_is_array(ports) || json_array_size(ports) == 0) {
            char f[220];
            snprintf(f, sizeof(f), "%s.ports", path);
            set_err(err, f, ports ? "must be a non-empty array" : "required");
            goto fail;
        }
        json_array_foreach(ports, j, po) {
            char ppath[200];
            snprintf(ppath, sizeof(ppath), "%s.ports[%zu]", path, j);
            if (!json_is_object(po)) {
                set_err(err, ppath, "must be an object");
                goto fail;
            }
            uint8_t proto;
            if (check_keys(po, port_keys, ppath, err) != 0 ||
                parse_proto(po, ppath, &proto, err) != 0 ||
                get_int(po, "port", ppath, 1, 0, 65535, 0, &ll, err) != 0)
                goto fail;
            json_t *dips = json_object_get(po, "dips");
            if (!dips || !json_is_array(dips)) {
                char f[220];
                snprintf(f, sizeof(f), "%s.dips", ppath);
                set_err(err, f, dips ? "must be an array" : "required");
                goto fail;
            }
            if (json_array_size(dips) > HLB_MAX_DIPS_PER_POOL) {
                char f[220];
                snprintf(f, sizeof(f), "%s.dips", ppath);
                set_err(err, f, "too many DIPs (limit %u)", HLB_MAX_DIPS_PER_POOL);
                goto fail;
            }
            json_array_foreach(dips, k, dobj) {
                char dpath[200];
                snprintf(dpath, sizeof(dpath), "%s.dips[%zu]", ppath, k);
                if (!json_is_object(dobj)) {
                    set_err(err, dpath, "must be an object");
                    goto fail;
                }
                uint32_t ip, host;
                if (check_keys(dobj, dip_keys, dpath, err) != 0 ||
                    get_ip(dobj, "ip", dpath, 1, &ip, NULL, err) != 0 ||
                    get_ip(dobj, "hostIp", dpath, 0, &host, NULL, err) != 0 ||
                    get_int(dobj, "weight", dpath, 0, 0, HLB_MAX_WEIGHT, 1, &ll, err) != 0 ||
                    get_int(dobj, "bucketId", dpath, 0, 0, 0xfffffeffLL, (long long)k, &ll,
                            err) != 0 ||
                    get_int(dobj, "serverId", dpath, hlb_aff_cookie(ck.affinity), 1,
                            HLB_COOKIE_SERVER_ID_MAX, 0, &ll, err) != 0)
                    goto fail;
                if (ip == vip) {
                    char f[220];
                    snprintf(f, sizeof(f), "%s.ip", dpath);
                    set_err(err, f, "is the VIP itself (its packets would come back here)");
                    goto fail;
                }
            }
            n_svc++;
            n_dip += json_array_size(dips);
        }
    }
    if (n_svc > HLB_MAX_SERVICES || n_dip > HLB_MAX_DIPS) {
        set_err(err, "vips", "table too large (limits: %u ports, %u DIPs)", HLB_MAX_SERVICES,
                HLB_MAX_DIPS);
        goto fail;
    }

    t->services = calloc(n_svc ? n_svc : 1, sizeof(*t->services));
    t->n_workers = opt && opt->n_workers ? opt->n_workers : 1;
    t->svc_stride = counter_stride(n_svc);
    t->dip_stride = counter_stride(n_dip);
    t->svc_counters = counter_slices(t->n_workers, t->svc_stride);
    t->dips = calloc(n_dip ? n_dip : 1, sizeof(*t->dips));
    t->bucket_ids = calloc(n_dip ? n_dip : 1, sizeof(*t->bucket_ids));
    t->dip_first_of = calloc(n_dip ? n_dip : 1, sizeof(*t->dip_first_of));
    t->weights = calloc(n_dip ? n_dip : 1, sizeof(*t->weights));
    /* 8 entries of slack: the weighted choice reads a pool's cum[] 8 at a time. */
    t->cum = calloc(n_dip + 8, sizeof(*t->cum));
    t->dip_counters = counter_slices(t->n_workers, t->dip_stride);
    t->server_ids = calloc(n_dip ? n_dip : 1, sizeof(*t->server_ids));
    if (!t->server_ids || hlb_ck_ids_init(&ck_ids, n_dip) != 0) {
        set_err(err, "vips", "out of memory");
        goto fail;
    }
    if (!t->services || !t->svc_counters || !t->dips || !t->bucket_ids || !t->dip_first_of || !t->weights ||
        !t->cum || !t->dip_counters) {
        set_err(err, "vips", "out of memory");
        goto fail;
    }

    /* Second pass: fill (everything is known valid, except cross-entry duplicates). */
    json_array_foreach(vips, i, vo) {
        uint32_t vip;
        int sel, enc;
        uint64_t basis;
        get_ip(vo, "vip", "", 1, &vip, NULL, NULL);
        hlb_json_get_enum(vo, "selection", "", sel_names, HLB_SEL_OVS, &sel, NULL);
        hlb_json_get_enum(vo, "encap", "", encap_names, HLB_ENCAP_IPIP, &enc, NULL);
        get_basis(vo, "", &basis, NULL);
        json_t *ctab = json_object_get(vo, "connTable");
        int pin = ctab ? json_is_true(ctab) : (opt ? opt->default_pin : 1);
        struct hlb_service ck = {0};
        hlb_ck_parse_vip(vo, "", &ck, NULL);
        json_array_foreach(json_object_get(vo, "ports"), j, po) {
            struct hlb_service *sv = &t->services[t->n_services];
            *sv = ck;                    /* its cheetah fields; the rest is set below */
            long long port;
            parse_proto(po, "", &sv->proto, NULL);
            get_int(po, "port", "", 1, 0, 65535, 0, &port, NULL);
            sv->vip = vip;
            sv->port = htons((uint16_t)port);
            sv->selection = (uint8_t)sel;
            sv->encap = (uint8_t)enc;
            sv->pin = (uint8_t)pin;
            sv->basis = basis;
            sv->vip_index = (uint16_t)i;
            sv->dip_first = t->n_dips;
            uint32_t cum = 0;
            json_array_foreach(json_object_get(po, "dips"), k, dobj) {
                uint32_t d = t->n_dips;
                long long w = 1, bid = 0, sid = 0;
                int has_host;
                get_ip(dobj, "ip", "", 1, &t->dips[d].ip, NULL, NULL);
                t->dips[d].outer = t->dips[d].ip;
                get_ip(dobj, "hostIp", "", 0, &t->dips[d].outer, &has_host, NULL);
                uint32_t o = ntohl(t->dips[d].outer);
                t->dips[d].outer_sum = (o >> 16) + (o & 0xffff);
                get_int(dobj, "weight", "", 0, 0, HLB_MAX_WEIGHT, 1, &w, NULL);
                get_int(dobj, "bucketId", "", 0, 0, 0xfffffeffLL, (long long)k, &bid, NULL);
                get_int(dobj, "serverId", "", 0, 1, HLB_COOKIE_SERVER_ID_MAX, 0, &sid, NULL);
                t->server_ids[d] = (uint16_t)sid;
                if (sid) {
                    char f[200];
                    snprintf(f, sizeof(f), "vips[%zu].ports[%zu].dips[%zu].serverId", i, j, k);
                    if (hlb_ck_ids_add(&ck_ids, (uint16_t)sid, t->dips[d].outer, f, err) != 0)
                        goto fail;
                }
                t->dip_first_of[d] = d;
                for (uint32_t o = sv->dip_first; o < d; o++) {
                    char f[200];
                    /* A repeated DIP is one more WCMP unit of it: same tunnel destination. */
                    if (t->dips[o].ip == t->dips[d].ip && t->dip_first_of[d] == d) {
                        if (t->dips[o].outer != t->dips[d].outer) {
                            snprintf(f, sizeof(f), "vips[%zu].ports[%zu].dips[%zu].hostIp", i, j, k);
                            set_err(err, f, "the DIP is also dips[%u] of this pool, with another "
                                    "tunnel destination", o - sv->dip_first);
                            goto fail;
                        }
                        t->dip_first_of[d] = o;
                    }
                    if (sid && t->server_ids[o] == sid && t->dips[o].ip != t->dips[d].ip) {
                        /* Two DIPs of one host in one pool: a cookie names the host. */
                        snprintf(f, sizeof(f), "vips[%zu].ports[%zu].dips[%zu].serverId", i, j, k);
                        set_err(err, f, "serverId %lld also names dips[%u] of this pool, "
                                "another DIP: a cookie could not tell them apart", sid,
                                o - sv->dip_first);
                        goto fail;
                    }
                    if (t->bucket_ids[o] == (uint32_t)bid) {
                        snprintf(f, sizeof(f), "vips[%zu].ports[%zu].dips[%zu].bucketId", i,
                                 j, k);
                        set_err(err, f, "duplicate bucketId in this pool");
                        goto fail;
                    }
                }
                t->weights[d] = (uint16_t)w;
                t->bucket_ids[d] = (uint32_t)bid;
                cum += (uint32_t)w;
                t->cum[d] = cum;
                t->n_dips++;
            }
            sv->dip_count = t->n_dips - sv->dip_first;
            if (cum)
                sv->weight_mod_m = hlb_fastmod_m(cum);
            sv->weight_total = cum;
            sv->wrr_stride = hlb_wrr_stride(cum);
            if (sel == HLB_SEL_OVS_DPHASH) {
                int slots = hlb_ovs_dphash_slots(&t->weights[sv->dip_first], (int)sv->dip_count);
                if (slots < 0) {
                    char f[200];
                    uint32_t min_w = UINT32_MAX;
                    for (uint32_t d = sv->dip_first; d < t->n_dips; d++)
                        if (t->weights[d] && t->weights[d] < min_w)
                            min_w = t->weights[d];
                    snprintf(f, sizeof(f), "vips[%zu].ports[%zu].dips", i, j);
                    set_err(err, f, "selection ovs-dphash needs ceil(total weight / smallest "
                            "weight) <= %d, got ceil(%u / %u): above that OVS falls back to "
                            "a MAC-dependent hash no SMux can replicate",
                            HLB_OVS_DPHASH_MAX_SLOTS, cum, min_w);
                    goto fail;
                }
                sv->dphash_mask = slots > 0 ? (uint32_t)slots - 1 : 0;
            }
            /* The crc32 register after the fields a packet of this service cannot
             * change (see hlb_pkt.h). */
            sv->crc_fixed = hlb_crc32_vip(sv->vip, sv->proto);
            if (sv->port)
                sv->crc_fixed = hlb_crc32c_u16(sv->crc_fixed, sv->port);
            t->n_services++;
        }
    }
    hlb_ck_ids_free(&ck_ids);
    if (build_slots(t) != 0 || hlb_ovs_select_build(t) != 0 || hlb_ck_build(t, opt ? opt->self_ip : 0) != 0) {
        set_err(err, "vips", "out of memory");
        goto fail;
    }
    if (hlb_ck_check_owners(t, err) != 0 || build_index(t, err) != 0)
        goto fail;
    hlb_ck_redact(doc);
    return t;

fail:
    hlb_ck_ids_free(&ck_ids);
    hlb_table_free(t);
    return NULL;
}

char *hlb_table_to_json(const struct hlb_vip_table *t)
{
    return json_dumps((json_t *)t->doc, JSON_COMPACT);
}
