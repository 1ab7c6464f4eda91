package org.hybridlb.app.onos;

import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.hybridlb.app.core.ApiException;
import org.hybridlb.app.core.Controller;
import org.hybridlb.app.core.ControllerConfig;
import org.hybridlb.app.core.HybridlbApi;
import org.hybridlb.app.core.health.AgentHealth;
import org.hybridlb.app.core.port.EventSink;
import org.hybridlb.app.core.port.Ports;
import org.hybridlb.app.core.port.TopologySource;
import org.hybridlb.app.core.smux.SmuxHttpClient;
import org.hybridlb.app.core.stats.HostAgentStats;
import org.hybridlb.app.onos.fabric.ConsistentMapStateStore;
import org.hybridlb.app.onos.fabric.FabricBuilder;
import org.hybridlb.app.onos.fabric.FabricView;
import org.hybridlb.app.onos.fabric.OnosHmuxProgrammer;
import org.hybridlb.app.onos.fabric.OnosRouteSource;
import org.hybridlb.app.onos.fabric.OnosStatsSource;
import org.hybridlb.app.onos.fabric.OvsDefaultSelection;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.solver.model.Topology;
import org.onosproject.cluster.ClusterService;
import org.onosproject.cluster.Leadership;
import org.onosproject.cluster.LeadershipEvent;
import org.onosproject.cluster.LeadershipEventListener;
import org.onosproject.cluster.LeadershipService;
import org.onosproject.cluster.NodeId;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.CoreService;
import org.onosproject.net.DeviceId;
import org.onosproject.net.config.ConfigFactory;
import org.onosproject.net.config.InvalidFieldException;
import org.onosproject.net.config.NetworkConfigEvent;
import org.onosproject.net.config.NetworkConfigListener;
import org.onosproject.net.config.NetworkConfigRegistry;
import org.onosproject.net.config.basics.SubjectFactories;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.net.device.DeviceListener;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.driver.DriverService;
import org.onosproject.net.flow.FlowRuleService;
import org.onosproject.net.group.GroupService;
import org.onosproject.net.host.HostEvent;
import org.onosproject.net.host.HostListener;
import org.onosproject.net.host.HostService;
import org.onosproject.net.link.LinkEvent;
import org.onosproject.net.link.LinkListener;
import org.onosproject.net.link.LinkService;
import org.onosproject.net.topology.TopologyService;
import org.onosproject.routeservice.RouteService;
import org.onlab.util.KryoNamespace;
import org.onosproject.store.service.ConsistentMap;
import org.onosproject.store.service.Serializer;
import org.onosproject.store.service.StorageService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * hybridlb in ONOS: builds the core's {@link Controller} on adapters to the ONOS services, feeds it
 * device, link, route and netcfg events, and undoes everything on deactivation (listeners, the
 * controller thread, every flow rule and group of the app).
 */
@Component(immediate = true, service = HybridlbService.class)
public class HybridlbManager implements HybridlbService {
    public static final String APP_NAME = "org.hybridlb.app";
    static final String STATE_MAP = "hybridlb-state";
    static final String RECORDS_MAP = "hybridlb-programmed";
    /** How long one device write may take before the wave is rolled back. */
    static final long DEVICE_TIMEOUT_MILLIS = 5000;
    static final Duration SMUX_TIMEOUT = Duration.ofSeconds(2);
    static final long STATS_PERIOD_SECONDS = 10;
    static final long HEALTH_PERIOD_MILLIS = 2000;
    static final Duration AGENT_TIMEOUT = Duration.ofSeconds(1);
    /** Only the leader of this topic runs the controller loop and programs the fabric. */
    static final String LEADERSHIP_TOPIC = APP_NAME;

    /** Both maps hold JSON text only. */
    private static final Serializer STRINGS =
            Serializer.using(KryoNamespace.newBuilder().register(String.class).build("hybridlb"));

