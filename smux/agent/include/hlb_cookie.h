/* The Cheetah cookie as the host agent writes and restores it (p4/COOKIE-SPEC.md;
 * section numbers below are that file's).  Header-only, for the BPF programs and for
 * user space alike: constants, map layouts, the keyed hashes, the TSval/TSecr
 * arithmetic, the timestamp option finder and the incremental checksum. */
#ifndef HLB_COOKIE_H
#define HLB_COOKIE_H

#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define HLB_COOKIE_MASK 0x7fffu         /* §2: 15 cookie bits */
#define HLB_COOKIE_STATEFUL 0x4000u     /* §4: ident bit 14 */
#define HLB_COOKIE_SERVER_ID_MAX 16383u
#define HLB_COOKIE_HINT_MAGIC 0xcee7u   /* §7: SYN TSecr = magic << 16 | ident */
#define HLB_COOKIE_KEEPALIVE_S 25       /* §6 */
#define HLB_IPPROTO_TCP 6

/* Sizes of the maps. */
#define HLB_COOKIE_MAX_CONNS 65536
#define HLB_COOKIE_MAX_VIPS 256

enum hlb_cookie_mode {
    HLB_COOKIE_SIPHASH13 = 1,
    HLB_COOKIE_CRC32C = 2,
};

/* Key of the per-connection state; network byte order.  The same tuple as §3, in
 * the order a map key packs well. */
struct hlb_cookie_tuple {
    __u32 vip;
    __u32 client;
    __u16 vip_port;
    __u16 client_port;
};

#define HLB_CONN_HAS_LAST 1   /* last_tsval is set: a segment was encoded */
#define HLB_CONN_HINTED 2     /* the ident came from a stateful SMux's SYN hint (§7) */
/* Written by a Prism importer (steering mode c, §14): nothing sent yet; until
 * HLB_CONN_HAS_LAST, last_tsval holds the wire TSval the client holds. */
#define HLB_CONN_PRISM_SEEN 4

/* Value of the LRU map hlb_cookie_conns. */
struct hlb_cookie_conn {
    __u32 last_tsval;   /* newest original TSval sent (host order), §6 */
    __u32 gen;          /* hlb_cookie_host.gen the cookie was computed under; 0: not yet */
    __u16 ident;        /* server id or stateful ident, §4 */
    __u16 cookie;
    __u16 prev_cookie;  /* the cookie before the last key change */
    __u16 flags;        /* HLB_CONN_* */
};

/* A record of the ring buffer hlb_cookie_closed: a connection the stateful SMux
 * hinted (§7) reached TCP_CLOSE on this host; the agent reports it to the owner. */
struct hlb_cookie_closed {
    struct hlb_cookie_tuple t;   /* network order, as in hlb_cookie_conns */
    __u16 ident;
    __u16 pad;
};

#define HLB_COOKIE_CLOSED_RING (256 * 1024)   /* bytes: 16,384 records */

/* Value of the LPM trie hlb_cookie_vips (key: struct hlb_lpm_key, hlb_decap.h). */
struct hlb_cookie_vip {
    __u64 k0;           /* key bytes 0-7, little-endian (§5) */
    __u64 k1;           /* key bytes 8-15 */
    __u32 mode;         /* enum hlb_cookie_mode */
    __u32 pad;
};

/* The one entry of the array hlb_cookie_host. */
struct hlb_cookie_host {
    __u32 gen;           /* > 0; the loader bumps it at every key or id change */
    __u16 server_id;     /* 1..16383; 0: cookies off */
    __u16 keepalive_s;   /* sockops keep-alive bound; 0: leave sockets alone */
    __u64 netns_cookie;  /* sockops acts only on sockets of this network namespace */
    __u32 flags;         /* HLB_COOKIE_HOST_* */
    __u32 pad;
};

/* sockops counts the ESTABLISHED connections to this host's VIPs (the loader's
 * --count-established, the agent's --load-metric connections); without it a
 * connection costs no socket storage and no state callbacks unless it is hinted. */
