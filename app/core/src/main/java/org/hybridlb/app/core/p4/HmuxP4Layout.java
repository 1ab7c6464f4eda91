package org.hybridlb.app.core.p4;

import static org.hybridlb.app.core.p4.HlbP4Info.*;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.hmux.CookieDecode;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.ServiceMatch;

/**
 * The HMux layout in the P4 programs' terms (p4/README.md, "What a controller writes"): one
 * constructor per entity the HMux layer writes, and its inverse, all by {@link HlbP4Info}.
 *
 * <ul>
 * <li>A service: one entry in {@code vip_service} (VIP, protocol, port), {@code vip_service_any_port}
 *     (VIP, protocol: port 0) or {@code vip_whole} (the whole VIP) running
 *     {@code set_service(service_id, encap)}; {@code dip_select} (service id) to the
 *     {@code dip_selector} group of the same id, whose members are weight-unit
 *     {@code set_dip(tunnel_dst, bucket)}, {@code bucket} the switch's {@code bucket_counter} index of
 *     the DIP ({@link BucketCounters}), not the VIP's bucket id. The pipeline tries the three tables in that order, so a
 *     port beats a protocol beats the whole VIP without priorities (every table here is exact or LPM).</li>
 * <li>A service whose cookies the switch decodes (a Cheetah program): its entry runs
 *     {@code set_cookie_service(service_id, encap, affinity cheetah, cookie_key, owner_id 0)}; one
 *     {@code vip_servers} entry (service id, server id) to {@code accept_server(bucket)} per server
 *     it accepts (counted in its bucket's index, or one of its own for a server of no bucket), and one {@code all_servers} entry (server id) to {@code set_server(dip)} per server
 *     of any such service on the switch.</li>
 * <li>A VIP route: {@code routing_v4} {@code VIP/32} to {@code set_next_id} of the HMux switch.</li>
 * <li>An aggregate: {@code routing_v4} prefix to {@code set_next_id} of a controller next id;
 *     {@code next_hop} to the {@code ecmp_selector} group of that id, one member per live SMux.</li>
 * </ul>
 */
public final class HmuxP4Layout {
    private HmuxP4Layout() {
    }

    /**
     * Whether other entries lead to {@code e} (written before them, deleted after): a service's
     * {@code dip_select} and cookie servers (a cookie service without them would drop its cookies).
     */
    public static boolean leadsTo(P4TableEntry e) {
        return e.tableId == HMUX_DIP_SELECT_ID || e.tableId == ROUTING_NEXT_HOP_ID
                || e.tableId == CHEETAH_VIP_SERVERS_ID || e.tableId == CHEETAH_ALL_SERVERS_ID;
    }

    /**
     * The cookie hash modes a switch running {@code profile} decodes once this layer programs it:
     * crc32c on the Cheetah programs (COOKIE-SPEC §5: a switch has no keyed PRF), none otherwise.
     */
    public static Set<Cookie.HashMode> cookieModes(String profile) {
        return PROFILE_HLB_CHEETAH.equals(profile) || PROFILE_HLB_CHEETAH_STATEFUL.equals(profile)
                ? Set.of(Cookie.HashMode.CRC32C) : Set.of();
    }

    /**
     * Whether {@code tableId} is {@code vip_servers} or {@code all_servers}: the server ids a switch
     * accepts in cookies. Their entries go in with the members, before the groups: once a group
     * lists a new server's member, a SYN may reach it and the client's next segment carries its
     * cookie, which must decode (else dropped as invalid); they go after the groups.
     */
    public static boolean isCookieServerTable(int tableId) {
        return tableId == CHEETAH_VIP_SERVERS_ID || tableId == CHEETAH_ALL_SERVERS_ID;
    }

    /** Whether {@code tableId} is one of the three service tables. */
    public static boolean isServiceTable(int tableId) {
        return tableId == HMUX_VIP_SERVICE_ID || tableId == HMUX_VIP_SERVICE_ANY_PORT_ID
                || tableId == HMUX_VIP_WHOLE_ID;
    }

    static long protocolNumber(String proto) {
        return "tcp".equals(proto) ? IP_PROTO_TCP : IP_PROTO_UDP;
    }

    static long encapCode(HashContract.Encap encap) {
        return encap == HashContract.Encap.GRE ? ENCAP_GRE : ENCAP_IPIP;
    }

    /** The encapsulation {@code code} stands for, or null. */
    static HashContract.Encap encapOf(long code) {
        return code == ENCAP_GRE ? HashContract.Encap.GRE : code == ENCAP_IPIP ? HashContract.Encap.IPIP : null;
    }

