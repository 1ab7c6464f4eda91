/* VIP table documents: a valid one builds the expected lookup structure; each invalid
 * one is rejected with the offending field named. */
#include "dp_testutil.h"

static const char *VALID =
    "{\"version\": 7, \"vips\": ["
    " {\"vip\": \"100.64.0.1\", \"aggregate\": \"100.64.0.0/16\", \"selection\": \"crc32\","
    "  \"encap\": \"gre\", \"connTable\": false, \"ports\": ["
    "   {\"proto\": \"tcp\", \"port\": 80, \"dips\": ["
    "     {\"ip\": \"10.0.1.1\", \"weight\": 2, \"hostIp\": \"172.16.0.1\"},"
    "     {\"ip\": \"10.0.1.2\"}]},"
    "   {\"proto\": \"udp\", \"port\": 0, \"dips\": [{\"ip\": \"10.0.1.3\", \"weight\": 5}]}]},"
    " {\"vip\": \"100.64.0.2\", \"hashBasis\": 42, \"ports\": ["
    "   {\"proto\": 6, \"port\": 443, \"dips\": [{\"ip\": \"10.0.2.1\", \"bucketId\": 9},"
    "                                         {\"ip\": \"10.0.2.2\", \"weight\": 0}]}]}]}";

static void test_valid_table(void **state)
{
    (void)state;
    struct hlb_vip_table *t = table_ok(VALID, 1);
    assert_int_equal(t->version, 7);
    assert_int_equal(t->n_services, 3);
    assert_int_equal(t->n_dips, 5);

    const struct hlb_service *s = hlb_table_lookup(t, ip4("100.64.0.1"), 6, hlb_htons(80));
    assert_non_null(s);
    assert_int_equal(s->selection, HLB_SEL_CRC32);
    assert_int_equal(s->encap, HLB_ENCAP_GRE);
    assert_int_equal(s->pin, 0);
    assert_int_equal(s->dip_count, 2);
    assert_int_equal(t->dips[s->dip_first].outer, ip4("172.16.0.1"));
    assert_int_equal(t->dips[s->dip_first + 1].outer, ip4("10.0.1.2"));
    assert_int_equal(t->weights[s->dip_first + 1], 1);            /* default weight */
    assert_int_equal(t->cum[s->dip_first + 1], 3);
    assert_null(hlb_table_lookup(t, ip4("100.64.0.1"), 6, hlb_htons(81)));
    assert_null(hlb_table_lookup(t, ip4("100.64.0.9"), 6, hlb_htons(80)));

    /* port 0 = every UDP port of the VIP */
    s = hlb_table_lookup(t, ip4("100.64.0.1"), 17, hlb_htons(5353));
    assert_non_null(s);
    assert_int_equal(t->dips[s->dip_first].ip, ip4("10.0.1.3"));

    s = hlb_table_lookup(t, ip4("100.64.0.2"), 6, hlb_htons(443));
    assert_non_null(s);
    assert_int_equal(s->selection, HLB_SEL_OVS);                  /* defaults */
    assert_int_equal(s->encap, HLB_ENCAP_IPIP);
    assert_int_equal(s->pin, 1);
    assert_int_equal(s->basis, 42);
    assert_int_equal(t->bucket_ids[s->dip_first], 9);
    assert_int_equal(t->bucket_ids[s->dip_first + 1], 1);          /* default: position */
    assert_int_equal(t->weights[s->dip_first + 1], 0);

    char *out = hlb_table_to_json(t);
    assert_non_null(strstr(out, "\"version\":7"));
    free(out);
    hlb_table_free(t);
}

struct bad_case {
    const char *json;
    const char *field;
    const char *reason_part;
};

#define V1(vips) "{\"version\":1,\"vips\":[" vips "]}"
#define VIP(extra, ports) "{\"vip\":\"100.64.0.1\"" extra ",\"ports\":[" ports "]}"
#define TCP80(dips) "{\"proto\":\"tcp\",\"port\":80,\"dips\":[" dips "]}"

