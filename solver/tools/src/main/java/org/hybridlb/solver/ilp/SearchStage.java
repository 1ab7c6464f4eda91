package org.hybridlb.solver.ilp;

import java.util.List;
import java.util.Locale;
import org.hybridlb.solver.assign.Feasibility;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.ResourceModel;
import org.hybridlb.solver.assign.Usage;

/**
 * The {@link LinkSearch} step of {@link DuetIlp}, where footprints are cached: the
 * congestion-aware greedy, whether links rather than tables keep VIPs off the HMuxes
 * (link-bound), on link-bound instances the Lagrangian bound of the full model seeded from the
 * relaxation's duals, then ruin and recreate until the requested gap of the bound or its share
 * of the time.
 */
final class SearchStage {
    /** Share of the time left the local search gets on link-bound instances (SCIP rarely improves there). */
    static final double SEARCH_TIME_SHARE_LINK_BOUND = 1.0;
    /**
     * Link-bound with the whole model: half for the local search (the answer), half for SCIP (the
     * bound; its answers rarely beat the search's in that time).
     */
    static final double SEARCH_TIME_SHARE_WHOLE_MODEL = 0.5;
    /** The same on memory-bound instances, where SCIP's branch and bound does better. */
    static final double SEARCH_TIME_SHARE = 0.05;
    /** Link-bound: more than this share of traffic is on the SMuxes only for want of link room. */
    static final double LINK_BOUND_SHARE = 0.01;
    /** Share of the time left (after the local search) the Lagrangian bound gets on link-bound instances. */
    static final double LAGRANGE_TIME_SHARE = Tuning.fraction("hlb.ilp.lagrangeShare", 0.2, false);

    private final IlpContext ctx;
    private final Instance in;
    private final ResourceModel m;
    private final FootprintScan scan;
    private final LinkSearch search;

    /** What the step found. */
    static final class Outcome {
        /** The search's answer if it is feasible (and within the migration budget), else null. */
        final Usage found;
        /** Whether links, not tables, keep VIPs off the HMuxes. */
        final boolean linkBound;
        /** The bound given, lowered to the Lagrangian's where that is lower. */
        final double bound;

        Outcome(Usage found, boolean linkBound, double bound) {
            this.found = found;
            this.linkBound = linkBound;
            this.bound = bound;
        }
    }

    /** For a scan that cached the footprints ({@code scan.search} non-null). */
    SearchStage(IlpContext ctx, FootprintScan scan) {
        this.ctx = ctx;
        this.in = ctx.in;
        this.m = ctx.m;
        this.scan = scan;
        this.search = scan.search;
    }

    /** Runs the step from {@code start} (the incumbent, of share {@code bestShare}) with the best bound so far. */
    Outcome run(Usage start, double bestShare, double bound, double deadline) {
        Usage g = search.greedy(start);
        double blocked = linkBlockedShare(g);
        boolean linkBound = blocked > LINK_BOUND_SHARE;
        ctx.notes.add(String.format(Locale.ROOT, "congestion-aware greedy: %.4f%% (%s: %.1f%% of traffic on the "
                + "SMuxes only for want of link room)", 100 * ctx.share(g), linkBound ? "link-bound" : "memory-bound",
                100 * blocked));
        if (linkBound) {
            // the relaxation over y_v does not see which switch a VIP is on: the Lagrangian
            // of the full model (at the limit its LP relaxation) may be lower
            long l0 = System.nanoTime();
            double left = deadline - l0 / 1e9 - ctx.finishMargin();
            double[] seeds = scan.relaxation.seeds(l0 / 1e9 + 0.25 * LAGRANGE_TIME_SHARE * left);
            double lagrange = search.lagrangianBound(Math.max(ctx.share(g), bestShare),
                    l0 / 1e9 + LAGRANGE_TIME_SHARE * left, seeds);
            ctx.notes.add(Double.isInfinite(lagrange) ? "Lagrangian bound of the full model: no time left for it"
                    : String.format(Locale.ROOT, "Lagrangian bound of the full model: %.4f%% after %d "
                    + "subgradient steps in %.1f s", 100 * lagrange, search.lastIterations,
                    (System.nanoTime() - l0) / 1e9));
            bound = Math.min(bound, lagrange);
        }
        // stop once within the requested gap of the bound
        Usage found = localSearch(g, linkBound, deadline, bound / (1 + ctx.o.mip.relativeGap));
        return new Outcome(found, linkBound, bound);
    }

    /**
     * Ruin and recreate from the congestion-aware greedy's answer ({@link LinkSearch}). On link-bound
     * instances (VIPs left on the SMuxes although some switch has table room for them) it gets
     * {@link #SEARCH_TIME_SHARE_LINK_BOUND} of the time left, or
     * {@link #SEARCH_TIME_SHARE_WHOLE_MODEL} when SCIP has the whole model (its bound is then
     * worth the rest); else {@link #SEARCH_TIME_SHARE}: there the memory rows bind and SCIP does
     * better with the time.
     */
    private Usage localSearch(Usage g, boolean linkBound, double deadline, double stopShare) {
        long s0 = System.nanoTime();
        double left = deadline - System.nanoTime() / 1e9 - ctx.finishMargin();
        double searchShare = !linkBound ? SEARCH_TIME_SHARE
                : scan.columns.all() ? SEARCH_TIME_SHARE_WHOLE_MODEL : SEARCH_TIME_SHARE_LINK_BOUND;
        double until = System.nanoTime() / 1e9 + left * searchShare;
        Usage best = search.improve(g, until, 1, stopShare * in.totalTrafficBps());
        if (ctx.share(g) > ctx.share(best)) {
            best = g;
        }
        List<String> bad = Feasibility.violations(best);
        boolean ok = bad.isEmpty() && ctx.budgetOk(best);
        ctx.notes.add(String.format(Locale.ROOT, "local search: %d ruin-and-recreate steps: %.4f%% in %.1f s%s",
                search.lastSteps, 100 * ctx.share(best), (System.nanoTime() - s0) / 1e9, ok ? ""
                        : "; rejected: " + (bad.isEmpty() ? "migration budget" : bad.get(0))));
        return ok ? best : null;
    }

    /**
     * Share of traffic on the SMuxes whose VIP some switch has table room for (and the host
     * budget): VIPs that only links keep off the HMuxes.
     */
    private double linkBlockedShare(Usage u) {
        double blocked = 0;
        for (int v = 0; v < in.vipCount(); v++) {
            if (u.placement(v) != Usage.SMUX || in.trafficBps(v) <= 0 || !u.hostRoomFor(v) || !scan.placeable[v]) {
                continue;
            }
            for (int s = 0; s < in.switchCount(); s++) {
                if (m.fitsAlone(v, s) && u.ecmpUsed(s) + m.ecmpEntries(v) <= m.ecmpCapacity(s)
                        && u.tunnelUsed(s) + m.tunnelEntries(v) <= m.tunnelCapacity(s)) {
                    blocked += in.trafficBps(v);
                    break;
                }
            }
        }
        return blocked / in.totalTrafficBps();
    }
}
