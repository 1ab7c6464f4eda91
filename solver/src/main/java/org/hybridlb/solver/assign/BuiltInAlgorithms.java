package org.hybridlb.solver.assign;

import java.util.List;

/**
 * The library's algorithms (Duet §3.4, §3.8): {@code greedy}, {@code greedy-skip},
 * {@code random}, {@code sticky}, {@code non-sticky}, {@code one-time}, {@code ananta}.
 * See solver/ASSIGNMENT.md, "Algorithms".
 */
public final class BuiltInAlgorithms implements AlgorithmProvider {
    private static final List<String> NAMES =
            List.of("greedy", "greedy-skip", "random", "sticky", "non-sticky", "one-time", "ananta");

    @Override
    public List<String> names() {
        return NAMES;
    }

    @Override
    public AssignmentAlgorithm create(String name) {
        switch (name) {
            case "greedy":
                return new GreedyAlgorithm(name, true);
            case "greedy-skip":
                return new GreedyAlgorithm(name, false);
            case "non-sticky":
                return new GreedyAlgorithm(name, null);
            case "random":
                return new FirstFitAlgorithm();
            case "sticky":
                return new StickyAlgorithm();
            case "one-time":
                return new OneTimeAlgorithm();
            case "ananta":
                return new AnantaAlgorithm();
            default:
                throw new IllegalArgumentException("not a built-in algorithm: " + name);
        }
    }
}
