package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.IntentDiff;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.Test;

/**
 * A VIP changing HMux, leaving one for the SMuxes or arriving on one: whatever subset of a phase's
 * switches has applied its delta (on top of the phases before), a packet of the VIP entering at any
 * switch reaches an HMux that holds it or an SMux, on every ECMP path, and never loops. Sent as one
 * batch, some order of the switches loops it (the checker sees what the phases prevent).
 */
class DeltaPhasesTest {
    static final Topology TOPO = FatTree.generate(4);
    static final String VIP = "10.100.1.1";
    static final String AGGREGATE = "10.100.0.0/16";
    static final Map<String, String> SMUX_TORS = Map.of("smux-0", "tor-0-0", "smux-1", "tor-2-0");
    static final ServiceMatch SERVICE = new ServiceMatch(VIP, "any", 0);
    static final List<DipBucket> POOL = List.of(new DipBucket(0, "10.0.0.2", "10.0.0.2", 1));
    static final List<String> SWITCHES = new ArrayList<>();

    static {
        for (Switch s : TOPO.switches) {
            SWITCHES.add(s.id);
        }
    }

    /** Every switch's intent with the VIP on {@code hmux} (null: on the SMuxes only). */
    static Map<String, SwitchIntent> fabricWith(String hmux) {
        Map<String, SwitchIntent> out = new LinkedHashMap<>();
        for (String sw : SWITCHES) {
            SwitchIntent.Builder b = SwitchIntent.builder().aggregate(AGGREGATE, SMUX_TORS.keySet());
            if (sw.equals(hmux)) {
                b.entry(SERVICE, POOL);
            } else if (hmux != null) {
                b.route(VIP, hmux);
            }
            out.put(sw, b.build());
        }
        return out;
    }

    static Map<String, SwitchDelta> deltas(Map<String, SwitchIntent> from, Map<String, SwitchIntent> to) {
        Map<String, SwitchDelta> out = new LinkedHashMap<>();
        from.forEach((sw, have) -> {
            SwitchDelta d = IntentDiff.diff(to.get(sw), SwitchReading.of(have));
            if (!d.isEmpty()) {
                out.put(sw, d);
            }
        });
        return out;
    }

    static List<Map<String, SwitchDelta>> phases(Map<String, SwitchIntent> from, Map<String, SwitchIntent> to) {
        return DeltaPhases.of(deltas(from, to), from, TOPO, SWITCHES);
    }

    @Test
    void aVipLeavingItsHmuxForTheSmuxesNeverLoops() {
        Map<String, SwitchIntent> from = fabricWith("agg-1-0");
        List<Map<String, SwitchDelta>> phases = phases(from, fabricWith(null));
        assertEverySubsetDelivers(from, phases);
        Map<String, SwitchDelta> last = phases.get(phases.size() - 1);
        assertEquals(Set.of("agg-1-0"), last.keySet(), "the HMux's entries go last");
        // agg-3-1 is 4 hops from agg-1-0 (through a core, agg-3-0 and a ToR), core-0 is its neighbour
        assertTrue(phases.get(0).containsKey("agg-3-1"), "the farthest switches drop the route first: " + phases.get(0));
        assertTrue(phases.get(phases.size() - 2).containsKey("core-0"), "its neighbours last: " + phases);
    }

    @Test
    void aVipArrivingOnAnHmuxNeverLoops() {
        Map<String, SwitchIntent> from = fabricWith(null);
        List<Map<String, SwitchDelta>> phases = phases(from, fabricWith("agg-1-0"));
        assertEverySubsetDelivers(from, phases);
        assertEquals(Set.of("agg-1-0"), phases.get(0).keySet(), "the HMux's entries come first");
    }

    @Test
    void aVipMovingBetweenHmuxesNeverLoops() {
        for (String[] move : new String[][] {{"agg-1-0", "agg-1-1"}, {"agg-1-0", "agg-3-1"}, {"tor-0-1", "core-2"}}) {
            Map<String, SwitchIntent> from = fabricWith(move[0]);
            assertEverySubsetDelivers(from, phases(from, fabricWith(move[1])));
        }
    }

    @Test
    void eachPhaseCarriesTheIntentItLeavesAndTheLastOneTheWholeTarget() {
        Map<String, SwitchIntent> from = fabricWith("agg-1-0");
        Map<String, SwitchIntent> to = fabricWith("agg-3-1");
        Map<String, SwitchIntent> now = new HashMap<>(from);
        for (Map<String, SwitchDelta> phase : phases(from, to)) {
            phase.forEach((sw, d) -> {
                assertEquals(now.get(sw).after(d), d.target, sw);
                now.put(sw, d.target);
            });
        }
        assertEquals(to, now);
    }

