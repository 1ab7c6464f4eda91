package org.hybridlb.standalone.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.glassfish.jersey.jdkhttp.JdkHttpServerFactory;
import org.glassfish.jersey.server.ResourceConfig;
import org.hybridlb.app.core.ApiException;
import org.hybridlb.app.core.HybridlbApi;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.MigrationRecord;
import org.hybridlb.app.core.view.AssignmentView;
import org.hybridlb.app.core.view.ControllerCounters;
import org.hybridlb.app.core.view.MigrationsView;
import org.hybridlb.app.core.view.ReassignResult;
import org.hybridlb.app.core.view.SmuxView;
import org.hybridlb.app.core.view.StatsView;
import org.hybridlb.app.core.view.SwitchView;
import org.hybridlb.app.core.rest.HybridlbRestApplication;
import org.hybridlb.solver.model.MigrationPlan;
import org.hybridlb.solver.model.MigrationStep;
import org.hybridlb.solver.model.MigrationWave;
import org.hybridlb.solver.model.Vip;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The CLI against the core's real REST resources on the daemon's embedded server, bound to a fake API. */
class HybridlbCliTest {
    static HttpServer server;
    static String url;
    static final List<String> calls = new ArrayList<>();

    static final String VIP1 = "{\"vip\": \"10.100.0.1\", \"aggregate\": \"10.100.0.0/16\", \"ports\": [{\"proto\": \"tcp\", \"port\": 80,"
            + " \"dips\": [{\"ip\": \"10.0.0.2\"}, {\"ip\": \"10.0.0.3\", \"weight\": 2}]}]}";
    static final String VIP2 = "{\"vip\": \"10.100.0.2\", \"aggregate\": \"10.100.0.0/16\", \"ports\": [{\"proto\": \"any\", \"port\": 0,"
            + " \"dips\": [{\"ip\": \"10.0.1.2\"}]}]}";

    /** Answers like the controller: fixed data, and the controller's refusals for bad input. */
    static final class FakeApi implements HybridlbApi {
        @Override
        public List<Vip> vips() {
            calls.add("vips");
            return List.of(Json.read(VIP1, Vip.class), Json.read(VIP2, Vip.class));
        }

        @Override
        public Vip vip(String vip) {
            calls.add("vip " + vip);
            if (!vip.equals("10.100.0.1")) {
                throw ApiException.notFound("vip", "no VIP " + vip);
            }
            return Json.read(VIP1, Vip.class);
        }

        @Override
        public List<Vip> replaceVips(String body) {
            calls.add("replaceVips");
            return List.of();
        }

        @Override
        public Vip createVip(String body) {
            calls.add("createVip " + body);
            JsonNode n = Json.read(body, JsonNode.class);
            String ip = n.path("ports").path(0).path("dips").path(1).path("ip").asText();
            if (ip.equals("10.0.0.300")) {
                throw ApiException.invalid("/ports/0/dips/1/ip", "value \"10.0.0.300\" is not an IPv4 address");
            }
            return Json.read(body, Vip.class);
        }

        @Override
        public Vip replaceVip(String vip, String body) {
            return null;
        }

        @Override
        public void deleteVip(String vip) {
            calls.add("deleteVip " + vip);
            if (!vip.equals("10.100.0.1")) {
                throw ApiException.notFound("vip", "no VIP " + vip);
            }
        }

        @Override
        public Vip addDip(String vip, String body) {
            calls.add("addDip " + vip + " " + body);
            return Json.read(VIP1, Vip.class);
        }

        @Override
        public Vip removeDip(String vip, String dip, String proto, Integer port) {
            calls.add("removeDip " + vip + " " + dip + " " + proto + " " + port);
            throw ApiException.conflict("dip", "10.0.0.2 is the last DIP of tcp/80");
        }

        @Override
        public AssignmentView assignment() {
            return new AssignmentView(Map.of("10.100.0.1", "tor-0-1"), "sticky", Map.of("10.100.0.1", "agg-0-0"),
                    0.213, 0.93, 1, null, Map.of(), List.of("core-1"), Map.of(), Map.of(), Map.of(), List.of(), List.of("10.0.1.2"),
                    Map.of("10.0.1.2", new AssignmentView.DipHealth("unreachable", "its switch tor-1-0 is down",
                            "tor-1-0")), false, null);
        }

        @Override
        public org.hybridlb.solver.model.Topology topology() {
            calls.add("topology");
            return new org.hybridlb.solver.model.Topology("fake", List.of(), List.of(), null, null);
        }

        @Override
        public List<SwitchView> switches() {
            return List.of(new SwitchView("agg-0-0", "agg", 0, true, null, true, null,
                    new SwitchView.Hash("ovs", null, "gre", null), false, List.of("10.100.0.1", "10.100.0.2")));
        }

