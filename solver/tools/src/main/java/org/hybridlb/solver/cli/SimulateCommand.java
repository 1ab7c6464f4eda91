package org.hybridlb.solver.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.hybridlb.solver.assign.SolverOptions;
import org.hybridlb.solver.io.InvalidInputException;
import org.hybridlb.solver.io.ModelChecks;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.migration.PlannerOptions;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficTrace;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.sim.IntervalResult;
import org.hybridlb.solver.sim.SimulationPlots;
import org.hybridlb.solver.sim.SimulationReport;
import org.hybridlb.solver.sim.TraceSimulator;
import org.hybridlb.solver.workload.Workload;
import org.hybridlb.solver.workload.WorkloadGenerator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code simulate}: replay a traffic trace with each algorithm (Duet §3.8). */
@Command(name = "simulate",
        header = "Replay a trace with each algorithm; CSV, PNG plots, paper comparison.", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Replay a traffic trace interval by interval with each assignment algorithm, as Duet §3.8 does: each "
                + "algorithm re-assigns every interval from its own previous assignment, and the migration between "
                + "consecutive assignments is planned.",
            "Reports per interval the share of traffic on HMuxes, the traffic shuffled (moved to another mux) and "
                + "VIPs moved, the SMuxes needed (§3.8.2 provisioning), the MRU, the solve time and the migration "
                + "plan: as CSV and PNG figures in --out (analogues of Fig. 3.16, 3.18, 3.20), and a summary table "
                + "with the paper's comparisons on stdout.",
            "Give --vips and --traffic, or neither to generate a workload (--seed, --vips-count, --intervals, --load).",
            ""})
public final class SimulateCommand implements Callable<Integer> {
    static final String DEFAULT_ALGORITHMS = "greedy,random,sticky,non-sticky,one-time,ananta";

    @Spec
    CommandSpec spec;

    @Option(names = "--topology", paramLabel = "FILE", description = "Topology JSON (required unless --replot).")
    Path topologyFile;

    @Option(names = "--vips", paramLabel = "FILE", description = "VIP configuration JSON (with --traffic).")
    Path vipsFile;

    @Option(names = "--traffic", paramLabel = "FILE", description = "Traffic trace JSON (with --vips).")
    Path trafficFile;

    @Option(names = "--seed", defaultValue = "1", paramLabel = "N",
            description = "Seed of the generated workload and of the algorithms' tie-breaking (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--vips-count", defaultValue = "30000", paramLabel = "N",
            description = "VIPs of a generated workload (default ${DEFAULT-VALUE}, the paper's trace).")
    int vipsCount;

    @Option(names = "--intervals", defaultValue = "18", paramLabel = "N",
            description = "Intervals of a generated workload (default ${DEFAULT-VALUE}: 3 hours of 10 minutes).")
    int intervals;

    @Option(names = "--load", defaultValue = "0.1", paramLabel = "F",
            description = "Traffic of a generated workload as a fraction of the ToR uplink capacity (default ${DEFAULT-VALUE}).")
    double load;

    @Option(names = "--algorithms", defaultValue = DEFAULT_ALGORITHMS, split = ",", paramLabel = "ALG",
            description = "Algorithms to compare (default ${DEFAULT-VALUE}); known: greedy, greedy-skip, random, "
                    + "sticky, non-sticky, one-time, ananta, and any registered later (ilp).")
    List<String> algorithms;

    @Option(names = "--smux-gbps", defaultValue = "3.6", paramLabel = "GBPS",
            description = "Capacity of one SMux in Gbit/s (default ${DEFAULT-VALUE}, Duet §3.2; the paper also uses 10).")
    double smuxGbps;

    @Option(names = "--delta", defaultValue = "0.05", paramLabel = "D",
            description = "Sticky threshold: move a VIP only if the MRU drops by more than this (default ${DEFAULT-VALUE}).")
    double delta;

    @Option(names = "--skip-unfit", negatable = false,
            description = "sticky, non-sticky and one-time skip a VIP that fits on no switch and go on, instead of "
                    + "stopping at it as the paper's greedy does (greedy always stops, greedy-skip always skips).")
    boolean skipUnfit;

    @Option(names = "--no-plan", negatable = false,
            description = "Do not plan the migrations between intervals (faster; the plan columns stay empty).")
    boolean noPlan;

    @Option(names = "--max-transient-smux-gbps", paramLabel = "GBPS",
            description = "Bound on traffic detoured through the SMuxes during any migration wave (default: none).")
    Double maxTransientGbps;

    @Option(names = "--out", defaultValue = "simulate-out", paramLabel = "DIR",
            description = "Directory for intervals.csv, summary.csv and the PNG figures (default ${DEFAULT-VALUE}).")
    Path outDir;

    @Option(names = "--replot", paramLabel = "DIR",
            description = "Redraw the figures, summary.csv and the table from DIR/intervals.csv of an earlier run "
                    + "into --out (default: DIR itself), without simulating.")
    Path replot;

    @Option(names = "--progress", negatable = true,
            description = "Draw a progress bar on stderr (default: only on a terminal).")
    Boolean progress;

    @picocli.CommandLine.Mixin
    IlpCliOptions ilp; // options of the 'ilp' algorithm (ilp helper)

