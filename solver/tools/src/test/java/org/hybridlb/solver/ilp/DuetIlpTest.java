package org.hybridlb.solver.ilp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.ObjDoubleConsumer;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.statistics.Statistics;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.solver.assign.Feasibility;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.NoAssignmentException;
import org.hybridlb.solver.assign.SolverOptions;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.model.VipTraffic;
import org.junit.jupiter.api.Test;

/**
 * The Duet ILP on fabrics small enough to enumerate every assignment: core c0, agg a0, ToRs t0
 * and t1 (links t0-a0, t1-a0, a0-c0), hosts h0..h5 under t1.
 */
class DuetIlpTest {
    static final MipOptions MIP = MipOptions.DEFAULTS.withTimeLimit(20).withGap(0);
    static final DuetIlp.Options OPTS = new DuetIlp.Options(MIP, false, null);

    static Topology fabric(TableCapacity core, TableCapacity agg, TableCapacity t0, TableCapacity t1,
                           double torLinkBps) {
        List<Switch> sw = List.of(new Switch("c0", SwitchRole.CORE, null, core),
                new Switch("a0", SwitchRole.AGG, 0, agg),
                new Switch("t0", SwitchRole.TOR, 0, t0),
                new Switch("t1", SwitchRole.TOR, 0, t1));
        List<Link> links = List.of(new Link("t0", "a0", torLinkBps), new Link("t1", "a0", 1e12),
                new Link("a0", "c0", 1e12));
        List<Host> hosts = new ArrayList<>();
        for (int h = 0; h < 6; h++) {
            hosts.add(new Host("h" + h, "10.0.1." + (h + 1), "t1"));
        }
        return new Topology("tiny", sw, links, hosts, List.of());
    }

    /** A VIP 100.0.0.i whose DIPs are the given hosts (one tunnel entry each). */
    static Vip vip(int i, int... hosts) {
        List<Dip> dips = new ArrayList<>();
        for (int h : hosts) {
            dips.add(new Dip("10.0.1." + (h + 1), 1, null));
        }
        return new Vip("100.0.0." + i, "100.0.0.0/24", List.of(new VipPort("any", 0, dips)));
    }

    static TrafficInterval traffic(double... bytesPerSecond) {
        List<VipTraffic> vt = new ArrayList<>();
        for (int i = 0; i < bytesPerSecond.length; i++) {
            vt.add(new VipTraffic("100.0.0." + (i + 1), Map.of(VipTraffic.INTERNET, bytesPerSecond[i]), null));
        }
        return new TrafficInterval(0, 0, 600, vt);
    }

    static final TableCapacity NONE = new TableCapacity(16384, 0, 0);

    @Test
    void memoryKnapsackWhereGreedyIsSuboptimal() {
        // Only t0 can hold VIPs: 3 tunnel entries. A (2 DIPs, 10) then B (1 DIP, 6) fill it: 16.
        // Leaving A out and taking B, C, D (1 DIP, 6 each) carries 18.
        Topology t = fabric(NONE, NONE, new TableCapacity(16384, 100, 3), NONE, 1e12);
        VipSet vips = new VipSet(List.of(vip(1, 0, 1), vip(2, 2), vip(3, 3), vip(4, 4)));
        Instance in = Instance.build(t, vips, traffic(10e6, 6e6, 6e6, 6e6), SolverOptions.defaults());
        Assignment greedy = Algorithms.get("greedy-skip").assign(in, null);
        assertEquals(16.0 / 28, greedy.hmuxTrafficShare, 1e-9);
        Assignment ilp = DuetIlp.solve(in, null, OPTS);
        assertEquals(18.0 / 28, ilp.hmuxTrafficShare, 1e-9);
        assertEquals(Assignment.SMUX, ilp.placementOf("100.0.0.1"));
        assertEquals("t0", ilp.placementOf("100.0.0.4"));
        assertEquals("optimal", ilp.solver.status);
        assertEquals(0.0, ilp.solver.gap, 1e-9);
        assertEquals(16.0 / 28, ilp.solver.warmStart, 1e-9);
        assertEquals(List.of(), Feasibility.violations(in, ilp));
        assertEquals(bruteForceBest(in), ilp.hmuxTrafficShare, 1e-9);
    }

