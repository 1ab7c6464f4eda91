/* TCP_REPAIR export and import of an established connection (tcp_handoff.h). */
#include "tcp_handoff.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TCP_STATE_ESTABLISHED 1   /* include/net/tcp_states.h, not exported */
#define TCPOPT_MSS 2
#define PRISM_MAX_USER_MSS 32767   /* MAX_TCP_WINDOW, the kernel's bound on TCP_MAXSEG */
#define TCPOPT_WINDOW 3
#define TCPOPT_SACK_PERM 4
#define TCPOPT_TIMESTAMP 8

static int set_int(int fd, int opt, int val)
{
    return setsockopt(fd, IPPROTO_TCP, opt, &val, sizeof val) ? -errno : 0;
}

static int repair(int fd, int mode)
{
    return set_int(fd, TCP_REPAIR, mode);
}

static int queue_seq(int fd, int queue, uint32_t *get, const uint32_t *set)
{
    int rc = set_int(fd, TCP_REPAIR_QUEUE, queue);
    if (rc) {
        return rc;
    }
    if (set) {
        return setsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, set, sizeof *set) ? -errno : 0;
    }
    socklen_t n = sizeof *get;
    return getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, get, &n) ? -errno : 0;
}

/* Peeks `len` bytes of the selected queue (repair mode) into buf + off. */
static int peek_queue(int fd, uint8_t *buf, size_t len)
{
    if (len == 0) {
        return 0;
    }
    ssize_t n = recv(fd, buf, len + 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0) {
        return -errno;
    }
    return (size_t) n == len ? 0 : -EAGAIN;   /* the queue changed under us */
}

/* Writes buf into the selected queue (repair mode) or, out of repair mode,
 * as ordinary data.  A repair-mode write of a large receive queue needs one
 * linear buffer, which the kernel may refuse: halve the chunk and go on. */
static int fill_queue(int fd, const uint8_t *buf, size_t len)
{
    size_t chunk = len;
    while (len) {
        ssize_t n = send(fd, buf, len < chunk ? len : chunk, 0);
        if (n <= 0) {
            if (chunk > 1024 && (n == 0 || errno == ENOMEM)) {
                chunk /= 2;
                continue;
            }
            return n < 0 ? -errno : -EIO;
        }
        buf += n;
        len -= (size_t) n;
    }
    return 0;
}

int prism_tcp_export(int fd, const void *prefix, size_t prefix_len, struct prism_tcp_state *st)
{
    memset(st, 0, sizeof *st);
    int rc = repair(fd, TCP_REPAIR_ON);
    if (rc) {
        return rc;
    }
    struct tcp_info ti;
    socklen_t n = sizeof ti;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &n)) {
        rc = -errno;
        goto fail;
    }
    if (ti.tcpi_state != TCP_STATE_ESTABLISHED) {
        rc = -ENOTCONN;
        goto fail;
    }
    st->options = (ti.tcpi_options & TCPI_OPT_TIMESTAMPS ? PRISM_OPT_TIMESTAMPS : 0)
                  | (ti.tcpi_options & TCPI_OPT_SACK ? PRISM_OPT_SACK : 0)
                  | (ti.tcpi_options & TCPI_OPT_WSCALE ? PRISM_OPT_WSCALE : 0);
    st->snd_wscale = ti.tcpi_snd_wscale;
    st->rcv_wscale = ti.tcpi_rcv_wscale;

    int outq, unsent, inq;
    if (ioctl(fd, SIOCOUTQ, &outq) || ioctl(fd, SIOCOUTQNSD, &unsent) || ioctl(fd, SIOCINQ, &inq)) {
        rc = -errno;
        goto fail;
    }
    st->sendq_len = (uint32_t) outq;
    st->unsent_len = (uint32_t) unsent;
    st->recvq_len = (uint32_t) (inq + (int) prefix_len);

    int mss;
    uint32_t ts;
    n = sizeof mss;
    if (getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &n)) {   /* repair: the peer's clamp */
        rc = -errno;
        goto fail;
    }
    st->mss = (uint16_t) mss;
    n = sizeof ts;
    if (getsockopt(fd, IPPROTO_TCP, TCP_TIMESTAMP, &ts, &n)) {
        rc = -errno;
        goto fail;
    }
    st->ts_val = ts;

    struct tcp_repair_window w;
    n = sizeof w;
    if (getsockopt(fd, IPPROTO_TCP, TCP_REPAIR_WINDOW, &w, &n)) {
        rc = -errno;
        goto fail;
    }
    st->snd_wl1 = w.snd_wl1;
    st->snd_wnd = w.snd_wnd;
    st->max_window = w.max_window;
    st->rcv_wnd = w.rcv_wnd;
    st->rcv_wup = w.rcv_wup;

    struct sockaddr_in a;
    socklen_t alen = sizeof a;
    if (getsockname(fd, (struct sockaddr *) &a, &alen) || a.sin_family != AF_INET) {
        rc = errno ? -errno : -EAFNOSUPPORT;
        goto fail;
    }
    st->local_addr = a.sin_addr.s_addr;
    st->local_port = a.sin_port;
    alen = sizeof a;
    if (getpeername(fd, (struct sockaddr *) &a, &alen)) {
        rc = -errno;
        goto fail;
    }
    st->peer_addr = a.sin_addr.s_addr;
    st->peer_port = a.sin_port;

    st->sendq = malloc(st->sendq_len + 1);
    st->recvq = malloc(st->recvq_len + 1);
    if (!st->sendq || !st->recvq) {
        rc = -ENOMEM;
        goto fail;
    }
    if ((rc = queue_seq(fd, TCP_SEND_QUEUE, &st->snd_seq, NULL))
        || (rc = peek_queue(fd, st->sendq, st->sendq_len))
        || (rc = queue_seq(fd, TCP_RECV_QUEUE, &st->rcv_seq, NULL))) {
        goto fail;
    }
    if (prefix_len) {
        memcpy(st->recvq, prefix, prefix_len);
    }
    if ((rc = peek_queue(fd, st->recvq + prefix_len, (size_t) inq))) {
        goto fail;
    }
    return 0;

