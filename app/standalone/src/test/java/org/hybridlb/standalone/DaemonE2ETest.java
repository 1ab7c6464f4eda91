package org.hybridlb.standalone;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.topology.FatTree;
import org.hybridlb.standalone.cli.HybridlbCli;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * hybridlbd end to end: the real Controller, the OVS programmer and liveness source against a
 * private ovs-vswitchd (one netdev bridge per switch of a k=2 fat-tree), SMuxes stood in for by
 * an HTTP server speaking the SMux control API, traffic given. REST in, flows out.
 */
class DaemonE2ETest {
    static PrivateOvs ovs;
    static final Topology topo = FatTree.generate(new FatTree.Params().k(2));
    static TestFabric tf;
    static HttpServer smuxServer;
    static final Map<String, String> smuxTables = new ConcurrentHashMap<>();
    @TempDir
    static Path dir;
    static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void setUp() throws IOException {
        ovs = PrivateOvs.start();
        smuxServer = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        Map<String, String> urls = new LinkedHashMap<>();
        for (Smux m : topo.smuxes) {
            urls.put(m.id, "http://127.0.0.1:" + smuxServer.getAddress().getPort() + "/" + m.id);
            smuxServer.createContext("/" + m.id + "/table", ex -> {
                byte[] body;
                int code = 200;
                if ("PUT".equals(ex.getRequestMethod())) {
                    String doc = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
                    long v = HybridlbCli.JSON.readTree(doc).path("version").asLong();
                    long running = HybridlbCli.JSON.readTree(smuxTables.getOrDefault(m.id, "{\"version\":0}")).path("version").asLong();
                    if (v <= running) {
                        code = 409;
                        body = "{\"error\":\"stale version\"}".getBytes(StandardCharsets.UTF_8);
                    } else {
                        smuxTables.put(m.id, doc);
                        body = ("{\"version\":" + v + "}").getBytes(StandardCharsets.UTF_8);
                    }
                } else {
                    body = smuxTables.getOrDefault(m.id, "{\"version\":0,\"vips\":[]}").getBytes(StandardCharsets.UTF_8);
                }
                ex.sendResponseHeaders(code, body.length);
                ex.getResponseBody().write(body);
                ex.close();
            });
        }
        smuxServer.start();
        tf = TestFabric.write(dir, topo, ovs, "hlbe", urls);
        int port = 1;
        for (Map.Entry<String, String> e : tf.bridges.entrySet()) {
            ovs.addBridge(e.getValue(), TestFabric.GRE_OFPORT);
            ovs.addLink(e.getValue(), e.getValue() + "l", port++);
        }
        Files.writeString(dir.resolve("hybridlbd.json"), "{\"fabric\": \"fabric.json\", \"stateDir\": \"state\","
                + " \"listen\": \"127.0.0.1:0\", \"intervals\": {\"reconcileMs\": 0, \"topologyMs\": 50}}");
    }

    @AfterAll
    static void tearDown() {
        if (smuxServer != null) {
            smuxServer.stop(0);
        }
        if (ovs != null) {
            ovs.close();
        }
    }

    static Daemon daemon() {
        Daemon.Overrides o = new Daemon.Overrides();
        Set<String> all = new java.util.TreeSet<>();
        topo.smuxes.forEach(m -> all.add(m.id));
        o.routes = () -> all;
        // 100 MB/s from the first ToR: worth an HMux
        o.stats = () -> new TrafficInterval(0, 0, 10, List.of(new VipTraffic("10.100.0.1",
                Map.of(topo.hosts.get(0).tor, 1e8), Map.of())));
        return new Daemon(DaemonConfig.load(dir.resolve("hybridlbd.json")), o).start();
    }

    static String flows(String sw) {
        return ovs.ovs.ofctl("dump-flows", "unix:" + ovs.dir.resolve(tf.bridges.get(sw) + ".mgmt"));
    }

    static HttpResponse<String> rest(Daemon d, String method, String path, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(d.url() + path)).method(method,
                body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
    }

    static void await(String what, BooleanSupplier ok) throws InterruptedException {
        long end = System.currentTimeMillis() + 15_000;
        while (!ok.getAsBoolean()) {
            if (System.currentTimeMillis() > end) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(20);
        }
    }

    static String hmuxOf(Daemon d) throws Exception {
        JsonNode a = HybridlbCli.JSON.readTree(rest(d, "GET", "/assignment", null).body());
        return a.path("installed").path("10.100.0.1").asText(null);
    }

    static final Pattern DURATION = Pattern.compile("duration=([0-9.]+)s.*priority=3100,tcp,nw_dst=10.100.0.1,tp_dst=80");

