/* The VIP table: (VIP, protocol, port) -> weighted DIP pool, with per-service
 * selection (ovs | crc32), encapsulation (ipip | gre) and connection pinning.
 *
 * A table is immutable once built (only its counters change), built from the
 * versioned JSON document of the control API and replaced as a whole: the worker
 * reads one table pointer per burst (see table_swap.h), so no packet ever sees a
 * half-built table.  EAL-free.
 */
#ifndef HLB_VIP_TABLE_H
#define HLB_VIP_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include "hlb_pkt.h"

/* HLB_SEL_OVS_DPHASH: OVS without selection_method (OpenFlow 1.3 groups, ONOS),
 * hlb_ovs_dphash.h; its slot map lives in slots like crc32's. */
enum hlb_selection { HLB_SEL_OVS = 0, HLB_SEL_CRC32 = 1, HLB_SEL_OVS_DPHASH = 2 };
enum hlb_encap { HLB_ENCAP_IPIP = 0, HLB_ENCAP_GRE = 1 };
/* How a TCP connection keeps its DIP: hash (+ connection table), Cheetah's
 * stateless cookie (p4/COOKIE-SPEC.md; cheetah.h), or its stateful cookie (an index
 * into the owning SMux's ConnTable; stateful.h). */
enum hlb_affinity { HLB_AFF_HASH = 0, HLB_AFF_CHEETAH = 1, HLB_AFF_CHEETAH_STATEFUL = 2 };
static inline int hlb_aff_cookie(uint8_t affinity)   /* cheetah or cheetah-stateful */
{
    return affinity != HLB_AFF_HASH;
}
/* A cheetah service's choice for a SYN that carries a timestamp option.  The last
 * three read the DIPs' reported loads (balance.h). */
enum hlb_mechanism { HLB_MECH_WRR = 0, HLB_MECH_RR = 1, HLB_MECH_HASH = 2, HLB_MECH_P2C = 3,
                     HLB_MECH_LEAST_LOADED = 4, HLB_MECH_AWRR = 5, HLB_MECH_MAX };
/* A cheetah-stateful VIP has at most this many owner SMuxes (the 4 owner bits of
 * the stateful ident, p4/COOKIE-SPEC.md §4). */
#define HLB_SF_MAX_OWNERS 16u
#define HLB_SF_NOT_OWNER 0xffu

/* Limits, each rejected with a clear error when exceeded. */
#define HLB_MAX_SERVICES      65536u
#define HLB_MAX_DIPS_PER_POOL 4096u
#define HLB_MAX_DIPS          (1u << 20)
#define HLB_MAX_WEIGHT        65535u

struct hlb_service {            /* one (vip, proto, port) */
    uint32_t vip;               /* network order */
    uint16_t port;              /* network order; 0 = every port of proto */
    uint8_t  proto;
    uint8_t  selection;         /* enum hlb_selection */
    uint8_t  encap;             /* enum hlb_encap */
    uint8_t  pin;               /* use the connection table */
    uint16_t vip_index;         /* position in the document's vips[] */
    uint32_t dip_first;         /* slice of the dip arrays */
    uint32_t dip_count;
    uint32_t dphash_mask;       /* ovs-dphash: slots - 1 (fills what was padding) */
    uint64_t basis;             /* OVS selection_method_param */
    uint64_t weight_mod_m;      /* hlb_fastmod_m(total weight), for crc32 */
    uint32_t weight_total;      /* sum of the pool's weights */
    uint32_t crc_fixed;         /* crc32: register after vip, proto (and port when not 0) */
    uint32_t slot_first;        /* crc32: its slots in t->slots, or HLB_NO_SLOTS */
    /* ovs, precomputed (ovs_select.h): the flow hash's constant parts, and the live
     * buckets in t->ovs_a/ovs_w/ovs_dip from ovs_first on */
    uint32_t ovs_h0;            /* hash of the basis */
    uint32_t ovs_dst, ovs_proto, ovs_dport;   /* mixed words of the fixed fields */
    uint32_t ovs_first, ovs_live;
    /* cheetah (cheetah.h): the cookie key and hash mode, the SYN mechanism, and the
     * service's server map t->servers[srv_first .. srv_first + srv_mask] */
    uint8_t affinity;           /* enum hlb_affinity */
    uint8_t mechanism;          /* enum hlb_mechanism */
    uint8_t ck_mode;            /* HLB_COOKIE_SIPHASH13 | HLB_COOKIE_CRC32C */
    uint8_t has_pins;           /* flows of it are pinned (pins.h): written by the
                                   control thread while the workers read it */
    uint32_t srv_first, srv_mask;
    /* cheetah-stateful: the VIP's owner SMuxes t->sf_owners[sf_owner_first ..
     * + sf_n_owners - 1] (owner id = position), the owner ids this SMux holds (its
     * address's positions: bit k for id k), and the lowest of them, the one its SYNs
     * take their index under, or HLB_SF_NOT_OWNER */
    uint8_t sf_n_owners, sf_self;
    uint16_t sf_held;
    uint32_t sf_owner_first;
    uint32_t ck_crc_key;        /* crc32c mode: the CRC register after the 16 key bytes */
    uint32_t wrr_stride;        /* wrr: the step of its SYNs over the weights (balance.h) */
    uint64_t ck_k0, ck_k1;      /* key bytes 0-7 and 8-15, little-endian */
};

