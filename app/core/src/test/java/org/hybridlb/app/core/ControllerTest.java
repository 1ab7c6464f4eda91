package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.StateStore;
import org.hybridlb.app.core.store.FileStateStore;
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
import org.junit.jupiter.api.io.TempDir;

class ControllerTest {
    static final String AGG = "10.100.0.0/16";
    static final ControllerConfig CONFIG = ControllerConfig.defaults().withInterval(Duration.ZERO);

    final Topology topo = FatTree.generate(4);
    final FakeFabric fabric = new FakeFabric(topo);
    final List<Controller> started = new ArrayList<>();

    @AfterEach
    void stop() {
        started.forEach(Controller::close);
    }

    Controller start(StateStore store) {
        return start(CONFIG, store);
    }

    Controller start(ControllerConfig config, StateStore store) {
        Controller c = new Controller(config, fabric.ports(store));
        started.add(c);
        c.start();
        c.awaitIdle(20_000);
        return c;
    }

    String host(int i) {
        return topo.hosts.get(i).ip;
    }

    String tor(int i) {
        List<String> tors = new ArrayList<>();
        topo.switches.stream().filter(s -> s.role == SwitchRole.TOR).forEach(s -> tors.add(s.id));
        return tors.get(i);
    }

    String vipJson(String vip, int... hosts) {
        StringBuilder dips = new StringBuilder();
        for (int h : hosts) {
            dips.append(dips.length() == 0 ? "" : ",").append("{\"ip\":\"").append(host(h)).append("\"}");
        }
        return "{\"vip\":\"" + vip + "\",\"aggregate\":\"" + AGG + "\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,"
                + "\"dips\":[" + dips + "]}]}";
    }

    /** Heavy traffic from ToR 0 to each VIP, so the solver wants them on HMuxes. */
    void traffic(String... vips) {
        List<VipTraffic> vt = new ArrayList<>();
        for (String v : vips) {
            vt.add(new VipTraffic(v, Map.of(tor(0), 2e8), null));
        }
        fabric.traffic = new TrafficInterval(0, 0, 10, vt);
    }

    static int indexOf(List<String> log, String prefix) {
        for (int i = 0; i < log.size(); i++) {
            if (log.get(i).startsWith(prefix)) {
                return i;
            }
        }
        return -1;
    }

    static String placement(Controller c, String vip) {
        Map<String, String> installed = c.assignment().installed;
        return installed.get(vip);
    }

    /** Adds a VIP with traffic and waits until it lives on an HMux; returns that switch. */
    String vipOnHmux(Controller c, String vip, int... hosts) {
        traffic(vip);
        c.createVip(vipJson(vip, hosts));
        c.awaitIdle(20_000);
        String at = placement(c, vip);
        assertNotEquals(Assignment.SMUX, at, "a VIP with traffic should reach an HMux: " + c.assignment());
        assertEquals(null, c.assignment().lastError, "no error and no refused plan");
        return at;
    }

    @Test
    void vipAddGoesToTheSmuxesFirstThenToAnHmux() {
        Controller c = start(new FakeFabric.MemoryStore());
        assertEquals(List.of(), fabric.takeLog(), "an empty controller programs nothing");
        String at = vipOnHmux(c, "10.100.0.1", 0, 1);
        List<String> log = fabric.takeLog();
        int put0 = indexOf(log, "put smux-0");
        int group = indexOf(log, "setSmuxGroup " + AGG);
        int install = indexOf(log, "install " + at + " 10.100.0.1");
        assertTrue(put0 >= 0 && group > put0 && install > group, "SMux table, then aggregate route, then HMux: " + log);
        for (int i = 0; i < topo.smuxes.size(); i++) {
            assertTrue(indexOf(log, "put " + topo.smuxes.get(i).id) < install, "every SMux before the HMux: " + log);
        }
        assertEquals(1, log.stream().filter(l -> l.startsWith("install")).count(), log.toString());
        VipEntry e = fabric.switches.get(at).get("10.100.0.1");
        assertEquals(List.of(new Bucket(host(0), 1, null, 0), new Bucket(host(1), 1, null, 1)), e.ports.get(0).dips);
        assertEquals(e.ports.get(0).dips, fabric.tables.get("smux-0").vips.get(0).ports.get(0).dips,
                "HMux and SMux hold the same buckets, so they hash alike");
    }