        @Override
        public SwitchView setDrained(String switchId, boolean drained) {
            calls.add((drained ? "drain " : "undrain ") + switchId);
            if (!switchId.equals("agg-0-0")) {
                throw ApiException.notFound("switch", "no switch " + switchId);
            }
            return new SwitchView(switchId, "agg", 0, true, null, drained, null, null, false, List.of());
        }

        @Override
        public MigrationsView migrations() {
            MigrationRecord rec = record(3, "DIP 10.0.0.4 added to 10.100.0.1", MigrationRecord.DONE, 3);
            rec.nextWave = 3;
            rec.startedMillis = 1763737200000L;
            rec.endedMillis = 1763737200012L;
            return new MigrationsView(null, List.of(rec));
        }

        @Override
        public List<SmuxView> smuxes() {
            return List.of(new SmuxView("smux-0", "10.0.0.50", "tor-0-0", 3.6e9, false, 7, 2));
        }

        @Override
        public StatsView stats() {
            return new StatsView(null, 1.25e8, 1.25e6, 0.990099,
                    List.of(new StatsView.VipRate("10.100.0.1", 1.25e8, "tor-0-1")),
                    new ControllerCounters(12, 4, 0, 1, 0, 0, 3.5));
        }

        @Override
        public ReassignResult reassignNow() {
            calls.add("reassign");
            return new ReassignResult(record(4, "reassign now", MigrationRecord.RUNNING, 2), Map.of(), null);
        }

        @Override
        public List<org.hybridlb.app.core.prism.PrismVipView> prismVips() {
            return List.of(prismVip("10.100.0.1"));
        }

        @Override
        public org.hybridlb.app.core.prism.PrismVipView prismVip(String vip) {
            if (!vip.equals("10.100.0.1")) {
                throw org.hybridlb.app.core.ApiException.notFound("/vip", "VIP " + vip + " has no Prism hand-off");
            }
            return new org.hybridlb.app.core.prism.PrismVipView(vip,
                    List.of(new org.hybridlb.app.core.prism.PrismVipView.Frontend("10.0.0.2", "https://10.0.0.2:9400",
                            "in-sync", null, 2, "2026-11-27T12:00:00Z", 5, 1, 40, 39, 0, 0),
                            new org.hybridlb.app.core.prism.PrismVipView.Frontend("10.0.0.3", "https://10.0.0.3:9400",
                            "unreachable", "front end unreachable at https://10.0.0.3:9400/rules", 0, null, 0, 0, 0, 0, 0, 0)),
                    List.of(new org.hybridlb.app.core.prism.PrismVipView.Backend("b1", "10.0.1.2", 9500, true, 1, 1, 40)));
        }

        @Override
        public List<org.hybridlb.app.core.prism.PrismConnectionView> prismConnections(String vip) {
            prismVip(vip);
            return List.of(new org.hybridlb.app.core.prism.PrismConnectionView("10.0.0.2", 7, "10.9.0.1:40000", "remote",
                    "10.0.1.2", 3));
        }

        @Override
        public List<org.hybridlb.app.core.prism.PrismPin> prismPins(String vip) {
            prismVip(vip);
            return List.of(new org.hybridlb.app.core.prism.PrismPin(vip, 80, "10.9.0.1", 40000, "b1", "10.0.1.2"));
        }

        /** A migration record whose plan has {@code waves} waves of one step each. */
        static MigrationRecord record(long id, String trigger, String state, int waves) {
            List<MigrationWave> plan = new ArrayList<>();
            for (int w = 0; w < waves; w++) {
                plan.add(new MigrationWave(w, List.of(MigrationStep.announceOnSmux("10.100.0.1"))));
            }
            MigrationRecord m = new MigrationRecord();
            m.id = id;
            m.trigger = trigger;
            m.state = state;
            m.plan = new MigrationPlan(plan);
            return m;
        }
    }

    @BeforeAll
    static void serve() {
        server = JdkHttpServerFactory.createHttpServer(URI.create("http://127.0.0.1:0/"),
                ResourceConfig.forApplication(new HybridlbRestApplication(new FakeApi())), true);
        url = "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @AfterAll
    static void stop() {
        server.stop(0);
    }

    static String[] run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> a = new ArrayList<>(List.of("--url", url));
        a.addAll(List.of(args));
        int code = HybridlbCli.run(a.toArray(new String[0]), new PrintWriter(out), new PrintWriter(err));
        return new String[] {Integer.toString(code), out.toString(), err.toString()};
    }

    @Test
    void vipsTable() {
        String[] r = run("vips");
        assertEquals("0", r[0], r[2]);
        assertEquals("VIP         AGGREGATE      SERVICES (proto/port:DIPs)  DIPS\n"
                + "10.100.0.1  10.100.0.0/16  tcp/80:2                    10.0.0.2,10.0.0.3*2\n"
                + "10.100.0.2  10.100.0.0/16  any/0:1                     10.0.1.2\n", r[1]);
    }

