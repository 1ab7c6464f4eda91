package org.hybridlb.app.core;

import java.util.List;
import java.util.Set;
import org.hybridlb.app.core.metrics.ControllerMetrics;
import org.hybridlb.app.core.metrics.MeteredPorts;
import org.hybridlb.app.core.metrics.StateSample;
import org.hybridlb.app.core.port.EventSink;
import org.hybridlb.app.core.port.Ports;
import org.hybridlb.app.core.prism.PrismConnectionView;
import org.hybridlb.app.core.prism.PrismHandoff;
import org.hybridlb.app.core.prism.PrismPin;
import org.hybridlb.app.core.prism.PrismPins;
import org.hybridlb.app.core.prism.PrismVipView;
import org.hybridlb.app.core.view.AssignmentView;
import org.hybridlb.app.core.view.MigrationsView;
import org.hybridlb.app.core.view.ReassignResult;
import org.hybridlb.app.core.view.SmuxView;
import org.hybridlb.app.core.view.StatsView;
import org.hybridlb.app.core.view.SwitchView;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.Vip;

/**
 * The hybridlb controller (ARCHITECTURE "Controller loop"), platform-neutral: the façade the hosts
 * build, start and close, that the sources report events to and the northbound asks. Its parts are
 * the package's classes (package-info lists them). Its {@link ControllerMetrics} come from the host
 * (they outlive a controller that stops when ONOS moves the leadership) and time every HMux and
 * SMux call ({@link MeteredPorts}).
 */
public final class Controller implements EventSink, HybridlbApi, AutoCloseable {
    private final ControllerConfig config;
    private final Ports ports;
    private final VipValidator validator = new VipValidator();
    private final ControllerMetrics metrics;
    private final Status status;
    private final StateKeeper keeper;
    private final BucketIds ids;
    private final FabricInputs inputs;
    private final DipHealthView health;
    private final ControllerLoop loop;
    private final MigrationRunner migrations;
    private final Reconciler reconciler;
    private final DesiredConfig desired;
    private final StatusViews views;
    private final PrismHandoff prism;
    private final PrismPins pins;

    public Controller(ControllerConfig config, Ports ports) {
        this(config, ports, new ControllerMetrics());
    }

    /** A controller whose events and state {@code metrics} report (the host serves them). */
    public Controller(ControllerConfig config, Ports hostPorts, ControllerMetrics metrics) {
        this.config = config;
        this.metrics = metrics;
        this.status = new Status(metrics);
        Ports ports = MeteredPorts.wrap(hostPorts, metrics);
        this.ports = ports;
        this.keeper = new StateKeeper(ports.store, metrics);
        this.ids = new BucketIds(keeper);
        this.inputs = new FabricInputs(ports, keeper, config.discoveryGrace);
        this.health = new DipHealthView(inputs::downReason);
        this.loop = new ControllerLoop(config.requestTimeout, config.settle, this::reconcile,
                e -> status.error(String.valueOf(e.getMessage())));
        HashContracts contracts = new HashContracts(ports.hmux, keeper, ids, inputs, config.smuxEncap);
        inputs.useContracts(contracts);
        SwitchSync switches = new SwitchSync(ports.hmux, keeper, ids, inputs);
        SmuxTablePublisher tables = new SmuxTablePublisher(ports.smux, contracts, keeper, ids, inputs, status);
        DeviceRepair repair = new DeviceRepair(switches, keeper, inputs, tables, status);
        PoolGrowthHolds holds = new PoolGrowthHolds(ports.smux, config.poolGrowthHoldMax, keeper, inputs);
        ContractMoves moves = new ContractMoves(contracts, keeper, ids, inputs, ports.smux, tables, status,
                config.contractPinTime, config.poolGrowthHoldMax);
        AssignmentPlanner planner = new AssignmentPlanner(config, keeper, inputs, holds, moves, contracts, status);
        WaveExecutor waves = new WaveExecutor(switches, keeper, tables);
        this.migrations = new MigrationRunner(keeper, waves, repair, this::target, loop::enqueue,
                () -> loop.requestReconcile(new Reason(Cause.GROWN_POOL, "grown pool installed")), status);
        this.reconciler = new Reconciler(config, keeper, inputs, health, repair, tables, holds, moves, planner, migrations,
                loop, status, new HostCookies(ports.cookies, ports.smux, keeper, status));
        this.desired = new DesiredConfig(keeper, validator, ports.topology, loop::reconcileSoon,
                ports.pins.available());
        this.views = new StatusViews(keeper, inputs, health, holds, moves, planner, migrations, ports.hmux, status);
        this.pins = new PrismPins(ports.pins);
        this.prism = new PrismHandoff(ports.prism, pins, () -> loop.call(desired::vips),
                () -> loop.call(health::unhealthyDips), java.time.Clock.systemUTC());
    }

