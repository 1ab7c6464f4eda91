/* What the control API reports: counters that go on across table swaps, the Prometheus
 * exposition (GET /metrics), the traffic counters and datapath totals (GET /stats) and the
 * connections the running table would send elsewhere (GET /connections/diverging). */
#include "control.h"
#include "control_internal.h"
#include "balance.h"
#include "cheetah.h"
#include "pins.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- counters that survive table swaps ------------------------------------------ */

static void svc_key(const struct hlb_service *s, char *buf, size_t n)
{
    char vip[16];
    hlb_ip_str(s->vip, vip);
    snprintf(buf, n, "%s|%s|%u", vip, hlb_proto_name(s->proto), ntohs(s->port));
}

static void dip_key(const struct hlb_service *s, const struct hlb_dip *d, char *buf, size_t n)
{
    char svc[64], ip[16];
    svc_key(s, svc, sizeof(svc));
    hlb_ip_str(d->ip, ip);
    snprintf(buf, n, "%s|%s", svc, ip);
}

/* Each DIP's counters in the running table, summed over its entries in the pool (a DIP
 * repeats as its WCMP units, dip_first_of) at its first entry; NULL when out of memory.
 * /metrics and /stats report one series per DIP from these. */
static struct hlb_counter *dip_sums(const struct hlb_vip_table *t)
{
    struct hlb_counter *sum = calloc(t->n_dips ? t->n_dips : 1, sizeof(*sum));
    for (uint32_t d = 0; sum && d < t->n_dips; d++) {
        struct hlb_counter unit = hlb_counter_total(t, 1, d);   /* over the workers */
        sum[t->dip_first_of[d]].packets += unit.packets;
        sum[t->dip_first_of[d]].bytes += unit.bytes;
    }
    return sum;
}

static void retired_add(json_t *retired, const char *key, const struct hlb_counter *c)
{
    json_t *v = json_object_get(retired, key);
    json_int_t p = 0, b = 0;
    if (v) {
        p = json_integer_value(json_array_get(v, 0));
        b = json_integer_value(json_array_get(v, 1));
    }
    json_object_set_new(retired, key, json_pack("[I,I]", p + (json_int_t)c->packets,
                                                b + (json_int_t)c->bytes));
}

static void retired_get(json_t *retired, const char *key, uint64_t *p, uint64_t *b)
{
    json_t *v = json_object_get(retired, key);
    *p = v ? (uint64_t)json_integer_value(json_array_get(v, 0)) : 0;
    *b = v ? (uint64_t)json_integer_value(json_array_get(v, 1)) : 0;
}

/* A service's or DIP's counts since its entry appeared: the replaced tables' plus the
 * running one's.  /metrics and /stats both report these. */
static void totals(struct hlb_control *c, const char *key, struct hlb_counter live,
                   uint64_t *p, uint64_t *b)
{
    retired_get(c->retired, key, p, b);
    *p += live.packets;
    *b += live.bytes;
}

/* The old table's counters into the retired totals, then the totals of the entries the
 * new table still has kept and the rest dropped: a series goes on across swaps while its
 * entry stays; an entry removed ends its series (re-added, it starts again from 0, a counter
 * reset Prometheus expects), so that a controller churning DIPs does not grow this object
 * without bound. */
void hlb_control_retire(struct hlb_control *c, struct hlb_vip_table *old, const struct hlb_vip_table *now)
{
    char key[128];
    for (uint32_t s = 0; s < old->n_services; s++) {
        const struct hlb_service *sv = &old->services[s];
        svc_key(sv, key, sizeof(key));
        struct hlb_counter sum = hlb_counter_total(old, 0, s);
        retired_add(c->retired, key, &sum);
        for (uint32_t d = sv->dip_first; d < sv->dip_first + sv->dip_count; d++) {
            dip_key(sv, &old->dips[d], key, sizeof(key));
            sum = hlb_counter_total(old, 1, d);
            retired_add(c->retired, key, &sum);
        }
    }
    hlb_table_free(old);
    json_t *kept = json_object();
    for (uint32_t s = 0; kept && s < now->n_services; s++) {
        const struct hlb_service *sv = &now->services[s];
        svc_key(sv, key, sizeof(key));
        json_t *v = json_object_get(c->retired, key);
        if (v)
            json_object_set(kept, key, v);
        for (uint32_t d = sv->dip_first; d < sv->dip_first + sv->dip_count; d++) {
            dip_key(sv, &now->dips[d], key, sizeof(key));
            if ((v = json_object_get(c->retired, key)))
                json_object_set(kept, key, v);
        }
    }
    if (kept) {                         /* out of memory: keep them all rather than lose any */
        json_decref(c->retired);
        c->retired = kept;
    }
}

