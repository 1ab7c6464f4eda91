package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.ServiceEntry;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.MigrationWave;
import org.hybridlb.solver.model.StepAction;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * WCMP weights on the data path (solver {@code model.Wcmp}): a DIP is one bucket of weight 1 per
 * unit of its gcd-reduced weight, with ids of its own, on the HMux and the SMuxes alike; a weight
 * lowered loses its units in place, a weight raised or a DIP drained goes through the SMuxes
 * (§3.5.2) and changes the pool there in place, without a DIP ever leaving the SMux pool.
 */
class WcmpControllerTest {
    static final String VIP = "10.100.0.1";

    /** ControllerTest's fabric and controllers (its tests do not run from here). */
    final ControllerTest harness = new ControllerTest();
    final Topology topo = harness.topo;
    final FakeFabric fabric = harness.fabric;

    @AfterEach
    void stop() {
        harness.stop();
    }

    Controller start(FakeFabric.MemoryStore store) {
        return harness.start(store);
    }

    String host(int i) {
        return harness.host(i);
    }

    /** The VIP with hosts 0, 1, 2... of these weights. */
    String vipJson(int... weights) {
        StringBuilder dips = new StringBuilder();
        for (int i = 0; i < weights.length; i++) {
            dips.append(dips.length() == 0 ? "" : ",").append("{\"ip\":\"").append(host(i)).append("\",\"weight\":")
                    .append(weights[i]).append("}");
        }
        return "{\"vip\":\"" + VIP + "\",\"aggregate\":\"10.100.0.0/16\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,"
                + "\"dips\":[" + dips + "]}]}";
    }

    /** Creates the VIP with heavy traffic and waits until an HMux holds it; returns that switch. */
    String onHmux(Controller c, int... weights) {
        String tor = topo.switches.stream().filter(s -> s.id.startsWith("tor-")).findFirst().orElseThrow().id;
        fabric.traffic = new TrafficInterval(0, 0, 10, List.of(new VipTraffic(VIP, Map.of(tor, 2e8), null)));
        c.createVip(vipJson(weights));
        c.awaitIdle(20_000);
        String at = c.assignment().installed.get(VIP);
        assertNotEquals(Assignment.SMUX, at, "a VIP with traffic should reach an HMux: " + c.assignment());
        return at;
    }

    Bucket unit(int host, int id) {
        return new Bucket(host(host), 1, null, id);
    }

    List<Bucket> onSwitch(String sw) {
        return fabric.switches.get(sw).get(VIP).ports.get(0).dips;
    }

    List<Bucket> onSmux(String smux) {
        return fabric.tables.get(smux).vips.get(0).ports.get(0).dips;
    }

    /** Steps of every migration since the controller started, in order. */
    static List<StepAction> steps(Controller c) {
        List<StepAction> out = new ArrayList<>();
        List<MigrationRecord> recent = new ArrayList<>(c.migrations().recent);
        java.util.Collections.reverse(recent);
        for (MigrationRecord m : recent) {
            for (MigrationWave w : m.plan.waves.subList(0, m.nextWave)) {
                w.steps.forEach(s -> out.add(s.action));
            }
        }
        return out;
    }

    @Test
    void weightsBecomeOneBucketPerUnitWithIdsOfTheirOwnOnHmuxAndSmux() {
        Controller c = start(new FakeFabric.MemoryStore());
        String at = onHmux(c, 20, 40, 20); // 1:2:1 once reduced by the gcd
        List<Bucket> want = List.of(unit(0, 0), unit(1, 1), unit(1, 2), unit(2, 3));
        assertEquals(want, onSwitch(at));
        for (String m : fabric.live) {
            assertEquals(want, onSmux(m), "the SMuxes hash over the same buckets: " + m);
        }
        assertNull(c.assignment().lastError);
        assertEquals(20, c.vip(VIP).ports.get(0).dips.get(0).weight, "the configuration keeps the weights as written");
    }

    @Test
    void aLoweredWeightLosesOnlyItsOwnUnitsInPlace() {
        Controller c = start(new FakeFabric.MemoryStore());
        String at = onHmux(c, 1, 3, 1);
        assertEquals(List.of(unit(0, 0), unit(1, 1), unit(1, 2), unit(1, 3), unit(2, 4)), onSwitch(at));
        fabric.takeLog();
        c.replaceVip(VIP, vipJson(1, 2, 1));
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        assertTrue(log.stream().noneMatch(l -> l.startsWith("remove ")), "no detour through the SMuxes: " + log);
        assertEquals(at, c.assignment().installed.get(VIP));
        List<Bucket> want = List.of(unit(0, 0), unit(1, 1), unit(1, 2), unit(2, 4));
        assertEquals(want, onSwitch(at), "the other buckets keep their ids: " + log);
        assertEquals(want, onSmux("smux-0"));
        assertNull(c.assignment().lastError);
    }

