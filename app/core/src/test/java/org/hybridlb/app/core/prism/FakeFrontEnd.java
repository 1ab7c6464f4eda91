package org.hybridlb.app.core.prism;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.hybridlb.app.core.Json;

/**
 * A Prism front end's admin API on loopback, as {@code prism_fe.py --admin} answers it: the rule
 * document in force ({@code PUT /rules} swaps it; a document with a rule named "refuse-me" gets a
 * 400 naming the field, as the front end's validation would), and the stats and connections a test sets.
 */
public final class FakeFrontEnd implements AutoCloseable {
    private final HttpServer server;
    public volatile JsonNode rules = Json.MAPPER.createObjectNode();
    public volatile JsonNode stats = Json.MAPPER.createObjectNode();
    public volatile JsonNode connections = Json.MAPPER.createArrayNode();
    public final AtomicInteger puts = new AtomicInteger();

    public FakeFrontEnd() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", this::handle);
        server.start();
    }

    /** The base URL of its admin API. */
    public String admin() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** As a restarted front end: back to the rules of its start-up file (here: none). */
    public void restart() {
        rules = Json.MAPPER.createObjectNode();
    }

    private void handle(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        String method = ex.getRequestMethod();
        if (method.equals("PUT") && path.equals("/rules")) {
            JsonNode doc = Json.MAPPER.readTree(ex.getRequestBody().readAllBytes());
            if (doc.path("rules").path(0).path("name").asText().equals("refuse-me")) {
                send(ex, 400, "{\"error\": \"rules[0].name: refused\"}");
                return;
            }
            rules = doc;
            puts.incrementAndGet();
            send(ex, 200, "{\"rules\": " + doc.path("rules").size() + "}");
        } else if (method.equals("GET") && path.equals("/rules")) {
            send(ex, 200, Json.write(rules));
        } else if (method.equals("GET") && path.equals("/stats")) {
            send(ex, 200, Json.write(stats));
        } else if (method.equals("GET") && path.equals("/connections")) {
            send(ex, 200, Json.write(connections));
        } else {
            send(ex, 404, "{\"error\": \"path: no such endpoint\"}");
        }
    }

    private static void send(HttpExchange ex, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, b.length);
        try (OutputStream o = ex.getResponseBody()) {
            o.write(b);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
