package org.hybridlb.solver.ilp;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.solver.assign.Assignments;
import org.hybridlb.solver.assign.Feasibility;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.ResourceModel;
import org.hybridlb.solver.assign.Usage;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.SolveReport;

/**
 * The Duet VIP assignment as an ILP (§3.4: maximise the traffic HMuxes carry subject to switch
 * memory and link capacity; the model, row by row from the brain's {@link ResourceModel}:
 * {@link ColumnModel}), solved for the best assignment and a proven bound on any.
 *
 * <p>Size. The full model has a column per (VIP, switch) that fits, about 100 link entries
 * each: 312,000 columns and 32 million entries for 3,000 VIPs on 104 switches, more than SCIP
 * can even solve the root LP of in a minute. So the model is solved in two parts:
 * <ol>
 * <li><b>Bound</b>: a relaxation over y_v = "v is on some HMux" ({@link RelaxationBound}):
 *   memory summed over the switches where v fits, the host budget, per link the least load v
 *   puts on it wherever it goes (min_s t(l, s, v)), and the migration budget. Every feasible
 *   assignment satisfies it, so its proven optimum (small: one binary per VIP) bounds the full
 *   model.</li>
 * <li><b>Assignment</b>: the full model restricted to candidate columns per VIP
 *   ({@link FootprintScan}, {@link Columns}), with link rows added lazily ({@link LazyRounds}).
 *   When every fitting switch is a candidate the restricted model is the full one and its own
 *   bound counts too.</li>
 * </ol>
 * The gap reported is between the assignment and the best valid bound. The answer is only one
 * that passes {@link Feasibility} (and the migration budget).
 *
 * <p>Link-bound instances (solver/ILP.md): the footprints of every fitting pair are cached for
 * {@link LinkSearch} ({@link SearchStage}): a congestion-aware greedy (the paper's greedy picks
 * at random once one link is full), ruin and recreate, and a Lagrangian bound of the full model
 * seeded from the relaxation's duals. The relaxation also has rows over groups of links
 * ({@link LinkGroups}: a ToR's up links together, ...), where the least load wherever a VIP
 * goes is not 0 as it is per link.
 *
 * <p>Secondary objective (optional): with the HMux traffic fixed at the optimum found, minimise
 * the MRU (links, ECMP, tunnel; as {@link Usage#mru()}), over the candidate columns.
 *
 * <p>The steps, in {@link #run}: warm start ({@link WarmStart}), footprint scan and columns,
 * relaxation bound, local search, lazy rounds of stage 1, the MRU stage, the final check.
 */
public final class DuetIlp {
    /** Share of the time limit the bound model gets at least, whenever it starts. */
    static final double MIN_BOUND_TIME_SHARE = 0.15;
    /** Share of the time limit the bound model may use. */
    static final double BOUND_TIME_SHARE = 0.25;

    /** What to solve for. */
    public static final class Options {
        public final MipOptions mip;
        /** Second stage: same HMux traffic, lowest MRU. */
        public final boolean minimiseMru;
        /** Most traffic (fraction of total) whose VIP may leave its installed switch; null: no limit. */
        public final Double migrationBudget;

        public Options(MipOptions mip, boolean minimiseMru, Double migrationBudget) {
            if (migrationBudget != null && !(migrationBudget >= 0 && migrationBudget <= 1)) {
                throw new IllegalArgumentException("--migration-budget: must be in [0, 1], got " + migrationBudget);
            }
            this.mip = mip;
            this.minimiseMru = minimiseMru;
            this.migrationBudget = migrationBudget;
        }

        public static Options defaults() {
            return new Options(MipOptions.DEFAULTS, false, null);
        }
    }

    private final IlpContext ctx;
    private final Instance in;
    private final ResourceModel m;
    private final Options o;
    private final List<String> notes = new ArrayList<>();
    /** The scan's columns, relaxation and local search; null until the columns are needed. */
    private FootprintScan scan;

    private DuetIlp(Instance in, Assignment current, Options o) {
        this.ctx = new IlpContext(in, current, o, notes);
        this.in = in;
        this.m = in.resources();
        this.o = o;
    }

