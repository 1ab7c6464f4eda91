package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.view.AssignmentView;
import org.hybridlb.app.core.view.SwitchView;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The typed hash contract end to end through the controller: the SMuxes hash each VIP as its
 * HMux's southbound says, a VIP whose pools the SMuxes could not hash as a switch does stays off
 * that switch and says why in {@code GET /assignment}, and a switch no SMux can agree with serves
 * as no HMux (in {@code hmuxUnfit}).
 */
class HashContractsTest {
    static final String AGG = "10.100.0.0/16";
    static final SwitchCapability DP_HASH = new SwitchCapability(
            HashContract.of(HashContract.Selection.OVS_DP_HASH, 0, HashContract.Encap.GRE), false, false, false,
            Set.of());

    final Topology topo = FatTree.generate(4);
    final FakeFabric fabric = new FakeFabric(topo);
    Controller c;

    @AfterEach
    void stop() {
        if (c != null) {
            c.close();
        }
    }

    void start() {
        c = new Controller(ControllerConfig.defaults().withInterval(Duration.ZERO),
                fabric.ports(new FakeFabric.MemoryStore()));
        c.start();
        c.awaitIdle(20_000);
    }

    String vip(String vip, int... weights) {
        StringBuilder dips = new StringBuilder();
        for (int i = 0; i < weights.length; i++) {
            dips.append(i == 0 ? "" : ",").append("{\"ip\":\"").append(topo.hosts.get(i).ip)
                    .append("\",\"weight\":").append(weights[i]).append("}");
        }
        return "{\"vip\":\"" + vip + "\",\"aggregate\":\"" + AGG + "\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,"
                + "\"dips\":[" + dips + "]}]}";
    }

    void traffic(String... vips) {
        String tor = topo.switches.stream().filter(s -> s.role == SwitchRole.TOR).findFirst().orElseThrow().id;
        List<VipTraffic> vt = new ArrayList<>();
        for (String v : vips) {
            vt.add(new VipTraffic(v, Map.of(tor, 2e8), null));
        }
        fabric.traffic = new TrafficInterval(0, 0, 10, vt);
    }

    SmuxTable.Entry smuxEntry(String vip) {
        return fabric.tables.get("smux-0").vips.stream().filter(e -> e.vip.equals(vip)).findFirst().orElseThrow();
    }

    /** A Prism VIP (front end: the first host; backends b1, b2 on hosts 2 and 3) steered by {@code steering}. */
    String prismVip(String vip, String steering) {
        return vip(vip, 1).replaceAll("}$", ", \"prism\": {\"frontends\": [{\"ip\": \"" + topo.hosts.get(0).ip
                + "\", \"admin\": \"http://127.0.0.1:9/\"}], \"backends\": {\"b1\": {\"address\": \""
                + topo.hosts.get(2).ip + "\", \"controlPort\": 9500}, \"b2\": {\"address\": \"" + topo.hosts.get(3).ip
                + "\", \"controlPort\": 9500}}, \"rules\": [{\"name\": \"all\", \"priority\": 0, \"split\":"
                + " {\"b1\": 1, \"b2\": 1}}], \"steering\": \"" + steering + "\"}}");
    }

    @Test
    void aFabricSteeredPrismVipStaysOnTheSmuxesThatHoldItsPins() {
        org.hybridlb.app.core.port.Ports p = fabric.ports(new FakeFabric.MemoryStore());
        c = new Controller(ControllerConfig.defaults().withInterval(Duration.ZERO),
                new org.hybridlb.app.core.port.Ports(p.topology, p.hmux, p.smux, p.routes, p.stats, p.health, p.store,
                        p.cookies, p.prism, new org.hybridlb.app.core.prism.PrismPinsTest.Device()));
        c.start();
        c.awaitIdle(20_000);
        String pinned = "10.100.0.1";
        String agent = "10.100.0.2";
        traffic(pinned, agent);
        c.createVip(prismVip(pinned, "fabric"));
        c.createVip(prismVip(agent, "agent"));
        c.awaitIdle(20_000);
        c.reassignNow();
        c.awaitIdle(20_000);

        AssignmentView a = c.assignment();
        assertEquals(Assignment.SMUX, a.installed.get(pinned), "its pins are on the SMuxes: " + a);
        assertEquals(HashContracts.PRISM_PINS_ON_SMUXES, a.hashUnmatched.get(pinned).reason);
        assertNotEquals(Assignment.SMUX, a.installed.get(agent), "steered by its front ends' agents: any mux");
        assertFalse(a.hashUnmatched.containsKey(agent));
    }

    @Test
    void aVipWhosePoolTheSmuxesCannotHashAsItsHmuxStaysOffItAndSaysWhy() {
        topo.switches.forEach(s -> fabric.capabilities.put(s.id, DP_HASH));
        start();
        String fits = "10.100.0.1";
        String skewed = "10.100.0.2";   // ceil((1 + 64) / 1) = 65 dp_hash slots: OVS would not hash it with dp_hash
        traffic(fits, skewed);
        c.createVip(vip(fits, 1, 3));
        c.createVip(vip(skewed, 1, 64));
        c.awaitIdle(20_000);
        c.reassignNow();
        c.awaitIdle(20_000);

        AssignmentView a = c.assignment();
        assertNotEquals(Assignment.SMUX, a.installed.get(fits), "a pool dp_hash takes goes to an HMux: " + a);
        assertEquals(Assignment.SMUX, a.installed.get(skewed), "the other stays on the SMuxes: " + a);
        AssignmentView.HashUnmatched why = a.hashUnmatched.get(skewed);
        assertTrue(why.reason.contains("65 dp_hash slots"), why.reason);
        assertEquals(topo.switches.size(), why.switches.size(), "every switch offers that contract");
        assertFalse(a.hashUnmatched.containsKey(fits));
        assertNull(a.lastError);

        assertEquals("ovs-dphash", smuxEntry(fits).selection, "the SMuxes hash as its HMux does");
        assertEquals("gre", smuxEntry(fits).encap);
        assertEquals("crc32", smuxEntry(skewed).selection, "no HMux to agree with: a hash that takes any pool");
        SwitchView sw = c.switches().get(0);
        assertEquals("ovs-dphash", sw.hash.selection);
        assertEquals("gre", sw.hash.encap);
        assertFalse(sw.decodesCookies);
    }

    @Test
    void aSwitchNoSmuxCanAgreeWithServesAsNoHmux() {
        String hmuxFirst = topo.switches.stream().filter(s -> s.role == SwitchRole.TOR).findFirst().orElseThrow().id;
        topo.switches.forEach(s -> fabric.capabilities.put(s.id, new SwitchCapability(
                HashContract.none("a hash no SMux replicates"), true, true, false, Set.of())));
        start();
        traffic("10.100.0.1");
        c.createVip(vip("10.100.0.1", 1, 1));
        c.awaitIdle(20_000);
        c.reassignNow();
        c.awaitIdle(20_000);
        AssignmentView a = c.assignment();
        assertEquals(Assignment.SMUX, a.installed.get("10.100.0.1"), a.toString());
        assertTrue(a.hmuxUnfit.get(hmuxFirst).contains("a hash no SMux replicates"), a.hmuxUnfit.toString());
        assertEquals("a hash no SMux replicates", c.switches().get(0).hash.noAgreement);
        assertEquals("ovs", smuxEntry("10.100.0.1").selection, "no switch agrees: the configured default");
    }
}
