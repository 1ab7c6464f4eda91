/* The cheetah parts of the VIP table (cheetah.h): fields, server ids, server maps. */
#include "cheetah.h"
#include "balance.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void ck_err(struct hlb_table_error *err, const char *path, const char *key,
                   const char *reason)
{
    if (!err)
        return;
    snprintf(err->field, sizeof(err->field), "%s.%s", path, key);
    snprintf(err->reason, sizeof(err->reason), "%s", reason);
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
           c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static const char *const affinity_names[] = {"hash", "cheetah", "cheetah-stateful", NULL};
static const char *const mode_names[] = {"siphash13", "crc32c", NULL};
const char *const hlb_mechanism_names[HLB_MECH_MAX + 1] = {"wrr", "rr", "hash", "p2c",
                                                           "least-loaded", "awrr", NULL};

/* statefulOwners of VIP object vo: 1..16 IPv4 addresses (owner id = position; an SMux
 * holding several ids is at several positions) into owners[] (network order) when not
 * NULL; the count, or -1 with err. */
static int parse_owners(json_t *vo, const char *path, uint32_t *owners,
                        struct hlb_table_error *err)
{
    json_t *a = json_object_get(vo, "statefulOwners");
    if (!a) {
        ck_err(err, path, "statefulOwners", "required for affinity \"cheetah-stateful\" "
               "(the stateful SMuxes' addresses; owner id = position)");
        return -1;
    }
    if (!json_is_array(a) || json_array_size(a) == 0 ||
        json_array_size(a) > HLB_SF_MAX_OWNERS) {
        ck_err(err, path, "statefulOwners", "must be an array of 1 to 16 IPv4 addresses");
        return -1;
    }
    size_t i;
    json_t *o;
    json_array_foreach(a, i, o) {
        struct in_addr ad;
        char k[40];
        snprintf(k, sizeof(k), "statefulOwners[%zu]", i);
        if (!json_is_string(o) || inet_pton(AF_INET, json_string_value(o), &ad) != 1 ||
            ad.s_addr == 0) {
            ck_err(err, path, k, "must be an IPv4 address");
            return -1;
        }
        if (owners)
            owners[i] = ad.s_addr;
    }
    return (int)json_array_size(a);
}


int hlb_ck_parse_vip(json_t *vo, const char *path, struct hlb_service *s,
                     struct hlb_table_error *err)
{
    int aff, mode, mech;
    if (hlb_json_get_enum(vo, "affinity", path, affinity_names, HLB_AFF_HASH, &aff, err) != 0 ||
        hlb_json_get_enum(vo, "cookieHash", path, mode_names, 0, &mode, err) != 0 ||
        hlb_json_get_enum(vo, "mechanism", path, hlb_mechanism_names, HLB_MECH_WRR, &mech, err) != 0)
        return -1;
    json_t *key = json_object_get(vo, "cookieKey");
    if (aff == HLB_AFF_HASH) {
        /* The cookie fields mean nothing to a hash VIP: refused rather than ignored,
         * so that a typo in affinity does not silently turn cookies off. */
        const char *const only[] = {"cookieKey", "cookieHash", "mechanism", "statefulOwners",
                                    NULL};
        for (int i = 0; only[i]; i++)
            if (json_object_get(vo, only[i])) {
                ck_err(err, path, only[i], "only for affinity \"cheetah\" or "
                       "\"cheetah-stateful\"");
                return -1;
            }
    } else if (!key) {
        ck_err(err, path, "cookieKey", "required for a cheetah affinity");
        return -1;
    }
    int n_owners = 0;
    if (aff == HLB_AFF_CHEETAH_STATEFUL) {
        if ((n_owners = parse_owners(vo, path, NULL, err)) < 0)
            return -1;
    } else if (aff == HLB_AFF_CHEETAH && json_object_get(vo, "statefulOwners")) {
        ck_err(err, path, "statefulOwners", "only for affinity \"cheetah-stateful\"");
        return -1;
    }
    uint8_t k[HLB_COOKIE_KEY_BYTES] = {0};
    if (key) {
        const char *h = json_is_string(key) ? json_string_value(key) : "";
        int ok = strlen(h) == 2 * HLB_COOKIE_KEY_BYTES;
        for (int i = 0; ok && i < HLB_COOKIE_KEY_BYTES; i++) {
            int a = hex_digit(h[2 * i]), b = hex_digit(h[2 * i + 1]);
            ok = a >= 0 && b >= 0;
            k[i] = (uint8_t)(a << 4 | b);
        }
        if (!ok) {
            ck_err(err, path, "cookieKey", "must be a string of 32 hex digits (the 128-bit key)");
            return -1;
        }
    }
    if (s) {
        s->affinity = (uint8_t)aff;
        s->mechanism = (uint8_t)mech;
        s->sf_n_owners = (uint8_t)n_owners;
        s->sf_self = HLB_SF_NOT_OWNER;
        s->sf_held = 0;
        s->ck_mode = mode == 1 ? HLB_COOKIE_CRC32C : HLB_COOKIE_SIPHASH13;
        s->ck_k0 = s->ck_k1 = 0;
        for (int i = 7; i >= 0; i--) {
            s->ck_k0 = s->ck_k0 << 8 | k[i];
            s->ck_k1 = s->ck_k1 << 8 | k[8 + i];
        }
        uint32_t crc = (uint32_t)_mm_crc32_u64(0xffffffffu, s->ck_k0);
        s->ck_crc_key = (uint32_t)_mm_crc32_u64(crc, s->ck_k1);
    }
    return 0;
}

int hlb_ck_check_owners(const struct hlb_vip_table *t, struct hlb_table_error *err)
{
    const struct hlb_service *first = NULL;
    for (uint32_t i = 0; i < t->n_services; i++) {
        const struct hlb_service *sv = &t->services[i];
        if (sv->affinity != HLB_AFF_CHEETAH_STATEFUL)
            continue;
        if (!first) {
            first = sv;
            continue;
        }
        int same = sv->sf_n_owners == first->sf_n_owners;
        for (uint32_t k = 0; same && k < sv->sf_n_owners; k++)
            same = t->sf_owners[sv->sf_owner_first + k].ip ==
                   t->sf_owners[first->sf_owner_first + k].ip;
        if (same)
            continue;
        char a[16], b[16];
        hlb_ip_str(sv->vip, a);
        hlb_ip_str(first->vip, b);
        snprintf(err->field, sizeof(err->field), "vips[%u].statefulOwners", sv->vip_index);
        snprintf(err->reason, sizeof(err->reason), "VIP %s: must be the list of vips[%u] "
                 "(VIP %s): owner ids are SMux-wide, one statefulOwners list for every "
                 "cheetah-stateful VIP", a, first->vip_index, b);
        return -1;
    }
    return 0;
}

int hlb_ck_ids_init(struct hlb_ck_ids *ids, size_t n_dips)
{
    memset(ids->host_of, 0, sizeof(ids->host_of));
    uint32_t size = 16;
    while (size < 2 * n_dips)
        size <<= 1;
    ids->mask = size - 1;
    ids->map_host = calloc(size, sizeof(*ids->map_host));
    ids->map_id = calloc(size, sizeof(*ids->map_id));
    return ids->map_host && ids->map_id ? 0 : -1;
}

void hlb_ck_ids_free(struct hlb_ck_ids *ids)
{
    free(ids->map_host);
    free(ids->map_id);
    ids->map_host = NULL;
    ids->map_id = NULL;
}

int hlb_ck_ids_add(struct hlb_ck_ids *ids, uint16_t id, uint32_t host, const char *field,
                   struct hlb_table_error *err)
{
    char a[16], b[16];
    if (ids->host_of[id] && ids->host_of[id] != host) {
        hlb_ip_str(ids->host_of[id], a);
        hlb_ip_str(host, b);
        snprintf(err->field, sizeof(err->field), "%s", field);
        snprintf(err->reason, sizeof(err->reason), "serverId %u already names host %s, not %s "
                 "(one server id per DIP host, table-wide)", id, a, b);
        return -1;
    }
    ids->host_of[id] = host;
    for (uint32_t i = (uint32_t)hlb_index_hash(host);; i++) {
        i &= ids->mask;
        if (ids->map_id[i] == 0) {
            ids->map_host[i] = host;
            ids->map_id[i] = id;
            return 0;
        }
        if (ids->map_host[i] == host) {
            if (ids->map_id[i] == id)
                return 0;
            hlb_ip_str(host, a);
            snprintf(err->field, sizeof(err->field), "%s", field);
            snprintf(err->reason, sizeof(err->reason), "host %s already has serverId %u, not %u "
                     "(one server id per DIP host, table-wide)", a, ids->map_id[i], id);
            return -1;
        }
    }
}

int hlb_ck_build(struct hlb_vip_table *t, uint32_t self_ip)
{
    uint32_t total = 0, n_ck = 0, n_owners = 0;
    if (hlb_balance_build(t) != 0)
        return -1;
    for (uint32_t i = 0; i < t->n_services; i++)
        n_owners += t->services[i].sf_n_owners;
    if (n_owners) {
        t->sf_owners = calloc(n_owners, sizeof(*t->sf_owners));
        if (!t->sf_owners)
            return -1;
        json_t *vips = json_object_get((json_t *)t->doc, "vips");
        uint32_t next = 0;
        for (uint32_t i = 0; i < t->n_services; i++) {
            struct hlb_service *sv = &t->services[i];
            if (!sv->sf_n_owners)
                continue;
            uint32_t ips[HLB_SF_MAX_OWNERS];
            parse_owners(json_array_get(vips, sv->vip_index), "", ips, NULL);
            sv->sf_owner_first = next;
            for (uint32_t k = 0; k < sv->sf_n_owners; k++) {
                uint32_t h = ntohl(ips[k]);
                t->sf_owners[next + k] = (struct hlb_dip){.ip = ips[k], .outer = ips[k],
                                                          .outer_sum = (h >> 16) + (h & 0xffff)};
                if (ips[k] == self_ip && self_ip) {
                    /* SYNs take their index under the lowest id held (the first) */
                    if (sv->sf_self == HLB_SF_NOT_OWNER)
                        sv->sf_self = (uint8_t)k;
                    sv->sf_held |= (uint16_t)(1u << k);
                }
            }
            next += sv->sf_n_owners;
        }
    }
    for (uint32_t i = 0; i < t->n_services; i++) {
        struct hlb_service *sv = &t->services[i];
        if (!hlb_aff_cookie(sv->affinity))
            continue;
        uint32_t size = 2;
        while (size < 2 * sv->dip_count)
            size <<= 1;
        sv->srv_first = total;
        sv->srv_mask = size - 1;
        total += size;
        n_ck++;
    }
    t->rr_stride = (t->n_services + 15) / 16 * 16;     /* 64-byte slices */
    if (n_ck) {
        size_t bytes = (size_t)t->n_workers * t->rr_stride * sizeof(uint32_t);
        void *p = NULL;
        if (posix_memalign(&p, 64, bytes) != 0)
            return -1;
        t->rr_next = memset(p, 0, bytes);
        t->servers = malloc(total * sizeof(*t->servers));
        if (!t->servers)
            return -1;
        for (uint32_t k = 0; k < total; k++)
            t->servers[k] = (struct hlb_server_slot){.id = HLB_SRV_EMPTY};
    }
    for (uint32_t i = 0; i < t->n_services; i++) {
        const struct hlb_service *sv = &t->services[i];
        if (!hlb_aff_cookie(sv->affinity))
            continue;
        struct hlb_server_slot *m = &t->servers[sv->srv_first];
        for (uint32_t d = sv->dip_first; d < sv->dip_first + sv->dip_count; d++) {
            uint16_t id = t->server_ids[d];
            uint32_t k = id;
            while (m[k & sv->srv_mask].id != HLB_SRV_EMPTY && m[k & sv->srv_mask].id != id)
                k++;
            if (m[k & sv->srv_mask].id == HLB_SRV_EMPTY)   /* a DIP's further units: its first */
                m[k & sv->srv_mask] = (struct hlb_server_slot){.id = id,
                                                               .dip = t->dip_first_of[d]};
        }
    }
    return 0;
}

void hlb_ck_redact(json_t *doc)
{
    size_t i;
    json_t *vo;
    json_array_foreach(json_object_get(doc, "vips"), i, vo) {
        json_t *key = json_object_get(vo, "cookieKey");
        if (!key)
            continue;
        struct hlb_service s;
        hlb_ck_parse_vip(vo, "", &s, NULL);
        char fp[17];
        snprintf(fp, sizeof(fp), "%016llx", (unsigned long long)hlb_siphash13_words(
                     s.ck_k0, s.ck_k1, 0, (uint64_t)13 << 56));
        fp[8] = 0;
        json_object_del(vo, "cookieKey");
        json_object_set_new(vo, "cookieKeyFingerprint", json_string(fp));
    }
}

/* hlb_ck_hash_burst: SipHash-1-3 (hlb_cookie.h's hlb_siphash13_words) of n tuples
 * at once, a tuple a vector lane, where the target has 64-bit lanes of 256 bits or
 * more with a rotate (AVX2: shifts and or, AVX-512: one vprolq); a tuple's whole
 * chain is then about as many vector operations as the scalar form has scalar ones,
 * for 4 or 8 tuples.  Built with the core library's -march (io_loop.c's corei7
 * build calls it here). */
#if defined(__AVX512F__)
#define HLB_CK_LANES 8
#elif defined(__AVX2__)
#define HLB_CK_LANES 4
#else
#define HLB_CK_LANES 1                  /* 128-bit lanes: the scalar form is faster */
#endif

#if HLB_CK_LANES > 1
typedef uint64_t ck_vec __attribute__((vector_size(8 * HLB_CK_LANES)));

#define CK_VROTL(x, k) (((x) << (k)) | ((x) >> (64 - (k))))
#define CK_VROUND(v0, v1, v2, v3) do { \
        v0 += v1; v1 = CK_VROTL(v1, 13); v1 ^= v0; v0 = CK_VROTL(v0, 32); \
        v2 += v3; v3 = CK_VROTL(v3, 16); v3 ^= v2; \
        v0 += v3; v3 = CK_VROTL(v3, 21); v3 ^= v0; \
        v2 += v1; v1 = CK_VROTL(v1, 17); v1 ^= v2; v2 = CK_VROTL(v2, 32); \
    } while (0)
