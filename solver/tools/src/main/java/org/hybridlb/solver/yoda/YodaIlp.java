package org.hybridlb.solver.yoda;

import com.google.ortools.linearsolver.MPConstraint;
import com.google.ortools.linearsolver.MPSolver;
import com.google.ortools.linearsolver.MPVariable;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.hybridlb.solver.ilp.MipModel;
import org.hybridlb.solver.ilp.MipOptions;
import org.hybridlb.solver.ilp.MipResult;

/**
 * The Yoda VIP assignment ILP (Yoda Fig. 7): fewest instances such that every VIP v is on n_v
 * instances (eq. 3), each instance carries its VIPs' traffic after f_v failures (eq. 1) and
 * their rules (eq. 2), and, in {@link YodaMode#LIMIT}, the transient traffic during the switch
 * from the previous assignment fits (eqs. 4-5) and at most δ connections migrate (eqs. 6-7).
 *
 * <p>Two formulation choices, both equivalent on integer points and tighter in the LP:
 * the "instance used" variable u_y multiplies the capacities (eqs. 1, 2) and bounds every
 * x_vy instead of eq. 8's sum / N; and m_vy = max(x_prev - x, 0) is substituted, because
 * x_prev is data: eq. 6 becomes Σ_prev C_vy (1 - x_vy) ≤ δ. Identical instances the previous
 * assignment did not use are interchangeable, so they are opened in order (symmetry breaking).
 *
 * <p>One reading of eq. 4: an instance the previous assignment already loads beyond T_y (Yoda
 * §8.2: "already overloaded before starting the new round") may keep that load but not grow it,
 * otherwise every such round would be infeasible.
 */
public final class YodaIlp {
    /** Yoda §8.2: when δ makes the ILP infeasible, raise it by 10 points and try again. */
    public static final double DEFAULT_RELAX_STEP = 0.10;

    private YodaIlp() {
    }

    /** Shortest time a solve is given, even when the time limit is spent (MipOptions wants > 0). */
    public static final double MIN_SOLVE_SECONDS = 0.001;
    /** The longest time limit honoured (a year): beyond, nanosecond deadlines would overflow. */
    public static final double MAX_SECONDS = 365 * 86400.0;

    /** What became of one mode: the "status" yoda-assign prints (solver/YODA.md). */
    public enum Status {
        /** Solved, and proven within --gap of the bound. */
        OPTIMAL,
        /** The solver's best answer, not proven within --gap (time limit). */
        FEASIBLE,
        /** The solver had no usable answer; the best-fit-decreasing placement, which meets every constraint. */
        FALLBACK,
        /** Proven: no assignment meets the constraints (δ relaxed as far as --relax-step allows). */
        INFEASIBLE,
        /** No assignment found within the time limit, and none proven impossible. */
        TIME_LIMIT,
        /** The solver failed (notes say how) and the fallback does not meet the constraints. */
        ERROR;

        /** "time-limit" as printed. */
        public String cliName() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** What {@code yoda-assign} prints. */
    public static final class Outcome {
        /** Null unless the status is OPTIMAL, FEASIBLE or FALLBACK. */
        public final YodaAssignment assignment;
        public final Status status;
        public final MipResult mip;
        public final YodaMode mode;
        /** δ actually enforced, in connections (NaN when no migration limit applied). */
        public final double migrationBudget;
        public final int greedyInstances;
        public final List<String> notes;
        /** Wall time of the whole solve: warm start, models and every δ retry. */
        public final double seconds;

        Outcome(YodaAssignment assignment, Status status, MipResult mip, YodaMode mode, double migrationBudget,
                int greedyInstances, List<String> notes, long startNanos) {
            this.assignment = assignment;
            this.status = status;
            this.mip = mip;
            this.mode = mode;
            this.migrationBudget = migrationBudget;
            this.greedyInstances = greedyInstances;
            this.notes = List.copyOf(notes);
            this.seconds = (System.nanoTime() - startNanos) / 1e9;
        }
    }

