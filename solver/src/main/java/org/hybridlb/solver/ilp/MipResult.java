package org.hybridlb.solver.ilp;

import java.util.List;

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

    public final Status status;
    /** Variable values by variable index; null when there is no solution. */
    public final double[] values;
    public final double objective;
    /** Best proven bound on the objective (upper bound when maximising). */
    public final double bound;
    /** |bound - objective| / max(|objective|, tiny), 0 when proven optimal. */
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

    /** Gap in the sense of SCIP and Gurobi: |bound - objective| / |objective|. */
    public static double relativeGap(double objective, double bound) {
        if (Double.isNaN(objective) || Double.isNaN(bound) || Double.isInfinite(bound)) {
            return Double.NaN;
        }
        double diff = Math.abs(bound - objective);
        if (diff <= 1e-9 * Math.max(1, Math.abs(objective))) {
            return 0;
        }
        return diff / Math.max(Math.abs(objective), 1e-9);
    }
}
