package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.glassfish.jersey.internal.MapPropertiesDelegate;
import org.glassfish.jersey.server.ApplicationHandler;
import org.glassfish.jersey.server.ContainerRequest;
import org.glassfish.jersey.server.ContainerResponse;
import org.glassfish.jersey.server.ResourceConfig;
import org.hybridlb.app.core.rest.HybridlbRestApplication;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Pins the JSON the northbound answers (the REST contract the daemon CLI, the Karaf commands and
 * the integration tests parse): every status endpoint is called in one deterministic scenario with
 * every optional part present (an HMux VIP, a VIP held on the SMuxes, a failed and an unreachable
 * DIP, a down and a drained switch, migration records) and its body compared byte for byte with
 * {@code src/test/resources/northbound/*.json}. Wall-clock fields and controller counters are
 * replaced by their type before the comparison; everything else, key order included, must match.
 * Regenerate the files (after a deliberate contract change only) with
 * {@code -Dnorthbound.golden.write=true}.
 */
class NorthboundJsonTest {
    static final String AGG = "10.100.0.0/16";
    static final Set<String> CLOCK_FIELDS = Set.of("startedMillis", "endedMillis", "sinceMillis");

    final Topology topo = FatTree.generate(4);
    final FakeFabric fabric = new FakeFabric(topo);
    Controller controller;
    ApplicationHandler app;

    @AfterEach
    void stop() {
        if (controller != null) {
            controller.close();
        }
    }

    @Test
    void everyStatusEndpointAnswersThePinnedJson() throws IOException {
        controller = new Controller(ControllerConfig.defaults().withInterval(Duration.ZERO),
                fabric.ports(new FakeFabric.MemoryStore()));
        controller.start();
        app = new ApplicationHandler(ResourceConfig.forApplication(new HybridlbRestApplication(controller)));

        String v1 = "10.100.0.1";
        String v2 = "10.100.0.2";
        fabric.traffic = new TrafficInterval(7, 1_700_000_000L, 10,
                List.of(new VipTraffic(v1, Map.of(fabric.tor(0), 2e8), null)));
        ok("POST", "vips", FakeFabric.vipJson(v1, fabric.hostOn(fabric.tor(1), 0), fabric.hostOn(fabric.tor(2), 0)),
                201);
        ok("POST", "vips", FakeFabric.vipJson(v2, fabric.hostOn(fabric.tor(4), 0), fabric.hostOn(fabric.tor(4), 1)),
                201);
        String hmux = Json.MAPPER.readTree(call("GET", "assignment", null)).path("installed").path(v1).asText();
        assertNotEquals(Assignment.SMUX, hmux, "the scenario needs VIP 1 on an HMux");

        String drained = topo.switches.stream().filter(s -> s.role == SwitchRole.CORE).findFirst().get().id;
        ok("POST", "switches/" + drained + "/drain", null, 200);
        String failedDip = fabric.hostOn(fabric.tor(2), 0);
        fabric.unhealthy.add(failedDip);
        controller.dipHealthChanged(failedDip, false);
        controller.awaitIdle(20_000);
        fabric.down.add(fabric.tor(4));
        controller.switchDown(fabric.tor(4));
        controller.awaitIdle(20_000);
        fabric.diverging.put("smux-0", Map.of(v1, 3L));
        ok("POST", "vips/" + v1 + "/dips", "{\"ip\":\"" + fabric.hostOn(fabric.tor(3), 0) + "\",\"weight\":2}", 201);

        // a switch that cannot be read: the round reports it (lastError) and goes on
        String unreadable = fabric.tor(5);
        fabric.onInstalledOn = sw -> {
            if (sw.equals(unreadable)) {
                throw new org.hybridlb.app.core.port.SouthboundException("switch " + sw + " unreachable");
            }
        };
        pin("reassign", call("POST", "reassign", null));
        controller.awaitIdle(20_000);
        fabric.onInstalledOn = sw -> { };
        pin("assignment", call("GET", "assignment", null));
        pin("migrations", call("GET", "migrations", null));
        pin("smuxes", call("GET", "smuxes", null));
        pin("stats", call("GET", "stats", null));
        pin("switches", call("GET", "switches", null));
        pin("drain", call("DELETE", "switches/" + drained + "/drain", null));
        pin("vips", call("GET", "vips", null));
    }

    // ------------------------------------------------------------------ helpers




    void ok(String method, String path, String body, int status) {
        String[] reply = new String[1];
        int got = send(method, path, body, reply);
        assertEquals(status, got, method + " " + path + ": " + reply[0]);
        controller.awaitIdle(20_000);
    }

    String call(String method, String path, String body) {
        String[] reply = new String[1];
        assertEquals(200, send(method, path, body, reply), method + " " + path + ": " + reply[0]);
        return reply[0];
    }

    int send(String method, String path, String body, String[] reply) {
        ContainerRequest req = new ContainerRequest(URI.create("http://localhost/"),
                URI.create("http://localhost/" + path), method, null, new MapPropertiesDelegate(), null);
        if (body != null) {
            req.setEntityStream(new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8)));
            req.getHeaders().putSingle("Content-Type", "application/json");
        }
        try {
            ContainerResponse r = app.apply(req).get();
            reply[0] = r.getEntity() == null ? null : r.getEntity().toString();
            return r.getStatus();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Compares the body, with clock fields and counters replaced by their type, to the pinned file. */
    void pin(String name, String body) throws IOException {
        JsonNode tree = Json.MAPPER.readTree(body);
        normalise(tree);
        String actual = Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(tree) + "\n";
        String resource = "northbound/" + name + ".json";
        if (Boolean.getBoolean("northbound.golden.write")) {
            Path file = Path.of("src/test/resources", resource);
            Files.createDirectories(file.getParent());
            Files.writeString(file, actual);
            return;
        }
        String expected;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new AssertionError("no pinned " + resource + "; actual:\n" + actual);
            }
            expected = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertEquals(expected, actual, "the JSON of " + name + " changed");
    }

    static void normalise(JsonNode node) {
        if (node.isArray()) {
            node.forEach(NorthboundJsonTest::normalise);
            return;
        }
        if (!node.isObject()) {
            return;
        }
        ObjectNode o = (ObjectNode) node;
        List<String> names = new ArrayList<>();
        for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
            names.add(it.next());
        }
        for (String f : names) {
            JsonNode v = o.get(f);
            if (CLOCK_FIELDS.contains(f) && v.isNumber()) {
                o.put(f, "<epoch millis>");
            } else if ("controller".equals(f) && v.isObject()) {
                List<String> counters = new ArrayList<>();
                v.fieldNames().forEachRemaining(counters::add);
                counters.forEach(c -> ((ObjectNode) v).put(c, "<" + (v.get(c).isIntegralNumber() ? "long" : "double")
                        + ">"));
            } else {
                normalise(v);
            }
        }
    }
}
