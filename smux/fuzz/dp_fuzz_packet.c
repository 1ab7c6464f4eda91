/* libFuzzer harness for the packet core: any byte string as a sequence of bursts of
 * received frames, against a table with every selection, encapsulation and pinning
 * mode.  Each input runs twice, through hlb_dp_burst (the lean pass with its
 * per-service runs, prefetch pass and flow cache, then the general code) and through
 * hlb_dp_burst_reference (every frame through the general code), on two fresh,
 * identical worlds.  ASan checks that neither reads or writes outside a frame; the
 * harness aborts when their verdicts, output frames, counters or connection tables
 * differ, or a verdict is not sane.
 *
 * Several workers: each burst is split by hlb_flow_worker() into one sub-burst per
 * worker (in arrival order, as the software distribution stage does), each worker
 * with its own connection table and counter slice; between bursts the gateway MAC one
 * worker learned reaches the others, as io_loop.c passes it on.
 *
 * Input: one configuration byte (bit 0 two-port mode, bit 1 gateway MAC unknown,
 * bits 2-3 the number of workers less one), then records of [control byte][length, 2 bytes little endian][frame bytes].  Control
 * bit 0: input port; bit 1: the burst ends after this frame; bit 2: 8 bytes of
 * headroom instead of 64; after the burst, bit 3: the idle sweep runs over the whole
 * connection table, bit 4: the other table is published (pools changed: pinned
 * connections of a removed DIP are re-pinned), bits 5-7: the clock moves that many
 * times 50 s (TCP and UDP idle timeouts come due).  The sweep and the swap are the
 * ways besides packets that entries, and their flow-cache copies, change.  A burst
 * also ends at HLB_MAX_BURST frames and at the end of the input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath.h"

/* The VIPs both tables share: unpinned crc32, ovs + GRE and ovs + IP-in-IP, and an
 * empty pool. */
#define TABLE_HEAD(version)                                                              \
    "{\"version\":" #version ",\"vips\":["                                                \
    "{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\",\"connTable\":false,\"ports\":[{\"proto\":\"tcp\",\"port\":80," \
    "\"dips\":[{\"ip\":\"10.0.1.1\",\"weight\":3},{\"ip\":\"10.0.1.2\",\"hostIp\":\"172.16.0.2\"}]},"            \
    "{\"proto\":\"udp\",\"port\":0,\"dips\":[{\"ip\":\"10.0.1.3\"}]}]},"                                 \
    "{\"vip\":\"100.64.0.2\",\"selection\":\"ovs\",\"encap\":\"gre\",\"connTable\":false,"                   \
    "\"ports\":[{\"proto\":\"tcp\",\"port\":0,\"dips\":[{\"ip\":\"10.0.2.1\"},{\"ip\":\"10.0.2.2\","           \
    "\"weight\":0}]}]},"                                                                 \
    "{\"vip\":\"100.64.0.6\",\"selection\":\"ovs\",\"hashBasis\":9,\"connTable\":false,"           \
    "\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.6.1\",\"weight\":2},"           \
    "{\"ip\":\"10.0.6.2\",\"weight\":0},{\"ip\":\"10.0.6.3\",\"hostIp\":\"172.16.6.3\"}]}]},"
/* ... a cheetah-stateful VIP this SMux (192.0.2.10) owns as owner 1 of 2 (its UDP
 * port is QUIC), and an empty pool. */
#define TABLE_TAIL                                                                       \
    "{\"vip\":\"100.64.0.8\",\"selection\":\"crc32\",\"connTable\":false,"                    \
    "\"affinity\":\"cheetah-stateful\",\"cookieKey\":\"000102030405060708090a0b0c0d0e0f\","   \
    "\"mechanism\":\"rr\",\"statefulOwners\":[\"192.0.2.99\",\"192.0.2.10\"],\"ports\":["         \
    "{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.8.1\",\"serverId\":1},"            \
    "{\"ip\":\"10.0.8.2\",\"serverId\":2}]},"                                                \
    "{\"proto\":\"udp\",\"port\":443,\"dips\":[{\"ip\":\"10.0.8.1\",\"serverId\":1}]}]},"      \
    "{\"vip\":\"100.64.0.5\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[]}]}]}"

static const char *TABLE =
    TABLE_HEAD(1)
    "{\"vip\":\"100.64.0.3\",\"selection\":\"crc32\",\"connTable\":true,\"ports\":["
    "{\"proto\":\"tcp\",\"port\":0,\"dips\":[{\"ip\":\"10.0.3.1\"},{\"ip\":\"10.0.3.2\"}]},"
    "{\"proto\":\"udp\",\"port\":53,\"dips\":[{\"ip\":\"10.0.3.4\"},{\"ip\":\"10.0.3.5\"}]}]},"
    "{\"vip\":\"100.64.0.4\",\"selection\":\"ovs\",\"encap\":\"gre\",\"connTable\":true,\"ports\":["
    "{\"proto\":\"tcp\",\"port\":443,\"dips\":[{\"ip\":\"10.0.4.1\"},{\"ip\":\"10.0.4.2\",\"weight\":3}]}]},"
    TABLE_TAIL;

