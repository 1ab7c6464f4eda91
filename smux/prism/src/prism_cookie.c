/* Steering mode c (prism_cookie.h): the importing host's agent writes its own
 * server id into the connection's cookie. */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hlb_cookie.h"
#include "hlb_decap.h"
#include "prism_cookie.h"

int prism_open_pinned(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = bpf_obj_get(path);
    return fd < 0 ? -errno : fd;
}

/* Map `name` pinned in dir, refused (-EPROTO) unless its values are `size` bytes: a
 * host agent of another version may have pinned another layout, and a lookup into
 * this build's struct would then overrun it. */
static int open_pinned_of(const char *dir, const char *name, size_t size)
{
    int fd = prism_open_pinned(dir, name);
    if (fd < 0) {
        return fd;
    }
    struct bpf_map_info info = { 0 };
    __u32 len = sizeof info;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0 || info.value_size != size) {
        fprintf(stderr, "%s/%s: values of %u bytes, this build reads %zu (a host agent of "
                "another version pinned it)\n", dir, name, info.value_size, size);
        close(fd);
        return -EPROTO;
    }
    return fd;
}

int prism_cookie_open(struct prism_cookie *pc, const char *pin_dir)
{
    pc->conns_fd = open_pinned_of(pin_dir, "hlb_cookie_conns", sizeof(struct hlb_cookie_conn));
    pc->vips_fd = open_pinned_of(pin_dir, "hlb_cookie_vips", sizeof(struct hlb_cookie_vip));
    pc->host_fd = open_pinned_of(pin_dir, "hlb_cookie_host", sizeof(struct hlb_cookie_host));
    int rc = pc->conns_fd < 0 ? pc->conns_fd : pc->vips_fd < 0 ? pc->vips_fd : pc->host_fd;
    if (rc < 0) {
        prism_cookie_close(pc);
        return rc;
    }
    return 0;
}

void prism_cookie_close(struct prism_cookie *pc)
{
    int *fds[] = { &pc->conns_fd, &pc->vips_fd, &pc->host_fd };
    for (size_t i = 0; i < 3; i++) {
        if (*fds[i] >= 0) {
            close(*fds[i]);
        }
        *fds[i] = -1;
    }
}

static int host_entry(const struct prism_cookie *pc, struct hlb_cookie_host *h)
{
    uint32_t zero = 0;
    if (pc->host_fd < 0 || bpf_map_lookup_elem(pc->host_fd, &zero, h)) {
        return -1;
    }
    return 0;
}

uint16_t prism_cookie_server_id(const struct prism_cookie *pc)
{
    struct hlb_cookie_host h;
    return host_entry(pc, &h) ? 0 : h.server_id;
}

/* Whether a clock starting at t sends wire values newer than seen for the whole
 * window: no epoch change within it (the wire value then grows with the clock), and
 * newer at both ends. */
static int newer_over_window(uint32_t t, uint32_t seen, uint16_t next)
{
    if ((t & 0xffffu) + PRISM_COOKIE_WINDOW > 0xffffu) {
        return 0;
    }
    uint32_t w = hlb_cookie_encode(t, next);
    return (int32_t) (w - seen) > 0 && (int32_t) (w + PRISM_COOKIE_WINDOW - seen) > 0;
}

uint32_t prism_cookie_ts_start(uint32_t ts, uint32_t seen, uint16_t next)
{
    /* The clock as it is, else the start of one of the next two epochs (both version
     * bits), else just past the client's low bits there (the same cookie again after
     * a jump).  One of them always holds for a window below 2^15 ticks:
     * tests/test_prism_units.py sweeps it.  Each keeps the low bit of ts: Linux reads
     * it as the connection's timestamp unit (TCP_TIMESTAMP, set: microseconds). */
    uint32_t unit = ts & 1u, epoch = (ts | 0xffffu) + 1 + unit;
    uint32_t past = ((seen & 0xffffu) + 2) & ~1u;
    const uint32_t cand[] = { ts, epoch, epoch + 0x10000u, epoch + past, epoch + 0x10000u + past };
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        if (newer_over_window(cand[i], seen, next)) {
            return cand[i];
        }
    }
    return ts;   /* not reached */
}

static struct hlb_cookie_tuple tuple_of(const struct prism_tcp_state *st)
{
    return (struct hlb_cookie_tuple) { .vip = st->local_addr, .client = st->peer_addr,
                                       .vip_port = st->local_port, .client_port = st->peer_port };
}

void prism_cookie_export(const struct prism_cookie *pc, struct prism_tcp_state *st)
{
    struct hlb_cookie_tuple t = tuple_of(st);
    struct hlb_cookie_conn c;
    if (pc->conns_fd < 0 || !(st->options & PRISM_OPT_TIMESTAMPS)
        || bpf_map_lookup_elem(pc->conns_fd, &t, &c)) {
        return;
    }
    if (c.flags & HLB_CONN_HAS_LAST) {
        st->seen_wire = hlb_cookie_encode(c.last_tsval, c.cookie);   /* what it sent last */
    } else if (c.flags & HLB_CONN_PRISM_SEEN) {
        st->seen_wire = c.last_tsval;   /* imported, nothing sent: what it was handed */
    } else {
        return;   /* no cookie ever went out from here */
    }
    st->options |= PRISM_OPT_COOKIE;
}

int prism_cookie_adopt(const struct prism_cookie *pc, struct prism_tcp_state *st)
{
    struct hlb_cookie_host h;
    if (!(st->options & PRISM_OPT_COOKIE) || host_entry(pc, &h) || !h.server_id) {
        return 0;
    }
    struct hlb_lpm_key k = { .prefixlen = 32, .addr = st->local_addr };
    struct hlb_cookie_vip v;
    if (bpf_map_lookup_elem(pc->vips_fd, &k, &v)) {
        return 0;   /* not a cookie VIP on this host */
    }
    struct hlb_cookie_tuple t = tuple_of(st);
    uint16_t next = hlb_cookie_make(&v, &t, h.server_id);
    st->ts_val = prism_cookie_ts_start(st->ts_val, st->seen_wire, next);
    /* Without HLB_CONN_HAS_LAST the agent restores the echoes that arrive before this
     * host's first segment (the previous owner's) as TSecr 0: no RTT sample from a
     * clock that may have jumped; its first segment out sets the newest TSval. */
    struct hlb_cookie_conn c = { .last_tsval = st->seen_wire, .gen = h.gen,
                                 .ident = h.server_id, .cookie = next,
                                 .prev_cookie = hlb_cookie_of(st->seen_wire),
                                 .flags = HLB_CONN_PRISM_SEEN };
    if (bpf_map_update_elem(pc->conns_fd, &t, &c, BPF_ANY)) {
        return -errno;
    }
    return 1;
}
