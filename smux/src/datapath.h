/* The SMux packet core: EAL-free pure functions over a frame in a buffer with
 * headroom.  classify -> select a DIP (ovs | crc32, connection pinning) -> encapsulate
 * (IP-in-IP | GRE), or answer in place (ARP for our address, ICMP fragmentation
 * needed, ICMP echo to our address).  The DPDK loop (smux_main.c), the unit tests
 * and the fuzzers all drive these same functions.
 */
#ifndef HLB_DATAPATH_H
#define HLB_DATAPATH_H

#include <stdatomic.h>
#include <stdint.h>
#include "conn_table.h"
#include "stateful.h"
#include "vip_table.h"

#define HLB_MAX_PORTS 2
#define HLB_MAX_BURST 64
/* What the I/O loop receives at once: testpmd's default.  Measured against 64
 * (smux/README.md, round 9): 2-3% faster stateless and with 1M connections, the
 * same insert rate; the mbufs of a burst (four lines each) stay in L1. */
#define HLB_RX_BURST 32

/* Every received frame is accounted exactly once (datapath invariant, tested):
 *   rx_packets = fwd_packets + arp_replies + icmp_echo_replies + gw_learned
 *                + sum(drops except multi_segment, tx_full)
 * A frag_needed drop is answered by one ICMP message (icmp_frag_needed).
 * multi_segment and tx_full are counted by the I/O loop around the datapath. */
enum hlb_drop_reason {
    HLB_DROP_TRUNCATED = 0,
    HLB_DROP_NOT_IPV4,
    HLB_DROP_BAD_IP,
    HLB_DROP_FRAGMENT,
    HLB_DROP_BAD_ARP,
    HLB_DROP_ARP_NOT_FOR_US,
    HLB_DROP_TO_SELF,          /* addressed to the SMux itself, not an echo request */
    HLB_DROP_NO_VIP,
    HLB_DROP_NO_BACKEND,       /* empty pool or all weights 0 */
    HLB_DROP_NO_GATEWAY,       /* gateway MAC not resolved yet */
    HLB_DROP_FRAG_NEEDED,      /* over MTU after encap: ICMP sent back instead */
    HLB_DROP_NO_HEADROOM,
    HLB_DROP_BAD_COOKIE,       /* cheetah: the echoed cookie names no server of the pool */
    HLB_DROP_BAD_QUIC_CID,     /* cheetah QUIC: a short header's connection id names none */
    HLB_DROP_BAD_QUIC_HEADER,  /* cheetah QUIC: a UDP payload that is no QUIC packet */
    HLB_DROP_MULTISEG,         /* chained mbuf (I/O loop) */
    HLB_DROP_TX_FULL,          /* TX queue (or a worker's inbox) full (I/O loop) */
    HLB_DROP_MAX
};

extern const char *const hlb_drop_names[HLB_DROP_MAX];

struct hlb_dp_config {
    uint32_t self_ip;          /* network order: outer source, ARP/ICMP identity */
    uint32_t gw_ip;            /* next hop for every encapsulated packet */
    uint8_t  port_mac[HLB_MAX_PORTS][6];
    uint8_t  gw_mac[6];
    uint8_t  gw_known;
    uint8_t  gw_static;        /* gw_mac given on the command line: never relearned */
    uint8_t  two_port;         /* forward out of port 1 instead of the ingress port */
    uint8_t  outer_ttl;
    uint16_t mtu;              /* IP MTU of the egress link */
};

struct hlb_dp_stats {
    uint64_t rx_packets;
    uint64_t rx_bytes;
    uint64_t fwd_packets;
    uint64_t fwd_bytes;        /* bytes of encapsulated frames sent */
    uint64_t replies;          /* ARP replies + ICMP sent from the datapath */
    uint64_t arp_replies;
    uint64_t icmp_frag_needed;
    uint64_t icmp_echo_replies;
    uint64_t gw_learned;       /* ARP frames from the gateway consumed */
    uint64_t arp_requests_sent;
    uint64_t conn_hits;
    uint64_t conn_misses;
    uint64_t conn_repinned;    /* pinned DIP left the pool: re-selected */
    uint64_t lean_packets;     /* frames finished by the burst's lean first pass */
    uint64_t pinned_packets;   /* frames sent by a flow pin (pins.h) */
    /* cheetah services (cheetah.h); invalid cookies are drops[HLB_DROP_BAD_COOKIE] */
    uint64_t ck_decoded;       /* segments placed by their cookie */
    uint64_t ck_fallback;      /* TCP segments without a timestamp option: hash path */
    uint64_t ck_syns[HLB_MECH_MAX];   /* SYNs with a timestamp, by the mechanism that placed them */
    uint64_t ck_stateless_syns;  /* cheetah-stateful SYNs left stateless (not an owner,
                                    or the stack empty: stateful.h exhausted) */
    uint64_t ck_decapsulated;    /* IP-in-IP frames from another SMux, opened (two tiers) */
    uint64_t quic_decoded;       /* QUIC packets placed by their connection id (dp_quic.h) */
    uint64_t quic_initial;       /* QUIC long headers placed by the hash of their DCID */
    uint64_t drops[HLB_DROP_MAX];
};

