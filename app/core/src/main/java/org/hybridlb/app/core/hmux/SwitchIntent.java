package org.hybridlb.app.core.hmux;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.hybridlb.solver.model.Ipv4;

/**
 * What one switch holds for hybridlb, device-neutral and immutable: HMux entries (each service
 * with its buckets in bucket-id order, and for a cheetah VIP's service on a switch that decodes
 * its cookies, what it decodes them with), {@code VIP/32} routes towards the VIP's HMux (by switch
 * id), aggregates routed to live SMuxes (by SMux id), and whether routes fall back to the
 * aggregates in the data path when their HMux is unreachable. The core builds the desired one of
 * each switch, readers give the one a switch holds, and {@link IntentDiff} compares them.
 */
public final class SwitchIntent {
    public static final SwitchIntent EMPTY = new Builder().build();

    public final SortedMap<ServiceMatch, List<DipBucket>> entries;
    /** The entries whose switch decodes their Cheetah cookies, with how (a subset of {@link #entries}' keys). */
    public final SortedMap<ServiceMatch, CookieDecode> cookies;
    /** VIP -> the switch its HMux entry is on. */
    public final SortedMap<String, String> routes;
    /** Aggregate prefix -> the SMuxes of its group. */
    public final SortedMap<String, SortedSet<String>> aggregates;
    public final boolean fallback;

    private SwitchIntent(Builder b) {
        SortedMap<ServiceMatch, List<DipBucket>> e = new TreeMap<>();
        b.entries.forEach((k, v) -> e.put(k, List.copyOf(v)));
        SortedMap<String, SortedSet<String>> a = new TreeMap<>();
        b.aggregates.forEach((k, v) -> a.put(k, Collections.unmodifiableSortedSet(new TreeSet<>(v))));
        for (ServiceMatch m : b.cookies.keySet()) {
            if (!e.containsKey(m)) {
                throw new IllegalArgumentException("cookies of " + m + ", which has no entry");
            }
        }
        this.entries = Collections.unmodifiableSortedMap(e);
        this.cookies = Collections.unmodifiableSortedMap(new TreeMap<>(b.cookies));
        this.routes = Collections.unmodifiableSortedMap(new TreeMap<>(b.routes));
        this.aggregates = Collections.unmodifiableSortedMap(a);
        this.fallback = b.fallback;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this intent, to change. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.entries.putAll(entries);
        b.cookies.putAll(cookies);
        b.routes.putAll(routes);
        b.aggregates.putAll(aggregates);
        b.fallback = fallback;
        return b;
    }

    /** The entries of {@code vip}, by service. */
    public SortedMap<ServiceMatch, List<DipBucket>> entriesOf(String vip) {
        SortedMap<ServiceMatch, List<DipBucket>> out = new TreeMap<>();
        entries.forEach((m, b) -> {
            if (m.vip.equals(vip)) {
                out.put(m, b);
            }
        });
        return out;
    }

    /** The VIPs with an entry here. */
    public SortedSet<String> entryVips() {
        SortedSet<String> out = new TreeSet<>();
        entries.keySet().forEach(m -> out.add(m.vip));
        return out;
    }

    /**
     * The aggregate a route's fallback sends {@code vip} to: the longest of this switch's
     * aggregates that covers it (longest prefix wins, as in the fallback table), or null.
     */
    public String coveringAggregate(String vip) {
        return coveringAggregate(vip, aggregates.keySet());
    }

    /** The longest of {@code prefixes} that covers {@code vip}, or null. */
    public static String coveringAggregate(String vip, Iterable<String> prefixes) {
        int ip = Ipv4.parse(vip);
        String best = null;
        int bestLen = -1;
        for (String p : prefixes) {
            String[] a = p.split("/");
            int len = a.length > 1 ? Integer.parseInt(a[1]) : 32;
            int mask = len == 0 ? 0 : -1 << (32 - len);
            if ((ip & mask) == (Ipv4.parse(a[0]) & mask) && len > bestLen) {
                best = p;
                bestLen = len;
            }
        }
        return best;
    }

    /** This intent after {@code d} (what a switch holds once it applied the delta). */
    public SwitchIntent after(SwitchDelta d) {
        Builder b = toBuilder();
        d.removeEntries.forEach(b.entries::remove);
        b.entries.putAll(d.putEntries);
        b.cookies.keySet().removeAll(d.removeEntries);
        for (ServiceMatch m : d.putEntries.keySet()) { // an entry is written whole, with its target's cookies
            CookieDecode c = d.target == null ? null : d.target.cookies.get(m);
            if (c == null) {
                b.cookies.remove(m);
            } else {
                b.cookies.put(m, c);
            }
        }
        d.removeRoutes.forEach(b.routes::remove);
        b.routes.values().removeIf(d.withdrawTowards::contains);
        b.routes.putAll(d.putRoutes);
        d.removeAggregates.forEach(b.aggregates::remove);
        b.aggregates.putAll(d.putAggregates);
        if (d.fallback != null) {
            b.fallback = d.fallback;
        }
        return b.build();
    }

    /** Rules this intent takes on a switch (entries, routes, aggregates): for logs. */
    public int size() {
        return entries.size() + routes.size() + aggregates.size();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SwitchIntent)) {
            return false;
        }
        SwitchIntent s = (SwitchIntent) o;
        return entries.equals(s.entries) && cookies.equals(s.cookies) && routes.equals(s.routes) && aggregates.equals(s.aggregates)
                && fallback == s.fallback;
    }

    @Override
    public int hashCode() {
        return Objects.hash(entries, cookies, routes, aggregates, fallback);
    }

    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        entries.forEach((m, b) -> parts.add(m + " " + b + (cookies.containsKey(m) ? " " + cookies.get(m) : "")));
        routes.forEach((v, t) -> parts.add(v + " -> " + t));
        aggregates.forEach((a, m) -> parts.add(a + " -> " + m));
        if (fallback) {
            parts.add("fallback");
        }
        return "{" + String.join(", ", parts) + "}";
    }

    /** Mutable maps to fill, then {@link #build}. */
    public static final class Builder {
        public final Map<ServiceMatch, List<DipBucket>> entries = new TreeMap<>();
        public final Map<ServiceMatch, CookieDecode> cookies = new TreeMap<>();
        public final Map<String, String> routes = new TreeMap<>();
        public final Map<String, SortedSet<String>> aggregates = new TreeMap<>();
        public boolean fallback;

        public Builder entry(ServiceMatch m, List<DipBucket> buckets) {
            entries.put(m, buckets);
            return this;
        }

        /** Decode the cookies of {@code m} (its entry is put too) with {@code c}. */
        public Builder cookies(ServiceMatch m, CookieDecode c) {
            cookies.put(m, c);
            return this;
        }

        public Builder route(String vip, String hmux) {
            routes.put(vip, hmux);
            return this;
        }

        public Builder aggregate(String prefix, java.util.Collection<String> smuxes) {
            aggregates.put(prefix, new TreeSet<>(smuxes));
            return this;
        }

        public Builder fallback(boolean on) {
            fallback = on;
            return this;
        }

        public SwitchIntent build() {
            return new SwitchIntent(this);
        }
    }
}