/* TABLE with the pinned pools changed: 100.64.0.3 loses 10.0.3.2 and gains 10.0.3.9,
 * 100.64.0.4 loses 10.0.4.1. */
static const char *TABLE2 =
    TABLE_HEAD(2)
    "{\"vip\":\"100.64.0.3\",\"selection\":\"crc32\",\"connTable\":true,\"ports\":["
    "{\"proto\":\"tcp\",\"port\":0,\"dips\":[{\"ip\":\"10.0.3.1\"},{\"ip\":\"10.0.3.9\"}]},"
    "{\"proto\":\"udp\",\"port\":53,\"dips\":[{\"ip\":\"10.0.3.4\"},{\"ip\":\"10.0.3.5\"}]}]},"
    "{\"vip\":\"100.64.0.4\",\"selection\":\"ovs\",\"encap\":\"gre\",\"connTable\":true,\"ports\":["
    "{\"proto\":\"tcp\",\"port\":443,\"dips\":[{\"ip\":\"10.0.4.2\",\"weight\":3}]}]},"
    TABLE_TAIL;

enum { BIG_HEADROOM = 64, SMALL_HEADROOM = 8, MAX_FRAME = 9000 };

#define MAX_WORKERS 4

struct world {
    struct hlb_worker w[MAX_WORKERS];
    unsigned n;            /* workers */
    uint64_t fwd_at_swap[MAX_WORKERS];   /* each worker's forwarded count when t came */
    uint64_t sf_fwd_at_swap[MAX_WORKERS];   /* ... and its frames sent to an owner SMux */
    struct hlb_vip_table *t;
    int table2;            /* running TABLE2 rather than TABLE */
};

struct frame {
    uint8_t *buf;          /* exactly headroom + len + 1 bytes: ASan flags any overrun */
    struct hlb_pkt p;
};

#define CHECK(cond, ...)                                                                \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "dp_fuzz_packet: " __VA_ARGS__);                            \
            fputc('\n', stderr);                                                        \
            abort();                                                                    \
        }                                                                               \
    } while (0)

static struct hlb_vip_table *table_of(const char *doc, uint32_t gen, unsigned n)
{
    struct hlb_table_error err;
    struct hlb_table_options opt = {.default_pin = 1, .n_workers = n,
                                    .self_ip = hlb_htonl(0xc000020a)};
    struct hlb_vip_table *t = hlb_table_from_json(doc, strlen(doc), &opt, &err);
    CHECK(t, "harness table rejected: %s: %s", err.field, err.reason);
    t->gen = gen;
    return t;
}

/* Publishes the other table, as a swap does: a new generation; the old table's
 * counters are compared before it goes. */
static void world_swap(struct world *x)
{
    uint32_t gen = x->t->gen + 1;
    hlb_table_free(x->t);
    for (unsigned k = 0; k < x->n; k++) {
        x->fwd_at_swap[k] = x->w[k].st.fwd_packets;
        x->sf_fwd_at_swap[k] = x->w[k].sf->st.forwarded;
    }
    x->table2 = !x->table2;
    x->t = table_of(x->table2 ? TABLE2 : TABLE, gen, x->n);
}

static void world_init(struct world *x, uint8_t config)
{
    memset(x->w, 0, sizeof(x->w));
    memset(x->fwd_at_swap, 0, sizeof(x->fwd_at_swap));
    memset(x->sf_fwd_at_swap, 0, sizeof(x->sf_fwd_at_swap));
    x->n = 1 + (config >> 2 & 3);
    x->table2 = 0;
    x->t = table_of(TABLE, 1, x->n);
    for (unsigned k = 0; k < x->n; k++) {
        struct hlb_worker *w = &x->w[k];
        w->id = (uint16_t)k;
        w->ct = hlb_conn_table_create(256, NULL);   /* small: full buckets happen */
        CHECK(w->ct, "no connection table");
        w->sf = hlb_sf_create(1, 1000);             /* one partition: indexes collide */
        CHECK(w->sf, "no stateful table");
        w->cfg.self_ip = hlb_htonl(0xc000020a);     /* 192.0.2.10 */
        w->cfg.gw_ip = hlb_htonl(0xc0000201);       /* 192.0.2.1 */
        w->cfg.gw_known = !(config & 2);
        w->cfg.two_port = config & 1;
        w->cfg.outer_ttl = 64;
        w->cfg.mtu = 1500;
        static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x0a}, gw[6] = {0x02, 0, 0, 0, 0, 0x01};
        memcpy(w->cfg.port_mac[0], mac, 6);
        memcpy(w->cfg.port_mac[1], mac, 6);
        w->cfg.port_mac[1][5] = 0x0b;
        memcpy(w->cfg.gw_mac, gw, 6);
    }
}

