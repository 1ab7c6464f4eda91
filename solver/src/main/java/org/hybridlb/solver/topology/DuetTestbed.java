package org.hybridlb.solver.topology;

import java.util.List;
import org.hybridlb.solver.model.Topology;

/**
 * The Duet testbed of Fig. 3.10 (§3.7): a fat-tree of two containers, each with two Aggs and
 * two ToRs, joined by two cores; 10 switches, 60 servers (15 per ToR), 10 Gbps links, and an
 * SMux server on each of ToRs 1, 2 and 3 (our tor-0-0, tor-0-1, tor-1-0).
 *
 * <p>The text does not say how the Aggs reach the two cores; we link every Agg to both cores
 * ({@link DuetClos.Wiring#FULL}), which gives each container 4 x 10G of uplink.
 */
public final class DuetTestbed {
    public static final int HOSTS_PER_TOR = 15;
    public static final double LINK_BPS = 10e9;
    /** ToRs 1, 2 and 3 of the paper carry an SMux each. */
    public static final List<String> SMUX_TORS = List.of("tor-0-0", "tor-0-1", "tor-1-0");

    private DuetTestbed() {
    }

    public static DuetClos.Params params() {
        return DuetClos.Params.small(2, 2, 2, 2)
                .name("duet-testbed")
                .hostsPerTor(HOSTS_PER_TOR)
                .linkBps(LINK_BPS, LINK_BPS)
                .wiring(DuetClos.Wiring.FULL)
                .smuxTors(SMUX_TORS);
    }

    public static Topology generate() {
        return DuetClos.generate(params());
    }
}
