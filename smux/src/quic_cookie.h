/* Cheetah for QUIC (p4/COOKIE-SPEC.md §13): a UDP datagram to a port of a `cheetah`
 * VIP is a QUIC packet (RFC 9000 §17).  The server-chosen connection id carries the
 * server id: bytes 0-1 are ident XOR (H & 0xFFFF), bytes 2-7 a nonce, and H is the
 * VIP's keyed hash (§5) of VIP | 17 | VIP port | nonce, so nothing the client's
 * address or port changes takes part.  These are the header parsing and the
 * decode, with no packet-core state: the packet core's step is dp_quic.h. */
#ifndef HLB_QUIC_COOKIE_H
#define HLB_QUIC_COOKIE_H

#include <stdint.h>
#include <string.h>
#include "cheetah.h"

#define HLB_QUIC_CID_LEN 8u           /* the server-chosen connection id (§13.1) */
#define HLB_QUIC_NONCE_OFF 2u
#define HLB_QUIC_MAX_CID_LEN 20u      /* RFC 9000 §17.2 */
/* A short-header packet is at least its first byte, the connection id, and the 4
 * bytes of packet number offset plus the 16-byte sample header protection takes
 * (RFC 9001 §5.4.2): anything shorter cannot be QUIC. */
#define HLB_QUIC_SHORT_MIN (1u + HLB_QUIC_CID_LEN + 4u + 16u)
/* A long header up to its DCID: first byte, version (4), DCID length (1). */
#define HLB_QUIC_LONG_DCID_OFF 6u

enum hlb_quic_header { HLB_QUIC_MALFORMED, HLB_QUIC_SHORT, HLB_QUIC_LONG };

/* The destination connection id of the QUIC packet at p (the UDP payload, len
 * bytes): short header, the HLB_QUIC_CID_LEN bytes after the first byte (their
 * length is not on the wire: the servers of a cheetah VIP always issue this length);
 * long header, the DCID its length byte gives (at most 20).  A version 0 (version
 * negotiation, which only a server sends) or anything that does not fit is
 * malformed. */
static inline enum hlb_quic_header hlb_quic_dcid(const uint8_t *p, uint32_t len,
                                                 const uint8_t **dcid, uint32_t *dcid_len)
{
    if (len == 0)
        return HLB_QUIC_MALFORMED;
    if (!(p[0] & 0x80)) {
        if (len < HLB_QUIC_SHORT_MIN)
            return HLB_QUIC_MALFORMED;
        *dcid = p + 1;
        *dcid_len = HLB_QUIC_CID_LEN;
        return HLB_QUIC_SHORT;
    }
    if (len < HLB_QUIC_LONG_DCID_OFF)
        return HLB_QUIC_MALFORMED;
    uint32_t version;
    memcpy(&version, p + 1, 4);
    uint32_t n = p[5];
    if (version == 0 || n > HLB_QUIC_MAX_CID_LEN || len < HLB_QUIC_LONG_DCID_OFF + n)
        return HLB_QUIC_MALFORMED;
    *dcid = p + HLB_QUIC_LONG_DCID_OFF;
    *dcid_len = n;
    return HLB_QUIC_LONG;
}

/* The message words of §13.2's tuple for the 8-byte connection id at cid (its bytes
 * as one little-endian word c): hlb_cookie_words' layout with protocol 17 and the
 * nonce (c >> 16) where a TCP tuple has the client's address and port. */
static inline __attribute__((always_inline)) void
hlb_quic_words(uint32_t vip, uint16_t vip_port, uint64_t c, uint64_t *m0, uint64_t *m1)
{
    *m0 = (uint64_t)vip | (uint64_t)17 << 32 | (uint64_t)vip_port << 40 | (c >> 16) << 56;
    *m1 = (c >> 24) | (uint64_t)13 << 56;    /* SipHash's last word carries the length */
}

/* The 8 id bytes as one word, little-endian like the packet core's other loads. */
static inline __attribute__((always_inline)) uint64_t hlb_quic_cid_word(const uint8_t *cid)
{
    uint64_t c;
    memcpy(&c, cid, 8);
    return c;
}

/* H of an 8-byte connection id cid of service s on port vip_port (network order). */
static inline __attribute__((always_inline)) uint64_t
hlb_quic_hash(const struct hlb_service *s, uint16_t vip_port, const uint8_t *cid)
{
    uint64_t m0, m1;
    hlb_quic_words(s->vip, vip_port, hlb_quic_cid_word(cid), &m0, &m1);
    return hlb_ck_hash_words(s, m0, m1);
}

/* The 16-bit ident an 8-byte connection id names (§13.3): a server id only when it
 * is 1..16383 and a server of the pool (hlb_ck_server_dip). */
static inline __attribute__((always_inline)) uint32_t
hlb_quic_ident(const struct hlb_service *s, uint16_t vip_port, const uint8_t *cid)
{
    uint64_t c = hlb_quic_cid_word(cid), m0, m1;
    hlb_quic_words(s->vip, vip_port, c, &m0, &m1);
    uint32_t field = (uint32_t)(c & 0xff) << 8 | (uint32_t)(c >> 8 & 0xff);
    return (field ^ (uint32_t)hlb_ck_hash_words(s, m0, m1)) & 0xffffu;
}

/* §13.4: CRC-32C(key | DCID), from the register the key leaves (s->ck_crc_key). */
static inline uint32_t hlb_quic_initial_hash(const struct hlb_service *s, const uint8_t *dcid,
                                             uint32_t n)
{
    uint32_t crc = s->ck_crc_key;
    for (uint32_t i = 0; i < n; i++)
        crc = _mm_crc32_u8(crc, dcid[i]);
    return crc ^ 0xffffffffu;
}

/* §13.4: the slot (0..total-1) of the pool's cumulative weights a handshake hash picks. */
static inline uint32_t hlb_quic_initial_slot(uint32_t h, uint32_t total)
{
    return (uint32_t)(((uint64_t)h * total) >> 32);
}

#endif
