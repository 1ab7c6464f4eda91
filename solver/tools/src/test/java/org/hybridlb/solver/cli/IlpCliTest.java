package org.hybridlb.solver.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.solver.assign.Feasibility;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.SolverOptions;
import org.hybridlb.solver.ilp.DuetIlp;
import org.hybridlb.solver.ilp.IlpAlgorithm;
import org.hybridlb.solver.ilp.MipOptions;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.io.Schema;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.SolveReport;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficTrace;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.topology.DuetClos;
import org.hybridlb.solver.topology.DuetTestbed;
import org.hybridlb.solver.workload.Workload;
import org.hybridlb.solver.workload.WorkloadGenerator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** assign --algorithm ilp and yoda-assign, run as an operator would. */
class IlpCliTest {
    @TempDir
    static Path dir;
    static String[] files;

    /**
     * The testbed with 8 tunnel and 32 ECMP entries per switch: about half the traffic fits, so
     * the greedy is not provably optimal and {@code ilp} needs its bound model and a MIP round
     * (with the default tables every VIP fits and no solver is ever called).
     */
    @BeforeAll
    static void write() {
        Topology t = DuetClos.generate(DuetTestbed.params().tables(new TableCapacity(16384, 32, 8)));
        Workload w = WorkloadGenerator.generate(t, new WorkloadGenerator.Params().vipCount(40).intervals(1), 11);
        ModelIo.write(dir.resolve("topo.json"), t);
        ModelIo.write(dir.resolve("vips.json"), w.vips);
        ModelIo.write(dir.resolve("traffic.json"), w.trace);
        files = new String[] {"assign", "--topology", dir.resolve("topo.json").toString(),
            "--vips", dir.resolve("vips.json").toString(), "--traffic", dir.resolve("traffic.json").toString()};
    }

    /** The instance the CLI builds from the test's files, to check its answers with {@link Feasibility}. */
    static Instance instance() {
        Topology t = ModelIo.readTopology(dir.resolve("topo.json"));
        VipSet v = ModelIo.readVips(dir.resolve("vips.json"));
        TrafficTrace tr = ModelIo.readTraffic(dir.resolve("traffic.json"), v, t);
        return Instance.build(t, v, tr.intervals.get(0), SolverOptions.defaults());
    }

    static CliRun assign(String... extra) {
        String[] args = new String[files.length + extra.length];
        System.arraycopy(files, 0, args, 0, files.length);
        System.arraycopy(extra, 0, args, files.length, extra.length);
        return CliRun.of(args);
    }

    @Test
    void assignIlpPrintsObjectiveBoundAndGap() {
        CliRun r = assign("--algorithm", "ilp", "--time-limit", "10", "--gap", "0");
        assertEquals(0, r.exit, r.err);
        Assignment a = ModelIo.parse(r.out, "stdout", Schema.ASSIGNMENT, Assignment.class);
        assertEquals("ilp", a.algorithm);
        assertNotNull(a.solver, r.out);
        // the greedy leaves room on this instance: a bound model was solved, not the trivial bound
        assertFalse(a.solver.solver.startsWith("none"), a.solver.solver);
        assertTrue(r.err.contains("relaxation bound"), r.err);
        assertTrue(a.solver.objective > a.solver.warmStart + 1e-6,
                "ilp " + a.solver.objective + " vs greedy " + a.solver.warmStart);
        assertEquals(a.hmuxTrafficShare, a.solver.objective, 1e-9);
        assertNotNull(a.solver.bound, r.out);
        assertNotNull(a.solver.gap, r.out);
        assertTrue(a.solver.bound >= a.solver.objective - 1e-9);
        assertEquals((a.solver.bound - a.solver.objective) / a.solver.objective, a.solver.gap, 1e-9);
        assertEquals("optimal", a.solver.status, r.err); // gap 0 on 40 VIPs: proven well within 10 s
        assertEquals(0.0, a.solver.gap, 1e-9);
        assertTrue(r.err.contains("ilp: optimal by " + a.solver.solver), r.err);
        assertEquals(List.of(), Feasibility.violations(instance(), a));
    }

    @Test
    void optionsThatWouldBeIgnoredAreRefused() {
        CliRun r = assign("--algorithm", "greedy", "--time-limit", "5");
        assertEquals(2, r.exit, r.err);
        assertTrue(r.err.contains("--time-limit: only applies to the ilp algorithm (--algorithm greedy)"), r.err);
        r = assign("--algorithm", "ilp", "--migration-budget", "0.1");
        assertEquals(2, r.exit, r.err);
        assertTrue(r.err.contains("--migration-budget: needs --current"), r.err);
        r = CliRun.of("ilp-bench", "--topology", files[2], "--vips", files[4], "--traffic", files[6], "--load", "0.3");
        assertEquals(2, r.exit, r.err);
        assertTrue(r.err.contains("--load: generates an instance; it cannot be combined with --topology"), r.err);
        r = CliRun.of("ilp-bench", "--scale", "small", "--tunnel-table", "-1");
        assertEquals(2, r.exit, r.err);
        assertTrue(r.err.contains("--tunnel-table: must not be negative, got -1"), r.err);
        assertEquals("", r.out);
    }

