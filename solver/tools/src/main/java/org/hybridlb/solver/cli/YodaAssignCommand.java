package org.hybridlb.solver.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.hybridlb.solver.ilp.MipModel;
import org.hybridlb.solver.ilp.MipOptions;
import org.hybridlb.solver.ilp.MipResult;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.yoda.YodaAssignment;
import org.hybridlb.solver.yoda.YodaIlp;
import org.hybridlb.solver.yoda.YodaMode;
import org.hybridlb.solver.yoda.YodaProblem;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code yoda-assign}: the Yoda many-to-many VIP-to-L7-instance ILP (Yoda §4.4-4.5, Fig. 7). */
@Command(name = "yoda-assign",
        header = "Assign VIPs to Yoda L7 instances with the Yoda ILP.",
        mixinStandardHelpOptions = true,
        description = {
            "Assign VIPs to Yoda L7 instances with the fewest instances (Yoda Fig. 7): n_v replicas per VIP,",
            "traffic capacity after f_v failures, rule capacity; in 'limit' mode also the transient traffic",
            "against the previous assignment and a budget of migrated connections. Input format: solver/YODA.md.",
            "--time-limit is the budget of the whole command: 'both' gives each mode half of it (limit also "
                + "what no-limit leaves), and δ relaxations share their mode's time.",
            "Exit codes: 0 ok, 1 solver failure, 2 invalid input, 3 no assignment satisfies the constraints "
                + "(proven), 4 no assignment found within --time-limit (not proven impossible: try a larger one). "
                + "With 'both', a mode that found an assignment is printed even when the other did not (exit 3, 4 "
                + "or 1)."})
public final class YodaAssignCommand implements Callable<Integer> {
    public static final int EXIT_INFEASIBLE = 3;
    public static final int EXIT_TIME_LIMIT = 4;

    @Option(names = {"-p", "--problem"}, required = true, paramLabel = "FILE",
            description = "Yoda problem JSON (instances, VIPs, optional previous assignment).")
    Path problem;

    @Option(names = "--mode", paramLabel = "limit|no-limit|both", defaultValue = "limit",
            description = "Yoda §8.2 variant; 'both' solves both and prints them side by side (default ${DEFAULT-VALUE}).")
    String mode;

    @Option(names = "--migration-budget", paramLabel = "FRACTION",
            description = "δ as a fraction of the previous connections; overrides the file (default: file, else 0.10). "
                    + "Limit mode only: refused with --mode no-limit.")
    Double migrationBudget;

