package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.glassfish.jersey.internal.MapPropertiesDelegate;
import org.glassfish.jersey.server.ApplicationHandler;
import org.glassfish.jersey.server.ContainerRequest;
import org.glassfish.jersey.server.ContainerResponse;
import org.glassfish.jersey.server.ResourceConfig;
import org.hybridlb.app.core.prism.FakeFrontEnd;
import org.hybridlb.app.core.prism.PrismPinsTest;
import org.hybridlb.app.core.rest.HybridlbRestApplication;
import org.hybridlb.solver.model.Limits;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The REST resources in Jersey's own in-memory runtime: real routing, real status codes. */
class RestResourcesTest {
    final Topology topo = FatTree.generate(4);
    final FakeFabric fabric = new FakeFabric(topo);
    final FakeFabric.MemoryStore store = new FakeFabric.MemoryStore();
    Controller controller;
    ApplicationHandler app;

    @BeforeEach
    void start() {
        controller = new Controller(ControllerConfig.defaults().withInterval(Duration.ZERO), fabric.ports(store));
        controller.start();
        app = new ApplicationHandler(ResourceConfig.forApplication(new HybridlbRestApplication(controller)));
        assertEquals(201, call("POST", "vips", vip("10.100.0.1", host(0))).status);
        controller.awaitIdle(20_000);
        fabric.takeLog();
    }

    @AfterEach
    void stop() {
        controller.close();
    }

    static final class Reply {
        final int status;
        final JsonNode body;
        final String retryAfter;

        Reply(int status, JsonNode body, String retryAfter) {
            this.status = status;
            this.body = body;
            this.retryAfter = retryAfter;
        }
    }

    Reply call(String method, String path, String body) {
        return typed(method, path, body, "application/json");
    }

