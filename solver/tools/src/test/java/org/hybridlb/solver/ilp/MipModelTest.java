package org.hybridlb.solver.ilp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.ortools.linearsolver.MPConstraint;
import com.google.ortools.linearsolver.MPObjective;
import com.google.ortools.linearsolver.MPSolver;
import com.google.ortools.linearsolver.MPVariable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.hybridlb.solver.io.ModelIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The MIP layer on a knapsack whose optimum (8: items b and c) is known by hand. */
class MipModelTest {
    private static MipModel knapsack(MipOptions o) {
        MipModel m = MipModel.create("knap", o);
        MPSolver s = m.solver();
        MPVariable a = s.makeBoolVar("a");
        MPVariable b = s.makeBoolVar("b");
        MPVariable c = s.makeBoolVar("c");
        MPConstraint cap = s.makeConstraint(0, 5, "cap");
        cap.setCoefficient(a, 3);
        cap.setCoefficient(b, 3);
        cap.setCoefficient(c, 2);
        MPObjective obj = s.objective();
        obj.setCoefficient(a, 4);
        obj.setCoefficient(b, 5);
        obj.setCoefficient(c, 3);
        obj.setMaximization();
        m.hint(a, 1); // a worse start: a + c = 7
        m.hint(c, 1);
        return m;
    }

    @Test
    void scipAndCpSatFindTheKnownOptimum() {
        for (MipOptions.Engine e : MipOptions.Engine.values()) {
            MipResult r = knapsack(MipOptions.DEFAULTS.withEngine(e)).solve(MipOptions.DEFAULTS.withEngine(e));
            assertEquals(MipResult.Status.OPTIMAL, r.status, e.name());
            assertEquals(8.0, r.objective, 1e-6, e.name());
            assertEquals(0.0, r.values[0], 1e-6);
            assertEquals(1.0, r.values[1], 1e-6);
            assertEquals(1.0, r.values[2], 1e-6);
            assertEquals(0.0, r.gap, 1e-6);
        }
    }

    @Test
    void userScipParametersAreAppendedToOurs() {
        assertEquals("separating/maxroundsroot = 3\nnumerics/feastol = 1e-9\n", MipModel.scipParameters(true, null));
        assertEquals("separating/maxroundsroot = 3\n", MipModel.scipParameters(false, " "));
        // a user line comes last, so it wins for its parameter; the checkers' tolerance stays
        assertEquals("separating/maxroundsroot = 3\nnumerics/feastol = 1e-9\nlimits/solutions = 1\n",
                MipModel.scipParameters(true, "limits/solutions = 1\n"));
    }

    @Test
    void userScipParametersReachScip() {
        String before = System.getProperty("hlb.scip.params");
        System.setProperty("hlb.scip.params", "limits/solutions = 1");
        try {
            // SCIP stops at its first solution: the bins stay at the warm start's 40, not the optimum
            MipOptions o = MipOptions.DEFAULTS.withTimeLimit(20);
            MipResult r = binPacking(o).strict().solve(o);
            assertTrue(r.hasSolution(), r.status.name());
            assertEquals(MipResult.Status.FEASIBLE, r.status);
            assertTrue(r.objective > 29.5, "objective " + r.objective);
        } finally {
            if (before == null) {
                System.clearProperty("hlb.scip.params");
            } else {
                System.setProperty("hlb.scip.params", before);
            }
        }
    }

