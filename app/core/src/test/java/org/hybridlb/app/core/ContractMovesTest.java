package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.port.StateStore;
import org.hybridlb.app.core.view.AssignmentView;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A VIP moving between HMuxes whose hash contracts differ (here a crc32 switch, as the P4 HMux, and
 * Open vSwitch ones) goes through the SMuxes: they hash it as the switch it left while they pin its
 * connections, then as the switch it goes to, and it stays on them until no pinned connection would
 * change DIP there ({@link ContractMoves}). Between switches of one contract the move stays direct.
 */
class ContractMovesTest {
    static final String VIP = "10.100.0.1";
    static final SwitchCapability CRC32 = new SwitchCapability(
            HashContract.of(HashContract.Selection.CRC32, 0, HashContract.Encap.GRE), true, true, false, Set.of());
    static final ControllerConfig PATIENT = ControllerConfig.defaults().withInterval(Duration.ZERO)
            .withContractPinTime(Duration.ofHours(1));
    static final ControllerConfig PINNED = PATIENT.withContractPinTime(Duration.ZERO);

    final Topology topo = FatTree.generate(4);
    final FakeFabric fabric = new FakeFabric(topo);
    final FakeFabric.MemoryStore store = new FakeFabric.MemoryStore();
    final List<Controller> started = new ArrayList<>();
    /** The crc32 switch ("P4") and an Open vSwitch one, the only switches not drained. */
    String p4;
    String ovs;
    String otherOvs;
    /** Fields the VIP's JSON adds (its affinity). */
    String vipExtra = "";

    @BeforeEach
    void pickSwitches() {
        List<String> aggs = new ArrayList<>();
        topo.switches.stream().filter(s -> s.role == SwitchRole.AGG).forEach(s -> aggs.add(s.id));
        p4 = aggs.get(0);
        ovs = aggs.get(1);
        otherOvs = aggs.get(2);
        fabric.capabilities.put(p4, CRC32);
    }

    @AfterEach
    void stop() {
        started.forEach(Controller::close);
    }

    Controller start(ControllerConfig config, StateStore s) {
        Controller c = new Controller(config, fabric.ports(s));
        started.add(c);
        c.start();
        c.awaitIdle(20_000);
        return c;
    }

    /** Every switch but {@code at} drained; the VIP created, with traffic: the planner wants it on {@code at}. */
    Controller vipFor(ControllerConfig config, String at) {
        Controller c = start(config, store);
        topo.switches.stream().filter(s -> !s.id.equals(at)).forEach(s -> c.setDrained(s.id, true));
        String tor = topo.switches.stream().filter(s -> s.role == SwitchRole.TOR).findFirst().orElseThrow().id;
        fabric.traffic = new TrafficInterval(0, 0, 10, List.of(new VipTraffic(VIP, Map.of(tor, 2e8), null)));
        c.createVip("{\"vip\":\"" + VIP + "\",\"aggregate\":\"10.100.0.0/16\"" + vipExtra
                + ",\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"" + topo.hosts.get(0).ip
                + "\"},{\"ip\":\"" + topo.hosts.get(1).ip + "\"}]}]}");
        c.awaitIdle(20_000);
        return c;
    }

    /** {@link #vipFor}, and the VIP lives on {@code at}. */
    Controller vipOn(ControllerConfig config, String at) {
        Controller c = vipFor(config, at);
        // from the SMuxes (the fabric's Open vSwitch hash) to a crc32 switch: a move between contracts too
        for (int i = 0; i < 3 && !at.equals(ControllerTest.placement(c, VIP)); i++) {
            round(c);
        }
        assertEquals(at, ControllerTest.placement(c, VIP), c.assignment().toString());
        return c;
    }

    /** The operator drains {@code from} and opens {@code to}: the planner wants the VIP there. */
    void move(Controller c, String from, String to) {
        c.setDrained(to, false);
        c.setDrained(from, true);
        c.awaitIdle(20_000);
    }

    void round(Controller c) {
        c.reassignNow();
        c.awaitIdle(20_000);
    }

    String smuxSelection() {
        String s = null;
        for (String id : List.of("smux-0", "smux-1")) {
            String here = fabric.tables.get(id).vips.stream().filter(e -> e.vip.equals(VIP)).findFirst().orElseThrow()
                    .selection;
            assertTrue(s == null || s.equals(here), "every SMux hashes alike");
            s = here;
        }
        return s;
    }

