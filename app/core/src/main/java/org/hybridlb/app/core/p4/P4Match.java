package org.hybridlb.app.core.p4;

import java.util.Objects;

/** One match field of a table entry, by P4Info id and name: an exact value, or an LPM value and prefix length. */
public final class P4Match implements Comparable<P4Match> {
    /** {@link #prefixLen} of an exact match. */
    public static final int EXACT = -1;

    public final int fieldId;
    public final String name;
    public final P4Value value;
    /** The prefix length of an LPM match; {@link #EXACT} for an exact one. */
    public final int prefixLen;

    private P4Match(int fieldId, String name, P4Value value, int prefixLen) {
        this.fieldId = fieldId;
        this.name = Objects.requireNonNull(name);
        this.value = Objects.requireNonNull(value);
        this.prefixLen = prefixLen;
    }

    public static P4Match exact(int fieldId, String name, P4Value value) {
        return new P4Match(fieldId, name, value, EXACT);
    }

    public static P4Match lpm(int fieldId, String name, P4Value value, int prefixLen) {
        if (prefixLen < 0 || prefixLen > 128) {
            throw new IllegalArgumentException(name + ": prefix length " + prefixLen);
        }
        return new P4Match(fieldId, name, value, prefixLen);
    }

    public boolean isLpm() {
        return prefixLen != EXACT;
    }

    @Override
    public int compareTo(P4Match o) {
        int c = Integer.compare(fieldId, o.fieldId);
        c = c != 0 ? c : value.compareTo(o.value);
        return c != 0 ? c : Integer.compare(prefixLen, o.prefixLen);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof P4Match)) {
            return false;
        }
        P4Match m = (P4Match) o;
        return fieldId == m.fieldId && value.equals(m.value) && prefixLen == m.prefixLen;
    }

    @Override
    public int hashCode() {
        return Objects.hash(fieldId, value, prefixLen);
    }

    @Override
    public String toString() {
        return name + "=" + value + (isLpm() ? "/" + prefixLen : "");
    }
}
