package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.lang.reflect.Method;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import javax.ws.rs.HttpMethod;
import javax.ws.rs.Path;
import org.glassfish.jersey.internal.MapPropertiesDelegate;
import org.glassfish.jersey.server.ApplicationHandler;
import org.glassfish.jersey.server.ContainerRequest;
import org.glassfish.jersey.server.ContainerResponse;
import org.glassfish.jersey.server.ResourceConfig;
import org.hybridlb.app.core.prism.FakeFrontEnd;
import org.hybridlb.app.core.rest.HybridlbRestApplication;
import org.hybridlb.app.core.rest.OpenApiContract;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The OpenAPI document against the implementation: every resource method is described and every
 * described operation is a resource method; and in a scenario that calls every operation (a VIP on an
 * HMux, one held on the SMuxes, failed and unreachable DIPs, a down and a drained switch, migrations,
 * refusals of every kind) every answer's status is described for its operation and its body validates
 * against the described schema. The VIP schemas in the document are the solver's.
 */
class OpenApiContractTest {
    final Topology topo = FatTree.generate(4);
    final FakeFabric fabric = new FakeFabric(topo);
    final OpenApiContract contract = new OpenApiContract();
    final List<String> problems = new ArrayList<>();
    Controller controller;
    ApplicationHandler app;

    @AfterEach
    void stop() {
        if (controller != null) {
            controller.close();
        }
    }

    @Test
    void everyResourceMethodIsDescribedAndEveryDescribedOperationExists() {
        Set<String> implemented = new TreeSet<>();
        for (Object r : new HybridlbRestApplication((HybridlbApi) null).getSingletons()) {
            Path base = r.getClass().getAnnotation(Path.class);
            if (base == null) {
                continue;   // a provider (the refusal mapper)
            }
            for (Method m : r.getClass().getMethods()) {
                String verb = null;
                for (java.lang.annotation.Annotation a : m.getAnnotations()) {
                    HttpMethod h = a.annotationType().getAnnotation(HttpMethod.class);
                    if (h != null) {
                        verb = h.value();
                    }
                }
                if (verb == null) {
                    continue;
                }
                Path sub = m.getAnnotation(Path.class);
                String path = ("/" + base.value() + "/" + (sub == null ? "" : sub.value())).replaceAll("/+", "/");
                implemented.add(verb + " " + (path.length() > 1 ? path.replaceAll("/$", "") : path));
            }
        }
        assertEquals(implemented, contract.operations(), "resource methods (left) vs described operations (right)");
    }

