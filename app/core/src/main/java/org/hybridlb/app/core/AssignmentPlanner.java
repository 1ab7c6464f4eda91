package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.hybridlb.app.core.view.AssignmentView;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.migration.MigrationPlanner;
import org.hybridlb.solver.migration.MigrationProblem;
import org.hybridlb.solver.migration.PlanChecker;
import org.hybridlb.solver.migration.PlanningException;
import org.hybridlb.solver.migration.SharedMemoryModel;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.MigrationPlan;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.routing.Fabric;

/**
 * Where the VIPs should be and how to get there: the solver's algorithm (default sticky, Duet
 * §3.4.2) on the measured traffic, then its migration planner from the installed state (the SMux
 * as stepping stone, §3.4.2), and its independent plan checker, on the served part of the fabric
 * ({@link FabricInputs#serving}). Failed, drained and held places are taken out here, a VIP
 * whose pools the SMuxes could not hash as its HMux would stays on the SMuxes ({@link HashContracts}),
 * and one that moves to an HMux whose hash contract differs goes through them ({@link ContractMoves});
 * a target that cannot be planned keeps every placement and applies only the configuration changes.
 * Loop thread only.
 */
final class AssignmentPlanner {
    private static final Logger LOG = Logger.getLogger(AssignmentPlanner.class.getName());

    /** A checked plan and the assignment it goes to. */
    static final class Planned {
        final MigrationPlan plan;
        final Map<String, String> target;

        Planned(MigrationPlan plan, Map<String, String> target) {
            this.plan = plan;
            this.target = target;
        }
    }

    private final ControllerConfig config;
    private final StateKeeper keeper;
    private final FabricInputs inputs;
    private final PoolGrowthHolds holds;
    private final ContractMoves moves;
    private final HashContracts contracts;
    private final Status status;
    private Assignment last;
    /** Per VIP of the last plan: the switches the SMuxes could not agree with for its pools, and why. */
    private Map<String, AssignmentView.HashUnmatched> unmatched = Map.of();
    private Topology fabricOf;
    private Fabric fabric;

    AssignmentPlanner(ControllerConfig config, StateKeeper keeper, FabricInputs inputs, PoolGrowthHolds holds,
                      ContractMoves moves, HashContracts contracts, Status status) {
        this.config = config;
        this.keeper = keeper;
        this.inputs = inputs;
        this.holds = holds;
        this.moves = moves;
        this.contracts = contracts;
        this.status = status;
    }

    /** VIPs kept off switches whose hash the SMuxes cannot follow for their pools (last plan). */
    Map<String, AssignmentView.HashUnmatched> hashUnmatched() {
        return unmatched;
    }

    /** The last assignment computed (placements as planned), or null before the first. */
    Assignment last() {
        return last;
    }

