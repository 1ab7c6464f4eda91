package org.hybridlb.solver.migration;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.MigrationStep;
import org.hybridlb.solver.model.ServiceKey;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipEdits;
import org.hybridlb.solver.model.VipSet;

/**
 * What is installed while a migration runs: every VIP's DIP pools, whether the SMuxes serve it,
 * the HMux switches announcing it, and the table entries in use on every switch. Both the
 * planner (to build waves) and the {@link PlanChecker} (to replay them) drive it through
 * {@link #apply}, which refuses any step that is unsafe and says why.
 */
final class PlanState {
    /** One VIP as installed. */
    static final class VipState {
        VipConfig config;
        boolean onSmux;
        final Set<String> hmuxes = new LinkedHashSet<>();

        VipState(VipConfig config) {
            this.config = config;
        }
    }

    static final String[] TABLES = {"ecmp", "tunnel", "host"};

    private final MemoryModel memory;
    /** ECMP and tunnel entries in use per switch. */
    private final Map<String, int[]> used = new HashMap<>();
    /** Host-table entries in use on every switch. */
    private int hostUsed;
    private final Map<String, VipState> vips = new LinkedHashMap<>();
    /** Configs a VIP gets when announced on the SMuxes: last seen (for rollbacks), else the target. */
    private final Map<String, VipConfig> catalogue = new HashMap<>();
    /** Target configs, so that a VIP whose DIPs reach them shares the object (and its cached entries). */
    private final Map<String, VipConfig> targets = new HashMap<>();

    private PlanState(MemoryModel memory) {
        this.memory = memory;
    }

    /**
     * The installed state: every installed VIP on the SMuxes (they announce all VIPs as the
     * backstop, §3.3.3) and on the HMux {@code from} names. {@code target} VIPs fill the
     * catalogue so that announce-on-smux knows a new VIP's pools.
     */
    static PlanState installed(MemoryModel memory, VipSet installed, Assignment from, VipSet target) {
        PlanState st = new PlanState(memory);
        for (Vip v : target.vips) {
            VipConfig c = VipConfig.of(v);
            st.catalogue.put(v.vip, c);
            st.targets.put(v.vip, c);
        }
        for (Vip v : installed.vips) {
            VipConfig same = st.targets.get(v.vip);
            // The same Vip object in both configurations shares one config (no diff needed).
            VipState vs = new VipState(same != null && same.toVip() == v ? same : VipConfig.of(v));
            vs.onSmux = true;
            st.vips.put(v.vip, vs);
            String at = from.placementOf(v.vip);
            if (!Assignment.SMUX.equals(at)) {
                if (!memory.hasSwitch(at)) {
                    throw new IllegalArgumentException("installed assignment places VIP " + v.vip
                            + " on unknown switch '" + at + "'");
                }
                st.hostUsed += memory.hostEntries(vs.config.toVip());
                vs.hmuxes.add(at);
                st.add(at, vs.config, 1);
            }
        }
        return st;
    }

    /** The target configuration of a VIP, or null when the target removes it. */
    VipConfig target(String vip) {
        return targets.get(vip);
    }

    VipState vip(String vip) {
        return vips.get(vip);
    }

    Map<String, VipState> vips() {
        return Collections.unmodifiableMap(vips);
    }

    boolean hasSwitch(String id) {
        return memory.hasSwitch(id);
    }

    /** {ecmp, tunnel, host} entries of a configuration. */
    int[] need(VipConfig c) {
        Vip v = c.toVip();
        return new int[] {memory.ecmpEntries(v), memory.tunnelEntries(v), memory.hostEntries(v)};
    }

    /** Entries announced on HMuxes but not yet in use, while a wave is being built or checked. */
    static final class Reservation {
        final Map<String, int[]> perSwitch = new HashMap<>();
        int host;
        final Set<String> hostTakenBy = new java.util.HashSet<>();

        void add(PlanState st, VipConfig c, boolean onAnyHmux, String switchId) {
            int[] n = st.need(c);
            int[] r = perSwitch.computeIfAbsent(switchId, k -> new int[2]);
            r[0] += n[0];
            r[1] += n[1];
            if (!onAnyHmux && hostTakenBy.add(c.vip)) {
                host += n[2];
            }
        }
    }

    /**
     * Why announcing the VIP ({@code vs}) on {@code switchId} on top of {@code r} would overflow a
     * table ("ecmp table of s1 (90 in use + 20 > 100)"), or null when it fits.
     */
    String overflow(VipConfig c, boolean onAnyHmux, String switchId, Reservation r) {
        int[] n = need(c);
        int[] u = used.computeIfAbsent(switchId, k -> new int[2]);
        int[] res = r == null ? new int[2] : r.perSwitch.getOrDefault(switchId, new int[2]);
        int[] cap = {memory.ecmpCapacity(switchId), memory.tunnelCapacity(switchId)};
        for (int i = 0; i < 2; i++) {
            if (u[i] + res[i] + n[i] > cap[i]) {
                return TABLES[i] + " table of " + switchId + " (" + (u[i] + res[i]) + " in use + " + n[i]
                        + " > " + cap[i] + ")";
            }
        }
        boolean takesHost = !onAnyHmux && (r == null || !r.hostTakenBy.contains(c.vip));
        int resHost = r == null ? 0 : r.host;
        if (takesHost && hostUsed + resHost + n[2] > memory.hostBudget()) {
            return "host table of every switch (" + (hostUsed + resHost) + " in use + " + n[2] + " > "
                    + memory.hostBudget() + ")";
        }
        return null;
    }

    /** Free {ecmp, tunnel} entries of a switch. */
    int[] free(String switchId) {
        int[] u = used.computeIfAbsent(switchId, k -> new int[2]);
        return new int[] {memory.ecmpCapacity(switchId) - u[0], memory.tunnelCapacity(switchId) - u[1]};
    }