    @Test
    void theCheckerSeesTheLoopOfOneBatch() {
        Map<String, SwitchIntent> from = fabricWith("agg-1-0");
        Map<String, SwitchDelta> all = deltas(from, fabricWith(null));
        // the HMux dropped its entries before the cores dropped their routes towards it
        Map<String, SwitchIntent> partial = new HashMap<>(from);
        partial.put("agg-1-0", from.get("agg-1-0").after(all.get("agg-1-0")));
        String bad = undelivered(partial);
        assertNotNull(bad, "the HMux sends the VIP up its aggregate to a core that sends it back");
        assertTrue(bad.startsWith("loop"), bad);
    }

    /** Applies the phases one by one; within each, random subsets of its switches first. */
    static void assertEverySubsetDelivers(Map<String, SwitchIntent> from, List<Map<String, SwitchDelta>> phases) {
        Random rng = new Random(7);
        Map<String, SwitchIntent> now = new HashMap<>(from);
        String none = undelivered(now);
        assertEquals(null, none, "before");
        for (int p = 0; p < phases.size(); p++) {
            List<String> sws = new ArrayList<>(phases.get(p).keySet());
            for (int trial = 0; trial < 300; trial++) {
                Map<String, SwitchIntent> partial = new HashMap<>(now);
                for (String sw : sws) {
                    if (rng.nextBoolean()) {
                        partial.put(sw, partial.get(sw).after(phases.get(p).get(sw)));
                    }
                }
                String bad = undelivered(partial);
                assertEquals(null, bad, "phase " + p + " of " + phases.size() + ", applied on "
                        + applied(partial, now));
            }
            phases.get(p).forEach((sw, d) -> now.put(sw, now.get(sw).after(d)));
        }
        assertEquals(null, undelivered(now), "after");
    }

    static Set<String> applied(Map<String, SwitchIntent> partial, Map<String, SwitchIntent> before) {
        Set<String> out = new TreeSet<>();
        partial.forEach((sw, i) -> {
            if (!i.equals(before.get(sw))) {
                out.add(sw);
            }
        });
        return out;
    }

    /** Why a packet of the VIP entering at some switch is not delivered (loop or black hole); null if every one is. */
    static String undelivered(Map<String, SwitchIntent> intents) {
        for (String sw : SWITCHES) {
            String bad = follow(intents, sw, new ArrayList<>(), null);
            if (bad != null) {
                return bad;
            }
        }
        return null;
    }

    /**
     * Follows every ECMP path from {@code sw}. On the aggregate a flow keeps the SMux it was
     * hashed to ({@code smux}): every switch hashes it alike over the same SMuxes.
     */
    static String follow(Map<String, SwitchIntent> intents, String sw, List<String> path, String smux) {
        if (path.contains(sw)) {
            path.add(sw);
            return "loop " + path;
        }
        path.add(sw);
        try {
            SwitchIntent i = intents.get(sw);
            if (!i.entriesOf(VIP).isEmpty()) {
                return null;
            }
            String hmux = i.routes.get(VIP);
            if (hmux != null) {
                return next(intents, sw, hmux, path, smux);
            }
            String agg = i.coveringAggregate(VIP);
            if (agg == null) {
                return "black hole at " + path;
            }
            Set<String> choices = smux != null && i.aggregates.get(agg).contains(smux) ? Set.of(smux) : i.aggregates.get(agg);
            for (String m : choices) {
                String bad = SMUX_TORS.get(m).equals(sw) ? null : next(intents, sw, SMUX_TORS.get(m), path, m);
                if (bad != null) {
                    return bad;
                }
            }
            return null;
        } finally {
            path.remove(path.size() - 1);
        }
    }

    static String next(Map<String, SwitchIntent> intents, String sw, String to, List<String> path, String smux) {
        for (String n : closer(sw, to)) {
            String bad = follow(intents, n, path, smux);
            if (bad != null) {
                return bad;
            }
        }
        return null;
    }

    /** Neighbours of {@code sw} one hop closer to {@code to}: its ECMP next hops. */
    static List<String> closer(String sw, String to) {
        Map<String, Integer> d = hops(to);
        List<String> out = new ArrayList<>();
        for (Link l : TOPO.links) {
            String other = l.a.equals(sw) ? l.b : l.b.equals(sw) ? l.a : null;
            if (other != null && d.get(other) == d.get(sw) - 1) {
                out.add(other);
            }
        }
        return out;
    }

    static final Map<String, Map<String, Integer>> HOPS = new HashMap<>();

    static Map<String, Integer> hops(String from) {
        return HOPS.computeIfAbsent(from, DeltaPhasesTest::bfs);
    }

    static Map<String, Integer> bfs(String from) {
        Map<String, Integer> d = new HashMap<>();
        List<String> todo = new ArrayList<>(List.of(from));
        d.put(from, 0);
        for (int i = 0; i < todo.size(); i++) {
            String u = todo.get(i);
            for (Link l : TOPO.links) {
                String w = l.a.equals(u) ? l.b : l.b.equals(u) ? l.a : null;
                if (w != null && d.putIfAbsent(w, d.get(u) + 1) == null) {
                    todo.add(w);
                }
            }
        }
        return d;
    }
}
