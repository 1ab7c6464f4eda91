package org.hybridlb.solver.sim;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.solver.assign.AssignmentAlgorithm;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.NoAssignmentException;
import org.hybridlb.solver.assign.SolverOptions;
import org.hybridlb.solver.migration.MigrationPlanner;
import org.hybridlb.solver.migration.MigrationProblem;
import org.hybridlb.solver.migration.PlannerOptions;
import org.hybridlb.solver.migration.SharedMemoryModel;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.MigrationPlan;
import org.hybridlb.solver.model.MigrationStep;
import org.hybridlb.solver.model.MigrationWave;
import org.hybridlb.solver.model.SmuxProvisioning;
import org.hybridlb.solver.model.StepAction;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.TrafficTrace;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.routing.Fabric;
import org.hybridlb.solver.workload.Progress;

/**
 * Replays a traffic trace interval by interval with each assignment algorithm, as Duet §3.8 does:
 * every algorithm re-assigns at every interval from its own previous assignment, and the
 * migration between consecutive assignments is planned (and so measured) by the migration
 * planner. One {@link Instance} per interval is shared by the algorithms.
 */
public final class TraceSimulator {
    /** What to run. */
    public static final class Options {
        public final List<String> algorithms;
        /** Builds an algorithm by name: the registry, or a command's with its own ilp options. */
        public final Function<String, AssignmentAlgorithm> factory;
        public final SolverOptions solver;
        /** Plan each migration (costs time at scale; the plan figures are -1/NaN when off). */
        public final boolean planMigrations;
        public final PlannerOptions planner;

        public Options(List<String> algorithms, SolverOptions solver, boolean planMigrations, PlannerOptions planner) {
            this(algorithms, Algorithms::get, solver, planMigrations, planner);
        }

        public Options(List<String> algorithms, Function<String, AssignmentAlgorithm> factory, SolverOptions solver,
                       boolean planMigrations, PlannerOptions planner) {
            if (algorithms.isEmpty()) {
                throw new IllegalArgumentException("--algorithms: name at least one algorithm");
            }
            for (String a : algorithms) {
                Algorithms.get(a); // fails early, naming the known ones
            }
            this.algorithms = List.copyOf(algorithms);
            this.factory = factory;
            this.solver = solver;
            this.planMigrations = planMigrations;
            this.planner = planner;
        }
    }

    private TraceSimulator() {
    }

    public static List<IntervalResult> run(Topology topology, VipSet vips, TrafficTrace trace, Options o,
                                           Progress progress) {
        Fabric fabric = new Fabric(topology);
        Map<String, AssignmentAlgorithm> algos = new LinkedHashMap<>();
        Map<String, Assignment> current = new HashMap<>();
        for (String name : o.algorithms) {
            algos.put(name, o.factory.apply(name));
        }
        List<IntervalResult> out = new ArrayList<>();
        long total = (long) trace.intervals.size() * algos.size();
        long done = 0;
        progress.update("intervals x algorithms", 0, total);
        for (TrafficInterval interval : trace.intervals) {
            Instance in = Instance.build(topology, fabric, vips, interval, o.solver);
            Map<String, Double> traffic = trafficOf(in);
            for (AssignmentAlgorithm algo : algos.values()) {
                Assignment prev = current.get(algo.name());
                long t0 = System.nanoTime();
                Assignment a;
                try {
                    a = algo.assign(in, prev);
                } catch (NoAssignmentException e) {
                    throw new NoAssignmentException(algo.name() + ", interval " + interval.index + ": "
                            + e.getMessage());
                }
                double solveMs = (System.nanoTime() - t0) / 1e6;
                current.put(algo.name(), a);
                out.add(measure(in, interval, traffic, algo.name(), prev, a, solveMs, o));
                progress.update("intervals x algorithms", ++done, total);
            }
        }
        return out;
    }

