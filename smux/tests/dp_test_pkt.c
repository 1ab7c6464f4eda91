/* hlb_pkt.h: parsing, checksums, the CRC32 5-tuple hash against the shared vectors
 * (p4/vectors/crc32_5tuple.json, produced by Python's crc32c package), weighted choice. */
#include <jansson.h>

#include "dp_testutil.h"

static void test_parse_tcp_udp(void **state)
{
    (void)state;
    struct tframe f;
    struct hlb_parsed pp;
    build_tcp(&f, "10.1.2.3", "100.64.0.1", 40000, 443, HLB_TCP_SYN);
    assert_int_equal(hlb_parse(f.p.data, f.p.len, &pp), HLB_PARSE_IPV4);
    assert_int_equal(pp.t.src_ip, ip4("10.1.2.3"));
    assert_int_equal(pp.t.dst_ip, ip4("100.64.0.1"));
    assert_int_equal(hlb_ntohs(pp.t.src_port), 40000);
    assert_int_equal(hlb_ntohs(pp.t.dst_port), 443);
    assert_int_equal(pp.t.proto, 6);
    assert_int_equal(pp.tcp_flags, HLB_TCP_SYN);
    assert_int_equal(pp.ip_tot_len, 40);
    assert_int_equal(pp.df, 1);

    build_ip(&f, "10.1.2.3", "100.64.0.1", HLB_IPPROTO_UDP, 53, 5353, 0, 12, 0);
    assert_int_equal(hlb_parse(f.p.data, f.p.len, &pp), HLB_PARSE_IPV4);
    assert_int_equal(hlb_ntohs(pp.t.dst_port), 5353);
    assert_int_equal(pp.df, 0);

    /* Other protocols parse with ports 0. */
    build_ip(&f, "10.1.2.3", "100.64.0.1", 50, 0, 0, 0, 16, 0);
    assert_int_equal(hlb_parse(f.p.data, f.p.len, &pp), HLB_PARSE_IPV4);
    assert_int_equal(pp.t.src_port, 0);
    assert_int_equal(pp.t.dst_port, 0);
}

static void test_parse_ip_options(void **state)
{
    (void)state;
    struct tframe f;
    struct hlb_parsed pp;
    build_tcp(&f, "10.1.2.3", "100.64.0.1", 1000, 80, HLB_TCP_ACK);
    /* Rebuild with IHL 6 (one NOP option word) and the TCP header after it. */
    uint8_t *d = f.p.data;
    memmove(d + 38, d + 34, 20);
    memset(d + 34, 1, 4);
    d[14] = 0x46;
    uint16_t tot = hlb_htons(44);
    memcpy(d + 16, &tot, 2);
    d[24] = d[25] = 0;
    uint16_t cs = hlb_csum(d + 14, 24);
    memcpy(d + 24, &cs, 2);
    f.p.len = 58;
    assert_int_equal(hlb_parse(d, f.p.len, &pp), HLB_PARSE_IPV4);
    assert_int_equal(pp.ip_hlen, 24);
    assert_int_equal(hlb_ntohs(pp.t.src_port), 1000);
}

