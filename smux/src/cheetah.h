/* Cheetah in the SMux, stateless mode (p4/COOKIE-SPEC.md; section numbers are that
 * file's): a non-SYN TCP segment to a `cheetah` service carries, in the TSecr of its
 * timestamp option, the cookie its server's host agent wrote; ident = cookie XOR
 * H15(tuple) names the server, which must be one of the service's pool (its server
 * map); anything else is dropped as bad_cookie.  SYNs are placed by the service's
 * mechanism (round robin, weighted round robin, hash); segments without a timestamp
 * take the hash + connection-table path.
 *
 * The keyed hashes, the tuple's message words and the option finders are the host
 * agent's (agent/include/hlb_cookie.h): one definition for both ends.  Only the
 * crc32c mode is computed here with the CRC32C instruction instead of the agent's
 * BPF-friendly table form (the same function; the shared vectors test both). */
#ifndef HLB_CHEETAH_H
#define HLB_CHEETAH_H

#include <stdint.h>
#include <nmmintrin.h>
#include "hlb_cookie.h"
#include "vip_table.h"

#define HLB_COOKIE_KEY_BYTES 16

/* H(key, tuple) of §5 under service s's key and mode, the 13 tuple bytes as the
 * message words m0, m1 (hlb_cookie_words). */
static inline __attribute__((always_inline)) uint64_t
hlb_ck_hash_words(const struct hlb_service *s, uint64_t m0, uint64_t m1)
{
    if (s->ck_mode == HLB_COOKIE_CRC32C) {
        uint32_t crc = (uint32_t)_mm_crc32_u64(s->ck_crc_key, m0);
        crc = _mm_crc32_u32(crc, (uint32_t)m1);
        crc = _mm_crc32_u8(crc, (uint8_t)(m1 >> 32));
        return crc ^ 0xffffffffu;
    }
    return hlb_siphash13_words(s->ck_k0, s->ck_k1, m0, m1);
}

/* H(key, tuple) of §5 for a segment of service s from (src_ip, src_port) to its
 * dst_port (all network order). */
static inline __attribute__((always_inline)) uint64_t
hlb_ck_hash(const struct hlb_service *s, uint32_t src_ip, uint16_t src_port, uint16_t dst_port)
{
    struct hlb_cookie_tuple tp = {.vip = s->vip, .client = src_ip, .vip_port = dst_port,
                                  .client_port = src_port};
    __u64 m0, m1;
    hlb_cookie_words(&tp, &m0, &m1);
    return hlb_ck_hash_words(s, m0, m1);
}

/* hlb_ck_hash() of n segments of service s (src_ip[k], src_port[k], dst_port[k]),
 * into h[k]: several at once in vector lanes where the target has them (cheetah.c). */
void hlb_ck_hash_burst(const struct hlb_service *s, const uint32_t *src_ip,
                       const uint16_t *src_port, const uint16_t *dst_port, unsigned n,
                       uint64_t *h);

/* The ident a client's echo names (§2, §5): the 15 cookie bits (the version bit
 * left out) XOR H15. */
static inline __attribute__((always_inline)) uint32_t
hlb_ck_ident(const struct hlb_service *s, uint32_t tsecr_host, uint32_t src_ip,
             uint16_t src_port, uint16_t dst_port)
{
    return (hlb_cookie_of(tsecr_host) ^ (uint32_t)hlb_ck_hash(s, src_ip, src_port, dst_port)) &
           HLB_COOKIE_MASK;
}

/* hlb_ck_ident() of n segments whose H are known (tsecr[k]: the host-order echo),
 * into ident[k]: a loop the compiler turns into vector operations. */
static inline __attribute__((always_inline)) void
hlb_ck_idents(const uint32_t *tsecr, const uint64_t *h, unsigned n, uint32_t *ident)
{
    for (unsigned k = 0; k < n; k++)
        ident[k] = (hlb_cookie_of(tsecr[k]) ^ (uint32_t)h[k]) & HLB_COOKIE_MASK;
}

/* The DIP entry of server `ident` in service s's pool, or -1: not a server of this
 * pool (a forged or random cookie, a stateful ident, a server removed). */
