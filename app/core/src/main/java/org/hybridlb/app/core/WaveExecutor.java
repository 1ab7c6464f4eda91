package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.HmuxProgrammer;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.MigrationStep;
import org.hybridlb.solver.model.StepAction;
import org.hybridlb.solver.model.Vip;

/**
 * Applies one migration wave: its steps change the installed state in memory, then the devices
 * follow (SMux tables first, they are the backstop of everything after; then HMux removals, then
 * installs), then the touched devices are read back. Any error or difference throws; undoing is
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
    }

    private final HmuxProgrammer hmux;
    private final StateKeeper keeper;
    private final BucketIds ids;
    private final FabricInputs inputs;
    private final SmuxTablePublisher tables;
    private final DeviceRepair repair;

    WaveExecutor(HmuxProgrammer hmux, StateKeeper keeper, BucketIds ids, FabricInputs inputs,
                 SmuxTablePublisher tables, DeviceRepair repair) {
        this.hmux = hmux;
        this.keeper = keeper;
        this.ids = ids;
        this.inputs = inputs;
        this.tables = tables;
        this.repair = repair;
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

    /** SMuxes first (they are the backstop of everything that follows), then HMux removals, then installs. */
    void execute(Ops ops) {
        if (ops.smux) {
            ops.smuxVersion = tables.publish();
            repair.repairSmuxGroups(); // a new aggregate routes to the SMuxes once they know its VIPs
        }
        for (List<String> r : ops.removes) {
            if (!inputs.down.contains(r.get(0))) {
                hmux.remove(r.get(0), r.get(1));
            }
        }
        for (List<String> i : ops.installs) {
            hmux.install(i.get(0), ids.entry(keeper.state().installedVips.get(i.get(1))));
        }
    }

    /** Reads the touched devices back; throws when one disagrees with the installed state. */
    void verify(Ops ops) {
        if (ops.smux && ops.smuxVersion >= 0) {
            tables.verify(ops.smuxVersion);
        }
        ControllerState state = keeper.state();
        Map<String, Map<String, VipEntry>> read = new HashMap<>();
        Set<List<String>> touched = new LinkedHashSet<>(ops.removes);
        touched.addAll(ops.installs);
        for (List<String> t : touched) {
            String sw = t.get(0);
            String v = t.get(1);
            if (inputs.down.contains(sw)) {
                continue;
            }
            Map<String, VipEntry> on = read.computeIfAbsent(sw, hmux::installedOn);
            boolean should = state.hmuxes.getOrDefault(v, List.of()).contains(sw);
            VipEntry have = on.get(v);
            if (should && (have == null || !ids.entry(state.installedVips.get(v)).equals(have.normalized()))) {
                throw new SouthboundException("switch " + sw + " does not hold VIP " + v + " as installed");
            }
            if (!should && have != null) {
                throw new SouthboundException("switch " + sw + " still holds VIP " + v);
            }
        }
    }
}
