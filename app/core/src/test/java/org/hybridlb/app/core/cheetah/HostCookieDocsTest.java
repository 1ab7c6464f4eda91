package org.hybridlb.app.core.cheetah;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.port.HostCookieControl;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The host agents' documents, checked by the agent's own parser, and the client that sends them. */
class HostCookieDocsTest {
    static final Path REPO = Path.of(System.getProperty("user.dir")).resolve("../..").normalize();

    static Vip vip(String vip, String affinity, String... hosts) {
        List<Dip> dips = new ArrayList<>();
        for (String h : hosts) {
            dips.add(new Dip(h, 1, null));
        }
        return new Vip(vip, "10.100.0.0/16", affinity, null, List.of(new VipPort("tcp", 80, dips)));
    }

    static final String A = "https://10.0.9.1:9200";
    static final String B = "https://10.0.9.3:9200";

    @Test
    void theAgentsParserTakesEveryDocumentAsWritten(@TempDir Path dir) throws Exception {
        CookieState s = new CookieState();
        Vip crc = new Vip("10.100.0.6", "10.100.0.0/16", "cheetah", null, "crc32c",
                List.of(new VipPort("tcp", 443, List.of(new Dip("10.0.0.2", 1, null)))), null);
        List<Vip> vips = List.of(vip("10.100.0.1", "cheetah", "10.0.0.1", "10.0.0.2"), vip("10.100.0.2", null, "10.0.0.2"),
                new Vip("10.100.0.3", "10.100.0.0/16", List.of(new VipPort("any", 0, List.of(new Dip("10.9.0.7", 3, "10.0.0.3"))))),
                vip("10.100.0.4", "cheetah-stateful", "10.0.0.4"),
                new Vip("10.100.0.5", "10.100.0.0/16", "cheetah", "p2c", List.of(new VipPort("tcp", 80,
                        List.of(new Dip("10.0.0.5", 1, null))))),
                crc);
        new CookieRegistry().update(s, vips);
        // slot 1 free below a held slot 2; slot 3 held by an SMux with no URL the agents can use;
        // slot 4 an extra slot of slot 0's SMux
        s.ownerSlots.put(0, "10.0.9.1");
        s.ownerSlots.put(2, "10.0.9.3");
        s.ownerSlots.put(3, "10.0.9.4");
        s.ownerSlots.put(4, "10.0.9.1");
        Map<String, String> docs = HostCookieDocs.build(s, vips, Map.of("10.0.9.1", A, "10.0.9.3", B, "10.0.9.2", A),
                List.of(B, A));
        assertEquals(List.of("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5"), new ArrayList<>(docs.keySet()));
        JsonNode two = Json.MAPPER.readTree(docs.get("10.0.0.2"));
        assertEquals(s.serverIds.get("10.0.0.2").intValue(), two.path("serverId").asInt());
        assertEquals(3, two.path("vips").size());
        // each VIP in its own mode (a crc32c VIP's for a P4 HMux), the host's default siphash13
        assertEquals("siphash13", two.path("hash").asText());
        assertEquals(List.of("10.100.0.1/32 siphash13", "10.100.0.2/32 siphash13", "10.100.0.6/32 crc32c"),
                java.util.stream.StreamSupport.stream(two.path("vips").spliterator(), false)
                        .map(v -> v.path("prefix").asText() + " " + v.path("hash").asText())
                        .collect(java.util.stream.Collectors.toList()));
        assertEquals("10.100.0.3/32", Json.MAPPER.readTree(docs.get("10.0.0.3")).at("/vips/0/prefix").asText(),
                "a VM's host gets the keys of its VIPs");
        assertEquals(List.of("serverId", "hash", "key", "vips", "keepaliveSeconds"), names(two),
                "a host of no stateful or load-balanced VIP gets neither list");
        JsonNode four = Json.MAPPER.readTree(docs.get("10.0.0.4"));
        assertEquals(List.of(A, "http://0.0.0.2:9", B, "http://0.0.0.4:9", A), texts(four.path("statefulOwners")),
                "owners in slot order, a placeholder for the free slot and the SMux without a URL, an SMux"
                        + " holding two slots at both");
        assertTrue(four.path("smuxes").isMissingNode(), "wrr: no loads");
        JsonNode five = Json.MAPPER.readTree(docs.get("10.0.0.5"));
        assertEquals(List.of(B, A), texts(five.path("smuxes")), "every live SMux, in the order given");
        assertTrue(five.path("statefulOwners").isMissingNode(), "not stateful: no owners");
        // smux/agent/cookie_config.py's parse() normalises a document it takes (absent lists as []):
        // it must take each as it is
        Path in = dir.resolve("docs.json");
        Files.writeString(in, Json.MAPPER.writeValueAsString(docs.values()));
        Process p = new ProcessBuilder("python3", "-c", "import json, sys; sys.path.insert(0, sys.argv[1]);"
                + " import cookie_config as c\n"
                + "for d in json.load(open(sys.argv[2])):\n"
                + "    doc = json.loads(d); out = c.parse(doc)\n"
                + "    assert out == {'statefulOwners': [], 'smuxes': [], **doc}, (out, doc)\n"
                + "print('ok')", REPO.resolve("smux/agent").toString(), in.toString())
                .redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), out);
        assertEquals("ok\n", out);
    }

    @Test
    void controlUrlsAreWrittenAsTheAgentsTakeThem() {
        assertEquals("https://10.0.9.1:9200", HostCookieDocs.agentUrl("https://10.0.9.1:9200/"));
        assertEquals("http://smux-a.example:80", HostCookieDocs.agentUrl("HTTP://smux-a.example"));
        assertEquals("https://10.0.9.1:443", HostCookieDocs.agentUrl("https://10.0.9.1"));
        assertEquals(null, HostCookieDocs.agentUrl("https://10.0.9.1:9200/smux"), "a path: the agent refuses it");
        assertEquals(null, HostCookieDocs.agentUrl("ftp://10.0.9.1:21"));
        assertEquals(null, HostCookieDocs.agentUrl("https://10.0.9.1:9200/?a=b"));
        assertEquals(null, HostCookieDocs.agentUrl(null));
    }

    static List<String> names(JsonNode n) {
        List<String> out = new ArrayList<>();
        n.fieldNames().forEachRemaining(out::add);
        return out;
    }

    static List<String> texts(JsonNode n) {
        List<String> out = new ArrayList<>();
        n.forEach(x -> out.add(x.asText()));
        return out;
    }

    @Test
    void aHostWithMoreVipsThanAnAgentTakesIsNamed() {
        CookieState s = new CookieState();
        List<Vip> vips = new ArrayList<>();
        for (int i = 0; i <= HostCookieDocs.MAX_VIPS_PER_HOST; i++) {
            vips.add(vip("10.100." + (i / 250) + "." + (1 + i % 250), null, "10.0.0.9"));
        }
        new CookieRegistry().update(s, vips);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> HostCookieDocs.build(s, vips));
        assertTrue(e.getMessage().contains("10.0.0.9"), e.getMessage());
    }

    @Test
    void theClientPutsTheDocumentAndReadsTheAgentsAnswer() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        AtomicInteger status = new AtomicInteger(200);
        AtomicReference<String> seen = new AtomicReference<>();
        server.createContext("/", x -> {
            seen.set(x.getRequestMethod() + " " + x.getRequestURI().getPath() + " "
                    + x.getRequestHeaders().getFirst("Content-Type") + " "
                    + new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            byte[] body = (status.get() == 400 ? "{\"error\": \"serverId: expected an integer 1..16383, got 0\"}"
                    : "{}").getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(status.get(), body.length);
            x.getResponseBody().write(body);
            x.close();
        });
        server.start();
        try {
            String url = "http://127.0.0.1:" + server.getAddress().getPort() + "/";
            AgentCookieClient client = new AgentCookieClient(() -> Map.of("10.0.0.1", url), Duration.ofSeconds(5),
                    HttpClient::newHttpClient);
            assertEquals(HostCookieControl.Answer.TAKEN, client.putCookies("10.0.0.1", "{\"serverId\":1}"));
            assertEquals("PUT /cookie application/json {\"serverId\":1}", seen.get());
            status.set(404);
            assertEquals(HostCookieControl.Answer.NO_COOKIES, client.putCookies("10.0.0.1", "{}"));
            status.set(409);
            assertEquals(HostCookieControl.Answer.NO_COOKIES, client.putCookies("10.0.0.1", "{}"));
            status.set(400);
            SouthboundException e = assertThrows(SouthboundException.class,
                    () -> client.putCookies("10.0.0.1", "{\"key\":\"secret\"}"));
            assertTrue(e.getMessage().contains("HTTP 400 serverId: expected an integer"), e.getMessage());
            assertTrue(!e.getMessage().contains("secret"), "the document is not quoted");
            assertThrows(SouthboundException.class, () -> client.putCookies("10.0.0.2", "{}"));
        } finally {
            server.stop(0);
        }
    }
}
