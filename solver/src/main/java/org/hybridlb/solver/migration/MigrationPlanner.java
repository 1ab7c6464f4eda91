package org.hybridlb.solver.migration;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.MigrationPlan;
import org.hybridlb.solver.model.MigrationStep;
import org.hybridlb.solver.model.MigrationWave;
import org.hybridlb.solver.model.StepAction;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipEdits;

/**
 * Plans the move from the installed VIP assignment (and configuration) to a new one, in waves
 * that never overfill a switch table (Duet §3.4.2, §3.5.2).
 *
 * <p>Every wave is of one kind, so its steps are safe in any order or all at once:
 * <ul>
 * <li>"withdraw": withdraw-from-hmux only. Switch memory only shrinks; traffic of a withdrawn
 *     VIP falls to the SMuxes, which announce every VIP as the backstop.</li>
 * <li>"config": SMux announce/withdraw and DIP add/remove, for VIPs on no HMux; no switch memory.</li>
 * <li>"announce": announce-on-hmux only, each on a switch with room for it and for everything
 *     else announced there in the same wave.</li>
 * </ul>
 * Rounds of withdraw, config, announce repeat until the target is reached. A VIP moving between
 * HMuxes is announced on its new switch as soon as that has room and withdrawn from the old one
 * in the next round (make-before-break). When no pending announce fits anywhere — the Fig. 3.4
 * deadlock, where two VIPs each fill 60% of a switch and swap places — the planner withdraws
 * VIPs that are leaving the blocked switches (fewest bytes first) so the SMuxes carry them while
 * the memory frees up: the SMux is the stepping stone. DIPs are only added to or removed from a
 * VIP that no HMux announces, because an HMux only hashes and would remap live connections.
 */
public final class MigrationPlanner {
    private static final double EPS = 1e-9;

    private final PlannerOptions options;

    public MigrationPlanner(PlannerOptions options) {
        this.options = options;
    }

    public MigrationPlanner() {
        this(PlannerOptions.defaults());
    }

    /**
     * A plan from {@code p.from} to {@code p.to}; throws {@link PlanningException} when the target
     * does not fit the switch tables or the transient bound cannot be kept.
     */
    public MigrationPlan plan(MigrationProblem p, MemoryModel memory) {
        return new Run(p, memory).plan();
    }

    /** Checks that {@code to} fits every switch table with the target configuration; throws if not. */
    public static void requireTargetFits(MigrationProblem p, MemoryModel memory) {
        Map<String, int[]> need = new HashMap<>();
        long host = 0;
        for (Vip v : p.targetVips.vips) {
            String at = p.to.placementOf(v.vip);
            if (Assignment.SMUX.equals(at)) {
                continue;
            }
            if (!memory.hasSwitch(at)) {
                throw new PlanningException("target assignment places VIP " + v.vip + " on unknown switch '" + at + "'");
            }
            int[] acc = need.computeIfAbsent(at, k -> new int[2]);
            acc[0] += memory.ecmpEntries(v);
            acc[1] += memory.tunnelEntries(v);
            host += memory.hostEntries(v);
        }
        for (Map.Entry<String, int[]> e : need.entrySet()) {
            int[] cap = {memory.ecmpCapacity(e.getKey()), memory.tunnelCapacity(e.getKey())};
            for (int i = 0; i < 2; i++) {
                if (e.getValue()[i] > cap[i]) {
                    throw new PlanningException("target assignment needs " + e.getValue()[i] + " "
                            + PlanState.TABLES[i] + " entries on switch " + e.getKey() + ", which has " + cap[i]);
                }
            }
        }
        if (host > memory.hostBudget()) {
            throw new PlanningException("target assignment needs " + host
                    + " host-table entries on every switch, the fabric has " + memory.hostBudget());
        }
    }

    /** Traffic of VIPs on an HMux before and after but on the SMuxes alone now: the stepping-stone load. */
    static double transientBps(PlanState st, MigrationProblem p, Set<String> detourable) {
        double sum = 0;
        for (String v : detourable) {
            PlanState.VipState vs = st.vip(v);
            if (vs != null && vs.hmuxes.isEmpty()) {
                sum += p.traffic(v);
            }
        }
        return sum;
    }

