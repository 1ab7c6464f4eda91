package org.hybridlb.solver.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.io.Schema;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.topology.DuetTestbed;
import org.hybridlb.solver.workload.Workload;
import org.hybridlb.solver.workload.WorkloadGenerator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AssignCommandTest {
    @TempDir
    static Path dir;
    static Path topo;
    static Path vips;
    static Path traffic;

    @BeforeAll
    static void files() {
        Topology t = DuetTestbed.generate();
        Workload w = WorkloadGenerator.generate(t, new WorkloadGenerator.Params().vipCount(40).intervals(3), 5);
        topo = dir.resolve("topo.json");
        vips = dir.resolve("vips.json");
        traffic = dir.resolve("traffic.json");
        ModelIo.write(topo, t);
        ModelIo.write(vips, w.vips);
        ModelIo.write(traffic, w.trace);
    }

    private static CliRun assign(String... extra) {
        String[] base = {"assign", "--topology", topo.toString(), "--vips", vips.toString(), "--traffic", traffic.toString()};
        String[] args = new String[base.length + extra.length];
        System.arraycopy(base, 0, args, 0, base.length);
        System.arraycopy(extra, 0, args, base.length, extra.length);
        return CliRun.of(args);
    }

    @Test
    void printsASchemaValidAssignmentThatCanBeFedBackAsCurrent() throws IOException {
        CliRun r = assign("--algorithm", "greedy-skip", "--seed", "3");
        assertEquals(0, r.exit, r.err);
        Assignment a = ModelIo.parse(r.out, "stdout", Schema.ASSIGNMENT, Assignment.class);
        assertEquals("greedy-skip", a.algorithm);
        assertEquals(40, a.assignment.size());
        assertTrue(a.hmuxTrafficShare > 0 && a.hmuxTrafficShare <= 1, r.out);
        assertTrue(a.mru <= 1);
        assertTrue(a.provisioning != null && a.provisioning.smuxCount == a.smuxCount);
        assertTrue(r.out.contains("\"utilisation\""));
        // same seed, same output
        assertEquals(r.out, assign("--algorithm", "greedy-skip", "--seed", "3").out);
        Path cur = dir.resolve("current.json");
        Files.writeString(cur, r.out);
        CliRun s = assign("--algorithm", "sticky", "--current", cur.toString(), "--interval", "1");
        assertEquals(0, s.exit, s.err);
        Assignment b = ModelIo.parse(s.out, "stdout", Schema.ASSIGNMENT, Assignment.class);
        assertEquals("sticky", b.algorithm);
    }

    @Test
    void failureScenariosAddLinkUtilisationUnderFailures() {
        CliRun r = assign("--algorithm", "greedy-skip", "--failure-scenarios", "2");
        assertEquals(0, r.exit, r.err);
        Assignment a = ModelIo.parse(r.out, "stdout", Schema.ASSIGNMENT, Assignment.class);
        assertEquals(2 + 2 * 2, a.provisioning.failureScenarios);
        assertTrue(a.provisioning.failureMaxLinkUtilisation >= 0, r.out);
        assertTrue(a.provisioning.baselineMaxLinkUtilisation > 0, r.out);
        assertTrue(a.provisioning.worstLinkFailure.contains("peak on"), a.provisioning.worstLinkFailure);
    }

    @Test
    void badInputExitsTwoNamingFileAndFieldAndPrintsNothing() throws IOException {
        Path badVips = dir.resolve("bad-vips.json");
        Files.writeString(badVips, Files.readString(vips).replaceFirst("\"weight\" : 1", "\"weight\" : -3"));
        CliRun r = CliRun.of("assign", "--topology", topo.toString(), "--vips", badVips.toString(),
                "--traffic", traffic.toString());
        assertEquals(2, r.exit);
        assertEquals("", r.out);
        assertTrue(r.err.contains("bad-vips.json") && r.err.contains("weight"), r.err);
    }

    @Test
    void unknownIntervalAlgorithmOrDeltaIsAUsageError() {
        CliRun i = assign("--interval", "99");
        assertEquals(2, i.exit);
        assertTrue(i.err.contains("--interval") && i.err.contains("traffic.json"), i.err);
        CliRun a = assign("--algorithm", "fastest");
        assertEquals(2, a.exit);
        assertTrue(a.err.contains("greedy-skip"), a.err);
        CliRun d = assign("--delta", "1.5");
        assertEquals(2, d.exit);
        assertTrue(d.err.contains("delta"), d.err);
        assertEquals("", i.out + a.out + d.out);
    }

    @Test
    void unwritableOutIsRefusedBeforeAssigning() throws IOException {
        // --interval 99 fails only once the inputs are read: the --out error must come first
        CliRun r = assign("--out", dir.toString(), "--interval", "99");
        assertEquals(2, r.exit);
        assertEquals("error: --out: " + dir + " is a directory; give a file name", r.err.strip());
        assertEquals("", r.out);
        Path notADir = dir.resolve("plain-file");
        Files.writeString(notADir, "x");
        CliRun f = assign("--out", notADir.resolve("a.json").toString());
        assertEquals(2, f.exit);
        assertEquals("error: --out: cannot write " + notADir.resolve("a.json") + ": " + notADir
                + " is not a directory", f.err.strip());
        CliRun ok = assign("--algorithm", "greedy-skip", "--out", dir.resolve("new/sub/a.json").toString());
        assertEquals(0, ok.exit, ok.err);
        assertTrue(Files.exists(dir.resolve("new/sub/a.json")));
    }

    @Test
    void missingCurrentFileIsNamed() {
        CliRun r = assign("--algorithm", "sticky", "--current", dir.resolve("nope.json").toString());
        assertEquals(2, r.exit);
        assertTrue(r.err.contains("nope.json") && r.err.contains("not found"), r.err);
        assertEquals("", r.out);
    }

    @Test
    void helpExplainsEveryOption() {
        CliRun r = CliRun.of("assign", "--help");
        assertEquals(0, r.exit);
        for (String opt : new String[] {"--topology", "--vips", "--traffic", "--interval", "--algorithm", "--current",
            "--delta", "--seed", "--link-headroom", "--smux-gbps", "--no-pod-shortcut", "--out"}) {
            assertTrue(r.out.contains(opt), opt);
        }
        assertFalse(r.out.isEmpty());
        CliRun b = CliRun.of("bench", "--help");
        assertEquals(0, b.exit);
        assertTrue(b.out.contains("--no-shortcut-runs"), b.out);
    }
}