    @Option(names = "--relax-step", paramLabel = "FRACTION", defaultValue = "0.10",
            description = "When δ makes the limit variant infeasible, raise it by this much and retry, as §8.2 did; "
                    + "0 = never (default ${DEFAULT-VALUE}).")
    double relaxStep;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE",
            description = "Write the JSON here (all or nothing) instead of stdout; a directory or an unwritable place "
                    + "is refused before solving.")
    Path output;

    @Mixin
    MipCliOptions mip;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        if (output != null) {
            JsonOutput.checkWritable(output, "-o/--output"); // before solving, not after
        }
        MipOptions options = mip.toOptions();
        if (migrationBudget != null && !(migrationBudget >= 0 && migrationBudget <= 1)) {
            throw new IllegalArgumentException("--migration-budget: must be in [0, 1], got " + migrationBudget);
        }
        if (!(relaxStep >= 0 && relaxStep <= 1)) {
            throw new IllegalArgumentException("--relax-step: must be in [0, 1], got " + relaxStep);
        }
        List<YodaMode> modes = new ArrayList<>();
        if (mode.trim().equalsIgnoreCase("both")) {
            modes.add(YodaMode.NO_LIMIT);
            modes.add(YodaMode.LIMIT);
        } else {
            modes.add(YodaMode.parse(mode));
        }
        if (migrationBudget != null && !modes.contains(YodaMode.LIMIT)) {
            // no-limit has no migration constraint (eqs. 1-3 only): the budget would silently do nothing
            throw new IllegalArgumentException("--migration-budget: --mode no-limit has no migration limit; "
                    + "use --mode limit or both");
        }
        YodaProblem raw = YodaProblem.read(problem);
        YodaProblem withBudget = migrationBudget == null ? raw : new YodaProblem(raw.instances, raw.instancePool,
                raw.vips, raw.replicaFactor, raw.previous, migrationBudget, null);
        YodaProblem.Resolved p = withBudget.resolve(problem.toString());
        PrintWriter err = spec.commandLine().getErr();
        ArrayNode results = ModelIo.MAPPER.createArrayNode();
        List<YodaIlp.Outcome> failed = new ArrayList<>();
        // --time-limit is the whole command's: each mode gets an equal share of what is left
        MipModel.loadNatives();
        long deadline = System.nanoTime() + (long) (Math.min(options.timeLimitSeconds, YodaIlp.MAX_SECONDS) * 1e9);
        for (int i = 0; i < modes.size(); i++) {
            YodaMode m = modes.get(i);
            double share = (deadline - System.nanoTime()) / 1e9 / (modes.size() - i);
            YodaIlp.Outcome o = YodaIlp.solve(p, m, options.withTimeLimit(Math.max(YodaIlp.MIN_SOLVE_SECONDS, share)),
                    relaxStep);
            for (String note : o.notes) {
                err.println("yoda-assign (" + m.cliName() + "): " + note);
            }
            if (o.assignment == null) {
                failed.add(o);
            }
            results.add(toJson(p, o));
        }
        if (failed.size() < modes.size()) {
            // what was found is printed, also when the other mode found nothing
            Object doc = results.size() == 1 ? results.get(0)
                    : ModelIo.MAPPER.createObjectNode().set("results", results);
            if (output != null) {
                JsonOutput.write(output, doc, true, "-o/--output");
            } else {
                JsonOutput.print(spec.commandLine().getOut(), doc);
            }
        }
        for (YodaIlp.Outcome o : failed) {
            err.println("error: " + o.mode.cliName() + ": " + failure(o));
        }
        if (!failed.isEmpty() && failed.size() < modes.size()) {
            YodaIlp.Outcome f = failed.get(0);
            YodaMode found = f.mode == YodaMode.LIMIT ? YodaMode.NO_LIMIT : YodaMode.LIMIT;
            err.println("yoda-assign: printed the " + found.cliName() + " assignment; the " + f.mode.cliName()
                    + " entry has status \"" + f.status.cliName() + "\" and no assignment");
        }
        return exitCode(failed);
    }

    /** Why a mode has no assignment, for stderr. */
    private String failure(YodaIlp.Outcome o) {
        switch (o.status) {
            case INFEASIBLE:
                return "no assignment satisfies the constraints (proven infeasible; see the notes above)";
            case TIME_LIMIT:
                return "no assignment found within the time limit (--time-limit " + mip.timeLimitText()
                        + " s for the whole command), and none proven impossible; try a larger --time-limit";
            default:
                return "the MIP solver failed and the best-fit-decreasing placement does not meet the constraints "
                        + "(see the notes above)";
        }
    }

    /** A proven infeasibility (3) says more than a time limit (4), which says more than a solver failure (1). */
    private static int exitCode(List<YodaIlp.Outcome> failed) {
        if (failed.stream().anyMatch(o -> o.status == YodaIlp.Status.INFEASIBLE)) {
            return EXIT_INFEASIBLE;
        }
        if (failed.stream().anyMatch(o -> o.status == YodaIlp.Status.TIME_LIMIT)) {
            return EXIT_TIME_LIMIT;
        }
        return failed.isEmpty() ? SolverCli.EXIT_OK : SolverCli.EXIT_INTERNAL;
    }

    /** The result document (format in solver/YODA.md). */
    public static ObjectNode toJson(YodaProblem.Resolved p, YodaIlp.Outcome o) {
        ObjectNode n = ModelIo.MAPPER.createObjectNode();
        n.put("mode", o.mode.cliName());
        n.put("status", o.status.cliName());
        // a fallback is the best-fit-decreasing placement, not the solver's
        n.put("solvedBy", o.status == YodaIlp.Status.FALLBACK ? "best-fit-decreasing" : o.mip.solvedBy);
        // a fallback's objective is its own instance count, not the rejected solver answer's
        double objective = o.status == YodaIlp.Status.FALLBACK ? o.assignment.instancesUsed() : o.mip.objective;
        putNumber(n, "objective", objective);
        putNumber(n, "bound", o.mip.bound);
        putNumber(n, "gap", MipResult.relativeGap(objective, o.mip.bound));
        n.put("solveSeconds", Math.round(o.seconds * 1000) / 1000.0);
        n.put("allToAllInstances", allToAll(p));
        if (o.greedyInstances >= 0) {
            n.put("greedyInstances", o.greedyInstances);
        }
        if (!Double.isNaN(o.migrationBudget)) {
            n.put("migrationBudgetConnections", o.migrationBudget);
        }
        ArrayNode notes = n.putArray("notes");
        o.notes.forEach(notes::add);
        YodaAssignment a = o.assignment;
        if (a == null) {
            return n;
        }
        n.put("instancesUsed", a.instancesUsed());
        double prev = p.previousConnections();
        if (prev > 0) {
            n.put("migratedConnections", a.migratedConnections());
            n.put("migratedFraction", a.migratedConnections() / prev);
            n.put("overloadedDuringTransition", a.overloadedDuringTransition());
        }
        ObjectNode asg = n.putObject("assignment");
        for (int v = 0; v < p.vip.length; v++) {
            ArrayNode ys = asg.putArray(p.vip[v]);
            for (int y : a.placement[v]) {
                ys.add(p.instances.get(y).id);
            }
        }
        ArrayNode inst = n.putArray("instances");
        double[] fl = a.failoverLoad();
        int[] rules = a.rules();
        double[] tl = a.transientLoad();
        boolean[] used = a.usedInstances();
        for (int y = 0; y < used.length; y++) {
            if (!used[y] && tl[y] == 0) {
                continue;
            }
            YodaProblem.Instance in = p.instances.get(y);
            ObjectNode i = inst.addObject();
            i.put("id", in.id);
            i.put("used", used[y]);
            i.put("failoverTraffic", fl[y]);
            i.put("trafficCapacity", in.trafficCapacity);
            i.put("rules", rules[y]);
            i.put("ruleCapacity", in.ruleCapacity);
            if (prev > 0) {
                i.put("transientTraffic", tl[y]);
            }
        }
        return n;
    }

    /** §8.2's baseline: every VIP on every instance, so total traffic / capacity instances (largest first). */
    static int allToAll(YodaProblem.Resolved p) {
        double total = 0;
        for (double t : p.traffic) {
            total += t;
        }
        double[] caps = p.instances.stream().mapToDouble(i -> i.trafficCapacity).sorted().toArray();
        int n = 0;
        for (int i = caps.length - 1; i >= 0 && total > 1e-12; i--) {
            total -= caps[i];
            n++;
        }
        return Math.max(n, 1);
    }

    private static void putNumber(ObjectNode n, String field, double value) {
        if (!Double.isNaN(value) && !Double.isInfinite(value)) {
            n.put(field, value);
        }
    }
}