    @Test
    void linkKnapsackIsSolvedWithLazyLinkRows() {
        // Only t0 holds VIPs, and their Internet traffic crosses a0->t0 and t0->a0. With room for
        // 1.0 units, greedy takes A (0.6) and nothing else fits; B + C (0.45 each) carry 0.9.
        Topology t = fabric(NONE, NONE, new TableCapacity(16384, 100, 100), NONE, 1e9);
        VipSet vips = new VipSet(List.of(vip(1, 0), vip(2, 1), vip(3, 2)));
        Instance probe = Instance.build(t, vips, traffic(1, 1, 1), SolverOptions.defaults());
        int a0t0 = probe.fabric().linkBetween(probe.switchIndex("a0"), probe.switchIndex("t0"));
        double unit = probe.resources().linkCapacity(a0t0); // usable capacity of a0->t0 (and t0->a0)
        double b = unit / Instance.BITS_PER_BYTE; // traffic files are in bytes/s
        Instance in = Instance.build(t, vips, traffic(0.6 * b, 0.45 * b, 0.45 * b),
                SolverOptions.defaults());
        Assignment greedy = Algorithms.get("greedy-skip").assign(in, null);
        assertEquals(0.6 / 1.5, greedy.hmuxTrafficShare, 1e-9);
        Assignment ilp = DuetIlp.solve(in, null, OPTS);
        assertEquals(0.9 / 1.5, ilp.hmuxTrafficShare, 1e-9, () -> String.join("; ", ilp.solver.notes));
        assertEquals(List.of(), Feasibility.violations(in, ilp));
        assertEquals(bruteForceBest(in), ilp.hmuxTrafficShare, 1e-9);
    }

    @Test
    void migrationBudgetKeepsTheInstalledAssignment() {
        Topology t = fabric(NONE, NONE, new TableCapacity(16384, 100, 3), NONE, 1e12);
        VipSet vips = new VipSet(List.of(vip(1, 0, 1), vip(2, 2), vip(3, 3), vip(4, 4)));
        Instance in = Instance.build(t, vips, traffic(10e6, 6e6, 6e6, 6e6), SolverOptions.defaults());
        Map<String, String> installed = new LinkedHashMap<>();
        installed.put("100.0.0.1", "t0");
        installed.put("100.0.0.2", "t0");
        Assignment current = new Assignment("greedy", installed, 0, 0, 0, null);
        // Moving A off t0 moves 10/28 of the traffic: a 30% budget forbids it, 40% allows it.
        Assignment tight = DuetIlp.solve(in, current, new DuetIlp.Options(MIP, false, 0.30));
        assertEquals("t0", tight.placementOf("100.0.0.1"));
        assertEquals(16.0 / 28, tight.hmuxTrafficShare, 1e-9);
        assertEquals(0.0, tight.solver.movedShare, 1e-9);
        Assignment loose = DuetIlp.solve(in, current, new DuetIlp.Options(MIP, false, 0.40));
        assertEquals(18.0 / 28, loose.hmuxTrafficShare, 1e-9);
        assertEquals(10.0 / 28, loose.solver.movedShare, 1e-9);
    }

    @Test
    void aBudgetNoAssignmentKeepsIsAnErrorNotABrokenAnswer() {
        // Only t0 holds VIPs (3 tunnel entries). Installed there: A (2 entries), B and C (1 each),
        // 4 entries: one must leave, at least B or C, 6/22 of the traffic.
        Topology t = fabric(NONE, NONE, new TableCapacity(16384, 100, 3), NONE, 1e12);
        VipSet vips = new VipSet(List.of(vip(1, 0, 1), vip(2, 2), vip(3, 3)));
        Instance in = Instance.build(t, vips, traffic(10e6, 6e6, 6e6), SolverOptions.defaults());
        Map<String, String> installed = new LinkedHashMap<>();
        for (String v : List.of("100.0.0.1", "100.0.0.2", "100.0.0.3")) {
            installed.put(v, "t0");
        }
        Assignment current = new Assignment("greedy", installed, 0, 0, 0, null);
        NoAssignmentException e = assertThrows(NoAssignmentException.class,
                () -> DuetIlp.solve(in, current, new DuetIlp.Options(MIP, false, 0.20)));
        assertTrue(e.getMessage().startsWith("--migration-budget 0.2: no assignment found that moves at most "
                + "20.00% of the traffic"), e.getMessage());
        assertTrue(e.getMessage().endsWith("moves 27.27%"), e.getMessage());
        Assignment kept = DuetIlp.solve(in, current, new DuetIlp.Options(MIP, false, 0.30));
        assertEquals(16.0 / 22, kept.hmuxTrafficShare, 1e-9);
        assertEquals(6.0 / 22, kept.solver.movedShare, 1e-9);
        assertEquals(List.of(), Feasibility.violations(in, kept));
    }

