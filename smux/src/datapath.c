#include "dp_burst.h"
#include "hlb_murmur.h"

#include <string.h>

const char *const hlb_drop_names[HLB_DROP_MAX] = {
    [HLB_DROP_TRUNCATED] = "truncated",
    [HLB_DROP_NOT_IPV4] = "not_ipv4",
    [HLB_DROP_BAD_IP] = "bad_ip_header",
    [HLB_DROP_FRAGMENT] = "ip_fragment",
    [HLB_DROP_BAD_ARP] = "bad_arp",
    [HLB_DROP_ARP_NOT_FOR_US] = "arp_not_for_us",
    [HLB_DROP_TO_SELF] = "to_self",
    [HLB_DROP_NO_VIP] = "no_vip",
    [HLB_DROP_NO_BACKEND] = "no_backend",
    [HLB_DROP_NO_GATEWAY] = "no_gateway",
    [HLB_DROP_FRAG_NEEDED] = "frag_needed",
    [HLB_DROP_NO_HEADROOM] = "no_headroom",
    [HLB_DROP_MULTISEG] = "multi_segment",
    [HLB_DROP_TX_FULL] = "tx_full",
    [HLB_DROP_BAD_COOKIE] = "bad_cookie",
    [HLB_DROP_BAD_QUIC_CID] = "bad_quic_cid",
    [HLB_DROP_BAD_QUIC_HEADER] = "bad_quic_header",
};

unsigned hlb_flow_worker_tuple(uint32_t src_ip, uint32_t dst_ip, uint16_t src_port,
                               uint16_t dst_port, uint8_t proto, unsigned n_workers)
{
    if (n_workers <= 1)
        return 0;
    uint64_t k0 = (uint64_t)dst_ip << 32 | src_ip;      /* the header's byte order */
    uint32_t ports = 0;
    if (proto == HLB_IPPROTO_TCP || proto == HLB_IPPROTO_UDP)
        ports = (uint32_t)src_port | (uint32_t)dst_port << 16;
    uint64_t k1 = ports | (uint64_t)proto << 32;        /* hlb_conn_key_at()'s words */
    uint32_t mixed = hlb_mix_finish(hlb_conn_hash_words(k0, k1), 0);
    return (unsigned)(((uint64_t)mixed * n_workers) >> 32);
}

unsigned hlb_flow_worker(const uint8_t *frame, uint32_t len, unsigned n_workers)
{
    if (n_workers <= 1 || len < HLB_ETH_HLEN + 20)
        return 0;
    const uint8_t *ip = frame + HLB_ETH_HLEN;
    uint16_t type, frag;
    memcpy(&type, frame + 12, 2);
    memcpy(&frag, ip + 6, 2);
    uint32_t ihl = (ip[0] & 15u) * 4;
    if (type != hlb_htons(HLB_ETHERTYPE_IPV4) || (ip[0] >> 4) != 4 || ihl < 20 ||
        (frag & hlb_htons(0x3fff)) != 0)           /* MF or an offset: a fragment */
        return 0;
    if (ip[9] == HLB_IPPROTO_IPIP && len >= HLB_ETH_HLEN + ihl + 20) {
        /* Another SMux's forward (two tiers): the worker of the inner connection. */
        const uint8_t *in = ip + ihl;
        uint32_t ihl2 = (in[0] & 15u) * 4;
        memcpy(&frag, in + 6, 2);
        if ((in[0] >> 4) == 4 && ihl2 >= 20 && (frag & hlb_htons(0x3fff)) == 0 &&
            in[9] != HLB_IPPROTO_IPIP) {
            ip = in;
            ihl = ihl2;
            len -= (uint32_t)(in - (frame + HLB_ETH_HLEN));
        }
    }
    uint8_t proto = ip[9];
    uint32_t src, dst, ports = 0;
    memcpy(&src, ip + 12, 4);
    memcpy(&dst, ip + 16, 4);
    if ((proto == HLB_IPPROTO_TCP || proto == HLB_IPPROTO_UDP) &&
        len >= HLB_ETH_HLEN + ihl + 4)
        memcpy(&ports, ip + ihl, 4);
    return hlb_flow_worker_tuple(src, dst, (uint16_t)ports, (uint16_t)(ports >> 16), proto,
                                 n_workers);
}

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "outer headers are stored as little-endian words");

static const uint8_t bcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

int hlb_select_dip(const struct hlb_vip_table *t, const struct hlb_service *s,
                   const struct hlb_5tuple *tuple)
{
    return select_dip(t, s, tuple);
}

static inline void drop(struct hlb_worker *w, uint8_t *verdict, enum hlb_drop_reason r)
{
    w->st.drops[r]++;
    *verdict = HLB_V_DROP;
}

