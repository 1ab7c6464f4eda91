package org.hybridlb.solver.migration;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.VipSet;

/**
 * What a migration goes from and to: the fabric, the installed VIP configuration and assignment,
 * the target VIP configuration and assignment, and each VIP's traffic (bits/s, the unit of the assignment
 * instance and of SMux capacities; for ordering and for the transient SMux load; VIPs without traffic count as 0).
 */
public final class MigrationProblem {
    public final Topology topology;
    public final VipSet installedVips;
    public final Assignment from;
    public final VipSet targetVips;
    public final Assignment to;
    public final Map<String, Double> trafficBps;

    public MigrationProblem(Topology topology, VipSet installedVips, Assignment from,
                            VipSet targetVips, Assignment to, Map<String, Double> trafficBps) {
        this.topology = topology;
        this.installedVips = installedVips;
        this.from = from;
        this.targetVips = targetVips;
        this.to = to;
        this.trafficBps = trafficBps == null ? Map.of() : Collections.unmodifiableMap(new HashMap<>(trafficBps));
    }

    /** Same VIP configuration before and after: only placements change. */
    public MigrationProblem(Topology topology, VipSet vips, Assignment from, Assignment to,
                            Map<String, Double> trafficBps) {
        this(topology, vips, from, vips, to, trafficBps);
    }

    public double traffic(String vip) {
        Double t = trafficBps.get(vip);
        return t == null ? 0 : t;
    }
}