    @Test
    void restPutProgramsTheFabricFailsOverAndSurvivesARestart() throws Exception {
        List<String> dips = new ArrayList<>();
        for (Host h : topo.hosts) {
            dips.add("{\"ip\": \"" + h.ip + "\"}");
        }
        String vips = "{\"vips\": [{\"vip\": \"10.100.0.1\", \"aggregate\": \"10.100.0.0/16\","
                + " \"ports\": [{\"proto\": \"tcp\", \"port\": 80, \"dips\": [" + String.join(", ", dips) + "]}]}]}";
        String hmux;
        try (Daemon d = daemon()) {
            // invalid: refused, naming the field, nothing changes
            HttpResponse<String> bad = rest(d, "PUT", "/vips", vips.replace(topo.hosts.get(0).ip, "10.0.0.300"));
            assertEquals(400, bad.statusCode(), bad.body());
            assertTrue(bad.body().contains("\"field\":\"/vips/0/ports/0/dips/0/ip\""), bad.body());

            HttpResponse<String> r = rest(d, "PUT", "/vips", vips);
            assertEquals(200, r.statusCode(), r.body());
            await("the VIP on an HMux", () -> {
                try {
                    return hmuxOf(d) != null && !"smux".equals(hmuxOf(d));
                } catch (Exception e) {
                    return false;
                }
            });
            hmux = hmuxOf(d);
            String f = flows(hmux);
            assertTrue(f.contains("priority=3100,tcp,nw_dst=10.100.0.1,tp_dst=80 actions=set_field:0x"
                    + Integer.toHexString(tf.locations.get(hmux)) + "->pkt_mark,group:"), f);
            for (String sw : tf.bridges.keySet()) {
                String fs = flows(sw);
                assertTrue(fs.contains("priority=1000,ip,nw_dst=10.100.0.0/16 actions=group:"), sw + ": " + fs);
                if (!sw.equals(hmux)) {
                    assertTrue(fs.contains("priority=2000,ip,nw_dst=10.100.0.1 actions=set_field:0x"
                            + Integer.toHexString(tf.locations.get(hmux)) + "->reg0,resubmit(,2)"), sw + ": " + fs);
                }
            }
            for (Smux m : topo.smuxes) {
                assertTrue(smuxTables.get(m.id).contains("\"vip\":\"10.100.0.1\""), smuxTables.get(m.id));
                assertTrue(smuxTables.get(m.id).contains("\"encap\":\"gre\""), smuxTables.get(m.id));
            }
            // the CLI sees the same
            StringWriter out = new StringWriter();
            assertEquals(0, HybridlbCli.run(new String[] {"--url", d.url(), "assignment"}, new PrintWriter(out),
                    new PrintWriter(new StringWriter())));
            assertTrue(out.toString().contains("10.100.0.1  " + hmux), out.toString());
        }

        // restart: the state is loaded, the fabric is read back and nothing is reinstalled
        Matcher m0 = DURATION.matcher(flows(hmux));
        assertTrue(m0.find());
        double before = Double.parseDouble(m0.group(1));
        Thread.sleep(1100);
        try (Daemon d = daemon()) {
            d.controller.awaitIdle(10_000);
            assertEquals(hmux, hmuxOf(d));
            Matcher m1 = DURATION.matcher(flows(hmux));
            assertTrue(m1.find());
            assertTrue(Double.parseDouble(m1.group(1)) >= before + 1.0, "the HMux flow was not re-added: " + flows(hmux));

            // HMux failure: every port of its bridge down -> routes towards it withdrawn, VIP re-placed elsewhere
            String br = tf.bridges.get(hmux);
            ovs.ovs.ofctl("mod-port", "unix:" + ovs.dir.resolve(br + ".mgmt"), br + "l", "down");
            await("routes towards the failed switch withdrawn", () -> {
                for (String sw : tf.bridges.keySet()) {
                    if (!sw.equals(hmux) && flows(sw).contains("nw_dst=10.100.0.1 actions=set_field:0x"
                            + Integer.toHexString(tf.locations.get(hmux)) + "->reg0")) {
                        return false;
                    }
                }
                return true;
            });
            await("the VIP re-placed", () -> {
                try {
                    String at = hmuxOf(d);
                    return at != null && !at.equals(hmux);
                } catch (Exception e) {
                    return false;
                }
            });
            JsonNode a = HybridlbCli.JSON.readTree(rest(d, "GET", "/assignment", null).body());
            assertEquals(hmux, a.path("downSwitches").path(0).asText(), a.toString());
            String now = hmuxOf(d);
            if (!"smux".equals(now)) {
                assertTrue(flows(now).contains("nw_dst=10.100.0.1,tp_dst=80"), flows(now));
            }
            ovs.ovs.ofctl("mod-port", "unix:" + ovs.dir.resolve(br + ".mgmt"), br + "l", "up");
            await("the switch back up", () -> {
                try {
                    JsonNode x = HybridlbCli.JSON.readTree(rest(d, "GET", "/assignment", null).body());
                    return x.path("downSwitches").size() == 0;
                } catch (Exception e) {
                    return false;
                }
            });
            // DELETE: gone from every switch
            assertEquals(204, rest(d, "DELETE", "/vips/10.100.0.1", null).statusCode());
            await("VIP flows gone", () -> {
                for (String sw : tf.bridges.keySet()) {
                    if (flows(sw).contains("nw_dst=10.100.0.1")) {
                        return false;
                    }
                }
                return true;
            });
            await("the unused aggregate removed", () -> !flows(hmux).contains("priority=1000"));
        }
    }
}
