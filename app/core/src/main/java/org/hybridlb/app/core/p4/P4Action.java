package org.hybridlb.app.core.p4;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A P4 action with its parameters, by P4Info name and id: what a direct table entry or an action
 * profile member runs. Parameters are keyed by P4Info parameter id.
 */
public final class P4Action {
    public final String name;
    public final int id;
    /** Parameter id -> value. */
    public final SortedMap<Integer, P4Value> params;
    /** Parameter id -> P4Info name (for messages; not compared). */
    public final Map<Integer, String> paramNames;

    private P4Action(String name, int id, SortedMap<Integer, P4Value> params, Map<Integer, String> paramNames) {
        this.name = Objects.requireNonNull(name);
        this.id = id;
        this.params = Collections.unmodifiableSortedMap(params);
        this.paramNames = Collections.unmodifiableMap(paramNames);
    }

    public static Builder of(String name, int id) {
        return new Builder(name, id);
    }

    /** The value of parameter {@code paramId}, or null. */
    public P4Value param(int paramId) {
        return params.get(paramId);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof P4Action)) {
            return false;
        }
        P4Action a = (P4Action) o;
        return id == a.id && params.equals(a.params);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, params);
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder(name.substring(name.lastIndexOf('.') + 1)).append('(');
        params.forEach((id, v) -> s.append(s.charAt(s.length() - 1) == '(' ? "" : ", ")
                .append(paramNames.getOrDefault(id, "#" + id)).append('=').append(v));
        return s.append(')').toString();
    }

    /** Parameters in P4Info order (ids 1, 2, ...). */
    public static final class Builder {
        private final String name;
        private final int id;
        private final SortedMap<Integer, P4Value> params = new TreeMap<>();
        private final Map<Integer, String> names = new TreeMap<>();

        Builder(String name, int id) {
            this.name = name;
            this.id = id;
        }

        public Builder param(int paramId, String paramName, P4Value value) {
            params.put(paramId, Objects.requireNonNull(value));
            names.put(paramId, paramName);
            return this;
        }

        public P4Action build() {
            return new P4Action(name, id, new TreeMap<>(params), new TreeMap<>(names));
        }
    }
}
