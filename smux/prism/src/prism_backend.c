/* The Prism backend library (prism_backend.h). */
#include "prism_backend.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "prism_cookie.h"
#include "prism_linger.h"
#include "prism_wire.h"
#include "tcp_handoff.h"

#define MAX_EVENTS 64
#define READ_CHUNK 65536

enum kind { K_CTL_LISTEN, K_PLAIN_LISTEN, K_CTL, K_CONN };

/* Every epoll registration starts with its kind. */
struct handle {
    enum kind kind;
    int fd;
};

struct chunk {
    const uint8_t *p;
    size_t len, off;
    uint8_t *owned;
    struct chunk *next;
};

enum conn_state {
    C_WAIT_GO,      /* imported; the front end is steering the flow here */
    C_SERVING,      /* the application reads the request and queues a response */
    C_FLUSHING,     /* response queued, being written */
    C_DRAINING,     /* written; waiting until the client acknowledged all of it */
    C_WAIT_LOCKED,  /* RECLAIM sent; waiting for the front end's lock */
};

struct ctl;

struct prism_conn {
    struct handle h;
    struct prism_backend *b;
    struct ctl *ctl;           /* NULL: an ordinary (baseline) connection */
    uint32_t conn_id;
    enum conn_state state;
    int verdict;               /* PRISM_APP_DONE or PRISM_APP_CLOSE while flushing */
    uint8_t *in;
    size_t in_len, in_cap;
    struct chunk *out, *out_tail;
    struct timespec drain_deadline;
    uint64_t t_handoff, t_imported, t_go;   /* --trace: CLOCK_MONOTONIC ns; 0 once logged */
    int cookie;                /* mode c: the cookie names this host (prism_cookie_adopt) */
    struct prism_flow_key flow;
    struct prism_conn *next;   /* in ctl->conns, or b->plain */
};

struct ctl {
    struct handle h;
    uint8_t *in;
    size_t in_len, in_cap;
    struct prism_conn *conns;
    struct ctl *next;
};

struct prism_backend {
    struct prism_backend_config cfg;
    struct prism_backend_ops ops;
    void *user;
    int ep;
    struct handle ctl_listen, plain_listen;
    struct ctl *ctls;
    struct prism_conn *plain;
    volatile sig_atomic_t stop;
    struct prism_backend_stats stats;
    struct prism_cookie cookie;      /* mode c; fds -1 when off */
    struct prism_linger *linger;     /* mode c: handed-back flows */
    int steer_fd;
    uint64_t next_expire_ns;
};

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

/* --trace: one line per hand-off at its first response byte. */
static void trace_first_byte(struct prism_conn *c)
{
    if (!c->t_handoff) {
        return;
    }
    fprintf(stderr, "{\"level\":\"debug\",\"msg\":\"handoff trace\",\"conn\":%u,\"marks\":"
                    "{\"handoff\":%llu,\"imported\":%llu,\"go\":%llu,\"first_byte\":%llu}}\n",
            c->conn_id, (unsigned long long) c->t_handoff, (unsigned long long) c->t_imported,
            (unsigned long long) c->t_go, (unsigned long long) mono_ns());
    c->t_handoff = 0;
}

static void log_err(const char *what, int err)
{
    fprintf(stderr, "{\"level\":\"warn\",\"msg\":\"%s\",\"error\":\"%s\"}\n", what, strerror(err));
}

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) ? -errno : 0;
}

static int ep_add(struct prism_backend *b, struct handle *h, uint32_t events)
{
    struct epoll_event ev = { .events = events, .data.ptr = h };
    return epoll_ctl(b->ep, EPOLL_CTL_ADD, h->fd, &ev) ? -errno : 0;
}

static int ep_mod(struct prism_backend *b, struct handle *h, uint32_t events)
{
    struct epoll_event ev = { .events = events, .data.ptr = h };
    return epoll_ctl(b->ep, EPOLL_CTL_MOD, h->fd, &ev) ? -errno : 0;
}

static int listen_on(const char *addr, uint16_t port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    if (inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
        return -EINVAL;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    if (fd < 0) {
        return -errno;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *) &a, sizeof a) || listen(fd, 1024)) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

/* ------------------------------------------------------------ buffers */

