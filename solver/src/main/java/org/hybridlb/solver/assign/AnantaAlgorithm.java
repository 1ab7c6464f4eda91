package org.hybridlb.solver.assign;

import org.hybridlb.solver.model.Assignment;

/** {@code ananta} (§3.2.1): every VIP on the SMuxes, the baseline Duet is measured against. */
final class AnantaAlgorithm implements AssignmentAlgorithm {
    @Override
    public String name() {
        return "ananta";
    }

    @Override
    public Assignment assign(Instance in, Assignment current) {
        return Assignments.of(in, in.resources().newUsage(), name(), current);
    }
}
