package org.hybridlb.solver.assign;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.routing.EcmpRouter;
import org.hybridlb.solver.routing.Fabric;
import org.hybridlb.solver.routing.LinkLoads;
import org.junit.jupiter.api.Test;

class RoutingTest {
    private static final Topology SMALL = Fixtures.clos(2, 2, 2, 2, 1, TableCapacity.DEFAULTS);

    private static double on(Fabric f, LinkLoads l, String a, String b) {
        return l.loadOn(f.linkBetween(f.index(a), f.index(b)));
    }

    @Test
    void perHopEcmpBetweenPodsSplitsEvenlyAtEveryLayer() {
        Fabric f = new Fabric(SMALL);
        EcmpRouter r = new EcmpRouter(f);
        LinkLoads out = new LinkLoads(f.linkCount());
        int src = f.index("t0_0");
        int dst = f.index("t1_0");
        r.seed(src, dst, 8);
        r.propagateTo(dst, false, out);
        // t0_0 -> {a0_0, a0_1}: 4 each; agg j -> core j -> agg j of pod 1 -> t1_0
        assertEquals(4, on(f, out, "t0_0", "a0_0"), 1e-12);
        assertEquals(4, on(f, out, "t0_0", "a0_1"), 1e-12);
        assertEquals(4, on(f, out, "a0_0", "c0"), 1e-12);
        assertEquals(4, on(f, out, "a0_1", "c1"), 1e-12);
        assertEquals(4, on(f, out, "c0", "a1_0"), 1e-12);
        assertEquals(4, on(f, out, "c1", "a1_1"), 1e-12);
        assertEquals(4, on(f, out, "a1_0", "t1_0"), 1e-12);
        assertEquals(4, on(f, out, "a1_1", "t1_0"), 1e-12);
        assertEquals(8, out.size(), "nothing else is touched");
        assertEquals(4, f.distance(src, dst));
    }

    @Test
    void symmetricPodsAreRecognisedAndALostLinkBreaksSymmetry() {
        Fabric f = new Fabric(SMALL);
        assertTrue(f.podSymmetric(0));
        assertTrue(f.podSymmetric(1));
        List<Link> links = new ArrayList<>(SMALL.links);
        links.removeIf(l -> l.a.equals("t1_1") && l.b.equals("a1_0"));
        Fabric g = new Fabric(new Topology("x", SMALL.switches, links, SMALL.hosts, List.of()));
        assertTrue(g.podSymmetric(0));
        assertFalse(g.podSymmetric(1));
    }

    @Test
    void interceptStopsOneHopShortAndReportsArrivals() {
        Fabric f = new Fabric(SMALL);
        EcmpRouter r = new EcmpRouter(f);
        LinkLoads out = new LinkLoads(f.linkCount());
        int dst = f.index("t1_0");
        r.seed(f.index("c0"), dst, 2);
        r.seed(f.index("c1"), dst, 6);
        r.propagateTo(dst, true, out);
        assertEquals(2, on(f, out, "c0", "a1_0"), 1e-12);
        assertEquals(0, on(f, out, "a1_0", "t1_0"), 1e-12);
        double[] arrived = new double[2];
        for (int i = 0; i < r.arrivals(); i++) {
            arrived[r.arrivalNode(i) == f.index("a1_0") ? 0 : 1] += r.arrivalAmount(i);
        }
        assertArrayEquals(new double[] {2, 6}, arrived, 1e-12);
    }
}
