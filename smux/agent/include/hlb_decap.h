/* Header-only encapsulation parser shared by the XDP decapsulator and the
 * user-space fallback, so both accept exactly the same packets, plus the
 * counter layout both export.
 *
 * Accepted: outer IPv4 (any IHL, not a fragment) carrying
 *   - IP-in-IP (protocol 4), or
 *   - GRE (protocol 47) version 0 without routing, optional checksum/key/
 *     sequence fields, protocol type 0x0800 (what the SMux and Open vSwitch's
 *     flow-based GRE port with packet_type=legacy_l3 emit),
 * around an inner IPv4 packet.  Everything else is left to the kernel.
 *
 * Both backends then decide in this order (the first rule that applies wins):
 *   1. not IP-in-IP/GRE                        pass_not_encap     (kernel)
 *   2. claims to be, but malformed             drop_malformed
 *   3. outer destination not a local address   pass_not_local     (kernel)
 *   4. outer IPv4 header checksum wrong        drop_bad_checksum
 *   5. outer source not an allowed mux         drop_unknown_mux
 *   6. inner destination not an allowed VIP    drop_not_vip
 *   7. decapsulated                            decap_ipip / decap_gre
 * Rules 5 and 6 keep any host that can reach a DIP from injecting packets
 * with a spoofed inner source, or relaying through the DIP host to an
 * address that is not a VIP.  Their lists hold IPv4 prefixes; 0.0.0.0/0
 * (the backends' default) accepts any address. */
#ifndef HLB_DECAP_H
#define HLB_DECAP_H

#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HLB_NTOHS(x) __builtin_bswap16(x)
#else
#define HLB_NTOHS(x) (x)
#endif

#define HLB_ENCAP_IPIP 1
#define HLB_ENCAP_GRE 2

#define HLB_IPPROTO_IPIP 4
#define HLB_IPPROTO_GRE 47
#define HLB_ETH_P_IP 0x0800

#define HLB_GRE_F_CSUM 0x8000
#define HLB_GRE_F_ROUTING 0x4000
#define HLB_GRE_F_KEY 0x2000
#define HLB_GRE_F_SEQ 0x1000
#define HLB_GRE_F_VERSION 0x0007

/* Maximum number of (VIP, mux, encap) counter entries kept (LRU beyond). */
#define HLB_MAX_VIP_COUNTERS 16384
#define HLB_MAX_LOCAL_ADDRS 64
/* Maximum number of prefixes in each allow-list (muxes, VIPs). */
#define HLB_MAX_ALLOWED 256

/* Per-packet verdict counters; names in hlb_counter_names below. */
enum hlb_counter {
    HLB_C_DECAP_IPIP,      /* decapsulated IP-in-IP, delivered */
    HLB_C_DECAP_GRE,       /* decapsulated GRE, delivered */
    HLB_C_PASS_NOT_ENCAP,  /* not IPv4 IP-in-IP/GRE: left to the kernel */
    HLB_C_PASS_NOT_LOCAL,  /* encapsulated, but not to one of our addresses */
    HLB_C_DROP_MALFORMED,  /* encapsulated but truncated or inner not IPv4 */
    HLB_C_DROP_DELIVER,    /* fallback only: TUN write failed */
    HLB_C_DROP_BAD_CHECKSUM, /* outer IPv4 header checksum wrong */
    HLB_C_DROP_UNKNOWN_MUX,  /* outer source not in the allowed muxes */
    HLB_C_DROP_NOT_VIP,      /* inner destination not in the allowed VIPs */
    HLB_C_MAX
};

#define HLB_COUNTER_NAMES \
    { "decap_ipip", "decap_gre", "pass_not_encap", "pass_not_local", \
      "drop_malformed", "drop_deliver", "drop_bad_checksum", "drop_unknown_mux", \
      "drop_not_vip" }

/* Key of the allow-lists as BPF LPM tries (the fallback keeps plain arrays). */
struct hlb_lpm_key {
    __u32 prefixlen;
    __u32 addr;    /* network order */
};

/* Addresses in network byte order. */
struct hlb_vip_key {
    __u32 vip;     /* inner destination */
    __u32 mux;     /* outer source: the HMux switch or SMux that sent it */
    __u32 encap;   /* HLB_ENCAP_* */
};

struct hlb_vip_val {
    __u64 packets;
    __u64 bytes;   /* inner IP bytes delivered */
};

