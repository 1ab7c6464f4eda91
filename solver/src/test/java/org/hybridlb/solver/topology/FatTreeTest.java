package org.hybridlb.solver.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.junit.jupiter.api.Test;

class FatTreeTest {
    @Test
    void fourAryFatTreeHasTheTextbookShape() {
        Topology t = FatTree.generate(4);
        assertEquals(4, TopologyAsserts.count(t, SwitchRole.CORE));
        assertEquals(8, TopologyAsserts.count(t, SwitchRole.AGG));
        assertEquals(8, TopologyAsserts.count(t, SwitchRole.TOR));
        assertEquals(16, t.hosts.size());
        assertEquals(32, t.links.size());
        assertEquals(Set.of("core-0", "core-1"), TopologyAsserts.neighbours(t, "agg-2-0", SwitchRole.CORE));
        assertEquals(Set.of("core-2", "core-3"), TopologyAsserts.neighbours(t, "agg-2-1", SwitchRole.CORE));
        assertEquals(Set.of("agg-3-0", "agg-3-1"), TopologyAsserts.neighbours(t, "tor-3-1", SwitchRole.AGG));
        assertEquals(List.of("tor-0-0", "tor-1-0", "tor-2-0", "tor-3-0"),
                t.smuxes.stream().map(m -> m.tor).collect(java.util.stream.Collectors.toList()));
        TopologyAsserts.passesSchemaAndChecks(t);
        TopologyAsserts.racksAreContiguous(t);
    }

    @Property(tries = 8)
    void everyEvenRadixGivesAConsistentFatTree(@ForAll @IntRange(min = 1, max = 8) int half) {
        int k = 2 * half;
        Topology t = FatTree.generate(k);
        assertEquals(half * half, TopologyAsserts.count(t, SwitchRole.CORE));
        assertEquals(k * half, TopologyAsserts.count(t, SwitchRole.AGG));
        assertEquals(k * half, TopologyAsserts.count(t, SwitchRole.TOR));
        assertEquals(k * k * k / 4, t.hosts.size());
        assertEquals(k * k * k / 2, t.links.size());
        java.util.Map<String, Switch> byId = TopologyAsserts.byId(t);
        for (Switch s : t.switches) {
            if (s.role == SwitchRole.CORE) {
                // a core reaches every pod exactly once
                Set<Integer> pods = new HashSet<>();
                for (String agg : TopologyAsserts.neighbours(t, s.id, SwitchRole.AGG)) {
                    assertTrue(pods.add(byId.get(agg).pod), s.id + " reaches a pod twice");
                }
                assertEquals(k, pods.size());
            } else if (s.role == SwitchRole.AGG) {
                assertEquals(half, TopologyAsserts.neighbours(t, s.id, SwitchRole.CORE).size());
                assertEquals(half, TopologyAsserts.neighbours(t, s.id, SwitchRole.TOR).size());
            } else {
                assertEquals(half, TopologyAsserts.neighbours(t, s.id, SwitchRole.AGG).size());
                for (String agg : TopologyAsserts.neighbours(t, s.id, SwitchRole.AGG)) {
                    assertEquals(s.pod, byId.get(agg).pod, "ToR links leave its pod");
                }
            }
        }
        TopologyAsserts.passesSchemaAndChecks(t);
        TopologyAsserts.racksAreContiguous(t);
    }

    @Test
    void capacitiesTablesHostsAndSmuxesAreConfigurable() {
        TableCapacity tables = new TableCapacity(1000, 200, 64);
        Topology t = FatTree.generate(new FatTree.Params().k(6).hostsPerTor(40).linkBps(25e9, 100e9)
                .tables(tables).smuxTors(List.of("tor-1-2", "tor-1-2", "tor-4-0")).smuxBps(10e9));
        assertEquals(6 * 3 * 40, t.hosts.size());
        assertEquals(25e9, TopologyAsserts.capacityBetween(t, "tor-0-0", "agg-0-0"));
        assertEquals(100e9, TopologyAsserts.capacityBetween(t, "agg-0-0", "core-0"));
        t.switches.forEach(s -> assertEquals(64, s.tables.tunnel));
        assertEquals(3, t.smuxes.size());
        assertEquals(2, t.smuxes.stream().filter(m -> m.tor.equals("tor-1-2")).count());
        t.smuxes.forEach(m -> assertEquals(10e9, m.capacityBps));
        TopologyAsserts.passesSchemaAndChecks(t);
        TopologyAsserts.racksAreContiguous(t);
    }

    @Test
    void badParametersNameTheField() {
        IllegalArgumentException odd = assertThrows(IllegalArgumentException.class, () -> FatTree.generate(5));
        assertTrue(odd.getMessage().startsWith("k:"), odd.getMessage());
        IllegalArgumentException smux = assertThrows(IllegalArgumentException.class,
                () -> FatTree.generate(new FatTree.Params().k(4).smuxTors(List.of("agg-0-0"))));
        assertTrue(smux.getMessage().startsWith("smuxTors:") && smux.getMessage().contains("agg-0-0"),
                smux.getMessage());
        IllegalArgumentException cap = assertThrows(IllegalArgumentException.class,
                () -> FatTree.generate(new FatTree.Params().k(4).linkBps(0, 1e9)));
        assertTrue(cap.getMessage().startsWith("torAggBps:"), cap.getMessage());
    }
}
