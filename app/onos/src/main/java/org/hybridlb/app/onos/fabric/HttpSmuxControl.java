package org.hybridlb.app.onos.fabric;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Function;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.port.SouthboundException;

/** The SMux control API over HTTP ({@code PUT/GET <controlUrl>/table}, smux/src/control.c). */
public final class HttpSmuxControl implements SmuxControl, SmuxMetrics {
    private final HttpClient http;
    private final Function<String, String> controlUrl;
    private final Duration timeout;

    public HttpSmuxControl(Function<String, String> controlUrl, Duration timeout) {
        this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
        this.controlUrl = controlUrl;
        this.timeout = timeout;
    }

    @Override
    public void putTable(String smuxId, SmuxTable table) {
        HttpRequest req = HttpRequest.newBuilder(uri(smuxId)).timeout(timeout)
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(Json.write(table))).build();
        HttpResponse<String> res = send(smuxId, req);
        if (res.statusCode() / 100 != 2) {
            throw new SouthboundException(smuxId + " refused table v" + table.version + ": HTTP " + res.statusCode()
                    + " " + res.body());
        }
    }

    @Override
    public SmuxTable getTable(String smuxId) {
        HttpResponse<String> res = send(smuxId, HttpRequest.newBuilder(uri(smuxId)).timeout(timeout).GET().build());
        if (res.statusCode() != 200) {
            throw new SouthboundException(smuxId + ": GET /table answered HTTP " + res.statusCode());
        }
        return Json.read(res.body(), SmuxTable.class);
    }

    @Override
    public java.util.Map<String, Long> divergingConnections(String smuxId) {
        URI uri = URI.create(uri(smuxId).toString().replaceAll("/table$", "/connections/diverging"));
        HttpResponse<String> res = send(smuxId, HttpRequest.newBuilder(uri).timeout(timeout).GET().build());
        if (res.statusCode() != 200) {
            throw new SouthboundException(smuxId + ": GET /connections/diverging answered HTTP " + res.statusCode());
        }
        java.util.Map<String, Long> out = new java.util.TreeMap<>();
        try {
            for (com.fasterxml.jackson.databind.JsonNode s : Json.MAPPER.readTree(res.body()).path("services")) {
                out.merge(s.path("vip").asText(), s.path("diverging").asLong(), Long::sum);
            }
        } catch (IOException e) {
            throw new SouthboundException(smuxId + ": GET /connections/diverging: " + e.getMessage(), e);
        }
        return out;
    }

    @Override
    public String metrics(String smuxId) {
        URI uri = URI.create(uri(smuxId).toString().replaceAll("/table$", "/metrics"));
        HttpResponse<String> res = send(smuxId, HttpRequest.newBuilder(uri).timeout(timeout).GET().build());
        if (res.statusCode() != 200) {
            throw new SouthboundException(smuxId + ": GET /metrics answered HTTP " + res.statusCode());
        }
        return res.body();
    }

    private URI uri(String smuxId) {
        String base = controlUrl.apply(smuxId);
        if (base == null) {
            throw new SouthboundException("SMux " + smuxId + " has no controlUrl configured");
        }
        return URI.create(base.replaceAll("/+$", "") + "/table");
    }

    private HttpResponse<String> send(String smuxId, HttpRequest req) {
        try {
            return http.send(req, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new SouthboundException(smuxId + " unreachable: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SouthboundException(smuxId + ": interrupted", e);
        }
    }
}