#define HLB_COOKIE_HOST_COUNT_ESTABLISHED 1u

enum hlb_cookie_counter {
    HLB_CK_ENCODED,
    HLB_CK_ENCODED_SLOW_PATH,
    HLB_CK_EGRESS_NO_TS,
    HLB_CK_EGRESS_NO_STATE,
    HLB_CK_RESTORED,
    HLB_CK_RESTORE_MISS,
    HLB_CK_MISROUTED,
    HLB_CK_SYN_HINT,
    HLB_CK_BAD_OPTIONS,
    HLB_CK_KEEPALIVE_SET,
    HLB_CK_CLOSE_REPORTED,   /* a hinted connection's close queued for the agent (§7) */
    HLB_CK_CLOSE_LOST,       /* ... found the ring full: the SMux's idle sweep frees it */
    HLB_CK_COUNTED,          /* connections counted ESTABLISHED (HLB_COOKIE_HOST_COUNT_ESTABLISHED) */
    HLB_CK_MAX
};

#define HLB_COOKIE_COUNTER_NAMES \
    { "encoded", "encoded_slow_path", "egress_no_ts", "egress_no_state", "restored", \
      "restore_miss", "misrouted", "syn_hint", "bad_options", "keepalive_set", \
      "close_reported", "close_lost", "counted" }

/* ------------------------------------------------------------------ §5 hashes */

#define HLB_ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define HLB_SIPROUND(v0, v1, v2, v3) do { \
        v0 += v1; v1 = HLB_ROTL64(v1, 13); v1 ^= v0; v0 = HLB_ROTL64(v0, 32); \
        v2 += v3; v3 = HLB_ROTL64(v3, 16); v3 ^= v2; \
        v0 += v3; v3 = HLB_ROTL64(v3, 21); v3 ^= v0; \
        v2 += v1; v1 = HLB_ROTL64(v1, 17); v1 ^= v2; v2 = HLB_ROTL64(v2, 32); \
    } while (0)

/* The 13 bytes of §3 as SipHash's two little-endian message words (the second one
 * carries the length, 13, in its top byte).  Addresses and ports in network order. */
static __always_inline void hlb_cookie_words(const struct hlb_cookie_tuple *t, __u64 *m0,
                                             __u64 *m1)
{
    const __u8 *vip = (const __u8 *) &t->vip, *cl = (const __u8 *) &t->client;
    const __u8 *vp = (const __u8 *) &t->vip_port, *cp = (const __u8 *) &t->client_port;
    *m0 = (__u64) vip[0] | (__u64) vip[1] << 8 | (__u64) vip[2] << 16 | (__u64) vip[3] << 24
          | (__u64) 6 << 32 | (__u64) vp[0] << 40 | (__u64) vp[1] << 48 | (__u64) cl[0] << 56;
    *m1 = (__u64) cl[1] | (__u64) cl[2] << 8 | (__u64) cl[3] << 16 | (__u64) cp[0] << 24
          | (__u64) cp[1] << 32 | (__u64) 13 << 56;
}

/* SipHash's initialisation constants ("somepseudorandomlygeneratedbytes"): the SMux's
 * vector burst hash (smux/src/cheetah.c) starts from these too. */
#define HLB_SIPHASH_IV0 0x736f6d6570736575ULL
#define HLB_SIPHASH_IV1 0x646f72616e646f6dULL
#define HLB_SIPHASH_IV2 0x6c7967656e657261ULL
#define HLB_SIPHASH_IV3 0x7465646279746573ULL

