package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.routing.Fabric;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.Test;

/** Which part of a partitioned fabric the controller serves from, and what the solver sees of it. */
class ServingFabricTest {
    final Topology fatTree = FatTree.generate(4);

    static Topology withoutLinks(Topology t, java.util.function.Predicate<Link> gone) {
        List<Link> links = new ArrayList<>(t.links);
        links.removeIf(gone);
        return new Topology(t.name, t.switches, links, t.hosts, t.smuxes);
    }

    static Set<String> ids(Topology t) {
        return t.switches.stream().map(s -> s.id).collect(Collectors.toSet());
    }

    @Test
    void aConnectedFabricIsServedWhole() {
        ServingFabric f = ServingFabric.of(fatTree, Set.of(), Set.of());
        assertEquals(Map.of(), f.cutOff());
        assertEquals(fatTree.switches, f.topology().switches);
        assertEquals(fatTree.links, f.topology().links);
        assertEquals(fatTree.hosts, f.topology().hosts);
        assertEquals(fatTree.smuxes, f.topology().smuxes);
    }

    @Test
    void aSwitchWithNoLiveLinkIsCutOffAndTheRestIsServed() {
        String tor = "tor-1-0";
        Topology t = withoutLinks(fatTree, l -> l.a.equals(tor) || l.b.equals(tor));
        ServingFabric f = ServingFabric.of(t, Set.of(), Set.of());
        assertEquals(Map.of(tor, "no live fabric link"), f.cutOff());
        assertTrue(!ids(f.topology()).contains(tor));
        assertTrue(f.topology().hosts.stream().noneMatch(h -> h.tor.equals(tor)), "its hosts leave with it");
        assertEquals(19, f.topology().switches.size());
        assertTrue(new Fabric(f.topology()).connected(), "the solver gets a connected fabric");
    }

    @Test
    void aPodCutFromTheCoresIsCutOffWithTheSizeOfBothParts() {
        // pod 3's aggs lose their core links; one core switch is down as well
        Topology t = withoutLinks(fatTree, l -> l.a.startsWith("agg-3-") && l.b.startsWith("core-")
                || l.b.startsWith("agg-3-") && l.a.startsWith("core-"));
        ServingFabric f = ServingFabric.of(t, Set.of("core-0"), Set.of());
        Set<String> pod3 = fatTree.switches.stream().filter(s -> s.pod != null && s.pod == 3).map(s -> s.id)
                .collect(Collectors.toSet());
        assertEquals(pod3, f.cutOff().keySet());
        f.cutOff().values().forEach(why -> assertEquals(
                "cut off from the served part of the fabric (its part has 4 switches, the served part 15)", why));
        Set<String> served = ids(f.topology());
        assertEquals(16, served.size(), "the served part and the down switch linked to it");
        Switch core0 = f.topology().switches.stream().filter(s -> s.id.equals("core-0")).findFirst().orElseThrow();
        assertEquals(0, core0.tables.tunnel, "a down switch keeps its links but offers no table entries");
        assertTrue(f.topology().links.stream().allMatch(l -> served.contains(l.a) && served.contains(l.b)));
        assertTrue(f.topology().smuxes.stream().allMatch(m -> served.contains(m.tor)));
        assertTrue(new Fabric(f.topology()).connected());
    }

    @Test
    void aDownSwitchWithNoLinkIntoTheServedPartIsLeftOut() {
        String tor = "tor-1-0";
        Topology t = withoutLinks(fatTree, l -> l.a.equals(tor) || l.b.equals(tor));
        ServingFabric f = ServingFabric.of(t, Set.of(tor), Set.of());
        assertEquals(Map.of(), f.cutOff(), "it is down, not cut off");
        assertTrue(!ids(f.topology()).contains(tor));
        assertTrue(new Fabric(f.topology()).connected());
    }

    @Test
    void ofTwoEqualPartsTheOneOfTheFirstSwitchIsServed() {
        // a ring a-b, c-d cut in the middle
        List<Switch> sw = new ArrayList<>();
        for (String id : List.of("c", "a", "b", "d")) {
            sw.add(new Switch(id, org.hybridlb.solver.model.SwitchRole.CORE, null, null));
        }
        Topology t = new Topology("t", sw, List.of(new Link("a", "b", 1e9), new Link("c", "d", 1e9)), List.of(),
                List.of());
        assertEquals(Set.of("a", "b"), ServingFabric.of(t, Set.of(), Set.of()).cutOff().keySet());
    }

    @Test
    void drainedSwitchesStayWithoutTableEntries() {
        ServingFabric f = ServingFabric.of(fatTree, Set.of(), Set.of("tor-0-0"));
        Switch s = f.topology().switches.stream().filter(x -> x.id.equals("tor-0-0")).findFirst().orElseThrow();
        assertEquals(0, s.tables.tunnel);
        assertEquals(0, s.tables.ecmp);
        assertEquals(fatTree.links, f.topology().links, "a drained switch still carries traffic");
    }
}
