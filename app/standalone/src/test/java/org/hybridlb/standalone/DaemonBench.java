package org.hybridlb.standalone;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.topology.FatTree;
import org.hybridlb.standalone.cli.HybridlbCli;

/**
 * hybridlbd's control loop with real OVS programming: a private ovs-vswitchd with one netdev
 * bridge per switch of a k=4 fat-tree (20), SMuxes stood in for by an HTTP server speaking the
 * control API, N VIPs with three DIPs and Zipf-skewed traffic. Prints medians of:
 * PUT /vips until every VIP is placed and verified on the switches (assign + plan + program +
 * verify), a steady POST /reassign (nothing to change: repair reads of 20 switches + assign),
 * and HMux failure (every link port of the busiest HMux's bridge down) until no switch routes a
 * VIP towards it (detection + withdrawal) and until its VIPs are re-placed.
 * Run with app/standalone/bench.sh [vips] [runs].
 */
public final class DaemonBench {
    private DaemonBench() {
    }

    // strong references: java.util.logging forgets configured loggers nobody holds
    private static final Logger TOPO_LOG = Logger.getLogger("org.hybridlb.standalone.ovs.OvsTopologySource");
    private static final Logger OVS_LOG = Logger.getLogger("org.hybridlb.app.core.SwitchSync");