    /** Best assignment found, never one that breaks a constraint; its {@code solver} field says how good. */
    public static Assignment solve(Instance in, Assignment current, Options o) {
        return new DuetIlp(in, current, o).run();
    }

    /**
     * For tests: {relaxation bound over y_v (with the link-group rows), Lagrangian bound from its
     * duals, Lagrangian bound from zero multipliers}, each run for up to {@code seconds}.
     */
    static double[] boundsForTest(Instance in, double seconds) {
        DuetIlp d = new DuetIlp(in, null, Options.defaults());
        Usage empty = d.m.newUsage();
        FootprintScan scan = new FootprintScan(d.ctx, empty);
        double now = System.nanoTime() / 1e9;
        double y = scan.relaxation.bound(empty, now + seconds);
        double[] seeds = scan.relaxation.seeds(now + seconds);
        double seeded = scan.search.lagrangianBound(0, System.nanoTime() / 1e9 + seconds, seeds);
        double fromZero = scan.search.lagrangianBound(0, System.nanoTime() / 1e9 + seconds, null);
        return new double[] {y, seeded, fromZero};
    }

    /** For tests: the congestion-aware greedy and a short local search from it, as exact usages. */
    static Usage[] searchForTest(Instance in, double seconds, long seed) {
        DuetIlp d = new DuetIlp(in, null, Options.defaults());
        LinkSearch search = new FootprintScan(d.ctx, d.m.newUsage()).search;
        Usage g = search.greedy(Assignments.usageOf(in, Algorithms.get("greedy-skip").assign(in, null)));
        Usage better = search.improve(g, System.nanoTime() / 1e9 + seconds, seed, Double.POSITIVE_INFINITY);
        return new Usage[] {g, better};
    }

    private Assignment run() {
        long t0 = System.nanoTime();
        double deadline = t0 / 1e9 + o.mip.timeLimitSeconds;
        double total = in.totalTrafficBps();
        Usage start = WarmStart.best(ctx);
        double startShare = ctx.share(start);
        if (total <= 0) {
            return finish(start, "optimal", "none (no traffic)", startShare, 0.0, startShare, t0);
        }
        double eligible = eligibleShare();
        if (startShare >= eligible - 1e-12) {
            notes.add("the warm start carries every VIP that fits any switch: optimal without a solver");
            return finishWithMru(start, "optimal", "none (trivial bound)", eligible, startShare, t0, deadline);
        }
        double t1 = System.nanoTime() / 1e9;
        scan = new FootprintScan(ctx, start);
        double t2 = System.nanoTime() / 1e9;
        // the bound model has its own allowance: on a loaded machine the footprints alone may
        // take a quarter of the time, and a bound model cut short is loose
        double boundDeadline = t2 + Math.max(t0 / 1e9 + BOUND_TIME_SHARE * o.mip.timeLimitSeconds - t2,
                MIN_BOUND_TIME_SHARE * o.mip.timeLimitSeconds);
        double bound = Math.min(eligible, scan.relaxation.bound(start, boundDeadline));
        notes.add(String.format(Locale.ROOT, "warm start %.4f%% in %.1f s, footprints and columns in %.1f s, "
                + "relaxation bound %.4f%% in %.1f s", 100 * startShare, t1 - t0 / 1e9, t2 - t1, 100 * bound,
                System.nanoTime() / 1e9 - t2));
        if (MipResult.relativeGap(startShare, bound) <= o.mip.relativeGap) {
            notes.add("the warm start is within the requested gap of the relaxation bound");
            return finishWithMru(start, "optimal", o.mip.describe() + " (bound only)", bound, startShare, t0,
                    deadline);
        }
        Usage best = start;
        boolean linkBound = false;
        if (scan.search != null) {
            SearchStage.Outcome found = new SearchStage(ctx, scan).run(start, startShare, bound, deadline);
            linkBound = found.linkBound;
            bound = found.bound;
            if (found.found != null && ctx.share(found.found) > startShare) {
                best = found.found;
                scan.columns.append(best);
            }
        }
        LazyRounds.Result r = new LazyRounds(ctx, scan.columns, deadline, start, best, bound).solve(start, linkBound);
        return finishWithMru(r.best, r.status, r.solvedBy, r.bound, startShare, t0, deadline);
    }

