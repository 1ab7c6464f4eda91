#include "io_loop.h"

#include <stddef.h>

#include <rte_ethdev.h>

#include "dp_burst.h"

/* The packet core compiled directly over the received mbufs: it reads the frame in
 * place and rewrites data_off/data_len/pkt_len, with no per-packet descriptor copy. */
#define HLB_BURST_FN dp_burst_mbufs
#define HLB_FULL_FN dp_burst_mbufs_full
#define HLB_FAST_FN dp_burst_mbufs_fast
#define HLB_BURST_FRAME struct rte_mbuf *
#define HLB_F_DATA(m) ((uint8_t *)(m)->buf_addr + (m)->data_off)
#define HLB_F_LEN(m) ((uint32_t)(m)->data_len)
#define HLB_F_HEADROOM(m) ((uint32_t)(m)->data_off)
#define HLB_F_IN_PORT(m, port) (port)
#define HLB_F_MULTISEG(m) ((m)->nb_segs != 1)
#define HLB_F_SET(m, d, l)                                                              \
    do {                                                                                \
        (m)->data_off = (uint16_t)((d) - (uint8_t *)(m)->buf_addr);                     \
        (m)->data_len = (uint16_t)(l);                                                  \
        (m)->pkt_len = (l);                                                             \
    } while (0)
#define HLB_F_PUSH(m, n, l)                                                             \
    do {                                                                                \
        (m)->data_off = (uint16_t)((m)->data_off - (n));                                \
        (m)->data_len = (uint16_t)(l);                                                  \
        (m)->pkt_len = (l);                                                             \
    } while (0)
#include "dp_burst_body.h"

#define GW_KNOWN (1ull << 48)

/* The word of c's gateway: one 8-byte load of gw_mac and the two bytes behind it
 * (a 6-byte copy into a word would stall on store forwarding at every poll). */
_Static_assert(offsetof(struct hlb_dp_config, gw_known) ==
               offsetof(struct hlb_dp_config, gw_mac) + 6, "gw_known follows gw_mac");
static inline uint64_t gw_word(const struct hlb_dp_config *c)
{
    uint64_t v;
    memcpy(&v, c->gw_mac, 8);                     /* mac, gw_known, gw_static */
    return v & (0xff000000000000ull) ? (v & 0xffffffffffffull) | GW_KNOWN : 0;
}

/* The gateway another worker learned since this one's last pass. */
static inline void gw_pull(struct hlb_io *io)
{
    uint64_t g = atomic_load_explicit(&io->sh->gateway, memory_order_relaxed);
    if (HLB_LIKELY(g == io->gw_seen))
        return;
    io->gw_seen = g;
    if (g & GW_KNOWN) {
        memcpy(io->w->cfg.gw_mac, &g, 6);
        io->w->cfg.gw_known = 1;
    }
}

/* The gateway this worker learned in its pass, for the others. */
static inline void gw_push(struct hlb_io *io)
{
    uint64_t mine = gw_word(&io->w->cfg);
    if (HLB_UNLIKELY(mine != io->gw_seen)) {
        io->gw_seen = mine;
        atomic_store_explicit(&io->sh->gateway, mine, memory_order_relaxed);
    }
}

/* Several workers: tx queue k, or k % n under its lock where the port has fewer. */
uint16_t hlb_io_tx_shared(struct hlb_io *io, int pi, struct rte_mbuf **m, uint16_t n)
{
    struct hlb_io_shared *sh = io->sh;
    uint16_t q = (uint16_t)(io->w->id % sh->n_txq[pi]);
    if (HLB_LIKELY(sh->n_txq[pi] >= sh->n_workers))
        return rte_eth_tx_burst(io->port_ids[pi], q, m, n);
    rte_spinlock_lock(&sh->tx_lock[pi][q]);
    uint16_t sent = rte_eth_tx_burst(io->port_ids[pi], q, m, n);
    rte_spinlock_unlock(&sh->tx_lock[pi][q]);
    return sent;
}

static void tx_or_drop(struct hlb_io *io, int pi, struct rte_mbuf **m, unsigned n)
{
    uint16_t sent = hlb_io_tx(io, pi, m, (uint16_t)n);
    if (unlikely(sent < n)) {
        io->w->st.drops[HLB_DROP_TX_FULL] += n - sent;
        rte_pktmbuf_free_bulk(&m[sent], n - sent);
    }
}

