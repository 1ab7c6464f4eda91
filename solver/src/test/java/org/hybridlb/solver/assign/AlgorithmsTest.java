package org.hybridlb.solver.assign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.model.VipTraffic;
import org.junit.jupiter.api.Test;

/** Small instances whose right answer can be worked out by hand. */
class AlgorithmsTest {
    /** 1 pod, 2 ToRs (t0_0, t0_1), 1 agg, 1 core; 2 hosts per ToR: 10.0.T.1, 10.0.T.2. */
    private static Topology tiny(TableCapacity tables) {
        return Fixtures.clos(1, 2, 1, 1, 2, tables);
    }

    private static Map<String, Double> from(String node, double bytesPerSec) {
        Map<String, Double> m = new LinkedHashMap<>();
        m.put(node, bytesPerSec);
        return m;
    }

    private static Instance instance(Topology t, List<Vip> vips, List<VipTraffic> traffic, SolverOptions o) {
        return Instance.build(t, new VipSet(vips), new TrafficInterval(0, 0, 600, traffic), o);
    }

    private static Instance instance(Topology t, List<Vip> vips, List<VipTraffic> traffic) {
        return instance(t, vips, traffic, SolverOptions.defaults());
    }

    @Test
    void greedyPutsAVipWhereItsSourcesAndDipsAre() {
        // clients and DIP both behind t0_1: on t0_1 the VIP loads no link at all
        Instance in = instance(tiny(TableCapacity.DEFAULTS),
                List.of(Fixtures.vip("100.0.0.1", List.of(Fixtures.dip("10.0.1.1")))),
                List.of(Fixtures.traffic("100.0.0.1", from("t0_1", 5e8))));
        Assignment a = Algorithms.get("greedy").assign(in, null);
        assertEquals("t0_1", a.assignment.get("100.0.0.1"));
        assertEquals(1.0, a.hmuxTrafficShare, 1e-12);
        // the MRU is then the table use of t0_1: 1 of 512 tunnel entries
        assertEquals(1.0 / 512, a.mru, 1e-12);
    }

    @Test
    void greedyMinimisesTheMaximumUtilisation() {
        // 4 Gbps from t0_0's hosts to a DIP on t0_1. On t0_0 or t0_1 or the agg the flow crosses
        // t0_0->a0_0 and a0_0->t0_1 once: 4/8 = 0.5 of the 80% allowed. On the core it crosses
        // t0_0->a, a->c, c->a, a->t0_1: still 0.5 on the ToR links (agg-core links are 40G).
        // A second identical VIP can't avoid those two ToR links: MRU 1.0, still fits.
        List<Vip> vips = List.of(Fixtures.vip("100.0.0.1", List.of(Fixtures.dip("10.0.1.1"))),
                Fixtures.vip("100.0.0.2", List.of(Fixtures.dip("10.0.1.2"))));
        List<VipTraffic> tr = List.of(Fixtures.traffic("100.0.0.1", from("h0_0_0", 5e8)),
                Fixtures.traffic("100.0.0.2", from("h0_0_1", 5e8)));
        Instance in = instance(tiny(TableCapacity.DEFAULTS), vips, tr);
        Assignment a = Algorithms.get("greedy").assign(in, null);
        assertEquals(1.0, a.mru, 1e-9);
        assertEquals(1.0, a.hmuxTrafficShare, 1e-12);
        assertTrue(Feasibility.violations(in, a).isEmpty());
        // a third one cannot fit anywhere
        List<Vip> three = new ArrayList<>(vips);
        three.add(Fixtures.vip("100.0.0.3", List.of(Fixtures.dip("10.0.1.1"))));
        List<VipTraffic> tr3 = new ArrayList<>(tr);
        tr3.add(Fixtures.traffic("100.0.0.3", from("h0_0_0", 1e8)));
        Assignment b = Algorithms.get("greedy").assign(instance(tiny(TableCapacity.DEFAULTS), three, tr3), null);
        assertEquals(Assignment.SMUX, b.assignment.get("100.0.0.3"));
        assertEquals(10.0 / 11, b.hmuxTrafficShare, 1e-12);
    }

