/* The host agent's part of Cheetah on the server side (p4/COOKIE-SPEC.md):
 *   - tc egress: TSval of TCP segments from a local cookie VIP carries the cookie
 *     (§2); per-connection state in the LRU map hlb_cookie_conns;
 *   - sockops: keep-alive <= 25 s on passively opened connections to those VIPs (§6),
 *     the close of a connection a stateful SMux hinted (§7) into a ring buffer, and the
 *     count of those connections that are ESTABLISHED (this DIP's queue of work: the
 *     host agent's --load-metric connections).
 * The ingress half (TSecr restore) runs in the XDP decapsulator (bpf/cookie.bpf.h). */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "cookie.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define SOL_SOCKET 1
#define SO_KEEPALIVE 9
#define SOL_TCP 6
#define AF_INET 2

/* The state of the connection this segment belongs to, with its cookie current, or
 * NULL when the segment is not to be encoded. */
static __always_inline struct hlb_cookie_conn *egress_conn(const struct hlb_cookie_tuple *key,
                                                           const struct tcphdr *th, __u32 tsval)
{
    struct hlb_cookie_conn *c = bpf_map_lookup_elem(&hlb_cookie_conns, key);
    const struct hlb_cookie_host *h = cookie_host();
    if (!h || !h->server_id) {
        return NULL;
    }
    if (!c || (th->syn && !(c->flags & HLB_CONN_HINTED))) {
        if (!cookie_vip(key->vip)) {
            return NULL;
        }
        if (!(th->syn && th->ack)) {
            /* Never start mid-connection: the client's PAWS could drop the jump. */
            cookie_count(HLB_CK_EGRESS_NO_STATE);
            return NULL;
        }
        struct hlb_cookie_conn init = { .ident = h->server_id };
        bpf_map_update_elem(&hlb_cookie_conns, key, &init, BPF_ANY);
        c = bpf_map_lookup_elem(&hlb_cookie_conns, key);
        if (!c) {
            return NULL;
        }
    }
    if (c->gen != h->gen) {
        const struct hlb_cookie_vip *v = cookie_vip(key->vip);
        if (!v) {
            return NULL;   /* no longer a cookie VIP */
        }
        c->prev_cookie = c->cookie;
        c->cookie = hlb_cookie_make(v, key, c->ident);
        c->gen = h->gen;
    }
    if (!(c->flags & HLB_CONN_HAS_LAST) || (__s32) (tsval - c->last_tsval) > 0 || th->syn) {
        c->last_tsval = tsval;
        c->flags |= HLB_CONN_HAS_LAST;
    }
    return c;
}

SEC("tc")
int hlb_cookie_egress(struct __sk_buff *skb)
{
    void *data = (void *) (long) skb->data;
    void *end = (void *) (long) skb->data_end;
    struct ethhdr *eth = data;
    if ((void *) (eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP)) {
        return TC_ACT_OK;
    }
    struct cookie_seg s;
    int rc = cookie_parse(skb, 0, data, eth + 1, end, &s);
    if (rc == CK_SEG_NOT_TCP) {
        return TC_ACT_OK;
    }
    if (rc != CK_SEG_OK) {
        if (cookie_vip(s.ip->saddr)) {
            cookie_count(rc == CK_SEG_NO_TS ? HLB_CK_EGRESS_NO_TS : HLB_CK_BAD_OPTIONS);
        }
        return TC_ACT_OK;
    }
    struct hlb_cookie_tuple key = { .vip = s.ip->saddr, .client = s.ip->daddr,
                                    .vip_port = s.th->source, .client_port = s.th->dest };
    __u32 from = s.ts[0];
    __u32 tsval = bpf_ntohl(from);
    struct hlb_cookie_conn *c = egress_conn(&key, s.th, tsval);
    if (!c) {
        return TC_ACT_OK;
    }
    __u32 to = bpf_htonl(hlb_cookie_encode(tsval, c->cookie));
    __u32 csum_off = (__u32) ((void *) &s.th->check - data);
    s.ts[0] = to;
    /* Knows the skb's checksum state: updates a complete checksum, leaves a partial
     * one (offload, GSO) to be completed over the new bytes. */
    bpf_l4_csum_replace(skb, csum_off, hlb_csum_word(from, s.odd), hlb_csum_word(to, s.odd),
                        sizeof(to));
    cookie_count(s.slow ? HLB_CK_ENCODED_SLOW_PATH : HLB_CK_ENCODED);
    return TC_ACT_OK;
}

static __always_inline void keep_at_most(struct bpf_sock_ops *ops, int level, int opt, int bound)
{
    int cur = 0;
    if (bpf_getsockopt(ops, level, opt, &cur, sizeof(cur)) == 0 && cur > 0 && cur <= bound) {
        return;   /* the application asked for as often or more */
    }
    bpf_setsockopt(ops, level, opt, &bound, sizeof(bound));
}

/* Closes of hinted connections, drained by the loader (src/xdp_loader.c), which hands
 * them to the agent for the owner's POST /cheetah/closed (§7: under DSR the SMux never
 * sees the server's FIN). */
struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, HLB_COOKIE_CLOSED_RING);
} hlb_cookie_closed SEC(".maps");

