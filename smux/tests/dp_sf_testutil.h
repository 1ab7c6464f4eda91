/* Stateful Cheetah tests' shared parts (dp_test_stateful.c, dp_test_sf_owners.c): a
 * cheetah-stateful VIP, SYNs and echoes of a connection, the close and adoption
 * reports as the control API passes them. */
#ifndef HLB_DP_SF_TESTUTIL_H
#define HLB_DP_SF_TESTUTIL_H

#include "dp_testutil.h"
#include "cheetah.h"
#include "cookie_reports.h"
#include "sf_owners.h"
#include <jansson.h>

#define KEY "000102030405060708090a0b0c0d0e0f"
#define SELF "192.0.2.10"                 /* worker_init()'s self_ip */
#define OTHER "192.0.2.20"
#define VIP "10.200.0.10"

/* A cheetah-stateful VIP (port 80, three DIPs with server ids 1, 2, 3) whose owners
 * are `owners` (a JSON array body), loaded by the SMux at self. */
static inline struct hlb_vip_table *sf_table_at(const char *owners, const char *mech,
                                                const char *self, const char *mode)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"version\":1,\"vips\":[{\"vip\":\"" VIP "\",\"selection\":\"crc32\","
             "\"connTable\":false,\"affinity\":\"cheetah-stateful\",\"cookieKey\":\"" KEY "\","
             "\"cookieHash\":\"%s\",\"mechanism\":\"%s\",\"statefulOwners\":[%s],"
             "\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":["
             "{\"ip\":\"10.9.0.1\",\"serverId\":1},{\"ip\":\"10.9.0.2\",\"serverId\":2},"
             "{\"ip\":\"10.9.0.3\",\"serverId\":3}]}]}]}", mode, mech, owners);
    struct hlb_table_error err = {{0}, {0}};
    struct hlb_table_options opt = {.n_workers = 1, .self_ip = ip4(self)};
    struct hlb_vip_table *t = hlb_table_from_json(json, strlen(json), &opt, &err);
    if (!t)
        fail_msg("table rejected: %s: %s", err.field, err.reason);
    return t;
}

static inline struct hlb_vip_table *sf_table(const char *owners, const char *mech)
{
    return sf_table_at(owners, mech, SELF, "siphash13");
}

/* The TCP checksum of the IPv4 packet at ip (pseudo-header included) folds to 0xffff
 * when right; fix_tcp_csum() writes a right one. */
static inline uint32_t tcp_sum(const uint8_t *ip)
{
    uint32_t ihl = (ip[0] & 15u) * 4, tot = (uint32_t)ip[2] << 8 | ip[3], l4 = tot - ihl;
    uint32_t sum = HLB_IPPROTO_TCP + l4;
    for (int k = 12; k < 20; k += 2)
        sum += (uint32_t)ip[k] << 8 | ip[k + 1];
    for (uint32_t k = 0; k < l4; k += 2)
        sum += (uint32_t)ip[ihl + k] << 8 | (k + 1 < l4 ? ip[ihl + k + 1] : 0);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return sum;
}

static inline void fix_tcp_csum(uint8_t *ip)
{
    uint8_t *c = ip + 20 + 16;
    c[0] = c[1] = 0;
    uint16_t v = (uint16_t)~tcp_sum(ip);
    c[0] = (uint8_t)(v >> 8);
    c[1] = (uint8_t)v;
}

static inline uint32_t inner_tsecr(const struct tframe *f)   /* after one IP-in-IP header */
{
    uint32_t v;
    memcpy(&v, f->p.data + 14 + 20 + 20 + 28, 4);
    return ntohl(v);
}

static inline void syn(struct tframe *f, uint16_t cport)
{
    build_tcp_ts(f, "10.77.0.1", VIP, cport, 80, HLB_TCP_SYN, 1000, 0);
    fix_tcp_csum(f->p.data + 14);
}

/* The client's echo of ident's cookie on connection (10.77.0.1:cport -> VIP:80). */
static inline void echo(struct tframe *f, const struct hlb_service *s, uint16_t cport,
                        uint32_t ident, uint8_t flags)
{
    uint64_t h = hlb_ck_hash(s, ip4("10.77.0.1"), htons(cport), htons(80));
    uint32_t cookie = (ident ^ (uint32_t)h) & HLB_COOKIE_MASK;
    build_tcp_ts(f, "10.77.0.1", VIP, cport, 80, flags, 2000, 1u << 31 | cookie << 16 | 77);
}

static inline void sf_worker(struct hlb_worker *w, uint32_t parts, uint32_t idle_ms)
{
    worker_init(w, NULL);
    w->sf = hlb_sf_create(parts, idle_ms);
    assert_non_null(w->sf);
}

static inline uint8_t run_ref(struct hlb_worker *w, struct hlb_vip_table *t, struct tframe *f,
                              uint32_t now, int ref)
{
    uint8_t v = 0xee;
    if (ref)
        hlb_dp_burst_reference(w, t, &f->p, &v, 1, now);
    else
        hlb_dp_burst(w, t, &f->p, &v, 1, now);
    return v;
}

/* A close report (the body of POST /cheetah/closed) to the one worker w. */
static inline int closed_report(struct hlb_vip_table *t, struct hlb_worker *w,
                                const char *body, unsigned *queued,
                                struct hlb_table_error *err)
{
    json_t *doc = json_loads(body, 0, NULL);
    assert_non_null(doc);
    unsigned full = 0;
    struct hlb_worker *ws[1] = {w};
    int rc = hlb_cookie_closed(t, ws, 1, doc, queued, &full, err);
    json_decref(doc);
    assert_int_equal(full, 0);
    return rc;
}

/* An adoption report for connections (10.77.0.1:cport -> VIP:80) with idents and
 * server ids: queued (the batch, or NULL with err). */
static inline struct hlb_adopt_batch *adopt_report(struct hlb_vip_table *t, struct hlb_worker *w,
                                            const uint16_t *cport, const uint32_t *ident,
                                            const unsigned *server, unsigned n,
                                            struct hlb_table_error *err)
{
    json_t *a = json_array();
    for (unsigned k = 0; k < n; k++)
        json_array_append_new(a, json_pack("{s:s,s:i,s:s,s:i,s:i,s:i}", "vip", VIP, "port", 80,
                                           "client", "10.77.0.1", "clientPort", (int)cport[k],
                                           "ident", (int)ident[k], "serverId", (int)server[k]));
    json_t *doc = json_pack("{s:o}", "adopt", a);
    struct hlb_worker *ws[1] = {w};
    struct hlb_adopt_batch *b = hlb_cookie_adopt(t, ws, 1, doc, err);
    json_decref(doc);
    return b;
}

/* The answer to batch b once the worker drained it at now. */
static inline json_t *adopt_answer(struct hlb_adopt_batch *b, struct hlb_worker *w, uint32_t now)
{
    struct hlb_worker *ws[1] = {w};
    assert_int_equal(hlb_adopt_pending(b, ws), 1);            /* the worker applies it */
    hlb_sf_worker_drain(w, now);
    assert_int_equal(hlb_adopt_pending(b, ws), 0);
    json_t *j = hlb_adopt_answer(b, ws);
    hlb_adopt_batch_free(b);
    return j;
}

static inline json_int_t jint(const json_t *j, const char *key)
{
    return json_integer_value(json_object_get(j, key));
}


#endif