    /**
     * Solves the problem within {@code options.timeLimitSeconds} in all; in limit mode relaxes δ by
     * {@code relaxStep} (of the previous connections) while the model is proven infeasible, as §8.2
     * did, each retry with the time that is left. The outcome's status tells a proven
     * infeasibility (even with δ relaxed) from a time limit that came first.
     */
    public static Outcome solve(YodaProblem.Resolved p, YodaMode mode, MipOptions options, double relaxStep) {
        MipModel.loadNatives(); // once per process, up to a second: not the solver's time
        long start = System.nanoTime();
        long deadline = start + (long) (Math.min(options.timeLimitSeconds, MAX_SECONDS) * 1e9);
        List<String> notes = new ArrayList<>();
        boolean limit = mode == YodaMode.LIMIT && p.hasPrevious();
        if (mode == YodaMode.LIMIT && !p.hasPrevious()) {
            notes.add("no previous assignment: the limit constraints have nothing to limit");
        }
        double prevConns = p.previousConnections();
        double budget = limit ? p.migrationBudget(null) : Double.NaN;
        YodaAssignment greedy = YodaGreedy.place(p, mode);
        int greedyInstances = greedy == null ? -1 : greedy.instancesUsed();
        while (true) {
            double left = Math.max(MIN_SOLVE_SECONDS, (deadline - System.nanoTime()) / 1e9);
            MipResult r = solveOnce(p, limit, budget, greedy, options.withTimeLimit(left));
            notes.addAll(r.notes);
            if (r.hasSolution()) {
                YodaAssignment a = extract(p, r.values);
                List<String> bad = a.violations(limit ? YodaMode.LIMIT : YodaMode.NO_LIMIT, budget);
                if (bad.isEmpty()) {
                    Status st = r.status == MipResult.Status.OPTIMAL ? Status.OPTIMAL : Status.FEASIBLE;
                    return new Outcome(a, st, r, mode, budget, greedyInstances, notes, start);
                }
                notes.add("solver answer rejected by the checker (" + bad.get(0) + ")");
                return fallback(p, limit, budget, greedy, r, mode, greedyInstances, notes, Status.ERROR, start);
            }
            // Only a proven infeasibility relaxes δ: a solve cut short by the time limit proves nothing.
            if (r.status == MipResult.Status.INFEASIBLE && limit && relaxStep > 0
                    && budget < prevConns * (1 - 1e-9)) {
                double next = Math.min(prevConns, budget + relaxStep * prevConns);
                String infeasible = String.format(Locale.ROOT, "infeasible with δ = %.0f connections (%.0f%%, "
                        + "proven in %.1f s)", budget, 100 * budget / prevConns, r.seconds);
                budget = next;
                if (System.nanoTime() >= deadline) {
                    notes.add(String.format(Locale.ROOT, "%s; the time limit (%s s) ran out before δ = %.0f%% "
                            + "could be tried", infeasible, seconds(options), 100 * next / prevConns));
                    return fallback(p, limit, budget, greedy, r, mode, greedyInstances, notes, Status.TIME_LIMIT,
                            start);
                }
                notes.add(String.format(Locale.ROOT, "%s; relaxing to %.0f%%", infeasible, 100 * next / prevConns));
                continue;
            }
            if (r.status == MipResult.Status.INFEASIBLE) {
                notes.add("proven infeasible: no assignment meets the constraints");
                return new Outcome(null, Status.INFEASIBLE, r, mode, budget, greedyInstances, notes, start);
            }
            if (r.status == MipResult.Status.NO_SOLUTION) {
                notes.add("no solution found within the time limit (" + seconds(options) + " s), and none proven "
                        + "impossible");
                return fallback(p, limit, budget, greedy, r, mode, greedyInstances, notes, Status.TIME_LIMIT, start);
            }
            notes.add("solver stopped without a solution (" + r.status + ")");
            return fallback(p, limit, budget, greedy, r, mode, greedyInstances, notes, Status.ERROR, start);
        }
    }

    /** The best-fit-decreasing placement if it meets the constraints, else no assignment with {@code failure}. */
    private static Outcome fallback(YodaProblem.Resolved p, boolean limit, double budget, YodaAssignment greedy,
                                    MipResult r, YodaMode mode, int greedyInstances, List<String> notes,
                                    Status failure, long start) {
        if (greedy != null && greedy.violations(limit ? YodaMode.LIMIT : YodaMode.NO_LIMIT, budget).isEmpty()) {
            notes.add("returning the best-fit-decreasing placement instead");
            return new Outcome(greedy, Status.FALLBACK, r, mode, budget, greedyInstances, notes, start);
        }
        return new Outcome(null, failure, r, mode, budget, greedyInstances, notes, start);
    }

    /** "3", "1.5", "0.001": the time limit to 3 digits (a mode's share of --time-limit is computed). */
    private static String seconds(MipOptions options) {
        return new BigDecimal(options.timeLimitSeconds).round(new MathContext(3)).stripTrailingZeros()
                .toPlainString();
    }

