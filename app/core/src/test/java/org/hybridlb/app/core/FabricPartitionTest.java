package org.hybridlb.app.core;

import static org.hybridlb.app.core.ControllerTest.dipsOf;
import static org.hybridlb.app.core.ControllerTest.placement;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.view.AssignmentView;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A switch whose fabric links are all gone while its control session stays up, and a fabric cut in
 * two: the controller serves from the largest connected part ({@link ServingFabric}).
 */
class FabricPartitionTest {
    static final String V = "10.100.0.1";
    final Topology topo = FatTree.generate(4);
    final FakeFabric fabric = new FakeFabric(topo);
    Controller c;

    @AfterEach
    void stop() {
        if (c != null) {
            c.close();
        }
    }

    final FakeFabric.MemoryStore store = new FakeFabric.MemoryStore();

    void start() {
        start(ControllerTest.CONFIG);
    }

    void start(ControllerConfig config) {
        c = new Controller(config, fabric.ports(store));
        c.start();
        c.awaitIdle(20_000);
    }

    /** The controller restarts while its topology source knows the switches but no link yet (ONOS at start). */
    void restartBeforeLinksAreKnown(ControllerConfig config) {
        c.close();
        fabric.topology = ServingFabricTest.withoutLinks(topo, l -> true);
        fabric.takeLog();
        start(config);
    }

    String hostOn(String tor) {
        return topo.hosts.stream().filter(h -> h.tor.equals(tor)).findFirst().orElseThrow().ip;
    }

    /** A VIP with one DIP behind each of {@code tors} and heavy traffic from tor-0-0; returns its HMux. */
    String vipOnHmux(String... tors) {
        StringBuilder dips = new StringBuilder();
        for (String t : tors) {
            dips.append(dips.length() == 0 ? "" : ",").append("{\"ip\":\"").append(hostOn(t)).append("\"}");
        }
        fabric.traffic = new TrafficInterval(0, 0, 10, List.of(new VipTraffic(V, Map.of("tor-0-0", 2e8), null)));
        c.createVip("{\"vip\":\"" + V + "\",\"aggregate\":\"" + ControllerTest.AGG + "\",\"ports\":[{\"proto\":\"tcp\","
                + "\"port\":80,\"dips\":[" + dips + "]}]}");
        c.awaitIdle(20_000);
        String at = placement(c, V);
        assertNotEquals(Assignment.SMUX, at, c.assignment().toString());
        return at;
    }

    /** The topology source now reports the fabric without the links {@code gone} matches. */
    void linksLost(java.util.function.Predicate<org.hybridlb.solver.model.Link> gone) {
        fabric.topology = ServingFabricTest.withoutLinks(topo, gone);
        c.requestReconcile("links lost");
        c.awaitIdle(20_000);
    }

    Map<String, String> cutOff() {
        return c.assignment().cutOffSwitches;
    }

    @Test
    void anHmuxWithNoLiveFabricLinkFailsOverAndItsVipIsPlacedElsewhere() {
        start();
        String at = vipOnHmux("tor-1-0", "tor-2-0");
        fabric.takeLog();

        linksLost(l -> l.a.equals(at) || l.b.equals(at));   // every fabric port of the HMux down, session up
        List<String> log = fabric.takeLog();
        assertFalse(log.isEmpty(), "nothing was done: " + c.assignment());
        assertEquals("withdrawRoutes " + at + " [" + V + "]", log.get(0), "routes towards it go first: " + log);
        assertEquals(Map.of(at, "no live fabric link"), cutOff());
        List<String> down = c.assignment().downSwitches;
        assertEquals(List.of(at), down);
        String now = placement(c, V);
        assertNotEquals(at, now);
        assertNotEquals(Assignment.SMUX, now, "re-placed on the connected fabric: " + c.assignment());
        assertEquals(null, c.assignment().lastError, c.assignment().toString());
        assertTrue(log.stream().noneMatch(l -> l.startsWith("install " + at + " ")), log.toString());

        // its links come back: the stale entry on it is removed, it may serve again
        fabric.topology = topo;
        c.requestReconcile("links back");
        c.awaitIdle(20_000);
        assertEquals(Map.of(), cutOff());
        assertFalse(fabric.switches.getOrDefault(at, Map.of()).containsKey(V) && !at.equals(placement(c, V)),
                "no stale entry left on " + at);
    }

    @Test
    void aPartitionedFabricPlacesVipsOnItsServedPartAndItsDipsThereStayInThePools() {
        start();
        vipOnHmux("tor-1-0", "tor-2-0", "tor-3-0");
        fabric.takeLog();

        // pod 3 loses every link to the cores: 4 switches cut off, 16 served
        linksLost(l -> l.a.startsWith("agg-3-") && l.b.startsWith("core-")
                || l.b.startsWith("agg-3-") && l.a.startsWith("core-"));
        AssignmentView a = c.assignment();
        assertEquals(null, a.lastError, "no 'the fabric is not connected': " + a);
        assertEquals(4, cutOff().size(), cutOff().toString());
        assertTrue(cutOff().keySet().stream().allMatch(s -> s.contains("-3-")), cutOff().toString());
        String now = placement(c, V);
        assertNotEquals(Assignment.SMUX, now, a.toString());
        assertFalse(now.contains("-3-"), now);
        String lost = hostOn("tor-3-0");
        Map<String, AssignmentView.DipHealth> health = a.dipHealth;
        assertEquals("unreachable", health.get(lost).state);
        assertTrue(health.get(lost).reason.startsWith(
                "its switch tor-3-0 counts as down: cut off from the served part"), a.toString());
        assertEquals(List.of(hostOn("tor-1-0"), hostOn("tor-2-0")),
                dipsOf(fabric.switches.get(now).get(V)).stream().map(d -> d.substring(0, d.indexOf('#')))
                        .collect(java.util.stream.Collectors.toList()),
                "the DIPs of the served part stay, the cut-off one leaves the pool");
    }

    @Test
    void aControllerStartingBeforeItsLinksAreKnownFailsNothingOver() {
        start();
        String at = vipOnHmux("tor-1-0", "tor-2-0");

        restartBeforeLinksAreKnown(ControllerTest.CONFIG);
        assertEquals(Map.of(), cutOff(), "nothing is cut off while links are being discovered");
        assertEquals(at, placement(c, V), c.assignment().toString());
        assertTrue(fabric.takeLog().stream().noneMatch(l -> l.startsWith("withdrawRoutes")), "no failover");

        fabric.topology = topo; // the links are discovered
        c.requestReconcile("links discovered");
        c.awaitIdle(20_000);
        assertEquals(at, placement(c, V), c.assignment().toString());
        assertTrue(fabric.takeLog().stream().noneMatch(l -> l.startsWith("withdrawRoutes")), "no failover");

        // discovery is over: a switch that loses its links now is cut off
        linksLost(l -> l.a.equals(at) || l.b.equals(at));
        assertEquals(Map.of(at, "no live fabric link"), cutOff());
    }

    @Test
    void withoutADiscoveryGraceAStartBeforeTheLinksCutsSwitchesOff() {
        start();
        vipOnHmux("tor-1-0", "tor-2-0");

        restartBeforeLinksAreKnown(ControllerTest.CONFIG.withDiscoveryGrace(java.time.Duration.ZERO));
        assertEquals(topo.switches.size() - 1, cutOff().size(), "the rule the grace guards against: " + cutOff());
    }
}
