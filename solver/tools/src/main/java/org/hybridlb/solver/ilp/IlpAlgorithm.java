package org.hybridlb.solver.ilp;

import org.hybridlb.solver.assign.AssignmentAlgorithm;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.model.Assignment;

/**
 * {@code ilp} in the algorithm registry: {@link DuetIlp} warm-started from the greedy. The
 * registry builds it with the default options; a command with {@code --time-limit},
 * {@code --gap}, {@code --solver}, ... builds its own with {@link #IlpAlgorithm(DuetIlp.Options)}
 * (no shared state, so one command's options never reach another's).
 */
public final class IlpAlgorithm implements AssignmentAlgorithm {
    private final DuetIlp.Options options;

    public IlpAlgorithm() {
        this(DuetIlp.Options.defaults());
    }

    public IlpAlgorithm(DuetIlp.Options options) {
        this.options = options;
    }

    public DuetIlp.Options options() {
        return options;
    }

    @Override
    public String name() {
        return "ilp";
    }

    @Override
    public Assignment assign(Instance in, Assignment current) {
        return DuetIlp.solve(in, current, options);
    }
}