    /** VIPs on an HMux in both the installed and the target assignment (those a detour costs). */
    static Set<String> detourable(MigrationProblem p) {
        Set<String> out = new LinkedHashSet<>();
        Set<String> target = new java.util.HashSet<>();
        p.targetVips.vips.forEach(v -> target.add(v.vip));
        for (Vip v : p.installedVips.vips) {
            if (target.contains(v.vip) && !Assignment.SMUX.equals(p.from.placementOf(v.vip))
                    && !Assignment.SMUX.equals(p.to.placementOf(v.vip))) {
                out.add(v.vip);
            }
        }
        return out;
    }

    /** One planning run; keeps the replay state and the waves built so far. */
    private final class Run {
        private final MigrationProblem p;
        private final PlanState st;
        private final Map<String, VipConfig> target = new LinkedHashMap<>();
        private final Set<String> detourable;
        private final List<MigrationWave> waves = new ArrayList<>();
        /** VIPs not yet in their final state. */
        private final Set<String> active = new LinkedHashSet<>();

        Run(MigrationProblem p, MemoryModel memory) {
            this.p = p;
            requireTargetFits(p, memory);
            this.st = PlanState.installed(memory, p.installedVips, p.from, p.targetVips);
            p.targetVips.vips.forEach(v -> target.put(v.vip, st.target(v.vip)));
            this.detourable = detourable(p);
            for (Vip v : p.installedVips.vips) {
                active.add(v.vip);
            }
            active.addAll(target.keySet());
        }

        MigrationPlan plan() {
            // New VIPs go to the SMuxes first (§3.5.2); the rounds then place them.
            List<MigrationStep> news = new ArrayList<>();
            for (String v : target.keySet()) {
                if (st.vip(v) == null) {
                    news.add(MigrationStep.announceOnSmux(v));
                }
            }
            emit("config", news);
            refreshActive();
            int rounds = 0;
            while (!active.isEmpty()) {
                int before = stepCount();
                withdrawWave();
                configWaves();
                announceWave();
                refreshActive();
                if (stepCount() == before) {
                    throw new PlanningException("no safe step is left for VIPs " + sample(active)
                            + (options.maxTransientSmuxBps < PlannerOptions.UNBOUNDED
                                    ? String.format(java.util.Locale.ROOT, " within the transient SMux bound of %.3f Gbit/s",
                                            options.maxTransientSmuxBps / 1e9) : ""));
                }
                if (++rounds > 4 * (target.size() + p.installedVips.vips.size()) + 8) {
                    throw new IllegalStateException("migration planner did not converge");
                }
            }
            return new MigrationPlan(waves);
        }

        private void withdrawWave() {
            List<MigrationStep> steps = new ArrayList<>();
            List<String> wantDetour = new ArrayList<>();
            for (String v : active) {
                PlanState.VipState vs = st.vip(v);
                if (vs == null || vs.hmuxes.isEmpty()) {
                    continue;
                }
                VipConfig goal = target.get(v);
                String to = goal == null ? Assignment.SMUX : p.to.placementOf(v);
                boolean configChanges = goal != null && !vs.config.sameDips(goal);
                if (goal == null || Assignment.SMUX.equals(to)) {
                    vs.hmuxes.forEach(h -> steps.add(MigrationStep.withdrawFromHmux(v, h)));
                } else if (configChanges || (!options.makeBeforeBreak && !vs.hmuxes.contains(to))) {
                    wantDetour.add(v);
                } else if (vs.hmuxes.contains(to)) {
                    // Make-before-break done last round: now break.
                    vs.hmuxes.stream().filter(h -> !h.equals(to))
                            .forEach(h -> steps.add(MigrationStep.withdrawFromHmux(v, h)));
                }
            }
            applyAll(steps);
            double transit = transientBps(st, p, detourable);
            wantDetour.sort(byTrafficDesc());
            List<MigrationStep> detours = new ArrayList<>();
            for (String v : wantDetour) {
                transit = detour(v, transit, detours);
            }
            applyAll(detours);
            steps.addAll(detours);
            if (!anyAnnounceFits()) {
                List<MigrationStep> unblock = unblockDeadlock(transit);
                applyAll(unblock);
                steps.addAll(unblock);
            }
            emitApplied("withdraw", steps);
        }

        /** Withdraws {@code v} from all its HMuxes if the transient bound allows; returns the new transit. */
        private double detour(String v, double transit, List<MigrationStep> out) {
            boolean costs = detourable.contains(v);
            double t = costs ? p.traffic(v) : 0;
            if (costs && transit + t > options.maxTransientSmuxBps + EPS) {
                if (transit <= EPS) {
                    throw new PlanningException(String.format(java.util.Locale.ROOT, "VIP %s carries %.3f Gbit/s, more "
                            + "than the transient SMux bound of %.3f Gbit/s on its own", v, t / 1e9,
                            options.maxTransientSmuxBps / 1e9));
                }
                return transit;
            }
            st.vip(v).hmuxes.forEach(h -> out.add(MigrationStep.withdrawFromHmux(v, h)));
            return transit + t;
        }

