/* The benchmark's stand-in for a NIC's DMA, and its pre-pinned connections (see
 * README, Benchmark).
 * net_null hands out mbufs without writing their data, as a NIC's DMA would have.  The
 * generator stands in for that DMA: bench_gen_fill_one() writes a 64-byte TCP frame
 * into every mbuf of the pool once, before the worker loop, and bench_gen_hook()
 * then rewrites per received frame only what differs from it: bytes 0-15, which the
 * previous trip through the SMux overwrote with its outer header (net_null never
 * touches data, and the packet core writes nothing past byte 13 of the inner frame),
 * and bytes 16-31, which hold the flow's source address and the IP checksum.  Those
 * are precomputed per flow (16 bytes each, read in sequence); with every packet a
 * new flow they are computed per packet, with the source port (bytes 32-47).  The
 * generator's cost is part of every measured figure (the baseline mode shows it). */
#ifndef HLB_BENCH_GEN_H
#define HLB_BENCH_GEN_H

#include <smmintrin.h>
#include <rte_mbuf.h>
#include "datapath.h"
#include "options.h"

#define BENCH_GEN_TABLE_MAX (1u << 20)    /* flows with a precomputed chunk (16 MiB) */

struct bench_gen {
    uint8_t tmpl[80];               /* 64 bytes, or 66 with a timestamp option */
    uint32_t base_sum;              /* IP header sum with src-ip low half = 0 */
    uint32_t flows;                 /* this worker's */
    uint32_t next;
    uint32_t first, step;           /* this worker's flows: first, first + step, ... */
    int new_flows;
    __m128i *chunk1;                /* bytes 16-31 of this worker's flow i's frame, or NULL */
    uint32_t *tsecr;                /* cheetah bench VIP: flow i's TSecr (bytes 62-65), or NULL */
};

/* Worker k of n generates flows k, k + n, k + 2n, ... (of --bench-flows in all).  When
 * the bench VIP is a cheetah service of t, every frame carries NOP, NOP, timestamp
 * (66-byte frames: net_null needs size=66), its TSecr echoing the cookie of the
 * pool's DIP f mod (pool size) for flow f; for a cheetah-stateful service this SMux
 * owns, the stateful ident of the entry made for flow f in sf (the worker's) at
 * time now. */
void bench_gen_init(struct bench_gen *g, const struct options *o, const uint8_t *dst_mac,
                    unsigned k, unsigned n, const struct hlb_vip_table *t,
                    struct hlb_sf_table *sf, uint32_t now);

/* The template in one mbuf's data room, where net_null's frames start
 * (rte_mempool_obj_iter callback). */
void bench_gen_fill_one(struct rte_mempool *mp, void *arg, void *obj, unsigned idx);

/* The rx hook (struct hlb_io): a received burst's frames rewritten. */
void bench_gen_hook(void *arg, struct rte_mbuf **ms, uint16_t n);

/* Pins --bench-prefill synthetic established connections (source 172.16/12 range,
 * distinct from the generator's flows) so the tables hold a realistic live
 * population: connection i in worker i % n's table. */
void bench_prefill(struct hlb_worker *const *w, unsigned n, struct hlb_vip_table *t,
                   const struct options *o);

#endif
