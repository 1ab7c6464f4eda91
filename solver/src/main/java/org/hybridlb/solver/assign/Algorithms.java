package org.hybridlb.solver.assign;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.hybridlb.solver.model.Assignment;

/**
 * The registry of assignment algorithms by name, and the algorithms themselves:
 * <ul>
 * <li>{@code greedy}: Duet's greedy MRU (§3.4.1), VIPs by decreasing traffic, each on the switch
 *   with the lowest MRU after placing it (ties at random, seeded); it stops at the first VIP that
 *   fits nowhere, as the paper does: that VIP and all after it go to the SMuxes. A VIP that fits
 *   on no switch even with nothing else placed is SMux-only by design (like a large fan-out VIP)
 *   and does not stop it.</li>
 * <li>{@code greedy-skip}: the same, but a VIP that fits nowhere is skipped and the rest go on.</li>
 * <li>{@code random}: first fit (§3.8.4, "Random": "the first feasible switch") over one order of
 *   the switches drawn at random once per run, VIPs by decreasing traffic.</li>
 * <li>{@code sticky}: greedy that keeps a VIP where it is unless moving it lowers the MRU by more
 *   than δ (§3.4.2); VIPs with no place yet are placed greedily.</li>
 * <li>{@code non-sticky}: greedy from scratch every interval (§3.8.6).</li>
 * <li>{@code one-time}: greedy at the first interval (no current assignment), afterwards the
 *   current placement is kept as long as it fits (a VIP that no longer fits falls to the SMuxes,
 *   new VIPs stay there).</li>
 * <li>{@code ananta}: every VIP on the SMuxes (§3.2.1).</li>
 * </ul>
 * VIPs without traffic in the interval (not yet created, deleted, idle) stay on the SMuxes in
 * every algorithm: an HMux would gain nothing and they would take host-table room.
 * The ILP helper registers {@code ilp} with {@link #register}.
 */
public final class Algorithms {
    private static final Map<String, Supplier<AssignmentAlgorithm>> REGISTRY =
            Collections.synchronizedMap(new LinkedHashMap<>());

    static {
        register("greedy", () -> new Greedy("greedy", true));
        register("greedy-skip", () -> new Greedy("greedy-skip", false));
        register("random", FirstFit::new);
        register("sticky", Sticky::new);
        register("non-sticky", () -> new Greedy("non-sticky", null));
        register("one-time", OneTime::new);
        register("ananta", Ananta::new);
        register("ilp", org.hybridlb.solver.ilp.IlpAlgorithm::new); // exact, OR-Tools/Gurobi (ilp package)
    }

    private Algorithms() {
    }

    public static void register(String name, Supplier<AssignmentAlgorithm> factory) {
        REGISTRY.put(name, factory);
    }

    /** The algorithm of that name; IllegalArgumentException naming the known ones otherwise. */
    public static AssignmentAlgorithm get(String name) {
        Supplier<AssignmentAlgorithm> s = REGISTRY.get(name);
        if (s == null) {
            throw new IllegalArgumentException("unknown algorithm '" + name + "' (known: "
                    + String.join(", ", names()) + ")");
        }
        return s.get();
    }

    public static List<String> names() {
        synchronized (REGISTRY) {
            return new ArrayList<>(REGISTRY.keySet());
        }
    }

    static SplittableRandom rng(Instance in) {
        return new SplittableRandom(in.options().seed);
    }

    /** Placement of VIP v in {@code a} as a switch index, {@link Usage#SMUX} when none/unknown. */
    static int placementIn(Instance in, Assignment a, int v) {
        if (a == null) {
            return Usage.SMUX;
        }
        String where = a.assignment.get(in.vipId(v));
        if (where == null || Assignment.SMUX.equals(where)) {
            return Usage.SMUX;
        }
        return in.switchIndex(where);
    }