    @Test
    void gurobiSolvesStrictModelsWithTheCheckersTolerance() throws Exception {
        assumeTrue(canImportGurobipy(GurobiBridge.python()), "needs gurobipy");
        MipOptions o = MipOptions.DEFAULTS.withBackend(MipOptions.Backend.GUROBI);
        MipModel m = knapsack(o);
        JsonNode strict = GurobiBridge.run(m.solver(), GurobiBridge.params(m.solver(), List.of(), List.of(), o, true), o);
        assertEquals(1e-9, strict.path("feasibilityTol").asDouble(), 0, strict.toString());
        assertEquals(1e-9, strict.path("intFeasTol").asDouble(), 0, strict.toString());
        assertEquals(8.0, strict.path("objective").asDouble(), 1e-9, strict.toString());
        // a model solved only for its bound keeps Gurobi's defaults
        JsonNode loose = GurobiBridge.run(m.solver(), GurobiBridge.params(m.solver(), List.of(), List.of(), o, false), o);
        assertEquals(1e-6, loose.path("feasibilityTol").asDouble(), 0, loose.toString());
        assertEquals(1e-5, loose.path("intFeasTol").asDouble(), 0, loose.toString());
    }

    /** 80 items of 3-7 into 40 bins of 15 (fewest bins), warm-started with two items per bin. */
    private static MipModel binPacking(MipOptions o) {
        MipModel m = MipModel.create("bins", o);
        MPSolver s = m.solver();
        int bins = 40;
        MPConstraint[] cap = new MPConstraint[bins];
        for (int b = 0; b < bins; b++) {
            MPVariable u = s.makeBoolVar("u" + b);
            s.objective().setCoefficient(u, 1);
            cap[b] = s.makeConstraint(Double.NEGATIVE_INFINITY, 0, "cap" + b);
            cap[b].setCoefficient(u, -15);
            m.hint(u, 1);
        }
        for (int i = 0; i < 2 * bins; i++) {
            MPConstraint once = s.makeConstraint(1, 1, "once" + i);
            for (int b = 0; b < bins; b++) {
                MPVariable x = s.makeBoolVar("x" + i + "_" + b);
                once.setCoefficient(x, 1);
                cap[b].setCoefficient(x, 3 + (i * 7) % 5);
                m.hint(x, b == i / 2 ? 1 : 0);
            }
        }
        s.objective().setMinimization();
        return m;
    }

    @Test
    void noBoundYetIsNoBound() {
        // Stopped after 1 ms, SCIP has the warm start but not its root LP: its bound is then its
        // "infinity", -1e20, which used to be reported with a gap of 2.5e18.
        MipOptions o = MipOptions.DEFAULTS.withTimeLimit(0.001);
        MipResult r = binPacking(o).solve(o);
        assertTrue(r.hasSolution(), r.status.name());
        assertTrue(Double.isNaN(r.bound) || (r.bound > 0 && r.bound <= r.objective), "bound " + r.bound);
        assertTrue(Double.isNaN(r.gap) || r.gap < 1, "gap " + r.gap);
    }

    @Test
    void optimalOnlyWithinTheRequestedGap() {
        // CP-SAT's gap is |bound - objective| / max(1, |objective|): on a maximum below 1 with a
        // requested gap of 0.5 it stops at once and says OPTIMAL (here at 0.0015 against a bound
        // of 0.45), which used to be reported as optimal with the note "stopped at the requested gap".
        MipOptions o = new MipOptions(MipOptions.Backend.ORTOOLS, MipOptions.Engine.CP_SAT, 5, 0.5, 1, false);
        MipModel m = MipModel.create("knap6", o);
        MPSolver s = m.solver();
        java.util.Random rnd = new java.util.Random(3);
        MPConstraint[] rows = new MPConstraint[6];
        for (int k = 0; k < rows.length; k++) {
            rows[k] = s.makeConstraint(0, 1000, "row" + k);
        }
        for (int i = 0; i < 300; i++) {
            MPVariable x = s.makeBoolVar("x" + i);
            for (MPConstraint row : rows) {
                row.setCoefficient(x, 3 + rnd.nextInt(20));
            }
            s.objective().setCoefficient(x, 0.0001 * (1 + rnd.nextInt(30)));
            m.hint(x, i < 2 ? 1 : 0);
        }
        s.objective().setMaximization();
        MipResult r = m.solve(o);
        assertTrue(r.hasSolution(), r.status.name());
        assertEquals(r.gap <= 0.5, r.status == MipResult.Status.OPTIMAL, r.status + " at gap " + r.gap);
        assertTrue(r.notes.stream().noneMatch(n -> n.contains("stopped at the requested gap")), r.notes.toString());
    }