        /** VIPs that want an HMux they are not on yet, and could take it once their pools are final. */
        private List<String> announceCandidates() {
            List<String> out = new ArrayList<>();
            for (String v : active) {
                PlanState.VipState vs = st.vip(v);
                VipConfig goal = target.get(v);
                if (vs == null || goal == null) {
                    continue;
                }
                String to = p.to.placementOf(v);
                if (Assignment.SMUX.equals(to) || vs.hmuxes.contains(to)) {
                    continue;
                }
                if (!vs.hmuxes.isEmpty() && (!options.makeBeforeBreak || !vs.config.sameDips(goal))) {
                    continue;
                }
                out.add(v);
            }
            return out;
        }

        private boolean anyAnnounceFits() {
            List<String> cands = announceCandidates();
            if (cands.isEmpty()) {
                return true;
            }
            for (String v : cands) {
                if (st.overflow(target.get(v), !st.vip(v).hmuxes.isEmpty(), p.to.placementOf(v), null) == null) {
                    return true;
                }
            }
            return false;
        }

        /**
         * Fig. 3.4: nothing that waits for an HMux fits. For each blocked switch, withdraw VIPs
         * that are leaving it (fewest bytes first) until its first waiting VIP fits; the SMuxes
         * carry them meanwhile.
         */
        private List<MigrationStep> unblockDeadlock(double transit) {
            List<String> waiting = announceCandidates();
            waiting.sort(byPriority());
            Map<String, String> firstWaiting = new LinkedHashMap<>();
            for (String v : waiting) {
                firstWaiting.putIfAbsent(p.to.placementOf(v), v);
            }
            Map<String, List<String>> leaving = new HashMap<>();
            for (String v : active) {
                PlanState.VipState vs = st.vip(v);
                if (vs == null || target.get(v) == null) {
                    continue;
                }
                String to = p.to.placementOf(v);
                for (String h : vs.hmuxes) {
                    if (!h.equals(to) && !vs.hmuxes.contains(to)) {
                        leaving.computeIfAbsent(h, k -> new ArrayList<>()).add(v);
                    }
                }
            }
            List<MigrationStep> out = new ArrayList<>();
            Set<String> withdrawn = new java.util.HashSet<>();
            Map<String, int[]> freed = new HashMap<>();
            for (Map.Entry<String, String> e : firstWaiting.entrySet()) {
                String sw = e.getKey();
                List<String> goers = leaving.getOrDefault(sw, List.of());
                if (anyCanLeave(goers, freed)) {
                    continue; // a VIP leaving sw can now make-before-break: sw frees up next round
                }
                VipConfig need = target.get(e.getValue());
                goers.sort(Comparator.comparingDouble(p::traffic).thenComparing(v -> v));
                for (String v : goers) {
                    if (fitsAfterFreeing(need, sw, freed.get(sw))) {
                        break;
                    }
                    if (withdrawn.contains(v)) {
                        continue;
                    }
                    List<MigrationStep> steps = new ArrayList<>();
                    double after = detour(v, transit, steps);
                    if (steps.isEmpty()) {
                        continue; // the bound holds it back this round
                    }
                    transit = after;
                    withdrawn.add(v);
                    out.addAll(steps);
                    int[] d = st.need(st.vip(v).config);
                    int[] f = freed.computeIfAbsent(sw, k -> new int[2]);
                    f[0] += d[0];
                    f[1] += d[1];
                }
            }
            return out;
        }

        /** Whether one of {@code goers} fits at its target once {@code freed} is released. */
        private boolean anyCanLeave(List<String> goers, Map<String, int[]> freed) {
            for (String v : goers) {
                String to = p.to.placementOf(v);
                if (freed.containsKey(to) && st.vip(v).config.sameDips(target.get(v))
                        && fitsAfterFreeing(target.get(v), to, freed.get(to))) {
                    return true;
                }
            }
            return false;
        }

        private boolean fitsAfterFreeing(VipConfig c, String sw, int[] freed) {
            int[] need = st.need(c);
            int[] free = st.free(sw);
            for (int i = 0; i < 2; i++) {
                if (need[i] > free[i] + (freed == null ? 0 : freed[i])) {
                    return false;
                }
            }
            return true;
        }

