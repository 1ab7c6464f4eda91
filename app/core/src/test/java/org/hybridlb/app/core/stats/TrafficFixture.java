package org.hybridlb.app.core.stats;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.SolverOptions;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.routing.Fabric;
import org.hybridlb.solver.topology.FatTree;

/**
 * Counter readings of a k=4 fat-tree, shared by the core's test of the traffic-matrix rule and by
 * each host's test of its adapter (the daemon's OVS dumps, the ONOS flow entries): every host
 * renders these readings into what its devices would answer, runs its adapter, and must get
 * {@link #MATRIX} and {@link #PLACEMENT} exactly. Four readings 2 s apart (the sampling period):
 * <ul>
 * <li>VIP .1 on the ToR HMux tor-1-0: routes from tor-0-0 and tor-2-0 (and, in transit, from agg-0-0
 *     and core-0: not sources); its host agents' DIP rates add up to more than its traffic;</li>
 * <li>VIP .2 on the agg HMux agg-2-0: a route from tor-2-1 whose counter restarts;</li>
 * <li>VIP .3 on the SMuxes: smux-1 does not answer in the third reading;</li>
 * <li>VIP .4: only its host agents see traffic;</li>
 * <li>VIP .5: its HMux entry on tor-3-1 appears in the third reading;</li>
 * <li>VIP .6 on the core HMux core-1: its ToR route counted more than the entry (read later).</li>
 * </ul>
 * tor-2-0 cannot be read in the second reading (its route's growth until the fourth is unknown).
 */
public final class TrafficFixture {
    public static final Duration PERIOD = Duration.ofSeconds(2);
    public static final long T0 = 1_700_000_000_000L;
    /** Bytes per counter unit: the VIPs carry hundreds of Mbit/s, so links decide the placement. */
    public static final long UNIT = 100_000;
    /** The interval every host must publish after the last reading (JSON, as the solver reads it). */
    public static final String MATRIX = "stats/two-hosts-matrix.json";
    /** Where the sticky assignment puts the VIPs on that interval, from the SMuxes. */
    public static final String PLACEMENT = "stats/two-hosts-placement.json";

    /** One byte counter. */
    public static final class Counter {
        public final CounterSample.Kind kind;
        public final String vip;
        /** Switch or SMux id. */
        public final String at;
        public final long bytes;

        Counter(CounterSample.Kind kind, String vip, String at, long bytes) {
            this.kind = kind;
            this.vip = vip;
            this.at = at;
            this.bytes = bytes;
        }
    }

    /** What the devices answered at one instant. */
    public static final class Reading {
        public final long atMillis;
        public final List<Counter> counters = new ArrayList<>();
        /** Switches and SMuxes that answered; the others' counters are unknown this time. */
        public final Set<String> read = new TreeSet<>();
        /** VIP -> DIP -> bytes/s, as the host agents report. */
        public final Map<String, Map<String, Double>> dipRates = new LinkedHashMap<>();

        Reading(long atMillis, Topology t, String... unread) {
            this.atMillis = atMillis;
            t.switches.forEach(s -> read.add(s.id));
            t.smuxes.forEach(m -> read.add(m.id));
            read.removeAll(List.of(unread));
        }

        Reading hmux(String vip, String sw, long units) {
            counters.add(new Counter(CounterSample.Kind.HMUX_ENTRY, vip, sw, units * UNIT));
            return this;
        }

        Reading route(String vip, String sw, long units) {
            counters.add(new Counter(CounterSample.Kind.ROUTE, vip, sw, units * UNIT));
            return this;
        }

        Reading smux(String vip, String smux, long units) {
            counters.add(new Counter(CounterSample.Kind.SMUX, vip, smux, units * UNIT));
            return this;
        }

        Reading agent(String vip, String dip, double units) {
            dipRates.computeIfAbsent(vip, v -> new LinkedHashMap<>()).put(dip, units * UNIT);
            return this;
        }

        /** The reading as the typed sample a host builds (counters of the sources it could read). */
        public CounterSample sample() {
            CounterSample.Builder b = CounterSample.at(atMillis);
            for (Counter c : counters) {
                if (!read.contains(c.at)) {
                    continue;
                }
                switch (c.kind) {
                    case HMUX_ENTRY:
                        b.hmuxEntryBytes(c.vip, c.at, c.bytes);
                        break;
                    case ROUTE:
                        b.routeBytes(c.vip, c.at, c.bytes);
                        break;
                    default:
                        b.smuxBytes(c.vip, c.at, c.bytes);
                }
            }
            read.forEach(b::read);
            dipRates.forEach((v, d) -> d.forEach((dip, r) -> b.dipRate(v, dip, r)));
            return b.build();
        }
    }

    private TrafficFixture() {
    }

