package org.hybridlb.app.core.port;

import org.hybridlb.solver.model.TrafficInterval;

/** The traffic matrix the solver uses: bytes/s per VIP by source and by DIP over the last interval. */
public interface StatsSource {
    /** The last complete interval, or null when nothing was measured yet. */
    TrafficInterval lastInterval();
}
