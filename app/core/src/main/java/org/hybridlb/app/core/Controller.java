package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.ServiceEntry;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.EventSink;
import org.hybridlb.app.core.port.Ports;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.assign.Algorithms;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.migration.MigrationPlanner;
import org.hybridlb.solver.migration.MigrationProblem;
import org.hybridlb.solver.migration.PlanChecker;
import org.hybridlb.solver.migration.PlanningException;
import org.hybridlb.solver.migration.SharedMemoryModel;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.MigrationPlan;
import org.hybridlb.solver.model.MigrationStep;
import org.hybridlb.solver.model.MigrationWave;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.routing.Fabric;

/**
 * The hybridlb controller loop (ARCHITECTURE "Controller loop"), platform-neutral.
 *
 * <p>One thread owns all state: REST calls, source events, the interval timer and migration
 * waves are tasks on its queue, so nothing races. Every reconcile (interval, event, "reassign
 * now") first repairs the data path to the installed state (diff, idempotent), removes failed or
 * deleted DIPs' buckets directly (resilient hashing, §3.5.1), computes a sticky assignment,
 * plans the migration with the solver's planner and applies it one wave per task, verifying
 * each wave by reading the devices back and rolling the whole migration back on failure. An
 * HMux failure withdraws its VIPs' /32 routes at once (the SMuxes take them) before anything
 * else, then re-places them; a lost SMux likewise leaves the aggregate groups ahead of queued
 * work. State is persisted after every verified change.
 */
