package org.hybridlb.app.core;

import java.util.HashMap;
import java.util.Map;
import java.util.logging.Logger;
import org.hybridlb.app.core.port.SmuxControl;

/**
 * Per VIP, the live pinned connections that a stateless mux hashing as the SMuxes do for it (an
 * HMux with that contract) would send to another DIP, summed over the live SMuxes
 * ({@link SmuxControl#divergingConnections}): the signal that lets a VIP held on the SMuxes go to
 * an HMux (Duet §3.5.2). Counted once per use; loop thread only.
 */
final class DivergingConnections {
    private static final Logger LOG = Logger.getLogger(DivergingConnections.class.getName());

    private final Map<String, Long> perVip = new HashMap<>();
    /** False when an SMux did not answer: the connections it pins are unknown. */
    final boolean complete;

    private DivergingConnections(boolean complete) {
        this.complete = complete;
    }

    static DivergingConnections count(SmuxControl smux, FabricInputs inputs) {
        Map<String, Long> counted = new HashMap<>();
        boolean complete = true;
        for (String id : inputs.liveIds()) {
            try {
                smux.divergingConnections(id).forEach((v, n) -> counted.merge(v, n, Long::sum));
            } catch (RuntimeException e) {
                complete = false;
                LOG.fine("diverging connections of SMux " + id + ": " + e.getMessage());
            }
        }
        DivergingConnections d = new DivergingConnections(complete);
        d.perVip.putAll(counted);
        return d;
    }

    /** The diverging connections of {@code vip}, or -1 when an SMux did not answer. */
    long of(String vip) {
        return complete ? perVip.getOrDefault(vip, 0L) : -1;
    }
}