    /** The service table entry of {@code m}, a hashed service. */
    public static P4TableEntry serviceEntry(ServiceMatch m, int serviceId, HashContract.Encap encap, long cookie) {
        return serviceEntry(m, serviceId, encap, null, cookie);
    }

    /**
     * The service table entry of {@code m}: hashed, or decoding cookies with {@code cookies} (null:
     * none). Throws IllegalArgumentException for a mode the programs do not decode.
     */
    public static P4TableEntry serviceEntry(ServiceMatch m, int serviceId, HashContract.Encap encap,
                                            CookieDecode cookies, long cookie) {
        P4Action a = cookies == null ? P4Action.of(HMUX_SET_SERVICE, HMUX_SET_SERVICE_ID)
                .param(HMUX_SET_SERVICE_SERVICE_ID_ID, HMUX_SET_SERVICE_SERVICE_ID, P4Value.of(serviceId))
                .param(HMUX_SET_SERVICE_ENCAP_ID, HMUX_SET_SERVICE_ENCAP, P4Value.of(encapCode(encap))).build()
                : cookieServiceAction(m, serviceId, encap, cookies);
        P4Value vip = P4Value.ipv4(m.vip);
        List<P4Match> match = new ArrayList<>();
        if (m.wholeVip()) {
            match.add(P4Match.exact(HMUX_VIP_WHOLE_DST_ADDR_ID, HMUX_VIP_WHOLE_DST_ADDR, vip));
            return P4TableEntry.withAction(HMUX_VIP_WHOLE, HMUX_VIP_WHOLE_ID, match, a, cookie);
        }
        P4Value proto = P4Value.of(protocolNumber(m.proto));
        if (m.port == 0) {
            match.add(P4Match.exact(HMUX_VIP_SERVICE_ANY_PORT_DST_ADDR_ID, HMUX_VIP_SERVICE_ANY_PORT_DST_ADDR, vip));
            match.add(P4Match.exact(HMUX_VIP_SERVICE_ANY_PORT_PROTOCOL_ID, HMUX_VIP_SERVICE_ANY_PORT_PROTOCOL, proto));
            return P4TableEntry.withAction(HMUX_VIP_SERVICE_ANY_PORT, HMUX_VIP_SERVICE_ANY_PORT_ID, match, a, cookie);
        }
        match.add(P4Match.exact(HMUX_VIP_SERVICE_DST_ADDR_ID, HMUX_VIP_SERVICE_DST_ADDR, vip));
        match.add(P4Match.exact(HMUX_VIP_SERVICE_PROTOCOL_ID, HMUX_VIP_SERVICE_PROTOCOL, proto));
        match.add(P4Match.exact(HMUX_VIP_SERVICE_DST_PORT_ID, HMUX_VIP_SERVICE_DST_PORT, P4Value.of(m.port)));
        return P4TableEntry.withAction(HMUX_VIP_SERVICE, HMUX_VIP_SERVICE_ID, match, a, cookie);
    }

    private static P4Action cookieServiceAction(ServiceMatch m, int serviceId, HashContract.Encap encap,
                                                CookieDecode cookies) {
        if (cookies.mode != Cookie.HashMode.CRC32C) {
            throw new IllegalArgumentException(m + ": cookies hashed with " + cookies.mode.wireName()
                    + ", the P4 programs decode crc32c only");
        }
        return P4Action.of(HMUX_SET_COOKIE_SERVICE, HMUX_SET_COOKIE_SERVICE_ID)
                .param(HMUX_SET_COOKIE_SERVICE_SERVICE_ID_ID, HMUX_SET_COOKIE_SERVICE_SERVICE_ID, P4Value.of(serviceId))
                .param(HMUX_SET_COOKIE_SERVICE_ENCAP_ID, HMUX_SET_COOKIE_SERVICE_ENCAP, P4Value.of(encapCode(encap)))
                .param(HMUX_SET_COOKIE_SERVICE_AFFINITY_ID, HMUX_SET_COOKIE_SERVICE_AFFINITY, P4Value.of(AFFINITY_CHEETAH))
                .param(HMUX_SET_COOKIE_SERVICE_COOKIE_KEY_ID, HMUX_SET_COOKIE_SERVICE_COOKIE_KEY,
                        P4Value.of(Cookie.parseKey(cookies.key)))
                .param(HMUX_SET_COOKIE_SERVICE_OWNER_ID_ID, HMUX_SET_COOKIE_SERVICE_OWNER_ID, P4Value.of(0)).build();
    }