    @Test
    void aMoveToASwitchOfAnotherContractGoesThroughTheSmuxesHashingAsTheSwitchItLeft() {
        Controller c = vipOn(PATIENT, p4);
        assertEquals("crc32", smuxSelection(), "the SMuxes hash it as its HMux");
        fabric.takeLog();
        move(c, p4, ovs);
        List<String> log = fabric.takeLog();
        assertEquals(Assignment.SMUX, ControllerTest.placement(c, VIP), log.toString());
        assertTrue(ControllerTest.indexOf(log, "remove " + p4 + " " + VIP) >= 0, log.toString());
        assertTrue(log.stream().noneMatch(l -> l.startsWith("install ")), "not on the OVS switch yet: " + log);
        assertEquals("crc32", smuxSelection(), "the SMuxes hash as the switch it left, so no connection moves");

        round(c); // pinning: for contractPinTime
        AssignmentView.HeldVip held = c.assignment().heldOnSmuxes.get(VIP);
        assertNotNull(held, c.assignment().toString());
        assertEquals(ovs, held.toward);
        assertTrue(held.reason.contains("whose hash contract differs") && held.reason.contains("as " + p4 + " did"),
                held.reason);
        assertNull(held.divergingConnections, "nothing counted while pinning");
        assertEquals(Assignment.SMUX, ControllerTest.placement(c, VIP));
        assertEquals("crc32", smuxSelection());
        assertEquals(null, c.assignment().lastError);
    }

    @Test
    void afterPinningTheSmuxesHashAsTheNextSwitchAndHoldTheVipUntilNoPinnedConnectionDiverges() {
        Controller c = vipOn(PINNED, p4);
        fabric.takeLog();
        move(c, p4, ovs);
        fabric.diverging.put("smux-1", Map.of(VIP, 4L));
        round(c); // pinned: the SMuxes hash as the OVS switch
        assertEquals("ovs", smuxSelection());
        assertEquals(Assignment.SMUX, ControllerTest.placement(c, VIP));
        round(c); // 4 pinned connections would change DIP on it
        AssignmentView.HeldVip held = c.assignment().heldOnSmuxes.get(VIP);
        assertEquals(4L, held.divergingConnections, c.assignment().toString());
        assertTrue(held.reason.contains("as " + ovs + " does"), held.reason);
        assertEquals(Assignment.SMUX, ControllerTest.placement(c, VIP));
        assertTrue(fabric.takeLog().stream().noneMatch(l -> l.startsWith("install ")));

        fabric.diverging.clear();
        round(c);
        assertEquals(ovs, ControllerTest.placement(c, VIP), c.assignment().toString());
        assertEquals(Map.of(), c.assignment().heldOnSmuxes);
        assertEquals("ovs", smuxSelection());
        assertEquals(null, c.assignment().lastError, "the plans passed the PlanChecker");

        // and back: the OVS switch's contract while pinning, then crc32
        fabric.diverging.put("smux-0", Map.of(VIP, 1L));
        move(c, ovs, p4);
        assertEquals(Assignment.SMUX, ControllerTest.placement(c, VIP));
        assertEquals("ovs", smuxSelection());
        round(c);
        round(c);
        assertEquals("crc32", smuxSelection());
        assertEquals(1L, c.assignment().heldOnSmuxes.get(VIP).divergingConnections);
        fabric.diverging.clear();
        round(c);
        assertEquals(p4, ControllerTest.placement(c, VIP), c.assignment().toString());
    }

    @Test
    void theSmuxesTakingOverAFailedSwitchsVipHashAsItDidThenMoveItAsFromThatSwitch() {
        Controller c = vipOn(PINNED, p4);
        round(c); // the move that brought it there is forgotten: the SMuxes follow its HMux
        assertEquals("crc32", smuxSelection());
        fabric.down.add(p4);
        c.switchDown(p4);
        c.awaitIdle(20_000);
        // every other switch drained: the VIP stays on the SMuxes, which hash it as the failed switch did
        // (not as the fabric's Open vSwitch majority), so its connections keep their DIPs
        assertEquals(Assignment.SMUX, ControllerTest.placement(c, VIP), c.assignment().toString());
        fabric.takeLog();
        c.createVip("{\"vip\":\"10.100.0.2\",\"aggregate\":\"10.100.0.0/16\",\"ports\":[{\"proto\":\"tcp\","
                + "\"port\":80,\"dips\":[{\"ip\":\"" + topo.hosts.get(2).ip + "\"}]}]}");
        c.awaitIdle(20_000);
        round(c);
        assertTrue(fabric.takeLog().stream().anyMatch(l -> l.startsWith("put smux-0 ")), "the SMuxes got a new table");
        assertEquals("crc32", smuxSelection(), "still the failed switch's contract, whatever else the tables carry");

        // an OVS switch opens: the VIP goes there as from the failed switch, held while connections diverge
        fabric.diverging.put("smux-0", Map.of(VIP, 3L));
        c.setDrained(ovs, false);
        c.awaitIdle(20_000);
        round(c);
        round(c);
        assertEquals("ovs", smuxSelection());
        AssignmentView.HeldVip held = c.assignment().heldOnSmuxes.get(VIP);
        assertNotNull(held, c.assignment().toString());
        assertEquals(ovs, held.toward);
        assertEquals(3L, held.divergingConnections);
        assertEquals(Assignment.SMUX, ControllerTest.placement(c, VIP));
        fabric.diverging.clear();
        round(c);
        assertEquals(ovs, ControllerTest.placement(c, VIP), c.assignment().toString());
    }