fail:
    prism_tcp_state_free(st);
    repair(fd, TCP_REPAIR_OFF_NO_WP);
    return rc;
}

int prism_tcp_release(int fd)
{
    /* In repair mode close() neither sends a FIN nor an RST, and unhashes the
     * socket at once (tcp_close -> tcp_disconnect). */
    return close(fd) ? -errno : 0;
}

static int set_options(int fd, const struct prism_tcp_state *st)
{
    struct tcp_repair_opt opts[4];
    int n = 0;
    opts[n++] = (struct tcp_repair_opt) { TCPOPT_MSS, st->mss };
    if (st->options & PRISM_OPT_WSCALE) {
        opts[n++] = (struct tcp_repair_opt) { TCPOPT_WINDOW,
                                              st->snd_wscale | (uint32_t) st->rcv_wscale << 16 };
    }
    if (st->options & PRISM_OPT_SACK) {
        opts[n++] = (struct tcp_repair_opt) { TCPOPT_SACK_PERM, 0 };
    }
    if (st->options & PRISM_OPT_TIMESTAMPS) {
        opts[n++] = (struct tcp_repair_opt) { TCPOPT_TIMESTAMP, 0 };
    }
    if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_OPTIONS, opts, (socklen_t) (n * sizeof opts[0]))) {
        return -errno;
    }
    if (st->options & PRISM_OPT_TIMESTAMPS
        && setsockopt(fd, IPPROTO_TCP, TCP_TIMESTAMP, &st->ts_val, sizeof st->ts_val)) {
        return -errno;
    }
    struct tcp_repair_window w = { .snd_wl1 = st->snd_wl1, .snd_wnd = st->snd_wnd,
                                   .max_window = st->max_window, .rcv_wnd = st->rcv_wnd,
                                   .rcv_wup = st->rcv_wup };
    return setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_WINDOW, &w, sizeof w) ? -errno : 0;
}

/* bind + connect in repair mode: the 4-tuple is hashed as ESTABLISHED, no SYN.
 * While an earlier socket of the same 4-tuple is still hashed on this host,
 * connect() fails with EADDRNOTAVAIL: wait for it to go, within a bound. */
