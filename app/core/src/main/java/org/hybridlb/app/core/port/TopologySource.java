package org.hybridlb.app.core.port;

import java.util.Map;
import java.util.Set;
import org.hybridlb.solver.model.Topology;

/** The fabric (switches with their free table entries, links, hosts, SMuxes) and failed switches. */
public interface TopologySource {
    Topology topology();

    /** Switches that are down now. */
    Set<String> downSwitches();

    /**
     * Switches that cannot serve as HMux although they were meant to, each with the reason and
     * what the operator must change (e.g. a device whose driver lacks the tunnel encapsulation
     * the HMux needs). The topology already gives them no tunnel table entries; this says why
     * ({@code GET /switches}).
     */
    default Map<String, String> unfitForHmux() {
        return Map.of();
    }

    /** Reports later changes to {@code sink}. */
    default void subscribe(EventSink sink) {
    }
}