/* ---- replies built in place ------------------------------------------------------ */

void hlb_dp_arp(struct hlb_worker *w, struct hlb_pkt *p, uint8_t *verdict)
{
    struct hlb_dp_config *c = &w->cfg;
    struct hlb_arp_ipv4 arp;
    memcpy(&arp, p->data + HLB_ETH_HLEN, sizeof(arp));
    int from_gw = c->gw_ip != 0 && arp.spa == c->gw_ip;

    if (from_gw && !c->gw_static) {
        memcpy(c->gw_mac, arp.sha, 6);
        c->gw_known = 1;
    }
    if (arp.op == hlb_htons(HLB_ARP_REQUEST) && arp.tpa == c->self_ip && c->self_ip != 0) {
        const uint8_t *mac = c->port_mac[p->in_port];
        struct hlb_eth_hdr eth;
        memcpy(eth.dst, arp.sha, 6);
        memcpy(eth.src, mac, 6);
        eth.type = hlb_htons(HLB_ETHERTYPE_ARP);
        arp.op = hlb_htons(HLB_ARP_REPLY);
        memcpy(arp.tha, arp.sha, 6);
        arp.tpa = arp.spa;
        memcpy(arp.sha, mac, 6);
        arp.spa = c->self_ip;
        memcpy(p->data, &eth, sizeof(eth));
        memcpy(p->data + HLB_ETH_HLEN, &arp, sizeof(arp));
        p->len = HLB_ETH_HLEN + sizeof(arp);
        p->out_port = p->in_port;
        w->st.arp_replies++;
        w->st.replies++;
        *verdict = HLB_V_TX;
        return;
    }
    if (from_gw) {
        w->st.gw_learned++;
        *verdict = HLB_V_DROP;
        return;
    }
    drop(w, verdict, HLB_DROP_ARP_NOT_FOR_US);
}

uint32_t hlb_build_arp_request(const struct hlb_dp_config *cfg, uint16_t port, uint8_t *buf)
{
    struct hlb_eth_hdr eth;
    struct hlb_arp_ipv4 arp;
    memcpy(eth.dst, bcast_mac, 6);
    memcpy(eth.src, cfg->port_mac[port], 6);
    eth.type = hlb_htons(HLB_ETHERTYPE_ARP);
    arp.htype = hlb_htons(1);
    arp.ptype = hlb_htons(HLB_ETHERTYPE_IPV4);
    arp.hlen = 6;
    arp.plen = 4;
    arp.op = hlb_htons(HLB_ARP_REQUEST);
    memcpy(arp.sha, cfg->port_mac[port], 6);
    arp.spa = cfg->self_ip;
    memset(arp.tha, 0, 6);
    arp.tpa = cfg->gw_ip;
    memset(buf, 0, 60);
    memcpy(buf, &eth, sizeof(eth));
    memcpy(buf + HLB_ETH_HLEN, &arp, sizeof(arp));
    return 60;
}

/* Turns the frame into an IPv4 reply to its sender: new IP header (from us, TTL 64)
 * followed by the ICMP message; eth goes back to the MAC it came from. */
static void icmp_reply(struct hlb_worker *w, struct hlb_pkt *p, const struct hlb_parsed *pp,
                       const uint8_t *icmp, uint32_t icmp_len, uint8_t *verdict)
{
    const struct hlb_dp_config *c = &w->cfg;
    struct hlb_eth_hdr eth;
    struct hlb_ipv4_hdr ip;
    memcpy(&eth, p->data, sizeof(eth));
    memcpy(eth.dst, eth.src, 6);
    memcpy(eth.src, c->port_mac[p->in_port], 6);
    ip.ver_ihl = 0x45;
    ip.tos = 0;
    ip.tot_len = hlb_htons(20 + icmp_len);
    ip.id = 0;
    ip.frag_off = 0;
    ip.ttl = 64;
    ip.proto = HLB_IPPROTO_ICMP;
    ip.csum = 0;
    ip.src = c->self_ip;
    ip.dst = pp->t.src_ip;
    ip.csum = hlb_csum(&ip, sizeof(ip));
    /* icmp may point into the frame: move it first (memmove), then the headers. */
    memmove(p->data + HLB_ETH_HLEN + 20, icmp, icmp_len);
    memcpy(p->data, &eth, sizeof(eth));
    memcpy(p->data + HLB_ETH_HLEN, &ip, sizeof(ip));
    p->len = HLB_ETH_HLEN + 20 + icmp_len;
    p->out_port = p->in_port;
    w->st.replies++;
    *verdict = HLB_V_TX;
}

/* RFC 792/1191: type 3 code 4 with the next-hop MTU, quoting the original IP header
 * and the first 8 bytes of its payload. */
