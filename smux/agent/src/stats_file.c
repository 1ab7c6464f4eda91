#include "stats_file.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

int hlb_stats_write(const char *path, const char *backend, const char *mode,
                    const uint64_t counters[HLB_C_MAX],
                    const struct hlb_vip_entry *entries, size_t n,
                    const uint64_t *cookie, const int64_t *established)
{
    static const char *cookie_names[] = HLB_COOKIE_COUNTER_NAMES;
    static const char *names[] = HLB_COUNTER_NAMES;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        return -1;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    fprintf(f, "{\"backend\":\"%s\",\"mode\":\"%s\",\"time\":%.3f,\"counters\":{", backend,
            mode, now.tv_sec + now.tv_nsec / 1e9);
    for (int i = 0; i < HLB_C_MAX; i++) {
        fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", names[i], counters[i]);
    }
    fprintf(f, "},\"vips\":[");
    for (size_t i = 0; i < n; i++) {
        char vip[INET_ADDRSTRLEN], mux[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &entries[i].key.vip, vip, sizeof vip);
        inet_ntop(AF_INET, &entries[i].key.mux, mux, sizeof mux);
        fprintf(f, "%s{\"vip\":\"%s\",\"mux\":\"%s\",\"encap\":\"%s\",\"packets\":%" PRIu64
                ",\"bytes\":%" PRIu64 "}", i ? "," : "", vip, mux,
                entries[i].key.encap == HLB_ENCAP_IPIP ? "ipip" : "gre",
                (uint64_t) entries[i].val.packets, (uint64_t) entries[i].val.bytes);
    }
    fprintf(f, "]");
    if (cookie) {
        fprintf(f, ",\"cookie\":{");
        for (int i = 0; i < HLB_CK_MAX; i++) {
            fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", cookie_names[i], cookie[i]);
        }
        fprintf(f, "}");
    }
    if (established) {
        fprintf(f, ",\"establishedConnections\":%" PRId64, *established);
    }
    fprintf(f, "}\n");
    if (fclose(f) != 0) {
        return -1;
    }
    return rename(tmp, path);
}