    @Test
    void jsonIsTheServersAnswer() throws Exception {
        String[] r = run("--json", "vips");
        assertEquals("0", r[0]);
        JsonNode n = HybridlbCli.JSON.readTree(r[1]);
        assertEquals(2, n.path("vips").size());
        assertEquals("10.0.0.3", n.path("vips").path(0).path("ports").path(0).path("dips").path(1).path("ip").asText());
    }

    @Test
    void refusalsShowErrorFieldAndReasonAndExitOne() {
        String[] r = run("vip", "add", "10.100.0.9", "--aggregate", "10.100.0.0/16", "--service", "tcp/80",
                "--dip", "10.0.0.2", "--dip", "10.0.0.300*2");
        assertEquals("1", r[0]);
        assertEquals("hybridlb: HTTP 400 invalid request\n  field:  /ports/0/dips/1/ip\n"
                + "  reason: value \"10.0.0.300\" is not an IPv4 address\n", r[2]);
        assertTrue(calls.stream().anyMatch(c -> c.contains("\"ip\":\"10.0.0.300\",\"weight\":2")), calls.toString());

        r = run("vip", "rm", "10.100.0.77");
        assertEquals("1", r[0]);
        assertEquals("hybridlb: HTTP 404 not found\n  field:  vip\n  reason: no VIP 10.100.0.77\n", r[2]);

        r = run("dip", "rm", "10.100.0.1", "10.0.0.2", "--service", "tcp/80");
        assertEquals("1", r[0]);
        assertTrue(r[2].startsWith("hybridlb: HTTP 409 conflict\n  field:  dip\n"), r[2]);
        assertTrue(calls.contains("removeDip 10.100.0.1 10.0.0.2 tcp 80"), calls.toString());
    }

    @Test
    void addAndRemoveAndDip() {
        String[] r = run("vip", "add", "10.100.0.9", "--aggregate", "10.100.0.0/16", "--dip", "10.0.0.2@10.0.0.20");
        assertEquals("0", r[0], r[2]);
        assertTrue(r[1].startsWith("added VIP 10.100.0.9\n"), r[1]);
        assertTrue(r[1].contains("any/0:1"), r[1]);
        r = run("vip", "rm", "10.100.0.1");
        assertEquals("0", r[0], r[2]);
        assertEquals("removed VIP 10.100.0.1\n", r[1]);
        r = run("dip", "add", "10.100.0.1", "10.0.0.4", "--weight", "3", "--service", "tcp/80");
        assertEquals("0", r[0], r[2]);
        assertTrue(calls.contains("addDip 10.100.0.1 {\"ip\":\"10.0.0.4\",\"weight\":3,\"proto\":\"tcp\",\"port\":80}"), calls.toString());
        r = run("vip", "show", "10.100.0.1");
        assertEquals("VIP 10.100.0.1 (aggregate 10.100.0.0/16)\nSERVICE  DIP       WEIGHT  HOST\n"
                + "tcp/80   10.0.0.2  1       -\ntcp/80   10.0.0.3  2       -\n", r[1]);
    }

    @Test
    void vipAddSendsAffinityAndMechanismOnlyWhenGiven() {
        String[] r = run("vip", "add", "10.100.0.9", "--aggregate", "10.100.0.0/16", "--service", "tcp/80",
                "--dip", "10.0.0.2", "--affinity", "cheetah", "--mechanism", "rr", "--cookie-hash", "crc32c");
        assertEquals("0", r[0], r[2]);
        assertTrue(calls.contains("createVip {\"vip\":\"10.100.0.9\",\"aggregate\":\"10.100.0.0/16\",\"affinity\":\"cheetah\","
                + "\"mechanism\":\"rr\",\"cookieHash\":\"crc32c\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.0.0.2\"}]}]}"), calls.toString());
        calls.clear();
        r = run("vip", "add", "10.100.0.7", "--aggregate", "10.100.0.0/16", "--service", "tcp/80",
                "--dip", "10.0.0.2", "--affinity", "cheetah-stateful", "--mechanism", "awrr");
        assertEquals("0", r[0], r[2]);
        assertTrue(calls.contains("createVip {\"vip\":\"10.100.0.7\",\"aggregate\":\"10.100.0.0/16\","
                + "\"affinity\":\"cheetah-stateful\",\"mechanism\":\"awrr\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,"
                + "\"dips\":[{\"ip\":\"10.0.0.2\"}]}]}"), calls.toString());
        calls.clear();
        r = run("vip", "add", "10.100.0.8", "--aggregate", "10.100.0.0/16", "--dip", "10.0.0.2");
        assertEquals("0", r[0], r[2]);
        assertTrue(calls.contains("createVip {\"vip\":\"10.100.0.8\",\"aggregate\":\"10.100.0.0/16\","
                + "\"ports\":[{\"proto\":\"any\",\"port\":0,\"dips\":[{\"ip\":\"10.0.0.2\"}]}]}"), calls.toString());
    }

