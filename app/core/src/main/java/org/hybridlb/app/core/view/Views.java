package org.hybridlb.app.core.view;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Immutable copies that keep the order the controller gave (it is the order of the JSON). */
final class Views {
    private Views() {
    }

    static <K, V> Map<K, V> map(Map<K, V> m) {
        return m == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(m));
    }

    static <T> List<T> list(List<T> l) {
        return l == null ? List.of() : Collections.unmodifiableList(new java.util.ArrayList<>(l));
    }
}
