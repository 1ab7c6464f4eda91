/* Steering mode c on a backend host: the connections this backend handed back to
 * their front end (README.md, "Steering modes").
 *
 * After the hand-back the client still echoes this host's cookie until the front end
 * sends it a segment, so the mux keeps sending the flow here: the backend writes its
 * host's steering map (the agent's hlb_prism_flows) FORWARD to the front end's DIP
 * before it exports, and removes the entry when the flow is handed here again or
 * when `linger` has passed (the front end's idle timeout bounds how long a client may
 * stay silent with this host's cookie).  This table remembers when each entry goes. */
#ifndef PRISM_LINGER_H
#define PRISM_LINGER_H

#include <stdint.h>

#include "hlb_prism.h"

struct prism_linger;

/* steer_fd: the host's pinned steering map; capacity: entries at most (a power of two
 * is used above it). */
struct prism_linger *prism_linger_new(int steer_fd, uint64_t linger_ns, uint32_t capacity);
void prism_linger_free(struct prism_linger *l);
/* The flow now forwards to front_end (network order) until now + linger. */
int prism_linger_forward(struct prism_linger *l, const struct prism_flow_key *k,
                         uint32_t front_end, uint64_t now_ns);
/* The flow is handed here again: its entry goes now. */
int prism_linger_take(struct prism_linger *l, const struct prism_flow_key *k);
/* Removes the entries whose time has passed; returns how many. */
uint32_t prism_linger_expire(struct prism_linger *l, uint64_t now_ns);
uint32_t prism_linger_count(const struct prism_linger *l);

#endif
