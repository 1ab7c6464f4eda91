/* Minimal packet generator for the host agent benchmark: sends one frame
 * (given as hex) over an AF_PACKET socket as fast as sendmmsg allows, for a
 * fixed time.  Prints {"sent":N,"seconds":S}.
 *
 * usage: agent_pktgen IFACE FRAME_HEX SECONDS */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 256

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: agent_pktgen IFACE FRAME_HEX SECONDS\n");
        return 2;
    }
    unsigned char frame[2048];
    size_t len = strlen(argv[2]) / 2;
    if (len < 14 || len > sizeof frame) {
        fprintf(stderr, "FRAME_HEX: need 14..%zu bytes\n", sizeof frame);
        return 2;
    }
    for (size_t i = 0; i < len; i++) {
        sscanf(argv[2] + 2 * i, "%2hhx", &frame[i]);
    }
    double seconds = atof(argv[3]);
    int fd = socket(AF_PACKET, SOCK_RAW, 0);
    struct sockaddr_ll addr = { .sll_family = AF_PACKET, .sll_ifindex = (int) if_nametoindex(argv[1]),
                                .sll_halen = ETH_ALEN };
    if (fd < 0 || !addr.sll_ifindex) {
        perror("socket/iface");
        return 1;
    }
    memcpy(addr.sll_addr, frame, ETH_ALEN);
    struct iovec iov = { frame, len };
    struct mmsghdr msgs[BATCH];
    for (int i = 0; i < BATCH; i++) {
        memset(&msgs[i], 0, sizeof msgs[i]);
        msgs[i].msg_hdr.msg_name = &addr;
        msgs[i].msg_hdr.msg_namelen = sizeof addr;
        msgs[i].msg_hdr.msg_iov = &iov;
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    unsigned long long sent = 0;
    double t0 = now(), t = t0;
    while (t - t0 < seconds) {
        int n = sendmmsg(fd, msgs, BATCH, 0);
        if (n > 0) {
            sent += (unsigned) n;
        }
        t = now();
    }
    printf("{\"sent\":%llu,\"seconds\":%.3f}\n", sent, t - t0);
    return 0;
}
