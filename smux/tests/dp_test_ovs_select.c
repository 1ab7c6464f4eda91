/* The precomputed `ovs` selection (ovs_select.h, what the packet core runs) against
 * the replica of OVS 3.1 (ovs_hash.c, checked against a live ovs-vswitchd): the same
 * bucket for random pools (bucket ids over their whole range, weights from 0 to
 * 65535, many equal, pools of weight-1 buckets as a WCMP table realises weights by
 * repetition, more buckets than one vector block), bases over 64 bits, TCP and UDP,
 * fixed-port and port-0 services; and every pick recorded from ovs-vswitchd in
 * tests/data/agent_ovs_select_vectors.txt. */
#include <inttypes.h>

#include "dp_testutil.h"
#include "hlb_ovs_hash.h"
#include "ovs_select.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A table of one ovs service with the given pool, built through the JSON parser as
 * any table is. */
static struct hlb_vip_table *pool_table(uint32_t vip, uint8_t proto, uint16_t port, uint64_t basis,
                                        const uint32_t *ids, const uint16_t *w, int n)
{
    static char doc[1 << 20];
    char ip[16];
    hlb_ip_str(vip, ip);
    int at = snprintf(doc, sizeof(doc),
                      "{\"version\":1,\"vips\":[{\"vip\":\"%s\",\"selection\":\"ovs\","
                      "\"hashBasis\":\"%" PRIu64 "\",\"connTable\":false,\"ports\":[{\"proto\":%u,"
                      "\"port\":%u,\"dips\":[", ip, basis, proto, port);
    for (int i = 0; i < n; i++)
        at += snprintf(doc + at, sizeof(doc) - (size_t)at,
                       "%s{\"ip\":\"10.%d.%d.%d\",\"weight\":%u,\"bucketId\":%u}", i ? "," : "",
                       (i >> 16) & 255, (i >> 8) & 255, (i & 255) + 1, w[i], ids[i]);
    snprintf(doc + at, sizeof(doc) - (size_t)at, "]}]}]}");
    return table_ok(doc, 0);
}

static void test_random_pools_match_replica(void **state)
{
    (void)state;
    enum { POOLS = 400, FLOWS = 500, MAXN = 80 };
    uint32_t ids[MAXN];
    uint16_t w[MAXN];
    unsigned checked = 0, blocks = 0, ties = 0;
    for (int p = 0; p < POOLS; p++) {
        int n = p % 10 == 0 ? 1 + (int)(rnd64() % MAXN) : 1 + (int)(rnd64() % 20);
        unsigned kind = (unsigned)(rnd64() % 4);
        for (int i = 0; i < n; i++) {
            ids[i] = kind == 0 ? (uint32_t)i : (uint32_t)(rnd64() % 0xffffff00u);
            for (int j = 0; j < i; j++)              /* bucket ids are distinct in a pool */
                if (ids[j] == ids[i])
                    ids[i] = ids[j] + 1 + (uint32_t)i;
            w[i] = kind == 1 ? 1                                  /* weight-1 buckets */
                 : kind == 2 ? (uint16_t)(rnd64() % 4)            /* small, zeros among them */
                 : (uint16_t)(rnd64() % 65536);
        }
        uint8_t proto = rnd64() % 2 ? HLB_IPPROTO_TCP : HLB_IPPROTO_UDP;
        uint16_t port = rnd64() % 3 ? (uint16_t)(1 + rnd64() % 65535) : 0;
        uint64_t basis = rnd64() % 3 ? rnd64() : rnd64() % 100;
        uint32_t vip = hlb_htonl(0x64400000u + (uint32_t)(rnd64() % 65536));
        struct hlb_vip_table *t = pool_table(vip, proto, port, basis, ids, w, n);
        const struct hlb_service *s = &t->services[0];
        blocks += s->ovs_live > HLB_OVS_BLOCK;
        static uint32_t srcs[FLOWS], wants[FLOWS];
        static uint16_t sps[FLOWS], dps[FLOWS];
        for (int f = 0; f < FLOWS; f++) {
            struct hlb_5tuple tp = {.src_ip = (uint32_t)rnd64(), .dst_ip = vip,
                                    .src_port = (uint16_t)rnd64(),
                                    .dst_port = port ? hlb_htons(port) : (uint16_t)rnd64(),
                                    .proto = proto};
            uint32_t h = hlb_ovs_select_hash(&tp, basis);
            int want = hlb_ovs_select_bucket(h, ids, w, n);
            assert_int_equal(hlb_ovs_flow_hash(s, tp.src_ip, tp.src_port, tp.dst_port), h);
            int got = hlb_ovs_pick(t, s, h);
            srcs[f] = tp.src_ip;
            sps[f] = tp.src_port;
            dps[f] = tp.dst_port;
            wants[f] = (uint32_t)((int)s->dip_first + want);
            if (want < 0) {
                assert_int_equal(got, -1);
            } else {
                if (got != (int)s->dip_first + want)
                    fail_msg("pool %d (%d buckets), flow %d: bucket %d, replica %d", p, n, f,
                             got - (int)s->dip_first, want);
                /* a tie decided by ">=": another live bucket has the same score */
                uint32_t best = 0;
                int same = 0;
                for (int i = 0; i < n; i++) {
                    if (!w[i])
                        continue;
                    uint32_t sc = (hlb_mix_finish(hlb_mix_add(hlb_mix_add(ids[i], 0), h), 8) &
                                   0xffff) * w[i];
                    same = sc == best ? same + 1 : sc > best ? 0 : same;
                    best = sc > best ? sc : best;
                }
                ties += same > 0;
            }
            checked++;
        }
        /* The burst form, over bursts of 1 to HLB_MAX_BURST packets. */
        for (int f = 0; s->ovs_live && f < FLOWS;) {
            unsigned k = 1 + (unsigned)(rnd64() % HLB_MAX_BURST);
            k = k < (unsigned)(FLOWS - f) ? k : (unsigned)(FLOWS - f);
            uint32_t dip[HLB_MAX_BURST];
            hlb_ovs_pick_burst(t, s, srcs + f, sps + f, dps + f, k, dip);
            assert_memory_equal(dip, wants + f, k * sizeof(uint32_t));
            f += (int)k;
        }
        hlb_table_free(t);
    }
    print_message("%u flows checked, %u pools over one block, %u ties\n", checked,
                  blocks, ties);
    assert_true(blocks > 10);
}