    /** The service id a service entry's action sets ({@code set_service} or {@code set_cookie_service}), or null. */
    public static P4Value serviceIdOf(P4Action a) {
        return a == null ? null : a.id == HMUX_SET_SERVICE_ID ? a.param(HMUX_SET_SERVICE_SERVICE_ID_ID)
                : a.id == HMUX_SET_COOKIE_SERVICE_ID ? a.param(HMUX_SET_COOKIE_SERVICE_SERVICE_ID_ID) : null;
    }

    /** The encapsulation code a service entry's action sets, or null. */
    static P4Value encapCodeOf(P4Action a) {
        return a.id == HMUX_SET_SERVICE_ID ? a.param(HMUX_SET_SERVICE_ENCAP_ID)
                : a.id == HMUX_SET_COOKIE_SERVICE_ID ? a.param(HMUX_SET_COOKIE_SERVICE_ENCAP_ID) : null;
    }

    /** The 128-bit cookie key of a {@code set_cookie_service} action, as {@link Cookie#formatKey} writes it. */
    static String cookieKeyOf(P4Action a) {
        byte[] v = a.param(HMUX_SET_COOKIE_SERVICE_COOKIE_KEY_ID).bytes();
        if (v.length > Cookie.KEY_BYTES) {
            throw new IllegalArgumentException("a cookie key of " + v.length + " bytes");
        }
        byte[] key = new byte[Cookie.KEY_BYTES];
        System.arraycopy(v, 0, key, Cookie.KEY_BYTES - v.length, v.length);
        return Cookie.formatKey(key);
    }

    /** A {@code vip_servers} entry: service {@code serviceId} accepts {@code serverId}, counted in {@code bucket}. */
    public static P4TableEntry vipServersEntry(int serviceId, int serverId, int bucket, long cookie) {
        return P4TableEntry.withAction(CHEETAH_VIP_SERVERS, CHEETAH_VIP_SERVERS_ID, Arrays.asList(
                P4Match.exact(CHEETAH_VIP_SERVERS_SERVICE_ID_ID, CHEETAH_VIP_SERVERS_SERVICE_ID, P4Value.of(serviceId)),
                P4Match.exact(CHEETAH_VIP_SERVERS_SERVER_ID_ID, CHEETAH_VIP_SERVERS_SERVER_ID, P4Value.of(serverId))),
                P4Action.of(CHEETAH_ACCEPT_SERVER, CHEETAH_ACCEPT_SERVER_ID).param(CHEETAH_ACCEPT_SERVER_BUCKET_ID,
                        CHEETAH_ACCEPT_SERVER_BUCKET, P4Value.of(bucket)).build(), cookie);
    }

    /** An {@code all_servers} entry: server {@code serverId} is the host at {@code endpoint}. */
    public static P4TableEntry allServersEntry(int serverId, String endpoint, long cookie) {
        return P4TableEntry.withAction(CHEETAH_ALL_SERVERS, CHEETAH_ALL_SERVERS_ID, List.of(
                P4Match.exact(CHEETAH_ALL_SERVERS_SERVER_ID_ID, CHEETAH_ALL_SERVERS_SERVER_ID, P4Value.of(serverId))),
                P4Action.of(CHEETAH_SET_SERVER, CHEETAH_SET_SERVER_ID).param(CHEETAH_SET_SERVER_DIP_ID,
                        CHEETAH_SET_SERVER_DIP, P4Value.ipv4(endpoint)).build(), cookie);
    }

    /**
     * The service a service table entry matches, or null when it is none of the three tables or
     * its match is not one this layout writes.
     */
    public static ServiceMatch serviceOf(P4TableEntry e) {
        try {
            if (e.tableId == HMUX_VIP_WHOLE_ID && e.matches.size() == 1) {
                return new ServiceMatch(ipv4(e, HMUX_VIP_WHOLE_DST_ADDR_ID), ServiceMatch.ANY, 0);
            }
            if (e.tableId == HMUX_VIP_SERVICE_ANY_PORT_ID && e.matches.size() == 2) {
                return new ServiceMatch(ipv4(e, HMUX_VIP_SERVICE_ANY_PORT_DST_ADDR_ID),
                        protoName(e.match(HMUX_VIP_SERVICE_ANY_PORT_PROTOCOL_ID)), 0);
            }
            if (e.tableId == HMUX_VIP_SERVICE_ID && e.matches.size() == 3) {
                int port = (int) e.match(HMUX_VIP_SERVICE_DST_PORT_ID).value.asLong();
                return port == 0 ? null : new ServiceMatch(ipv4(e, HMUX_VIP_SERVICE_DST_ADDR_ID),
                        protoName(e.match(HMUX_VIP_SERVICE_PROTOCOL_ID)), port);
            }
        } catch (RuntimeException bad) {
            return null; // a missing field or a protocol of none of ours
        }
        return null;
    }

