/* hlb-agent-udecap: user-space fallback decapsulator, for hosts where XDP
 * cannot be attached.  This kernel has no ipip/gre modules, so:
 *
 *   raw IPv4 sockets for protocols 4 (IP-in-IP) and 47 (GRE) receive every
 *   encapsulated packet addressed to this host (their presence also stops the
 *   kernel from answering "protocol unreachable"), the shared rules of
 *   hlb_decap.h decide (hlb_policy_verdict), the outer header is stripped, and
 *   the inner packet is written to a TUN device, from which the kernel
 *   delivers it to the VIP on lo like any received packet.
 *
 *   hlb-agent-udecap --tun NAME --local-ip A [--local-ip B] --stats-file F
 *                    [--allow-mux PREFIX ...] [--allow-vip PREFIX ...]
 *                    [--tun-addr 169.254.77.77] [--interval-ms 1000]
 *
 * --allow-mux / --allow-vip: outer sources / inner destinations accepted, as
 * A.B.C.D or A.B.C.D/LEN; none given accepts any.
 *
 * Prints {"attached":"<tun>","mode":"userspace"} once ready. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* recvmmsg */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "decap_policy.h"
#include "hlb_decap.h"
#include "stats_file.h"

#define BATCH 32
#define MAX_PKT 65536
#define TABLE_SIZE 4096   /* power of two; counters beyond it are not kept */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void) sig;
    stop = 1;
}

struct counter_table {
    struct hlb_vip_entry slots[TABLE_SIZE];
    uint8_t used[TABLE_SIZE];
    size_t n;
};

/* Open addressing, linear probing; returns NULL when full. */
static struct hlb_vip_val *counter_slot(struct counter_table *t, const struct hlb_vip_key *k)
{
    uint32_t h = (k->vip * 2654435761u) ^ (k->mux * 40503u) ^ k->encap;
    for (uint32_t i = 0; i < TABLE_SIZE; i++) {
        uint32_t s = (h + i) & (TABLE_SIZE - 1);
        if (!t->used[s]) {
            t->used[s] = 1;
            t->slots[s].key = *k;
            t->n++;
            return &t->slots[s].val;
        }
        if (!memcmp(&t->slots[s].key, k, sizeof *k)) {
            return &t->slots[s].val;
        }
    }
    return NULL;
}

static size_t counter_list(const struct counter_table *t, struct hlb_vip_entry *out)
{
    size_t n = 0;
    for (size_t s = 0; s < TABLE_SIZE; s++) {
        if (t->used[s]) {
            out[n++] = t->slots[s];
        }
    }
    return n;
}

static int set_addr(int s, struct ifreq *ifr, unsigned long req, uint32_t addr)
{
    struct sockaddr_in *sin = (struct sockaddr_in *) &ifr->ifr_addr;
    memset(sin, 0, sizeof *sin);
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = addr;
    return ioctl(s, req, ifr);
}

static int open_tun(const char *name, uint32_t tun_addr)
{
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    struct ifreq ifr = { 0 };
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        close(fd);
        return -1;
    }
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
        close(fd);
        return -1;
    }
    ifr.ifr_flags |= IFF_UP;
    int rc = ioctl(s, SIOCSIFFLAGS, &ifr);
    /* The client's address routes via the uplink, not the TUN, so the TUN
     * needs loose reverse-path filtering, which the kernel only applies to a
     * device with an IPv4 address (an address-less one fails any rp_filter). */
    if (rc == 0) {
        rc = set_addr(s, &ifr, SIOCSIFADDR, tun_addr);
    }
    if (rc == 0) {
        rc = set_addr(s, &ifr, SIOCSIFNETMASK, 0xffffffffu);
    }
    close(s);
    if (rc < 0) {
        close(fd);
        return -1;
    }
    char path[128];
    snprintf(path, sizeof path, "/proc/sys/net/ipv4/conf/%s/rp_filter", name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("2\n", f);
        fclose(f);
    }
    return fd;
}

