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

    memset(out, 0, sizeof(*out));
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
    if (hlb_csum(pkt + HLB_ETH_HLEN, hlen) != 0)
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

/* ---- CRC32 over the 5-tuple (spec: p4/HASH-SPEC.md) ----------------------------
 * CRC-32/ISO-HDLC (the zlib/Ethernet CRC: reflected polynomial 0xEDB88320, init
 * 0xFFFFFFFF, final XOR 0xFFFFFFFF) over the 13 bytes
 *   src_ip[4] dst_ip[4] proto[1] src_port[2] dst_port[2]
 * each in network byte order (the order a P4 hash field list concatenates them). */
static const uint32_t hlb_crc32_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu,
    0xe963a535u, 0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u,
    0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u,
    0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
    0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u,
    0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u,
    0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
    0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
    0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u,
    0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u,
    0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du, 0x76dc4190u, 0x01db7106u,
    0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
    0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du,
    0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
    0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u,
    0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
    0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u,
    0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u,
    0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau,
    0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
    0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au,
    0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u,
    0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
    0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu,
    0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu,
    0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu,
    0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u,
    0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u,
    0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u,
    0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
    0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu,
    0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u,
    0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
    0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
    0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u,
    0x616bffd3u, 0x166ccf45u, 0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u,
    0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu,
    0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
    0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u,
    0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

static inline uint32_t hlb_crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
    while (n--)
        crc = hlb_crc32_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

static inline uint32_t hlb_crc32_bytes(const uint8_t *p, size_t n)
{
    return hlb_crc32_update(0xffffffffu, p, n) ^ 0xffffffffu;
}

static inline void hlb_5tuple_bytes(const struct hlb_5tuple *t, uint8_t out[13])
{
    memcpy(out, &t->src_ip, 4);
    memcpy(out + 4, &t->dst_ip, 4);
    out[8] = t->proto;
    memcpy(out + 9, &t->src_port, 2);
    memcpy(out + 11, &t->dst_port, 2);
}

static inline uint32_t hlb_crc32_5tuple(const struct hlb_5tuple *t)
{
    uint8_t b[13];
    hlb_5tuple_bytes(t, b);
    return hlb_crc32_bytes(b, sizeof(b));
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
    int lo = 0, hi = n - 1;           /* first i with cum[i] > slot */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cum[mid] > slot)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* ---- Connection-table hash (internal to one SMux, never shared) ----------------
 * CRC32C with the SSE4.2 instruction when available (hashing two uint64_t words, not
 * a cast byte array: see the strict-aliasing note in ENVIRONMENT.md). */
static inline uint32_t hlb_conn_hash(const struct hlb_5tuple *t)
{
    uint64_t a = ((uint64_t)t->src_ip << 32) | t->dst_ip;
    uint64_t b = ((uint64_t)t->src_port << 32) | ((uint64_t)t->dst_port << 16) | t->proto;
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

#ifdef __cplusplus
}
#endif
#endif /* HLB_PKT_H */