    /**
     * Assigns {@code target} (the desired VIPs without unhealthy DIPs) and plans the migration to
     * it. Null when there is nothing to do or no safe plan ({@code lastError} says why).
     */
    Planned plan(Map<String, Vip> target) {
        ControllerState state = keeper.state();
        VipSet targetSet = new VipSet(new ArrayList<>(target.values()));
        VipSet installedSet = new VipSet(new ArrayList<>(state.installedVips.values()));
        Topology topo = inputs.serving().topology();
        Map<String, String> from = new LinkedHashMap<>();
        state.installedVips.keySet().forEach(v -> from.put(v, state.placement(v)));
        Assignment current = new Assignment("installed", from, 0, 0, 0, null);
        Instance instance;
        Assignment next;
        TrafficInterval interval = trafficFor(targetSet, topo);
        try {
            if (fabricOf != topo) { // routing is indexed once per topology, not per interval
                fabric = new Fabric(topo);
                fabricOf = topo;
            }
            instance = Instance.build(topo, fabric, targetSet, interval, config.solver);
            if (interval == null && !from.isEmpty()) {
                // nothing measured yet (a host that just started, e.g. the daemon after a restart):
                // "no measurement" is not "no traffic", so every VIP stays where it is and new
                // ones go to the SMuxes until the first interval arrives
                next = current;
            } else {
                next = Algorithms.get(config.algorithm).assign(instance, current);
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "assignment failed", e);
            status.error("assignment: " + e.getMessage());
            return null;
        }
        holds.hold(target);
        unmatched = contracts.unmatched(target, topo);
        Map<String, String> to = new LinkedHashMap<>();
        for (String v : target.keySet()) {
            String at = next.placementOf(v);
            AssignmentView.HashUnmatched off = unmatched.get(v);
            boolean unmatchable = off != null && off.switches.contains(at);
            to.put(v, inputs.down.contains(at) || holds.isHeld(v) || unmatchable ? Assignment.SMUX : at);
        }
        moves.route(to, target); // between hash contracts: through the SMuxes, held there
        last = new Assignment(next.algorithm, to, next.hmuxTrafficShare, next.mru, next.smuxCount,
                next.utilisation, next.provisioning);
        Map<String, Double> bps = new HashMap<>();
        if (interval != null) {
            interval.vips.forEach(vt -> bps.put(vt.vip, vt.totalBps()));
        }
        // the planner adds DIPs; the DIPs installed already change their units in place (PoolChanges)
        List<Vip> planned = new ArrayList<>();
        boolean asTarget = true;
        for (Vip v : targetSet.vips) {
            Vip p = PoolChanges.planned(state.installedVips.get(v.vip), v);
            planned.add(p);
            asTarget &= p == v;
        }
        VipSet plannedSet = asTarget ? targetSet : new VipSet(planned);
        MigrationPlanner planner = new MigrationPlanner(config.planner);
        SharedMemoryModel memory;
        MigrationProblem problem;
        MigrationPlan plan;
        try {
            memory = SharedMemoryModel.of(instance, installedSet, plannedSet);
            problem = new MigrationProblem(topo, installedSet, current, plannedSet,
                    new Assignment(next.algorithm, to, 0, 0, 0, null), bps);
            plan = planner.plan(problem, memory);
        } catch (PlanningException e) {
            // keep every VIP where it is and apply only the configuration changes
            LOG.log(Level.WARNING, "no migration plan to the new assignment: " + e.getMessage());
            status.error("migration plan: " + e.getMessage() + " (placements kept)");
            to.clear();
            for (String v : target.keySet()) {
                to.put(v, holds.isHeld(v) ? Assignment.SMUX : from.getOrDefault(v, Assignment.SMUX));
            }
            try {
                memory = SharedMemoryModel.of(instance, installedSet, plannedSet);
                problem = new MigrationProblem(topo, installedSet, current, plannedSet,
                        new Assignment("installed", to, 0, 0, 0, null), bps);
                plan = planner.plan(problem, memory);
            } catch (RuntimeException again) {
                status.error("migration plan: " + again.getMessage());
                return null;
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "migration planning failed", e);
            status.error("migration plan: " + e.getMessage());
            return null;
        }
        if (plan.waves.isEmpty()) {
            return null;
        }
        // defence in depth: an independent replay must find every wave safe before any device sees it
        List<String> unsafe = PlanChecker.violations(problem, plan, memory, config.planner);
        if (!unsafe.isEmpty()) {
            LOG.warning("refusing an unsafe migration plan: " + unsafe);
            status.error("refused an unsafe migration plan: " + unsafe.get(0)
                    + (unsafe.size() > 1 ? " (and " + (unsafe.size() - 1) + " more)" : ""));
            return null;
        }
        return new Planned(plan, to);
    }

    /** The measured traffic, restricted to VIPs, DIPs and sources the solver knows. */
    private TrafficInterval trafficFor(VipSet vips, Topology t) {
        TrafficInterval traffic = inputs.traffic();
        if (traffic == null) {
            return null;
        }
        Map<String, Set<String>> dips = new HashMap<>();
        for (Vip v : vips.vips) {
            Set<String> d = new HashSet<>();
            v.ports.forEach(p -> p.dips.forEach(x -> d.add(x.ip)));
            dips.put(v.vip, d);
        }
        Set<String> nodes = new HashSet<>();
        t.switches.forEach(s -> nodes.add(s.id));
        t.hosts.forEach(h -> nodes.add(h.id));
        nodes.add(VipTraffic.INTERNET);
        List<VipTraffic> out = new ArrayList<>();
        for (VipTraffic vt : traffic.vips) {
            Set<String> d = dips.get(vt.vip);
            if (d == null) {
                continue;
            }
            Map<String, Double> src = new LinkedHashMap<>(vt.sources);
            src.keySet().retainAll(nodes);
            Map<String, Double> byDip = new LinkedHashMap<>(vt.dips);
            byDip.keySet().retainAll(d);
            out.add(new VipTraffic(vt.vip, src, byDip.size() == d.size() ? byDip : null));
        }
        return new TrafficInterval(traffic.index, traffic.startSeconds, traffic.durationSeconds, out);
    }
}
