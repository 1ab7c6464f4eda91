package org.hybridlb.solver.migration;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.solver.model.MigrationPlan;
import org.hybridlb.solver.model.MigrationStep;
import org.hybridlb.solver.model.MigrationWave;
import org.hybridlb.solver.model.StepAction;

/**
 * Replays a migration plan step by step from the installed state and reports every unsafe step:
 * a switch table that would overflow (after the step, and in the worst order of its wave), a VIP
 * announced on an HMux without the SMux backstop or withdrawn from the SMuxes while an HMux
 * still announces it, a DIP changed while an HMux hashes the VIP, steps of one VIP in one wave
 * that do not commute, a wave over the transient SMux bound, and an end state other than the
 * target. Independent of the planner's search, it shares only the replay state and memory model.
 */
public final class PlanChecker {
    private PlanChecker() {
    }

    /** Violations of {@code plan} for {@code p}; empty when it is safe and reaches the target. */
    public static List<String> violations(MigrationProblem p, MigrationPlan plan, MemoryModel memory,
                                          PlannerOptions options) {
        PlanState st = PlanState.installed(memory, p.installedVips, p.from, p.targetVips);
        List<String> out = replay(st, plan, memory, p, options);
        out.addAll(st.differencesFrom(p.targetVips, p.to));
        return out;
    }

    /**
     * Violations of applying {@code plan} and then its {@link MigrationPlan#inverse()}, which must
     * be as safe and must end exactly where the installed state began.
     */
    public static List<String> rollbackViolations(MigrationProblem p, MigrationPlan plan, MemoryModel memory) {
        PlanState st = PlanState.installed(memory, p.installedVips, p.from, p.targetVips);
        PlannerOptions any = PlannerOptions.defaults();
        List<String> out = replay(st, plan, memory, p, any);
        for (String v : replay(st, plan.inverse(), memory, p, any)) {
            out.add("rollback: " + v);
        }
        for (String v : st.differencesFrom(p.installedVips, p.from)) {
            out.add("rollback: " + v);
        }
        return out;
    }

    private static List<String> replay(PlanState st, MigrationPlan plan, MemoryModel memory, MigrationProblem p,
                                       PlannerOptions options) {
        List<String> out = new ArrayList<>();
        Set<String> detourable = MigrationPlanner.detourable(p);
        for (int w = 0; w < plan.waves.size(); w++) {
            MigrationWave wave = plan.waves.get(w);
            checkCommutes(w, wave, out);
            checkWorstOrder(st, w, wave, out);
            double before = MigrationPlanner.transientBps(st, p, detourable);
            for (int i = 0; i < wave.steps.size(); i++) {
                MigrationStep step = wave.steps.get(i);
                String why = st.apply(step);
                if (why != null) {
                    out.add("wave " + w + " step " + i + " (" + step + "): " + why);
                }
            }
            double after = MigrationPlanner.transientBps(st, p, detourable);
            double peak = Math.max(before, after);
            if (peak > options.maxTransientSmuxBps * (1 + 1e-9)) {
                out.add("wave " + w + ": " + peak + " bit/s detoured through the SMuxes, over the bound of "
                        + options.maxTransientSmuxBps);
            }
        }
        return out;
    }

    /** A VIP's steps in one wave must all be of one action, and DIP steps on distinct DIPs. */
    private static void checkCommutes(int w, MigrationWave wave, List<String> out) {
        Map<String, StepAction> actionOf = new HashMap<>();
        Set<String> dips = new HashSet<>();
        for (MigrationStep s : wave.steps) {
            StepAction prev = actionOf.putIfAbsent(s.vip, s.action);
            if (prev != null && prev != s.action) {
                out.add("wave " + w + ": VIP " + s.vip + " has both " + prev.json() + " and " + s.action.json()
                        + " steps; their order would matter");
            }
            if (s.dip != null && !dips.add(s.vip + " " + s.serviceOrWhole() + " " + s.dip)) {
                out.add("wave " + w + ": DIP " + s.dip + " of VIP " + s.vip + " is changed twice");
            }
        }
    }

    /**
     * Steps of a wave may land in any order: every switch must hold what is in use at the start
     * plus everything the wave announces on it, before anything it withdraws.
     */
    private static void checkWorstOrder(PlanState st, int w, MigrationWave wave, List<String> out) {
        PlanState.Reservation r = new PlanState.Reservation();
        for (MigrationStep s : wave.steps) {
            PlanState.VipState vs = st.vip(s.vip);
            if (s.action != StepAction.ANNOUNCE_ON_HMUX || !st.hasSwitch(s.switchId) || vs == null) {
                continue;
            }
            r.add(st, vs.config, !vs.hmuxes.isEmpty(), s.switchId);
        }
        for (Map.Entry<String, int[]> e : r.perSwitch.entrySet()) {
            int[] used = st.used(e.getKey());
            int[] cap = {st.ecmpCapacity(e.getKey()), st.tunnelCapacity(e.getKey())};
            for (int i = 0; i < 2; i++) {
                if (used[i] + e.getValue()[i] > cap[i]) {
                    out.add("wave " + w + ": switch " + e.getKey() + " " + PlanState.TABLES[i] + " table would hold "
                            + (used[i] + e.getValue()[i]) + " > " + cap[i] + " entries if the wave's withdraws land last");
                }
            }
        }
        if (st.hostUsed() + r.host > st.hostBudget()) {
            out.add("wave " + w + ": the host tables would hold " + (st.hostUsed() + r.host) + " > "
                    + st.hostBudget() + " entries if the wave's withdraws land last");
        }
    }
}