    Reply typed(String method, String path, String body, String type) {
        ContainerRequest req = new ContainerRequest(URI.create("http://localhost/"), URI.create("http://localhost/" + path),
                method, null, new MapPropertiesDelegate(), null);
        if (body != null) {
            req.setEntityStream(new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8)));
            req.getHeaders().putSingle("Content-Type", type);
        }
        try {
            ContainerResponse r = app.apply(req).get();
            Object entity = r.getEntity();
            return new Reply(r.getStatus(), entity == null ? null : Json.MAPPER.readTree(entity.toString()),
                    r.getHeaderString("Retry-After"));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    String host(int i) {
        return topo.hosts.get(i).ip;
    }

    static String vip(String vip, String... dips) {
        StringBuilder d = new StringBuilder();
        for (String ip : dips) {
            d.append(d.length() == 0 ? "" : ",").append("{\"ip\":\"").append(ip).append("\"}");
        }
        return "{\"vip\":\"" + vip + "\",\"aggregate\":\"10.100.0.0/16\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":["
                + d + "]}]}";
    }

    /** The request is refused with {@code status}, names {@code field}, and nothing changed anywhere. */
    void refused(int status, String field, String reasonPart, String method, String path, String body) {
        String vipsBefore = call("GET", "vips", null).body.toString();
        String stored = store.json;
        Reply r = call(method, path, body);
        assertEquals(status, r.status, method + " " + path + " " + body + " -> " + r.body);
        assertEquals(field, r.body.path("field").asText(null), r.body.toString());
        assertTrue(r.body.path("reason").asText().contains(reasonPart), r.body.toString());
        assertTrue(r.body.hasNonNull("error"), r.body.toString());
        controller.awaitIdle(20_000);
        assertEquals(vipsBefore, call("GET", "vips", null).body.toString(), "configuration unchanged");
        assertEquals(stored, store.json, "persisted state unchanged");
        assertEquals(List.of(), fabric.takeLog(), "nothing programmed");
    }

    @Test
    void malformedJsonIsRefused() {
        refused(400, "/", "malformed JSON", "POST", "vips", "{\"vip\": \"10.100.0.2\", ");
        refused(400, "/", "JSON object", "POST", "vips", "[1, 2]");
        refused(400, "/", "empty body", "POST", "vips", "");
    }

    @Test
    void badAddressesNameTheirField() {
        refused(400, "/vip", "not an IPv4 address", "POST", "vips", vip("10.100.0.300", host(1)));
        refused(400, "/ports/0/dips/0/ip", "not an IPv4 address", "POST", "vips", vip("10.100.0.2", "10.0.0.x"));
        refused(400, "/aggregate", "not inside its aggregate", "POST", "vips",
                vip("10.100.0.2", host(1)).replace("10.100.0.0/16", "10.200.0.0/16"));
        refused(400, "/ports/0/dips/0/ip", "not the address of a host", "POST", "vips", vip("10.100.0.2", "192.0.2.1"));
        refused(400, "/ports/0/port", "", "POST", "vips", vip("10.100.0.2", host(1)).replace("\"port\":80", "\"port\":70000"));
        refused(400, "/", "foo", "POST", "vips", vip("10.100.0.2", host(1)).replace("{\"vip\"", "{\"foo\":1,\"vip\""));
        refused(400, "/", "ports", "POST", "vips", "{\"vip\":\"10.100.0.2\",\"aggregate\":\"10.100.0.0/16\"}");
    }

    @Test
    void affinityAndMechanismAreTakenKeptAndCheckedByField() {
        String cheetah = vip("10.100.0.2", host(1)).replace("\"aggregate\"", "\"affinity\":\"cheetah\",\"mechanism\":\"rr\",\"aggregate\"");
        Reply created = call("POST", "vips", cheetah);
        assertEquals(201, created.status, created.body.toString());
        assertEquals("cheetah", created.body.path("affinity").asText());
        assertEquals("rr", created.body.path("mechanism").asText());
        controller.awaitIdle(20_000);
        // a DIP added keeps the VIP's affinity and mechanism
        Reply added = call("POST", "vips/10.100.0.2/dips", "{\"ip\":\"" + host(2) + "\"}");
        assertEquals("cheetah", added.body.path("affinity").asText(), added.body.toString());
        assertEquals("rr", added.body.path("mechanism").asText(), added.body.toString());
        controller.awaitIdle(20_000);
        // a VIP without them is written as before: no affinity, no mechanism
        JsonNode plain = call("GET", "vips/10.100.0.1", null).body;
        assertFalse(plain.has("affinity") || plain.has("mechanism"), plain.toString());
        fabric.takeLog();

        refused(400, "/affinity", "", "POST", "vips",
                vip("10.100.0.3", host(1)).replace("\"aggregate\"", "\"affinity\":\"cookie\",\"aggregate\""));
        refused(400, "/mechanism", "", "POST", "vips", vip("10.100.0.3", host(1))
                .replace("\"aggregate\"", "\"affinity\":\"cheetah\",\"mechanism\":\"lc\",\"aggregate\""));
        refused(400, "/affinity", "", "POST", "vips", vip("10.100.0.3", host(1))
                .replace("\"aggregate\"", "\"affinity\":\"cheetah-statefull\",\"aggregate\""));
        refused(400, "/mechanism", "only for affinity \"cheetah\" or \"cheetah-stateful\"", "POST", "vips",
                vip("10.100.0.3", host(1)).replace("\"aggregate\"", "\"mechanism\":\"rr\",\"aggregate\""));
        // two DIPs of one host (VMs behind hostIp) in a cheetah pool: a cookie names the host
        String twoOnOneHost = "{\"vip\":\"10.100.0.3\",\"aggregate\":\"10.100.0.0/16\",\"affinity\":\"cheetah\","
                + "\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":[{\"ip\":\"10.9.0.1\",\"hostIp\":\"" + host(1)
                + "\"},{\"ip\":\"10.9.0.2\",\"hostIp\":\"" + host(1) + "\"}]}]}";
        refused(400, "/ports/0/dips/1/hostIp", "one DIP per host", "POST", "vips", twoOnOneHost);
        refused(400, "/ports/0/dips/1/hostIp", "with affinity \"cheetah-stateful\" a pool has one DIP per host",
                "POST", "vips", twoOnOneHost.replace("\"cheetah\"", "\"cheetah-stateful\""));
        assertEquals(201, call("POST", "vips", twoOnOneHost.replace(",\"affinity\":\"cheetah\"", "")).status,
                "a hash VIP may have them");
        controller.awaitIdle(20_000);
        fabric.takeLog();
        refused(400, "/ports/0/dips/1/hostIp", "one DIP per host", "PUT", "vips/10.100.0.3", twoOnOneHost);
        refused(400, "/ports/0/dips/2/hostIp", "one DIP per host", "POST", "vips/10.100.0.2/dips",
                "{\"ip\":\"10.9.0.9\",\"hostIp\":\"" + host(1) + "\"}");
        refused(400, "/vips/1/mechanism", "only for affinity \"cheetah\"", "PUT", "vips", "{\"vips\":["
                + vip("10.100.0.1", host(0)) + "," + vip("10.100.0.3", host(1))
                        .replace("\"aggregate\"", "\"affinity\":\"hash\",\"mechanism\":\"wrr\",\"aggregate\"") + "]}");
    }

    @Test
    void aCookieHashIsTakenCheckedByFieldAndFixedForTheVipsLife() {
        String crc = vip("10.100.0.2", host(1)).replace("\"aggregate\"",
                "\"affinity\":\"cheetah\",\"cookieHash\":\"crc32c\",\"aggregate\"");
        Reply created = call("POST", "vips", crc);
        assertEquals(201, created.status, created.body.toString());
        assertEquals("crc32c", created.body.path("cookieHash").asText());
        controller.awaitIdle(20_000);
        Reply added = call("POST", "vips/10.100.0.2/dips", "{\"ip\":\"" + host(2) + "\"}");
        assertEquals("crc32c", added.body.path("cookieHash").asText(), "a DIP added keeps it: " + added.body);
        controller.awaitIdle(20_000);
        assertFalse(call("GET", "vips/10.100.0.1", null).body.has("cookieHash"), "absent where not set");
        fabric.takeLog();

        refused(400, "/cookieHash", "", "POST", "vips", vip("10.100.0.3", host(1))
                .replace("\"aggregate\"", "\"affinity\":\"cheetah\",\"cookieHash\":\"md5\",\"aggregate\""));
        refused(400, "/cookieHash", "only for affinity", "POST", "vips", vip("10.100.0.3", host(1))
                .replace("\"aggregate\"", "\"cookieHash\":\"crc32c\",\"aggregate\""));
        // live connections carry cookies in the VIP's mode: changing it is refused, by PUT of the VIP or of the set
        refused(409, "/cookieHash", "fixed for the VIP's life", "PUT", "vips/10.100.0.2",
                crc.replace("crc32c", "siphash13"));
        refused(409, "/cookieHash", "siphash13", "PUT", "vips/10.100.0.1", vip("10.100.0.1", host(0))
                .replace("\"aggregate\"", "\"affinity\":\"cheetah\",\"cookieHash\":\"crc32c\",\"aggregate\""));
        refused(409, "/vips/1/cookieHash", "fixed", "PUT", "vips", "{\"vips\":[" + vip("10.100.0.1", host(0)) + ","
                + crc.replace(",\"cookieHash\":\"crc32c\"", "") + "]}");
    }

    @Test
    void statefulAffinityAndLoadAwareMechanismsAreTakenAndKept() {
        for (String m : List.of("p2c", "least-loaded", "awrr")) {
            String v = "10.100.0." + (10 + m.length());
            Reply created = call("POST", "vips", vip(v, host(1))
                    .replace("\"aggregate\"", "\"affinity\":\"cheetah-stateful\",\"mechanism\":\"" + m + "\",\"aggregate\""));
            assertEquals(201, created.status, created.body.toString());
            assertEquals("cheetah-stateful", created.body.path("affinity").asText());
            assertEquals(m, created.body.path("mechanism").asText());
            controller.awaitIdle(20_000);
            JsonNode shown = call("GET", "vips/" + v, null).body;
            assertEquals("cheetah-stateful", shown.path("affinity").asText(), shown.toString());
            assertEquals(m, shown.path("mechanism").asText(), shown.toString());
        }
        // a DIP added keeps them
        Reply added = call("POST", "vips/10.100.0.14/dips", "{\"ip\":\"" + host(2) + "\"}");
        assertEquals("cheetah-stateful", added.body.path("affinity").asText(), added.body.toString());
        assertEquals("awrr", added.body.path("mechanism").asText(), added.body.toString());
        controller.awaitIdle(20_000);
        fabric.takeLog();
        // a stateful VIP turned back to hash with its mechanism left: refused, nothing changed
        refused(400, "/mechanism", "only for affinity", "PUT", "vips/10.100.0.13", vip("10.100.0.13", host(1))
                .replace("\"aggregate\"", "\"affinity\":\"hash\",\"mechanism\":\"p2c\",\"aggregate\""));
    }

    @Test
    void dipListOverTheLimitIsRefused() {
        String[] dips = new String[Limits.MAX_DIPS_PER_SERVICE + 1];
        for (int i = 0; i < dips.length; i++) {
            dips[i] = "10.1." + (i / 250) + "." + (i % 250 + 1);
        }
        refused(400, "/ports/0/dips", "4097 items, over the limit of 4096", "POST", "vips", vip("10.100.0.2", dips));
    }

    @Test
    void vipAndServiceListsOverTheLimitsAreRefused() {
        StringBuilder many = new StringBuilder("{\"vips\":[");
        for (int i = 0; i <= Limits.MAX_VIPS; i++) {
            many.append(i == 0 ? "" : ",").append(vip("10." + (100 + i / 65536) + "." + (i / 256 % 256) + "." + (i % 256), host(1)));
        }
        refused(400, "/vips", (Limits.MAX_VIPS + 1) + " items, over the limit of " + Limits.MAX_VIPS, "PUT", "vips",
                many.append("]}").toString());
        StringBuilder ports = new StringBuilder();
        for (int p = 1; p <= Limits.MAX_SERVICES_PER_VIP + 1; p++) {
            ports.append(p == 1 ? "" : ",").append("{\"proto\":\"tcp\",\"port\":").append(p)
                    .append(",\"dips\":[{\"ip\":\"").append(host(1)).append("\"}]}");
        }
        refused(400, "/ports", "over the limit of " + Limits.MAX_SERVICES_PER_VIP, "POST", "vips",
                "{\"vip\":\"10.100.0.2\",\"aggregate\":\"10.100.0.0/16\",\"ports\":[" + ports + "]}");
    }

    @Test
    void aBodyOverTheSizeLimitIsRefusedUnread() {
        app = new ApplicationHandler(ResourceConfig.forApplication(new HybridlbRestApplication(controller, 1000)));
        String vip = vip("10.100.0.2", host(1));
        String padded = vip + " ".repeat(1001 - vip.length());
        refused(413, "/", "larger than 1000 bytes", "POST", "vips", padded);
        refused(413, "/", "larger than 1000 bytes", "PUT", "vips", "{\"vips\":[" + padded + "]}");
        refused(413, "/", "larger than 1000 bytes", "PUT", "vips/10.100.0.1", padded);
        refused(413, "/", "larger than 1000 bytes", "POST", "vips/10.100.0.1/dips", padded);
        assertEquals(201, call("POST", "vips", padded.substring(0, 1000)).status, "1000 bytes are taken");
    }

    @Test
    void whatJaxRsRefusesIsAnsweredAsJsonNamingTheField() {
        refused(404, "path", "no such resource", "GET", "vipz", null);
        refused(405, "method", "GET, OPTIONS, POST, PUT", "PATCH", "vips", null);
        Reply r = typed("POST", "vips", vip("10.100.0.2", host(1)), "text/plain");
        assertEquals(415, r.status, r.body.toString());
        assertEquals("Content-Type", r.body.path("field").asText());
    }

    @Test
    void unknownAndDuplicateVipsAndDips() {
        refused(409, "/vip", "exists", "POST", "vips", vip("10.100.0.1", host(1)));
        refused(404, "vip", "no VIP 10.100.0.9", "GET", "vips/10.100.0.9", null);
        refused(404, "vip", "no VIP 10.100.0.9", "PUT", "vips/10.100.0.9", vip("10.100.0.9", host(1)));
        refused(404, "vip", "no VIP 10.100.0.9", "DELETE", "vips/10.100.0.9", null);
        refused(400, "/vip", "not the VIP of the path", "PUT", "vips/10.100.0.1", vip("10.100.0.2", host(1)));
        refused(404, "vip", "no VIP", "POST", "vips/10.100.0.9/dips", "{\"ip\":\"" + host(1) + "\"}");
        refused(409, "/ip", "already has DIP", "POST", "vips/10.100.0.1/dips", "{\"ip\":\"" + host(0) + "\"}");
        refused(400, "/weight", "above the maximum of 65535", "POST", "vips/10.100.0.1/dips",
                "{\"ip\":\"" + host(1) + "\",\"weight\":65536}");
        refused(400, "/ip", "not an IPv4 address", "POST", "vips/10.100.0.1/dips", "{\"ip\":\"1.2.3\"}");
        refused(400, "/proto", "", "POST", "vips/10.100.0.1/dips", "{\"ip\":\"" + host(1) + "\",\"proto\":\"sctp\"}");
        refused(404, "dip", "has no DIP", "DELETE", "vips/10.100.0.1/dips/" + host(5), null);
        refused(409, "dip", "is the last", "DELETE", "vips/10.100.0.1/dips/" + host(0), null);
        refused(400, "port", "not a port number", "DELETE", "vips/10.100.0.1/dips/" + host(0) + "?proto=tcp&port=http", null);
    }

    @Test
    void switchesAreListedAndAnUnknownOneCannotBeDrained() {
        Reply r = call("GET", "switches", null);
        assertEquals(200, r.status);
        assertEquals(topo.switches.size(), r.body.path("switches").size(), r.body.toString());
        assertEquals(false, r.body.path("switches").get(0).path("drained").asBoolean(true));
        refused(404, "switch", "no switch tor-9-9", "POST", "switches/tor-9-9/drain", null);
        refused(404, "switch", "no switch tor-9-9", "DELETE", "switches/tor-9-9/drain", null);
        store.broken = true;
        refused(503, null, "No space left", "POST", "switches/" + topo.switches.get(0).id + "/drain", null);
        store.broken = false;
    }

    @Test
    void aChangeThatCannotBePersistedIsRefusedAndForgotten() {
        store.broken = true;
        assertEquals("1", call("POST", "vips", vip("10.100.0.2", host(1))).retryAfter, "a 503 says when to retry");
        refused(503, null, "No space left", "POST", "vips", vip("10.100.0.2", host(1)));
        refused(503, null, "No space left", "DELETE", "vips/10.100.0.1", null);
        store.broken = false;
        assertEquals(201, call("POST", "vips", vip("10.100.0.2", host(1))).status);
    }

    @Test
    void wholeConfigurationIsReplacedOrRefusedAsOne() {
        String two = "{\"vips\":[" + vip("10.100.0.1", host(0)) + "," + vip("10.100.0.2", host(1)) + "]}";
        refused(400, "/vips/1/ports/0/dips/0/ip", "not an IPv4 address", "PUT", "vips", two.replace(host(1), "10.0.0.256"));
        refused(400, "/vips/1/vip", "duplicate VIP", "PUT", "vips", two.replace("10.100.0.2", "10.100.0.1"));
        refused(400, "/", "vips", "PUT", "vips", "{}");
        Reply ok = call("PUT", "vips", two);
        assertEquals(200, ok.status, ok.body.toString());
        assertEquals(2, call("GET", "vips", null).body.get("vips").size());
    }

    @Test
    void crudAndStatusEndpointsAnswerJson() {
        Reply created = call("POST", "vips", vip("10.100.0.2", host(1), host(2)));
        assertEquals(201, created.status);
        assertEquals("10.100.0.2", created.body.get("vip").asText());
        assertEquals(2, call("GET", "vips", null).body.get("vips").size());
        Reply added = call("POST", "vips/10.100.0.2/dips", "{\"ip\":\"" + host(3) + "\",\"weight\":3}");
        assertEquals(201, added.status, added.body.toString());
        assertEquals(3, added.body.at("/ports/0/dips/2/weight").asInt());
        Reply removed = call("DELETE", "vips/10.100.0.2/dips/" + host(1) + "?proto=tcp&port=80", null);
        assertEquals(200, removed.status, removed.body.toString());
        assertEquals(2, removed.body.at("/ports/0/dips").size());
        controller.awaitIdle(20_000);

        Reply a = call("GET", "assignment", null);
        assertEquals(200, a.status);
        assertEquals("smux", a.body.at("/installed/10.100.0.2").asText(), "no traffic: on the SMuxes");
        Reply s = call("GET", "smuxes", null);
        assertEquals(topo.smuxes.size(), s.body.get("smuxes").size());
        assertTrue(s.body.at("/smuxes/0/live").asBoolean());
        assertEquals(200, call("GET", "stats", null).status);
        assertEquals(200, call("GET", "migrations", null).status);
        Reply r = call("POST", "reassign", null);
        assertEquals(200, r.status, r.body.toString());
        assertTrue(r.body.has("target"), r.body.toString());
        assertEquals(204, call("DELETE", "vips/10.100.0.2", null).status);
        assertEquals(1, call("GET", "vips", null).body.get("vips").size());
    }

    /** Prism VIPs: the rules validated with the field named, pushed to a front end, the state visible. */
    @Nested
    class PrismVips {
        FakeFrontEnd fe;

        @BeforeEach
        void frontEnd() throws Exception {
            fe = new FakeFrontEnd();
        }

        @AfterEach
        void closeFrontEnd() {
            fe.close();
        }

        String prismVip(String rules) {
            return vip("10.100.0.2", host(1), host(2)).replaceAll("}$", ", \"prism\": {\"frontends\": [{\"ip\": \""
                    + host(1) + "\", \"admin\": \"" + fe.admin() + "\"}], " + rules + "}}");
        }

        static final String BACKENDS = "\"backends\": {\"b1\": {\"address\": \"10.3.0.2\", \"controlPort\": 9500},"
                + " \"b2\": {\"address\": \"10.3.0.3\", \"controlPort\": 9500}}";
        static final String RULES = BACKENDS + ", \"rules\": [{\"name\": \"css\", \"priority\": 1, \"match\":"
                + " {\"url\": \"*.css\", \"cookie\": {\"sid\": \"*\"}}, \"split\": {\"b2\": 1}, \"sticky\": \"sid\"},"
                + " {\"name\": \"rest\", \"priority\": 0, \"match\": {}, \"split\": {\"b1\": 1, \"b2\": 2}}]";

        String rule(String json) {
            return BACKENDS + ", \"rules\": [" + json + "]";
        }

        @Test
        void invalidRulesAreRefusedNamingTheFieldAndChangeNothing() {
            refused(400, "/prism/rules/0/split/b9", "unknown backend 'b9'", "POST", "vips",
                    prismVip(rule("{\"name\": \"r\", \"priority\": 0, \"split\": {\"b9\": 1}}")));
            refused(400, "/prism/rules/0/split/b1", "", "POST", "vips",
                    prismVip(rule("{\"name\": \"r\", \"priority\": 0, \"split\": {\"b1\": 0}}")));
            refused(400, "/prism/rules/0/balance", "", "POST", "vips", prismVip(rule(
                    "{\"name\": \"r\", \"priority\": 0, \"split\": {\"b1\": 1}, \"balance\": \"random\"}")));
            refused(400, "/prism/rules/0/match", "property 'path'", "POST", "vips", prismVip(rule(
                    "{\"name\": \"r\", \"priority\": 0, \"split\": {\"b1\": 1}, \"match\": {\"path\": \"/x\"}}")));
            refused(400, "/prism/rules/1/name", "duplicate rule name 'r'", "POST", "vips", prismVip(rule(
                    "{\"name\": \"r\", \"priority\": 0, \"split\": {\"b1\": 1}},"
                            + " {\"name\": \"r\", \"priority\": 1, \"split\": {\"b2\": 1}}")));
            refused(400, "/prism/backends/b2", "also backend 'b1'", "POST", "vips", prismVip(RULES.replace("10.3.0.3", "10.3.0.2")));
            refused(400, "/prism/backends/b1/controlPort", "", "POST", "vips", prismVip(RULES.replace("9500}, \"b2", "0}, \"b2")));
            refused(400, "/prism/frontends/0/ip", "not a DIP of the VIP", "POST", "vips",
                    prismVip(RULES).replace("\"ip\": \"" + host(1) + "\", \"admin", "\"ip\": \"" + host(5) + "\", \"admin"));
            refused(400, "/prism/frontends/0/admin", "must be the front end's address", "POST", "vips",
                    prismVip(RULES).replace(fe.admin(), "http://192.0.2.7:9400"));
            assertEquals(0, fe.puts.get(), "nothing pushed");
            assertEquals(404, call("GET", "prism/10.100.0.2", null).status);
        }

        @Test
        void aPrismVipsRulesReachItsFrontEndAndItsStateIsVisible() throws Exception {
            fe.connections = Json.MAPPER.readTree("[{\"id\": 1, \"client\": \"10.9.0.1:40000\", \"state\": \"remote\","
                    + " \"owner\": \"10.3.0.3\", \"requests\": 3}]");
            Reply created = call("POST", "vips", prismVip(RULES));
            assertEquals(201, created.status, String.valueOf(created.body));
            assertEquals("b2", created.body.at("/prism/rules/0/split").fieldNames().next());
            Reply v = await("prism/10.100.0.2", r -> r.status == 200 && r.body.at("/frontends/0/state").asText().equals("in-sync"));
            assertEquals(Json.MAPPER.readTree("{" + RULES + "}"), fe.rules, "the front end runs the VIP's rules");
            assertEquals(1, v.body.at("/frontends/0/pushes").asInt());
            assertEquals("10.3.0.2", v.body.at("/backends/0/address").asText());
            Reply list = call("GET", "prism", null);
            assertEquals(1, list.body.get("vips").size());
            Reply conns = call("GET", "prism/10.100.0.2/connections", null);
            assertEquals("10.3.0.3", conns.body.at("/connections/0/owner").asText());
            assertEquals("remote", conns.body.at("/connections/0/state").asText());
            fe.restart();
            await("prism/10.100.0.2", r -> r.body.at("/frontends/0/pushes").asInt() == 2);
            assertEquals(Json.MAPPER.readTree("{" + RULES + "}"), fe.rules, "a restarted front end gets the rules again");
            Reply replaced = call("PUT", "vips/10.100.0.2", prismVip(RULES.replace("\"b1\": 1, \"b2\": 2", "\"b1\": 5")));
            assertEquals(200, replaced.status, String.valueOf(replaced.body));
            await("prism/10.100.0.2", r -> r.body.at("/frontends/0/pushes").asInt() == 3);
            assertEquals(5, fe.rules.at("/rules/1/split/b1").asInt());
            assertEquals(404, call("GET", "prism/" + "10.100.0.1", null).status, "a VIP without Prism");
            assertEquals(404, call("GET", "prism/10.100.0.9/connections", null).status, "no such VIP");
        }

        @Test
        void steeringIsCheckedByFieldAndFabricNeedsAPinRenderer() {
            refused(400, "/prism/steering", "", "POST", "vips", prismVip(RULES + ", \"steering\": \"switch\""));
            refused(400, "/prism/steering", "no fabric pin renderer", "POST", "vips",
                    prismVip(RULES + ", \"steering\": \"fabric\""));
            refused(400, "/vips/0/prism/steering", "no fabric pin renderer", "PUT", "vips",
                    "{\"vips\": [" + prismVip(RULES + ", \"steering\": \"fabric\"") + "]}");
            Reply created = call("POST", "vips", prismVip(RULES));
            assertEquals("agent", created.body.at("/prism/steering").asText(), "agent by default");
        }

        /** A cheetah VIP whose pool is the front end (host 1) and the backends b1, b2 (weight w1, 0). */
        String cookieVip(String affinity, String b1, int w1, String b2) {
            String dips = "{\"ip\": \"" + host(1) + "\"}, {\"ip\": \"" + b1 + "\", \"weight\": " + w1 + "},"
                    + " {\"ip\": \"" + host(3) + "\", \"weight\": 0}";
            return "{\"vip\": \"10.100.0.2\", \"aggregate\": \"10.100.0.0/16\", \"affinity\": \"" + affinity + "\","
                    + " \"ports\": [{\"proto\": \"tcp\", \"port\": 80, \"dips\": [" + dips + "]}],"
                    + " \"prism\": {\"frontends\": [{\"ip\": \"" + host(1) + "\", \"admin\": \"" + fe.admin() + "\"}],"
                    + " \"backends\": {\"b1\": {\"address\": \"" + b1 + "\", \"controlPort\": 9500},"
                    + " \"b2\": {\"address\": \"" + b2 + "\", \"controlPort\": 9500}},"
                    + " \"rules\": [{\"name\": \"rest\", \"priority\": 0, \"match\": {}, \"split\": {\"b1\": 1, \"b2\": 1}}],"
                    + " \"steering\": \"cookie\"}}";
        }

        @Test
        void cookieSteeringNeedsACheetahVipWithTheBackendsAtWeightZero() {
            refused(400, "/prism/steering", "needs affinity cheetah", "POST", "vips",
                    cookieVip("hash", host(2), 0, host(3)));
            refused(400, "/prism/steering", "needs affinity cheetah", "POST", "vips",
                    cookieVip("cheetah-stateful", host(2), 0, host(3)));
            refused(400, "/prism/backends/b2/address", "not a DIP of the VIP", "POST", "vips",
                    cookieVip("cheetah", host(2), 0, "10.3.0.3"));
            refused(400, "/prism/backends/b1/address", "give it weight 0", "POST", "vips",
                    cookieVip("cheetah", host(2), 1, host(3)));
            Reply created = call("POST", "vips", cookieVip("cheetah", host(2), 0, host(3)));
            assertEquals(201, created.status, String.valueOf(created.body));
            assertEquals("cookie", created.body.at("/prism/steering").asText());
            assertEquals(0, created.body.at("/ports/0/dips/1/weight").asInt(), created.body.toString());
            Reply pin = call("POST", "prism/10.100.0.2/pins",
                    "{\"client\": \"10.9.0.1\", \"clientPort\": 40000, \"vipPort\": 80, \"backend\": \"b2\"}");
            assertEquals(409, pin.status, "no pins: the cookie steers " + pin.body);
        }

        @Test
        void aFabricSteeredVipTakesPinsThroughRest() {
            controller.close();
            PrismPinsTest.Device device = new PrismPinsTest.Device();
            org.hybridlb.app.core.port.Ports p = fabric.ports(store);
            controller = new Controller(ControllerConfig.defaults().withInterval(Duration.ZERO),
                    new org.hybridlb.app.core.port.Ports(p.topology, p.hmux, p.smux, p.routes, p.stats, p.health, p.store,
                            p.cookies, p.prism, device));
            controller.start();
            app = new ApplicationHandler(ResourceConfig.forApplication(new HybridlbRestApplication(controller)));
            Reply made = call("POST", "vips", prismVip(RULES + ", \"steering\": \"fabric\""));
            assertEquals(201, made.status, String.valueOf(made.body));
            String pin = "{\"client\": \"10.9.0.1\", \"clientPort\": 40000, \"vipPort\": 80, \"backend\": \"b2\"}";
            Reply r = call("POST", "prism/10.100.0.2/pins", pin);
            assertEquals(200, r.status, String.valueOf(r.body));
            assertEquals("10.3.0.3", r.body.path("dip").asText());
            assertEquals(1, device.held.size(), "on the fabric when the answer came");
            Reply bad = call("POST", "prism/10.100.0.2/pins", pin.replace("40000", "\"x\""));
            assertEquals(400, bad.status);
            assertEquals("/clientPort", bad.body.path("field").asText());
            assertEquals(1, call("GET", "prism/10.100.0.2/pins", null).body.path("pins").size());
            Reply noPort = call("DELETE", "prism/10.100.0.2/pins?client=10.9.0.1&vipPort=80", null);
            assertEquals(400, noPort.status);
            assertEquals("clientPort", noPort.body.path("field").asText());
            Reply gone = call("DELETE", "prism/10.100.0.2/pins?client=10.9.0.1&clientPort=40000&vipPort=80", null);
            assertTrue(gone.body.path("removed").asBoolean(), String.valueOf(gone.body));
            assertEquals(0, device.held.size());
            assertEquals(404, call("POST", "prism/10.100.0.9/pins", pin).status, "no such VIP");
        }

        /** Polls (the hand-off controller's rounds run every 2 s and on VIP changes). */
        Reply await(String path, java.util.function.Predicate<Reply> done) throws InterruptedException {
            long end = System.nanoTime() + 15_000_000_000L;
            Reply r;
            do {
                r = call("GET", path, null);
                if (done.test(r)) {
                    return r;
                }
                Thread.sleep(50);
            } while (System.nanoTime() < end);
            throw new AssertionError(path + " never got there: " + r.status + " " + r.body);
        }
    }
}
