package org.hybridlb.solver.assign;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.DipShares;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.routing.Fabric;
import org.hybridlb.solver.routing.LinkLoads;
import org.junit.jupiter.api.Test;

/** What the traffic inputs mean (ASSIGNMENT.md): per-DIP rates are shares of the sources' total. */
class DipSharesTest {
    private static final Topology T = Fixtures.clos(2, 2, 2, 2, 1, TableCapacity.DEFAULTS);

    private static double on(Instance in, LinkLoads l, String a, String b) {
        Fabric f = in.fabric();
        return l.loadOn(f.linkBetween(f.index(a), f.index(b)));
    }

    /**
     * The example: a 12 Gbit/s VIP (sources) whose host agents report per-DIP rates of 1
     * and 3 (they never add up to the sources). On an agg HMux the links down to the DIPs' ToRs
     * carry 3 and 9 Gbit/s, so the 10G link to the second DIP is over its 80%: the VIP does not
     * fit there, and the greedy puts it elsewhere. Read as absolute bytes/s, the rates put 8 and
     * 24 bit/s on those links and the VIP would look like it fits.
     */
    @Test
    void perDipRatesAreSharesOfTheSourcesTotal() {
        Vip vip = Fixtures.vip("100.0.0.1", List.of(Fixtures.dip("10.0.0.1"), Fixtures.dip("10.0.1.1")));
        VipTraffic vt = new VipTraffic("100.0.0.1", Map.of(VipTraffic.INTERNET, 1.5e9), // 12 Gbit/s
                Map.of("10.0.0.1", 1.0, "10.0.1.1", 3.0));
        Instance in = Instance.build(T, new VipSet(List.of(vip)), new TrafficInterval(0, 0, 600, List.of(vt)),
                SolverOptions.defaults());
        assertEquals(12e9, in.trafficBps(0), 1e-3);
        int agg = in.switchIndex("a0_0");
        LinkLoads loads = in.resources().newLinkLoads();
        in.resources().linkLoads(0, agg, loads);
        assertEquals(3e9, on(in, loads, "a0_0", "t0_0"), 1e-3);
        assertEquals(9e9, on(in, loads, "a0_0", "t0_1"), 1e-3);

        Usage u = in.resources().newUsage();
        assertEquals(false, u.fits(0, agg), "9 Gbit/s on a 10G link is over the 80% limit");
        u.place(0, agg);
        assertEquals(9e9 / 8e9, u.mru(), 1e-9);
        // from every agg and core 9 Gbit/s reach the second DIP's ToR over one 10G link; a ToR
        // HMux spreads it over both of that ToR's down links (or has the DIP behind it)
        String where = Algorithms.get("greedy-skip").assign(in, null).assignment.get("100.0.0.1");
        assertEquals(SwitchRole.TOR, in.fabric().role(in.switchIndex(where)), where);
    }

    @Test
    void ratesOfDrainedOrUnlistedDipsAndAllZeroRates() {
        Vip vip = new Vip("100.0.0.1", "100.0.0.0/24", List.of(
                new VipPort("tcp", 80, List.of(new Dip("10.0.0.1", 1, null), new Dip("10.0.1.1", 0, null),
                        new Dip("10.1.0.1", 3, null))),
                new VipPort("tcp", 443, List.of(new Dip("10.1.1.1", 1, null)))));
        // a drained DIP's rate (old connections still flowing) and an unlisted DIP get no share
        assertEquals(Map.of("10.0.0.1", 0.25, "10.1.0.1", 0.75),
                DipShares.of(vip, Map.of("10.0.0.1", 10.0, "10.0.1.1", 50.0, "10.1.0.1", 30.0)));
        // no live DIP with a rate: by weight, evenly over the two services first
        Map<String, Double> byWeight = Map.of("10.0.0.1", 0.125, "10.1.0.1", 0.375, "10.1.1.1", 0.5);
        assertEquals(byWeight, DipShares.of(vip, Map.of("10.0.0.1", 0.0, "10.0.1.1", 7.0)));
        assertEquals(byWeight, DipShares.of(vip, null));
        // a service whose DIPs are all drained takes no share of the VIP
        Vip drained = new Vip("100.0.0.1", "100.0.0.0/24", List.of(
                new VipPort("tcp", 80, List.of(new Dip("10.0.0.1", 0, null))),
                new VipPort("tcp", 443, List.of(new Dip("10.1.1.1", 2, null)))));
        assertEquals(Map.of("10.1.1.1", 1.0), DipShares.of(drained, null));
    }

    /** Weight 0 costs no ECMP or tunnel entry either; a VIP with only drained DIPs is SMux-only. */
    @Test
    void aDrainedDipCostsNoTableEntry() {
        Vip vip = new Vip("100.0.0.1", "100.0.0.0/24", List.of(new VipPort("any", 0, List.of(
                new Dip("10.0.0.1", 2, null), new Dip("10.0.1.1", 0, null), new Dip("10.1.0.1", 4, null)))));
        long[] e = ResourceModel.tableEntries(vip);
        assertEquals(1 + 2, e[0], "ECMP: weights 2 and 4 reduce to 1 and 2");
        assertEquals(2, e[1], "tunnel: the two live DIPs");
        Vip allDrained = new Vip("100.0.0.2", "100.0.0.0/24", List.of(new VipPort("any", 0, List.of(
                new Dip("10.0.0.1", 0, null)))));
        Instance in = Instance.build(T, new VipSet(List.of(allDrained)), new TrafficInterval(0, 0, 600,
                List.of(Fixtures.traffic("100.0.0.2", Map.of("t0_0", 1e6)))), SolverOptions.defaults());
        assertEquals(false, in.resources().eligible(0));
        assertEquals("smux", Algorithms.get("greedy").assign(in, null).assignment.get("100.0.0.2"));
    }
}
