package org.hybridlb.app.core.hmux;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The changes that make one switch hold its intent: entries, routes and aggregates to write (add or
 * replace, whole) or remove, the fallback to set up or take down, every route towards a failed
 * switch to withdraw at once, items read inconsistent (to clear, then write whole when still
 * wanted) and foreign objects to remove. {@link #target} is the intent the switch holds after it
 * (null only for a withdrawal, which is computed without a reading). Renderers turn it into device
 * operations; it says what, never how.
 */
public final class SwitchDelta {
    public final SortedMap<ServiceMatch, List<DipBucket>> putEntries;
    public final SortedSet<ServiceMatch> removeEntries;
    public final SortedMap<String, String> putRoutes;
    public final SortedSet<String> removeRoutes;
    /** Every route towards these switches goes (their VIPs fall to the aggregates): the failover fast path. */
    public final SortedSet<String> withdrawTowards;
    public final SortedMap<String, SortedSet<String>> putAggregates;
    public final SortedSet<String> removeAggregates;
    /** Set up (true) or take down (false) the fallback; null: leave it. */
    public final Boolean fallback;
    /** Items the switch holds inconsistently, with why: cleared whole before being written again (or removed). */
    public final SortedMap<ItemKey, String> rewrite;
    /** Device names of foreign objects to remove. */
    public final SortedSet<String> foreign;
    /** Wanted items the switch cannot hold now (it cannot reach their HMux or SMux), with why: reported, not written. */
    public final SortedMap<ItemKey, String> blocked;
    public final SwitchIntent target;

    private SwitchDelta(Builder b) {
        putEntries = Collections.unmodifiableSortedMap(new TreeMap<>(b.putEntries));
        removeEntries = Collections.unmodifiableSortedSet(new TreeSet<>(b.removeEntries));
        putRoutes = Collections.unmodifiableSortedMap(new TreeMap<>(b.putRoutes));
        removeRoutes = Collections.unmodifiableSortedSet(new TreeSet<>(b.removeRoutes));
        withdrawTowards = Collections.unmodifiableSortedSet(new TreeSet<>(b.withdrawTowards));
        putAggregates = Collections.unmodifiableSortedMap(new TreeMap<>(b.putAggregates));
        removeAggregates = Collections.unmodifiableSortedSet(new TreeSet<>(b.removeAggregates));
        fallback = b.fallback;
        rewrite = Collections.unmodifiableSortedMap(new TreeMap<>(b.rewrite));
        foreign = Collections.unmodifiableSortedSet(new TreeSet<>(b.foreign));
        blocked = Collections.unmodifiableSortedMap(new TreeMap<>(b.blocked));
        target = b.target;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The failover fast path: every route towards {@code failed} goes; {@code vips} are those known
     * to point there (for the record: the switch drops every route towards it, known or not).
     */
    public static SwitchDelta withdraw(String failed, Collection<String> vips) {
        Builder b = new Builder();
        b.withdrawTowards.add(failed);
        b.removeRoutes.addAll(vips);
        return b.build();
    }

    /** True when the switch needs no change. */
    public boolean isEmpty() {
        return putEntries.isEmpty() && removeEntries.isEmpty() && putRoutes.isEmpty() && removeRoutes.isEmpty()
                && withdrawTowards.isEmpty() && putAggregates.isEmpty() && removeAggregates.isEmpty()
                && fallback == null && rewrite.isEmpty() && foreign.isEmpty();
    }

    /** Number of items changed (for counters and logs). */
    public int size() {
        return putEntries.size() + removeEntries.size() + putRoutes.size() + removeRoutes.size()
                + withdrawTowards.size() + putAggregates.size() + removeAggregates.size() + (fallback == null ? 0 : 1)
                + foreign.size();
    }

    /** The aggregates' and the fallback's part (what the SMux side needs first). */
    public SwitchDelta aggregatesOnly() {
        Builder b = new Builder();
        b.putAggregates.putAll(putAggregates);
        b.removeAggregates.addAll(removeAggregates);
        b.fallback = fallback;
        rewrite.forEach((k, why) -> {
            if (k.item == ItemKey.Item.AGGREGATE || k.item == ItemKey.Item.FALLBACK) {
                b.rewrite.put(k, why);
            }
        });
        blocked.forEach((k, why) -> {
            if (k.item == ItemKey.Item.AGGREGATE) {
                b.blocked.put(k, why);
            }
        });
        b.target = target;
        return b.build();
    }

    /** Everything but {@link #aggregatesOnly}. */
    public SwitchDelta withoutAggregates() {
        Builder b = toBuilder();
        b.putAggregates.clear();
        b.removeAggregates.clear();
        b.fallback = null;
        b.rewrite.keySet().removeIf(k -> k.item == ItemKey.Item.AGGREGATE || k.item == ItemKey.Item.FALLBACK);
        b.blocked.keySet().removeIf(k -> k.item == ItemKey.Item.AGGREGATE);
        return b.build();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.putEntries.putAll(putEntries);
        b.removeEntries.addAll(removeEntries);
        b.putRoutes.putAll(putRoutes);
        b.removeRoutes.addAll(removeRoutes);
        b.withdrawTowards.addAll(withdrawTowards);
        b.putAggregates.putAll(putAggregates);
        b.removeAggregates.addAll(removeAggregates);
        b.fallback = fallback;
        b.rewrite.putAll(rewrite);
        b.foreign.addAll(foreign);
        b.blocked.putAll(blocked);
        b.target = target;
        return b;
    }

    /** The VIPs whose entries this delta writes or removes. */
    public SortedSet<String> entryVips() {
        SortedSet<String> out = new TreeSet<>();
        putEntries.keySet().forEach(m -> out.add(m.vip));
        removeEntries.forEach(m -> out.add(m.vip));
        return out;
    }

    /** One line for logs: the VIPs whose entries come and go (the first few), and counts of the rest. */
    public String summary() {
        List<String> parts = new ArrayList<>();
        SortedSet<String> put = new java.util.TreeSet<>();
        putEntries.keySet().forEach(m -> put.add(m.vip));
        SortedSet<String> gone = new java.util.TreeSet<>();
        removeEntries.forEach(m -> gone.add(m.vip));
        gone.removeAll(put);
        if (!put.isEmpty()) {
            parts.add("HMux entries of " + few(put));
        }
        if (!gone.isEmpty()) {
            parts.add("HMux entries of " + few(gone) + " removed");
        }
        if (!putRoutes.isEmpty() || !removeRoutes.isEmpty()) {
            parts.add(putRoutes.size() + " VIP routes set, " + removeRoutes.size() + " removed");
        }
        withdrawTowards.forEach(t -> parts.add("every VIP route towards " + t + " withdrawn"));
        putAggregates.forEach((a, m) -> parts.add("aggregate " + a + " to SMuxes " + m));
        removeAggregates.forEach(a -> parts.add("aggregate " + a + " removed"));
        if (fallback != null) {
            parts.add(fallback ? "fallback set up" : "fallback taken down");
        }
        if (!rewrite.isEmpty() || !foreign.isEmpty()) {
            parts.add(rewrite.size() + " inconsistent items rewritten, " + foreign.size() + " foreign objects removed");
        }
        return String.join("; ", parts);
    }

    private static String few(SortedSet<String> vips) {
        List<String> first = new ArrayList<>(vips).subList(0, Math.min(3, vips.size()));
        return String.join(", ", first) + (vips.size() > 3 ? " and " + (vips.size() - 3) + " more" : "");
    }

    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        putEntries.forEach((m, b) -> parts.add("+entry " + m + " " + b));
        removeEntries.forEach(m -> parts.add("-entry " + m));
        putRoutes.forEach((v, t) -> parts.add("+route " + v + " -> " + t));
        removeRoutes.forEach(v -> parts.add("-route " + v));
        withdrawTowards.forEach(t -> parts.add("-routes towards " + t));
        putAggregates.forEach((a, m) -> parts.add("+aggregate " + a + " -> " + m));
        removeAggregates.forEach(a -> parts.add("-aggregate " + a));
        if (fallback != null) {
            parts.add((fallback ? "+" : "-") + "fallback");
        }
        rewrite.forEach((k, why) -> parts.add("rewrite " + k + " (" + why + ")"));
        foreign.forEach(f -> parts.add("-foreign " + f));
        blocked.forEach((k, why) -> parts.add("blocked " + k + " (" + why + ")"));
        return "[" + String.join(", ", parts) + "]";
    }

    /** Mutable parts to fill, then {@link #build}. */
    public static final class Builder {
        public final Map<ServiceMatch, List<DipBucket>> putEntries = new TreeMap<>();
        public final SortedSet<ServiceMatch> removeEntries = new TreeSet<>();
        public final Map<String, String> putRoutes = new TreeMap<>();
        public final SortedSet<String> removeRoutes = new TreeSet<>();
        public final SortedSet<String> withdrawTowards = new TreeSet<>();
        public final Map<String, SortedSet<String>> putAggregates = new TreeMap<>();
        public final SortedSet<String> removeAggregates = new TreeSet<>();
        public Boolean fallback;
        public final Map<ItemKey, String> rewrite = new TreeMap<>();
        public final SortedSet<String> foreign = new TreeSet<>();
        public final Map<ItemKey, String> blocked = new TreeMap<>();
        public SwitchIntent target;

        public SwitchDelta build() {
            return new SwitchDelta(this);
        }
    }
}
