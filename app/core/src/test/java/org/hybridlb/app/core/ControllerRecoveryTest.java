package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Crash recovery and the single-writer loop under concurrent REST calls and events. */
class ControllerRecoveryTest {
    final Topology topo = FatTree.generate(4);
    final FakeFabric fabric = new FakeFabric(topo);
    final FakeFabric.MemoryStore store = new FakeFabric.MemoryStore();
    final List<Controller> started = new ArrayList<>();

    @AfterEach
    void stop() {
        started.forEach(Controller::close);
    }

    Controller start() {
        Controller c = new Controller(ControllerConfig.defaults().withInterval(Duration.ZERO), fabric.ports(store));
        started.add(c);
        c.start();
        c.awaitIdle(20_000);
        return c;
    }

    String vipJson(String vip, int... hosts) {
        return FakeFabric.vipJson(topo, vip, hosts);
    }

    void traffic(List<String> vips) {
        String tor = topo.switches.stream().filter(s -> s.role == SwitchRole.TOR).findFirst().get().id;
        List<VipTraffic> vt = new ArrayList<>();
        vips.forEach(v -> vt.add(new VipTraffic(v, Map.of(tor, 2e8), null)));
        fabric.traffic = new TrafficInterval(0, 0, 10, vt);
    }

    @Test
    void crashInTheMiddleOfAWaveIsRepairedToTheLastVerifiedWave() throws Exception {
        Controller c = start();
        traffic(List.of("10.100.0.1"));
        c.createVip(vipJson("10.100.0.1", 0, 1));
        c.awaitIdle(20_000);
        String at = c.assignment().installed.get("10.100.0.1");
        assertNotEquals(Assignment.SMUX, at);
        c.close();
        started.clear();

        // the crash: a wave was running, one switch already got an entry the state never recorded
        ObjectNode doc = (ObjectNode) Json.MAPPER.readTree(store.json);
        ((ObjectNode) doc.get("migration")).put("state", MigrationRecord.RUNNING);
        store.json = doc.toString();
        String other = topo.switches.stream().map(s -> s.id).filter(id -> !id.equals(at)).findFirst().get();
        VipEntry stray = fabric.switches.get(at).get("10.100.0.1");
        fabric.switches.computeIfAbsent(other, k -> new java.util.LinkedHashMap<>()).put("10.100.0.1", stray);
        fabric.takeLog();

        Controller again = start();
        List<String> log = fabric.takeLog();
        assertEquals(List.of("remove " + other + " 10.100.0.1"), log, "only the half-applied change is undone");
        List<MigrationRecord> recent = again.migrations().recent;
        assertEquals(MigrationRecord.INTERRUPTED, recent.get(0).state);
    }

    @Test
    void theIntervalTimerReassignsWhenTrafficAppears() throws Exception {
        Controller c = new Controller(ControllerConfig.defaults().withInterval(Duration.ofMillis(50)), fabric.ports(store));
        started.add(c);
        c.start();
        c.createVip(vipJson("10.100.0.1", 0, 1));
        c.awaitIdle(20_000);
        Map<String, String> before = c.assignment().installed;
        assertEquals(Assignment.SMUX, before.get("10.100.0.1"), "no traffic: SMuxes only");
        traffic(List.of("10.100.0.1")); // measured, no event: only the timer can notice
        long end = System.currentTimeMillis() + 10_000;
        String at = Assignment.SMUX;
        while (Assignment.SMUX.equals(at) && System.currentTimeMillis() < end) {
            Thread.sleep(20);
            Map<String, String> now = c.assignment().installed;
            at = now.get("10.100.0.1");
        }
        assertNotEquals(Assignment.SMUX, at, "placed on an HMux by the interval reconcile");
    }

    @Test
    void restCallsAndEventsFromManyThreadsNeverRace() throws Exception {
        Controller c = start();
        List<String> vips = new ArrayList<>();
        for (int i = 1; i <= 24; i++) {
            vips.add("10.100.0." + i);
        }
        traffic(vips);
        ExecutorService pool = Executors.newFixedThreadPool(6);
        List<Future<?>> done = new ArrayList<>();
        for (int i = 0; i < vips.size(); i++) {
            String v = vips.get(i);
            int h = i % (topo.hosts.size() - 2);
            done.add(pool.submit(() -> c.createVip(vipJson(v, h, h + 1))));
            if (i % 6 == 0) {
                done.add(pool.submit(() -> c.requestReconcile("test")));
                done.add(pool.submit(() -> c.smuxesChanged(fabric.liveSmuxes())));
                done.add(pool.submit(c::reassignNow));
            }
        }
        for (Future<?> f : done) {
            f.get();
        }
        pool.shutdown();
        c.reassignNow();
        c.awaitIdle(30_000);
        assertEquals(vips.size(), c.vips().size());
        // the devices hold exactly the installed state
        Map<String, String> installed = c.assignment().installed;
        assertEquals(vips.size(), installed.size());
        for (String v : vips) {
            String at = installed.get(v);
            for (String sw : fabric.switches.keySet()) {
                assertEquals(sw.equals(at), fabric.switches.get(sw).containsKey(v), v + " on " + sw);
            }
        }
        fabric.tables.values().forEach(t -> assertEquals(vips.size(), t.vips.size()));
        assertTrue(installed.values().stream().anyMatch(p -> !Assignment.SMUX.equals(p)));
    }
}
