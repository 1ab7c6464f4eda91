package org.hybridlb.solver.assign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipSet;

/** No algorithm ever produces an assignment that violates a capacity, whatever it starts from. */
class FeasibilityPropertiesTest {
    @Property(tries = 40)
    void noAssignmentViolatesAnyCapacity(@ForAll @IntRange(min = 1, max = 3) int pods,
                                         @ForAll @IntRange(min = 1, max = 4) int tors,
                                         @ForAll @IntRange(min = 1, max = 3) int aggs,
                                         @ForAll @IntRange(min = 2, max = 40) int host,
                                         @ForAll @IntRange(min = 1, max = 40) int ecmp,
                                         @ForAll @IntRange(min = 1, max = 12) int tunnel,
                                         @ForAll @DoubleRange(min = 1e8, max = 2e11) double scaleBps,
                                         @ForAll boolean skip,
                                         @ForAll @IntRange(min = 0, max = 10_000) int seed) {
        Topology t = Fixtures.clos(pods, tors, aggs, aggs, 2, new TableCapacity(host, ecmp, tunnel));
        Object[] w = Fixtures.randomWorkload(t, 25, 6, scaleBps, seed);
        Instance in = Instance.build(t, (VipSet) w[0], (TrafficInterval) w[1],
                SolverOptions.defaults().withSeed(seed).withStopAtFirstUnfit(!skip));
        // a random "installed" assignment, feasible or not, for sticky and one-time
        Random r = new Random(seed);
        Map<String, String> cur = new LinkedHashMap<>();
        for (int v = 0; v < in.vipCount(); v++) {
            cur.put(in.vipId(v), r.nextInt(4) == 0 ? Assignment.SMUX : in.switchId(r.nextInt(in.switchCount())));
        }
        Assignment current = new Assignment("random-installed", cur, 0, 0, 0, null);
        for (String name : Algorithms.names()) {
            for (Assignment prev : new Assignment[] {null, current}) {
                Assignment a = Algorithms.get(name).assign(in, prev);
                List<String> bad = Feasibility.violations(in, a);
                assertTrue(bad.isEmpty(), name + (prev == null ? "" : " from an installed assignment") + ": " + bad);
                assertEquals(in.vipCount(), a.assignment.size());
                assertTrue(a.hmuxTrafficShare >= 0 && a.hmuxTrafficShare <= 1);
                assertTrue(a.mru <= 1 + Usage.EPS, name + " mru " + a.mru);
                // the reported MRU is the one the checker recomputes
                assertEquals(Assignments.usageOf(in, a).mru(), a.mru, 1e-9);
            }
        }
    }
}
