/* Helpers shared by the DATAPATH unit tests: frame builders and table loading. */
#ifndef DP_TESTUTIL_H
#define DP_TESTUTIL_H

#include <arpa/inet.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "datapath.h"
#include "hlb_pkt.h"
#include "vip_table.h"

#define TEST_HEADROOM 128
#define T_SELF_IP "192.0.2.10"   /* the SMux's --ip: worker_init() and table_ok() */

static const uint8_t T_SMUX_MAC[6] = {0x02, 0x53, 0x4d, 0x55, 0x58, 0x01};
static const uint8_t T_GW_MAC[6] = {0x02, 0x47, 0x57, 0x00, 0x00, 0x01};
static const uint8_t T_CLIENT_MAC[6] = {0x02, 0xc1, 0x1e, 0x00, 0x00, 0x01};

static inline uint32_t ip4(const char *s)
{
    struct in_addr a;
    if (inet_pton(AF_INET, s, &a) != 1)
        abort();
    return a.s_addr;
}

/* A frame buffer with headroom in front, like an mbuf. */
struct tframe {
    uint8_t buf[TEST_HEADROOM + 2048];
    struct hlb_pkt p;
};

/* Builds eth/IPv4/(TCP|UDP|raw) with payload_len bytes of payload into f. */
static inline void build_ip(struct tframe *f, const char *src, const char *dst, uint8_t proto,
                            uint16_t sport, uint16_t dport, uint8_t tcp_flags,
                            uint32_t payload_len, uint16_t frag_off_h)
{
    uint8_t *d = f->buf + TEST_HEADROOM;
    memset(f->buf, 0, sizeof(f->buf));
    struct hlb_eth_hdr eth;
    memcpy(eth.dst, T_SMUX_MAC, 6);
    memcpy(eth.src, T_CLIENT_MAC, 6);
    eth.type = hlb_htons(HLB_ETHERTYPE_IPV4);
    memcpy(d, &eth, 14);
    uint32_t l4 = proto == HLB_IPPROTO_TCP ? 20 : proto == HLB_IPPROTO_UDP ? 8 : 0;
    struct hlb_ipv4_hdr ip = {.ver_ihl = 0x45, .tos = 0x28,
                              .tot_len = hlb_htons(20 + l4 + payload_len), .id = hlb_htons(7),
                              .frag_off = hlb_htons(frag_off_h), .ttl = 63, .proto = proto,
                              .src = ip4(src), .dst = ip4(dst)};
    ip.csum = hlb_csum(&ip, 20);
    memcpy(d + 14, &ip, 20);
    uint8_t *l = d + 34;
    uint16_t sp = hlb_htons(sport), dp = hlb_htons(dport);
    if (l4) {
        memcpy(l, &sp, 2);
        memcpy(l + 2, &dp, 2);
    }
    if (proto == HLB_IPPROTO_TCP) {
        l[12] = 5 << 4;
        l[13] = tcp_flags;
    } else if (proto == HLB_IPPROTO_UDP) {
        uint16_t ul = hlb_htons(8 + payload_len);
        memcpy(l + 4, &ul, 2);
    }
    for (uint32_t i = 0; i < payload_len; i++)
        l[l4 + i] = (uint8_t)(i * 7 + 1);
    f->p.data = d;
    f->p.len = 34 + l4 + payload_len;
    if (f->p.len < 60)
        f->p.len = 60;                 /* Ethernet minimum: padding the core must trim */
    f->p.headroom = TEST_HEADROOM;
    f->p.in_port = 0;
    f->p.out_port = 0xffff;
}

static inline void build_tcp(struct tframe *f, const char *src, const char *dst, uint16_t sport,
                             uint16_t dport, uint8_t flags)
{
    build_ip(f, src, dst, HLB_IPPROTO_TCP, sport, dport, flags, 0, 0x4000);
}

/* A TCP segment whose header carries the option bytes opt (optlen, a multiple of 4). */
static inline void build_tcp_opts(struct tframe *f, const char *src, const char *dst,
                                  uint16_t sport, uint16_t dport, uint8_t flags,
                                  const uint8_t *opt, uint32_t optlen)
{
    build_ip(f, src, dst, HLB_IPPROTO_TCP, sport, dport, flags, optlen, 0x4000);
    uint8_t *l = f->p.data + 34;
    l[12] = (uint8_t)((5 + optlen / 4) << 4);
    memcpy(l + 20, opt, optlen);
}

