package org.hybridlb.app.core.prism;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Supplier;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.port.SouthboundException;

/**
 * {@link PrismFrontEnds} over HTTP, with the management plane's client: mutual TLS where the host
 * configures it (the front end then takes {@code PUT /rules} only from a client certificate of its
 * {@code --admin-tls-ca}), as the SMux and host-agent clients.
 */
public final class HttpPrismFrontEnds implements PrismFrontEnds {
    private final Duration timeout;
    private final Supplier<HttpClient> http;

    public HttpPrismFrontEnds(Duration timeout, Supplier<HttpClient> http) {
        this.timeout = timeout;
        this.http = http;
    }

    @Override
    public JsonNode rules(String admin) {
        return get(admin, "/rules");
    }

    @Override
    public void putRules(String admin, String document) {
        HttpResponse<String> r = send(admin, HttpRequest.newBuilder(uri(admin, "/rules"))
                .header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(document)));
        if (r.statusCode() == 400 || r.statusCode() == 401 || r.statusCode() == 403) {
            throw new Refused("front end " + admin + " refused the rules: " + error(r.body()));
        }
        check(admin, "PUT /rules", r);
    }

    @Override
    public JsonNode stats(String admin) {
        return get(admin, "/stats");
    }

    @Override
    public JsonNode connections(String admin) {
        return get(admin, "/connections");
    }

    private JsonNode get(String admin, String path) {
        HttpResponse<String> r = send(admin, HttpRequest.newBuilder(uri(admin, path)).GET());
        check(admin, "GET " + path, r);
        try {
            return Json.MAPPER.readTree(r.body());
        } catch (IOException e) {
            throw new SouthboundException("front end " + admin + " GET " + path + ": not JSON: " + e.getMessage(), e);
        }
    }

    private static URI uri(String admin, String path) {
        return URI.create(admin.replaceAll("/+$", "") + path);
    }

    private HttpResponse<String> send(String admin, HttpRequest.Builder req) {
        HttpRequest r = req.timeout(timeout).build();
        try {
            return http.get().send(r, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new SouthboundException("front end unreachable at " + r.uri() + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SouthboundException("interrupted talking to the front end " + admin, e);
        }
    }

    private static void check(String admin, String what, HttpResponse<String> r) {
        if (r.statusCode() != 200) {
            throw new SouthboundException("front end " + admin + " " + what + ": HTTP " + r.statusCode() + " "
                    + error(r.body()));
        }
    }

    private static String error(String body) {
        try {
            return Json.MAPPER.readTree(body).path("error").asText(body);
        } catch (IOException | RuntimeException e) {
            return body.length() > 200 ? body.substring(0, 200) : body;
        }
    }
}
