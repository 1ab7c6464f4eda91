package org.hybridlb.standalone.http;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.logging.Logger;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.standalone.Fabric;

/** The SMux control API over HTTP (smux/README.md, smux/src/control.c): {@code PUT/GET /table}, {@code /metrics},
 * {@code /connections/diverging}. */
public final class SmuxHttpControl implements SmuxControl {
    private static final Logger LOG = Logger.getLogger(SmuxHttpControl.class.getName());

    private final Fabric fabric;
    private final HttpClient http;
    private final Duration timeout;

    public SmuxHttpControl(Fabric fabric, long timeoutMillis) {
        this.fabric = fabric;
        this.timeout = Duration.ofMillis(timeoutMillis);
        this.http = HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).build();
    }

    @Override
    public void putTable(String smuxId, SmuxTable table) {
        String body = Json.write(table);
        HttpResponse<String> r;
        try {
            r = send(smuxId, HttpRequest.newBuilder(uri(smuxId, "/table"))
                    .PUT(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json"));
        } catch (SouthboundException e) {
            LOG.warning(e.getMessage());
            throw e;
        }
        if (r.statusCode() != 200) {
            String msg = "SMux " + smuxId + " refused table version " + table.version + ": HTTP " + r.statusCode()
                    + " " + r.body().strip();
            LOG.warning(msg);
            throw new SouthboundException(msg);
        }
        LOG.info("sent table version " + table.version + " (" + table.vips.size() + " VIPs) to SMux " + smuxId);
    }

    @Override
    public SmuxTable getTable(String smuxId) {
        HttpResponse<String> r;
        try {
            r = send(smuxId, HttpRequest.newBuilder(uri(smuxId, "/table")).GET());
        } catch (SouthboundException e) {
            LOG.warning(e.getMessage());
            throw e;
        }
        if (r.statusCode() != 200) {
            throw new SouthboundException("SMux " + smuxId + " GET /table: HTTP " + r.statusCode());
        }
        try {
            return Json.read(r.body(), SmuxTable.class);
        } catch (IllegalArgumentException e) {
            throw new SouthboundException("SMux " + smuxId + " GET /table: " + e.getMessage(), e);
        }
    }

    @Override
    public Map<String, Long> divergingConnections(String smuxId) {
        HttpResponse<String> r = send(smuxId, HttpRequest.newBuilder(uri(smuxId, "/connections/diverging")).GET());
        if (r.statusCode() != 200) {
            throw new SouthboundException("SMux " + smuxId + " GET /connections/diverging: HTTP " + r.statusCode());
        }
        Map<String, Long> out = new TreeMap<>();
        try {
            for (JsonNode s : Json.MAPPER.readTree(r.body()).path("services")) {
                out.merge(s.path("vip").asText(), s.path("diverging").asLong(), Long::sum);
            }
        } catch (IOException e) {
            throw new SouthboundException("SMux " + smuxId + " GET /connections/diverging: " + e.getMessage(), e);
        }
        return out;
    }

    /** The SMux's Prometheus text ({@code GET /metrics}). */
    public String metrics(String smuxId) {
        HttpResponse<String> r = send(smuxId, HttpRequest.newBuilder(uri(smuxId, "/metrics")).GET());
        if (r.statusCode() != 200) {
            throw new SouthboundException("SMux " + smuxId + " GET /metrics: HTTP " + r.statusCode());
        }
        return r.body();
    }

    private URI uri(String smuxId, String path) {
        Fabric.SmuxInfo m = fabric.smuxes.get(smuxId);
        if (m == null) {
            throw new SouthboundException("SMux " + smuxId + " is not in " + fabric.file);
        }
        return URI.create(m.controlUrl.replaceAll("/+$", "") + path);
    }

    private HttpResponse<String> send(String smuxId, HttpRequest.Builder b) {
        HttpRequest req = b.timeout(timeout).build();
        try {
            return http.send(req, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new SouthboundException("SMux " + smuxId + " unreachable at " + req.uri() + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SouthboundException("interrupted talking to SMux " + smuxId);
        }
    }
}
