package org.hybridlb.solver.ilp;

import java.util.Locale;

/**
 * How to solve a mixed-integer program: which backend, how long, which gap is good enough.
 * Immutable; the {@code with*} methods return changed copies.
 */
public final class MipOptions {
    /** The backends {@code --solver} accepts. */
    public enum Backend {
        /** Google OR-Tools, bundled; the engine below says which of its MIP solvers. */
        ORTOOLS,
        /** Gurobi through gurobipy (its bundled size-limited licence or a full one); falls back to OR-Tools. */
        GUROBI;

        public static Backend parse(String s) {
            for (Backend b : values()) {
                if (b.name().equalsIgnoreCase(s)) {
                    return b;
                }
            }
            throw new IllegalArgumentException("--solver: '" + s + "' is not one of ortools, gurobi");
        }

        public String cliName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** OR-Tools engines. SCIP is the default: its LP bound proves small gaps on these knapsack-like models. */
    public enum Engine {
        SCIP("SCIP"), CP_SAT("CP_SAT");

        public final String orToolsId;

        Engine(String orToolsId) {
            this.orToolsId = orToolsId;
        }

        public static Engine parse(String s) {
            String n = s.trim().toLowerCase(Locale.ROOT).replace('_', '-');
            if (n.equals("scip")) {
                return SCIP;
            }
            if (n.equals("cp-sat") || n.equals("cpsat") || n.equals("sat")) {
                return CP_SAT;
            }
            throw new IllegalArgumentException("--ortools-engine: '" + s + "' is not one of scip, cp-sat");
        }

        public String cliName() {
            return this == SCIP ? "scip" : "cp-sat";
        }
    }

    public static final double DEFAULT_TIME_LIMIT_SECONDS = 60;
    public static final double DEFAULT_RELATIVE_GAP = 0.001;
    public static final MipOptions DEFAULTS =
            new MipOptions(Backend.ORTOOLS, Engine.SCIP, DEFAULT_TIME_LIMIT_SECONDS, DEFAULT_RELATIVE_GAP, 0, false);

    public final Backend backend;
    public final Engine engine;
    public final double timeLimitSeconds;
    /** Stop once (bound - objective) / |objective| is at most this. */
    public final double relativeGap;
    /** Solver threads; 0 lets the solver decide (CP-SAT: number of cores). */
    public final int threads;
    /** Print the solver's own log on stderr. */
    public final boolean verbose;

    public MipOptions(Backend backend, Engine engine, double timeLimitSeconds, double relativeGap, int threads,
                      boolean verbose) {
        if (!(timeLimitSeconds > 0) || Double.isInfinite(timeLimitSeconds)) {
            throw new IllegalArgumentException("--time-limit: must be a positive number of seconds, got "
                    + timeLimitSeconds);
        }
        if (!(relativeGap >= 0 && relativeGap < 1)) {
            throw new IllegalArgumentException("--gap: must be in [0, 1), got " + relativeGap);
        }
        if (threads < 0) {
            throw new IllegalArgumentException("--threads: must be >= 0, got " + threads);
        }
        this.backend = backend;
        this.engine = engine;
        this.timeLimitSeconds = timeLimitSeconds;
        this.relativeGap = relativeGap;
        this.threads = threads;
        this.verbose = verbose;
    }

    public MipOptions withBackend(Backend b) {
        return new MipOptions(b, engine, timeLimitSeconds, relativeGap, threads, verbose);
    }

    public MipOptions withEngine(Engine e) {
        return new MipOptions(backend, e, timeLimitSeconds, relativeGap, threads, verbose);
    }

    public MipOptions withTimeLimit(double seconds) {
        return new MipOptions(backend, engine, seconds, relativeGap, threads, verbose);
    }

    public MipOptions withGap(double gap) {
        return new MipOptions(backend, engine, timeLimitSeconds, gap, threads, verbose);
    }

    /** "ortools/scip", "gurobi". */
    public String describe() {
        return backend == Backend.ORTOOLS ? "ortools/" + engine.cliName() : backend.cliName();
    }
}
