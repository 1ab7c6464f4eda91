/* hlb_pkt.h — header-only packet parsing and flow hashing shared by every hybridlb
 * datapath (the DPDK SMux, its EAL-free unit tests and fuzzers, and any XDP/pcap tool),
 * so they agree bit for bit on what a packet is and which flow it belongs to.
 *
 * Only <stdint.h>/<string.h>; no allocation, no globals besides const tables.
 * All multi-byte header fields are kept in NETWORK byte order unless a name says
 * otherwise (..._h = host order).
 */
#ifndef HLB_PKT_H
#define HLB_PKT_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#if defined(__SSE4_2__)
#include <nmmintrin.h>  /* CRC32 instructions */
#endif

#include "hlb_ovs_hash.h"   /* struct hlb_5tuple (shared with the OVS hash replica) */

#ifdef __cplusplus
extern "C" {
#endif

#define HLB_ETH_HLEN        14
#define HLB_ETHERTYPE_IPV4  0x0800
#define HLB_ETHERTYPE_ARP   0x0806
#define HLB_ETHERTYPE_VLAN  0x8100
#define HLB_IPPROTO_ICMP    1
#define HLB_IPPROTO_IPIP    4
#define HLB_IPPROTO_TCP     6
#define HLB_IPPROTO_UDP     17
#define HLB_IPPROTO_GRE     47
#define HLB_IP_DF           0x4000
#define HLB_IP_MF           0x2000
#define HLB_IP_OFFMASK      0x1fff

#define HLB_TCP_FIN 0x01
#define HLB_TCP_SYN 0x02
#define HLB_TCP_RST 0x04
#define HLB_TCP_ACK 0x10

static inline uint16_t hlb_bswap16(uint16_t x) { return (uint16_t)((x << 8) | (x >> 8)); }
static inline uint32_t hlb_bswap32(uint32_t x) { return __builtin_bswap32(x); }
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define hlb_htons(x) hlb_bswap16((uint16_t)(x))
#define hlb_ntohs(x) hlb_bswap16((uint16_t)(x))
#define hlb_htonl(x) hlb_bswap32((uint32_t)(x))
#define hlb_ntohl(x) hlb_bswap32((uint32_t)(x))
#else
#define hlb_htons(x) ((uint16_t)(x))
#define hlb_ntohs(x) ((uint16_t)(x))
#define hlb_htonl(x) ((uint32_t)(x))
#define hlb_ntohl(x) ((uint32_t)(x))
#endif

struct hlb_eth_hdr {
    uint8_t  dst[6];
    uint8_t  src[6];
    uint16_t type;
} __attribute__((packed));

struct hlb_ipv4_hdr {
    uint8_t  ver_ihl;
    uint8_t  tos;
    uint16_t tot_len;
    uint16_t id;
    uint16_t frag_off;
    uint8_t  ttl;
    uint8_t  proto;
    uint16_t csum;
    uint32_t src;
    uint32_t dst;
} __attribute__((packed));

struct hlb_gre_hdr {            /* RFC 2784 base header, no optional fields */
    uint16_t flags_ver;
    uint16_t proto;
} __attribute__((packed));

struct hlb_icmp_hdr {
    uint8_t  type;
    uint8_t  code;
    uint16_t csum;
    uint16_t unused;
    uint16_t next_mtu;          /* RFC 1191 next-hop MTU (type 3 code 4) */
} __attribute__((packed));

struct hlb_arp_ipv4 {           /* Ethernet/IPv4 ARP body */
    uint16_t htype;
    uint16_t ptype;
    uint8_t  hlen;
    uint8_t  plen;
    uint16_t op;
    uint8_t  sha[6];
    uint32_t spa;
    uint8_t  tha[6];
    uint32_t tpa;
} __attribute__((packed));

#define HLB_ARP_REQUEST 1
#define HLB_ARP_REPLY   2

/* Why a frame is not a forwardable IPv4 packet.  HLB_PARSE_IPV4 and HLB_PARSE_ARP
 * are the two "good" outcomes; everything else is a drop reason. */
enum hlb_parse_result {
    HLB_PARSE_IPV4 = 0,
    HLB_PARSE_ARP,
    HLB_PARSE_TRUNCATED,      /* shorter than the headers it announces */
    HLB_PARSE_NOT_IPV4,       /* other ethertype (IPv6, LLDP, VLAN-tagged, ...) */
    HLB_PARSE_BAD_IP,         /* version/IHL/total length/checksum wrong */
    HLB_PARSE_FRAGMENT,       /* IPv4 fragment: no reliable L4 ports */
    HLB_PARSE_BAD_ARP,        /* ARP that is not Ethernet/IPv4 */
};

struct hlb_parsed {
    struct hlb_5tuple t;      /* network order; ports 0 unless TCP/UDP */
    uint16_t l3_off;          /* offset of the IPv4 (or ARP) header */
    uint16_t ip_tot_len;      /* host order, from the IPv4 header */
    uint16_t ip_hlen;         /* IPv4 header length in bytes */
    uint8_t  tcp_flags;       /* 0 unless TCP */
    uint8_t  df;              /* inner DF bit set */
};

/* One's complement sum of 16-bit words, not folded. */
static inline uint32_t hlb_csum_partial(const void *buf, size_t len, uint32_t sum)
{
    const uint8_t *p = (const uint8_t *)buf;
    while (len >= 2) {
        uint16_t w;
        memcpy(&w, p, 2);
        sum += w;
        p += 2;
        len -= 2;
    }
    if (len) {
        uint16_t w = 0;
        memcpy(&w, p, 1);
        sum += w;
    }
    return sum;
}

static inline uint16_t hlb_csum_fold(uint32_t sum)
{
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* Checksum of an IPv4 header (len a multiple of 4, >= 20), ready to store. */
static inline uint16_t hlb_ip_csum(const void *hdr, size_t len)
{
    const uint8_t *p = (const uint8_t *)hdr;
    uint64_t sum = 0;
    if (len == 20) {                  /* no options: the usual case, unrolled */
        uint64_t a, b;
        uint32_t c;
        memcpy(&a, p, 8);
        memcpy(&b, p + 8, 8);
        memcpy(&c, p + 16, 4);
        sum = (a & 0xffffffffu) + (a >> 32) + (b & 0xffffffffu) + (b >> 32) + c;
    } else {
        for (size_t i = 0; i < len; i += 4) {
            uint32_t w;
            memcpy(&w, p + i, 4);
            sum += w;
        }
    }
    sum = (sum & 0xffffffffu) + (sum >> 32);
    sum = (sum & 0xffffffffu) + (sum >> 32);
    return hlb_csum_fold((uint32_t)(sum & 0xffff) + (uint32_t)(sum >> 16));
}

/* Internet checksum of buf, ready to store (network order). */
static inline uint16_t hlb_csum(const void *buf, size_t len)
{
    return hlb_csum_fold(hlb_csum_partial(buf, len, 0));
}

/* Parse an Ethernet frame.  Only untagged Ethernet II carrying IPv4 or ARP is
 * accepted; IPv4 must have a valid header checksum, a total length that fits in
 * the frame, and not be a fragment.  Ports are read for TCP and UDP only and only
 * when the L4 header is fully present (a truncated L4 header is TRUNCATED). */
static inline enum hlb_parse_result
hlb_parse(const uint8_t *pkt, uint32_t len, struct hlb_parsed *out)
{
    struct hlb_eth_hdr eth;
    struct hlb_ipv4_hdr ip;

    out->t.src_port = out->t.dst_port = 0;
    out->tcp_flags = 0;
    if (len < HLB_ETH_HLEN)
        return HLB_PARSE_TRUNCATED;
    memcpy(&eth, pkt, sizeof(eth));
    out->l3_off = HLB_ETH_HLEN;
    if (eth.type == hlb_htons(HLB_ETHERTYPE_ARP)) {
        struct hlb_arp_ipv4 arp;
        if (len < HLB_ETH_HLEN + sizeof(arp))
            return HLB_PARSE_TRUNCATED;
        memcpy(&arp, pkt + HLB_ETH_HLEN, sizeof(arp));
        if (arp.htype != hlb_htons(1) || arp.ptype != hlb_htons(HLB_ETHERTYPE_IPV4) ||
            arp.hlen != 6 || arp.plen != 4)
            return HLB_PARSE_BAD_ARP;
        return HLB_PARSE_ARP;
    }
    if (eth.type != hlb_htons(HLB_ETHERTYPE_IPV4))
        return HLB_PARSE_NOT_IPV4;
    if (len < HLB_ETH_HLEN + sizeof(ip))
        return HLB_PARSE_TRUNCATED;
    memcpy(&ip, pkt + HLB_ETH_HLEN, sizeof(ip));
    if ((ip.ver_ihl >> 4) != 4 || (ip.ver_ihl & 0xf) < 5)
        return HLB_PARSE_BAD_IP;
    uint16_t hlen = (uint16_t)((ip.ver_ihl & 0xf) * 4);
    uint16_t tot = hlb_ntohs(ip.tot_len);
    if (tot < hlen)
        return HLB_PARSE_BAD_IP;
    if (len < (uint32_t)HLB_ETH_HLEN + hlen || len < (uint32_t)HLB_ETH_HLEN + tot)
        return HLB_PARSE_TRUNCATED;
    if (hlb_ip_csum(pkt + HLB_ETH_HLEN, hlen) != 0)
        return HLB_PARSE_BAD_IP;
    uint16_t frag = hlb_ntohs(ip.frag_off);
    if (frag & (HLB_IP_MF | HLB_IP_OFFMASK))
        return HLB_PARSE_FRAGMENT;

    out->ip_hlen = hlen;
    out->ip_tot_len = tot;
    out->df = (frag & HLB_IP_DF) ? 1 : 0;
    out->t.src_ip = ip.src;
    out->t.dst_ip = ip.dst;
    out->t.proto = ip.proto;

    const uint8_t *l4 = pkt + HLB_ETH_HLEN + hlen;
    uint16_t l4len = (uint16_t)(tot - hlen);
    if (ip.proto == HLB_IPPROTO_TCP) {
        if (l4len < 20)
            return HLB_PARSE_TRUNCATED;
        memcpy(&out->t.src_port, l4, 2);
        memcpy(&out->t.dst_port, l4 + 2, 2);
        out->tcp_flags = l4[13];
    } else if (ip.proto == HLB_IPPROTO_UDP) {
        if (l4len < 8)
            return HLB_PARSE_TRUNCATED;
        memcpy(&out->t.src_port, l4, 2);
        memcpy(&out->t.dst_port, l4 + 2, 2);
    }
    return HLB_PARSE_IPV4;
}

/* The common frame (untagged IPv4 without options, not a fragment, TCP with its full
 * header or UDP) parsed with a few wide loads.  It accepts only frames that
 * hlb_parse() accepts as HLB_PARSE_IPV4 and fills the same fields (dp-pkt checks
 * this on mutated frames); on 0 the caller runs hlb_parse(), which decides
 * everything else. */
static inline __attribute__((always_inline)) int
hlb_parse_fast(const uint8_t *d, uint32_t len, struct hlb_parsed *pp)
{
    if (len < HLB_ETH_HLEN + 20 + 8)
        return 0;
    uint16_t type;
    uint64_t a, b;                     /* IPv4 bytes 0..7 and 8..15 */
    uint32_t c;                        /* bytes 16..19: destination */
    memcpy(&type, d + 12, 2);
    memcpy(&a, d + HLB_ETH_HLEN, 8);
    memcpy(&b, d + HLB_ETH_HLEN + 8, 8);
    memcpy(&c, d + HLB_ETH_HLEN + 16, 4);
    if (type != hlb_htons(HLB_ETHERTYPE_IPV4) || (uint8_t)a != 0x45)
        return 0;
    uint16_t frag = (uint16_t)(a >> 48);                  /* network order */
    uint8_t proto = (uint8_t)(b >> 8);
    uint32_t l4min = proto == HLB_IPPROTO_TCP ? 20u : proto == HLB_IPPROTO_UDP ? 8u : 0u;
    uint32_t tot = hlb_ntohs((uint16_t)(a >> 16));
    if ((frag & hlb_htons(HLB_IP_MF | HLB_IP_OFFMASK)) || !l4min || tot < 20u + l4min ||
        HLB_ETH_HLEN + tot > len)
        return 0;
    /* The header checksum is right when the one's complement sum of its ten 16-bit
     * words folds to 0xffff, that is when their plain sum is a non-zero multiple of
     * 0xffff (folding keeps the value modulo 0xffff; the sum is non-zero since the
     * first byte is 0x45).  Each 32-bit half is two words w1 * 65536 + w0, equal to
     * w1 + w0 modulo 0xffff, in either byte order.  Divisibility by the odd 0xffff
     * is one multiplication by its inverse modulo 2^64 and a comparison. */
    uint64_t sum = (a & 0xffffffffu) + (a >> 32) + (b & 0xffffffffu) + (b >> 32) + c;
    if (sum * 0xfffefffefffeffffull > UINT64_MAX / 0xffffu)
        return 0;                      /* bad checksum: hlb_parse() counts it */
    uint32_t ports;
    memcpy(&ports, d + HLB_ETH_HLEN + 20, 4);
    pp->t.src_ip = (uint32_t)(b >> 32);
    pp->t.dst_ip = c;
    pp->t.proto = proto;
    pp->t.src_port = (uint16_t)ports;
    pp->t.dst_port = (uint16_t)(ports >> 16);
    pp->tcp_flags = proto == HLB_IPPROTO_TCP ? d[HLB_ETH_HLEN + 20 + 13] : 0;
    pp->l3_off = HLB_ETH_HLEN;
    pp->ip_hlen = 20;
    pp->ip_tot_len = (uint16_t)tot;
    pp->df = (frag & hlb_htons(HLB_IP_DF)) ? 1 : 0;
    return 1;
}

/* ---- CRC32 over the 5-tuple (spec: p4/HASH-SPEC.md) ----------------------------
 * CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, init 0xFFFFFFFF, final XOR
 * 0xFFFFFFFF) over the 13 bytes
 *   dst_ip[4] proto[1] dst_port[2] src_ip[4] src_port[2]
 * each in network byte order.  The fields a service fixes come first, so the CRC
 * register after them is computed once per service, and a packet adds its source
 * address and port: two SSE4.2 CRC32 instructions (three for a service on every
 * port, whose destination port varies). */

/* One byte into the CRC-32C register, bit by bit: the portable form, and the reference
 * the instruction form is tested against. */
static inline uint32_t hlb_crc32c_sw_u8(uint32_t crc, uint8_t v)
{
    crc ^= v;
    for (int k = 0; k < 8; k++)
        crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1u)));
    return crc;
}

