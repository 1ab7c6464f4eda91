package org.hybridlb.solver.assign;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipSet;
import org.junit.jupiter.api.Test;

/**
 * First fit ({@code random}) evaluates ToRs of symmetric pods with the container shortcut and
 * passes switches over by a link-room bound: on a loaded fabric it must decide every (VIP,
 * switch) exactly as routing the VIP on that switch in full does.
 */
class FirstFitExactnessTest {
    @Test
    void firstFitDecidesEverySwitchAsAFullEvaluation() {
        Topology t = Fixtures.clos(3, 4, 2, 4, 2, TableCapacity.DEFAULTS);
        for (long seed = 1; seed <= 3; seed++) {
            Object[] w = Fixtures.randomWorkload(t, 40, 5, 2.5e10, seed);
            Instance in = Instance.build(t, (VipSet) w[0], (TrafficInterval) w[1], SolverOptions.defaults());
            // load the fabric with the greedy's placement of the first half of the VIPs
            Usage u = in.resources().newUsage();
            Search greedy = new Search(in, u, true);
            int[] byTraffic = in.vipsByTraffic();
            for (int i = 0; i < byTraffic.length / 2; i++) {
                if (greedy.findBest(byTraffic[i])) {
                    greedy.placeBest(byTraffic[i]);
                }
            }
            Search ff = new Search(in, u, false);
            Search full = new Search(in, u, false);
            int checked = 0;
            int fitting = 0;
            for (int i = byTraffic.length / 2; i < byTraffic.length; i++) {
                int v = byTraffic[i];
                if (u.placement(v) != Usage.SMUX) {
                    continue;
                }
                for (int s = 0; s < in.switchCount(); s++) {
                    boolean expected = u.fits(v, s);
                    boolean got = ff.firstFit(v, new int[] {s});
                    assertEquals(expected, got, "seed " + seed + " VIP " + in.vipId(v) + " on " + in.switchId(s));
                    if (got) {
                        double mru = full.mruOn(v, s);
                        assertEquals(mru, ff.bestMru, 1e-9, "MRU of " + in.vipId(v) + " on " + in.switchId(s));
                        fitting++;
                    }
                    checked++;
                }
            }
            assertEquals(true, fitting > 0 && fitting < checked, "a mix of fitting and not: " + fitting + "/" + checked);
        }
    }
}