    static MipResult solveOnce(YodaProblem.Resolved p, boolean limit, double budget, YodaAssignment hint,
                               MipOptions options) {
        int nv = p.vip.length;
        int ny = p.instances.size();
        MipModel model = MipModel.create("yoda", options).strict();
        MPSolver s = model.solver();
        MPVariable[][] x = new MPVariable[nv][ny];
        MPVariable[] u = new MPVariable[ny];
        for (int y = 0; y < ny; y++) {
            u[y] = s.makeBoolVar("u_" + y);
            s.objective().setCoefficient(u[y], 1);
        }
        s.objective().setMinimization();
        for (int v = 0; v < nv; v++) {
            MPConstraint replicas = s.makeConstraint(p.replicas[v], p.replicas[v], "replicas_" + v);
            for (int y = 0; y < ny; y++) {
                x[v][y] = s.makeBoolVar("x_" + v + "_" + y);
                replicas.setCoefficient(x[v][y], 1);
                MPConstraint link = s.makeConstraint(Double.NEGATIVE_INFINITY, 0, "open_" + v + "_" + y);
                link.setCoefficient(x[v][y], 1);
                link.setCoefficient(u[y], -1);
            }
        }
        double[] before = YodaAssignment.previousLoad(p);
        for (int y = 0; y < ny; y++) {
            YodaProblem.Instance in = p.instances.get(y);
            MPConstraint traffic = s.makeConstraint(Double.NEGATIVE_INFINITY, 0, "traffic_" + y);
            MPConstraint rules = s.makeConstraint(Double.NEGATIVE_INFINITY, 0, "rules_" + y);
            // Capacities scaled to 1 keep the LP well conditioned whatever the traffic unit is.
            for (int v = 0; v < nv; v++) {
                traffic.setCoefficient(x[v][y], p.failoverLoad(v) / in.trafficCapacity);
                rules.setCoefficient(x[v][y], (double) p.rules[v] / in.ruleCapacity);
            }
            traffic.setCoefficient(u[y], -1);
            rules.setCoefficient(u[y], -1);
            if (limit) {
                double cap = Math.max(in.trafficCapacity, before[y]);
                // Σ_v max(t_v x_vy / n_v, t_v x_old / n_old) ≤ cap. For a VIP that was on y, x_vy binary
                // makes the max old + max(0, new - old) · x_vy: linear, with no continuous variable
                // for the max (CP-SAT rejects those), and at least as tight in the LP. The old
                // shares are constants: they go to the right-hand side.
                double oldShares = 0;
                MPConstraint trans = s.makeConstraint(Double.NEGATIVE_INFINITY, 1, "transient_" + y);
                for (int v = 0; v < nv; v++) {
                    double share = p.traffic[v] / p.replicas[v] / cap;
                    Map<Integer, Double> prev = p.previous.get(v);
                    if (prev.containsKey(y)) {
                        double old = p.traffic[v] / prev.size() / cap;
                        oldShares += old;
                        trans.setCoefficient(x[v][y], Math.max(0, share - old));
                    } else {
                        trans.setCoefficient(x[v][y], share);
                    }
                }
                trans.setUb(1 - oldShares);
            }
        }
        if (limit) {
            // Σ_prev C_vy (1 - x_vy) ≤ δ  ⇔  Σ_prev C_vy x_vy ≥ Σ_prev C_vy - δ
            double total = p.previousConnections();
            double scale = total > 0 ? 1 / total : 1;
            MPConstraint kept = s.makeConstraint((total - budget) * scale, Double.POSITIVE_INFINITY,
                    "migration");
            for (int v = 0; v < nv; v++) {
                for (Map.Entry<Integer, Double> e : p.previous.get(v).entrySet()) {
                    kept.setCoefficient(x[v][e.getKey()], e.getValue() * scale);
                }
            }
        }
        addSymmetryBreaking(s, p, u);
        if (hint != null) {
            boolean[] used = hint.usedInstances();
            for (int y = 0; y < ny; y++) {
                model.hint(u[y], used[y] ? 1 : 0);
            }
            for (int v = 0; v < nv; v++) {
                for (int y = 0; y < ny; y++) {
                    model.hint(x[v][y], YodaAssignment.contains(hint.placement[v], y) ? 1 : 0);
                }
            }
        }
        return model.solve(options);
    }

    /** u_a ≥ u_b for consecutive identical instances (same T, R) that no VIP used before. */
    private static void addSymmetryBreaking(MPSolver s, YodaProblem.Resolved p, MPVariable[] u) {
        boolean[] usedBefore = new boolean[u.length];
        for (Map<Integer, Double> m : p.previous) {
            for (int y : m.keySet()) {
                usedBefore[y] = true;
            }
        }
        int last = -1;
        for (int y = 0; y < u.length; y++) {
            if (usedBefore[y]) {
                continue;
            }
            if (last >= 0 && same(p.instances.get(last), p.instances.get(y))) {
                MPConstraint c = s.makeConstraint(0, Double.POSITIVE_INFINITY, "sym_" + y);
                c.setCoefficient(u[last], 1);
                c.setCoefficient(u[y], -1);
            }
            last = y;
        }
    }

    private static boolean same(YodaProblem.Instance a, YodaProblem.Instance b) {
        return a.trafficCapacity == b.trafficCapacity && a.ruleCapacity == b.ruleCapacity;
    }

    static YodaAssignment extract(YodaProblem.Resolved p, double[] values) {
        int nv = p.vip.length;
        int ny = p.instances.size();
        // Variables were created as u_0..u_{ny-1}, then per VIP x_v_0..x_v_{ny-1}.
        int[][] placement = new int[nv][];
        for (int v = 0; v < nv; v++) {
            List<Integer> ys = new ArrayList<>();
            for (int y = 0; y < ny; y++) {
                if (values[ny + v * ny + y] > 0.5) {
                    ys.add(y);
                }
            }
            placement[v] = ys.stream().mapToInt(Integer::intValue).toArray();
        }
        return new YodaAssignment(p, placement);
    }
}