static void test_parse_malformed(void **state)
{
    (void)state;
    struct tframe f;
    struct hlb_parsed pp;

    build_tcp(&f, "10.1.2.3", "100.64.0.1", 1, 2, HLB_TCP_ACK);
    assert_int_equal(hlb_parse(f.p.data, 10, &pp), HLB_PARSE_TRUNCATED);
    assert_int_equal(hlb_parse(f.p.data, 30, &pp), HLB_PARSE_TRUNCATED);   /* half an IP hdr */
    assert_int_equal(hlb_parse(f.p.data, 50, &pp), HLB_PARSE_TRUNCATED);   /* tot_len 40 > 36 */

    build_tcp(&f, "10.1.2.3", "100.64.0.1", 1, 2, HLB_TCP_ACK);
    f.p.data[14] = 0x65;                                   /* version 6 in an IPv4 frame */
    assert_int_equal(hlb_parse(f.p.data, f.p.len, &pp), HLB_PARSE_BAD_IP);

    build_tcp(&f, "10.1.2.3", "100.64.0.1", 1, 2, HLB_TCP_ACK);
    f.p.data[14] = 0x44;                                   /* IHL 4 */
    assert_int_equal(hlb_parse(f.p.data, f.p.len, &pp), HLB_PARSE_BAD_IP);

    build_tcp(&f, "10.1.2.3", "100.64.0.1", 1, 2, HLB_TCP_ACK);
    f.p.data[24] ^= 0x55;                                  /* bad header checksum */
    assert_int_equal(hlb_parse(f.p.data, f.p.len, &pp), HLB_PARSE_BAD_IP);

    build_tcp(&f, "10.1.2.3", "100.64.0.1", 1, 2, HLB_TCP_ACK);
    f.p.data[12] = 0x86;                                   /* IPv6 ethertype */
    f.p.data[13] = 0xdd;
    assert_int_equal(hlb_parse(f.p.data, f.p.len, &pp), HLB_PARSE_NOT_IPV4);

    build_ip(&f, "10.1.2.3", "100.64.0.1", HLB_IPPROTO_UDP, 1, 2, 0, 100, 0x2000); /* MF */
    assert_int_equal(hlb_parse(f.p.data, f.p.len, &pp), HLB_PARSE_FRAGMENT);
    build_ip(&f, "10.1.2.3", "100.64.0.1", HLB_IPPROTO_UDP, 1, 2, 0, 100, 0x0010); /* offset */
    assert_int_equal(hlb_parse(f.p.data, f.p.len, &pp), HLB_PARSE_FRAGMENT);

    /* TCP header cut short inside a well-formed IP packet. */
    build_ip(&f, "10.1.2.3", "100.64.0.1", HLB_IPPROTO_UDP, 1, 2, 0, 4, 0);
    f.p.data[23] = HLB_IPPROTO_TCP;
    f.p.data[24] = f.p.data[25] = 0;
    uint16_t cs = hlb_csum(f.p.data + 14, 20);
    memcpy(f.p.data + 24, &cs, 2);
    assert_int_equal(hlb_parse(f.p.data, f.p.len, &pp), HLB_PARSE_TRUNCATED);

    build_arp(&f, HLB_ARP_REQUEST, T_CLIENT_MAC, "192.0.2.1", "192.0.2.10");
    assert_int_equal(hlb_parse(f.p.data, f.p.len, &pp), HLB_PARSE_ARP);
    f.p.data[18] = 8;                                      /* hlen 8 */
    assert_int_equal(hlb_parse(f.p.data, f.p.len, &pp), HLB_PARSE_BAD_ARP);
    assert_int_equal(hlb_parse(f.p.data, 20, &pp), HLB_PARSE_TRUNCATED);
}

/* The fast parser accepts only what hlb_parse() accepts as IPv4 and fills the same
 * fields: checked on valid TCP/UDP frames and on 20000 mutated ones (random bytes of
 * the headers, the IPv4 checksum then often recomputed so mutations get past it,
 * random lengths). */