public final class Controller implements EventSink, HybridlbApi, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Controller.class.getName());
    private static final int RECENT = 10;

    private final ControllerConfig config;
    private final Ports ports;
    private final VipValidator validator = new VipValidator();
    private final LinkedBlockingDeque<Runnable> queue = new LinkedBlockingDeque<>();
    private final AtomicBoolean reconcileQueued = new AtomicBoolean();
    private final AtomicBoolean reconcileScheduled = new AtomicBoolean();
    /** The live SMux set last reported by the route source (any thread), applied by the loop. */
    private final AtomicReference<Set<String>> reportedSmuxes = new AtomicReference<>(Set.of());
    private volatile long firstChangeNanos;
    private volatile long lastChangeNanos;
    private final Thread loop;
    private volatile boolean running;
    private ScheduledExecutorService timer;

    // ---- state owned by the loop thread ----
    private ControllerState state = new ControllerState();
    /** Switches the controller treats as down: reported down, or cut off from the served part. */
    private final Set<String> down = new LinkedHashSet<>();
    /** Switches the topology source or an event reported down. */
    private final Set<String> reportedDown = new LinkedHashSet<>();
    /** Live switches outside the part of the fabric the controller serves from, with why. */
    private Map<String, String> cutOff = Map.of();
    private Set<String> liveSmuxes = new LinkedHashSet<>();
    private Set<String> unhealthy = new HashSet<>();
    /**
     * Tunnel endpoints (host addresses) whose attachment switch (the host's ToR) is down, with that
     * switch: their DIPs cannot be reached through the fabric, whatever their host agents say.
     */
    private Map<String, String> unreachableHosts = new HashMap<>();
    /** DIP -> its down switch, as last logged and reported. */
    private Map<String, String> unreachableDips = new TreeMap<>();
    private TrafficInterval traffic;
    private Assignment lastAssignment;
    private String lastError;
    private final List<MigrationRecord> recent = new ArrayList<>();
    private final Counters counters = new Counters();
    /** Configurations of VIPs withdrawn from the SMuxes by the running migration, for its rollback. */
    private final Map<String, Vip> retired = new HashMap<>();
    /** Diverging connections last counted per held VIP (GET /assignment). */
    private final Map<String, Long> divergingOfHeld = new HashMap<>();
    private long lastRepairNanos = System.nanoTime() - Long.MAX_VALUE / 2;
    private Topology fabricOf;
    private Topology solverTopologyOf;
    private Set<String> solverTopologyDown;
    private Set<String> solverTopologyDrained;
    private ServingFabric serving;
    private Fabric fabric;

    public Controller(ControllerConfig config, Ports ports) {
        this.config = config;
        this.ports = ports;
        this.loop = new Thread(this::runLoop, "hybridlb-controller");
        this.loop.setDaemon(true);
    }

    /** Loads the persisted state, repairs the data path to it and starts the loop and timer. */
    public void start() {
        running = true;
        loop.start();
        call(() -> {
            load();
            ports.topology.subscribe(this);
            ports.routes.subscribe(this);
            ports.health.subscribe(this);
            return null;
        });
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hybridlb-timer");
            t.setDaemon(true);
            return t;
        });
        requestReconcile("start");
        if (!config.interval.isZero()) {
            long ms = config.interval.toMillis();
            timer.scheduleAtFixedRate(() -> enqueue(() -> {
                if (!migrating()) { // let a running migration finish; events still supersede it
                    requestReconcile("interval");
                }
            }), ms, ms, TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
        running = false;
        queue.add(() -> { });
        try {
            loop.join(config.requestTimeout.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits until no task is queued and no migration is in flight (tests, daemon shutdown). */
    public void awaitIdle(long timeoutMillis) {
        long end = System.currentTimeMillis() + timeoutMillis;
        while (System.currentTimeMillis() < end) {
            boolean idle = !reconcileScheduled.get() && call(() -> queue.isEmpty() && !migrating());
            if (idle) {
                return;
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        throw new IllegalStateException("controller not idle after " + timeoutMillis + " ms");
    }

    // ------------------------------------------------------------------ the loop thread

    private void runLoop() {
        while (running) {
            Runnable task;
            try {
                task = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "controller task failed", e);
                lastError = String.valueOf(e.getMessage());
            }
        }
        // stopped at a task boundary: the state on disk is the last verified one
        for (Runnable r; (r = queue.poll()) != null; ) {
            if (r instanceof FutureTask) {
                ((FutureTask<?>) r).cancel(false);
            }
        }
    }

    /** Runs {@code body} on the controller thread and waits for it (REST calls, tests). */
    <T> T call(Callable<T> body) {
        if (Thread.currentThread() == loop) {
            try {
                return body.call();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        if (!running) {
            throw ApiException.unavailable("the controller is not running");
        }
        FutureTask<T> task = new FutureTask<>(body);
        queue.add(task);
        try {
            return task.get(config.requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            task.cancel(false);
            throw ApiException.unavailable("the controller is busy (no answer within "
                    + config.requestTimeout.toMillis() + " ms)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("interrupted");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException) {
                throw (RuntimeException) c;
            }
            throw new IllegalStateException(c);
        }
    }

    private void enqueue(Runnable r) {
        queue.add(r);
    }

    /** Queues one reconcile; further requests coalesce into it until it starts. */
    public void requestReconcile(String why) {
        if (reconcileQueued.compareAndSet(false, true)) {
            enqueue(() -> {
                reconcileQueued.set(false);
                reconcile(why);
            });
        }
    }

    /**
     * After a configuration change: reconcile once no change came for {@code settle} (a burst of
     * REST calls is planned once), but never later than ten settle windows after the first one.
     */
    private void reconcileSoon(String why) {
        long now = System.nanoTime();
        lastChangeNanos = now;
        if (config.settle.isZero() || timer == null) {
            requestReconcile(why);
        } else if (reconcileScheduled.compareAndSet(false, true)) {
            firstChangeNanos = now;
            timer.schedule(() -> settleThenReconcile(why), config.settle.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    private void settleThenReconcile(String why) {
        long now = System.nanoTime();
        long quiet = now - lastChangeNanos;
        long settle = config.settle.toNanos();
        if (quiet < settle && now - firstChangeNanos < 10 * settle) {
            timer.schedule(() -> settleThenReconcile(why), settle - quiet, TimeUnit.NANOSECONDS);
            return;
        }
        requestReconcile(why);
        reconcileScheduled.set(false);
    }

    // ------------------------------------------------------------------ events (any thread)

    @Override
    public void switchDown(String switchId) {
        queue.addFirst(() -> onSwitchDown(switchId)); // failover first, before any queued work
    }

    @Override
    public void switchUp(String switchId) {
        enqueue(() -> {
            if (reportedDown.remove(switchId)) {
                refreshDown();
                requestReconcile("switch " + switchId + " up");
            }
        });
    }

    /**
     * Ahead of queued work, like a switch down: the flows hashed to a lost SMux are black-holed
     * until the aggregate groups drop it. Each task applies the latest reported set, so events
     * that overtake each other this way still leave the last one in force.
     */
    @Override
    public void smuxesChanged(Set<String> live) {
        reportedSmuxes.set(new LinkedHashSet<>(live));
        queue.addFirst(this::applyReportedSmuxes);
    }

    private void applyReportedSmuxes() {
        Set<String> now = reportedSmuxes.get();
        if (!now.equals(liveSmuxes)) {
            boolean lost = !now.containsAll(liveSmuxes);
            liveSmuxes = new LinkedHashSet<>(now);
            if (lost) {
                dropLostSmuxesFromGroups();
            }
            requestReconcile("SMuxes " + now);
        }
    }

    @Override
    public void dipHealthChanged(String dip, boolean healthy) {
        enqueue(() -> {
            boolean changed = healthy ? unhealthy.remove(dip) : unhealthy.add(dip);
            if (changed) {
                requestReconcile("DIP " + dip + (healthy ? " healthy" : " failed"));
            }
        });
    }

    @Override
    public void trafficMeasured(TrafficInterval interval) {
        enqueue(() -> traffic = interval);
    }

    /** HMux failure (§3.5.1): withdraw the /32 of its VIPs at once, then re-place them. */
    private void onSwitchDown(String sw) {
        if (!reportedDown.add(sw)) {
            return;
        }
        refreshDown();
        withdrawFromDownSwitches();
        abandonMigration("switch " + sw + " down");
        // the DIPs behind it are unreachable: their buckets go now, like failed DIPs' (§3.5.1)
        refreshReachability();
        removeDipsDirectly();
        persist();
        requestReconcile("switch " + sw + " down");
    }

    private void withdrawFromDownSwitches() {
        for (String sw : down) {
            List<String> vips = new ArrayList<>();
            state.hmuxes.forEach((v, at) -> {
                if (at.contains(sw)) {
                    vips.add(v);
                }
            });
            if (vips.isEmpty()) {
                continue;
            }
            try {
                ports.hmux.withdrawRoutes(sw, vips);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "withdrawing routes of failed switch " + sw, e);
                lastError = "withdrawing routes of failed switch " + sw + ": " + e.getMessage();
            }
            for (String v : vips) {
                state.hmuxes.get(v).remove(sw);
            }
            counters.failovers += vips.size();
        }
        state.hmuxes.values().removeIf(List::isEmpty);
    }

    // ------------------------------------------------------------------ reconcile

    private void reconcile(String why) {
        long t0 = System.nanoTime();
        counters.reconciles++;
        lastError = null; // errors of this round are reported until the next one
        abandonMigration(why);
        refreshInputs();
        withdrawFromDownSwitches();
        refreshReachability();
        // reading every switch back costs one dump per device: the periodic round does it only
        // every repairInterval (waves verify what they touch; events always repair)
        long now = System.nanoTime();
        if (!"interval".equals(why) || now - lastRepairNanos >= config.repairInterval.toNanos()) {
            repair();
            lastRepairNanos = now;
        }
        settleMultiHomed();
        removeDipsDirectly();
        releaseHeldVips();
        persist();
        planAndStart(why);
        counters.lastReconcileMillis = (System.nanoTime() - t0) / 1e6;
    }

    private void refreshInputs() {
        try {
            reportedDown.addAll(ports.topology.downSwitches());
            refreshDown();
            liveSmuxes = new LinkedHashSet<>(ports.routes.liveSmuxes());
            unhealthy = new HashSet<>(ports.health.unhealthyDips());
            TrafficInterval t = ports.stats.lastInterval();
            if (t != null) {
                traffic = t;
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "reading the sources", e);
            lastError = "reading the sources: " + e.getMessage();
        }
    }

    /** Makes every device equal to the installed state; touches only what differs. */
    private void repair() {
        Topology t = ports.topology.topology();
        for (Switch s : t.switches) {
            if (down.contains(s.id)) {
                continue;
            }
            Map<String, VipEntry> expected = new LinkedHashMap<>();
            state.hmuxes.forEach((v, at) -> {
                if (at.contains(s.id)) {
                    expected.put(v, entry(state.installedVips.get(v)));
                }
            });
            try {
                Map<String, VipEntry> actual = ports.hmux.installedOn(s.id);
                for (String v : actual.keySet()) {
                    if (!expected.containsKey(v)) {
                        ports.hmux.remove(s.id, v);
                        counters.repairs++;
                    }
                }
                for (Map.Entry<String, VipEntry> e : expected.entrySet()) {
                    VipEntry have = actual.get(e.getKey());
                    if (have == null || !e.getValue().equals(have.normalized())) {
                        ports.hmux.install(s.id, e.getValue());
                        counters.repairs++;
                    }
                }
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "repairing switch " + s.id, e);
                lastError = "repairing switch " + s.id + ": " + e.getMessage();
            }
        }
        pushSmuxTables(false); // SMuxes know a VIP before its aggregate is routed to them
        repairSmuxGroups();
    }

    private void repairSmuxGroups() {
        Map<String, Smux> smuxes = smuxesById();
        Map<String, Set<String>> expected = new TreeMap<>();
        List<String> live = liveIds();
        if (!live.isEmpty()) { // no live SMux: no aggregate route (an empty group would black-hole)
            for (Vip v : state.installedVips.values()) {
                expected.computeIfAbsent(v.aggregate, a -> new LinkedHashSet<>(live));
            }
        }
        try {
            Map<String, Set<String>> actual = ports.hmux.smuxGroups();
            for (Map.Entry<String, Set<String>> e : expected.entrySet()) {
                if (!e.getValue().equals(actual.get(e.getKey()))) {
                    List<Smux> members = new ArrayList<>();
                    e.getValue().forEach(id -> members.add(smuxes.get(id)));
                    ports.hmux.setSmuxGroup(e.getKey(), members);
                    counters.repairs++;
                }
            }
            for (String agg : actual.keySet()) {
                if (!expected.containsKey(agg)) {
                    ports.hmux.setSmuxGroup(agg, List.of());
                    counters.repairs++;
                }
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "repairing SMux groups", e);
            lastError = "repairing SMux groups: " + e.getMessage();
        }
    }

    /**
     * A lost SMux leaves every aggregate group at once, as a failed HMux's routes are withdrawn at
     * once: the flows hashed to it go to the others (which pick the same DIPs) without waiting for
     * the reconcile to read every device back. With no SMux left, the reconcile decides.
     */
    private void dropLostSmuxesFromGroups() {
        List<String> live = liveIds();
        if (live.isEmpty()) {
            return;
        }
        Map<String, Smux> byId = smuxesById();
        List<Smux> members = new ArrayList<>();
        live.forEach(id -> members.add(byId.get(id)));
        Map<String, List<Smux>> groups = new TreeMap<>();
        state.installedVips.values().forEach(v -> groups.put(v.aggregate, members));
        long t0 = System.nanoTime();
        try {
            ports.hmux.setSmuxGroups(groups);
            LOG.info(String.format(Locale.ROOT, "SMux lost: %d aggregate groups now over %s (%.1f ms)",
                    groups.size(), live, (System.nanoTime() - t0) / 1e6));
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "dropping lost SMuxes from the aggregate groups", e);
            lastError = "dropping lost SMuxes from the aggregate groups: " + e.getMessage();
        }
    }

    /** Live SMuxes of the topology, in topology order. */
    private List<String> liveIds() {
        List<String> out = new ArrayList<>();
        for (Smux m : ports.topology.topology().smuxes) {
            if (liveSmuxes.contains(m.id)) {
                out.add(m.id);
            }
        }
        return out;
    }

    private Map<String, Smux> smuxesById() {
        Map<String, Smux> out = new LinkedHashMap<>();
        ports.topology.topology().smuxes.forEach(m -> out.put(m.id, m));
        return out;
    }

    /**
     * Sends the installed table to every live SMux. {@code force}: always (a wave changed it),
     * with a new version; otherwise only to SMuxes whose running table differs (restart, SMux
     * back), so that nothing right is re-applied. Returns the version sent, or -1 if none was.
     */
    private long pushSmuxTables(boolean force) {
        long version = -1;
        for (String id : liveIds()) {
            if (!force) {
                SmuxTable running;
                try {
                    running = ports.smux.getTable(id);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "reading the table of SMux " + id, e);
                    lastError = "reading the table of SMux " + id + ": " + e.getMessage();
                    continue;
                }
                if (running != null && running.version > state.smuxTableVersion) {
                    state.smuxTableVersion = running.version; // our state is older than the SMux's: go above it
                }
                if (smuxTable(0).sameVips(running)) {
                    continue;
                }
                if (version < 0) {
                    version = ++state.smuxTableVersion;
                }
                try {
                    ports.smux.putTable(id, smuxTable(Math.max(version, running == null ? 0 : running.version + 1)));
                    counters.repairs++;
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "repairing SMux " + id, e);
                    lastError = "repairing SMux " + id + ": " + e.getMessage();
                }
            } else {
                if (version < 0) {
                    version = ++state.smuxTableVersion;
                }
                ports.smux.putTable(id, smuxTable(version));
            }
        }
        return version;
    }

    private SmuxTable smuxTable(long version) {
        List<VipEntry> entries = new ArrayList<>();
        state.installedVips.values().forEach(v -> entries.add(entry(v)));
        return SmuxTable.of(version, entries, config.smuxEncap);
    }

    /** A VIP left on two HMuxes by an abandoned make-before-break keeps its first one. */
    private void settleMultiHomed() {
        for (Map.Entry<String, List<String>> e : state.hmuxes.entrySet()) {
            while (e.getValue().size() > 1) {
                String sw = e.getValue().remove(e.getValue().size() - 1);
                try {
                    ports.hmux.remove(sw, e.getKey());
                } catch (RuntimeException ex) {
                    lastError = "removing VIP " + e.getKey() + " from " + sw + ": " + ex.getMessage();
                    e.getValue().add(sw);
                    break;
                }
            }
        }
    }

    /**
     * DIP failure and DIP removal (§3.5.1, §3.5.2): remove the bucket directly, on the HMux and the
     * SMuxes; bucket ids are stable, so only the removed DIP's connections move. (Adding a DIP
     * goes through the planner: off the HMux, add, back.)
     */
    private void removeDipsDirectly() {
        Map<String, Vip> target = targetConfig();
        Map<String, Vip> shrunk = new LinkedHashMap<>();
        for (Map.Entry<String, Vip> e : state.installedVips.entrySet()) {
            Vip want = target.get(e.getKey());
            if (want == null) {
                continue; // a removed VIP: the planner withdraws it
            }
            Vip kept = VipConfigs.restrict(e.getValue(), want);
            if (!VipConfigs.sameConfig(kept, e.getValue())) {
                shrunk.put(e.getKey(), kept);
            }
        }
        if (shrunk.isEmpty()) {
            return;
        }
        Map<String, Vip> beforeVips = new LinkedHashMap<>(state.installedVips);
        state.installedVips.putAll(shrunk);
        try {
            pushSmuxTables(true);
            repairSmuxGroups();
            for (String v : shrunk.keySet()) {
                for (String sw : state.hmuxes.getOrDefault(v, List.of())) {
                    ports.hmux.install(sw, entry(state.installedVips.get(v)));
                }
            }
            counters.dipsRemovedDirectly += shrunk.size();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "removing DIP buckets", e);
            lastError = "removing DIP buckets: " + e.getMessage();
            state.installedVips = beforeVips;
            repair();
        }
    }

    /**
     * The desired VIPs without unhealthy DIPs (failed health check, or unreachable: the switch
     * their host hangs off is down): what the data path should serve.
     */
    private Map<String, Vip> targetConfig() {
        Map<String, Vip> out = new LinkedHashMap<>();
        for (Vip v : state.desired) {
            out.put(v.vip, VipConfigs.withoutDips(v,
                    d -> unhealthy.contains(d.ip) || unreachableHosts.containsKey(d.tunnelEndpoint())));
        }
        return out;
    }

    /**
     * Recomputes which DIPs the fabric cannot reach: a DIP's attachment switch is the ToR of the
     * topology host that is its tunnel endpoint; while that switch is down the DIP counts as
     * unhealthy for selection (its host agent answers over the management network and would
     * keep it in the pools: a black hole). Logs every change.
     */
    private void refreshReachability() {
        Map<String, String> hosts = new HashMap<>();
        if (!down.isEmpty()) {
            for (org.hybridlb.solver.model.Host h : ports.topology.topology().hosts) {
                if (h.tor != null && down.contains(h.tor)) {
                    hosts.put(h.ip, h.tor);
                }
            }
        }
        Map<String, String> dips = new TreeMap<>();
        if (!hosts.isEmpty()) {
            for (Vip v : state.desired) {
                for (VipPort p : v.ports) {
                    for (Dip d : p.dips) {
                        String sw = hosts.get(d.tunnelEndpoint());
                        if (sw != null) {
                            dips.put(d.ip, sw);
                        }
                    }
                }
            }
        }
        dips.forEach((dip, sw) -> {
            if (!sw.equals(unreachableDips.get(dip))) {
                LOG.warning("DIP " + dip + " unreachable: its switch " + sw + downReason(sw));
            }
        });
        unreachableDips.forEach((dip, sw) -> {
            if (!dips.containsKey(dip)) {
                LOG.info("DIP " + dip + " reachable again: its switch " + sw + " is up");
            }
        });
        unreachableHosts = hosts;
        unreachableDips = dips;
    }

    /** Every DIP unhealthy for selection, with its state and why (GET /assignment). */
    private Map<String, Object> dipHealth() {
        Map<String, Object> out = new TreeMap<>();
        for (String dip : unhealthy) {
            Map<String, Object> h = new LinkedHashMap<>();
            h.put("state", "failed");
            h.put("reason", "its host agent reports it unhealthy or does not answer");
            out.put(dip, h);
        }
        unreachableDips.forEach((dip, sw) -> {
            Map<String, Object> h = new LinkedHashMap<>();
            h.put("state", "unreachable");
            h.put("reason", "its switch " + sw + downReason(sw)
                    + (unhealthy.contains(dip) ? "; its host agent also reports it unhealthy" : ""));
            h.put("switch", sw);
            out.put(dip, h);
        });
        return out;
    }

    /** How a down switch is down, after its id in a sentence. */
    private String downReason(String sw) {
        String why = cutOff.get(sw);
        return why == null ? " is down" : " counts as down: " + why;
    }

    /**
     * Which switches are down for the controller: those reported down, and live ones cut off from
     * the part of the fabric it serves from ({@link ServingFabric}). Logs every change of the latter.
     */
    private void refreshDown() {
        Map<String, String> now = serving().cutOff();
        now.forEach((sw, why) -> {
            if (!why.equals(cutOff.get(sw))) {
                LOG.warning("switch " + sw + " counts as down: " + why);
            }
        });
        cutOff.keySet().stream().filter(sw -> !now.containsKey(sw))
                .forEach(sw -> LOG.info("switch " + sw + " is connected to the served part of the fabric again"));
        cutOff = now;
        down.clear();
        down.addAll(reportedDown);
        down.addAll(now.keySet());
    }

    /**
     * The served part of the fabric ({@link ServingFabric}), recomputed only when the topology,
     * the reported-down or the drained switches changed.
     */
    private ServingFabric serving() {
        Topology t = ports.topology.topology();
        if (serving == null || solverTopologyOf != t || !reportedDown.equals(solverTopologyDown)
                || !state.drained.equals(solverTopologyDrained)) {
            solverTopologyOf = t;
            solverTopologyDown = new HashSet<>(reportedDown);
            solverTopologyDrained = new HashSet<>(state.drained);
            serving = ServingFabric.of(t, solverTopologyDown, solverTopologyDrained);
        }
        return serving;
    }

    /**
     * The topology the solver sees: the served part of the fabric, where drained and failed
     * switches offer no table entries and cut-off ones are absent, so no VIP is placed on them.
     */
    private Topology solverTopology() {
        return serving().topology();
    }

    private void planAndStart(String why) {
        Map<String, Vip> target = targetConfig();
        VipSet targetSet = new VipSet(new ArrayList<>(target.values()));
        VipSet installedSet = new VipSet(new ArrayList<>(state.installedVips.values()));
        Topology topo = solverTopology();
        Map<String, String> from = new LinkedHashMap<>();
        state.installedVips.keySet().forEach(v -> from.put(v, state.placement(v)));
        Assignment current = new Assignment("installed", from, 0, 0, 0, null);
        Instance instance;
        Assignment next;
        TrafficInterval interval = trafficFor(targetSet, topo);
        try {
            if (fabricOf != topo) { // routing is indexed once per topology, not per interval
                fabric = new Fabric(topo);
                fabricOf = topo;
            }
            instance = Instance.build(topo, fabric, targetSet, interval, config.solver);
            if (interval == null && !from.isEmpty()) {
                // nothing measured yet (a host that just started, e.g. the daemon after a restart):
                // "no measurement" is not "no traffic", so every VIP stays where it is and new
                // ones go to the SMuxes until the first interval arrives
                next = new Assignment("installed", from, 0, 0, 0, null);
            } else {
                next = Algorithms.get(config.algorithm).assign(instance, current);
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "assignment failed", e);
            lastError = "assignment: " + e.getMessage();
            return;
        }
        holdGrowingPools(target);
        Map<String, String> to = new LinkedHashMap<>();
        for (String v : target.keySet()) {
            String at = next.placementOf(v);
            to.put(v, down.contains(at) || state.heldOnSmuxes.containsKey(v) ? Assignment.SMUX : at);
        }
        lastAssignment = new Assignment(next.algorithm, to, next.hmuxTrafficShare, next.mru, next.smuxCount,
                next.utilisation, next.provisioning);
        Map<String, Double> bps = new HashMap<>();
        if (interval != null) {
            interval.vips.forEach(vt -> bps.put(vt.vip, vt.totalBps()));
        }
        MigrationPlan plan;
        Assignment toAssignment = new Assignment(next.algorithm, to, 0, 0, 0, null);
        SharedMemoryModel memory;
        MigrationProblem problem;
        try {
            memory = SharedMemoryModel.of(instance, installedSet, targetSet);
            problem = new MigrationProblem(topo, installedSet, current, targetSet, toAssignment, bps);
            plan = new MigrationPlanner(config.planner).plan(problem, memory);
        } catch (PlanningException e) {
            // keep every VIP where it is and apply only the configuration changes
            LOG.log(Level.WARNING, "no migration plan to the new assignment: " + e.getMessage());
            lastError = "migration plan: " + e.getMessage() + " (placements kept)";
            to.clear();
            for (String v : target.keySet()) {
                to.put(v, state.heldOnSmuxes.containsKey(v) ? Assignment.SMUX : from.getOrDefault(v, Assignment.SMUX));
            }
            toAssignment = new Assignment("installed", to, 0, 0, 0, null);
            try {
                memory = SharedMemoryModel.of(instance, installedSet, targetSet);
                problem = new MigrationProblem(topo, installedSet, current, targetSet, toAssignment, bps);
                plan = new MigrationPlanner(config.planner).plan(problem, memory);
            } catch (RuntimeException again) {
                lastError = "migration plan: " + again.getMessage();
                return;
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "migration planning failed", e);
            lastError = "migration plan: " + e.getMessage();
            return;
        }
        if (plan.waves.isEmpty()) {
            return;
        }
        // defence in depth: an independent replay must find every wave safe before any device sees it
        List<String> unsafe = PlanChecker.violations(problem, plan, memory, config.planner);
        if (!unsafe.isEmpty()) {
            LOG.warning("refusing an unsafe migration plan: " + unsafe);
            lastError = "refused an unsafe migration plan: " + unsafe.get(0)
                    + (unsafe.size() > 1 ? " (and " + (unsafe.size() - 1) + " more)" : "");
            return;
        }
        MigrationRecord m = new MigrationRecord();
        m.id = (state.migration == null ? 0 : state.migration.id) + 1;
        m.trigger = why;
        m.state = MigrationRecord.RUNNING;
        m.plan = plan;
        m.target = to;
        m.startedMillis = System.currentTimeMillis();
        state.migration = m;
        retired.clear();
        persist();
        enqueue(() -> runWave(m));
    }

    /**
     * DIP addition (Duet §3.5.2): an HMux only hashes, so a VIP whose pool grows goes to (or
     * stays on) the SMuxes, which pin every connection to its DIP; it may return to an HMux once
     * no pinned connection would change DIP there ({@link #releaseHeldVips}).
     */
    private void holdGrowingPools(Map<String, Vip> target) {
        state.heldOnSmuxes.keySet().retainAll(target.keySet());
        for (Map.Entry<String, Vip> e : target.entrySet()) {
            Vip installed = state.installedVips.get(e.getKey());
            if (installed != null && !state.heldOnSmuxes.containsKey(e.getKey())
                    && VipConfigs.grows(installed, e.getValue())) {
                state.heldOnSmuxes.put(e.getKey(), System.currentTimeMillis());
                LOG.info("VIP " + e.getKey() + ": pool grows; kept on the SMuxes until no pinned connection"
                        + " would change DIP on an HMux");
            }
        }
    }

    /**
     * Lets a held VIP go back to the assignment once its grown pool is installed and no live
     * SMux holds a connection an HMux would send elsewhere, or after {@code poolGrowthHoldMax}.
     * An SMux that cannot answer keeps the hold (connections it pins are unknown).
     */
    private void releaseHeldVips() {
        if (state.heldOnSmuxes.isEmpty()) {
            divergingOfHeld.clear();
            return;
        }
        Map<String, Vip> target = targetConfig();
        Map<String, Long> diverging = new HashMap<>();
        boolean counted = true;
        for (String smux : liveIds()) {
            try {
                ports.smux.divergingConnections(smux).forEach((v, n) -> diverging.merge(v, n, Long::sum));
            } catch (RuntimeException e) {
                counted = false;
                LOG.fine("diverging connections of SMux " + smux + ": " + e.getMessage());
            }
        }
        long now = System.currentTimeMillis();
        for (Iterator<Map.Entry<String, Long>> it = state.heldOnSmuxes.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Long> h = it.next();
            String v = h.getKey();
            Vip installed = state.installedVips.get(v);
            if (installed == null || !target.containsKey(v) || VipConfigs.grows(installed, target.get(v))) {
                continue; // the grown pool is not on the SMuxes yet
            }
            long n = diverging.getOrDefault(v, 0L);
            divergingOfHeld.put(v, counted ? n : -1);
            if (counted && n == 0) {
                LOG.info("VIP " + v + ": no pinned connection would change DIP on an HMux; released after "
                        + (now - h.getValue()) / 1000 + " s on the SMuxes");
                it.remove();
            } else if (now - h.getValue() >= config.poolGrowthHoldMax.toMillis()) {
                LOG.warning("VIP " + v + ": released after the longest hold (" + config.poolGrowthHoldMax.toSeconds()
                        + " s); " + (counted ? n + " pinned connections" : "connections not counted")
                        + " may change DIP on an HMux");
                it.remove();
            }
        }
        divergingOfHeld.keySet().retainAll(state.heldOnSmuxes.keySet());
    }

    /** The measured traffic, restricted to VIPs, DIPs and sources the solver knows. */
    private TrafficInterval trafficFor(VipSet vips, Topology t) {
        if (traffic == null) {
            return null;
        }
        Map<String, Set<String>> dips = new HashMap<>();
        for (Vip v : vips.vips) {
            Set<String> d = new HashSet<>();
            v.ports.forEach(p -> p.dips.forEach(x -> d.add(x.ip)));
            dips.put(v.vip, d);
        }
        Set<String> nodes = new HashSet<>();
        t.switches.forEach(s -> nodes.add(s.id));
        t.hosts.forEach(h -> nodes.add(h.id));
        nodes.add(VipTraffic.INTERNET);
        List<VipTraffic> out = new ArrayList<>();
        for (VipTraffic vt : traffic.vips) {
            Set<String> d = dips.get(vt.vip);
            if (d == null) {
                continue;
            }
            Map<String, Double> src = new LinkedHashMap<>(vt.sources);
            src.keySet().retainAll(nodes);
            Map<String, Double> byDip = new LinkedHashMap<>(vt.dips);
            byDip.keySet().retainAll(d);
            out.add(new VipTraffic(vt.vip, src, byDip.size() == d.size() ? byDip : null));
        }
        return new TrafficInterval(traffic.index, traffic.startSeconds, traffic.durationSeconds, out);
    }

    private boolean migrating() {
        return state.migration != null && MigrationRecord.RUNNING.equals(state.migration.state);
    }

    /** Stops the migration in flight at its wave boundary (the installed state is consistent there). */
    private void abandonMigration(String why) {
        if (migrating()) {
            finish(state.migration, MigrationRecord.SUPERSEDED, "superseded: " + why);
        }
    }

    private void finish(MigrationRecord m, String outcome, String error) {
        m.state = outcome;
        m.error = error;
        m.endedMillis = System.currentTimeMillis();
        recent.add(0, m);
        while (recent.size() > RECENT) {
            recent.remove(recent.size() - 1);
        }
        persist();
        if (MigrationRecord.DONE.equals(outcome) && !state.heldOnSmuxes.isEmpty()) {
            requestReconcile("grown pool installed"); // held VIPs may already be free to return
        }
    }

    // ------------------------------------------------------------------ waves

    /** What one wave changes on the devices. */
    private static final class WaveOps {
        boolean smux;
        final Set<List<String>> removes = new LinkedHashSet<>();
        final Set<List<String>> installs = new LinkedHashSet<>();
        long smuxVersion = -1;
    }

    private void runWave(MigrationRecord m) {
        if (m != state.migration || !MigrationRecord.RUNNING.equals(m.state)) {
            return; // superseded meanwhile
        }
        MigrationWave wave = m.plan.waves.get(m.nextWave);
        ControllerState before = copyOf(state);
        try {
            WaveOps ops = apply(wave.steps);
            execute(ops);
            verify(ops);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "wave " + m.nextWave + " of migration " + m.id + " failed", e);
            counters.rollbacks++;
            rollback(m, before, "wave " + m.nextWave + " (" + wave.phase + "): " + e.getMessage());
            return;
        }
        counters.wavesApplied++;
        m.nextWave++;
        if (m.nextWave == m.plan.waves.size()) {
            finish(m, MigrationRecord.DONE, null);
        } else {
            persist();
            enqueue(() -> runWave(m));
        }
    }

    /** Applies the steps to the in-memory installed state and says what the devices need. */
    private WaveOps apply(List<MigrationStep> steps) {
        Map<String, Vip> catalogue = targetConfig();
        WaveOps ops = new WaveOps();
        for (MigrationStep s : steps) {
            switch (s.action) {
                case ANNOUNCE_ON_SMUX: {
                    Vip c = catalogue.containsKey(s.vip) ? catalogue.get(s.vip) : retired.get(s.vip);
                    if (c == null) {
                        throw new IllegalStateException("VIP " + s.vip + " has no configuration");
                    }
                    state.installedVips.put(s.vip, c);
                    ops.smux = true;
                    break;
                }
                case WITHDRAW_FROM_SMUX:
                    retired.put(s.vip, state.installedVips.get(s.vip));
                    state.installedVips.remove(s.vip);
                    state.hmuxes.remove(s.vip);
                    ops.smux = true;
                    break;
                case ANNOUNCE_ON_HMUX:
                    state.hmuxes.computeIfAbsent(s.vip, k -> new ArrayList<>()).add(s.switchId);
                    ops.installs.add(List.of(s.switchId, s.vip));
                    break;
                case WITHDRAW_FROM_HMUX: {
                    List<String> at = state.hmuxes.get(s.vip);
                    if (at != null) {
                        at.remove(s.switchId);
                        if (at.isEmpty()) {
                            state.hmuxes.remove(s.vip);
                        }
                    }
                    ops.removes.add(List.of(s.switchId, s.vip));
                    break;
                }
                case ADD_DIP:
                case REMOVE_DIP: {
                    Vip now = state.installedVips.get(s.vip);
                    if (now == null) {
                        throw new IllegalStateException("VIP " + s.vip + " is not installed");
                    }
                    state.installedVips.put(s.vip, s.action == org.hybridlb.solver.model.StepAction.ADD_DIP
                            ? VipConfigs.withDip(now, s.serviceOrWhole(), s.dipValue())
                            : VipConfigs.withoutDip(now, s.serviceOrWhole(), s.dip));
                    ops.smux = true;
                    for (String sw : state.hmuxes.getOrDefault(s.vip, List.of())) {
                        ops.installs.add(List.of(sw, s.vip)); // never planned: an HMux only hashes
                    }
                    break;
                }
                default:
                    throw new AssertionError(s.action);
            }
        }
        return ops;
    }

    /** SMuxes first (they are the backstop of everything that follows), then HMux removals, then installs. */
    private void execute(WaveOps ops) {
        if (ops.smux) {
            ops.smuxVersion = pushSmuxTables(true);
            repairSmuxGroups(); // a new aggregate routes to the SMuxes once they know its VIPs
        }
        for (List<String> r : ops.removes) {
            if (!down.contains(r.get(0))) {
                ports.hmux.remove(r.get(0), r.get(1));
            }
        }
        for (List<String> i : ops.installs) {
            ports.hmux.install(i.get(0), entry(state.installedVips.get(i.get(1))));
        }
    }

    /** Reads the touched devices back; throws when one disagrees with the installed state. */
    private void verify(WaveOps ops) {
        if (ops.smux && ops.smuxVersion >= 0) {
            SmuxTable want = smuxTable(ops.smuxVersion);
            for (String id : liveIds()) {
                SmuxTable have = ports.smux.getTable(id);
                if (have == null || have.version != ops.smuxVersion || !want.sameVips(have)) {
                    throw new SouthboundException("SMux " + id + " runs table version "
                            + (have == null ? "none" : have.version) + ", not the " + ops.smuxVersion + " just sent");
                }
            }
        }
        Map<String, Map<String, VipEntry>> read = new HashMap<>();
        Set<List<String>> touched = new LinkedHashSet<>(ops.removes);
        touched.addAll(ops.installs);
        for (List<String> t : touched) {
            String sw = t.get(0);
            String v = t.get(1);
            if (down.contains(sw)) {
                continue;
            }
            Map<String, VipEntry> on = read.computeIfAbsent(sw, ports.hmux::installedOn);
            boolean should = state.hmuxes.getOrDefault(v, List.of()).contains(sw);
            VipEntry have = on.get(v);
            if (should && (have == null || !entry(state.installedVips.get(v)).equals(have.normalized()))) {
                throw new SouthboundException("switch " + sw + " does not hold VIP " + v + " as installed");
            }
            if (!should && have != null) {
                throw new SouthboundException("switch " + sw + " still holds VIP " + v);
            }
        }
    }

    /**
     * Undoes a migration: the failed wave by repairing the devices to the state before it (a
     * single wave is safe in any order), then the verified waves by their inverses, last first.
     */
    private void rollback(MigrationRecord m, ControllerState beforeWave, String error) {
        state = beforeWave;
        state.migration = m;
        repair();
        List<MigrationWave> done = m.plan.waves.subList(0, m.nextWave);
        MigrationPlan back = new MigrationPlan(done).inverse();
        for (MigrationWave w : back.waves) {
            try {
                WaveOps ops = apply(w.steps);
                execute(ops);
                verify(ops);
                m.nextWave--;
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "rollback of migration " + m.id + " failed", e);
                finish(m, MigrationRecord.FAILED, error + "; rollback failed: " + e.getMessage());
                return;
            }
        }
        finish(m, MigrationRecord.ROLLED_BACK, error);
    }

    // ------------------------------------------------------------------ data-path entries

    /** The data-path form of a VIP configuration: services sorted, buckets by id. */
    VipEntry entry(Vip v) {
        List<ServiceEntry> services = new ArrayList<>();
        for (VipPort p : v.ports) {
            String key = p.proto + "/" + p.port;
            List<Bucket> buckets = new ArrayList<>();
            for (Dip d : p.dips) {
                buckets.add(new Bucket(d.ip, d.weight, d.hostIp, bucketId(v.vip, key, d.ip)));
            }
            services.add(new ServiceEntry(p.proto, p.port, buckets));
        }
        return new VipEntry(v.vip, v.aggregate, services).normalized();
    }

    /** The bucket id of a DIP in a pool: kept while it stays, the lowest free one when it joins. */
    private int bucketId(String vip, String service, String dip) {
        String key = vip + "|" + service + "|" + dip;
        Integer id = state.bucketIds.get(key);
        if (id != null) {
            return id;
        }
        String prefix = vip + "|" + service + "|";
        Set<Integer> used = new HashSet<>();
        state.bucketIds.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                used.add(v);
            }
        });
        int free = 0;
        while (used.contains(free)) {
            free++;
        }
        state.bucketIds.put(key, free);
        return free;
    }

    /** Forgets bucket ids of DIPs that are neither desired nor installed. */
    private void pruneBucketIds() {
        Set<String> keep = new HashSet<>();
        List<Vip> all = new ArrayList<>(state.desired);
        all.addAll(state.installedVips.values());
        for (Vip v : all) {
            for (VipPort p : v.ports) {
                for (Dip d : p.dips) {
                    keep.add(v.vip + "|" + p.proto + "/" + p.port + "|" + d.ip);
                }
            }
        }
        state.bucketIds.keySet().retainAll(keep);
    }

    // ------------------------------------------------------------------ persistence

    private void load() {
        reportedDown.addAll(ports.topology.downSwitches());
        refreshDown();
        ports.store.load().ifPresent(json -> {
            state = Json.read(json, ControllerState.class);
            if (state.migration != null && MigrationRecord.RUNNING.equals(state.migration.state)) {
                // the devices are repaired to the last verified wave; the rest is planned anew
                state.migration.state = MigrationRecord.INTERRUPTED;
                state.migration.error = "controller restarted during wave " + state.migration.nextWave;
                recent.add(state.migration);
            }
        });
    }

    private void persist() {
        pruneBucketIds();
        ports.store.save(Json.write(state));
    }

    private static ControllerState copyOf(ControllerState s) {
        return Json.read(Json.write(s), ControllerState.class);
    }

    // ------------------------------------------------------------------ northbound API

    /** Makes {@code next} the desired configuration only if it can be persisted; else nothing changes. */
    private void commitDesired(List<Vip> next, String why) {
        List<Vip> old = state.desired;
        state.desired = next;
        try {
            persist();
        } catch (RuntimeException e) {
            state.desired = old;
            throw new ApiException(503, "unavailable", null, "cannot persist the configuration: " + e.getMessage());
        }
        reconcileSoon(why);
    }

    @Override
    public List<Vip> vips() {
        return call(() -> List.copyOf(state.desired));
    }

    @Override
    public Vip vip(String vip) {
        return call(() -> find(vip));
    }

    private Vip find(String vip) {
        for (Vip v : state.desired) {
            if (v.vip.equals(vip)) {
                return v;
            }
        }
        throw ApiException.notFound("vip", "no VIP " + vip);
    }

    private int indexOf(String vip) {
        for (int i = 0; i < state.desired.size(); i++) {
            if (state.desired.get(i).vip.equals(vip)) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public List<Vip> replaceVips(String body) {
        return call(() -> {
            List<Vip> all = validator.parseVipSet(body, ports.topology.topology());
            commitDesired(new ArrayList<>(all), "VIP configuration replaced");
            return List.copyOf(all);
        });
    }

    @Override
    public Vip createVip(String body) {
        Vip v = validator.parseVip(body);
        return call(() -> {
            if (indexOf(v.vip) >= 0) {
                throw ApiException.conflict("/vip", "VIP " + v.vip + " exists (PUT /vips/" + v.vip + " replaces it)");
            }
            List<Vip> next = new ArrayList<>(state.desired);
            next.add(v);
            validator.checkAll(next, next.size() - 1, ports.topology.topology());
            commitDesired(next, "VIP " + v.vip + " added");
            return v;
        });
    }

    @Override
    public Vip replaceVip(String vip, String body) {
        Vip v = validator.parseVip(body);
        if (!v.vip.equals(vip)) {
            throw ApiException.invalid("/vip", "the body's VIP " + v.vip + " is not the VIP of the path, " + vip);
        }
        return call(() -> {
            int i = indexOf(vip);
            if (i < 0) {
                throw ApiException.notFound("vip", "no VIP " + vip);
            }
            List<Vip> next = new ArrayList<>(state.desired);
            next.set(i, v);
            validator.checkAll(next, i, ports.topology.topology());
            commitDesired(next, "VIP " + vip + " changed");
            return v;
        });
    }

    @Override
    public void deleteVip(String vip) {
        call(() -> {
            int i = indexOf(vip);
            if (i < 0) {
                throw ApiException.notFound("vip", "no VIP " + vip);
            }
            List<Vip> next = new ArrayList<>(state.desired);
            next.remove(i);
            commitDesired(next, "VIP " + vip + " removed");
            return null;
        });
    }

    @Override
    public Vip addDip(String vip, String body) {
        VipValidator.DipRequest req = validator.parseDip(body);
        return call(() -> {
            int i = indexOf(vip);
            if (i < 0) {
                throw ApiException.notFound("vip", "no VIP " + vip);
            }
            Vip now = state.desired.get(i);
            String service = validator.serviceFor(now, req.proto, req.port, "/proto");
            if (VipConfigs.dip(now, service, req.dip.ip) != null) {
                throw ApiException.conflict("/ip", "VIP " + vip + " " + service + " already has DIP " + req.dip.ip);
            }
            Vip changed = VipConfigs.withDip(now, service, req.dip);
            List<Vip> next = new ArrayList<>(state.desired);
            next.set(i, changed);
            validator.checkAll(next, i, ports.topology.topology());
            commitDesired(next, "DIP " + req.dip.ip + " added to " + vip);
            return changed;
        });
    }

    @Override
    public Vip removeDip(String vip, String dip, String proto, Integer port) {
        return call(() -> {
            int i = indexOf(vip);
            if (i < 0) {
                throw ApiException.notFound("vip", "no VIP " + vip);
            }
            Vip now = state.desired.get(i);
            Vip changed = now;
            boolean found = false;
            for (VipPort p : now.ports) {
                if ((proto == null || proto.equals(p.proto)) && (port == null || port == p.port)
                        && p.dips.stream().anyMatch(d -> d.ip.equals(dip))) {
                    changed = VipConfigs.withoutDip(changed, p.proto + "/" + p.port, dip);
                    found = true;
                }
            }
            if (!found) {
                throw ApiException.notFound("dip", "VIP " + vip + " has no DIP " + dip
                        + (proto != null || port != null ? " in service " + proto + "/" + port : ""));
            }
            for (VipPort p : changed.ports) {
                if (p.dips.isEmpty()) {
                    throw ApiException.conflict("dip", "DIP " + dip + " is the last of " + vip + " "
                            + p.proto + "/" + p.port + "; delete the VIP or add another DIP first");
                }
            }
            List<Vip> next = new ArrayList<>(state.desired);
            next.set(i, changed);
            commitDesired(next, "DIP " + dip + " removed from " + vip);
            return changed;
        });
    }

    @Override
    public Map<String, Object> assignment() {
        return call(() -> {
            Map<String, Object> out = new LinkedHashMap<>();
            Map<String, String> installed = new LinkedHashMap<>();
            state.installedVips.keySet().forEach(v -> installed.put(v, state.placement(v)));
            out.put("installed", installed);
            if (lastAssignment != null) {
                out.put("algorithm", lastAssignment.algorithm);
                out.put("target", lastAssignment.assignment);
                out.put("mru", lastAssignment.mru);
                out.put("hmuxTrafficShare", lastAssignment.hmuxTrafficShare);
                out.put("smuxCount", lastAssignment.smuxCount);
                if (lastAssignment.utilisation != null) {
                    out.put("utilisation", lastAssignment.utilisation);
                }
            }
            Map<String, Object> held = new LinkedHashMap<>();
            state.heldOnSmuxes.forEach((v, since) -> {
                Map<String, Object> h = new LinkedHashMap<>();
                h.put("sinceMillis", since);
                h.put("divergingConnections", divergingOfHeld.get(v));
                held.put(v, h);
            });
            out.put("heldOnSmuxes", held);
            out.put("downSwitches", new ArrayList<>(down));
            out.put("cutOffSwitches", new LinkedHashMap<>(cutOff));
            out.put("hmuxUnfit", new TreeMap<>(ports.topology.unfitForHmux()));
            out.put("drainedSwitches", new ArrayList<>(state.drained));
            java.util.TreeSet<String> allUnhealthy = new java.util.TreeSet<>(unhealthy);
            allUnhealthy.addAll(unreachableDips.keySet());
            out.put("unhealthyDips", new ArrayList<>(allUnhealthy));
            out.put("dipHealth", dipHealth());
            out.put("migrating", migrating());
            if (lastError != null) {
                out.put("lastError", lastError);
            }
            return out;
        });
    }

    @Override
    public Map<String, Object> migrations() {
        return call(() -> {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("inFlight", migrating() ? state.migration : null);
            out.put("recent", new ArrayList<>(recent));
            return out;
        });
    }

    @Override
    public List<Map<String, Object>> smuxes() {
        return call(() -> {
            List<Map<String, Object>> out = new ArrayList<>();
            for (Smux m : ports.topology.topology().smuxes) {
                Map<String, Object> s = new LinkedHashMap<>();
                s.put("id", m.id);
                s.put("ip", m.ip);
                s.put("tor", m.tor);
                s.put("capacityBps", m.capacityBps);
                s.put("live", liveSmuxes.contains(m.id));
                s.put("tableVersion", state.smuxTableVersion);
                s.put("vips", state.installedVips.size());
                out.add(s);
            }
            return out;
        });
    }

    @Override
    public Map<String, Object> stats() {
        return call(() -> {
            Map<String, Object> out = new LinkedHashMap<>();
            double hmux = 0;
            double smux = 0;
            List<Map<String, Object>> vips = new ArrayList<>();
            if (traffic != null) {
                out.put("interval", Map.of("index", traffic.index, "startSeconds", traffic.startSeconds,
                        "durationSeconds", traffic.durationSeconds));
                for (VipTraffic vt : traffic.vips) {
                    String at = state.installedVips.containsKey(vt.vip) ? state.placement(vt.vip) : null;
                    double bps = vt.totalBps();
                    if (Assignment.SMUX.equals(at)) {
                        smux += bps;
                    } else if (at != null) {
                        hmux += bps;
                    }
                    Map<String, Object> row = new LinkedHashMap<>();
                    row.put("vip", vt.vip);
                    row.put("bytesPerSecond", bps);
                    row.put("placement", at == null ? "not installed" : at);
                    vips.add(row);
                }
            }
            out.put("hmuxBytesPerSecond", hmux);
            out.put("smuxBytesPerSecond", smux);
            out.put("hmuxShare", hmux + smux > 0 ? hmux / (hmux + smux) : 0.0);
            out.put("vips", vips);
            out.put("controller", counters);
            return out;
        });
    }

    @Override
    public List<Map<String, Object>> switches() {
        return call(() -> {
            List<Map<String, Object>> out = new ArrayList<>();
            for (Switch s : ports.topology.topology().switches) {
                out.add(describe(s));
            }
            return out;
        });
    }

    @Override
    public Map<String, Object> setDrained(String switchId, boolean drained) {
        return call(() -> {
            Switch sw = ports.topology.topology().switches.stream().filter(s -> s.id.equals(switchId)).findFirst()
                    .orElseThrow(() -> ApiException.notFound("switch", "no switch " + switchId));
            boolean changed = drained ? state.drained.add(switchId) : state.drained.remove(switchId);
            if (changed) {
                try {
                    persist();
                } catch (RuntimeException e) {
                    if (drained) {
                        state.drained.remove(switchId);
                    } else {
                        state.drained.add(switchId);
                    }
                    throw new ApiException(503, "unavailable", null, "cannot persist the drain: " + e.getMessage());
                }
                LOG.info((drained ? "drained " : "undrained ") + switchId);
                reconcileSoon((drained ? "drain " : "undrain ") + switchId);
            }
            return describe(sw);
        });
    }

    private Map<String, Object> describe(Switch s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", s.id);
        m.put("role", s.role.name().toLowerCase(java.util.Locale.ROOT));
        m.put("pod", s.pod);
        m.put("up", !down.contains(s.id));
        m.put("cutOff", cutOff.get(s.id));
        m.put("drained", state.drained.contains(s.id));
        m.put("hmuxUnfit", ports.topology.unfitForHmux().get(s.id));
        List<String> vips = new ArrayList<>();
        state.hmuxes.forEach((v, at) -> {
            if (at.contains(s.id)) {
                vips.add(v);
            }
        });
        m.put("vips", vips);
        return m;
    }

    @Override
    public Map<String, Object> reassignNow() {
        return call(() -> {
            reconcile("reassign now");
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("migration", migrating() ? state.migration : null);
            out.put("target", lastAssignment == null ? null : lastAssignment.assignment);
            if (lastError != null) {
                out.put("lastError", lastError);
            }
            return out;
        });
    }

    /** Counters shown in {@code /stats}. */
    public static final class Counters {
        public long reconciles;
        public long wavesApplied;
        public long rollbacks;
        public long failovers;
        public long repairs;
        public long dipsRemovedDirectly;
        public double lastReconcileMillis;
    }

    /** For tests: a snapshot of the persisted state. */
    ControllerState stateSnapshot() {
        return call(() -> copyOf(state));
    }
}
