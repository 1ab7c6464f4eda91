package org.hybridlb.solver.assign;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.routing.EcmpRouter;
import org.hybridlb.solver.routing.Fabric;
import org.hybridlb.solver.routing.LinkLoads;

/**
 * The pod aggregation in the load calculation and the pod shortcut in the search must give
 * exactly what routing every flow on its own gives.
 */
class LoadsExactnessTest {
    /** A Clos, optionally with one ToR-agg link removed (an asymmetric pod). */
    static Topology topo(int pods, int tors, int aggs, int cores, boolean breakOne) {
        Topology t = Fixtures.clos(pods, tors, aggs, cores, 2, TableCapacity.DEFAULTS);
        if (!breakOne || aggs < 2) {
            return t;
        }
        List<Link> links = new ArrayList<>(t.links);
        links.removeIf(l -> l.a.equals("t0_0") && l.b.equals("a0_1"));
        return new Topology("broken", t.switches, links, t.hosts, List.of());
    }

    /** t(l, s, v) the slow way: every source and every DIP ToR routed alone. */
    static LinkLoads naive(Instance in, int v, int s) {
        Fabric f = in.fabric();
        EcmpRouter r = new EcmpRouter(f);
        LinkLoads out = new LinkLoads(f.linkCount());
        VipTraffic vt = null;
        for (VipTraffic x : in.traffic().vips) {
            if (x.vip.equals(in.vipId(v))) {
                vt = x;
            }
        }
        if (vt == null) {
            return out;
        }
        Map<String, Integer> torOfHost = Fabric.torOfHosts(in.topology(), f, false);
        for (Map.Entry<String, Double> e : vt.sources.entrySet()) {
            double bps = e.getValue() * 8;
            if (e.getKey().equals(VipTraffic.INTERNET)) {
                for (int c : f.cores()) {
                    r.seed(c, s, bps / f.cores().length);
                    r.propagateTo(s, false, out);
                }
            } else {
                Integer node = f.indexOrNull(e.getKey());
                r.seed(node != null ? node : torOfHost.get(e.getKey()), s, bps);
                r.propagateTo(s, false, out);
            }
        }
        for (int i = in.dstStart(v); i < in.dstEnd(v); i++) {
            r.seed(s, in.dstNode(i), in.dstBps(i));
            r.propagateTo(in.dstNode(i), false, out);
        }
        return out;
    }

    @Property(tries = 25)
    void aggregatedLoadsEqualPerFlowRouting(@ForAll @IntRange(min = 1, max = 3) int pods,
                                            @ForAll @IntRange(min = 1, max = 4) int tors,
                                            @ForAll @IntRange(min = 1, max = 3) int aggs,
                                            @ForAll boolean broken,
                                            @ForAll @IntRange(min = 0, max = 1000) int seed) {
        Topology t = topo(pods, tors, aggs, aggs * 2, broken);
        net.jqwik.api.Assume.that(new Fabric(t).connected());
        Object[] w = Fixtures.randomWorkload(t, 8, 5, 1e10, seed);
        Instance in = Instance.build(t, (VipSet) w[0], (TrafficInterval) w[1], SolverOptions.defaults());
        LinkLoads fast = in.resources().newLinkLoads();
        for (int v = 0; v < in.vipCount(); v++) {
            for (int s = 0; s < in.switchCount(); s++) {
                in.resources().linkLoads(v, s, fast);
                LinkLoads slow = naive(in, v, s);
                for (int l = 0; l < in.fabric().linkCount(); l++) {
                    assertEquals(slow.loadOn(l), fast.loadOn(l), 1e-6 * (1 + slow.loadOn(l)),
                            "VIP " + v + " on " + in.switchId(s) + ", link " + in.fabric().linkName(l));
                }
            }
        }
    }

    @Property(tries = 25)
    void podShortcutFindsTheSameMinimumMruAsEveryToR(@ForAll @IntRange(min = 1, max = 3) int pods,
                                                      @ForAll @IntRange(min = 2, max = 5) int tors,
                                                      @ForAll boolean broken,
                                                      @ForAll @IntRange(min = 0, max = 1000) int seed) {
        Topology t = topo(pods, tors, 2, 4, broken);
        net.jqwik.api.Assume.that(new Fabric(t).connected());
        Object[] w = Fixtures.randomWorkload(t, 30, 5, 2e10, seed);
        Instance in = Instance.build(t, (VipSet) w[0], (TrafficInterval) w[1], SolverOptions.defaults());
        ResourceModel m = in.resources();
        Usage u = m.newUsage();
        Search with = new Search(in, u, true);
        Search without = new Search(in, u, false);
        LinkLoads l = m.newLinkLoads();
        for (int v : in.vipsByTraffic()) {
            boolean a = with.findBest(v);
            double mruWith = with.bestMru;
            boolean b = without.findBest(v);
            // brute force over every switch
            double brute = Double.POSITIVE_INFINITY;
            if (m.eligible(v) && u.hostRoomFor(v)) {
                for (int s = 0; s < in.switchCount(); s++) {
                    if (m.fitsAlone(v, s)) {
                        m.linkLoads(v, s, l);
                        brute = Math.min(brute, Math.max(u.mru(), u.peakIfPlaced(v, s, l)));
                    }
                }
            }
            assertEquals(brute, mruWith, 1e-9 * (1 + brute), "shortcut, VIP " + in.vipId(v));
            assertEquals(brute, without.bestMru, 1e-9 * (1 + brute), "no shortcut, VIP " + in.vipId(v));
            assertEquals(a, b);
            if (a) {
                // the chosen switch really has that MRU
                m.linkLoads(v, with.bestSwitch, l);
                assertEquals(mruWith, Math.max(u.mru(), u.peakIfPlaced(v, with.bestSwitch, l)), 1e-9 * (1 + mruWith));
                LinkLoads kept = with.bestLoads();
                if (kept != null) { // the loads the search assembled are t(., s, v) exactly
                    for (int x = 0; x < in.fabric().linkCount(); x++) {
                        assertEquals(l.loadOn(x), kept.loadOn(x), 1e-6 * (1 + l.loadOn(x)), in.fabric().linkName(x));
                    }
                }
                with.placeBest(v);
            }
        }
    }

    @SuppressWarnings("unused")
    private static List<Host> hosts(Topology t) {
        return t.hosts;
    }
}
