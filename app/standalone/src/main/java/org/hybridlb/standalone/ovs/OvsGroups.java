package org.hybridlb.standalone.ovs;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.hmux.ServiceMatch;

/**
 * The group ids one bridge uses for hybridlb's rules, as last read and as written since: the
 * select group of each entry and of each aggregate, the fast-failover groups present, and every
 * id taken (so a new group gets a free one). Device bookkeeping of the renderer, not a record of
 * the intent: a reading rebuilds it, a refused bundle discards it.
 */
final class OvsGroups {
    final Map<ServiceMatch, Long> entries = new HashMap<>();
    final Map<String, Long> aggregates = new HashMap<>();
    /** Locations whose fast-failover group exists. */
    final Set<Integer> failover = new HashSet<>();
    final Set<Long> used = new HashSet<>();
    private final long base;
    private long next;

    OvsGroups(long base) {
        this.base = base;
        this.next = base;
    }

    /** The lowest free id from the fabric's controller group base. */
    long allocate() {
        while (used.contains(next)) {
            next++;
        }
        if (next >= base + org.hybridlb.standalone.Fabric.CONTROLLER_GROUP_SPAN) {
            throw new IllegalStateException("no free group id left in [" + base + ", "
                    + (base + org.hybridlb.standalone.Fabric.CONTROLLER_GROUP_SPAN) + ")");
        }
        used.add(next);
        return next++;
    }

    void release(long id) {
        used.remove(id);
        next = Math.min(next, Math.max(base, id));
    }

    OvsGroups copy() {
        OvsGroups c = new OvsGroups(base);
        c.entries.putAll(entries);
        c.aggregates.putAll(aggregates);
        c.failover.addAll(failover);
        c.used.addAll(used);
        c.next = next;
        return c;
    }
}
