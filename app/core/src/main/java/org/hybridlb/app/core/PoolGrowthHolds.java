package org.hybridlb.app.core;

import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.logging.Logger;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.view.AssignmentView.HeldVip;
import org.hybridlb.solver.model.Vip;

/**
 * DIP addition (Duet §3.5.2): an HMux only hashes, so a VIP whose pool grows (a DIP added or moved
 * to another tunnel host, WCMP units added) or drains a DIP is held on the SMuxes, which pin every
 * connection to its DIP ({@link PoolChanges#needsSmuxes}). It goes back to the assignment once its
 * changed pool is installed and no live SMux holds a connection an HMux would send elsewhere, or
 * after {@code poolGrowthHoldMax}. Holds are persisted ({@code heldOnSmuxes} of the state). Loop
 * thread only.
 */
final class PoolGrowthHolds {
    private static final Logger LOG = Logger.getLogger(PoolGrowthHolds.class.getName());

    /** Why a VIP whose pool grew is held ({@code GET /assignment}). */
    static final String WHY = "its pool grew or drains a DIP: it stays on the SMuxes, which pin its connections, until"
            + " none would change DIP on an HMux (Duet §3.5.2)";

    private final SmuxControl smux;
    private final Duration holdMax;
    private final StateKeeper keeper;
    private final FabricInputs inputs;
    /** Diverging connections last counted per held VIP (-1: an SMux did not answer). */
    private final Map<String, Long> diverging = new HashMap<>();

    PoolGrowthHolds(SmuxControl smux, Duration holdMax, StateKeeper keeper, FabricInputs inputs) {
        this.smux = smux;
        this.holdMax = holdMax;
        this.keeper = keeper;
        this.inputs = inputs;
    }

    boolean isHeld(String vip) {
        return keeper.state().heldOnSmuxes.containsKey(vip);
    }

    boolean any() {
        return !keeper.state().heldOnSmuxes.isEmpty();
    }

    /**
     * Holds every VIP of {@code target} whose pool change needs the SMuxes; forgets removed VIPs.
     * A cheetah VIP is never held (and a hold ends when a VIP turns cheetah): its connections are
     * kept by their cookies, not by what an SMux pinned, so a DIP added to it is applied at once.
     */
    void hold(Map<String, Vip> target) {
        Map<String, Long> held = keeper.state().heldOnSmuxes;
        held.keySet().retainAll(target.keySet());
        held.keySet().removeIf(v -> target.get(v).cheetah());
        for (Map.Entry<String, Vip> e : target.entrySet()) {
            Vip installed = keeper.state().installedVips.get(e.getKey());
            if (installed != null && !e.getValue().cheetah() && !held.containsKey(e.getKey())
                    && PoolChanges.needsSmuxes(installed, e.getValue())) {
                held.put(e.getKey(), System.currentTimeMillis());
                LOG.info("VIP " + e.getKey() + ": pool grows or drains a DIP; kept on the SMuxes until no pinned"
                        + " connection would change DIP on an HMux");
            }
        }
    }

    /**
     * Lets each held VIP whose grown pool is installed go once the live SMuxes count no diverging
     * connection for it, or after the longest hold. An SMux that cannot answer keeps the hold
     * (the connections it pins are unknown).
     */
    void release(Map<String, Vip> target) {
        Map<String, Long> held = keeper.state().heldOnSmuxes;
        if (held.isEmpty()) {
            diverging.clear();
            return;
        }
        DivergingConnections counted = DivergingConnections.count(smux, inputs);
        long now = System.currentTimeMillis();
        for (Iterator<Map.Entry<String, Long>> it = held.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Long> h = it.next();
            String v = h.getKey();
            Vip installed = keeper.state().installedVips.get(v);
            if (installed == null || !target.containsKey(v) || PoolChanges.needsSmuxes(installed, target.get(v))) {
                continue; // the changed pool is not on the SMuxes yet
            }
            long n = counted.of(v);
            diverging.put(v, n);
            if (n == 0) {
                LOG.info("VIP " + v + ": no pinned connection would change DIP on an HMux; released after "
                        + (now - h.getValue()) / 1000 + " s on the SMuxes");
                it.remove();
            } else if (now - h.getValue() >= holdMax.toMillis()) {
                LOG.warning("VIP " + v + ": released after the longest hold (" + holdMax.toSeconds() + " s); "
                        + (n >= 0 ? n + " pinned connections" : "connections not counted")
                        + " may change DIP on an HMux");
                it.remove();
            }
        }
        diverging.keySet().retainAll(held.keySet());
    }

    /** {@code heldOnSmuxes} of {@code GET /assignment}. */
    Map<String, HeldVip> view() {
        Map<String, HeldVip> out = new LinkedHashMap<>();
        keeper.state().heldOnSmuxes.forEach((v, since) -> out.put(v, new HeldVip(since, diverging.get(v), null, WHY)));
        return out;
    }
}
