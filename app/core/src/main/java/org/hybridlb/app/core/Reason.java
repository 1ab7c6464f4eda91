package org.hybridlb.app.core;

import java.util.Objects;

/** A {@link Cause} and the words a migration it starts is recorded with ({@code trigger} in {@code /migrations}). */
final class Reason {
    final Cause cause;
    final String text;

    Reason(Cause cause, String text) {
        this.cause = Objects.requireNonNull(cause);
        this.text = Objects.requireNonNull(text);
    }

    /** The cause alone, in words ({@code "interval"}, {@code "reassign now"}). */
    static Reason of(Cause cause) {
        return new Reason(cause, cause.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' '));
    }

    /**
     * The reason of one round that serves both requests: the first one, unless only the other
     * needs the devices read back (an event coalesced into a periodic round must still repair).
     */
    Reason merge(Reason later) {
        return !cause.alwaysRepairs() && later.cause.alwaysRepairs() ? later : this;
    }

    @Override
    public String toString() {
        return text;
    }
}