static int buf_append(uint8_t **buf, size_t *len, size_t *cap, const void *data, size_t n)
{
    if (*len + n > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n) {
            c *= 2;
        }
        uint8_t *p = realloc(*buf, c);
        if (!p) {
            return -ENOMEM;
        }
        *buf = p;
        *cap = c;
    }
    memcpy(*buf + *len, data, n);
    *len += n;
    return 0;
}

static void buf_consume(uint8_t *buf, size_t *len, size_t n)
{
    memmove(buf, buf + n, *len - n);
    *len -= n;
}

/* ------------------------------------------------------------ control messages */

static int ctl_send(struct ctl *ctl, uint16_t type, uint32_t conn_id, const void *body, size_t len)
{
    /* The control socket is blocking with a send timeout: messages are small and
     * the front end reads them at once. */
    return prism_wire_send(ctl->h.fd, type, conn_id, body, len);
}

/* ------------------------------------------------------------ connections */

static void conn_unlink(struct prism_conn *c)
{
    struct prism_conn **pp = c->ctl ? &c->ctl->conns : &c->b->plain;
    for (; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
}

static void conn_free(struct prism_conn *c)
{
    conn_unlink(c);
    for (struct chunk *k = c->out, *n; k; k = n) {
        n = k->next;
        free(k->owned);
        free(k);
    }
    free(c->in);
    free(c);
}

/* Aborts the connection: the client gets an RST (SO_LINGER 0 was set on import). */
static void conn_reset(struct prism_conn *c)
{
    if (c->h.fd >= 0) {
        struct linger l = { 1, 0 };
        setsockopt(c->h.fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        close(c->h.fd);
        c->h.fd = -1;
    }
    conn_free(c);
}

static void conn_fail(struct prism_conn *c)
{
    c->b->stats.failed++;
    if (c->ctl) {
        ctl_send(c->ctl, PRISM_MSG_FAILED, c->conn_id, NULL, 0);
    }
    conn_reset(c);
}

/* The client closed its side: finish the close here (FIN), tell the front end. */
static void conn_close(struct prism_conn *c)
{
    uint8_t sink[4096];
    while (recv(c->h.fd, sink, sizeof sink, MSG_DONTWAIT) > 0) {
        /* unread bytes would turn the close into an RST */
    }
    struct linger l = { 0, 0 };
    setsockopt(c->h.fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(c->h.fd);
    c->h.fd = -1;
    if (c->ctl) {
        c->b->stats.closed++;
        ctl_send(c->ctl, PRISM_MSG_CLOSED, c->conn_id, NULL, 0);
    }
    conn_free(c);
}

int prism_conn_send(struct prism_conn *c, const void *buf, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) {
        return -ENOMEM;
    }
    memcpy(copy, buf, len);
    int rc = prism_conn_send_ref(c, copy, len);
    if (rc) {
        free(copy);
        return rc;
    }
    c->out_tail->owned = copy;
    return 0;
}

int prism_conn_send_ref(struct prism_conn *c, const void *buf, size_t len)
{
    struct chunk *k = calloc(1, sizeof *k);
    if (!k) {
        return -ENOMEM;
    }
    k->p = buf;
    k->len = len;
    if (c->out_tail) {
        c->out_tail->next = k;
    } else {
        c->out = k;
    }
    c->out_tail = k;
    return 0;
}

int prism_conn_fd(const struct prism_conn *c)
{
    return c->h.fd;
}

static void now_plus_ms(struct timespec *t, int ms)
{
    clock_gettime(CLOCK_MONOTONIC, t);
    t->tv_sec += ms / 1000;
    t->tv_nsec += (long) (ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

static int expired(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static void conn_serve(struct prism_conn *c);

/* Writes what it can of the queued response. */
static void conn_flush(struct prism_conn *c)
{
    while (c->out) {
        struct chunk *k = c->out;
        ssize_t n = send(c->h.fd, k->p + k->off, k->len - k->off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                ep_mod(c->b, &c->h, EPOLLOUT | EPOLLRDHUP);
                return;
            }
            conn_fail(c);
            return;
        }
        trace_first_byte(c);
        k->off += (size_t) n;
        if (k->off == k->len) {
            c->out = k->next;
            if (!c->out) {
                c->out_tail = NULL;
            }
            free(k->owned);
            free(k);
        }
    }
    if (!c->ctl) {   /* ordinary connection: keep-alive or close */
        if (c->verdict == PRISM_APP_CLOSE) {
            conn_close(c);
            return;
        }
        c->state = C_SERVING;
        ep_mod(c->b, &c->h, EPOLLIN | EPOLLRDHUP);
        if (c->in_len) {
            conn_serve(c);
        }
        return;
    }
    /* Hand back once every byte is acknowledged (no data in flight moves). */
    c->state = C_DRAINING;
    now_plus_ms(&c->drain_deadline, c->b->cfg.drain_timeout_ms);
    ep_mod(c->b, &c->h, 0);   /* polled each turn; a FIN shows when the export fails */
}

/* Gives the buffered bytes to the application. */
static void conn_serve(struct prism_conn *c)
{
    size_t consumed = 0;
    int v = c->b->ops.on_data(c, c->in, c->in_len, &consumed, c->b->user);
    if (consumed > c->in_len) {
        consumed = c->in_len;
    }
    buf_consume(c->in, &c->in_len, consumed);
    if (v == PRISM_APP_FAIL) {
        conn_fail(c);
        return;
    }
    if (v == PRISM_APP_MORE) {
        return;
    }
    if (!c->ctl) {
        c->b->stats.plain_requests++;
    }
    c->verdict = v;
    c->state = C_FLUSHING;
    conn_flush(c);
}

static void conn_readable(struct prism_conn *c)
{
    uint8_t buf[READ_CHUNK];
    ssize_t n = recv(c->h.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) {
        conn_close(c);   /* the client closed before a whole request */
        return;
    }
    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) {
            conn_fail(c);
        }
        return;
    }
    if (buf_append(&c->in, &c->in_len, &c->in_cap, buf, (size_t) n)) {
        conn_fail(c);
        return;
    }
    conn_serve(c);
}

/* Called for each draining connection at every loop turn. */
static void conn_check_drained(struct prism_conn *c)
{
    int outq = 0;
    if (ioctl(c->h.fd, SIOCOUTQ, &outq) != 0) {
        conn_fail(c);
        return;
    }
    if (outq > 0) {
        if (expired(&c->drain_deadline)) {
            conn_fail(c);
        }
        return;
    }
    char one;
    if (recv(c->h.fd, &one, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
        conn_close(c);   /* the client closed its side meanwhile: finish here */
        return;
    }
    c->state = C_WAIT_LOCKED;
    epoll_ctl(c->b->ep, EPOLL_CTL_DEL, c->h.fd, NULL);
    if (ctl_send(c->ctl, PRISM_MSG_RECLAIM, c->conn_id, NULL, 0)) {
        conn_reset(c);
    }
}

/* Mode c: the client echoes this host's cookie until the front end sends it a
 * segment, so the mux keeps sending the flow here: from now on this host's agent
 * re-encapsulates it to the front end (prism_linger.h).  Before the export, so that
 * no segment meets the flow without a socket here. */
static int hand_back_forward(struct prism_conn *c)
{
    struct sockaddr_in fe;
    socklen_t n = sizeof fe;
    if (getpeername(c->ctl->h.fd, (struct sockaddr *) &fe, &n)) {
        log_err("front end address", errno);
        return -1;
    }
    int rc = prism_linger_forward(c->b->linger, &c->flow, fe.sin_addr.s_addr, mono_ns());
    if (rc) {
        log_err("hand-back steering entry", -rc);
    }
    return rc;
}

/* The front end locked the flow: export and return the connection. */
static void conn_return(struct prism_conn *c)
{
    struct prism_tcp_state st;
    if (c->cookie && hand_back_forward(c)) {
        conn_fail(c);
        return;
    }
    int rc = prism_tcp_export(c->h.fd, c->in, c->in_len, &st);
    if (rc && c->cookie) {
        prism_linger_take(c->b->linger, &c->flow);   /* the connection stays here */
    }
    if (rc == -ENOTCONN || rc == -EPERM) {
        conn_close(c);   /* the client's FIN arrived: not ESTABLISHED any more */
        return;
    }
    if (rc) {
        log_err("export", -rc);
        conn_fail(c);
        return;
    }
    prism_tcp_release(c->h.fd);
    c->h.fd = -1;
    if (c->cookie) {
        prism_cookie_export(&c->b->cookie, &st);
    }
    size_t len = prism_tcp_encoded_len(&st);
    uint8_t *blob = malloc(len);
    if (blob) {
        prism_tcp_encode(&st, blob);
        ctl_send(c->ctl, PRISM_MSG_RETURN, c->conn_id, blob, len);
        c->b->stats.returned++;
    }
    free(blob);
    prism_tcp_state_free(&st);
    conn_free(c);
}

static struct prism_conn *conn_find(struct ctl *ctl, uint32_t id)
{
    for (struct prism_conn *c = ctl->conns; c; c = c->next) {
        if (c->conn_id == id) {
            return c;
        }
    }
    return NULL;
}

/* The connection is ours: read the request (in the receive queue since the
 * import), serve it.  c may be gone on return. */
static void conn_go(struct prism_conn *c)
{
    if (c->t_handoff) {
        c->t_go = mono_ns();
    }
    c->state = C_SERVING;
    if (ep_add(c->b, &c->h, EPOLLIN | EPOLLRDHUP)) {
        conn_fail(c);
        return;
    }
    conn_readable(c);
}

static void on_handoff(struct prism_backend *b, struct ctl *ctl, uint32_t id, const uint8_t *body,
                       size_t len, int hold)
{
    struct prism_tcp_state st;
    const char *why = "";
    int fd = -1;
    uint64_t t_handoff = b->cfg.trace ? mono_ns() : 0;
    int rc = prism_tcp_decode(body, len, &st, &why);
    int cookie = 0;
    struct prism_flow_key flow = { .client = st.peer_addr, .vip = st.local_addr,
                                   .client_port = st.peer_port, .vip_port = st.local_port };
    if (rc == 0 && b->linger) {
        /* Mode c: this host's cookie from the first segment on; a flow this backend
         * handed back earlier stops forwarding to its front end. */
        prism_linger_take(b->linger, &flow);
        cookie = prism_cookie_adopt(&b->cookie, &st);
        rc = cookie < 0 ? cookie : 0;
        why = "cookie state";
    }
    if (rc == 0) {
        rc = prism_tcp_import(&st, &fd);
        why = "import";
    }
    prism_tcp_state_free(&st);   /* nothing to free after a failed decode */
    struct prism_conn *c = rc ? NULL : calloc(1, sizeof *c);
    if (!c) {
        log_err(why, rc ? -rc : ENOMEM);
        if (fd >= 0) {
            close(fd);
        }
        b->stats.failed++;
        ctl_send(ctl, PRISM_MSG_FAILED, id, why, strlen(why));
        return;
    }
    struct linger l = { 1, 0 };   /* dying with the connection resets the client */
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    set_nonblock(fd);
    c->h = (struct handle) { K_CONN, fd };
    c->b = b;
    c->ctl = ctl;
    c->conn_id = id;
    c->state = C_WAIT_GO;
    c->t_handoff = t_handoff;
    c->t_imported = t_handoff ? mono_ns() : 0;
    c->cookie = cookie;
    c->flow = flow;
    b->stats.cookie_adopted += cookie;
    c->next = ctl->conns;
    ctl->conns = c;
    b->stats.imported++;
    if (!hold) {
        conn_go(c);   /* first bytes out before IMPORTED: the front end needs it later */
    }
    ctl_send(ctl, PRISM_MSG_IMPORTED, id, NULL, 0);
}

static void ctl_message(struct prism_backend *b, struct ctl *ctl, uint16_t type, uint32_t id,
                        const uint8_t *body, size_t len)
{
    if (type == PRISM_MSG_HANDOFF || type == PRISM_MSG_HANDOFF_HOLD) {
        on_handoff(b, ctl, id, body, len, type == PRISM_MSG_HANDOFF_HOLD);
        return;
    }
    struct prism_conn *c = conn_find(ctl, id);
    if (!c) {
        return;   /* already gone (reset, closed): the front end learns it from that */
    }
    if (type == PRISM_MSG_GO && c->state == C_WAIT_GO) {
        conn_go(c);
    } else if (type == PRISM_MSG_LOCKED && c->state == C_WAIT_LOCKED) {
        conn_return(c);
    } else if (type == PRISM_MSG_ABORT) {
        b->stats.aborted++;
        conn_reset(c);
    }
}

static void ctl_close(struct prism_backend *b, struct ctl *ctl)
{
    /* Nobody can take these connections back: reset them. */
    while (ctl->conns) {
        conn_reset(ctl->conns);
    }
    epoll_ctl(b->ep, EPOLL_CTL_DEL, ctl->h.fd, NULL);
    close(ctl->h.fd);
    for (struct ctl **pp = &b->ctls; *pp; pp = &(*pp)->next) {
        if (*pp == ctl) {
            *pp = ctl->next;
            break;
        }
    }
    free(ctl->in);
    free(ctl);
}

static void ctl_readable(struct prism_backend *b, struct ctl *ctl)
{
    uint8_t buf[READ_CHUNK];
    ssize_t n = recv(ctl->h.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            ctl_close(b, ctl);
        }
        return;
    }
    if (buf_append(&ctl->in, &ctl->in_len, &ctl->in_cap, buf, (size_t) n)) {
        ctl_close(b, ctl);
        return;
    }
    while (ctl->in_len >= PRISM_WIRE_HDR_LEN) {
        uint32_t magic, id, len;
        uint16_t version, type;
        memcpy(&magic, ctl->in, 4);
        memcpy(&version, ctl->in + 4, 2);
        memcpy(&type, ctl->in + 6, 2);
        memcpy(&id, ctl->in + 8, 4);
        memcpy(&len, ctl->in + 12, 4);
        magic = ntohl(magic);
        version = ntohs(version);
        type = ntohs(type);
        id = ntohl(id);
        len = ntohl(len);
        if (magic != PRISM_WIRE_MAGIC || version != PRISM_WIRE_VERSION || type == 0
            || type >= PRISM_MSG_MAX || len > PRISM_WIRE_MAX_BODY) {
            fprintf(stderr, "{\"level\":\"warn\",\"msg\":\"control: bad message header, "
                            "closing the control connection\"}\n");
            ctl_close(b, ctl);
            return;
        }
        if (ctl->in_len < PRISM_WIRE_HDR_LEN + (size_t) len) {
            return;
        }
        ctl_message(b, ctl, type, id, ctl->in + PRISM_WIRE_HDR_LEN, len);
        buf_consume(ctl->in, &ctl->in_len, PRISM_WIRE_HDR_LEN + (size_t) len);
    }
}

/* ------------------------------------------------------------ loop */

static void accept_all(struct prism_backend *b, struct handle *l)
{
    for (;;) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK);
        if (fd < 0) {
            return;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (l->kind == K_CTL_LISTEN) {
            struct ctl *ctl = calloc(1, sizeof *ctl);
            struct timeval tv = { 1, 0 };
            if (!ctl) {
                close(fd);
                continue;
            }
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
            ctl->h = (struct handle) { K_CTL, fd };
            ctl->next = b->ctls;
            b->ctls = ctl;
            ep_add(b, &ctl->h, EPOLLIN);
        } else {
            struct prism_conn *c = calloc(1, sizeof *c);
            if (!c) {
                close(fd);
                continue;
            }
            c->h = (struct handle) { K_CONN, fd };
            c->b = b;
            c->state = C_SERVING;
            c->next = b->plain;
            b->plain = c;
            ep_add(b, &c->h, EPOLLIN | EPOLLRDHUP);
        }
    }
}

static void conn_event(struct prism_conn *c, uint32_t ev)
{
    switch (c->state) {
    case C_SERVING:
        if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
            conn_readable(c);
        }
        break;
    case C_FLUSHING:
        if (ev & (EPOLLHUP | EPOLLERR)) {
            conn_fail(c);
        } else if (ev & EPOLLOUT) {
            conn_flush(c);
        }
        break;
    default:
        break;   /* draining: checked every turn; a FIN makes the export fail */
    }
}

