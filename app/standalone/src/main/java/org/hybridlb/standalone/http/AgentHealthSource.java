package org.hybridlb.standalone.http;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import org.hybridlb.app.core.health.AgentHealth;
import org.hybridlb.app.core.port.EventSink;
import org.hybridlb.app.core.port.HealthSource;
import org.hybridlb.standalone.Fabric;

/**
 * DIP health from the host agents listed in fabric.json ({@code hosts.<id>.agentUrl}), by the
 * core's {@link AgentHealth} rules, every agent asked in parallel every interval.
 */
public final class AgentHealthSource implements HealthSource, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(AgentHealthSource.class.getName());

    private final Map<String, String> agents = new LinkedHashMap<>(); // dip -> agent base URL
    private final AgentHealth health;
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "hybridlb-health");
        t.setDaemon(true);
        return t;
    });

    /** {@code mgmt}: the management plane's client (TLS to {@code https://} agents). */
    public AgentHealthSource(Fabric fabric, long timeoutMillis, java.net.http.HttpClient mgmt) {
        for (Fabric.HostInfo h : fabric.hosts.values()) {
            if (h.agentUrl != null) {
                agents.put(h.ip, h.agentUrl);
            }
        }
        this.health = new AgentHealth(() -> agents, AgentHealth.httpProbe(Duration.ofMillis(timeoutMillis), () -> mgmt));
    }

    public void start(Duration interval) {
        if (agents.isEmpty()) {
            LOG.info("no host agent in the fabric: every DIP counts as healthy");
            return;
        }
        health.poll();
        long ms = interval.toMillis();
        poller.scheduleWithFixedDelay(health::poll, ms, ms, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        poller.shutdownNow();
    }

    @Override
    public Set<String> unhealthyDips() {
        return health.unhealthyDips();
    }

    @Override
    public void subscribe(EventSink sink) {
        health.subscribe(sink);
    }
}
