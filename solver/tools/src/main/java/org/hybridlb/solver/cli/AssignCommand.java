package org.hybridlb.solver.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.hybridlb.solver.assign.AssignmentAlgorithm;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.solver.assign.Feasibility;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.SolverOptions;
import org.hybridlb.solver.io.InvalidInputException;
import org.hybridlb.solver.io.ModelChecks;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.TrafficTrace;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.provision.FailureImpact;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code assign}: one VIP-switch assignment for one traffic interval, as JSON. */
@Command(name = "assign",
        header = "Assign VIPs to HMux switches or the SMuxes for one interval; prints JSON.", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Assign every VIP to a switch (HMux) or to the SMuxes for one traffic interval (Duet §3.4) "
                + "and print the assignment as JSON: algorithm, assignment (VIP -> switch id or \"smux\"), "
                + "hmuxTrafficShare, mru (maximum utilisation of links, at 80%% of bandwidth, and of "
                + "ECMP/tunnel tables), smuxCount with its provisioning (§3.8.2: the worst of unassigned "
                + "traffic, a pod or 3 switches failing, and migration transient) and per-resource "
                + "utilisation. The output can be given back as --current.",
            "Invalid input exits with status 2, names the file, the field and the reason, and prints "
                + "nothing on stdout. Details: solver/ASSIGNMENT.md."})
