package org.hybridlb.solver.ilp;

import com.google.ortools.Loader;
import com.google.ortools.linearsolver.MPSolver;
import com.google.ortools.linearsolver.MPSolverParameters;
import com.google.ortools.linearsolver.MPVariable;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A MIP built once with OR-Tools' modelling layer and solved by the backend the options name:
 * SCIP or CP-SAT in-process, or Gurobi through {@link GurobiBridge} (the same model exported as
 * MPS). When Gurobi cannot be used, the very same model is solved by OR-Tools and the result
 * says why in its notes.
 */
public final class MipModel {
    /** How far the checkers (Feasibility, YodaAssignment) let a row go over its capacity. */
    static final double CHECKER_TOLERANCE = 1e-9;

    private static boolean nativesLoaded;

    private final MPSolver solver;
    private final MipOptions.Engine engine;
    private final List<MPVariable> hintVars = new ArrayList<>();
    private final List<Double> hintValues = new ArrayList<>();
    private boolean strict;

    private MipModel(MPSolver solver, MipOptions.Engine engine) {
        this.solver = solver;
        this.engine = engine;
    }

    /** An empty model for the OR-Tools engine in {@code options} (also the fallback when Gurobi is asked for). */
    public static MipModel create(String name, MipOptions options) {
        loadNatives();
        MPSolver s = MPSolver.createSolver(options.engine.orToolsId);
        if (s == null) {
            throw new IllegalStateException("OR-Tools has no " + options.engine.orToolsId + " solver in this build");
        }
        return new MipModel(s, options.engine);
    }

    /** Loads the OR-Tools JNI libraries once (they are extracted from the jar to a temp dir). */
    public static synchronized void loadNatives() {
        if (!nativesLoaded) {
            Loader.loadNativeLibraries();
            nativesLoaded = true;
        }
    }

    /** The OR-Tools model: add variables, constraints and the objective to it. */
    public MPSolver solver() {
        return solver;
    }

    /**
     * Solve with the checkers' tolerance (1e-9 over a capacity) instead of SCIP's and Gurobi's
     * 1e-6, for models whose answer is used as is; a model solved only for its bound does not need it.
     */
    public MipModel strict() {
        strict = true;
        return this;
    }

    /** A warm-start value for a variable (SCIP and Gurobi take it as a starting solution). */
    public void hint(MPVariable v, double value) {
        hintVars.add(v);
        hintValues.add(value);
    }

    public MipResult solve(MipOptions options) {
        List<String> notes = new ArrayList<>();
        if (options.backend == MipOptions.Backend.GUROBI) {
            try {
                return GurobiBridge.solve(solver, hintVars, hintValues, options, strict, notes);
            } catch (GurobiBridge.Unavailable e) {
                notes.add("Gurobi not used: " + e.getMessage() + "; solved with OR-Tools "
                        + engine.cliName() + " instead");
            }
        }
        return solveWithOrTools(options, notes);
    }

