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
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.Vip;
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

    private final SwitchMemory memory;
    private final Map<String, Switch> switches = new HashMap<>();
    private final Map<String, int[]> used = new HashMap<>();
    private final Map<String, VipState> vips = new LinkedHashMap<>();
    /** Configs a VIP gets when announced on the SMuxes: last seen (for rollbacks), else the target. */
    private final Map<String, VipConfig> catalogue = new HashMap<>();

    private PlanState(Topology topology, SwitchMemory memory) {
        this.memory = memory;
        for (Switch s : topology.switches) {
            switches.put(s.id, s);
            used.put(s.id, new int[SwitchMemory.TABLES.length]);
        }
    }

    /**
     * The installed state: every installed VIP on the SMuxes (they announce all VIPs as the
     * backstop, §3.3.3) and on the HMux {@code from} names. {@code target} VIPs fill the
     * catalogue so that announce-on-smux knows a new VIP's pools.
     */
    static PlanState installed(Topology topology, SwitchMemory memory, VipSet installed, Assignment from,
                               VipSet target) {
        PlanState st = new PlanState(topology, memory);
        for (Vip v : target.vips) {
            st.catalogue.put(v.vip, VipConfig.of(v));
        }
        for (Vip v : installed.vips) {
            VipState vs = new VipState(VipConfig.of(v));
            vs.onSmux = true;
            st.vips.put(v.vip, vs);
            String at = from.placementOf(v.vip);
            if (!Assignment.SMUX.equals(at)) {
                vs.hmuxes.add(at);
                st.add(at, st.demand(vs.config, at), 1);
            }
        }
        return st;
    }

    VipState vip(String vip) {
        return vips.get(vip);
    }

    Map<String, VipState> vips() {
        return Collections.unmodifiableMap(vips);
    }

    Switch switchOf(String id) {
        return switches.get(id);
    }

    int[] demand(VipConfig c, String switchId) {
        return memory.demand(c.toVip(), switches.get(switchId));
    }

    int[] free(String switchId) {
        int[] cap = memory.capacity(switches.get(switchId));
        int[] u = used.get(switchId);
        int[] f = new int[cap.length];
        for (int i = 0; i < cap.length; i++) {
            f[i] = cap[i] - u[i];
        }
        return f;
    }

    /** Whether {@code c} fits in what is free on {@code switchId} after {@code reserved} more entries. */
    boolean fits(VipConfig c, String switchId, int[] reserved) {
        int[] need = demand(c, switchId);
        int[] f = free(switchId);
        for (int i = 0; i < f.length; i++) {
            if (need[i] + (reserved == null ? 0 : reserved[i]) > f[i]) {
                return false;
            }
        }
        return true;
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
                if (!switches.containsKey(step.switchId)) {
                    return "unknown switch '" + step.switchId + "'";
                }
                if (vs.hmuxes.contains(step.switchId)) {
                    return "VIP " + step.vip + " is already announced on " + step.switchId;
                }
                String over = overflow(vs.config, step.switchId);
                if (over != null) {
                    return "announcing VIP " + step.vip + " on " + step.switchId + " exceeds its " + over;
                }
                vs.hmuxes.add(step.switchId);
                add(step.switchId, demand(vs.config, step.switchId), 1);
                return null;
            }
            case WITHDRAW_FROM_HMUX: {
                if (vs == null || !vs.hmuxes.contains(step.switchId)) {
                    return "VIP " + step.vip + " is not announced on " + step.switchId;
                }
                vs.hmuxes.remove(step.switchId);
                add(step.switchId, demand(vs.config, step.switchId), -1);
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
                String service = step.serviceOrWhole();
                Dip present = vs.config.dip(service, step.dip);
                if (step.action == org.hybridlb.solver.model.StepAction.ADD_DIP) {
                    if (present != null) {
                        return "VIP " + step.vip + " " + service + " already has DIP " + step.dip;
                    }
                    vs.config = vs.config.withDip(service, step.dipValue());
                } else {
                    if (present == null) {
                        return "VIP " + step.vip + " " + service + " has no DIP " + step.dip;
                    }
                    if (!VipConfig.sameDip(present, step.dipValue())) {
                        return "VIP " + step.vip + " " + service + " DIP " + step.dip
                                + " has another weight or host than the step says";
                    }
                    vs.config = vs.config.withoutDip(service, step.dip);
                }
                return null;
            }
            default:
                throw new AssertionError(step.action);
        }
    }

    /** "ecmp table (4096 in use + 10 > 4100)" when {@code c} does not fit on the switch, else null. */
    private String overflow(VipConfig c, String switchId) {
        int[] need = demand(c, switchId);
        int[] cap = memory.capacity(switches.get(switchId));
        int[] u = used.get(switchId);
        for (int i = 0; i < need.length; i++) {
            if (u[i] + need[i] > cap[i]) {
                return SwitchMemory.TABLES[i] + " table (" + u[i] + " in use + " + need[i] + " > " + cap[i] + ")";
            }
        }
        return null;
    }

    private void add(String switchId, int[] d, int sign) {
        int[] u = used.get(switchId);
        for (int i = 0; i < d.length; i++) {
            u[i] += sign * d[i];
        }
    }

    int[] used(String switchId) {
        return used.get(switchId).clone();
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
