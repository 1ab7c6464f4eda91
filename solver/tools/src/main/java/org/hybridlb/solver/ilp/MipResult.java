package org.hybridlb.solver.ilp;

import java.util.List;
import java.util.Locale;

/** What a MIP solve returned: the best solution (if any), its objective, the proven bound and the gap. */
public final class MipResult {
    public enum Status {
        /** Proven optimal within the requested gap. */
        OPTIMAL,
        /** A solution, stopped by the time limit before the gap was proven. */
        FEASIBLE,
        /** Proven infeasible. */
        INFEASIBLE,
        /** Stopped without any solution. */
        NO_SOLUTION,
        /** The backend failed (see notes). */
        ERROR
    }

    /** Magnitude from which a "bound" is a solver's placeholder for none (SCIP's infinity is 1e20). */
    static final double NO_BOUND = 1e20;

    public final Status status;
    /** Variable values by variable index; null when there is no solution. */
    public final double[] values;
    public final double objective;
    /** Best proven bound on the objective (upper bound when maximising); NaN when there is none. */
    public final double bound;
    /** {@link #relativeGap}: NaN without a bound, +Infinity when the objective is 0 and the bound is not. */
    public final double gap;
    public final double seconds;
    /** Which backend produced this, e.g. "ortools/scip", "gurobi 13.0.3 (size-limited licence)". */
    public final String solvedBy;
    /** Human-readable remarks, e.g. why Gurobi was not used. */
    public final List<String> notes;

    public MipResult(Status status, double[] values, double objective, double bound, double seconds,
                     String solvedBy, List<String> notes) {
        this.status = status;
        this.values = values;
        this.objective = objective;
        this.bound = bound;
        this.gap = relativeGap(objective, bound);
        this.seconds = seconds;
        this.solvedBy = solvedBy;
        this.notes = List.copyOf(notes);
    }

    public boolean hasSolution() {
        return values != null && (status == Status.OPTIMAL || status == Status.FEASIBLE);
    }

    /**
     * The engine's best bound if it is one, else NaN: SCIP says "no bound yet" with ±1e20 and
     * Gurobi with ±1e100, and a bound on the wrong side of the objective bounds nothing. A bound
     * past the objective by rounding only (1e-6 relative) is the objective.
     */
    public static double provenBound(double objective, double bound, boolean maximize) {
        if (Double.isNaN(bound) || Math.abs(bound) >= NO_BOUND) {
            return Double.NaN;
        }
        if (Double.isNaN(objective)) {
            return bound;
        }
        double wrongSide = maximize ? objective - bound : bound - objective;
        if (wrongSide > 1e-6 * Math.max(1, Math.abs(objective))) {
            return Double.NaN;
        }
        return wrongSide > 0 ? objective : bound;
    }

    /**
     * Gap in the sense of SCIP and Gurobi: |bound - objective| / |objective|. NaN without a bound;
     * +Infinity when the objective is 0 and the bound is not: the relative gap is undefined there
     * (dividing by a tiny number instead printed gaps of 10^10 %).
     */
    public static double relativeGap(double objective, double bound) {
        if (Double.isNaN(objective) || Double.isNaN(bound) || Double.isInfinite(bound)) {
            return Double.NaN;
        }
        double diff = Math.abs(bound - objective);
        if (diff <= 1e-9 * Math.max(1, Math.abs(objective))) {
            return 0;
        }
        if (Math.abs(objective) <= 1e-9) {
            return Double.POSITIVE_INFINITY;
        }
        return diff / Math.abs(objective);
    }

    /** The gap for people: "0.0411%", "undefined (objective 0)", or "-" without a bound. */
    public static String gapText(double objective, double bound) {
        double gap = relativeGap(objective, bound);
        if (Double.isNaN(gap)) {
            return "-";
        }
        if (Double.isInfinite(gap)) {
            return "undefined (objective 0)";
        }
        return String.format(Locale.ROOT, "%.4f%%", 100 * gap);
    }
}
