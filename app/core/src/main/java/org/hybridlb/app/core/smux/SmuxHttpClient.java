package org.hybridlb.app.core.smux;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.logging.Logger;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.model.SmuxPin;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.app.core.tls.TlsFiles;

/**
 * The SMux control API over HTTP (smux/src/control.c, smux/README.md), for every host: {@code PUT}
 * and {@code GET /table}, {@code GET /stats} (counters as JSON), {@code GET
 * /connections/diverging} and the flow pins ({@code POST}, {@code DELETE} and {@code GET /pins}). The JDK's HTTP client (HTTP/1.1) and the core's Jackson codec, so it runs
 * unchanged in the daemon and in the ONOS bundle.
 */
public final class SmuxHttpClient implements SmuxControl {
    private static final Logger LOG = Logger.getLogger(SmuxHttpClient.class.getName());

    private final Function<String, String> controlUrl;
    private final Duration timeout;
    private final Supplier<HttpClient> http;

    /** {@code controlUrl}: the base URL of an SMux's control API by SMux id (null: not configured). Plain HTTP. */
    public SmuxHttpClient(Function<String, String> controlUrl, Duration timeout) {
        this(controlUrl, timeout, TlsFiles.plain(timeout));
    }

    /**
     * {@code http}: the management plane's client, asked on every call (it follows the TLS settings:
     * {@link TlsFiles#client}); an {@code https://} control URL is then called over mutual TLS.
     */
    public SmuxHttpClient(Function<String, String> controlUrl, Duration timeout, Supplier<HttpClient> http) {
        this.controlUrl = controlUrl;
        this.timeout = timeout;
        this.http = http;
    }

    @Override
    public String controlUrl(String smuxId) {
        return controlUrl.apply(smuxId);
    }

    @Override
    public void putTable(String smuxId, SmuxTable table) {
        HttpResponse<String> r;
        try {
            r = send(smuxId, HttpRequest.newBuilder(uri(smuxId, "/table")).header("Content-Type", "application/json")
                    .PUT(HttpRequest.BodyPublishers.ofString(Json.write(table))));
        } catch (SouthboundException e) {
            LOG.warning(e.getMessage());
            throw e;
        }
        if (r.statusCode() / 100 != 2) {
            String msg = "SMux " + smuxId + " refused table version " + table.version + ": HTTP " + r.statusCode()
                    + " " + r.body().strip();
            LOG.warning(msg);
            throw new SouthboundException(msg);
        }
        LOG.info("sent table version " + table.version + " (" + table.vips.size() + " VIPs) to SMux " + smuxId);
    }

    @Override
    public SmuxTable getTable(String smuxId) {
        return get(smuxId, "/table", SmuxTable.class);
    }

    @Override
    public Map<String, Long> divergingConnections(String smuxId) {
        Map<String, Long> out = new TreeMap<>();
        get(smuxId, "/connections/diverging", Report.class).services
                .forEach(s -> out.merge(s.vip, s.diverging, Long::sum));
        return out;
    }

    @Override
    public Map<String, Long> vipBytes(String smuxId) {
        Map<String, Long> out = new TreeMap<>();
        get(smuxId, "/stats", Report.class).services.forEach(s -> out.merge(s.vip, s.bytes, Long::sum));
        return out;
    }

    @Override
    public void putPin(String smuxId, SmuxPin pin) {
        write(smuxId, "POST", pin, "pin " + pin);
    }

    @Override
    public void removePin(String smuxId, SmuxPin flow) {
        write(smuxId, "DELETE", flow.flowOnly(), "removal of the pin of " + flow.flowOnly());
    }

    @Override
    public List<SmuxPin> pins(String smuxId) {
        return get(smuxId, "/pins", PinList.class).pins;
    }

    private void write(String smuxId, String method, SmuxPin body, String what) {
        HttpResponse<String> r = send(smuxId, HttpRequest.newBuilder(uri(smuxId, "/pins"))
                .header("Content-Type", "application/json")
                .method(method, HttpRequest.BodyPublishers.ofString(Json.write(body))));
        if (r.statusCode() != 200) {
            throw new SouthboundException("SMux " + smuxId + " refused the " + what + ": HTTP " + r.statusCode()
                    + " " + r.body().strip());
        }
    }

    /** What {@code GET /pins} answers. */
    static final class PinList {
        final List<SmuxPin> pins;

        @JsonCreator
        PinList(@JsonProperty(value = "pins", required = true) List<SmuxPin> pins) {
            this.pins = pins;
        }
    }

    /** What {@code /stats} and {@code /connections/diverging} answer: one entry per VIP service. */
    static final class Report {
        final List<Service> services;

        @JsonCreator
        Report(@JsonProperty("services") List<Service> services) {
            this.services = services == null ? List.of() : services;
        }
    }

    static final class Service {
        final String vip;
        final long bytes;
        final long diverging;

        @JsonCreator
        Service(@JsonProperty(value = "vip", required = true) String vip, @JsonProperty("bytes") long bytes,
                @JsonProperty("diverging") long diverging) {
            this.vip = vip;
            this.bytes = bytes;
            this.diverging = diverging;
        }
    }

    private <T> T get(String smuxId, String path, Class<T> type) {
        HttpResponse<String> r;
        try {
            r = send(smuxId, HttpRequest.newBuilder(uri(smuxId, path)).GET());
        } catch (SouthboundException e) {
            LOG.fine(e.getMessage());
            throw e;
        }
        if (r.statusCode() != 200) {
            throw new SouthboundException("SMux " + smuxId + " GET " + path + ": HTTP " + r.statusCode());
        }
        try {
            return Json.read(r.body(), type);
        } catch (IllegalArgumentException e) {
            throw new SouthboundException("SMux " + smuxId + " GET " + path + ": " + e.getMessage(), e);
        }
    }

    private URI uri(String smuxId, String path) {
        String base = controlUrl.apply(smuxId);
        if (base == null) {
            throw new SouthboundException("SMux " + smuxId + " has no control URL configured");
        }
        return URI.create(base.replaceAll("/+$", "") + path);
    }

    private HttpResponse<String> send(String smuxId, HttpRequest.Builder b) {
        HttpRequest req = b.timeout(timeout).build();
        try {
            return http.get().send(req, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new SouthboundException("SMux " + smuxId + " unreachable at " + req.uri() + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SouthboundException("interrupted talking to SMux " + smuxId, e);
        }
    }
}