/* The CRC-32C register after the bytes of v as they lie in memory (v loaded from the
 * frame: network order), without init or final XOR. */
#if defined(__SSE4_2__)
static inline uint32_t hlb_crc32c_u8(uint32_t crc, uint8_t v) { return _mm_crc32_u8(crc, v); }
static inline uint32_t hlb_crc32c_u16(uint32_t crc, uint16_t v) { return _mm_crc32_u16(crc, v); }
static inline uint32_t hlb_crc32c_u32(uint32_t crc, uint32_t v) { return _mm_crc32_u32(crc, v); }
#else
static inline uint32_t hlb_crc32c_u8(uint32_t crc, uint8_t v) { return hlb_crc32c_sw_u8(crc, v); }
static inline uint32_t hlb_crc32c_u16(uint32_t crc, uint16_t v)
{
    uint8_t b[2];
    memcpy(b, &v, 2);
    return hlb_crc32c_sw_u8(hlb_crc32c_sw_u8(crc, b[0]), b[1]);
}
static inline uint32_t hlb_crc32c_u32(uint32_t crc, uint32_t v)
{
    uint8_t b[4];
    memcpy(b, &v, 4);
    for (int k = 0; k < 4; k++)
        crc = hlb_crc32c_sw_u8(crc, b[k]);
    return crc;
}
#endif