/* A slot of a cheetah service's server map: server id -> its DIP entry in the pool
 * (open addressing; HLB_SRV_EMPTY is no 15-bit ident, so an empty slot never
 * matches a cookie). */
#define HLB_SRV_EMPTY 0xffffu
struct hlb_server_slot {
    uint16_t id;
    uint16_t pad;
    uint32_t dip;               /* index into dips: the DIP's first entry in the pool */
};

/* crc32 pools with a total weight up to this have a slot -> DIP array (one load
 * instead of the weighted search), within HLB_SLOTS_MAX slots per table. */
#define HLB_NO_SLOTS       UINT32_MAX
#define HLB_SLOTS_MAX_POOL 4096u
#define HLB_SLOTS_MAX      (1u << 22)

/* One slot: its DIP and that DIP's tunnel destination, side by side so that the
 * forwarding loop reads both with the slot instead of the destination after the DIP
 * (one dependent load less per frame). */
struct hlb_slot {
    uint32_t dip;               /* index into dips */
    uint32_t outer;             /* dips[dip].outer */
};

struct hlb_dip {
    uint32_t ip;                /* DIP, network order */
    uint32_t outer;             /* tunnel destination: hostIp, else ip */
    uint32_t outer_sum;         /* one's complement sum of outer's two 16-bit halves */
};

struct hlb_pin_table;

struct hlb_counter {
    uint64_t packets;
    uint64_t bytes;
};

struct hlb_index_slot {
    uint64_t key;               /* hlb_service_key(); 0 = empty (proto 0 never valid) */
    uint32_t svc;
};

struct hlb_vip_table {
    uint64_t version;           /* the document's version */
    uint32_t gen;               /* swap generation, assigned at publish time */
    uint32_t n_services;
    uint32_t n_dips;
    uint32_t index_mask;
    struct hlb_service *services;
    struct hlb_dip *dips;
    uint32_t *bucket_ids;       /* per dip: OpenFlow bucket_id (ovs) */
    /* per dip: the pool's first entry with the same DIP address, itself when none comes
     * before.  A DIP repeats in its pool as its WCMP units (buckets of weight 1 with ids of
     * their own); connections, statistics and metrics count its entries as one DIP. */
    uint32_t *dip_first_of;
    uint16_t *weights;          /* per dip */
    uint32_t *cum;              /* per dip: cumulative weight within its pool (crc32) */
    struct hlb_slot *slots;     /* crc32, ovs-dphash: every slot's DIP (see slot_first) */
    /* ovs: each pool's live buckets, per bucket: the first step of hash_int(bucket_id),
     * the weight, the DIP; padded per pool to a whole block (ovs_select.h) */
    uint32_t *ovs_a, *ovs_w, *ovs_dip;
    struct hlb_index_slot *index;
    struct hlb_server_slot *servers;   /* cheetah services' server maps */
    uint16_t *server_ids;       /* per dip: its serverId, 0 when none */
    struct hlb_dip *sf_owners;  /* cheetah-stateful VIPs' owner SMuxes (tunnel ends) */
    /* Per dip: its reported load in thousandths (balance.h), written by the control
     * thread, read by the workers (relaxed 32-bit: each value one the control stored). */
    uint32_t *dip_load;
    /* awrr services: two cumulative-weight arrays indexed like cum (the control
     * thread fills the one not in use, then flips awrr_sel[service]); awrr_total[2 *
     * service + k] is array k's total, awrr_stride[2 * service + k] its step
     * (hlb_wrr_stride). */
    uint32_t *awrr_cum[2];
    uint32_t *awrr_total;
    uint32_t *awrr_stride;
    uint8_t *awrr_sel;
    /* Per worker and cheetah service: the next round-robin position of its SYNs
     * (hlb_rr_next(); written by that worker only, slices on lines of their own). */
    uint32_t *rr_next;
    uint32_t rr_stride;
    /* Per-service and per-DIP counters, one slice per worker (each written by its
     * worker only, each starting on its own cache line): hlb_svc_counters(),
     * hlb_dip_counters(); the control thread adds the slices up. */
    uint32_t n_workers;
    uint32_t svc_stride, dip_stride;    /* counters per slice */
    struct hlb_counter *svc_counters;
    struct hlb_counter *dip_counters;
    void *doc;                  /* json_t of the accepted document (GET /table) */
    /* The flow pins (pins.h), owned by the control thread, which replaces them and
     * hands them on to the next table; NULL: none. */
    const struct hlb_pin_table *pins;
};

