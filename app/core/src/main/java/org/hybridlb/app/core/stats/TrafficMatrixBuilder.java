package org.hybridlb.app.core.stats;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;

/**
 * Turns counter samples into the traffic matrix the controller assigns on, the same way for every
 * host. Thread-safe ({@link #add} from the host's poller, {@link #last} from the controller).
 *
 * <p><b>Windowing.</b> Rates are counter growth over the samples of the last {@link #WINDOW} (at
 * least one sampling period), so that second-to-second noise does not make the assignment swap
 * VIPs of similar rates back and forth. A counter that went down was re-created and counts from 0;
 * a counter new in a sample counts whole if its switch or SMux was read in the sample before, else
 * nothing (its growth is unknown). No interval is published before the samples span
 * min({@link #WINDOW}, three sampling periods).
 *
 * <p><b>Attribution</b>, per VIP, with H the rate its HMux entries balanced (all switches), S the
 * rate the SMuxes forwarded and T = H + S its traffic:
 * <ul>
 * <li>a ToR's {@code VIP/32} route carries what enters the fabric there (its hosts) towards the
 *     HMux: that ToR is a source. Routes of other switches count the same packets again in transit
 *     and are not. The ToR routes feed H, so together they never exceed it (scaled down if the
 *     counters, read at slightly different instants, say otherwise);</li>
 * <li>what the HMux entries balanced beyond that reached the HMux without a ToR route: from the
 *     hosts of the HMux itself when it is a ToR (that ToR is the source), else from outside the
 *     ToRs ({@link VipTraffic#INTERNET}); shared over the VIP's HMuxes by their entries' bytes.
 *     (Internet traffic to a ToR HMux cannot be told apart from its own hosts' and counts as
 *     theirs.);</li>
 * <li>S: the aggregate is ECMP-routed to the SMuxes from everywhere, so its source is unknown:
 *     {@link VipTraffic#INTERNET};</li>
 * <li>the host agents' per-DIP rates are shares of T: scaled so that they add up to it (the
 *     sources give the VIP's traffic; the DIPs only split it);</li>
 * <li>a VIP no mux counted but whose DIPs' agents did: T is the agents' sum, from
 *     {@link VipTraffic#INTERNET}.</li>
 * </ul>
 */
public final class TrafficMatrixBuilder {
    /** Rates are averaged over this long (and at least one sampling period). */
    public static final Duration WINDOW = Duration.ofSeconds(5);
    /** A first interval needs samples spanning this many sampling periods (or the window, if shorter). */
    static final int MIN_PERIODS = 3;

    private final Supplier<Topology> topology;
    private final long keepMillis;
    private final long minSpanMillis;
    /** Oldest first, covering the window. */
    private final ArrayDeque<CounterSample> samples = new ArrayDeque<>();
    private int index;
    private volatile TrafficInterval last;

    /** {@code topology}: the fabric now (switch roles); {@code period}: how often the host samples. */
    public TrafficMatrixBuilder(Supplier<Topology> topology, Duration period) {
        this.topology = topology;
        this.keepMillis = Math.max(WINDOW.toMillis(), period.toMillis());
        this.minSpanMillis = Math.min(WINDOW.toMillis(), MIN_PERIODS * period.toMillis());
    }

    /** The last interval published, or null before the first. */
    public TrafficInterval last() {
        return last;
    }

    /** Adds a sample; returns the interval it completes (also {@link #last}), or null when none yet. */
    public synchronized TrafficInterval add(CounterSample s) {
        if (!samples.isEmpty() && s.atMillis <= samples.peekLast().atMillis) {
            return null; // the clock went back, or the same instant twice: no rate from it
        }
        samples.addLast(s);
        // drop the oldest while the rest still span the window: the window covers at least keepMillis
        while (samples.size() > 2 && s.atMillis - second().atMillis >= keepMillis) {
            samples.removeFirst();
        }
        CounterSample first = samples.peekFirst();
        long span = s.atMillis - first.atMillis;
        if (samples.size() < 2 || span < minSpanMillis) {
            return null;
        }
        last = matrix(growth(), span / 1000.0, first.atMillis, s);
        return last;
    }

    private CounterSample second() {
        Iterator<CounterSample> it = samples.iterator();
        it.next();
        return it.next();
    }

