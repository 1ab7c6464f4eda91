package org.hybridlb.solver.assign;

import java.util.SplittableRandom;
import org.hybridlb.solver.model.Assignment;

/**
 * {@code random} of §3.8.4 ("selects the first feasible switch"): first fit over one order of
 * the switches drawn at random once per run (seeded), VIPs by decreasing traffic; a VIP that fits
 * nowhere is skipped.
 */
final class FirstFitAlgorithm implements AssignmentAlgorithm {
    @Override
    public String name() {
        return "random";
    }

    @Override
    public Assignment assign(Instance in, Assignment current) {
        Usage u = in.resources().newUsage();
        Search search = new Search(in, u, false);
        int[] order = switchOrder(in.switchCount(), new SplittableRandom(in.options().seed));
        for (int v : in.vipsByTraffic()) {
            if (!in.active(v)) {
                break;
            }
            if (search.firstFit(v, order)) {
                u.place(v, search.bestSwitch, search.loads());
            }
        }
        return Assignments.of(in, u, name(), current);
    }

    /** One random order of the switches (Fisher–Yates), drawn once per run. */
    static int[] switchOrder(int n, SplittableRandom rng) {
        int[] order = new int[n];
        for (int s = 0; s < n; s++) {
            order[s] = s;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = rng.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }
}