    /** Per-VIP traffic in the instance's unit (bits/s), for VIPs with any. */
    private static Map<String, Double> trafficOf(Instance in) {
        Map<String, Double> m = new HashMap<>();
        for (int v = 0; v < in.vipCount(); v++) {
            if (in.trafficBps(v) > 0) {
                m.put(in.vipId(v), in.trafficBps(v));
            }
        }
        return m;
    }

    private static IntervalResult measure(Instance in, TrafficInterval interval, Map<String, Double> traffic,
                                          String name, Assignment prev, Assignment a, double solveMs, Options o) {
        double shuffled = 0;
        int moved = 0;
        if (prev != null) {
            for (Map.Entry<String, Double> e : traffic.entrySet()) {
                if (e.getValue() > 0 && !prev.placementOf(e.getKey()).equals(a.placementOf(e.getKey()))) {
                    shuffled += e.getValue();
                    moved++;
                }
            }
        }
        SmuxProvisioning prov = a.provisioning;
        double unassigned = prov == null ? Double.NaN : prov.unassignedBps;
        double failure = prov == null ? Double.NaN : prov.failureBps;
        double transientBps = prov == null ? Double.NaN : prov.transientBps;
        double capacity = prov == null ? o.solver.smuxCapacityBps : prov.capacityBps;
        int smuxNoMigration = prov == null ? -1 : smuxes(Math.max(unassigned, failure), capacity);

        int waves = -1;
        int steps = -1;
        double peak = Double.NaN;
        int detoured = -1;
        int smuxWithPlan = -1;
        double planMs = Double.NaN;
        if (o.planMigrations && prev != null) {
            long t0 = System.nanoTime();
            MigrationProblem p = new MigrationProblem(in.topology(), in.vipSet(), prev, a, traffic);
            MigrationPlan plan = new MigrationPlanner(o.planner).plan(p, SharedMemoryModel.of(in, in.vipSet(), in.vipSet()));
            planMs = (System.nanoTime() - t0) / 1e6;
            waves = plan.waves.size();
            steps = 0;
            peak = 0;
            for (MigrationWave w : plan.waves) {
                steps += w.steps.size();
                peak = Math.max(peak, w.transientSmuxBps == null ? 0 : w.transientSmuxBps);
            }
            detoured = detouredVips(plan, prev, a);
            if (prov != null) {
                smuxWithPlan = smuxes(Math.max(unassigned, Math.max(failure, unassigned + peak)), capacity);
            }
        }
        return new IntervalResult(name, interval.index, interval.startSeconds, in.totalTrafficBps(), a.hmuxTrafficShare,
                shuffled, moved, a.smuxCount, smuxNoMigration, unassigned, failure, transientBps, a.mru, solveMs, waves, steps, peak,
                detoured, smuxWithPlan, planMs);
    }

    /** SMuxes to carry {@code bps} at {@code capacity} each, as the shared provisioning rounds. */
    private static int smuxes(double bps, double capacity) {
        return bps <= 0 ? 0 : (int) Math.ceil(bps / capacity - 1e-9);
    }

    /** VIPs on an HMux before and after that the plan withdrew from every HMux on the way. */
    static int detouredVips(MigrationPlan plan, Assignment from, Assignment to) {
        Map<String, Integer> onHmuxes = new HashMap<>();
        Set<String> detoured = new HashSet<>();
        for (MigrationWave w : plan.waves) {
            for (MigrationStep s : w.steps) {
                if (Assignment.SMUX.equals(from.placementOf(s.vip)) || Assignment.SMUX.equals(to.placementOf(s.vip))) {
                    continue;
                }
                int n = onHmuxes.computeIfAbsent(s.vip, k -> 1);
                if (s.action == StepAction.ANNOUNCE_ON_HMUX) {
                    onHmuxes.put(s.vip, n + 1);
                } else if (s.action == StepAction.WITHDRAW_FROM_HMUX) {
                    onHmuxes.put(s.vip, n - 1);
                    if (n - 1 == 0) {
                        detoured.add(s.vip);
                    }
                }
            }
        }
        return detoured.size();
    }
}
