package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.HmuxProgrammer;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Vip;

/**
 * Makes the devices equal to the installed state, touching only what differs (anti-entropy after a
 * restart, a crash in a wave, a device that lost entries), and the two failovers that cannot wait
 * for a reconcile: withdrawing a failed HMux's routes and dropping a lost SMux from the aggregate
 * groups. Talks to the switches only through the {@link HmuxProgrammer} port. Loop thread only.
 */
final class DeviceRepair {
    private static final Logger LOG = Logger.getLogger(DeviceRepair.class.getName());

    private final HmuxProgrammer hmux;
    private final StateKeeper keeper;
    private final BucketIds ids;
    private final FabricInputs inputs;
    private final SmuxTablePublisher tables;
    private final Status status;

    DeviceRepair(HmuxProgrammer hmux, StateKeeper keeper, BucketIds ids, FabricInputs inputs,
                 SmuxTablePublisher tables, Status status) {
        this.hmux = hmux;
        this.keeper = keeper;
        this.ids = ids;
        this.inputs = inputs;
        this.tables = tables;
        this.status = status;
    }

    /** Every live switch, every live SMux, then the aggregate groups (SMuxes know a VIP before it is routed to them). */
    void repair() {
        ControllerState state = keeper.state();
        for (Switch s : inputs.topology().switches) {
            if (inputs.down.contains(s.id)) {
                continue;
            }
            Map<String, VipEntry> expected = new LinkedHashMap<>();
            state.hmuxes.forEach((v, at) -> {
                if (at.contains(s.id)) {
                    expected.put(v, ids.entry(state.installedVips.get(v)));
                }
            });
            try {
                Map<String, VipEntry> actual = hmux.installedOn(s.id);
                for (String v : actual.keySet()) {
                    if (!expected.containsKey(v)) {
                        hmux.remove(s.id, v);
                        status.repairs++;
                    }
                }
                for (Map.Entry<String, VipEntry> e : expected.entrySet()) {
                    VipEntry have = actual.get(e.getKey());
                    if (have == null || !e.getValue().equals(have.normalized())) {
                        hmux.install(s.id, e.getValue());
                        status.repairs++;
                    }
                }
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "repairing switch " + s.id, e);
                status.error("repairing switch " + s.id + ": " + e.getMessage());
            }
        }
        tables.repair();
        repairSmuxGroups();
    }

    /** Each aggregate of an installed VIP routed to exactly the live SMuxes; no route at all while none is live. */
    void repairSmuxGroups() {
        Map<String, Smux> smuxes = inputs.smuxesById();
        Map<String, Set<String>> expected = new TreeMap<>();
        List<String> live = inputs.liveIds();
        if (!live.isEmpty()) { // an empty group would black-hole the aggregate
            for (Vip v : keeper.state().installedVips.values()) {
                expected.computeIfAbsent(v.aggregate, a -> new LinkedHashSet<>(live));
            }
        }
        try {
            Map<String, Set<String>> actual = hmux.smuxGroups();
            for (Map.Entry<String, Set<String>> e : expected.entrySet()) {
                if (!e.getValue().equals(actual.get(e.getKey()))) {
                    List<Smux> members = new ArrayList<>();
                    e.getValue().forEach(id -> members.add(smuxes.get(id)));
                    hmux.setSmuxGroup(e.getKey(), members);
                    status.repairs++;
                }
            }
            for (String agg : actual.keySet()) {
                if (!expected.containsKey(agg)) {
                    hmux.setSmuxGroup(agg, List.of());
                    status.repairs++;
                }
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "repairing SMux groups", e);
            status.error("repairing SMux groups: " + e.getMessage());
        }
    }

    /**
     * A lost SMux leaves every aggregate group at once, as a failed HMux's routes are withdrawn at
     * once: the flows hashed to it go to the others (which pick the same DIPs) without waiting for
     * the reconcile to read every device back. With no SMux left, the reconcile decides.
     */
    void dropLostSmuxes() {
        List<String> live = inputs.liveIds();
        if (live.isEmpty()) {
            return;
        }
        Map<String, Smux> byId = inputs.smuxesById();
        List<Smux> members = new ArrayList<>();
        live.forEach(id -> members.add(byId.get(id)));
        Map<String, List<Smux>> groups = new TreeMap<>();
        keeper.state().installedVips.values().forEach(v -> groups.put(v.aggregate, members));
        long t0 = System.nanoTime();
        try {
            hmux.setSmuxGroups(groups);
            LOG.info(String.format(Locale.ROOT, "SMux lost: %d aggregate groups now over %s (%.1f ms)",
                    groups.size(), live, (System.nanoTime() - t0) / 1e6));
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "dropping lost SMuxes from the aggregate groups", e);
            status.error("dropping lost SMuxes from the aggregate groups: " + e.getMessage());
        }
    }

    /** HMux failure (§3.5.1): the {@code /32} routes towards each down switch go, so the aggregate (the SMuxes) takes them. */
    void withdrawFromDownSwitches() {
        ControllerState state = keeper.state();
        for (String sw : inputs.down) {
            List<String> vips = new ArrayList<>();
            state.hmuxes.forEach((v, at) -> {
                if (at.contains(sw)) {
                    vips.add(v);
                }
            });
            if (vips.isEmpty()) {
                continue;
            }
            try {
                hmux.withdrawRoutes(sw, vips);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "withdrawing routes of failed switch " + sw, e);
                status.error("withdrawing routes of failed switch " + sw + ": " + e.getMessage());
            }
            for (String v : vips) {
                state.hmuxes.get(v).remove(sw);
            }
            status.failovers += vips.size();
        }
        state.hmuxes.values().removeIf(List::isEmpty);
    }

    /** A VIP left on two HMuxes by an abandoned make-before-break keeps its first one. */
    void settleMultiHomed() {
        for (Map.Entry<String, List<String>> e : keeper.state().hmuxes.entrySet()) {
            while (e.getValue().size() > 1) {
                String sw = e.getValue().remove(e.getValue().size() - 1);
                try {
                    hmux.remove(sw, e.getKey());
                } catch (RuntimeException ex) {
                    status.error("removing VIP " + e.getKey() + " from " + sw + ": " + ex.getMessage());
                    e.getValue().add(sw);
                    break;
                }
            }
        }
    }

    /** The installed entries of a VIP on its HMuxes replaced (its pool changed in place). */
    void reinstall(String vip) {
        ControllerState state = keeper.state();
        for (String sw : state.hmuxes.getOrDefault(vip, List.of())) {
            hmux.install(sw, ids.entry(state.installedVips.get(vip)));
        }
    }
}
