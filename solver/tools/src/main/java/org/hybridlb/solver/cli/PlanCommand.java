package org.hybridlb.solver.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.SolverOptions;
import org.hybridlb.solver.io.InvalidInputException;
import org.hybridlb.solver.io.ModelChecks;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.migration.MigrationPlanner;
import org.hybridlb.solver.migration.MigrationProblem;
import org.hybridlb.solver.migration.PlanChecker;
import org.hybridlb.solver.migration.PlannerOptions;
import org.hybridlb.solver.migration.PlanningException;
import org.hybridlb.solver.migration.SharedMemoryModel;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.MigrationPlan;
import org.hybridlb.solver.model.MigrationStep;
import org.hybridlb.solver.model.MigrationWave;
import org.hybridlb.solver.model.StepAction;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.TrafficTrace;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.model.VipTraffic;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code plan}: the migration plan from an installed assignment to a new one (Duet §3.4.2). */
@Command(name = "plan",
        header = "Plan a safe migration between two assignments, in waves.", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Plan the migration from the installed VIP assignment (and VIP configuration) to a new one, in "
                + "ordered waves that never overfill a switch's host, ECMP or tunnel table at any step.",
            "A VIP moves make-before-break (announced on its new HMux before it leaves the old one) when memory "
                + "allows, otherwise through the SMuxes, which announce every VIP as the backstop: this solves the "
                + "Fig. 3.4 deadlock. New VIPs start on the SMuxes; removed VIPs leave the HMux, then the SMuxes; "
                + "DIPs of a VIP change only while no HMux announces it (§3.5.2).",
            "Every step has an inverse; the plan is replayed and checked before it is printed. Prints the plan "
                + "JSON on stdout and a one-line summary on stderr; invalid input exits 2 and prints nothing.",
            ""})
public final class PlanCommand implements Callable<Integer> {
    /** Traffic files hold bytes/s; plans, links and SMuxes count bits/s. */
    private static final double BITS_PER_BYTE = 8;

    @Spec
    CommandSpec spec;

    @Option(names = "--topology", required = true, paramLabel = "FILE", description = "Topology JSON.")
    Path topologyFile;

    @Option(names = "--vips", required = true, paramLabel = "FILE",
            description = "Target VIP configuration JSON (what --to assigns).")
    Path vipsFile;

    @Option(names = "--installed-vips", paramLabel = "FILE",
            description = "Installed VIP configuration JSON (what --from assigns); default: the same as --vips.")
    Path installedVipsFile;

    @Option(names = "--from", required = true, paramLabel = "FILE", description = "Installed assignment JSON.")
    Path fromFile;

    @Option(names = "--to", required = true, paramLabel = "FILE", description = "Target assignment JSON.")
    Path toFile;

    @Option(names = "--traffic", paramLabel = "FILE",
            description = "Traffic trace JSON: orders moves by traffic and measures the SMux detour (optional).")
    Path trafficFile;

    @Option(names = "--interval", paramLabel = "N",
            description = "Which interval of --traffic (its \"index\" field); default: the last one.")
    Integer interval;

    @Option(names = "--max-transient-smux-gbps", paramLabel = "GBPS",
            description = "Bound on the traffic (Gbit/s) detoured through the SMuxes during any wave; detours are "
                    + "spread over waves to keep it (default: no bound). Needs --traffic.")
    Double maxTransientGbps;

    @Option(names = "--no-make-before-break", negatable = false,
            description = "Move every VIP through the SMuxes (break before make), as the paper's Non-sticky does.")
    boolean noMakeBeforeBreak;

    @Option(names = "--out", paramLabel = "FILE", description = "Write the plan here instead of stdout.")
    Path out;

