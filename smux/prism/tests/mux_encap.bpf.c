/* The test topology's mux in miniature (tc egress on the router's link to the
 * front-end host, where the router routes the VIP): client packets to the VIP get
 * an outer IPv4 header (IP-in-IP, as the SMux and the HMux send them) from the
 * router to the VIP's front-end DIP host.  Everything else passes.  Configured
 * through the one-entry array mux_cfg. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct mux_cfg {
    __u32 vip;        /* network order */
    __u32 outer_src;  /* the router's address */
    __u32 dip;        /* the front-end host */
    __u32 pad;
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct mux_cfg);
} mux_cfg SEC(".maps");

static __always_inline __u16 csum_fold(__u32 sum)
{
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (__u16) ~sum;
}

SEC("tc")
int mux_encap(struct __sk_buff *skb)
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
    __u16 inner_len = bpf_ntohs(ip->tot_len);
    if (bpf_skb_adjust_room(skb, sizeof(struct iphdr), BPF_ADJ_ROOM_MAC,
                            BPF_F_ADJ_ROOM_ENCAP_L3_IPV4)) {
        return TC_ACT_SHOT;
    }
    data = (void *) (long) skb->data;
    end = (void *) (long) skb->data_end;
    struct iphdr *outer = (void *) ((struct ethhdr *) data + 1);
    if ((void *) (outer + 1) > end) {
        return TC_ACT_SHOT;
    }
    struct iphdr o = { .version = 4, .ihl = 5, .ttl = 64, .protocol = 4 /* IP-in-IP */,
                       .tot_len = bpf_htons(inner_len + sizeof(struct iphdr)),
                       .saddr = cfg->outer_src, .daddr = cfg->dip };
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
