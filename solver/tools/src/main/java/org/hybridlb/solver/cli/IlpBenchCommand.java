package org.hybridlb.solver.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.solver.assign.AssignmentAlgorithm;
import org.hybridlb.solver.assign.Feasibility;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.SolverOptions;
import org.hybridlb.solver.ilp.DuetIlp;
import org.hybridlb.solver.ilp.IlpAlgorithm;
import org.hybridlb.solver.ilp.MipResult;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.TrafficTrace;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.topology.DuetClos;
import org.hybridlb.solver.workload.Workload;
import org.hybridlb.solver.workload.WorkloadGenerator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ilp-bench}: how far the greedy is from optimal. Solves one interval with each algorithm
 * and prints HMux share, the ILP's proven bound and gap, each algorithm's distance to the bound,
 * SMuxes needed and solve time (figures in solver/ILP.md).
 */
@Command(name = "ilp-bench",
        header = "Compare algorithms with the exact ILP on one interval.",
        mixinStandardHelpOptions = true,
        description = {
            "Compare assignment algorithms with the exact ILP on one traffic interval: HMux traffic share,",
            "the ILP's proven upper bound and gap, each algorithm's distance to that bound (points of share),",
            "SMuxes needed and solve time. Instances: generated (--scale) or files (--topology/--vips/--traffic)."})