    private MipResult solveWithOrTools(MipOptions options, List<String> notes) {
        solver.setTimeLimit((long) Math.ceil(options.timeLimitSeconds * 1000));
        if (options.verbose) {
            solver.enableOutput();
        } else {
            solver.suppressOutput();
        }
        if (engine == MipOptions.Engine.CP_SAT) {
            int workers = options.threads > 0 ? options.threads : Runtime.getRuntime().availableProcessors();
            solver.setSolverSpecificParametersAsString("num_workers: " + workers
                    + " relative_gap_limit: " + options.relativeGap);
        } else {
            solver.setSolverSpecificParametersAsString(scipParameters(strict, System.getProperty("hlb.scip.params")));
            if (options.threads > 0) {
                solver.setNumThreads(options.threads);
            }
        }
        if (!hintVars.isEmpty()) {
            MPVariable[] vs = hintVars.toArray(new MPVariable[0]);
            double[] vals = new double[vs.length];
            for (int i = 0; i < vals.length; i++) {
                vals[i] = hintValues.get(i);
            }
            solver.setHint(vs, vals);
        }
        MPSolverParameters params = new MPSolverParameters();
        params.setDoubleParam(MPSolverParameters.DoubleParam.RELATIVE_MIP_GAP, options.relativeGap);
        long start = System.nanoTime();
        MPSolver.ResultStatus rs = solver.solve(params);
        double seconds = (System.nanoTime() - start) / 1e9;
        String by = "ortools/" + engine.cliName();
        MipResult.Status status;
        switch (rs) {
            case OPTIMAL:
                status = MipResult.Status.OPTIMAL;
                break;
            case FEASIBLE:
                status = MipResult.Status.FEASIBLE;
                break;
            case INFEASIBLE:
                status = MipResult.Status.INFEASIBLE;
                break;
            case NOT_SOLVED:
                status = MipResult.Status.NO_SOLUTION;
                break;
            default:
                status = MipResult.Status.ERROR;
                notes.add("OR-Tools " + engine.cliName() + " returned " + rs);
                break;
        }
        if (status != MipResult.Status.OPTIMAL && status != MipResult.Status.FEASIBLE) {
            return new MipResult(status, null, Double.NaN, Double.NaN, seconds, by, notes);
        }
        MPVariable[] vars = solver.variables();
        double[] values = new double[vars.length];
        for (int i = 0; i < vars.length; i++) {
            values[i] = vars[i].solutionValue();
        }
        double objective = solver.objective().value();
        // before the root LP SCIP reports its infinity (1e20) as the bound: that is no bound
        double bound = MipResult.provenBound(objective, solver.objective().bestBound(),
                solver.objective().maximization());
        status = statusByGap(status, objective, bound, options.relativeGap, by, notes);
        return new MipResult(status, values, objective, bound, seconds, by, notes);
    }

    /**
     * SCIP's parameters: ours, then the user's ({@code hlb.scip.params}, "name = value" lines)
     * appended, so that a user line changes one parameter (a later line for the same name wins)
     * without dropping the others, in particular the checkers' tolerance.
     */
    static String scipParameters(boolean strict, String user) {
        // Measured on the Duet models (solver/ILP.md): SCIP's root cut loop adds ~100 rows per
        // round for ~30 s without moving the bound (the LP bound of these knapsack rows is
        // already tight); a few rounds leave the time to the primal heuristics. The checkers
        // allow 1e-9 over a capacity, SCIP's default tolerance 1e-6: a link filled "to 100%"
        // by SCIP could be 100.0001% for the checker, so SCIP gets the checker's tolerance.
        String ours = "separating/maxroundsroot = 3\n" + (strict ? "numerics/feastol = 1e-9\n" : ""); // CHECKER_TOLERANCE
        return user == null || user.isBlank() ? ours : ours + user.strip() + "\n";
    }

    /**
     * OPTIMAL when the final gap is at or below the requested one, else FEASIBLE, whatever the
     * engine said: CP-SAT divides by max(1, |objective|), so on objectives below 1 (Duet's
     * traffic share) it reports OPTIMAL at gaps well above the requested one. A note says when
     * the status is not the engine's.
     */
    static MipResult.Status statusByGap(MipResult.Status reported, double objective, double bound,
                                        double requested, String by, List<String> notes) {
        double gap = MipResult.relativeGap(objective, bound);
        boolean withinGap = gap <= requested + 1e-9;
        String asked = String.format(Locale.ROOT, "%.4f%%", 100 * requested);
        if (reported == MipResult.Status.OPTIMAL && !withinGap) {
            notes.add(by + " reported optimal " + (Double.isNaN(gap) ? "without a bound"
                    : "at a gap of " + MipResult.gapText(objective, bound) + ", above the requested " + asked)
                    + ": reported as feasible");
            return MipResult.Status.FEASIBLE;
        }
        if (reported == MipResult.Status.FEASIBLE && withinGap) {
            notes.add(by + " stopped at the time limit at a gap of " + MipResult.gapText(objective, bound)
                    + ", within the requested " + asked + ": reported as optimal");
            return MipResult.Status.OPTIMAL;
        }
        return reported;
    }
}
