package org.hybridlb.standalone;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.IntentDiff;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.p4.HlbP4Info;
import org.hybridlb.app.core.p4.HmuxP4Layout;
import org.hybridlb.app.core.p4.P4Update;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.topology.FatTree;
import org.hybridlb.standalone.p4rt.P4rtClient;
import org.hybridlb.standalone.p4rt.P4rtCodec;
import org.hybridlb.standalone.p4rt.P4rtHmuxSouthbound;
import io.grpc.Status;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * hybridlbd's P4Runtime southbound against the repository's P4 model switch over real gRPC: an
 * intent written reads back as itself and diffs empty; a change sends only what changed; a refused
 * batch changes nothing; the wrong program or a lower election id is refused with the spec's codes.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class P4rtSouthboundTest {
    static final String SW = P4rtUnderTest.SW;
    static final ServiceMatch WEB = new ServiceMatch("10.200.0.1", "tcp", 80);
    static final ServiceMatch ALL = new ServiceMatch("10.200.0.2", ServiceMatch.ANY, 0);

    @TempDir
    static Path dir;
    static P4rtUnderTest under;
    static ModelP4Switch sw;
    static Fabric fabric;
    static P4rtHmuxSouthbound sb;

    @BeforeAll
    static void start() throws Exception {
        under = new P4rtUnderTest(dir, HlbP4Info.PROFILE_HLB_HMUX);
        sw = under.sw;
        fabric = under.fabric;
        sb = under.sb;
    }

    @AfterAll
    static void stop() {
        if (under != null) {
            under.close();
        }
    }

    static SwitchIntent intent(int webWeight) {
        String other = fabric.switches.keySet().stream().filter(s -> !s.equals(SW)).findFirst().get();
        return SwitchIntent.builder()
                .entry(WEB, List.of(new DipBucket(0, "10.0.9.1", "10.0.9.1", webWeight), new DipBucket(1, "10.0.9.2", "10.0.9.2", 1)))
                .entry(ALL, List.of(new DipBucket(0, "10.0.9.3", "10.0.9.3", 1)))
                .route("10.200.0.9", other)
                .aggregate("10.200.0.0/16", fabric.smuxes.keySet()).build();
    }

    SwitchReading read() {
        return under.read();
    }

    void reconcile(SwitchIntent want) {
        under.reconcile(want);
    }

    @Test
    @Order(0)
    void eachSwitchGoesToTheSouthboundFabricJsonNamesAndAnUnreachableP4SwitchReadsAsFailed() throws Exception {
        Path d = Files.createDirectories(dir.resolve("gone"));
        Topology topo = FatTree.generate(new FatTree.Params().k(2));
        ObjectNode p4 = DaemonConfig.STRICT.createObjectNode().put("grpc", "unix:" + d.resolve("none.sock"))
                .put("profile", HlbP4Info.PROFILE_HLB_HMUX).put("p4info", ModelP4Switch.p4info("hlb_hmux").toString());
        TestFabric.write(d, topo, d.resolve("ovs"), "p4g", Map.of(), Map.of(SW, p4));
        Fabric f = Fabric.load(d.resolve("fabric.json"));
        String ovsSwitch = f.switches.keySet().stream().filter(s -> !s.equals(SW)).findFirst().get();
        try (P4rtHmuxSouthbound p4sb = new P4rtHmuxSouthbound(f);
             org.hybridlb.standalone.ovs.OvsHmuxSouthbound ovs = new org.hybridlb.standalone.ovs.OvsHmuxSouthbound(f,
                     new org.hybridlb.standalone.ovs.Ovs(d.resolve("ovs"), 5000), java.util.Set::of)) {
            HmuxSouthbounds both = new HmuxSouthbounds(ovs, p4sb);
            assertEquals("crc32", both.capability(SW).hash.selection.smuxName);
            assertEquals(org.hybridlb.standalone.ovs.OvsHmuxSouthbound.CONTRACT, both.capability(ovsSwitch).hash);
            SwitchReading r = both.read(List.of(SW)).get(SW);
            assertFalse(r.ok());
            // gRPC fails the stream at once (UNAVAILABLE) or, while its channel is still connecting, the
            // arbitration times out: either way a failed reading naming the switch's address
            assertTrue(r.failure.contains(d.resolve("none.sock").toString())
                    && (r.failure.contains("UNAVAILABLE") || r.failure.contains("no arbitration answer")), r.failure);
        }
    }

    @Test
    @Order(1)
    void anIntentWrittenReadsBackAsItselfAndAChangeSendsOnlyWhatChanged() {
        SwitchCapability cap = sb.capability(SW);
        assertEquals("crc32", cap.hash.selection.smuxName);
        assertFalse(cap.decodesCookies);
        reconcile(intent(2));
        long before = sb.counters().updates;
        reconcile(intent(2));
        assertEquals(before, sb.counters().updates, "nothing to send for an intent the switch holds");
        reconcile(intent(3));
        // WEB's 3 members [A A B] become 4 new ones [A A A B], its group is modified, the 3 old ones deleted
        assertEquals(before + 8, sb.counters().updates);
        reconcile(SwitchIntent.EMPTY);
        assertTrue(read().intent.entries.isEmpty());
    }

    @Test
    @Order(2)
    void aRefusedBatchChangesNothing() {
        reconcile(SwitchIntent.EMPTY);
        // one good member and one member with an action of the other profile: the switch refuses the batch whole
        P4Update good = new P4Update(P4Update.Type.INSERT, HmuxP4Layout.dipMember(5000, "10.0.9.9", 7));
        P4Update bad = new P4Update(P4Update.Type.INSERT, new org.hybridlb.app.core.p4.P4Member(
                HlbP4Info.HMUX_DIP_SELECTOR, HlbP4Info.HMUX_DIP_SELECTOR_ID, 5001, ModelP4Switch.hop(1, 1)));
        P4rtClient.P4rtException e = assertThrows(P4rtClient.P4rtException.class, () -> sb.send(SW, List.of(List.of(good, bad))));
        assertTrue(e.getMessage().contains("update 1"), e.getMessage());
        assertTrue(sb.readSwitch(SW).ours.members(HlbP4Info.HMUX_DIP_SELECTOR_ID).isEmpty(), "the good half was not applied");
    }

    @Test
    @Order(3) // last: a higher election id takes mastership for good
    void anotherProgramOrALowerElectionIdIsRefused() throws Exception {
        P4rtCodec cheetah = new P4rtCodec(P4rtCodec.loadP4Info(ModelP4Switch.p4info("hlb_cheetah")));
        read(); // the southbound holds mastership with its election id
        try (P4rtClient c = new P4rtClient(sw.address, 1, Fabric.DEFAULT_ELECTION_ID + 1, cheetah.p4info, 10_000)) {
            P4rtClient.P4rtException e = assertThrows(P4rtClient.P4rtException.class, c::connect);
            assertEquals(Status.Code.FAILED_PRECONDITION, e.code);
            assertTrue(e.getMessage().contains("another P4 program"), e.getMessage());
        }
        P4rtCodec hmux = new P4rtCodec(P4rtCodec.loadP4Info(ModelP4Switch.p4info("hlb_hmux")));
        try (P4rtClient c = new P4rtClient(sw.address, 1, 50, hmux.p4info, 10_000)) {
            P4rtClient.P4rtException e = assertThrows(P4rtClient.P4rtException.class, c::connect);
            assertEquals(Status.Code.PERMISSION_DENIED, e.code);
            assertTrue(e.getMessage().contains("not the primary"), e.getMessage());
        }
        // a higher election id takes over; the southbound's next write is refused, named, and nothing changes
        try (P4rtClient c = new P4rtClient(sw.address, 1, Fabric.DEFAULT_ELECTION_ID + 5, hmux.p4info, 10_000)) {
            c.connect();
            SwitchDelta d = IntentDiff.diff(sb.capability(SW).holdable(intent(1)), SwitchReading.of(SwitchIntent.EMPTY));
            SouthboundException e = assertThrows(SouthboundException.class, () -> sb.apply(Map.of(SW, d)));
            assertTrue(e.getMessage().contains("not the primary controller with election id 100"), e.getMessage());
            assertTrue(read().failure.contains("not the primary"));
        }
        // the higher one left: the switch keeps its election id as the one to reach (P4Runtime's election_id_past),
        // so this controller stays a backup and says so
        SwitchReading r = read();
        assertTrue(r.failure.contains("NOT_FOUND"), r.failure);
    }
}
