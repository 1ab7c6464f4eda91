/* The Cheetah cookie in BPF (p4/COOKIE-SPEC.md): the maps shared by the XDP
 * decapsulator (ingress restore, below) and the cookie object (bpf/cookie.bpf.c: tc
 * egress encode, sockops keep-alive) -- each object declares them, the loader
 * (src/cookie_maps.c) makes the cookie object reuse the decapsulator's and may pin
 * them -- and the TCP segment parser both directions use. */
#ifndef HLB_COOKIE_BPF_H
#define HLB_COOKIE_BPF_H

#include <linux/bpf.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

__u64 cookie_hash_words(__u64 k0, __u64 k1, __u64 m0, __u64 m1, __u32 mode);
#define HLB_COOKIE_HASH_WORDS cookie_hash_words
#include "hlb_cookie.h"
#include "hlb_decap.h"

/* Global (not inlined) functions: the verifier checks each once, instead of along
 * every path that reaches it. */
__attribute__((noinline)) __u64 cookie_hash_words(__u64 k0, __u64 k1, __u64 m0, __u64 m1,
                                                  __u32 mode)
{
    return hlb_cookie_hash_words(k0, k1, m0, m1, mode);
}

/* An offset the verifier knows to be below 2048: the barrier keeps the compiler
 * from dropping the mask. */
static __always_inline __u32 cookie_bounded(__u32 off)
{
    __asm__ volatile("" : "+r"(off));
    return off & 0x7ff;
}

/* The option walk from XDP and from tc: offset of TSval in the options that start
 * opt_off bytes into the packet, or HLB_TS_NONE / HLB_TS_MALFORMED. */
__attribute__((noinline)) int cookie_walk_xdp(struct xdp_md *ctx, __u32 opt_off, __u32 len)
{
    void *data = (void *) (long) ctx->data, *end = (void *) (long) ctx->data_end;
    return hlb_tsval_walk((__u8 *) data + cookie_bounded(opt_off), end, len);
}

__attribute__((noinline)) int cookie_walk_skb(struct __sk_buff *ctx, __u32 opt_off, __u32 len)
{
    void *data = (void *) (long) ctx->data, *end = (void *) (long) ctx->data_end;
    return hlb_tsval_walk((__u8 *) data + cookie_bounded(opt_off), end, len);
}

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, HLB_COOKIE_MAX_CONNS);
    __type(key, struct hlb_cookie_tuple);
    __type(value, struct hlb_cookie_conn);
} hlb_cookie_conns SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LPM_TRIE);
    __uint(max_entries, HLB_COOKIE_MAX_VIPS);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, struct hlb_lpm_key);
    __type(value, struct hlb_cookie_vip);
} hlb_cookie_vips SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct hlb_cookie_host);
} hlb_cookie_host SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, HLB_CK_MAX);
    __type(key, __u32);
    __type(value, __u64);
} hlb_cookie_counters SEC(".maps");

static __always_inline void cookie_count(__u32 which)
{
    __u64 *c = bpf_map_lookup_elem(&hlb_cookie_counters, &which);
    if (c) {
        *c += 1;
    }
}

static __always_inline const struct hlb_cookie_vip *cookie_vip(__u32 addr)
{
    struct hlb_lpm_key k = { .prefixlen = 32, .addr = addr };
    return bpf_map_lookup_elem(&hlb_cookie_vips, &k);
}

static __always_inline const struct hlb_cookie_host *cookie_host(void)
{
    __u32 zero = 0;
    return bpf_map_lookup_elem(&hlb_cookie_host, &zero);
}

/* A TCP segment with its timestamp option located. */
struct cookie_seg {
    struct hlb_ip4 *ip;
    struct tcphdr *th;
    __u32 *ts;            /* TSval; TSecr is ts[1] */
    int slow;             /* found by the bounded walk */
    int odd;              /* TSval at an odd offset from the TCP header (checksum words) */
};

#define CK_SEG_OK 0
#define CK_SEG_NOT_TCP 1  /* not an unfragmented IPv4 TCP segment: none of our business */
#define CK_SEG_NO_TS 2    /* TCP without a timestamp option */
#define CK_SEG_BAD 3      /* TCP with a malformed option list */