static void test_parse_fast_agrees(void **state)
{
    (void)state;
    uint32_t rng = 12345;
    int fast_ok = 0, fast_no = 0;
    for (int i = 0; i < 20000; i++) {
        struct tframe f;
        int kind = i % 3;
        if (kind == 0)
            build_tcp(&f, "10.1.2.3", "100.64.0.1", 40000, 443, (uint8_t)i);
        else if (kind == 1)
            build_ip(&f, "10.1.2.3", "100.64.0.1", HLB_IPPROTO_UDP, 53, 5353, 0, (uint32_t)(i % 40), 0);
        else
            build_ip(&f, "10.9.8.7", "100.64.0.2", HLB_IPPROTO_TCP, 1, 2, 0x12, (uint32_t)(i % 30), (uint16_t)(0x4000 * (i % 2)));
        if (i >= 300) {
            int muts = 1 + (int)((rng >> 5) % 3);
            for (int m = 0; m < muts; m++) {
                rng = rng * 1103515245u + 12345u;
                f.p.data[(rng >> 8) % 60] = (uint8_t)(rng >> 20);
            }
            rng = rng * 1103515245u + 12345u;
            if (rng & 0x100) {         /* fix the checksum after the mutation */
                f.p.data[24] = f.p.data[25] = 0;
                uint32_t hl = (uint32_t)(f.p.data[14] & 0xf) * 4;
                if (hl >= 20 && hl <= 40) {
                    uint16_t cs = hlb_csum(f.p.data + 14, hl);
                    memcpy(f.p.data + 24, &cs, 2);
                }
            }
            if (rng & 0x200)
                f.p.len = (rng >> 12) % 80;
        }
        struct hlb_parsed a, b;
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        if (!hlb_parse_fast(f.p.data, f.p.len, &a)) {
            fast_no++;
            if (i < 300)
                fail_msg("valid frame %d not taken by the fast parser", i);
            continue;
        }
        fast_ok++;
        assert_int_equal(hlb_parse(f.p.data, f.p.len, &b), HLB_PARSE_IPV4);
        assert_int_equal(a.t.src_ip, b.t.src_ip);
        assert_int_equal(a.t.dst_ip, b.t.dst_ip);
        assert_int_equal(a.t.proto, b.t.proto);
        assert_int_equal(a.t.src_port, b.t.src_port);
        assert_int_equal(a.t.dst_port, b.t.dst_port);
        assert_int_equal(a.l3_off, b.l3_off);
        assert_int_equal(a.ip_tot_len, b.ip_tot_len);
        assert_int_equal(a.ip_hlen, b.ip_hlen);
        assert_int_equal(a.tcp_flags, b.tcp_flags);
        assert_int_equal(a.df, b.df);
    }
    /* both outcomes exercised */
    assert_true(fast_ok > 2000);
    assert_true(fast_no > 2000);
}

