package org.hybridlb.solver.ilp;

import com.google.ortools.linearsolver.MPConstraint;
import com.google.ortools.linearsolver.MPSolver;
import com.google.ortools.linearsolver.MPVariable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.solver.assign.Assignments;
import org.hybridlb.solver.assign.Feasibility;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.NoAssignmentException;
import org.hybridlb.solver.assign.ResourceModel;
import org.hybridlb.solver.assign.Usage;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.SolveReport;
import org.hybridlb.solver.routing.LinkLoads;

/**
 * The Duet VIP assignment as an ILP (§3.4: maximise the traffic HMuxes carry subject to switch
 * memory and link capacity), built row by row from the brain's {@link ResourceModel} so the ILP,
 * the greedy and the checker share one model of the constraints:
 *
 * <pre>
 *   max  Σ_v Σ_s (t_v / T) x[v][s]                        (HMux traffic share)
 *   s.t. Σ_s x[v][s] ≤ 1                                   (else on the SMuxes)
 *        Σ_v ecmpEntries(v)   x[v][s] ≤ ecmpCapacity(s)     per switch
 *        Σ_v tunnelEntries(v) x[v][s] ≤ tunnelCapacity(s)   per switch
 *        Σ_v Σ_s hostEntries(v) x[v][s] ≤ hostBudget        fabric-wide
 *        Σ_v Σ_s t(l, s, v) x[v][s] ≤ linkCapacity(l)       per directed link (80%)
 *        Σ_{v installed on c} t_v (1 - x[v][c]) ≤ X · T    optional migration budget
 * </pre>
 * x[v][s] exists only where {@code fitsAlone(v, s)} and t_v > 0 (a VIP without traffic adds
 * nothing to the objective, so leaving it on the SMuxes loses nothing), and, where footprints
 * are computed, where v alone loads no link past its capacity (no feasible assignment has such
 * a pair; leaving it out also tightens the relaxation and the Lagrangian below). Rows a column set cannot
 * violate are left out. Link rows are added lazily: the first model has the links the warm
 * start loads to at least {@link #INITIAL_LINK_UTILISATION}; after each solve, links the answer
 * overloads join and the model is solved again. Every model is a relaxation of the full one,
 * so each proven bound is valid; the answer is only the one that passes {@link Feasibility}.
 *
 * <p>Size. The full model has a column per (VIP, switch) that fits, about 100 link entries
 * each: 312,000 columns and 32 million entries for 3,000 VIPs on 104 switches, more than SCIP
 * can even solve the root LP of in a minute. So the model is solved in two parts:
 * <ol>
 * <li><b>Bound</b>: a relaxation over y_v = "v is on some HMux": memory summed over the switches
 *   where v fits, the host budget, per link the least load v puts on it wherever it goes
 *   (min_s t(l, s, v)), and the migration budget. Every feasible assignment satisfies it, so its
 *   proven optimum (small: one binary per VIP) bounds the full model.</li>
 * <li><b>Assignment</b>: the full model restricted to candidate columns per VIP: the
 *   {@link #BEST_CANDIDATES} switches with the smallest peak link footprint, {@link #SPREAD_CANDIDATES}
 *   switches spread evenly over the fabric (so small VIPs can use every switch's memory), the
 *   warm start's and the installed switch; every fitting switch up to {@link #WHOLE_MODEL_PAIRS}
 *   pairs. When every fitting switch is a candidate the restricted model is the full one and its
 *   own bound counts too.</li>
 * </ol>
 * The gap reported is between the assignment and the best valid bound.
 *
 * <p>Link-bound instances (solver/ILP.md): the footprints of every fitting pair are cached for
 * {@link LinkSearch}: a congestion-aware greedy (the paper's greedy picks at random once one
 * link is full), ruin and recreate, and a Lagrangian bound of the full model seeded from the
 * relaxation's duals. The relaxation also has rows over groups of links (a ToR's up links
 * together, ...), where the least load wherever a VIP goes is not 0 as it is per link.
 *
 * <p>Secondary objective (optional): with the HMux traffic fixed at the optimum found, minimise
 * the MRU (links, ECMP, tunnel; as {@link Usage#mru()}), over the candidate columns.
 */
public final class DuetIlp {
    /** Links the warm start loads to at least this are in the first model. */
    static final double INITIAL_LINK_UTILISATION = 0.5;
    /**
     * Link rows are utilisation ≤ 1 exactly as the checker has them (a link may be filled to its
     * 80%); an answer that a solver tolerance pushes over is caught by the checker and repaired.
     */
    static final double LINK_MARGIN = 0;
    /** Most lazy rounds before giving up on proving the full model. */
    static final int MAX_ROUNDS = 30;
    /** Candidate switches per VIP with the smallest peak link footprint. */
    static final int BEST_CANDIDATES = 6;
    /** Candidate switches per VIP spread evenly over the fabric. */
    static final int SPREAD_CANDIDATES = 6;
    /** The same when footprints are not computed (paper scale), plus the warm start's switch. */
    static final int SPREAD_CANDIDATES_LARGE = 3;
    /**
     * Up to this many fitting (VIP, switch) pairs every one is a column: SCIP gets the whole model
     * and its bound counts. On a small fabric at load 0.8 (4,172 pairs) its branch and bound
     * brings the bound from the Lagrangian's 82.69% to 80.1% in 25 s (ILP.md).
     */
    static final long WHOLE_MODEL_PAIRS = 20_000L;
    /** Above this many (VIP, switch) pairs the footprints are not computed (paper scale: 53 million). */
    static final long FULL_SCAN_LIMIT = 3_000_000L;
    /** Share of the time left a round gets while link rows may still be missing. */
    static final double ROUND_TIME_SHARE = 0.6;
    /** Shortest round worth starting. */
    static final double MIN_ROUND_SECONDS = 3;
    /** Links an answer fills to this join the next round's rows even when not overloaded. */
    static final double NEAR_FULL = 0.9;
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

    private final Instance in;
    private final ResourceModel m;
    private final Assignment current;
    private final Options o;
    private final List<String> notes = new ArrayList<>();
    // columns (v, s) and their sparse link loads
    private int[] colVip;
    private int[] colSwitch;
    private int[] loadStart;
    private int[] loadLink;
    private double[] loadBps;
    private int cols;
    /** Per link: Σ_v max_s t(l, s, v) over the candidate columns, the most they can put on it. */
    private double[] worstLoad;
    /** Whether every fitting (VIP, switch) pair is a column (the restricted model is the full one). */
    private boolean allColumns;
    /** Relaxation rows: per link, the VIPs that load it wherever they go, and that least load. */
    private List<List<double[]>> minLoadRows;
    /**
     * Relaxation rows over groups of links (see {@link #linkGroups}): per group, the VIPs that
     * load it wherever they go and the least total load they put on its links.
     */
    private List<List<double[]>> groupRows;
    /** Per group: Σ capacity of its links. */
    private double[] groupCap;
    /** Per group: its links. */
    private int[][] groupLinks;
    /**
     * Per VIP: some switch fits its tables and (when footprints are computed) it overloads no
     * link there on its own. A VIP that is not is on the SMuxes in any feasible assignment.
     */
    private boolean[] placeable;
    /** The local search over cached footprints, or null (paper scale: too many pairs). */
    private LinkSearch search;
    /** Whether links, not tables, keep VIPs off the HMuxes (set by the local search). */
    private boolean linkBound;