static const struct bad_case BAD[] = {
    {"{\"version\":1,", "(document) line 1 column 13", "invalid JSON"},
    {"[]", "(document)", "object"},
    {"{\"vips\":[]}", "version", "required"},
    {"{\"version\":-1,\"vips\":[]}", "version", "between"},
    {"{\"version\":\"3\",\"vips\":[]}", "version", "integer"},
    {"{\"version\":1}", "vips", "required"},
    {"{\"version\":1,\"vips\":{}}", "vips", "array"},
    {"{\"version\":1,\"vips\":[],\"extra\":1}", "extra", "unknown field"},
    {"{\"version\":1,\"version\":2,\"vips\":[]}", "(document) line 1 column 22", "duplicate"},
    {V1("{\"ports\":[]}"), "vips[0].vip", "required"},
    {V1("{\"vip\":\"100.64.0\",\"ports\":[]}"), "vips[0].vip", "IPv4"},
    {V1("{\"vip\":\"224.0.0.1\",\"ports\":[]}"), "vips[0].vip", "unicast"},
    {V1(VIP("", "")), "vips[0].ports", "non-empty"},
    {V1(VIP(",\"aggregate\":\"100.65.0.0/16\"", TCP80("{\"ip\":\"10.0.0.1\"}"))),
     "vips[0].aggregate", "does not contain"},
    {V1(VIP(",\"aggregate\":\"100.64.0.0/33\"", TCP80("{\"ip\":\"10.0.0.1\"}"))),
     "vips[0].aggregate", "prefix"},
    {V1(VIP(",\"aggregate\":\"100.64.0.0/+24\"", TCP80("{\"ip\":\"10.0.0.1\"}"))),
     "vips[0].aggregate", "prefix"},
    {V1(VIP(",\"aggregate\":\"100.64.0.0/ 24\"", TCP80("{\"ip\":\"10.0.0.1\"}"))),
     "vips[0].aggregate", "prefix"},
    {V1(VIP("", TCP80("{\"ip\":\"100.64.0.1\"}"))), "vips[0].ports[0].dips[0].ip", "the VIP itself"},
    {V1(VIP("", TCP80("{\"ip\":\"240.0.0.1\"}"))), "vips[0].ports[0].dips[0].ip", "unicast"},
    {V1(VIP(",\"selection\":\"maglev\"", TCP80("{\"ip\":\"10.0.0.1\"}"))), "vips[0].selection",
     "ovs, crc32"},
    {V1(VIP(",\"encap\":\"vxlan\"", TCP80("{\"ip\":\"10.0.0.1\"}"))), "vips[0].encap", "ipip, gre"},
    {V1(VIP(",\"connTable\":1", TCP80("{\"ip\":\"10.0.0.1\"}"))), "vips[0].connTable", "true"},
    {V1(VIP("", "{\"proto\":\"icmp\",\"port\":80,\"dips\":[]}")), "vips[0].ports[0].proto", "tcp"},
    {V1(VIP("", "{\"proto\":\"tcp\",\"port\":65536,\"dips\":[]}")), "vips[0].ports[0].port",
     "between"},
    {V1(VIP("", "{\"proto\":\"tcp\",\"port\":80}")), "vips[0].ports[0].dips", "required"},
    {V1(VIP("", TCP80("{\"ip\":\"10.0.0.1\",\"weight\":70000}"))), "vips[0].ports[0].dips[0].weight",
     "between"},
    {V1(VIP("", TCP80("{\"ip\":\"10.0.0.1\"},{\"ip\":\"10.0.0.2\",\"weigth\":3}"))),
     "vips[0].ports[0].dips[1].weigth", "unknown field"},
    /* a DIP repeated (one more WCMP unit) keeps its tunnel destination and takes an id of its own */
    {V1(VIP("", TCP80("{\"ip\":\"10.0.0.1\"},{\"ip\":\"10.0.0.2\"},{\"ip\":\"10.0.0.1\",\"hostIp\":\"172.16.0.9\"}"))),
     "vips[0].ports[0].dips[2].hostIp", "also dips[0] of this pool, with another tunnel destination"},
    {V1(VIP("", TCP80("{\"ip\":\"10.0.0.1\",\"bucketId\":3},{\"ip\":\"10.0.0.1\",\"bucketId\":3}"))),
     "vips[0].ports[0].dips[1].bucketId", "duplicate"},
    {V1(VIP("", TCP80("{\"ip\":\"10.0.0.1\",\"bucketId\":3},{\"ip\":\"10.0.0.2\",\"bucketId\":3}"))),
     "vips[0].ports[0].dips[1].bucketId", "duplicate"},
    {V1(VIP("", TCP80("{\"ip\":\"10.0.0.1\",\"hostIp\":\"300.1.1.1\"}"))),
     "vips[0].ports[0].dips[0].hostIp", "IPv4"},
    {V1(VIP("", TCP80("{\"ip\":\"10.0.0.1\"}")) "," VIP("", TCP80("{\"ip\":\"10.0.0.2\"}"))),
     "vips[1].ports", "duplicate tcp port 80"},
    /* hashBasis: unsigned 64-bit, a JSON integer or a decimal / 0x-hex string */
#define BASIS(b) V1(VIP(",\"hashBasis\":" b, TCP80("{\"ip\":\"10.0.0.1\"}")))
    {BASIS("-1"), "vips[0].hashBasis", "between 0 and 18446744073709551615 (got -1)"},
    {BASIS("\"-1\""), "vips[0].hashBasis", "decimal or 0x-hex digits only (got \"-1\")"},
    {BASIS("\"+5\""), "vips[0].hashBasis", "decimal or 0x-hex digits only"},
    {BASIS("\" 5\""), "vips[0].hashBasis", "decimal or 0x-hex digits only"},
    {BASIS("\"5 \""), "vips[0].hashBasis", "decimal or 0x-hex digits only"},
    {BASIS("\"\""), "vips[0].hashBasis", "decimal or 0x-hex digits only"},
    {BASIS("\"0x\""), "vips[0].hashBasis", "decimal or 0x-hex digits only"},
    {BASIS("\"12abc\""), "vips[0].hashBasis", "decimal or 0x-hex digits only"},
    {BASIS("\"0xFEDCBA987654321G\""), "vips[0].hashBasis", "decimal or 0x-hex digits only"},
    {BASIS("\"1e3\""), "vips[0].hashBasis", "decimal or 0x-hex digits only"},
    {BASIS("\"18446744073709551616\""), "vips[0].hashBasis",
     "between 0 and 18446744073709551615 (0xffffffffffffffff) (got \"18446744073709551616\")"},
    {BASIS("\"0x10000000000000000\""), "vips[0].hashBasis", "between 0 and 18446744073709551615"},
    {BASIS("\"99999999999999999999999\""), "vips[0].hashBasis", "between 0 and 18446744073709551615"},
    {BASIS("1.5"), "vips[0].hashBasis", "string of decimal or 0x-hex digits"},
    {BASIS("true"), "vips[0].hashBasis", "string of decimal or 0x-hex digits"},
    {V1(VIP("", TCP80("{\"ip\":\"10.0.0.1\"}")) ","
        "{\"vip\":\"100.64.0.2\",\"hashBasis\":\"0xg\",\"ports\":[" TCP80("{\"ip\":\"10.0.0.1\"}") "]}"),
     "vips[1].hashBasis", "decimal or 0x-hex digits only"},
    /* a JSON integer above INT64_MAX: jansson refuses the document itself */
    {BASIS("18446744073709551615"), "(document) line 1 column 73", "too big integer"},
};