    /** Per counter, its growth over the window. */
    private Map<CounterSample.Key, Long> growth() {
        Map<CounterSample.Key, Long> sum = new HashMap<>();
        Iterator<CounterSample> it = samples.iterator();
        CounterSample prev = it.next();
        while (it.hasNext()) {
            CounterSample cur = it.next();
            for (Map.Entry<CounterSample.Key, Long> e : cur.counters.entrySet()) {
                Long before = prev.counters.get(e.getKey());
                long d;
                if (before == null) {
                    d = prev.read.contains(e.getKey().at) ? e.getValue() : 0;
                } else {
                    d = e.getValue() < before ? e.getValue() : e.getValue() - before;
                }
                sum.merge(e.getKey(), d, Long::sum);
            }
            prev = cur;
        }
        return sum;
    }

    private TrafficInterval matrix(Map<CounterSample.Key, Long> growth, double seconds, long startMillis,
                                   CounterSample newest) {
        Map<String, Map<String, Double>> hmux = new TreeMap<>();
        Map<String, Map<String, Double>> routes = new TreeMap<>();
        Map<String, Double> smux = new TreeMap<>();
        for (Map.Entry<CounterSample.Key, Long> e : growth.entrySet()) {
            if (e.getValue() <= 0) {
                continue;
            }
            CounterSample.Key k = e.getKey();
            double rate = e.getValue() / seconds;
            switch (k.kind) {
                case HMUX_ENTRY:
                    hmux.computeIfAbsent(k.vip, v -> new TreeMap<>()).merge(k.at, rate, Double::sum);
                    break;
                case ROUTE:
                    routes.computeIfAbsent(k.vip, v -> new TreeMap<>()).merge(k.at, rate, Double::sum);
                    break;
                default:
                    smux.merge(k.vip, rate, Double::sum);
            }
        }
        Set<String> tors = new TreeSet<>();
        for (Switch sw : topology.get().switches) {
            if (sw.role == SwitchRole.TOR) {
                tors.add(sw.id);
            }
        }
        Set<String> vips = new TreeSet<>(hmux.keySet());
        vips.addAll(smux.keySet());
        vips.addAll(newest.dipRates.keySet());
        List<VipTraffic> out = new ArrayList<>();
        for (String v : vips) {
            Map<String, Double> sources = sources(hmux.getOrDefault(v, Map.of()), routes.getOrDefault(v, Map.of()),
                    smux.getOrDefault(v, 0.0), tors);
            Map<String, Double> dips = new TreeMap<>(newest.dipRates.getOrDefault(v, Map.of()));
            dips.values().removeIf(r -> !(r > 0));
            double measured = sum(dips);
            if (sources.isEmpty() && measured > 0) {
                sources.put(VipTraffic.INTERNET, measured); // only the agents saw it
            }
            double total = sum(sources);
            if (total <= 0) {
                continue;
            }
            dips.replaceAll((dip, r) -> r / measured * total);
            out.add(new VipTraffic(v, sources, dips));
        }
        long secs = Math.max(1, Math.round(seconds));
        return new TrafficInterval(index++, startMillis / 1000, secs, out);
    }

    private static Map<String, Double> sources(Map<String, Double> hmux, Map<String, Double> routes, double smux,
                                               Set<String> tors) {
        Map<String, Double> out = new TreeMap<>();
        double balanced = sum(hmux);
        Map<String, Double> fromTors = new TreeMap<>(routes);
        fromTors.keySet().retainAll(tors);
        double routed = sum(fromTors);
        double scale = routed > balanced ? balanced / routed : 1;
        fromTors.forEach((tor, r) -> out.merge(tor, r * scale, Double::sum));
        double rest = balanced - routed * scale;
        if (rest > 0) {
            hmux.forEach((sw, r) -> out.merge(tors.contains(sw) ? sw : VipTraffic.INTERNET, rest * r / balanced,
                    Double::sum));
        }
        if (smux > 0) {
            out.merge(VipTraffic.INTERNET, smux, Double::sum);
        }
        out.values().removeIf(r -> !(r > 0));
        return out;
    }

    private static double sum(Map<String, Double> m) {
        double s = 0;
        for (double v : m.values()) {
            s += v;
        }
        return s;
    }
}
