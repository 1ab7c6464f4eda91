package org.hybridlb.solver.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.hybridlb.solver.io.ModelIo;
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
}
