/* XDP decapsulator of the hybridlb host agent.
 *
 * IP-in-IP or GRE packets addressed to one of this host's underlay addresses
 * (map hlb_local_addrs), sent by an allowed mux (hlb_allowed_muxes) to an
 * allowed VIP (hlb_allowed_vips), lose their outer IP (+GRE) header here and
 * go up the stack as the client's original packet, to the VIP configured on
 * lo; the reply leaves with source VIP straight to the client (DSR).  The
 * rules and their order are those of hlb_decap.h, which the user-space
 * fallback follows too.  Per (VIP, mux, encap) packet/byte counters feed the
 * controller's traffic matrix.  A decapsulated TCP segment to a cookie VIP gets its
 * original TSecr back (Cheetah, bpf/cookie.bpf.h) before the kernel sees it. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "hlb_decap.h"
#include "cookie.bpf.h"
#include "prism_steer.bpf.h"   /* smux/prism/bpf: request hand-off steering */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, HLB_MAX_LOCAL_ADDRS);
    __type(key, __u32);      /* IPv4 address, network order */
    __type(value, __u8);
} hlb_local_addrs SEC(".maps");

/* Allow-lists of prefixes; the loader puts 0.0.0.0/0 in a list given empty. */
struct {
    __uint(type, BPF_MAP_TYPE_LPM_TRIE);
    __uint(max_entries, HLB_MAX_ALLOWED);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, struct hlb_lpm_key);
    __type(value, __u8);
} hlb_allowed_muxes SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LPM_TRIE);
    __uint(max_entries, HLB_MAX_ALLOWED);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, struct hlb_lpm_key);
    __type(value, __u8);
} hlb_allowed_vips SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
    __uint(max_entries, HLB_MAX_VIP_COUNTERS);
    __type(key, struct hlb_vip_key);
    __type(value, struct hlb_vip_val);
} hlb_vip_counters SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, HLB_C_MAX);
    __type(key, __u32);
    __type(value, __u64);
} hlb_counters SEC(".maps");

static __always_inline void count(__u32 which)
{
    __u64 *c = bpf_map_lookup_elem(&hlb_counters, &which);
    if (c) {
        *c += 1;
    }
}

static __always_inline void count_vip(const struct hlb_encap_info *info)
{
    struct hlb_vip_key key = { .vip = info->inner_dst, .mux = info->outer_src,
                               .encap = info->encap };
    struct hlb_vip_val *v = bpf_map_lookup_elem(&hlb_vip_counters, &key);
    if (v) {
        v->packets += 1;
        v->bytes += info->inner_len;
    } else {
        struct hlb_vip_val init = { .packets = 1, .bytes = info->inner_len };
        bpf_map_update_elem(&hlb_vip_counters, &key, &init, BPF_NOEXIST);
    }
}

SEC("xdp")
int hlb_xdp_decap(struct xdp_md *ctx)
{
    void *data = (void *) (long) ctx->data;
    void *end = (void *) (long) ctx->data_end;
    struct ethhdr *eth = data;

    if ((void *) (eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP)) {
        count(HLB_C_PASS_NOT_ENCAP);
        return XDP_PASS;
    }
    struct hlb_encap_info info;
    int rc = hlb_parse_encap(eth + 1, end, &info);
    if (rc > 0) {
        count(HLB_C_PASS_NOT_ENCAP);
        return XDP_PASS;
    }
    if (rc < 0) {
        count(HLB_C_DROP_MALFORMED);
        return XDP_DROP;
    }
    if (!bpf_map_lookup_elem(&hlb_local_addrs, &info.outer_dst)) {
        count(HLB_C_PASS_NOT_LOCAL);
        return XDP_PASS;
    }
    /* The drops below are XDP_DROP, not XDP_PASS: the kernel has no ipip/gre
     * module, so it would answer "protocol unreachable" to the (possibly
     * spoofed) outer source.  The fallback's raw sockets swallow these
     * packets silently, so both backends behave alike. */
    if (!hlb_ip4_header_checksum_ok(eth + 1, end)) {
        count(HLB_C_DROP_BAD_CHECKSUM);
        return XDP_DROP;
    }
    struct hlb_lpm_key mux = { .prefixlen = 32, .addr = info.outer_src };
    if (!bpf_map_lookup_elem(&hlb_allowed_muxes, &mux)) {
        count(HLB_C_DROP_UNKNOWN_MUX);
        return XDP_DROP;
    }
    struct hlb_lpm_key vip = { .prefixlen = 32, .addr = info.inner_dst };
    if (!bpf_map_lookup_elem(&hlb_allowed_vips, &vip)) {
        count(HLB_C_DROP_NOT_VIP);
        return XDP_DROP;
    }

    /* A Prism connection owned by a backend, or being moved: steered, not delivered. */
    int steered = prism_steer(ctx, eth, &info);
    if (steered != PRISM_CONTINUE) {
        return steered;
    }
    /* A backend host: a flow steered here before its import completes waits. */
    if (prism_guard_unready(ctx, eth, &info) != PRISM_CONTINUE) {
        return XDP_DROP;
    }

    /* Keep the Ethernet header, drop the outer IP (+GRE) header after it. */
    struct ethhdr saved;
    __builtin_memcpy(&saved, eth, sizeof(saved));
    if (bpf_xdp_adjust_head(ctx, (int) info.outer_len)) {
        count(HLB_C_DROP_MALFORMED);
        return XDP_DROP;
    }
    data = (void *) (long) ctx->data;
    end = (void *) (long) ctx->data_end;
    eth = data;
    if ((void *) (eth + 1) > end) {
        return XDP_DROP;
    }
    __builtin_memcpy(eth, &saved, sizeof(saved));
    cookie_ingress(ctx, eth + 1);

    count(info.encap == HLB_ENCAP_IPIP ? HLB_C_DECAP_IPIP : HLB_C_DECAP_GRE);
    count_vip(&info);
    return XDP_PASS;
}