    private final Logger log = LoggerFactory.getLogger(getClass());

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected CoreService coreService;
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected NetworkConfigRegistry netcfg;
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DeviceService deviceService;
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected LinkService linkService;
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected HostService hostService;
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected TopologyService topologyService;
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected FlowRuleService flowRuleService;
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected GroupService groupService;
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DriverService driverService;
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected RouteService routeService;
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected StorageService storageService;
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected LeadershipService leadershipService;
    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ClusterService clusterService;

    /** Tests replace the SMux HTTP client with an in-memory fake. */
    SmuxControl smuxControl;
    ControllerConfig controllerConfig = ControllerConfig.defaults();
    /** Flow-statistics sampling period; zero disables it (tests feed traffic themselves). */
    long statsPeriodSeconds = STATS_PERIOD_SECONDS;
    /** Host agent polling period; zero disables it (tests poll themselves). */
    long healthPeriodMillis = HEALTH_PERIOD_MILLIS;
    /** Tests replace the host agents' per-DIP rates (VIP -> DIP -> bytes/s). */
    java.util.function.Supplier<java.util.Map<String, java.util.Map<String, Double>>> agentRates;
    /** Tests replace the HTTP probe of the host agents. */
    java.util.function.Function<java.net.URI, java.util.concurrent.CompletableFuture<Integer>> agentProbe;

    private final ConfigFactory<org.onosproject.core.ApplicationId, HybridlbConfig> configFactory =
            new ConfigFactory<>(SubjectFactories.APP_SUBJECT_FACTORY, HybridlbConfig.class, HybridlbConfig.KEY) {
                @Override
                public HybridlbConfig createConfig() {
                    return new HybridlbConfig();
                }
            };
    private final NetworkConfigListener configListener = new InternalConfigListener();
    private final DeviceListener deviceListener = new InternalDeviceListener();
    private final LinkListener linkListener = new InternalLinkListener();
    private final HostListener hostListener = new InternalHostListener();
    private final LeadershipEventListener leadershipListener = new InternalLeadershipListener();

    private ApplicationId appId;
    private volatile HybridlbConfig config;
    private volatile FabricView fabric = FabricView.EMPTY;
    private final Object fabricLock = new Object();
    private volatile String lastConfigError;
    private volatile EventSink sink;
    private OnosHmuxProgrammer programmer;
    private OnosRouteSource routeSource;
    private OnosStatsSource statsSource;
    private AgentHealth healthSource;
    /** The running controller loop: only on the leader, null on the other instances. */
    private volatile Controller controller;
    private volatile NodeId leader;
    private ConsistentMap<String, String> stateMap;
    private SmuxControl smux;
    private ScheduledExecutorService statsTimer;

    @Activate
    protected void activate() {
        appId = coreService.registerApplication(APP_NAME);
        netcfg.registerConfigFactory(configFactory);
        HybridlbConfig initial = netcfg.getConfig(appId, HybridlbConfig.class);
        if (initial != null && accept(initial) == null) {
            config = initial;
        }
        rebuildFabric();

        stateMap = storageService.<String, String>consistentMapBuilder()
                .withName(STATE_MAP).withSerializer(STRINGS).build();
        ConsistentMap<String, String> records = storageService.<String, String>consistentMapBuilder()
                .withName(RECORDS_MAP).withSerializer(STRINGS).build();
        programmer = new OnosHmuxProgrammer(appId, flowRuleService, groupService, deviceService, topologyService,
                hostService, driverService, () -> fabric, records.asJavaMap(), DEVICE_TIMEOUT_MILLIS,
                () -> config != null && config.fastFailover());
        routeSource = new OnosRouteSource(routeService, () -> fabric);
        // The SMuxes pick DIPs as OVS does for the OpenFlow 1.3 select groups ONOS programs (dp_hash),
        // so an HMux's connections keep their DIP when its VIPs fall back to the SMuxes.
        OvsDefaultSelection tables = new OvsDefaultSelection(smuxControl != null ? smuxControl
                : new SmuxHttpClient(this::controlUrl, SMUX_TIMEOUT));
        smux = tables;
        statsSource = new OnosStatsSource(appId, flowRuleService, deviceService::isAvailable, () -> fabric, tables,
                agentRates != null ? agentRates : new HostAgentStats(this::agentUrls, AGENT_TIMEOUT)::rates,
                Duration.ofSeconds(statsPeriodSeconds > 0 ? statsPeriodSeconds : STATS_PERIOD_SECONDS));
        healthSource = new AgentHealth(this::agentUrls,
                agentProbe != null ? agentProbe : AgentHealth.httpProbe(AGENT_TIMEOUT));
        netcfg.addListener(configListener);
        leadershipService.addListener(leadershipListener);
        Leadership l = leadershipService.runForLeadership(LEADERSHIP_TOPIC);
        leadershipChanged(l == null ? null : l.leaderNodeId());
        log.info("Started {} (leader: {})", appId.name(), leader);
    }