    @Test
    void hmuxFailureWithdrawsItsVipsAtOnceThenReplacesThem() {
        Controller c = start(new FakeFabric.MemoryStore());
        // DIPs on other ToRs: DIPs behind the failed switch itself would leave with it (next tests)
        String at = vipOnHmux(c, "10.100.0.1", hostOn(tor(1), 0), hostOn(tor(2), 0));
        fabric.takeLog();
        fabric.down.add(at);
        c.switchDown(at);
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        assertEquals("withdrawRoutes " + at + " [10.100.0.1]", log.get(0), "first thing done: " + log);
        String now = placement(c, "10.100.0.1");
        assertNotEquals(at, now);
        assertNotEquals(Assignment.SMUX, now, "re-placed on a live HMux: " + log);
        assertTrue(log.stream().noneMatch(l -> l.startsWith("install " + at + " ") || l.startsWith("remove " + at + " ")),
                "the failed switch is not touched: " + log);
        List<String> down = c.assignment().downSwitches;
        assertEquals(List.of(at), down);
    }

    @Test
    void dipAddedToAnHmuxVipGoesThroughTheSmuxesAndReturnsWhenNoConnectionWouldMove() {
        Controller c = start(new FakeFabric.MemoryStore());
        String at = vipOnHmux(c, "10.100.0.1", 0, 1);
        fabric.takeLog();
        fabric.diverging.put("smux-1", Map.of("10.100.0.1", 3L));
        c.addDip("10.100.0.1", "{\"ip\":\"" + host(2) + "\"}");
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        int off = indexOf(log, "remove " + at + " 10.100.0.1");
        int add = -1;
        for (int i = 0; i < log.size(); i++) {
            if (log.get(i).startsWith("put ") && log.get(i).contains(host(2) + "#2")) {
                add = i;
                break;
            }
        }
        assertTrue(off >= 0 && add > off, "off the HMux, then the DIP added on the SMuxes: " + log);
        assertTrue(log.stream().noneMatch(l -> l.startsWith("install ")), "no HMux holds the VIP: " + log);
        assertEquals(Assignment.SMUX, placement(c, "10.100.0.1"));

        // SMux 1 still pins 3 connections an HMux would send to another DIP: the VIP stays.
        c.reassignNow();
        c.awaitIdle(20_000);
        assertEquals(Assignment.SMUX, placement(c, "10.100.0.1"));
        Map<String, AssignmentView.HeldVip> held = c.assignment().heldOnSmuxes;
        assertEquals(3L, held.get("10.100.0.1").divergingConnections, held.toString());
        assertTrue(fabric.takeLog().stream().noneMatch(l -> l.startsWith("install ")));

        // Those connections ended: back on an HMux, with the grown pool.
        fabric.diverging.clear();
        c.reassignNow();
        c.awaitIdle(20_000);
        log = fabric.takeLog();
        assertNotEquals(Assignment.SMUX, placement(c, "10.100.0.1"), log.toString());
        assertTrue(log.stream().anyMatch(l -> l.startsWith("install ") && l.contains(host(2) + "#2")), log.toString());
        assertEquals(Map.of(), c.assignment().heldOnSmuxes);
        assertEquals(null, c.assignment().lastError, "the plans passed the PlanChecker");
    }

    @Test
    void aDrainedSwitchHandsItsVipsToAnotherHmuxThroughTheSmuxesAndTakesNoNewOne() {
        FakeFabric.MemoryStore store = new FakeFabric.MemoryStore();
        Controller c = start(store);
        String at = vipOnHmux(c, "10.100.0.1", 0, 1);
        VipEntry before = fabric.switches.get(at).get("10.100.0.1");
        fabric.takeLog();
        SwitchView sw = c.setDrained(at, true);
        assertEquals(true, sw.drained);
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        String now = placement(c, "10.100.0.1");
        assertNotEquals(at, now, log.toString());
        assertNotEquals(Assignment.SMUX, now, "moved to another HMux: " + log);
        assertEquals(before.ports, fabric.switches.get(now).get("10.100.0.1").ports, "same buckets: same hash");
        assertTrue(indexOf(log, "remove " + at + " 10.100.0.1") >= 0, log.toString());
        assertTrue(log.stream().noneMatch(l -> l.startsWith("install " + at)), log.toString());
        assertEquals(null, c.assignment().lastError, "the plan passed the PlanChecker");

        traffic("10.100.0.1", "10.100.0.2");
        c.createVip(vipJson("10.100.0.2", 2, 3));
        c.awaitIdle(20_000);
        assertNotEquals(at, placement(c, "10.100.0.2"), "nothing lands on a drained switch");
        SwitchView listed = c.switches().stream().filter(m -> at.equals(m.id)).findFirst().get();
        assertEquals(true, listed.drained);
        assertEquals(List.of(), listed.vips);

        c.close();
        c = start(store);
        c.reassignNow();
        c.awaitIdle(20_000);
        assertEquals(List.of(at), c.assignment().drainedSwitches, "the drain survives a restart");
        assertEquals(false, c.setDrained(at, false).drained);
        c.awaitIdle(20_000);
        assertEquals(List.of(), c.assignment().drainedSwitches);
    }