static int attach_tuple(int fd, const struct prism_tcp_state *st)
{
    struct sockaddr_in local = { .sin_family = AF_INET, .sin_port = st->local_port,
                                 .sin_addr.s_addr = st->local_addr };
    struct sockaddr_in peer = { .sin_family = AF_INET, .sin_port = st->peer_port,
                                .sin_addr.s_addr = st->peer_addr };
    /* The MSS the peer announced: connect() sizes segments from the socket's MSS
     * clamp (536 on a new socket), and the repair option set after it does not
     * resize them; the user MSS becomes the clamp at connect().  (The kernel takes
     * user MSSes up to 32767 only; larger ones are loopback's, where it is moot.) */
    if ((st->mss <= PRISM_MAX_USER_MSS && set_int(fd, TCP_MAXSEG, st->mss))
        || bind(fd, (struct sockaddr *) &local, sizeof local)) {
        return -errno;
    }
    for (long waited = 0;; waited += 1000) {
        if (connect(fd, (struct sockaddr *) &peer, sizeof peer) == 0) {
            return 0;
        }
        if (errno != EADDRNOTAVAIL || waited >= PRISM_IMPORT_WAIT_US) {
            return -errno;
        }
        nanosleep(&(struct timespec) { 0, 1000 * 1000 }, NULL);
    }
}

static int import_repaired(const struct prism_tcp_state *st, int *fd_out)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return -errno;
    }
    uint32_t snd_start = st->snd_seq - st->sendq_len;
    uint32_t rcv_start = st->rcv_seq - st->recvq_len;
    uint32_t sent = st->sendq_len - st->unsent_len;
    int rc;
    if ((rc = repair(fd, TCP_REPAIR_ON))
        || (rc = queue_seq(fd, TCP_SEND_QUEUE, NULL, &snd_start))
        || (rc = queue_seq(fd, TCP_RECV_QUEUE, NULL, &rcv_start))
        || (rc = attach_tuple(fd, st))
        || (rc = set_int(fd, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE))
        || (rc = fill_queue(fd, st->sendq, sent))
        || (rc = set_int(fd, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE))
        || (rc = fill_queue(fd, st->recvq, st->recvq_len))
        || (rc = set_int(fd, TCP_REPAIR_QUEUE, TCP_NO_QUEUE))
        || (rc = set_options(fd, st))) {
        close(fd);   /* still in repair mode: silent */
        return rc;
    }
    *fd_out = fd;
    return 0;
}

int prism_tcp_import(const struct prism_tcp_state *st, int *fd_out)
{
    int fd, rc = import_repaired(st, &fd);
    if (rc) {
        return rc;
    }
    if ((rc = repair(fd, TCP_REPAIR_OFF_NO_WP))
        || (rc = fill_queue(fd, st->sendq + (st->sendq_len - st->unsent_len), st->unsent_len))) {
        repair(fd, TCP_REPAIR_ON);
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

int prism_tcp_reset_peer(const struct prism_tcp_state *st)
{
    int fd, rc = import_repaired(st, &fd);
    if (rc) {
        return rc;
    }
    rc = repair(fd, TCP_REPAIR_OFF);   /* sends the window probe */
    struct linger abort_close = { .l_onoff = 1, .l_linger = 0 };
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_close, sizeof abort_close);
    close(fd);
    return rc;
}

void prism_tcp_state_free(struct prism_tcp_state *st)
{
    free(st->sendq);
    free(st->recvq);
    st->sendq = st->recvq = NULL;
}

/* ------------------------------------------------------------ encoding */

static void put32(uint8_t *p, uint32_t v)
{
    v = htonl(v);
    memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return ntohl(v);
}

static void put16(uint8_t *p, uint16_t v)
{
    v = htons(v);
    memcpy(p, &v, 2);
}

static uint16_t get16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return ntohs(v);
}

/* The fixed part and the cookie field (PRISM_OPT_COOKIE) before the queues. */
static size_t fixed_len(uint8_t options)
{
    return PRISM_STATE_FIXED_LEN + (options & PRISM_OPT_COOKIE ? 4 : 0);
}

size_t prism_tcp_encoded_len(const struct prism_tcp_state *st)
{
    return fixed_len(st->options) + (size_t) st->sendq_len + st->recvq_len;
}

