package org.hybridlb.solver.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.workload.Workload;
import org.hybridlb.solver.workload.WorkloadGenerator;
import org.hybridlb.solver.workload.WorkloadStats;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code workload}: a seeded synthetic VIP configuration and traffic trace for a topology. */
@Command(name = "workload",
        header = "Generate seeded VIPs and a traffic trace shaped like Duet Fig. 3.15.", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Generate a seeded, reproducible VIP configuration and traffic trace shaped like Duet Fig. 3.15:",
            "lognormal VIP rates (a few elephants carry most traffic), lognormal DIP counts correlated with rate,",
            "~70%% of traffic from client ToRs inside the DC (with pod locality), the rest from 'internet',",
            "drifting over intervals (random walk with trend, bursts, VIPs created and deleted).",
            "Rates are bytes/s. Distributions and their reasons: solver/WORKLOAD.md.",
            "Same topology + options + seed = same files, byte for byte."})
public final class WorkloadCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--topology", required = true, paramLabel = "FILE", description = "Topology JSON to place DIPs and clients in.")
    Path topology;

    @Option(names = "--vips", required = true, paramLabel = "FILE", description = "Write the VIP configuration here.")
    Path vipsOut;

    @Option(names = "--traffic", required = true, paramLabel = "FILE", description = "Write the traffic trace here.")
    Path trafficOut;

    @Option(names = "--seed", defaultValue = "1", paramLabel = "N", description = "Random seed (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--vips-count", defaultValue = "30000", paramLabel = "N",
            description = "VIPs over the whole trace (default ${DEFAULT-VALUE}, the paper's trace).")
    int vipCount;

    @Option(names = "--intervals", defaultValue = "18", paramLabel = "N",
            description = "Intervals (default ${DEFAULT-VALUE}: 3 hours of 10 minutes).")
    int intervals;

    @Option(names = "--interval-seconds", defaultValue = "600", paramLabel = "S",
            description = "Length of an interval in seconds (default ${DEFAULT-VALUE}).")
    long intervalSeconds;

    @Option(names = "--load", defaultValue = "0.1", paramLabel = "F",
            description = "Total VIP traffic as a fraction of the summed ToR uplink capacity (default ${DEFAULT-VALUE}: "
                    + "6.4 Tbps on the paper-scale Clos, the paper's trace has 6.2-7.1 Tbps).")
    double load;

    @Option(names = "--total-gbps", paramLabel = "GBPS",
            description = "Total VIP traffic in Gbit/s; overrides --load.")
    Double totalGbps;

    @Option(names = "--traffic-sigma", defaultValue = "2.0", paramLabel = "S",
            description = "Skew of VIP rates: sigma of the lognormal (default ${DEFAULT-VALUE}: top 10%% of VIPs carry ~76%%).")
    double trafficSigma;

    @Option(names = "--dip-median", defaultValue = "6", paramLabel = "N", description = "Median DIPs per VIP (default ${DEFAULT-VALUE}).")
    double dipMedian;

    @Option(names = "--dip-sigma", defaultValue = "1.2", paramLabel = "S",
            description = "Skew of DIP counts: sigma of the lognormal (default ${DEFAULT-VALUE}).")
    double dipSigma;

    @Option(names = "--max-dips", defaultValue = "2000", paramLabel = "N",
            description = "Most DIPs of one VIP (default ${DEFAULT-VALUE}; more than a 512-entry tunnel table on purpose).")
    int maxDips;

    @Option(names = "--internal-share", defaultValue = "0.7", paramLabel = "F",
            description = "Share of VIP traffic from inside the DC (default ${DEFAULT-VALUE}, Duet §3.2).")
    double internalShare;

    @Option(names = "--locality", defaultValue = "0.4", paramLabel = "F",
            description = "Chance that a client ToR of a VIP is in a pod hosting its DIPs (default ${DEFAULT-VALUE}).")
    double locality;

    @Option(names = "--port-based-share", defaultValue = "0.3", paramLabel = "F",
            description = "Share of VIPs balanced per port (tcp/443, tcp/80, ...) (default ${DEFAULT-VALUE}).")
    double portBasedShare;

    @Option(names = "--weighted-share", defaultValue = "0.1", paramLabel = "F",
            description = "Share of VIPs with WCMP weights 1/2/4 on their DIPs (default ${DEFAULT-VALUE}).")
    double weightedShare;

    @Option(names = "--bare-metal-share", defaultValue = "0.2", paramLabel = "F",
            description = "Share of VIPs whose DIPs are hosts themselves rather than VMs with a hostIp (default ${DEFAULT-VALUE}).")
    double bareMetalShare;

    @Option(names = "--step-sigma", defaultValue = "0.1", paramLabel = "S",
            description = "Per-interval random-walk step of each VIP's log rate (default ${DEFAULT-VALUE}).")
    double stepSigma;

    @Option(names = "--trend-sigma", defaultValue = "0.03", paramLabel = "S",
            description = "Spread of per-VIP growth/shrink trends per interval, log scale (default ${DEFAULT-VALUE}).")
    double trendSigma;

    @Option(names = "--appear-share", defaultValue = "0.05", paramLabel = "F",
            description = "Share of VIPs created during the trace (default ${DEFAULT-VALUE}).")
    double appearShare;

    @Option(names = "--disappear-share", defaultValue = "0.05", paramLabel = "F",
            description = "Share of VIPs deleted during the trace (default ${DEFAULT-VALUE}).")
    double disappearShare;

    @Option(names = "--pretty", description = "Indent the traffic file too (about twice the size).")
    boolean pretty;

    @Option(names = "--progress", negatable = true,
            description = "Draw a progress bar on stderr (default: only on a terminal).")
    Boolean progress;

    @Override
    public Integer call() {
        WorkloadGenerator.Params p = params();
        Topology topo = ModelIo.readTopology(topology);
        requireDistinct();
        PrintWriter err = spec.commandLine().getErr();
        ProgressBar bar = new ProgressBar(err, ProgressBar.wanted(progress));
        long start = System.nanoTime();
        Workload w;
        try {
            w = WorkloadGenerator.generate(topo, p, seed, bar::update);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(optionName(e.getMessage()), e);
        }
        double genSeconds = (System.nanoTime() - start) / 1e9;
        JsonOutput.write(vipsOut, w.vips, true, "--vips");
        JsonOutput.write(trafficOut, w.trace, pretty, "--traffic");
        WorkloadStats s = WorkloadStats.of(w, 0);
        err.printf("workload: %d VIPs (%d active in interval 0), %d DIPs, %d intervals of %d s, generated in %.1f s%n",
                w.vips.vips.size(), s.activeVips, s.dips, w.trace.intervals.size(), intervalSeconds, genSeconds);
        err.printf("interval 0: %.3f Tbps, top 10%% of VIPs carry %.1f%%, internal share %.3f, median/max DIPs %d/%d%n",
                s.totalBytesPerSec * 8 / 1e12, 100 * s.topTenthShare, s.internalShare, s.medianDips, s.maxDips);
        err.printf("-> %s (%s), %s (%s)%n", vipsOut, size(vipsOut), trafficOut, size(trafficOut));
        err.flush();
        return SolverCli.EXIT_OK;
    }

    private WorkloadGenerator.Params params() {
        WorkloadGenerator.Params p = new WorkloadGenerator.Params()
                .vipCount(vipCount).intervals(intervals).intervalSeconds(intervalSeconds).loadFraction(load);
        if (totalGbps != null) {
            TopologyCommand.requirePositive(totalGbps, "--total-gbps");
            p.totalBps(totalGbps * 1e9);
        }
        p.trafficSigma = trafficSigma;
        p.dipMedian = dipMedian;
        p.dipSigma = dipSigma;
        p.maxDips = maxDips;
        p.internalShare = internalShare;
        p.localityShare = locality;
        p.portBasedShare = portBasedShare;
        p.weightedShare = weightedShare;
        p.bareMetalShare = bareMetalShare;
        p.stepSigma = stepSigma;
        p.trendSigma = trendSigma;
        p.appearShare = appearShare;
        p.disappearShare = disappearShare;
        try {
            p.validate();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(optionName(e.getMessage()), e);
        }
        return p;
    }

    private void requireDistinct() {
        if (vipsOut.toAbsolutePath().normalize().equals(trafficOut.toAbsolutePath().normalize())) {
            throw new IllegalArgumentException("--traffic: must be a different file from --vips");
        }
    }

    private static final String[][] OPTIONS = {
        {"vipCount", "--vips-count"}, {"intervals", "--intervals"}, {"intervalSeconds", "--interval-seconds"},
        {"loadFraction", "--load"}, {"totalBps", "--total-gbps"}, {"trafficSigma", "--traffic-sigma"},
        {"dipMedian", "--dip-median"}, {"dipSigma", "--dip-sigma"}, {"maxDips", "--max-dips"},
        {"minDips", "--max-dips"}, {"internalShare", "--internal-share"}, {"localityShare", "--locality"},
        {"portBasedShare", "--port-based-share"}, {"weightedShare", "--weighted-share"},
        {"bareMetalShare", "--bare-metal-share"}, {"stepSigma", "--step-sigma"}, {"trendSigma", "--trend-sigma"},
        {"appearShare", "--appear-share"}, {"disappearShare", "--disappear-share"},
    };

    /** The generator names its fields; the user typed options. */
    static String optionName(String message) {
        for (String[] o : OPTIONS) {
            if (message.startsWith(o[0] + ":")) {
                return o[1] + message.substring(o[0].length());
            }
        }
        return message;
    }

    private static String size(Path file) {
        try {
            return String.format("%.1f MB", Files.size(file) / 1e6);
        } catch (java.io.IOException e) {
            return "?";
        }
    }
}