/* The gateway one worker learned, to all (io_loop.c's shared word, between polls). */
static void world_share_gateway(struct world *x, const uint8_t *before_mac, int before_known)
{
    for (unsigned k = 0; k < x->n; k++) {
        const struct hlb_dp_config *c = &x->w[k].cfg;
        if (c->gw_known != before_known || memcmp(c->gw_mac, before_mac, 6) != 0) {
            for (unsigned j = 0; j < x->n; j++) {
                memcpy(x->w[j].cfg.gw_mac, c->gw_mac, 6);
                x->w[j].cfg.gw_known = c->gw_known;
            }
            return;
        }
    }
}

static void world_free(struct world *x)
{
    for (unsigned k = 0; k < x->n; k++) {
        hlb_conn_table_free(x->w[k].ct);
        hlb_sf_free(x->w[k].sf);
    }
    hlb_table_free(x->t);
}

/* Frames p[0..n) through the workers that own them; owner[] computed beforehand. */
static void world_burst(struct world *x, struct hlb_pkt *p, uint8_t *v, const unsigned *owner,
                        unsigned n, uint32_t now, int lean)
{
    for (unsigned k = 0; k < x->n; k++) {
        struct hlb_pkt q[HLB_MAX_BURST];
        uint8_t vq[HLB_MAX_BURST];
        unsigned idx[HLB_MAX_BURST], c = 0;
        for (unsigned i = 0; i < n; i++)
            if (owner[i] == k) {
                idx[c] = i;
                q[c++] = p[i];
            }
        if (!c)
            continue;
        memset(vq, 0xee, sizeof(vq));
        if (lean)
            hlb_dp_burst(&x->w[k], x->t, q, vq, c, now);
        else
            hlb_dp_burst_reference(&x->w[k], x->t, q, vq, c, now);
        for (unsigned j = 0; j < c; j++) {
            p[idx[j]] = q[j];
            v[idx[j]] = vq[j];
        }
    }
}

static void frame_init(struct frame *f, const uint8_t *data, uint32_t len, uint32_t headroom,
                       uint16_t in_port)
{
    f->buf = malloc(headroom + len + 1);
    memcpy(f->buf + headroom, data, len);
    f->p = (struct hlb_pkt){.data = f->buf + headroom, .len = len, .headroom = headroom,
                            .in_port = in_port};
}

/* A verdict and output frame that the I/O loop can send, and the same from both. */
static void check_frames(const struct frame *a, const uint8_t *va, const struct frame *b,
                         const uint8_t *vb, const uint32_t *alloc, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        CHECK(va[i] == HLB_V_TX || va[i] == HLB_V_DROP, "frame %u: verdict %u", i, va[i]);
        CHECK(va[i] == vb[i], "frame %u: verdict %u, reference %u", i, va[i], vb[i]);
        if (va[i] != HLB_V_TX)
            continue;
        const struct hlb_pkt *p = &a[i].p, *q = &b[i].p;
        CHECK(p->data >= a[i].buf && p->data + p->len <= a[i].buf + alloc[i] && p->len >= 42,
              "frame %u: output outside its buffer or too short (%u bytes)", i, p->len);
        CHECK((size_t)(p->data - a[i].buf) == p->headroom, "frame %u: headroom not updated", i);
        CHECK(p->out_port == q->out_port && p->len == q->len &&
                  p->data - a[i].buf == q->data - b[i].buf,
              "frame %u: port %u/%u, length %u/%u or offset differ from the reference", i,
              p->out_port, q->out_port, p->len, q->len);
        CHECK(memcmp(p->data, q->data, p->len) == 0, "frame %u: bytes differ from the reference", i);
    }
}