public final class AssignCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--topology", required = true, paramLabel = "FILE", description = "Topology JSON (switches, links, hosts).")
    Path topology;

    @Option(names = "--vips", required = true, paramLabel = "FILE", description = "VIP configuration JSON (ports, DIPs, weights).")
    Path vips;

    @Option(names = "--traffic", required = true, paramLabel = "FILE", description = "Traffic trace JSON (bytes/s per VIP, by source and DIP).")
    Path traffic;

    @Option(names = "--interval", paramLabel = "N",
            description = "Which interval of the trace (its \"index\" field); default: the first one.")
    Integer interval;

    @Option(names = "--algorithm", defaultValue = "greedy", paramLabel = "NAME",
            description = "greedy (the paper's: stops at the first VIP that fits nowhere), greedy-skip (skips it and goes "
                    + "on), random (first fit, §3.8.4), sticky (needs --current to be sticky), non-sticky, one-time "
                    + "(keeps --current), ananta (all on SMuxes), ilp (exact or with a proven bound: --time-limit, "
                    + "--gap, --solver, --minimise-mru, --migration-budget; solver/ILP.md). Default: ${DEFAULT-VALUE}.")
    String algorithm;

    @Option(names = "--current", paramLabel = "FILE",
            description = "The installed assignment (a previous output): sticky keeps VIPs there, one-time keeps it, and "
                    + "the migration transient of the SMux provisioning is counted against it.")
    Path current;

    @Option(names = "--delta", defaultValue = "0.05", paramLabel = "D",
            description = "Sticky threshold: move a VIP only if the MRU drops by more than D (default ${DEFAULT-VALUE}).")
    double delta;

    @Option(names = "--seed", defaultValue = "1", paramLabel = "N",
            description = "Seed of the random tie-breaking and of random (default ${DEFAULT-VALUE}); same inputs + seed = same output.")
    long seed;

    @Option(names = "--link-headroom", defaultValue = "0.8", paramLabel = "F",
            description = "Fraction of link bandwidth VIP traffic may use (default ${DEFAULT-VALUE}, Duet §3.4).")
    double headroom;

    @Option(names = "--smux-gbps", defaultValue = "3.6", paramLabel = "GBPS",
            description = "SMux capacity for smuxCount (default ${DEFAULT-VALUE}; the paper also uses 10).")
    double smuxGbps;

    @Option(names = "--no-pod-shortcut",
            description = "Evaluate every ToR in full instead of the best ToR per pod: the same MRU at every step, "
                    + "slower (ties may fall on other switches); for comparison.")
    boolean noShortcut;

    @Option(names = "--failure-scenarios", defaultValue = "-1", paramLabel = "N",
            description = "Also compute the max link utilisation under failures (Fig. 3.19): the pod and the 3 switches "
                    + "with most HMux traffic plus N random pods and N random switch triples (seeded). Each scenario "
                    + "recomputes routes: a few seconds each at paper scale. Default: not computed.")
    int failureScenarios;

    @Option(names = "--progress", negatable = true,
            description = "Show a progress bar on stderr (default: when stderr is a terminal).")
    Boolean progress;

    @Option(names = "--out", paramLabel = "FILE",
            description = "Write the JSON to FILE (all or nothing) instead of stdout; a directory or an unwritable "
                    + "place is refused before assigning.")
    Path out;

    @picocli.CommandLine.Mixin
    IlpCliOptions ilp; // --time-limit, --gap, --solver, ... of --algorithm ilp (ilp helper)

    @Override
    public Integer call() {
        if (out != null) {
            JsonOutput.checkWritable(out, "--out"); // before a solve that may take minutes
        }
        ilp.requireIlpSelected(spec.commandLine().getParseResult(), List.of(algorithm), "--algorithm");
        ilp.options(); // a bad --gap, --solver, --migration-budget ... fails here, naming the option
        if (ilp.migrationBudget != null && current == null) {
            throw new IllegalArgumentException("--migration-budget: needs --current (the installed assignment "
                    + "whose moves it limits)");
        }
        SolverOptions opts;
        try {
            opts = SolverOptions.defaults().withSeed(seed).withStickyDelta(delta).withLinkHeadroom(headroom)
                    .withSmuxCapacityBps(smuxGbps * 1e9).withPodShortcut(!noShortcut);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--delta/--link-headroom/--smux-gbps: " + e.getMessage());
        }
        try {
            Algorithms.get(algorithm);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--algorithm: " + e.getMessage());
        }
        AssignmentAlgorithm alg = ilp.algorithm(algorithm); // "ilp" with this command's options
        ProgressBar bar = new ProgressBar(spec.commandLine().getErr(), ProgressBar.wanted(progress));
        int phases = 6;
        bar.update("reading topology", 0, phases);
        Topology topo = ModelIo.readTopology(topology);
        bar.update("reading VIPs", 1, phases);
        VipSet vipSet = ModelIo.readVips(vips);
        ModelChecks.checkVipsAgainstTopology(vipSet, topo, vips.toString());
        bar.update("reading traffic", 2, phases);
        TrafficTrace trace = ModelIo.readTraffic(traffic, vipSet, topo);
        TrafficInterval chosen = pick(trace);
        Assignment installed = current == null ? null : ModelIo.readAssignment(current, topo);
        bar.update("indexing", 3, phases);

        long start = System.nanoTime();
        Instance in;
        try {
            in = Instance.build(topo, vipSet, chosen, opts);
        } catch (IllegalArgumentException e) {
            throw new InvalidInputException(topology.toString(), "/links", e.getMessage());
        }
        bar.update("assigning", 4, phases);
        Assignment result = alg.assign(in, installed);
        double seconds = (System.nanoTime() - start) / 1e9;
        if (failureScenarios >= 0) {
            bar.update("failure scenarios", 5, phases);
            result = withLinkFailures(in, result);
        }
        bar.update("done", phases, phases);
        java.util.List<String> bad = Feasibility.violations(in, result);
        if (!bad.isEmpty()) {
            // never print an assignment that breaks a capacity
            throw new IllegalStateException(algorithm + " produced an infeasible assignment: " + bad.get(0));
        }
        if (out != null) {
            JsonOutput.write(out, result, true, "--out");
        } else {
            JsonOutput.print(spec.commandLine().getOut(), result);
        }
        IlpCliOptions.report(spec.commandLine().getErr(), result);
        spec.commandLine().getErr().printf(Locale.ROOT,
                "assign: %s, interval %d, %d VIPs: hmux share %.4f, mru %.4f, %d SMuxes (%s), %.2f s%n",
                result.algorithm, chosen.index, in.vipCount(), result.hmuxTrafficShare, result.mru,
                result.smuxCount, result.provisioning == null ? "" : "worst failure: " + result.provisioning.worstFailure,
                seconds);
        return SolverCli.EXIT_OK;
    }

    private Assignment withLinkFailures(Instance in, Assignment a) {
        int[] placement = new int[in.vipCount()];
        for (int v = 0; v < in.vipCount(); v++) {
            String where = a.placementOf(in.vipId(v));
            placement[v] = Assignment.SMUX.equals(where) ? -1 : in.switchIndex(where);
        }
        FailureImpact.Scenario base = FailureImpact.baseline(in, placement);
        java.util.List<FailureImpact.Scenario> all = FailureImpact.scenarios(in, placement, failureScenarios, seed);
        FailureImpact.Scenario worst = all.get(0);
        return new Assignment(a.algorithm, a.assignment, a.hmuxTrafficShare, a.mru, a.smuxCount, a.utilisation,
                a.provisioning.withLinkFailures(base.maxLinkUtilisation, worst.maxLinkUtilisation,
                        worst.name + " (" + String.join(" ", worst.failed) + "), peak on " + worst.maxLink, all.size()),
                a.solver);
    }

    private TrafficInterval pick(TrafficTrace trace) {
        return Intervals.pick(trace, interval, false, traffic.toString());
    }
}