/* Ties: flow hashes at which two buckets score the same (found by search) go to the
 * later bucket, in either order, as in OVS. */
static void test_ties_go_to_the_later_bucket(void **state)
{
    (void)state;
    uint32_t ids[3] = {7, 0xfffffe00u, 12345};
    uint16_t w[3] = {1, 1, 0};
    struct hlb_vip_table *t = pool_table(ip4("100.64.0.1"), HLB_IPPROTO_TCP, 80, 0, ids, w, 3);
    uint32_t rev[3] = {0xfffffe00u, 7, 12345};
    struct hlb_vip_table *r = pool_table(ip4("100.64.0.1"), HLB_IPPROTO_TCP, 80, 0, rev, w, 3);
    int found = 0;
    for (uint32_t h = 0; h < 20000000u && found < 5; h++) {
        uint32_t a = hlb_mix_finish(hlb_mix_add(hlb_mix_add(ids[0], 0), h), 8) & 0xffff;
        uint32_t b = hlb_mix_finish(hlb_mix_add(hlb_mix_add(ids[1], 0), h), 8) & 0xffff;
        if (a != b)
            continue;
        assert_int_equal(hlb_ovs_select_bucket(h, ids, w, 3), 1);
        assert_int_equal(hlb_ovs_pick(t, &t->services[0], h), (int)t->services[0].dip_first + 1);
        assert_int_equal(hlb_ovs_pick(r, &r->services[0], h), (int)r->services[0].dip_first + 1);
        found++;
    }
    assert_int_equal(found, 5);
    hlb_table_free(t);
    hlb_table_free(r);
}

/* Every pick recorded from ovs-vswitchd (TCP and UDP, first fragments or none). */
static void test_recorded_ovs_vectors(void **state)
{
    (void)state;
    const char *path = getenv("HLB_OVS_VECTORS");
    FILE *f = fopen(path ? path : "", "r");
    if (!f)
        fail_msg("cannot open HLB_OVS_VECTORS=%s", path ? path : "(unset)");
    char line[2048];
    int checked = 0;
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        unsigned proto, sport, dport, chosen;
        char src[32], dst[32], frag[16], buckets[1024], scores[1024];
        uint64_t basis;
        assert_int_equal(sscanf(line, "%u %31s %31s %u %u %15s %" SCNu64 " %1023s %u %1023s",
                                &proto, src, dst, &sport, &dport, frag, &basis, buckets,
                                &chosen, scores), 10);
        if ((proto != HLB_IPPROTO_TCP && proto != HLB_IPPROTO_UDP) || strcmp(frag, "later") == 0)
            continue;                   /* not a service of the SMux's, or no ports hashed */
        uint32_t ids[64];
        uint16_t w[64];
        int n = 0;
        for (char *tok = strtok(buckets, ","); tok && n < 64; tok = strtok(NULL, ","), n++) {
            unsigned id, wt;
            assert_int_equal(sscanf(tok, "%u:%u", &id, &wt), 2);
            ids[n] = id;
            w[n] = (uint16_t)wt;
        }
        struct hlb_vip_table *t = pool_table(ip4(dst), (uint8_t)proto, (uint16_t)dport, basis,
                                             ids, w, n);
        const struct hlb_service *s = &t->services[0];
        uint16_t sp = hlb_htons((uint16_t)sport), dp = hlb_htons((uint16_t)dport);
        int got = hlb_ovs_pick(t, s, hlb_ovs_flow_hash(s, ip4(src), sp, dp));
        assert_true(got >= 0);
        assert_int_equal(t->bucket_ids[got], chosen);
        hlb_table_free(t);
        checked++;
    }
    fclose(f);
    print_message("%d recorded OVS picks\n", checked);
    assert_true(checked >= 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_pools_match_replica),
        cmocka_unit_test(test_ties_go_to_the_later_bucket),
        cmocka_unit_test(test_recorded_ovs_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
