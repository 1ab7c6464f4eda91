package org.hybridlb.standalone.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.glassfish.jersey.jdkhttp.JdkHttpServerFactory;
import org.glassfish.jersey.server.ResourceConfig;
import org.hybridlb.app.core.ApiException;
import org.hybridlb.app.core.HybridlbApi;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.rest.HybridlbRestApplication;
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
        public Map<String, Object> assignment() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("installed", Map.of("10.100.0.1", "tor-0-1"));
            m.put("algorithm", "sticky");
            m.put("target", Map.of("10.100.0.1", "agg-0-0"));
            m.put("mru", 0.213);
            m.put("hmuxTrafficShare", 0.93);
            m.put("smuxCount", 1);
            m.put("downSwitches", List.of("core-1"));
            m.put("unhealthyDips", List.of("10.0.1.2"));
            m.put("dipHealth", Map.of("10.0.1.2", Map.of("state", "unreachable", "reason", "its switch tor-1-0 is down")));
            m.put("migrating", false);
            return m;
        }

        @Override
        public List<Map<String, Object>> switches() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", "agg-0-0");
            m.put("role", "agg");
            m.put("pod", 0);
            m.put("up", true);
            m.put("drained", true);
            m.put("vips", List.of("10.100.0.1", "10.100.0.2"));
            return List.of(m);
        }

        @Override
        public Map<String, Object> setDrained(String switchId, boolean drained) {
            calls.add((drained ? "drain " : "undrain ") + switchId);
            if (!switchId.equals("agg-0-0")) {
                throw ApiException.notFound("switch", "no switch " + switchId);
            }
            return Map.of("id", switchId, "drained", drained);
        }

        @Override
        public Map<String, Object> migrations() {
            Map<String, Object> rec = new LinkedHashMap<>();
            rec.put("id", 3);
            rec.put("trigger", "DIP 10.0.0.4 added to 10.100.0.1");
            rec.put("state", "done");
            rec.put("nextWave", 3);
            rec.put("plan", Map.of("waves", List.of(1, 2, 3)));
            rec.put("startedMillis", 1763737200000L);
            rec.put("endedMillis", 1763737200012L);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("inFlight", null);
            m.put("recent", List.of(rec));
            return m;
        }

        @Override
        public List<Map<String, Object>> smuxes() {
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("id", "smux-0");
            s.put("ip", "10.0.0.50");
            s.put("tor", "tor-0-0");
            s.put("live", false);
            s.put("tableVersion", 7);
            s.put("vips", 2);
            return List.of(s);
        }

        @Override
        public Map<String, Object> stats() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("hmuxBytesPerSecond", 1.25e8);
            m.put("smuxBytesPerSecond", 1.25e6);
            m.put("hmuxShare", 0.990099);
            m.put("vips", List.of(Map.of("vip", "10.100.0.1", "bytesPerSecond", 1.25e8, "placement", "tor-0-1")));
            m.put("controller", Map.of("reconciles", 12, "wavesApplied", 4, "rollbacks", 0, "failovers", 1,
                    "repairs", 0, "lastReconcileMillis", 3.5));
            return m;
        }

        @Override
        public Map<String, Object> reassignNow() {
            calls.add("reassign");
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("migration", Map.of("id", 4, "state", "running", "trigger", "reassign now", "plan", Map.of("waves", List.of(1, 2))));
            m.put("target", Map.of());
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
