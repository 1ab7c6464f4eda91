package org.hybridlb.app.core;

import org.hybridlb.app.core.port.StateStore;
import org.hybridlb.solver.model.Wcmp;

/**
 * The persisted document ({@link ControllerState}) and its store: loaded at start, saved after
 * every verified change, copied before a wave so that a failed one can be undone. Loop thread only.
 */
final class StateKeeper {
    private final StateStore store;
    private ControllerState state = new ControllerState();

    StateKeeper(StateStore store) {
        this.store = store;
    }

    ControllerState state() {
        return state;
    }

    /**
     * Loads the stored state. Returns the migration a restart interrupted (now marked so: the
     * devices are repaired to its last verified wave and the rest is planned anew), or null.
     */
    MigrationRecord load() {
        String json = store.load().orElse(null);
        if (json == null) {
            return null;
        }
        state = Json.read(json, ControllerState.class);
        // weights in WCMP units (a state written before the data path used units has raw weights)
        state.installedVips.replaceAll((vip, v) -> Wcmp.reduced(v));
        MigrationRecord m = state.migration;
        if (m == null || !MigrationRecord.RUNNING.equals(m.state)) {
            return null;
        }
        m.state = MigrationRecord.INTERRUPTED;
        m.error = "controller restarted during wave " + m.nextWave;
        return m;
    }

    /** Saves the state (bucket ids of DIPs that are gone forgotten first); throws when it cannot. */
    void persist() {
        BucketIds.prune(state);
        store.save(Json.write(state));
    }

    ControllerState snapshot() {
        return Json.read(Json.write(state), ControllerState.class);
    }

    /** Puts a snapshot back (a failed wave is undone from the state before it). */
    void restore(ControllerState snapshot) {
        state = snapshot;
    }
}