int prism_backend_run(struct prism_backend *b)
{
    struct epoll_event evs[MAX_EVENTS];
    while (!b->stop) {
        int draining = 0;
        for (struct ctl *ctl = b->ctls; ctl; ctl = ctl->next) {
            for (struct prism_conn *c = ctl->conns, *next; c; c = next) {
                next = c->next;
                if (c->state == C_DRAINING) {
                    conn_check_drained(c);
                    draining = 1;
                }
            }
        }
        if (b->linger && mono_ns() >= b->next_expire_ns) {
            prism_linger_expire(b->linger, mono_ns());
            b->next_expire_ns = mono_ns() + 1000000000ull;
        }
        struct timespec poll = { 0, PRISM_DRAIN_POLL_US * 1000L };
        struct timespec idle = { 0, 100 * 1000000L };   /* to notice stop() */
        int n = epoll_pwait2(b->ep, evs, MAX_EVENTS, draining ? &poll : &idle, NULL);
        if (n < 0 && errno != EINTR) {
            return -errno;
        }
        for (int i = 0; i < n; i++) {
            struct handle *h = evs[i].data.ptr;
            switch (h->kind) {
            case K_CTL_LISTEN:
            case K_PLAIN_LISTEN: accept_all(b, h); break;
            case K_CTL: ctl_readable(b, (struct ctl *) h); break;
            case K_CONN: conn_event((struct prism_conn *) h, evs[i].events); break;
            }
            /* A handler may free handles that later events point to: take the
             * next batch fresh after a close. */
            if (h->kind == K_CTL && n > 1) {
                break;
            }
        }
    }
    return 0;
}

