/* The backend's hand-back forwarding entries (prism_linger.h): an open-addressing
 * table flow -> deadline with tombstones, rebuilt when they take a quarter of it. */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prism_linger.h"

enum { SLOT_EMPTY, SLOT_FULL, SLOT_DEAD };

struct slot {
    struct prism_flow_key k;
    uint64_t deadline;
    uint32_t state;
};

struct prism_linger {
    int steer_fd;
    uint64_t linger_ns;
    uint32_t mask, full, dead, max_full;
    struct slot *slots;
};

static uint32_t slot_hash(const struct prism_flow_key *k)
{
    uint64_t h = ((uint64_t) k->client << 32 | k->vip) * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t) k->client_port << 16 | k->vip_port) * 0xc2b2ae3d27d4eb4full;
    return (uint32_t) (h >> 32);
}

static int key_eq(const struct prism_flow_key *a, const struct prism_flow_key *b)
{
    return a->client == b->client && a->vip == b->vip && a->client_port == b->client_port
           && a->vip_port == b->vip_port;
}

struct prism_linger *prism_linger_new(int steer_fd, uint64_t linger_ns, uint32_t capacity)
{
    struct prism_linger *l = calloc(1, sizeof *l);
    uint32_t n = 16;
    while (n < 2 * capacity) {
        n <<= 1;
    }
    if (l) {
        l->slots = calloc(n, sizeof *l->slots);
    }
    if (!l || !l->slots) {
        free(l);
        return NULL;
    }
    l->steer_fd = steer_fd;
    l->linger_ns = linger_ns;
    l->mask = n - 1;
    l->max_full = capacity;
    return l;
}

void prism_linger_free(struct prism_linger *l)
{
    if (l) {
        free(l->slots);
        free(l);
    }
}

/* The slot holding k, or NULL. */
static struct slot *find(struct prism_linger *l, const struct prism_flow_key *k)
{
    for (uint32_t i = slot_hash(k), n = 0; n <= l->mask; i++, n++) {
        struct slot *s = &l->slots[i & l->mask];
        if (s->state == SLOT_EMPTY) {
            return NULL;
        }
        if (s->state == SLOT_FULL && key_eq(&s->k, k)) {
            return s;
        }
    }
    return NULL;
}

static void put(struct prism_linger *l, const struct prism_flow_key *k, uint64_t deadline)
{
    for (uint32_t i = slot_hash(k);; i++) {
        struct slot *s = &l->slots[i & l->mask];
        if (s->state != SLOT_FULL) {
            l->dead -= s->state == SLOT_DEAD;
            *s = (struct slot) { *k, deadline, SLOT_FULL };
            l->full++;
            return;
        }
    }
}

/* Drops the tombstones: every live entry rehashed into a clean table. */
static int rebuild(struct prism_linger *l)
{
    struct slot *old = l->slots;
    struct slot *fresh = calloc(l->mask + 1, sizeof *fresh);
    if (!fresh) {
        return -ENOMEM;
    }
    l->slots = fresh;
    l->full = l->dead = 0;
    for (uint32_t i = 0; i <= l->mask; i++) {
        if (old[i].state == SLOT_FULL) {
            put(l, &old[i].k, old[i].deadline);
        }
    }
    free(old);
    return 0;
}

static void drop(struct prism_linger *l, struct slot *s)
{
    bpf_map_delete_elem(l->steer_fd, &s->k);
    s->state = SLOT_DEAD;
    l->full--;
    l->dead++;
}

int prism_linger_forward(struct prism_linger *l, const struct prism_flow_key *k,
                         uint32_t front_end, uint64_t now_ns)
{
    struct slot *s = find(l, k);
    if (!s && l->full >= l->max_full) {
        return -ENOSPC;
    }
    struct prism_flow_val v = { .action = PRISM_STEER_FORWARD, .owner_dip = front_end };
    if (bpf_map_update_elem(l->steer_fd, k, &v, BPF_ANY)) {
        return -errno;
    }
    if (s) {
        s->deadline = now_ns + l->linger_ns;
        return 0;
    }
    if (l->dead > (l->mask + 1) / 4 && rebuild(l)) {
        bpf_map_delete_elem(l->steer_fd, k);
        return -ENOMEM;
    }
    put(l, k, now_ns + l->linger_ns);
    return 0;
}

int prism_linger_take(struct prism_linger *l, const struct prism_flow_key *k)
{
    struct slot *s = find(l, k);
    if (s) {
        drop(l, s);
    }
    return s != NULL;
}

uint32_t prism_linger_expire(struct prism_linger *l, uint64_t now_ns)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i <= l->mask && l->full; i++) {
        struct slot *s = &l->slots[i];
        if (s->state == SLOT_FULL && s->deadline <= now_ns) {
            drop(l, s);
            n++;
        }
    }
    return n;
}

uint32_t prism_linger_count(const struct prism_linger *l)
{
    return l->full;
}
