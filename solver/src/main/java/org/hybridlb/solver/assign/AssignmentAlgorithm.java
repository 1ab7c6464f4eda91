package org.hybridlb.solver.assign;

import org.hybridlb.solver.model.Assignment;

/** A VIP-switch assignment algorithm (Duet §3.4, §3.8). Implementations are stateless. */
public interface AssignmentAlgorithm {
    /** Registry name, e.g. "greedy", "sticky". */
    String name();

    /**
     * Assigns every VIP of {@code in} to a switch or to the SMuxes. {@code current} is the
     * installed assignment (used by sticky and one-time; may be null: nothing installed).
     * The result never violates a capacity of {@code in.resources()}.
     */
    Assignment assign(Instance in, Assignment current);
}
