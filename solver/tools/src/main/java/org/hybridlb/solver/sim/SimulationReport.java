package org.hybridlb.solver.sim;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns simulation rows into what people read: a CSV per interval, a CSV per algorithm, a
 * summary table, and the comparisons the paper makes (§3.8.2, §3.8.4, §3.8.6).
 */
public final class SimulationReport {
    private static final double GBIT = 1e9; // rates are bits/s, as in the assignment instance

    /** Per-algorithm aggregates over the trace. */
    public static final class Summary {
        public final String algorithm;
        public final int intervals;
        public final double meanHmuxShare;
        public final double minHmuxShare;
        public final double maxHmuxShare;
        /** Over intervals after the first (the first has nothing to migrate from). */
        public final double meanShuffledShare;
        public final double maxShuffledShare;
        public final double meanVipsMoved;
        public final double meanSmux;
        public final int maxSmux;
        public final double meanSmuxWithPlan;
        public final double meanSmuxNoMigration;
        public final double meanMru;
        public final double medianSolveMs;
        public final double maxSolveMs;
        public final double meanPlanWaves;
        public final double maxPlanPeakDetourBps;

        Summary(String algorithm, List<IntervalResult> rows) {
            this.algorithm = algorithm;
            this.intervals = rows.size();
            meanHmuxShare = mean(rows, r -> r.hmuxShare, false);
            minHmuxShare = rows.stream().mapToDouble(r -> r.hmuxShare).min().orElse(Double.NaN);
            maxHmuxShare = rows.stream().mapToDouble(r -> r.hmuxShare).max().orElse(Double.NaN);
            meanShuffledShare = mean(rows, IntervalResult::shuffledShare, true);
            maxShuffledShare = rows.stream().skip(1).mapToDouble(IntervalResult::shuffledShare).max().orElse(Double.NaN);
            meanVipsMoved = mean(rows, r -> r.vipsMoved, true);
            meanSmux = mean(rows, r -> r.smuxCount, false);
            maxSmux = rows.stream().mapToInt(r -> r.smuxCount).max().orElse(0);
            meanSmuxNoMigration = mean(rows, r -> r.smuxCountNoMigration < 0 ? Double.NaN : r.smuxCountNoMigration, false);
            meanSmuxWithPlan = mean(rows, r -> r.smuxCountWithPlan < 0 ? Double.NaN : r.smuxCountWithPlan, true);
            meanMru = mean(rows, r -> r.mru, false);
            double[] solve = rows.stream().mapToDouble(r -> r.solveMillis).sorted().toArray();
            medianSolveMs = solve.length == 0 ? Double.NaN
                    : solve.length % 2 == 1 ? solve[solve.length / 2] : (solve[solve.length / 2 - 1] + solve[solve.length / 2]) / 2;
            maxSolveMs = solve.length == 0 ? Double.NaN : solve[solve.length - 1];
            meanPlanWaves = mean(rows, r -> r.planWaves < 0 ? Double.NaN : r.planWaves, true);
            maxPlanPeakDetourBps = rows.stream().mapToDouble(r -> r.planPeakDetourBps).filter(x -> !Double.isNaN(x))
                    .max().orElse(Double.NaN);
        }

        private static double mean(List<IntervalResult> rows, java.util.function.ToDoubleFunction<IntervalResult> f,
                                   boolean skipFirst) {
            return rows.stream().skip(skipFirst ? 1 : 0).mapToDouble(f).filter(x -> !Double.isNaN(x))
                    .average().orElse(Double.NaN);
        }
    }

    private final List<IntervalResult> rows;
    private final Map<String, List<IntervalResult>> byAlgorithm = new LinkedHashMap<>();
    private final Map<String, Summary> summaries = new LinkedHashMap<>();

    public SimulationReport(List<IntervalResult> rows) {
        this.rows = List.copyOf(rows);
        for (IntervalResult r : rows) {
            byAlgorithm.computeIfAbsent(r.algorithm, k -> new ArrayList<>()).add(r);
        }
        byAlgorithm.forEach((a, list) -> summaries.put(a, new Summary(a, list)));
    }

    public Map<String, List<IntervalResult>> byAlgorithm() {
        return byAlgorithm;
    }

    public Map<String, Summary> summaries() {
        return summaries;
    }

