package org.hybridlb.itest.onos;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.onosproject.store.primitives.ConsistentMapBackedJavaMap;
import org.onosproject.store.service.AsyncConsistentMap;
import org.onosproject.store.service.ConsistentMap;
import org.onosproject.store.service.ConsistentMapBuilder;
import org.onosproject.store.service.Versioned;

/**
 * A single-instance {@link ConsistentMap}: the map operations over a synchronized map of versioned
 * values (one version counter per map). Calls outside them throw, naming the call.
 */
public final class InMemoryConsistentMap {
    private final String name;
    private final Map<Object, Versioned<Object>> entries = new LinkedHashMap<>();
    private long version;
    private ConsistentMap<Object, Object> self;

    private InMemoryConsistentMap(String name) {
        this.name = name;
    }

    /** What {@code StorageService.consistentMapBuilder()} returns. */
    static <K, V> ConsistentMapBuilder<K, V> builder() {
        return new ConsistentMapBuilder<>() {
            @Override
            @SuppressWarnings("unchecked")
            public ConsistentMap<K, V> build() {
                InMemoryConsistentMap map = new InMemoryConsistentMap(name());
                map.self = Behaviour.of(ConsistentMap.class, map, true);
                return (ConsistentMap<K, V>) (ConsistentMap<?, ?>) map.self;
            }

            @Override
            public AsyncConsistentMap<K, V> buildAsyncMap() {
                throw new UnsupportedOperationException("the stand-in has synchronous maps only");
            }
        };
    }

    public String name() {
        return name;
    }

    public synchronized int size() {
        return entries.size();
    }

    public synchronized boolean isEmpty() {
        return entries.isEmpty();
    }

    public synchronized boolean containsKey(Object key) {
        return entries.containsKey(key);
    }

    public synchronized boolean containsValue(Object value) {
        return entries.values().stream().anyMatch(v -> v.value().equals(value));
    }

    public synchronized Versioned<Object> get(Object key) {
        return entries.get(key);
    }

    public synchronized Versioned<Object> getOrDefault(Object key, Object value) {
        Versioned<Object> v = entries.get(key);
        return v != null ? v : new Versioned<>(value, 0);
    }

    public synchronized Versioned<Object> put(Object key, Object value) {
        return entries.put(key, new Versioned<>(value, ++version));
    }

    public synchronized Versioned<Object> putAndGet(Object key, Object value) {
        put(key, value);
        return entries.get(key);
    }

    public synchronized Versioned<Object> putIfAbsent(Object key, Object value) {
        Versioned<Object> v = entries.get(key);
        return v != null ? v : put(key, value);
    }

    public synchronized Versioned<Object> remove(Object key) {
        return entries.remove(key);
    }

    public synchronized void clear() {
        entries.clear();
    }

    public synchronized Set<Object> keySet() {
        return Set.copyOf(entries.keySet());
    }

    public synchronized Collection<Versioned<Object>> values() {
        return entries.values().stream().collect(Collectors.toList());
    }

    public synchronized Set<Map.Entry<Object, Versioned<Object>>> entrySet() {
        return entries.entrySet().stream().map(e -> Map.entry(e.getKey(), e.getValue())).collect(Collectors.toSet());
    }

    public Map<Object, Object> asJavaMap() {
        return new ConsistentMapBackedJavaMap<>(self);
    }
}
