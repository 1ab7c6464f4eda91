/* Prism steering on the front-end host (mode a), inside the host agent's XDP
 * decapsulator (smux/agent/bpf/xdp_decap.bpf.c calls prism_steer() once a
 * tunnelled packet has passed its allow-lists, before it decapsulates).
 *
 * The mux sends every packet of a Prism VIP's connection to its front-end host.
 * While a backend owns the connection, the front end keeps a map entry:
 *   LOCKED   while the connection is being exported or imported: the packet is
 *            dropped, so no socket ACKs data that the moving state would miss
 *            and no host without the socket answers with an RST (TCP resends);
 *   FORWARD  the backend `owner_dip` holds it: the outer header is rewritten
 *            (source: this host, destination: the owner) and the packet goes back
 *            out (XDP_TX) to the owner's host agent, which decapsulates it.
 * The map (hlb_prism_flows) and the counters are pinned by the loader
 * (--prism-pin-dir) and written by the front end (smux/prism/frontend).
 *
 * On a backend host (--prism-backend, hlb_prism.h) prism_guard_unready() drops a
 * flow's segments until a socket of the flow is ready here, so the front end may
 * steer a flow to the backend before the backend has imported it.
 * Needs hlb_decap.h and hlb_cookie.h (checksum update) included first. */
#ifndef PRISM_STEER_BPF_H
#define PRISM_STEER_BPF_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "hlb_prism.h"

/* The one field of the kernel's tcp_sock read here (CO-RE: its offset comes from
 * the running kernel's BTF at load). */
struct tcp_sock {
    __u8 repair : 1;
} __attribute__((preserve_access_index));

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, PRISM_MAX_FLOWS);
    __type(key, struct prism_flow_key);
    __type(value, struct prism_flow_val);
} hlb_prism_flows SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u32);
} hlb_prism_backend SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, PRISM_C_MAX);
    __type(key, __u32);
    __type(value, __u64);
} hlb_prism_counters SEC(".maps");

static __always_inline void prism_count(__u32 which)
{
    __u64 *c = bpf_map_lookup_elem(&hlb_prism_counters, &which);
    if (c) {
        *c += 1;
    }
}

#define PRISM_CONTINUE (-1)

/* The inner TCP header of a tunnelled packet, NULL if there is none (in bounds
 * for its ports and flags). */
static __always_inline __u8 *prism_inner_tcp(struct xdp_md *ctx, struct ethhdr *eth,
                                             const struct hlb_encap_info *info,
                                             struct hlb_ip4 **inner_out)
{
    void *end = (void *) (long) ctx->data_end;
    struct hlb_ip4 *outer = (void *) (eth + 1);
    if ((void *) (outer + 1) > end) {
        return NULL;
    }
    /* hlb_parse_encap bounds outer_len by 60 + 16 bytes. */
    struct hlb_ip4 *inner = (void *) ((__u8 *) outer + (info->outer_len & 0x7f));
    if ((void *) (inner + 1) > end || inner->protocol != HLB_IPPROTO_TCP) {
        return NULL;
    }
    __u8 *tcp = (__u8 *) inner + (inner->ver_ihl & 0x0f) * 4;
    if ((void *) (tcp + 14) > end) {
        return NULL;
    }
    *inner_out = inner;
    return tcp;
}

/* PRISM_CONTINUE when the packet is not a steered flow's, else its verdict. */
static __always_inline int prism_steer(struct xdp_md *ctx, struct ethhdr *eth,
                                       const struct hlb_encap_info *info)
{
    struct hlb_ip4 *inner;
    __u8 *tcp = prism_inner_tcp(ctx, eth, info, &inner);
    if (!tcp) {
        return PRISM_CONTINUE;
    }
    __u16 *ports = (__u16 *) tcp;
    struct prism_flow_key key = { .client = inner->saddr, .vip = inner->daddr,
                                  .client_port = ports[0], .vip_port = ports[1] };
    struct prism_flow_val *v = bpf_map_lookup_elem(&hlb_prism_flows, &key);
    if (!v) {
        return PRISM_CONTINUE;
    }
    if (v->action != PRISM_STEER_FORWARD) {
        prism_count(PRISM_C_LOCKED_DROP);
        return XDP_DROP;
    }
    struct hlb_ip4 *outer = (void *) (eth + 1);
    /* Re-encapsulate: same tunnel, this host as source, the owner as destination. */
    __u32 old_src = outer->saddr, old_dst = outer->daddr;
    __u32 new_src = outer->daddr, new_dst = v->owner_dip;
    outer->saddr = new_src;
    outer->daddr = new_dst;
    outer->check = hlb_csum_replace4(outer->check, old_src, new_src);
    outer->check = hlb_csum_replace4(outer->check, old_dst, new_dst);
    /* Back to the router it came from. */
    __u8 mac[ETH_ALEN];
    __builtin_memcpy(mac, eth->h_source, ETH_ALEN);
    __builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
    __builtin_memcpy(eth->h_dest, mac, ETH_ALEN);
    prism_count(PRISM_C_FORWARDED);
    return XDP_TX;
}

#define PRISM_TCP_SYN 0x02

/* Backend hosts: PRISM_CONTINUE, or XDP_DROP for a segment of a flow that has
 * no ready socket here (hlb_prism.h, PRISM_BACKEND_MAP). */
static __always_inline int prism_guard_unready(struct xdp_md *ctx, struct ethhdr *eth,
                                               const struct hlb_encap_info *info)
{
    __u32 zero = 0;
    __u32 *on = bpf_map_lookup_elem(&hlb_prism_backend, &zero);
    if (!on || !*on) {
        return PRISM_CONTINUE;
    }
    struct hlb_ip4 *inner;
    __u8 *tcp = prism_inner_tcp(ctx, eth, info, &inner);
    if (!tcp || (tcp[13] & PRISM_TCP_SYN)) {
        return PRISM_CONTINUE;   /* a new connection is the listener's */
    }
    struct bpf_sock_tuple t = { .ipv4 = { .saddr = inner->saddr, .daddr = inner->daddr,
                                          .sport = ((__u16 *) tcp)[0],
                                          .dport = ((__u16 *) tcp)[1] } };
    struct bpf_sock *sk = bpf_skc_lookup_tcp(ctx, &t, sizeof t.ipv4, BPF_F_CURRENT_NETNS, 0);
    int ready = 0;
    if (sk) {
        if (sk->state == BPF_TCP_LISTEN) {
            ready = 0;   /* no connection socket: the listener would reset it */
        } else {
            struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
            ready = !tp || !BPF_CORE_READ_BITFIELD(tp, repair);   /* time-wait: the kernel's */
        }
        bpf_sk_release(sk);
    }
    if (ready) {
        return PRISM_CONTINUE;
    }
    prism_count(PRISM_C_UNREADY_DROP);
    return XDP_DROP;
}

#endif