    @Test
    void thePeriodicRoundReadsTheDevicesBackOnlyEveryRepairInterval() {
        Controller c = start(CONFIG.withRepairInterval(Duration.ofHours(1)), new FakeFabric.MemoryStore());
        vipOnHmux(c, "10.100.0.1", 0, 1);
        long before = fabric.reads;
        c.requestReconcile(Cause.INTERVAL, "interval");
        c.awaitIdle(20_000);
        assertEquals(before, fabric.reads, "a periodic round within the repair interval reads nothing");
        c.requestReconcile(Cause.SWITCH_UP, "switch tor-0-0 up");
        c.awaitIdle(20_000);
        assertTrue(fabric.reads > before, "an event reads every device back");
    }

    @Test
    void heldVipIsReleasedAfterTheLongestHoldAndTheHoldSurvivesARestart() {
        FakeFabric.MemoryStore store = new FakeFabric.MemoryStore();
        Controller c = start(store);
        vipOnHmux(c, "10.100.0.1", 0, 1);
        fabric.diverging.put("smux-0", Map.of("10.100.0.1", 5L));
        c.addDip("10.100.0.1", "{\"ip\":\"" + host(2) + "\"}");
        c.awaitIdle(20_000);
        c.close();
        c = start(store);
        c.reassignNow();
        c.awaitIdle(20_000);
        assertEquals(Assignment.SMUX, placement(c, "10.100.0.1"), "still held after a restart");
        c.close();

        Controller impatient = start(CONFIG.withPoolGrowthHoldMax(Duration.ZERO), store);
        impatient.reassignNow();
        impatient.awaitIdle(20_000);
        assertNotEquals(Assignment.SMUX, placement(impatient, "10.100.0.1"), "released despite 5 diverging");
    }

    @Test
    void dipFailureRemovesOnlyItsBucketInPlace() {
        Controller c = start(new FakeFabric.MemoryStore());
        String at = vipOnHmux(c, "10.100.0.1", 0, 1, 2);
        fabric.takeLog();
        fabric.unhealthy.add(host(1));
        c.dipHealthChanged(host(1), false);
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        assertTrue(log.stream().noneMatch(l -> l.startsWith("remove ")), "no detour through the SMuxes: " + log);
        VipEntry e = fabric.switches.get(at).get("10.100.0.1");
        assertEquals(List.of(new Bucket(host(0), 1, null, 0), new Bucket(host(2), 1, null, 2)), e.ports.get(0).dips,
                "the other buckets keep their ids: " + log);
        assertEquals(e.ports.get(0).dips, fabric.tables.get("smux-0").vips.get(0).ports.get(0).dips);
        assertEquals(List.of(host(0), host(1), host(2)), List.of(
                c.vip("10.100.0.1").ports.get(0).dips.get(0).ip, c.vip("10.100.0.1").ports.get(0).dips.get(1).ip,
                c.vip("10.100.0.1").ports.get(0).dips.get(2).ip), "the configuration keeps the failed DIP");
    }

    @Test
    void whenEveryDipFailsThePoolEmptiesAndComesBackThroughTheSmuxes() {
        Controller c = start(new FakeFabric.MemoryStore());
        String at = vipOnHmux(c, "10.100.0.1", 0);
        fabric.unhealthy.add(host(0));
        c.dipHealthChanged(host(0), false);
        c.awaitIdle(20_000);
        assertEquals(null, c.assignment().lastError, c.assignment().toString());
        assertTrue(fabric.tables.get("smux-0").vips.get(0).ports.get(0).dips.isEmpty());
        fabric.takeLog();
        fabric.unhealthy.clear();
        c.dipHealthChanged(host(0), true);
        c.awaitIdle(20_000);
        assertEquals(null, c.assignment().lastError, c.assignment().toString());
        List<String> log = fabric.takeLog();
        assertEquals(1, fabric.tables.get("smux-0").vips.get(0).ports.get(0).dips.size(), log.toString());
        String now = placement(c, "10.100.0.1");
        assertNotEquals(Assignment.SMUX, now, log.toString());
        assertEquals(1, fabric.switches.get(now).get("10.100.0.1").ports.get(0).dips.size());
        assertTrue(at != null);
    }