    private DuetIlp(Instance in, Assignment current, Options o) {
        this.in = in;
        this.m = in.resources();
        this.current = current;
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
        d.buildColumns(empty);
        double now = System.nanoTime() / 1e9;
        double y = d.relaxationBound(empty, now + seconds);
        double[] seeds = d.relaxationSeeds(now + seconds);
        double seeded = d.search.lagrangianBound(0, System.nanoTime() / 1e9 + seconds, seeds);
        double fromZero = d.search.lagrangianBound(0, System.nanoTime() / 1e9 + seconds, null);
        return new double[] {y, seeded, fromZero};
    }

    /** For tests: the congestion-aware greedy and a short local search from it, as exact usages. */
    static Usage[] searchForTest(Instance in, double seconds, long seed) {
        DuetIlp d = new DuetIlp(in, null, Options.defaults());
        d.buildColumns(d.m.newUsage());
        Usage g = d.search.greedy(Assignments.usageOf(in, Algorithms.get("greedy-skip").assign(in, null)));
        Usage better = d.search.improve(g, System.nanoTime() / 1e9 + seconds, seed, Double.POSITIVE_INFINITY);
        return new Usage[] {g, better};
    }

    private Assignment run() {
        long t0 = System.nanoTime();
        double deadline = t0 / 1e9 + o.mip.timeLimitSeconds;
        double total = in.totalTrafficBps();
        Usage start = warmStart();
        double startShare = share(start);
        if (total <= 0) {
            return finish(start, "optimal", "none (no traffic)", startShare, 0.0, startShare, t0);
        }
        double eligible = eligibleShare();
        if (startShare >= eligible - 1e-12) {
            notes.add("the warm start carries every VIP that fits any switch: optimal without a solver");
            return finishWithMru(start, "optimal", "none (trivial bound)", eligible, startShare, t0, deadline);
        }
        double t1 = System.nanoTime() / 1e9;
        buildColumns(start);
        double t2 = System.nanoTime() / 1e9;
        // the bound model has its own allowance: on a loaded machine the footprints alone may
        // take a quarter of the time, and a bound model cut short is loose
        double boundDeadline = t2 + Math.max(t0 / 1e9 + BOUND_TIME_SHARE * o.mip.timeLimitSeconds - t2,
                MIN_BOUND_TIME_SHARE * o.mip.timeLimitSeconds);
        double bound = Math.min(eligible, relaxationBound(start, boundDeadline));
        notes.add(String.format(Locale.ROOT, "warm start %.4f%% in %.1f s, footprints and columns in %.1f s, "
                + "relaxation bound %.4f%% in %.1f s", 100 * startShare, t1 - t0 / 1e9, t2 - t1, 100 * bound,
                System.nanoTime() / 1e9 - t2));
        if (MipResult.relativeGap(startShare, bound) <= o.mip.relativeGap) {
            notes.add("the warm start is within the requested gap of the relaxation bound");
            return finishWithMru(start, "optimal", o.mip.describe() + " (bound only)", bound, startShare, t0,
                    deadline);
        }
        Usage best = start;
        double bestShare = startShare;
        if (search != null) {
            Usage g = search.greedy(start);
            double blocked = linkBlockedShare(g);
            linkBound = blocked > LINK_BOUND_SHARE;
            notes.add(String.format(Locale.ROOT, "congestion-aware greedy: %.4f%% (%s: %.1f%% of traffic on the "
                    + "SMuxes only for want of link room)", 100 * share(g), linkBound ? "link-bound" : "memory-bound",
                    100 * blocked));
            if (linkBound) {
                // the relaxation over y_v does not see which switch a VIP is on: the Lagrangian
                // of the full model (at the limit its LP relaxation) may be lower
                long l0 = System.nanoTime();
                double left = deadline - l0 / 1e9 - finishMargin();
                double[] seeds = relaxationSeeds(l0 / 1e9 + 0.25 * LAGRANGE_TIME_SHARE * left);
                double lagrange = search.lagrangianBound(Math.max(share(g), bestShare),
                        l0 / 1e9 + LAGRANGE_TIME_SHARE * left, seeds);
                notes.add(Double.isInfinite(lagrange) ? "Lagrangian bound of the full model: no time left for it"
                        : String.format(Locale.ROOT, "Lagrangian bound of the full model: %.4f%% after %d "
                        + "subgradient steps in %.1f s", 100 * lagrange, search.lastIterations,
                        (System.nanoTime() - l0) / 1e9));
                bound = Math.min(bound, lagrange);
            }
            // stop once within the requested gap of the bound
            Usage found = localSearch(g, deadline, bound / (1 + o.mip.relativeGap));
            if (found != null && share(found) > bestShare) {
                best = found;
                bestShare = share(found);
                appendColumns(best);
            }
        }
        BitSet rows = new BitSet(m.linkCount());
        for (int l = 0; l < m.linkCount(); l++) {
            if (best.linkUtilisation(l) >= INITIAL_LINK_UTILISATION && worstLoad[l] > m.linkCapacity(l)) {
                rows.set(l);
            }
        }
        // what produced the answer: the MIP backend only when one of its answers is kept
        String solvedBy = best == start ? "warm start" : "local search";
        boolean proven = false;
        int solverAnswers = 0;
        boolean usable = false;
        boolean rowsComplete = false;
        if (best != start && MipResult.relativeGap(bestShare, bound) <= o.mip.relativeGap) {
            proven = true; // the local search's answer is within the gap: no solver round needed
            usable = true;
            notes.add("the local search's answer is within the requested gap of the relaxation bound");
        }
        if (linkBound && !allColumns && !proven) {
            // Measured on the medium link-bound instances (ILP.md): SCIP on the restricted model
            // never improved the greedy in 60 s, and overran its time limit by several seconds
            // (the root LP of ~36,000 columns with ~500 dense link rows); the local search had the time.
            notes.add("link-bound: the local search had the time; no SCIP round on the restricted model");
            usable = true; // the local search's answer (checked) is the result
            proven = true; // ends the loop; the status below is decided by the gap
        }
        for (int round = 1; round <= MAX_ROUNDS && !proven; round++) {
            double left = deadline - System.nanoTime() / 1e9;
            if (left <= 0.05) {
                notes.add("time limit reached after " + (round - 1) + " round(s) of lazy link rows");
                break;
            }
            // While link rows are still missing, a round gets a slice of the time, so that the
            // rows its answer breaks can be added and the model solved again.
            double slice = rowsComplete ? left : Math.min(left, Math.max(MIN_ROUND_SECONDS, ROUND_TIME_SHARE * left));
            double built = System.nanoTime() / 1e9;
            Stage1 st = new Stage1(rows);
            // building the model takes time on large models: it comes out of this round's slice,
            // and a margin is left for checking the answer (the whole ilp keeps its time limit)
            double now = System.nanoTime() / 1e9;
            slice = Math.min(slice - (now - built), deadline - now - finishMargin() - solverOverrun());
            if (slice < 0.5) {
                notes.add("time limit reached while building round " + round + "'s model");
                break;
            }
            MipResult r = st.solve(o.mip.withTimeLimit(slice), best);
            notes.add(String.format(Locale.ROOT, "round %d: %d columns, %d link rows, model built in %.1f s, "
                    + "%s in %.1f s (limit %.1f s)%s", round, cols, rows.cardinality(), now - built, r.status,
                    System.nanoTime() / 1e9 - now, slice, r.hasSolution() ? String.format(Locale.ROOT,
                    ", objective %.4f%%", 100 * r.objective) : ""));
            for (String n : r.notes) {
                if (!notes.contains(n)) {
                    notes.add(n);
                }
            }
            if (allColumns && !Double.isNaN(r.bound) && (r.status == MipResult.Status.OPTIMAL
                    || r.status == MipResult.Status.FEASIBLE)) {
                bound = Math.min(bound, r.bound);
            }
            if (!r.hasSolution()) {
                notes.add("round " + round + ": " + r.status + ", no solution");
                break;
            }
            Usage u = usageOf(st.x, r.values);
            BitSet over = overloadedLinks(u);
            over.andNot(rows);
            if (over.isEmpty() && Feasibility.violations(u).isEmpty() && budgetOk(u)) {
                solverAnswers++;
                usable = true;
                if (share(u) >= bestShare) {
                    best = u;
                    bestShare = share(u);
                    solvedBy = r.solvedBy;
                }
                proven = r.status == MipResult.Status.OPTIMAL && allColumns
                        || MipResult.relativeGap(bestShare, bound) <= o.mip.relativeGap + 1e-9;
                if (proven || r.status == MipResult.Status.OPTIMAL || rowsComplete
                        || deadline - System.nanoTime() / 1e9 < MIN_ROUND_SECONDS) {
                    break;
                }
                rowsComplete = true; // this answer needs no more rows: spend the rest of the time on it
                continue;
            }
            // Not feasible on the full model: add the overloaded links (and those it fills to 90%,
            // likely next), keep a repaired copy as incumbent.
            rows.or(over);
            for (int l = 0; l < m.linkCount(); l++) {
                if (u.linkUtilisation(l) >= NEAR_FULL && worstLoad[l] > m.linkCapacity(l)) {
                    rows.set(l);
                }
            }
            solverAnswers++;
            Usage repaired = repair(u);
            if (share(repaired) > bestShare && budgetOk(repaired)) {
                best = repaired;
                bestShare = share(repaired);
                solvedBy = r.solvedBy + " (repaired)";
            }
            if (over.isEmpty()) {
                List<String> bad = Feasibility.violations(u);
                notes.add("solver answer broke a row it had (" + (bad.isEmpty() ? "migration budget" : bad.get(0))
                        + "); repaired");
                break;
            }
        }
        if (bound < bestShare) {
            bound = bestShare; // a relaxation cannot be below a feasible point; keep the report consistent
        }
        String status = proven && MipResult.relativeGap(bestShare, bound) <= o.mip.relativeGap + 1e-9
                ? "optimal" : "feasible";
        if (!usable && best == start) {
            status = "fallback";
            notes.add(solverAnswers == 0 ? "the solver returned no assignment; returning the warm start (greedy)"
                    : "no solver answer passed the feasibility check; returning the warm start (greedy)");
        }
        return finishWithMru(best, status, solvedBy, bound, startShare, t0, deadline);
    }

