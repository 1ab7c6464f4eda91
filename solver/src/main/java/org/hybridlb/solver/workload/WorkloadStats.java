package org.hybridlb.solver.workload;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipTraffic;

/** The shape figures of one interval of a workload: what Fig. 3.15 and §3.2 describe. */
public final class WorkloadStats {
    public final int activeVips;
    /** Distinct DIP addresses over all VIPs of the configuration. */
    public final long dips;
    public final double totalBytesPerSec;
    /** Share of the interval's traffic carried by the busiest 10% (1%) of its active VIPs. */
    public final double topTenthShare;
    public final double topHundredthShare;
    /** Share of the interval's traffic from inside the DC (not from 'internet'). */
    public final double internalShare;
    public final int medianDips;
    public final int maxDips;

    private WorkloadStats(int activeVips, long dips, double total, double topTenth, double topHundredth,
                          double internal, int medianDips, int maxDips) {
        this.activeVips = activeVips;
        this.dips = dips;
        this.totalBytesPerSec = total;
        this.topTenthShare = topTenth;
        this.topHundredthShare = topHundredth;
        this.internalShare = internal;
        this.medianDips = medianDips;
        this.maxDips = maxDips;
    }

    public static WorkloadStats of(Workload w, int interval) {
        TrafficInterval in = w.trace.intervals.get(interval);
        List<Double> rates = new ArrayList<>(in.vips.size());
        double total = 0;
        double internet = 0;
        for (VipTraffic vt : in.vips) {
            double r = vt.totalBps();
            rates.add(r);
            total += r;
            internet += vt.sources.getOrDefault(VipTraffic.INTERNET, 0.0);
        }
        rates.sort(Collections.reverseOrder());
        List<Integer> dipCounts = new ArrayList<>(w.vips.vips.size());
        Map<String, Boolean> distinct = new HashMap<>();
        for (Vip v : w.vips.vips) {
            dipCounts.add(dipCount(v));
            for (VipPort p : v.ports) {
                for (Dip d : p.dips) {
                    distinct.put(d.ip, Boolean.TRUE);
                }
            }
        }
        Collections.sort(dipCounts);
        return new WorkloadStats(in.vips.size(), distinct.size(), total,
                topShare(rates, total, 0.10), topShare(rates, total, 0.01),
                total > 0 ? (total - internet) / total : 0,
                dipCounts.isEmpty() ? 0 : dipCounts.get(dipCounts.size() / 2),
                dipCounts.isEmpty() ? 0 : dipCounts.get(dipCounts.size() - 1));
    }

    /** Distinct DIPs of a VIP over all its ports. */
    public static int dipCount(Vip v) {
        if (v.ports.size() == 1) {
            return v.ports.get(0).dips.size();
        }
        Map<String, Boolean> ips = new HashMap<>();
        for (VipPort p : v.ports) {
            for (Dip d : p.dips) {
                ips.put(d.ip, Boolean.TRUE);
            }
        }
        return ips.size();
    }

    private static double topShare(List<Double> sortedDesc, double total, double fraction) {
        int k = Math.max(1, (int) Math.round(sortedDesc.size() * fraction));
        double sum = 0;
        for (int i = 0; i < k && i < sortedDesc.size(); i++) {
            sum += sortedDesc.get(i);
        }
        return total > 0 ? sum / total : 0;
    }
}