/* Worker w's counters (w < t->n_workers), indexed like t->services and t->dips. */
static inline struct hlb_counter *hlb_svc_counters(const struct hlb_vip_table *t, unsigned w)
{
    return t->svc_counters + (size_t)w * t->svc_stride;
}

static inline uint32_t *hlb_rr_next(const struct hlb_vip_table *t, unsigned w)
{
    return t->rr_next + (size_t)w * t->rr_stride;
}

static inline struct hlb_counter *hlb_dip_counters(const struct hlb_vip_table *t, unsigned w)
{
    return t->dip_counters + (size_t)w * t->dip_stride;
}

/* The sum over the workers of service (dip = 0) or DIP (dip = 1) counter i, read
 * while the workers write (64-bit loads: each value is one the worker stored). */
struct hlb_counter hlb_counter_total(const struct hlb_vip_table *t, int dip, uint32_t i);

struct hlb_table_error {
    char field[200];            /* JSON path, e.g. vips[1].ports[0].dips[2].weight */
    char reason[200];
};

struct hlb_table_options {
    int default_pin;            /* connTable when a VIP does not say */
    unsigned n_workers;         /* counter slices (0 counts as 1): the workers that
                                   will run the table */
    uint32_t self_ip;           /* this SMux (network order): its owner id in each
                                   cheetah-stateful VIP's statefulOwners */
};

static inline uint64_t hlb_service_key(uint32_t vip, uint8_t proto, uint16_t port)
{
    return ((uint64_t)vip << 32) | ((uint64_t)proto << 16) | port;
}

static inline uint32_t hlb_index_hash(uint64_t key)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32);   /* Fibonacci hashing */
}

static inline const struct hlb_service *
hlb_table_lookup_exact(const struct hlb_vip_table *t, uint64_t key)
{
    uint32_t i = hlb_index_hash(key) & t->index_mask;
    for (;;) {
        const struct hlb_index_slot *s = &t->index[i];
        if (s->key == key)
            return &t->services[s->svc];
        if (s->key == 0)
            return NULL;
        i = (i + 1) & t->index_mask;
    }
}

/* Exact (vip, proto, port) first, then the VIP's all-ports entry (port 0). */
static inline const struct hlb_service *
hlb_table_lookup(const struct hlb_vip_table *t, uint32_t vip, uint8_t proto, uint16_t port)
{
    const struct hlb_service *s = hlb_table_lookup_exact(t, hlb_service_key(vip, proto, port));
    if (!s && port != 0)
        s = hlb_table_lookup_exact(t, hlb_service_key(vip, proto, 0));
    return s;
}

/* Parses and validates a whole table document.  On error returns NULL and fills err
 * with the offending field and the reason; nothing else changes. */
struct hlb_vip_table *hlb_table_from_json(const char *text, size_t len,
                                          const struct hlb_table_options *opt,
                                          struct hlb_table_error *err);

/* An empty table of version 0 (what an SMux runs before its first PUT). */
struct hlb_vip_table *hlb_table_empty(void);

void hlb_table_free(struct hlb_vip_table *t);

/* The accepted document, serialised (caller frees). */
char *hlb_table_to_json(const struct hlb_vip_table *t);

/* A field of JSON object obj that must be one of the strings names (NULL-terminated):
 * its index in *out, def when missing; else -1 and err naming path.key (for parts of
 * the table parsed in their own file, e.g. cheetah.c). */
struct json_t;
int hlb_json_get_enum(struct json_t *obj, const char *key, const char *path,
                      const char *const *names, int def, int *out, struct hlb_table_error *err);

/* An IPv4 unicast address field (required or not; *present, when not NULL: whether
 * it was there), and a check that obj has no key outside allowed (NULL-terminated):
 * 0, or -1 with err naming path.key. */
int hlb_json_get_ip(struct json_t *obj, const char *key, const char *path, int required,
                    uint32_t *out, int *present, struct hlb_table_error *err);
int hlb_json_check_keys(struct json_t *obj, const char *const *allowed, const char *path,
                        struct hlb_table_error *err);

/* Helpers for metrics labels. */
const char *hlb_proto_name(uint8_t proto);
void hlb_ip_str(uint32_t ip_net, char out[16]);

#endif
