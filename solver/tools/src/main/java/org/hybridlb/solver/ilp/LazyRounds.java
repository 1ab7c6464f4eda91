package org.hybridlb.solver.ilp;

import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import org.hybridlb.solver.assign.Feasibility;
import org.hybridlb.solver.assign.ResourceModel;
import org.hybridlb.solver.assign.Usage;

/**
 * Stage 1 ({@link ColumnModel#stage1}) solved in rounds of lazy link rows, from the incumbent
 * the warm start or the local search left, and the verdict on the answer. The first model has
 * the links the incumbent loads to at least {@link #INITIAL_LINK_UTILISATION} (of those the
 * columns can overload); after each solve, links the answer overloads join and the model is
 * solved again. Every model is a relaxation of the full one, so each proven bound is valid (it
 * counts when the columns are every fitting pair); the answer is only one that passes
 * {@link Feasibility}, else a repaired copy.
 */
final class LazyRounds {
    /** Links the warm start loads to at least this are in the first model. */
    static final double INITIAL_LINK_UTILISATION = 0.5;
    /** Most lazy rounds before giving up on proving the full model. */
    static final int MAX_ROUNDS = 30;
    /** Share of the time left a round gets while link rows may still be missing. */
    static final double ROUND_TIME_SHARE = 0.6;
    /** Shortest round worth starting. */
    static final double MIN_ROUND_SECONDS = 3;
    /** Links an answer fills to this join the next round's rows even when not overloaded. */
    static final double NEAR_FULL = 0.9;

    /** What the rounds leave: the answer, its status, what produced it and the best valid bound. */
    static final class Result {
        final Usage best;
        /** "optimal", "feasible" or "fallback". */
        final String status;
        final String solvedBy;
        final double bound;

        Result(Usage best, String status, String solvedBy, double bound) {
            this.best = best;
            this.status = status;
            this.solvedBy = solvedBy;
            this.bound = bound;
        }
    }

    private final IlpContext ctx;
    private final ResourceModel m;
    private final Columns columns;
    private final double deadline;
    /** The links whose rows the next model has. */
    private final BitSet rows;
    private Usage best;
    private double bestShare;
    /** What produced the answer: the MIP backend only when one of its answers is kept. */
    private String solvedBy;
    private double bound;
    private boolean proven;
    private int solverAnswers;
    private boolean usable;
    private boolean rowsComplete;

    /**
     * Rounds over {@code columns} from the incumbent {@code best}: {@code start} (the warm start)
     * or the local search's answer; {@code bound} is the best bound so far.
     */
    LazyRounds(IlpContext ctx, Columns columns, double deadline, Usage start, Usage best, double bound) {
        this.ctx = ctx;
        this.m = ctx.m;
        this.columns = columns;
        this.deadline = deadline;
        this.best = best;
        this.bestShare = ctx.share(best);
        this.bound = bound;
        rows = new BitSet(m.linkCount());
        for (int l = 0; l < m.linkCount(); l++) {
            if (best.linkUtilisation(l) >= INITIAL_LINK_UTILISATION && columns.worstLoad(l) > m.linkCapacity(l)) {
                rows.set(l);
            }
        }
        solvedBy = best == start ? "warm start" : "local search";
    }

    /** Runs the rounds ({@code linkBound}: as the local search found) and gives the verdict. */
    Result solve(Usage start, boolean linkBound) {
        MipOptions mip = ctx.o.mip;
        if (best != start && MipResult.relativeGap(bestShare, bound) <= mip.relativeGap) {
            proven = true; // the local search's answer is within the gap: no solver round needed
            usable = true;
            ctx.notes.add("the local search's answer is within the requested gap of the relaxation bound");
        }
        if (linkBound && !columns.all() && !proven) {
            // Measured on the medium link-bound instances (ILP.md): SCIP on the restricted model
            // never improved the greedy in 60 s, and overran its time limit by several seconds
            // (the root LP of ~36,000 columns with ~500 dense link rows); the local search had the time.
            ctx.notes.add("link-bound: the local search had the time; no SCIP round on the restricted model");
            usable = true; // the local search's answer (checked) is the result
            proven = true; // ends the loop; the status below is decided by the gap
        }
        for (int round = 1; round <= MAX_ROUNDS && !proven; round++) {
            if (!round(round)) {
                break;
            }
        }
        if (bound < bestShare) {
            bound = bestShare; // a relaxation cannot be below a feasible point; keep the report consistent
        }
        String status = proven && MipResult.relativeGap(bestShare, bound) <= mip.relativeGap + 1e-9
                ? "optimal" : "feasible";
        if (!usable && best == start) {
            status = "fallback";
            ctx.notes.add(solverAnswers == 0 ? "the solver returned no assignment; returning the warm start (greedy)"
                    : "no solver answer passed the feasibility check; returning the warm start (greedy)");
        }
        return new Result(best, status, solvedBy, bound);
    }