struct prism_backend *prism_backend_new(const struct prism_backend_config *cfg,
                                        const struct prism_backend_ops *ops, void *user)
{
    struct prism_backend *b = calloc(1, sizeof *b);
    if (!b) {
        return NULL;
    }
    b->cfg = *cfg;
    if (b->cfg.drain_timeout_ms <= 0) {
        b->cfg.drain_timeout_ms = PRISM_DEFAULT_DRAIN_TIMEOUT_MS;
    }
    b->ops = *ops;
    b->user = user;
    b->plain_listen.fd = -1;
    b->steer_fd = -1;
    b->cookie = (struct prism_cookie) { -1, -1, -1 };
    if ((cfg->cookie_pin_dir != NULL) != (cfg->steer_pin_dir != NULL)) {
        fprintf(stderr, "prism backend: steering mode c needs both the agent's cookie pin "
                        "directory and its steering pin directory\n");
        free(b);
        return NULL;
    }
    if (cfg->cookie_pin_dir) {
        int rc = prism_cookie_open(&b->cookie, cfg->cookie_pin_dir);
        if (rc) {
            log_err(cfg->cookie_pin_dir, -rc);
        } else if ((b->steer_fd = prism_open_pinned(cfg->steer_pin_dir, PRISM_PIN_FLOWS)) < 0) {
            rc = b->steer_fd;
            log_err(cfg->steer_pin_dir, -rc);
        } else if (!(b->linger = prism_linger_new(b->steer_fd, (uint64_t) (b->cfg.linger_ms > 0
                             ? b->cfg.linger_ms : PRISM_DEFAULT_LINGER_MS) * 1000000ull,
                                                  PRISM_MAX_FLOWS / 2))) {
            rc = -ENOMEM;
        }
        if (rc) {
            b->ep = -1;
            prism_backend_free(b);
            return NULL;
        }
    }
    b->ep = epoll_create1(0);
    int fd = listen_on(cfg->ctl_addr, cfg->ctl_port);
    if (b->ep < 0 || fd < 0) {
        if (fd < 0) {
            log_err("control listener", -fd);
        }
        prism_backend_free(b);
        return NULL;
    }
    b->ctl_listen = (struct handle) { K_CTL_LISTEN, fd };
    ep_add(b, &b->ctl_listen, EPOLLIN);
    return b;
}

