package org.hybridlb.app.core.stats;

import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The fabric's traffic counters read at one instant: byte counters (they only grow, and start again
 * from 0 when their entry is re-created) of the HMux entries per VIP and switch, of the
 * {@code VIP/32} routes per VIP and switch, and of the SMuxes per VIP; which switches and SMuxes
 * could be read (a counter missing from a source that was read is new; from one that was not, its
 * growth is unknown); and the per-DIP rates the host agents measured (already bytes/s).
 */
public final class CounterSample {
    /** What a byte counter counts. */
    public enum Kind {
        /** Everything a VIP's HMux entry on a switch balanced. */
        HMUX_ENTRY,
        /** What a switch sent towards a VIP's HMux over the {@code VIP/32} route. */
        ROUTE,
        /** What an SMux forwarded for a VIP. */
        SMUX
    }

    /** One counter: a kind, a VIP and where (switch or SMux id). */
    static final class Key {
        final Kind kind;
        final String vip;
        final String at;

        Key(Kind kind, String vip, String at) {
            this.kind = kind;
            this.vip = vip;
            this.at = at;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key && ((Key) o).kind == kind && ((Key) o).vip.equals(vip) && ((Key) o).at.equals(at);
        }

        @Override
        public int hashCode() {
            return Objects.hash(kind, vip, at);
        }
    }

    /** Epoch milliseconds of the reading. */
    public final long atMillis;
    final Map<Key, Long> counters;
    final Set<String> read;
    /** VIP -> DIP -> bytes/s. */
    final Map<String, Map<String, Double>> dipRates;

    private CounterSample(Builder b) {
        this.atMillis = b.atMillis;
        this.counters = Collections.unmodifiableMap(new HashMap<>(b.counters));
        this.read = Set.copyOf(b.read);
        Map<String, Map<String, Double>> rates = new TreeMap<>();
        b.dipRates.forEach((v, d) -> rates.put(v, Collections.unmodifiableMap(new TreeMap<>(d))));
        this.dipRates = Collections.unmodifiableMap(rates);
    }

    /** A sample read at {@code atMillis} (epoch ms). */
    public static Builder at(long atMillis) {
        return new Builder(atMillis);
    }

    /** Collects one reading; counters of the same key add up (several flows of one VIP on a switch). */
    public static final class Builder {
        private final long atMillis;
        private final Map<Key, Long> counters = new HashMap<>();
        private final Set<String> read = new HashSet<>();
        private final Map<String, Map<String, Double>> dipRates = new HashMap<>();

        private Builder(long atMillis) {
            this.atMillis = atMillis;
        }

        public Builder hmuxEntryBytes(String vip, String switchId, long bytes) {
            return add(Kind.HMUX_ENTRY, vip, switchId, bytes);
        }

        public Builder routeBytes(String vip, String switchId, long bytes) {
            return add(Kind.ROUTE, vip, switchId, bytes);
        }

        public Builder smuxBytes(String vip, String smuxId, long bytes) {
            return add(Kind.SMUX, vip, smuxId, bytes);
        }

        private Builder add(Kind kind, String vip, String at, long bytes) {
            counters.merge(new Key(kind, vip, at), bytes, Long::sum);
            return this;
        }

        /** {@code id} (a switch or an SMux) was read: every counter it has is in this sample. */
        public Builder read(String id) {
            read.add(id);
            return this;
        }

        /** A host agent's rate of {@code vip}'s traffic decapsulated on {@code dip}, in bytes/s. */
        public Builder dipRate(String vip, String dip, double bytesPerSecond) {
            dipRates.computeIfAbsent(vip, k -> new HashMap<>()).merge(dip, bytesPerSecond, Double::sum);
            return this;
        }

        public CounterSample build() {
            return new CounterSample(this);
        }
    }
}