    @Test
    void wavesRunInOrderAndAFailingWaveRollsTheMigrationBack() {
        Controller c = start(new FakeFabric.MemoryStore());
        String at = vipOnHmux(c, "10.100.0.1", 0, 1);
        VipEntry before = fabric.switches.get(at).get("10.100.0.1");
        fabric.takeLog();
        // wave 1 (off the HMux) succeeds, wave 2 (the DIP on the SMuxes) cannot reach an SMux
        fabric.failPuts = 1;
        c.addDip("10.100.0.1", "{\"ip\":\"" + host(2) + "\"}");
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        List<MigrationRecord> recent = c.migrations().recent;
        MigrationRecord m = recent.get(0);
        assertEquals(MigrationRecord.ROLLED_BACK, m.state, log + " " + m.error);
        assertTrue(m.error.contains("unreachable"), m.error);
        int withdraw = indexOf(log, "remove " + at + " 10.100.0.1");
        int failedPut = -1;
        for (int i = 0; i < log.size(); i++) {
            if (log.get(i).startsWith("put smux-0") && log.get(i).contains(host(2))) {
                failedPut = i;
                break;
            }
        }
        int restored = log.lastIndexOf("install " + at + " " + before);
        assertTrue(withdraw >= 0 && failedPut > withdraw, "forward waves in order: " + log);
        assertTrue(restored > failedPut, "rollback: the VIP back on its HMux: " + log);
        assertEquals(before, fabric.switches.get(at).get("10.100.0.1"), "back where it was");
        assertFalse(fabric.tables.get("smux-0").toString().contains(host(2)));
    }

    @Test
    void aWaveThatDoesNotVerifyRollsTheMigrationBack() {
        Controller c = start(new FakeFabric.MemoryStore());
        traffic("10.100.0.1");
        fabric.lieOn = "*"; // the next install is acknowledged but not done
        fabric.lies = 1;
        c.createVip(vipJson("10.100.0.1", 0, 1));
        c.awaitIdle(20_000);
        MigrationRecord m = c.migrations().recent.get(0);
        assertEquals(MigrationRecord.ROLLED_BACK, m.state, m.error);
        assertTrue(m.error.contains("does not hold VIP 10.100.0.1"), m.error);
        assertEquals(null, placement(c, "10.100.0.1"), "back to before the migration: not installed yet");
        assertTrue(fabric.switches.values().stream().noneMatch(e -> e.containsKey("10.100.0.1")));
        assertTrue(fabric.tables.get("smux-0").vips.isEmpty(), "the SMux wave undone too");
        c.reassignNow();
        c.awaitIdle(20_000);
        String at = placement(c, "10.100.0.1");
        assertNotEquals(Assignment.SMUX, at, "an honest switch takes it: " + c.assignment());
        assertTrue(fabric.switches.get(at).containsKey("10.100.0.1"));
    }

    @Test
    void restartFromTheFileStoreReappliesNothing(@TempDir Path dir) {
        FileStateStore store = new FileStateStore(dir.resolve("state.json"));
        Controller c = start(store);
        traffic("10.100.0.1", "10.100.0.2");
        c.createVip(vipJson("10.100.0.1", 0, 1));
        c.createVip(vipJson("10.100.0.2", 2, 3));
        c.awaitIdle(20_000);
        AssignmentView assignment = c.assignment();
        c.close();
        started.clear();
        fabric.takeLog();
        int readsBefore = fabric.reads;

        Controller again = start(new FileStateStore(dir.resolve("state.json")));
        assertEquals(List.of(), fabric.takeLog(), "nothing re-applied after a restart");
        assertTrue(fabric.reads > readsBefore, "the restarted controller did read the devices to compare");
        assertEquals(2, again.vips().size());
        assertEquals(assignment.installed, again.assignment().installed);

        // and a device that lost its state is repaired, nothing else
        String at = placement(again, "10.100.0.1");
        fabric.switches.get(at).remove("10.100.0.1");
        again.reassignNow();
        again.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        assertEquals(1, log.size(), log.toString());
        assertTrue(log.get(0).startsWith("install " + at + " 10.100.0.1"), log.toString());
    }

    @Test
    void restartBeforeAnyTrafficIsMeasuredKeepsEveryPlacement(@TempDir Path dir) {
        FileStateStore store = new FileStateStore(dir.resolve("state.json"));
        Controller c = start(store);
        traffic("10.100.0.1", "10.100.0.2");
        c.createVip(vipJson("10.100.0.1", 0, 1));
        c.createVip(vipJson("10.100.0.2", 2, 3));
        c.awaitIdle(20_000);
        AssignmentView assignment = c.assignment();
        assertTrue(!"smux".equals(placement(c, "10.100.0.1")), assignment.toString());
        c.close();
        started.clear();
        fabric.takeLog();

        // the daemon's stats source has no interval yet right after a restart
        TrafficInterval measured = fabric.traffic;
        fabric.traffic = null;
        Controller again = start(new FileStateStore(dir.resolve("state.json")));
        again.reassignNow();
        again.awaitIdle(20_000);
        assertEquals(List.of(), fabric.takeLog(), "no VIP moved to the SMuxes for want of a measurement");
        assertEquals(assignment.installed, again.assignment().installed);

        // the first measurement shows the same traffic: still nothing to do
        fabric.traffic = measured;
        again.reassignNow();
        again.awaitIdle(20_000);
        assertEquals(List.of(), fabric.takeLog());
    }

