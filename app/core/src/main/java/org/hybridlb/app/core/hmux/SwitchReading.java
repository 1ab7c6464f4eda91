package org.hybridlb.app.core.hmux;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What a southbound read on one switch: the intent it holds, every item it holds only in part or
 * in a way the layout does not produce ({@link #inconsistent}, with why, and left out of the
 * intent: never counted as absent or as equal), the switches and SMuxes it cannot forward to right now ({@link #unreachable}: a
 * route or SMux bucket towards them cannot be held there), or, when the switch could not be read
 * at all, why ({@link #failure}).
 */
public final class SwitchReading {
    public final SwitchIntent intent;
    public final SortedMap<ItemKey, String> inconsistent;
    /** Switch or SMux id -> why this switch cannot forward to it now. */
    public final SortedMap<String, String> unreachable;
    /** Why the switch could not be read; null when it was. */
    public final String failure;

    public SwitchReading(SwitchIntent intent, Map<ItemKey, String> inconsistent, Map<String, String> unreachable) {
        this(Objects.requireNonNull(intent), inconsistent, unreachable, null);
    }

    private SwitchReading(SwitchIntent intent, Map<ItemKey, String> inconsistent, Map<String, String> unreachable,
                          String failure) {
        this.intent = intent;
        this.inconsistent = Collections.unmodifiableSortedMap(new TreeMap<>(inconsistent));
        this.unreachable = Collections.unmodifiableSortedMap(new TreeMap<>(unreachable));
        this.failure = failure;
    }

    /** A switch that holds exactly {@code intent} and reaches everything. */
    public static SwitchReading of(SwitchIntent intent) {
        return new SwitchReading(intent, Map.of(), Map.of());
    }

    /** A switch that could not be read. */
    public static SwitchReading failed(String why) {
        return new SwitchReading(null, Map.of(), Map.of(), Objects.requireNonNull(why));
    }

    public boolean ok() {
        return failure == null;
    }

    /** The same reading once {@code d} was applied: the intent after it, the inconsistencies it rewrote gone. */
    public SwitchReading after(SwitchDelta d) {
        if (!ok()) {
            throw new IllegalStateException("no reading to apply a delta to: " + failure);
        }
        Map<ItemKey, String> left = new TreeMap<>(inconsistent);
        left.keySet().removeAll(d.rewrite.keySet());
        d.foreign.forEach(f -> left.remove(ItemKey.foreign(f)));
        return new SwitchReading(intent.after(d), left, unreachable);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SwitchReading)) {
            return false;
        }
        SwitchReading r = (SwitchReading) o;
        return Objects.equals(intent, r.intent) && inconsistent.equals(r.inconsistent)
                && unreachable.equals(r.unreachable) && Objects.equals(failure, r.failure);
    }

    @Override
    public int hashCode() {
        return Objects.hash(intent, inconsistent, unreachable, failure);
    }

    @Override
    public String toString() {
        if (!ok()) {
            return "unreadable: " + failure;
        }
        return intent + (inconsistent.isEmpty() ? "" : " inconsistent " + inconsistent)
                + (unreachable.isEmpty() ? "" : " unreachable " + unreachable.keySet());
    }
}
