/* Replica of the bucket choice Open vSwitch 3.1 makes for an OpenFlow select
 * group WITHOUT a selection_method: what every OpenFlow 1.3 controller (ONOS)
 * programs, since OF1.3 has no way to name one.
 *
 * OVS then uses its "dp_hash" method when the group's weights allow it
 * (ofproto/ofproto-dpif.c group_set_selection_method, group_setup_dp_hash_table
 * with at most 64 hash values): the datapath computes
 *   dp_hash = flow_hash_symmetric_l3l4(flow, basis 0, UDP ports not included)
 * (hash action OVS_HASH_ALG_SYM_L4, lib/odp-execute.c: the userspace datapath;
 * the Linux kernel datapath hashes differently), recirculates, and the
 * bucket is hash_map[dp_hash & (n_hash - 1)], a table of n_hash slots dealt to
 * the buckets by the Webster (Sainte-Laguë) method in bucket order.
 *
 * Consequences callers must know:
 *  - the hash is symmetric (src ^ dst) and ignores UDP ports: every UDP flow
 *    between the same two addresses picks the same bucket;
 *  - n_hash = max(16, next power of two >= ceil(total weight / smallest
 *    non-zero weight)); above 64 OVS falls back to its "default" method,
 *    which hashes Ethernet addresses and cannot be replicated by a mux that
 *    sees other MACs: hlb_ovs_dphash_slots() reports that case;
 *  - weight-0 buckets never get a slot;
 *  - adding or removing a bucket re-deals the slots of all of them (this is
 *    not consistent hashing): connections move unless pinned;
 *  - OVS reads a dp_hash of 0 as "not computed yet" and would hash again; a
 *    flow whose hash is exactly 0 (1 in 2^32) is not modelled beyond slot 0.
 *
 * Verified against a live ovs-vswitchd (real packets through netdev-dummy
 * ports, one output port per bucket) by smux/tests/agent_ovs_dphash_agreement.py.
 * Written from a reading of those OVS functions; no OVS code is copied. */
#ifndef HLB_OVS_DPHASH_H
#define HLB_OVS_DPHASH_H

#include <stdint.h>
#include "hlb_ovs_hash.h"   /* struct hlb_5tuple */

#ifdef __cplusplus
extern "C" {
#endif

/* OVS's limit on hash values for a group without selection_method. */
#define HLB_OVS_DPHASH_MAX_SLOTS 64
/* Buckets hlb_ovs_dphash_fill() accepts (the SMux's pool limit). */
#define HLB_OVS_DPHASH_MAX_BUCKETS 4096

/* dp_hash of an unfragmented IPv4 packet (OVS_HASH_ALG_SYM_L4, basis 0).
 * Ports count only for TCP (6) and SCTP (132). */
uint32_t hlb_ovs_dphash_sym_l4(const struct hlb_5tuple *t);

/* Number of hash slots OVS uses for buckets of these weights (16, 32 or 64);
 * 0 when there is no bucket or every weight is 0 (OVS: no live bucket, the
 * packet is dropped); -1 when more than 64 would be needed (OVS falls back
 * to its MAC-dependent default hash). */
int hlb_ovs_dphash_slots(const uint16_t *weights, int n);

/* Deals n_slots slots (from hlb_ovs_dphash_slots(), > 0) to the buckets as
 * OVS does: map[slot] = bucket index 0..n-1. */
void hlb_ovs_dphash_fill(const uint16_t *weights, int n, int n_slots, uint32_t *map);

#ifdef __cplusplus
}
#endif

#endif /* HLB_OVS_DPHASH_H */
