package org.hybridlb.app.core.p4;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** A set of P4 entities by key ({@link P4Entity#key}): what a switch holds, or should hold. */
public final class P4State {
    private final Map<String, P4Entity> byKey = new TreeMap<>();

    public P4State add(P4Entity e) {
        P4Entity old = byKey.putIfAbsent(e.key(), e);
        if (old != null && !old.equals(e)) {
            throw new IllegalArgumentException("two states of one entity: " + old + " and " + e);
        }
        return this;
    }

    public P4State addAll(Collection<? extends P4Entity> es) {
        es.forEach(this::add);
        return this;
    }

    public P4Entity get(String key) {
        return byKey.get(key);
    }

    public boolean contains(P4Entity e) {
        return e.equals(byKey.get(e.key()));
    }

    public Collection<P4Entity> all() {
        return Collections.unmodifiableCollection(byKey.values());
    }

    public int size() {
        return byKey.size();
    }

    /** The entries of table {@code tableId}. */
    public List<P4TableEntry> entries(int tableId) {
        List<P4TableEntry> out = new ArrayList<>();
        for (P4Entity e : byKey.values()) {
            if (e instanceof P4TableEntry && ((P4TableEntry) e).tableId == tableId) {
                out.add((P4TableEntry) e);
            }
        }
        return out;
    }

    /** The members of action profile {@code profileId}, by member id. */
    public Map<Long, P4Member> members(int profileId) {
        Map<Long, P4Member> out = new TreeMap<>();
        for (P4Entity e : byKey.values()) {
            if (e instanceof P4Member && ((P4Member) e).profileId == profileId) {
                out.put(((P4Member) e).memberId, (P4Member) e);
            }
        }
        return out;
    }

    /** The groups of action profile {@code profileId}, by group id. */
    public Map<Long, P4Group> groups(int profileId) {
        Map<Long, P4Group> out = new TreeMap<>();
        for (P4Entity e : byKey.values()) {
            if (e instanceof P4Group && ((P4Group) e).profileId == profileId) {
                out.put(((P4Group) e).groupId, (P4Group) e);
            }
        }
        return out;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof P4State && byKey.equals(((P4State) o).byKey);
    }

    @Override
    public int hashCode() {
        return byKey.hashCode();
    }

    @Override
    public String toString() {
        return byKey.values().toString();
    }
}