    @Override
    public Integer call() {
        if (out != null) {
            JsonOutput.checkWritable(out, "--out"); // before the planning, not after it
        }
        PrintWriter err = spec.commandLine().getErr();
        Topology topology = ModelIo.readTopology(topologyFile);
        VipSet target = ModelIo.readVips(vipsFile);
        ModelChecks.checkVipsAgainstTopology(target, topology, vipsFile.toString());
        VipSet installed = target;
        if (installedVipsFile != null) {
            installed = ModelIo.readVips(installedVipsFile);
            ModelChecks.checkVipsAgainstTopology(installed, topology, installedVipsFile.toString());
        }
        Assignment from = ModelIo.readAssignment(fromFile, topology);
        Assignment to = ModelIo.readAssignment(toFile, topology);
        requireKnownVips(from, installed, fromFile, installedVipsFile != null ? installedVipsFile : vipsFile);
        requireKnownVips(to, target, toFile, vipsFile);
        Map<String, Double> traffic = trafficFile == null ? Map.of() : readTraffic(topology, installed, target);
        if (maxTransientGbps != null && !(maxTransientGbps > 0)) {
            throw new IllegalArgumentException("--max-transient-smux-gbps: must be > 0, got " + maxTransientGbps);
        }
        if (maxTransientGbps != null && trafficFile == null) {
            throw new IllegalArgumentException(
                    "--max-transient-smux-gbps: a bound on detoured traffic needs --traffic to know each VIP's traffic");
        }
        PlannerOptions options = new PlannerOptions(!noMakeBeforeBreak,
                maxTransientGbps == null ? PlannerOptions.UNBOUNDED : maxTransientGbps * 1e9);

        Instance index = Instance.build(topology, target, null, SolverOptions.defaults());
        SharedMemoryModel memory = SharedMemoryModel.of(index, installed, target);
        MigrationProblem problem = new MigrationProblem(topology, installed, from, target, to, traffic);
        try {
            MigrationPlanner.requireTargetFits(problem, memory);
        } catch (PlanningException e) {
            throw new InvalidInputException(toFile.toString(), "/assignment", e.getMessage());
        }
        MigrationPlan plan;
        try {
            plan = new MigrationPlanner(options).plan(problem, memory);
        } catch (PlanningException e) {
            if (maxTransientGbps != null) {
                throw new IllegalArgumentException("--max-transient-smux-gbps: " + e.getMessage());
            }
            throw new InvalidInputException(toFile.toString(), "/assignment", e.getMessage());
        }
        List<String> violations = PlanChecker.violations(problem, plan, memory, options);
        if (!violations.isEmpty()) {
            throw new IllegalStateException("the planner produced a plan its checker rejects: " + violations.get(0));
        }
        if (out != null) {
            JsonOutput.write(out, plan, true, "--out");
        } else {
            JsonOutput.print(spec.commandLine().getOut(), plan);
        }
        err.println(summary(plan, problem));
        err.flush();
        return SolverCli.EXIT_OK;
    }

    /** VIPs named by an assignment must be VIPs of the configuration it goes with. */
    private static void requireKnownVips(Assignment a, VipSet vips, Path file, Path vipsFile) {
        Map<String, Boolean> known = new HashMap<>();
        vips.vips.forEach(v -> known.put(v.vip, true));
        for (String vip : a.assignment.keySet()) {
            if (!known.containsKey(vip)) {
                throw new InvalidInputException(file.toString(), "/assignment/" + vip,
                        "VIP " + vip + " is not in " + vipsFile);
            }
        }
    }

    /** Per-VIP traffic of the chosen interval in bits/s (files hold bytes/s); VIPs of either configuration may appear. */
    private Map<String, Double> readTraffic(Topology topology, VipSet installed, VipSet target) {
        Map<String, Vip> union = new LinkedHashMap<>();
        installed.vips.forEach(v -> union.put(v.vip, v));
        target.vips.forEach(v -> union.put(v.vip, v));
        TrafficTrace trace = ModelIo.readTraffic(trafficFile, new VipSet(new ArrayList<>(union.values())), topology);
        TrafficInterval in = Intervals.pick(trace, interval, true, trafficFile.toString());
        Map<String, Double> out = new HashMap<>();
        for (VipTraffic vt : in.vips) {
            out.put(vt.vip, vt.totalBps() * BITS_PER_BYTE);
        }
        return out;
    }

    static String summary(MigrationPlan plan, MigrationProblem p) {
        int steps = 0;
        Map<StepAction, Integer> byAction = new LinkedHashMap<>();
        double peak = 0;
        for (MigrationWave w : plan.waves) {
            steps += w.steps.size();
            for (MigrationStep s : w.steps) {
                byAction.merge(s.action, 1, Integer::sum);
            }
            peak = Math.max(peak, w.transientSmuxBps == null ? 0 : w.transientSmuxBps);
        }
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "plan: %d waves, %d steps", plan.waves.size(), steps));
        byAction.forEach((a, n) -> sb.append(", ").append(n).append(' ').append(a.json()));
        sb.append(String.format(Locale.ROOT, "; peak traffic detoured through the SMuxes %.3f Gbit/s", peak / 1e9));
        return sb.toString();
    }
}
