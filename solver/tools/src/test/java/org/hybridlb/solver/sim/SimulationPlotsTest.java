package org.hybridlb.solver.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;

/** The per-interval comparison figures, checked on the data they are drawn from. */
class SimulationPlotsTest {
    /** One row per interval (10 minutes apart) with the given SMuxes and solve times. */
    static List<IntervalResult> rows(String algorithm, int[] smuxes, double[] solveMillis) {
        List<IntervalResult> out = new ArrayList<>();
        for (int i = 0; i < smuxes.length; i++) {
            out.add(new IntervalResult(algorithm, i, 600L * i, 1e12, 0.5, 0, 0, smuxes[i], smuxes[i], 0, 0, 0, 0.5,
                    solveMillis[i], -1, -1, Double.NaN, -1, -1, Double.NaN));
        }
        return out;
    }

    static final List<IntervalResult> GREEDY = rows("greedy", new int[] {12, 14, 13}, new double[] {3.5, 4.0, 2.5});
    static final List<IntervalResult> ILP = rows("ilp", new int[] {10, 11, 9}, new double[] {60_000, 58_000, 61_000});

    static SimulationReport report(List<IntervalResult> a, List<IntervalResult> b) {
        List<IntervalResult> all = new ArrayList<>(a);
        all.addAll(b);
        return new SimulationReport(all);
    }

    @Test
    void comparedAlgorithmsGetSmuxesAndSolveTimePerInterval() {
        Map<String, XYChart> charts = SimulationPlots.comparisonCharts(report(GREEDY, ILP).byAlgorithm());
        assertEquals(List.of("smuxes-per-interval", "solve-time"), List.copyOf(charts.keySet()));
        XYChart smuxes = charts.get("smuxes-per-interval");
        XYChart time = charts.get("solve-time");
        assertEquals(List.of("Duet (greedy)", "ilp"), List.copyOf(smuxes.getSeriesMap().keySet()));
        assertEquals(List.of("Duet (greedy)", "ilp"), List.copyOf(time.getSeriesMap().keySet()));
        XYSeries ilpSmuxes = smuxes.getSeriesMap().get("ilp");
        assertArrayEquals(new double[] {0, 10, 20}, ilpSmuxes.getXData(), 1e-12); // minutes into the trace
        assertArrayEquals(new double[] {10, 11, 9}, ilpSmuxes.getYData(), 1e-12);
        assertArrayEquals(new double[] {12, 14, 13}, smuxes.getSeriesMap().get("Duet (greedy)").getYData(), 1e-12);
        assertArrayEquals(new double[] {60, 58, 61}, time.getSeriesMap().get("ilp").getYData(), 1e-12); // seconds
        assertArrayEquals(new double[] {0.0035, 0.004, 0.0025}, time.getSeriesMap().get("Duet (greedy)").getYData(),
                1e-12);
        // milliseconds against a minute: a log axis; 9-14 SMuxes: a linear one
        assertTrue(time.getStyler().isYAxisLogarithmic());
        assertFalse(smuxes.getStyler().isYAxisLogarithmic());
    }

    @Test
    void solveTimesOfOneMagnitudeStayOnALinearAxis() {
        List<IntervalResult> slowGreedy = rows("greedy", new int[] {12, 14, 13}, new double[] {30_000, 40_000, 35_000});
        XYChart time = SimulationPlots.comparisonCharts(report(slowGreedy, ILP).byAlgorithm()).get("solve-time");
        assertFalse(time.getStyler().isYAxisLogarithmic());
        assertEquals("Solve time (s)", time.getYAxisTitle());
    }

    @Test
    void writtenOnlyWhenAlgorithmsAreCompared(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("two"));
        List<Path> two = SimulationPlots.write(report(GREEDY, ILP), dir.resolve("two"));
        for (String name : List.of("smuxes-per-interval.png", "solve-time.png")) {
            Path f = dir.resolve("two").resolve(name);
            assertTrue(two.contains(f), two.toString());
            assertTrue(Files.size(f) > 1000, name);
        }
        Files.createDirectories(dir.resolve("one"));
        List<Path> one = SimulationPlots.write(new SimulationReport(GREEDY), dir.resolve("one"));
        assertTrue(one.stream().noneMatch(p -> p.getFileName().toString().equals("solve-time.png")), one.toString());
        assertTrue(one.stream().noneMatch(p -> p.getFileName().toString().equals("smuxes-per-interval.png")));
        assertTrue(SimulationPlots.comparisonCharts(Map.of("greedy", GREEDY)).isEmpty());
    }
}
