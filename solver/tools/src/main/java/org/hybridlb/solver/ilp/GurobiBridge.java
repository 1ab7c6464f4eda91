package org.hybridlb.solver.ilp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.ortools.linearsolver.MPSolver;
import com.google.ortools.linearsolver.MPVariable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.hybridlb.solver.io.ModelIo;

/**
 * Gurobi through gurobipy, in a child Python process. Why not Gurobi's Java jar
 * (Maven com.gurobi:gurobi)? It is on Maven Central but carries no licence: without a licence
 * file it fails with error 10009. The PyPI gurobipy package bundles a size-limited licence
 * (2000 variables and constraints) and also finds a full licence the usual way
 * (GRB_LICENSE_FILE, ~/gurobi.lic, WLS), so one small bridge covers both cases.
 * The model goes over as MPS (exported by OR-Tools), the answer comes back as JSON.
 * Which Python: system property hlb.python, else $HLB_PYTHON, else python3 on the PATH.
 */
final class GurobiBridge {
    /** Gurobi cannot be used for this model; the message says why, for the operator. */
    static final class Unavailable extends Exception {
        private static final long serialVersionUID = 1L;

        Unavailable(String message) {
            super(message);
        }
    }

    /** Extra wall time the child gets beyond the solver's time limit (Python start-up, model read). */
    private static final long GRACE_SECONDS = 60;

    private GurobiBridge() {
    }

    static String python() {
        String p = System.getProperty("hlb.python", System.getenv("HLB_PYTHON"));
        return p == null || p.isBlank() ? "python3" : p;
    }

    static MipResult solve(MPSolver solver, List<MPVariable> hintVars, List<Double> hintValues,
                           MipOptions options, boolean strict, List<String> notes) throws Unavailable {
        long t0 = System.nanoTime();
        JsonNode r = run(solver, params(solver, hintVars, hintValues, options, strict), options);
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (r.has("error")) {
            throw new Unavailable(explain(r.get("error")));
        }
        return toResult(solver, r, seconds, options, notes);
    }

    /**
     * What the bridge is told: sense, limits, the warm start, and for a strict model (an answer
     * used as is) the checkers' tolerance of 1e-9, the least Gurobi accepts for FeasibilityTol
     * and IntFeasTol (defaults 1e-6 and 1e-5: a row "full" for Gurobi could be over for the checker).
     */
    static ObjectNode params(MPSolver solver, List<MPVariable> hintVars, List<Double> hintValues,
                             MipOptions options, boolean strict) {
        ObjectNode params = ModelIo.MAPPER.createObjectNode();
        params.put("maximize", solver.objective().maximization());
        params.put("timeLimit", options.timeLimitSeconds);
        params.put("gap", options.relativeGap);
        params.put("threads", options.threads);
        params.put("verbose", options.verbose);
        if (strict) {
            params.put("feasibilityTol", MipModel.CHECKER_TOLERANCE);
            params.put("intFeasTol", MipModel.CHECKER_TOLERANCE);
        }
        ObjectNode start = params.putObject("start");
        for (int i = 0; i < hintVars.size(); i++) {
            start.put(hintVars.get(i).name(), hintValues.get(i));
        }
        return params;
    }

