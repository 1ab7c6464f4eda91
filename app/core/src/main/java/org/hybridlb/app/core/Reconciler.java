package org.hybridlb.app.core;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.Wcmp;

/**
 * One reconcile round and the events that cannot wait for one. A round: read the sources,
 * withdraw what sits on down switches, repair the devices (the periodic round only every
 * {@code repairInterval}), change pools in place (failed or deleted DIPs, WCMP units), release held VIPs
 * and move those crossing hash contracts along ({@link ContractMoves}),
 * persist, then assign, plan and start the migration. Loop thread only.
 */
final class Reconciler {
    private static final Logger LOG = Logger.getLogger(Reconciler.class.getName());

    private final ControllerConfig config;
    private final StateKeeper keeper;
    private final FabricInputs inputs;
    private final DipHealthView health;
    private final DeviceRepair repair;
    private final SmuxTablePublisher tables;
    private final PoolGrowthHolds holds;
    private final ContractMoves moves;
    private final AssignmentPlanner planner;
    private final MigrationRunner migrations;
    private final ControllerLoop loop;
    private final Status status;
    private final HostCookies cookies;
    private long lastRepairNanos = System.nanoTime() - Long.MAX_VALUE / 2;

    Reconciler(ControllerConfig config, StateKeeper keeper, FabricInputs inputs, DipHealthView health,
               DeviceRepair repair, SmuxTablePublisher tables, PoolGrowthHolds holds, ContractMoves moves,
               AssignmentPlanner planner, MigrationRunner migrations, ControllerLoop loop, Status status,
               HostCookies cookies) {
        this.config = config;
        this.keeper = keeper;
        this.inputs = inputs;
        this.health = health;
        this.repair = repair;
        this.tables = tables;
        this.holds = holds;
        this.moves = moves;
        this.planner = planner;
        this.migrations = migrations;
        this.loop = loop;
        this.status = status;
        this.cookies = cookies;
    }

    /**
     * The desired VIPs without their unhealthy DIPs, with the DIPs removed from cheetah VIPs still
     * draining at weight 0, weights in WCMP units: what the data path should serve now.
     */
    Map<String, Vip> target() {
        Map<String, Vip> t = cookies.holdUnconfirmedJoiners(RetiringDips.withDraining(keeper.state().cookies,
                health.targetConfig(keeper.state().desired)));
        t.replaceAll((vip, v) -> Wcmp.reduced(v));
        return t;
    }

