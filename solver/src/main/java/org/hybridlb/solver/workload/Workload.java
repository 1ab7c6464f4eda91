package org.hybridlb.solver.workload;

import org.hybridlb.solver.model.TrafficTrace;
import org.hybridlb.solver.model.VipSet;

/**
 * A generated workload: the VIP configuration (every VIP that exists at some point of the
 * trace) and the traffic per interval. A VIP missing from an interval does not exist then
 * (not yet created, or already deleted).
 */
public final class Workload {
    public final VipSet vips;
    public final TrafficTrace trace;

    public Workload(VipSet vips, TrafficTrace trace) {
        this.vips = vips;
        this.trace = trace;
    }
}
