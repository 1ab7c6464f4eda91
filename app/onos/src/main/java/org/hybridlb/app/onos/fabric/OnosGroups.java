package org.hybridlb.app.onos.fabric;

import java.nio.charset.StandardCharsets;
import org.onosproject.net.group.DefaultGroupKey;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupKey;

/**
 * The app's group keys in ONOS's group store. An entry's select group and an aggregate's group are
 * named by the core's layout ({@code HmuxLayout.entryGroupKey}, {@code aggregateGroupKey}); the
 * groups that make the app's own routing on ONOS (no fabric routing is assumed under it) are named
 * here: towards a switch over the ECMP first hops, the liveness of those first hops, the
 * fast-failover group of a route, and one group per SMux that an aggregate's buckets chain to, so a
 * reader knows each aggregate bucket's SMux.
 */
final class OnosGroups {
    static final String TOWARD = "hlb:to:";
    static final String ALIVE = "hlb:alive:";
    static final String FAILOVER = "hlb:ff:";
    static final String SMUX = "hlb:smux:";
    /** Stands for "no aggregate" in a failover key (a route with no SMux group to fall back to). */
    static final String NO_AGGREGATE = "-";

    private OnosGroups() {
    }

    static GroupKey key(String text) {
        return new DefaultGroupKey(text.getBytes(StandardCharsets.UTF_8));
    }

    static String keyText(Group g) {
        return g.appCookie() == null ? "" : new String(g.appCookie().key(), StandardCharsets.UTF_8);
    }

    /** Towards switch {@code switchId}: SELECT over the ECMP first hops. */
    static String toward(String switchId) {
        return TOWARD + switchId;
    }

    /** Liveness of the first hops towards {@code switchId} (FAILOVER, watched only). */
    static String alive(String switchId) {
        return ALIVE + switchId;
    }

    /** The FAILOVER group of routes towards HMux {@code switchId} whose VIPs fall back to {@code aggregate} (or none). */
    static String failover(String switchId, String aggregate) {
        return FAILOVER + switchId + "|" + (aggregate == null ? NO_AGGREGATE : aggregate);
    }

    /** To SMux {@code smuxId}: its MAC and port on its ToR, the group towards its ToR elsewhere. */
    static String smux(String smuxId) {
        return SMUX + smuxId;
    }

    /** The switch a toward, alive or failover key names, or null. */
    static String targetOf(String key) {
        for (String p : new String[] {TOWARD, ALIVE}) {
            if (key.startsWith(p)) {
                return key.substring(p.length());
            }
        }
        if (key.startsWith(FAILOVER) && key.indexOf('|') > 0) {
            return key.substring(FAILOVER.length(), key.indexOf('|'));
        }
        return null;
    }

    /** The aggregate a failover key falls back to (null: none). */
    static String fallbackOf(String key) {
        String a = key.substring(key.indexOf('|') + 1);
        return NO_AGGREGATE.equals(a) ? null : a;
    }
}
