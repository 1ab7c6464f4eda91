package org.hybridlb.solver.assign;

import java.util.List;

/**
 * Offers assignment algorithms by name. Providers are found with {@link java.util.ServiceLoader}
 * (a {@code META-INF/services/org.hybridlb.solver.assign.AlgorithmProvider} file in their jar), so
 * an algorithm exists exactly where its jar is on the class path: the library's own
 * ({@link BuiltInAlgorithms}) everywhere, the exact {@code ilp} only with the solver tools.
 */
public interface AlgorithmProvider {
    /** The names this provider offers, in the order to list them. */
    List<String> names();

    /** A new instance of the algorithm {@code name}, one of {@link #names()}. */
    AssignmentAlgorithm create(String name);
}
