/* Flow pins: exact flows (client address and port -> VIP, port, protocol) sent to a
 * DIP of the controller's choice instead of the one the VIP's selection (hash,
 * connection table, cookie) would pick.  Prism's fabric steering puts one per
 * connection handed off to a backend (docs/usage.md "Prism").
 *
 * A pin table is immutable once built and replaced as a whole by the control thread
 * (copy on write, under the control lock); the running VIP table points at it and
 * marks the services that have pins (hlb_service.has_pins), so that the datapath
 * looks pins up only for the frames of those services: a VIP without pins costs
 * one byte test on the service line it reads anyway.  EAL-free.
 */
#ifndef HLB_PINS_H
#define HLB_PINS_H

#include <stdint.h>
#include "hlb_pkt.h"
#include "vip_table.h"

/* Pins one SMux holds at most (each 32 bytes, in a table at most half full). */
#define HLB_MAX_PINS 65536u

struct hlb_pin {
    uint64_t k0, k1;            /* hlb_conn_key() of the flow; k1 == 0: empty slot */
    struct hlb_dip to;          /* the DIP and its tunnel end */
    uint32_t pad;
};

struct hlb_pin_table {
    uint32_t n;                 /* pins */
    uint32_t mask;              /* slots - 1 */
    struct hlb_pin *slot;       /* open addressing on hlb_conn_hash_words() */
    /* The hlb_service_key()s of the services with pins: (vip, proto, port) and
     * (vip, proto, 0) of every pin; 0 = empty slot. */
    uint32_t svc_mask;
    uint64_t *svc_keys;
};

static inline const struct hlb_pin *hlb_pin_find_key(const struct hlb_pin_table *p, uint64_t k0,
                                                     uint64_t k1)
{
    uint32_t i = hlb_conn_hash_words(k0, k1) & p->mask;
    for (;;) {
        const struct hlb_pin *e = &p->slot[i];
        if (e->k1 == k1 && e->k0 == k0)
            return e;
        if (e->k1 == 0)
            return NULL;
        i = (i + 1) & p->mask;
    }
}

/* The pin of a frame's flow, or NULL.  Only for services with has_pins set. */
static inline const struct hlb_pin *hlb_pin_find(const struct hlb_vip_table *t,
                                                 const struct hlb_5tuple *tuple)
{
    const struct hlb_pin_table *p = __atomic_load_n(&t->pins, __ATOMIC_ACQUIRE);
    if (!p)
        return NULL;
    uint64_t k0, k1;
    hlb_conn_key(tuple, &k0, &k1);
    return hlb_pin_find_key(p, k0, k1);
}

static inline int hlb_svc_has_pins(const struct hlb_service *s)
{
    return __atomic_load_n(&s->has_pins, __ATOMIC_RELAXED);
}

/* The table without old's pin of add's flow, with add (when add is not NULL) and
 * without del's flow (when del is not NULL); NULL when out of memory.  *found: whether
 * old held a pin of that flow.  old may be NULL (no pins). */
struct hlb_pin_table *hlb_pins_change(const struct hlb_pin_table *old, const struct hlb_pin *add,
                                      const struct hlb_pin *del, int *found);
void hlb_pins_free(struct hlb_pin_table *p);

/* Sets each service's has_pins in t from p (NULL: none), writing only the ones that
 * change: a service whose pins stay is never unmarked in between. */
void hlb_pins_mark(struct hlb_vip_table *t, const struct hlb_pin_table *p);

/* A pin from its JSON object {client, clientPort, vip, vipPort, proto ("tcp" by
 * default, or "udp"), dip, tunnel (default: dip)}; with_target 0: the flow only (dip
 * and tunnel not read).  0, or -1 with err naming the field. */
struct json_t;
int hlb_pin_from_json(struct json_t *o, int with_target, struct hlb_pin *out,
                      struct hlb_table_error *err);
struct json_t *hlb_pin_to_json(const struct hlb_pin *p);

#endif
