package org.hybridlb.solver.cli;

import org.hybridlb.solver.ilp.MipOptions;
import picocli.CommandLine.Option;

/** The MIP solver options shared by {@code assign --algorithm ilp} and {@code yoda-assign}. */
public final class MipCliOptions {
    @Option(names = "--time-limit", paramLabel = "S", defaultValue = "60",
            description = "MIP: stop after S seconds with the best solution and the proven bound (default ${DEFAULT-VALUE}).")
    double timeLimit;

    @Option(names = "--gap", paramLabel = "G", defaultValue = "0.001",
            description = "MIP: stop once (bound - objective) / objective <= G (default ${DEFAULT-VALUE}).")
    double gap;

    @Option(names = "--solver", paramLabel = "ortools|gurobi", defaultValue = "ortools",
            description = "MIP backend (default ${DEFAULT-VALUE}). gurobi drives gurobipy (python3 -m pip install "
                    + "gurobipy; full licence via GRB_LICENSE_FILE, else its size-limited one); when Gurobi "
                    + "cannot be used the model is solved by OR-Tools and stderr says why.")
    String solver;

    @Option(names = "--ortools-engine", paramLabel = "scip|cp-sat", defaultValue = "scip",
            description = "OR-Tools MIP engine (default ${DEFAULT-VALUE}).")
    String engine;

    @Option(names = "--threads", paramLabel = "N", defaultValue = "0",
            description = "MIP solver threads, 0 = solver default.")
    int threads;

    @Option(names = "--solver-log", description = "Print the MIP solver's log on stderr.")
    boolean solverLog;

    /** The time limit as given on the command line: "3", "0.25". */
    String timeLimitText() {
        return java.math.BigDecimal.valueOf(timeLimit).stripTrailingZeros().toPlainString();
    }

    /** Validated options; throws IllegalArgumentException (exit 2) naming the bad option. */
    public MipOptions toOptions() {
        return new MipOptions(MipOptions.Backend.parse(solver), MipOptions.Engine.parse(engine), timeLimit, gap,
                threads, solverLog);
    }
}