    @Test
    void statusTables() {
        String[] r = run("assignment");
        assertEquals("VIP         INSTALLED  TARGET\n10.100.0.1  tor-0-1    agg-0-0\n"
                + "algorithm sticky, HMux traffic share 93.0%, MRU 0.213, SMuxes needed 1\n"
                + "down switches: core-1; drained: none; unhealthy DIPs: 10.0.1.2; migrating: no\n"
                + "DIP 10.0.1.2 unreachable: its switch tor-1-0 is down\n", r[1]);
        r = run("smuxes");
        assertEquals("SMUX    IP         TOR      LIVE  TABLE  VIPS\nsmux-0  10.0.0.50  tor-0-0  NO    7      2\n", r[1]);
        r = run("stats");
        assertEquals("VIP         RATE         PLACEMENT\n10.100.0.1  1.00 Gbit/s  tor-0-1\n"
                + "HMux 1.00 Gbit/s, SMux 10.00 Mbit/s, HMux share 99.0%\n"
                + "controller: 12 reconciles, 4 waves, 0 rollbacks, 1 failovers, 0 repairs, last reconcile 3.5 ms\n", r[1]);
        r = run("migrations");
        assertEquals("ID  STATE  WAVES  STARTED               TOOK   TRIGGER                           ERROR\n"
                + "3   done   3/3    2025-11-21T15:00:00Z  12 ms  DIP 10.0.0.4 added to 10.100.0.1  -\n", r[1]);
        r = run("reassign");
        assertEquals("migration 4 running: 2 waves (reassign now)\n", r[1]);
    }

    @Test
    void prismTables() {
        String[] r = run("prism");
        assertEquals("0", r[0], r[2]);
        assertEquals("VIP 10.100.0.1\n"
                + "  FRONT END        STATE              PUSHES             CONNS              IN FLIGHT          HANDOFFS"
                + "           RESETS             TIMEOUTS\n"
                + "  10.0.0.2         in-sync            2                  5                  1                  40"
                + "                 0                  0\n"
                + "  10.0.0.3         unreachable        0                  0                  0                  0"
                + "                  0                  0\n"
                + "    front end unreachable at https://10.0.0.3:9400/rules\n"
                + "  BACKEND          ADDRESS            HOST               UP AT              OWNED              HANDOFFS\n"
                + "  b1               10.0.1.2:9500      healthy            1/2                1                  40\n", r[1]);
        r = run("prism", "10.100.0.1", "--connections");
        assertEquals("FRONT END          ID                 CLIENT             STATE              OWNER              REQUESTS\n"
                + "10.0.0.2           7                  10.9.0.1:40000     remote             10.0.1.2           3\n", r[1]);
        r = run("prism", "10.100.0.2");
        assertEquals("1", r[0]);
        assertTrue(r[2].contains("field:  /vip") && r[2].contains("has no Prism hand-off"), r[2]);
        r = run("prism", "--connections");
        assertEquals("2", r[0]);
        r = run("prism", "10.100.0.1", "--pins");
        assertEquals("CLIENT             VIP PORT           BACKEND            DIP\n"
                + "10.9.0.1:40000     80                 b1                 10.0.1.2\n", r[1]);
        r = run("prism", "--pins");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("--pins needs a VIP"), r[2]);
    }

    @Test
    void switchesDrainAndUndrain() {
        String[] r = run("switches");
        assertEquals("SWITCH   ROLE  POD  UP   DRAINED  HMUX VIPS\n"
                + "agg-0-0  agg   0    yes  yes      10.100.0.1, 10.100.0.2\n", r[1]);
        r = run("drain", "agg-0-0");
        assertEquals("0", r[0]);
        assertTrue(r[1].startsWith("agg-0-0: drained;"), r[1]);
        r = run("undrain", "agg-0-0");
        assertEquals("agg-0-0: not drained; VIPs may be placed on it again\n", r[1]);
        r = run("drain", "tor-9-9");
        assertEquals("1", r[0]);
        assertTrue(r[2].contains("HTTP 404") && r[2].contains("field:  switch"), r[2]);
        assertTrue(calls.contains("drain agg-0-0") && calls.contains("undrain agg-0-0"), calls.toString());
    }

    @Test
    void unreachableDaemonExitsThree() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = HybridlbCli.run(new String[] {"--url", "http://127.0.0.1:9", "vips"}, new PrintWriter(out), new PrintWriter(err));
        assertEquals(3, code);
        assertTrue(err.toString().startsWith("hybridlb: cannot reach hybridlbd at http://127.0.0.1:9"), err.toString());
    }
}