void hlb_dp_frag_needed(struct hlb_worker *w, struct hlb_pkt *p, const struct hlb_parsed *pp,
                        uint32_t overhead, uint8_t *verdict)
{
    uint8_t msg[8 + 60 + 8];
    uint32_t quote = pp->ip_hlen + 8u;
    if (quote > pp->ip_tot_len)
        quote = pp->ip_tot_len;
    struct hlb_icmp_hdr h = {.type = 3, .code = 4, .csum = 0, .unused = 0,
                             .next_mtu = hlb_htons(w->cfg.mtu - overhead)};
    memcpy(msg, &h, sizeof(h));
    memcpy(msg + 8, p->data + HLB_ETH_HLEN, quote);
    uint16_t cs = hlb_csum(msg, 8 + quote);
    memcpy(msg + 2, &cs, 2);
    w->st.drops[HLB_DROP_FRAG_NEEDED]++;
    w->st.icmp_frag_needed++;
    icmp_reply(w, p, pp, msg, 8 + quote, verdict);
}

void hlb_dp_to_self(struct hlb_worker *w, struct hlb_pkt *p, const struct hlb_parsed *pp,
                    uint8_t *verdict)
{
    uint8_t *icmp = p->data + HLB_ETH_HLEN + pp->ip_hlen;
    uint32_t icmp_len = pp->ip_tot_len - pp->ip_hlen;
    if (pp->t.proto != HLB_IPPROTO_ICMP || icmp_len < 8 || icmp[0] != 8 || icmp[1] != 0 ||
        hlb_csum(icmp, icmp_len) != 0) {
        drop(w, verdict, HLB_DROP_TO_SELF);
        return;
    }
    icmp[0] = 0;                                  /* echo reply, same id/seq/data */
    icmp[2] = icmp[3] = 0;
    uint16_t cs = hlb_csum(icmp, icmp_len);
    memcpy(icmp + 2, &cs, 2);
    w->st.icmp_echo_replies++;
    icmp_reply(w, p, pp, icmp, icmp_len, verdict);
}

/* ---- the burst ------------------------------------------------------------------- */

/* The packet core over struct hlb_pkt (the same body io_loop.c compiles over mbufs). */
#define HLB_BURST_FN dp_burst_pkts
#define HLB_FULL_FN dp_burst_pkts_full
#define HLB_FAST_FN dp_burst_pkts_fast
#define HLB_BURST_FRAME struct hlb_pkt *
#define HLB_F_DATA(f) ((f)->data)
#define HLB_F_LEN(f) ((f)->len)
#define HLB_F_HEADROOM(f) ((f)->headroom)
#define HLB_F_IN_PORT(f, port) ((f)->in_port)
#define HLB_F_MULTISEG(f) 0
#define HLB_F_SET(f, d, l)                                                              \
    do {                                                                                \
        (f)->headroom -= (uint32_t)((f)->data - (d));                                   \
        (f)->data = (d);                                                                \
        (f)->len = (l);                                                                 \
    } while (0)
#define HLB_F_PUSH(f, n, l)                                                             \
    do {                                                                                \
        (f)->data -= (n);                                                               \
        (f)->headroom -= (n);                                                           \
        (f)->len = (l);                                                                 \
    } while (0)
#include "dp_burst_body.h"

static void burst_pkts(struct hlb_worker *w, struct hlb_vip_table *t, struct hlb_pkt *pkts,
                       uint8_t *verdict, unsigned n, uint32_t now, int lean)
{
    struct hlb_pkt *frames[HLB_MAX_BURST];
    uint8_t out[HLB_MAX_BURST];
    if (n > HLB_MAX_BURST)
        n = HLB_MAX_BURST;
    for (unsigned i = 0; i < n; i++)
        frames[i] = &pkts[i];
    if (lean)
        dp_burst_pkts(w, t, frames, out, n, 0, now);
    else
        dp_burst_pkts_full(w, t, frames, out, n, 0, now);
    for (unsigned i = 0; i < n; i++) {
        verdict[i] = out[i] == HLB_OUT_DROP ? HLB_V_DROP : HLB_V_TX;
        if (out[i] != HLB_OUT_DROP)
            pkts[i].out_port = out[i];
    }
}

void hlb_dp_burst(struct hlb_worker *w, struct hlb_vip_table *t, struct hlb_pkt *pkts,
                  uint8_t *verdict, unsigned n, uint32_t now)
{
    burst_pkts(w, t, pkts, verdict, n, now, 1);
}

void hlb_dp_burst_reference(struct hlb_worker *w, struct hlb_vip_table *t, struct hlb_pkt *pkts,
                            uint8_t *verdict, unsigned n, uint32_t now)
{
    burst_pkts(w, t, pkts, verdict, n, now, 0);
}