int prism_backend_listen_plain(struct prism_backend *b, const char *addr, uint16_t port)
{
    int fd = listen_on(addr, port);
    if (fd < 0) {
        return fd;
    }
    b->plain_listen = (struct handle) { K_PLAIN_LISTEN, fd };
    return ep_add(b, &b->plain_listen, EPOLLIN);
}

void prism_backend_stop(struct prism_backend *b)
{
    b->stop = 1;
}

void prism_backend_stats(const struct prism_backend *b, struct prism_backend_stats *out)
{
    *out = b->stats;
    out->lingering = b->linger ? prism_linger_count(b->linger) : 0;
}

void prism_backend_free(struct prism_backend *b)
{
    if (!b) {
        return;
    }
    while (b->ctls) {
        ctl_close(b, b->ctls);
    }
    while (b->plain) {
        struct prism_conn *c = b->plain;
        close(c->h.fd);
        conn_free(c);
    }
    if (b->ctl_listen.fd > 0) {
        close(b->ctl_listen.fd);
    }
    if (b->plain_listen.fd >= 0) {
        close(b->plain_listen.fd);
    }
    if (b->ep >= 0) {
        close(b->ep);
    }
    prism_linger_free(b->linger);
    if (b->steer_fd >= 0) {
        close(b->steer_fd);
    }
    prism_cookie_close(&b->cookie);
    free(b);
}