void prism_tcp_encode(const struct prism_tcp_state *st, uint8_t *b)
{
    put32(b, PRISM_STATE_MAGIC);
    b[4] = PRISM_STATE_VERSION;
    b[5] = st->options;
    b[6] = st->snd_wscale;
    b[7] = st->rcv_wscale;
    put16(b + 8, st->mss);
    put16(b + 10, 0);
    memcpy(b + 12, &st->local_addr, 4);   /* addresses and ports: already network order */
    memcpy(b + 16, &st->peer_addr, 4);
    memcpy(b + 20, &st->local_port, 2);
    memcpy(b + 22, &st->peer_port, 2);
    const uint32_t words[] = { st->snd_seq, st->rcv_seq, st->ts_val, st->snd_wl1, st->snd_wnd,
                               st->max_window, st->rcv_wnd, st->rcv_wup, st->sendq_len,
                               st->unsent_len, st->recvq_len };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        put32(b + 24 + 4 * i, words[i]);
    }
    size_t q = fixed_len(st->options);
    if (st->options & PRISM_OPT_COOKIE) {
        put32(b + PRISM_STATE_FIXED_LEN, st->seen_wire);
    }
    memcpy(b + q, st->sendq, st->sendq_len);
    memcpy(b + q + st->sendq_len, st->recvq, st->recvq_len);
}

int prism_tcp_decode(const uint8_t *b, size_t len, struct prism_tcp_state *st, const char **why)
{
    memset(st, 0, sizeof *st);
#define REJECT(msg) do { *why = (msg); return -EINVAL; } while (0)
    if (len < PRISM_STATE_FIXED_LEN) {
        REJECT("state: shorter than its fixed part (68 bytes)");
    }
    if (get32(b) != PRISM_STATE_MAGIC) {
        REJECT("state.magic: not a Prism TCP state");
    }
    if (b[4] != PRISM_STATE_VERSION) {
        REJECT("state.version: unsupported version");
    }
    st->options = b[5];
    st->snd_wscale = b[6];
    st->rcv_wscale = b[7];
    st->mss = get16(b + 8);
    if (st->options & ~(PRISM_OPT_TIMESTAMPS | PRISM_OPT_SACK | PRISM_OPT_WSCALE | PRISM_OPT_COOKIE)) {
        REJECT("state.options: unknown option bits");
    }
    if ((st->options & PRISM_OPT_COOKIE) && !(st->options & PRISM_OPT_TIMESTAMPS)) {
        REJECT("state.options: cookies without timestamps");
    }
    size_t q = fixed_len(st->options);
    if (len < q) {
        REJECT("state.seen_wire: missing (cookie option set)");
    }
    if (st->snd_wscale > 14 || st->rcv_wscale > 14) {
        REJECT("state.wscale: window scale above 14 (RFC 7323)");
    }
    if (st->mss < 64) {
        REJECT("state.mss: below 64");
    }
    memcpy(&st->local_addr, b + 12, 4);
    memcpy(&st->peer_addr, b + 16, 4);
    memcpy(&st->local_port, b + 20, 2);
    memcpy(&st->peer_port, b + 22, 2);
    if (!st->local_addr || !st->peer_addr || !st->local_port || !st->peer_port) {
        REJECT("state.tuple: zero address or port");
    }
    uint32_t *words[] = { &st->snd_seq, &st->rcv_seq, &st->ts_val, &st->snd_wl1, &st->snd_wnd,
                          &st->max_window, &st->rcv_wnd, &st->rcv_wup, &st->sendq_len,
                          &st->unsent_len, &st->recvq_len };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        *words[i] = get32(b + 24 + 4 * i);
    }
    if (st->unsent_len > st->sendq_len) {
        REJECT("state.unsent_len: larger than sendq_len");
    }
    if (st->max_window < st->snd_wnd) {
        REJECT("state.max_window: below snd_wnd");
    }
    if (st->options & PRISM_OPT_COOKIE) {
        st->seen_wire = get32(b + PRISM_STATE_FIXED_LEN);
    }
    if ((uint64_t) st->sendq_len + st->recvq_len != len - q) {
        REJECT("state.queues: sendq_len + recvq_len differ from the bytes that follow");
    }
#undef REJECT
    st->sendq = malloc((size_t) st->sendq_len + 1);
    st->recvq = malloc((size_t) st->recvq_len + 1);
    if (!st->sendq || !st->recvq) {
        prism_tcp_state_free(st);
        *why = "state: out of memory";
        return -ENOMEM;
    }
    memcpy(st->sendq, b + q, st->sendq_len);
    memcpy(st->recvq, b + q + st->sendq_len, st->recvq_len);
    return 0;
}
