package org.hybridlb.app.core.health;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.logging.Logger;
import org.hybridlb.app.core.port.EventSink;
import org.hybridlb.app.core.port.HealthSource;
import org.hybridlb.app.core.tls.TlsFiles;

/**
 * DIP health from the host agents (smux/agent): {@code GET <agentUrl>/dip-health} answers 200
 * (healthy) or 503 (the local service fails its probe). The DIP is the host's address. An agent that
 * does not answer for {@link #FALL} polls in a row counts as unhealthy (the host is gone); one 200
 * makes it healthy again. Hosts without an agent count as healthy. The hosts (hybridlbd, the ONOS
 * app) give it the agents and decide when to {@link #poll}.
 */
public final class AgentHealth implements HealthSource {
    private static final Logger LOG = Logger.getLogger(AgentHealth.class.getName());
    static final int FALL = 2;

    private final Supplier<Map<String, String>> agents;   // dip -> agent base URL
    private final Function<URI, CompletableFuture<Integer>> probe;
    private final Map<String, Integer> failures = new HashMap<>();
    private volatile Set<String> unhealthy = Set.of();
    private volatile EventSink sink;

    /** {@code probe}: the status code of a GET, or -1 when the agent does not answer. */
    public AgentHealth(Supplier<Map<String, String>> agents, Function<URI, CompletableFuture<Integer>> probe) {
        this.agents = agents;
        this.probe = probe;
    }

    /** Probes over plain HTTP with {@code timeout}. */
    public static Function<URI, CompletableFuture<Integer>> httpProbe(Duration timeout) {
        return httpProbe(timeout, TlsFiles.plain(timeout));
    }

    /** Probes with the management plane's client {@code http} (asked on every probe: it follows the TLS settings). */
    public static Function<URI, CompletableFuture<Integer>> httpProbe(Duration timeout, Supplier<HttpClient> http) {
        return uri -> http.get().sendAsync(HttpRequest.newBuilder(uri).timeout(timeout).GET().build(),
                HttpResponse.BodyHandlers.discarding()).thenApply(HttpResponse::statusCode).exceptionally(e -> -1);
    }

    @Override
    public Set<String> unhealthyDips() {
        return unhealthy;
    }

    @Override
    public void subscribe(EventSink s) {
        sink = s;
    }

    /** Asks every agent once (in parallel) and reports the DIPs whose health changed. */
    public synchronized void poll() {
        Map<String, CompletableFuture<Integer>> asks = new HashMap<>();
        agents.get().forEach((dip, url) -> asks.put(dip, probe.apply(URI.create(url.replaceAll("/+$", "")
                + "/dip-health"))));
        failures.keySet().retainAll(asks.keySet());
        Set<String> now = new TreeSet<>();
        asks.forEach((dip, ask) -> {
            int code;
            try {
                code = ask.join();
            } catch (RuntimeException e) {
                code = -1;
            }
            if (code == 200) {
                failures.remove(dip);
            } else if (code == 503) {
                failures.put(dip, FALL);
            } else {
                failures.merge(dip, 1, Integer::sum);
            }
            if (failures.getOrDefault(dip, 0) >= FALL) {
                now.add(dip);
            }
        });
        Set<String> before = unhealthy;
        if (now.equals(before)) {
            return;
        }
        unhealthy = Set.copyOf(now);
        EventSink s = sink;
        for (String d : now) {
            if (!before.contains(d)) {
                LOG.warning("DIP " + d + " is unhealthy");
                if (s != null) {
                    s.dipHealthChanged(d, false);
                }
            }
        }
        for (String d : before) {
            if (!now.contains(d)) {
                LOG.info("DIP " + d + " is healthy again");
                if (s != null) {
                    s.dipHealthChanged(d, true);
                }
            }
        }
    }
}