    /** Loads the persisted state, subscribes to the sources and starts the loop, whose first round repairs the data path. */
    public void start() {
        loop.start();
        loop.call(() -> {
            inputs.readDownSwitches();
            MigrationRecord interrupted = keeper.load();
            if (interrupted != null) {
                migrations.interrupted(interrupted);
            }
            ports.topology.subscribe(this);
            ports.routes.subscribe(this);
            ports.health.subscribe(this);
            return null;
        });
        loop.requestReconcile(Reason.of(Cause.START));
        loop.scheduleInterval(config.interval, migrations::migrating);
        prism.start(PrismHandoff.PERIOD);
        metrics.attach(this::sample);
    }

    /** Stops at a task boundary: the state on disk is the last verified one. */
    @Override
    public void close() {
        metrics.detach();
        prism.close();
        loop.close();
    }

    /** The metrics this controller reports to. */
    public ControllerMetrics metrics() {
        return metrics;
    }

    /** The state for a scrape, read on the loop; null when it does not answer within {@code timeoutMillis}. */
    private StateSample sample(long timeoutMillis) {
        try {
            return loop.call(views::sample, timeoutMillis);
        } catch (ApiException busy) {
            return null;
        }
    }

    /** Waits until no task is queued and no migration is in flight (tests, daemon shutdown). */
    public void awaitIdle(long timeoutMillis) {
        loop.awaitIdle(timeoutMillis, migrations::migrating);
    }

    /** Queues one reconcile for {@code cause}; requests coalesce until it starts. */
    public void requestReconcile(Cause cause, String why) {
        loop.requestReconcile(new Reason(cause, why));
    }

    /** A change in the fabric the host saw (link or port change, new host): {@link Cause#FABRIC_CHANGED}. */
    public void requestReconcile(String why) {
        requestReconcile(Cause.FABRIC_CHANGED, why);
    }

    private void reconcile(Reason why) {
        reconciler.reconcile(why);
    }

    private java.util.Map<String, Vip> target() {
        return reconciler.target();
    }

    // ------------------------------------------------------------------ events (any thread)

    @Override
    public void switchDown(String switchId) {
        loop.first(() -> reconciler.switchDown(switchId)); // failover first, before any queued work
    }

    @Override
    public void switchUp(String switchId) {
        loop.enqueue(() -> reconciler.switchUp(switchId));
    }

    /**
     * Ahead of queued work, like a switch down: the flows hashed to a lost SMux are black-holed
     * until the aggregate groups drop it. Each task applies the latest reported set, so events
     * that overtake each other this way still leave the last one in force.
     */
    @Override
    public void smuxesChanged(Set<String> live) {
        inputs.reportSmuxes(live);
        loop.first(reconciler::smuxesChanged);
    }

    @Override
    public void dipHealthChanged(String dip, boolean healthy) {
        loop.enqueue(() -> reconciler.dipHealthChanged(dip, healthy));
    }

    @Override
    public void trafficMeasured(TrafficInterval interval) {
        loop.enqueue(() -> inputs.trafficMeasured(interval));
    }

    // ------------------------------------------------------------------ northbound

    @Override
    public List<Vip> vips() {
        return loop.call(desired::vips);
    }

