/* Control messages (prism_wire.h). */
#include "prism_wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "hlb_prism.h"

int prism_wire_send(int fd, uint16_t type, uint32_t conn_id, const void *body, size_t len)
{
    uint8_t hdr[PRISM_WIRE_HDR_LEN];
    uint32_t w32;
    uint16_t w16;
    w32 = htonl(PRISM_WIRE_MAGIC);
    memcpy(hdr, &w32, 4);
    w16 = htons(PRISM_WIRE_VERSION);
    memcpy(hdr + 4, &w16, 2);
    w16 = htons(type);
    memcpy(hdr + 6, &w16, 2);
    w32 = htonl(conn_id);
    memcpy(hdr + 8, &w32, 4);
    w32 = htonl((uint32_t) len);
    memcpy(hdr + 12, &w32, 4);
    struct iovec iov[2] = { { hdr, sizeof hdr }, { (void *) body, len } };
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
    size_t total = sizeof hdr + len;
    while (total) {
        ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        total -= (size_t) n;
        while (n > 0 && m.msg_iovlen) {
            size_t step = (size_t) n < m.msg_iov->iov_len ? (size_t) n : m.msg_iov->iov_len;
            m.msg_iov->iov_base = (uint8_t *) m.msg_iov->iov_base + step;
            m.msg_iov->iov_len -= step;
            n -= (ssize_t) step;
            if (!m.msg_iov->iov_len) {
                m.msg_iov++;
                m.msg_iovlen--;
            }
        }
    }
    return 0;
}
