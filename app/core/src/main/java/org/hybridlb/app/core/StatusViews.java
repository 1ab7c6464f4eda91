package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.port.HmuxProgrammer;
import org.hybridlb.app.core.metrics.StateSample;
import org.hybridlb.app.core.view.AssignmentView;
import org.hybridlb.app.core.view.MigrationsView;
import org.hybridlb.app.core.view.ReassignResult;
import org.hybridlb.app.core.view.SmuxView;
import org.hybridlb.app.core.view.StatsView;
import org.hybridlb.app.core.view.SwitchView;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;

/** Builds the northbound's views from the controller's parts. Loop thread only (the views are immutable). */
final class StatusViews {
    private final StateKeeper keeper;
    private final FabricInputs inputs;
    private final DipHealthView health;
    private final PoolGrowthHolds holds;
    private final ContractMoves moves;
    private final AssignmentPlanner planner;
    private final MigrationRunner migrations;
    private final HmuxProgrammer hmux;
    private final Status status;

    StatusViews(StateKeeper keeper, FabricInputs inputs, DipHealthView health, PoolGrowthHolds holds,
                ContractMoves moves, AssignmentPlanner planner, MigrationRunner migrations, HmuxProgrammer hmux, Status status) {
        this.hmux = hmux;
        this.keeper = keeper;
        this.inputs = inputs;
        this.health = health;
        this.holds = holds;
        this.moves = moves;
        this.planner = planner;
        this.migrations = migrations;
        this.status = status;
    }

    private Map<String, String> installed() {
        ControllerState state = keeper.state();
        Map<String, String> out = new LinkedHashMap<>();
        state.installedVips.keySet().forEach(v -> out.put(v, state.placement(v)));
        return out;
    }

    /** VIPs held on the SMuxes: grown pools, then moves between hash contracts. */
    private Map<String, AssignmentView.HeldVip> held() {
        Map<String, AssignmentView.HeldVip> out = holds.view();
        out.putAll(moves.view());
        return out;
    }

    AssignmentView assignment() {
        Assignment a = planner.last();
        return new AssignmentView(installed(), a == null ? null : a.algorithm, a == null ? null : a.assignment,
                a == null ? null : a.mru, a == null ? null : a.hmuxTrafficShare, a == null ? null : a.smuxCount,
                a == null ? null : a.utilisation, held(), new ArrayList<>(inputs.down),
                new LinkedHashMap<>(inputs.cutOff()), new TreeMap<>(inputs.unfitForHmux()), planner.hashUnmatched(),
                new ArrayList<>(keeper.state().drained), health.unhealthyDips(), health.view(),
                migrations.migrating(), status.lastError);
    }

    MigrationsView migrations() {
        return new MigrationsView(migrations.inFlight(), migrations.recent());
    }

    List<SmuxView> smuxes() {
        ControllerState state = keeper.state();
        List<SmuxView> out = new ArrayList<>();
        for (Smux m : inputs.topology().smuxes) {
            out.add(new SmuxView(m.id, m.ip, m.tor, m.capacityBps, inputs.isLive(m.id), state.smuxTableVersion,
                    state.installedVips.size()));
        }
        return out;
    }

    StatsView stats() {
        ControllerState state = keeper.state();
        TrafficInterval traffic = inputs.traffic();
        double hmux = 0;
        double smux = 0;
        List<StatsView.VipRate> vips = new ArrayList<>();
        StatsView.Interval interval = null;
        if (traffic != null) {
            interval = new StatsView.Interval(traffic.index, traffic.startSeconds, traffic.durationSeconds);
            for (VipTraffic vt : traffic.vips) {
                String at = state.installedVips.containsKey(vt.vip) ? state.placement(vt.vip) : null;
                double bps = vt.totalBps();
                if (Assignment.SMUX.equals(at)) {
                    smux += bps;
                } else if (at != null) {
                    hmux += bps;
                }
                vips.add(new StatsView.VipRate(vt.vip, bps, at == null ? StatsView.VipRate.NOT_INSTALLED : at));
            }
        }
        return new StatsView(interval, hmux, smux, hmux + smux > 0 ? hmux / (hmux + smux) : 0.0, vips,
                status.counters());
    }

    List<SwitchView> switches() {
        List<SwitchView> out = new ArrayList<>();
        for (Switch s : inputs.topology().switches) {
            out.add(switchView(s));
        }
        return out;
    }

    SwitchView switchView(Switch s) {
        List<String> vips = new ArrayList<>();
        keeper.state().hmuxes.forEach((v, at) -> {
            if (at.contains(s.id)) {
                vips.add(v);
            }
        });
        SwitchCapability c;
        try {
            c = hmux.capability(s.id);
        } catch (RuntimeException e) {
            c = null; // a switch the southbound does not know (yet): no contract to show
        }
        return new SwitchView(s.id, s.role.name().toLowerCase(Locale.ROOT), s.pod, !inputs.down.contains(s.id),
                inputs.cutOff().get(s.id), keeper.state().drained.contains(s.id), inputs.unfitForHmux().get(s.id),
                c == null ? null : hash(c.hash), c != null && c.decodesCookies, vips);
    }

    static SwitchView.Hash hash(HashContract c) {
        if (!c.agrees()) {
            return new SwitchView.Hash(null, null, null, c.noAgreement);
        }
        return new SwitchView.Hash(c.selection.smuxName, c.basis == 0 ? null : Long.toUnsignedString(c.basis),
                c.encap.smuxName(), null);
    }

    /** The state the metrics report, read now (cheap: counts, no device is asked). */
    StateSample sample() {
        ControllerState state = keeper.state();
        StateSample s = new StateSample();
        state.installedVips.keySet().forEach(v -> s.vipsByPlacement.merge(state.placement(v), 1, Integer::sum));
        s.vipsConfigured = state.desired.size();
        s.vipsHeldOnSmuxes = state.heldOnSmuxes.size() + moves.count();
        s.migrating = migrations.migrating();
        StatsView split = stats();
        s.hmuxBytesPerSecond = split.hmuxBytesPerSecond;
        s.smuxBytesPerSecond = split.smuxBytesPerSecond;
        s.smuxTableVersion = state.smuxTableVersion;
        s.smuxes = inputs.topology().smuxes.size();
        s.smuxesLive = inputs.liveIds().size();
        s.switches = inputs.topology().switches.size();
        s.switchesDown = inputs.down.size();
        s.switchesDrained = state.drained.size();
        s.dipsUnhealthy = health.unhealthyDips().size();
        s.stateWritable = keeper.writeError() == null;
        s.wavesApplied = status.wavesApplied;
        s.rollbacks = status.rollbacks;
        s.failoverVips = status.failovers;
        s.repairs = status.repairs;
        s.dipsRemovedInPlace = status.dipsRemovedDirectly;
        return s;
    }

    ReassignResult reassigned() {
        Assignment a = planner.last();
        return new ReassignResult(migrations.inFlight(), a == null ? null : a.assignment, status.lastError);
    }
}