/* One worker: the state one lcore owns and writes alone.  Flows are partitioned
 * among the workers (each flow always reaches the same worker: README "Workers"),
 * so per-flow state lives here, one copy per worker; the VIP table is shared
 * (read-only but for its per-worker counter slices). */
struct hlb_worker {
    struct hlb_dp_config cfg;  /* a copy per worker: the gateway MAC is learned into
                                  it and shared through io_loop's gateway word */
    struct hlb_conn_table *ct; /* NULL: no VIP is pinned whatever the table says */
    struct hlb_sf_table *sf;   /* stateful Cheetah's ConnTable + ConnStack; NULL: this
                                  SMux owns no stateful connection (SYNs stateless) */
    uint64_t rng;              /* xorshift state of the p2c mechanism (non-zero) */
    struct hlb_dp_stats st;
    uint16_t id;               /* 0..n-1: its counter slice in every VIP table, its
                                  table-swap reader slot */
    uint8_t pinned_recently;   /* the last burst had pinned frames: prefetch ahead */
    /* An owner id's own table when this SMux holds several ids (sf_owners.h), NULL:
     * the id's entries are in sf.  sf_extra has a bit for each (the worker drains and
     * sweeps them).  A plain array the hot path reads without a fence: the control
     * thread writes sf_of[id] only before it publishes the first table giving the id,
     * then sets the id's bit of sf_extra with release (the table slot's publication
     * releases again), and never rewrites or frees it while a worker may read it
     * (the tables live until the worker's loop has ended). */
    struct hlb_sf_table *sf_of[HLB_SF_MAX_OWNERS];
    _Atomic uint16_t sf_extra;
    /* The loop's last turn (monotonic ms), for /health: on a line of its own, as the
     * control thread reads it. */
    _Alignas(64) _Atomic uint64_t heartbeat_ms;
} __attribute__((aligned(64)));

struct hlb_pkt {
    uint8_t *data;             /* frame start; moved back by encapsulation */
    uint32_t len;
    uint32_t headroom;         /* bytes writable before data */
    uint16_t in_port;
    uint16_t out_port;         /* set when the verdict is TX */
};

enum hlb_verdict { HLB_V_DROP = 0, HLB_V_TX = 1 };

#define HLB_OUT_DROP 0xff     /* out[] of the burst bodies: frame dropped (or consumed) */

/* Processes n (<= HLB_MAX_BURST) frames against one table: all of them see the same
 * table.  verdict[i] tells whether pkts[i] (possibly rewritten) is to be sent. */
void hlb_dp_burst(struct hlb_worker *w, struct hlb_vip_table *t, struct hlb_pkt *pkts,
                  uint8_t *verdict, unsigned n, uint32_t now_ms);

/* hlb_dp_burst without its lean first pass: every frame through the general code.
 * Same results by construction; tests compare the two on mixed bursts. */
void hlb_dp_burst_reference(struct hlb_worker *w, struct hlb_vip_table *t, struct hlb_pkt *pkts,
                            uint8_t *verdict, unsigned n, uint32_t now);

/* The DIP a flow goes to without pinning: index into t->dips, or -1 (no backend).
 * The tuple must be one that hlb_table_lookup() maps to s. */
int hlb_select_dip(const struct hlb_vip_table *t, const struct hlb_service *s,
                   const struct hlb_5tuple *tuple);

/* Writes an ARP request for cfg->gw_ip out of port; returns the frame length (60). */
uint32_t hlb_build_arp_request(const struct hlb_dp_config *cfg, uint16_t port, uint8_t *buf);

/* The worker (0..n-1) that owns the flow of a received frame: a function of its
 * 5-tuple alone, so every frame of a connection (SYN or not, with IP options or not)
 * has the same owner; frames without a tuple (ARP, not IPv4, truncated) and IP
 * fragments (dropped wherever they land) have worker 0.  The software distribution
 * stage (io_loop.c) and the tests use it; with multi-queue PMDs the NIC's or the
 * kernel's flow hash partitions instead.  Its bits are independent of the connection
 * table's (a mix of the connection hash), so a worker's flows still spread over its
 * whole table. */
unsigned hlb_flow_worker(const uint8_t *frame, uint32_t len, unsigned n_workers);
/* The same from a tuple (network order): the worker owning a connection, e.g. for
 * a close report.  An IP-in-IP frame (another SMux's forward, two tiers) counts by
 * its inner tuple in hlb_flow_worker(), so it reaches that same worker. */
unsigned hlb_flow_worker_tuple(uint32_t src_ip, uint32_t dst_ip, uint16_t src_port,
                               uint16_t dst_port, uint8_t proto, unsigned n_workers);

#define HLB_IPIP_OVERHEAD 20u
#define HLB_GRE_OVERHEAD  24u

#endif
