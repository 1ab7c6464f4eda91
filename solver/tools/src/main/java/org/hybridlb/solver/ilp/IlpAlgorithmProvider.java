package org.hybridlb.solver.ilp;

import java.util.List;
import org.hybridlb.solver.assign.AlgorithmProvider;
import org.hybridlb.solver.assign.AssignmentAlgorithm;

/** Offers {@code ilp} ({@link IlpAlgorithm}, default options) to the library's algorithm registry. */
public final class IlpAlgorithmProvider implements AlgorithmProvider {
    @Override
    public List<String> names() {
        return List.of("ilp");
    }

    @Override
    public AssignmentAlgorithm create(String name) {
        if (!"ilp".equals(name)) {
            throw new IllegalArgumentException("not an ILP algorithm: " + name);
        }
        return new IlpAlgorithm();
    }
}
