package org.hybridlb.app.core.port;

import java.util.Set;
import org.hybridlb.solver.model.Topology;

/** The fabric (switches with their free table entries, links, hosts, SMuxes) and failed switches. */
public interface TopologySource {
    Topology topology();

    /** Switches that are down now. */
    Set<String> downSwitches();

    /** Reports later changes to {@code sink}. */
    default void subscribe(EventSink sink) {
    }
}
