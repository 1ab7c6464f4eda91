package org.hybridlb.app.onos;

import java.time.Duration;
import java.util.Map;
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
import org.hybridlb.app.core.metrics.ControllerMetrics;
import org.hybridlb.app.core.port.EventSink;
import org.hybridlb.app.core.port.Ports;
import org.hybridlb.app.core.smux.SmuxHttpClient;
import org.hybridlb.app.core.cheetah.AgentCookieClient;
import org.hybridlb.app.core.prism.HttpPrismFrontEnds;
import org.hybridlb.app.core.prism.SmuxFabricPins;
import org.hybridlb.app.core.stats.HostAgentStats;
import org.hybridlb.app.core.tls.TlsFiles;
import org.hybridlb.app.onos.fabric.ConsistentMapStateStore;
import org.hybridlb.app.onos.fabric.FabricTracker;
import org.hybridlb.app.onos.fabric.FabricView;
import org.hybridlb.app.onos.fabric.HmuxCapability;
import org.hybridlb.app.onos.fabric.OnosHmuxSouthbound;
import org.hybridlb.app.onos.fabric.P4Devices;
import org.hybridlb.app.onos.fabric.OnosRouteSource;
import org.hybridlb.app.onos.fabric.OnosStatsSource;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.onos.fabric.GroupConfirmation;
import org.onosproject.cfg.ComponentConfigService;
import org.onosproject.cluster.ClusterService;
import org.onosproject.cluster.Leadership;
import org.onosproject.cluster.LeadershipEvent;
import org.onosproject.cluster.LeadershipEventListener;
import org.onosproject.cluster.LeadershipService;
import org.onosproject.cluster.NodeId;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.CoreService;
import org.onosproject.net.config.ConfigFactory;
import org.onosproject.net.config.NetworkConfigEvent;
import org.onosproject.net.config.NetworkConfigListener;
import org.onosproject.net.config.NetworkConfigRegistry;
import org.onosproject.net.config.basics.SubjectFactories;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.driver.DriverService;
import org.onosproject.net.flow.FlowRuleService;
import org.onosproject.net.group.GroupService;
import org.onosproject.net.host.HostService;
import org.onosproject.net.link.LinkService;
import org.onosproject.net.pi.service.PiPipeconfService;
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
import org.osgi.service.component.annotations.ReferencePolicy;
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
    /**
     * How long ONOS may take to confirm a flow batch (device barrier) or to hold a group just
     * written in its store before the wave is rolled back. Never a wait for the group provider's
     * stats poll: see {@link GroupConfirmation}.
     */
    static final long DEVICE_TIMEOUT_MILLIS = 5000;
    static final Duration SMUX_TIMEOUT = Duration.ofSeconds(2);
    static final long STATS_PERIOD_SECONDS = 10;
    static final long HEALTH_PERIOD_MILLIS = 2000;
    static final Duration AGENT_TIMEOUT = Duration.ofSeconds(1);
    /** Only the leader of this topic runs the controller loop and programs the fabric. */
    static final String LEADERSHIP_TOPIC = APP_NAME;

    /** The state map holds JSON text only. */
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
    /** Where the OpenFlow group provider's poll interval is read (optional: its default without it). */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    protected volatile ComponentConfigService componentConfig;
    /** Which devices run a hybridlb P4 program (optional: an ONOS without P4 has none). */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    protected volatile PiPipeconfService pipeconfService;

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
    /** The SMux and host-agent clients' HTTP client, following the configuration's mgmtTls. */
    private java.util.function.Supplier<java.net.http.HttpClient> mgmt;
    /** Tests replace the host agents' cookie client. */
    org.hybridlb.app.core.port.HostCookieControl agentCookies;

    private final ConfigFactory<org.onosproject.core.ApplicationId, HybridlbConfig> configFactory =
            new ConfigFactory<>(SubjectFactories.APP_SUBJECT_FACTORY, HybridlbConfig.class, HybridlbConfig.KEY) {
                @Override
                public HybridlbConfig createConfig() {
                    return new HybridlbConfig();
                }
            };
    private final NetworkConfigListener configListener = new InternalConfigListener();
    private final LeadershipEventListener leadershipListener = new InternalLeadershipListener();
    private FabricListeners fabricListeners;
    /** The app's own threads for everything the listeners receive. */
    private EventHandoff handoff;
    /** Set at deactivation: queued leadership changes no longer start the loop. */
    private volatile boolean stopped;

    private ApplicationId appId;
    private NetworkConfig config;
    private FabricTracker fabric;
    private OnosHmuxSouthbound programmer;
    private GroupConfirmation groupConfirmation;
    private OnosRouteSource routeSource;
    private OnosStatsSource statsSource;
    private AgentHealth healthSource;
    /** The running controller loop: only on the leader, null on the other instances. */
    private volatile Controller controller;
    private volatile NodeId leader;
    private ConsistentMap<String, String> stateMap;
    /** For the component's lifetime: each controller this instance runs (as leader) reports to it. */
    private final ControllerMetrics metrics = new ControllerMetrics();
    private SmuxControl smux;
    private ScheduledExecutorService statsTimer;

    @Activate
    protected void activate() {
        stopped = false;
        handoff = new EventHandoff();
        appId = coreService.registerApplication(APP_NAME);
        netcfg.registerConfigFactory(configFactory);
        config = new NetworkConfig(deviceService, () -> fabric, () -> controller, this::reconcile);
        config.initial(netcfg.getConfig(appId, HybridlbConfig.class));
        // the SMux and host-agent clients follow the configuration's mgmtTls (null: plain)
        mgmt = TlsFiles.following(
                () -> java.util.Optional.ofNullable(config.get()).map(HybridlbConfig::mgmtTls).orElse(null), SMUX_TIMEOUT);
        P4Devices p4Devices = new PipeconfDevices(() -> pipeconfService, config::get);
        fabric = new FabricTracker(config::get, deviceService, linkService, hostService,
                new HmuxCapability(driverService, deviceService, p4Devices));
        fabric.rebuild();

        stateMap = storageService.<String, String>consistentMapBuilder()
                .withName(STATE_MAP).withSerializer(STRINGS).build();
        groupConfirmation = new GroupConfirmation(appId, GroupConfirmation.pollInterval(() -> componentConfig),
                System::currentTimeMillis);
        groupService.addListener(groupConfirmation);
        programmer = new OnosHmuxSouthbound(appId, flowRuleService, groupService, deviceService, topologyService,
                hostService, driverService, fabric::view, DEVICE_TIMEOUT_MILLIS, groupConfirmation,
                () -> config.get() != null && config.get().fastFailover(), p4Devices);
        routeSource = new OnosRouteSource(routeService, fabric::view);
        // the SMuxes hash each VIP as its HMux does: the core asks the southbound (its hash contract)
        smux = smuxControl != null ? smuxControl : new SmuxHttpClient(this::controlUrl, SMUX_TIMEOUT, mgmt);
        statsSource = new OnosStatsSource(appId, flowRuleService, deviceService::isAvailable, fabric::view, smux,
                agentRates != null ? agentRates : new HostAgentStats(this::agentUrls, AGENT_TIMEOUT, mgmt)::rates,
                Duration.ofSeconds(statsPeriodSeconds > 0 ? statsPeriodSeconds : STATS_PERIOD_SECONDS));
        healthSource = new AgentHealth(this::agentUrls,
                agentProbe != null ? agentProbe : AgentHealth.httpProbe(AGENT_TIMEOUT, mgmt));
        fabricListeners = new FabricListeners(handoff, fabric, deviceService, routeSource, this::refreshPaths,
                this::reconcile);
        netcfg.addListener(configListener);
        leadershipService.addListener(leadershipListener);
        Leadership l = leadershipService.runForLeadership(LEADERSHIP_TOPIC);
        leadershipChanged(l == null ? null : l.leaderNodeId());
        log.info("Started {} (leader: {})", appId.name(), leader);
    }

    /** Starts the controller loop when this instance becomes the leader, stops it when it no longer is. */
    synchronized void leadershipChanged(NodeId now) {
        if (stopped) {
            return;
        }
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
        Controller c = new Controller(controllerConfig, new Ports(fabric,
                programmer, smux, routeSource, statsSource, healthSource, new ConsistentMapStateStore(stateMap),
                agentCookies != null ? agentCookies : new AgentCookieClient(this::agentUrls, AGENT_TIMEOUT, mgmt),
                new HttpPrismFrontEnds(AGENT_TIMEOUT, mgmt),
                new SmuxFabricPins(smux, routeSource::liveSmuxes, this::configuredVip)),
                metrics);
        controller = c;
        fabricListeners.register(deviceService, linkService, hostService, routeService);
        c.start();
        config.applyVips(c);
        statsTimer = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "hybridlb-stats"));
        if (statsPeriodSeconds > 0) {
            statsTimer.scheduleAtFixedRate(this::sampleStats, 0, statsPeriodSeconds, TimeUnit.SECONDS);
        }
        if (healthPeriodMillis > 0) {
            statsTimer.scheduleWithFixedDelay(this::pollHealth, 0, healthPeriodMillis, TimeUnit.MILLISECONDS);
        }
    }

    /** A VIP's configuration, null when there is none or no loop runs (Prism pins read back from the SMuxes). */
    private org.hybridlb.solver.model.Vip configuredVip(String vip) {
        Controller c = controller;
        try {
            return c == null ? null : c.vip(vip);
        } catch (RuntimeException e) {
            return null;
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
        HybridlbConfig c = config.get();
        return c == null ? java.util.Map.of() : c.agentUrls();
    }

    /** Stops the loop without touching the devices (the next leader takes them over as they are). */
    private void stopLoop() {
        fabricListeners.unregister(deviceService, linkService, hostService, routeService);
        statsTimer.shutdownNow();
        Controller c = controller;
        controller = null;
        fabric.subscribe(null);
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
        stopped = true;
        netcfg.removeListener(configListener);
        leadershipService.removeListener(leadershipListener);
        handoff.shutdown();   // after this no event is handled: the loop can stop for good
        synchronized (this) {
            if (controller != null) {
                stopLoop();
            }
        }
        // after the loop stopped: the next leader must never run alongside this one
        leadershipService.withdraw(LEADERSHIP_TOPIC);
        groupService.removeListener(groupConfirmation);
        netcfg.unregisterConfigFactory(configFactory);
    }

    /** The controller on the leader; elsewhere every call answers 503 naming the leader. */
    @Override
    public HybridlbApi api() {
        Controller c = controller;
        return c != null ? c : notLeader();
    }

    @Override
    public ControllerMetrics metrics() {
        return metrics;
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
        return new TreeSet<>(fabric.view().switches().keySet());
    }

    @Override
    public Set<String> smuxIds() {
        return new TreeSet<>(fabric.view().smuxes().keySet());
    }

    @Override
    public Map<String, String> unfitForHmux() {
        return fabric.unfitForHmux();
    }

    @Override
    public String lastConfigError() {
        return config.lastError();
    }

    /** Waits until every event received so far has been handled (tests). */
    void awaitEvents(long timeoutMillis) {
        handoff.awaitIdle(timeoutMillis);
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
        return fabric.view();
    }

    OnosHmuxSouthbound programmer() {
        return programmer;
    }

    private String controlUrl(String smuxId) {
        HybridlbConfig c = config.get();
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

    private void sampleStats() {
        try {
            EventSink sink = fabric.sink();
            if (statsSource.sample(System.currentTimeMillis()) != null && sink != null) {
                sink.trafficMeasured(statsSource.lastInterval());
            }
        } catch (RuntimeException e) {
            log.warn("stats sample failed", e);
        }
    }

    // ---- ONOS events: each listener hands its event to the app's thread and returns (EventHandoff)

    private final class InternalConfigListener implements NetworkConfigListener {
        @Override
        public boolean isRelevant(NetworkConfigEvent event) {
            return event.configClass() == HybridlbConfig.class;
        }

        @Override
        public void event(NetworkConfigEvent event) {
            handoff.execute("netcfg " + event.type(), () -> config.event(event));
        }
    }

    /** Path refreshes write groups: only the leader's, on the path thread (FabricListeners). */
    private void refreshPaths() {
        OnosHmuxSouthbound p = programmer;
        if (controller != null) {
            p.refreshPaths();
        }
    }

    private final class InternalLeadershipListener implements LeadershipEventListener {
        @Override
        public boolean isRelevant(LeadershipEvent event) {
            return LEADERSHIP_TOPIC.equals(event.subject().topic());
        }

        @Override
        public void event(LeadershipEvent event) {
            if (event.type() == LeadershipEvent.Type.LEADER_CHANGED
                    || event.type() == LeadershipEvent.Type.LEADER_AND_CANDIDATES_CHANGED) {
                handoff.execute("leadership " + event.type(), () -> leadershipChanged(event.subject().leaderNodeId()));
            }
        }
    }
}