    /** Applies {@code step}; returns null, or why it is unsafe (and then changes nothing). */
    String apply(MigrationStep step) {
        VipState vs = vips.get(step.vip);
        switch (step.action) {
            case ANNOUNCE_ON_SMUX: {
                if (vs != null) {
                    return "VIP " + step.vip + " is already on the SMuxes";
                }
                VipConfig c = catalogue.get(step.vip);
                if (c == null) {
                    return "VIP " + step.vip + " has no configuration (not in the installed or target VIPs)";
                }
                vs = new VipState(c);
                vs.onSmux = true;
                vips.put(step.vip, vs);
                return null;
            }
            case WITHDRAW_FROM_SMUX: {
                if (vs == null) {
                    return "VIP " + step.vip + " is not installed";
                }
                if (!vs.hmuxes.isEmpty()) {
                    return "VIP " + step.vip + " is still announced on HMux " + vs.hmuxes
                            + ": the SMuxes must stay its backstop";
                }
                vips.remove(step.vip);
                catalogue.put(step.vip, vs.config);
                return null;
            }
            case ANNOUNCE_ON_HMUX: {
                if (vs == null) {
                    return "VIP " + step.vip + " is not installed; announce it on the SMuxes first";
                }
                if (!memory.hasSwitch(step.switchId)) {
                    return "unknown switch '" + step.switchId + "'";
                }
                if (vs.hmuxes.contains(step.switchId)) {
                    return "VIP " + step.vip + " is already announced on " + step.switchId;
                }
                String over = overflow(vs.config, !vs.hmuxes.isEmpty(), step.switchId, null);
                if (over != null) {
                    return "announcing VIP " + step.vip + " on " + step.switchId + " overflows the " + over;
                }
                if (vs.hmuxes.isEmpty()) {
                    hostUsed += need(vs.config)[2];
                }
                vs.hmuxes.add(step.switchId);
                add(step.switchId, vs.config, 1);
                return null;
            }
            case WITHDRAW_FROM_HMUX: {
                if (vs == null || !vs.hmuxes.contains(step.switchId)) {
                    return "VIP " + step.vip + " is not announced on " + step.switchId;
                }
                vs.hmuxes.remove(step.switchId);
                add(step.switchId, vs.config, -1);
                if (vs.hmuxes.isEmpty()) {
                    hostUsed -= need(vs.config)[2];
                }
                return null;
            }
            case ADD_DIP:
            case REMOVE_DIP: {
                if (vs == null) {
                    return "VIP " + step.vip + " is not installed";
                }
                if (!vs.hmuxes.isEmpty()) {
                    // An HMux only hashes; changing its pool would remap live connections (§3.5.2).
                    return "VIP " + step.vip + " is on HMux " + vs.hmuxes
                            + ": DIPs change only while the SMuxes alone serve it";
                }
                ServiceKey service = step.serviceKey();
                Dip present = vs.config.dip(service, step.dip);
                if (step.action == org.hybridlb.solver.model.StepAction.ADD_DIP) {
                    if (present != null) {
                        return "VIP " + step.vip + " " + service + " already has DIP " + step.dip;
                    }
                    vs.config = canonical(vs.config.withDip(service, step.dipValue()));
                } else {
                    if (present == null) {
                        return "VIP " + step.vip + " " + service + " has no DIP " + step.dip;
                    }
                    if (!VipEdits.sameDip(present, step.dipValue())) {
                        return "VIP " + step.vip + " " + service + " DIP " + step.dip
                                + " has another weight or host than the step says";
                    }
                    vs.config = canonical(vs.config.withoutDip(service, step.dip));
                }
                return null;
            }
            default:
                throw new AssertionError(step.action);
        }
    }

    private VipConfig canonical(VipConfig c) {
        VipConfig t = targets.get(c.vip);
        return t != null && t.sameDips(c) ? t : c;
    }

    private void add(String switchId, VipConfig c, int sign) {
        int[] n = need(c);
        int[] u = used.computeIfAbsent(switchId, k -> new int[2]);
        u[0] += sign * n[0];
        u[1] += sign * n[1];
    }

    /** {ecmp, tunnel} entries in use on a switch. */
    int[] used(String switchId) {
        return used.computeIfAbsent(switchId, k -> new int[2]).clone();
    }

    int hostUsed() {
        return hostUsed;
    }

    int hostBudget() {
        return memory.hostBudget();
    }

    int ecmpCapacity(String switchId) {
        return memory.ecmpCapacity(switchId);
    }

    int tunnelCapacity(String switchId) {
        return memory.tunnelCapacity(switchId);
    }

    /** Differences between this state and the target, empty when they match. */
    List<String> differencesFrom(VipSet target, Assignment to) {
        List<String> out = new ArrayList<>();
        Set<String> wanted = new LinkedHashSet<>();
        for (Vip v : target.vips) {
            wanted.add(v.vip);
            VipState vs = vips.get(v.vip);
            if (vs == null) {
                out.add("VIP " + v.vip + " is not installed at the end");
                continue;
            }
            String at = to.placementOf(v.vip);
            Set<String> expected = Assignment.SMUX.equals(at) ? Set.of() : Set.of(at);
            if (!vs.hmuxes.equals(expected)) {
                out.add("VIP " + v.vip + " ends on HMux " + vs.hmuxes + ", target " + at);
            }
            if (!vs.config.sameDips(VipConfig.of(v))) {
                out.add("VIP " + v.vip + " ends with other DIPs than the target configuration");
            }
        }
        for (String v : vips.keySet()) {
            if (!wanted.contains(v)) {
                out.add("VIP " + v + " is still installed though the target removes it");
            }
        }
        return out;
    }
}