    @Test
    void aCommandLeavesNoIlpOptionsBehind() {
        // refused after its options were read (the budget needs --current), then one that runs
        CliRun r = assign("--algorithm", "ilp", "--migration-budget", "0.1", "--time-limit", "3", "--gap", "0.2");
        assertEquals(2, r.exit, r.err);
        assertTrue(r.err.contains("--migration-budget: needs --current"), r.err);
        DuetIlp.Options afterRefused = ((IlpAlgorithm) Algorithms.get("ilp")).options();
        assertNull(afterRefused.migrationBudget);
        assertEquals(MipOptions.DEFAULTS.timeLimitSeconds, afterRefused.mip.timeLimitSeconds);
        r = assign("--algorithm", "ilp", "--time-limit", "7", "--gap", "0.25", "--minimise-mru");
        assertEquals(0, r.exit, r.err);
        // later code in the same JVM (another command, a test) gets the registry's defaults
        DuetIlp.Options after = ((IlpAlgorithm) Algorithms.get("ilp")).options();
        assertNull(after.migrationBudget);
        assertFalse(after.minimiseMru);
        assertEquals(MipOptions.DEFAULTS.timeLimitSeconds, after.mip.timeLimitSeconds);
        assertEquals(MipOptions.DEFAULTS.relativeGap, after.mip.relativeGap);
    }

    @Test
    void theCommandsIlpHasTheCommandsOptions() {
        AssignCommand cmd = new AssignCommand();
        new CommandLine(cmd).parseArgs("--topology", "t", "--vips", "v", "--traffic", "tr", "--algorithm", "ilp",
                "--time-limit", "7", "--gap", "0.25", "--minimise-mru", "--migration-budget", "0.3",
                "--solver", "gurobi");
        DuetIlp.Options o = ((IlpAlgorithm) cmd.ilp.algorithm("ilp")).options();
        assertEquals(7, o.mip.timeLimitSeconds);
        assertEquals(0.25, o.mip.relativeGap);
        assertTrue(o.minimiseMru);
        assertEquals(0.3, o.migrationBudget);
        assertEquals(MipOptions.Backend.GUROBI, o.mip.backend);
        assertEquals("greedy-skip", cmd.ilp.algorithm("greedy-skip").name());
    }

    @Test
    void reportSaysTheGapOfAZeroShareIsUndefined() {
        // all traffic on the SMuxes, bound 0.7: the relative gap used to print as 70000000000%
        SolveReport s = new SolveReport("ortools/scip", "feasible", 0, 0.7, null, 0.0, 1, null, List.of());
        StringWriter err = new StringWriter();
        IlpCliOptions.report(new PrintWriter(err, true), new Assignment("ilp", Map.of(), 0, 0, 0, null).withSolver(s));
        assertTrue(err.toString().contains("bound 0.700000, gap undefined (objective 0)"), err.toString());
    }

    @Test
    void gurobiMissingFallsBackWithAMessage() {
        String before = System.getProperty("hlb.python");
        System.setProperty("hlb.python", "/nonexistent/python3");
        try {
            CliRun r = assign("--algorithm", "ilp", "--solver", "gurobi", "--time-limit", "10", "--gap", "0");
            assertEquals(0, r.exit, r.err);
            Assignment a = ModelIo.parse(r.out, "stdout", Schema.ASSIGNMENT, Assignment.class);
            // the instance needs a solver: the bound model went to the Gurobi bridge, which could
            // not start, and OR-Tools solved it instead; the answer is never Gurobi's
            assertFalse(a.solver.solver.startsWith("none"), a.solver.solver);
            assertFalse(a.solver.solver.startsWith("gurobi"), a.solver.solver);
            assertTrue(r.err.contains("ilp: Gurobi not used: cannot start /nonexistent/python3"), r.err);
            assertTrue(r.err.contains("solved with OR-Tools scip instead"), r.err);
            assertTrue(a.solver.notes.stream().anyMatch(n -> n.startsWith("Gurobi not used: ")),
                    a.solver.notes.toString());
            assertNotNull(a.solver.gap, r.out);
            assertEquals(List.of(), Feasibility.violations(instance(), a));
        } finally {
            if (before == null) {
                System.clearProperty("hlb.python");
            } else {
                System.setProperty("hlb.python", before);
            }
        }
    }

    @Test
    void badIlpOptionsExitTwoNamingTheOption() {
        CliRun r = assign("--algorithm", "ilp", "--gap", "2");
        assertEquals(2, r.exit);
        assertTrue(r.err.contains("--gap"), r.err);
        assertEquals("", r.out);
        r = assign("--algorithm", "ilp", "--solver", "cplex");
        assertEquals(2, r.exit);
        assertTrue(r.err.contains("--solver"), r.err);
    }

    @Test
    void yodaAssignBothModes() throws Exception {
        CliRun r = CliRun.of("yoda-assign", "-p", "examples/yoda/small.json", "--mode", "both", "--gap", "0");
        assertEquals(0, r.exit, r.err);
        JsonNode doc = ModelIo.MAPPER.readTree(r.out);
        JsonNode noLimit = doc.get("results").get(0);
        JsonNode limit = doc.get("results").get(1);
        assertEquals("no-limit", noLimit.get("mode").asText());
        assertEquals("limit", limit.get("mode").asText());
        assertTrue(limit.get("migratedFraction").asDouble() <= 0.10 + 1e-9);
        assertTrue(noLimit.get("instancesUsed").asInt() <= limit.get("instancesUsed").asInt());
        assertEquals(8, limit.get("assignment").size());
    }

    @Test
    void yodaAssignBadInputExitsTwoWithNothingOnStdout() throws Exception {
        Path bad = dir.resolve("bad-yoda.json");
        Files.writeString(bad, "{\"instancePool\":{\"count\":2,\"trafficCapacity\":1,\"ruleCapacity\":5},"
                + "\"vips\":[{\"vip\":\"v\",\"traffic\":1,\"rules\":1,\"replicas\":3}]}");
        CliRun r = CliRun.of("yoda-assign", "-p", bad.toString());
        assertEquals(2, r.exit);
        assertEquals("", r.out);
        assertTrue(r.err.contains("/vips/0/replicas") && r.err.contains("3 replicas but only 2 instances"), r.err);
    }
}