    private static String ipv4(P4TableEntry e, int fieldId) {
        return e.match(fieldId).value.asIpv4();
    }

    private static String protoName(P4Match m) {
        long p = m.value.asLong();
        if (p == IP_PROTO_TCP) {
            return "tcp";
        }
        if (p == IP_PROTO_UDP) {
            return "udp";
        }
        throw new IllegalArgumentException("protocol " + p);
    }

    public static P4TableEntry dipSelectEntry(int serviceId, long groupId, long cookie) {
        return P4TableEntry.withGroup(HMUX_DIP_SELECT, HMUX_DIP_SELECT_ID, List.of(P4Match.exact(
                HMUX_DIP_SELECT_SERVICE_ID_ID, HMUX_DIP_SELECT_SERVICE_ID, P4Value.of(serviceId))), groupId, cookie);
    }

    public static P4Member dipMember(long memberId, String endpoint, int bucket) {
        return new P4Member(HMUX_DIP_SELECTOR, HMUX_DIP_SELECTOR_ID, memberId, dipAction(endpoint, bucket));
    }

    public static P4Action dipAction(String endpoint, int bucket) {
        return P4Action.of(HMUX_SET_DIP, HMUX_SET_DIP_ID)
                .param(HMUX_SET_DIP_TUNNEL_DST_ID, HMUX_SET_DIP_TUNNEL_DST, P4Value.ipv4(endpoint))
                .param(HMUX_SET_DIP_BUCKET_ID, HMUX_SET_DIP_BUCKET, P4Value.of(bucket)).build();
    }

    public static P4Group dipGroup(long groupId, List<Long> memberIds) {
        return new P4Group(HMUX_DIP_SELECTOR, HMUX_DIP_SELECTOR_ID, groupId, memberIds, 0);
    }

    /** A {@code routing_v4} entry: {@code prefix} ("a.b.c.d/len" or an address) to next id {@code nextId}. */
    public static P4TableEntry routeEntry(String prefix, int nextId, long cookie) {
        String[] p = prefix.split("/");
        int len = p.length > 1 ? Integer.parseInt(p[1]) : 32;
        long addr = org.hybridlb.solver.model.Ipv4.parse(p[0]) & 0xffffffffL;
        long mask = len == 0 ? 0 : (0xffffffffL << (32 - len)) & 0xffffffffL;
        return P4TableEntry.withAction(ROUTING_ROUTING_V4, ROUTING_ROUTING_V4_ID,
                List.of(P4Match.lpm(ROUTING_ROUTING_V4_DST_ADDR_ID, ROUTING_ROUTING_V4_DST_ADDR,
                        P4Value.of(addr & mask), len)), nextIdAction(nextId), cookie);
    }

    public static P4Action nextIdAction(int nextId) {
        return P4Action.of(ROUTING_SET_NEXT_ID, ROUTING_SET_NEXT_ID_ID)
                .param(ROUTING_SET_NEXT_ID_NEXT_ID_ID, ROUTING_SET_NEXT_ID_NEXT_ID, P4Value.of(nextId)).build();
    }

    /** The prefix a {@code routing_v4} entry matches, "a.b.c.d/len"; null for a default (no match). */
    public static String prefixOf(P4TableEntry e) {
        P4Match m = e.match(ROUTING_ROUTING_V4_DST_ADDR_ID);
        return m == null ? null : m.value.asIpv4() + "/" + m.prefixLen;
    }

    /** The next id a {@code routing_v4} entry sets, or -1 when it runs another action. */
    public static long nextIdOf(P4TableEntry e) {
        if (e.action == null || e.action.id != ROUTING_SET_NEXT_ID_ID) {
            return -1;
        }
        P4Value v = e.action.param(ROUTING_SET_NEXT_ID_NEXT_ID_ID);
        return v == null ? -1 : v.asLong();
    }

    public static P4TableEntry nextHopEntry(int nextId, long groupId, long cookie) {
        return P4TableEntry.withGroup(ROUTING_NEXT_HOP, ROUTING_NEXT_HOP_ID, List.of(P4Match.exact(
                ROUTING_NEXT_HOP_NEXT_ID_ID, ROUTING_NEXT_HOP_NEXT_ID, P4Value.of(nextId))), groupId, cookie);
    }

    public static P4Member smuxMember(long memberId, P4Action hop) {
        return new P4Member(ROUTING_ECMP_SELECTOR, ROUTING_ECMP_SELECTOR_ID, memberId, hop);
    }

    public static P4Group smuxGroup(long groupId, List<Long> memberIds) {
        return new P4Group(ROUTING_ECMP_SELECTOR, ROUTING_ECMP_SELECTOR_ID, groupId, memberIds, 0);
    }
}