    /** Starts the controller loop when this instance becomes the leader, stops it when it no longer is. */
    synchronized void leadershipChanged(NodeId now) {
        leader = now;
        boolean mine = now != null && now.equals(clusterService.getLocalNode().id());
        if (mine && controller == null) {
            startLoop();
            log.info("{}: this instance leads; the controller loop runs here", appId.name());
        } else if (!mine && controller != null) {
            stopLoop();
            log.info("{}: leadership moved to {}; the controller loop stops here", appId.name(), now);
        }
    }

    /** The controller from the shared state (ConsistentMap): a new leader resumes where the last one was. */
    private void startLoop() {
        Controller c = new Controller(controllerConfig, new Ports(new Topology(),
                programmer, smux, routeSource, statsSource, healthSource, new ConsistentMapStateStore(stateMap)));
        controller = c;
        deviceService.addListener(deviceListener);
        linkService.addListener(linkListener);
        hostService.addListener(hostListener);
        routeService.addListener(routeSource);
        c.start();
        if (config != null && config.hasVips()) {
            applyVips(config);
        }
        statsTimer = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "hybridlb-stats"));
        if (statsPeriodSeconds > 0) {
            statsTimer.scheduleAtFixedRate(this::sampleStats, 0, statsPeriodSeconds, TimeUnit.SECONDS);
        }
        if (healthPeriodMillis > 0) {
            statsTimer.scheduleWithFixedDelay(this::pollHealth, 0, healthPeriodMillis, TimeUnit.MILLISECONDS);
        }
    }

    private void pollHealth() {
        try {
            healthSource.poll();
        } catch (RuntimeException e) {
            log.warn("host agent health poll failed", e);
        }
    }

    /** DIP -> host agent URL, from the network configuration (hosts with {@code agentUrl}). */
    private java.util.Map<String, String> agentUrls() {
        HybridlbConfig c = config;
        return c == null ? java.util.Map.of() : c.agentUrls();
    }

    /** Stops the loop without touching the devices (the next leader takes them over as they are). */
    private void stopLoop() {
        routeService.removeListener(routeSource);
        hostService.removeListener(hostListener);
        linkService.removeListener(linkListener);
        deviceService.removeListener(deviceListener);
        statsTimer.shutdownNow();
        Controller c = controller;
        controller = null;
        sink = null;
        c.close();
    }

    @Deactivate
    protected void deactivate() {
        stop();
        programmer.removeAll();
        log.info("Stopped {}: flow rules and groups removed", appId.name());
    }

    /** Everything deactivation does except clearing the devices (an instance that goes away). */
    void deactivateKeepingRules() {
        stop();
    }

    private void stop() {
        netcfg.removeListener(configListener);
        leadershipService.removeListener(leadershipListener);
        synchronized (this) {
            if (controller != null) {
                stopLoop();
            }
        }
        // after the loop stopped: the next leader must never run alongside this one
        leadershipService.withdraw(LEADERSHIP_TOPIC);
        netcfg.unregisterConfigFactory(configFactory);
    }

    /** The controller on the leader; elsewhere every call answers 503 naming the leader. */
    @Override
    public HybridlbApi api() {
        Controller c = controller;
        return c != null ? c : notLeader();
    }

    private HybridlbApi notLeader() {
        return (HybridlbApi) java.lang.reflect.Proxy.newProxyInstance(HybridlbApi.class.getClassLoader(),
                new Class<?>[] {HybridlbApi.class}, (proxy, method, args) -> {
                    if (method.getDeclaringClass() == Object.class) {
                        return "toString".equals(method.getName()) ? "hybridlb standby"
                                : "hashCode".equals(method.getName()) ? 0 : proxy == args[0];
                    }
                    throw new ApiException(503, "not leader", null, "this ONOS instance is not the hybridlb "
                            + "leader; ask the leader " + leader);
                });
    }

    /** The leader, or null while there is none. */
    NodeId leader() {
        return leader;
    }

    private void reconcile(String why) {
        Controller c = controller;
        if (c != null) {
            c.requestReconcile(why);
        }
    }

    @Override
    public Set<String> switchIds() {
        return new TreeSet<>(fabric.switches().keySet());
    }

    @Override
    public Set<String> smuxIds() {
        return new TreeSet<>(fabric.smuxes().keySet());
    }

    @Override
    public String lastConfigError() {
        return lastConfigError;
    }

    /** The controller, for tests that wait for it to settle. */
    Controller controller() {
        return controller;
    }

    AgentHealth healthSource() {
        return healthSource;
    }

    OnosStatsSource statsSource() {
        return statsSource;
    }

    /** The fabric as the core sees it now (tests). */
    FabricView fabricView() {
        return fabric;
    }

    OnosHmuxProgrammer programmer() {
        return programmer;
    }

    /** The topology source: the fabric snapshot, re-read by the controller on every reconcile. */
    private final class Topology implements TopologySource {
        @Override
        public org.hybridlb.solver.model.Topology topology() {
            return fabric.topology();
        }

        @Override
        public Set<String> downSwitches() {
            Set<String> down = new TreeSet<>();
            for (FabricView.SwitchSpec s : fabric.switches().values()) {
                if (!deviceService.isAvailable(s.device)) {
                    down.add(s.sw.id);
                }
            }
            return down;
        }

        @Override
        public void subscribe(EventSink s) {
            sink = s;
        }
    }

    private String controlUrl(String smuxId) {
        HybridlbConfig c = config;
        if (c == null) {
            return null;
        }
        for (HybridlbConfig.SmuxConfig s : c.smuxes()) {
            if (s.smux.id.equals(smuxId)) {
                return s.controlUrl;
            }
        }
        return null;
    }

    private void rebuildFabric() {
        synchronized (fabricLock) {   // listeners run on several threads; each build starts from the last
            fabric = FabricBuilder.build(config, deviceService, linkService, hostService, fabric);
        }
    }

    private void sampleStats() {
        try {
            if (statsSource.sample(System.currentTimeMillis()) != null && sink != null) {
                sink.trafficMeasured(statsSource.lastInterval());
            }
        } catch (RuntimeException e) {
            log.warn("stats sample failed", e);
        }
    }

    /** Checks a configuration: its own fields, then that every configured device exists. Null: fine. */
    private String accept(HybridlbConfig c) {
        try {
            c.isValid();
        } catch (InvalidFieldException e) {
            return "invalid hybridlb config: field " + e.field() + ": " + e.reason();
        } catch (RuntimeException e) {
            return "invalid hybridlb config: " + e.getMessage();
        }
        for (DeviceId d : c.devices().keySet()) {
            if (deviceService.getDevice(d) == null) {
                return "invalid hybridlb config: field /switches/" + d + ": unknown device";
            }
        }
        return null;
    }

    /** A new configuration: validated, then applied through the controller (which plans the migration). */
    void configChanged(HybridlbConfig c) {
        String error = accept(c);
        if (error != null) {
            refuse(error);
            return;
        }
        HybridlbConfig previous = config;
        FabricView previousFabric = fabric;
        config = c;
        rebuildFabric();
        if (c.hasVips() && controller != null && !applyVips(c)) {
            config = previous;
            fabric = previousFabric;
            return;
        }
        lastConfigError = null;
        reconcile("network configuration changed");
    }

    private boolean applyVips(HybridlbConfig c) {
        try {
            controller.replaceVips(c.vipsBody());   // the leader only (callers check)
            return true;
        } catch (ApiException e) {
            refuse("invalid hybridlb config: field /vips" + (e.field == null || "/".equals(e.field) ? "" : e.field)
                    + ": " + e.reason);
            return false;
        } catch (InvalidFieldException e) {
            refuse("invalid hybridlb config: field " + e.field() + ": " + e.reason());
            return false;
        }
    }

    private void refuse(String error) {
        lastConfigError = error;
        log.error("{}; configuration not applied, the previous one stays", error);
    }

    private final class InternalConfigListener implements NetworkConfigListener {
        @Override
        public boolean isRelevant(NetworkConfigEvent event) {
            return event.configClass() == HybridlbConfig.class;
        }

        @Override
        public void event(NetworkConfigEvent event) {
            switch (event.type()) {
                case CONFIG_ADDED:
                case CONFIG_UPDATED:
                    event.config().ifPresent(c -> configChanged((HybridlbConfig) c));
                    break;
                case CONFIG_REMOVED:
                    config = null;
                    rebuildFabric();
                    reconcile("network configuration removed");
                    break;
                default:
                    break;
            }
        }
    }

    private final class InternalDeviceListener implements DeviceListener {
        @Override
        public void event(DeviceEvent event) {
            DeviceId d = event.subject().id();
            switch (event.type()) {
                case DEVICE_ADDED:
                case DEVICE_UPDATED:
                    rebuildFabric();
                    deviceAvailability(d);
                    break;
                case DEVICE_AVAILABILITY_CHANGED:
                    rebuildFabric();   // multi-homed hosts hang off an available location
                    deviceAvailability(d);
                    break;
                case DEVICE_REMOVED:
                    fabric.byDevice(d).ifPresent(s -> notifySink(s.sw.id, false));
                    break;
                case PORT_UPDATED:
                case PORT_ADDED:
                case PORT_REMOVED:
                    programmer.refreshPaths();
                    reconcile("port change on " + d);
                    break;
                default:
                    break;
            }
        }

        private void deviceAvailability(DeviceId d) {
            fabric.byDevice(d).ifPresent(s -> notifySink(s.sw.id, deviceService.isAvailable(d)));
        }
    }

    private void notifySink(String switchId, boolean up) {
        EventSink s = sink;
        if (s == null) {
            return;
        }
        if (up) {
            s.switchUp(switchId);
        } else {
            s.switchDown(switchId);
        }
    }

    private final class InternalLinkListener implements LinkListener {
        @Override
        public void event(LinkEvent event) {
            rebuildFabric();
            programmer.refreshPaths();
            reconcile("link " + event.type() + " " + event.subject().src() + "-"
                    + event.subject().dst());
        }
    }

    /** A host learned, moved or forgotten: DIPs' attachment switches follow it. */
    private final class InternalHostListener implements HostListener {
        @Override
        public void event(HostEvent event) {
            java.util.List<org.hybridlb.solver.model.Host> before = fabric.topology().hosts;
            rebuildFabric();
            if (!sameHosts(before, fabric.topology().hosts)) {
                reconcile("host " + event.type() + " " + event.subject().id());
            }
        }
    }

    private static boolean sameHosts(java.util.List<org.hybridlb.solver.model.Host> a,
                                     java.util.List<org.hybridlb.solver.model.Host> b) {
        java.util.Map<String, String> x = new java.util.HashMap<>();
        a.forEach(h -> x.put(h.ip, h.tor));
        java.util.Map<String, String> y = new java.util.HashMap<>();
        b.forEach(h -> y.put(h.ip, h.tor));
        return x.equals(y);
    }

    private final class InternalLeadershipListener implements LeadershipEventListener {
        @Override
        public boolean isRelevant(LeadershipEvent event) {
            return LEADERSHIP_TOPIC.equals(event.subject().topic());
        }

        @Override
        public void event(LeadershipEvent event) {
            switch (event.type()) {
                case LEADER_CHANGED:
                case LEADER_AND_CANDIDATES_CHANGED:
                    leadershipChanged(event.subject().leaderNodeId());
                    break;
                default:
                    break;
            }
        }
    }
}