/* ctx: the struct xdp_md (is_xdp) or struct __sk_buff whose packet holds ipv. */
static __always_inline int cookie_parse(void *ctx, int is_xdp, void *data, void *ipv, void *end,
                                        struct cookie_seg *s)
{
    struct hlb_ip4 *ip = ipv;
    if ((void *) (ip + 1) > end || ip->ver_ihl >> 4 != 4 || ip->protocol != HLB_IPPROTO_TCP
        || (bpf_ntohs(ip->frag_off) & 0x3fff)) {
        return CK_SEG_NOT_TCP;
    }
    __u32 ihl = (ip->ver_ihl & 0x0f) * 4;
    if (ihl < sizeof(*ip)) {
        return CK_SEG_NOT_TCP;
    }
    struct tcphdr *th = (void *) ((__u8 *) ip + (ihl & 60));
    if ((void *) (th + 1) > end) {
        return CK_SEG_NOT_TCP;
    }
    s->ip = ip;
    s->th = th;
    __u32 optlen = th->doff * 4;
    if (optlen < sizeof(*th) + 10) {
        return CK_SEG_NO_TS;
    }
    optlen -= sizeof(*th);
    __u8 *opt = (__u8 *) (th + 1);
    int off = hlb_tsval_fast(opt, end, optlen);
    s->slow = off < 0;
    if (s->slow) {
        __u32 opt_off = (__u32) ((void *) opt - data);
        off = is_xdp ? cookie_walk_xdp(ctx, opt_off, optlen) : cookie_walk_skb(ctx, opt_off, optlen);
    }
    if (off == HLB_TS_NONE) {
        return CK_SEG_NO_TS;
    }
    if (off < 0) {
        return CK_SEG_BAD;
    }
    __u32 *ts = (void *) (opt + (off & 63));
    if ((void *) (ts + 2) > end) {
        return CK_SEG_BAD;
    }
    s->ts = ts;
    s->odd = off & 1;
    return CK_SEG_OK;
}

/* Ingress, after decapsulation (§6, §7): restores TSecr of a segment to a cookie VIP,
 * or takes a stateful SMux's hint from a SYN.  Checksum updated in place (XDP has no
 * checksum helpers; the segment arrives with a complete checksum from the mux). */
static __always_inline void cookie_ingress(struct xdp_md *ctx, void *ip)
{
    void *data = (void *) (long) ctx->data, *end = (void *) (long) ctx->data_end;
    struct cookie_seg s;
    int rc = cookie_parse(ctx, 1, data, ip, end, &s);
    if (rc != CK_SEG_OK) {
        if (rc == CK_SEG_BAD && cookie_vip(((struct hlb_ip4 *) ip)->daddr)) {
            cookie_count(HLB_CK_BAD_OPTIONS);
        }
        return;
    }
    struct hlb_cookie_tuple key = { .vip = s.ip->daddr, .client = s.ip->saddr,
                                    .vip_port = s.th->dest, .client_port = s.th->source };
    __u32 wire = bpf_ntohl(s.ts[1]);
    __u32 restored;
    if (s.th->syn && !s.th->ack) {
        if (!cookie_vip(key.vip)) {
            return;
        }
        __u16 ident = hlb_cookie_syn_hint(wire);
        if (!ident) {
            /* A stateless connection: forget a hinted ident an earlier connection of
             * the same tuple left behind. */
            struct hlb_cookie_conn *old = bpf_map_lookup_elem(&hlb_cookie_conns, &key);
            if (old && (old->flags & HLB_CONN_HINTED)) {
                bpf_map_delete_elem(&hlb_cookie_conns, &key);
            }
            return;
        }
        struct hlb_cookie_conn c = { .ident = ident, .flags = HLB_CONN_HINTED };
        bpf_map_update_elem(&hlb_cookie_conns, &key, &c, BPF_ANY);
        cookie_count(HLB_CK_SYN_HINT);
        restored = 0;
    } else if (!s.th->ack) {
        return;
    } else {
        struct hlb_cookie_conn *c = bpf_map_lookup_elem(&hlb_cookie_conns, &key);
        if (c && (c->flags & HLB_CONN_HAS_LAST)) {
            __u16 cookie = hlb_cookie_of(wire);
            if (cookie != c->cookie && cookie != c->prev_cookie) {
                cookie_count(HLB_CK_MISROUTED);
            }
            restored = hlb_cookie_restore(wire, c->last_tsval);
            cookie_count(HLB_CK_RESTORED);
        } else {
            const struct hlb_cookie_vip *v = cookie_vip(key.vip);
            const struct hlb_cookie_host *h = cookie_host();
            if (!v || !h) {
                return;
            }
            cookie_count(HLB_CK_RESTORE_MISS);
            if (hlb_cookie_make(v, &key, h->server_id) != hlb_cookie_of(wire)) {
                cookie_count(HLB_CK_MISROUTED);
            } else if (h->server_id) {
                /* Our cookie: the connection carried cookies and lost its state (LRU
                 * eviction, a restart without --pin-dir).  Take it up again; the next
                 * segment out sets the newest TSval. */
                struct hlb_cookie_conn c = { .ident = h->server_id };
                bpf_map_update_elem(&hlb_cookie_conns, &key, &c, BPF_NOEXIST);
            }
            restored = 0;   /* no RTT sample from it: better than a wrong one */
        }
    }
    __u32 from = s.ts[1], to = bpf_htonl(restored);
    s.ts[1] = to;
    s.th->check = hlb_csum_replace4(s.th->check, hlb_csum_word(from, s.odd),
                                    hlb_csum_word(to, s.odd));
}

#endif