static void test_invalid_tables(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        struct hlb_table_error err = {{0}, {0}};
        struct hlb_table_options opt = {.default_pin = 1};
        struct hlb_vip_table *t = hlb_table_from_json(BAD[i].json, strlen(BAD[i].json), &opt, &err);
        if (t)
            fail_msg("case %zu accepted: %s", i, BAD[i].json);
        if (strcmp(err.field, BAD[i].field) != 0 || !strstr(err.reason, BAD[i].reason_part))
            fail_msg("case %zu: got field '%s' reason '%s', want '%s' / '%s'", i, err.field,
                     err.reason, BAD[i].field, BAD[i].reason_part);
    }
}

/* hashBasis takes the whole unsigned 64-bit range of OVS's selection_method_param:
 * a JSON integer up to INT64_MAX, a decimal or 0x-hex string for any value.  GET
 * /table (hlb_table_to_json) gives it back as it was sent, and that document
 * builds the same table again. */
#define BASIS_VIP(n, b) "{\"vip\":\"100.64.0." #n "\",\"hashBasis\":" b ",\"ports\":[" \
    TCP80("{\"ip\":\"10.0.0.1\"}") "]}"
static const char *BASES =
    V1(BASIS_VIP(1, "\"0xFEDCBA9876543210\"") "," BASIS_VIP(2, "\"18446744073709551615\"") ","
       BASIS_VIP(3, "9223372036854775807") "," BASIS_VIP(4, "\"0x8000000000000000\"") ","
       BASIS_VIP(5, "\"0\"") "," BASIS_VIP(6, "\"007\"") "," BASIS_VIP(7, "\"0Xff\""));
static const uint64_t BASES_WANT[] = {0xFEDCBA9876543210ull, UINT64_MAX, INT64_MAX,
                                      0x8000000000000000ull, 0, 7, 255};