static void test_csum(void **state)
{
    (void)state;
    /* RFC 1071 example words 0x0001 0xf203 0xf4f5 0xf6f7 -> sum 0xddf2, csum 0x220d */
    const uint8_t b[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    assert_int_equal(hlb_ntohs(hlb_csum(b, sizeof(b))), 0x220d);
}

static void test_crc32_check_value(void **state)
{
    (void)state;
    /* the CRC catalogue's check value of CRC-32C (CRC-32/ISCSI) */
    assert_int_equal(hlb_crc32_bytes((const uint8_t *)"123456789", 9), 0xe3069283u);
}

/* hlb_crc32c_u8/u16/u32 (the SSE4.2 instructions in this build) equal the bit-wise
 * form over the same bytes in memory order. */
static void test_crc32c_widths_match_bitwise(void **state)
{
    (void)state;
    uint32_t x = 0x9e3779b9u;
    for (int i = 0; i < 1000; i++) {
        x = x * 1664525u + 1013904223u;
        uint32_t crc = x ^ (x << 7), v = x * 2654435761u;
        uint8_t b[4];
        memcpy(b, &v, 4);
        uint32_t want = crc;
        for (int k = 0; k < 4; k++)
            want = hlb_crc32c_sw_u8(want, b[k]);
        assert_int_equal(hlb_crc32c_u32(crc, v), want);
        uint16_t v16;
        memcpy(&v16, b, 2);
        assert_int_equal(hlb_crc32c_u16(crc, v16),
                         hlb_crc32c_sw_u8(hlb_crc32c_sw_u8(crc, b[0]), b[1]));
        assert_int_equal(hlb_crc32c_u8(crc, b[3]), hlb_crc32c_sw_u8(crc, b[3]));
    }
}

static uint8_t hexval(char c)
{
    return (uint8_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
}

static void test_crc32_shared_vectors(void **state)
{
    (void)state;
    const char *path = getenv("HLB_CRC32_VECTORS");
    assert_non_null(path);
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    if (!doc)
        fail_msg("cannot load %s: %s", path, jerr.text);
    json_t *vecs = json_object_get(doc, "vectors");
    assert_true(json_array_size(vecs) >= 60);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "check"),
                                                        "ascii123456789")),
                     hlb_crc32_bytes((const uint8_t *)"123456789", 9));
    size_t i;
    json_t *v;
    json_array_foreach(vecs, i, v) {
        struct hlb_5tuple t = {
            .src_ip = ip4(json_string_value(json_object_get(v, "srcIp"))),
            .dst_ip = ip4(json_string_value(json_object_get(v, "dstIp"))),
            .proto = (uint8_t)json_integer_value(json_object_get(v, "proto")),
            .src_port = hlb_htons((uint16_t)json_integer_value(json_object_get(v, "srcPort"))),
            .dst_port = hlb_htons((uint16_t)json_integer_value(json_object_get(v, "dstPort"))),
        };
        uint8_t bytes[13], want[13];
        const char *hex = json_string_value(json_object_get(v, "bytes"));
        for (int k = 0; k < 13; k++)
            want[k] = (uint8_t)(hexval(hex[2 * k]) << 4 | hexval(hex[2 * k + 1]));
        hlb_5tuple_bytes(&t, bytes);
        assert_memory_equal(bytes, want, 13);
        uint32_t h = hlb_crc32_5tuple(&t);
        assert_int_equal(h, (uint32_t)json_integer_value(json_object_get(v, "crc32")));
        /* the byte-wise form and the per-field form (service prefix, then the
         * source fields) agree */
        assert_int_equal(hlb_crc32_bytes(bytes, 13), h);
        assert_int_equal(hlb_crc32_finish(hlb_crc32c_u16(hlb_crc32_vip(t.dst_ip, t.proto),
                                                         t.dst_port),
                                          t.src_ip, t.src_port), h);

        json_t *ws = json_object_get(v, "weights");
        uint32_t cum[16];
        int n = (int)json_array_size(ws);
        uint32_t acc = 0;
        for (int k = 0; k < n; k++) {
            acc += (uint32_t)json_integer_value(json_array_get(ws, (size_t)k));
            cum[k] = acc;
        }
        assert_int_equal(hlb_weighted_pick(h, cum, n),
                         (int)json_integer_value(json_object_get(v, "member")));
    }
    json_decref(doc);
}

static void test_weighted_pick(void **state)
{
    (void)state;
    const uint32_t cum[] = {10, 10, 40};           /* weights 10, 0, 30 */
    int count[3] = {0};
    for (uint32_t h = 0; h < 40000; h++)
        count[hlb_weighted_pick(h * 2654435761u, cum, 3)]++;
    assert_int_equal(count[1], 0);
    assert_in_range(count[0], 9000, 11000);
    assert_in_range(count[2], 29000, 31000);
    const uint32_t zero[] = {0, 0};
    assert_int_equal(hlb_weighted_pick(5, zero, 2), -1);
    assert_int_equal(hlb_weighted_pick(5, cum, 0), -1);
}