    /** intervals.csv: one row per algorithm and interval; traffic in Gbit/s, shares in %. */
    public void writeIntervalsCsv(Path file) {
        StringBuilder sb = new StringBuilder("algorithm,interval,start_min,total_gbps,hmux_share_pct,shuffled_pct,"
                + "shuffled_gbps,vips_moved,smuxes,smuxes_no_migration,smux_unassigned_gbps,smux_failure_gbps,smux_transient_gbps,mru,"
                + "solve_ms,plan_waves,plan_steps,plan_peak_detour_gbps,plan_detoured_vips,smuxes_with_plan,plan_ms\n");
        for (IntervalResult r : rows) {
            sb.append(String.join(",", r.algorithm, Integer.toString(r.interval), num(r.startSeconds / 60.0),
                    num(r.totalBps / GBIT), num(100 * r.hmuxShare), num(100 * r.shuffledShare()),
                    num(r.shuffledBps / GBIT), Integer.toString(r.vipsMoved), Integer.toString(r.smuxCount), Integer.toString(r.smuxCountNoMigration),
                    num(r.unassignedBps / GBIT), num(r.failureBps / GBIT), num(r.transientBps / GBIT), num(r.mru),
                    num(r.solveMillis), Integer.toString(r.planWaves), Integer.toString(r.planSteps),
                    num(r.planPeakDetourBps / GBIT), Integer.toString(r.planDetouredVips),
                    Integer.toString(r.smuxCountWithPlan), num(r.planMillis))).append('\n');
        }
        write(file, sb.toString());
    }

    /** summary.csv: one row per algorithm. */
    public void writeSummaryCsv(Path file) {
        StringBuilder sb = new StringBuilder("algorithm,intervals,mean_hmux_share_pct,min_hmux_share_pct,"
                + "max_hmux_share_pct,mean_shuffled_pct,max_shuffled_pct,mean_vips_moved,mean_smuxes,max_smuxes,mean_smuxes_no_migration,"
                + "mean_smuxes_with_plan,mean_mru,median_solve_ms,max_solve_ms,mean_plan_waves,max_plan_peak_detour_gbps\n");
        for (Summary s : summaries.values()) {
            sb.append(String.join(",", s.algorithm, Integer.toString(s.intervals), num(100 * s.meanHmuxShare),
                    num(100 * s.minHmuxShare), num(100 * s.maxHmuxShare), num(100 * s.meanShuffledShare),
                    num(100 * s.maxShuffledShare), num(s.meanVipsMoved), num(s.meanSmux), Integer.toString(s.maxSmux), num(s.meanSmuxNoMigration),
                    num(s.meanSmuxWithPlan), num(s.meanMru), num(s.medianSolveMs), num(s.maxSolveMs),
                    num(s.meanPlanWaves), num(s.maxPlanPeakDetourBps / GBIT))).append('\n');
        }
        write(file, sb.toString());
    }

