package org.hybridlb.standalone.ovs;

import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.standalone.Fabric;

/**
 * The core's HMux layout ({@link HmuxLayout}) spelt in {@code ovs-ofctl} for the bridges of one
 * fabric: cookies over the fabric's controller cookie, the matches of each rule kind at its
 * priority, the select method the SMuxes replicate, and the group ids of the fast-failover
 * fallback (fabric.json {@code tables.fallback} + {@code locationWatchGroup}): on every switch, a
 * route towards location L goes to fast-failover group {@link #FAILOVER_GROUP_BASE} + L, whose first
 * bucket (alive while L's location group is) routes to L and whose second goes through
 * {@link #FALLBACK_GROUP} to the fallback table, where the aggregates send everything to the
 * SMuxes. So when an HMux dies, each of its neighbours turns its traffic to the SMuxes as soon as
 * the link is down, before any controller hears of it.
 */
public final class OvsRules {
    /** The SMux's {@code ovs} selection hashes these (smux/README.md), selection_method_param 0 = its hashBasis 0. */
    public static final String HASH =
            "selection_method=hash,fields(ip_src,ip_dst,nw_proto,tcp_src,tcp_dst,udp_src,udp_dst)";
    public static final long FAILOVER_GROUP_BASE = 0xf0000000L;
    static final long MAX_FAILOVER_LOCATION = 0x0ffffefeL;
    /** Always alive (no watch, indirect): the fallback bucket watches it. */
    public static final long FALLBACK_GROUP = 0xfffffeffL;

    private final Fabric fabric;

    public OvsRules(Fabric fabric) {
        if ((fabric.cookie & HmuxLayout.KIND_MASK) != 0 || (fabric.cookieMask & HmuxLayout.KIND_MASK) != 0) {
            throw new IllegalArgumentException("the controller cookie mask must leave bits 0-"
                    + (HmuxLayout.KIND_BITS - 1) + " free (they carry the rule kind)");
        }
        this.fabric = fabric;
    }

    public long cookie(HmuxLayout.Kind kind, long data) {
        return HmuxLayout.cookie(fabric.cookie, kind, data);
    }

    /** The cookie of a route towards the switch at {@code location}. */
    public long routeCookie(int location) {
        return cookie(HmuxLayout.Kind.ROUTE, Integer.toUnsignedLong(location));
    }

    /** Match of an entry, with its priority. */
    public static String entryMatch(ServiceMatch m) {
        String p = "priority=" + HmuxLayout.priority(m) + ",";
        if (m.wholeVip()) {
            return p + "ip,nw_dst=" + m.vip;
        }
        return p + m.proto + ",nw_dst=" + m.vip + (m.port == 0 ? "" : ",tp_dst=" + m.port);
    }

    public static String routeMatch(String vip) {
        return "priority=" + HmuxLayout.PRIORITY_ROUTE + ",ip,nw_dst=" + vip;
    }

    public static String aggregateMatch(String prefix) {
        return "priority=" + HmuxLayout.PRIORITY_AGGREGATE + ",ip,nw_dst=" + prefix;
    }

    /** Whether a route towards {@code location} goes through its fast-failover group (else straight there). */
    public boolean failsOver(int location) {
        return fabric.fastFailover() && location >= 0 && location <= MAX_FAILOVER_LOCATION;
    }

    public static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }
}
