package org.hybridlb.solver.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.yoda.YodaFixtures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** yoda-assign's exit codes, messages and output, run as an operator would. */
class YodaAssignCommandTest {
    static final String SMALL = "examples/yoda/small.json";

    @TempDir
    Path dir;

    @Test
    void outputToADirectoryIsRefusedBeforeSolving() throws Exception {
        CliRun r = CliRun.of("yoda-assign", "-p", SMALL, "-o", dir.toString());
        assertEquals(2, r.exit, r.err);
        // one line, no stack trace, and no solver notes: it did not solve
        assertEquals("error: -o/--output: " + dir + " is a directory; give a file name", r.err.strip());
        assertEquals("", r.out);
        Path out = dir.resolve("sub/yoda.json");
        CliRun ok = CliRun.of("yoda-assign", "-p", SMALL, "--mode", "no-limit", "-o", out.toString());
        assertEquals(0, ok.exit, ok.err);
        assertEquals("", ok.out);
        JsonNode doc = ModelIo.MAPPER.readTree(Files.readString(out));
        assertEquals("no-limit", doc.get("mode").asText());
        assertTrue(Files.list(out.getParent()).allMatch(f -> f.equals(out)), "no temporary file left");
    }

    @Test
    void vipLargerThanEveryInstanceExitsTwoSayingWhy() throws Exception {
        Path p = dir.resolve("big-vip.json");
        Files.writeString(p, "{\"instancePool\":{\"count\":3,\"trafficCapacity\":10,\"ruleCapacity\":100},"
                + "\"vips\":[{\"vip\":\"10.9.0.1\",\"traffic\":100,\"rules\":1,\"replicas\":2}]}");
        CliRun r = CliRun.of("yoda-assign", "-p", p.toString());
        assertEquals(2, r.exit, r.err);
        assertEquals("", r.out);
        assertTrue(r.err.contains("/vips/0/traffic") && r.err.contains("VIP '10.9.0.1' cannot be placed"), r.err);
    }

    @Test
    void migrationBudgetWithoutLimitModeIsRefused() {
        CliRun r = CliRun.of("yoda-assign", "-p", SMALL, "--mode", "no-limit", "--migration-budget", "0.5");
        assertEquals(2, r.exit, r.err);
        assertEquals("error: --migration-budget: --mode no-limit has no migration limit; use --mode limit or both",
                r.err.strip());
        assertEquals("", r.out);
    }

    @Test
    void noSolutionInTimeIsNotInfeasibility() throws Exception {
        Path p = dir.resolve("tight.json");
        Files.writeString(p, YodaFixtures.tightPacking());
        CliRun r = CliRun.of("yoda-assign", "-p", p.toString(), "--mode", "no-limit", "--time-limit", "0.001");
        assertEquals(4, r.exit, r.err);
        assertTrue(r.err.contains("error: no-limit: no assignment found within the time limit (--time-limit 0.001 s "
                + "for the whole command), and none proven impossible; try a larger --time-limit"), r.err);
        assertFalse(r.err.contains("satisfies"), r.err);
        assertEquals("", r.out);
    }

    @Test
    void timeLimitIsTheWholeCommands() throws Exception {
        // each mode, and each δ retry within limit, used to get the full --time-limit (6+ s here)
        Path p = dir.resolve("reshuffled.json");
        Files.writeString(p, YodaFixtures.reshuffled(1, 120));
        long t0 = System.nanoTime();
        CliRun r = CliRun.of("yoda-assign", "-p", p.toString(), "--mode", "both", "--time-limit", "2");
        double wall = (System.nanoTime() - t0) / 1e9;
        assertTrue(wall < 2 + 2.5, wall + " s\n" + r.err); // 6 s and more when each got the whole limit
        assertTrue(r.err.contains("yoda-assign (no-limit): ") && r.err.contains("yoda-assign (limit): "), r.err);
        assertFalse(r.err.contains("internal error"), r.err);
    }

    @Test
    void bothModesPrintTheAssignmentFoundWhenTheOtherHasNone() throws Exception {
        // limit: δ = 0 but v1 must leave a and b (too few rules there), and --relax-step 0
        Path p = dir.resolve("stuck.json");
        Files.writeString(p, "{\"instances\":[{\"id\":\"a\",\"trafficCapacity\":10,\"ruleCapacity\":100},"
                + "{\"id\":\"b\",\"trafficCapacity\":10,\"ruleCapacity\":100},"
                + "{\"id\":\"c\",\"trafficCapacity\":10,\"ruleCapacity\":1000},"
                + "{\"id\":\"d\",\"trafficCapacity\":10,\"ruleCapacity\":1000}],"
                + "\"vips\":[{\"vip\":\"v1\",\"traffic\":4,\"rules\":500,\"replicas\":2,\"connections\":100},"
                + "{\"vip\":\"v2\",\"traffic\":4,\"rules\":50,\"replicas\":1,\"connections\":900}],"
                + "\"previous\":[{\"vip\":\"v1\",\"instances\":[\"a\",\"b\"]},"
                + "{\"vip\":\"v2\",\"instances\":[\"a\"]}],\"migrationBudgetFraction\":0.0}");
        CliRun r = CliRun.of("yoda-assign", "-p", p.toString(), "--mode", "both", "--relax-step", "0");
        assertEquals(3, r.exit, r.err);
        JsonNode results = ModelIo.MAPPER.readTree(r.out).get("results");
        assertEquals("no-limit", results.get(0).get("mode").asText());
        assertEquals("optimal", results.get(0).get("status").asText());
        assertEquals(2, results.get(0).get("assignment").size());
        assertEquals("limit", results.get(1).get("mode").asText());
        assertEquals("infeasible", results.get(1).get("status").asText());
        assertTrue(results.get(1).get("assignment") == null, r.out);
        assertTrue(r.err.contains("error: limit: no assignment satisfies the constraints (proven infeasible"), r.err);
        assertTrue(r.err.contains("yoda-assign: printed the no-limit assignment; the limit entry has status "
                + "\"infeasible\" and no assignment"), r.err);
    }

    @Test
    void cpSatAnswersWithADocumentedStatus() throws Exception {
        CliRun r = CliRun.of("yoda-assign", "-p", SMALL, "--ortools-engine", "cp-sat", "--gap", "0");
        assertEquals(0, r.exit, r.err);
        JsonNode doc = ModelIo.MAPPER.readTree(r.out);
        assertEquals("optimal", doc.get("status").asText(), r.err);
        assertEquals("ortools/cp-sat", doc.get("solvedBy").asText());
        assertEquals(8, doc.get("instancesUsed").asInt());
    }
}
