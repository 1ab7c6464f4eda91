package org.hybridlb.solver.ilp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.solver.assign.Feasibility;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.SolverOptions;
import org.hybridlb.solver.assign.Usage;
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
import org.hybridlb.solver.topology.DuetClos;
import org.hybridlb.solver.workload.Workload;
import org.hybridlb.solver.workload.WorkloadGenerator;
import org.junit.jupiter.api.Test;

/**
 * The link-bound parts of the ILP: the relaxation's link-group rows and the Lagrangian bound
 * must stay at or above the true optimum (enumerated), and the local search must only return
 * feasible assignments. Fabric with ECMP: core c0; aggs a0, a1; ToRs t0, t1, t2, each linked to
 * both aggs (1 Gbps, binding), aggs to the core (1 Tbps); DIP hosts h0..h2 under t1, h3..h5
 * under t2; clients at t0 or t1 and on the Internet.
 */
class LinkBoundTest {
    static Topology fabric(Random r) {
        List<Switch> sw = new ArrayList<>();
        sw.add(new Switch("c0", SwitchRole.CORE, null, caps(r)));
        sw.add(new Switch("a0", SwitchRole.AGG, 0, caps(r)));
        sw.add(new Switch("a1", SwitchRole.AGG, 0, caps(r)));
        for (int t = 0; t < 3; t++) {
            sw.add(new Switch("t" + t, SwitchRole.TOR, 0, caps(r)));
        }
        List<Link> links = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            links.add(new Link("t" + t, "a0", 1e9));
            links.add(new Link("t" + t, "a1", 1e9));
        }
        links.add(new Link("a0", "c0", 1e12));
        links.add(new Link("a1", "c0", 1e12));
        List<Host> hosts = new ArrayList<>();
        for (int h = 0; h < 6; h++) {
            hosts.add(new Host("h" + h, "10.0.1." + (h + 1), h < 3 ? "t1" : "t2"));
        }
        return new Topology("ecmp", sw, links, hosts, List.of());
    }

    static TableCapacity caps(Random r) {
        return r.nextInt(4) == 0 ? new TableCapacity(16384, 0, 0)
                : new TableCapacity(16384, 2 + r.nextInt(4), 1 + r.nextInt(3));
    }

    static Instance randomInstance(Random r, int nVips) {
        return randomInstance(r, nVips, false);
    }

    /** With {@code elephants}, a VIP in four may carry up to 2.4 ToR links' worth: too much for some or all placements. */
    static Instance randomInstance(Random r, int nVips, boolean elephants) {
        Topology t = fabric(r);
        List<Vip> vs = new ArrayList<>();
        List<VipTraffic> vt = new ArrayList<>();
        for (int v = 0; v < nVips; v++) {
            int k = 1 + r.nextInt(3);
            List<Dip> dips = new ArrayList<>();
            int first = r.nextInt(6);
            for (int i = 0; i < k; i++) {
                dips.add(new Dip("10.0.1." + ((first + i) % 6 + 1), 1, null));
            }
            String id = "100.0.0." + (v + 1);
            vs.add(new Vip(id, "100.0.0.0/24", List.of(new VipPort("any", 0, dips))));
            // up to ~0.6 of a ToR link's usable 80% per VIP, split between the Internet and clients
            double bytes = (1 + r.nextInt(10)) * 0.06 * 0.8e9 / 8;
            if (elephants && r.nextInt(4) == 0) {
                bytes *= 4;
            }
            Map<String, Double> from = new HashMap<>();
            double inet = r.nextDouble();
            from.put(VipTraffic.INTERNET, bytes * inet);
            from.put(r.nextBoolean() ? "t0" : "t1", bytes * (1 - inet));
            vt.add(new VipTraffic(id, from, null));
        }
        return Instance.build(t, new VipSet(vs), new TrafficInterval(0, 0, 600, vt), SolverOptions.defaults());
    }

    @Property(tries = 25)
    void relaxationAndLagrangianBoundTheOptimum(@ForAll @IntRange(min = 1, max = 4) int nVips,
                                                @ForAll long seed) {
        Instance in = randomInstance(new Random(seed), nVips);
        double optimum = DuetIlpTest.bruteForceBest(in);
        double[] b = DuetIlp.boundsForTest(in, 1.0);
        assertTrue(b[0] >= optimum - 1e-9, "relaxation " + b[0] + " below the optimum " + optimum);
        assertTrue(b[1] >= optimum - 1e-9, "seeded Lagrangian " + b[1] + " below the optimum " + optimum);
        assertTrue(b[2] >= optimum - 1e-9, "Lagrangian " + b[2] + " below the optimum " + optimum);
    }

    @Property(tries = 25)
    void boundsStayValidWhenSomeVipsOverloadALinkOnTheirOwn(@ForAll @IntRange(min = 1, max = 4) int nVips,
                                                            @ForAll long seed) {
        // (VIP, switch) pairs that overload a link alone are left out of the relaxation, the
        // Lagrangian and the columns: the bounds must still be at least the enumerated optimum
        Instance in = randomInstance(new Random(seed), nVips, true);
        double optimum = DuetIlpTest.bruteForceBest(in);
        double[] b = DuetIlp.boundsForTest(in, 0.5);
        for (double bound : b) {
            assertTrue(bound >= optimum - 1e-9, "bound " + bound + " below the optimum " + optimum);
        }
        Assignment ilp = DuetIlp.solve(in, null, new DuetIlp.Options(MipOptions.DEFAULTS.withTimeLimit(5), false, null));
        assertEquals(List.of(), Feasibility.violations(in, ilp));
        assertTrue(ilp.solver.bound >= optimum - 1e-9);
        assertTrue(ilp.hmuxTrafficShare <= optimum + 1e-9);
    }

    @Test
    void aVipThatOverloadsALinkWhereverItGoesIsOutOfTheBound() {
        // Only the aggs have table room. VIP 1 sends 1.2 Gbps from the Internet to a DIP under
        // t1: on a0 all of it crosses a0->t1, on a1 all of it a1->t1 (0.8 Gbps usable each), so
        // no feasible assignment carries it. The relaxation did count it before: t1's two down
        // links together have room for it (1.6 Gbps), and neither link alone is loaded by both
        // placements. VIPs 2 and 3 (0.1 Gbps each) fit: the optimum is theirs, and the ILP proves it.
        Topology t = aggsOnly(fabric(new Random(1)));
        List<Vip> vs = new ArrayList<>();
        List<VipTraffic> vt = new ArrayList<>();
        double[] gbps = {1.2, 0.1, 0.1};
        for (int v = 0; v < 3; v++) {
            String id = "100.0.0." + (v + 1);
            vs.add(new Vip(id, "100.0.0.0/24", List.of(new VipPort("any", 0,
                    List.of(new Dip("10.0.1." + (v + 1), 1, null))))));
            vt.add(new VipTraffic(id, Map.of(VipTraffic.INTERNET, gbps[v] * 1e9 / 8), null));
        }
        Instance in = Instance.build(t, new VipSet(vs), new TrafficInterval(0, 0, 600, vt), SolverOptions.defaults());
        double others = 0.2 / 1.4;
        assertEquals(others, DuetIlpTest.bruteForceBest(in), 1e-9);
        Assignment ilp = DuetIlp.solve(in, null, new DuetIlp.Options(MipOptions.DEFAULTS.withTimeLimit(5), false, null));
        assertEquals(List.of(), Feasibility.violations(in, ilp));
        assertEquals(others, ilp.hmuxTrafficShare, 1e-9);
        assertEquals(others, ilp.solver.bound, 1e-6, () -> String.join("; ", ilp.solver.notes));
        assertEquals("optimal", ilp.solver.status);
        assertTrue(ilp.solver.notes.stream().anyMatch(n -> n.contains("overload a link on their own")),
                () -> String.join("; ", ilp.solver.notes));
        double[] b = DuetIlp.boundsForTest(in, 0.5);
        for (double bound : b) {
            assertEquals(others, bound, 1e-6);
        }
    }

    @Test
    void theLinkGroupRowBoundsWhatNoSingleLinkRowSees() {
        // Only the aggs have table room. Four VIPs each send 0.5 Gbps from the Internet to a DIP
        // under t1: on a0 it all crosses a0->t1, on a1 a1->t1 (0.8 Gbps usable each), so one VIP
        // fits per agg: the optimum is 2 of 4. No link is loaded by both placements of a VIP (no
        // per-link row), but t1's two down links together carry 0.5 Gbps of each VIP wherever it
        // goes: Σ 0.5 y_v ≤ 1.6 lets three VIPs in, a bound of 3 of 4 (1 without the group row).
        Topology t = aggsOnly(fabric(new Random(1)));
        List<Vip> vs = new ArrayList<>();
        List<VipTraffic> vt = new ArrayList<>();
        for (int v = 0; v < 4; v++) {
            String id = "100.0.0." + (v + 1);
            vs.add(new Vip(id, "100.0.0.0/24", List.of(new VipPort("any", 0,
                    List.of(new Dip("10.0.1." + (v % 3 + 1), 1, null))))));
            vt.add(new VipTraffic(id, Map.of(VipTraffic.INTERNET, 0.5e9 / 8), null));
        }
        Instance in = Instance.build(t, new VipSet(vs), new TrafficInterval(0, 0, 600, vt), SolverOptions.defaults());
        assertEquals(0.5, DuetIlpTest.bruteForceBest(in), 1e-9);
        double[] b = DuetIlp.boundsForTest(in, 0.5);
        assertEquals(0.75, b[0], 1e-6, "relaxation over y_v with the link-group row");
        for (double bound : b) {
            assertTrue(bound >= 0.5 - 1e-9, "bound " + bound + " below the optimum 0.5");
        }
        Assignment ilp = DuetIlp.solve(in, null, new DuetIlp.Options(MipOptions.DEFAULTS.withTimeLimit(5), false, null));
        assertEquals(List.of(), Feasibility.violations(in, ilp));
        assertEquals(0.5, ilp.hmuxTrafficShare, 1e-9, () -> String.join("; ", ilp.solver.notes));
        assertEquals("optimal", ilp.solver.status);
    }

    /** The topology with table room on the aggs only. */
    static Topology aggsOnly(Topology t) {
        List<Switch> out = new ArrayList<>();
        for (Switch sw : t.switches) {
            out.add(new Switch(sw.id, sw.role, sw.pod, sw.role == SwitchRole.AGG
                    ? new TableCapacity(16384, 64, 64) : new TableCapacity(16384, 0, 0)));
        }
        return new Topology(t.name, out, t.links, t.hosts, t.smuxes);
    }

    @Property(tries = 25)
    void localSearchAnswersAreFeasible(@ForAll @IntRange(min = 1, max = 6) int nVips, @ForAll long seed) {
        Instance in = randomInstance(new Random(seed), nVips);
        Usage[] u = DuetIlp.searchForTest(in, 0.05, seed);
        for (Usage x : u) {
            assertEquals(List.of(), Feasibility.violations(x));
        }
        if (nVips <= 4) {
            double share = 0;
            for (int v = 0; v < in.vipCount(); v++) {
                share += u[1].placement(v) >= 0 ? in.trafficBps(v) : 0;
            }
            assertTrue(share / in.totalTrafficBps() <= DuetIlpTest.bruteForceBest(in) + 1e-9);
        }
    }

    /**
     * 2 pods x (4 ToRs + 2 aggs), 2 cores, 64 tunnel and 256 ECMP entries, 300 VIPs at load 0.8:
     * links, not tables, keep VIPs off the HMuxes. One instance per interval.
     */
    static List<Instance> linkBoundClos(int intervals) {
        DuetClos.Params tp = DuetClos.Params.small(2, 4, 2, 2);
        tp.tables(new TableCapacity(null, 256, 64));
        Topology topo = DuetClos.generate(tp);
        Workload w = WorkloadGenerator.generate(topo,
                new WorkloadGenerator.Params().vipCount(300).intervals(intervals).loadFraction(0.8), 1);
        List<Instance> out = new ArrayList<>();
        for (TrafficInterval ti : w.trace.intervals) {
            out.add(Instance.build(topo, w.vips, ti, SolverOptions.defaults()));
        }
        return out;
    }

    @Test
    void linkBoundClosBeatsGreedySkipWithinTheTimeLimit() {
        // 2 pods x (4 ToRs + 2 aggs), 2 cores: more switches than candidate columns per VIP, but
        // few enough pairs that every fitting switch is a column: the link-bound path (local
        // search, Lagrangian), then SCIP on the whole model for its bound.
        Instance in = linkBoundClos(1).get(0);
        double limit = 8;
        long t0 = System.nanoTime();
        Assignment ilp = DuetIlp.solve(in, null, new DuetIlp.Options(
                MipOptions.DEFAULTS.withTimeLimit(limit), false, null));
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertNotNull(ilp.solver);
        assertEquals(List.of(), Feasibility.violations(in, ilp));
        Assignment skip = Algorithms.get("greedy-skip").assign(in, null);
        assertTrue(ilp.hmuxTrafficShare >= skip.hmuxTrafficShare - 1e-12);
        assertTrue(ilp.solver.bound >= ilp.hmuxTrafficShare - 1e-12);
        assertTrue(seconds <= limit + 3, "took " + seconds + " s for a " + limit + " s limit");
        assertTrue(ilp.solver.notes.stream().anyMatch(n -> n.startsWith("round 1:")),
                "SCIP ran on the whole model: " + ilp.solver.notes);
        assertTrue(ilp.solver.notes.stream().noneMatch(n -> n.contains("no SCIP round")), ilp.solver.notes::toString);
    }

    @Test
    void theLocalSearchKeepsTheMigrationBudget() {
        // The link-bound Clos above, its second interval against greedy-skip's assignment of the
        // first: the local search must only take steps within the budget (before, its answers
        // broke it and were thrown away).
        List<Instance> intervals = linkBoundClos(2);
        Assignment installed = Algorithms.get("greedy-skip").assign(intervals.get(0), null);
        Instance in = intervals.get(1);
        double budget = 0.05;
        Assignment ilp = DuetIlp.solve(in, installed, new DuetIlp.Options(
                MipOptions.DEFAULTS.withTimeLimit(6), false, budget));
        assertEquals(List.of(), Feasibility.violations(in, ilp));
        assertTrue(ilp.solver.movedShare <= budget + 1e-9, "moved " + ilp.solver.movedShare);
        assertTrue(ilp.solver.notes.stream().noneMatch(n -> n.contains("rejected: migration budget")),
                ilp.solver.notes::toString);
        assertTrue(ilp.hmuxTrafficShare >= ilp.solver.warmStart - 1e-12);
    }
}