    @Override
    public Integer call() {
        ilp.requireIlpSelected(spec.commandLine().getParseResult(), algorithms, "--algorithms");
        ilp.options(); // bad ilp options fail before any work
        PrintWriter err = spec.commandLine().getErr();
        PrintWriter out = spec.commandLine().getOut();
        if (replot != null) {
            return replot(out);
        }
        if (topologyFile == null) {
            throw new IllegalArgumentException("--topology: required (a topology JSON), unless --replot is given");
        }
        if ((vipsFile == null) != (trafficFile == null)) {
            throw new IllegalArgumentException((vipsFile == null ? "--vips" : "--traffic")
                    + ": give both --vips and --traffic, or neither to generate a workload");
        }
        if (!(smuxGbps > 0)) {
            throw new IllegalArgumentException("--smux-gbps: must be > 0, got " + smuxGbps);
        }
        if (maxTransientGbps != null && !(maxTransientGbps > 0)) {
            throw new IllegalArgumentException("--max-transient-smux-gbps: must be > 0, got " + maxTransientGbps);
        }
        if (Files.exists(outDir) && !Files.isDirectory(outDir)) {
            throw new IllegalArgumentException("--out: " + outDir + " exists and is not a directory");
        }
        SolverOptions solver;
        try {
            solver = SolverOptions.defaults().withSeed(seed).withStickyDelta(delta).withSmuxCapacityBps(smuxGbps * 1e9)
                    .withStopAtFirstUnfit(!skipUnfit);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--delta: " + e.getMessage());
        }
        TraceSimulator.Options options = new TraceSimulator.Options(algorithms, ilp::algorithm, solver, !noPlan,
                new PlannerOptions(true, maxTransientGbps == null ? PlannerOptions.UNBOUNDED : maxTransientGbps * 1e9));

        ProgressBar bar = new ProgressBar(err, ProgressBar.wanted(progress));
        Topology topology = ModelIo.readTopology(topologyFile);
        VipSet vips;
        TrafficTrace trace;
        if (vipsFile != null) {
            vips = ModelIo.readVips(vipsFile);
            ModelChecks.checkVipsAgainstTopology(vips, topology, vipsFile.toString());
            trace = ModelIo.readTraffic(trafficFile, vips, topology);
        } else {
            WorkloadGenerator.Params p = new WorkloadGenerator.Params().vipCount(vipsCount).intervals(intervals)
                    .loadFraction(load);
            try {
                p.validate();
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(WorkloadCommand.optionName(e.getMessage()), e);
            }
            Workload w = WorkloadGenerator.generate(topology, p, seed, bar::update);
            vips = w.vips;
            trace = w.trace;
        }
        if (trace.intervals.isEmpty()) {
            if (trafficFile == null) {
                throw new IllegalArgumentException("--intervals: the generated trace has no interval");
            }
            throw new InvalidInputException(trafficFile.toString(), "/intervals", "the trace has no interval");
        }

        long start = System.nanoTime();
        final List<IntervalResult> rows = TraceSimulator.run(topology, vips, trace, options, bar::update);
        double seconds = (System.nanoTime() - start) / 1e9;
        SimulationReport report = new SimulationReport(rows);
        createOut(outDir);
        report.writeIntervalsCsv(outDir.resolve("intervals.csv"));
        out.printf(Locale.ROOT, "%d intervals x %d algorithms on %s (%d switches, %d VIPs), SMux %.1f Gbit/s, %s, in %.1f s%n",
                trace.intervals.size(), algorithms.size(), topology.name, topology.switches.size(), vips.vips.size(),
                smuxGbps, skipUnfit ? "unfit VIPs skipped" : "stop at the first unfit VIP (paper)", seconds);
        return report(report, outDir, out);
    }

    private static void createOut(Path dir) {
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new IllegalArgumentException("--out: " + dir + " exists and is not a directory");
        }
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IllegalArgumentException("--out: cannot create " + dir + ": " + e.getMessage());
        }
    }

    private int replot(PrintWriter out) {
        Path csv = replot.resolve("intervals.csv");
        if (!Files.isRegularFile(csv)) {
            throw new IllegalArgumentException("--replot: " + csv + " not found");
        }
        List<IntervalResult> rows;
        try {
            rows = SimulationReport.readIntervalsCsv(csv);
        } catch (RuntimeException e) {
            throw new InvalidInputException(csv.toString(), "", "not an intervals.csv of simulate: " + e.getMessage());
        }
        Path dir = spec.commandLine().getParseResult().hasMatchedOption("--out") ? outDir : replot;
        createOut(dir);
        SimulationReport report = new SimulationReport(rows);
        if (!dir.toAbsolutePath().normalize().equals(replot.toAbsolutePath().normalize())) {
            report.writeIntervalsCsv(dir.resolve("intervals.csv"));
        }
        out.println("redrawn from " + csv);
        return report(report, dir, out);
    }

    private static int report(SimulationReport report, Path dir, PrintWriter out) {
        report.writeSummaryCsv(dir.resolve("summary.csv"));
        List<Path> figures = SimulationPlots.write(report, dir);
        out.print(report.table());
        for (String line : report.comparisons()) {
            out.println(line);
        }
        out.println("-> " + dir.resolve("intervals.csv") + ", " + dir.resolve("summary.csv"));
        for (Path f : figures) {
            out.println("-> " + f);
        }
        out.flush();
        return SolverCli.EXIT_OK;
    }
}