    /** Share of traffic of the VIPs that fit some switch: nothing can do better. */
    private double eligibleShare() {
        double sum = 0;
        for (int v = 0; v < in.vipCount(); v++) {
            if (in.trafficBps(v) <= 0 || !m.eligible(v)) {
                continue;
            }
            for (int s = 0; s < in.switchCount(); s++) {
                if (m.fitsAlone(v, s)) {
                    sum += in.trafficBps(v);
                    break;
                }
            }
        }
        return sum / in.totalTrafficBps();
    }

    // ---------------------------------------------------------------- secondary objective and final check

    private Assignment finishWithMru(Usage best, String status, String solvedBy, double bound, double warm, long t0,
                                     double deadline) {
        if (o.minimiseMru) {
            if (deadline - System.nanoTime() / 1e9 < 0.2) {
                notes.add("MRU stage skipped: no time left");
            } else {
                if (scan == null) {
                    scan = new FootprintScan(ctx, best);
                }
                Usage lower = minimiseMru(best, deadline);
                if (lower != null) {
                    best = lower;
                }
            }
        }
        return finish(best, status, solvedBy, ctx.share(best), bound, warm, t0);
    }

    /** The MRU stage ({@link ColumnModel#mru}): its answer if it is feasible and lowers the MRU, else null. */
    private Usage minimiseMru(Usage best, double deadline) {
        double keep = ctx.share(best);
        ColumnModel mru = ColumnModel.mru(ctx, scan.columns, keep, best);
        double left = deadline - System.nanoTime() / 1e9;
        MipResult r = mru.model.solve(o.mip.withTimeLimit(Math.max(0.1, left)));
        if (!r.hasSolution()) {
            notes.add("MRU stage: " + r.status + " within the time left; MRU not lowered");
            return null;
        }
        Usage u = mru.usageOf(r.values);
        if (!Feasibility.violations(u).isEmpty() || ctx.share(u) < keep - 1e-9 || u.mru() >= best.mru() - 1e-12
                || !ctx.budgetOk(u)) {
            notes.add("MRU stage: no lower MRU found (" + String.format(Locale.ROOT, "%.4f", best.mru()) + ")");
            return null;
        }
        notes.add(String.format(Locale.ROOT, "MRU stage: MRU %.4f -> %.4f (bound %.4f)", best.mru(), u.mru(),
                r.bound));
        return u;
    }

    private Assignment finish(Usage u, String status, String solvedBy, double objective, double bound,
                              double warm, long t0) {
        Assignment current = ctx.current;
        Assignment a = Assignments.of(in, u, "ilp", current);
        List<String> bad = Feasibility.violations(in, a);
        if (!bad.isEmpty() || !ctx.budgetOk(u)) {
            // cannot happen by construction (every candidate passed the checker); never return it anyway
            if (!ctx.budgetOk(m.newUsage())) {
                throw new IllegalStateException("ilp: the answer failed its final check ("
                        + (bad.isEmpty() ? "migration budget" : bad.get(0)) + ")");
            }
            notes.add("final check failed (" + (bad.isEmpty() ? "migration budget" : bad.get(0))
                    + "); returning the SMux-only assignment");
            a = Assignments.of(in, m.newUsage(), "ilp", current);
            status = "fallback";
            objective = 0;
        }
        Double shownBound = Double.isInfinite(bound) || Double.isNaN(bound) ? null
                : Math.max(objective, Math.min(1, bound));
        double relGap = shownBound == null ? Double.NaN : MipResult.relativeGap(objective, shownBound);
        // no gap in the report when it is undefined (objective 0): never a huge number
        Double gap = Double.isNaN(relGap) || Double.isInfinite(relGap) ? null : relGap;
        SolveReport report = new SolveReport(solvedBy, status, objective, shownBound, gap, warm,
                (System.nanoTime() - t0) / 1e9, ctx.hasMigrationBudget() ? ctx.movedShare(u) : null, notes);
        return a.withSolver(report);
    }
}