static void check_worlds(const struct world *a, const struct world *b)
{
    for (unsigned k = 0; k < a->n; k++) {
        const struct hlb_worker *wa = &a->w[k], *wb = &b->w[k];
        struct hlb_dp_stats sa = wa->st, sb = wb->st;
        sa.lean_packets = sb.lean_packets = 0;    /* the one counter that differs */
        CHECK(memcmp(&sa, &sb, sizeof(sa)) == 0, "worker %u counters differ from the reference", k);
        CHECK(memcmp(wa->cfg.gw_mac, wb->cfg.gw_mac, 6) == 0 &&
                  wa->cfg.gw_known == wb->cfg.gw_known,
              "worker %u gateway state differs from the reference", k);
        CHECK(memcmp(&wa->ct->st, &wb->ct->st, sizeof(wa->ct->st)) == 0,
              "worker %u connection-table counters differ from the reference", k);
        CHECK(memcmp(wa->ct->b, wb->ct->b, ((size_t)wa->ct->mask + 1) * sizeof(*wa->ct->b)) == 0,
              "worker %u connection table differs from the reference", k);
        CHECK(memcmp(hlb_svc_counters(a->t, k), hlb_svc_counters(b->t, k),
                     a->t->n_services * sizeof(struct hlb_counter)) == 0 &&
                  memcmp(hlb_dip_counters(a->t, k), hlb_dip_counters(b->t, k),
                         a->t->n_dips * sizeof(struct hlb_counter)) == 0,
              "worker %u service or DIP counters differ from the reference", k);
        CHECK(memcmp(&wa->sf->st, &wb->sf->st, sizeof(wa->sf->st)) == 0 &&
                  hlb_sf_same(wa->sf, wb->sf),
              "worker %u stateful table differs from the reference", k);
        CHECK(hlb_sf_check(wa->sf) == 0, "worker %u stateful stacks broken", k);
        uint64_t in_slice = 0;
        for (uint32_t s = 0; s < a->t->n_services; s++)
            in_slice += hlb_svc_counters(a->t, k)[s].packets;
        CHECK(in_slice + wa->sf->st.forwarded - a->sf_fwd_at_swap[k] ==
                  wa->st.fwd_packets - a->fwd_at_swap[k],
              "worker %u counted outside its own slice", k);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct world a, b;
    world_init(&a, data[0]);
    world_init(&b, data[0]);
    size_t at = 1;
    uint32_t now = 1000;
    while (at + 3 <= size) {
        struct frame fa[HLB_MAX_BURST], fb[HLB_MAX_BURST];
        struct hlb_pkt pa[HLB_MAX_BURST], pb[HLB_MAX_BURST];
        uint8_t va[HLB_MAX_BURST], vb[HLB_MAX_BURST];
        uint32_t alloc[HLB_MAX_BURST];
        unsigned n = 0;
        uint8_t ctl = 0;
        while (n < HLB_MAX_BURST && at + 3 <= size) {
            ctl = data[at];
            uint32_t len = (uint32_t)data[at + 1] | (uint32_t)data[at + 2] << 8;
            at += 3;
            if (len > size - at)
                len = (uint32_t)(size - at);
            if (len > MAX_FRAME)
                len = MAX_FRAME;
            uint32_t headroom = ctl & 4 ? SMALL_HEADROOM : BIG_HEADROOM;
            frame_init(&fa[n], data + at, len, headroom, ctl & 1);
            frame_init(&fb[n], data + at, len, headroom, ctl & 1);
            alloc[n] = headroom + len + 1;
            pa[n] = fa[n].p;
            pb[n] = fb[n].p;
            at += len;
            n++;
            if (ctl & 2)
                break;
        }
        memset(va, 0xee, sizeof(va));
        memset(vb, 0xee, sizeof(vb));
        unsigned owner[HLB_MAX_BURST];
        for (unsigned i = 0; i < n; i++)
            owner[i] = hlb_flow_worker(pa[i].data, pa[i].len, a.n);
        uint8_t gw_mac[6];
        int gw_known = a.w[0].cfg.gw_known;
        memcpy(gw_mac, a.w[0].cfg.gw_mac, 6);
        world_burst(&a, pa, va, owner, n, now, 1);
        world_burst(&b, pb, vb, owner, n, now, 0);
        world_share_gateway(&a, gw_mac, gw_known);
        world_share_gateway(&b, gw_mac, gw_known);
        for (unsigned i = 0; i < n; i++) {
            fa[i].p = pa[i];
            fb[i].p = pb[i];
        }
        check_frames(fa, va, fb, vb, alloc, n);
        check_worlds(&a, &b);
        for (unsigned i = 0; i < n; i++) {
            free(fa[i].buf);
            free(fb[i].buf);
        }
        now += 1 + (uint32_t)(ctl >> 5) * 50000;
        if (ctl & 8) {
            for (unsigned k = 0; k < a.n; k++) {
                hlb_conn_sweep(a.w[k].ct, now, a.w[k].ct->mask + 1);
                hlb_conn_sweep(b.w[k].ct, now, b.w[k].ct->mask + 1);
            }
            check_worlds(&a, &b);
        }
        if (ctl & 16) {
            world_swap(&a);
            world_swap(&b);
        }
    }
    world_free(&a);
    world_free(&b);
    return 0;
}
