package org.hybridlb.solver.ilp;

import org.hybridlb.solver.assign.AssignmentAlgorithm;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.model.Assignment;

/**
 * {@code ilp} in the algorithm registry: {@link DuetIlp} warm-started from the greedy. The
 * registry builds algorithms without arguments, so the CLI sets the options once
 * ({@link #setDefaults}, from {@code --time-limit}, {@code --gap}, {@code --solver}, ...) before
 * asking the registry for "ilp".
 */
public final class IlpAlgorithm implements AssignmentAlgorithm {
    private static volatile DuetIlp.Options defaults = DuetIlp.Options.defaults();

    private final DuetIlp.Options options;

    public IlpAlgorithm() {
        this(defaults);
    }

    public IlpAlgorithm(DuetIlp.Options options) {
        this.options = options;
    }

    /** Options every registry-built "ilp" uses from now on. */
    public static void setDefaults(DuetIlp.Options o) {
        defaults = o;
    }

    public static DuetIlp.Options defaults() {
        return defaults;
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