/* CRC-32C of n bytes, byte by byte (the tests compare the per-field form with it). */
static inline uint32_t hlb_crc32_bytes(const uint8_t *p, size_t n)
{
    uint32_t crc = 0xffffffffu;
    while (n--)
        crc = hlb_crc32c_u8(crc, *p++);
    return crc ^ 0xffffffffu;
}

static inline void hlb_5tuple_bytes(const struct hlb_5tuple *t, uint8_t out[13])
{
    memcpy(out, &t->dst_ip, 4);
    out[4] = t->proto;
    memcpy(out + 5, &t->dst_port, 2);
    memcpy(out + 7, &t->src_ip, 4);
    memcpy(out + 11, &t->src_port, 2);
}

/* The register after bytes 0..4: a service's address and protocol. */
static inline uint32_t hlb_crc32_vip(uint32_t dst_ip, uint8_t proto)
{
    return hlb_crc32c_u8(hlb_crc32c_u32(0xffffffffu, dst_ip), proto);
}

/* The hash from the register after bytes 0..6 (address, protocol, destination port):
 * the source address and port, then the final XOR. */
static inline uint32_t hlb_crc32_finish(uint32_t crc, uint32_t src_ip, uint16_t src_port)
{
    return ~hlb_crc32c_u16(hlb_crc32c_u32(crc, src_ip), src_port);
}

