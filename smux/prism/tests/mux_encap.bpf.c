/* The test topology's mux in miniature (tc egress on the router's link to the
 * front-end host, where the router routes the VIP): client packets to the VIP get
 * an outer IPv4 header (IP-in-IP, as the SMux and the HMux send them) from the
 * router to the VIP's front-end DIP host.  Everything else passes.  Configured
 * through the one-entry array mux_cfg.
 *
 * It plays the fabric of Prism's fabric steering too (mode b): mux_pin, on the
 * ingress of the router's link from the client, encapsulates a flow with a FORWARD
 * entry in mux_pins (the exact-match pin a controller installs on an HMux or SMux)
 * to that entry's DIP; the router then forwards it on the outer header, to the
 * backend's link.  Other packets pass to mux_encap. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "hlb_prism.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct mux_cfg {
    __u32 vip;        /* network order */
    __u32 outer_src;  /* the router's address */
    __u32 dip;        /* the front-end host */
    __u32 pin_src;    /* outer source of pinned packets: not the router's own (it
                         would drop a packet "from itself" arriving on a link) */
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct mux_cfg);
} mux_cfg SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, PRISM_MAX_FLOWS);
    __type(key, struct prism_flow_key);
    __type(value, struct prism_flow_val);
} mux_pins SEC(".maps");

static __always_inline __u16 csum_fold(__u32 sum)
{
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (__u16) ~sum;
}

/* Puts an outer IPv4 header (outer_src -> dip, IP-in-IP) in front of the packet. */
static __always_inline int encap(struct __sk_buff *skb, __u32 outer_src, __u32 dip, __u16 inner_len)
{
    if (bpf_skb_adjust_room(skb, sizeof(struct iphdr), BPF_ADJ_ROOM_MAC,
                            BPF_F_ADJ_ROOM_ENCAP_L3_IPV4)) {
        return TC_ACT_SHOT;
    }
    void *data = (void *) (long) skb->data, *end = (void *) (long) skb->data_end;
    struct iphdr *outer = (void *) ((struct ethhdr *) data + 1);
    if ((void *) (outer + 1) > end) {
        return TC_ACT_SHOT;
    }
    struct iphdr o = { .version = 4, .ihl = 5, .ttl = 64, .protocol = 4 /* IP-in-IP */,
                       .tot_len = bpf_htons(inner_len + sizeof(struct iphdr)),
                       .saddr = outer_src, .daddr = dip };
    __u32 sum = 0;
    __u16 *w = (__u16 *) &o;
#pragma unroll
    for (int i = 0; i < 10; i++) {
        sum += w[i];
    }
    o.check = csum_fold(sum);
    __builtin_memcpy(outer, &o, sizeof(o));
    return TC_ACT_OK;
}

/* mux_encap: every packet to the VIP, to the front-end host; pinned_only (mux_pin):
 * only the TCP packets of a pinned flow, to the pin's DIP. */
static __always_inline int mux(struct __sk_buff *skb, int pinned_only)
{
    __u32 zero = 0;
    struct mux_cfg *cfg = bpf_map_lookup_elem(&mux_cfg, &zero);
    void *data = (void *) (long) skb->data, *end = (void *) (long) skb->data_end;
    struct ethhdr *eth = data;
    struct iphdr *ip = (void *) (eth + 1);
    if (!cfg || (void *) (ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP)
        || ip->daddr != cfg->vip) {
        return TC_ACT_OK;
    }
    if (!pinned_only) {
        return encap(skb, cfg->outer_src, cfg->dip, bpf_ntohs(ip->tot_len));
    }
    struct tcphdr *tcp = (void *) (ip + 1);
    if (ip->protocol != IPPROTO_TCP || ip->ihl != 5 || (void *) (tcp + 1) > end) {
        return TC_ACT_OK;
    }
    struct prism_flow_key k = { .client = ip->saddr, .vip = ip->daddr,
                                .client_port = tcp->source, .vip_port = tcp->dest };
    struct prism_flow_val *pin = bpf_map_lookup_elem(&mux_pins, &k);
    if (!pin || pin->action != PRISM_STEER_FORWARD) {
        return TC_ACT_OK;
    }
    return encap(skb, cfg->pin_src, pin->owner_dip, bpf_ntohs(ip->tot_len));
}

SEC("tc")
int mux_encap(struct __sk_buff *skb)
{
    return mux(skb, 0);
}

SEC("tc")
int mux_pin(struct __sk_buff *skb)
{
    return mux(skb, 1);
}

/* Attached (native XDP) on the same router link: the front-end host's agent sends
 * steered packets back with XDP_TX, which a veth delivers only to a peer with NAPI
 * on.  GRO would turn NAPI on too, but it merges the tunnelled segments into
 * super-packets that the backends' native XDP cannot take; a program does not. */
SEC("xdp")
int router_xdp_pass(struct xdp_md *ctx)
{
    (void) ctx;
    return XDP_PASS;
}