    public static void main(String[] args) throws Exception {
        int vips = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        Logger.getLogger("").setLevel(Level.WARNING);
        Arrays.stream(Logger.getLogger("").getHandlers()).forEach(h -> h.setLevel(Level.INFO));
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tT.%1$tL %4$s %5$s%n");
        TOPO_LOG.setLevel(Level.INFO);
        OVS_LOG.setLevel(Level.INFO);
        OVS_LOG.setFilter(r -> r.getMessage().startsWith("withdrew"));
        Topology topo = FatTree.generate(4);
        List<String> tors = new ArrayList<>();
        topo.switches.stream().filter(s -> s.role == SwitchRole.TOR).forEach(s -> tors.add(s.id));
        double[] place = new double[runs];
        double[] steady = new double[runs];
        double[] withdraw = new double[runs];
        double[] replaced = new double[runs];
        int[] onHmux = new int[runs];
        Map<String, String> tables = new ConcurrentHashMap<>();
        HttpServer smuxes = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        Map<String, String> urls = new LinkedHashMap<>();
        for (Smux m : topo.smuxes) {
            urls.put(m.id, "http://127.0.0.1:" + smuxes.getAddress().getPort() + "/" + m.id);
            smuxes.createContext("/" + m.id + "/table", ex -> {
                byte[] body;
                if ("PUT".equals(ex.getRequestMethod())) {
                    String doc = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
                    tables.put(m.id, doc);
                    body = "{}".getBytes(StandardCharsets.UTF_8);
                } else {
                    body = tables.getOrDefault(m.id, "{\"version\":0,\"vips\":[]}").getBytes(StandardCharsets.UTF_8);
                }
                ex.sendResponseHeaders(200, body.length);
                ex.getResponseBody().write(body);
                ex.close();
            });
        }
        smuxes.start();
        Path dir = Files.createTempDirectory("hlbd-bench");
        HttpClient http = HttpClient.newHttpClient();
        try (PrivateOvs ovs = PrivateOvs.start()) {
            TestFabric tf = TestFabric.write(dir, topo, ovs, "hlbb", urls);
            Fabric fabric = Fabric.load(tf.file);
            String routeCookies = String.format("cookie=0x%x/0x%x", HmuxLayout.cookie(fabric.cookie, HmuxLayout.Kind.ROUTE, 0),
                    fabric.cookieMask | HmuxLayout.KIND_MASK);
            int port = 1;
            for (String br : tf.bridges.values()) {
                ovs.addBridge(br, TestFabric.GRE_OFPORT);
                ovs.addLink(br, br + "l", port++);
            }
            for (int r = 0; r < runs; r++) {
                tables.clear();
                for (String br : tf.bridges.values()) {
                    ovs.ovs.ofctl("del-flows", "unix:" + ovs.dir.resolve(br + ".mgmt"));
                    ovs.ovs.ofctl("del-groups", "unix:" + ovs.dir.resolve(br + ".mgmt"));
                }
                Files.writeString(dir.resolve("hybridlbd.json"), "{\"fabric\": \"fabric.json\", \"stateDir\": \"state" + r
                        + "\", \"listen\": \"127.0.0.1:0\", \"intervals\": {\"reconcileMs\": 0, \"topologyMs\": 100}}");
                SplittableRandom rng = new SplittableRandom(r);
                List<VipTraffic> traffic = new ArrayList<>();
                StringBuilder body = new StringBuilder("{\"vips\": [");
                for (int v = 0; v < vips; v++) {
                    String vip = "10.100." + (v / 250) + "." + (v % 250 + 1);
                    int h = rng.nextInt(topo.hosts.size() - 3);
                    body.append(v == 0 ? "" : ",").append("{\"vip\":\"").append(vip)
                            .append("\",\"aggregate\":\"10.100.0.0/16\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[")
                            .append("{\"ip\":\"").append(topo.hosts.get(h).ip).append("\"},{\"ip\":\"")
                            .append(topo.hosts.get(h + 1).ip).append("\"},{\"ip\":\"").append(topo.hosts.get(h + 2).ip)
                            .append("\"}]}]}");
                    traffic.add(new VipTraffic(vip, Map.of(tors.get(rng.nextInt(tors.size())), 2e8 / Math.pow(v + 1, 0.9)), null));
                }
                body.append("]}");
                TrafficInterval ti = new TrafficInterval(0, 0, 10, traffic);
                Daemon.Overrides o = new Daemon.Overrides();
                Set<String> all = new TreeSet<>(urls.keySet());
                o.routes = () -> all;
                o.stats = () -> ti;
                try (Daemon d = new Daemon(DaemonConfig.load(dir.resolve("hybridlbd.json")), o).start()) {
                    d.controller.awaitIdle(60_000);
                    long t0 = System.nanoTime();
                    send(http, d, "PUT", "/vips", body.toString());
                    Thread.sleep(150); // the settle window
                    d.controller.awaitIdle(600_000);
                    place[r] = ms(t0);
                    System.out.println("  run " + r + ": placement " + Math.round(place[r]) + " ms; OVS: " + d.hmux.counters()
                            + "; controller: " + HybridlbCli.JSON.readTree(send(http, d, "GET", "/stats", null)).path("controller"));
                    JsonNode a = HybridlbCli.JSON.readTree(send(http, d, "GET", "/assignment", null));
                    Map<String, Integer> per = new LinkedHashMap<>();
                    a.path("installed").fields().forEachRemaining(e -> {
                        if (!"smux".equals(e.getValue().asText())) {
                            per.merge(e.getValue().asText(), 1, Integer::sum);
                        }
                    });
                    onHmux[r] = per.values().stream().mapToInt(Integer::intValue).sum();
                    t0 = System.nanoTime();
                    send(http, d, "POST", "/reassign", null);
                    d.controller.awaitIdle(600_000);
                    steady[r] = ms(t0);
                    String busiest = per.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElseThrow();
                    String watch = tf.bridges.keySet().stream().filter(s -> !s.equals(busiest)).findFirst().orElseThrow();
                    String towards = "set_field:0x" + Integer.toHexString(tf.locations.get(busiest)) + "->reg0";
                    String br = tf.bridges.get(busiest);
                    t0 = System.nanoTime();
                    System.out.println(java.time.LocalTime.now() + " failing " + busiest);
                    ovs.ovs.ofctl("mod-port", "unix:" + ovs.dir.resolve(br + ".mgmt"), br + "l", "down");
                    while (ovs.ovs.ofctl("--no-stats", "dump-flows", "unix:" + ovs.dir.resolve(tf.bridges.get(watch) + ".mgmt"),
                            routeCookies).contains(towards)) {
                        Thread.sleep(1);
                    }
                    withdraw[r] = ms(t0);
                    System.out.println(java.time.LocalTime.now() + " routes gone on " + watch);
                    d.controller.awaitIdle(600_000);
                    replaced[r] = ms(t0);
                    ovs.ovs.ofctl("mod-port", "unix:" + ovs.dir.resolve(br + ".mgmt"), br + "l", "up");
                    Thread.sleep(300);
                    d.controller.awaitIdle(600_000);
                }
            }
        } finally {
            smuxes.stop(0);
        }
        System.out.printf("hybridlbd bench: %d VIPs (3 DIPs each, Zipf traffic), FatTree k=4 = 20 OVS netdev bridges, "
                + "SMux control API stand-in, %d runs (medians)%n", vips, runs);
        System.out.printf("  VIPs placed on HMuxes: %d of %d%n", median(onHmux), vips);
        System.out.printf("  PUT /vips -> every VIP placed, programmed (OVS bundles + SMux tables) and verified: %.1f ms%n", median(place));
        System.out.printf("  POST /reassign, nothing to change (read back 20 switches + assign + plan): %.1f ms%n", median(steady));
        System.out.printf("  HMux ports down -> no switch routes its VIPs to it (detection <= 100 ms poll + withdrawal): %.1f ms%n",
                median(withdraw));
        System.out.printf("  HMux ports down -> its VIPs re-placed and verified: %.1f ms%n", median(replaced));
    }

    static String send(HttpClient http, Daemon d, String method, String path, String body) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(d.url() + path)).method(method,
                body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() >= 300) {
            throw new IllegalStateException(method + " " + path + ": " + r.statusCode() + " " + r.body());
        }
        return r.body();
    }

    static double ms(long t0) {
        return (System.nanoTime() - t0) / 1e6;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    static int median(int[] v) {
        int[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
