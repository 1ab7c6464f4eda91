package org.hybridlb.solver.cli;

import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.solver.assign.Feasibility;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.SolverOptions;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.routing.Fabric;
import org.hybridlb.solver.topology.DuetClos;
import org.hybridlb.solver.workload.Workload;
import org.hybridlb.solver.workload.WorkloadGenerator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code bench}: times the VIP assignment at paper scale (Duet §3.8.1) and prints medians.
 * Run it as {@code java -Xmx2g -jar hybridlb-solver.jar bench} to hold it to the 2 GB heap.
 */
@Command(name = "bench",
        header = "Time greedy and sticky assignment at paper scale; prints medians.", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Benchmark the VIP assignment on a generated Duet Clos (default: the paper's 40 pods x "
                + "(40 ToRs + 4 aggs), 40 cores, 30,000 VIPs). Prints median times of: the paper's greedy "
                + "(which stops at the first VIP that fits nowhere), a full greedy assignment of interval 0 "
                + "(greedy-skip), a sticky re-assignment of interval 1 starting from it, the same two without "
                + "the container (pod) shortcut and the ratio, the time to index the fabric and each "
                + "interval, and the peak heap.",
            "Targets on a 2-core machine: greedy <= 2 s, sticky <= 1 s, heap <= 2 GB (run with -Xmx2g)."})
