package org.hybridlb.solver.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.hybridlb.solver.assign.SolverOptions;
import org.hybridlb.solver.migration.PlannerOptions;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.topology.DuetClos;
import org.hybridlb.solver.workload.Progress;
import org.hybridlb.solver.workload.Workload;
import org.hybridlb.solver.workload.WorkloadGenerator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TraceSimulatorTest {
    private static Topology topology;
    private static Workload workload;
    private static List<IntervalResult> rows;

    @BeforeAll
    static void simulate() {
        topology = DuetClos.generate(DuetClos.Params.small(4, 4, 2, 4));
        workload = WorkloadGenerator.generate(topology, new WorkloadGenerator.Params().vipCount(300).intervals(4), 7);
        TraceSimulator.Options o = new TraceSimulator.Options(List.of("greedy", "sticky", "non-sticky", "one-time", "ananta"),
                SolverOptions.defaults(), true, PlannerOptions.defaults());
        rows = TraceSimulator.run(topology, workload.vips, workload.trace, o, Progress.NONE);
    }

    @Test
    void everyAlgorithmReportsEveryInterval() {
        assertEquals(5 * 4, rows.size());
        Map<String, List<IntervalResult>> by = new SimulationReport(rows).byAlgorithm();
        assertEquals(List.of("greedy", "sticky", "non-sticky", "one-time", "ananta"), List.copyOf(by.keySet()));
        for (List<IntervalResult> list : by.values()) {
            for (int i = 0; i < list.size(); i++) {
                assertEquals(i, list.get(i).interval);
            }
        }
    }

    @Test
    void anantaServesEverythingOnSmuxesAndNeedsTheMost() {
        Map<String, List<IntervalResult>> by = new SimulationReport(rows).byAlgorithm();
        for (int i = 0; i < 4; i++) {
            IntervalResult ananta = by.get("ananta").get(i);
            IntervalResult greedy = by.get("greedy").get(i);
            assertEquals(0, ananta.hmuxShare);
            assertEquals(ananta.totalBps, ananta.unassignedBps, 1e-6 * ananta.totalBps);
            assertTrue(greedy.hmuxShare > 0.5, "greedy share " + greedy.hmuxShare);
            assertTrue(ananta.smuxCountNoMigration >= greedy.smuxCountNoMigration);
        }
    }

    @Test
    void firstIntervalShufflesNothingAndLaterOnesArePlanned() {
        for (IntervalResult r : rows) {
            if (r.interval == 0) {
                assertEquals(0, r.shuffledBps);
                assertEquals(-1, r.planWaves);
            } else {
                assertTrue(r.planWaves >= 0, r.algorithm);
                assertTrue(r.shuffledBps <= r.totalBps + 1e-6);
                // a plan moves at least the VIPs whose placement changed
                assertTrue(r.vipsMoved == 0 || r.planSteps >= r.vipsMoved, r.algorithm + " interval " + r.interval);
            }
        }
    }

    @Test
    void oneTimeNeverMovesAVipBetweenHmuxes() {
        for (IntervalResult r : new SimulationReport(rows).byAlgorithm().get("one-time")) {
            assertEquals(r.interval == 0 ? -1 : 0, r.planDetouredVips);
        }
    }

    @Test
    void writesCsvAndReadablePngs(@TempDir Path dir) throws Exception {
        SimulationReport report = new SimulationReport(rows);
        report.writeIntervalsCsv(dir.resolve("intervals.csv"));
        report.writeSummaryCsv(dir.resolve("summary.csv"));
        List<String> csv = Files.readAllLines(dir.resolve("intervals.csv"));
        assertEquals(1 + rows.size(), csv.size());
        assertTrue(csv.get(0).startsWith("algorithm,interval,start_min,total_gbps,hmux_share_pct"));
        List<Path> pngs = SimulationPlots.write(report, dir);
        assertTrue(pngs.stream().anyMatch(p -> p.getFileName().toString().equals("smuxes-duet-vs-ananta.png")));
        assertTrue(pngs.stream().anyMatch(p -> p.getFileName().toString().equals("traffic-shuffled.png")));
        for (Path p : pngs) {
            BufferedImage img = ImageIO.read(p.toFile());
            assertTrue(img.getWidth() >= 800 && img.getHeight() >= 400, p.toString());
        }
        assertTrue(report.table().contains("sticky"));
        assertTrue(report.comparisons().stream().anyMatch(l -> l.startsWith("Traffic shuffled")));
    }
}
