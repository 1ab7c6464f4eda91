/* Moving an established TCP connection between hosts with TCP_REPAIR.
 *
 * Export (old owner), in this order: repair mode on; the connection must be
 * ESTABLISHED; negotiated options and window scales (TCP_INFO), queue lengths,
 * the peer's MSS clamp, the timestamp clock, the windows (TCP_REPAIR_WINDOW),
 * the addresses, then the send and receive queues with their sequence numbers.
 * The socket stays in repair mode: the caller makes sure no packet of the
 * connection reaches it any more (the flow is locked), then releases it, which
 * closes it without a FIN or an RST.
 *
 * Import (new owner): repair mode on a new socket; the queue sequence numbers
 * (each queue starts where its bytes start: snd_seq - sendq_len, rcv_seq -
 * recvq_len); bind to the exported local address (the VIP, on lo) and connect
 * to the peer (no SYN in repair mode); the sent-but-unacknowledged bytes and
 * the receive queue; the options; the timestamp clock; the windows; repair
 * mode off; then the never-sent tail of the send queue, as ordinary writes.
 *
 * All functions return 0 or a negative errno. */
#ifndef PRISM_TCP_HANDOFF_H
#define PRISM_TCP_HANDOFF_H

#include <stddef.h>
#include <stdint.h>

#include "hlb_prism.h"

struct prism_tcp_state {
    uint8_t options;        /* PRISM_OPT_*; PRISM_OPT_COOKIE is set by prism_cookie.h */
    uint8_t snd_wscale, rcv_wscale;
    uint16_t mss;
    uint32_t local_addr, peer_addr;     /* network order */
    uint16_t local_port, peer_port;     /* network order */
    uint32_t snd_seq, rcv_seq, ts_val;
    uint32_t snd_wl1, snd_wnd, max_window, rcv_wnd, rcv_wup;
    uint32_t sendq_len, unsent_len, recvq_len;
    uint32_t seen_wire;                 /* PRISM_OPT_COOKIE: the wire TSval the client holds */
    uint8_t *sendq, *recvq;             /* malloc'ed, owned by the state */
};

/* How long an import waits for the previous socket of the same 4-tuple on
 * this host to disappear (a connection handed back and forth between the same
 * two hosts): connect() fails with EADDRNOTAVAIL while it is still hashed. */
#define PRISM_IMPORT_WAIT_US 200000

/* Exports the connection on fd.  `prefix` (may be empty) are bytes the
 * application has read from the socket but not consumed: they go back in
 * front of the receive queue, so the next owner reads them first. */
int prism_tcp_export(int fd, const void *prefix, size_t prefix_len, struct prism_tcp_state *st);

/* Closes an exported socket (still in repair mode): nothing is sent. */
int prism_tcp_release(int fd);

/* Recreates the connection in a new socket, returned in *fd_out (blocking). */
int prism_tcp_import(const struct prism_tcp_state *st, int *fd_out);

/* Resets the peer of an exported connection from this host: imports `st`,
 * leaves repair mode with a window probe (an old sequence number: the peer
 * answers with an ACK that tells where it is, which this host's listener then
 * answers with an RST at exactly that number), and aborts the socket (an RST
 * at the exported sequence number, which is exact if nobody sent since). */
int prism_tcp_reset_peer(const struct prism_tcp_state *st);

void prism_tcp_state_free(struct prism_tcp_state *st);

size_t prism_tcp_encoded_len(const struct prism_tcp_state *st);
/* Writes the encoding (hlb_prism.h) into buf of prism_tcp_encoded_len() bytes. */
void prism_tcp_encode(const struct prism_tcp_state *st, uint8_t *buf);
/* Parses and checks an encoding; on error returns -EINVAL and sets *why to a
 * message naming the field. */
int prism_tcp_decode(const uint8_t *buf, size_t len, struct prism_tcp_state *st, const char **why);

#endif
