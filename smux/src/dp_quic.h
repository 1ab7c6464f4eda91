/* Internal to the packet core (included by dp_burst.h): the general code's step for
 * a UDP datagram to a port of a cheetah service, a QUIC packet (p4/COOKIE-SPEC.md
 * §13, quic_cookie.h).  Short header: the server its connection id names, or
 * dropped (bad_quic_cid).  Long header (Initial, 0-RTT, Handshake): the server its
 * DCID names when that is an id one of the pool's servers issued, else the slot of
 * the pool's weights the hash of the DCID picks, so every datagram a client sends
 * before it learns the server's id (its first Initial, retransmissions, 0-RTT) goes
 * to one server, on every SMux, with no state.  Header that is no QUIC packet:
 * dropped (bad_quic_header). */
#ifndef HLB_DP_QUIC_H
#define HLB_DP_QUIC_H

#include "quic_cookie.h"

/* The DIP entry for the QUIC packet at udp (the UDP header; l4_len bytes of IP
 * payload) to service s, or -1: dropped and counted. */
static inline int quic_step(struct hlb_worker *w, const struct hlb_vip_table *t,
                            const struct hlb_service *s, const uint8_t *udp, uint32_t l4_len)
{
    const uint8_t *dcid = NULL;
    uint32_t n = 0;
    uint16_t vip_port;
    memcpy(&vip_port, udp + 2, 2);
    enum hlb_quic_header kind = hlb_quic_dcid(udp + 8, l4_len - 8, &dcid, &n);
    if (HLB_UNLIKELY(kind == HLB_QUIC_MALFORMED)) {
        hlb_dp_drop(w, HLB_DROP_BAD_QUIC_HEADER);
        return -1;
    }
    if (n == HLB_QUIC_CID_LEN) {
        uint32_t ident = hlb_quic_ident(s, vip_port, dcid);
        int dip = ident <= HLB_COOKIE_SERVER_ID_MAX ? hlb_ck_server_dip(t, s, ident) : -1;
        if (dip >= 0) {
            w->st.quic_decoded++;
            return dip;
        }
        if (kind == HLB_QUIC_SHORT) {
            hlb_dp_drop(w, HLB_DROP_BAD_QUIC_CID);
            return -1;
        }
    }
    if (s->weight_total == 0) {
        hlb_dp_drop(w, HLB_DROP_NO_BACKEND);
        return -1;
    }
    uint32_t slot = hlb_quic_initial_slot(hlb_quic_initial_hash(s, dcid, n), s->weight_total);
    w->st.quic_initial++;
    return (int)s->dip_first + pick_slot(&t->cum[s->dip_first], (int)s->dip_count, slot);
}

#endif