    /** SMuxes answering {@code GET /stats} with the counters of the reading {@code now} gives. */
    public static SmuxControl smuxes(Supplier<Reading> now) {
        return new SmuxControl() {
            @Override
            public Map<String, Long> vipBytes(String smuxId) {
                Reading r = now.get();
                if (!r.read.contains(smuxId)) {
                    throw new SouthboundException("SMux " + smuxId + " unreachable");
                }
                Map<String, Long> out = new LinkedHashMap<>();
                r.counters.stream().filter(c -> c.kind == CounterSample.Kind.SMUX && c.at.equals(smuxId))
                        .forEach(c -> out.merge(c.vip, c.bytes, Long::sum));
                return out;
            }

            @Override
            public void putTable(String smuxId, SmuxTable table) {
                throw new UnsupportedOperationException("only counters are read here");
            }

            @Override
            public SmuxTable getTable(String smuxId) {
                throw new UnsupportedOperationException("only counters are read here");
            }
        };
    }

    public static Topology topology() {
        return FatTree.generate(4);
    }

    public static List<Reading> readings() {
        Topology t = topology();
        List<Reading> out = new ArrayList<>();
        long[] hmux1 = {0, 6000, 12000, 18000};
        long[] hmux2 = {0, 4000, 8000, 12000};
        long[] route2 = {0, 2400, 600, 1800};
        for (int i = 0; i < 4; i++) {
            Reading r = new Reading(T0 + i * PERIOD.toMillis(), t, i == 1 ? new String[] {"tor-2-0"}
                    : i == 2 ? new String[] {"smux-1"} : new String[0]);
            r.hmux("10.100.0.1", "tor-1-0", hmux1[i]).route("10.100.0.1", "tor-0-0", 1200L * i)
                    .route("10.100.0.1", "tor-2-0", 600L * i).route("10.100.0.1", "agg-0-0", 1200L * i)
                    .route("10.100.0.1", "core-0", 1800L * i);
            r.hmux("10.100.0.2", "agg-2-0", hmux2[i]).route("10.100.0.2", "tor-2-1", route2[i]);
            r.smux("10.100.0.3", "smux-0", 3000L * i);
            if (i != 2) {
                r.smux("10.100.0.3", "smux-1", 1200L * i);
            }
            if (i >= 2) {
                r.hmux("10.100.0.5", "tor-3-1", i == 2 ? 600 : 1800);
            }
            r.hmux("10.100.0.6", "core-1", 600L * i).route("10.100.0.6", "tor-0-1", 1200L * i);
            r.agent("10.100.0.1", "10.0.0.129", 1000).agent("10.100.0.1", "10.0.1.1", 3000)
                    .agent("10.100.0.3", "10.0.1.129", 500).agent("10.100.0.3", "10.0.1.130", 500)
                    .agent("10.100.0.4", "10.0.1.193", 400).agent("10.100.0.4", "10.0.1.194", 200);
            out.add(r);
        }
        return out;
    }

    /** The fixture's VIPs (tcp/80, each DIP a host of the topology). */
    public static VipSet vips() {
        List<Vip> vips = new ArrayList<>();
        vips.add(vip("10.100.0.1", "10.0.0.129", "10.0.1.1"));
        vips.add(vip("10.100.0.2", "10.0.1.65", "10.0.1.66"));
        vips.add(vip("10.100.0.3", "10.0.1.129", "10.0.1.130"));
        vips.add(vip("10.100.0.4", "10.0.1.193", "10.0.1.194"));
        vips.add(vip("10.100.0.5", "10.0.0.65"));
        vips.add(vip("10.100.0.6", "10.0.0.66"));
        return new VipSet(vips);
    }

    private static Vip vip(String vip, String... dips) {
        List<Dip> d = new ArrayList<>();
        for (String ip : dips) {
            d.add(new Dip(ip, 1, null));
        }
        return new Vip(vip, "10.100.0.0/16", List.of(new VipPort("tcp", 80, d)));
    }

    /** The sticky assignment of {@link #vips} on {@code interval}, every VIP starting on the SMuxes. */
    public static Map<String, String> placement(TrafficInterval interval) {
        Topology t = topology();
        Instance instance = Instance.build(t, new Fabric(t), vips(), interval, SolverOptions.defaults());
        Map<String, String> from = new LinkedHashMap<>();
        vips().vips.forEach(v -> from.put(v.vip, Assignment.SMUX));
        return Algorithms.get("sticky").assign(instance, new Assignment("installed", from, 0, 0, 0, null)).assignment;
    }

    /** A resource of this fixture (the pinned matrix and placement), as text. */
    public static String resource(String name) {
        try (InputStream in = TrafficFixture.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("no resource " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The pinned form of an interval (compared as text). */
    public static String json(Object value) {
        try {
            return Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(value) + "\n";
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