public final class IlpBenchCommand implements Callable<Integer> {
    @Option(names = "--scale", paramLabel = "small|medium|paper", defaultValue = "medium",
            description = "Generated Duet Clos + workload: small = 2 pods x (4 ToRs + 2 Aggs), 2 cores, 300 VIPs; "
                    + "medium = 8 pods x (8 ToRs + 4 Aggs), 8 cores, 3,000 VIPs; paper = 40 pods x (40 ToRs + "
                    + "4 Aggs), 40 cores, 30,000 VIPs (default ${DEFAULT-VALUE}).")
    String scale;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "1",
            description = "Workload seed of the generated instance (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--load", paramLabel = "F",
            description = "Total VIP traffic as a fraction of the ToR uplink capacity (generator default 0.1).")
    Double load;

    @Option(names = "--vips-count", paramLabel = "N", description = "Override the scale's VIP count.")
    Integer vipsCount;

    @Option(names = "--tunnel-table", paramLabel = "N",
            description = "Free tunnel entries per switch of the generated fabric (Duet default 512).")
    Integer tunnelTable;

    @Option(names = "--ecmp-table", paramLabel = "N",
            description = "Free ECMP entries per switch of the generated fabric (Duet default 4096).")
    Integer ecmpTable;

    @Option(names = "--host-table", paramLabel = "N",
            description = "Free host-table entries per switch of the generated fabric (Duet default 16384).")
    Integer hostTable;

    @Option(names = "--topology", paramLabel = "FILE", description = "Topology JSON (instead of --scale).")
    Path topologyFile;

    @Option(names = "--vips", paramLabel = "FILE", description = "VIP configuration JSON (with --topology).")
    Path vipsFile;

    @Option(names = "--traffic", paramLabel = "FILE", description = "Traffic trace JSON (with --topology).")
    Path trafficFile;

    @Option(names = "--interval", paramLabel = "I", defaultValue = "0",
            description = "Which interval of the trace to solve (its \"index\" field; default ${DEFAULT-VALUE}).")
    int interval;

    @Option(names = "--algorithms", split = ",", defaultValue = "greedy,greedy-skip,random,ilp",
            description = "Algorithms to compare, comma-separated (default ${DEFAULT-VALUE}).")
    List<String> algorithms;

    @Option(names = "--minimise-mru", description = "ILP second stage: same HMux traffic, lowest MRU.")
    boolean minimiseMru;

    @Mixin
    MipCliOptions mip;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** Options that only shape the generated instance. */
    private static final List<String> GENERATOR_OPTIONS = List.of("--scale", "--seed", "--load", "--vips-count",
            "--tunnel-table", "--ecmp-table", "--host-table");

    /** A table size given (or null: the scale's default), checked. */
    private static Integer nonNegative(Integer value, String option) {
        if (value != null) {
            TopologyCommand.requireNonNegative(value, option);
        }
        return value;
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        for (String a : algorithms) {
            try {
                Algorithms.get(a); // unknown names fail before any work
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--algorithms: " + e.getMessage(), e);
            }
        }
        if (interval < 0 || topologyFile == null && interval >= WorkloadGenerator.MAX_INTERVALS) {
            throw new IllegalArgumentException("--interval: must be 0 or more"
                    + (topologyFile == null ? " and below " + WorkloadGenerator.MAX_INTERVALS : "") + ", got " + interval);
        }
        if (topologyFile != null) {
            // the generator's options would be silently ignored: say so instead
            for (String o : GENERATOR_OPTIONS) {
                if (spec.commandLine().getParseResult().hasMatchedOption(o)) {
                    throw new IllegalArgumentException(o + ": generates an instance; it cannot be combined with "
                            + "--topology/--vips/--traffic");
                }
            }
        } else if (vipsFile != null || trafficFile != null) {
            throw new IllegalArgumentException((vipsFile != null ? "--vips" : "--traffic") + ": needs --topology");
        }
        DuetIlp.Options ilpOptions = new DuetIlp.Options(mip.toOptions(), minimiseMru, null);
        long g0 = System.nanoTime();
        Topology topo;
        VipSet vips;
        TrafficTrace trace;
        String label;
        if (topologyFile != null) {
            if (vipsFile == null || trafficFile == null) {
                throw new IllegalArgumentException("--topology needs --vips and --traffic");
            }
            topo = ModelIo.readTopology(topologyFile);
            vips = ModelIo.readVips(vipsFile);
            trace = ModelIo.readTraffic(trafficFile, vips, topo);
            label = topologyFile.getFileName().toString();
        } else {
            DuetClos.Params tp;
            int nv;
            switch (scale.toLowerCase(Locale.ROOT)) {
                case "small":
                    tp = DuetClos.Params.small(2, 4, 2, 2);
                    nv = 300;
                    break;
                case "medium":
                    tp = DuetClos.Params.small(8, 8, 4, 8);
                    nv = 3000;
                    break;
                case "paper":
                    tp = DuetClos.Params.paperScale();
                    nv = 30000;
                    break;
                default:
                    throw new IllegalArgumentException("--scale: '" + scale + "' is not one of small, medium, paper");
            }
            if (vipsCount != null) {
                nv = vipsCount;
            }
            if (tunnelTable != null || ecmpTable != null || hostTable != null) {
                tp.tables(new TableCapacity(nonNegative(hostTable, "--host-table"),
                        nonNegative(ecmpTable, "--ecmp-table"), nonNegative(tunnelTable, "--tunnel-table")));
            }
            topo = DuetClos.generate(tp);
            WorkloadGenerator.Params wp = new WorkloadGenerator.Params().vipCount(nv).intervals(interval + 1);
            if (load != null) {
                wp.loadFraction(load);
            }
            try {
                wp.validate();
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(WorkloadCommand.optionName(e.getMessage()), e);
            }
            Workload w = WorkloadGenerator.generate(topo, wp, seed);
            vips = w.vips;
            trace = w.trace;
            label = scale + " (seed " + seed + ")";
        }
        TrafficInterval ti = Intervals.pick(trace, interval, false, label);
        Instance in = Instance.build(topo, vips, ti, SolverOptions.defaults());
        double genSeconds = (System.nanoTime() - g0) / 1e9;
        out.printf(Locale.ROOT, "instance: %s, %d switches, %d VIPs (%d with traffic), %.3f Tbps, interval %d "
                        + "(built in %.1f s)%n", label, in.switchCount(), in.vipCount(), ti.vips.size(),
                in.totalTrafficBps() / 1e12, interval, genSeconds);
        out.printf(Locale.ROOT, "ilp: %s, time limit %.0f s, gap %.4f%n", mip.toOptions().describe(),
                mip.toOptions().timeLimitSeconds, mip.toOptions().relativeGap);
        out.flush();
        List<Assignment> results = new ArrayList<>();
        List<Double> seconds = new ArrayList<>();
        Double bound = null;
        for (String name : algorithms) {
            AssignmentAlgorithm alg = name.equals("ilp") ? new IlpAlgorithm(ilpOptions) : Algorithms.get(name);
            long t0 = System.nanoTime();
            Assignment a = alg.assign(in, null);
            double s = (System.nanoTime() - t0) / 1e9;
            List<String> bad = Feasibility.violations(in, a);
            if (!bad.isEmpty()) {
                throw new IllegalStateException(name + " produced an infeasible assignment: " + bad.get(0));
            }
            results.add(a);
            seconds.add(s);
            if (a.solver != null && a.solver.bound != null) {
                bound = bound == null ? a.solver.bound : Math.min(bound, a.solver.bound);
            }
            if (a.solver != null) {
                for (String n : a.solver.notes) {
                    err.println(name + ": " + n);
                }
            }
        }
        out.printf(Locale.ROOT, "%-12s %10s %10s %10s %8s %8s %9s %s%n", "algorithm", "hmuxShare", "bound",
                "toBound", "mru", "smuxes", "seconds", "status");
        for (int i = 0; i < results.size(); i++) {
            Assignment a = results.get(i);
            String to = bound == null ? "-" : String.format(Locale.ROOT, "%.2f pt", 100 * (bound - a.hmuxTrafficShare));
            out.printf(Locale.ROOT, "%-12s %9.4f%% %10s %10s %8.4f %8d %9.2f %s%n", algorithms.get(i),
                    100 * a.hmuxTrafficShare,
                    a.solver != null && a.solver.bound != null
                            ? String.format(Locale.ROOT, "%.4f%%", 100 * a.solver.bound) : "-",
                    to, a.mru, a.smuxCount, seconds.get(i),
                    a.solver != null ? a.solver.status + " gap " + (a.solver.bound == null ? "-"
                            : MipResult.gapText(a.solver.objective, a.solver.bound)) + " (" + a.solver.solver + ")"
                            : "");
        }
        out.flush();
        return SolverCli.EXIT_OK;
    }
}
