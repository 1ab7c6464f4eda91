package org.hybridlb.solver.assign;

import org.hybridlb.solver.model.Assignment;

/**
 * {@code one-time} (§3.8.6): the greedy at the first interval (no current assignment); later the
 * current placement is kept as long as it fits (a VIP that no longer fits falls to the SMuxes,
 * new VIPs stay there).
 */
final class OneTimeAlgorithm implements AssignmentAlgorithm {
    @Override
    public String name() {
        return "one-time";
    }

    @Override
    public Assignment assign(Instance in, Assignment current) {
        if (current == null) {
            return Assignments.of(in, GreedyAlgorithm.run(in, in.options().stopAtFirstUnfit), name(), null);
        }
        Usage u = in.resources().newUsage();
        for (int v : in.vipsByTraffic()) {
            if (!in.active(v)) {
                break;
            }
            int cur = Assignments.placementOf(in, current, v);
            if (cur >= 0 && u.fits(v, cur)) {
                u.place(v, cur);
            }
        }
        return Assignments.of(in, u, name(), current);
    }
}