    @Test
    void statusFollowsTheFinalGap() {
        List<String> notes = new ArrayList<>();
        assertEquals(MipResult.Status.FEASIBLE,
                MipModel.statusByGap(MipResult.Status.OPTIMAL, 0.2151, 0.2154, 0.001, "ortools/cp-sat", notes));
        assertEquals(List.of("ortools/cp-sat reported optimal at a gap of 0.1395%, above the requested 0.1000%: "
                + "reported as feasible"), notes);
        notes.clear();
        assertEquals(MipResult.Status.OPTIMAL,
                MipModel.statusByGap(MipResult.Status.FEASIBLE, 100, 100.05, 0.001, "ortools/scip", notes));
        assertEquals(List.of("ortools/scip stopped at the time limit at a gap of 0.0500%, within the requested "
                + "0.1000%: reported as optimal"), notes);
        notes.clear();
        assertEquals(MipResult.Status.FEASIBLE,
                MipModel.statusByGap(MipResult.Status.OPTIMAL, 8, Double.NaN, 0.001, "x", notes));
        assertEquals(List.of("x reported optimal without a bound: reported as feasible"), notes);
        notes.clear();
        assertEquals(MipResult.Status.OPTIMAL,
                MipModel.statusByGap(MipResult.Status.OPTIMAL, 8, 8, 0, "x", notes));
        assertEquals(MipResult.Status.FEASIBLE,
                MipModel.statusByGap(MipResult.Status.FEASIBLE, 8, 7, 0, "x", notes));
        assertEquals(List.of(), notes);
    }

    @Test
    void gurobiBackendSolvesOrFallsBackWithAReason() {
        MipOptions o = MipOptions.DEFAULTS.withBackend(MipOptions.Backend.GUROBI);
        MipResult r = knapsack(o).solve(o);
        assertEquals(8.0, r.objective, 1e-6);
        if (gurobipyWithoutFullLicence()) {
            assertTrue(r.solvedBy.startsWith("gurobi "), r.solvedBy);
        }
        if (r.solvedBy.startsWith("gurobi")) {
            assertTrue(r.notes.isEmpty(), r.notes.toString());
        } else {
            assertEquals("ortools/scip", r.solvedBy);
            assertTrue(r.notes.get(0).startsWith("Gurobi not used: "), r.notes.toString());
        }
    }

    @Test
    void missingGurobiFallsBackToOrToolsWithAClearMessage() {
        String before = System.getProperty("hlb.python");
        System.setProperty("hlb.python", "/nonexistent/python3");
        try {
            MipOptions o = MipOptions.DEFAULTS.withBackend(MipOptions.Backend.GUROBI);
            MipResult r = knapsack(o).solve(o);
            assertEquals("ortools/scip", r.solvedBy);
            assertEquals(8.0, r.objective, 1e-6);
            assertEquals(1, r.notes.size());
            assertTrue(r.notes.get(0).contains("cannot start /nonexistent/python3"), r.notes.get(0));
            assertTrue(r.notes.get(0).endsWith("solved with OR-Tools scip instead"), r.notes.get(0));
        } finally {
            if (before == null) {
                System.clearProperty("hlb.python");
            } else {
                System.setProperty("hlb.python", before);
            }
        }
    }

    @Test
    void modelBeyondTheSizeLimitedLicenceFallsBack() {
        assumeTrue(gurobipyWithoutFullLicence(), "needs gurobipy with only its bundled licence");
        MipOptions o = MipOptions.DEFAULTS.withBackend(MipOptions.Backend.GUROBI);
        MipModel m = MipModel.create("big", o);
        MPConstraint c = m.solver().makeConstraint(0, 3, "c");
        for (int i = 0; i < 2001; i++) {
            MPVariable v = m.solver().makeBoolVar("v" + i);
            c.setCoefficient(v, 1);
            m.solver().objective().setCoefficient(v, 1);
        }
        m.solver().objective().setMaximization();
        MipResult r = m.solve(o);
        assertEquals(3.0, r.objective, 1e-6);
        assertEquals("ortools/scip", r.solvedBy);
        assertTrue(r.notes.get(0).contains("size-limited licence"), r.notes.get(0));
    }

