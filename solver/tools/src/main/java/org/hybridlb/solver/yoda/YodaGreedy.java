package org.hybridlb.solver.yoda;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Best-fit-decreasing placement used to warm-start the ILP (and as its fallback): VIPs by
 * failover load, largest first; each replica goes to the instance that still fits it with the
 * least room left, preferring (in limit mode) the instances the VIP was on, then instances
 * already in use. Returns null when some VIP cannot be placed.
 */
final class YodaGreedy {
    private YodaGreedy() {
    }

    static YodaAssignment place(YodaProblem.Resolved p, YodaMode mode) {
        int nv = p.vip.length;
        int ny = p.instances.size();
        boolean limit = mode == YodaMode.LIMIT && p.hasPrevious();
        double[] load = new double[ny];
        int[] rules = new int[ny];
        boolean[] open = new boolean[ny];
        double[] trans = limit ? YodaAssignment.previousLoad(p) : new double[ny];
        double[] transCap = new double[ny];
        for (int y = 0; y < ny; y++) {
            transCap[y] = Math.max(p.instances.get(y).trafficCapacity, trans[y]);
        }
        Integer[] order = new Integer[nv];
        for (int v = 0; v < nv; v++) {
            order[v] = v;
        }
        Arrays.sort(order, Comparator.comparingDouble((Integer v) -> -p.failoverLoad(v)));
        int[][] placement = new int[nv][];
        for (int v : order) {
            double fl = p.failoverLoad(v);
            double share = p.traffic[v] / p.replicas[v];
            List<Integer> chosen = new ArrayList<>();
            boolean[] taken = new boolean[ny];
            for (int k = 0; k < p.replicas[v]; k++) {
                int best = -1;
                double bestKey = Double.POSITIVE_INFINITY;
                for (int y = 0; y < ny; y++) {
                    YodaProblem.Instance in = p.instances.get(y);
                    if (taken[y] || load[y] + fl > in.trafficCapacity * (1 + YodaAssignment.EPS)
                            || rules[y] + p.rules[v] > in.ruleCapacity) {
                        continue;
                    }
                    boolean wasHere = p.previous.get(v).containsKey(y);
                    double extra = 0;
                    if (limit) {
                        double before = wasHere ? p.traffic[v] / p.previous.get(v).size() : 0;
                        extra = Math.max(0, share - before);
                        if (trans[y] + extra > transCap[y] * (1 + YodaAssignment.EPS)) {
                            continue;
                        }
                    }
                    // Lexicographic preference: previous home (limit mode), open instance, tightest fit.
                    double room = (in.trafficCapacity - load[y] - fl) / in.trafficCapacity;
                    double key = (limit && wasHere ? 0 : 4) + (open[y] ? 0 : 2) + room;
                    if (key < bestKey) {
                        bestKey = key;
                        best = y;
                    }
                }
                if (best < 0) {
                    return null;
                }
                taken[best] = true;
                open[best] = true;
                load[best] += fl;
                rules[best] += p.rules[v];
                if (limit) {
                    double before = p.previous.get(v).containsKey(best) ? p.traffic[v] / p.previous.get(v).size() : 0;
                    trans[best] += Math.max(0, share - before);
                }
                chosen.add(best);
            }
            placement[v] = chosen.stream().mapToInt(Integer::intValue).sorted().toArray();
        }
        return new YodaAssignment(p, placement);
    }
}
