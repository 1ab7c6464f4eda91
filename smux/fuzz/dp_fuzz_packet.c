/* libFuzzer harness for the packet core: any byte string as a received frame, run
 * through parse -> classify -> select -> encap/replies against a table that has every
 * selection and encapsulation mode, with a small connection table. Checks that the
 * core never reads or writes outside the buffer (ASan) and that its verdicts are sane. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "datapath.h"

static const char *TABLE =
    "{\"version\":1,\"vips\":["
    "{\"vip\":\"100.64.0.1\",\"selection\":\"crc32\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,"
    "\"dips\":[{\"ip\":\"10.0.1.1\",\"weight\":3},{\"ip\":\"10.0.1.2\",\"hostIp\":\"172.16.0.2\"}]},"
    "{\"proto\":\"udp\",\"port\":0,\"dips\":[{\"ip\":\"10.0.1.3\"}]}]},"
    "{\"vip\":\"100.64.0.2\",\"selection\":\"ovs\",\"encap\":\"gre\",\"connTable\":false,"
    "\"ports\":[{\"proto\":\"tcp\",\"port\":0,\"dips\":[{\"ip\":\"10.0.2.1\"},{\"ip\":\"10.0.2.2\","
    "\"weight\":0}]}]}]}";

static struct hlb_worker w;
static struct hlb_vip_table *t;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!t) {
        struct hlb_table_error err;
        struct hlb_table_options opt = {.default_pin = 1};
        t = hlb_table_from_json(TABLE, strlen(TABLE), &opt, &err);
        if (!t)
            abort();
        t->gen = 1;
        w.ct = hlb_conn_table_create(256, NULL);
        w.cfg.self_ip = hlb_htonl(0xc000020a);   /* 192.0.2.10 */
        w.cfg.gw_ip = hlb_htonl(0xc0000201);
        w.cfg.gw_known = 1;
        w.cfg.outer_ttl = 64;
        w.cfg.mtu = 1500;
    }
    if (size > 9000)
        return 0;
    enum { HEADROOM = 64 };
    /* Exactly-sized heap buffer: ASan flags any access past the frame. */
    uint8_t *buf = malloc(HEADROOM + size + 1);
    memcpy(buf + HEADROOM, data, size);
    struct hlb_pkt p = {.data = buf + HEADROOM, .len = (uint32_t)size, .headroom = HEADROOM};
    uint8_t v = 0xee;
    static uint32_t now;
    hlb_dp_burst(&w, t, &p, &v, 1, now += 7);
    if (v != HLB_V_TX && v != HLB_V_DROP)
        abort();
    if (v == HLB_V_TX) {
        if (p.data < buf || p.data + p.len > buf + HEADROOM + size + 24 || p.len < 42)
            abort();
        if ((size_t)(p.data - buf) != p.headroom)
            abort();
    }
    free(buf);
    return 0;
}