    void reconcile(Reason why) {
        long t0 = System.nanoTime();
        status.reconciles++;
        status.lastError = null; // errors of this round are reported until the next one
        migrations.abandon(why.text);
        try {
            inputs.refresh(health);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "reading the sources", e);
            status.error("reading the sources: " + e.getMessage());
        }
        // ids and keys, on disk, then the hosts' documents: all before any SMux table is rendered
        if (cookies.allocate(inputs.liveSmuxIps())) {
            persisted();
        }
        cookies.push(inputs.topology().smuxes, inputs.liveSmuxes());
        moves.failingOver(); // before the withdrawal: the SMuxes go on hashing as the failed switch
        repair.withdrawFromDownSwitches();
        refreshReachability();
        // reading every switch back costs one dump per device: the periodic round does it only
        // every repairInterval (waves verify what they touch; events always repair)
        long now = System.nanoTime();
        if (why.cause.alwaysRepairs() || now - lastRepairNanos >= config.repairInterval.toNanos()) {
            repair.repair();
            lastRepairNanos = now;
        }
        repair.settleMultiHomed();
        changePoolsInPlace();
        holds.release(target());
        moves.advance();
        cookies.allocate(inputs.liveSmuxIps()); // hosts that the in-place changes took out of every pool go into quarantine now
        if (persisted()) { // a migration starts only from a state that is on disk
            AssignmentPlanner.Planned p = planner.plan(target());
            if (p != null) {
                migrations.start(p.plan, p.target, why);
            }
        }
        status.lastReconcileMillis = (System.nanoTime() - t0) / 1e6;
        status.metrics.reconciled(why.cause.name().toLowerCase(java.util.Locale.ROOT), status.lastReconcileMillis / 1e3);
    }

    /** HMux failure (§3.5.1): withdraw the {@code /32} of its VIPs at once, then re-place them. */
    void switchDown(String sw) {
        if (!inputs.switchDown(sw)) {
            return;
        }
        status.metrics.failover("switch", 1);
        moves.failingOver(); // before the withdrawal: the SMuxes go on hashing as the failed switch
        repair.withdrawFromDownSwitches();
        migrations.abandon("switch " + sw + " down");
        // the DIPs behind it are unreachable: their buckets go now, like failed DIPs' (§3.5.1)
        refreshReachability();
        changePoolsInPlace();
        persisted();
        loop.requestReconcile(new Reason(Cause.SWITCH_DOWN, "switch " + sw + " down"));
    }

    void switchUp(String sw) {
        if (inputs.switchUp(sw)) {
            loop.requestReconcile(new Reason(Cause.SWITCH_UP, "switch " + sw + " up"));
        }
    }

    /** The last reported SMux set: a lost SMux leaves the aggregate groups before anything else. */
    void smuxesChanged() {
        Set<String> now = inputs.reportedSmuxes();
        Set<String> before = inputs.liveSmuxes();
        if (now.equals(before)) {
            return;
        }
        inputs.setLiveSmuxes(now);
        if (cookies.allocate(inputs.liveSmuxIps())) { // owner slots before any table names the SMuxes
            persisted();
        }
        if (!now.containsAll(before)) {
            status.metrics.failover("smux", (int) before.stream().filter(id -> !now.contains(id)).count());
            // the lost ones leave the groups now; an SMux that joined meanwhile may have no table
            // yet: it joins through the reconcile, which sends its table before any group names it
            Set<String> kept = new java.util.LinkedHashSet<>(before);
            kept.retainAll(now);
            inputs.setLiveSmuxes(kept);
            try {
                repair.dropLostSmuxes();
            } finally {
                inputs.setLiveSmuxes(now);
            }
        }
        loop.requestReconcile(new Reason(Cause.SMUXES_CHANGED, "SMuxes " + now));
    }

    void dipHealthChanged(String dip, boolean healthy) {
        if (health.report(dip, healthy)) {
            loop.requestReconcile(new Reason(Cause.DIP_HEALTH, "DIP " + dip + (healthy ? " healthy" : " failed")));
        }
    }

    /**
     * Saves the state; when it cannot be written (a full disk) says so in {@code lastError} and
     * returns false: failovers and repairs go on, migrations wait until it can be written.
     */
    private boolean persisted() {
        if (keeper.tryPersist()) {
            return true;
        }
        status.error("cannot write the controller state: " + keeper.writeError()
                + "; no migration starts until it can be written (failovers and repairs go on)");
        return false;
    }

    private void refreshReachability() {
        health.refreshReachability(inputs.down, inputs.topology(), keeper.state().desired);
    }

    /**
     * Pool changes made in place, on the HMux and the SMuxes ({@link PoolChanges#inPlace}): DIP
     * failure and removal, and WCMP units removed (§3.5.1, §3.5.2): bucket ids are stable, so only
     * their connections move. A VIP no HMux holds also takes its added units and drained DIPs here
     * (the SMuxes pin its connections); it is held first, so that it reaches an HMux only once no
     * pinned connection would move. (Adding a DIP goes through the planner: off the HMux, add, back;
     * a cheetah VIP, whose cookies keep its connections, takes its whole pool here.)
     */
    private void changePoolsInPlace() {
        ControllerState state = keeper.state();
        Map<String, Vip> target = target();
        holds.hold(target);
        Map<String, Vip> changed = new LinkedHashMap<>();
        for (Map.Entry<String, Vip> e : state.installedVips.entrySet()) {
            Vip want = target.get(e.getKey());
            if (want == null) {
                continue; // a removed VIP: the planner withdraws it
            }
            boolean onHmux = !state.hmuxes.getOrDefault(e.getKey(), java.util.List.of()).isEmpty();
            Vip kept = PoolChanges.inPlace(e.getValue(), want, onHmux);
            if (!VipConfigs.sameConfig(kept, e.getValue())) {
                changed.put(e.getKey(), kept);
            }
        }
        if (changed.isEmpty()) {
            return;
        }
        Map<String, Vip> before = new LinkedHashMap<>(state.installedVips);
        state.installedVips.putAll(changed);
        try {
            tables.publish();
            repair.repairSmuxGroups();
            repair.reinstall();
            status.dipsRemovedDirectly += changed.size();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "changing DIP buckets in place", e);
            status.error("changing DIP buckets in place: " + e.getMessage());
            state.installedVips = before;
            repair.repair();
        }
    }
}
