package org.hybridlb.standalone.frr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.port.EventSink;
import org.hybridlb.standalone.Fabric;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The RIB parser on `show bgp ipv4 unicast json` captured from a real FRR 8.4 route server with
 * two announcing peers, then one, then none (src/test/resources/frr/capture.py made them).
 */
class RibParserTest {
    @TempDir
    Path dir;

    static String rib(String name) throws IOException {
        return new String(RibParserTest.class.getResourceAsStream("/frr/" + name).readAllBytes(), StandardCharsets.UTF_8);
    }

    static String summary(String name) {
        try {
            return rib(name);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Two SMuxes whose BGP peers are the captures' neighbours, on a k=2 fat-tree. */
    Path fabricFile() throws IOException {
        Path fabric = dir.resolve("fabric.json");
        Path topo = dir.resolve("topology.json");
        org.hybridlb.solver.io.ModelIo.write(topo, org.hybridlb.solver.topology.FatTree.generate(
                new org.hybridlb.solver.topology.FatTree.Params().k(2).smuxTors(List.of())));
        Files.writeString(fabric, "{\"topology\": \"topology.json\", \"ovs\": {\"rundir\": \"/nonexistent\"},"
                + " \"switches\": {\"core-0\": {\"bridge\": \"b1\", \"location\": 1}, \"agg-0-0\": {\"bridge\": \"b2\", \"location\": 2},"
                + " \"agg-1-0\": {\"bridge\": \"b3\", \"location\": 3}, \"tor-0-0\": {\"bridge\": \"b4\", \"location\": 4},"
                + " \"tor-1-0\": {\"bridge\": \"b5\", \"location\": 5}},"
                + " \"hosts\": {\"m1\": {\"ip\": \"10.0.0.50\", \"location\": 10}, \"m2\": {\"ip\": \"10.0.1.50\", \"location\": 11}},"
                + " \"smuxes\": [{\"id\": \"smux-a\", \"host\": \"m1\", \"ip\": \"10.0.0.50\", \"controlUrl\": \"http://10.254.1.21:8000\", \"bgpPeer\": \"10.254.1.21\"},"
                + "              {\"id\": \"smux-b\", \"host\": \"m2\", \"ip\": \"10.0.1.50\", \"controlUrl\": \"http://10.254.2.22:8000\", \"bgpPeer\": \"10.254.2.22\"}],"
                + " \"routeServer\": {\"vtyDir\": \"rs\"}}");
        return fabric;
    }

    static EventSink sink(List<Set<String>> events) {
        return new EventSink() {
            public void switchDown(String s) { }
            public void switchUp(String s) { }
            public void smuxesChanged(Set<String> live) {
                events.add(live);
            }
            public void dipHealthChanged(String d, boolean h) { }
        };
    }

    /** A route source reading the given RIBs and summaries in turn (each read takes the first). */
    static FrrRouteSource scripted(Fabric f, java.time.Duration grace, List<String> ribs, List<String> summaries) {
        return new FrrRouteSource(f, 1000, grace) {
            @Override
            String readRib() {
                return ribs.remove(0);
            }

            @Override
            String readSummary() {
                return summaries.remove(0);
            }
        };
    }

    /** Captured: a route server with both SMux sessions up, and one just started (both Active). */
    @Test
    void establishedSessionsFromTheSummary() {
        assertEquals(Set.of("10.254.3.249", "10.254.3.250"), RibParser.establishedPeers(summary("summary-established.json")));
        assertEquals(Set.of(), RibParser.establishedPeers(summary("summary-no-session.json")));
        assertThrows(IllegalArgumentException.class, () -> RibParser.establishedPeers("{}"));
    }

    @Test
    void aRestartedRouteServersEmptyRibKeepsTheSmuxesForTheGraceOnly() throws IOException {
        Fabric f = Fabric.load(fabricFile());
        List<String> ribs = new ArrayList<>(List.of(rib("rib-two-peers.json"), rib("rib-empty.json"), rib("rib-empty.json"),
                rib("rib-two-peers.json"), rib("rib-empty.json"), rib("rib-empty.json")));
        List<String> summaries = new ArrayList<>(List.of(summary("summary-no-session.json"),
                summary("summary-no-session.json"), summary("summary-no-session.json"), summary("summary-no-session.json")));
        List<Set<String>> events = new ArrayList<>();
        FrrRouteSource src = scripted(f, java.time.Duration.ofHours(1), ribs, summaries);
        src.subscribe(sink(events));
        src.poll();
        assertEquals(Set.of("smux-a", "smux-b"), src.liveSmuxes());
        src.poll(); // restarted: empty RIB, no session up: kept
        src.poll();
        assertEquals(Set.of("smux-a", "smux-b"), src.liveSmuxes());
        src.poll(); // the SMuxes are back
        assertEquals(List.of(Set.of("smux-a", "smux-b")), events, "no event while it restarted");

        FrrRouteSource expiring = scripted(f, java.time.Duration.ZERO, ribs, summaries);
        ribs.add(0, rib("rib-two-peers.json"));
        expiring.poll();
        expiring.poll(); // no grace: an empty RIB with no session is taken as it is
        assertEquals(Set.of(), expiring.liveSmuxes());
    }

    /**
     * A restarted route server whose SMux sessions are already back (Established, seconds old)
     * but whose RIB is still empty or partial: its sessions are younger than the last reading, so
     * the last set is kept until every SMux is back. A session that was up at the last reading
     * means the route server did not restart: the SMux that left withdrew, taken at once.
     */
    @Test
    void sessionsBackBeforeTheirRoutesAreARestartNotALoss() throws IOException {
        Fabric f = Fabric.load(fabricFile());
        String young = summary("summary-established.json").replace("\"peerUptimeMsec\":71000", "\"peerUptimeMsec\":0")
                .replace("\"peerUptimeMsec\":70000", "\"peerUptimeMsec\":0");
        List<String> ribs = new ArrayList<>(List.of(rib("rib-two-peers.json"), rib("rib-empty.json"), rib("rib-one-peer.json"),
                rib("rib-two-peers.json"), rib("rib-one-peer.json")));
        List<String> summaries = new ArrayList<>(List.of(young, summary("summary-established.json")));
        List<Set<String>> events = new ArrayList<>();
        FrrRouteSource src = scripted(f, java.time.Duration.ofHours(1), ribs, summaries);
        src.subscribe(sink(events));
        src.poll();
        src.poll(); // restarted: sessions up, RIB empty: kept
        src.poll(); // one SMux announced again: still kept
        assertEquals(Set.of("smux-a", "smux-b"), src.liveSmuxes());
        src.poll(); // both back: the restart is over
        src.poll(); // smux-b withdrew while sessions older than the last reading are up: taken at once
        assertEquals(Set.of("smux-a"), src.liveSmuxes());
        assertEquals(List.of(Set.of("smux-a", "smux-b"), Set.of("smux-a")), events);
        assertEquals(List.of(), summaries);
    }

    @Test
    void announcersPerPrefix() throws IOException {
        assertEquals(Map.of("10.100.0.0/16", Set.of("10.254.1.21", "10.254.2.22"), "10.101.0.0/16", Set.of("10.254.1.21")),
                RibParser.announcers(rib("rib-two-peers.json")));
        assertEquals(Map.of("10.100.0.0/16", Set.of("10.254.1.21"), "10.101.0.0/16", Set.of("10.254.1.21")),
                RibParser.announcers(rib("rib-one-peer.json")));
        assertEquals(Map.of(), RibParser.announcers(rib("rib-empty.json")));
        assertEquals(Map.of(), RibParser.announcers("{}"));
        assertEquals(Map.of(), RibParser.announcers("{\"routes\": {\"10.1.0.0/16\": [{\"valid\": false, \"peerId\": \"10.254.1.21\"}]}}"));
        assertThrows(IllegalArgumentException.class, () -> RibParser.announcers("% Unknown command"));
    }

    @Test
    void liveSmuxesFollowTheRibAndFireOnChange() throws IOException {
        Fabric f = Fabric.load(fabricFile());
        List<String> ribs = new ArrayList<>(List.of(rib("rib-two-peers.json"), rib("rib-two-peers.json"),
                rib("rib-one-peer.json"), "not json", rib("rib-empty.json")));
        List<Set<String>> events = new ArrayList<>();
        FrrRouteSource src = new FrrRouteSource(f, 1000) {
            @Override
            String readRib() {
                return ribs.remove(0);
            }

            @Override
            String readSummary() {
                return summary("summary-established.json"); // the SMuxes withdrew, their sessions are up
            }
        };
        src.subscribe(sink(events));
        src.poll();
        assertEquals(Set.of("smux-a", "smux-b"), src.liveSmuxes());
        src.poll(); // same RIB: no event
        src.poll();
        assertEquals(Set.of("smux-a"), src.liveSmuxes());
        src.poll(); // unreadable: the last set is kept, no event
        assertEquals(Set.of("smux-a"), src.liveSmuxes());
        src.poll();
        assertEquals(Set.of(), src.liveSmuxes());
        assertEquals(List.of(Set.of("smux-a", "smux-b"), Set.of("smux-a"), Set.of()), events);
        assertEquals(dir.resolve("rs"), f.vtyDir);

        // At start an unreadable RIB is read again: "cannot read" must not become "no SMux live"
        // (the controller would remove every aggregate route).
        List<String> atStart = new ArrayList<>(List.of("% vtysh timed out", "not json", rib("rib-one-peer.json")));
        FrrRouteSource starting = new FrrRouteSource(f, 1000) {
            @Override
            String readRib() {
                return atStart.remove(0);
            }
        };
        starting.start(java.time.Duration.ofMillis(10));
        starting.close();
        assertEquals(Set.of("smux-a"), starting.liveSmuxes());
        assertEquals(List.of(), atStart);
    }
}
