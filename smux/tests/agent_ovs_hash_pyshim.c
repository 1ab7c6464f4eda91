/* Test-only shared library around the OVS hash replica, loaded with ctypes by
 * agent_ovs_agreement.py.  It includes the implementation so that it can also
 * export the per-bucket score OVS prints in ofproto/trace ("bucket N: score S"),
 * which lets the agreement test compare every score, not only the winner. */
#include "../src/ovs_hash.c"

uint32_t hlb_test_bucket_score(uint32_t hash, uint32_t bucket_id, uint16_t weight)
{
    return (hash_int_basis(bucket_id, hash) & 0xffff) * weight;
}
