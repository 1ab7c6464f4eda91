/* Prism request hand-off: the layouts every part shares.
 *
 *   - the steering map the host agent's XDP program reads (bpf/prism_steer.bpf.h)
 *     and the front end writes (src/prism_capi.c): flow -> drop while locked, or
 *     re-encapsulate to the DIP host that owns the connection now;
 *   - the control messages between a front end and a backend (frontend/wire.py
 *     speaks the same header) and the TCP state they carry (src/tcp_handoff.c).
 *
 * Header-only, no libc: the BPF object includes it too. */
#ifndef HLB_PRISM_H
#define HLB_PRISM_H

#include <linux/types.h>

/* ------------------------------------------------------------ steering map */

/* Size of the steering map: connections handed off (or being handed off)
 * from one front-end host at a time. */
#define PRISM_MAX_FLOWS 65536

/* Key: the client->VIP direction of a connection, addresses and ports in
 * network order, as they appear in the client's packets. */
struct prism_flow_key {
    __u32 client;
    __u32 vip;
    __u16 client_port;
    __u16 vip_port;
};

enum prism_steer_action {
    PRISM_STEER_LOCKED = 1,   /* being exported or imported: drop (TCP retransmits) */
    PRISM_STEER_FORWARD = 2,  /* owned by a backend: re-encapsulate to owner_dip */
};

struct prism_flow_val {
    __u32 action;      /* enum prism_steer_action */
    __u32 owner_dip;   /* network order; FORWARD only */
};

enum prism_steer_counter {
    PRISM_C_LOCKED_DROP,   /* packets dropped while their flow was locked */
    PRISM_C_FORWARDED,     /* packets re-encapsulated to the owning backend */
    PRISM_C_UNREADY_DROP,  /* backend host: packets of a flow whose socket is not ready */
    PRISM_C_MAX
};

#define PRISM_COUNTER_NAMES { "locked_drop", "forwarded", "unready_drop" }

/* Backend hosts (the agent's --prism-backend): key 0 of the array map
 * hlb_prism_backend is 1.  A tunnelled TCP segment without SYN whose flow has no
 * socket here yet, only a listener, or a socket still in repair mode (being
 * imported) is dropped instead of delivered (where the kernel would answer with
 * an RST, or a half-imported socket would take it): the front end may steer a
 * flow here before the backend has imported it. */
#define PRISM_BACKEND_MAP "hlb_prism_backend"

/* Names the map and the counters are pinned under (the agent's
 * --prism-pin-dir). */
#define PRISM_PIN_FLOWS "hlb_prism_flows"
#define PRISM_PIN_COUNTERS "hlb_prism_counters"

/* ------------------------------------------------------------ control wire */

/* Every control message: this header (network order), then `len` bytes. */
#define PRISM_WIRE_MAGIC 0x50524d31u   /* "PRM1" */
#define PRISM_WIRE_VERSION 1
#define PRISM_WIRE_HDR_LEN 16
/* A message body carries one TCP state: its queues are bounded by the socket
 * buffers; 64 MiB is far above any default and keeps a corrupt length from
 * making a peer allocate without bound. */
#define PRISM_WIRE_MAX_BODY (64u << 20)

struct prism_wire_hdr {
    __u32 magic;
    __u16 version;
    __u16 type;      /* enum prism_msg */
    __u32 conn_id;   /* the front end's number for the client connection */
    __u32 len;       /* body bytes */
};

/* Front end (FE) <-> backend (BE).  One hand-off of a request:
 *   FE: steer flow to BE, export   FE -> BE  HANDOFF  {TCP state}
 *   BE: import, serve at once      BE -> FE  IMPORTED
 *   BE: response sent and ACKed    BE -> FE  RECLAIM
 *   FE: lock flow                  FE -> BE  LOCKED
 *   BE: export, release            BE -> FE  RETURN   {TCP state}
 *   FE: import, unlock; next request.
 * HANDOFF needs the flow steered to the BE before the import, with the BE's host
 * dropping its segments until the import is complete (the agent's
 * --prism-backend): the FE steers, then exports and sends, in one step.
 * Otherwise (a steering only in force after the import: the front-end host's
 * agent without that guard, a fabric rule) the FE locks the flow and sends
 * HANDOFF_HOLD: the BE imports, answers IMPORTED and serves only after the FE's
 * GO, so that no ACK of its first segments is dropped (an imported connection has
 * no RTT sample: a lost window costs the initial 1 s retransmission timeout).
 * Instead of RECLAIM the backend may send CLOSED (the client closed its side
 * and the backend finished the close) or FAILED (it could not serve; the FE
 * resets the client).  The FE sends ABORT when it gives up on a connection
 * (hand-off timeout): the BE resets it if it still holds it. */
enum prism_msg {
    PRISM_MSG_HANDOFF = 1,
    PRISM_MSG_IMPORTED = 2,
    PRISM_MSG_GO = 3,
    PRISM_MSG_RECLAIM = 4,
    PRISM_MSG_LOCKED = 5,
    PRISM_MSG_RETURN = 6,
    PRISM_MSG_CLOSED = 7,
    PRISM_MSG_FAILED = 8,
    PRISM_MSG_ABORT = 9,
    PRISM_MSG_HANDOFF_HOLD = 10,
    PRISM_MSG_MAX
};

/* ------------------------------------------------------------ TCP state */

/* The exported state of one established connection, as encoded by
 * prism_tcp_encode() (network order, fixed part then the queues):
 *
 *   off len field
 *     0   4 magic PRISM_STATE_MAGIC
 *     4   1 version PRISM_STATE_VERSION
 *     5   1 options: PRISM_OPT_* negotiated on the connection
 *     6   1 snd_wscale (the peer's shift)   7  1 rcv_wscale (ours)
 *     8   2 mss (the peer's MSS clamp)      10 2 reserved, 0
 *    12   4 local address   16 4 peer address   20 2 local port   22 2 peer port
 *    24   4 snd_seq: sequence number after the last byte in the send queue
 *    28   4 rcv_seq: sequence number after the last byte received
 *    32   4 ts_val: the connection's TCP timestamp clock (TCP_TIMESTAMP)
 *    36  20 snd_wl1, snd_wnd, max_window, rcv_wnd, rcv_wup (TCP_REPAIR_WINDOW)
 *    56   4 sendq_len (sent but not acknowledged + not yet sent)
 *    60   4 unsent_len (the not-yet-sent tail of the send queue)
 *    64   4 recvq_len (received, not read by the application)
 *    68   4 with PRISM_OPT_COOKIE only (steering mode c): the TCP timestamp the client
 *           holds from this connection (the last wire TSval it accepted: cookie and
 *           all, as the Cheetah host agent wrote it; src/prism_cookie.h)
 *    68/72  send queue bytes, then receive queue bytes */
#define PRISM_STATE_MAGIC 0x50545331u   /* "PTS1" */
#define PRISM_STATE_VERSION 1
#define PRISM_STATE_FIXED_LEN 68

#define PRISM_OPT_TIMESTAMPS 1
#define PRISM_OPT_SACK 2
#define PRISM_OPT_WSCALE 4
#define PRISM_OPT_COOKIE 8   /* not a TCP option: the connection carries Cheetah cookies */

#endif /* HLB_PRISM_H */
