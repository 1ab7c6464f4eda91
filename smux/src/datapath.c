#include "datapath.h"

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
};

static const uint8_t bcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static inline __attribute__((always_inline)) int
select_dip(const struct hlb_vip_table *t, const struct hlb_service *s,
           const struct hlb_5tuple *tuple)
{
    int rel;
    if (s->dip_count == 0)
        return -1;
    if (s->selection == HLB_SEL_CRC32)
        rel = hlb_weighted_pick_m(hlb_crc32_5tuple(tuple), &t->cum[s->dip_first],
                                  (int)s->dip_count, s->weight_mod_m);
    else
        rel = hlb_ovs_select_bucket(hlb_ovs_select_hash(tuple, s->basis),
                                    &t->bucket_ids[s->dip_first], &t->weights[s->dip_first],
                                    (int)s->dip_count);
    return rel < 0 ? -1 : (int)s->dip_first + rel;
}

int hlb_select_dip(const struct hlb_vip_table *t, const struct hlb_service *s,
                   const struct hlb_5tuple *tuple)
{
    return select_dip(t, s, tuple);
}

/* Finds a pinned DIP in the current table's pool (after a swap). */
static int find_in_pool(const struct hlb_vip_table *t, const struct hlb_service *s, uint32_t ip)
{
    for (uint32_t d = s->dip_first; d < s->dip_first + s->dip_count; d++)
        if (t->dips[d].ip == ip)
            return (int)d;
    return -1;
}

static inline void drop(struct hlb_worker *w, uint8_t *verdict, enum hlb_drop_reason r)
{
    w->st.drops[r]++;
    *verdict = HLB_V_DROP;
}

/* ---- replies built in place ------------------------------------------------------ */