    @Test
    void explainTurnsGurobiErrorsIntoAdvice() {
        // gurobipy's errno arrives as a JSON number
        String invalid = GurobiBridge.explain(error(10009, "No HostID specified in license file"));
        assertEquals("no valid Gurobi licence (No HostID specified in license file); set GRB_LICENSE_FILE to "
                + "a gurobi.lic", invalid);
        String tooLarge = GurobiBridge.explain(error(10010, "Model too large for size-limited license"));
        assertEquals("model too large for gurobipy's size-limited licence (at most 2000 variables and 2000 "
                + "constraints): Model too large for size-limited license", tooLarge);
        assertEquals("Gurobi error 10001: Out of memory", GurobiBridge.explain(error(10001, "Out of memory")));
    }

    private static JsonNode error(int code, String message) {
        ObjectNode e = ModelIo.MAPPER.createObjectNode();
        e.put("code", code);
        e.put("message", message);
        return e;
    }

    /**
     * A GRB_LICENSE_FILE that is not a licence: gurobipy does not fall back to its bundled
     * size-limited licence but fails with error 10009 (measured with gurobipy 13.0.3 for a file of
     * garbage, a missing file, a directory and an expired key), and the model goes to SCIP.
     */
    @Test
    void invalidGurobiLicenceFallsBackToOrToolsWithAClearMessage(@TempDir Path tmp) throws Exception {
        String python = GurobiBridge.python();
        assumeTrue(canImportGurobipy(python), "needs gurobipy");
        Path licence = tmp.resolve("gurobi.lic");
        Files.writeString(licence, "this is not a licence\n");
        Path wrapper = tmp.resolve("python-with-bad-licence");
        Files.writeString(wrapper, "#!/bin/sh\nGRB_LICENSE_FILE='" + licence + "' exec '" + python + "' \"$@\"\n");
        assumeTrue(wrapper.toFile().setExecutable(true), "cannot make a test script executable");
        String before = System.getProperty("hlb.python");
        System.setProperty("hlb.python", wrapper.toString());
        try {
            MipOptions o = MipOptions.DEFAULTS.withBackend(MipOptions.Backend.GUROBI);
            MipResult r = knapsack(o).solve(o);
            assertEquals("ortools/scip", r.solvedBy);
            assertEquals(8.0, r.objective, 1e-6);
            assertEquals(1, r.notes.size(), r.notes.toString());
            String note = r.notes.get(0);
            assertTrue(note.startsWith("Gurobi not used: no valid Gurobi licence ("), note);
            assertTrue(note.contains("set GRB_LICENSE_FILE to a gurobi.lic"), note);
            assertTrue(note.endsWith("solved with OR-Tools scip instead"), note);
        } finally {
            if (before == null) {
                System.clearProperty("hlb.python");
            } else {
                System.setProperty("hlb.python", before);
            }
        }
    }

    static boolean canImportGurobipy(String python) {
        try {
            Process p = new ProcessBuilder(python, "-c", "import gurobipy").start();
            return p.waitFor() == 0;
        } catch (Exception e) {
            return false;
        }
    }

    /** True when python3 has gurobipy and no full licence is configured. */
    static boolean gurobipyWithoutFullLicence() {
        if (System.getenv("GRB_LICENSE_FILE") != null
                || java.nio.file.Files.exists(java.nio.file.Path.of(System.getProperty("user.home"), "gurobi.lic"))
                || java.nio.file.Files.exists(java.nio.file.Path.of("/opt/gurobi/gurobi.lic"))) {
            return false;
        }
        return canImportGurobipy(GurobiBridge.python());
    }
}