    /**
     * How far SCIP may run past its time limit: measured up to ~2 s on the medium models on a
     * loaded machine (it checks the clock between LP solves and heuristics).
     */
    private double solverOverrun() {
        return Math.min(3.0, 0.05 * o.mip.timeLimitSeconds);
    }

    /** Time kept at the end for checking and converting the answer. */
    private double finishMargin() {
        return Math.min(2.0, 0.03 * o.mip.timeLimitSeconds);
    }

    /**
     * The congestion-aware greedy, then ruin and recreate ({@link LinkSearch}). On link-bound
     * instances (VIPs left on the SMuxes although some switch has table room for them) it gets
     * {@link #SEARCH_TIME_SHARE_LINK_BOUND} of the time left, or
     * {@link #SEARCH_TIME_SHARE_WHOLE_MODEL} when SCIP has the whole model (its bound is then
     * worth the rest); else {@link #SEARCH_TIME_SHARE}: there the memory rows bind and SCIP does
     * better with the time.
     */
    private Usage localSearch(Usage g, double deadline, double stopShare) {
        long s0 = System.nanoTime();
        double left = deadline - System.nanoTime() / 1e9 - finishMargin();
        double searchShare = !linkBound ? SEARCH_TIME_SHARE
                : allColumns ? SEARCH_TIME_SHARE_WHOLE_MODEL : SEARCH_TIME_SHARE_LINK_BOUND;
        double until = System.nanoTime() / 1e9 + left * searchShare;
        Usage best = search.improve(g, until, 1, stopShare * in.totalTrafficBps());
        if (share(g) > share(best)) {
            best = g;
        }
        List<String> bad = Feasibility.violations(best);
        boolean ok = bad.isEmpty() && budgetOk(best);
        notes.add(String.format(Locale.ROOT, "local search: %d ruin-and-recreate steps: %.4f%% in %.1f s%s",
                search.lastSteps, 100 * share(best), (System.nanoTime() - s0) / 1e9, ok ? ""
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
            if (u.placement(v) != Usage.SMUX || in.trafficBps(v) <= 0 || !u.hostRoomFor(v) || !placeable[v]) {
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

    /** Adds (v, placement) columns the usage has and the candidates lack (worst loads kept conservative). */
    private void appendColumns(Usage u) {
        java.util.Set<Long> have = new java.util.HashSet<>();
        for (int c = 0; c < cols; c++) {
            have.add((long) colVip[c] * in.switchCount() + colSwitch[c]);
        }
        LinkLoads ll = m.newLinkLoads();
        for (int v = 0; v < in.vipCount(); v++) {
            int s = u.placement(v);
            if (s < 0 || have.contains((long) v * in.switchCount() + s)) {
                continue;
            }
            m.linkLoads(v, s, ll);
            int nnz = loadStart[cols];
            if (cols + 1 >= colVip.length) {
                colVip = Arrays.copyOf(colVip, 2 * cols + 2);
                colSwitch = Arrays.copyOf(colSwitch, 2 * cols + 2);
                loadStart = Arrays.copyOf(loadStart, 2 * cols + 3);
            }
            if (nnz + ll.size() > loadLink.length) {
                int n = Math.max(2 * loadLink.length, nnz + ll.size());
                loadLink = Arrays.copyOf(loadLink, n);
                loadBps = Arrays.copyOf(loadBps, n);
            }
            for (int i = 0; i < ll.size(); i++) {
                loadLink[nnz] = ll.link(i);
                loadBps[nnz++] = ll.load(i);
                worstLoad[ll.link(i)] += ll.load(i); // an over-estimate: more rows, never fewer
            }
            colVip[cols] = v;
            colSwitch[cols] = s;
            cols++;
            loadStart[cols] = nnz;
        }
    }

    private Assignment finishWithMru(Usage best, String status, String solvedBy, double bound, double warm, long t0,
                                     double deadline) {
        if (o.minimiseMru) {
            if (deadline - System.nanoTime() / 1e9 < 0.2) {
                notes.add("MRU stage skipped: no time left");
            } else {
                if (colVip == null) {
                    buildColumns(best);
                }
                Usage lower = minimiseMru(best, deadline);
                if (lower != null) {
                    best = lower;
                }
            }
        }
        return finish(best, status, solvedBy, share(best), bound, warm, t0);
    }

    // ---------------------------------------------------------------- columns and rows

    private void buildColumns(Usage start) {
        int nv = in.vipCount();
        int ns = in.switchCount();
        long pairs = 0;
        for (int v = 0; v < nv; v++) {
            if (in.trafficBps(v) > 0 && m.eligible(v)) {
                for (int s = 0; s < ns; s++) {
                    pairs += m.fitsAlone(v, s) ? 1 : 0;
                }
            }
        }
        boolean scan = pairs <= FULL_SCAN_LIMIT;
        boolean wholeModel = pairs <= WHOLE_MODEL_PAIRS;
        if (!scan) {
            notes.add(pairs + " (VIP, switch) pairs: footprints not computed; candidates are spread switches "
                    + "and the warm start's, and the bound has no link rows");
        }
        LinkLoads ll = m.newLinkLoads();
        int nl = m.linkCount();
        minLoadRows = new ArrayList<>();
        for (int l = 0; l < nl; l++) {
            minLoadRows.add(new ArrayList<>());
        }
        int[] touchCount = new int[nl];
        double[] touchMin = new double[nl];
        List<Integer> touched = new ArrayList<>();
        LinkSearch.Builder lsb = scan ? new LinkSearch.Builder(in) : null;
        int[][] groupsOf = linkGroups();
        int ng = groupCap.length;
        groupRows = new ArrayList<>();
        for (int g = 0; g < ng; g++) {
            groupRows.add(new ArrayList<>());
        }
        double[] groupSum = new double[ng];
        int[] groupCount = new int[ng];
        double[] groupMin = new double[ng];
        List<Integer> groupsTouched = new ArrayList<>();
        List<Integer> pairGroups = new ArrayList<>();
        int[] groupMark = new int[ng];
        Arrays.fill(groupMark, -1);
        int pairStamp = 0;
        List<int[]> chosen = new ArrayList<>();
        int overloadedVips = 0;
        double overloadedShare = 0;
        placeable = new boolean[nv];
        allColumns = true;
        for (int v = 0; v < nv; v++) {
            if (in.trafficBps(v) <= 0 || !m.eligible(v)) {
                continue;
            }
            List<Integer> fits = new ArrayList<>();
            for (int s = 0; s < ns; s++) {
                if (m.fitsAlone(v, s)) {
                    fits.add(s);
                }
            }
            if (fits.isEmpty()) {
                continue;
            }
            double[] score = new double[ns];
            if (scan) {
                List<Integer> linkFits = new ArrayList<>();
                for (int s : fits) {
                    m.linkLoads(v, s, ll);
                    pairStamp++;
                    double peak = 0;
                    for (int i = 0; i < ll.size(); i++) {
                        peak = Math.max(peak, ll.load(i) / m.linkCapacity(ll.link(i)));
                    }
                    if (peak > 1 + Usage.EPS) {
                        // v alone overloads a link from s: no feasible assignment has (v, s), so
                        // neither a column, nor a term of the relaxation's least loads
                        continue;
                    }
                    linkFits.add(s);
                    if (lsb != null && !lsb.add(v, s, ll)) {
                        lsb = null;
                        notes.add("footprints too large to cache: no local search");
                    }
                    for (int i = 0; i < ll.size(); i++) {
                        int l = ll.link(i);
                        double load = ll.load(i);
                        for (int g : groupsOf[l]) {
                            if (groupMark[g] != pairStamp) {
                                groupMark[g] = pairStamp; // first load of this pair on the group
                                pairGroups.add(g);
                            }
                            groupSum[g] += load;
                        }
                        if (touchCount[l]++ == 0) {
                            touched.add(l);
                            touchMin[l] = load;
                        } else {
                            touchMin[l] = Math.min(touchMin[l], load);
                        }
                    }
                    score[s] = peak;
                    for (int g : pairGroups) {
                        if (groupCount[g]++ == 0) {
                            groupsTouched.add(g);
                            groupMin[g] = groupSum[g];
                        } else {
                            groupMin[g] = Math.min(groupMin[g], groupSum[g]);
                        }
                        groupSum[g] = 0;
                    }
                    pairGroups.clear();
                }
                fits = linkFits;
                if (fits.isEmpty()) {
                    overloadedVips++;
                    overloadedShare += in.trafficBps(v) / in.totalTrafficBps();
                }
                for (int g : groupsTouched) {
                    if (groupCount[g] == fits.size() && groupMin[g] > 0) {
                        groupRows.get(g).add(new double[] {v, groupMin[g]});
                    }
                    groupCount[g] = 0;
                }
                groupsTouched.clear();
                // a link every fitting switch loads: v puts at least the least of those loads on it
                for (int l : touched) {
                    if (touchCount[l] == fits.size() && touchMin[l] > 0) {
                        minLoadRows.get(l).add(new double[] {v, touchMin[l]});
                    }
                    touchCount[l] = 0;
                }
                touched.clear();
                if (fits.isEmpty()) {
                    continue; // fits no switch without overloading a link: on the SMuxes in any assignment
                }
            }
            placeable[v] = true;
            boolean[] pick = new boolean[ns];
            int picked = 0;
            if (wholeModel || fits.size() <= BEST_CANDIDATES + SPREAD_CANDIDATES) {
                for (int s : fits) {
                    pick[s] = true;
                }
                picked = fits.size();
            } else {
                allColumns = false;
                if (scan) {
                    List<Integer> byScore = new ArrayList<>(fits);
                    byScore.sort((a, b) -> Double.compare(score[a], score[b]));
                    for (int i = 0; i < BEST_CANDIDATES; i++) {
                        pick[byScore.get(i)] = true;
                    }
                }
                // evenly spread, rotated per VIP so that every switch's memory is on offer
                // (fewer without footprints: at paper scale the model must stay in memory)
                int spread = scan ? SPREAD_CANDIDATES : SPREAD_CANDIDATES_LARGE;
                int stride = Math.max(1, fits.size() / spread);
                for (int j = 0; j < spread; j++) {
                    pick[fits.get((v * 7919 + j * stride) % fits.size())] = true;
                }
                int ws = start.placement(v);
                if (ws >= 0) {
                    pick[ws] = true;
                }
                int cur = installedOn(v);
                if (cur >= 0 && m.fitsAlone(v, cur)) {
                    pick[cur] = true;
                }
            }
            for (int s : fits) {
                if (pick[s]) {
                    chosen.add(new int[] {v, s});
                }
            }
        }
        if (lsb != null) {
            search = lsb.build();
            if (o.migrationBudget != null && current != null) {
                int[] installed = new int[in.vipCount()];
                for (int v = 0; v < installed.length; v++) {
                    installed[v] = installedOn(v);
                }
                search.limitMoves(installed, o.migrationBudget * in.totalTrafficBps());
            }
        }
        if (overloadedVips > 0) {
            notes.add(String.format(Locale.ROOT, "%d VIPs (%.2f%% of the traffic) overload a link on their own "
                    + "wherever they go: on the SMuxes in any feasible assignment", overloadedVips,
                    100 * overloadedShare));
        }
        cols = chosen.size();
        colVip = new int[cols];
        colSwitch = new int[cols];
        loadStart = new int[cols + 1];
        int cap = Math.max(16, cols * 16);
        loadLink = new int[cap];
        loadBps = new double[cap];
        worstLoad = new double[nl];
        double[] vipMax = new double[nl];
        int nnz = 0;
        for (int c = 0; c < cols; c++) {
            if (c > 0 && chosen.get(c)[0] != chosen.get(c - 1)[0]) {
                flushMax(vipMax, touched);
            }
            colVip[c] = chosen.get(c)[0];
            colSwitch[c] = chosen.get(c)[1];
            m.linkLoads(colVip[c], colSwitch[c], ll);
            if (nnz + ll.size() > loadLink.length) {
                int n = Math.max(loadLink.length * 2, nnz + ll.size());
                loadLink = Arrays.copyOf(loadLink, n);
                loadBps = Arrays.copyOf(loadBps, n);
            }
            for (int i = 0; i < ll.size(); i++) {
                int l = ll.link(i);
                loadLink[nnz] = l;
                loadBps[nnz++] = ll.load(i);
                if (vipMax[l] == 0) {
                    touched.add(l);
                }
                vipMax[l] = Math.max(vipMax[l], ll.load(i));
            }
            loadStart[c + 1] = nnz;
        }
        flushMax(vipMax, touched);
        if (o.mip.verbose) {
            System.err.printf(Locale.ROOT, "ilp: %d pairs, %d candidate columns%s, %d link-load entries%n", pairs,
                    cols, allColumns ? " (all)" : "", nnz);
        }
    }

    /**
     * Groups of directed links for the relaxation's aggregated rows: per switch, its links to
     * (and from) the neighbours of one role (a ToR's up links, its down links, an agg's links to
     * the cores, ...), and per pod the links leaving (and entering) it. A VIP's load on one link
     * depends on where it goes (ECMP sends all of it to the one agg it is on), but its load on a
     * ToR's up links together hardly does: it is the traffic of its clients under that ToR
     * wherever it goes. The least such sum over the switches it fits is what the row charges.
     * Only groups of two or more links (single links have their own rows). Sets {@link #groupCap}.
     */
    private int[][] linkGroups() {
        org.hybridlb.solver.routing.Fabric f = in.fabric();
        int nl = m.linkCount();
        java.util.Map<String, Integer> ids = new java.util.HashMap<>();
        List<List<Integer>> members = new ArrayList<>();
        List<List<Integer>> of = new ArrayList<>();
        for (int l = 0; l < nl; l++) {
            of.add(new ArrayList<>());
            int a = f.linkFrom(l);
            int b = f.linkTo(l);
            List<String> keys = new ArrayList<>();
            keys.add("out " + a + " " + f.role(b));
            keys.add("in " + b + " " + f.role(a));
            if (f.pod(a) != f.pod(b)) {
                if (f.pod(a) >= 0) {
                    keys.add("leave " + f.pod(a));
                }
                if (f.pod(b) >= 0) {
                    keys.add("enter " + f.pod(b));
                }
            }
            for (String k : keys) {
                Integer g = ids.get(k);
                if (g == null) {
                    g = members.size();
                    ids.put(k, g);
                    members.add(new ArrayList<>());
                }
                members.get(g).add(l);
            }
        }
        // keep groups of two or more links, renumbered
        int[] renum = new int[members.size()];
        int ng = 0;
        List<Double> caps = new ArrayList<>();
        for (int g = 0; g < members.size(); g++) {
            if (members.get(g).size() >= 2) {
                renum[g] = ng++;
                double cap = 0;
                for (int l : members.get(g)) {
                    cap += m.linkCapacity(l);
                    of.get(l).add(renum[g]);
                }
                caps.add(cap);
            }
        }
        groupCap = new double[ng];
        groupLinks = new int[ng][];
        for (int g = 0; g < ng; g++) {
            groupCap[g] = caps.get(g);
        }
        for (int g = 0; g < members.size(); g++) {
            if (members.get(g).size() >= 2) {
                groupLinks[renum[g]] = members.get(g).stream().mapToInt(Integer::intValue).toArray();
            }
        }
        int[][] out = new int[nl][];
        for (int l = 0; l < nl; l++) {
            out[l] = of.get(l).stream().mapToInt(Integer::intValue).toArray();
        }
        return out;
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

    /**
     * Proven upper bound on the HMux share from the relaxation over y_v (see the class comment).
     * Warm-started from {@code start}, which satisfies it.
     */
    private double relaxationBound(Usage start, double deadline) {
        return relaxation(start, deadline, null);
    }

    /**
     * Multipliers for {@link LinkSearch#lagrangianBound} from the duals of the relaxation's LP
     * (GLOP): a group row's dual spread over its links by capacity, the summed table rows' per
     * switch. The Lagrangian there is at most that LP's value, so the subgradient starts at least
     * as low as the relaxation over y_v (up to its integrality). Null if the LP failed.
     */
    private double[] relaxationSeeds(double deadline) {
        int ns = in.switchCount();
        double[] seeds = new double[m.linkCount() + 2 * ns + 1];
        return relaxation(m.newUsage(), deadline, seeds) >= 0 ? seeds : null;
    }

    /** With {@code seeds} null: the relaxation's MIP bound; else its LP, duals into seeds (returns -1 on failure). */
    private double relaxation(Usage start, double deadline, double[] seeds) {
        int nv = in.vipCount();
        int ns = in.switchCount();
        double total = in.totalTrafficBps();
        MipModel model = seeds == null ? MipModel.create("duet-bound", o.mip) : null;
        MipModel.loadNatives();
        MPSolver s = model != null ? model.solver() : MPSolver.createSolver("GLOP");
        if (s == null) {
            return -1;
        }
        List<MPConstraint> linkRowsMade = new ArrayList<>();
        List<Integer> linkRowIds = new ArrayList<>();
        List<MPConstraint> groupRowsMade = new ArrayList<>();
        List<Integer> groupRowIds = new ArrayList<>();
        MPVariable[] y = new MPVariable[nv];
        long ecmpCap = 0;
        long tunnelCap = 0;
        for (int sw = 0; sw < ns; sw++) {
            ecmpCap += m.ecmpCapacity(sw);
            tunnelCap += m.tunnelCapacity(sw);
        }
        MPConstraint ecmp = s.makeConstraint(Double.NEGATIVE_INFINITY, ecmpCap, "ecmp");
        MPConstraint tunnel = s.makeConstraint(Double.NEGATIVE_INFINITY, tunnelCap, "tunnel");
        MPConstraint host = s.makeConstraint(Double.NEGATIVE_INFINITY, m.hostBudget(), "host");
        boolean[] hasColumn = new boolean[nv];
        for (int c = 0; c < cols; c++) {
            hasColumn[colVip[c]] = true;
        }
        for (int v = 0; v < nv; v++) {
            if (!hasColumn[v]) {
                continue; // no traffic, or fits nowhere: y_v = 0 in any assignment worth having
            }
            y[v] = model != null ? s.makeBoolVar("y_" + v) : s.makeNumVar(0, 1, "y_" + v);
            s.objective().setCoefficient(y[v], in.trafficBps(v) / total);
            ecmp.setCoefficient(y[v], m.ecmpEntries(v));
            tunnel.setCoefficient(y[v], m.tunnelEntries(v));
            host.setCoefficient(y[v], m.hostEntries(v));
            if (model != null) {
                model.hint(y[v], start.placement(v) >= 0 ? 1 : 0);
            }
        }
        s.objective().setMaximization();
        for (int l = 0; l < m.linkCount(); l++) {
            List<double[]> row = minLoadRows.get(l);
            double sum = 0;
            for (double[] e : row) {
                sum += e[1];
            }
            if (sum <= m.linkCapacity(l)) {
                continue;
            }
            MPConstraint c = s.makeConstraint(Double.NEGATIVE_INFINITY, 1, "minlink_" + l);
            linkRowsMade.add(c);
            linkRowIds.add(l);
            for (double[] e : row) {
                c.setCoefficient(y[(int) e[0]], e[1] / m.linkCapacity(l));
            }
        }
        for (int g = 0; g < groupRows.size(); g++) {
            List<double[]> row = groupRows.get(g);
            double sum = 0;
            for (double[] e : row) {
                sum += e[1];
            }
            if (sum <= groupCap[g]) {
                continue;
            }
            MPConstraint c = s.makeConstraint(Double.NEGATIVE_INFINITY, 1, "grouplink_" + g);
            groupRowsMade.add(c);
            groupRowIds.add(g);
            for (double[] e : row) {
                c.setCoefficient(y[(int) e[0]], e[1] / groupCap[g]);
            }
        }
        if (seeds != null) {
            // LP only for its duals (the migration budget is left out: the Lagrangian drops it)
            s.setTimeLimit(Math.max(100, (long) (1000 * (deadline - System.nanoTime() / 1e9))));
            if (s.solve() != MPSolver.ResultStatus.OPTIMAL) {
                s.delete();
                return -1;
            }
            int nl = m.linkCount();
            for (int i = 0; i < linkRowsMade.size(); i++) {
                seeds[linkRowIds.get(i)] += Math.max(0, linkRowsMade.get(i).dualValue());
            }
            for (int i = 0; i < groupRowsMade.size(); i++) {
                double d = Math.max(0, groupRowsMade.get(i).dualValue());
                for (int l : groupLinks[groupRowIds.get(i)]) {
                    seeds[l] += d * m.linkCapacity(l) / groupCap[groupRowIds.get(i)];
                }
            }
            double de = Math.max(0, ecmp.dualValue());
            double dt = Math.max(0, tunnel.dualValue());
            for (int sw = 0; sw < ns; sw++) {
                seeds[nl + sw] = de * m.ecmpCapacity(sw);
                seeds[nl + ns + sw] = dt * m.tunnelCapacity(sw);
            }
            seeds[nl + 2 * ns] = Math.max(0, host.dualValue()) * Math.max(1, m.hostBudget());
            double value = s.objective().value();
            s.delete();
            return value;
        }
        if (o.migrationBudget != null && current != null) {
            // a VIP installed somewhere that is on no HMux has moved: Σ_installed t_v (1 - y_v) ≤ X·T
            double installed = 0;
            List<Integer> inst = new ArrayList<>();
            for (int v = 0; v < nv; v++) {
                if (installedOn(v) >= 0 && y[v] != null) {
                    installed += in.trafficBps(v) / total;
                    inst.add(v);
                }
            }
            MPConstraint stay = s.makeConstraint(installed - o.migrationBudget, Double.POSITIVE_INFINITY, "stay");
            for (int v : inst) {
                stay.setCoefficient(y[v], in.trafficBps(v) / total);
            }
        }
        double left = Math.max(0.5, deadline - System.nanoTime() / 1e9);
        // the bound model is tiny; ask for a tight gap so its bound is close to its optimum
        MipResult r = model.solve(o.mip.withTimeLimit(left).withGap(Math.min(o.mip.relativeGap, 1e-4)));
        for (String n : r.notes) {
            if (!notes.contains(n)) {
                notes.add(n);
            }
        }
        if (Double.isNaN(r.bound) || r.status == MipResult.Status.ERROR) {
            notes.add("bound model: " + r.status + "; using the share of VIPs that fit anywhere");
            return Double.POSITIVE_INFINITY;
        }
        return r.bound + 1e-9;
    }

    private void flushMax(double[] vipMax, List<Integer> touched) {
        for (int l : touched) {
            worstLoad[l] += vipMax[l];
            vipMax[l] = 0;
        }
        touched.clear();
    }

    /** The first stage model: maximise HMux traffic share with the given link rows. */
    private final class Stage1 {
        final MipModel model;
        final MPVariable[] x;

        Stage1(BitSet linkRows) {
            model = MipModel.create("duet", o.mip).strict();
            MPSolver s = model.solver();
            x = new MPVariable[cols];
            double total = in.totalTrafficBps();
            for (int c = 0; c < cols; c++) {
                x[c] = s.makeBoolVar("x_" + colVip[c] + "_" + colSwitch[c]);
                s.objective().setCoefficient(x[c], in.trafficBps(colVip[c]) / total);
            }
            s.objective().setMaximization();
            addCommonRows(s, x, null);
            addLinkRows(s, x, linkRows, null);
        }

        MipResult solve(MipOptions opts, Usage hint) {
            for (int c = 0; c < cols; c++) {
                model.hint(x[c], hint.placement(colVip[c]) == colSwitch[c] ? 1 : 0);
            }
            return model.solve(opts);
        }
    }

    /** Assignment, memory, host and migration rows; with {@code mru} non-null, memory rows are ≤ mru. */
    private void addCommonRows(MPSolver s, MPVariable[] x, MPVariable mru) {
        int nv = in.vipCount();
        int ns = in.switchCount();
        MPConstraint[] one = new MPConstraint[nv];
        long[] ecmpSum = new long[ns];
        long[] tunnelSum = new long[ns];
        long hostSum = 0;
        for (int c = 0; c < cols; c++) {
            int v = colVip[c];
            if (one[v] == null) {
                one[v] = s.makeConstraint(0, 1, "one_" + v);
                hostSum += m.hostEntries(v);
            }
            one[v].setCoefficient(x[c], 1);
            ecmpSum[colSwitch[c]] += m.ecmpEntries(v);
            tunnelSum[colSwitch[c]] += m.tunnelEntries(v);
        }
        MPConstraint[] ecmp = new MPConstraint[ns];
        MPConstraint[] tunnel = new MPConstraint[ns];
        for (int sw = 0; sw < ns; sw++) {
            // rows that all columns together cannot break are redundant (unless they set the MRU)
            if (mru != null || ecmpSum[sw] > m.ecmpCapacity(sw)) {
                ecmp[sw] = s.makeConstraint(Double.NEGATIVE_INFINITY, mru == null ? m.ecmpCapacity(sw) : 0,
                        "ecmp_" + sw);
                if (mru != null) {
                    ecmp[sw].setCoefficient(mru, -m.ecmpCapacity(sw));
                }
            }
            if (mru != null || tunnelSum[sw] > m.tunnelCapacity(sw)) {
                tunnel[sw] = s.makeConstraint(Double.NEGATIVE_INFINITY, mru == null ? m.tunnelCapacity(sw) : 0,
                        "tunnel_" + sw);
                if (mru != null) {
                    tunnel[sw].setCoefficient(mru, -m.tunnelCapacity(sw));
                }
            }
        }
        MPConstraint host = hostSum > m.hostBudget() ? s.makeConstraint(Double.NEGATIVE_INFINITY, m.hostBudget(),
                "host") : null;
        for (int c = 0; c < cols; c++) {
            int v = colVip[c];
            int sw = colSwitch[c];
            if (ecmp[sw] != null) {
                ecmp[sw].setCoefficient(x[c], m.ecmpEntries(v));
            }
            if (tunnel[sw] != null) {
                tunnel[sw].setCoefficient(x[c], m.tunnelEntries(v));
            }
            if (host != null) {
                host.setCoefficient(x[c], m.hostEntries(v));
            }
        }
        if (o.migrationBudget != null && current != null) {
            // Σ_{v installed on c} t_v x[v][c] ≥ Σ_{v installed} t_v - X·T   (in shares of T)
            double total = in.totalTrafficBps();
            double installed = 0;
            for (int v = 0; v < nv; v++) {
                if (installedOn(v) >= 0) {
                    installed += in.trafficBps(v) / total;
                }
            }
            MPConstraint stay = s.makeConstraint(installed - o.migrationBudget - 1e-9, Double.POSITIVE_INFINITY,
                    "migration");
            for (int c = 0; c < cols; c++) {
                if (installedOn(colVip[c]) == colSwitch[c]) {
                    stay.setCoefficient(x[c], in.trafficBps(colVip[c]) / total);
                }
            }
        }
    }

    private void addLinkRows(MPSolver s, MPVariable[] x, BitSet links, MPVariable mru) {
        MPConstraint[] row = new MPConstraint[m.linkCount()];
        for (int l = links.nextSetBit(0); l >= 0; l = links.nextSetBit(l + 1)) {
            row[l] = s.makeConstraint(Double.NEGATIVE_INFINITY, mru == null ? 1 - LINK_MARGIN : 0, "link_" + l);
            if (mru != null) {
                row[l].setCoefficient(mru, -(1 - LINK_MARGIN));
            }
        }
        for (int c = 0; c < cols; c++) {
            for (int i = loadStart[c]; i < loadStart[c + 1]; i++) {
                MPConstraint r = row[loadLink[i]];
                if (r != null) {
                    r.setCoefficient(x[c], loadBps[i] / m.linkCapacity(loadLink[i]));
                }
            }
        }
    }

    // ---------------------------------------------------------------- secondary objective

    private Usage minimiseMru(Usage best, double deadline) {
        // All links any column loads join this model: the MRU is over every link.
        BitSet all = new BitSet(m.linkCount());
        for (int i = 0; i < loadStart[cols]; i++) {
            all.set(loadLink[i]);
        }
        MipModel model = MipModel.create("duet-mru", o.mip).strict();
        MPSolver s = model.solver();
        MPVariable[] x = new MPVariable[cols];
        for (int c = 0; c < cols; c++) {
            x[c] = s.makeBoolVar("x_" + colVip[c] + "_" + colSwitch[c]);
        }
        MPVariable mru = s.makeNumVar(0, 1, "mru");
        s.objective().setCoefficient(mru, 1);
        s.objective().setMinimization();
        addCommonRows(s, x, mru);
        addLinkRows(s, x, all, mru);
        double total = in.totalTrafficBps();
        double keep = share(best);
        MPConstraint traffic = s.makeConstraint(keep - 1e-9, Double.POSITIVE_INFINITY, "keep_traffic");
        for (int c = 0; c < cols; c++) {
            traffic.setCoefficient(x[c], in.trafficBps(colVip[c]) / total);
            model.hint(x[c], best.placement(colVip[c]) == colSwitch[c] ? 1 : 0);
        }
        model.hint(mru, best.mru());
        double left = deadline - System.nanoTime() / 1e9;
        MipResult r = model.solve(o.mip.withTimeLimit(Math.max(0.1, left)));
        if (!r.hasSolution()) {
            notes.add("MRU stage: " + r.status + " within the time left; MRU not lowered");
            return null;
        }
        Usage u = usageOf(x, r.values);
        if (!Feasibility.violations(u).isEmpty() || share(u) < keep - 1e-9 || u.mru() >= best.mru() - 1e-12
                || !budgetOk(u)) {
            notes.add("MRU stage: no lower MRU found (" + String.format(Locale.ROOT, "%.4f", best.mru()) + ")");
            return null;
        }
        notes.add(String.format(Locale.ROOT, "MRU stage: MRU %.4f -> %.4f (bound %.4f)", best.mru(), u.mru(),
                r.bound));
        return u;
    }

    // ---------------------------------------------------------------- helpers

    private Usage usageOf(MPVariable[] x, double[] values) {
        Usage u = m.newUsage();
        for (int c = 0; c < cols; c++) {
            if (values[x[c].index()] > 0.5 && u.placement(colVip[c]) == Usage.SMUX) {
                u.place(colVip[c], colSwitch[c]);
            }
        }
        return u;
    }

    private BitSet overloadedLinks(Usage u) {
        BitSet out = new BitSet(m.linkCount());
        for (int l = 0; l < m.linkCount(); l++) {
            if (u.linkUtilisation(l) > 1 + Usage.EPS) {
                out.set(l);
            }
        }
        return out;
    }

    /**
     * A feasible copy: while some resource is over capacity, move to the SMuxes the VIP on it with
     * the least traffic (least objective lost).
     */
    private Usage repair(Usage u) {
        Usage r = u.copy();
        int[] byTraffic = in.vipsByTraffic();
        LinkLoads ll = m.newLinkLoads();
        // One pass, least traffic first, against the current usage: a VIP goes only while its
        // resource is still over. A second pass is rarely needed; the SMux-only usage is the floor.
        for (int pass = 0; pass < 3 && !Feasibility.violations(r).isEmpty(); pass++) {
            for (int i = byTraffic.length - 1; i >= 0; i--) {
                int v = byTraffic[i];
                int s = r.placement(v);
                if (s >= 0 && onOverloadedResource(r, v, s, ll)) {
                    r.remove(v);
                }
            }
        }
        return Feasibility.violations(r).isEmpty() ? r : m.newUsage();
    }

    private boolean onOverloadedResource(Usage u, int v, int s, LinkLoads ll) {
        if (u.ecmpUsed(s) > m.ecmpCapacity(s) || u.tunnelUsed(s) > m.tunnelCapacity(s)
                || u.hostUsed() > m.hostBudget()) {
            return true;
        }
        m.linkLoads(v, s, ll);
        for (int i = 0; i < ll.size(); i++) {
            if (u.linkUtilisation(ll.link(i)) > 1 + Usage.EPS) {
                return true;
            }
        }
        return false;
    }

    /**
     * The best feasible assignment among the greedy variants (and, with --current, the installed
     * one, as is and kept as far as the traffic allows) within the migration budget: the warm start.
     * With a budget that none of them meets, the answer would break it: {@link NoAssignmentException}.
     */
    private Usage warmStart() {
        List<String> names = new ArrayList<>(List.of("greedy-skip", "greedy"));
        if (current != null) {
            names.add("sticky");
            names.add("one-time");
        }
        List<Usage> candidates = new ArrayList<>();
        for (String name : names) {
            candidates.add(Assignments.usageOf(in, Algorithms.get(name).assign(in, current)));
        }
        if (current != null) {
            candidates.add(installedKept());
        }
        Usage best = null;
        double leastMoved = Double.POSITIVE_INFINITY;
        for (Usage u : candidates) {
            if (!Feasibility.violations(in, Assignments.of(in, u, "ilp", current)).isEmpty()) {
                continue;
            }
            leastMoved = Math.min(leastMoved, movedShare(u));
            if (budgetOk(u) && (best == null || share(u) > share(best))) {
                best = u;
            }
        }
        if (best == null && current != null && o.migrationBudget != null) {
            throw new NoAssignmentException(String.format(Locale.ROOT, "--migration-budget %s: no assignment found "
                    + "that moves at most %.2f%% of the traffic; the least-moving feasible one found moves %.2f%%",
                    o.migrationBudget, 100 * o.migrationBudget, 100 * leastMoved));
        }
        return best != null ? best : m.newUsage();
    }

    /**
     * The installed assignment kept wherever the new traffic allows: VIPs on a switch that is gone
     * or that no longer fits them, and then those on overloaded resources (least traffic first),
     * go to the SMuxes. What moves least.
     */
    private Usage installedKept() {
        Usage u = m.newUsage();
        for (int v = 0; v < in.vipCount(); v++) {
            int c = installedOn(v);
            if (c >= 0 && in.trafficBps(v) > 0 && m.fitsAlone(v, c)) {
                u.place(v, c);
            }
        }
        return repair(u);
    }

    private int installedOn(int v) {
        if (current == null) {
            return Usage.SMUX;
        }
        String where = current.assignment.get(in.vipId(v));
        return where == null || Assignment.SMUX.equals(where) ? Usage.SMUX : in.switchIndex(where);
    }

    /** Share of total traffic whose VIP left its installed switch. */
    private double movedShare(Usage u) {
        double total = in.totalTrafficBps();
        if (current == null || total <= 0) {
            return 0;
        }
        double moved = 0;
        for (int v = 0; v < in.vipCount(); v++) {
            int c = installedOn(v);
            if (c >= 0 && u.placement(v) != c) {
                moved += in.trafficBps(v);
            }
        }
        return moved / total;
    }

    private boolean budgetOk(Usage u) {
        return o.migrationBudget == null || current == null || movedShare(u) <= o.migrationBudget + 1e-9;
    }

    private double share(Usage u) {
        double total = in.totalTrafficBps();
        if (total <= 0) {
            return 0;
        }
        double hmux = 0;
        for (int v = 0; v < in.vipCount(); v++) {
            if (u.placement(v) >= 0) {
                hmux += in.trafficBps(v);
            }
        }
        return hmux / total;
    }

    private Assignment finish(Usage u, String status, String solvedBy, double objective, double bound,
                              double warm, long t0) {
        Assignment a = Assignments.of(in, u, "ilp", current);
        List<String> bad = Feasibility.violations(in, a);
        if (!bad.isEmpty() || !budgetOk(u)) {
            // cannot happen by construction (every candidate passed the checker); never return it anyway
            if (!budgetOk(m.newUsage())) {
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
                (System.nanoTime() - t0) / 1e9, current != null && o.migrationBudget != null ? movedShare(u) : null,
                notes);
        return a.withSolver(report);
    }
}
