package org.hybridlb.standalone;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.hmux.CookieDecode;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.IntentDiff;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.p4.HlbP4Info;
import org.hybridlb.app.core.p4.HmuxP4Snapshot;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.topology.FatTree;
import org.hybridlb.standalone.p4rt.P4rtHmuxSouthbound;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * hybridlbd's P4Runtime southbound on a switch running the {@code hlb_cheetah} program (the
 * repository's model switch over real gRPC): it says it decodes crc32c cookies and not the hosts'
 * siphash13; a cookie service written reads back as itself; a change of its servers sends only
 * their entries.
 */
class P4rtCheetahSouthboundTest {
    static final String SW = "tor-0-0";
    static final ServiceMatch SHOP = new ServiceMatch("10.200.0.3", "tcp", 443);
    static final String KEY = "00112233445566778899aabbccddeeff";

    @TempDir
    static Path dir;
    static ModelP4Switch sw;
    static P4rtHmuxSouthbound sb;

    @BeforeAll
    static void start() throws Exception {
        Topology topo = FatTree.generate(new FatTree.Params().k(2));
        sw = new ModelP4Switch(Files.createDirectories(dir.resolve("sw")));
        ObjectNode p4 = DaemonConfig.STRICT.createObjectNode().put("grpc", sw.address).put("deviceId", 1)
                .put("profile", HlbP4Info.PROFILE_HLB_CHEETAH)
                .put("p4info", ModelP4Switch.p4info(HlbP4Info.PROFILE_HLB_CHEETAH).toString());
        TestFabric.write(dir, topo, dir.resolve("ovs"), "p4c", Map.of(), Map.of(SW, p4));
        Fabric fabric = Fabric.load(dir.resolve("fabric.json"));
        Map<String, Integer> nextIds = new TreeMap<>();
        fabric.switches.values().stream().filter(s -> !s.id.equals(SW)).forEach(s -> nextIds.put(s.id, s.location));
        sw.programFabric(HlbP4Info.PROFILE_HLB_CHEETAH, nextIds, Map.of());
        sb = new P4rtHmuxSouthbound(fabric);
    }

    @AfterAll
    static void stop() {
        if (sb != null) {
            sb.close();
        }
        if (sw != null) {
            sw.close();
        }
    }

    static SwitchIntent intent(Map<Integer, CookieDecode.Server> servers) {
        return SwitchIntent.builder()
                .entry(SHOP, List.of(new DipBucket(0, null, "10.0.9.1", 2), new DipBucket(1, null, "10.0.9.2", 1)))
                .cookies(SHOP, new CookieDecode(Cookie.HashMode.CRC32C, KEY, servers)).build();
    }

    SwitchReading read() {
        return sb.read(List.of(SW)).get(SW);
    }

    void reconcile(SwitchIntent holdable) {
        SwitchDelta d = IntentDiff.diff(holdable, read());
        if (!d.isEmpty()) {
            sb.apply(Map.of(SW, d));
        }
        SwitchReading back = read();
        assertTrue(back.ok(), back.toString());
        assertEquals(holdable, back.intent);
        assertTrue(back.inconsistent.isEmpty(), back.inconsistent.toString());
        assertTrue(IntentDiff.diff(holdable, back).isEmpty(), back.toString());
    }

    @Test
    void aCookieServiceWrittenReadsBackAndAServerChangeSendsOnlyItsEntries() {
        SwitchCapability cap = sb.capability(SW);
        assertEquals(Set.of(Cookie.HashMode.CRC32C), cap.cookieModes);
        assertFalse(cap.decodes(Cookie.VIP_MODE), "the hosts' siphash13 cookies cannot be decoded by the program");

        SwitchIntent want = cap.holdable(intent(Map.of(3, new CookieDecode.Server("10.0.9.1", 0),
                5, new CookieDecode.Server("10.0.9.2", 1))));
        assertEquals(1, want.cookies.size(), "the switch keeps the crc32c cookies");
        reconcile(want);
        HmuxP4Snapshot held = sb.readSwitch(SW);
        assertEquals(2, held.ours.entries(HlbP4Info.CHEETAH_VIP_SERVERS_ID).size());
        assertEquals(2, held.ours.entries(HlbP4Info.CHEETAH_ALL_SERVERS_ID).size());

        long before = sb.counters().updates;
        reconcile(want);
        assertEquals(before, sb.counters().updates, "nothing to send for an intent the switch holds");

        // a drained server joins the accepted ones: its vip_servers and all_servers entries, nothing else
        reconcile(cap.holdable(intent(Map.of(3, new CookieDecode.Server("10.0.9.1", 0),
                5, new CookieDecode.Server("10.0.9.2", 1), 8, new CookieDecode.Server("10.0.9.7", 2)))));
        assertEquals(before + 2, sb.counters().updates);

        reconcile(SwitchIntent.EMPTY);
        HmuxP4Snapshot empty = sb.readSwitch(SW);
        assertTrue(empty.ours.entries(HlbP4Info.CHEETAH_VIP_SERVERS_ID).isEmpty());
        assertTrue(empty.ours.entries(HlbP4Info.CHEETAH_ALL_SERVERS_ID).isEmpty());
    }
}
