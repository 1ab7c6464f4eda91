package org.hybridlb.solver.yoda;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A many-to-many assignment (VIP index to the instance indices it is on) and the figures Yoda
 * §8.2 judges it by, all computed from the problem so they cannot disagree with the checker.
 */
public final class YodaAssignment {
    /** Relative slack for floating-point comparisons against capacities. */
    static final double EPS = 1e-9;

    public final YodaProblem.Resolved problem;
    /** Per VIP: sorted instance indices. */
    public final int[][] placement;

    public YodaAssignment(YodaProblem.Resolved problem, int[][] placement) {
        this.problem = problem;
        this.placement = placement;
    }

    public boolean[] usedInstances() {
        boolean[] used = new boolean[problem.instances.size()];
        for (int[] ys : placement) {
            for (int y : ys) {
                used[y] = true;
            }
        }
        return used;
    }

    public int instancesUsed() {
        int n = 0;
        for (boolean b : usedInstances()) {
            n += b ? 1 : 0;
        }
        return n;
    }

    /** Worst-case traffic on each instance after each VIP loses f_v replicas (eq. 1 left side). */
    public double[] failoverLoad() {
        double[] load = new double[problem.instances.size()];
        for (int v = 0; v < placement.length; v++) {
            for (int y : placement[v]) {
                load[y] += problem.failoverLoad(v);
            }
        }
        return load;
    }

    public int[] rules() {
        int[] rules = new int[problem.instances.size()];
        for (int v = 0; v < placement.length; v++) {
            for (int y : placement[v]) {
                rules[y] += problem.rules[v];
            }
        }
        return rules;
    }

    /** Traffic an instance may see while L4 muxes switch over (eqs. 4-5): per VIP the max of old and new share. */
    public double[] transientLoad() {
        int ny = problem.instances.size();
        double[] load = new double[ny];
        for (int v = 0; v < placement.length; v++) {
            boolean[] now = new boolean[ny];
            for (int y : placement[v]) {
                now[y] = true;
            }
            for (int y = 0; y < ny; y++) {
                if (now[y] || problem.previous.get(v).containsKey(y)) {
                    load[y] += problem.transientShare(v, y, now[y]);
                }
            }
        }
        return load;
    }

    /** Traffic the previous assignment alone puts on each instance (the transition cannot do better). */
    public static double[] previousLoad(YodaProblem.Resolved p) {
        double[] load = new double[p.instances.size()];
        for (int v = 0; v < p.vip.length; v++) {
            for (int y : p.previous.get(v).keySet()) {
                load[y] += p.traffic[v] / p.previous.get(v).size();
            }
        }
        return load;
    }

    /** Instances whose transient load exceeds their traffic capacity (Fig. 16(d)). */
    public int overloadedDuringTransition() {
        double[] tl = transientLoad();
        int n = 0;
        for (int y = 0; y < tl.length; y++) {
            if (tl[y] > problem.instances.get(y).trafficCapacity * (1 + EPS)) {
                n++;
            }
        }
        return n;
    }

    /** Connections whose instance no longer serves their VIP (eqs. 6-7). */
    public double migratedConnections() {
        double m = 0;
        for (int v = 0; v < placement.length; v++) {
            for (Map.Entry<Integer, Double> e : problem.previous.get(v).entrySet()) {
                if (!contains(placement[v], e.getKey())) {
                    m += e.getValue();
                }
            }
        }
        return m;
    }

    /**
     * Every constraint of Fig. 7 this assignment breaks, empty when feasible. {@code budget} is δ
     * in connections; transient and migration limits apply in {@link YodaMode#LIMIT} only.
     */
    public List<String> violations(YodaMode mode, double budget) {
        List<String> out = new ArrayList<>();
        int ny = problem.instances.size();
        for (int v = 0; v < placement.length; v++) {
            int[] ys = placement[v];
            long distinct = java.util.Arrays.stream(ys).distinct().count();
            if (ys.length != problem.replicas[v] || distinct != ys.length) {
                out.add("VIP " + problem.vip[v] + ": on " + distinct + " distinct instances, wants "
                        + problem.replicas[v] + " replicas (eq. 3)");
            }
        }
        double[] fl = failoverLoad();
        int[] rl = rules();
        for (int y = 0; y < ny; y++) {
            YodaProblem.Instance in = problem.instances.get(y);
            if (fl[y] > in.trafficCapacity * (1 + EPS)) {
                out.add("instance " + in.id + ": failover traffic " + fl[y] + " > capacity " + in.trafficCapacity
                        + " (eq. 1)");
            }
            if (rl[y] > in.ruleCapacity) {
                out.add("instance " + in.id + ": " + rl[y] + " rules > capacity " + in.ruleCapacity + " (eq. 2)");
            }
        }
        if (mode == YodaMode.LIMIT && problem.hasPrevious()) {
            double[] tl = transientLoad();
            double[] before = previousLoad(problem);
            for (int y = 0; y < ny; y++) {
                double cap = Math.max(problem.instances.get(y).trafficCapacity, before[y]);
                if (tl[y] > cap * (1 + EPS)) {
                    out.add("instance " + problem.instances.get(y).id + ": transient traffic " + tl[y] + " > " + cap
                            + " (eq. 4)");
                }
            }
            double migrated = migratedConnections();
            if (migrated > budget * (1 + EPS) + EPS) {
                out.add("migrated connections " + migrated + " > budget " + budget + " (eq. 6)");
            }
        }
        return out;
    }

    static boolean contains(int[] a, int x) {
        for (int i : a) {
            if (i == x) {
                return true;
            }
        }
        return false;
    }
}