static void usage(void)
{
    fprintf(stderr, "usage: hlb-agent-udecap --tun NAME --local-ip A [--local-ip B ...] "
                    "--stats-file F [--allow-mux PREFIX ...] [--allow-vip PREFIX ...] "
                    "[--tun-addr A] [--interval-ms N]\n");
    exit(2);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *tun_name = NULL, *stats_path = NULL;
    static struct hlb_policy policy;
    int interval_ms = 1000;
    uint32_t tun_addr = htonl(0xa9fe4d4d);   /* 169.254.77.77: host-only, never routed */
    static const struct option opts[] = {
        { "tun-addr", required_argument, 0, 'a' },
        { "tun", required_argument, 0, 'n' },       { "local-ip", required_argument, 0, 'l' },
        { "stats-file", required_argument, 0, 's' }, { "interval-ms", required_argument, 0, 't' },
        { "allow-mux", required_argument, 0, 'M' }, { "allow-vip", required_argument, 0, 'V' },
        { 0, 0, 0, 0 }
    };
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'n': tun_name = optarg; break;
        case 'a':
            if (inet_pton(AF_INET, optarg, &tun_addr) != 1) {
                fprintf(stderr, "--tun-addr: not an IPv4 address: '%s'\n", optarg);
                return 2;
            }
            break;
        case 's': stats_path = optarg; break;
        case 't':
            interval_ms = atoi(optarg);
            if (interval_ms < 10) {
                fprintf(stderr, "--interval-ms: must be >= 10, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'l':
        case 'M':
        case 'V':
            if (hlb_policy_option(&policy, c, optarg) != 0) {
                return 2;
            }
            break;
        default: usage();
        }
    }
    if (!tun_name || !stats_path || policy.n_local == 0) {
        usage();
    }
    hlb_prefix_list_default_any(&policy.muxes);
    hlb_prefix_list_default_any(&policy.vips);
    if (strlen(tun_name) >= IFNAMSIZ) {
        fprintf(stderr, "--tun: interface name longer than %d characters: '%s'\n", IFNAMSIZ - 1,
                tun_name);
        return 2;
    }

    int tun = open_tun(tun_name, tun_addr);
    if (tun < 0) {
        fprintf(stderr, "cannot create TUN %s: %s\n", tun_name, strerror(errno));
        return 1;
    }
    int raw[2] = { socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, HLB_IPPROTO_IPIP),
                   socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, HLB_IPPROTO_GRE) };
    if (raw[0] < 0 || raw[1] < 0) {
        fprintf(stderr, "cannot open raw sockets: %s\n", strerror(errno));
        return 1;
    }
    int rcvbuf = 4 << 20;
    for (int i = 0; i < 2; i++) {
        setsockopt(raw[i], SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    }

    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    printf("{\"attached\":\"%s\",\"mode\":\"userspace\"}\n", tun_name);
    fflush(stdout);

    static struct counter_table table;
    static struct hlb_vip_entry listed[TABLE_SIZE];
    static uint8_t bufs[BATCH][MAX_PKT];
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    uint64_t counters[HLB_C_MAX] = { 0 };
    double next_dump = 0;
    struct pollfd pfd[2] = { { raw[0], POLLIN, 0 }, { raw[1], POLLIN, 0 } };

    while (!stop) {
        double t = now_s();
        if (t >= next_dump) {
            size_t n = counter_list(&table, listed);
            if (hlb_stats_write(stats_path, "userspace", "userspace", counters, listed, n, NULL, NULL) != 0) {
                fprintf(stderr, "cannot write %s: %s\n", stats_path, strerror(errno));
            }
            next_dump = t + interval_ms / 1000.0;
        }
        int wait_ms = (int) ((next_dump - t) * 1000) + 1;
        if (poll(pfd, 2, wait_ms) <= 0) {
            continue;
        }
        for (int s = 0; s < 2; s++) {
            if (!(pfd[s].revents & POLLIN)) {
                continue;
            }
            for (int i = 0; i < BATCH; i++) {
                iov[i] = (struct iovec) { bufs[i], MAX_PKT };
                memset(&msgs[i], 0, sizeof msgs[i]);
                msgs[i].msg_hdr.msg_iov = &iov[i];
                msgs[i].msg_hdr.msg_iovlen = 1;
            }
            int got = recvmmsg(raw[s], msgs, BATCH, MSG_DONTWAIT, NULL);
            for (int i = 0; i < got; i++) {
                const uint8_t *pkt = bufs[i];
                struct hlb_encap_info info;
                enum hlb_counter verdict = hlb_policy_verdict(&policy, pkt, msgs[i].msg_len, &info);
                if (verdict != HLB_C_DECAP_IPIP && verdict != HLB_C_DECAP_GRE) {
                    counters[verdict]++;   /* the raw socket's copy: nothing to pass on */
                    continue;
                }
                if (write(tun, pkt + info.outer_len, info.inner_len) != (ssize_t) info.inner_len) {
                    counters[HLB_C_DROP_DELIVER]++;
                    continue;
                }
                counters[verdict]++;
                struct hlb_vip_key key = { info.inner_dst, info.outer_src, info.encap };
                struct hlb_vip_val *v = counter_slot(&table, &key);
                if (v) {
                    v->packets++;
                    v->bytes += info.inner_len;
                }
            }
        }
    }
    size_t n = counter_list(&table, listed);
    hlb_stats_write(stats_path, "userspace", "userspace", counters, listed, n, NULL, NULL);
    close(tun);
    close(raw[0]);
    close(raw[1]);
    return 0;
}
