package org.hybridlb.app.core.hmux;

import java.util.Map;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The delta from what a switch holds to what it should hold. An item read inconsistent is written
 * again whole when it is wanted and removed when it is not (it never counts as equal, nor as absent:
 * the renderer clears it first); a foreign object is removed. Wanted items the switch cannot hold now
 * (a route towards a switch it cannot reach, an SMux bucket towards an SMux it cannot reach) are left
 * out and reported as {@link SwitchDelta#blocked}, so a switch that waits for a path is not
 * rewritten forever.
 */
public final class IntentDiff {
    private IntentDiff() {
    }

    /** What {@code actual} needs to hold {@code desired}; {@code actual} must have been read. */
    public static SwitchDelta diff(SwitchIntent desired, SwitchReading actual) {
        if (!actual.ok()) {
            throw new IllegalArgumentException("no delta against an unreadable switch: " + actual.failure);
        }
        SwitchDelta.Builder d = SwitchDelta.builder();
        SwitchIntent want = reachable(desired, actual.unreachable, d.blocked);
        SwitchIntent have = actual.intent;
        Map<ItemKey, String> bad = actual.inconsistent;

        for (Map.Entry<ServiceMatch, java.util.List<DipBucket>> e : want.entries.entrySet()) {
            ItemKey k = ItemKey.entry(e.getKey());
            if (bad.containsKey(k) || !e.getValue().equals(have.entries.get(e.getKey()))
                    || !Objects.equals(want.cookies.get(e.getKey()), have.cookies.get(e.getKey()))) {
                d.putEntries.put(e.getKey(), e.getValue());
            }
        }
        for (ServiceMatch m : union(have.entries.keySet(), matchesOf(bad))) {
            if (!want.entries.containsKey(m)) {
                d.removeEntries.add(m);
            }
        }
        for (Map.Entry<String, String> e : want.routes.entrySet()) {
            if (bad.containsKey(ItemKey.route(e.getKey())) || !e.getValue().equals(have.routes.get(e.getKey()))) {
                d.putRoutes.put(e.getKey(), e.getValue());
            }
        }
        for (String v : union(have.routes.keySet(), namesOf(bad, ItemKey.Item.ROUTE))) {
            if (!want.routes.containsKey(v)) {
                d.removeRoutes.add(v);
            }
        }
        for (Map.Entry<String, SortedSet<String>> e : want.aggregates.entrySet()) {
            if (bad.containsKey(ItemKey.aggregate(e.getKey())) || !e.getValue().equals(have.aggregates.get(e.getKey()))) {
                d.putAggregates.put(e.getKey(), e.getValue());
            }
        }
        for (String a : union(have.aggregates.keySet(), namesOf(bad, ItemKey.Item.AGGREGATE))) {
            if (!want.aggregates.containsKey(a)) {
                d.removeAggregates.add(a);
            }
        }
        if (want.fallback != have.fallback || bad.containsKey(ItemKey.fallback())) {
            d.fallback = want.fallback;
        }
        bad.forEach((k, why) -> {
            if (k.item == ItemKey.Item.FOREIGN) {
                d.foreign.add(k.name);
            } else {
                d.rewrite.put(k, why);
            }
        });
        d.target = want;
        return d.build();
    }

    /**
     * {@code desired} without what cannot be held where {@code unreachable} cannot be forwarded to:
     * routes towards an unreachable HMux, unreachable SMuxes of an aggregate (an aggregate left with
     * none is not routed there at all: an empty group would black-hole it). Each left-out item goes
     * to {@code blocked} with why.
     */
    public static SwitchIntent reachable(SwitchIntent desired, Map<String, String> unreachable,
                                         Map<ItemKey, String> blocked) {
        if (unreachable.isEmpty()) {
            return desired;
        }
        SwitchIntent.Builder b = desired.toBuilder();
        b.routes.entrySet().removeIf(r -> {
            String why = unreachable.get(r.getValue());
            if (why != null) {
                blocked.put(ItemKey.route(r.getKey()), "towards " + r.getValue() + ": " + why);
            }
            return why != null;
        });
        for (Map.Entry<String, SortedSet<String>> a : desired.aggregates.entrySet()) {
            SortedSet<String> kept = new TreeSet<>(a.getValue());
            kept.removeIf(unreachable::containsKey);
            if (kept.size() != a.getValue().size()) {
                SortedSet<String> lost = new TreeSet<>(a.getValue());
                lost.removeAll(kept);
                blocked.put(ItemKey.aggregate(a.getKey()), "SMuxes " + lost + " unreachable: "
                        + unreachable.get(lost.first()));
            }
            if (kept.isEmpty()) {
                b.aggregates.remove(a.getKey());
            } else {
                b.aggregates.put(a.getKey(), kept);
            }
        }
        return b.build();
    }

    private static <T> SortedSet<T> union(java.util.Collection<T> a, java.util.Collection<T> b) {
        SortedSet<T> out = new TreeSet<>(a);
        out.addAll(b);
        return out;
    }

    private static SortedSet<ServiceMatch> matchesOf(Map<ItemKey, String> bad) {
        SortedSet<ServiceMatch> out = new TreeSet<>();
        bad.keySet().stream().filter(k -> k.item == ItemKey.Item.ENTRY).map(k -> k.match).forEach(out::add);
        return out;
    }

    private static SortedSet<String> namesOf(Map<ItemKey, String> bad, ItemKey.Item item) {
        SortedSet<String> out = new TreeSet<>();
        bad.keySet().stream().filter(k -> k.item == item).map(k -> Objects.requireNonNull(k.name)).forEach(out::add);
        return out;
    }
}
