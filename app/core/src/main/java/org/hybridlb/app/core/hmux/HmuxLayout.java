package org.hybridlb.app.core.hmux;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.hybridlb.app.core.model.Bucket;

/**
 * The one layout policy of the HMux rules, which every southbound renders and reads by.
 *
 * <ul>
 * <li><b>Kinds</b>: an HMux <i>entry</i> (VIP service -> select group over its DIP buckets), a
 *     <i>route</i> ({@code VIP/32} towards the VIP's HMux, on every other switch), an
 *     <i>aggregate</i> (the VIPs' prefix -> select group over the live SMuxes).</li>
 * <li><b>Priorities, more specific wins</b>: entries above routes above aggregates, and among a
 *     VIP's entries a protocol and port above a protocol alone (port 0) above the whole VIP, so a
 *     packet always takes the narrowest service it belongs to and a VIP that has an HMux is never
 *     sent to the SMuxes by its aggregate (Duet §3.3.3: longest prefix wins).</li>
 * <li><b>Keys</b>: a rule's cookie carries its kind in the low {@value #KIND_BITS} bits and, for a
 *     route, the location of the HMux it points at in the high 32 bits (above a device-chosen base),
 *     so a reader knows what it reads without memory of its own; key-addressed group stores (ONOS,
 *     P4Runtime action profiles) name a service's group and an aggregate's group by
 *     {@link #entryGroupKey} and {@link #aggregateGroupKey}.</li>
 * <li><b>Fallback</b>: on a switch that fails over in the data path, a route towards an HMux that
 *     became unreachable falls back to the aggregate that covers its VIP (the SMuxes), before any
 *     controller hears of the failure.</li>
 * <li><b>Buckets</b>: an HMux holds one bucket per DIP that takes new flows ({@link #hmuxBuckets}).</li>
 * </ul>
 */
public final class HmuxLayout {
    /** The rule kinds, each with the code its cookie carries. */
    public enum Kind {
        ENTRY(1), ROUTE(2), AGGREGATE(3);

        public final int code;

        Kind(int code) {
            this.code = code;
        }

        /** The kind with {@code code}, or null for none of ours. */
        public static Kind ofCode(long code) {
            for (Kind k : values()) {
                if (k.code == code) {
                    return k;
                }
            }
            return null;
        }
    }

    public static final int PRIORITY_ENTRY_WHOLE_VIP = 3000;
    public static final int PRIORITY_ENTRY_PROTOCOL = 3050;
    public static final int PRIORITY_ENTRY_PORT = 3100;
    public static final int PRIORITY_ROUTE = 2000;
    public static final int PRIORITY_AGGREGATE = 1000;

    /** Cookie bits that carry the kind; a device's cookie base must leave them free. */
    public static final int KIND_BITS = 4;
    public static final long KIND_MASK = (1L << KIND_BITS) - 1;
    /** Where a cookie's data (a route's HMux location) starts. */
    public static final int DATA_SHIFT = 32;

    static final String ENTRY_GROUP = "hlb:vip:";
    static final String AGGREGATE_GROUP = "hlb:agg:";

    private HmuxLayout() {
    }

    /** The priority of an entry matching {@code m}. */
    public static int priority(ServiceMatch m) {
        if (m.wholeVip()) {
            return PRIORITY_ENTRY_WHOLE_VIP;
        }
        return m.port == 0 ? PRIORITY_ENTRY_PROTOCOL : PRIORITY_ENTRY_PORT;
    }

    /** The kind of a rule at {@code priority}, or null when no rule of ours sits there. */
    public static Kind kindAt(int priority) {
        switch (priority) {
            case PRIORITY_ENTRY_WHOLE_VIP:
            case PRIORITY_ENTRY_PROTOCOL:
            case PRIORITY_ENTRY_PORT:
                return Kind.ENTRY;
            case PRIORITY_ROUTE:
                return Kind.ROUTE;
            case PRIORITY_AGGREGATE:
                return Kind.AGGREGATE;
            default:
                return null;
        }
    }

    /** A cookie: {@code data} in the high 32 bits, the device's {@code base}, the kind's code. */
    public static long cookie(long base, Kind kind, long data) {
        if ((base & KIND_MASK) != 0 || (base >>> DATA_SHIFT) != 0) {
            throw new IllegalArgumentException("a cookie base must leave the kind bits and the high 32 bits free: 0x"
                    + Long.toHexString(base));
        }
        return (data & 0xffffffffL) << DATA_SHIFT | base | kind.code;
    }

    /** The kind a cookie carries, or null. */
    public static Kind kindOf(long cookie) {
        return Kind.ofCode(cookie & KIND_MASK);
    }

    /** The data a cookie carries (a route's HMux location). */
    public static long dataOf(long cookie) {
        return cookie >>> DATA_SHIFT;
    }

    /** The group of one service's entry in a key-addressed group store. */
    public static String entryGroupKey(ServiceMatch m) {
        return ENTRY_GROUP + m.vip + ":" + m.service();
    }

    /** The service whose entry group {@code key} names, or null when it names none. */
    public static ServiceMatch entryOfGroupKey(String key) {
        if (!key.startsWith(ENTRY_GROUP)) {
            return null;
        }
        String rest = key.substring(ENTRY_GROUP.length());
        int colon = rest.lastIndexOf(':');
        int slash = rest.lastIndexOf('/');
        if (colon < 0 || slash < colon) {
            return null;
        }
        try {
            return new ServiceMatch(rest.substring(0, colon), rest.substring(colon + 1, slash),
                    Integer.parseInt(rest.substring(slash + 1)));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The group of an aggregate's SMuxes in a key-addressed group store. */
    public static String aggregateGroupKey(String prefix) {
        return AGGREGATE_GROUP + prefix;
    }

    /** The aggregate whose group {@code key} names, or null. */
    public static String aggregateOfGroupKey(String key) {
        return key.startsWith(AGGREGATE_GROUP) ? key.substring(AGGREGATE_GROUP.length()) : null;
    }

    /**
     * The buckets an HMux holds for a pool, by bucket id: one per DIP that takes new flows. A DIP
     * of weight 0 takes none, and an HMux pins no connection to it (it only hashes), so it has no
     * bucket at all; the others keep their ids and hash as with it: Open vSwitch's dp_hash gives a
     * weight-0 bucket no slot, and its {@code selection_method=hash} scores it 0, so it wins only
     * where every other bucket scores 0 too (the SMuxes keep it for their pinned connections).
     */
    public static List<DipBucket> hmuxBuckets(List<Bucket> pool) {
        List<DipBucket> out = new ArrayList<>();
        for (Bucket b : pool) {
            if (b.weight > 0) {
                out.add(new DipBucket(b.bucketId, b.ip, b.tunnelEndpoint(), b.weight));
            }
        }
        out.sort(Comparator.comparingInt(b -> b.id));
        return out;
    }
}
