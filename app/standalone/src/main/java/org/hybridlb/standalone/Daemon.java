package org.hybridlb.standalone;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;
import org.hybridlb.app.core.ApiException;
import org.hybridlb.app.core.Controller;
import org.hybridlb.app.core.cheetah.AgentCookieClient;
import org.hybridlb.app.core.prism.HttpPrismFrontEnds;
import org.hybridlb.app.core.ControllerConfig;
import org.hybridlb.app.core.StateUnreadableException;
import org.hybridlb.app.core.port.HealthSource;
import org.hybridlb.app.core.port.Ports;
import org.hybridlb.app.core.port.RouteSource;
import org.hybridlb.app.core.port.StatsSource;
import org.hybridlb.app.core.rest.HybridlbRestApplication;
import org.hybridlb.app.core.prism.SmuxFabricPins;
import org.hybridlb.app.core.smux.SmuxHttpClient;
import org.hybridlb.app.core.store.FileStateStore;
import org.hybridlb.app.core.tls.TlsFiles;
import org.hybridlb.standalone.api.ApiServer;
import org.hybridlb.standalone.frr.FrrRouteSource;
import org.hybridlb.standalone.http.AgentHealthSource;
import org.hybridlb.standalone.ovs.Ovs;
import org.hybridlb.standalone.ovs.OvsHmuxSouthbound;
import org.hybridlb.standalone.ovs.OvsTopologySource;
import org.hybridlb.standalone.p4rt.P4rtHmuxSouthbound;

