/* hlb-prism-objserver: a static-object HTTP/1.1 server on the Prism backend
 * library, for the tests and the benchmark.
 *
 *   hlb-prism-objserver --ctl DIP:PORT [--http ADDR:PORT] [--name NAME]
 *                       [--max-object BYTES] [--drain-timeout-ms MS] [--trace]
 *
 *   GET|HEAD /obj/N   N bytes of a fixed pattern (byte i = (i * 131 + 7) mod 256)
 *   GET|HEAD /        "ok"
 * Every response carries "X-Backend: NAME".  --ctl takes hand-offs from front
 * ends; --http also serves ordinary connections (the proxies' and direct
 * baselines).  Requests are parsed with http-parser (Debian libhttp-parser).
 * Prints a JSON readiness line, and its counters on SIGTERM. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <http_parser.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism_backend.h"

#define DEFAULT_MAX_OBJECT (16u << 20)
#define OBJ_PREFIX "/obj/"

static struct prism_backend *backend;
static const char *name = "backend";
static uint8_t *pattern;
static size_t max_object = DEFAULT_MAX_OBJECT;

struct request {
    const char *url;
    size_t url_len;
    int done;
};

static int on_url(http_parser *p, const char *at, size_t len)
{
    struct request *r = p->data;
    if (!r->url) {
        r->url = at;
    }
    r->url_len += len;   /* the buffer is contiguous: pieces follow each other */
    return 0;
}

static int on_message_complete(http_parser *p)
{
    ((struct request *) p->data)->done = 1;
    http_parser_pause(p, 1);   /* stop after this request: the rest is the next one's */
    return 0;
}

static const http_parser_settings settings = { .on_url = on_url,
                                               .on_message_complete = on_message_complete };

static int respond(struct prism_conn *c, int status, const char *reason, size_t len,
                   const uint8_t *body, int head_only, int keep_alive)
{
    char hdr[256];
    int n = snprintf(hdr, sizeof hdr,
                     "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\nContent-Type: "
                     "application/octet-stream\r\nX-Backend: %s\r\n%s\r\n",
                     status, reason, len, name, keep_alive ? "" : "Connection: close\r\n");
    if (prism_conn_send(c, hdr, (size_t) n) || (!head_only && len && prism_conn_send_ref(c, body, len))) {
        return PRISM_APP_FAIL;
    }
    return keep_alive ? PRISM_APP_DONE : PRISM_APP_CLOSE;
}

static int on_data(struct prism_conn *c, const uint8_t *data, size_t len, size_t *consumed,
                   void *user)
{
    (void) user;
    http_parser p;
    struct request r = { 0 };
    http_parser_init(&p, HTTP_REQUEST);
    p.data = &r;
    size_t n = http_parser_execute(&p, &settings, (const char *) data, len);
    enum http_errno err = HTTP_PARSER_ERRNO(&p);
    if (err != HPE_OK && err != HPE_PAUSED) {
        *consumed = len;
        static const uint8_t bad[] = "bad request\n";
        return respond(c, 400, "Bad Request", sizeof bad - 1, bad, 0, 0);
    }
    if (!r.done) {
        *consumed = 0;
        return PRISM_APP_MORE;
    }
    *consumed = n;
    int head = p.method == HTTP_HEAD;
    int keep = http_should_keep_alive(&p);
    if (p.method != HTTP_GET && !head) {
        static const uint8_t nope[] = "method not allowed\n";
        return respond(c, 405, "Method Not Allowed", sizeof nope - 1, nope, 0, keep);
    }
    struct http_parser_url u;
    http_parser_url_init(&u);
    if (http_parser_parse_url(r.url, r.url_len, 0, &u) || !(u.field_set & (1 << UF_PATH))) {
        static const uint8_t bad[] = "bad url\n";
        return respond(c, 400, "Bad Request", sizeof bad - 1, bad, 0, keep);
    }
    const char *path = r.url + u.field_data[UF_PATH].off;
    size_t plen = u.field_data[UF_PATH].len;
    size_t pre = strlen(OBJ_PREFIX);
    if (plen > pre && memcmp(path, OBJ_PREFIX, pre) == 0) {
        char num[24];
        size_t dl = plen - pre;
        if (dl < sizeof num) {
            memcpy(num, path + pre, dl);
            num[dl] = 0;
            char *end;
            errno = 0;
            unsigned long long size = strtoull(num, &end, 10);
            if (!errno && *end == 0 && num[0] != '-' && size <= max_object) {
                return respond(c, 200, "OK", (size_t) size, pattern, head, keep);
            }
        }
    } else if (plen == 1 && path[0] == '/') {
        static const uint8_t ok[] = "ok\n";
        return respond(c, 200, "OK", sizeof ok - 1, ok, head, keep);
    }
    static const uint8_t nf[] = "not found\n";
    return respond(c, 404, "Not Found", sizeof nf - 1, nf, head, keep);
}

static void on_signal(int sig)
{
    (void) sig;
    prism_backend_stop(backend);
}

