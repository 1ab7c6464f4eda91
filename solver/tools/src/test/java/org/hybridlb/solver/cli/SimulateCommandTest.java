package org.hybridlb.solver.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.topology.DuetClos;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class SimulateCommandTest {
    @TempDir
    Path dir;

    private String out;
    private String err;

    private int run(String... args) {
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        CommandLine cl = SolverCli.commandLine();
        cl.setOut(new PrintWriter(o));
        cl.setErr(new PrintWriter(e));
        int rc = cl.execute(args);
        out = o.toString();
        err = e.toString();
        return rc;
    }

    private Path topology() {
        Path t = dir.resolve("topo.json");
        ModelIo.write(t, DuetClos.generate(DuetClos.Params.small(4, 4, 2, 4)));
        return t;
    }

    @Test
    void generatedWorkloadGivesCsvFiguresAndASummary() throws Exception {
        Path outDir = dir.resolve("sim");
        int rc = run("simulate", "--topology", topology().toString(), "--vips-count", "200", "--intervals", "3",
                "--algorithms", "greedy-skip,random,sticky,non-sticky,ananta", "--out", outDir.toString(), "--no-progress");
        assertEquals(0, rc, err);
        assertTrue(Files.size(outDir.resolve("intervals.csv")) > 0);
        assertEquals(1 + 5, Files.readAllLines(outDir.resolve("summary.csv")).size());
        for (String png : new String[] {"smuxes-duet-vs-ananta.png", "smuxes-duet-vs-random.png", "hmux-share.png",
            "traffic-shuffled.png", "smuxes-migration.png", "smuxes-by-algorithm.png"}) {
            assertTrue(Files.size(outDir.resolve(png)) > 1000, png);
        }
        assertTrue(out.contains("non-sticky") && out.contains("Ananta / Duet (greedy-skip)"), out);

        // The figures can be redrawn from intervals.csv alone, with the same SMux means.
        Path again = dir.resolve("again");
        rc = run("simulate", "--replot", outDir.toString(), "--out", again.toString());
        assertEquals(0, rc, err);
        assertTrue(Files.size(again.resolve("smuxes-migration.png")) > 1000);
        java.util.List<String> before = Files.readAllLines(outDir.resolve("summary.csv"));
        java.util.List<String> after = Files.readAllLines(again.resolve("summary.csv"));
        assertEquals(before.size(), after.size());
        int col = java.util.Arrays.asList(before.get(0).split(",")).indexOf("mean_smuxes");
        for (int i = 1; i < before.size(); i++) {
            assertEquals(before.get(i).split(",")[0], after.get(i).split(",")[0]);
            assertEquals(before.get(i).split(",")[col], after.get(i).split(",")[col]);
        }
    }

    @Test
    void greedyAgainstIlpGetsThePerIntervalComparisonFigures() throws Exception {
        // small tables, so that the ILP has something to solve
        Path t = dir.resolve("small-tables.json");
        ModelIo.write(t, DuetClos.generate(DuetClos.Params.small(2, 4, 2, 2).tables(new TableCapacity(16384, 64, 8))));
        Path outDir = dir.resolve("cmp");
        int rc = run("simulate", "--topology", t.toString(), "--vips-count", "100", "--intervals", "2",
                "--algorithms", "greedy-skip,ilp", "--time-limit", "3", "--no-plan", "--out", outDir.toString(),
                "--no-progress");
        assertEquals(0, rc, err);
        for (String png : new String[] {"smuxes-per-interval.png", "solve-time.png", "hmux-share.png"}) {
            assertTrue(Files.size(outDir.resolve(png)) > 1000, png);
            assertTrue(out.contains(outDir.resolve(png).toString()), out);
        }
        java.util.List<String> csv = Files.readAllLines(outDir.resolve("intervals.csv"));
        assertEquals(2, csv.stream().filter(l -> l.startsWith("ilp,")).count(), csv.toString());
    }

    @Test
    void unknownAlgorithmExitsTwoAndWritesNothing() {
        Path outDir = dir.resolve("none");
        int rc = run("simulate", "--topology", topology().toString(), "--vips-count", "50", "--intervals", "2",
                "--algorithms", "greedy,magic", "--out", outDir.toString());
        assertEquals(2, rc);
        assertTrue(err.contains("magic") && err.contains("sticky"), err);
        assertEquals("", out);
        assertFalse(Files.exists(outDir));
    }

    @Test
    void vipsWithoutTrafficExitsTwo() throws Exception {
        Path vips = dir.resolve("v.json");
        Files.writeString(vips, "{\"vips\": []}");
        int rc = run("simulate", "--topology", topology().toString(), "--vips", vips.toString(), "--out",
                dir.resolve("x").toString());
        assertEquals(2, rc);
        assertTrue(err.contains("--traffic"), err);
    }
}