    @Test
    void aRaisedWeightGoesThroughTheSmuxesAddingUnitsWithoutTheDipLeavingThePool() {
        Controller c = start(new FakeFabric.MemoryStore());
        String at = onHmux(c, 1, 1);
        fabric.takeLog();
        fabric.diverging.put("smux-1", Map.of(VIP, 2L));
        c.replaceVip(VIP, vipJson(3, 1));
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        int off = ControllerTest.indexOf(log, "remove " + at + " " + VIP);
        int grown = -1;
        for (int i = 0; i < log.size(); i++) {
            String l = log.get(i);
            if (l.startsWith("put ")) {
                assertTrue(l.contains(host(0) + "#0") && l.contains(host(1) + "#1"),
                        "every table keeps both DIPs with their ids (their pinned connections stay): " + l);
                if (l.contains(host(0) + "#3")) {
                    grown = grown < 0 ? i : grown;
                }
            }
        }
        assertTrue(off >= 0 && grown > off, "off the HMux, then the units added on the SMuxes: " + log);
        SmuxTable.Port pool = fabric.tables.get("smux-0").vips.get(0).ports.get(0);
        assertEquals(List.of(unit(0, 0), unit(1, 1), unit(0, 2), unit(0, 3)),
                new VipEntry(VIP, null, List.of(new ServiceEntry(pool.proto, pool.port, pool.dips))).normalized()
                        .ports.get(0).dips);
        assertTrue(steps(c).stream().noneMatch(a -> a == StepAction.ADD_DIP || a == StepAction.REMOVE_DIP),
                "the planner only moves the VIP: " + steps(c));
        assertEquals(Assignment.SMUX, c.assignment().installed.get(VIP));
        assertEquals(2L, c.assignment().heldOnSmuxes.get(VIP).divergingConnections);

        fabric.diverging.clear();
        c.reassignNow();
        c.awaitIdle(20_000);
        String back = c.assignment().installed.get(VIP);
        assertNotEquals(Assignment.SMUX, back);
        assertEquals(List.of(unit(0, 0), unit(1, 1), unit(0, 2), unit(0, 3)), onSwitch(back));
        assertNull(c.assignment().lastError, "the plans passed the PlanChecker");
    }

    @Test
    void aDrainedDipTakesNoNewFlowsAndKeepsItsPinnedConnectionsOnTheSmuxes() {
        Controller c = start(new FakeFabric.MemoryStore());
        String at = onHmux(c, 1, 1, 1);
        fabric.takeLog();
        fabric.diverging.put("smux-0", Map.of(VIP, 5L));
        c.replaceVip(VIP, vipJson(1, 0, 1));
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        assertTrue(ControllerTest.indexOf(log, "remove " + at + " " + VIP) >= 0,
                "an HMux pins nothing: the VIP leaves it before the DIP is drained: " + log);
        assertEquals(Assignment.SMUX, c.assignment().installed.get(VIP));
        // weight 0 on the SMuxes: no new flow (OVS: a bucket of weight 0 is not live), pinned ones stay
        assertEquals(List.of(unit(0, 0), new Bucket(host(1), 0, null, 1), unit(2, 2)), onSmux("smux-0"));
        assertEquals(5L, c.assignment().heldOnSmuxes.get(VIP).divergingConnections);

        fabric.diverging.clear(); // its connections ended
        c.reassignNow();
        c.awaitIdle(20_000);
        String back = c.assignment().installed.get(VIP);
        assertNotEquals(Assignment.SMUX, back);
        assertEquals(List.of(unit(0, 0), unit(2, 2)), onSwitch(back), "no bucket for a drained DIP on an HMux");
        assertEquals(List.of(unit(0, 0), new Bucket(host(1), 0, null, 1), unit(2, 2)), onSmux("smux-0"));

        // back in service: through the SMuxes again, with its old id
        c.replaceVip(VIP, vipJson(1, 1, 1));
        c.awaitIdle(20_000);
        c.reassignNow();
        c.awaitIdle(20_000);
        String again = c.assignment().installed.get(VIP);
        assertEquals(List.of(unit(0, 0), unit(1, 1), unit(2, 2)), onSwitch(again));
        assertNull(c.assignment().lastError);
    }

    @Test
    void aStateWrittenWithWeightsIsReadInUnitsAndKeepsTheDipsIds() throws Exception {
        FakeFabric.MemoryStore store = new FakeFabric.MemoryStore();
        Controller c = start(store);
        String at = onHmux(c, 2, 4);
        c.close();
        harness.started.clear();
        // as a controller that kept one bucket per DIP wrote it: weights as configured, an id per DIP
        ObjectNode state = (ObjectNode) Json.MAPPER.readTree(store.json);
        ObjectNode dips = (ObjectNode) state.at("/installedVips/" + VIP.replace("/", "~1") + "/ports/0");
        dips.withArray("dips").forEach(d -> ((ObjectNode) d).put("weight", ((ObjectNode) d).get("weight").asInt() * 2));
        ((ObjectNode) state.get("bucketIds")).remove(VIP + "|tcp/80|" + host(1) + "#1");
        store.json = state.toString();
        fabric.switches.get(at).remove(VIP);

        Controller again = start(store);
        assertNull(again.assignment().lastError);
        assertEquals(List.of(unit(0, 0), unit(1, 1), unit(1, 2)), onSwitch(again.assignment().installed.get(VIP)),
                "weights 4:8 are 1:2 units; each DIP's first unit keeps the DIP's id");
    }
}
