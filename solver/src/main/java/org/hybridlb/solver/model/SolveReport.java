package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * How an exact solver did on an assignment (optional part of {@link Assignment}): the objective
 * (HMux traffic share), the best proven upper bound on it, the relative gap, time, and notes
 * (fallbacks, e.g. Gurobi unavailable or a rejected answer).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class SolveReport {
    /** "ortools/scip", "ortools/cp-sat", "gurobi 13.0.3". */
    public final String solver;
    /** "optimal" (within the requested gap), "feasible" (time limit), "fallback" (the warm start was returned). */
    public final String status;
    /** HMux traffic share of the returned assignment. */
    public final double objective;
    /** Proven upper bound on the HMux traffic share of any feasible assignment. */
    public final Double bound;
    /** (bound - objective) / objective; absent without a bound or when the objective is 0 (undefined). */
    public final Double gap;
    /** HMux traffic share of the warm start (the greedy). */
    public final Double warmStart;
    public final double seconds;
    /** Share of the total traffic whose VIP left its installed switch, when a budget applied. */
    public final Double movedShare;
    public final List<String> notes;

    @JsonCreator
    public SolveReport(@JsonProperty("solver") String solver,
                       @JsonProperty("status") String status,
                       @JsonProperty("objective") double objective,
                       @JsonProperty("bound") Double bound,
                       @JsonProperty("gap") Double gap,
                       @JsonProperty("warmStart") Double warmStart,
                       @JsonProperty("seconds") double seconds,
                       @JsonProperty("movedShare") Double movedShare,
                       @JsonProperty("notes") List<String> notes) {
        this.solver = solver;
        this.status = status;
        this.objective = objective;
        this.bound = bound;
        this.gap = gap;
        this.warmStart = warmStart;
        this.seconds = seconds;
        this.movedShare = movedShare;
        this.notes = notes == null ? List.of() : List.copyOf(notes);
    }
}
