package org.hybridlb.standalone.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLHandshakeException;
import org.hybridlb.app.core.HybridlbApi;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.rest.HybridlbRestApplication;
import org.hybridlb.app.core.tls.TlsFiles;
import org.hybridlb.solver.model.Vip;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * hybridlbd's HTTPS server and its gate, with the core's REST resources over a recording fake API:
 * who may call what (401, 403), the body bound (413), the requests in progress (503 with
 * Retry-After), TLS with the certificates of deploy/hlb-certs; and every refusal changes nothing
 * (the API is never called).
 */
class ApiServerTest {
    static final String VIP = "{\"vip\":\"10.100.0.1\",\"aggregate\":\"10.100.0.0/16\",\"ports\":[{\"proto\":\"tcp\","
            + "\"port\":80,\"dips\":[{\"ip\":\"10.0.0.2\"}]}]}";
    @TempDir
    static Path dir;
    static TestCerts certs;
    static String admin;
    static String viewer;

    final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    volatile CountDownLatch hold;
    final AtomicInteger waiting = new AtomicInteger();
    ApiServer server;
    HttpClient https;

    @BeforeAll
    static void tokensAndCerts() {
        certs = TestCerts.make(dir.resolve("tls"));
        admin = Tokens.create(dir.resolve("tokens.json"), "ops", Tokens.Role.ADMIN);
        viewer = Tokens.create(dir.resolve("tokens.json"), "grafana", Tokens.Role.VIEWER);
    }

    /** Records each call; createVip waits on {@link #hold} when set. */
    HybridlbApi fakeApi() {
        return (HybridlbApi) Proxy.newProxyInstance(HybridlbApi.class.getClassLoader(), new Class<?>[] {HybridlbApi.class},
                (proxy, m, args) -> {
                    calls.computeIfAbsent(m.getName(), k -> new AtomicInteger()).incrementAndGet();
                    switch (m.getName()) {
                        case "vips":
                            return List.of(Json.read(VIP, Vip.class));
                        case "createVip":
                            CountDownLatch h = hold;
                            if (h != null) {
                                waiting.incrementAndGet();
                                h.await(30, TimeUnit.SECONDS);
                            }
                            return Json.read((String) args[0], Vip.class);
                        default:
                            throw new UnsupportedOperationException(m.getName());
                    }
                });
    }

    ApiServer start(boolean tls, boolean tokens, long maxBody, int maxConcurrent) {
        server = new ApiServer(new ApiServer.Settings(new InetSocketAddress("127.0.0.1", 0),
                tls ? TlsFiles.context(TlsFiles.identity(certs.p12("hybridlbd"), certs.pass("hybridlbd")), null) : null,
                tokens ? Tokens.load(dir.resolve("tokens.json")) : null, maxBody, maxConcurrent),
                new HybridlbRestApplication(this::fakeApi, () -> null, maxBody)).start();
        https = HttpClient.newBuilder().sslContext(TlsFiles.context(null, TlsFiles.trust(certs.ca()))).build();
        return server;
    }

    @AfterEach
    void stop() {
        if (hold != null) {
            hold.countDown();
        }
        if (server != null) {
            server.close();
        }
    }