    /** The summary table people read on stdout. */
    public String table() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%-12s %8s %8s %9s %8s %8s %8s %8s %8s %7s %9s %7s%n", "algorithm",
                "HMux %", "min %", "shuffle %", "moved", "SMuxes", "max", "no-migr", "w/plan", "MRU", "solve ms", "waves"));
        for (Summary s : summaries.values()) {
            sb.append(String.format(Locale.ROOT, "%-12s %8.2f %8.2f %9.2f %8.1f %8.1f %8d %8.1f %8s %7.3f %9.1f %7s%n",
                    s.algorithm, 100 * s.meanHmuxShare, 100 * s.minHmuxShare, 100 * s.meanShuffledShare,
                    s.meanVipsMoved, s.meanSmux, s.maxSmux, s.meanSmuxNoMigration, Double.isNaN(s.meanSmuxWithPlan) ? "-"
                            : String.format(Locale.ROOT, "%.1f", s.meanSmuxWithPlan),
                    s.meanMru, s.medianSolveMs, Double.isNaN(s.meanPlanWaves) ? "-"
                            : String.format(Locale.ROOT, "%.1f", s.meanPlanWaves)));
        }
        sb.append("SMuxes: max(unassigned, failure, every move via SMux) / capacity (shared provisioning); no-migr: "
                + "without the migration term (as Fig. 3.16/3.18); w/plan: migration term = the plan's peak detour.\n"
                + "Means over intervals; shuffle, moved, w/plan and waves over intervals after the first; "
                + "solve ms is the median.\n");
        return sb.toString();
    }

    /** The paper's comparisons for the algorithms that were run, one line each. */
    public List<String> comparisons() {
        List<String> out = new ArrayList<>();
        List<String> duets = duetVariants(summaries.keySet());
        for (String duet : duets) {
            if (summaries.containsKey("ananta")) {
                double[] r = ratios("ananta", duet, true);
                out.add(String.format(Locale.ROOT, "Ananta / Duet (%s) SMuxes without migration: %.1fx to %.1fx, mean %.1fx "
                        + "(paper Fig. 3.16: 12-24x at 3.6 Gbps, 8-12x at 10 Gbps)", duet, r[0], r[1], r[2]));
            }
        }
        for (String duet : duets) {
            if (summaries.containsKey("random") && !duet.equals("sticky")) {
                double[] r = ratios("random", duet, true);
                out.add(String.format(Locale.ROOT, "Random needs %+.0f%% to %+.0f%% SMuxes vs %s without migration, "
                        + "mean %+.0f%% (paper Fig. 3.18: +120%% to +307%%)", 100 * (r[0] - 1), 100 * (r[1] - 1), duet,
                        100 * (r[2] - 1)));
            }
        }
        if (summaries.containsKey("sticky") && summaries.containsKey("non-sticky")) {
            Summary s = summaries.get("sticky");
            Summary n = summaries.get("non-sticky");
            out.add(String.format(Locale.ROOT, "HMux share: sticky %.2f%%, non-sticky %.2f%%: %.2f points apart "
                    + "(paper Fig. 3.20a: 95.1%% vs 95.67%%; goal within 1 point)",
                    100 * s.meanHmuxShare, 100 * n.meanHmuxShare, 100 * (n.meanHmuxShare - s.meanHmuxShare)));
            out.add(String.format(Locale.ROOT, "Traffic shuffled: sticky %.2f%%, non-sticky %.2f%%: sticky shuffles "
                    + "%.3f of non-sticky's (paper Fig. 3.20b: 3.5%% vs 37.4%%; goal at most 1/5)",
                    100 * s.meanShuffledShare, 100 * n.meanShuffledShare, s.meanShuffledShare / n.meanShuffledShare));
        }
        if (summaries.containsKey("one-time")) {
            Summary o = summaries.get("one-time");
            out.add(String.format(Locale.ROOT, "One-time HMux share: %.2f%% mean, %.2f%% at worst "
                    + "(paper Fig. 3.20a: 75.2%% mean, 60-89%%)", 100 * o.meanHmuxShare, 100 * o.minHmuxShare));
        }
        return out;
    }

    /** The Duet greedy variants that were run (greedy, greedy-skip), else sticky. */
    static List<String> duetVariants(java.util.Collection<String> algorithms) {
        List<String> out = new ArrayList<>();
        for (String a : List.of("greedy", "greedy-skip")) {
            if (algorithms.contains(a)) {
                out.add(a);
            }
        }
        if (out.isEmpty() && algorithms.contains("sticky")) {
            out.add("sticky");
        }
        return out;
    }

    /** {min, max, mean} of per-interval SMux ratios a/b over intervals where b needs any. */
    private double[] ratios(String a, String b, boolean noMigration) {
        List<IntervalResult> ra = byAlgorithm.get(a);
        List<IntervalResult> rb = byAlgorithm.get(b);
        double[] r = new double[Math.min(ra.size(), rb.size())];
        int n = 0;
        for (int i = 0; i < r.length; i++) {
            int x = noMigration ? ra.get(i).smuxCountNoMigration : ra.get(i).smuxCount;
            int y = noMigration ? rb.get(i).smuxCountNoMigration : rb.get(i).smuxCount;
            if (y > 0) {
                r[n++] = (double) x / y;
            }
        }
        double[] x = Arrays.copyOf(r, n);
        if (n == 0) {
            return new double[] {Double.NaN, Double.NaN, Double.NaN};
        }
        return new double[] {Arrays.stream(x).min().getAsDouble(), Arrays.stream(x).max().getAsDouble(),
            Arrays.stream(x).average().getAsDouble()};
    }

    /** Rows back from an intervals.csv this class wrote (to redraw figures without re-running). */
    public static List<IntervalResult> readIntervalsCsv(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (lines.isEmpty()) {
            throw new IllegalArgumentException(file + ": empty");
        }
        List<String> head = Arrays.asList(lines.get(0).split(",", -1));
        List<IntervalResult> rows = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            String[] f = lines.get(i).split(",", -1);
            if (f.length != head.size()) {
                throw new IllegalArgumentException(file + ": line " + (i + 1) + " has " + f.length + " fields, the header "
                        + head.size());
            }
            java.util.function.Function<String, Double> d = c -> {
                String x = f[head.indexOf(c)];
                return x.isEmpty() ? Double.NaN : Double.parseDouble(x);
            };
            java.util.function.Function<String, Integer> n = c -> (int) Math.round(d.apply(c));
            double total = d.apply("total_gbps") * GBIT;
            rows.add(new IntervalResult(f[0], n.apply("interval"), Math.round(d.apply("start_min") * 60), total,
                    d.apply("hmux_share_pct") / 100, d.apply("shuffled_gbps") * GBIT, n.apply("vips_moved"),
                    n.apply("smuxes"), n.apply("smuxes_no_migration"), d.apply("smux_unassigned_gbps") * GBIT,
                    d.apply("smux_failure_gbps") * GBIT, d.apply("smux_transient_gbps") * GBIT, d.apply("mru"),
                    d.apply("solve_ms"), n.apply("plan_waves"), n.apply("plan_steps"),
                    d.apply("plan_peak_detour_gbps") * GBIT, n.apply("plan_detoured_vips"), n.apply("smuxes_with_plan"),
                    d.apply("plan_ms")));
        }
        return rows;
    }

    private static String num(double x) {
        if (Double.isNaN(x)) {
            return "";
        }
        return String.format(Locale.ROOT, "%.6g", x);
    }

    private static void write(Path file, String text) {
        try {
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
