/* Test-only: exports the SMux's crc32 selection (smux/include/hlb_pkt.h, included as
 * it is) to Python through ctypes, so p4/tests/test_smux_agreement.py compares the P4
 * model with the C code the SMux runs.  Built by the test into a temporary directory. */
#include "hlb_pkt.h"

/* Addresses and ports in host order, as Python passes them. */
uint32_t shim_crc32_5tuple(uint32_t src_ip, uint32_t dst_ip, uint8_t proto,
                           uint16_t src_port, uint16_t dst_port)
{
    struct hlb_5tuple t;
    memset(&t, 0, sizeof(t));
    t.src_ip = hlb_htonl(src_ip);
    t.dst_ip = hlb_htonl(dst_ip);
    t.proto = proto;
    t.src_port = hlb_htons(src_port);
    t.dst_port = hlb_htons(dst_port);
    return hlb_crc32_5tuple(&t);
}

int shim_weighted_pick(uint32_t hash, const uint32_t *cum, int n)
{
    return hlb_weighted_pick(hash, cum, n);
}

int shim_weighted_pick_m(uint32_t hash, const uint32_t *cum, int n)
{
    return n > 0 && cum[n - 1] ? hlb_weighted_pick_m(hash, cum, n, hlb_fastmod_m(cum[n - 1]))
                               : hlb_weighted_pick(hash, cum, n);
}
