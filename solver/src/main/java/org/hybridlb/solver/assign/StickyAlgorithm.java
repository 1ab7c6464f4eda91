package org.hybridlb.solver.assign;

import java.util.Arrays;
import org.hybridlb.solver.model.Assignment;

/**
 * Sticky re-assignment (§3.4.2): a VIP that still fits where it is stays unless the best switch
 * lowers the MRU by more than δ; VIPs with no place yet are placed greedily (stop rule from the
 * options; installed VIPs are kept after a stop). Repeated on its own answer until it is stable.
 */
final class StickyAlgorithm implements AssignmentAlgorithm {
    /**
     * Installed HMux VIPs count this much heavier when the VIPs are ordered, so a VIP on the SMuxes
     * takes a host-table slot (a fabric-wide budget) from an installed one only with clearly more
     * traffic: without it, two VIPs of similar traffic swap HMux and SMux whenever measurement
     * noise reorders them, each swap a migration.
     */
    static final double INSTALLED_ORDER_BONUS = 0.5;

    @Override
    public String name() {
        return "sticky";
    }

    @Override
    public Assignment assign(Instance in, Assignment current) {
        int[] installed = new int[in.vipCount()];
        for (int v = 0; v < installed.length; v++) {
            installed[v] = Assignments.placementOf(in, current, v);
        }
        // A pass depends on its order, and the order on what is installed: a VIP that a pass
        // places (or drops) moves up (or down) in the next pass's order, where a VIP before it
        // may now gain more than δ by moving. So passes repeat on their own answer until the
        // order no longer changes: a pass in the same order from its own answer would change
        // nothing (ties are broken per VIP, Search), so re-assigning the same traffic moves
        // nothing -- what a controller that reconciles every few seconds needs.
        int[] order = order(in, installed);
        Usage u = pass(in, installed, order);
        for (int p = 1; p < MAX_PASSES; p++) {
            int[] placed = placements(in, u);
            int[] next = order(in, placed);
            if (Arrays.equals(order, next)) {
                break;
            }
            order = next;
            u = pass(in, placed, order);
        }
        return Assignments.of(in, u, name(), current);
    }

    /** Passes of the sticky rule, each from the previous one's answer, at most. */
    static final int MAX_PASSES = 4;

    private static int[] placements(Instance in, Usage u) {
        int[] out = new int[in.vipCount()];
        for (int v = 0; v < out.length; v++) {
            out[v] = u.placement(v);
        }
        return out;
    }

    /** One pass of the sticky rule from {@code installed} (per VIP a switch index or SMUX). */
    private static Usage pass(Instance in, int[] installed, int[] order) {
        ResourceModel m = in.resources();
        Usage u = m.newUsage();
        Search search = new Search(in, u, in.options().podShortcut);
        double delta = in.options().stickyDelta;
        boolean placingNew = true;
        for (int v : order) {
            if (!in.active(v)) {
                break;
            }
            if (!m.eligible(v) || !u.hostRoomFor(v)) {
                continue;
            }
            int cur = installed[v];
            if (cur >= 0 && m.fitsAlone(v, cur)) {
                double here = search.mruOn(v, cur);
                if (here <= 1 + Usage.EPS) {
                    // no switch can beat the current MRU, so no move can gain more than this
                    if (here - u.mru() <= delta) {
                        u.place(v, cur, search.loads()); // loads of v on cur, from mruOn
                        continue;
                    }
                    if (search.findBest(v) && here - search.bestMru > delta) {
                        search.placeBest(v);
                    } else {
                        u.place(v, cur);
                    }
                    continue;
                }
            }
            if (!placingNew) {
                continue;
            }
            if (search.findBest(v)) {
                search.placeBest(v);
            } else if (in.options().stopAtFirstUnfit && search.blockedByEarlierPlacements(v)) {
                placingNew = false; // the paper's greedy stops placing; installed VIPs may stay
            }
        }
        return u;
    }

    /** By decreasing traffic, installed HMux VIPs weighted by 1 + {@link #INSTALLED_ORDER_BONUS}. */
    static int[] order(Instance in, int[] installed) {
        int[] byTraffic = in.vipsByTraffic();
        double[] key = new double[byTraffic.length];
        Integer[] order = new Integer[byTraffic.length];
        for (int i = 0; i < byTraffic.length; i++) {
            int v = byTraffic[i];
            order[i] = i;
            key[i] = in.trafficBps(v) * (installed[v] >= 0 ? 1 + INSTALLED_ORDER_BONUS : 1);
        }
        // stable: ties keep the traffic order (inactive VIPs, key 0, stay last)
        Arrays.sort(order, (a, b) -> Double.compare(key[b], key[a]));
        int[] out = new int[order.length];
        for (int i = 0; i < order.length; i++) {
            out[i] = byTraffic[order[i]];
        }
        return out;
    }
}