    @Override
    public Vip vip(String vip) {
        return loop.call(() -> desired.find(vip));
    }

    @Override
    public List<Vip> replaceVips(String body) {
        return prismChanged(loop.call(() -> desired.replaceAll(body)));
    }

    @Override
    public Vip createVip(String body) {
        Vip v = validator.parseVip(body);
        return prismChanged(loop.call(() -> desired.create(v)));
    }

    @Override
    public Vip replaceVip(String vip, String body) {
        Vip v = validator.parseVip(body);
        if (!v.vip.equals(vip)) {
            throw ApiException.invalid("/vip", "the body's VIP " + v.vip + " is not the VIP of the path, " + vip);
        }
        return prismChanged(loop.call(() -> desired.replace(v)));
    }

    @Override
    public void deleteVip(String vip) {
        loop.call(() -> {
            desired.delete(vip);
            return null;
        });
        prism.wake();
    }

    @Override
    public Vip addDip(String vip, String body) {
        VipValidator.DipRequest req = validator.parseDip(body);
        return loop.call(() -> desired.addDip(vip, req));
    }

    @Override
    public Vip removeDip(String vip, String dip, String proto, Integer port) {
        return loop.call(() -> desired.removeDip(vip, dip, proto, port));
    }

    @Override
    public AssignmentView assignment() {
        return loop.call(views::assignment);
    }

    @Override
    public MigrationsView migrations() {
        return loop.call(views::migrations);
    }

    @Override
    public List<SmuxView> smuxes() {
        return loop.call(views::smuxes);
    }

    @Override
    public StatsView stats() {
        return loop.call(views::stats);
    }

    @Override
    public org.hybridlb.solver.model.Topology topology() {
        return loop.call(inputs::topology);
    }

    @Override
    public List<SwitchView> switches() {
        return loop.call(views::switches);
    }

    @Override
    public SwitchView setDrained(String switchId, boolean drained) {
        return loop.call(() -> views.switchView(desired.setDrained(switchId, drained)));
    }

    @Override
    public ReassignResult reassignNow() {
        return loop.call(() -> {
            reconciler.reconcile(Reason.of(Cause.REASSIGN_NOW));
            return views.reassigned();
        });
    }

    @Override
    public List<PrismVipView> prismVips() {
        return prism.views();
    }

    @Override
    public PrismVipView prismVip(String vip) {
        PrismVipView v = prism.view(vip);
        return v != null ? v : loop.call(() -> PrismHandoff.pending(prismConfigured(vip), health.unhealthyDips()));
    }

    @Override
    public List<PrismConnectionView> prismConnections(String vip) {
        List<PrismConnectionView> c = prism.connections(vip);
        if (c != null) {
            return c;
        }
        loop.call(() -> prismConfigured(vip));
        return List.of(); // not asked yet
    }

    @Override
    public List<PrismPin> prismPins(String vip) {
        loop.call(() -> prismConfigured(vip));
        return pins.pins(vip);
    }

    @Override
    public PrismPin prismPin(String vip, String body) {
        Vip v = loop.call(() -> prismConfigured(vip));
        java.util.Collection<String> down = loop.call(health::unhealthyDips);
        // off the loop: the fabric's acknowledgement may take a while
        return pins.pin(v, down, body, System.currentTimeMillis());
    }

    @Override
    public boolean prismUnpin(String vip, String client, int clientPort, int vipPort) {
        loop.call(() -> prismConfigured(vip));
        return pins.unpin(vip, client, clientPort, vipPort);
    }

    /** The VIP, which has a Prism hand-off; 404 otherwise (loop thread). */
    private Vip prismConfigured(String vip) {
        Vip v = desired.find(vip);
        if (v.prism == null) {
            throw ApiException.notFound("/vip", "VIP " + vip + " has no Prism hand-off");
        }
        return v;
    }

    /** A round of the Prism controller soon: a VIP's front ends or rules may have changed. */
    private <T> T prismChanged(T result) {
        prism.wake();
        return result;
    }
}
