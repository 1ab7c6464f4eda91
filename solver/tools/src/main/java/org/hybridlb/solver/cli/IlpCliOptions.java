package org.hybridlb.solver.cli;

import java.io.PrintWriter;
import java.util.List;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.solver.assign.AssignmentAlgorithm;
import org.hybridlb.solver.ilp.DuetIlp;
import org.hybridlb.solver.ilp.IlpAlgorithm;
import org.hybridlb.solver.ilp.MipResult;
import org.hybridlb.solver.model.Assignment;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/**
 * Options of the {@code ilp} algorithm, mixed into {@code assign} and {@code simulate}:
 * the MIP options plus the Duet-specific ones. {@link #algorithm} builds "ilp" with them (and
 * any other algorithm from the registry): nothing is stored globally, so a command that is
 * refused, or one run before, leaves no options behind for the next.
 */
public final class IlpCliOptions {
    @Mixin
    MipCliOptions mip;

    @Option(names = "--minimise-mru",
            description = "ilp: second stage keeps the HMux traffic found and lowers the MRU.")
    boolean minimiseMru;

    @Option(names = "--migration-budget", paramLabel = "FRACTION",
            description = "ilp (with --current): at most this share of the traffic may leave its installed switch.")
    Double migrationBudget;

    /** This mixin's own options, and {@link MipCliOptions}': they only shape the "ilp" algorithm. */
    @Spec
    CommandSpec self;

    /** The validated options; IllegalArgumentException (exit 2) naming the bad option. */
    public DuetIlp.Options options() {
        return new DuetIlp.Options(mip.toOptions(), minimiseMru, migrationBudget);
    }

    /** The algorithm of that name: "ilp" with these options, any other from the registry. */
    public AssignmentAlgorithm algorithm(String name) {
        return name.equals("ilp") ? new IlpAlgorithm(options()) : Algorithms.get(name);
    }

    /**
     * Rejects ilp options given while no selected algorithm is "ilp": they would be ignored
     * without a word.
     */
    public void requireIlpSelected(ParseResult given, List<String> algorithms, String algorithmOption) {
        if (algorithms.contains("ilp")) {
            return;
        }
        for (OptionSpec o : self.options()) {
            if (given.hasMatchedOption(o.longestName())) {
                throw new IllegalArgumentException(o.longestName() + ": only applies to the ilp algorithm ("
                        + algorithmOption + " " + String.join(",", algorithms) + ")");
            }
        }
    }

    /** Prints what the exact solver has to say (fallbacks, bound, gap) on stderr. */
    public static void report(PrintWriter err, Assignment a) {
        if (a.solver == null) {
            return;
        }
        for (String n : a.solver.notes) {
            err.println("ilp: " + n);
        }
        err.printf(java.util.Locale.ROOT, "ilp: %s by %s, share %.6f, bound %s, gap %s, warm start %.6f%n",
                a.solver.status, a.solver.solver, a.solver.objective,
                a.solver.bound == null ? "-" : String.format(java.util.Locale.ROOT, "%.6f", a.solver.bound),
                a.solver.bound == null ? "-" : MipResult.gapText(a.solver.objective, a.solver.bound),
                a.solver.warmStart == null ? Double.NaN : a.solver.warmStart);
    }

}