/* Same value as hlb_crc32_bytes() over hlb_5tuple_bytes(). */
static inline uint32_t hlb_crc32_5tuple(const struct hlb_5tuple *t)
{
    uint32_t crc = hlb_crc32c_u16(hlb_crc32_vip(t->dst_ip, t->proto), t->dst_port);
    return hlb_crc32_finish(crc, t->src_ip, t->src_port);
}

/* Weighted member choice shared with the P4 action selector: members are laid out
 * weight times each, in pool order; slot = hash % total_weight picks the member whose
 * cumulative-weight interval holds the slot.  cum[i] = w[0] + ... + w[i].
 * Returns -1 when total weight is 0. */
static inline int hlb_weighted_pick(uint32_t hash, const uint32_t *cum, int n)
{
    if (n <= 0 || cum[n - 1] == 0)
        return -1;
    uint32_t slot = hash % cum[n - 1];
    if (n <= 16) {
        /* Count the members whose interval ends at or before the slot: branch-free,
         * so random hashes cost no mispredictions. */
        int idx = 0;
        for (int i = 0; i < n; i++)
            idx += cum[i] <= slot;
        return idx;
    }
    int lo = 0, len = n;               /* first i with cum[i] > slot, branch-free */
    while (len > 1) {
        int half = len / 2;
        lo = cum[lo + half - 1] <= slot ? lo + half : lo;
        len -= half;
    }
    return lo;
}

