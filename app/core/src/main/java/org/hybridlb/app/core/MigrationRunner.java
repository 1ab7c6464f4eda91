package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.hybridlb.solver.model.MigrationPlan;
import org.hybridlb.solver.model.MigrationWave;
import org.hybridlb.solver.model.Vip;

/**
 * Runs a migration one wave per loop task, so that events and REST calls interleave and can
 * supersede it at a wave boundary (where the installed state is consistent). The state is
 * persisted after every verified wave. A wave that fails or does not verify rolls the migration
 * back: the failed wave by repairing the devices to the state before it, then the inverse of every
 * verified wave, last first. Keeps the recent migrations for {@code GET /migrations}. Loop thread only.
 */
final class MigrationRunner {
    private static final Logger LOG = Logger.getLogger(MigrationRunner.class.getName());
    /** Finished migrations kept for {@code GET /migrations}. */
    static final int RECENT = 10;

    private final StateKeeper keeper;
    private final WaveExecutor waves;
    private final DeviceRepair repair;
    private final Supplier<Map<String, Vip>> catalogue;
    private final Consumer<Runnable> enqueue;
    private final Runnable grownPoolInstalled;
    private final Status status;
    private final List<MigrationRecord> recent = new ArrayList<>();
    /** Configurations of VIPs withdrawn from the SMuxes by the running migration, for its rollback. */
    private final Map<String, Vip> retired = new HashMap<>();

    /**
     * {@code catalogue}: the configuration each VIP should have now (announces take it from there);
     * {@code enqueue}: queues the next wave on the loop; {@code grownPoolInstalled}: called when a
     * migration finishes while VIPs are held (they may be free to return).
     */
    MigrationRunner(StateKeeper keeper, WaveExecutor waves, DeviceRepair repair, Supplier<Map<String, Vip>> catalogue,
                    Consumer<Runnable> enqueue, Runnable grownPoolInstalled, Status status) {
        this.keeper = keeper;
        this.waves = waves;
        this.repair = repair;
        this.catalogue = catalogue;
        this.enqueue = enqueue;
        this.grownPoolInstalled = grownPoolInstalled;
        this.status = status;
    }

    boolean migrating() {
        MigrationRecord m = keeper.state().migration;
        return m != null && MigrationRecord.RUNNING.equals(m.state);
    }

    /** The running migration, or null. */
    MigrationRecord inFlight() {
        return migrating() ? keeper.state().migration : null;
    }

    /** Finished migrations, newest first. */
    List<MigrationRecord> recent() {
        return new ArrayList<>(recent);
    }

    /** A migration a restart interrupted (reported with the finished ones). */
    void interrupted(MigrationRecord m) {
        recent.add(m);
        status.metrics.migrationEnded(m.state, (System.currentTimeMillis() - m.startedMillis) / 1e3);
    }

    /** Records and persists the migration, then queues its first wave. */
    void start(MigrationPlan plan, Map<String, String> target, Reason why) {
        ControllerState state = keeper.state();
        MigrationRecord m = new MigrationRecord();
        m.id = (state.migration == null ? 0 : state.migration.id) + 1;
        m.trigger = why.text;
        m.state = MigrationRecord.RUNNING;
        m.plan = plan;
        m.target = target;
        m.startedMillis = System.currentTimeMillis();
        MigrationRecord last = state.migration;
        state.migration = m;
        if (!keeper.tryPersist()) { // a restart must know of a migration before its first wave
            state.migration = last;
            status.error("migration not started: cannot write the controller state: " + keeper.writeError());
            return;
        }
        retired.clear();
        enqueue.accept(() -> runWave(m));
    }

    /** Stops the migration in flight at its wave boundary (the installed state is consistent there). */
    void abandon(String why) {
        if (migrating()) {
            finish(keeper.state().migration, MigrationRecord.SUPERSEDED, "superseded: " + why);
        }
    }

    private void runWave(MigrationRecord m) {
        if (m != keeper.state().migration || !MigrationRecord.RUNNING.equals(m.state)) {
            return; // superseded meanwhile
        }
        MigrationWave wave = m.plan.waves.get(m.nextWave);
        ControllerState before = keeper.snapshot();
        try {
            waves.run(wave.steps, catalogue.get(), retired);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "wave " + m.nextWave + " of migration " + m.id + " failed", e);
            status.rollbacks++;
            rollback(m, before, "wave " + m.nextWave + " (" + wave.phase + "): " + e.getMessage());
            return;
        }
        status.wavesApplied++;
        m.nextWave++;
        if (m.nextWave == m.plan.waves.size()) {
            finish(m, MigrationRecord.DONE, null);
        } else if (!keeper.tryPersist()) {
            // the devices hold the verified wave; a restart repairs them back to the state on disk
            finish(m, MigrationRecord.FAILED, "wave " + (m.nextWave - 1) + " applied and verified, but the controller "
                    + "state cannot be written (" + keeper.writeError() + "): the migration stops there");
            status.error(m.error);
        } else {
            enqueue.accept(() -> runWave(m));
        }
    }

    private void rollback(MigrationRecord m, ControllerState beforeWave, String error) {
        keeper.restore(beforeWave);
        keeper.state().migration = m;
        repair.repair();
        List<MigrationWave> done = m.plan.waves.subList(0, m.nextWave);
        MigrationPlan back = new MigrationPlan(done).inverse();
        for (MigrationWave w : back.waves) {
            try {
                waves.run(w.steps, catalogue.get(), retired);
                m.nextWave--;
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "rollback of migration " + m.id + " failed", e);
                finish(m, MigrationRecord.FAILED, error + "; rollback failed: " + e.getMessage());
                return;
            }
        }
        finish(m, MigrationRecord.ROLLED_BACK, error);
    }

    private void finish(MigrationRecord m, String outcome, String error) {
        m.state = outcome;
        m.error = error;
        m.endedMillis = System.currentTimeMillis();
        status.metrics.migrationEnded(outcome, (m.endedMillis - m.startedMillis) / 1e3);
        recent.add(0, m);
        while (recent.size() > RECENT) {
            recent.remove(recent.size() - 1);
        }
        keeper.tryPersist(); // when it fails, the next round reports it
        if (MigrationRecord.DONE.equals(outcome) && !keeper.state().heldOnSmuxes.isEmpty()) {
            grownPoolInstalled.run();
        }
    }
}
