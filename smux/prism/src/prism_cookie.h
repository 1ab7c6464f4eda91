/* Steering mode c: the Cheetah cookie follows the owner of a handed-off connection
 * (README.md, "Steering modes"; p4/COOKIE-SPEC.md §14).
 *
 * The host that imports a connection writes its agent's cookie state for the flow
 * (the agent's pinned hlb_cookie_conns, --pin-dir) before the socket sends anything,
 * so that the agent's tc egress program writes THIS host's server id into the
 * connection's TSval from the first segment on; the client echoes it and the mux
 * sends the connection's packets here with no per-flow state of its own.
 *
 * The client's PAWS check drops a segment whose TSval is older than the one it
 * holds, and a new cookie changes the wire value by up to 2^31.  So the exporter puts
 * the wire TSval the client holds in the state (PRISM_OPT_COOKIE, seen_wire: the last
 * one its agent wrote, or, if it sent nothing since its own import, the one it was
 * handed), and the importer starts the connection's timestamp clock where the new
 * wire values stay newer than that one for PRISM_COOKIE_WINDOW ticks: the clock as it
 * is, or a point in the next or the one after next 2^16-tick epoch (a jump of at most
 * 2^18 ticks, which also sets the version bit as needed).
 *
 * All functions return 0 or a negative errno unless said otherwise. */
#ifndef PRISM_COOKIE_H
#define PRISM_COOKIE_H

#include <stdint.h>

#include "tcp_handoff.h"

/* Ticks after an import during which the client accepts the new owner's segments
 * even if the new owner has sent nothing yet (30 s at Linux's 1 ms; a window of 2^15
 * ticks or more cannot always be had when the cookie stays the same).  The new owner
 * sends at once in practice: the backend its response, the front end its ACK of the
 * client's next request. */
#define PRISM_COOKIE_WINDOW 30000u

/* The agent's cookie maps on this host (its --pin-dir); -1 when not open. */
struct prism_cookie {
    int conns_fd, vips_fd, host_fd;
};

int prism_cookie_open(struct prism_cookie *pc, const char *pin_dir);

/* The BPF map pinned as dir/name: its fd, or -errno. */
int prism_open_pinned(const char *dir, const char *name);
void prism_cookie_close(struct prism_cookie *pc);
/* This host's server id (1..16383); 0 when cookies are off or the maps are not open. */
uint16_t prism_cookie_server_id(const struct prism_cookie *pc);

/* The timestamp clock an importer whose cookie is `next` starts at, from the clock
 * `ts` it was handed, so that for PRISM_COOKIE_WINDOW ticks every wire TSval it sends
 * is newer (RFC 7323 PAWS) than `seen`, the one the client holds. */
uint32_t prism_cookie_ts_start(uint32_t ts, uint32_t seen, uint16_t next);

/* After exporting st on this host: sets PRISM_OPT_COOKIE and st->seen_wire when this
 * host's agent has cookie state for the connection. */
void prism_cookie_export(const struct prism_cookie *pc, struct prism_tcp_state *st);

/* Before importing st on this host: if st carries PRISM_OPT_COOKIE and the VIP has a
 * cookie key here, moves st->ts_val (prism_cookie_ts_start) and writes the flow's
 * agent state: this host's id and cookie, the client's wire TSval, nothing sent yet.
 * Returns 1 when it did, 0 when the connection carries no cookie here. */
int prism_cookie_adopt(const struct prism_cookie *pc, struct prism_tcp_state *st);

#endif