struct hlb_encap_info {
    __u32 outer_len;   /* bytes from the outer IP header to the inner one */
    __u32 outer_src;
    __u32 outer_dst;
    __u32 inner_dst;
    __u32 inner_len;   /* inner IP total length */
    __u32 encap;
};

/* Minimal IPv4 header view (no bitfields: same layout in BPF and user space). */
struct hlb_ip4 {
    __u8 ver_ihl;
    __u8 tos;
    __u16 tot_len;
    __u16 id;
    __u16 frag_off;
    __u8 ttl;
    __u8 protocol;
    __u16 check;
    __u32 saddr;
    __u32 daddr;
};

/* Parses the IPv4 packet at 'ip' (ending at 'end').  Returns 1 when it is not
 * an IP-in-IP/GRE packet we handle (leave it alone), -1 when it claims to be
 * one but is malformed, 0 when 'info' is filled in. */
static __always_inline int hlb_parse_encap(const void *ip, const void *end,
                                           struct hlb_encap_info *info)
{
    const struct hlb_ip4 *outer = ip;
    if ((const void *) (outer + 1) > end) {
        return 1;
    }
    if ((outer->ver_ihl >> 4) != 4) {
        return 1;
    }
    __u32 ihl = (outer->ver_ihl & 0x0f) * 4;
    if (ihl < sizeof(struct hlb_ip4)) {
        return 1;
    }
    if (HLB_NTOHS(outer->frag_off) & 0x3fff) {   /* MF or offset: a fragment */
        return 1;
    }
    __u32 encap;
    __u32 len = ihl;
    if (outer->protocol == HLB_IPPROTO_IPIP) {
        encap = HLB_ENCAP_IPIP;
    } else if (outer->protocol == HLB_IPPROTO_GRE) {
        const __u16 *gre = (const void *) ((const __u8 *) ip + ihl);
        if ((const void *) (gre + 2) > end) {
            return -1;
        }
        __u16 flags = HLB_NTOHS(gre[0]);
        if ((flags & (HLB_GRE_F_ROUTING | HLB_GRE_F_VERSION)) || HLB_NTOHS(gre[1]) != HLB_ETH_P_IP) {
            return 1;   /* not a plain IPv4-over-GRE: maybe someone else's */
        }
        len += 4;
        len += (flags & HLB_GRE_F_CSUM) ? 4 : 0;
        len += (flags & HLB_GRE_F_KEY) ? 4 : 0;
        len += (flags & HLB_GRE_F_SEQ) ? 4 : 0;
        encap = HLB_ENCAP_GRE;
    } else {
        return 1;
    }
    const struct hlb_ip4 *inner = (const void *) ((const __u8 *) ip + len);
    if ((const void *) (inner + 1) > end) {
        return -1;
    }
    if ((inner->ver_ihl >> 4) != 4 || (inner->ver_ihl & 0x0f) < 5) {
        return -1;
    }
    __u32 inner_len = HLB_NTOHS(inner->tot_len);
    if (inner_len < sizeof(struct hlb_ip4)
        || (const __u8 *) inner + inner_len > (const __u8 *) end) {
        return -1;
    }
    info->outer_len = len;
    info->outer_src = outer->saddr;
    info->outer_dst = outer->daddr;
    info->inner_dst = inner->daddr;
    info->inner_len = inner_len;
    info->encap = encap;
    return 0;
}

/* 1 when the IPv4 header at 'ip' (IHL already checked to be >= 5) sums to
 * 0xffff in ones' complement, i.e. its checksum is right.  Once XDP has
 * decapsulated, the kernel checks only the inner header, and a NIC that finds
 * the outer one wrong still delivers the frame, so the decapsulators check it
 * themselves.  Byte order does not matter to a ones' complement sum. */
static __always_inline int hlb_ip4_header_checksum_ok(const void *ip, const void *end)
{
    const __u16 *word = ip;
    __u32 n_words = (((const struct hlb_ip4 *) ip)->ver_ihl & 0x0f) * 2;
    __u32 sum = 0;
    for (__u32 i = 0; i < 30; i++) {   /* 30 words: the longest header, 60 bytes */
        if (i >= n_words) {
            break;
        }
        const __u16 *w = word + i;
        /* Opaque to the optimizer, so that it cannot turn the bound check into
         * arithmetic on the end pointer, which the BPF verifier refuses. */
        __asm__ volatile("" : "+r"(w));
        if ((const void *) (w + 1) > end) {
            return 0;
        }
        sum += *w;
    }
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return sum == 0xffff;
}

#endif /* HLB_DECAP_H */