    HttpResponse<String> send(String method, String path, String token, HttpRequest.BodyPublisher body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.url() + path)).method(method, body)
                .header("Content-Type", "application/json");
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return https.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(String path, String token) throws Exception {
        return send("GET", path, token, HttpRequest.BodyPublishers.noBody());
    }

    HttpResponse<String> post(String path, String token, String body) throws Exception {
        return send("POST", path, token, HttpRequest.BodyPublishers.ofString(body));
    }

    static JsonNode json(HttpResponse<String> r) {
        return Json.read(r.body(), JsonNode.class);
    }

    int called(String method) {
        return calls.getOrDefault(method, new AtomicInteger()).get();
    }

    @Test
    void tokensDecideWhoMayReadAndWrite() throws Exception {
        start(true, true, 1 << 20, 8);
        HttpResponse<String> r = get("/vips", null);
        assertEquals(401, r.statusCode(), r.body());
        assertEquals("Bearer realm=\"hybridlbd\"", r.headers().firstValue("WWW-Authenticate").orElse(""));
        assertEquals("Authorization", json(r).path("field").asText(), r.body());
        assertEquals(401, get("/vips", "hlb_not-a-token").statusCode());
        assertEquals(401, get("/openapi.json", null).statusCode(), "the description is behind the gate too");
        assertEquals(0, called("vips"), "nothing reached the API");

        assertEquals(200, get("/vips", viewer).statusCode());
        assertEquals(200, get("/openapi.json", viewer).statusCode());
        r = post("/vips", viewer, VIP);
        assertEquals(403, r.statusCode(), r.body());
        assertTrue(json(r).path("reason").asText().contains("'grafana' is a viewer token"), r.body());
        assertEquals(0, called("createVip"), "a refused write changes nothing");
        r = post("/vips", admin, VIP);
        assertEquals(201, r.statusCode(), r.body());
        assertEquals(1, called("createVip"));
    }

    @Test
    void whatElseTheDaemonServesIsBehindTheSameGate() throws Exception {
        start(true, true, 1 << 20, 8);
        server.serve("/metrics", ex -> {
            byte[] b = "up 1\n".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        assertEquals(401, get("/metrics", null).statusCode());
        assertEquals("up 1\n", get("/metrics", viewer).body());
    }

    @Test
    void theWebViewsFilesNeedNoTokenButWhatTheyShowDoes() throws Exception {
        start(true, true, 1 << 20, 8);
        HttpResponse<String> page = get("/ui/", null);
        assertEquals(200, page.statusCode(), page.body());
        assertTrue(page.body().contains("hybridlb.js"), page.body());
        assertEquals(200, get("/ui/hybridlb.js", null).statusCode());
        assertEquals(401, send("POST", "/ui/", null, HttpRequest.BodyPublishers.ofString("x")).statusCode(),
                "only reads of the view's files pass");
        assertEquals(401, get("/uivips", null).statusCode(), "a path merely starting with ui is not the view");
        assertEquals(401, get("/ui/../vips", null).statusCode(), "no way out of the view's files");
        assertEquals(401, get("/ui/%2e%2e/vips", null).statusCode(), "not even encoded");
        assertEquals(401, get("/assignment", null).statusCode(), "the data the page shows needs the token");
    }

    @Test
    void tokensAddedOrRevokedInTheFileTakeEffectWithoutRestart() throws Exception {
        Path file = dir.resolve("tokens-live.json");
        String first = Tokens.create(file, "first", Tokens.Role.ADMIN);
        server = new ApiServer(new ApiServer.Settings(new InetSocketAddress("127.0.0.1", 0), null, Tokens.load(file),
                1 << 20, 8), new HybridlbRestApplication(this::fakeApi, () -> null, HybridlbRestApplication.DEFAULT_MAX_BODY_BYTES)).start();
        https = HttpClient.newHttpClient();
        assertEquals(200, get("/vips", first).statusCode());
        String second = Tokens.create(file, "second", Tokens.Role.VIEWER);
        assertTrue(Tokens.revoke(file, "first"));
        long end = System.nanoTime() + 10_000_000_000L;
        while (get("/vips", second).statusCode() != 200 && System.nanoTime() < end) {
            Thread.sleep(100);
        }
        assertEquals(200, get("/vips", second).statusCode());
        assertEquals(401, get("/vips", first).statusCode());
    }

    @Test
    void plainHttpAndUntrustedCertificatesAreRefused() throws Exception {
        start(true, true, 1 << 20, 8);
        HttpClient plain = HttpClient.newHttpClient();
        String httpUrl = server.url().replace("https:", "http:");
        assertThrows(IOException.class, () -> plain.send(HttpRequest.newBuilder(URI.create(httpUrl + "/vips")).build(),
                HttpResponse.BodyHandlers.ofString()));
        TestCerts other = TestCerts.make(dir.resolve("other-ca"));
        HttpClient wrongCa = HttpClient.newBuilder().sslContext(TlsFiles.context(null, TlsFiles.trust(other.ca()))).build();
        assertThrows(SSLHandshakeException.class, () -> wrongCa.send(HttpRequest.newBuilder(
                URI.create(server.url() + "/vips")).build(), HttpResponse.BodyHandlers.ofString()));
    }

    @Test
    void bodiesOverTheLimitAreRefusedWithoutReachingTheApi() throws Exception {
        start(true, true, 1000, 8);
        String big = VIP + " ".repeat(1001 - VIP.length());
        HttpResponse<String> r = post("/vips", admin, big);   // with Content-Length: the gate
        assertEquals(413, r.statusCode(), r.body());
        assertEquals("/", json(r).path("field").asText());
        // without a length (chunked): the resource stops reading at the limit
        r = send("POST", "/vips", admin, HttpRequest.BodyPublishers.ofInputStream(
                () -> new ByteArrayInputStream(big.getBytes(StandardCharsets.UTF_8))));
        assertEquals(413, r.statusCode(), r.body());
        assertEquals(0, called("createVip"));
        assertEquals(201, post("/vips", admin, big.substring(0, 1000)).statusCode());
    }

    @Test
    void aDeclaredOversizedBodyIsRefusedBeforeItIsSent() throws Exception {
        start(true, true, 1000, 8);
        int port = URI.create(server.url()).getPort();
        javax.net.ssl.SSLSocketFactory f = TlsFiles.context(null, TlsFiles.trust(certs.ca())).getSocketFactory();
        try (java.net.Socket s = f.createSocket("127.0.0.1", port)) {
            s.setSoTimeout(5000);   // the body never comes: only the gate can answer
            s.getOutputStream().write(("POST /vips HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + admin
                    + "\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            String status = new java.io.BufferedReader(new java.io.InputStreamReader(s.getInputStream(),
                    StandardCharsets.US_ASCII)).readLine();
            assertTrue(status != null && status.startsWith("HTTP/1.1 413 "), status);
        }
        assertEquals(0, called("createVip"));
    }

    @Test
    void requestsBeyondTheConcurrencyLimitGet503WithRetryAfter() throws Exception {
        start(true, true, 1 << 20, 2);
        hold = new CountDownLatch(1);
        List<CompletableFuture<HttpResponse<String>>> held = List.of(
                https.sendAsync(request("POST", "/vips", VIP), HttpResponse.BodyHandlers.ofString()),
                https.sendAsync(request("POST", "/vips", VIP), HttpResponse.BodyHandlers.ofString()));
        long end = System.nanoTime() + 20_000_000_000L;
        while (waiting.get() < 2 && System.nanoTime() < end) {
            Thread.sleep(20);
        }
        assertEquals(2, waiting.get(), "two requests in progress");
        HttpResponse<String> r = get("/vips", viewer);
        assertEquals(503, r.statusCode(), r.body());
        assertEquals("1", r.headers().firstValue("Retry-After").orElse(""));
        assertTrue(json(r).path("reason").asText().contains("2 requests are in progress"), r.body());
        assertEquals(0, called("vips"));
        hold.countDown();
        for (CompletableFuture<HttpResponse<String>> f : held) {
            assertEquals(201, f.get(20, TimeUnit.SECONDS).statusCode());
        }
        assertEquals(200, get("/vips", viewer).statusCode(), "permits come back");
    }

    HttpRequest request(String method, String path, String body) {
        return HttpRequest.newBuilder(URI.create(server.url() + path)).method(method, HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json").header("Authorization", "Bearer " + admin).build();
    }

    @Test
    void theTokenFileHoldsOnlyHashes() throws Exception {
        String text = Files.readString(dir.resolve("tokens.json"));
        assertTrue(!text.contains(admin.substring(4)) && !text.contains(viewer.substring(4)), text);
        assertTrue(text.contains(Tokens.hex(Tokens.sha256(admin))), text);
        assertTrue(admin.startsWith("hlb_") && admin.length() == 4 + 43, admin);
    }

    @Test
    void aBrokenTokenFileIsNamedFieldByField() throws IOException {
        Path f = dir.resolve("bad-tokens.json");
        Files.writeString(f, "{\"tokens\": [{\"name\": \"a\", \"role\": \"root\", \"sha256\": \"00\"}]}");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Tokens.load(f));
        assertEquals(f + ": /tokens/0/role: must be \"viewer\" or \"admin\", got \"root\"", e.getMessage());
        Files.writeString(f, "{\"tokens\": [{\"name\": \"a\", \"role\": \"admin\", \"sha256\": \"00\"}]}");
        e = assertThrows(IllegalArgumentException.class, () -> Tokens.load(f));
        assertTrue(e.getMessage().startsWith(f + ": /tokens/0/sha256: must be 64 lowercase hex digits"), e.getMessage());
        Files.writeString(f, "{\"tokens\": [");
        e = assertThrows(IllegalArgumentException.class, () -> Tokens.load(f));
        assertTrue(e.getMessage().startsWith(f + ": /: malformed JSON"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Tokens.create(f, "x", Tokens.Role.ADMIN),
                "a file that does not parse is not edited");
    }

}
