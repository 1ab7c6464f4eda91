package org.hybridlb.solver.migration;

/** Knobs of the migration planner, with the defaults the paper implies. */
public final class PlannerOptions {
    /** No bound on the traffic detoured through the SMuxes at once. */
    public static final double UNBOUNDED = Double.POSITIVE_INFINITY;

    /**
     * Announce on the new HMux before withdrawing from the old one whenever memory allows
     * (§3.4.2). When false every move goes through the SMuxes, as the paper's Non-sticky does.
     */
    public final boolean makeBeforeBreak;
    /**
     * Upper bound (bits/s, like link and SMux capacities) on the traffic of VIPs that are on an HMux before and after the
     * migration but only on the SMuxes during a wave; detours are spread over waves to respect it.
     */
    public final double maxTransientSmuxBps;

    public PlannerOptions(boolean makeBeforeBreak, double maxTransientSmuxBps) {
        if (!(maxTransientSmuxBps > 0)) {
            throw new IllegalArgumentException("maxTransientSmuxBps must be > 0, got " + maxTransientSmuxBps);
        }
        this.makeBeforeBreak = makeBeforeBreak;
        this.maxTransientSmuxBps = maxTransientSmuxBps;
    }

    public static PlannerOptions defaults() {
        return new PlannerOptions(true, UNBOUNDED);
    }
}