    /** One round: build, solve, keep or repair the answer, add the rows it broke. False: no more rounds. */
    private boolean round(int round) {
        MipOptions mip = ctx.o.mip;
        double left = deadline - System.nanoTime() / 1e9;
        if (left <= 0.05) {
            ctx.notes.add("time limit reached after " + (round - 1) + " round(s) of lazy link rows");
            return false;
        }
        // While link rows are still missing, a round gets a slice of the time, so that the
        // rows its answer breaks can be added and the model solved again.
        double slice = rowsComplete ? left : Math.min(left, Math.max(MIN_ROUND_SECONDS, ROUND_TIME_SHARE * left));
        double built = System.nanoTime() / 1e9;
        ColumnModel st = ColumnModel.stage1(ctx, columns, rows);
        // building the model takes time on large models: it comes out of this round's slice,
        // and a margin is left for checking the answer (the whole ilp keeps its time limit)
        double now = System.nanoTime() / 1e9;
        slice = Math.min(slice - (now - built), deadline - now - ctx.finishMargin() - ctx.solverOverrun());
        if (slice < 0.5) {
            ctx.notes.add("time limit reached while building round " + round + "'s model");
            return false;
        }
        MipResult r = st.solve(mip.withTimeLimit(slice), best);
        ctx.notes.add(String.format(Locale.ROOT, "round %d: %d columns, %d link rows, model built in %.1f s, "
                + "%s in %.1f s (limit %.1f s)%s", round, columns.count(), rows.cardinality(), now - built, r.status,
                System.nanoTime() / 1e9 - now, slice, r.hasSolution() ? String.format(Locale.ROOT,
                ", objective %.4f%%", 100 * r.objective) : ""));
        ctx.addNewNotes(r.notes);
        if (columns.all() && !Double.isNaN(r.bound) && (r.status == MipResult.Status.OPTIMAL
                || r.status == MipResult.Status.FEASIBLE)) {
            bound = Math.min(bound, r.bound);
        }
        if (!r.hasSolution()) {
            ctx.notes.add("round " + round + ": " + r.status + ", no solution");
            return false;
        }
        Usage u = st.usageOf(r.values);
        BitSet over = overloadedLinks(u);
        over.andNot(rows);
        if (over.isEmpty() && Feasibility.violations(u).isEmpty() && ctx.budgetOk(u)) {
            solverAnswers++;
            usable = true;
            if (ctx.share(u) >= bestShare) {
                best = u;
                bestShare = ctx.share(u);
                solvedBy = r.solvedBy;
            }
            proven = r.status == MipResult.Status.OPTIMAL && columns.all()
                    || MipResult.relativeGap(bestShare, bound) <= mip.relativeGap + 1e-9;
            if (proven || r.status == MipResult.Status.OPTIMAL || rowsComplete
                    || deadline - System.nanoTime() / 1e9 < MIN_ROUND_SECONDS) {
                return false;
            }
            rowsComplete = true; // this answer needs no more rows: spend the rest of the time on it
            return true;
        }
        // Not feasible on the full model: add the overloaded links (and those it fills to 90%,
        // likely next), keep a repaired copy as incumbent.
        rows.or(over);
        for (int l = 0; l < m.linkCount(); l++) {
            if (u.linkUtilisation(l) >= NEAR_FULL && columns.worstLoad(l) > m.linkCapacity(l)) {
                rows.set(l);
            }
        }
        solverAnswers++;
        Usage repaired = WarmStart.repair(ctx, u);
        if (ctx.share(repaired) > bestShare && ctx.budgetOk(repaired)) {
            best = repaired;
            bestShare = ctx.share(repaired);
            solvedBy = r.solvedBy + " (repaired)";
        }
        if (over.isEmpty()) {
            List<String> bad = Feasibility.violations(u);
            ctx.notes.add("solver answer broke a row it had (" + (bad.isEmpty() ? "migration budget" : bad.get(0))
                    + "); repaired");
            return false;
        }
        return true;
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
}
