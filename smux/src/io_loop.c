#include "io_loop.h"

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

unsigned hlb_io_poll(struct hlb_io *io, struct hlb_vip_table *t, uint32_t now)
{
    struct hlb_worker *w = io->w;
    struct rte_mbuf *rx[HLB_RX_BURST], *tx[HLB_MAX_PORTS][HLB_RX_BURST], *dropped[HLB_RX_BURST];
    uint8_t out[HLB_RX_BURST];
    unsigned total = 0;

    for (int pi = 0; pi < io->n_ports; pi++) {
        uint16_t n = rte_eth_rx_burst(io->port_ids[pi], 0, rx, HLB_RX_BURST);
        if (!n)
            continue;
        total += n;
        if (pi == 0 && io->rx_hook)
            io->rx_hook(io->rx_hook_arg, rx, n);
        if (io->raw_forward) {
            w->st.rx_packets += n;
            uint16_t sent = rte_eth_tx_burst(io->port_ids[pi], 0, rx, n);
            for (uint16_t k = sent; k < n; k++)
                rte_pktmbuf_free(rx[k]);
            continue;
        }
        if (HLB_LIKELY(dp_burst_mbufs(w, t, rx, out, n, (uint16_t)pi, now) == 0)) {
            /* Every frame forwarded by the lean pass, all to one port: the rx array
             * is the tx array. */
            uint16_t op = w->cfg.two_port ? 1 : (uint16_t)pi;
            uint16_t sent = rte_eth_tx_burst(io->port_ids[op], 0, rx, n);
            if (unlikely(sent < n)) {
                w->st.drops[HLB_DROP_TX_FULL] += n - sent;
                rte_pktmbuf_free_bulk(&rx[sent], n - sent);
            }
            continue;
        }
        /* Per-port tx counts in registers (an array indexed by the packet's port
         * would chain a load and a store through memory for every packet). */
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
        for (int op = 0; op < io->n_ports; op++) {
            if (!ntx[op])
                continue;
            uint16_t sent = rte_eth_tx_burst(io->port_ids[op], 0, tx[op], (uint16_t)ntx[op]);
            if (unlikely(sent < ntx[op])) {
                w->st.drops[HLB_DROP_TX_FULL] += ntx[op] - sent;
                rte_pktmbuf_free_bulk(&tx[op][sent], ntx[op] - sent);
            }
        }
    }
    return total;
}
