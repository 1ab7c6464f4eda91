package org.hybridlb.app.onos;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Pattern;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.prism.FakeFrontEnd;
import org.hybridlb.app.onos.cli.CliAccess;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.onlab.junit.TestUtils;
import org.onosproject.cli.AbstractShellCommand;

/** The Karaf commands over the app running on ONOS adapters: text and {@code -j} JSON output. */
public class CliCommandsTest {
    private HybridlbManagerTest app;
    private PrintStream saved;
    private ByteArrayOutputStream out;

    @Before
    public void setUp() {
        app = HybridlbManagerTest.started();
        saved = System.out;
        out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    }

    @After
    public void tearDown() {
        System.setOut(saved);
        app.tearDown();
    }

    private String run(AbstractShellCommand c, boolean json) throws Exception {
        CliAccess.inject(c, app.manager);
        TestUtils.setField(c, "json", json);
        out.reset();
        CliAccess.run(c);
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    public void vipsTextAndJson() throws Exception {
        String text = run(CliAccess.vips(null), false);
        assertEquals(HybridlbManagerTest.VIP + " aggregate=10.100.0.0/16 on=smux\n  tcp/80 -> 10.0.1.2 10.0.1.3\n", text);
        JsonNode j = Json.MAPPER.readTree(run(CliAccess.vips(HybridlbManagerTest.VIP), true));
        assertEquals(Json.MAPPER.readTree(Json.write(java.util.Map.of("vips", app.manager.api().vips()))), j);
        app.manager.api().createVip(HybridlbManagerTest.vip("10.100.0.9", "10.0.1.2")
                .put("affinity", "cheetah-stateful").put("mechanism", "least-loaded").put("cookieHash", "crc32c").toString());
        String stateful = run(CliAccess.vips("10.100.0.9"), false);
        assertTrue(stateful, stateful.startsWith("10.100.0.9 aggregate=10.100.0.0/16 on=")
                && stateful.contains(" affinity=cheetah-stateful mechanism=least-loaded cookieHash=crc32c\n"));
    }

    @Test
    public void assignmentReassignMigrationsSmuxesStats() throws Exception {
        app.traffic();
        String reassign = run(CliAccess.reassign(), false);
        assertTrue(reassign, reassign.startsWith("migration ") || reassign.startsWith("no migration running"));
        app.settle();
        String hmux = app.placement();
        String assignment = run(CliAccess.assignment(), false);
        assertTrue(assignment, assignment.contains(String.format("%-16s installed=%-12s target=%s",
                HybridlbManagerTest.VIP, hmux, hmux)));
        String migrations = run(CliAccess.migrations(), false);
        assertTrue(migrations, migrations.contains("announce-on-hmux " + HybridlbManagerTest.VIP + " @" + hmux));
        String smuxes = run(CliAccess.smuxes(), false);
        assertTrue(smuxes, smuxes.startsWith("smux-1     ip=10.0.2.9        tor=tor2       live=true "));
        JsonNode stats = Json.MAPPER.readTree(run(CliAccess.stats(), true));
        assertTrue(stats.toString(), stats.path("controller").path("reconciles").asLong() > 0);
        assertEquals(List.of(HybridlbManagerTest.VIP), CliAccess.vipChoices(app.manager));
        assertEquals(List.of("smux-1"), CliAccess.smuxChoices(app.manager));
    }

    @Test
    public void switchesSayWhyOneCannotBeAnHmux() throws Exception {
        app.onos.driverChanged("tor1", false);   // Open vSwitch 3.x under ONOS 2.7: the "default" driver
        app.settle();
        String text = run(CliAccess.switches(), false);
        assertTrue(text, text.startsWith("tor1       role=tor  up=true  drained=false vips=[]\n"
                + "  cannot be an HMux: of:tor1 cannot be an HMux: its ONOS driver \"default\""));
        assertTrue(text, text.contains("set it in the network configuration: "
                + "{\"devices\": {\"of:tor1\": {\"basic\": {\"driver\": \"ovs\"}}}}\n"));
        JsonNode j = Json.MAPPER.readTree(run(CliAccess.switches(), true));
        assertEquals(Json.MAPPER.readTree(Json.write(java.util.Map.of("switches", app.manager.api().switches()))), j);
        String assignment = run(CliAccess.assignment(), false);
        assertTrue(assignment, assignment.contains("\ntor1 cannot be an HMux: of:tor1 cannot be an HMux: its ONOS driver"));
    }

    @Test
    public void anUnknownVipIsAnErrorNamingIt() throws Exception {
        PrintStream err = System.err;
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        System.setErr(new PrintStream(e, true, StandardCharsets.UTF_8));
        try {
            String text = run(CliAccess.vips("10.100.9.9"), false);
            assertEquals("", text);
        } finally {
            System.setErr(err);
        }
        assertTrue(e.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8).startsWith("vip: "));
    }

    @Test
    public void prismShowsFrontEndsBackendsAndOwners() throws Exception {
        try (FakeFrontEnd fe = new FakeFrontEnd()) {
            fe.connections = Json.MAPPER.readTree("[{\"id\": 4, \"client\": \"10.9.0.1:40000\", \"state\": \"remote\","
                    + " \"owner\": \"10.0.1.3\", \"requests\": 2}]");
            app.manager.api().replaceVip(HybridlbManagerTest.VIP, "{\"vip\": \"" + HybridlbManagerTest.VIP + "\","
                    + " \"aggregate\": \"10.100.0.0/16\", \"ports\": [{\"proto\": \"tcp\", \"port\": 80, \"dips\":"
                    + " [{\"ip\": \"10.0.1.2\"}, {\"ip\": \"10.0.1.3\"}]}], \"prism\": {\"frontends\": [{\"ip\":"
                    + " \"10.0.1.2\", \"admin\": \"" + fe.admin() + "\"}], \"backends\": {\"b1\": {\"address\":"
                    + " \"10.0.1.3\", \"controlPort\": 9500}}, \"rules\": [{\"name\": \"all\", \"priority\": 0,"
                    + " \"split\": {\"b1\": 1}}]}}");
            long end = System.nanoTime() + 15_000_000_000L;
            while (fe.puts.get() == 0 || app.manager.api().prismConnections(HybridlbManagerTest.VIP).isEmpty()) {
                assertTrue("the front end got no rules", System.nanoTime() < end);
                Thread.sleep(50);
            }
            String text = run(CliAccess.prism(null, false), false);
            assertTrue(text, text.startsWith("VIP " + HybridlbManagerTest.VIP + "\n"));
            assertTrue(text, Pattern.compile("\n  10\\.0\\.1\\.2 +in-sync +1 +0 +1 ").matcher(text).find());
            assertTrue(text, Pattern.compile("\n  b1 +10\\.0\\.1\\.3:9500 +healthy +0/1 ").matcher(text).find());
            String conns = run(CliAccess.prism(HybridlbManagerTest.VIP, true), false);
            assertTrue(conns, Pattern.compile("\n10\\.0\\.1\\.2 +4 +10\\.9\\.0\\.1:40000 +remote +10\\.0\\.1\\.3 +2\n")
                    .matcher(conns).find());
            JsonNode j = Json.MAPPER.readTree(run(CliAccess.prism(HybridlbManagerTest.VIP, false), true));
            assertEquals(Json.MAPPER.readTree(Json.write(app.manager.api().prismVip(HybridlbManagerTest.VIP))), j);
        }
    }
}
