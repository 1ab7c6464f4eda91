/* The DPDK side of one worker pass: rx bursts from every port (or from this worker's
 * inbox), run the packet core, rewrite mbufs, tx (grouped by output port), free what
 * is dropped.  Shared by the hlb-smux process and the EAL tests on net_ring.
 *
 * Several workers (one per lcore) split the flows between them (README "Workers"):
 *   - multi-queue: worker k polls rx queue k of every port, and the PMD steers each
 *     flow to one queue (a NIC's RSS, af_packet's fanout hash, af_xdp's queues);
 *   - software distribution, for ports with fewer rx queues than workers: worker 0
 *     polls queue 0 and hands every frame another worker owns (hlb_flow_worker) to
 *     that worker's inbox, a single-producer single-consumer ring per port.
 * Worker k sends on tx queue k, or, on a port with fewer tx queues than workers, on
 * queue k % n under a lock.  The gateway MAC, learned by whichever worker receives the
 * gateway's ARP, reaches the others through one shared word. */
#ifndef HLB_IO_LOOP_H
#define HLB_IO_LOOP_H

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_spinlock.h>
#include "datapath.h"
#include "table_swap.h"

typedef void (*hlb_rx_hook)(void *arg, struct rte_mbuf **m, uint16_t n);

/* What the workers of one SMux share (one of it per process). */
struct hlb_io_shared {
    unsigned n_workers;
    int software_rx;                 /* worker 0 receives for all (see above) */
    struct rte_ring *inbox[HLB_MAX_WORKERS][HLB_MAX_PORTS];   /* software_rx only */
    uint16_t n_txq[HLB_MAX_PORTS];   /* tx queues of each port */
    rte_spinlock_t tx_lock[HLB_MAX_PORTS][HLB_MAX_WORKERS];   /* per tx queue, when shared */
    /* The gateway as the workers last learned it: MAC in bits 0..47, known in bit 48. */
    _Atomic uint64_t gateway;
};

struct hlb_io {
    struct hlb_worker *w;
    uint16_t port_ids[HLB_MAX_PORTS];
    int n_ports;
    struct hlb_io_shared *sh;     /* NULL: a single worker, queue 0 of every port */
    uint64_t gw_seen;             /* the shared gateway word this worker last applied */
    hlb_rx_hook rx_hook;          /* optional, port index 0 only (benchmark generator) */
    void *rx_hook_arg;
    int raw_forward;              /* benchmark baseline: rx (+hook) -> tx, no packet core */
};

/* One pass over all ports (or this worker's inbox) against table t; returns the
 * number of frames received. */
unsigned hlb_io_poll(struct hlb_io *io, struct hlb_vip_table *t, uint32_t now_ms);

uint16_t hlb_io_tx_shared(struct hlb_io *io, int pi, struct rte_mbuf **m, uint16_t n);

/* Sends n frames out of port index pi on this worker's tx queue; returns how many the
 * PMD took (the caller frees the rest). */
static inline uint16_t hlb_io_tx(struct hlb_io *io, int pi, struct rte_mbuf **m, uint16_t n)
{
    if (__builtin_expect(io->sh == NULL, 1))    /* one worker: queue 0 */
        return rte_eth_tx_burst(io->port_ids[pi], 0, m, n);
    return hlb_io_tx_shared(io, pi, m, n);
}

#endif
