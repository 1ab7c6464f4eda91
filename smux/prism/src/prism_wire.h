/* Control messages between front end and backend (include/hlb_prism.h). */
#ifndef PRISM_WIRE_H
#define PRISM_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* Sends one message (header, then body) whole on a blocking socket (a send
 * timeout bounds it); 0 or -errno. */
int prism_wire_send(int fd, uint16_t type, uint32_t conn_id, const void *body, size_t len);

#endif
