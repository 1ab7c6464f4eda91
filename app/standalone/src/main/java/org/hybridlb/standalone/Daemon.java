package org.hybridlb.standalone;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.util.logging.Logger;
import org.glassfish.jersey.jdkhttp.JdkHttpServerFactory;
import org.glassfish.jersey.CommonProperties;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.server.ServerProperties;
import org.hybridlb.app.core.ApiException;
import org.hybridlb.app.core.Controller;
import org.hybridlb.app.core.ControllerConfig;
import org.hybridlb.app.core.StateUnreadableException;
import org.hybridlb.app.core.port.HealthSource;
import org.hybridlb.app.core.port.Ports;
import org.hybridlb.app.core.port.RouteSource;
import org.hybridlb.app.core.port.StatsSource;
import org.hybridlb.app.core.rest.HybridlbRestApplication;
import org.hybridlb.app.core.smux.SmuxHttpClient;
import org.hybridlb.app.core.store.FileStateStore;
import org.hybridlb.standalone.frr.FrrRouteSource;
import org.hybridlb.standalone.http.AgentHealthSource;
import org.hybridlb.standalone.ovs.Ovs;
import org.hybridlb.standalone.ovs.OvsHmuxProgrammer;
import org.hybridlb.standalone.ovs.OvsTopologySource;

/** hybridlbd: the controller core wired to OVS, the SMuxes, FRR and the host agents, with its REST API on HTTP. */
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
    public final OvsHmuxProgrammer hmux;
    public final SmuxHttpClient smux;
    public final Controller controller;
    private final FrrRouteSource frr;
    private final AgentHealthSource agents;
    private final TrafficStats stats;
    private HttpServer server;
    private java.util.concurrent.Future<HttpServer> pendingHttp;

    public Daemon(DaemonConfig config, Overrides overrides) {
        this.config = config;
        this.fabric = Fabric.load(config.fabric);
        this.ovs = new Ovs(fabric.ovsRundir, config.commandTimeoutMillis);
        this.topology = new OvsTopologySource(fabric, ovs);
        this.hmux = new OvsHmuxProgrammer(fabric, ovs, topology::downSwitches);
        topology.onSwitchDown(hmux::fastWithdraw);
        this.smux = new SmuxHttpClient(id -> fabric.smuxes.containsKey(id) ? fabric.smuxes.get(id).controlUrl : null,
                java.time.Duration.ofMillis(config.httpTimeoutMillis));
        this.frr = overrides.routes == null ? new FrrRouteSource(fabric, config.commandTimeoutMillis) : null;
        this.agents = overrides.health == null ? new AgentHealthSource(fabric, config.httpTimeoutMillis) : null;
        this.stats = overrides.stats == null
                ? TrafficStats.of(fabric, ovs, smux, topology::downSwitches, config.statsInterval,
                        java.time.Duration.ofMillis(config.httpTimeoutMillis)) : null;
        Ports ports = new Ports(topology, hmux, smux, frr != null ? frr : overrides.routes,
                stats != null ? stats : overrides.stats, agents != null ? agents : overrides.health,
                new FileStateStore(config.stateDir.resolve("state.json")));
        ControllerConfig cc = ControllerConfig.defaults().withInterval(config.reconcileInterval)
                .withAlgorithm(config.algorithm).withSmuxEncap(config.smuxEncap)
                .withPoolGrowthHoldMax(config.poolGrowthHoldMax).withRepairInterval(config.repairInterval);
        this.controller = new Controller(cc, ports);
    }

    /** Starts the sources, the controller (repairing the fabric to the stored state) and the HTTP server. */
    public Daemon start() {
        // Jersey's start-up is seconds of CPU on a busy machine: do it while the controller starts.
        // The socket is bound now but answers only once the controller runs (and the VIP file is loaded).
        java.util.concurrent.FutureTask<HttpServer> http = new java.util.concurrent.FutureTask<>(this::createServer);
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
        LOG.info("hybridlbd serving the REST API on " + url() + " (fabric " + fabric.name + ": "
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

    private HttpServer createServer() {
        InetSocketAddress a = config.listen;
        URI base = URI.create("http://" + a.getHostString() + ":" + a.getPort() + "/");
        ResourceConfig rc = ResourceConfig.forApplication(new HybridlbRestApplication(controller));
        // nothing to discover: the core's resources encode their own JSON (faster start, no warnings)
        rc.property(ServerProperties.WADL_FEATURE_DISABLE, true);
        rc.property(CommonProperties.FEATURE_AUTO_DISCOVERY_DISABLE, true);
        rc.property(CommonProperties.METAINF_SERVICES_LOOKUP_DISABLE, true);
        return JdkHttpServerFactory.createHttpServer(base, rc, false);
    }

    /** The REST API's base URL (with the port actually bound). */
    public String url() {
        InetSocketAddress b = server.getAddress();
        return "http://" + config.listen.getHostString() + ":" + b.getPort();
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
            server.stop(0);
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
        LOG.info("hybridlbd stopped");
    }
}
