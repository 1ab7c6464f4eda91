package org.hybridlb.solver.sim;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * PNG figures of a simulation, analogues of Duet Fig. 3.16 (SMuxes, Duet vs Ananta), Fig. 3.18
 * (Duet vs Random) and Fig. 3.20 (sticky vs non-sticky vs one-time: HMux share, traffic
 * shuffled, SMuxes), and, when algorithms are compared, SMuxes and solve time per interval.
 * Each algorithm keeps one colour in every figure.
 */
public final class SimulationPlots {
    private static final int WIDTH = 1000;
    private static final int HEIGHT = 560;
    private static final String TIME = "Time into the trace (minutes)";

    private SimulationPlots() {
    }

    /** Writes every figure whose algorithms were run into {@code dir}; returns the files written. */
    public static List<Path> write(SimulationReport report, Path dir) {
        System.setProperty("java.awt.headless", "true");
        Map<String, List<IntervalResult>> by = report.byAlgorithm();
        List<Path> files = new ArrayList<>();
        List<String> duets = SimulationReport.duetVariants(by.keySet());
        if (!duets.isEmpty() && by.containsKey("ananta")) {
            List<String> which = new ArrayList<>(duets);
            which.add("ananta");
            files.add(save(timeChart(by, which, r -> r.smuxCountNoMigration,
                    "SMuxes needed, migration aside: Duet vs Ananta (cf. Duet Fig. 3.16)", "SMuxes (log scale)", true, false),
                    dir, "smuxes-duet-vs-ananta"));
        }
        duets.remove("sticky");
        if (!duets.isEmpty() && by.containsKey("random")) {
            List<String> which = new ArrayList<>(duets);
            which.add("random");
            files.add(save(timeChart(by, which, r -> r.smuxCountNoMigration,
                    "SMuxes needed, migration aside: Duet greedy vs Random first fit (cf. Duet Fig. 3.18)", "SMuxes (log scale)", true,
                    false), dir, "smuxes-duet-vs-random"));
        }
        List<String> migration = present(by, List.of("sticky", "non-sticky", "one-time"));
        List<String> everyHmux = new ArrayList<>(by.keySet());
        everyHmux.remove("ananta");
        if (!everyHmux.isEmpty()) {
            List<String> which = migration.isEmpty() ? everyHmux : migration;
            files.add(save(timeChart(by, which, r -> 100 * r.hmuxShare,
                    "Share of VIP traffic on HMuxes (cf. Duet Fig. 3.20a)", "Traffic on HMuxes (%)", false, false),
                    dir, "hmux-share"));
            files.add(save(timeChart(by, which, r -> 100 * r.shuffledShare(),
                    "VIP traffic moved to another mux since the previous interval (cf. Duet Fig. 3.20b)",
                    "Traffic shuffled (% of all VIP traffic)", false, true), dir, "traffic-shuffled"));
        }
        if (!migration.isEmpty()) {
            List<String> which = new ArrayList<>(migration);
            if (by.containsKey("ananta")) {
                which.add("ananta");
            }
            XYChart chart = timeChart(by, which, r -> r.smuxCount,
                    "SMuxes needed with migration (cf. Duet Fig. 3.20c)",
                    "SMuxes = max(unassigned, failure, transient) (log scale)", true, false);
            // The paper's "No-migration" line: the same assignments without the transient term.
            List<IntervalResult> base = by.get(migration.get(0));
            List<Double> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            for (IntervalResult r : base) {
                xs.add(r.startSeconds / 60.0);
                ys.add((double) r.smuxCountNoMigration);
            }
            XYSeries s = chart.addSeries("No-migration (" + label(migration.get(0)) + ")", xs, ys);
            s.setLineColor(Color.BLACK);
            s.setMarkerColor(Color.BLACK);
            s.setMarker(SeriesMarkers.NONE);
            s.setLineStyle(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {2f, 3f}, 0f));
            if (by.containsKey("non-sticky")) {
                // What the planner makes of non-sticky's moves: make-before-break keeps most off the SMuxes.
                List<Double> px = new ArrayList<>();
                List<Double> py = new ArrayList<>();
                for (IntervalResult r : by.get("non-sticky")) {
                    if (r.smuxCountWithPlan >= 0) {
                        px.add(r.startSeconds / 60.0);
                        py.add((double) r.smuxCountWithPlan);
                    }
                }
                if (!px.isEmpty()) {
                    XYSeries p = chart.addSeries("Non-sticky, planned make-before-break", px, py);
                    p.setLineColor(colour("non-sticky"));
                    p.setMarkerColor(colour("non-sticky"));
                    p.setMarker(SeriesMarkers.NONE);
                    p.setLineStyle(new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f,
                            new float[] {6f, 4f}, 0f));
                }
            }
            files.add(save(chart, dir, "smuxes-migration"));
        }
        for (Map.Entry<String, XYChart> c : comparisonCharts(by).entrySet()) {
            files.add(save(c.getValue(), dir, c.getKey()));
        }
        files.add(save(barChart(report), dir, "smuxes-by-algorithm"));
        return files;
    }

    /**
     * With more than one algorithm (e.g. {@code --algorithms greedy,ilp}), each interval side by
     * side: the SMuxes each needs and the time it took to assign, by file name. The solve time
     * goes on a log axis when it spans orders of magnitude (a greedy's milliseconds against an
     * ILP's time limit).
     */
    static Map<String, XYChart> comparisonCharts(Map<String, List<IntervalResult>> by) {
        Map<String, XYChart> charts = new LinkedHashMap<>();
        if (by.size() < 2) {
            return charts;
        }
        List<String> all = new ArrayList<>(by.keySet());
        charts.put("smuxes-per-interval", timeChart(by, all, r -> r.smuxCount, "SMuxes needed per interval, by algorithm",
                "SMuxes = max(unassigned, failure, transient) (log scale)", true, false));
        charts.put("solve-time", timeChart(by, all, r -> r.solveMillis / 1000, "Time to assign each interval, by algorithm",
                "Solve time (s) (log scale)", true, false));
        return charts;
    }

    private static List<String> present(Map<String, List<IntervalResult>> by, List<String> names) {
        List<String> out = new ArrayList<>();
        for (String n : names) {
            if (by.containsKey(n)) {
                out.add(n);
            }
        }
        return out;
    }

    private static XYChart timeChart(Map<String, List<IntervalResult>> by, List<String> algorithms,
                                     ToDoubleFunction<IntervalResult> y, String title, String yTitle, boolean log,
                                     boolean skipFirst) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(TIME)
                .yAxisTitle(yTitle).build();
        style(chart.getStyler());
        // Below the plot, in a row: long titles and wide legends never crowd each other out.
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
        chart.getStyler().setLegendLayout(Styler.LegendLayout.Horizontal);
        chart.getStyler().setMarkerSize(7);
        double min = Double.POSITIVE_INFINITY;
        double max = 0;
        for (String a : algorithms) {
            List<IntervalResult> rows = by.get(a);
            List<Double> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            for (int i = skipFirst ? 1 : 0; i < rows.size(); i++) {
                xs.add(rows.get(i).startSeconds / 60.0);
                double v = y.applyAsDouble(rows.get(i));
                ys.add(v);
                min = Math.min(min, v);
                max = Math.max(max, v);
            }
            if (xs.isEmpty()) {
                continue;
            }
            XYSeries s = chart.addSeries(label(a), xs, ys);
            s.setLineColor(colour(a));
            s.setMarkerColor(colour(a));
            s.setMarker(marker(a));
            s.setLineStyle(stroke(a));
        }
        // A log axis only pays when values span orders of magnitude (xchart labels decades only).
        if (log && min > 0 && max / min >= 20) {
            chart.getStyler().setYAxisLogarithmic(true);
            return chart;
        }
        if (log) {
            chart.setYAxisTitle(yTitle.replace(" (log scale)", ""));
        }
        if (yTitle.contains("%")) {
            // Shares: 0..100, or a band of whole tens around the data when it is all high.
            double lo = Double.isInfinite(min) ? 0 : Math.max(0, Math.floor((min - 2) / 10) * 10);
            chart.getStyler().setYAxisMin(lo);
            chart.getStyler().setYAxisMax(yTitle.startsWith("Traffic on HMuxes") ? 100.0 : Math.max(lo + 5, Math.ceil(max / 5 + 0.2) * 5));
        } else {
            chart.getStyler().setYAxisMin(0.0);
            chart.getStyler().setYAxisMax(Math.max(1, max * 1.08));
        }
        return chart;
    }

    private static CategoryChart barChart(SimulationReport report) {
        CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT)
                .title("SMuxes needed per algorithm, mean over the trace").xAxisTitle("Algorithm")
                .yAxisTitle("SMuxes (mean per interval)").build();
        style(chart.getStyler());
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setLabelsVisible(true);
        chart.getStyler().setLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        chart.getStyler().setLabelsPosition(0.9);
        chart.getStyler().setYAxisDecimalPattern("#,##0.#");
        chart.getStyler().setAvailableSpaceFill(0.8);
        List<String> names = new ArrayList<>();
        List<Double> noMigration = new ArrayList<>();
        List<Double> withMigration = new ArrayList<>();
        report.summaries().values().forEach(s -> {
            names.add(label(s.algorithm));
            noMigration.add(s.meanSmuxNoMigration);
            withMigration.add(s.meanSmux);
        });
        chart.addSeries("max(unassigned, failure)", names, noMigration).setFillColor(new Color(70, 110, 170));
        chart.addSeries("... and every move through the SMuxes", names, withMigration)
                .setFillColor(new Color(230, 150, 60));
        return chart;
    }

    private static void style(org.knowm.xchart.style.AxesChartStyler s) {
        s.setChartBackgroundColor(Color.WHITE);
        s.setPlotBackgroundColor(Color.WHITE);
        s.setPlotBorderVisible(true);
        s.setPlotGridLinesColor(new Color(220, 220, 220));
        s.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        s.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        s.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        s.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        s.setLegendBorderColor(Color.WHITE);
        s.setChartPadding(12);
    }

    /** Names as the paper uses them. */
    static String label(String algorithm) {
        switch (algorithm) {
            case "greedy": return "Duet (greedy)";
            case "greedy-skip": return "Duet (greedy, skip)";
            case "sticky": return "Sticky";
            case "non-sticky": return "Non-sticky";
            case "one-time": return "One-time";
            case "random": return "Random (first fit)";
            case "ananta": return "Ananta (SMux only)";
            default: return algorithm;
        }
    }

    /** Distinct markers and dashes so that series lying on top of each other stay visible. */
    private static org.knowm.xchart.style.markers.Marker marker(String algorithm) {
        switch (algorithm) {
            case "sticky": return SeriesMarkers.DIAMOND;
            case "non-sticky": return SeriesMarkers.SQUARE;
            case "one-time": return SeriesMarkers.TRIANGLE_UP;
            case "random": return SeriesMarkers.TRIANGLE_DOWN;
            case "ananta": return SeriesMarkers.SQUARE;
            default: return SeriesMarkers.CIRCLE;
        }
    }

    private static BasicStroke stroke(String algorithm) {
        switch (algorithm) {
            case "one-time": return new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {8f, 5f}, 0f);
            case "random": return new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {3f, 4f}, 0f);
            case "ananta": return new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {12f, 4f, 3f, 4f}, 0f);
            case "sticky": return new BasicStroke(3f);
            default: return new BasicStroke(2f);
        }
    }

    static Color colour(String algorithm) {
        switch (algorithm) {
            case "greedy": return new Color(31, 119, 180);
            case "greedy-skip": return new Color(23, 190, 207);
            case "sticky": return new Color(44, 160, 44);
            case "non-sticky": return new Color(255, 127, 14);
            case "one-time": return new Color(148, 103, 189);
            case "random": return new Color(214, 39, 40);
            case "ananta": return new Color(90, 90, 90);
            default: return new Color(140, 86, 75);
        }
    }

    private static Path save(org.knowm.xchart.internal.chartpart.Chart<?, ?> chart, Path dir, String name) {
        Path file = dir.resolve(name + ".png");
        try {
            BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }
}