    @Test
    void secondaryObjectiveLowersTheMruAtEqualTraffic() {
        // Two ToRs with 6 tunnel entries; A(3) B(3) C(2) D(2) E(1) by traffic. Everything fits
        // (11 of 12 entries); the MRU stage must find the split with the least loaded fuller ToR.
        TableCapacity tor = new TableCapacity(16384, 100, 6);
        Topology t = fabric(NONE, NONE, tor, tor, 1e12);
        VipSet vips = new VipSet(List.of(vip(1, 0, 1, 2), vip(2, 3, 4, 5), vip(3, 0, 1), vip(4, 2, 3),
                vip(5, 4)));
        Instance in = Instance.build(t, vips, traffic(5e6, 4e6, 3e6, 2e6, 1e6), SolverOptions.defaults());
        Assignment plain = DuetIlp.solve(in, null, OPTS);
        Assignment low = DuetIlp.solve(in, null, new DuetIlp.Options(MIP, true, null));
        assertEquals(1.0, plain.hmuxTrafficShare, 1e-9);
        assertEquals(1.0, low.hmuxTrafficShare, 1e-9);
        assertEquals(bruteForceMinMru(in, 1.0), low.mru, 1e-9);
        assertTrue(low.mru <= plain.mru + 1e-12);
        assertEquals(List.of(), Feasibility.violations(in, low));
    }

    /**
     * The fabric of {@link #fabric} with random small tables (a third of the switches none; its 1 Gbps
     * ToR link t0-a0, whose 80% binds for some of the VIPs) and {@code nVips} VIPs of 1 to 3 DIPs and
     * random traffic: small enough to enumerate (also {@link LpBoundTest}'s instances).
     */
    static Instance randomTinyInstance(Random r, int nVips) {
        TableCapacity[] caps = new TableCapacity[4];
        for (int i = 0; i < 4; i++) {
            caps[i] = r.nextInt(3) == 0 ? NONE : new TableCapacity(16384, 2 + r.nextInt(4), 1 + r.nextInt(3));
        }
        Topology t = fabric(caps[0], caps[1], caps[2], caps[3], 1e9);
        List<Vip> vs = new ArrayList<>();
        double[] tr = new double[nVips];
        for (int v = 0; v < nVips; v++) {
            int k = 1 + r.nextInt(3);
            int[] hosts = new int[k];
            for (int i = 0; i < k; i++) {
                hosts[i] = (v + i) % 6;
            }
            vs.add(vip(v + 1, hosts));
            tr[v] = (1 + r.nextInt(10)) * 2e7;
        }
        return Instance.build(t, new VipSet(vs), traffic(tr), SolverOptions.defaults());
    }

    /** Lowest MRU over every feasible placement that carries {@code share}. */
    static double bruteForceMinMru(Instance in, double share) {
        double[] best = {Double.POSITIVE_INFINITY};
        forEachFeasiblePlacement(in, (a, carried) -> {
            if (Math.abs(carried - share) < 1e-9) {
                best[0] = Math.min(best[0], org.hybridlb.solver.assign.Assignments.usageOf(in, a).mru());
            }
        });
        return best[0];
    }

    /**
     * Every placement of the VIPs (each on the SMuxes or any switch) that passes the checker, with
     * the share of the traffic it puts on the HMuxes.
     */
    static void forEachFeasiblePlacement(Instance in, ObjDoubleConsumer<Assignment> each) {
        int nv = in.vipCount();
        int ns = in.switchCount();
        long combos = (long) Math.pow(ns + 1, nv);
        for (long k = 0; k < combos; k++) {
            long x = k;
            Map<String, String> map = new LinkedHashMap<>();
            double carried = 0;
            for (int v = 0; v < nv; v++) {
                int c = (int) (x % (ns + 1)) - 1;
                x /= ns + 1;
                map.put(in.vipId(v), c < 0 ? Assignment.SMUX : in.switchId(c));
                carried += c >= 0 ? in.trafficBps(v) : 0;
            }
            Assignment a = new Assignment("enum", map, 0, 0, 0, null);
            if (Feasibility.violations(in, a).isEmpty()) {
                each.accept(a, carried / in.totalTrafficBps());
            }
        }
    }

    @Test
    void registeredAsIlpInTheAlgorithmRegistry() {
        assertTrue(Algorithms.names().contains("ilp"));
        assertEquals("ilp", Algorithms.get("ilp").name());
    }