    @Test
    void vipRemovalLeavesTheHmuxBeforeTheSmuxes() {
        Controller c = start(new FakeFabric.MemoryStore());
        String at = vipOnHmux(c, "10.100.0.1", 0, 1);
        fabric.takeLog();
        c.deleteVip("10.100.0.1");
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        int off = indexOf(log, "remove " + at + " 10.100.0.1");
        int smux = indexOf(log, "put smux-0");
        int group = indexOf(log, "setSmuxGroup " + AGG + " []");
        assertTrue(off >= 0 && smux > off && group > smux, log.toString());
        assertTrue(fabric.tables.get("smux-0").vips.isEmpty());
        assertTrue(fabric.groups.isEmpty());
    }

    @Test
    void aggregateChangeMovesTheRouteWithoutADetour() {
        Controller c = start(new FakeFabric.MemoryStore());
        String at = vipOnHmux(c, "10.100.0.1", 0, 1);
        fabric.takeLog();
        c.replaceVip("10.100.0.1", vipJson("10.100.0.1", 0, 1).replace(AGG, "10.100.0.0/24"));
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        assertEquals(-1, indexOf(log, "remove "), "no detour through the SMuxes: " + log);
        assertEquals("10.100.0.0/24", fabric.tables.get("smux-0").vips.get(0).aggregate);
        assertTrue(fabric.switches.get(at).containsKey("10.100.0.1"), "the HMux entry stays: " + log);
        assertEquals(java.util.Set.of("10.100.0.0/24"), fabric.groups.keySet(), log.toString());
        for (String sw : fabric.aggregatesOn.keySet()) {
            assertEquals(java.util.Set.of("10.100.0.0/24"), fabric.aggregatesOn.get(sw).keySet(), sw);
            assertEquals(sw.equals(at) ? null : at, fabric.routes.get(sw).get("10.100.0.1"), sw + ": the VIP's route");
        }
    }

    @Test
    void aFailedVipRemovalIsRolledBackOntoTheSmuxesAndTheHmux() {
        Controller c = start(new FakeFabric.MemoryStore());
        String at = vipOnHmux(c, "10.100.0.1", 0, 1);
        VipEntry before = fabric.switches.get(at).get("10.100.0.1");
        String tableBefore = Json.write(fabric.tables.get("smux-0").vips);
        fabric.takeLog();
        fabric.failPuts = 1;
        c.deleteVip("10.100.0.1");
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        List<MigrationRecord> recent = c.migrations().recent;
        assertEquals(MigrationRecord.ROLLED_BACK, recent.get(0).state, log + " " + recent.get(0).error);
        assertTrue(indexOf(log, "remove " + at) < indexOf(log, "put smux-0"), log.toString());
        assertEquals("install " + at + " " + before, log.get(log.size() - 1), "the HMux takes it back last: " + log);
        assertEquals(before, fabric.switches.get(at).get("10.100.0.1"));
        assertEquals(tableBefore, Json.write(fabric.tables.get("smux-0").vips));
        assertEquals(at, placement(c, "10.100.0.1"));
        assertTrue(c.vips().isEmpty(), "the configuration says deleted; the next reconcile tries again");
    }

    @Test
    void aLostSmuxLeavesTheAggregateGroupsBeforeAnythingIsReadBack() {
        Controller c = start(new FakeFabric.MemoryStore());
        vipOnHmux(c, "10.100.0.1", 0, 1);
        String at = placement(c, "10.100.0.1");
        String lost = topo.smuxes.get(1).id;
        List<Set<String>> atFirstRead = new ArrayList<>();
        fabric.onInstalledOn = sw -> {
            if (atFirstRead.isEmpty()) {
                atFirstRead.add(Set.copyOf(fabric.groups.get(AGG)));
            }
        };
        fabric.live.remove(lost);
        c.smuxesChanged(fabric.liveSmuxes());
        c.awaitIdle(20_000);
        // the SMuxes' ECMP (its flows go to the others) cannot wait for the reconcile's read-back
        assertEquals(List.of(Set.copyOf(fabric.liveSmuxes())), atFirstRead);
        assertFalse(fabric.groups.get(AGG).contains(lost));
        assertEquals(at, placement(c, "10.100.0.1"), "the VIP stays where it was");
    }

