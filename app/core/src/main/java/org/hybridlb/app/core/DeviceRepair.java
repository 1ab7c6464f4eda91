package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchReading;

/**
 * Makes the devices equal to the installed state, touching only what differs (anti-entropy after a
 * restart, a crash in a wave, a device that lost entries), and the two failovers that cannot wait
 * for a reconcile: withdrawing a failed HMux's routes and dropping a lost SMux from the aggregate
 * groups. Talks to the switches only through {@link SwitchSync}. Loop thread only.
 */
final class DeviceRepair {
    private static final Logger LOG = Logger.getLogger(DeviceRepair.class.getName());

    private final SwitchSync switches;
    private final StateKeeper keeper;
    private final FabricInputs inputs;
    private final SmuxTablePublisher tables;
    private final Status status;

    DeviceRepair(SwitchSync switches, StateKeeper keeper, FabricInputs inputs, SmuxTablePublisher tables,
                 Status status) {
        this.switches = switches;
        this.keeper = keeper;
        this.inputs = inputs;
        this.tables = tables;
        this.status = status;
    }

    /**
     * Reads every live switch; fixes their entries and routes, then every live SMux, then the
     * aggregates (SMuxes know a VIP before it is routed to them).
     */
    void repair() {
        Map<String, SwitchReading> read;
        try {
            read = switches.read(switches.liveSwitches());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "reading the switches", e);
            status.error("reading the switches: " + e.getMessage());
            read = Map.of();
        }
        read.forEach((sw, r) -> {
            if (!r.ok()) {
                LOG.warning("repairing switch " + sw + ": cannot read it: " + r.failure);
                status.error("repairing switch " + sw + ": " + r.failure);
            } else if (!r.inconsistent.isEmpty()) {
                LOG.warning("switch " + sw + " holds items inconsistently, rewriting them: " + r.inconsistent);
            }
        });
        Map<String, SwitchDelta> deltas = switches.deltas(read);
        Map<String, SwitchDelta> entries = new LinkedHashMap<>();
        Map<String, SwitchDelta> aggregates = new LinkedHashMap<>();
        deltas.forEach((sw, d) -> {
            SwitchDelta e = d.withoutAggregates();
            SwitchDelta a = d.aggregatesOnly();
            if (!e.isEmpty()) {
                entries.put(sw, e);
            }
            if (!a.isEmpty()) {
                aggregates.put(sw, a);
            }
        });
        fix(entries, "repairing switches");
        tables.repair();
        fix(aggregates, "repairing SMux groups");
    }

    private void fix(Map<String, SwitchDelta> deltas, String what) {
        if (deltas.isEmpty()) {
            return;
        }
        deltas.forEach((sw, d) -> LOG.info(what + ": " + sw + " " + d));
        try {
            switches.apply(deltas);
            deltas.values().forEach(d -> status.repairs += d.size());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, what, e);
            status.error(what + ": " + e.getMessage());
        }
    }

    /** Each aggregate of an installed VIP routed to exactly the live SMuxes on every live switch; none while none is live. */
    void repairSmuxGroups() {
        try {
            switches.push(SwitchSync.Part.AGGREGATES);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "routing the aggregates to the SMuxes", e);
            status.error("routing the aggregates to the SMuxes: " + e.getMessage());
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
        long t0 = System.nanoTime();
        try {
            Map<String, SwitchDelta> sent = switches.push(SwitchSync.Part.AGGREGATES);
            LOG.info(String.format(Locale.ROOT, "SMux lost: aggregate groups now over %s on %d switches (%.1f ms)",
                    live, sent.size(), (System.nanoTime() - t0) / 1e6));
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
                switches.withdraw(sw, vips);
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
        boolean changed = false;
        for (List<String> at : keeper.state().hmuxes.values()) {
            while (at.size() > 1) {
                at.remove(at.size() - 1);
                changed = true;
            }
        }
        if (changed) {
            try {
                reinstall();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "removing VIPs from their second HMux", e);
                status.error("removing VIPs from their second HMux: " + e.getMessage());
            }
        }
    }

    /** The switches' entries and routes brought in line with the installed state (a pool changed in place); throws on failure. */
    void reinstall() {
        switches.push(SwitchSync.Part.ENTRIES_AND_ROUTES);
    }
}
