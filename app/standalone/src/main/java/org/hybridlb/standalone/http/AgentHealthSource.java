package org.hybridlb.standalone.http;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import org.hybridlb.app.core.port.EventSink;
import org.hybridlb.app.core.port.HealthSource;
import org.hybridlb.standalone.Fabric;

/**
 * DIP health from the host agents: {@code GET <agentUrl>/dip-health} answers 200 (healthy) or 503.
 * The DIP is the host's address. An agent that does not answer for {@link #FALL} polls in a row
 * counts as unhealthy (the host is gone); one 200 makes it healthy again. All agents are asked in
 * parallel every interval.
 */
public final class AgentHealthSource implements HealthSource, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(AgentHealthSource.class.getName());
    static final int FALL = 2;

    private final Map<String, URI> agents = new LinkedHashMap<>(); // dip -> URL
    private final HttpClient http;
    private final Duration timeout;
    private final Map<String, Integer> failures = new HashMap<>();
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "hybridlb-health");
        t.setDaemon(true);
        return t;
    });
    private volatile Set<String> unhealthy = Set.of();
    private volatile EventSink sink;

    public AgentHealthSource(Fabric fabric, long timeoutMillis) {
        for (Fabric.HostInfo h : fabric.hosts.values()) {
            if (h.agentUrl != null) {
                agents.put(h.ip, URI.create(h.agentUrl.replaceAll("/+$", "") + "/dip-health"));
            }
        }
        this.timeout = Duration.ofMillis(timeoutMillis);
        this.http = HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).build();
    }

    public void start(Duration interval) {
        if (agents.isEmpty()) {
            LOG.info("no host agent in the fabric: every DIP counts as healthy");
            return;
        }
        poll();
        long ms = interval.toMillis();
        poller.scheduleWithFixedDelay(this::poll, ms, ms, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        poller.shutdownNow();
    }

    @Override
    public Set<String> unhealthyDips() {
        return unhealthy;
    }

    @Override
    public void subscribe(EventSink sink) {
        this.sink = sink;
    }

    void poll() {
        Map<String, CompletableFuture<Integer>> asks = new LinkedHashMap<>();
        agents.forEach((dip, uri) -> asks.put(dip, http.sendAsync(HttpRequest.newBuilder(uri).timeout(timeout).GET().build(),
                HttpResponse.BodyHandlers.discarding()).thenApply(HttpResponse::statusCode).exceptionally(e -> -1)));
        Set<String> now = new TreeSet<>();
        for (Map.Entry<String, CompletableFuture<Integer>> e : asks.entrySet()) {
            String dip = e.getKey();
            int code = e.getValue().join();
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
        }
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
