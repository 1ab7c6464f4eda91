package org.hybridlb.solver.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.junit.jupiter.api.Test;

class DuetTestbedTest {
    @Test
    void matchesFigure310() {
        Topology t = DuetTestbed.generate();
        assertEquals("duet-testbed", t.name);
        assertEquals(10, t.switches.size(), "10 Broadcom-based switches");
        assertEquals(2, TopologyAsserts.count(t, SwitchRole.CORE));
        assertEquals(4, TopologyAsserts.count(t, SwitchRole.AGG));
        assertEquals(4, TopologyAsserts.count(t, SwitchRole.TOR));
        assertEquals(60, t.hosts.size(), "60 servers");
        assertEquals(List.of("tor-0-0", "tor-0-1", "tor-1-0"),
                t.smuxes.stream().map(m -> m.tor).collect(Collectors.toList()), "SMuxes on ToRs 1, 2 and 3");
        // two containers of 2 Aggs + 2 ToRs, every ToR on both Aggs of its container, every Agg on both cores
        assertEquals(4 * 2 + 4 * 2, t.links.size());
        assertEquals(Set.of("agg-1-0", "agg-1-1"), TopologyAsserts.neighbours(t, "tor-1-1", SwitchRole.AGG));
        assertEquals(Set.of("core-0", "core-1"), TopologyAsserts.neighbours(t, "agg-0-1", SwitchRole.CORE));
        t.links.forEach(l -> assertEquals(10e9, l.capacityBps));
        assertEquals(4, t.hosts.stream().map(h -> h.tor).distinct().count());
        TopologyAsserts.passesSchemaAndChecks(t);
        TopologyAsserts.racksAreContiguous(t);
    }
}
