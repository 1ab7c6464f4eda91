package org.hybridlb.solver.model;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How a VIP's traffic is split over its DIPs: the one rule the solver's link loads and the
 * controller's traffic matrix follow (solver/ASSIGNMENT.md, "What the traffic inputs mean").
 *
 * <p>The VIP's traffic is the sum of its sources. Per-DIP rates, when an interval has them, are
 * <b>shares</b>: the VIP's traffic is split over its DIPs in proportion to them, whatever they add
 * up to (they come from host agents, the sources from switch counters, so they never add up
 * exactly). A DIP without a rate gets none. Without per-DIP rates (or when they give no live DIP
 * any traffic) the traffic is split evenly over the VIP's services that have a live DIP, then over
 * each service's DIPs in proportion to their weights. A DIP of weight 0 (drained: no new flows)
 * gets no share either way; a DIP that is live in one service and drained in another counts as live.
 */
public final class DipShares {
    private DipShares() {
    }

    /**
     * DIP address to its share of the VIP's traffic; the shares add up to 1, or the map is empty
     * when the VIP has no live DIP. {@code rates} may be null or empty (split by weight); rates of
     * addresses that are not live DIPs of the VIP are left out.
     */
    public static Map<String, Double> of(Vip vip, Map<String, Double> rates) {
        Map<String, Double> out = new LinkedHashMap<>();
        if (rates != null && !rates.isEmpty()) {
            double sum = 0;
            for (VipPort p : vip.ports) {
                for (Dip d : p.dips) {
                    Double r = rates.get(d.ip);
                    if (d.weight > 0 && r != null && r > 0 && !out.containsKey(d.ip)) {
                        out.put(d.ip, r);
                        sum += r;
                    }
                }
            }
            if (sum > 0) {
                for (Map.Entry<String, Double> e : out.entrySet()) {
                    e.setValue(e.getValue() / sum);
                }
                return out;
            }
            out.clear();
        }
        int live = 0;
        for (VipPort p : vip.ports) {
            if (weightSum(p) > 0) {
                live++;
            }
        }
        for (VipPort p : vip.ports) {
            long w = weightSum(p);
            if (w == 0) {
                continue;
            }
            for (Dip d : p.dips) {
                if (d.weight > 0) {
                    out.merge(d.ip, (double) d.weight / w / live, Double::sum);
                }
            }
        }
        return out;
    }

    /** Sum of a service's weights (weight-0 DIPs add nothing). */
    public static long weightSum(VipPort p) {
        long w = 0;
        for (Dip d : p.dips) {
            w += Math.max(0, d.weight);
        }
        return w;
    }
}
