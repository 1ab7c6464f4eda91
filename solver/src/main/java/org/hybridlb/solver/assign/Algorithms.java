package org.hybridlb.solver.assign;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * The assignment algorithms by name: the library's own ({@link BuiltInAlgorithms}) and those of
 * every {@link AlgorithmProvider} that {@link ServiceLoader} finds on the class path (the solver
 * tools add {@code ilp}). VIPs without traffic in the interval stay on the SMuxes in every
 * algorithm: an HMux would gain nothing and they would take host-table room.
 */
public final class Algorithms {
    /** Algorithms known to live in another jar, and which: named when they are asked for here. */
    private static final Map<String, String> ELSEWHERE = Map.of("ilp",
            "the solver tools (hybridlb-solver-tools, the hybridlb-solver CLI jar), which bring OR-Tools");

    private static final Map<String, AlgorithmProvider> BY_NAME = load();

    private Algorithms() {
    }

    private static Map<String, AlgorithmProvider> load() {
        List<AlgorithmProvider> found = new ArrayList<>();
        // the providers' own class loader: inside an OSGi bundle the context class loader is not ours
        for (AlgorithmProvider p : ServiceLoader.load(AlgorithmProvider.class, AlgorithmProvider.class.getClassLoader())) {
            if (!(p instanceof BuiltInAlgorithms)) {
                found.add(p);
            }
        }
        found.sort(Comparator.comparing(p -> p.getClass().getName()));
        found.add(0, new BuiltInAlgorithms());
        Map<String, AlgorithmProvider> out = new LinkedHashMap<>();
        for (AlgorithmProvider p : found) {
            for (String name : p.names()) {
                AlgorithmProvider before = out.putIfAbsent(name, p);
                // the same provider twice (two copies of a jar) is harmless; two different ones are not
                if (before != null && !before.getClass().getName().equals(p.getClass().getName())) {
                    throw new IllegalStateException("algorithm '" + name + "' is offered by both "
                            + before.getClass().getName() + " and " + p.getClass().getName());
                }
            }
        }
        return Collections.unmodifiableMap(out);
    }

    /** The algorithm of that name; IllegalArgumentException saying why not ({@link #unavailable}). */
    public static AssignmentAlgorithm get(String name) {
        AlgorithmProvider p = BY_NAME.get(name);
        if (p == null) {
            throw new IllegalArgumentException(unavailable(name));
        }
        return p.create(name);
    }

    /** The names available on this class path, the library's first. */
    public static List<String> names() {
        return new ArrayList<>(BY_NAME.keySet());
    }

    /**
     * Null when {@code name} is available here; otherwise why not, naming the available ones, and
     * the jar that brings it when it is one of the algorithms that live elsewhere.
     */
    public static String unavailable(String name) {
        if (BY_NAME.containsKey(name)) {
            return null;
        }
        String available = "available on this class path: " + String.join(", ", names());
        String where = ELSEWHERE.get(name);
        if (where != null) {
            return "algorithm \"" + name + "\" is not available on this class path: it comes with "
                    + where + " (" + available + ")";
        }
        return "unknown algorithm \"" + name + "\" (" + available + ")";
    }
}