/* NOP, NOP, timestamp (tsval, tsecr): the options of every non-SYN Linux segment. */
static inline void build_tcp_ts(struct tframe *f, const char *src, const char *dst,
                                uint16_t sport, uint16_t dport, uint8_t flags, uint32_t tsval,
                                uint32_t tsecr)
{
    uint8_t opt[12] = {1, 1, 8, 10};
    uint32_t v = hlb_htonl(tsval), e = hlb_htonl(tsecr);
    memcpy(opt + 4, &v, 4);
    memcpy(opt + 8, &e, 4);
    build_tcp_opts(f, src, dst, sport, dport, flags, opt, sizeof(opt));
}

static inline void build_arp(struct tframe *f, uint16_t op, const uint8_t *sha, const char *spa,
                             const char *tpa)
{
    uint8_t *d = f->buf + TEST_HEADROOM;
    memset(f->buf, 0, sizeof(f->buf));
    struct hlb_eth_hdr eth;
    memset(eth.dst, 0xff, 6);
    memcpy(eth.src, sha, 6);
    eth.type = hlb_htons(HLB_ETHERTYPE_ARP);
    struct hlb_arp_ipv4 a = {.htype = hlb_htons(1), .ptype = hlb_htons(0x0800), .hlen = 6,
                             .plen = 4, .op = hlb_htons(op), .spa = ip4(spa), .tpa = ip4(tpa)};
    memcpy(a.sha, sha, 6);
    memcpy(d, &eth, 14);
    memcpy(d + 14, &a, sizeof(a));
    f->p.data = d;
    f->p.len = 60;
    f->p.headroom = TEST_HEADROOM;
    f->p.in_port = 0;
}

/* A table for n_workers workers (counter slices). */
static inline struct hlb_vip_table *table_ok_n(const char *json, int default_pin,
                                               unsigned n_workers)
{
    struct hlb_table_error err = {{0}, {0}};
    struct hlb_table_options opt = {.default_pin = default_pin, .n_workers = n_workers,
                                    .self_ip = ip4(T_SELF_IP)};
    struct hlb_vip_table *t = hlb_table_from_json(json, strlen(json), &opt, &err);
    if (!t)
        fail_msg("table rejected: %s: %s", err.field, err.reason);
    return t;
}

static inline struct hlb_vip_table *table_ok(const char *json, int default_pin)
{
    struct hlb_table_error err = {{0}, {0}};
    struct hlb_table_options opt = {.default_pin = default_pin, .self_ip = ip4(T_SELF_IP)};
    struct hlb_vip_table *t = hlb_table_from_json(json, strlen(json), &opt, &err);
    if (!t)
        fail_msg("table rejected: %s: %s", err.field, err.reason);
    return t;
}

/* The document is refused for field, its reason containing reason_part. */
static inline void expect_table_error(const char *json, const char *field, const char *reason_part)
{
    struct hlb_table_error err = {{0}, {0}};
    struct hlb_vip_table *t = hlb_table_from_json(json, strlen(json), NULL, &err);
    if (t)
        fail_msg("accepted, expected an error at %s", field);
    if (strcmp(err.field, field) != 0 || !strstr(err.reason, reason_part))
        fail_msg("error %s: %s, expected %s: ...%s...", err.field, err.reason, field, reason_part);
}

static inline void worker_init(struct hlb_worker *w, struct hlb_conn_table *ct)
{
    memset(w, 0, sizeof(*w));
    w->cfg.self_ip = ip4(T_SELF_IP);
    w->cfg.gw_ip = ip4("192.0.2.1");
    memcpy(w->cfg.port_mac[0], T_SMUX_MAC, 6);
    memcpy(w->cfg.port_mac[1], T_SMUX_MAC, 6);
    w->cfg.port_mac[1][5] = 2;
    memcpy(w->cfg.gw_mac, T_GW_MAC, 6);
    w->cfg.gw_known = 1;
    w->cfg.outer_ttl = 64;
    w->cfg.mtu = 1500;
    w->ct = ct;
}

static inline uint8_t run1(struct hlb_worker *w, struct hlb_vip_table *t, struct tframe *f,
                           uint32_t now)
{
    uint8_t v = 0xee;
    hlb_dp_burst(w, t, &f->p, &v, 1, now);
    return v;
}

/* Outer destination of an encapsulated frame. */
static inline uint32_t outer_dst(const struct tframe *f)
{
    uint32_t d;
    memcpy(&d, f->p.data + 14 + 16, 4);
    return d;
}

static inline uint64_t total_drops(const struct hlb_worker *w)
{
    uint64_t s = 0;
    for (int i = 0; i < HLB_DROP_MAX; i++)
        s += w->st.drops[i];
    return s;
}

#endif
