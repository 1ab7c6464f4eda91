#include "io_loop.h"

#include <rte_ethdev.h>

unsigned hlb_io_poll(struct hlb_io *io, struct hlb_vip_table *t, uint32_t now)
{
    struct hlb_worker *w = io->w;
    struct rte_mbuf *rx[HLB_RX_BURST], *tx[HLB_MAX_PORTS][HLB_RX_BURST];
    struct hlb_pkt pk[HLB_RX_BURST];
    uint8_t verdict[HLB_RX_BURST];
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
        unsigned np = 0;
        for (uint16_t i = 0; i < n; i++) {
            struct rte_mbuf *m = rx[i];
            if (unlikely(m->nb_segs != 1)) {
                /* Jumbo frames split over segments: never expected at our MTU. */
                w->st.rx_packets++;
                w->st.drops[HLB_DROP_MULTISEG]++;
                rte_pktmbuf_free(m);
                continue;
            }
            rx[np] = m;
            pk[np].data = (uint8_t *)m->buf_addr + m->data_off;
            pk[np].len = m->data_len;
            pk[np].headroom = m->data_off;       /* rte_pktmbuf_headroom() */
            pk[np].in_port = (uint16_t)pi;
            np++;
        }
        hlb_dp_burst(w, t, pk, verdict, np, now);
        /* Per-port tx counts in registers (an array indexed by the packet's port
         * would chain a load and a store through memory for every packet). */
        unsigned n0 = 0, n1 = 0;
        for (unsigned i = 0; i < np; i++) {
            struct rte_mbuf *m = rx[i];
            if (unlikely(verdict[i] != HLB_V_TX)) {
                rte_pktmbuf_free(m);
                continue;
            }
            m->data_off = (uint16_t)(pk[i].data - (uint8_t *)m->buf_addr);
            m->data_len = (uint16_t)pk[i].len;
            m->pkt_len = pk[i].len;
            if (pk[i].out_port == 0)
                tx[0][n0++] = m;
            else
                tx[1][n1++] = m;
        }
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