static __always_inline __u64 hlb_siphash13_words(__u64 k0, __u64 k1, __u64 m0, __u64 m1)
{
    __u64 v0 = k0 ^ HLB_SIPHASH_IV0, v1 = k1 ^ HLB_SIPHASH_IV1;
    __u64 v2 = k0 ^ HLB_SIPHASH_IV2, v3 = k1 ^ HLB_SIPHASH_IV3;
    v3 ^= m0;
    HLB_SIPROUND(v0, v1, v2, v3);
    v0 ^= m0;
    v3 ^= m1;
    HLB_SIPROUND(v0, v1, v2, v3);
    v0 ^= m1;
    v2 ^= 0xff;
    HLB_SIPROUND(v0, v1, v2, v3);
    HLB_SIPROUND(v0, v1, v2, v3);
    HLB_SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

/* CRC-32C a nibble at a time: a 16-entry table, small enough for the BPF stack. */
static __always_inline __u32 hlb_crc32c_u64le(__u32 crc, __u64 w, int n)
{
    const __u32 nibble[16] = {
        0x00000000u, 0x105ec76fu, 0x20bd8edeu, 0x30e349b1u,
        0x417b1dbcu, 0x5125dad3u, 0x61c69362u, 0x7198540du,
        0x82f63b78u, 0x92a8fc17u, 0xa24bb5a6u, 0xb21572c9u,
        0xc38d26c4u, 0xd3d3e1abu, 0xe330a81au, 0xf36e6f75u
    };
#ifdef __clang__
#pragma unroll
#endif
    for (int i = 0; i < 16; i++) {   /* n bytes = 2n nibbles, low nibble first */
        if (i < 2 * n) {
            crc = (crc >> 4) ^ nibble[(crc ^ (__u32) (w >> (4 * i))) & 0xf];
        }
    }
    return crc;
}

/* CRC-32C(key || tuple), §5; only for pipelines that cannot do SipHash. */
static __always_inline __u32 hlb_crc32c_words(__u64 k0, __u64 k1, __u64 m0, __u64 m1)
{
    __u32 crc = 0xffffffffu;
    crc = hlb_crc32c_u64le(crc, k0, 8);
    crc = hlb_crc32c_u64le(crc, k1, 8);
    crc = hlb_crc32c_u64le(crc, m0, 8);
    crc = hlb_crc32c_u64le(crc, m1, 5);
    return crc ^ 0xffffffffu;
}

/* H(key, tuple) of §5 for the tuple's message words. */
static __always_inline __u64 hlb_cookie_hash_words(__u64 k0, __u64 k1, __u64 m0, __u64 m1,
                                                   __u32 mode)
{
    return mode == HLB_COOKIE_CRC32C ? hlb_crc32c_words(k0, k1, m0, m1)
                                     : hlb_siphash13_words(k0, k1, m0, m1);
}

/* In BPF the hash is a separate function (bpf/cookie.bpf.h), verified once instead
 * of along every path that reaches it. */
#ifndef HLB_COOKIE_HASH_WORDS
#define HLB_COOKIE_HASH_WORDS hlb_cookie_hash_words
#endif

static __always_inline __u16 hlb_cookie_make(const struct hlb_cookie_vip *v,
                                             const struct hlb_cookie_tuple *t, __u16 ident)
{
    __u64 m0, m1;
    hlb_cookie_words(t, &m0, &m1);
    __u64 h = HLB_COOKIE_HASH_WORDS(v->k0, v->k1, m0, m1, v->mode);
    return (__u16) ((ident ^ h) & HLB_COOKIE_MASK);
}

/* ------------------------------------------------------------------ §2, §6 */

static __always_inline __u32 hlb_cookie_encode(__u32 tsval, __u16 cookie)
{
    return (tsval & 0x10000u) << 15 | (__u32) (cookie & HLB_COOKIE_MASK) << 16 | (tsval & 0xffffu);
}

static __always_inline __u16 hlb_cookie_of(__u32 wire)
{
    return (wire >> 16) & HLB_COOKIE_MASK;
}

/* The original TSval 'wire' echoes, given the newest original TSval sent; exact for
 * echoes in (last - 2^17, last]. */
static __always_inline __u32 hlb_cookie_restore(__u32 wire, __u32 last)
{
    __u32 hi = last >> 16;
    hi = (hi - ((hi ^ (wire >> 31)) & 1)) & 0xffffu;
    __u32 cand = hi << 16 | (wire & 0xffffu);
    if ((__s32) (cand - last) > 0) {
        cand -= 1u << 17;
    }
    return cand;
}

/* The ident a stateful SMux put in a SYN's TSecr (§7), or 0 when there is none. */
static __always_inline __u16 hlb_cookie_syn_hint(__u32 tsecr)
{
    if ((tsecr >> 16) == HLB_COOKIE_HINT_MAGIC && (tsecr & 0xc000u) == HLB_COOKIE_STATEFUL) {
        return (__u16) (tsecr & HLB_COOKIE_MASK);
    }
    return 0;
}

/* ------------------------------------------------------------------ §10 options */

#define HLB_TS_NONE (-1)
#define HLB_TS_MALFORMED (-2)



/* Offset of the TSval inside the options area 'opt' of 'len' bytes for the fast
 * layouts of §10, or -1.  'end' bounds every read (the packet end in BPF). */
static __always_inline int hlb_tsval_fast(const __u8 *opt, const void *end, __u32 len)
{
    if (len >= 12 && (const void *) (opt + 12) <= end) {
        /* NOP NOP TS(10) */
        if (opt[0] == 1 && opt[1] == 1 && opt[2] == 8 && opt[3] == 10) {
            return 4;
        }
        /* Linux SYN-ACK: MSS(4), then SACK-permitted + TS, or NOP NOP TS */
        if (len >= 16 && (const void *) (opt + 16) <= end && opt[0] == 2 && opt[1] == 4
            && opt[6] == 8 && opt[7] == 10
            && ((opt[4] == 4 && opt[5] == 2) || (opt[4] == 1 && opt[5] == 1))) {
            return 8;
        }
    }
    return HLB_TS_NONE;
}

/* The bounded walk of §10: offset of the TSval, HLB_TS_NONE or HLB_TS_MALFORMED. */
static __always_inline int hlb_tsval_walk(const __u8 *opt, const void *end, __u32 len)
{
    __u32 off = 0;
    for (int i = 0; i < 20; i++) {
        if (off >= len || off >= 40) {
            return HLB_TS_NONE;
        }
        const __u8 *p = opt + (off & 63);
        /* Opaque to the optimizer so that the bound check stays a pointer compare,
         * which the BPF verifier accepts. */
        __asm__ volatile("" : "+r"(p));
        if ((const void *) (p + 1) > end) {
            return HLB_TS_MALFORMED;
        }
        __u8 kind = p[0];
        if (kind == 0) {                 /* EOL */
            return HLB_TS_NONE;
        }
        if (kind == 1) {                 /* NOP */
            off += 1;
            continue;
        }
        if ((const void *) (p + 2) > end || off + 2 > len) {
            return HLB_TS_MALFORMED;
        }
        __u8 olen = p[1];
        if (olen < 2 || off + olen > len) {
            return HLB_TS_MALFORMED;
        }
        if (kind == 8) {
            return olen == 10 ? (int) off + 2 : HLB_TS_MALFORMED;
        }
        off += olen;
    }
    return HLB_TS_NONE;
}

/* ------------------------------------------------------------------ checksum */

/* A 32-bit packet word as the TCP checksum sees it: 'raw' as loaded from memory
 * (bytes b0 b1 b2 b3); at an odd offset from the TCP header, the checksum's 16-bit
 * words pair them as (b1 b2) (b3 b0), i.e. the bytes rotated by one. */
static __always_inline __u32 hlb_csum_word(__u32 raw, int odd)
{
    if (!odd) {
        return raw;
    }
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return raw >> 8 | raw << 24;
#else
    return raw << 8 | raw >> 24;
#endif
}

/* RFC 1624 incremental update of a ones' complement checksum field for a 32-bit
 * word changing from 'from' to 'to' (both as stored in the packet). */
static __always_inline __u16 hlb_csum_replace4(__u16 check, __u32 from, __u32 to)
{
    __u32 sum = (__u16) ~check;
    sum += (__u16) ~from + (__u16) ~(from >> 16);
    sum += (__u16) to + (__u16) (to >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (__u16) ~sum;
}

#endif /* HLB_COOKIE_H */