static void test_fastmod_matches_division(void **state)
{
    (void)state;
    const uint32_t divisors[] = {1, 2, 3, 7, 10, 255, 256, 1000, 65535, 65536, 1u << 20,
                                 0x7fffffffu, 0x80000001u, 0xffffffffu};
    uint32_t x = 12345;
    for (size_t k = 0; k < sizeof(divisors) / sizeof(divisors[0]); k++) {
        uint32_t d = divisors[k];
        uint64_t m = hlb_fastmod_m(d);
        for (int i = 0; i < 20000; i++) {
            x = x * 1664525u + 1013904223u;
            assert_int_equal(hlb_fastmod(x, m, d), x % d);
        }
        assert_int_equal(hlb_fastmod(0xffffffffu, m, d), 0xffffffffu % d);
        assert_int_equal(hlb_fastmod(0, m, d), 0);
    }
    /* and the precomputed pick equals the reference pick, small and large pools */
    uint32_t cum[40], acc = 0;
    for (int i = 0; i < 40; i++)
        cum[i] = acc += (uint32_t)(i % 3 == 0 ? 0 : i * 11 + 1);
    for (int n = 1; n <= 40; n++) {
        uint64_t m = hlb_fastmod_m(cum[n - 1] ? cum[n - 1] : 1);
        for (int i = 0; i < 3000; i++) {
            x = x * 1664525u + 1013904223u;
            assert_int_equal(hlb_weighted_pick_m(x, cum, n, m), hlb_weighted_pick(x, cum, n));
        }
    }
}

/* The owner of a flow among n workers: every frame of the connection gets the same
 * one, whatever its flags, length or IP options; the flows spread evenly; frames
 * without a 5-tuple go to worker 0. */
static void test_flow_worker(void **state)
{
    (void)state;
    enum { N = 3, FLOWS = 30000 };
    unsigned count[N] = {0};
    struct tframe f;
    for (unsigned i = 0; i < FLOWS; i++) {
        char src[32];
        snprintf(src, sizeof(src), "10.%u.%u.%u", (i >> 16) & 255, (i >> 8) & 255, i & 255);
        uint16_t sport = (uint16_t)(1024 + i % 50000);
        build_tcp(&f, src, "100.64.0.1", sport, 443, HLB_TCP_SYN);
        unsigned k = hlb_flow_worker(f.p.data, f.p.len, N);
        assert_true(k < N);
        count[k]++;
        assert_int_equal(hlb_flow_worker(f.p.data, f.p.len, 1), 0);
        if (i % 100)
            continue;
        /* the same connection: data with the ACK and FIN flags, a TOS, an IP option */
        build_ip(&f, src, "100.64.0.1", HLB_IPPROTO_TCP, sport, 443, HLB_TCP_ACK | HLB_TCP_FIN,
                 700, 0x4000);
        assert_int_equal(hlb_flow_worker(f.p.data, f.p.len, N), k);
        uint8_t *d = f.p.data;
        memmove(d + 38, d + 34, f.p.len - 34);
        memset(d + 34, 1, 4);                     /* four NOP options: IHL 6 */
        d[14] = 0x46;
        f.p.len += 4;
        assert_int_equal(hlb_flow_worker(f.p.data, f.p.len, N), k);
        /* a fragment of it, and an ARP: worker 0 */
        build_ip(&f, src, "100.64.0.1", HLB_IPPROTO_TCP, sport, 443, HLB_TCP_ACK, 40, 0x2000);
        assert_int_equal(hlb_flow_worker(f.p.data, f.p.len, N), 0);
    }
    build_arp(&f, HLB_ARP_REQUEST, T_CLIENT_MAC, "192.0.2.77", "192.0.2.10");
    assert_int_equal(hlb_flow_worker(f.p.data, f.p.len, N), 0);
    for (unsigned k = 0; k < N; k++) {
        print_message("worker %u: %u of %u flows\n", k, count[k], FLOWS);
        assert_true(count[k] > FLOWS / N * 95 / 100 && count[k] < FLOWS / N * 105 / 100);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_tcp_udp),
        cmocka_unit_test(test_parse_ip_options),
        cmocka_unit_test(test_parse_malformed),
        cmocka_unit_test(test_parse_fast_agrees),
        cmocka_unit_test(test_csum),
        cmocka_unit_test(test_crc32_check_value),
        cmocka_unit_test(test_crc32c_widths_match_bitwise),
        cmocka_unit_test(test_crc32_shared_vectors),
        cmocka_unit_test(test_weighted_pick),
        cmocka_unit_test(test_fastmod_matches_division),
        cmocka_unit_test(test_flow_worker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
