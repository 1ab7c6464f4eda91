package org.hybridlb.solver.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.hybridlb.solver.io.ModelChecks;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.junit.jupiter.api.Test;

class DuetClosTest {
    @Test
    void paperScaleMatchesSection381() {
        Topology t = DuetClos.generate(DuetClos.Params.paperScale());
        assertEquals(40, TopologyAsserts.count(t, SwitchRole.CORE));
        assertEquals(40 * 4, TopologyAsserts.count(t, SwitchRole.AGG));
        assertEquals(40 * 40, TopologyAsserts.count(t, SwitchRole.TOR));
        assertEquals(1600 * 32, t.hosts.size(), "about the paper's 50k servers");
        assertEquals(1600 * 4 + 160 * 10, t.links.size());
        Map<String, Switch> byId = TopologyAsserts.byId(t);
        Map<String, Integer> degree = new HashMap<>();
        for (Link l : t.links) {
            degree.merge(l.a, 1, Integer::sum);
            degree.merge(l.b, 1, Integer::sum);
            boolean torAgg = byId.get(l.a).role == SwitchRole.TOR || byId.get(l.b).role == SwitchRole.TOR;
            assertEquals(torAgg ? 10e9 : 40e9, l.capacityBps, l.a + "-" + l.b);
        }
        for (Switch s : t.switches) {
            int expected = s.role == SwitchRole.CORE ? 40 : s.role == SwitchRole.AGG ? 40 + 10 : 4;
            assertEquals(expected, degree.get(s.id), s.id);
            assertEquals(16 * 1024, s.tables.host);
            assertEquals(4 * 1024, s.tables.ecmp);
            assertEquals(512, s.tables.tunnel);
        }
        assertEquals(40, t.smuxes.size(), "one SMux per pod by default");
        assertEquals(40, t.smuxes.stream().map(m -> byId.get(m.tor).pod).distinct().count());
        ModelChecks.checkTopology(t, "paper");
        TopologyAsserts.racksAreContiguous(t);
    }

    @Property(tries = 20)
    void smallClosesAreConsistent(@ForAll @IntRange(min = 1, max = 6) int pods,
                                  @ForAll @IntRange(min = 1, max = 8) int tors,
                                  @ForAll @IntRange(min = 1, max = 4) int aggs,
                                  @ForAll @IntRange(min = 1, max = 3) int coreGroups,
                                  @ForAll @IntRange(min = 0, max = 3) int smuxesPerPod,
                                  @ForAll boolean full) {
        int cores = aggs * coreGroups;
        DuetClos.Params p = DuetClos.Params.small(pods, tors, aggs, cores).hostsPerTor(3)
                .smuxesPerPod(Math.min(smuxesPerPod, tors))
                .wiring(full ? DuetClos.Wiring.FULL : DuetClos.Wiring.STRIPED);
        Topology t = DuetClos.generate(p);
        assertEquals(cores, TopologyAsserts.count(t, SwitchRole.CORE));
        assertEquals(pods * aggs, TopologyAsserts.count(t, SwitchRole.AGG));
        assertEquals(pods * tors, TopologyAsserts.count(t, SwitchRole.TOR));
        assertEquals(pods * tors * 3, t.hosts.size());
        assertEquals(pods * Math.min(smuxesPerPod, tors), t.smuxes.size());
        Map<String, Switch> byId = TopologyAsserts.byId(t);
        for (Switch s : t.switches) {
            if (s.role == SwitchRole.TOR) {
                Set<String> up = TopologyAsserts.neighbours(t, s.id, SwitchRole.AGG);
                assertEquals(aggs, up.size());
                up.forEach(a -> assertEquals(s.pod, byId.get(a).pod));
            } else if (s.role == SwitchRole.AGG) {
                assertEquals(full ? cores : coreGroups, TopologyAsserts.neighbours(t, s.id, SwitchRole.CORE).size());
            } else {
                Set<Integer> podsReached = new HashSet<>();
                TopologyAsserts.neighbours(t, s.id, SwitchRole.AGG).forEach(a -> podsReached.add(byId.get(a).pod));
                assertEquals(pods, podsReached.size(), "every core reaches every pod");
            }
        }
        TopologyAsserts.passesSchemaAndChecks(t);
        TopologyAsserts.racksAreContiguous(t);
    }

    @Test
    void tablesCanDifferPerRole() {
        DuetClos.Params p = DuetClos.Params.small(2, 2, 2, 2);
        p.torTables = new TableCapacity(100, 50, 10);
        p.coreTables = new TableCapacity(null, null, 1024);
        Topology t = DuetClos.generate(p);
        for (Switch s : t.switches) {
            int tunnel = s.role == SwitchRole.TOR ? 10 : s.role == SwitchRole.CORE ? 1024 : 512;
            assertEquals(tunnel, s.tables.tunnel, s.id);
        }
    }

    @Test
    void largeRacksGetLargerSubnets() {
        // 100 hosts + 1 SMux do not fit a /26: racks become /25
        Topology t = DuetClos.generate(DuetClos.Params.small(1, 2, 1, 1).hostsPerTor(100));
        assertEquals("10.0.0.1", t.hosts.get(0).ip);
        assertEquals("10.0.0.100", t.hosts.get(99).ip);
        assertEquals("tor-0-1", t.hosts.get(100).tor);
        assertEquals("10.0.0.129", t.hosts.get(100).ip);
        assertEquals("10.0.0.126", t.smuxes.get(0).ip, "SMuxes take the top of the rack");
        TopologyAsserts.passesSchemaAndChecks(t);
    }

    @Test
    void badParametersNameTheField() {
        IllegalArgumentException striped = assertThrows(IllegalArgumentException.class,
                () -> DuetClos.generate(DuetClos.Params.small(2, 2, 4, 6)));
        assertTrue(striped.getMessage().startsWith("cores:"), striped.getMessage());
        IllegalArgumentException pods = assertThrows(IllegalArgumentException.class,
                () -> DuetClos.generate(DuetClos.Params.small(0, 2, 2, 2)));
        assertTrue(pods.getMessage().startsWith("pods:"), pods.getMessage());
        IllegalArgumentException smux = assertThrows(IllegalArgumentException.class,
                () -> DuetClos.generate(DuetClos.Params.small(1, 2, 2, 2).smuxesPerPod(3)));
        assertTrue(smux.getMessage().startsWith("smuxesPerPod:"), smux.getMessage());
    }
}
