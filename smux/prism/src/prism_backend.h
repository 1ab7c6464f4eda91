/* The Prism backend library: a backend takes client connections from front
 * ends, serves one request on each, and hands it back.
 *
 * Front ends connect to the backend's control address (its DIP).  For each
 * hand-off the library imports the connection (local address: the VIP, on lo
 * for DSR), waits until the front end steers the flow here, then gives the
 * application the bytes of the connection (the request first).  The
 * application queues its response and says it is done; the library waits
 * until the client has acknowledged every byte, asks the front end to lock the
 * flow, exports the connection (bytes the application did not consume go back
 * in front of the receive queue) and returns it.  A client that closed its side
 * meanwhile gets the close finished here (CLOSED); an application failure or a
 * front end giving up resets the client (SO_LINGER 0: the kernel also resets
 * every connection this process holds if it dies).
 *
 * The same server can also take ordinary connections (prism_backend_listen_plain),
 * for the proxies and direct access of the baselines: same callbacks, no hand-back.
 *
 * Single-threaded (epoll).  Messages: include/hlb_prism.h. */
#ifndef PRISM_BACKEND_H
#define PRISM_BACKEND_H

#include <stddef.h>
#include <stdint.h>

struct prism_backend;
struct prism_conn;

enum prism_app_verdict {
    PRISM_APP_FAIL = -1,   /* reset the client */
    PRISM_APP_MORE = 0,    /* need more bytes */
    PRISM_APP_DONE = 1,    /* response queued: hand back once it is acknowledged */
    PRISM_APP_CLOSE = 2,   /* response queued: close the connection after it */
};

struct prism_backend_ops {
    /* Bytes received and not consumed yet on a connection this backend owns.
     * Set *consumed to the bytes used; queue the response with prism_conn_send*. */
    int (*on_data)(struct prism_conn *c, const uint8_t *data, size_t len, size_t *consumed,
                   void *user);
};

struct prism_backend_config {
    const char *ctl_addr;        /* control listener: this host's DIP */
    uint16_t ctl_port;
    int drain_timeout_ms;        /* longest wait for the client's ACKs; then FAILED */
    int trace;                   /* log each hand-off's stage times on stderr (debug) */
    /* Steering mode c (Cheetah cookies, README.md "Steering modes"); both NULL: off.
     * The host agent's bpffs directories: its cookie state (--pin-dir) and its
     * steering map (--prism-pin-dir). */
    const char *cookie_pin_dir;
    const char *steer_pin_dir;
    int linger_ms;               /* how long a handed-back flow forwards to its front end */
};

/* Longer than the front end's idle timeout (60 s by default): a client silent since
 * the hand-back still echoes this host's cookie, and the front end closes it by then. */
#define PRISM_DEFAULT_LINGER_MS 120000

#define PRISM_DEFAULT_DRAIN_TIMEOUT_MS 30000
/* How often a connection waiting for its last ACK checks its send queue. */
#define PRISM_DRAIN_POLL_US 200

struct prism_backend_stats {
    uint64_t imported, returned, closed, failed, aborted, plain_requests;
    uint64_t cookie_adopted;     /* mode c: imports whose cookie now names this host */
    uint64_t lingering;          /* mode c: handed-back flows forwarded to their front end now */
};

struct prism_backend *prism_backend_new(const struct prism_backend_config *cfg,
                                        const struct prism_backend_ops *ops, void *user);
/* Also serve ordinary HTTP connections on addr:port (baselines). */
int prism_backend_listen_plain(struct prism_backend *b, const char *addr, uint16_t port);
/* Runs the event loop until prism_backend_stop() (async-signal-safe). */
int prism_backend_run(struct prism_backend *b);
void prism_backend_stop(struct prism_backend *b);
void prism_backend_stats(const struct prism_backend *b, struct prism_backend_stats *out);
void prism_backend_free(struct prism_backend *b);

/* Queue response bytes: a copy, or a reference the caller keeps valid for the
 * life of the connection. */
int prism_conn_send(struct prism_conn *c, const void *buf, size_t len);
int prism_conn_send_ref(struct prism_conn *c, const void *buf, size_t len);
/* The connection's socket (for the application's own reads of options). */
int prism_conn_fd(const struct prism_conn *c);

#endif
