package org.hybridlb.app.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.cheetah.CookieState;
import org.hybridlb.app.core.cheetah.OwnerSlots;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.solver.model.Vip;
import org.junit.jupiter.api.Test;

/**
 * The controller's table for a cheetah-stateful VIP, owner slots with a hole or with one SMux at
 * several positions, is taken by the real SMux ({@code hlb-smux --table}, its own parser) and read
 * back the same. Runs when the SMux is named by {@code HLB_SMUX_BIN} (then it must be there;
 * .ci/run sets it once the SMux is built; root, DPDK without hugepages); skipped otherwise.
 */
class StatefulTableSmuxAgreementTest {
    /** The address of the SMux under test. */
    static final String SELF = "192.0.2.10";

    static Path smuxBinary() {
        String env = System.getenv("HLB_SMUX_BIN");
        if (env == null) {
            return null; // not asked for: a build tree's hlb-smux may be older than this code
        }
        Path p = Path.of(env);
        if (!Files.isExecutable(p)) {
            throw new AssertionError("HLB_SMUX_BIN=" + env + " is not an executable"); // asked for: never skip
        }
        return p;
    }

    /**
     * The table the publisher renders for {@code slots} (owner slot -> SMux address): a hole is a
     * placeholder ({@link OwnerSlots#owners}).
     */
    static SmuxTable statefulTable(Map<Integer, String> slots) {
        CookieState s = new CookieState();
        s.ownerSlots.putAll(slots);
        List<String> owners = OwnerSlots.owners(s);
        VipEntry v = new VipEntry("10.100.0.2", "10.100.0.0/16", List.of(new ServiceEntry("tcp", 80,
                List.of(new Bucket("10.0.1.1", 1, null, 0), new Bucket("10.0.1.2", 2, "172.16.0.2", 1)))));
        SmuxTable.Cheetah k = new SmuxTable.Cheetah(Vip.AFFINITY_CHEETAH_STATEFUL, "least-loaded",
                "000102030405060708090a0b0c0d0e0f", org.hybridlb.app.core.cheetah.Cookie.HashMode.SIPHASH13,
                Map.of("10.0.1.1", 7, "172.16.0.2", 9), owners);
        return SmuxTable.of(3, List.of(v), Map.of(v.vip, HashContract.of(HashContract.Selection.OVS_HASH, 0,
                HashContract.Encap.of("ipip"))), Map.of(v.vip, k));
    }

    @Test
    void theRealSmuxTakesAStatefulTableWithAHoleAndReturnsItsOwners() throws Exception {
        // a free slot below a held one (a state whose slot 1 was freed after its quarantine)
        SmuxTable sent = statefulTable(Map.of(0, SELF, 2, "192.0.2.12"));
        assertEquals(List.of(SELF, OwnerSlots.placeholder(1), "192.0.2.12"), sent.vips.get(0).statefulOwners);
        assertTheRealSmuxRunsIt(sent);
    }

    @Test
    void theRealSmuxTakesItsAddressAtSeveralOwnerPositions() throws Exception {
        // slot 1's SMux was lost while every live SMux held a slot: the one holding the fewest took it
        AtomicLong now = new AtomicLong(0);
        OwnerSlots slots = new OwnerSlots(now::get);
        CookieState s = new CookieState();
        slots.update(s, List.of(SELF, "192.0.2.11", "192.0.2.12"));
        slots.update(s, List.of(SELF, "192.0.2.12"));
        assertEquals(List.of(SELF, SELF, "192.0.2.12"), OwnerSlots.owners(s));
        assertTheRealSmuxRunsIt(statefulTable(s.ownerSlots));
    }

    /** {@code sent} is taken by the real SMux (address {@link #SELF}) and read back the same. */
    static void assertTheRealSmuxRunsIt(SmuxTable sent) throws Exception {
        Path bin = smuxBinary();
        assumeTrue(bin != null, "hlb-smux is not built (set HLB_SMUX_BIN)");
        Path file = Files.createTempFile("hlb-stateful-table", ".json");
        Files.writeString(file, Json.write(sent));
        String prefix = "hlbsfctl" + ProcessHandle.current().pid();
        Process p = new ProcessBuilder(bin.toString(), "--no-huge", "--no-pci", "-m", "128", "--no-shconf",
                "--no-telemetry", "--file-prefix=" + prefix, "-l", "0", "--log-level=warning", "--vdev", "net_null0",
                "--", "--ip", SELF, "--gateway-mac", "02:47:57:00:00:01", "--mgmt", "127.0.0.1:0",
                "--table", file.toString()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            String ready = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))
                    .readLine();
            assertTrue(ready != null && ready.contains("\"ready\""), "the SMux refused the table: " + ready
                    + " (exit " + (p.waitFor(5, TimeUnit.SECONDS) ? p.exitValue() : "none") + ")");
            int port = Json.MAPPER.readTree(ready).path("mgmtPort").asInt();
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/table")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            SmuxTable running = Json.MAPPER.readValue(r.body(), SmuxTable.class);
            assertTrue(sent.sameVips(running), "sent " + Json.write(sent) + "\nrunning " + r.body());
            assertEquals(sent.vips.get(0).statefulOwners, running.vips.get(0).statefulOwners);
        } finally {
            p.destroy();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            Files.deleteIfExists(file);
            deleteTree(Path.of("/var/run/dpdk", prefix));
        }
    }

    static void deleteTree(Path dir) throws java.io.IOException {
        if (Files.isDirectory(dir)) {
            try (var s = Files.walk(dir)) {
                s.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }
}