/* The packet core over one burst received on port index pi, then tx. */
static void process(struct hlb_io *io, struct hlb_vip_table *t, struct rte_mbuf **rx,
                    uint16_t n, int pi, uint32_t now)
{
    struct hlb_worker *w = io->w;
    struct rte_mbuf *tx[HLB_MAX_PORTS][HLB_RX_BURST], *dropped[HLB_RX_BURST];
    uint8_t out[HLB_RX_BURST];
    if (HLB_LIKELY(dp_burst_mbufs(w, t, rx, out, n, (uint16_t)pi, now) == 0)) {
        /* Every frame forwarded by the lean pass, all to one port: the rx array is
         * the tx array. */
        tx_or_drop(io, w->cfg.two_port ? 1 : pi, rx, n);
        return;
    }
    /* Per-port tx counts in registers (an array indexed by the packet's port would
     * chain a load and a store through memory for every packet). */
    unsigned n0 = 0, n1 = 0, nd = 0;
    for (unsigned i = 0; i < n; i++) {
        struct rte_mbuf *m = rx[i];
        if (HLB_LIKELY(out[i] == 0))
            tx[0][n0++] = m;
        else if (out[i] == 1)
            tx[1][n1++] = m;
        else
            dropped[nd++] = m;
    }
    if (nd)
        rte_pktmbuf_free_bulk(dropped, nd);
    unsigned ntx[HLB_MAX_PORTS] = {n0, n1};
    for (int op = 0; op < io->n_ports; op++)
        if (ntx[op])
            tx_or_drop(io, op, tx[op], ntx[op]);
}

/* Software distribution: keeps this worker's frames in rx[] (returns how many) and
 * hands each other frame to its owner's inbox for port index pi.  Every inbox had
 * room for the whole burst (rx_room): they have one producer, this worker. */
static uint16_t distribute(struct hlb_io *io, struct rte_mbuf **rx, uint16_t n, int pi)
{
    struct hlb_io_shared *sh = io->sh;
    struct rte_mbuf *theirs[HLB_MAX_WORKERS][HLB_RX_BURST];
    unsigned count[HLB_MAX_WORKERS] = {0};
    uint16_t mine = 0;
    for (uint16_t i = 0; i < n; i++) {
        struct rte_mbuf *m = rx[i];
        unsigned k = hlb_flow_worker(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len,
                                     sh->n_workers);
        if (k == io->w->id)
            rx[mine++] = m;
        else
            theirs[k][count[k]++] = m;
    }
    for (unsigned k = 0; k < sh->n_workers; k++) {
        if (!count[k])
            continue;
        unsigned in = rte_ring_sp_enqueue_burst(sh->inbox[k][pi], (void **)theirs[k], count[k],
                                                NULL);
        if (unlikely(in < count[k])) {              /* (not expected: see rx_room) */
            io->w->st.drops[HLB_DROP_TX_FULL] += count[k] - in;
            rte_pktmbuf_free_bulk(&theirs[k][in], count[k] - in);
        }
    }
    return mine;
}

/* Software distribution: how many frames worker 0 may take from port index pi, the
 * room left in the fullest inbox.  When a worker falls behind, worker 0 stops
 * receiving rather than drop what it cannot hand on: frames wait in the port's rx
 * queue, and overflow there (counted by the port, rx_missed) as they would with a
 * queue per worker. */
static uint16_t rx_room(const struct hlb_io_shared *sh, int pi)
{
    unsigned room = HLB_RX_BURST;
    for (unsigned k = 1; k < sh->n_workers; k++) {
        unsigned free = rte_ring_free_count(sh->inbox[k][pi]);
        room = free < room ? free : room;
    }
    return (uint16_t)room;
}

unsigned hlb_io_poll(struct hlb_io *io, struct hlb_vip_table *t, uint32_t now)
{
    struct hlb_worker *w = io->w;
    struct hlb_io_shared *sh = io->sh;
    struct rte_mbuf *rx[HLB_RX_BURST];
    unsigned total = 0;
    if (sh)
        gw_pull(io);

    for (int pi = 0; pi < io->n_ports; pi++) {
        uint16_t n;
        if (sh && sh->software_rx && w->id != 0) {
            n = (uint16_t)rte_ring_sc_dequeue_burst(sh->inbox[w->id][pi], (void **)rx,
                                                    HLB_RX_BURST, NULL);
            total += n;
        } else {
            uint16_t room = sh && sh->software_rx ? rx_room(sh, pi) : HLB_RX_BURST;
            n = room ? rte_eth_rx_burst(io->port_ids[pi], sh && !sh->software_rx ? w->id : 0,
                                        rx, room) : 0;
            total += n;
            if (n && pi == 0 && io->rx_hook)
                io->rx_hook(io->rx_hook_arg, rx, n);
            if (n && sh && sh->software_rx)
                n = distribute(io, rx, n, pi);
        }
        if (!n)
            continue;
        if (io->raw_forward) {
            w->st.rx_packets += n;
            uint16_t sent = hlb_io_tx(io, pi, rx, n);
            for (uint16_t k = sent; k < n; k++)
                rte_pktmbuf_free(rx[k]);
            continue;
        }
        process(io, t, rx, n, pi, now);
    }
    if (sh)
        gw_push(io);
    return total;
}