    @Test
    void aVipOnTheSmuxesGoesToASwitchOfAnotherContractOnlyOnceNoPinnedConnectionWouldMove() {
        // a new VIP lives on the SMuxes first, hashed with the fabric's contract (Open vSwitch's)
        fabric.diverging.put("smux-0", Map.of(VIP, 2L));
        Controller c = vipFor(PATIENT, p4);
        round(c);
        round(c);
        round(c);
        assertEquals(Assignment.SMUX, ControllerTest.placement(c, VIP), c.assignment().toString());
        AssignmentView.HeldVip held = c.assignment().heldOnSmuxes.get(VIP);
        assertEquals(p4, held.toward, c.assignment().toString());
        assertEquals(2L, held.divergingConnections, "no pinning: the SMuxes have pinned its connections all along");
        assertEquals("crc32", smuxSelection());
        fabric.diverging.clear();
        round(c);
        assertEquals(p4, ControllerTest.placement(c, VIP), c.assignment().toString());
    }

    @Test
    void theLongestHoldReleasesAMoveWhoseConnectionsStillDiverge() {
        Controller c = vipOn(PINNED.withPoolGrowthHoldMax(Duration.ZERO), p4);
        move(c, p4, ovs);
        fabric.diverging.put("smux-1", Map.of(VIP, 4L));
        round(c);
        assertEquals(Assignment.SMUX, ControllerTest.placement(c, VIP), "the SMuxes hash as the OVS switch first");
        round(c);
        assertEquals(ovs, ControllerTest.placement(c, VIP), c.assignment().toString());
    }

    @Test
    void betweenSwitchesOfOneContractTheMoveIsDirect() {
        Controller c = vipOn(PATIENT, ovs);
        fabric.diverging.put("smux-1", Map.of(VIP, 4L));
        fabric.takeLog();
        move(c, ovs, otherOvs);
        List<String> log = fabric.takeLog();
        assertEquals(otherOvs, ControllerTest.placement(c, VIP), log.toString());
        assertEquals(Map.of(), c.assignment().heldOnSmuxes);
        assertEquals("ovs", smuxSelection());
    }

    @Test
    void aCheetahVipMovesDirectlyItsConnectionsFollowTheirCookies() {
        for (String sw : List.of(p4, ovs)) {
            fabric.capabilities.put(sw, new SwitchCapability(fabric.capability(sw).hash, true, true, false,
                    Set.of(Cookie.HashMode.CRC32C)));
        }
        vipExtra = ",\"affinity\":\"cheetah\",\"cookieHash\":\"crc32c\"";
        Controller c = vipOn(PATIENT, p4);
        fabric.diverging.put("smux-1", Map.of(VIP, 4L));
        move(c, p4, ovs);
        assertEquals(ovs, ControllerTest.placement(c, VIP), c.assignment().toString());
        assertEquals(Map.of(), c.assignment().heldOnSmuxes);
    }

    @Test
    void aRestartKeepsTheMoveAndTheContractTheSmuxesFollow() {
        Controller c = vipOn(PATIENT, p4);
        move(c, p4, ovs);
        round(c);
        c.close();
        Controller again = start(PATIENT, store);
        round(again);
        assertEquals(Assignment.SMUX, ControllerTest.placement(again, VIP));
        assertEquals(ovs, again.assignment().heldOnSmuxes.get(VIP).toward, again.assignment().toString());
        assertEquals("crc32", smuxSelection(), "still hashing as the switch it left, not as the fabric's Open vSwitch");
        again.close();

        fabric.diverging.put("smux-0", Map.of(VIP, 2L));
        Controller pinned = start(PINNED, store);
        round(pinned);
        round(pinned);
        assertEquals("ovs", smuxSelection());
        assertEquals(2L, pinned.assignment().heldOnSmuxes.get(VIP).divergingConnections);
        pinned.close();
        Controller last = start(PINNED, store);
        round(last);
        assertEquals(Assignment.SMUX, ControllerTest.placement(last, VIP), "still converging after a restart");
        assertEquals("ovs", smuxSelection());
        fabric.diverging.clear();
        round(last);
        assertEquals(ovs, ControllerTest.placement(last, VIP));
    }
}