    @Test
    void everyAnswerMatchesTheDescription() {
        controller = new Controller(ControllerConfig.defaults().withInterval(Duration.ZERO),
                fabric.ports(new FakeFabric.MemoryStore()));
        controller.start();
        app = new ApplicationHandler(ResourceConfig.forApplication(
                new HybridlbRestApplication(controller, 64_000)));
        String v1 = "10.100.0.1";
        String v2 = "10.100.0.2";
        String a = fabric.hostOn(fabric.tor(1), 0);
        String b = fabric.hostOn(fabric.tor(2), 0);
        String c = fabric.hostOn(fabric.tor(3), 0);
        String d = fabric.hostOn(fabric.tor(4), 0);
        String e = fabric.hostOn(fabric.tor(4), 1);
        String f = fabric.hostOn(fabric.tor(5), 0);
        fabric.traffic = new TrafficInterval(7, 1_700_000_000L, 10,
                List.of(new VipTraffic(v1, Map.of(fabric.tor(0), 2e8), null)));
        send("PUT", "/vips", "{\"vips\":[" + FakeFabric.vipJson(v1, a, b) + "]}", 200);
        send("POST", "/vips", FakeFabric.vipJson(v2, d, e), 201);
        send("PUT", "/vips/" + v2, FakeFabric.vipJson(v2, d, e, f), 200);
        String core = topo.switches.stream().filter(s -> s.role == SwitchRole.CORE).findFirst().get().id;
        send("POST", "/switches/" + core + "/drain", null, 200);
        fabric.unhealthy.add(b);
        controller.dipHealthChanged(b, false);
        controller.awaitIdle(20_000);
        fabric.down.add(fabric.tor(4));
        controller.switchDown(fabric.tor(4));
        controller.awaitIdle(20_000);
        fabric.diverging.put("smux-0", Map.of(v1, 3L));
        send("POST", "/vips/" + v1 + "/dips", "{\"ip\":\"" + c + "\",\"weight\":2,\"proto\":\"tcp\",\"port\":80}", 201);
        send("POST", "/reassign", null, 200);
        for (String get : List.of("/vips", "/vips/" + v1, "/vips/" + v1 + "/dips", "/assignment", "/migrations",
                "/smuxes", "/stats", "/switches", "/topology", "/openapi.json")) {
            send("GET", get, null, 200);
        }
        String v3 = "10.100.0.4";
        try (FakeFrontEnd fe = new FakeFrontEnd()) {
            fe.connections = Json.MAPPER.readTree("[{\"id\": 2, \"client\": \"10.9.0.1:40000\", \"state\": \"remote\","
                    + " \"owner\": \"" + d + "\", \"requests\": 1}]");
            send("POST", "/vips", FakeFabric.vipJson(v3, c).replaceAll("}$", ", \"prism\": {\"frontends\": [{\"ip\": \""
                    + c + "\", \"admin\": \"" + fe.admin() + "\"}], \"backends\": {\"b\": {\"address\": \"" + d
                    + "\", \"controlPort\": 9500}}, \"rules\": [{\"name\": \"all\", \"priority\": 0, \"split\": {\"b\": 1}}]}}"),
                    201);
            long end = System.nanoTime() + 15_000_000_000L;
            while (!prismSeen(v3)) {
                assertTrue(System.nanoTime() < end, "the Prism VIP's front end was never asked");
                Thread.sleep(50);
            }
        } catch (java.io.IOException io) {
            throw new AssertionError(io);
        } catch (InterruptedException stop) {
            Thread.currentThread().interrupt();
        }
        send("GET", "/prism", null, 200);
        send("GET", "/prism/" + v3, null, 200);
        send("GET", "/prism/" + v3 + "/connections", null, 200);
        send("GET", "/prism/" + v1, null, 404);
        send("GET", "/prism/10.100.0.9/connections", null, 404);
        send("GET", "/prism/" + v3 + "/pins", null, 200);
        send("POST", "/prism/" + v3 + "/pins", "{\"client\": \"10.9.0.1\", \"clientPort\": 40000, \"vipPort\": 80,"
                + " \"backend\": \"b\"}", 409); // agent-steered
        send("POST", "/prism/" + v1 + "/pins", "{}", 404);
        send("DELETE", "/prism/" + v3 + "/pins?client=10.9.0.1&clientPort=40000&vipPort=80", null, 200);
        send("DELETE", "/prism/" + v3 + "/pins?client=10.9.0.1&clientPort=0&vipPort=80", null, 400);
        send("PUT", "/vips/" + v3, Json.write(controller.vip(v3)).replace("\"steering\":\"agent\"",
                "\"steering\":\"fabric\""), 400); // no pin renderer here
        send("DELETE", "/vips/" + v3, null, 204);
        send("DELETE", "/vips/" + v2 + "/dips/" + f + "?proto=tcp&port=80", null, 200);
        send("DELETE", "/switches/" + core + "/drain", null, 200);
        send("DELETE", "/vips/" + v2, null, 204);

        // refusals: every kind the resources give
        send("POST", "/vips", "{\"vip\":\"10.100.0.300\"}", 400);
        send("PUT", "/vips", "{\"vips\":[" + FakeFabric.vipJson(v1, "10.0.0.x") + "]}", 400);
        send("POST", "/vips", FakeFabric.vipJson(v1, a), 409);
        send("PUT", "/vips/" + v1, FakeFabric.vipJson(v2, a), 400);
        send("PUT", "/vips/10.100.0.9", FakeFabric.vipJson("10.100.0.9", a), 404);
        send("GET", "/vips/10.100.0.9", null, 404);
        send("GET", "/vips/10.100.0.9/dips", null, 404);
        send("DELETE", "/vips/10.100.0.9", null, 404);
        send("POST", "/vips/10.100.0.9/dips", "{\"ip\":\"" + a + "\"}", 404);
        send("POST", "/vips/" + v1 + "/dips", "{\"ip\":\"" + a + "\"}", 409);
        send("POST", "/vips/" + v1 + "/dips", "{\"ip\":\"1.2.3\"}", 400);
        send("DELETE", "/vips/" + v1 + "/dips/" + a + "?port=http", null, 400);
        send("DELETE", "/vips/" + v1 + "/dips/192.0.2.1", null, 404);
        send("POST", "/switches/tor-9-9/drain", null, 404);
        send("DELETE", "/switches/tor-9-9/drain", null, 404);
        String big = "{\"vips\":[" + "x".repeat(64_000) + "]}";
        send("PUT", "/vips", big, 413);
        send("POST", "/vips", big, 413);
        send("PUT", "/vips/" + v1, big, 413);
        send("POST", "/vips/" + v1 + "/dips", big, 413);
        sendTyped("POST", "/vips", FakeFabric.vipJson("10.100.0.3", a), "text/plain", 415);
        send("GET", "/metrics", null, 200);
        send("GET", "/ui", null, 301);
        send("GET", "/ui/hybridlb.js", null, 200);
        send("GET", "/ui/secrets.txt", null, 404);

        assertEquals(List.of(), problems, "answers that do not match the OpenAPI document");
        Set<String> uncheckedOps = new TreeSet<>(contract.operations());
        contract.checked.forEach(k -> uncheckedOps.remove(k.substring(0, k.lastIndexOf(" "))));
        assertEquals(Set.of(), uncheckedOps, "operations the scenario never called");
        assertTrue(contract.checked.containsAll(Set.of("GET /assignment 200", "POST /vips 413", "POST /vips 415",
                "DELETE /vips/{vip}/dips/{dip} 400")), contract.checked.toString());
    }

    // ------------------------------------------------------------------ helpers

    /** The hand-off controller has read the VIP's front end (404 until its first round). */
    boolean prismSeen(String vip) {
        try {
            return !controller.prismConnections(vip).isEmpty();
        } catch (ApiException notYet) {
            return false;
        }
    }

    void send(String method, String path, String body, int status) {
        sendTyped(method, path, body, "application/json", status);
    }

    void sendTyped(String method, String path, String body, String type, int status) {
        ContainerRequest req = new ContainerRequest(URI.create("http://localhost/"),
                URI.create("http://localhost" + path), method, null, new MapPropertiesDelegate(), null);
        if (body != null) {
            req.setEntityStream(new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8)));
            req.getHeaders().putSingle("Content-Type", type);
        }
        ContainerResponse r;
        try {
            r = app.apply(req).get();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        String text = r.getEntity() == null ? null : r.getEntity().toString();
        assertEquals(status, r.getStatus(), method + " " + path + ": " + text);
        problems.addAll(contract.problems(method, path, r.getStatus(), text));
        controller.awaitIdle(20_000);
    }



}