#endif

void hlb_ck_hash_burst(const struct hlb_service *s, const uint32_t *src_ip,
                       const uint16_t *src_port, const uint16_t *dst_port, unsigned n,
                       uint64_t *h)
{
    unsigned p = 0;
#if HLB_CK_LANES > 1
    if (s->ck_mode == HLB_COOKIE_SIPHASH13) {
        const uint64_t k0 = s->ck_k0, k1 = s->ck_k1;
        /* hlb_cookie_words() over values in network order, read little-endian: the
         * VIP's four bytes, 6, the VIP port's two and the client's first in m0; the
         * client's other three, its port's two and the length 13 in m1. */
        const uint64_t m0_vip = (uint64_t)s->vip | (uint64_t)6 << 32;
        for (; p + HLB_CK_LANES <= n; p += HLB_CK_LANES) {
            ck_vec m0, m1;
            for (unsigned k = 0; k < HLB_CK_LANES; k++) {
                uint64_t c = src_ip[p + k];
                m0[k] = m0_vip | (uint64_t)dst_port[p + k] << 40 | (c & 0xff) << 56;
                m1[k] = c >> 8 | (uint64_t)src_port[p + k] << 24 | (uint64_t)13 << 56;
            }
            ck_vec v0 = (ck_vec){0} + (k0 ^ HLB_SIPHASH_IV0);
            ck_vec v1 = (ck_vec){0} + (k1 ^ HLB_SIPHASH_IV1);
            ck_vec v2 = (ck_vec){0} + (k0 ^ HLB_SIPHASH_IV2);
            ck_vec v3 = ((ck_vec){0} + (k1 ^ HLB_SIPHASH_IV3)) ^ m0;
            CK_VROUND(v0, v1, v2, v3);
            v0 ^= m0;
            v3 ^= m1;
            CK_VROUND(v0, v1, v2, v3);
            v0 ^= m1;
            v2 ^= 0xff;
            CK_VROUND(v0, v1, v2, v3);
            CK_VROUND(v0, v1, v2, v3);
            CK_VROUND(v0, v1, v2, v3);
            ck_vec r = v0 ^ v1 ^ v2 ^ v3;
            memcpy(&h[p], &r, sizeof(r));
        }
    }
#endif
    for (; p < n; p++)
        h[p] = hlb_ck_hash(s, src_ip[p], src_port[p], dst_port[p]);
}