    @Test
    void aVipThatFitsNowhereEvenAloneDoesNotStopThePaperGreedy() {
        // VIP 1: 20 Gbps between the two ToRs, more than t0_0's single 10G uplink can carry from
        // any HMux, even with nothing else on the fabric: SMux-only by design, like a large
        // fan-out VIP. The paper's greedy goes on and places VIP 2, as greedy-skip does.
        List<Vip> vips = List.of(Fixtures.vip("100.0.0.1", List.of(Fixtures.dip("10.0.1.1"))),
                Fixtures.vip("100.0.0.2", List.of(Fixtures.dip("10.0.1.2"))));
        List<VipTraffic> tr = List.of(Fixtures.traffic("100.0.0.1", from("t0_0", 2.5e9)),
                Fixtures.traffic("100.0.0.2", from("t0_0", 1e8)));
        Instance in = instance(tiny(TableCapacity.DEFAULTS), vips, tr);
        for (String name : List.of("greedy", "greedy-skip", "non-sticky", "one-time", "sticky")) {
            Assignment a = Algorithms.get(name).assign(in, null);
            assertEquals(Assignment.SMUX, a.assignment.get("100.0.0.1"), name);
            assertNotEquals(Assignment.SMUX, a.assignment.get("100.0.0.2"), name);
            assertEquals(1e8 / 2.6e9, a.hmuxTrafficShare, 1e-12, name);
            assertTrue(Feasibility.violations(in, a).isEmpty(), name);
        }
    }

    @Test
    void paperGreedyStopsAtTheFirstVipThatNoLongerFitsBecauseOfEarlierOnes() {
        // VIPs 1 and 2 (4 Gbps each, t0_0 -> DIP behind t0_1) fill t0_0's uplink to 100% of 80%.
        // VIP 3 (0.8 Gbps, same path) would fit alone but not any more: the paper's greedy stops,
        // so VIP 4 (local to t0_1, fits there without touching a link) stays on the SMuxes;
        // greedy-skip places it.
        List<Vip> vips = List.of(Fixtures.vip("100.0.0.1", List.of(Fixtures.dip("10.0.1.1"))),
                Fixtures.vip("100.0.0.2", List.of(Fixtures.dip("10.0.1.2"))),
                Fixtures.vip("100.0.0.3", List.of(Fixtures.dip("10.0.1.1"))),
                Fixtures.vip("100.0.0.4", List.of(Fixtures.dip("10.0.1.2"))));
        List<VipTraffic> tr = List.of(Fixtures.traffic("100.0.0.1", from("h0_0_0", 5e8)),
                Fixtures.traffic("100.0.0.2", from("h0_0_1", 5e8)),
                Fixtures.traffic("100.0.0.3", from("h0_0_0", 1e8)),
                Fixtures.traffic("100.0.0.4", from("t0_1", 5e7)));
        Instance in = instance(tiny(TableCapacity.DEFAULTS), vips, tr);
        for (String name : List.of("greedy", "non-sticky", "one-time", "sticky")) {
            Assignment stop = Algorithms.get(name).assign(in, null);
            assertNotEquals(Assignment.SMUX, stop.assignment.get("100.0.0.1"), name);
            assertNotEquals(Assignment.SMUX, stop.assignment.get("100.0.0.2"), name);
            assertEquals(Assignment.SMUX, stop.assignment.get("100.0.0.3"), name);
            assertEquals(Assignment.SMUX, stop.assignment.get("100.0.0.4"), name + ": the paper's greedy stopped");
        }
        Assignment skip = Algorithms.get("greedy-skip").assign(in, null);
        assertEquals(Assignment.SMUX, skip.assignment.get("100.0.0.3"));
        assertEquals("t0_1", skip.assignment.get("100.0.0.4"));
    }

