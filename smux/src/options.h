/* hlb-smux's command line: the options after the EAL's, each checked whole (no
 * trailing text, no sign, no wrap-around), an error naming the option. */
#ifndef HLB_OPTIONS_H
#define HLB_OPTIONS_H

#include <stdint.h>
#include "conn_table.h"

struct options {
    const char *mode;                 /* one-arm | two-port */
    uint32_t self_ip, gw_ip;
    uint8_t gw_mac[6];
    int gw_mac_set;
    uint16_t mtu;
    uint8_t ttl;
    const char *mgmt_addr;
    uint16_t mgmt_port;
    const char *tls_cert, *tls_key, *tls_ca;   /* the control API's mutual TLS */
    const char *table_file;
    const char *table_state;          /* --table-state: the running table, kept across restarts */
    int conn_table;
    uint64_t conn_capacity;
    struct hlb_conn_timeouts timeouts;
    uint32_t stateful_partitions;     /* per worker, a power of two (stateful.h) */
    uint32_t stateful_idle_ms;
    uint32_t stateful_adopt_grace_ms; /* hints held at start and on a new owner id; 0 = off */
    const char *rx_distribution;      /* NULL (by the ports), "queues" or "software" */
    uint32_t idle_sleep_us;           /* 0: busy poll */
    uint32_t exit_when_idle_ms;       /* tests: exit once traffic stopped this long */
    double run_seconds;               /* stop after this long (0 = until signal) */
    /* benchmark generator (fills rx mbufs of a net_null port with real packets) */
    uint32_t bench_flows;
    int bench_new_flows;
    int bench_raw_forward;
    uint32_t bench_prefill;
    uint32_t bench_vip;
    uint16_t bench_port;
};

/* Parses argv (the arguments after the EAL's).  Returns 0 to run, 1 after --help
 * (printed on stdout), -1 on an error (message printed on stderr). */
int hlb_parse_options(int argc, char **argv, struct options *o);

#endif