static void metric_head(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

char *hlb_control_metrics(struct hlb_control *c, size_t *len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    struct hlb_workers_total tot;
    hlb_workers_total(c->cfg.workers, c->cfg.slot->n_readers, &tot);
    const struct hlb_dp_stats *st = &tot.st;
    pthread_mutex_lock(&c->lock);
    struct hlb_vip_table *t = hlb_table_acquire(c->cfg.slot);

    metric_head(f, "hlb_smux_table_version", "gauge", "Version of the running VIP table.");
    fprintf(f, "hlb_smux_table_version %llu\n", (unsigned long long)t->version);
    metric_head(f, "hlb_smux_table_swaps_total", "counter", "VIP tables accepted and swapped in.");
    fprintf(f, "hlb_smux_table_swaps_total %llu\n", (unsigned long long)c->swaps);
    metric_head(f, "hlb_smux_table_rejected_total", "counter", "VIP tables rejected (400/409/413).");
    fprintf(f, "hlb_smux_table_rejected_total %llu\n", (unsigned long long)RD(c->rejected));
    metric_head(f, "hlb_smux_table_state_errors_total", "counter",
                "Accepted VIP tables that could not be written to --table-state.");
    fprintf(f, "hlb_smux_table_state_errors_total %llu\n", (unsigned long long)RD(c->state_errors));
    metric_head(f, "hlb_smux_table_uploads_in_progress", "gauge",
                "Request bodies being received (at most 4; more are answered 503).");
    fprintf(f, "hlb_smux_table_uploads_in_progress %u\n", __atomic_load_n(&c->uploads, __ATOMIC_RELAXED));

    metric_head(f, "hlb_smux_rx_packets_total", "counter", "Frames received by the datapath.");
    fprintf(f, "hlb_smux_rx_packets_total %llu\n", (unsigned long long)RD(st->rx_packets));
    metric_head(f, "hlb_smux_rx_bytes_total", "counter", "Bytes received by the datapath.");
    fprintf(f, "hlb_smux_rx_bytes_total %llu\n", (unsigned long long)RD(st->rx_bytes));
    metric_head(f, "hlb_smux_forwarded_packets_total", "counter", "Frames encapsulated to a DIP.");
    fprintf(f, "hlb_smux_forwarded_packets_total %llu\n", (unsigned long long)RD(st->fwd_packets));
    metric_head(f, "hlb_smux_forwarded_bytes_total", "counter",
                "Bytes of encapsulated frames sent.");
    fprintf(f, "hlb_smux_forwarded_bytes_total %llu\n", (unsigned long long)RD(st->fwd_bytes));

    char key[128], vip[16], dip[16];
    uint64_t rp, rb;
    /* One family at a time: a Prometheus family's samples must follow its own
     * HELP/TYPE lines as one group, so packets and bytes take a pass each. */
    for (int bytes = 0; bytes < 2; bytes++) {
        const char *name = bytes ? "hlb_smux_vip_bytes_total" : "hlb_smux_vip_packets_total";
        metric_head(f, name, "counter",
                    bytes ? "IP bytes (inner packet) forwarded per VIP, protocol and port."
                          : "Packets forwarded per VIP, protocol and port.");
        for (uint32_t s = 0; s < t->n_services; s++) {
            const struct hlb_service *sv = &t->services[s];
            svc_key(sv, key, sizeof(key));
            totals(c, key, hlb_counter_total(t, 0, s), &rp, &rb);
            hlb_ip_str(sv->vip, vip);
            uint64_t n = bytes ? rb : rp;
            fprintf(f, "%s{vip=\"%s\",proto=\"%s\",port=\"%u\"} %llu\n", name, vip,
                    hlb_proto_name(sv->proto), ntohs(sv->port), (unsigned long long)n);
        }
    }
    struct hlb_counter *sums = dip_sums(t);
    for (int bytes = 0; sums && bytes < 2; bytes++) {
        const char *name = bytes ? "hlb_smux_dip_bytes_total" : "hlb_smux_dip_packets_total";
        metric_head(f, name, "counter",
                    bytes ? "IP bytes forwarded per DIP." : "Packets forwarded per DIP.");
        for (uint32_t s = 0; s < t->n_services; s++) {
            const struct hlb_service *sv = &t->services[s];
            hlb_ip_str(sv->vip, vip);
            for (uint32_t d = sv->dip_first; d < sv->dip_first + sv->dip_count; d++) {
                if (t->dip_first_of[d] != d)
                    continue;                   /* one more unit of a DIP already counted */
                dip_key(sv, &t->dips[d], key, sizeof(key));
                totals(c, key, sums[d], &rp, &rb);
                hlb_ip_str(t->dips[d].ip, dip);
                uint64_t n = bytes ? rb : rp;
                fprintf(f, "%s{vip=\"%s\",proto=\"%s\",port=\"%u\",dip=\"%s\"} %llu\n", name,
                        vip, hlb_proto_name(sv->proto), ntohs(sv->port), dip,
                        (unsigned long long)n);
            }
        }
    }
    free(sums);

    metric_head(f, "hlb_smux_pins", "gauge", "Flow pins in force (POST /pins).");
    fprintf(f, "hlb_smux_pins %u\n", c->pins ? c->pins->n : 0);
    metric_head(f, "hlb_smux_pin_changes_total", "counter", "Flow pins put and removed.");
    fprintf(f, "hlb_smux_pin_changes_total %llu\n", (unsigned long long)c->pin_changes);
    metric_head(f, "hlb_smux_pinned_packets_total", "counter",
                "Frames sent to the DIP of their flow's pin.");
    fprintf(f, "hlb_smux_pinned_packets_total %llu\n", (unsigned long long)RD(st->pinned_packets));

    metric_head(f, "hlb_smux_drops_total", "counter", "Frames not forwarded, by reason.");
    for (int r = 0; r < HLB_DROP_MAX; r++)
        fprintf(f, "hlb_smux_drops_total{reason=\"%s\"} %llu\n", hlb_drop_names[r],
                (unsigned long long)RD(st->drops[r]));
    metric_head(f, "hlb_smux_cookie_packets_total", "counter",
                "TCP segments to cheetah VIPs: placed by their cookie (decoded), dropped for a "
                "cookie naming no server of the pool (invalid, the bad_cookie drops), or sent "
                "the hash path for lack of a timestamp option (fallback).");
    fprintf(f, "hlb_smux_cookie_packets_total{event=\"decoded\"} %llu\n",
            (unsigned long long)RD(st->ck_decoded));
    fprintf(f, "hlb_smux_cookie_packets_total{event=\"invalid\"} %llu\n",
            (unsigned long long)RD(st->drops[HLB_DROP_BAD_COOKIE]));
    fprintf(f, "hlb_smux_cookie_packets_total{event=\"fallback\"} %llu\n",
            (unsigned long long)RD(st->ck_fallback));
    metric_head(f, "hlb_smux_cookie_quic_packets_total", "counter",
                "QUIC packets to cheetah VIPs (p4/COOKIE-SPEC.md section 13): placed by their "
                "connection id (decoded) or by the hash of a long header's DCID (initial), "
                "dropped for an id naming no server of the pool (invalid, the bad_quic_cid "
                "drops) or for a header that is no QUIC packet (malformed, bad_quic_header).");
    fprintf(f, "hlb_smux_cookie_quic_packets_total{event=\"decoded\"} %llu\n",
            (unsigned long long)RD(st->quic_decoded));
    fprintf(f, "hlb_smux_cookie_quic_packets_total{event=\"initial\"} %llu\n",
            (unsigned long long)RD(st->quic_initial));
    fprintf(f, "hlb_smux_cookie_quic_packets_total{event=\"invalid\"} %llu\n",
            (unsigned long long)RD(st->drops[HLB_DROP_BAD_QUIC_CID]));
    fprintf(f, "hlb_smux_cookie_quic_packets_total{event=\"malformed\"} %llu\n",
            (unsigned long long)RD(st->drops[HLB_DROP_BAD_QUIC_HEADER]));
    metric_head(f, "hlb_smux_cookie_syns_total", "counter",
                "SYNs with a timestamp option to cheetah VIPs, by the mechanism that placed them.");
    for (int m = 0; m < HLB_MECH_MAX; m++)
        fprintf(f, "hlb_smux_cookie_syns_total{mechanism=\"%s\"} %llu\n", hlb_mechanism_names[m],
                (unsigned long long)RD(st->ck_syns[m]));
    metric_head(f, "hlb_smux_cookie_stateless_syns_total", "counter",
                "SYNs to cheetah-stateful VIPs placed without a stateful index (this SMux is "
                "no owner, or its ConnStack partition was empty).");
    fprintf(f, "hlb_smux_cookie_stateless_syns_total %llu\n",
            (unsigned long long)RD(st->ck_stateless_syns));
    metric_head(f, "hlb_smux_cookie_stateful_total", "counter",
                "Stateful Cheetah events (p4/COOKIE-SPEC.md section 7): SYNs given an index "
                "(inserted), SYNs left stateless for an empty stack (exhausted), segments "
                "placed by their entry (hit) or naming none (miss, a bad_cookie drop), "
                "entries freed by a close report (released) or idle (idle_expired), segments sent to their owner SMux "
                "(forwarded), IP-in-IP frames from another SMux (decapsulated), and those "
                "naming yet another owner (foreign_bad, dropped); entries given back by the "
                "host agents' re-reports (adopted) or refused as their index held another "
                "connection (adopt_taken), owner SYNs left stateless while a re-report was "
                "awaited (held_syn), entries dropped as their owner id was given anew "
                "(cleared).");
    {
        const struct { const char *name; uint64_t v; } ev[] = {
            {"inserted", tot.sf.inserts}, {"exhausted", tot.sf.exhausted},
            {"hit", tot.sf.hits}, {"miss", tot.sf.misses}, {"released", tot.sf.released},
{"idle_expired", tot.sf.idle_expired},
            {"forwarded", tot.sf.forwarded}, {"decapsulated", st->ck_decapsulated},
            {"foreign_bad", tot.sf.foreign_bad}, {"adopted", tot.sf.adopted},
            {"adopt_taken", tot.sf.adopt_taken}, {"held_syn", tot.sf.held_syns},
            {"cleared", tot.sf.cleared}};
        for (size_t k = 0; k < sizeof(ev) / sizeof(ev[0]); k++)
            fprintf(f, "hlb_smux_cookie_stateful_total{event=\"%s\"} %llu\n", ev[k].name,
                    (unsigned long long)ev[k].v);
    }
    metric_head(f, "hlb_smux_cookie_stateful_entries", "gauge",
                "Stateful Cheetah indexes in use, all workers.");
    fprintf(f, "hlb_smux_cookie_stateful_entries %llu\n", (unsigned long long)tot.sf.entries);
    metric_head(f, "hlb_smux_cookie_stateful_capacity", "gauge",
                "Stateful Cheetah indexes, all workers and owner-id tables, also those of ids "
                "given away (partitions x 1024 each).");
    fprintf(f, "hlb_smux_cookie_stateful_capacity %llu\n", (unsigned long long)tot.sf_capacity);
    /* Per owner id; no family when no id is listed (a family without a sample would
     * read as another family to a parser). */
    unsigned n_w = c->cfg.slot->n_readers;
    uint16_t listed = hlb_sf_owners_listed(&c->sf_owners, c->cfg.workers, n_w, t);
    if (listed) {
        uint16_t held = hlb_sf_held_ids(t);
        metric_head(f, "hlb_smux_cookie_stateful_owner_entries", "gauge",
                    "Stateful Cheetah indexes in use per owner id this SMux holds or held "
                    "(each id its own index space; an id given away drains by the idle sweep).");
        for (uint32_t m = listed; m; m &= m - 1)
            fprintf(f, "hlb_smux_cookie_stateful_owner_entries{owner=\"%d\"} %llu\n",
                    __builtin_ctz(m), (unsigned long long)hlb_sf_owner_entries(
                                          c->cfg.workers, n_w, (uint32_t)__builtin_ctz(m)));
        metric_head(f, "hlb_smux_cookie_stateful_owner_held", "gauge",
                    "1 for an owner id the running table gives this SMux (its address at that "
                    "position of statefulOwners), 0 for one it held before.");
        for (uint32_t m = listed; m; m &= m - 1)
            fprintf(f, "hlb_smux_cookie_stateful_owner_held{owner=\"%d\"} %d\n",
                    __builtin_ctz(m), held >> __builtin_ctz(m) & 1);
    }
    metric_head(f, "hlb_smux_icmp_frag_needed_total", "counter",
                "ICMP fragmentation-needed messages sent (packet over MTU after encap).");
    fprintf(f, "hlb_smux_icmp_frag_needed_total %llu\n",
            (unsigned long long)RD(st->icmp_frag_needed));
    metric_head(f, "hlb_smux_arp_replies_total", "counter", "ARP replies for our address.");
    fprintf(f, "hlb_smux_arp_replies_total %llu\n", (unsigned long long)RD(st->arp_replies));
    metric_head(f, "hlb_smux_arp_requests_total", "counter", "ARP requests sent for the gateway.");
    fprintf(f, "hlb_smux_arp_requests_total %llu\n", (unsigned long long)RD(st->arp_requests_sent));
    metric_head(f, "hlb_smux_icmp_echo_replies_total", "counter", "Pings to our address answered.");
    fprintf(f, "hlb_smux_icmp_echo_replies_total %llu\n",
            (unsigned long long)RD(st->icmp_echo_replies));
    metric_head(f, "hlb_smux_gateway_resolved", "gauge", "1 when the gateway MAC is known.");
    fprintf(f, "hlb_smux_gateway_resolved %d\n", tot.gw_known);
    metric_head(f, "hlb_smux_worker_rx_packets_total", "counter",
                "Frames received per worker (one per lcore given to the SMux).");
    for (unsigned k = 0; k < c->cfg.slot->n_readers; k++)
        fprintf(f, "hlb_smux_worker_rx_packets_total{worker=\"%u\"} %llu\n", k,
                (unsigned long long)RD(c->cfg.workers[k]->st.rx_packets));

    const struct hlb_conn_stats *ct = &tot.ct;
    if (tot.have_ct) {
        metric_head(f, "hlb_smux_conn_table_entries", "gauge",
                    "Connection-table slots in use (expired ones until reclaimed).");
        fprintf(f, "hlb_smux_conn_table_entries %llu\n", (unsigned long long)ct->entries);
        metric_head(f, "hlb_smux_conn_table_capacity", "gauge", "Connection-table slots.");
        fprintf(f, "hlb_smux_conn_table_capacity %llu\n", (unsigned long long)tot.ct_capacity);
        metric_head(f, "hlb_smux_conn_table_inserts_total", "counter", "Connections pinned.");
        fprintf(f, "hlb_smux_conn_table_inserts_total %llu\n",
                (unsigned long long)ct->inserts);
        metric_head(f, "hlb_smux_conn_table_evictions_total", "counter",
                    "Entries removed: idle timeout, displaced by a new entry (half-open, "
                    "closing, or one packet seen), or RST.");
        fprintf(f, "hlb_smux_conn_table_evictions_total{reason=\"timeout\"} %llu\n",
                (unsigned long long)ct->evict_timeout);
        fprintf(f, "hlb_smux_conn_table_evictions_total{reason=\"displaced\"} %llu\n",
                (unsigned long long)ct->evict_displaced);
        fprintf(f, "hlb_smux_conn_table_evictions_total{reason=\"rst\"} %llu\n",
                (unsigned long long)ct->closed);
        metric_head(f, "hlb_smux_conn_table_insert_failures_total", "counter",
                    "New connections not pinned: their bucket held only established "
                    "connections and confirmed UDP flows.");
        fprintf(f, "hlb_smux_conn_table_insert_failures_total %llu\n",
                (unsigned long long)ct->insert_failures);
        metric_head(f, "hlb_smux_conn_lookups_total", "counter", "Connection-table lookups.");
        fprintf(f, "hlb_smux_conn_lookups_total{result=\"hit\"} %llu\n",
                (unsigned long long)RD(st->conn_hits));
        fprintf(f, "hlb_smux_conn_lookups_total{result=\"miss\"} %llu\n",
                (unsigned long long)RD(st->conn_misses));
        metric_head(f, "hlb_smux_conn_repinned_total", "counter",
                    "Pinned connections whose DIP left the pool (re-selected).");
        fprintf(f, "hlb_smux_conn_repinned_total %llu\n",
                (unsigned long long)RD(st->conn_repinned));
    }
    if (c->cfg.extra_metrics)
        c->cfg.extra_metrics(f, c->cfg.extra_metrics_arg);
    pthread_mutex_unlock(&c->lock);
    fclose(f);
    *len = size;
    return buf;
}

/* ---- connections the running table would send elsewhere ---------------------------- */

struct diverging_scan {
    const struct hlb_vip_table *t;
    uint64_t *live;                /* per service */
    uint64_t *diverging;           /* per service */
};

static int pool_has(const struct hlb_vip_table *t, const struct hlb_service *s,
                    const struct hlb_conn_entry *e)
{
    if (e->table_gen == t->gen && e->dip_index >= s->dip_first &&
        e->dip_index < s->dip_first + s->dip_count)
        return t->dips[e->dip_index].ip == e->dip_ip;
    for (uint32_t d = s->dip_first; d < s->dip_first + s->dip_count; d++)
        if (t->dips[d].ip == e->dip_ip)
            return 1;
    return 0;
}

static void count_diverging(const struct hlb_conn_entry *e, void *arg)
{
    struct diverging_scan *d = arg;
    const struct hlb_service *s = hlb_table_lookup(d->t, e->dst_ip, e->proto, e->dst_port);
    if (!s)
        return;
    uint32_t i = (uint32_t)(s - d->t->services);
    d->live[i]++;
    struct hlb_5tuple tuple = {e->src_ip, e->dst_ip, e->src_port, e->dst_port, e->proto};
    int pick = hlb_select_dip(d->t, s, &tuple);
    /* A DIP that left the pool moves its connections anyway; only those whose DIP is
     * still there and that the stateless choice would move count. */
    if (pick >= 0 && d->t->dips[pick].ip != e->dip_ip && pool_has(d->t, s, e))
        d->diverging[i]++;
}

/* Per VIP service: live pinned connections and how many of them a stateless mux (an
 * HMux, hashing like this SMux) would send to another DIP than the pinned one. The
 * controller keeps a VIP whose pool grew on the SMuxes until this is 0 (Duet §3.5.2).
 * Scans the whole connection table: seconds for tens of millions of slots. */
json_t *hlb_control_diverging_report(struct hlb_control *c)
{
    pthread_mutex_lock(&c->lock);
    const struct hlb_vip_table *t = hlb_table_acquire(c->cfg.slot);
    struct diverging_scan d = {t, calloc(t->n_services + 1, 8), calloc(t->n_services + 1, 8)};
    json_t *services = json_array();
    int have_ct = 0;
    if (d.live && d.diverging) {
        for (unsigned k = 0; k < c->cfg.slot->n_readers; k++)
            if (c->cfg.workers[k]->ct) {
                hlb_conn_for_each_live(c->cfg.workers[k]->ct, count_diverging, &d);
                have_ct = 1;
            }
        for (uint32_t i = 0; i < t->n_services; i++) {
            const struct hlb_service *s = &t->services[i];
            char vip[16];
            hlb_ip_str(s->vip, vip);
            json_array_append_new(services, json_pack("{s:s,s:s,s:i,s:I,s:I}", "vip", vip,
                "proto", hlb_proto_name(s->proto), "port", ntohs(s->port),
                "connections", (json_int_t)d.live[i], "diverging", (json_int_t)d.diverging[i]));
        }
    }
    json_t *out = json_pack("{s:I,s:b,s:o}", "version", (json_int_t)t->version,
                            "connTable", have_ct, "services", services);
    pthread_mutex_unlock(&c->lock);
    free(d.live);
    free(d.diverging);
    return out;
}

/* GET /stats: per VIP service of the running table, the packets and IP bytes forwarded
 * (in all, and per DIP) since the entry appeared: the counters of /metrics as JSON, which
 * the controller builds its traffic matrix from. */
json_t *hlb_control_stats_report(struct hlb_control *c)
{
    char key[128], vip[16], dip[16];
    uint64_t p, b;
    pthread_mutex_lock(&c->lock);
    const struct hlb_vip_table *t = hlb_table_acquire(c->cfg.slot);
    struct hlb_counter *sums = dip_sums(t);
    json_t *services = sums ? json_array() : NULL;
    for (uint32_t s = 0; services && s < t->n_services; s++) {
        const struct hlb_service *sv = &t->services[s];
        json_t *dips = json_array();
        for (uint32_t d = sv->dip_first; dips && d < sv->dip_first + sv->dip_count; d++) {
            if (t->dip_first_of[d] != d)
                continue;                       /* one more unit of a DIP already counted */
            dip_key(sv, &t->dips[d], key, sizeof(key));
            totals(c, key, sums[d], &p, &b);
            hlb_ip_str(t->dips[d].ip, dip);
            json_array_append_new(dips, json_pack("{s:s,s:I,s:I}", "ip", dip, "packets", (json_int_t)p,
                                                  "bytes", (json_int_t)b));
        }
        svc_key(sv, key, sizeof(key));
        totals(c, key, hlb_counter_total(t, 0, s), &p, &b);
        hlb_ip_str(sv->vip, vip);
        json_array_append_new(services, json_pack("{s:s,s:s,s:i,s:I,s:I,s:o*}", "vip", vip,
            "proto", hlb_proto_name(sv->proto), "port", ntohs(sv->port), "packets", (json_int_t)p,
            "bytes", (json_int_t)b, "dips", dips));
    }
    struct hlb_workers_total tot;
    hlb_workers_total(c->cfg.workers, c->cfg.slot->n_readers, &tot);
    json_t *syns = json_object();
    for (int m = 0; m < HLB_MECH_MAX; m++)
        json_object_set_new(syns, hlb_mechanism_names[m], json_integer((json_int_t)tot.st.ck_syns[m]));
    json_t *owners = json_array();
    uint16_t held = hlb_sf_held_ids(t);
    for (uint32_t m = hlb_sf_owners_listed(&c->sf_owners, c->cfg.workers, c->cfg.slot->n_readers,
                                           t); m; m &= m - 1) {
        uint32_t id = (uint32_t)__builtin_ctz(m);
        json_array_append_new(owners, json_pack("{s:i,s:b,s:I}", "id", (int)id, "held",
                                                held >> id & 1, "entries", (json_int_t)
                                                hlb_sf_owner_entries(c->cfg.workers,
                                                                     c->cfg.slot->n_readers, id)));
    }
    json_t *stateful = json_pack(
        "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o}",
        "entries", (json_int_t)tot.sf.entries, "capacity", (json_int_t)tot.sf_capacity,
        "inserted", (json_int_t)tot.sf.inserts, "exhausted", (json_int_t)tot.sf.exhausted,
        "hit", (json_int_t)tot.sf.hits, "miss", (json_int_t)tot.sf.misses,
        "released", (json_int_t)tot.sf.released,
        "idle_expired", (json_int_t)tot.sf.idle_expired, "forwarded", (json_int_t)tot.sf.forwarded,
        "decapsulated", (json_int_t)tot.st.ck_decapsulated,
        "foreign_bad", (json_int_t)tot.sf.foreign_bad,
        "stateless_syns", (json_int_t)tot.st.ck_stateless_syns,
        "adopted", (json_int_t)tot.sf.adopted, "adopt_taken", (json_int_t)tot.sf.adopt_taken,
        "held_syns", (json_int_t)tot.sf.held_syns, "cleared", (json_int_t)tot.sf.cleared,
        "owners", owners);
    json_t *quic = json_pack("{s:I,s:I,s:I,s:I}", "decoded", (json_int_t)tot.st.quic_decoded,
                             "initial", (json_int_t)tot.st.quic_initial,
                             "invalid", (json_int_t)tot.st.drops[HLB_DROP_BAD_QUIC_CID],
                             "malformed", (json_int_t)tot.st.drops[HLB_DROP_BAD_QUIC_HEADER]);
    json_t *cookie = json_pack("{s:I,s:I,s:I,s:o,s:o,s:o}", "decoded", (json_int_t)tot.st.ck_decoded,
                               "invalid", (json_int_t)tot.st.drops[HLB_DROP_BAD_COOKIE],
                               "fallback", (json_int_t)tot.st.ck_fallback, "syns", syns,
                               "stateful", stateful, "quic", quic);
    json_t *pins = json_pack("{s:i,s:i,s:I,s:I}", "count", c->pins ? (int)c->pins->n : 0,
                             "capacity", (int)hlb_control_max_pins(c), "packets",
                             (json_int_t)tot.st.pinned_packets, "changes", (json_int_t)c->pin_changes);
    json_t *out = json_pack("{s:I,s:o*,s:o,s:o}", "version", (json_int_t)t->version, "services",
                            services, "cookie", cookie, "pins", pins);
    pthread_mutex_unlock(&c->lock);
    free(sums);
    return out;
}
