package org.hybridlb.app.core.port;

import java.util.Optional;

/**
 * Durable controller state as one JSON document. The daemon uses {@code FileStateStore}; the
 * ONOS app a ConsistentMap. {@link #save} must be atomic: after a crash, {@link #load} returns
 * either the old or the new document, never a mix.
 */
public interface StateStore {
    Optional<String> load();

    void save(String json);
}