    /** Runs the greedy MRU over the VIPs by decreasing traffic into {@code u}. */
    static Usage greedy(Instance in, boolean stopAtFirstUnfit) {
        Usage u = in.resources().newUsage();
        Search search = new Search(in, u, in.options().podShortcut, rng(in));
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

    static final class Greedy implements AssignmentAlgorithm {
        private final String name;
        private final Boolean stop; // null: from the options

        Greedy(String name, Boolean stop) {
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
            return Assignments.of(in, greedy(in, s), name, current);
        }
    }

    static final class FirstFit implements AssignmentAlgorithm {
        @Override
        public String name() {
            return "random";
        }

        @Override
        public Assignment assign(Instance in, Assignment current) {
            Usage u = in.resources().newUsage();
            Search search = new Search(in, u, false, rng(in));
            int[] order = switchOrder(in.switchCount(), rng(in));
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
    }

    /** One random order of the switches (Fisher–Yates), drawn once per run of {@code random}. */
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

    static final class Sticky implements AssignmentAlgorithm {
        @Override
        public String name() {
            return "sticky";
        }

        @Override
        public Assignment assign(Instance in, Assignment current) {
            ResourceModel m = in.resources();
            Usage u = m.newUsage();
            Search search = new Search(in, u, in.options().podShortcut, rng(in));
            double delta = in.options().stickyDelta;
            boolean placingNew = true;
            for (int v : stickyOrder(in, current)) {
                if (!in.active(v)) {
                    break;
                }
                if (!m.eligible(v) || !u.hostRoomFor(v)) {
                    continue;
                }
                int cur = placementIn(in, current, v);
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
            return Assignments.of(in, u, name(), current);
        }
    }

    /**
     * Installed HMux VIPs count this much heavier when the VIPs are ordered, so a VIP on the SMuxes
     * takes a host-table slot (a fabric-wide budget) from an installed one only with clearly more
     * traffic: without it, two VIPs of similar traffic swap HMux and SMux whenever measurement
     * noise reorders them, each swap a migration.
     */
    static final double INSTALLED_ORDER_BONUS = 0.5;

    /** By decreasing traffic, installed HMux VIPs weighted by 1 + {@link #INSTALLED_ORDER_BONUS}. */
    static int[] stickyOrder(Instance in, Assignment current) {
        int[] byTraffic = in.vipsByTraffic();
        if (current == null) {
            return byTraffic;
        }
        double[] key = new double[byTraffic.length];
        Integer[] order = new Integer[byTraffic.length];
        for (int i = 0; i < byTraffic.length; i++) {
            int v = byTraffic[i];
            order[i] = i;
            key[i] = in.trafficBps(v) * (placementIn(in, current, v) >= 0 ? 1 + INSTALLED_ORDER_BONUS : 1);
        }
        // stable: ties keep the traffic order (inactive VIPs, key 0, stay last)
        java.util.Arrays.sort(order, (a, b) -> Double.compare(key[b], key[a]));
        int[] out = new int[order.length];
        for (int i = 0; i < order.length; i++) {
            out[i] = byTraffic[order[i]];
        }
        return out;
    }

    static final class OneTime implements AssignmentAlgorithm {
        @Override
        public String name() {
            return "one-time";
        }

        @Override
        public Assignment assign(Instance in, Assignment current) {
            if (current == null) {
                return Assignments.of(in, greedy(in, in.options().stopAtFirstUnfit), name(), null);
            }
            Usage u = in.resources().newUsage();
            for (int v : in.vipsByTraffic()) {
                if (!in.active(v)) {
                    break;
                }
                int cur = placementIn(in, current, v);
                if (cur >= 0 && u.fits(v, cur)) {
                    u.place(v, cur);
                }
            }
            return Assignments.of(in, u, name(), current);
        }
    }

    static final class Ananta implements AssignmentAlgorithm {
        @Override
        public String name() {
            return "ananta";
        }

        @Override
        public Assignment assign(Instance in, Assignment current) {
            return Assignments.of(in, in.resources().newUsage(), name(), current);
        }
    }
}