public final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--pods", defaultValue = "40", description = "Pods (default ${DEFAULT-VALUE}).")
    int pods;

    @Option(names = "--tors", defaultValue = "40", description = "ToRs per pod (default ${DEFAULT-VALUE}).")
    int tors;

    @Option(names = "--aggs", defaultValue = "4", description = "Aggs per pod (default ${DEFAULT-VALUE}).")
    int aggs;

    @Option(names = "--cores", defaultValue = "40", description = "Core switches (default ${DEFAULT-VALUE}).")
    int cores;

    @Option(names = "--vips", defaultValue = "30000", description = "VIPs (default ${DEFAULT-VALUE}).")
    int vips;

    @Option(names = "--load", defaultValue = "0.1",
            description = "Total VIP traffic as a fraction of the ToR uplink capacity (default ${DEFAULT-VALUE}, ~6.4 Tbps at paper scale).")
    double load;

    @Option(names = "--runs", defaultValue = "5", description = "Timed runs per measurement; medians are printed (default ${DEFAULT-VALUE}).")
    int runs;

    @Option(names = "--warmup", defaultValue = "2", description = "Untimed runs first, for the JIT (default ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--no-shortcut-runs", defaultValue = "1",
            description = "Timed runs without the pod shortcut (slow; default ${DEFAULT-VALUE}, 0 skips the ratio).")
    int noShortcutRuns;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the workload and of the tie-breaking (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--progress", negatable = true,
            description = "Show a progress bar on stderr (default: when stderr is a terminal).")
    Boolean progress;

    @Override
    public Integer call() {
        if (runs < 1 || warmup < 0 || noShortcutRuns < 0) {
            throw new IllegalArgumentException("--runs must be >= 1, --warmup and --no-shortcut-runs >= 0");
        }
        PrintWriter out = spec.commandLine().getOut();
        ProgressBar bar = new ProgressBar(spec.commandLine().getErr(), ProgressBar.wanted(progress));
        long t0 = System.nanoTime();
        Topology topo = DuetClos.generate(DuetClos.Params.small(pods, tors, aggs, cores));
        WorkloadGenerator.Params wp = new WorkloadGenerator.Params().vipCount(vips).intervals(2).loadFraction(load);
        Workload w = WorkloadGenerator.generate(topo, wp, seed);
        double genSec = (System.nanoTime() - t0) / 1e9;

        long t1 = System.nanoTime();
        Fabric fabric = new Fabric(topo);
        double fabricSec = (System.nanoTime() - t1) / 1e9;
        SolverOptions opts = SolverOptions.defaults().withSeed(seed);
        TrafficInterval i0 = w.trace.intervals.get(0);
        TrafficInterval i1 = w.trace.intervals.get(Math.min(1, w.trace.intervals.size() - 1));
        long t2 = System.nanoTime();
        Instance in0 = Instance.build(topo, fabric, w.vips, i0, opts);
        double indexSec = (System.nanoTime() - t2) / 1e9;
        Instance in1 = in0.withTraffic(i1);

        // The paper's greedy stops at the first VIP that fits nowhere; when the workload's
        // largest VIPs exceed what any one switch can carry, that happens at once, so the full
        // assignment is timed with greedy-skip (same search, goes on after such a VIP) and the
        // sticky re-assignment starts from it with the same rule.
        Instance s0 = in0.withOptions(opts.withStopAtFirstUnfit(false));
        Instance s1 = in1.withOptions(opts.withStopAtFirstUnfit(false));
        int total = (warmup + runs) * 3 + runs + noShortcutRuns * 2;
        int[] step = {0};
        Result paper = time(bar, step, total, warmup, runs, () -> Algorithms.get("greedy").assign(in0, null));
        Result greedy = time(bar, step, total, warmup, runs, () -> Algorithms.get("greedy-skip").assign(s0, null));
        Assignment base = greedy.last;
        Result sticky = time(bar, step, total, warmup, runs, () -> Algorithms.get("sticky").assign(s1, base));
        double[] rebuild = new double[runs];
        for (int i = 0; i < runs; i++) {
            bar.update("runs", step[0]++, total);
            long t = System.nanoTime();
            in0.withTraffic(i1);
            rebuild[i] = (System.nanoTime() - t) / 1e9;
        }
        Result greedyNo = null;
        Result stickyNo = null;
        if (noShortcutRuns > 0) {
            Instance n0 = s0.withOptions(s0.options().withPodShortcut(false));
            Instance n1 = s1.withOptions(s1.options().withPodShortcut(false));
            greedyNo = time(bar, step, total, 0, noShortcutRuns, () -> Algorithms.get("greedy-skip").assign(n0, null));
            stickyNo = time(bar, step, total, 0, noShortcutRuns, () -> Algorithms.get("sticky").assign(n1, base));
        }
        bar.update("runs", total, total);

        List<String> problems = new ArrayList<>(Feasibility.violations(in0, paper.last));
        problems.addAll(Feasibility.violations(s0, greedy.last));
        problems.addAll(Feasibility.violations(s1, sticky.last));
        if (greedyNo != null) {
            problems.addAll(Feasibility.violations(s0, greedyNo.last));
            problems.addAll(Feasibility.violations(s1, stickyNo.last));
        }
        out.printf(Locale.ROOT, "fabric: %d pods x (%d ToRs + %d aggs), %d cores: %d switches, %d directed links%n",
                pods, tors, aggs, cores, fabric.switchCount(), fabric.linkCount());
        out.printf(Locale.ROOT, "workload: %d VIPs, interval 0 %.2f Tbps, interval 1 %.2f Tbps (generated in %.2f s)%n",
                vips, in0.totalTrafficBps() / 1e12, in1.totalTrafficBps() / 1e12, genSec);
        out.printf(Locale.ROOT, "index: fabric (all-pairs hops, next hops) %.3f s once per topology; instance %.3f s, "
                + "next interval (withTraffic) median %.3f s%n", fabricSec, indexSec, median(rebuild));
        out.printf(Locale.ROOT, "greedy, paper rule (stop at the first VIP that fits nowhere): median %.3f s; "
                + "hmux share %.4f, %d VIPs on HMux, %d SMuxes%n",
                paper.median(), paper.last.hmuxTrafficShare, onHmux(paper.last), paper.last.smuxCount);
        out.printf(Locale.ROOT, "greedy-skip, full assignment of interval 0: median %.3f s of %d runs (cpu %.3f s)  "
                + "[target <= 2 s]%n", greedy.median(), runs, greedy.cpuMedian());
        out.printf(Locale.ROOT, "  hmux share %.4f, mru %.4f, %d VIPs on HMux, %d SMuxes (%.1f Gbps each)%n",
                greedy.last.hmuxTrafficShare, greedy.last.mru, onHmux(greedy.last), greedy.last.smuxCount,
                opts.smuxCapacityBps / 1e9);
        out.printf(Locale.ROOT, "sticky re-assignment of interval 1:       median %.3f s of %d runs (cpu %.3f s)  "
                + "[target <= 1 s]%n", sticky.median(), runs, sticky.cpuMedian());
        out.printf(Locale.ROOT, "  hmux share %.4f, mru %.4f, %d VIPs moved, %d SMuxes%n",
                sticky.last.hmuxTrafficShare, sticky.last.mru, moved(base, sticky.last), sticky.last.smuxCount);
        if (greedyNo != null) {
            out.printf(Locale.ROOT, "without pod shortcut: greedy-skip %.3f s (%.2fx slower; cpu %.2fx), sticky %.3f s "
                    + "(%.2fx slower; cpu %.2fx) [%d run(s) each; hmux share %.4f, mru %.4f]%n", greedyNo.median(),
                    greedyNo.median() / greedy.median(), greedyNo.cpuMedian() / greedy.cpuMedian(),
                    stickyNo.median(), stickyNo.median() / sticky.median(), stickyNo.cpuMedian() / sticky.cpuMedian(),
                    noShortcutRuns, greedyNo.last.hmuxTrafficShare, greedyNo.last.mru);
        }
        out.printf(Locale.ROOT, "peak heap: %.0f MB (max %.0f MB)  [target <= 2048 MB]%n",
                peakHeapBytes() / 1048576.0, Runtime.getRuntime().maxMemory() / 1048576.0);
        out.printf(Locale.ROOT, "machine: %d processors, load average %.1f when done (wall times grow with load; "
                + "cpu = this thread's CPU time)%n", Runtime.getRuntime().availableProcessors(),
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        out.printf(Locale.ROOT, "feasibility: %s%n", problems.isEmpty() ? "no capacity violated" : problems.size() + " violations: " + problems.get(0));
        out.flush();
        return problems.isEmpty() ? SolverCli.EXIT_OK : SolverCli.EXIT_INTERNAL;
    }

    private static double median(double[] x) {
        double[] s = x.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    private static int onHmux(Assignment a) {
        int n = 0;
        for (String s : a.assignment.values()) {
            if (!Assignment.SMUX.equals(s)) {
                n++;
            }
        }
        return n;
    }

    private static int moved(Assignment from, Assignment to) {
        int n = 0;
        for (java.util.Map.Entry<String, String> e : to.assignment.entrySet()) {
            if (!e.getValue().equals(from.placementOf(e.getKey()))) {
                n++;
            }
        }
        return n;
    }

    private static long peakHeapBytes() {
        long sum = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP && pool.getPeakUsage() != null) {
                sum += pool.getPeakUsage().getUsed();
            }
        }
        return sum;
    }

    private static final java.lang.management.ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private interface Run {
        Assignment run();
    }

    private static final class Result {
        final double[] seconds;
        final double[] cpuSeconds;
        Assignment last;

        Result(int n) {
            seconds = new double[n];
            cpuSeconds = new double[n];
        }

        double median() {
            return BenchCommand.median(seconds);
        }

        double cpuMedian() {
            return BenchCommand.median(cpuSeconds);
        }
    }

    private static Result time(ProgressBar bar, int[] step, int total, int warmup, int runs, Run r) {
        Result res = new Result(runs);
        for (int i = 0; i < warmup + runs; i++) {
            bar.update("runs", step[0]++, total);
            long c = THREADS.getCurrentThreadCpuTime();
            long t = System.nanoTime();
            Assignment a = r.run();
            double sec = (System.nanoTime() - t) / 1e9;
            if (i >= warmup) {
                res.seconds[i - warmup] = sec;
                res.cpuSeconds[i - warmup] = (THREADS.getCurrentThreadCpuTime() - c) / 1e9;
            }
            res.last = a;
        }
        return res;
    }
}
