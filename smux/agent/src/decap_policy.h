/* What the decapsulators accept, in user space: this host's underlay
 * addresses and the two allow-lists (muxes = outer sources, VIPs = inner
 * destinations), parsed from the command line by both backends.  The XDP
 * loader copies them into the program's maps; the user-space fallback decides
 * with hlb_policy_verdict(), which applies the rules of hlb_decap.h in their
 * order, as the XDP program does. */
#ifndef HLB_DECAP_POLICY_H
#define HLB_DECAP_POLICY_H

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlb_decap.h"

struct hlb_prefix {
    uint32_t addr;        /* network order */
    uint32_t prefixlen;   /* 0..32 */
};

struct hlb_prefix_list {
    struct hlb_prefix items[HLB_MAX_ALLOWED];
    int n;
};

struct hlb_policy {
    uint32_t local[HLB_MAX_LOCAL_ADDRS];   /* network order */
    int n_local;
    struct hlb_prefix_list muxes;          /* allowed outer sources */
    struct hlb_prefix_list vips;           /* allowed inner destinations */
};

static inline uint32_t hlb_prefix_mask(uint32_t prefixlen)
{
    return prefixlen == 0 ? 0 : htonl(0xffffffffu << (32 - prefixlen));
}

/* Adds "A.B.C.D" (a /32) or "A.B.C.D/LEN" to the list.  Returns 0, or -1
 * after printing an error that names the option and the value. */
static inline int hlb_prefix_list_add(struct hlb_prefix_list *list, const char *option,
                                      const char *text)
{
    char addr[INET_ADDRSTRLEN];
    const char *slash = strchr(text, '/');
    size_t addr_len = slash ? (size_t) (slash - text) : strlen(text);
    struct hlb_prefix p = { 0, 32 };
    if (addr_len >= sizeof addr) {
        fprintf(stderr, "%s: not an IPv4 address or prefix: '%s'\n", option, text);
        return -1;
    }
    memcpy(addr, text, addr_len);
    addr[addr_len] = '\0';
    if (inet_pton(AF_INET, addr, &p.addr) != 1) {
        fprintf(stderr, "%s: not an IPv4 address or prefix: '%s'\n", option, text);
        return -1;
    }
    if (slash) {
        char *rest;
        unsigned long len = strtoul(slash + 1, &rest, 10);
        if (slash[1] < '0' || slash[1] > '9' || *rest != '\0' || len > 32) {
            fprintf(stderr, "%s: prefix length must be 0..32: '%s'\n", option, text);
            return -1;
        }
        p.prefixlen = (uint32_t) len;
    }
    if (p.addr & ~hlb_prefix_mask(p.prefixlen)) {
        fprintf(stderr, "%s: host bits set in '%s'\n", option, text);
        return -1;
    }
    if (list->n == HLB_MAX_ALLOWED) {
        fprintf(stderr, "%s: more than %d prefixes\n", option, HLB_MAX_ALLOWED);
        return -1;
    }
    list->items[list->n++] = p;
    return 0;
}

/* One option of the policy, as both decapsulators take it: 'l' --local-ip ADDR,
 * 'M' --allow-mux PREFIX, 'V' --allow-vip PREFIX.  Returns 0, or -1 after printing
 * an error that names the option and the value. */
static inline int hlb_policy_option(struct hlb_policy *policy, int option, const char *arg)
{
    switch (option) {
    case 'l':
        if (policy->n_local == HLB_MAX_LOCAL_ADDRS
            || inet_pton(AF_INET, arg, &policy->local[policy->n_local]) != 1) {
            fprintf(stderr, "--local-ip: not an IPv4 address (or too many): '%s'\n", arg);
            return -1;
        }
        policy->n_local++;
        return 0;
    case 'M':
        return hlb_prefix_list_add(&policy->muxes, "--allow-mux", arg);
    case 'V':
        return hlb_prefix_list_add(&policy->vips, "--allow-vip", arg);
    default:
        return -1;
    }
}

/* An allow-list given empty accepts any address. */
static inline void hlb_prefix_list_default_any(struct hlb_prefix_list *list)
{
    if (list->n == 0) {
        list->items[list->n++] = (struct hlb_prefix) { 0, 0 };
    }
}

static inline int hlb_prefix_list_match(const struct hlb_prefix_list *list, uint32_t addr)
{
    for (int i = 0; i < list->n; i++) {
        if ((addr & hlb_prefix_mask(list->items[i].prefixlen)) == list->items[i].addr) {
            return 1;
        }
    }
    return 0;
}

/* The verdict (an enum hlb_counter) for the IPv4 packet [ip, ip + len); on a
 * decap verdict 'info' tells what to deliver. */
static inline enum hlb_counter hlb_policy_verdict(const struct hlb_policy *policy,
                                                  const uint8_t *ip, size_t len,
                                                  struct hlb_encap_info *info)
{
    int rc = hlb_parse_encap(ip, ip + len, info);
    if (rc > 0) {
        return HLB_C_PASS_NOT_ENCAP;
    }
    if (rc < 0) {
        return HLB_C_DROP_MALFORMED;
    }
    int is_local = 0;
    for (int i = 0; i < policy->n_local; i++) {
        is_local |= policy->local[i] == info->outer_dst;
    }
    if (!is_local) {
        return HLB_C_PASS_NOT_LOCAL;
    }
    if (!hlb_ip4_header_checksum_ok(ip, ip + len)) {
        return HLB_C_DROP_BAD_CHECKSUM;
    }
    if (!hlb_prefix_list_match(&policy->muxes, info->outer_src)) {
        return HLB_C_DROP_UNKNOWN_MUX;
    }
    if (!hlb_prefix_list_match(&policy->vips, info->inner_dst)) {
        return HLB_C_DROP_NOT_VIP;
    }
    return info->encap == HLB_ENCAP_IPIP ? HLB_C_DECAP_IPIP : HLB_C_DECAP_GRE;
}

#endif /* HLB_DECAP_POLICY_H */