static void handle_arp(struct hlb_worker *w, struct hlb_pkt *p, uint8_t *verdict)
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
static void frag_needed(struct hlb_worker *w, struct hlb_pkt *p, const struct hlb_parsed *pp,
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

static void to_self(struct hlb_worker *w, struct hlb_pkt *p, const struct hlb_parsed *pp,
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

/* ---- encapsulation ----------------------------------------------------------------- */

static void encapsulate(struct hlb_worker *w, struct hlb_vip_table *t,
                        const struct hlb_service *s, int dip, struct hlb_pkt *p,
                        const struct hlb_parsed *pp, uint8_t *verdict)
{
    const struct hlb_dp_config *c = &w->cfg;
    uint32_t gre = s->encap == HLB_ENCAP_GRE ? 4u : 0u;
    uint32_t overhead = 20u + gre;

    if (pp->ip_tot_len + overhead > c->mtu) {
        frag_needed(w, p, pp, overhead, verdict);
        return;
    }
    if (!c->gw_known) {
        drop(w, verdict, HLB_DROP_NO_GATEWAY);
        return;
    }
    if (p->headroom < overhead) {
        drop(w, verdict, HLB_DROP_NO_HEADROOM);
        return;
    }
    uint16_t out_port = c->two_port ? 1 : p->in_port;
    uint8_t tos = p->data[HLB_ETH_HLEN + 1];
    uint8_t *start = p->data - overhead;
    uint16_t tot = (uint16_t)(pp->ip_tot_len + overhead);
    uint8_t proto = gre ? HLB_IPPROTO_GRE : HLB_IPPROTO_IPIP;
    uint32_t src = hlb_ntohl(c->self_ip), dst = hlb_ntohl(t->dips[dip].outer);

    /* Headers are stored straight into the frame and the checksum is computed from
     * the field values: building a header on the stack and copying it out costs a
     * store-forwarding stall per packet. */
    uint32_t sum = (0x4500u | tos) + tot + HLB_IP_DF + ((uint32_t)c->outer_ttl << 8 | proto) +
                   (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    uint16_t csum = hlb_htons((uint16_t)~sum);

    uint16_t type = hlb_htons(HLB_ETHERTYPE_IPV4);
    memcpy(start, c->gw_mac, 6);
    memcpy(start + 6, c->port_mac[out_port], 6);
    memcpy(start + 12, &type, 2);
    uint8_t *ip = start + HLB_ETH_HLEN;
    uint16_t tot_n = hlb_htons(tot), frag_n = hlb_htons(HLB_IP_DF), zero = 0;
    ip[0] = 0x45;
    ip[1] = tos;                     /* RFC 6040 normal mode: DSCP and ECN copied */
    memcpy(ip + 2, &tot_n, 2);
    memcpy(ip + 4, &zero, 2);        /* RFC 6864: DF set, so the ID is not used */
    memcpy(ip + 6, &frag_n, 2);
    ip[8] = c->outer_ttl;
    ip[9] = proto;
    memcpy(ip + 10, &csum, 2);
    memcpy(ip + 12, &c->self_ip, 4);
    memcpy(ip + 16, &t->dips[dip].outer, 4);
    if (gre) {
        uint32_t g = hlb_htonl(HLB_ETHERTYPE_IPV4);   /* flags/version 0, protocol IPv4 */
        memcpy(ip + 20, &g, 4);
    }
    p->data = start;
    p->headroom -= overhead;
    /* Drop Ethernet padding of short frames: the inner packet is tot_len long. */
    p->len = HLB_ETH_HLEN + overhead + pp->ip_tot_len;
    p->out_port = out_port;

    t->svc_counters[s - t->services].packets++;
    t->svc_counters[s - t->services].bytes += pp->ip_tot_len;
    t->dip_counters[dip].packets++;
    t->dip_counters[dip].bytes += pp->ip_tot_len;
    w->st.fwd_packets++;
    w->st.fwd_bytes += p->len;
    *verdict = HLB_V_TX;
}

/* ---- connection pinning -------------------------------------------------------- */

static int pinned_dip(struct hlb_worker *w, struct hlb_vip_table *t, const struct hlb_service *s,
                      const struct hlb_parsed *pp, uint32_t hash, uint32_t now)
{
    struct hlb_conn_table *ct = w->ct;
    struct hlb_conn_ref ref;
    uint64_t k0, k1;
    hlb_conn_key(&pp->t, &k0, &k1);

    if (hlb_conn_find(ct, hash, k0, k1, now, &ref)) {
        struct hlb_conn_entry *e = &ref.b->e[ref.i];
        int restart, dip;
        enum hlb_conn_state next = hlb_conn_next_state(ref.b->state[ref.i], pp->t.proto,
                                                       pp->tcp_flags, &restart);
        w->st.conn_hits++;
        if (e->table_gen == t->gen && !restart) {
            dip = (int)e->dip_index;           /* the common case: nothing to rewrite */
        } else {
            if (restart) {
                dip = select_dip(t, s, &pp->t);
            } else {
                /* Table swapped since: the pinned DIP keeps the connection while it
                 * is still in the pool (even at weight 0: draining). */
                dip = find_in_pool(t, s, e->dip_ip);
                if (dip < 0) {
                    dip = select_dip(t, s, &pp->t);
                    w->st.conn_repinned++;
                }
            }
            if (dip < 0) {
                hlb_conn_delete(ct, &ref);
                return -1;
            }
            e->dip_ip = t->dips[dip].ip;
            e->table_gen = t->gen;
            e->dip_index = (uint32_t)dip;
        }
        if (next == HLB_CONN_FREE)
            hlb_conn_delete(ct, &ref);          /* RST: this packet still goes there */
        else
            hlb_conn_set_state(ct, &ref, next, now);
        return dip;
    }

    w->st.conn_misses++;
    int dip = select_dip(t, s, &pp->t);
    if (dip < 0)
        return -1;
    enum hlb_conn_state st0 = hlb_conn_initial_state(pp->t.proto, pp->tcp_flags);
    if (st0 != HLB_CONN_FREE && hlb_conn_insert(ct, hash, k0, k1, st0, now, &ref) == 0) {
        struct hlb_conn_entry *e = &ref.b->e[ref.i];
        e->dip_ip = t->dips[dip].ip;
        e->table_gen = t->gen;
        e->dip_index = (uint32_t)dip;
    }
    /* A failed insert (bucket full of established connections) still forwards by
     * hash: the flow is only unpinned, and counted. */
    return dip;
}

/* ---- the burst ------------------------------------------------------------------- */

void hlb_dp_burst(struct hlb_worker *w, struct hlb_vip_table *t, struct hlb_pkt *pkts,
                  uint8_t *verdict, unsigned n, uint32_t now)
{
    struct hlb_parsed parsed[HLB_MAX_BURST];
    const struct hlb_service *svc[HLB_MAX_BURST];
    uint32_t hash[HLB_MAX_BURST];
    enum hlb_parse_result res[HLB_MAX_BURST];

    if (n > HLB_MAX_BURST)
        n = HLB_MAX_BURST;

    /* Stage 1: parse, find the service, start fetching the connection bucket so the
     * cache misses of a burst overlap. */
    for (unsigned i = 0; i < n; i++) {
        struct hlb_pkt *p = &pkts[i];
        w->st.rx_packets++;
        w->st.rx_bytes += p->len;
        res[i] = hlb_parse(p->data, p->len, &parsed[i]);
        svc[i] = NULL;
        if (res[i] != HLB_PARSE_IPV4)
            continue;
        svc[i] = hlb_table_lookup(t, parsed[i].t.dst_ip, parsed[i].t.proto,
                                  parsed[i].t.dst_port);
        if (svc[i] && svc[i]->pin && w->ct) {
            hash[i] = hlb_conn_hash(&parsed[i].t);
            hlb_conn_prefetch(w->ct, hash[i]);
        }
    }

    if (w->ct)
        for (unsigned i = 0; i < n; i++)
            if (svc[i] && svc[i]->pin)
                hlb_conn_prefetch_entry(w->ct, hash[i]);

    /* Stage 2: act. */
    for (unsigned i = 0; i < n; i++) {
        struct hlb_pkt *p = &pkts[i];
        const struct hlb_parsed *pp = &parsed[i];
        switch (res[i]) {
        case HLB_PARSE_IPV4:
            break;
        case HLB_PARSE_ARP:
            handle_arp(w, p, &verdict[i]);
            continue;
        case HLB_PARSE_TRUNCATED: drop(w, &verdict[i], HLB_DROP_TRUNCATED); continue;
        case HLB_PARSE_NOT_IPV4: drop(w, &verdict[i], HLB_DROP_NOT_IPV4); continue;
        case HLB_PARSE_FRAGMENT: drop(w, &verdict[i], HLB_DROP_FRAGMENT); continue;
        case HLB_PARSE_BAD_ARP: drop(w, &verdict[i], HLB_DROP_BAD_ARP); continue;
        default: drop(w, &verdict[i], HLB_DROP_BAD_IP); continue;
        }
        const struct hlb_service *s = svc[i];
        if (!s) {
            if (pp->t.dst_ip == w->cfg.self_ip)
                to_self(w, p, pp, &verdict[i]);
            else
                drop(w, &verdict[i], HLB_DROP_NO_VIP);
            continue;
        }
        int dip = (s->pin && w->ct) ? pinned_dip(w, t, s, pp, hash[i], now)
                                    : select_dip(t, s, &pp->t);
        if (dip < 0) {
            drop(w, &verdict[i], HLB_DROP_NO_BACKEND);
            continue;
        }
        encapsulate(w, t, s, dip, p, pp, &verdict[i]);
    }
}