static int parse_addr(const char *opt, const char *v, char *addr, size_t alen, uint16_t *port)
{
    const char *colon = strrchr(v, ':');
    struct in_addr a;
    char *end;
    long p = colon ? strtol(colon + 1, &end, 10) : 0;
    if (!colon || (size_t) (colon - v) >= alen || !colon[1] || *end || p <= 0 || p > 65535) {
        fprintf(stderr, "%s: expected A.B.C.D:PORT, got '%s'\n", opt, v);
        return -1;
    }
    memcpy(addr, v, (size_t) (colon - v));
    addr[colon - v] = 0;
    if (inet_pton(AF_INET, addr, &a) != 1) {
        fprintf(stderr, "%s: not an IPv4 address: '%s'\n", opt, addr);
        return -1;
    }
    *port = (uint16_t) p;
    return 0;
}

/* A duration option in milliseconds, > 0. */
static int parse_ms(const char *opt, const char *arg, int *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (*end || v <= 0 || v > 86400000L) {
        fprintf(stderr, "%s: expected 1..86400000 ms, got '%s'\n", opt, arg);
        return -1;
    }
    *out = (int) v;
    return 0;
}

int main(int argc, char **argv)
{
    char ctl_addr[64] = "", http_addr[64] = "";
    uint16_t ctl_port = 0, http_port = 0;
    struct prism_backend_config cfg = { 0 };
    static const struct option opts[] = {
        { "ctl", required_argument, 0, 'c' }, { "http", required_argument, 0, 'h' },
        { "name", required_argument, 0, 'n' }, { "max-object", required_argument, 0, 'm' },
        { "drain-timeout-ms", required_argument, 0, 'd' }, { "trace", no_argument, 0, 't' },
        { "cookie-pin-dir", required_argument, 0, 'k' },
        { "prism-pin-dir", required_argument, 0, 'p' },
        { "linger-ms", required_argument, 0, 'l' },
        { 0, 0, 0, 0 }
    };
    int o;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'c':
            if (parse_addr("--ctl", optarg, ctl_addr, sizeof ctl_addr, &ctl_port)) {
                return 2;
            }
            break;
        case 'h':
            if (parse_addr("--http", optarg, http_addr, sizeof http_addr, &http_port)) {
                return 2;
            }
            break;
        case 'n': name = optarg; break;
        case 't': cfg.trace = 1; break;
        case 'k': cfg.cookie_pin_dir = optarg; break;
        case 'p': cfg.steer_pin_dir = optarg; break;
        case 'l':
            if (parse_ms("--linger-ms", optarg, &cfg.linger_ms)) {
                return 2;
            }
            break;
        case 'm': {
            char *end;
            max_object = strtoull(optarg, &end, 10);
            if (*end || max_object == 0 || max_object > (1u << 30)) {
                fprintf(stderr, "--max-object: expected 1..1073741824 bytes, got '%s'\n", optarg);
                return 2;
            }
            break;
        }
        case 'd':
            if (parse_ms("--drain-timeout-ms", optarg, &cfg.drain_timeout_ms)) {
                return 2;
            }
            break;
        default:
            fprintf(stderr, "usage: hlb-prism-objserver --ctl DIP:PORT [--http ADDR:PORT] "
                            "[--name NAME] [--max-object BYTES] [--drain-timeout-ms MS] [--trace]\n"
                            "       [--cookie-pin-dir DIR --prism-pin-dir DIR [--linger-ms MS]]"
                            "  (steering mode c)\n");
            return 2;
        }
    }
    if (!ctl_port) {
        fprintf(stderr, "--ctl: required\n");
        return 2;
    }
    if (!cfg.cookie_pin_dir != !cfg.steer_pin_dir) {
        fprintf(stderr, "--cookie-pin-dir and --prism-pin-dir: steering mode c needs both\n");
        return 2;
    }
    pattern = malloc(max_object);
    if (!pattern) {
        fprintf(stderr, "--max-object: cannot allocate %zu bytes\n", max_object);
        return 1;
    }
    for (size_t i = 0; i < max_object; i++) {
        pattern[i] = (uint8_t) (i * 131 + 7);
    }
    cfg.ctl_addr = ctl_addr;
    cfg.ctl_port = ctl_port;
    struct prism_backend_ops ops = { .on_data = on_data };
    backend = prism_backend_new(&cfg, &ops, NULL);
    if (!backend) {
        return 1;
    }
    if (http_port && prism_backend_listen_plain(backend, http_addr, http_port)) {
        fprintf(stderr, "--http: cannot listen on %s:%u\n", http_addr, http_port);
        return 1;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    printf("{\"ready\":true,\"name\":\"%s\",\"ctl\":\"%s:%u\"}\n", name, ctl_addr, ctl_port);
    fflush(stdout);
    int rc = prism_backend_run(backend);
    struct prism_backend_stats s;
    prism_backend_stats(backend, &s);
    printf("{\"imported\":%llu,\"returned\":%llu,\"closed\":%llu,\"failed\":%llu,"
           "\"aborted\":%llu,\"plain_requests\":%llu,\"cookie_adopted\":%llu}\n",
           (unsigned long long) s.imported, (unsigned long long) s.returned,
           (unsigned long long) s.closed, (unsigned long long) s.failed,
           (unsigned long long) s.aborted, (unsigned long long) s.plain_requests,
           (unsigned long long) s.cookie_adopted);
    prism_backend_free(backend);
    free(pattern);
    return rc ? 1 : 0;
}
