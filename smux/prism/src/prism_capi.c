/* The flat C interface of libhlbprism.so that the Python front end and the
 * test servers load with ctypes (frontend/handoff.py): TCP state as encoded
 * blobs, and the steering map the host agent pins (--prism-pin-dir). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism_cookie.h"
#include "prism_wire.h"
#include "tcp_handoff.h"

/* Steering mode c (prism_cookie.h), set by prism_cookie_enable(): exports name this
 * host's server id, imports write this host's cookie state. */
static struct prism_cookie cookie = { -1, -1, -1 };

/* Opens the agent's cookie maps pinned in pin_dir (its --pin-dir).  Returns this
 * host's server id (> 0), 0 when the agent has no cookie configuration, or < 0. */
int prism_cookie_enable(const char *pin_dir)
{
    prism_cookie_close(&cookie);
    int rc = prism_cookie_open(&cookie, pin_dir);
    return rc ? rc : prism_cookie_server_id(&cookie);
}

/* Exports fd (see prism_tcp_export) and returns its encoding in a malloc'ed
 * buffer *out of *out_len bytes (free with prism_blob_free).  The socket stays
 * in repair mode until prism_release(). */
int prism_export_blob(int fd, const uint8_t *prefix, size_t prefix_len, uint8_t **out,
                      size_t *out_len)
{
    struct prism_tcp_state st;
    int rc = prism_tcp_export(fd, prefix, prefix_len, &st);
    if (rc) {
        return rc;
    }
    prism_cookie_export(&cookie, &st);
    *out_len = prism_tcp_encoded_len(&st);
    *out = malloc(*out_len);
    if (!*out) {
        prism_tcp_state_free(&st);
        return -ENOMEM;
    }
    prism_tcp_encode(&st, *out);
    prism_tcp_state_free(&st);
    return 0;
}

void prism_blob_free(uint8_t *blob)
{
    free(blob);
}

int prism_release(int fd)
{
    return prism_tcp_release(fd);
}

/* Imports an encoded state; on a bad encoding returns -EINVAL with the reason
 * in err (naming the field). */
int prism_import_blob(const uint8_t *blob, size_t len, int *fd_out, char *err, size_t err_len)
{
    struct prism_tcp_state st;
    const char *why = "";
    int rc = prism_tcp_decode(blob, len, &st, &why);
    if (rc) {
        snprintf(err, err_len, "%s", why);
        return rc;
    }
    rc = prism_cookie_adopt(&cookie, &st);
    if (rc < 0) {
        snprintf(err, err_len, "the agent's cookie state: %s", strerror(-rc));
        prism_tcp_state_free(&st);
        return rc;
    }
    rc = prism_tcp_import(&st, fd_out);
    prism_tcp_state_free(&st);
    return rc;
}

int prism_reset_blob(const uint8_t *blob, size_t len)
{
    struct prism_tcp_state st;
    const char *why;
    int rc = prism_tcp_decode(blob, len, &st, &why);
    if (rc) {
        return rc;
    }
    rc = prism_tcp_reset_peer(&st);
    prism_tcp_state_free(&st);
    return rc;
}

/* ------------------------------------------------------------ steering map */

int prism_steer_open(const char *pin_path)
{
    int fd = bpf_obj_get(pin_path);
    return fd < 0 ? -errno : fd;
}

/* Addresses and ports in network order, as in the packets. */
int prism_steer_set(int map_fd, uint32_t client, uint16_t client_port, uint32_t vip,
                    uint16_t vip_port, uint32_t action, uint32_t owner_dip)
{
    struct prism_flow_key k = { .client = client, .vip = vip, .client_port = client_port,
                                .vip_port = vip_port };
    struct prism_flow_val v = { .action = action, .owner_dip = owner_dip };
    return bpf_map_update_elem(map_fd, &k, &v, BPF_ANY) ? -errno : 0;
}

/* The front end's side of a hand-off in one call: with map_fd >= 0 first writes
 * the flow's steering entry (action, owner_dip; addresses and ports in network
 * order), then exports fd (as prism_export_blob), releases it, and sends message
 * `type` {state} for conn_id on the blocking control socket ctl_fd.
 * Returns < 0 when the steering write or the export failed: fd untouched (out of
 * repair mode), *out unset, and *steer_failed says which.  Else fd is closed,
 * *out holds the state (the front end's snapshot; prism_blob_free), and the
 * result is 0 once sent, 1 when the send failed (the control connection broke). */
int prism_handoff_blob(int fd, const uint8_t *prefix, size_t prefix_len, int ctl_fd,
                       uint16_t type, uint32_t conn_id, int map_fd, uint32_t client,
                       uint16_t client_port, uint32_t vip, uint16_t vip_port, uint32_t action,
                       uint32_t owner_dip, int *steer_failed, uint8_t **out, size_t *out_len)
{
    *steer_failed = 0;
    if (map_fd >= 0) {
        int rc = prism_steer_set(map_fd, client, client_port, vip, vip_port, action, owner_dip);
        if (rc) {
            *steer_failed = 1;
            return rc;
        }
    }
    int rc = prism_export_blob(fd, prefix, prefix_len, out, out_len);
    if (rc) {
        return rc;
    }
    prism_tcp_release(fd);
    return prism_wire_send(ctl_fd, type, conn_id, *out, *out_len) ? 1 : 0;
}

int prism_steer_delete(int map_fd, uint32_t client, uint16_t client_port, uint32_t vip,
                       uint16_t vip_port)
{
    struct prism_flow_key k = { .client = client, .vip = vip, .client_port = client_port,
                                .vip_port = vip_port };
    if (bpf_map_delete_elem(map_fd, &k) && errno != ENOENT) {
        return -errno;
    }
    return 0;
}

/* Sums the per-CPU counters of the pinned counter map into out[PRISM_C_MAX]. */
int prism_steer_counters(int counters_fd, uint64_t *out)
{
    int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0) {
        return -EINVAL;
    }
    uint64_t *per_cpu = calloc((size_t) ncpu, sizeof *per_cpu);
    if (!per_cpu) {
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < PRISM_C_MAX; i++) {
        out[i] = 0;
        if (bpf_map_lookup_elem(counters_fd, &i, per_cpu) == 0) {
            for (int c = 0; c < ncpu; c++) {
                out[i] += per_cpu[c];
            }
        }
    }
    free(per_cpu);
    return 0;
}
