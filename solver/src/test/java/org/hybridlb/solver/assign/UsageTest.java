package org.hybridlb.solver.assign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipSet;
import org.junit.jupiter.api.Test;

class UsageTest {
    @Test
    void placingAndRemovingEveryVipLeavesNothingBehind() {
        Topology t = Fixtures.clos(2, 3, 2, 2, 2, TableCapacity.DEFAULTS);
        Object[] w = Fixtures.randomWorkload(t, 30, 5, 1e9, 11);
        Instance in = Instance.build(t, (VipSet) w[0], (TrafficInterval) w[1], SolverOptions.defaults());
        Usage u = Assignments.usageOf(in, Algorithms.get("greedy-skip").assign(in, null));
        double mru = u.mru();
        assertTrue(mru > 0);
        Usage copy = u.copy();
        for (int v = 0; v < in.vipCount(); v++) {
            u.remove(v);
        }
        assertEquals(0, u.mru(), 1e-9);
        assertEquals(0, u.hostUsed());
        for (int l = 0; l < in.resources().linkCount(); l++) {
            assertEquals(0, u.linkUsedBps(l), 1e-3);
        }
        assertEquals(mru, copy.mru(), 0, "a copy is independent");
        int placed = -1;
        for (int v = 0; v < in.vipCount() && placed < 0; v++) {
            if (copy.placement(v) >= 0) {
                placed = v;
            }
        }
        int v = placed;
        assertThrows(IllegalStateException.class, () -> copy.place(v, 0), "placing a placed VIP is a bug");
    }
}