static inline __attribute__((always_inline)) int
hlb_ck_server_dip(const struct hlb_vip_table *t, const struct hlb_service *s, uint32_t ident)
{
    const struct hlb_server_slot *m = &t->servers[s->srv_first];
    for (uint32_t i = ident;; i++) {
        const struct hlb_server_slot *e = &m[i & s->srv_mask];
        if (e->id == ident)
            return (int)e->dip;
        if (e->id == HLB_SRV_EMPTY)
            return -1;
    }
}

/* Where a TCP segment's timestamp option is: the offset of its TSval from tcp (the
 * TSecr follows), or -1 when it has none or a malformed option list (§10: the fast
 * layouts, then the bounded walk).  tcp points at the TCP header, l4_len bytes of
 * the IP payload follow it. */
static inline int hlb_ck_ts_off(const uint8_t *tcp, uint32_t l4_len)
{
    if (l4_len < 20)
        return -1;
    uint32_t hl = (uint32_t)(tcp[12] >> 4) * 4u;
    if (hl <= 20 || hl > l4_len)
        return -1;
    const uint8_t *opt = tcp + 20, *end = tcp + hl;
    int off = hlb_tsval_fast(opt, end, hl - 20);
    if (off < 0)
        off = hlb_tsval_walk(opt, end, hl - 20);
    return off < 0 ? -1 : 20 + off;
}

/* 1 and *tsecr (host order) when the segment has a timestamp option, else 0. */
static inline int hlb_ck_tsecr(const uint8_t *tcp, uint32_t l4_len, uint32_t *tsecr)
{
    int off = hlb_ck_ts_off(tcp, l4_len);
    if (off < 0)
        return 0;
    uint32_t v;
    memcpy(&v, tcp + off + 4, 4);
    *tsecr = __builtin_bswap32(v);
    return 1;
}

/* The mechanisms' names in the table and the metrics, by enum hlb_mechanism. */
extern const char *const hlb_mechanism_names[HLB_MECH_MAX + 1];

/* Parsing and building (cheetah.c), for vip_table.c. */
struct json_t;

/* Server id <-> DIP host, table-wide (§4: one id per host, one host per id). */
struct hlb_ck_ids {
    uint32_t host_of[HLB_COOKIE_SERVER_ID_MAX + 1];   /* tunnel destination; 0: unused */
    uint32_t *map_host;                               /* host -> id, open addressing */
    uint16_t *map_id;
    uint32_t mask;
};

int hlb_ck_ids_init(struct hlb_ck_ids *ids, size_t n_dips);
void hlb_ck_ids_free(struct hlb_ck_ids *ids);
/* Records DIP entry `field` (its serverId) with tunnel destination host; an error
 * naming the field when the id already names another host or the host another id. */
int hlb_ck_ids_add(struct hlb_ck_ids *ids, uint16_t id, uint32_t host, const char *field,
                   struct hlb_table_error *err);

/* The cheetah fields of VIP object vo (path: "vips[i]"): affinity, cookieKey,
 * cookieHash, mechanism; validated, into s (its affinity, mechanism, key, mode). */
int hlb_ck_parse_vip(struct json_t *vo, const char *path, struct hlb_service *s,
                     struct hlb_table_error *err);

/* After every service and DIP is filled: the server maps and round-robin slices,
 * the stateful owners (this SMux, self_ip, finds the owner ids it holds among them), the
 * loads and AWRR weights (balance.h). */
int hlb_ck_build(struct hlb_vip_table *t, uint32_t self_ip);

/* After hlb_ck_build(): 0 when every cheetah-stateful VIP of t has the same
 * statefulOwners (the SMux keeps its owner ids' entries per id, whatever the VIP:
 * sf_owners.h), else -1 with err naming the first VIP whose list differs. */
int hlb_ck_check_owners(const struct hlb_vip_table *t, struct hlb_table_error *err);

/* The document as GET /table shows it: every cookieKey replaced by its fingerprint
 * (§8: a key is never shown by an API). */
void hlb_ck_redact(struct json_t *doc);

#endif
