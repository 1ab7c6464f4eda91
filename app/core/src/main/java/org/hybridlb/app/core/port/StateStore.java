package org.hybridlb.app.core.port;

import java.util.Optional;

/**
 * Durable controller state as one JSON document. The daemon uses {@code FileStateStore}; the
 * ONOS app a ConsistentMap. {@link #save} must be atomic: after a crash, {@link #load} returns
 * either the old or the new document, never a mix. A store may keep the last good copy of the
 * document, for when the current one turns out unreadable (a damaged disk, a hand edit).
 */
public interface StateStore {
    Optional<String> load();

    void save(String json);

    /** Where the document lives, for messages ("state file /var/lib/hybridlbd/state.json"). */
    default String describe() {
        return "controller state";
    }

    /** The copy the document had before the last save (empty: none kept). */
    default Optional<String> loadPrevious() {
        return Optional.empty();
    }

    /** Where {@link #loadPrevious} reads from, for messages (null: this store keeps no copy). */
    default String describePrevious() {
        return null;
    }

    /**
     * The current document is unreadable and the previous copy is taken instead: the current one
     * is set aside (kept for inspection, never again read, and never kept as a "good" copy);
     * returns where it went.
     */
    default String setAsideUnreadable() {
        throw new UnsupportedOperationException(describe() + " keeps no previous copy");
    }
}
