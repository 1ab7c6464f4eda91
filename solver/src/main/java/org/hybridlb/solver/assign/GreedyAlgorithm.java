package org.hybridlb.solver.assign;

import org.hybridlb.solver.model.Assignment;

/**
 * Duet's greedy MRU (§3.4.1): VIPs by decreasing traffic, each on the switch with the lowest MRU
 * after placing it (ties at random, seeded). As {@code greedy} it stops at the first VIP that
 * fits nowhere, as the paper does: that VIP and all after it go to the SMuxes; a VIP that fits on
 * no switch even with nothing else placed is SMux-only by design and does not stop it. As
 * {@code greedy-skip} such a VIP is skipped and the rest go on. As {@code non-sticky} (§3.8.6) it
 * runs from scratch every interval with the stop rule of the options.
 */
final class GreedyAlgorithm implements AssignmentAlgorithm {
    private final String name;
    private final Boolean stop; // null: from the options

    GreedyAlgorithm(String name, Boolean stop) {
        this.name = name;
        this.stop = stop;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Assignment assign(Instance in, Assignment current) {
        boolean s = stop != null ? stop : in.options().stopAtFirstUnfit;
        return Assignments.of(in, run(in, s), name, current);
    }

    /** Runs the greedy MRU over the VIPs by decreasing traffic into a new usage. */
    static Usage run(Instance in, boolean stopAtFirstUnfit) {
        Usage u = in.resources().newUsage();
        Search search = new Search(in, u, in.options().podShortcut);
        for (int v : in.vipsByTraffic()) {
            if (!in.active(v)) {
                break; // the rest carry no traffic this interval: nothing to gain on an HMux
            }
            if (!in.resources().eligible(v)) {
                continue; // large fan-out: SMux by design, not a VIP that "fits nowhere"
            }
            if (search.findBest(v)) {
                search.placeBest(v);
            } else if (stopAtFirstUnfit && search.blockedByEarlierPlacements(v)) {
                break; // the paper's stop; a VIP too big for any switch even alone is SMux-only
            }
        }
        return u;
    }
}