    @Test
    void aLostSmuxIsHandledAheadOfQueuedWork() throws InterruptedException {
        Controller c = start(new FakeFabric.MemoryStore());
        vipOnHmux(c, "10.100.0.1", 0, 1);
        int before = fabric.reads;
        c.requestReconcile("count");
        c.awaitIdle(20_000);
        int perReconcile = fabric.reads - before;
        assertTrue(perReconcile > 0);

        String lost = topo.smuxes.get(1).id;
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean blockOnce = new AtomicBoolean(true);
        fabric.takeLog();
        fabric.onInstalledOn = sw -> {
            fabric.log.add("read " + sw);
            if (blockOnce.getAndSet(false)) {
                entered.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        c.requestReconcile("busy");
        assertTrue(entered.await(20, TimeUnit.SECONDS));
        c.requestReconcile("queued"); // waits behind the busy one
        fabric.live.remove(lost);    // (the blocked read holds the fabric's lock: no liveSmuxes() here)
        c.smuxesChanged(new LinkedHashSet<>(fabric.live));
        release.countDown();
        c.awaitIdle(20_000);

        List<String> log = fabric.takeLog();
        int drop = 0;
        while (drop < log.size() && !(log.get(drop).startsWith("setSmuxGroup") && !log.get(drop).contains(lost))) {
            drop++;
        }
        assertTrue(drop < log.size(), log.toString());
        long readsBefore = log.subList(0, drop).stream().filter(l -> l.startsWith("read ")).count();
        // only the busy reconcile's reads came first: the loss did not wait for the queued one
        assertTrue(readsBefore <= perReconcile, readsBefore + " reads before the drop, " + perReconcile
                + " per reconcile: " + log);
    }

    @Test
    void smuxBackFromDeadGetsTheTableAndTheGroup() {
        Controller c = start(new FakeFabric.MemoryStore());
        vipOnHmux(c, "10.100.0.1", 0, 1);
        String lost = topo.smuxes.get(1).id;
        fabric.live.remove(lost);
        c.smuxesChanged(fabric.liveSmuxes());
        c.awaitIdle(20_000);
        assertFalse(fabric.groups.get(AGG).contains(lost));
        fabric.tables.remove(lost); // it restarted empty
        fabric.takeLog();
        fabric.live.add(lost);
        c.smuxesChanged(fabric.liveSmuxes());
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        assertTrue(indexOf(log, "put " + lost) >= 0 && indexOf(log, "put " + lost) < indexOf(log, "setSmuxGroup"), log.toString());
        assertEquals(-1, indexOf(log, "put " + topo.smuxes.get(0).id), "the others are already right: " + log);
        assertTrue(fabric.groups.get(AGG).contains(lost));
    }

    @Test
    void anSmuxThatJoinsAsAnotherIsLostGetsItsTableBeforeAnyGroupNamesIt() {
        Controller c = start(new FakeFabric.MemoryStore());
        vipOnHmux(c, "10.100.0.1", 0, 1);
        String lost = topo.smuxes.get(1).id;
        String joins = topo.smuxes.get(3).id;
        fabric.live.remove(joins);
        c.smuxesChanged(fabric.liveSmuxes());
        c.awaitIdle(20_000);
        fabric.tables.remove(joins); // a new SMux: no table
        fabric.takeLog();
        fabric.live.remove(lost);    // one report: one lost, one new
        fabric.live.add(joins);
        c.smuxesChanged(fabric.liveSmuxes());
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        int firstGroup = indexOf(log, "setSmuxGroup");
        assertTrue(firstGroup >= 0 && !log.get(firstGroup).contains(lost), log.toString());
        int named = -1;
        for (int i = 0; i < log.size() && named < 0; i++) {
            if (log.get(i).startsWith("setSmuxGroup") && log.get(i).contains(joins)) {
                named = i;
            }
        }
        assertTrue(named > indexOf(log, "put " + joins) && indexOf(log, "put " + joins) >= 0,
                "the table first, then a group with it: " + log);
        assertTrue(fabric.groups.get(AGG).contains(joins));
        assertFalse(fabric.groups.get(AGG).contains(lost));
    }

    /** Index (for {@link #host}) of the {@code n}th host hanging off {@code tor}. */
    int hostOn(String tor, int n) {
        int seen = 0;
        for (int i = 0; i < topo.hosts.size(); i++) {
            if (topo.hosts.get(i).tor.equals(tor) && seen++ == n) {
                return i;
            }
        }
        throw new IllegalArgumentException("no host " + n + " on " + tor);
    }

    static List<String> dipsOf(VipEntry e) {
        List<String> out = new ArrayList<>();
        e.ports.get(0).dips.forEach(b -> out.add(b.ip + "#" + b.bucketId));
        return out;
    }

    static List<String> smuxDips(FakeFabric f, String smux, String vip) {
        List<String> out = new ArrayList<>();
        f.tables.get(smux).vips.stream().filter(e -> e.vip.equals(vip)).findFirst().orElseThrow()
                .ports.get(0).dips.forEach(b -> out.add(b.ip + "#" + b.bucketId));
        return out;
    }

    /** Log records of the controller (its package) while {@code body} runs. */
    static List<String> logged(Runnable body) {
        java.util.logging.Logger logger = java.util.logging.Logger.getLogger(Controller.class.getPackageName());
        List<String> out = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.logging.Handler h = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                out.add(r.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(h);
        try {
            body.run();
        } finally {
            logger.removeHandler(h);
        }
        return new ArrayList<>(out);
    }

    @Test
    void aDownSwitchTakesTheDipsBehindItOutOfThePoolsUntilItIsBack() {
        Controller c = start(new FakeFabric.MemoryStore());
        // VIP 1: one DIP on each of ToRs 1, 2, 3; VIP 2: both DIPs on ToR 4; VIP 3: DIPs on ToRs 5, 6
        String v1 = "10.100.0.1";
        String v2 = "10.100.0.2";
        String v3 = "10.100.0.3";
        traffic(v1, v2, v3);
        c.createVip(vipJson(v1, hostOn(tor(1), 0), hostOn(tor(2), 0), hostOn(tor(3), 0)));
        c.createVip(vipJson(v2, hostOn(tor(4), 0), hostOn(tor(4), 1)));
        c.createVip(vipJson(v3, hostOn(tor(5), 0), hostOn(tor(6), 0)));
        c.awaitIdle(20_000);
        String at1 = placement(c, v1);
        String at3 = placement(c, v3);
        assertNotEquals(Assignment.SMUX, at1, c.assignment().toString());
        assertNotEquals(Assignment.SMUX, at3, c.assignment().toString());
        // the failing switch: a ToR holding a DIP of VIP 1 that is not VIP 1's HMux
        String failed = !tor(2).equals(at1) ? tor(2) : tor(3);
        String lost = host(hostOn(failed, 0));
        List<String> v1Before = dipsOf(fabric.switches.get(at1).get(v1));
        VipEntry v3Before = fabric.switches.get(at3).get(v3);
        fabric.takeLog();

        fabric.down.add(failed);
        List<String> messages = logged(() -> {
            c.switchDown(failed);
            c.awaitIdle(20_000);
        });
        List<String> log = fabric.takeLog();
        assertTrue(messages.contains("DIP " + lost + " unreachable: its switch " + failed + " is down"), messages.toString());
        List<String> v1After = new ArrayList<>(v1Before);
        v1After.removeIf(d -> d.startsWith(lost + "#"));
        assertEquals(2, v1After.size());
        assertEquals(at1, placement(c, v1), "VIP 1 stays where it is: " + log);
        assertEquals(v1After, dipsOf(fabric.switches.get(at1).get(v1)), "only its bucket is gone, ids kept: " + log);
        assertEquals(v1After, smuxDips(fabric, "smux-0", v1), "the SMuxes hash alike: " + log);
        assertTrue(log.stream().noneMatch(l -> l.startsWith("remove ")), "no detour through the SMuxes: " + log);
        assertTrue(log.stream().noneMatch(l -> l.startsWith("install ") && l.contains(v3)), "VIP 3 untouched: " + log);
        assertEquals(v3Before, fabric.switches.get(at3).get(v3));
        if (!failed.equals(placement(c, v2)) && !Assignment.SMUX.equals(placement(c, v2))) {
            assertTrue(dipsOf(fabric.switches.get(placement(c, v2)).get(v2)).size() == 2);
        }
        AssignmentView a = c.assignment();
        assertEquals(null, a.lastError, a.toString());
        Map<String, AssignmentView.DipHealth> health = a.dipHealth;
        assertEquals("unreachable", health.get(lost).state, a.toString());
        assertEquals("its switch " + failed + " is down", health.get(lost).reason);
        List<String> unhealthy = a.unhealthyDips;
        assertTrue(unhealthy.contains(lost), unhealthy.toString());
        assertEquals(List.of(host(0), host(1), host(2)).size(), c.vip(v1).ports.get(0).dips.size() ,
                "the configuration keeps the DIP");

        fabric.takeLog();
        fabric.down.remove(failed);
        messages = logged(() -> {
            c.switchUp(failed);
            c.awaitIdle(20_000);
        });
        log = fabric.takeLog();
        assertTrue(messages.contains("DIP " + lost + " reachable again: its switch " + failed + " is up"),
                messages.toString());
        String now = placement(c, v1);
        assertNotEquals(Assignment.SMUX, now, "back on an HMux once no connection would move: " + log);
        assertEquals(v1Before, dipsOf(fabric.switches.get(now).get(v1)), "the DIP is back with its bucket id: " + log);
        assertEquals(v1Before, smuxDips(fabric, "smux-0", v1));
        assertEquals(Map.of(), c.assignment().dipHealth);
        assertEquals(null, c.assignment().lastError);
    }

    @Test
    void whenEveryDipOfAVipIsUnreachableItBehavesAsWhenEveryDipFails() {
        Controller c = start(new FakeFabric.MemoryStore());
        String v = "10.100.0.2";
        String dipTor = tor(4);
        c.setDrained(dipTor, true); // the VIP's HMux is elsewhere
        String at = vipOnHmux(c, v, hostOn(dipTor, 0), hostOn(dipTor, 1));
        String a = host(hostOn(dipTor, 0));
        String b = host(hostOn(dipTor, 1));

        // both DIPs fail their health checks: the reference behaviour
        fabric.unhealthy.addAll(List.of(a, b));
        c.dipHealthChanged(a, false);
        c.dipHealthChanged(b, false);
        c.awaitIdle(20_000);
        assertEquals(null, c.assignment().lastError, c.assignment().toString());
        String whenFailed = placement(c, v);
        assertEquals(List.of(), smuxDips(fabric, "smux-0", v));
        fabric.unhealthy.clear();
        c.dipHealthChanged(a, true);
        c.dipHealthChanged(b, true);
        c.awaitIdle(20_000);
        assertEquals(2, smuxDips(fabric, "smux-0", v).size());
        assertEquals(at, placement(c, v), "back where it was");

        // their ToR fails instead: the same outcome
        fabric.down.add(dipTor);
        c.switchDown(dipTor);
        c.awaitIdle(20_000);
        assertEquals(null, c.assignment().lastError, c.assignment().toString());
        assertEquals(List.of(), smuxDips(fabric, "smux-0", v));
        assertEquals(whenFailed, placement(c, v));
        if (!Assignment.SMUX.equals(whenFailed)) {
            assertEquals(List.of(), dipsOf(fabric.switches.get(whenFailed).get(v)));
        }

        fabric.down.remove(dipTor);
        c.switchUp(dipTor);
        c.awaitIdle(20_000);
        assertEquals(null, c.assignment().lastError, c.assignment().toString());
        assertEquals(2, smuxDips(fabric, "smux-0", v).size());
        assertEquals(at, placement(c, v), "back where it was");
        assertEquals(2, dipsOf(fabric.switches.get(at).get(v)).size());
    }

    @Test
    void aVipWhoseHmuxIsTheFailedTorFailsOverAndLosesOnlyTheDipsBehindIt() {
        Controller c = start(new FakeFabric.MemoryStore());
        // only ToRs may hold VIPs here, and the VIP has a DIP on every ToR: its HMux is one of them
        for (org.hybridlb.solver.model.Switch s : topo.switches) {
            if (s.role != SwitchRole.TOR) {
                c.setDrained(s.id, true);
            }
        }
        int tors = (int) topo.switches.stream().filter(s -> s.role == SwitchRole.TOR).count();
        int[] hosts = new int[tors];
        for (int i = 0; i < tors; i++) {
            hosts[i] = hostOn(tor(i), 0);
        }
        String v = "10.100.0.1";
        String at = vipOnHmux(c, v, hosts);
        String lost = topo.hosts.stream().filter(h -> h.tor.equals(at)).findFirst().get().ip;
        List<String> before = dipsOf(fabric.switches.get(at).get(v));
        assertTrue(before.stream().anyMatch(d -> d.startsWith(lost + "#")), before.toString());
        fabric.takeLog();

        fabric.down.add(at);
        c.switchDown(at);
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        assertEquals("withdrawRoutes " + at + " [" + v + "]", log.get(0), "first thing done: " + log);
        assertTrue(log.stream().noneMatch(l -> l.startsWith("install " + at + " ") || l.startsWith("remove " + at + " ")),
                "the failed switch is not touched: " + log);
        String now = placement(c, v);
        assertNotEquals(at, now);
        assertNotEquals(Assignment.SMUX, now, "re-placed on a live HMux: " + log);
        List<String> after = new ArrayList<>(before);
        after.removeIf(d -> d.startsWith(lost + "#"));
        assertEquals(after, dipsOf(fabric.switches.get(now).get(v)), "without the DIP behind the failed ToR: " + log);
        assertEquals(after, smuxDips(fabric, "smux-0", v));
        assertEquals(null, c.assignment().lastError, c.assignment().toString());
    }
}