static __always_inline struct hlb_cookie_tuple sockops_tuple(const struct bpf_sock_ops *ops)
{
    /* local_port is in host order; remote_port holds the network-order port in its
     * top 16 bits on little-endian hosts, which bpf_ntohl turns into host order. */
    return (struct hlb_cookie_tuple) { .vip = ops->local_ip4, .client = ops->remote_ip4,
                                       .vip_port = bpf_htons((__u16) ops->local_port),
                                       .client_port = bpf_htons((__u16) bpf_ntohl(ops->remote_port)) };
}

/* Connections to this host's VIPs (in this network namespace) that are ESTABLISHED:
 * queued for accept() or in service.  Counted when the passive open completes, uncounted
 * when the socket leaves ESTABLISHED; an exact gauge at two atomic adds a connection.
 * The loader writes it to its stats file (establishedConnections). */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __s64);
} hlb_cookie_established SEC(".maps");

/* The sockets this object counted.  The state callbacks a socket asks for reach every
 * sockops program of the cgroup -- other agents' (one per network namespace on an
 * emulated host) and this one's after a restart (a fresh, empty gauge) -- so a socket is
 * uncounted only where it was counted. */
struct {
    __uint(type, BPF_MAP_TYPE_SK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, __u32);
} hlb_cookie_counted SEC(".maps");

static __always_inline void established_add(__s64 d)
{
    __u32 zero = 0;
    __s64 *n = bpf_map_lookup_elem(&hlb_cookie_established, &zero);
    if (n) {
        __sync_fetch_and_add(n, d);
    }
}

static __always_inline void count_established(struct bpf_sock_ops *ops)
{
    struct bpf_sock *sk = ops->sk;
    if (!sk) {
        return;
    }
    __u32 *mark = bpf_sk_storage_get(&hlb_cookie_counted, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
    if (mark && !*mark) {
        *mark = 1;
        established_add(1);
        cookie_count(HLB_CK_COUNTED);
    }
}

/* A socket leaving ESTABLISHED (to CLOSE_WAIT, FIN_WAIT1 or, reset, CLOSE). */
static __always_inline void uncount_established(struct bpf_sock_ops *ops)
{
    struct bpf_sock *sk = ops->sk;
    if (ops->args[0] != BPF_TCP_ESTABLISHED || !sk) {
        return;
    }
    __u32 *mark = bpf_sk_storage_get(&hlb_cookie_counted, sk, 0, 0);
    if (mark && *mark) {
        *mark = 0;
        established_add(-1);
    }
}

/* The socket's connection state if its SYN carried a stateful SMux's hint, else NULL. */
static __always_inline struct hlb_cookie_conn *hinted_conn(const struct bpf_sock_ops *ops,
                                                           struct hlb_cookie_tuple *key)
{
    *key = sockops_tuple(ops);
    struct hlb_cookie_conn *c = bpf_map_lookup_elem(&hlb_cookie_conns, key);
    return c && (c->flags & HLB_CONN_HINTED) ? c : NULL;
}

/* TCP_CLOSE of a hinted connection: the socket is done (LAST_ACK acknowledged, into
 * TIME_WAIT, or reset), so no segment of it needs the owner's entry any more. */
static __always_inline void report_close(struct bpf_sock_ops *ops)
{
    if (ops->args[1] != BPF_TCP_CLOSE) {
        return;
    }
    struct hlb_cookie_tuple key;
    struct hlb_cookie_conn *c = hinted_conn(ops, &key);
    if (!c) {
        return;
    }
    struct hlb_cookie_closed *r = bpf_ringbuf_reserve(&hlb_cookie_closed, sizeof(*r), 0);
    if (!r) {
        cookie_count(HLB_CK_CLOSE_LOST);
        return;
    }
    r->t = key;
    r->ident = c->ident;
    r->pad = 0;
    bpf_ringbuf_submit(r, 0);
    cookie_count(HLB_CK_CLOSE_REPORTED);
}

SEC("sockops")
int hlb_cookie_sockops(struct bpf_sock_ops *ops)
{
    if (ops->family != AF_INET) {
        return 1;
    }
    if (ops->op == BPF_SOCK_OPS_STATE_CB) {   /* asked for below */
        uncount_established(ops);
        report_close(ops);
        return 1;
    }
    if (ops->op != BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB) {
        return 1;
    }
    const struct hlb_cookie_host *h = cookie_host();
    if (!h || !cookie_vip(ops->local_ip4)) {
        return 1;
    }
    if (h->netns_cookie && bpf_get_netns_cookie(ops) != h->netns_cookie) {
        return 1;
    }
    /* The state changes come back for a counted connection (its leaving ESTABLISHED
     * uncounts it) and for a hinted one (its TCP_CLOSE is reported). */
    int counted = h->flags & HLB_COOKIE_HOST_COUNT_ESTABLISHED;
    if (counted) {
        count_established(ops);
    }
    struct hlb_cookie_tuple key;
    if (counted || hinted_conn(ops, &key)) {
        bpf_sock_ops_cb_flags_set(ops, ops->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_STATE_CB_FLAG);
    }
    if (!h->keepalive_s) {
        return 1;
    }
    int one = 1;
    bpf_setsockopt(ops, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    keep_at_most(ops, SOL_TCP, TCP_KEEPIDLE, h->keepalive_s);
    keep_at_most(ops, SOL_TCP, TCP_KEEPINTVL, h->keepalive_s);
    cookie_count(HLB_CK_KEEPALIVE_SET);
    return 1;
}