    /** Random tiny instances: the ILP equals enumeration and its answer passes the checker. */
    @Property(tries = 30)
    void ilpMatchesEnumeration(@ForAll @IntRange(min = 1, max = 5) int nVips, @ForAll long seed,
                               @ForAll boolean lowMru) {
        Instance in = randomTinyInstance(new Random(seed), nVips);
        Assignment a = DuetIlp.solve(in, null, new DuetIlp.Options(MIP, lowMru, null));
        assertNotNull(a.solver);
        assertEquals(List.of(), Feasibility.violations(in, a));
        assertEquals(bruteForceBest(in), a.hmuxTrafficShare, 1e-9);
        if (lowMru && nVips <= 4) {
            assertEquals(bruteForceMinMru(in, a.hmuxTrafficShare), a.mru, 1e-6);
        }
        assertTrue(a.hmuxTrafficShare >= Algorithms.get("greedy-skip").assign(in, null).hmuxTrafficShare - 1e-12);
    }

    /**
     * A random installed assignment (each VIP on the SMuxes or any switch, fitting or not: the
     * traffic has changed since) and a random --migration-budget: the answer passes the checker,
     * moves at most the budget and is the best that does (enumeration), or ilp refuses with the
     * documented error, and never when the installed assignment still fits (it moves nothing).
     */
    @Property(tries = 60)
    void migrationBudgetIsKeptOrRefused(@ForAll @IntRange(min = 1, max = 5) int nVips, @ForAll long seed,
                                        @ForAll @IntRange(min = 0, max = 20) int budgetTwentieths) {
        Random r = new Random(seed);
        Instance in = randomTinyInstance(r, nVips);
        Map<String, String> installed = new LinkedHashMap<>();
        String[] places = {Assignment.SMUX, "c0", "a0", "t0", "t1"};
        for (int v = 0; v < nVips; v++) {
            installed.put(in.vipId(v), places[r.nextInt(places.length)]);
        }
        Assignment current = new Assignment("installed", installed, 0, 0, 0, null);
        double budget = budgetTwentieths / 20.0;
        double best = bruteForceBestWithin(in, current, budget);
        try {
            Assignment a = DuetIlp.solve(in, current, new DuetIlp.Options(MIP, false, budget));
            assertEquals(List.of(), Feasibility.violations(in, a));
            double moved = movedShare(in, current, a);
            assertTrue(moved <= budget + 1e-9, "moved " + moved + " > budget " + budget);
            assertEquals(moved, a.solver.movedShare, 1e-9);
            assertEquals(best, a.hmuxTrafficShare, 1e-9, () -> String.join("; ", a.solver.notes));
            Statistics.label("ilp").collect(moved > 0 ? "answer, moves some" : "answer, moves nothing");
        } catch (NoAssignmentException e) {
            Statistics.label("ilp").collect("refused");
            String prefix = String.format(Locale.ROOT, "--migration-budget %s: no assignment found that moves at "
                    + "most %.2f%% of the traffic; the least-moving feasible one found moves ", budget, 100 * budget);
            assertTrue(e.getMessage().startsWith(prefix) && e.getMessage().endsWith("%"), e.getMessage());
            double leastMoved = Double.parseDouble(e.getMessage().substring(prefix.length(),
                    e.getMessage().length() - 1));
            assertTrue(leastMoved > 100 * budget - 0.005, e.getMessage());
            assertTrue(!Feasibility.violations(in, current).isEmpty(),
                    "refused although the installed assignment fits and moves nothing: " + e.getMessage());
        }
        // the tries must reach each outcome, or the property proves little
        Statistics.label("ilp").coverage(c -> {
            c.check("refused").count(n -> n > 0);
            c.check("answer, moves some").count(n -> n > 0);
        });
    }

    /** Share of the traffic whose VIP left the switch it was installed on. */
    static double movedShare(Instance in, Assignment current, Assignment a) {
        double moved = 0;
        for (int v = 0; v < in.vipCount(); v++) {
            String was = current.placementOf(in.vipId(v));
            if (!Assignment.SMUX.equals(was) && !was.equals(a.placementOf(in.vipId(v)))) {
                moved += in.trafficBps(v);
            }
        }
        return moved / in.totalTrafficBps();
    }

    /** Best HMux share over every placement that passes the checker and moves at most {@code budget}; -1 if none. */
    static double bruteForceBestWithin(Instance in, Assignment current, double budget) {
        double[] best = {-1};
        forEachFeasiblePlacement(in, (a, share) -> {
            if (movedShare(in, current, a) <= budget + 1e-9) {
                best[0] = Math.max(best[0], share);
            }
        });
        return best[0];
    }

    /** Best HMux share over every placement (each VIP on the SMuxes or any switch) that passes the checker. */
    static double bruteForceBest(Instance in) {
        double[] best = {0};
        forEachFeasiblePlacement(in, (a, share) -> best[0] = Math.max(best[0], share));
        return best[0];
    }
}
