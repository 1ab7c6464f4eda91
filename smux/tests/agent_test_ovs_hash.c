/* cmocka unit tests of the OVS 3.1 select-group replica (smux/src/ovs_hash.c).
 *
 * The vectors in tests/data/agent_ovs_select_vectors.txt were recorded from a
 * real ovs-vswitchd (ofproto/trace) by agent_ovs_agreement.py; the other tests
 * pin down OVS's bucket-choice rules.  Usage: agent_test_ovs_hash [vectors] */
#include <arpa/inet.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Included, not linked, to reach the per-bucket score helper. */
#include "../src/ovs_hash.c"

#define MAX_BUCKETS 16

static const char *vectors_path = "tests/data/agent_ovs_select_vectors.txt";

static struct hlb_5tuple tuple(const char *src, const char *dst, uint16_t sport,
                               uint16_t dport, uint8_t proto)
{
    struct hlb_5tuple t = { 0 };
    assert_int_equal(inet_pton(AF_INET, src, &t.src_ip), 1);
    assert_int_equal(inet_pton(AF_INET, dst, &t.dst_ip), 1);
    t.src_port = htons(sport);
    t.dst_port = htons(dport);
    t.proto = proto;
    return t;
}

static int parse_buckets(char *spec, uint32_t *ids, uint16_t *weights)
{
    int n = 0;
    for (char *tok = strtok(spec, ","); tok && n < MAX_BUCKETS; tok = strtok(NULL, ",")) {
        unsigned id, w;
        assert_int_equal(sscanf(tok, "%u:%u", &id, &w), 2);
        ids[n] = id;
        weights[n] = (uint16_t) w;
        n++;
    }
    return n;
}

/* Every recorded OVS answer: chosen bucket and each bucket's score. */
static void test_recorded_ovs_vectors(void **state)
{
    (void) state;
    FILE *f = fopen(vectors_path, "r");
    if (!f) {
        fail_msg("cannot open %s", vectors_path);
    }
    char line[1024];
    int checked = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') {
            continue;
        }
        unsigned proto, sport, dport, chosen;
        char src[32], dst[32], frag[16], buckets[512], scores[512];
        uint64_t basis;
        int got = sscanf(line, "%u %31s %31s %u %u %15s %" SCNu64 " %511s %u %511s", &proto,
                         src, dst, &sport, &dport, frag, &basis, buckets, &chosen, scores);
        assert_int_equal(got, 10);

        uint32_t ids[MAX_BUCKETS];
        uint16_t weights[MAX_BUCKETS];
        int n = parse_buckets(buckets, ids, weights);
        struct hlb_5tuple t = tuple(src, dst, (uint16_t) sport, (uint16_t) dport,
                                    (uint8_t) proto);
        uint32_t h = strcmp(frag, "later") == 0 ? hlb_ovs_select_hash_later_fragment(&t, basis)
                                                : hlb_ovs_select_hash(&t, basis);
        int idx = hlb_ovs_select_bucket(h, ids, weights, n);
        assert_true(idx >= 0);
        assert_int_equal(ids[idx], chosen);

        int i = 0;
        for (char *tok = strtok(scores, ","); tok; tok = strtok(NULL, ","), i++) {
            if (strcmp(tok, "-") == 0) {
                assert_int_equal(weights[i], 0);
            } else {
                uint32_t mine = (hash_int_basis(ids[i], h) & 0xffff) * weights[i];
                assert_int_equal(mine, strtoul(tok, NULL, 10));
            }
        }
        assert_int_equal(i, n);
        checked++;
    }
    fclose(f);
    assert_true(checked >= 100);
}

static void test_no_bucket(void **state)
{
    (void) state;
    uint32_t ids[] = { 0, 1, 2 };
    uint16_t zero[] = { 0, 0, 0 };
    assert_int_equal(hlb_ovs_select_bucket(12345, ids, zero, 0), -1);
    assert_int_equal(hlb_ovs_select_bucket(12345, ids, zero, 3), -1);
}

static void test_zero_weight_never_chosen(void **state)
{
    (void) state;
    uint32_t ids[] = { 5, 6, 9 };
    uint16_t weights[] = { 2, 0, 2 };
    for (uint32_t h = 0; h < 100000; h++) {
        int idx = hlb_ovs_select_bucket(h * 2654435761u, ids, weights, 3);
        assert_true(idx == 0 || idx == 2);
    }
}

/* OVS keeps the later bucket on equal scores ("score >= best"), also when
 * every live score is 0. */
static void test_tie_goes_to_later_bucket(void **state)
{
    (void) state;
    uint32_t ids[] = { 5, 5, 5 };
    uint16_t weights[] = { 1, 1, 0 };
    assert_int_equal(hlb_ovs_select_bucket(777, ids, weights, 3), 1);
}

/* Ports are hashed only for TCP/UDP/SCTP and not for non-first fragments. */
static void test_ports_only_for_l4(void **state)
{
    (void) state;
    struct hlb_5tuple a = tuple("1.2.3.4", "20.0.0.1", 1000, 80, 6);
    struct hlb_5tuple b = tuple("1.2.3.4", "20.0.0.1", 1001, 80, 6);
    assert_int_not_equal(hlb_ovs_select_hash(&a, 1), hlb_ovs_select_hash(&b, 1));
    assert_int_equal(hlb_ovs_select_hash_later_fragment(&a, 1),
                     hlb_ovs_select_hash_later_fragment(&b, 1));
    a.proto = b.proto = 1;
    assert_int_equal(hlb_ovs_select_hash(&a, 1), hlb_ovs_select_hash(&b, 1));
    /* The basis matters, all 64 bits of it. */
    assert_int_not_equal(hlb_ovs_select_hash(&a, 1), hlb_ovs_select_hash(&a, 1ull << 40));
}

/* OVS weights are not proportional: the winner is argmax(u16 hash * weight),
 * so weights 1:3 give shares 1/6 : 5/6 (P(u0 > 3 u1) = 1/6), not 1/4 : 3/4. */
static void test_weight_shares_follow_ovs_rule(void **state)
{
    (void) state;
    uint32_t ids[] = { 0, 1 };
    uint16_t weights[] = { 1, 3 };
    int first = 0, total = 200000;
    for (int i = 0; i < total; i++) {
        struct hlb_5tuple t = { .src_ip = (uint32_t) i * 2654435761u, .dst_ip = 0x0100000a,
                                .src_port = (uint16_t) i, .dst_port = htons(80), .proto = 6 };
        first += hlb_ovs_select_bucket(hlb_ovs_select_hash(&t, 0), ids, weights, 2) == 0;
    }
    double share = (double) first / total;
    assert_true(share > 1.0 / 6 - 0.01 && share < 1.0 / 6 + 0.01);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        vectors_path = argv[1];
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recorded_ovs_vectors),
        cmocka_unit_test(test_no_bucket),
        cmocka_unit_test(test_zero_weight_never_chosen),
        cmocka_unit_test(test_tie_goes_to_later_bucket),
        cmocka_unit_test(test_ports_only_for_l4),
        cmocka_unit_test(test_weight_shares_follow_ovs_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
