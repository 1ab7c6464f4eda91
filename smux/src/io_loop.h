/* The DPDK side of one worker pass: rx bursts from every port, run the packet core,
 * rewrite mbufs, tx (grouped by output port), free what is dropped.  Shared by the
 * hlb-smux process and the EAL tests on net_ring. */
#ifndef HLB_IO_LOOP_H
#define HLB_IO_LOOP_H

#include <rte_mbuf.h>
#include "datapath.h"

typedef void (*hlb_rx_hook)(void *arg, struct rte_mbuf **m, uint16_t n);

struct hlb_io {
    struct hlb_worker *w;
    uint16_t port_ids[HLB_MAX_PORTS];
    int n_ports;
    hlb_rx_hook rx_hook;          /* optional, port index 0 only (benchmark generator) */
    void *rx_hook_arg;
    int raw_forward;              /* benchmark baseline: rx (+hook) -> tx, no packet core */
};

/* One pass over all ports against table t; returns the number of frames received. */
unsigned hlb_io_poll(struct hlb_io *io, struct hlb_vip_table *t, uint32_t now_ms);

#endif