static void check_bases(const struct hlb_vip_table *t)
{
    assert_int_equal(t->n_services, 7);
    for (int i = 0; i < 7; i++) {
        char vip[16];
        snprintf(vip, sizeof(vip), "100.64.0.%d", i + 1);
        const struct hlb_service *s = hlb_table_lookup(t, ip4(vip), 6, hlb_htons(80));
        assert_non_null(s);
        if (s->basis != BASES_WANT[i])
            fail_msg("%s: basis %llx, want %llx", vip, (unsigned long long)s->basis,
                     (unsigned long long)BASES_WANT[i]);
    }
}

/* WCMP units: a DIP repeated in its pool, weight 1 and an id per unit, in every selection
 * mode; a drained DIP (weight 0) once.  dip_first_of ties every unit to the DIP's first
 * entry (one DIP for connections and statistics). */
#define UNITS_POOL(sel) "{\"vip\":\"100.64.0." sel ",\"ports\":[" TCP80( \
    "{\"ip\":\"10.0.0.9\",\"weight\":0,\"bucketId\":7}," \
    "{\"ip\":\"10.0.0.1\",\"bucketId\":0},{\"ip\":\"10.0.0.2\",\"bucketId\":1}," \
    "{\"ip\":\"10.0.0.2\",\"bucketId\":2},{\"ip\":\"10.0.0.3\",\"bucketId\":3}") "]}"
static const char *UNITS = V1(UNITS_POOL("1\",\"selection\":\"ovs\"") ","
                              UNITS_POOL("2\",\"selection\":\"crc32\"") ","
                              UNITS_POOL("3\",\"selection\":\"ovs-dphash\""));

static void test_wcmp_units_repeat_a_dip(void **state)
{
    (void)state;
    struct hlb_vip_table *t = table_ok(UNITS, 1);
    assert_int_equal(t->n_services, 3);
    for (int v = 1; v <= 3; v++) {
        char vip[16];
        snprintf(vip, sizeof(vip), "100.64.0.%d", v);
        const struct hlb_service *s = hlb_table_lookup(t, ip4(vip), 6, hlb_htons(80));
        assert_non_null(s);
        uint32_t f = s->dip_first;
        assert_int_equal(s->dip_count, 5);
        assert_int_equal(s->weight_total, 4);
        uint32_t want_first[] = {0, 1, 2, 2, 4};
        for (int k = 0; k < 5; k++)
            assert_int_equal(t->dip_first_of[f + k], f + want_first[k]);
        /* every flow goes to a unit of weight 1: never to the drained DIP */
        int per_dip[4] = {0};
        for (int i = 0; i < 4000; i++) {
            struct hlb_5tuple tp = {.src_ip = hlb_htonl(0xc6336400u + (uint32_t)i), .dst_ip = ip4(vip),
                                    .src_port = hlb_htons((uint16_t)(1024 + i * 7)),
                                    .dst_port = hlb_htons(80), .proto = 6};
            int d = hlb_select_dip(t, s, &tp);
            assert_true(d > (int)f && d < (int)(f + 5));
            per_dip[ntohl(t->dips[d].ip) & 0xff]++;
        }
        /* 1:2:1 over 4,000 flows: about 1000 / 2000 / 1000 */
        assert_true(per_dip[1] > 800 && per_dip[1] < 1200);
        assert_true(per_dip[2] > 1800 && per_dip[2] < 2200);
        assert_true(per_dip[3] > 800 && per_dip[3] < 1200);
    }
    hlb_table_free(t);
}

static void test_hash_basis_full_range(void **state)
{
    (void)state;
    struct hlb_vip_table *t = table_ok(BASES, 1);
    check_bases(t);
    char *out = hlb_table_to_json(t);
    assert_non_null(strstr(out, "\"hashBasis\":\"0xFEDCBA9876543210\""));
    assert_non_null(strstr(out, "\"hashBasis\":\"18446744073709551615\""));
    assert_non_null(strstr(out, "\"hashBasis\":9223372036854775807"));
    assert_non_null(strstr(out, "\"hashBasis\":\"007\""));
    struct hlb_vip_table *again = table_ok(out, 1);
    check_bases(again);
    free(out);
    hlb_table_free(again);
    hlb_table_free(t);
}

static void test_empty_table(void **state)
{
    (void)state;
    struct hlb_vip_table *t = hlb_table_empty();
    assert_int_equal(t->version, 0);
    assert_null(hlb_table_lookup(t, ip4("100.64.0.1"), 6, hlb_htons(80)));
    hlb_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_table),
        cmocka_unit_test(test_invalid_tables),
        cmocka_unit_test(test_hash_basis_full_range),
        cmocka_unit_test(test_wcmp_units_repeat_a_dip),
        cmocka_unit_test(test_empty_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
