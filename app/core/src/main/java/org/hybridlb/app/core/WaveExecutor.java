package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.solver.model.MigrationStep;
import org.hybridlb.solver.model.StepAction;
import org.hybridlb.solver.model.Vip;

/**
 * Applies one migration wave: its steps change the installed state in memory, then the devices
 * follow (SMux tables first, they are the backstop of everything after; then the aggregates; then
 * the switches' entries and routes, in make-before-break phases: {@link DeltaPhases}), then the
 * touched devices are read back. Any error or difference throws; undoing is
 * the {@link MigrationRunner}'s job. Loop thread only.
 */
final class WaveExecutor {
    /** What one wave changes on the devices. */
    static final class Ops {
        boolean smux;
        /** (switch, VIP) pairs. */
        final Set<List<String>> removes = new LinkedHashSet<>();
        final Set<List<String>> installs = new LinkedHashSet<>();
        long smuxVersion = -1;
        /** The switches whose HMux entries the wave changed: read back after it. */
        final Set<String> touched = new LinkedHashSet<>();
    }

    private final SwitchSync switches;
    private final StateKeeper keeper;
    private final SmuxTablePublisher tables;

    WaveExecutor(SwitchSync switches, StateKeeper keeper, SmuxTablePublisher tables) {
        this.switches = switches;
        this.keeper = keeper;
        this.tables = tables;
    }

    /**
     * Runs {@code steps}: {@code catalogue} has the configuration of every VIP an announce may
     * need; {@code retired} collects the configurations of the VIPs the wave takes off the SMuxes
     * (a rollback announces them again).
     */
    void run(List<MigrationStep> steps, Map<String, Vip> catalogue, Map<String, Vip> retired) {
        Ops ops = apply(steps, catalogue, retired);
        execute(ops);
        verify(ops);
    }

    /** Applies the steps to the in-memory installed state and says what the devices need. */
    Ops apply(List<MigrationStep> steps, Map<String, Vip> catalogue, Map<String, Vip> retired) {
        ControllerState state = keeper.state();
        Ops ops = new Ops();
        for (MigrationStep s : steps) {
            switch (s.action) {
                case ANNOUNCE_ON_SMUX: {
                    Vip c = catalogue.containsKey(s.vip) ? catalogue.get(s.vip) : retired.get(s.vip);
                    if (c == null) {
                        throw new IllegalStateException("VIP " + s.vip + " has no configuration");
                    }
                    state.installedVips.put(s.vip, c);
                    ops.smux = true;
                    break;
                }
                case WITHDRAW_FROM_SMUX:
                    retired.put(s.vip, state.installedVips.get(s.vip));
                    state.installedVips.remove(s.vip);
                    state.hmuxes.remove(s.vip);
                    ops.smux = true;
                    break;
                case ANNOUNCE_ON_HMUX:
                    state.hmuxes.computeIfAbsent(s.vip, k -> new ArrayList<>()).add(s.switchId);
                    ops.installs.add(List.of(s.switchId, s.vip));
                    break;
                case WITHDRAW_FROM_HMUX: {
                    List<String> at = state.hmuxes.get(s.vip);
                    if (at != null) {
                        at.remove(s.switchId);
                        if (at.isEmpty()) {
                            state.hmuxes.remove(s.vip);
                        }
                    }
                    ops.removes.add(List.of(s.switchId, s.vip));
                    break;
                }
                case ADD_DIP:
                case REMOVE_DIP: {
                    Vip now = state.installedVips.get(s.vip);
                    if (now == null) {
                        throw new IllegalStateException("VIP " + s.vip + " is not installed");
                    }
                    state.installedVips.put(s.vip, s.action == StepAction.ADD_DIP
                            ? VipConfigs.withDip(now, s.serviceOrWhole(), s.dipValue())
                            : VipConfigs.withoutDip(now, s.serviceOrWhole(), s.dip));
                    ops.smux = true;
                    for (String sw : state.hmuxes.getOrDefault(s.vip, List.of())) {
                        ops.installs.add(List.of(sw, s.vip)); // never planned: an HMux only hashes
                    }
                    break;
                }
                default:
                    throw new AssertionError(s.action);
            }
        }
        return ops;
    }

    /**
     * SMuxes first (they are the backstop of everything that follows), then the aggregates, then
     * the switches' entries and routes: new entries, then routes from the HMux outwards (written)
     * or inwards (removed), then old entries ({@link DeltaPhases}), so a packet of a VIP in motion
     * meets an HMux that holds it or the aggregate, and no loop between a switch that dropped the
     * VIP's route and one that still routes it back.
     */
    void execute(Ops ops) {
        ops.removes.forEach(r -> ops.touched.add(r.get(0)));
        ops.installs.forEach(i -> ops.touched.add(i.get(0)));
        if (ops.smux) {
            ops.smuxVersion = tables.publish();
            switches.push(SwitchSync.Part.AGGREGATES);
        }
        switches.push(SwitchSync.Part.ENTRIES_AND_ROUTES).forEach((sw, d) -> {
            if (!d.entryVips().isEmpty()) {
                ops.touched.add(sw);
            }
        });
        if (!ops.installs.isEmpty() || !ops.removes.isEmpty()) {
            long v = tables.publishIfChanged(); // a VIP's hash contract follows its HMux
            ops.smuxVersion = v >= 0 ? v : ops.smuxVersion;
            ops.smux |= v >= 0;
        }
    }

    /**
     * Reads the touched devices back (the SMuxes, and the switches whose HMux entries changed: a
     * route or an aggregate a switch acknowledged is checked by the next repair); throws when one
     * disagrees with the installed state.
     */
    void verify(Ops ops) {
        if (ops.smux && ops.smuxVersion >= 0) {
            tables.verify(ops.smuxVersion);
        }
        switches.verify(ops.touched);
    }
}
