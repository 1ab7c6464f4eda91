package org.hybridlb.app.core.stats;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.tls.TlsFiles;

/**
 * Per-DIP rates from the host agents (smux/agent): {@code GET <agentUrl>/stats} answers the bytes/s
 * each VIP's traffic is decapsulated at on that host ({@code vips.<vip>.bytes_per_s}; the DIP is
 * its {@code dip}, else the host's address). Agents are asked in parallel; one that does not answer
 * reports nothing this time.
 */
public final class HostAgentStats {
    private final Supplier<Map<String, String>> agents;
    private final Duration timeout;
    private final Supplier<HttpClient> http;

    /** {@code agents}: DIP (host address) -> its agent's base URL. Plain HTTP. */
    public HostAgentStats(Supplier<Map<String, String>> agents, Duration timeout) {
        this(agents, timeout, TlsFiles.plain(timeout));
    }

    /** {@code http}: the management plane's client, asked on every poll (it follows the TLS settings). */
    public HostAgentStats(Supplier<Map<String, String>> agents, Duration timeout, Supplier<HttpClient> http) {
        this.agents = agents;
        this.timeout = timeout;
        this.http = http;
    }

    /** VIP -> DIP -> bytes/s, over every agent that answered. */
    public Map<String, Map<String, Double>> rates() {
        List<CompletableFuture<Map<String, Map<String, Double>>>> asked = new ArrayList<>();
        HttpClient client = http.get();
        agents.get().forEach((dip, url) -> asked.add(client.sendAsync(
                HttpRequest.newBuilder(URI.create(url.replaceAll("/+$", "") + "/stats")).timeout(timeout).GET().build(),
                HttpResponse.BodyHandlers.ofString())
                .thenApply(r -> r.statusCode() == 200 ? parse(dip, r.body()) : Map.<String, Map<String, Double>>of())
                .exceptionally(e -> Map.of())));
        Map<String, Map<String, Double>> out = new TreeMap<>();
        for (CompletableFuture<Map<String, Map<String, Double>>> f : asked) {
            f.join().forEach((vip, byDip) -> byDip.forEach((d, bps) ->
                    out.computeIfAbsent(vip, v -> new TreeMap<>()).merge(d, bps, Double::sum)));
        }
        return out;
    }

    /** One agent's answer: VIP -> DIP -> bytes/s (positive rates only). */
    static Map<String, Map<String, Double>> parse(String hostDip, String body) {
        Map<String, Map<String, Double>> out = new TreeMap<>();
        JsonNode root = Json.read(body, JsonNode.class);
        JsonNode d = root.get("dip");
        String dip = d != null && d.isTextual() ? d.asText() : hostDip;
        for (Iterator<Map.Entry<String, JsonNode>> it = root.path("vips").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            double bps = e.getValue().path("bytes_per_s").asDouble(0);
            if (bps > 0) {
                out.computeIfAbsent(e.getKey(), v -> new TreeMap<>()).put(dip, bps);
            }
        }
        return out;
    }
}