    @Test
    void hostTableIsAFabricWideBudget() {
        // every switch has room for 2 VIP routes: only 2 of 3 VIPs go to HMuxes, on any switches
        Topology t = tiny(new TableCapacity(2, 4096, 512));
        List<Vip> vips = new ArrayList<>();
        List<VipTraffic> tr = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            vips.add(Fixtures.vip("100.0.0." + i, List.of(Fixtures.dip("10.0.0.1"))));
            tr.add(Fixtures.traffic("100.0.0." + i, from("t0_0", 1e6 * i)));
        }
        Instance in = instance(t, vips, tr);
        Assignment a = Algorithms.get("greedy-skip").assign(in, null);
        assertEquals(Assignment.SMUX, a.assignment.get("100.0.0.1"), "the smallest VIP is left over");
        assertEquals(1.0, a.utilisation.maxHostTable, 1e-12);
    }

    @Test
    void wcmpAndPortsCountInTheTables() {
        Dip a = new Dip("10.0.0.1", 2, null);
        Dip b = new Dip("10.0.0.2", 2, null);
        Dip c = new Dip("10.0.1.1", 4, null);
        VipPort web = new VipPort("tcp", 80, List.of(a, b, c));               // 2,2,4 -> 1+1+2
        VipPort tls = new VipPort("tcp", 443, List.of(a, new Dip("10.0.1.2", 1, null))); // 2,1 -> 2+1
        Vip vip = new Vip("100.0.0.1", "100.0.0.0/24", List.of(web, tls));
        assertEquals(4, ResourceModel.wcmpEntries(web));
        assertEquals(3, ResourceModel.wcmpEntries(tls));
        Instance in = instance(tiny(TableCapacity.DEFAULTS), List.of(vip), List.of());
        ResourceModel m = in.resources();
        assertEquals(7, m.ecmpEntries(0), "ECMP: per port, weights reduced by their gcd");
        assertEquals(4, m.tunnelEntries(0), "tunnel: distinct endpoints over both ports");
        assertEquals(2, m.hostEntries(0), "one host entry per service");
        // weight 0 DIPs are drained: no entries
        assertEquals(1, ResourceModel.wcmpEntries(new VipPort("any", 0, List.of(a, new Dip("10.0.0.9", 0, null)))));
    }

    @Test
    void vmDipsOnOneHostShareTheTunnelEntry() {
        Vip vip = new Vip("100.0.0.1", "100.0.0.0/24", List.of(new VipPort("any", 0, List.of(
                new Dip("192.168.0.1", 1, "10.0.0.1"), new Dip("192.168.0.2", 1, "10.0.0.1"),
                new Dip("192.168.0.3", 1, "10.0.1.1")))));
        ResourceModel m = instance(tiny(TableCapacity.DEFAULTS), List.of(vip), List.of()).resources();
        assertEquals(3, m.ecmpEntries(0), "one ECMP entry per DIP keeps the split even (§3.5.2)");
        assertEquals(2, m.tunnelEntries(0), "both VMs of host 10.0.0.1 behind one tunnel entry");
    }

    @Test
    void vipsLargerThanAnyTunnelTableStayOnSmuxes() {
        Topology t = tiny(new TableCapacity(16384, 4096, 2));
        Vip big = Fixtures.vip("100.0.0.1", List.of(Fixtures.dip("10.0.0.1"), Fixtures.dip("10.0.0.2"),
                Fixtures.dip("10.0.1.1")));
        Vip small = Fixtures.vip("100.0.0.2", List.of(Fixtures.dip("10.0.0.1")));
        Instance in = instance(t, List.of(big, small), List.of(
                Fixtures.traffic("100.0.0.1", from("t0_0", 1e8)), Fixtures.traffic("100.0.0.2", from("t0_0", 1e6))));
        assertFalse(in.resources().eligible(0));
        Assignment a = Algorithms.get("greedy").assign(in, null);
        assertEquals(Assignment.SMUX, a.assignment.get("100.0.0.1"));
        assertNotEquals(Assignment.SMUX, a.assignment.get("100.0.0.2"),
                "an ineligible VIP does not stop the paper's greedy: it is SMux-only by design");
        assertFalse(Feasibility.violations(in, new Assignment("x", Map.of("100.0.0.1", "t0_0"), 0, 0, 0, null)).isEmpty());
    }

    @Test
    void stickyKeepsAVipUnlessMovingGainsMoreThanDelta() {
        // VIP on t0_0 with clients and DIP on t0_1: on t0_0 it loads t0_0's links (2 Gbps of 8),
        // on t0_1 nothing. MRU there 0.25 + tables vs ~0.002: a gain above 0.05 -> move.
        List<Vip> vips = List.of(Fixtures.vip("100.0.0.1", List.of(Fixtures.dip("10.0.1.1"))));
        List<VipTraffic> tr = List.of(Fixtures.traffic("100.0.0.1", from("t0_1", 2.5e8)));
        Instance in = instance(tiny(TableCapacity.DEFAULTS), vips, tr);
        Assignment current = new Assignment("greedy", Map.of("100.0.0.1", "t0_0"), 1, 0, 0, null);
        assertEquals("t0_1", Algorithms.get("sticky").assign(in, current).assignment.get("100.0.0.1"));
        // with a tenth of the traffic the gain is 0.025 < delta: it stays
        Instance light = instance(tiny(TableCapacity.DEFAULTS), vips,
                List.of(Fixtures.traffic("100.0.0.1", from("t0_1", 2.5e7))));
        assertEquals("t0_0", Algorithms.get("sticky").assign(light, current).assignment.get("100.0.0.1"));
        // ... unless delta is smaller than the gain
        Instance eager = light.withOptions(SolverOptions.defaults().withStickyDelta(0.01));
        assertEquals("t0_1", Algorithms.get("sticky").assign(eager, current).assignment.get("100.0.0.1"));
        // non-sticky ignores the current assignment altogether
        assertEquals("t0_1", Algorithms.get("non-sticky").assign(light, current).assignment.get("100.0.0.1"));
    }

    @Test
    void stickyKeepsAnInstalledVipsHostSlotUnlessTheNewcomerHasClearlyMoreTraffic() {
        // a host table of 1 (fabric-wide budget): one VIP on an HMux, the other on the SMuxes
        Topology t = tiny(new TableCapacity(1, 512, 512));
        List<Vip> vips = List.of(Fixtures.vip("100.0.0.1", List.of(Fixtures.dip("10.0.1.1"))),
                Fixtures.vip("100.0.0.2", List.of(Fixtures.dip("10.0.1.2"))));
        Assignment current = new Assignment("sticky", Map.of("100.0.0.1", "t0_1", "100.0.0.2", "smux"), 1, 0, 0, null);
        // measurement noise: the SMux VIP now looks 20% busier; swapping them would be a migration for nothing
        Instance noisy = instance(t, vips, List.of(Fixtures.traffic("100.0.0.1", from("t0_1", 1e7)),
                Fixtures.traffic("100.0.0.2", from("t0_1", 1.2e7))));
        Assignment kept = Algorithms.get("sticky").assign(noisy, current);
        assertEquals("t0_1", kept.assignment.get("100.0.0.1"));
        assertEquals(Assignment.SMUX, kept.assignment.get("100.0.0.2"));
        assertEquals(Assignment.SMUX, Algorithms.get("non-sticky").assign(noisy, current).assignment.get("100.0.0.1"),
                "non-sticky swaps them");
        // twice the traffic: worth the slot
        Instance busier = instance(t, vips, List.of(Fixtures.traffic("100.0.0.1", from("t0_1", 1e7)),
                Fixtures.traffic("100.0.0.2", from("t0_1", 2e7))));
        Assignment moved = Algorithms.get("sticky").assign(busier, current);
        assertEquals(Assignment.SMUX, moved.assignment.get("100.0.0.1"));
        assertNotEquals(Assignment.SMUX, moved.assignment.get("100.0.0.2"));
        assertTrue(Feasibility.violations(busier, moved).isEmpty());
    }

    @Test
    void stickyMovesAVipThatNoLongerFitsWhereItIs() {
        // 9 Gbps through t0_0's 10G uplink (8G allowed) does not fit on t0_0; on t0_1 it has no link
        List<Vip> vips = List.of(Fixtures.vip("100.0.0.1", List.of(Fixtures.dip("10.0.1.1"))));
        Instance in = instance(tiny(TableCapacity.DEFAULTS), vips,
                List.of(Fixtures.traffic("100.0.0.1", from("t0_1", 9e9 / 8))));
        Assignment current = new Assignment("greedy", Map.of("100.0.0.1", "t0_0"), 1, 0, 0, null);
        Assignment a = Algorithms.get("sticky").assign(in, current);
        assertEquals("t0_1", a.assignment.get("100.0.0.1"));
        assertTrue(Feasibility.violations(in, a).isEmpty());
    }

    @Test
    void oneTimeKeepsTheFirstAssignmentAndAnantaUsesOnlySmuxes() {
        List<Vip> vips = List.of(Fixtures.vip("100.0.0.1", List.of(Fixtures.dip("10.0.1.1"))),
                Fixtures.vip("100.0.0.2", List.of(Fixtures.dip("10.0.0.1"))));
        Instance in = instance(tiny(TableCapacity.DEFAULTS), vips,
                List.of(Fixtures.traffic("100.0.0.1", from("t0_1", 2.5e8)), Fixtures.traffic("100.0.0.2", from("t0_0", 1e6))));
        Assignment first = Algorithms.get("one-time").assign(in, null);
        assertEquals("t0_1", first.assignment.get("100.0.0.1"), "first interval: plain greedy");
        Assignment installed = new Assignment("one-time", Map.of("100.0.0.1", "t0_0", "100.0.0.2", "smux"), 0, 0, 0, null);
        Assignment kept = Algorithms.get("one-time").assign(in, installed);
        assertEquals("t0_0", kept.assignment.get("100.0.0.1"), "later: kept where it was");
        assertEquals(Assignment.SMUX, kept.assignment.get("100.0.0.2"), "later: nothing new goes to HMuxes");
        Assignment ananta = Algorithms.get("ananta").assign(in, null);
        assertTrue(ananta.assignment.values().stream().allMatch(Assignment.SMUX::equals));
        assertEquals(0, ananta.hmuxTrafficShare);
        // Ananta's SMuxes carry everything: 2.01 Gbps at 3.6 Gbps each -> 1
        assertEquals(1, ananta.smuxCount);
    }

    @Test
    void randomTakesTheOnlyFeasibleSwitch() {
        // tunnel room on t0_1 only
        Topology t = Fixtures.clos(1, 2, 1, 1, 2, TableCapacity.DEFAULTS);
        List<org.hybridlb.solver.model.Switch> sw = new ArrayList<>();
        for (org.hybridlb.solver.model.Switch s : t.switches) {
            sw.add(new org.hybridlb.solver.model.Switch(s.id, s.role, s.pod,
                    new TableCapacity(16384, 4096, s.id.equals("t0_1") ? 8 : 0)));
        }
        Topology only = new Topology("only", sw, t.links, t.hosts, List.of());
        Instance in = instance(only, List.of(Fixtures.vip("100.0.0.1", List.of(Fixtures.dip("10.0.0.1")))),
                List.of(Fixtures.traffic("100.0.0.1", from("t0_0", 1e6))));
        for (long seed = 0; seed < 5; seed++) {
            Assignment a = Algorithms.get("random").assign(in.withOptions(SolverOptions.defaults().withSeed(seed)), null);
            assertEquals("t0_1", a.assignment.get("100.0.0.1"));
        }
    }

    @Test
    void randomIsFirstFitOverOneSwitchOrderPerRun() {
        // 10 switches with 4 tunnel entries each, 12 one-DIP VIPs that fit anywhere: first fit
        // over one order fills the first switch of the order with the 4 biggest VIPs, the second
        // with the next 4, the third with the last 4, and leaves the others empty.
        Topology t = Fixtures.clos(2, 2, 2, 2, 2, new TableCapacity(16384, 4096, 4));
        List<Vip> vips = new ArrayList<>();
        List<VipTraffic> tr = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            String ip = "100.0.0." + (i + 1);
            vips.add(Fixtures.vip(ip, List.of(Fixtures.dip("10." + (i % 2) + "." + (i / 2 % 2) + "." + (i % 2 + 1)))));
            tr.add(Fixtures.traffic(ip, from("t" + (i / 3 % 2) + "_" + (i % 2), 1e6 * (12 - i))));
        }
        java.util.Set<List<String>> orders = new java.util.HashSet<>();
        for (long seed = 1; seed <= 4; seed++) {
            Instance in = instance(t, vips, tr, SolverOptions.defaults().withSeed(seed));
            Assignment a = Algorithms.get("random").assign(in, null);
            assertTrue(Feasibility.violations(in, a).isEmpty());
            int[] order = FirstFitAlgorithm.switchOrder(in.switchCount(), new java.util.SplittableRandom(in.options().seed));
            List<String> firstThree = new ArrayList<>();
            for (int k = 0; k < 3; k++) {
                firstThree.add(in.switchId(order[k]));
            }
            for (int i = 0; i < 12; i++) {
                assertEquals(firstThree.get(i / 4), a.assignment.get("100.0.0." + (i + 1)),
                        "seed " + seed + ", VIP " + (i + 1) + " in order " + firstThree);
            }
            orders.add(firstThree);
        }
        assertTrue(orders.size() > 1, "the order is drawn at random per seed: " + orders);
    }

    @Test
    void seedMakesTiesReproducible() {
        Topology t = Fixtures.clos(2, 3, 2, 2, 2, TableCapacity.DEFAULTS);
        Object[] w = Fixtures.randomWorkload(t, 40, 4, 1e9, 3);
        Instance in = Instance.build(t, (VipSet) w[0], (TrafficInterval) w[1], SolverOptions.defaults());
        assertEquals(Algorithms.get("greedy").assign(in, null).assignment,
                Algorithms.get("greedy").assign(in, null).assignment);
    }

    /**
     * Re-assigning the same traffic from sticky's own answer moves nothing, though one pass of
     * the rule need not be stable (a VIP it places late comes earlier in the next pass, once
     * installed): the controller reconciles often and must not migrate without a cause.
     */
    @Test
    void stickyIsStableOnItsOwnAnswer() {
        Topology t = Fixtures.clos(3, 4, 2, 4, 2, new TableCapacity(16384, 4096, 24));
        for (long seed = 1; seed <= 30; seed++) {
            Object[] w = Fixtures.randomWorkload(t, 60, 6, 8e10, seed);
            Object[] w2 = Fixtures.randomWorkload(t, 60, 6, 8e10, seed + 100);
            VipSet vips = (VipSet) w[0];
            Instance first = Instance.build(t, vips, (TrafficInterval) w[1], SolverOptions.defaults());
            Instance next = first.withTraffic((TrafficInterval) w2[1]);
            Assignment a0 = Algorithms.get("greedy-skip").assign(first, null);
            Assignment a1 = Algorithms.get("sticky").assign(next, a0);
            assertEquals(a1.assignment, Algorithms.get("sticky").assign(next, a1).assignment, "seed " + seed);
        }
    }

    @Test
    void unknownAlgorithmNamesTheKnownOnes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Algorithms.get("best"));
        assertTrue(e.getMessage().contains("greedy-skip"), e.getMessage());
    }

    /** The library alone has no ILP: it comes with the solver tools, and asking for it says so. */
    @Test
    void theIlpIsNotOnTheLibrarysClassPathAndTheErrorSaysWhereItIs() {
        assertEquals(List.of("greedy", "greedy-skip", "random", "sticky", "non-sticky", "one-time", "ananta"),
                Algorithms.names());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Algorithms.get("ilp"));
        assertTrue(e.getMessage().startsWith("algorithm \"ilp\" is not available on this class path: it comes with"
                + " the solver tools (hybridlb-solver-tools"), e.getMessage());
        assertEquals(null, Algorithms.unavailable("sticky"));
    }
}
