package org.hybridlb.app.core;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.logging.Logger;
import org.hybridlb.app.core.metrics.ControllerMetrics;
import org.hybridlb.app.core.port.StateStore;
import org.hybridlb.solver.model.Wcmp;

/**
 * The persisted document ({@link ControllerState}) and its store: loaded at start, saved after
 * every verified change, copied before a wave so that a failed one can be undone. An unreadable
 * document is replaced by the store's last good copy (said loudly), or the start is refused: never
 * an empty state in its place. A failed save is remembered until the next one succeeds
 * ({@link #writeError}). Loop thread only.
 */
final class StateKeeper {
    private static final Logger LOG = Logger.getLogger(StateKeeper.class.getName());

    private final StateStore store;
    private final ControllerMetrics metrics;
    private ControllerState state = new ControllerState();
    private String writeError;

    StateKeeper(StateStore store, ControllerMetrics metrics) {
        this.store = store;
        this.metrics = metrics;
    }

    ControllerState state() {
        return state;
    }

    /**
     * Loads the stored state. Returns the migration a restart interrupted (now marked so: the
     * devices are repaired to its last verified wave and the rest is planned anew), or null.
     * Throws {@link StateUnreadableException} when neither the document nor a good copy can be read.
     */
    MigrationRecord load() {
        String json = store.load().orElse(null);
        if (json == null) {
            return null;
        }
        try {
            state = decode(json);
        } catch (IllegalArgumentException unreadable) {
            state = recover(unreadable.getMessage());
        }
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

    /** A document this controller wrote: an object with its {@code format}; anything else is unreadable. */
    private static ControllerState decode(String json) {
        JsonNode tree;
        try {
            tree = Json.MAPPER.readTree(json);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage(), e);
        }
        if (tree == null || tree.isMissingNode()) {
            throw new IllegalArgumentException("empty");
        }
        if (!tree.isObject() || !tree.has("format")) {
            throw new IllegalArgumentException("not a hybridlb state document (no \"format\" field)");
        }
        if (tree.get("format").asInt() != new ControllerState().format) {
            throw new IllegalArgumentException("format " + tree.get("format") + ", this controller reads "
                    + new ControllerState().format);
        }
        return Json.read(json, ControllerState.class);
    }

    private ControllerState recover(String why) {
        String copy = store.describePrevious();
        String previous = copy == null ? null : store.loadPrevious().orElse(null);
        String previousWhy = copy == null ? "this store keeps none" : previous == null ? "there is none" : null;
        if (previous != null) {
            try {
                ControllerState recovered = decode(previous);
                String aside = store.setAsideUnreadable();
                LOG.warning(store.describe() + " is unreadable (" + why + "): recovered from its " + copy
                        + ", which misses the last change saved after it, if any; the unreadable file is kept as "
                        + aside);
                return recovered;
            } catch (IllegalArgumentException e) {
                previousWhy = "it is unreadable too (" + e.getMessage() + ")";
            }
        }
        throw new StateUnreadableException(store.describe() + " is unreadable (" + why + ") and no good copy can "
                + "replace it (" + (copy == null ? "" : copy + ": ") + previousWhy + "). The controller does not start "
                + "with an empty state: that would forget every VIP and remove what it installed on the switches. "
                + "Restore the state from a backup, or move it away to start empty.");
    }

    /** Saves the state (bucket ids of DIPs that are gone forgotten first); throws when it cannot. */
    void persist() {
        BucketIds.prune(state);
        try {
            store.save(Json.write(state));
            writeError = null;
        } catch (RuntimeException e) {
            writeError = String.valueOf(e.getMessage());
            metrics.stateWriteFailed();
            throw e;
        }
    }

    /**
     * {@link #persist} for the controller's own rounds: false (the error kept in {@link #writeError})
     * instead of an exception, so that failovers and repairs go on while the state cannot be written.
     */
    boolean tryPersist() {
        try {
            persist();
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Why the last save failed, or null when it succeeded. */
    String writeError() {
        return writeError;
    }

    ControllerState snapshot() {
        return Json.read(Json.write(state), ControllerState.class);
    }

    /** Puts a snapshot back (a failed wave is undone from the state before it). */
    void restore(ControllerState snapshot) {
        state = snapshot;
    }
}
