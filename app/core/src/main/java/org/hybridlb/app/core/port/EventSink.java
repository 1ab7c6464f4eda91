package org.hybridlb.app.core.port;

import java.util.Set;
import org.hybridlb.solver.model.TrafficInterval;

/**
 * Where sources report events; the controller implements it and queues every event on its
 * single thread, so callers may call from any thread and never block on the data path.
 */
public interface EventSink {
    void switchDown(String switchId);

    void switchUp(String switchId);

    /** The SMuxes that announce the aggregates now (ids). */
    void smuxesChanged(Set<String> live);

    void dipHealthChanged(String dip, boolean healthy);

    /** A new traffic interval was measured. */
    default void trafficMeasured(TrafficInterval interval) {
    }
}