    /** Runs gurobi_bridge.py on the model exported as MPS; its JSON answer (or {"error": ...}). */
    static JsonNode run(MPSolver solver, ObjectNode params, MipOptions options) throws Unavailable {
        Path dir = null;
        try {
            dir = Files.createTempDirectory("hlb-gurobi-");
            Path script = dir.resolve("gurobi_bridge.py");
            try (InputStream in = GurobiBridge.class.getResourceAsStream("gurobi_bridge.py")) {
                if (in == null) {
                    throw new IllegalStateException("gurobi_bridge.py missing from the jar");
                }
                Files.copy(in, script);
            }
            Path mps = dir.resolve("model.mps");
            Files.writeString(mps, solver.exportModelAsMpsFormat(false, false), StandardCharsets.UTF_8);
            Path paramsFile = dir.resolve("params.json");
            Path resultFile = dir.resolve("result.json");
            ModelIo.MAPPER.writeValue(paramsFile.toFile(), params);

            ProcessBuilder pb = new ProcessBuilder(python(), script.toString(), mps.toString(),
                    paramsFile.toString(), resultFile.toString());
            pb.redirectErrorStream(true);
            pb.redirectOutput(options.verbose ? ProcessBuilder.Redirect.INHERIT
                    : ProcessBuilder.Redirect.to(dir.resolve("log.txt").toFile()));
            Process proc;
            try {
                proc = pb.start();
            } catch (IOException e) {
                throw new Unavailable("cannot start " + python() + " (" + e.getMessage()
                        + "); set HLB_PYTHON to a Python with gurobipy");
            }
            long limitSeconds = (long) Math.ceil(options.timeLimitSeconds) + GRACE_SECONDS;
            if (!proc.waitFor(limitSeconds, TimeUnit.SECONDS)) {
                proc.destroyForcibly();
                throw new Unavailable("gurobipy did not answer within " + limitSeconds + " s");
            }
            if (!Files.exists(resultFile)) {
                String log = Files.exists(dir.resolve("log.txt")) ? tail(Files.readString(dir.resolve("log.txt")))
                        : "";
                throw new Unavailable(python() + " exited with " + proc.exitValue() + " and no answer " + log);
            }
            return ModelIo.MAPPER.readTree(resultFile.toFile());
        } catch (IOException e) {
            throw new Unavailable("bridge I/O failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Unavailable("interrupted");
        } finally {
            deleteQuietly(dir);
        }
    }

    /** Turns Gurobi's error codes into advice an operator can act on. */
    static String explain(JsonNode error) {
        String code = error.path("code").asText();
        String msg = error.path("message").asText();
        switch (code) {
            case "import":
                return msg + "; install it with 'python3 -m pip install gurobipy' (or set HLB_PYTHON)";
            case "10009":
                return "no valid Gurobi licence (" + msg + "); set GRB_LICENSE_FILE to a gurobi.lic";
            case "10010":
                return "model too large for gurobipy's size-limited licence (at most 2000 variables and "
                        + "2000 constraints): " + msg;
            default:
                return "Gurobi error " + code + ": " + msg;
        }
    }

    private static MipResult toResult(MPSolver solver, JsonNode r, double seconds, MipOptions options,
                                      List<String> notes) {
        String status = r.path("status").asText();
        String by = "gurobi " + r.path("version").asText();
        MipResult.Status st;
        if (status.equals("infeasible")) {
            return new MipResult(MipResult.Status.INFEASIBLE, null, Double.NaN, Double.NaN, seconds, by, notes);
        }
        if (!r.has("values")) {
            return new MipResult(MipResult.Status.NO_SOLUTION, null, Double.NaN, Double.NaN, seconds, by, notes);
        }
        st = status.equals("optimal") ? MipResult.Status.OPTIMAL : MipResult.Status.FEASIBLE;
        MPVariable[] vars = solver.variables();
        double[] values = new double[vars.length];
        JsonNode vals = r.get("values");
        for (int i = 0; i < vars.length; i++) {
            JsonNode v = vals.get(vars[i].name());
            values[i] = v == null ? 0 : v.asDouble();
        }
        double objective = r.path("objective").asDouble();
        // without a bound Gurobi reports ±1e100 (GRB.INFINITY): that is no bound
        double bound = MipResult.provenBound(objective, r.path("bound").asDouble(Double.NaN),
                solver.objective().maximization());
        st = MipModel.statusByGap(st, objective, bound, options.relativeGap, by, notes);
        return new MipResult(st, values, objective, bound, seconds, by, notes);
    }

    private static String tail(String log) {
        String t = log.strip();
        return t.length() > 400 ? "..." + t.substring(t.length() - 400) : t;
    }

    private static void deleteQuietly(Path dir) {
        if (dir == null) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a leftover temp dir is harmless
        }
    }
}