/** hybridlbd: the controller core wired to OVS, the SMuxes, FRR and the host agents, with its REST API on HTTP(S). */
public final class Daemon implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Daemon.class.getName());

    /** Sources a test (or another deployment) may replace; null: the daemon's own. */
    public static final class Overrides {
        public RouteSource routes;
        public StatsSource stats;
        public HealthSource health;
    }

    public final DaemonConfig config;
    public final Fabric fabric;
    public final Ovs ovs;
    public final OvsTopologySource topology;
    public final OvsHmuxSouthbound hmux;
    /** The fabric.json switches with a {@code "p4"} object. */
    public final P4rtHmuxSouthbound p4rt;
    public final SmuxHttpClient smux;
    public final Controller controller;
    private final FrrRouteSource frr;
    private final AgentHealthSource agents;
    private final TrafficStats stats;
    private ApiServer server;
    private java.util.concurrent.Future<ApiServer> pendingHttp;
    /** The server once built (on the start-up thread), and what {@link #serve} was given before. */
    private ApiServer built;
    private final List<java.util.Map.Entry<String, com.sun.net.httpserver.HttpHandler>> extraPaths = new ArrayList<>();

    public Daemon(DaemonConfig config, Overrides overrides) {
        this.config = config;
        this.fabric = Fabric.load(config.fabric);
        checkTlsFor(fabric, config);
        HttpClient mgmt = TlsFiles.client(config.access.clientTls, java.time.Duration.ofMillis(config.httpTimeoutMillis));
        this.ovs = new Ovs(fabric.ovsRundir, config.commandTimeoutMillis);
        this.topology = new OvsTopologySource(fabric, ovs);
        this.hmux = new OvsHmuxSouthbound(fabric, ovs, topology::downSwitches);
        topology.onSwitchDown(hmux::fastWithdraw);
        this.p4rt = new P4rtHmuxSouthbound(fabric);
        this.smux = new SmuxHttpClient(id -> fabric.smuxes.containsKey(id) ? fabric.smuxes.get(id).controlUrl : null,
                java.time.Duration.ofMillis(config.httpTimeoutMillis), () -> mgmt);
        this.frr = overrides.routes == null ? new FrrRouteSource(fabric, config.commandTimeoutMillis) : null;
        this.agents = overrides.health == null ? new AgentHealthSource(fabric, config.httpTimeoutMillis, mgmt) : null;
        this.stats = overrides.stats == null
                ? TrafficStats.of(fabric, ovs, smux, topology::downSwitches, config.statsInterval,
                        java.time.Duration.ofMillis(config.httpTimeoutMillis), mgmt) : null;
        java.util.Map<String, String> agentUrls = new java.util.TreeMap<>();
        fabric.hosts.values().stream().filter(h -> h.agentUrl != null).forEach(h -> agentUrls.put(h.ip, h.agentUrl));
        Ports ports = new Ports(topology, new HmuxSouthbounds(hmux, p4rt), smux, frr != null ? frr : overrides.routes,
                stats != null ? stats : overrides.stats, agents != null ? agents : overrides.health,
                new FileStateStore(config.stateDir.resolve("state.json")),
                new AgentCookieClient(() -> agentUrls, java.time.Duration.ofMillis(config.httpTimeoutMillis), () -> mgmt),
                new HttpPrismFrontEnds(java.time.Duration.ofMillis(config.httpTimeoutMillis), () -> mgmt),
                new SmuxFabricPins(smux, (frr != null ? frr : overrides.routes)::liveSmuxes, this::configuredVip));
        ControllerConfig cc = ControllerConfig.defaults().withInterval(config.reconcileInterval)
                .withAlgorithm(config.algorithm).withSmuxEncap(config.smuxEncap)
                .withPoolGrowthHoldMax(config.poolGrowthHoldMax).withRepairInterval(config.repairInterval)
                .withContractPinTime(config.contractPin);
        this.controller = new Controller(cc, ports);
    }

    /** A VIP's configuration, null when there is none (the names of Prism pins read back from the SMuxes). */
    private org.hybridlb.solver.model.Vip configuredVip(String vip) {
        try {
            return controller.vip(vip);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** Starts the sources, the controller (repairing the fabric to the stored state) and the HTTP server. */
    public Daemon start() {
        // Jersey's start-up is seconds of CPU on a busy machine: do it while the controller starts.
        // The socket is bound now but answers only once the controller runs (and the VIP file is loaded).
        java.util.concurrent.FutureTask<ApiServer> http = new java.util.concurrent.FutureTask<>(this::createServer);
        pendingHttp = http;
        Thread t = new Thread(http, "hybridlbd-http-init");
        t.setDaemon(true);
        t.start();
        boolean firstStart = !Files.exists(config.stateDir.resolve("state.json"));
        try {
            Files.createDirectories(config.stateDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create state directory " + config.stateDir, e);
        }
        topology.start(config.topologyInterval);
        if (frr != null) {
            frr.start(config.routesInterval);
        }
        if (agents != null) {
            agents.start(config.healthInterval);
        }
        if (stats != null) {
            stats.start();
        }
        long t0 = System.nanoTime();
        try {
            controller.start();
        } catch (StateUnreadableException | java.io.UncheckedIOException e) {
            close();
            throw new ConfigException(java.util.List.of(e.getMessage()));
        }
        LOG.info(String.format(java.util.Locale.ROOT, "controller started in %.0f ms (%s)", (System.nanoTime() - t0) / 1e6,
                firstStart ? "first start" : "state loaded from " + config.stateDir));
        if (firstStart && config.vips != null) {
            loadVipFile();
        }
        try {
            server = http.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            throw new IllegalStateException("interrupted while starting the HTTP server", e);
        } catch (java.util.concurrent.ExecutionException e) {
            close();
            Throwable c = e.getCause();
            throw c instanceof RuntimeException ? (RuntimeException) c : new IllegalStateException(c);
        }
        server.start();
        LOG.info("hybridlbd serving the REST API on " + url() + (config.access.tokens == null
                ? " without authentication" : " to the tokens of " + config.access.tokens.file()) + " (fabric " + fabric.name + ": "
                + fabric.switches.size() + " switches, " + fabric.smuxes.size() + " SMuxes; state in " + config.stateDir + ")");
        return this;
    }

    /**
     * The VIP file on first start: refused -> config error (exit 2); a busy controller (503, e.g.
     * a slow first repair on a loaded machine) is waited for, up to five minutes.
     */
    private void loadVipFile() {
        String body;
        try {
            body = Files.readString(config.vips);
        } catch (IOException e) {
            close();
            throw new ConfigException(java.util.List.of(config.vips + ": /: cannot read: " + e.getMessage()));
        }
        long end = System.nanoTime() + 300_000_000_000L;
        while (true) {
            try {
                int n = controller.replaceVips(body).size();
                LOG.info("loaded " + n + " VIPs from " + config.vips + " (first start)");
                return;
            } catch (ApiException e) {
                if (e.status == 503 && System.nanoTime() < end) {
                    LOG.warning("loading " + config.vips + ": " + e.reason + "; trying again");
                    continue;
                }
                close();
                throw new ConfigException(java.util.List.of(config.vips + ": " + (e.field == null ? "/" : e.field)
                        + ": " + e.reason));
            }
        }
    }

    private ApiServer createServer() {
        DaemonConfig.Access a = config.access;
        ApiServer s = new ApiServer(new ApiServer.Settings(config.listen, a.serverTls, a.tokens, a.maxBodyBytes,
                a.maxConcurrentRequests), new HybridlbRestApplication(controller, a.maxBodyBytes));
        synchronized (this) {
            built = s;
            extraPaths.forEach(e -> s.serve(e.getKey(), e.getValue()));
        }
        return s;
    }

    /**
     * Serves {@code handler} under {@code path} beside the REST API (metrics, pages), behind the same
     * TLS, tokens and bounds. May be called at any time.
     */
    public synchronized void serve(String path, com.sun.net.httpserver.HttpHandler handler) {
        if (built != null) {
            built.serve(path, handler);
        } else {
            extraPaths.add(java.util.Map.entry(path, handler));
        }
    }

    /** The REST API's base URL (with the port actually bound). */
    public String url() {
        return server.url();
    }

    /** An https:// SMux or host agent needs the daemon's identity (its writes are refused without one). */
    static void checkTlsFor(Fabric fabric, DaemonConfig config) {
        if (config.access.clientTls != null) {
            return;
        }
        List<String> problems = new ArrayList<>();
        fabric.smuxes.values().stream().filter(m -> m.controlUrl.startsWith("https:")).findFirst().ifPresent(m ->
                problems.add(config.file + ": /tls: missing, and SMux " + m.id + " of " + fabric.file + " is called at "
                        + m.controlUrl + ": HTTPS needs the daemon's identity (tls.keystore) and CA (tls.ca)"));
        fabric.hosts.values().stream().filter(h -> h.agentUrl != null && h.agentUrl.startsWith("https:")).findFirst()
                .ifPresent(h -> problems.add(config.file + ": /tls: missing, and the host agent of " + h.id + " of "
                        + fabric.file + " is called at " + h.agentUrl + ": HTTPS needs the daemon's identity "
                        + "(tls.keystore) and CA (tls.ca)"));
        if (!problems.isEmpty()) {
            throw new ConfigException(problems);
        }
    }

    @Override
    public void close() {
        if (server == null && pendingHttp != null) {
            try {
                server = pendingHttp.get(30, java.util.concurrent.TimeUnit.SECONDS); // release the bound socket
            } catch (Exception e) {
                // it never bound
            }
        }
        if (server != null) {
            server.close();
        }
        controller.close();
        if (stats != null) {
            stats.close();
        }
        if (agents != null) {
            agents.close();
        }
        if (frr != null) {
            frr.close();
        }
        topology.close();
        hmux.close();
        p4rt.close();
        LOG.info("hybridlbd stopped");
    }
}
