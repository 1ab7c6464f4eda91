package org.hybridlb.standalone;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.hmux.CookieDecode;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.p4.HlbP4Info;
import org.hybridlb.app.core.p4.HmuxP4Snapshot;
import org.hybridlb.app.core.p4.P4Diff;
import org.hybridlb.app.core.p4.P4State;
import org.hybridlb.standalone.p4rt.P4rtCodec;
import org.hybridlb.standalone.p4rt.P4rtHmuxSouthbound;
import p4.v1.P4RuntimeOuterClass;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * hybridlbd's P4Runtime southbound on a switch running the {@code hlb_cheetah} program (the
 * repository's model switch over real gRPC): it says it decodes crc32c cookies and not the hosts'
 * siphash13; a cookie service written reads back as itself; a change of its servers sends only
 * their entries; and the entries it holds make the reference model (p4/model/pipeline.py) send
 * each crc32c cookie vector to its server's host and drop one the service does not accept.
 */
class P4rtCheetahSouthboundTest {
    static final String SW = P4rtUnderTest.SW;
    static final ServiceMatch SHOP = new ServiceMatch("10.200.0.3", "tcp", 443);
    static final String KEY = "00112233445566778899aabbccddeeff";

    @TempDir
    static Path dir;
    static P4rtUnderTest under;
    static P4rtHmuxSouthbound sb;

    @BeforeAll
    static void start() throws Exception {
        under = new P4rtUnderTest(dir, HlbP4Info.PROFILE_HLB_CHEETAH);
        sb = under.sb;
    }

    @AfterAll
    static void stop() {
        if (under != null) {
            under.close();
        }
    }

    static SwitchIntent intent(Map<Integer, CookieDecode.Server> servers) {
        return SwitchIntent.builder()
                .entry(SHOP, List.of(new DipBucket(0, null, "10.0.9.1", 2), new DipBucket(1, null, "10.0.9.2", 1)))
                .cookies(SHOP, new CookieDecode(Cookie.HashMode.CRC32C, KEY, servers)).build();
    }

    void reconcile(SwitchIntent want) {
        under.reconcile(want);
    }

    @Test
    void aCookieServiceWrittenReadsBackAndAServerChangeSendsOnlyItsEntries() {
        SwitchCapability cap = sb.capability(SW);
        assertEquals(Set.of(Cookie.HashMode.CRC32C), cap.cookieModes);
        assertFalse(cap.decodes(Cookie.DEFAULT_MODE), "the hosts' siphash13 cookies cannot be decoded by the program");

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

    /** The host of server id {@code id} in the model check (inside the testbed's 10.0.0.0/8). */
    static String hostOf(int id) {
        return "10.60." + (id >> 8) + "." + (id & 255);
    }

    /**
     * The crc32c rows of COOKIE-SPEC's vectors with a stateless ident, of the service (VIP, port,
     * key) that has the most.
     */
    static List<Map<String, String>> crc32cVectorsOfOneService() throws Exception {
        List<String> lines = Files.readAllLines(ModelP4Switch.REPO.resolve("p4/vectors/cookie_vectors.csv"));
        lines.removeIf(l -> l.startsWith("#"));
        String[] header = lines.get(0).split(",");
        Map<String, List<Map<String, String>>> byService = new TreeMap<>();
        for (String l : lines.subList(1, lines.size())) {
            String[] f = l.split(",");
            Map<String, String> row = new TreeMap<>();
            for (int i = 0; i < header.length; i++) {
                row.put(header[i], f[i]);
            }
            if ("crc32c".equals(row.get("mode")) && (Integer.parseInt(row.get("ident")) & 0x4000) == 0) {
                byService.computeIfAbsent(row.get("vip") + " " + row.get("vip_port") + " " + row.get("key"),
                        k -> new ArrayList<>()).add(row);
            }
        }
        return byService.values().stream().max(Comparator.comparingInt(List::size)).orElseThrow();
    }

    @Test
    void theEntriesWrittenMakeTheModelDecodeEachCookieVectorToItsHost() throws Exception {
        List<Map<String, String>> rows = crc32cVectorsOfOneService();
        assertTrue(rows.size() >= 10, "vectors: " + rows.size());
        Map<String, String> first = rows.get(0);
        ServiceMatch m = new ServiceMatch(first.get("vip"), "tcp", Integer.parseInt(first.get("vip_port")));
        Map<Integer, CookieDecode.Server> servers = new TreeMap<>();
        rows.forEach(r -> servers.put(Integer.parseInt(r.get("ident")),
                new CookieDecode.Server(hostOf(Integer.parseInt(r.get("ident"))), 0)));
        int notAccepted = ((TreeMap<Integer, CookieDecode.Server>) servers).lastKey();
        servers.remove(notAccepted); // its cookies are invalid for the service: dropped
        SwitchIntent want = sb.capability(SW).holdable(SwitchIntent.builder()
                .entry(m, List.of(new DipBucket(0, null, "10.0.0.9", 1)))
                .cookies(m, new CookieDecode(Cookie.HashMode.CRC32C, first.get("key"), servers)).build());
        reconcile(want);

        // what the switch holds, written in dependency order onto a fresh model switch
        P4rtCodec codec = new P4rtCodec(P4rtCodec.loadP4Info(ModelP4Switch.p4info(HlbP4Info.PROFILE_HLB_CHEETAH)));
        P4RuntimeOuterClass.WriteRequest.Builder w = P4RuntimeOuterClass.WriteRequest.newBuilder();
        P4Diff.flat(P4Diff.batches(new P4State(), sb.readSwitch(SW).ours)).forEach(u -> w.addUpdates(codec.update(u)));
        Path updates = dir.resolve("updates.bin");
        Files.write(updates, w.build().toByteArray());
        Path cases = dir.resolve("cases.json");
        DaemonConfig.STRICT.writeValue(cases.toFile(), rows);
        Path tests = ModelP4Switch.REPO.resolve("p4/tests");
        ProcessBuilder pb = new ProcessBuilder("/usr/bin/python3", tests.resolve("decode_written.py").toString(),
                HlbP4Info.PROFILE_HLB_CHEETAH, updates.toString(), cases.toString()).directory(tests.toFile());
        pb.environment().put("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python");
        pb.environment().put("PYTHONDONTWRITEBYTECODE", "1");
        Process p = pb.redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        Map<String, String> got = DaemonConfig.STRICT.readValue(out,
                new com.fasterxml.jackson.core.type.TypeReference<Map<String, String>>() { });
        int dropped = 0;
        for (Map<String, String> r : rows) {
            int ident = Integer.parseInt(r.get("ident"));
            if (ident == notAccepted) {
                assertTrue(got.get(r.get("seq")).startsWith("drop:"), r + " -> " + got.get(r.get("seq")));
                dropped++;
            } else {
                assertEquals(hostOf(ident), got.get(r.get("seq")), r.toString());
            }
        }
        assertTrue(dropped > 0);
    }
}
