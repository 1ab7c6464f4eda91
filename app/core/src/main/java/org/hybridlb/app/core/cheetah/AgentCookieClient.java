package org.hybridlb.app.core.cheetah;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.port.HostCookieControl;
import org.hybridlb.app.core.port.SouthboundException;

/**
 * {@code PUT <agentUrl>/cookie} on the host agents, over the management plane's client (mutual
 * TLS where configured: the agent takes writes only from a client certificate of its CA). The
 * document holds keys: it is never logged, and errors quote only the agent's answer.
 */
public final class AgentCookieClient implements HostCookieControl {
    private final Supplier<Map<String, String>> agents;
    private final Duration timeout;
    private final Supplier<HttpClient> http;

    /** {@code agents}: host address -> its agent's base URL. */
    public AgentCookieClient(Supplier<Map<String, String>> agents, Duration timeout, Supplier<HttpClient> http) {
        this.agents = agents;
        this.timeout = timeout;
        this.http = http;
    }

    @Override
    public Set<String> hosts() {
        return agents.get().keySet();
    }

    @Override
    public Answer putCookies(String host, String document) {
        String base = agents.get().get(host);
        if (base == null) {
            throw new SouthboundException("host " + host + " has no agent URL");
        }
        HttpRequest req = HttpRequest.newBuilder(URI.create(base.replaceAll("/+$", "") + "/cookie"))
                .timeout(timeout).header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(document)).build();
        HttpResponse<String> r;
        try {
            r = http.get().send(req, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new SouthboundException("host agent " + host + " unreachable at " + req.uri() + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SouthboundException("interrupted talking to the host agent " + host, e);
        }
        if (r.statusCode() == 200) {
            return Answer.TAKEN;
        }
        if (r.statusCode() == 404 || r.statusCode() == 409) {
            return Answer.NO_COOKIES;
        }
        throw new SouthboundException("host agent " + host + " PUT /cookie: HTTP " + r.statusCode() + " " + error(r.body()));
    }

    private static String error(String body) {
        try {
            JsonNode n = Json.MAPPER.readTree(body);
            return n.path("error").asText(body);
        } catch (IOException | RuntimeException e) {
            return body.length() > 200 ? body.substring(0, 200) : body;
        }
    }
}
