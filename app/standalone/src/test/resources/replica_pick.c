/* Test tool: the SMux's OVS select-group replica (smux/src/ovs_hash.c) picking a bucket.
 * stdin lines: "src dst sport dport proto id:weight id:weight ..."; prints the chosen bucket id. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hlb_ovs_hash.h"

int main(void)
{
    char line[65536];
    while (fgets(line, sizeof line, stdin)) {
        char src[32], dst[32];
        unsigned sport, dport, proto;
        int off = 0;
        if (sscanf(line, "%31s %31s %u %u %u%n", src, dst, &sport, &dport, &proto, &off) != 5)
            continue;
        struct hlb_5tuple t;
        memset(&t, 0, sizeof t);
        inet_pton(AF_INET, src, &t.src_ip);
        inet_pton(AF_INET, dst, &t.dst_ip);
        t.src_port = htons((uint16_t) sport);
        t.dst_port = htons((uint16_t) dport);
        t.proto = (uint8_t) proto;
        uint32_t ids[4096];
        uint16_t w[4096];
        int n = 0, used = 0;
        unsigned id, wt;
        char *p = line + off;
        while (n < 4096 && sscanf(p, " %u:%u%n", &id, &wt, &used) == 2) {
            ids[n] = id;
            w[n] = (uint16_t) wt;
            n++;
            p += used;
        }
        int i = hlb_ovs_select_bucket(hlb_ovs_select_hash(&t, 0), ids, w, n);
        printf("%d\n", i < 0 ? -1 : (int) ids[i]);
    }
    return 0;
}
