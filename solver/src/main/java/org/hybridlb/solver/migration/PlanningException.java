package org.hybridlb.solver.migration;

/** No safe plan exists for the inputs (the message says why); nothing was planned. */
public final class PlanningException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public PlanningException(String message) {
        super(message);
    }
}
