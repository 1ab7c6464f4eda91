package org.hybridlb.solver.sim;

/**
 * What one algorithm did in one interval of a trace. Traffic figures are in bits/s, the unit of
 * the assignment instance and of SMux capacities; the report shows them in Gbit/s.
 */
public final class IntervalResult {
    public final String algorithm;
    public final int interval;
    public final long startSeconds;
    /** All VIP traffic this interval. */
    public final double totalBps;
    /** Share of the traffic on HMuxes (0..1). */
    public final double hmuxShare;
    /** Traffic of VIPs whose placement changed since the previous interval (0 in the first). */
    public final double shuffledBps;
    /** How many VIPs with traffic changed placement. */
    public final int vipsMoved;
    /** SMuxes needed by the shared provisioning (§3.8.2): max(unassigned, failure, transient) / capacity. */
    public final int smuxCount;
    /** SMuxes for max(unassigned, failure) alone, as the paper counts them when it ignores migration (§3.8.2). */
    public final int smuxCountNoMigration;
    public final double unassignedBps;
    public final double failureBps;
    /** Provisioning's transient: unassigned plus every VIP that moves, as if all went through the SMuxes. */
    public final double transientBps;
    /** Maximum resource utilisation. */
    public final double mru;
    public final double solveMillis;
    /** The migration plan from the previous interval's assignment (-1 / NaN in the first interval). */
    public final int planWaves;
    public final int planSteps;
    /** Peak traffic on the SMuxes as stepping stone in any wave of the plan. */
    public final double planPeakDetourBps;
    /** VIPs the plan sent through the SMuxes (on HMuxes before and after, off them in between). */
    public final int planDetouredVips;
    /** SMuxes needed if the migration transient is the plan's peak detour rather than every move. */
    public final int smuxCountWithPlan;
    public final double planMillis;

    public IntervalResult(String algorithm, int interval, long startSeconds, double totalBps, double hmuxShare,
                   double shuffledBps, int vipsMoved, int smuxCount, int smuxCountNoMigration, double unassignedBps, double failureBps,
                   double transientBps, double mru, double solveMillis, int planWaves, int planSteps,
                   double planPeakDetourBps, int planDetouredVips, int smuxCountWithPlan, double planMillis) {
        this.algorithm = algorithm;
        this.interval = interval;
        this.startSeconds = startSeconds;
        this.totalBps = totalBps;
        this.hmuxShare = hmuxShare;
        this.shuffledBps = shuffledBps;
        this.vipsMoved = vipsMoved;
        this.smuxCount = smuxCount;
        this.smuxCountNoMigration = smuxCountNoMigration;
        this.unassignedBps = unassignedBps;
        this.failureBps = failureBps;
        this.transientBps = transientBps;
        this.mru = mru;
        this.solveMillis = solveMillis;
        this.planWaves = planWaves;
        this.planSteps = planSteps;
        this.planPeakDetourBps = planPeakDetourBps;
        this.planDetouredVips = planDetouredVips;
        this.smuxCountWithPlan = smuxCountWithPlan;
        this.planMillis = planMillis;
    }

    /** Shuffled traffic as a share of all traffic (0..1). */
    public double shuffledShare() {
        return totalBps > 0 ? shuffledBps / totalBps : 0;
    }
}