        private void configWaves() {
            List<MigrationStep> addNew = new ArrayList<>();
            List<MigrationStep> remove = new ArrayList<>();
            List<MigrationStep> addChanged = new ArrayList<>();
            for (String v : active) {
                PlanState.VipState vs = st.vip(v);
                if (vs == null || !vs.hmuxes.isEmpty()) {
                    continue;
                }
                VipConfig goal = target.get(v);
                if (goal == null) {
                    remove.add(MigrationStep.withdrawFromSmux(v));
                    continue;
                }
                if (vs.config.sameDips(goal)) {
                    continue;
                }
                // Adds before removes so that no service is left without a DIP on the SMuxes;
                // a changed DIP (weight, endpoint) is removed, then added back.
                VipEdits edits = VipEdits.between(vs.config.toVip(), goal.toVip());
                for (VipEdits.DipEdit e : edits.added()) {
                    (e.changed ? addChanged : addNew).add(MigrationStep.dipStep(StepAction.ADD_DIP, v, e.service, e.dip));
                }
                for (VipEdits.DipEdit e : edits.removed()) {
                    remove.add(MigrationStep.dipStep(StepAction.REMOVE_DIP, v, e.service, e.dip));
                }
            }
            emit("config", addNew);
            emit("config", remove);
            emit("config", addChanged);
        }

        private void announceWave() {
            List<String> cands = announceCandidates();
            cands.sort(byPriority());
            PlanState.Reservation reserved = new PlanState.Reservation();
            List<MigrationStep> steps = new ArrayList<>();
            for (String v : cands) {
                PlanState.VipState vs = st.vip(v);
                if (!vs.config.sameDips(target.get(v))) {
                    continue;
                }
                String to = p.to.placementOf(v);
                boolean onAny = !vs.hmuxes.isEmpty();
                if (st.overflow(vs.config, onAny, to, reserved) == null) {
                    reserved.add(st, vs.config, onAny, to);
                    steps.add(MigrationStep.announceOnHmux(v, to));
                }
            }
            emit("announce", steps);
        }

        /** VIPs in transit through the SMuxes first (to end their detour), then by traffic. */
        private Comparator<String> byPriority() {
            return Comparator.comparing((String v) -> {
                PlanState.VipState vs = st.vip(v);
                return !(detourable.contains(v) && vs.hmuxes.isEmpty());
            }).thenComparing(byTrafficDesc());
        }

        private Comparator<String> byTrafficDesc() {
            return Comparator.comparingDouble((String v) -> -p.traffic(v)).thenComparing(v -> v);
        }

        private void applyAll(List<MigrationStep> steps) {
            for (MigrationStep s : steps) {
                String why = st.apply(s);
                if (why != null) {
                    throw new IllegalStateException("planner produced an unsafe step " + s + ": " + why);
                }
            }
        }

        /** Applies {@code steps} as one wave and records it. */
        private void emit(String phase, List<MigrationStep> steps) {
            if (steps.isEmpty()) {
                return;
            }
            double before = transientBps(st, p, detourable);
            applyAll(steps);
            double after = transientBps(st, p, detourable);
            waves.add(new MigrationWave(waves.size(), phase, Math.max(before, after), steps));
        }

        /** Records a wave whose steps were applied already (withdraws only raise the transient). */
        private void emitApplied(String phase, List<MigrationStep> steps) {
            if (steps.isEmpty()) {
                return;
            }
            waves.add(new MigrationWave(waves.size(), phase, transientBps(st, p, detourable), steps));
        }

        private int stepCount() {
            int n = 0;
            for (MigrationWave w : waves) {
                n += w.steps.size();
            }
            return n;
        }

        /** Drops VIPs that reached their final state from {@link #active}. */
        private void refreshActive() {
            active.removeIf(v -> {
                PlanState.VipState vs = st.vip(v);
                VipConfig goal = target.get(v);
                if (goal == null) {
                    return vs == null;
                }
                if (vs == null || !vs.config.sameDips(goal)) {
                    return false;
                }
                String to = p.to.placementOf(v);
                return Assignment.SMUX.equals(to) ? vs.hmuxes.isEmpty()
                        : vs.hmuxes.size() == 1 && vs.hmuxes.contains(to);
            });
        }
    }

    private static String sample(Set<String> vips) {
        List<String> first = new ArrayList<>();
        for (String v : vips) {
            if (first.size() == 5) {
                first.add("...");
                break;
            }
            first.add(v);
        }
        return first.toString();
    }
}
