package org.hybridlb.app.onos.fabric;

import java.util.Optional;
import org.hybridlb.app.core.port.StateStore;
import org.onosproject.store.service.ConsistentMap;
import org.onosproject.store.service.Versioned;

/**
 * The controller's state document in an ONOS ConsistentMap: one key, replaced atomically by
 * {@code put}, replicated to the cluster, so a restart or another instance resumes from it.
 */
public final class ConsistentMapStateStore implements StateStore {
    static final String KEY = "state";
    private final ConsistentMap<String, String> map;

    public ConsistentMapStateStore(ConsistentMap<String, String> map) {
        this.map = map;
    }

    @Override
    public Optional<String> load() {
        Versioned<String> v = map.get(KEY);
        return v == null ? Optional.empty() : Optional.ofNullable(v.value());
    }

    @Override
    public void save(String json) {
        map.put(KEY, json);
    }
}
