package org.hybridlb.solver.assign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipSet;
import org.junit.jupiter.api.Test;

class GreedySmokeTest {
    @Test
    void everyAlgorithmProducesAFeasibleAssignment() {
        Topology t = Fixtures.clos(3, 4, 2, 4, 2, TableCapacity.DEFAULTS);
        Object[] w = Fixtures.randomWorkload(t, 60, 6, 2e10, 7);
        Instance in = Instance.build(t, (VipSet) w[0], (TrafficInterval) w[1], SolverOptions.defaults());
        for (String name : Algorithms.names()) {
            Assignment a = Algorithms.get(name).assign(in, null);
            assertEquals(name, a.algorithm);
            assertEquals(60, a.assignment.size());
            assertTrue(Feasibility.violations(in, a).isEmpty(), name + ": " + Feasibility.violations(in, a));
        }
    }

    @Test
    void nextIntervalSharesTheIndexingAndGivesTheSameResult() {
        Topology t = Fixtures.clos(3, 4, 2, 4, 2, TableCapacity.DEFAULTS);
        Object[] w = Fixtures.randomWorkload(t, 60, 6, 2e10, 7);
        Object[] w2 = Fixtures.randomWorkload(t, 60, 6, 3e10, 8);
        VipSet vips = (VipSet) w[0];
        // same VIP addresses in both workloads; use the first VIP set with the second traffic
        TrafficInterval next = (TrafficInterval) w2[1];
        Instance first = Instance.build(t, vips, (TrafficInterval) w[1], SolverOptions.defaults());
        Instance fresh = Instance.build(t, vips, next, SolverOptions.defaults());
        Instance shared = first.withTraffic(next);
        Algorithms.get("greedy-skip").assign(first, null); // fills the route caches
        assertEquals(Algorithms.get("greedy-skip").assign(fresh, null).assignment,
                Algorithms.get("greedy-skip").assign(shared, null).assignment);
    }
}