/* hash % d without a division (Lemire, Kaser, Kurz: "Faster remainder by direct
 * computation", 2019): exact for every 32-bit hash and divisor d >= 1, given
 * m = hlb_fastmod_m(d) computed once per pool. */
static inline uint64_t hlb_fastmod_m(uint32_t d)
{
    return UINT64_C(0xFFFFFFFFFFFFFFFF) / d + 1;
}

static inline uint32_t hlb_fastmod(uint32_t a, uint64_t m, uint32_t d)
{
    uint64_t lowbits = m * a;
    return (uint32_t)(((__uint128_t)lowbits * d) >> 64);
}

/* hlb_weighted_pick() with the modulo precomputed: m = hlb_fastmod_m(cum[n-1]). */
static inline int hlb_weighted_pick_m(uint32_t hash, const uint32_t *cum, int n, uint64_t m)
{
    if (n <= 0 || cum[n - 1] == 0)
        return -1;
    uint32_t slot = hlb_fastmod(hash, m, cum[n - 1]);
    if (n <= 16) {
        int idx = 0;
        for (int i = 0; i < n; i++)
            idx += cum[i] <= slot;
        return idx;
    }
    int lo = 0, len = n;
    while (len > 1) {
        int half = len / 2;
        lo = cum[lo + half - 1] <= slot ? lo + half : lo;
        len -= half;
    }
    return lo;
}

/* ---- Connection-table hash (internal to one SMux, never shared) ----------------
 * CRC32C with the SSE4.2 instruction when available (hashing two uint64_t words, not
 * a cast byte array: see the strict-aliasing note in ENVIRONMENT.md). */

/* The key words of a tuple, compared on lookup: (src, dst) and (ports, proto). */
static inline void hlb_conn_key(const struct hlb_5tuple *t, uint64_t *k0, uint64_t *k1)
{
    *k0 = (uint64_t)t->src_ip | (uint64_t)t->dst_ip << 32;
    *k1 = (uint64_t)t->src_port | (uint64_t)t->dst_port << 16 | (uint64_t)t->proto << 32;
}

/* The same words loaded from an IPv4 header without options followed by TCP or UDP
 * ports (ip: its first byte; proto: its byte 9, which the caller has at hand).  On a
 * little-endian host (the packet core is x86) k0 is bytes 12..19 as they lie and k1's
 * low half the four port bytes. */
static inline void hlb_conn_key_at(const uint8_t *ip, uint8_t proto, uint64_t *k0,
                                   uint64_t *k1)
{
    uint32_t ports;
    memcpy(k0, ip + 12, 8);
    memcpy(&ports, ip + 20, 4);
    *k1 = ports | (uint64_t)proto << 32;
}

/* The hash of key words k0, k1 (so the lean pass hashes words it loads straight from
 * the header).  Each word goes in with its halves swapped, the order this hash had
 * before it took words.  The CRC is linear, and in the other order the benchmark's
 * 1M prefilled connections (source addresses counting up) fell on only half of the
 * (bucket, home line) pairs, two to each, and every flow of the run found its home
 * line full: none could be cached (0 flow-cache hits). */
static inline uint32_t hlb_conn_hash_words(uint64_t k0, uint64_t k1)
{
    uint64_t a = k0 << 32 | k0 >> 32, b = k1 << 32 | k1 >> 32;
#if defined(__SSE4_2__)
    uint64_t h = __builtin_ia32_crc32di(0x9e3779b9u, a);
    h = __builtin_ia32_crc32di(h, b);
    return (uint32_t)h;
#else
    uint64_t h = (a ^ 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
    h ^= b + (h >> 29);
    h *= 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h ^ (h >> 32));
#endif
}

static inline uint32_t hlb_conn_hash(const struct hlb_5tuple *t)
{
    uint64_t k0, k1;
    hlb_conn_key(t, &k0, &k1);
    return hlb_conn_hash_words(k0, k1);
}

#ifdef __cplusplus
}
#endif
#endif /* HLB_PKT_H */
