package org.hybridlb.standalone.ovs;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.ServiceEntry;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.HmuxProgrammer;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.Ipv4;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.standalone.Fabric;
import org.hybridlb.standalone.Fabric.SwitchInfo;

/**
 * The HMux programmer for Open vSwitch bridges over OpenFlow 1.5 (E2E-CONTRACT "What the DAEMON
 * programs"). Only flows with the controller cookie and groups from {@code controllerGroupIdBase}
 * up are touched; the fabric's own flows are left alone.
 *
 * <p>Each switch's changes go in one {@code ovs-ofctl bundle} (flows and groups, atomic). Writes
 * are queued per switch and sent together, in parallel across switches, before any read-back
 * ({@link #installedOn}, {@link #smuxGroups}), at once for {@link #withdrawRoutes} (failover)
 * and for an aggregate group that loses an SMux,
 * and otherwise once nothing was queued for {@value #FLUSH_QUIET_MS} ms (at most
 * {@value #FLUSH_DELAY_MS} ms after the first queued change). A wave of the controller
 * therefore costs one {@code ovs-ofctl} per touched switch, and a refused bundle surfaces at the
 * controller's verify read as a {@link SouthboundException} (the switch is unchanged by it).
 *
 * <p>Cookie layout: low 32 bits = the fabric's controller cookie | prefix length << 4 | kind;
 * high 32 bits = data (HMux entry: the VIP's aggregate address; VIP route: the location of the
 * HMux switch), so read-back needs no memory of its own and survives a daemon restart.
 */
public final class OvsHmuxProgrammer implements HmuxProgrammer, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(OvsHmuxProgrammer.class.getName());
    static final int KIND_ENTRY = 1;
    static final int KIND_ROUTE = 2;
    static final int KIND_AGGREGATE = 3;
    static final int NO_AGGREGATE = 63;
    static final int FLUSH_QUIET_MS = 20;
    static final int FLUSH_DELAY_MS = 200;
    /** The SMux's `ovs` selection hashes these (smux/README.md), selection_method_param 0 = its hashBasis 0. */
    public static final String HASH = "selection_method=hash,fields(ip_src,ip_dst,nw_proto,tcp_src,tcp_dst,udp_src,udp_dst)";
    public static final int PRIORITY_ENTRY = 3000;
    public static final int PRIORITY_ROUTE = 2000;
    public static final int PRIORITY_AGGREGATE = 1000;
    /**
     * Fast failover (fabric.json {@code tables.fallback} + {@code locationWatchGroup}): on every
     * switch, VIP routes towards location L go to fast-failover group FAILOVER_GROUP_BASE + L,
     * whose first bucket (alive while L's location group is) routes to L and whose second goes
     * to the fallback table, where the aggregates send everything to the SMuxes. So when an HMux
     * dies, each of its neighbours turns its traffic to the SMuxes as soon as the link is down,
     * before any controller hears of it (as BGP does in Duet §3.5.1, without waiting for it).
     */
    public static final long FAILOVER_GROUP_BASE = 0xf0000000L;
    static final long MAX_FAILOVER_LOCATION = 0x0ffffefeL;
    /** Always alive (no watch, indirect): the fallback bucket watches it. */
    static final long FALLBACK_GROUP = 0xfffffeffL;

    private final Fabric fabric;
    private final Ovs ovs;
    private final Supplier<Set<String>> downSwitches;
    // ovs-ofctl mostly waits for ovs-vswitchd: more processes than cores keep it busy
    private final ExecutorService pool = Executors.newFixedThreadPool(8, r -> {
        Thread t = new Thread(r, "hybridlb-ovs");
        t.setDaemon(true);
        return t;
    });
    private final ScheduledExecutorService flusher = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "hybridlb-ovs-flush");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, SwitchModel> models = new LinkedHashMap<>();
    /** VIP -> the switch its /32 routes point at (what the routes should be). */
    private final Map<String, String> routeTarget = new HashMap<>();
    /** Aggregate -> SMuxes of its group (what the aggregate groups should be). */
    private final Map<String, List<Smux>> aggregates = new TreeMap<>();
    /** Aggregate -> SMux ids its groups hold (read at load, then as written): shows a lost member. */
    private final Map<String, Set<String>> members = new HashMap<>();
    private boolean loaded;
    private long oldestPendingNanos;
    private long lastQueuedNanos;
    /** A background flush that failed: reported by the next read-back, so the controller's verify sees it. */
    private String backgroundError;
    /**
     * The last reading of each switch, valid until something is sent to it or {@link #SNAPSHOT_TTL_MS}
     * passes (longer when reading took long, see {@link #readAll}): the controller reads the
     * switches one by one (repair, verify), so the first read fetches every switch without a valid
     * reading in parallel and the others are served from here.
     */
    private final Map<String, Snapshot> snapshots = new HashMap<>();
    static final long SNAPSHOT_TTL_MS = 1000;
    private long snapshotTtlNanos = SNAPSHOT_TTL_MS * 1_000_000L;
    private final Counters counters = new Counters();

    /** What this programmer has cost so far (benchmark breakdown). */
    public static final class Counters {
        public long bundles;
        public long bundleLines;
        public double bundleMillis;
        public long reads;
        public double readMillis;

        @Override
        public String toString() {
            return String.format(java.util.Locale.ROOT, "%d bundles (%d mods, %.0f ms in ovs-ofctl), %d switch reads (%.0f ms)",
                    bundles, bundleLines, bundleMillis, reads, readMillis);
        }
    }

    /** The least time a reading is reused for (default {@link #SNAPSHOT_TTL_MS}). */
    public synchronized void snapshotTtl(Duration ttl) {
        snapshotTtlNanos = ttl.toNanos();
    }

    public synchronized Counters counters() {
        Counters c = new Counters();
        c.bundles = counters.bundles;
        c.bundleLines = counters.bundleLines;
        c.bundleMillis = counters.bundleMillis;
        c.reads = counters.reads;
        c.readMillis = counters.readMillis;
        return c;
    }

    /** What this programmer knows of one bridge: its controller flows and groups, and queued mods. */
    private final class SwitchModel {
        final SwitchInfo sw;
        final Map<String, Map<String, Long>> entries = new HashMap<>(); // vip -> service key -> group
        final Map<String, Integer> routes = new HashMap<>();            // vip -> target location
        final Map<String, Long> aggGroups = new HashMap<>();             // aggregate -> group
        final Set<Long> usedGroups = new HashSet<>();
        final Set<Integer> failoverLocations = new HashSet<>();         // locations with a failover group
        final List<String> pending = new ArrayList<>();
        final List<String> pendingLog = new ArrayList<>();
        boolean stale = true;
        long nextGroup;

        SwitchModel(SwitchInfo sw) {
            this.sw = sw;
        }

        long allocateGroup() {
            while (usedGroups.contains(nextGroup)) {
                nextGroup++;
            }
            usedGroups.add(nextGroup);
            return nextGroup++;
        }

        boolean entriesTouched;
        boolean aggregatesTouched;

        void queue(String line) {
            lastQueuedNanos = System.nanoTime();
            if (oldestPendingNanos == 0) {
                oldestPendingNanos = lastQueuedNanos;
            }
            pending.add(line);
        }
    }

    public OvsHmuxProgrammer(Fabric fabric, Ovs ovs, Supplier<Set<String>> downSwitches) {
        this.fabric = fabric;
        this.ovs = ovs;
        this.downSwitches = downSwitches;
        if ((fabric.cookieMask & 0x3ff) != 0) {
            throw new IllegalArgumentException("the controller cookie mask must leave bits 0-9 free");
        }
        // only the topology's switches: fabric.json may list others (the Internet border) that
        // the controller must never program
        for (org.hybridlb.solver.model.Switch t : fabric.topology.switches) {
            SwitchInfo s = fabric.switches.get(t.id);
            models.put(s.id, new SwitchModel(s));
        }
        flusher.scheduleWithFixedDelay(this::flushIfOld, FLUSH_QUIET_MS, FLUSH_QUIET_MS / 2, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        flusher.shutdownNow();
        synchronized (this) {
            try {
                flushAll();
            } catch (RuntimeException e) {
                LOG.warning("flushing at shutdown: " + e.getMessage());
            }
        }
        pool.shutdownNow();
    }

    // ------------------------------------------------------------------ the port

    @Override
    public synchronized void install(String switchId, VipEntry entry) {
        ensureLoaded();
        SwitchModel x = model(switchId);
        if (x.sw.tunnelOfport == null) {
            throw new SouthboundException("switch " + switchId + " has no tunnel port in " + fabric.file
                    + " and cannot be an HMux");
        }
        refreshIfStale(x);
        String v = entry.vip;
        Map<String, Long> have = x.entries.getOrDefault(v, Map.of());
        Map<String, Long> now = new LinkedHashMap<>();
        int buckets = 0;
        for (ServiceEntry s : entry.ports) {
            long gid = have.containsKey(s.key()) ? have.get(s.key()) : x.allocateGroup();
            now.put(s.key(), gid);
            x.queue("group add_or_mod " + groupSpec(gid, s, x.sw));
            x.queue("flow add table=" + fabric.vipTable + ",cookie=" + hex(entryCookie(entry.aggregate)) + ","
                    + entryMatch(v, s.proto, s.port) + " actions=" + prefix(x.sw) + "group:" + gid);
            buckets += s.dips.size();
        }
        for (Map.Entry<String, Long> e : have.entrySet()) {
            if (!now.containsKey(e.getKey())) {
                String[] pp = e.getKey().split("/");
                x.queue("flow delete_strict table=" + fabric.vipTable + "," + entryMatch(v, pp[0], Integer.parseInt(pp[1])));
                x.queue("group delete group_id=" + e.getValue());
                x.usedGroups.remove(e.getValue());
            }
        }
        if (x.routes.remove(v) != null) {
            x.queue("flow delete_strict table=" + fabric.vipTable + "," + routeMatch(v));
        }
        x.entries.put(v, now);
        x.entriesTouched = true;
        x.pendingLog.add("installed VIP " + v + " on " + switchId + " (" + entry.ports.size() + " service"
                + (entry.ports.size() == 1 ? "" : "s") + ", " + buckets + " bucket" + (buckets == 1 ? "" : "s") + ")");
        routeTarget.put(v, switchId);
        for (SwitchModel y : liveModels()) {
            if (y != x) {
                routeTowards(y, v, x.sw);
            }
        }
    }

    @Override
    public synchronized void remove(String switchId, String vip) {
        ensureLoaded();
        SwitchModel x = model(switchId);
        if (switchId.equals(routeTarget.get(vip))) {
            routeTarget.remove(vip);
        }
        for (SwitchModel y : liveModels()) {
            if (y != x) {
                dropRouteIfTowards(y, vip, x.sw.location);
            }
        }
        if (downSwitches.get().contains(switchId)) {
            return;
        }
        refreshIfStale(x);
        Map<String, Long> have = x.entries.remove(vip);
        if (have != null) {
            x.entriesTouched = true;
            for (Map.Entry<String, Long> e : have.entrySet()) {
                String[] pp = e.getKey().split("/");
                x.queue("flow delete_strict table=" + fabric.vipTable + "," + entryMatch(vip, pp[0], Integer.parseInt(pp[1])));
                x.queue("group delete group_id=" + e.getValue());
                x.usedGroups.remove(e.getValue());
            }
            x.pendingLog.add("removed VIP " + vip + " from " + switchId);
        }
    }

    @Override
    public synchronized void withdrawRoutes(String switchId, Collection<String> vips) {
        ensureLoaded();
        SwitchModel x = model(switchId);
        Set<String> gone = new HashSet<>(vips);
        for (String v : vips) {
            if (switchId.equals(routeTarget.get(v))) {
                routeTarget.remove(v);
            }
        }
        int n = 0;
        for (SwitchModel y : liveModels()) {
            if (y == x) {
                continue;
            }
            refreshIfStale(y);
            List<String> towards = new ArrayList<>();
            y.routes.forEach((v, loc) -> {
                if (loc == x.sw.location) {
                    towards.add(v);
                }
            });
            if (!towards.isEmpty() && gone.containsAll(towards)) {
                // every route towards X goes: one delete by cookie (the cookie names X) instead of one per VIP
                y.queue("flow delete table=" + fabric.vipTable + ",cookie=" + hex(routeCookie(x.sw.location)) + "/-1");
                towards.forEach(y.routes::remove);
                n += towards.size();
            } else {
                for (String v : vips) {
                    if (dropRouteIfTowards(y, v, x.sw.location)) {
                        n++;
                    }
                }
            }
        }
        long t0 = System.nanoTime();
        flushAll();
        LOG.info(String.format(java.util.Locale.ROOT, "withdrew %d VIP routes towards failed switch %s (%d VIPs) in %.1f ms",
                n, switchId, vips.size(), (System.nanoTime() - t0) / 1e6));
    }

    /**
     * Failover fast path, called by the liveness source the moment it sees {@code switchId} down,
     * without waiting for the controller (which may be in the middle of a wave) or this
     * programmer's lock: on every other live switch, one delete of the routes whose cookie names
     * {@code switchId}'s location. Stateless (the cookie says where a route points), so it needs
     * no model; the controller's {@link #withdrawRoutes} that follows updates the model and finds
     * nothing left to delete.
     */
    public void fastWithdraw(String switchId) {
        SwitchInfo x = fabric.switches.get(switchId);
        if (x == null) {
            return;
        }
        long t0 = System.nanoTime();
        Set<String> down = downSwitches.get();
        String line = "flow delete table=" + fabric.vipTable + ",cookie=" + hex(routeCookie(x.location)) + "/-1";
        List<Future<?>> fs = new ArrayList<>();
        for (org.hybridlb.solver.model.Switch t : fabric.topology.switches) {
            SwitchInfo y = fabric.switches.get(t.id);
            if (!t.id.equals(switchId) && !down.contains(t.id)) {
                fs.add(pool.submit(() -> {
                    ovs.bundle(y.bridge, List.of(line));
                    return null;
                }));
            }
        }
        int failed = 0;
        for (Future<?> f : fs) {
            try {
                f.get();
            } catch (Exception e) {
                failed++;
            }
        }
        LOG.info(String.format(java.util.Locale.ROOT, "failover: deleted the VIP routes towards %s on %d switches in %.1f ms%s",
                switchId, fs.size() - failed, (System.nanoTime() - t0) / 1e6, failed > 0 ? " (" + failed + " failed)" : ""));
    }

    @Override
    public synchronized void setSmuxGroup(String aggregate, List<Smux> smuxes) {
        setSmuxGroups(Map.of(aggregate, smuxes));
    }

    @Override
    public synchronized void setSmuxGroups(Map<String, List<Smux>> groups) {
        ensureLoaded();
        boolean lost = false;
        for (Map.Entry<String, List<Smux>> g : groups.entrySet()) {
            lost |= writeAggregateEverywhere(g.getKey(), g.getValue());
        }
        if (lost) {
            flushAll(); // a lost SMux black-holes its share of the flows until the groups drop it
        }
    }

    /** Queues {@code aggregate}'s group on every live switch; true if it loses a member. */
    private boolean writeAggregateEverywhere(String aggregate, List<Smux> smuxes) {
        Set<String> now = new HashSet<>();
        smuxes.forEach(m -> now.add(m.id));
        Set<String> before;
        if (smuxes.isEmpty()) {
            aggregates.remove(aggregate);
            before = members.remove(aggregate);
        } else {
            aggregates.put(aggregate, List.copyOf(smuxes));
            before = members.put(aggregate, now);
        }
        for (SwitchModel y : liveModels()) {
            refreshIfStale(y);
            writeAggregate(y, aggregate, smuxes);
        }
        return !now.isEmpty() && before != null && !now.containsAll(before);
    }

    @Override
    public synchronized Map<String, VipEntry> installedOn(String switchId) {
        ensureLoaded();
        flushForRead();
        SwitchModel x = model(switchId);
        List<SwitchModel> want = new ArrayList<>(List.of(x));
        want.addAll(liveModels());
        Snapshot s = fresh(want, true, false).get(switchId);
        repairRoutes(x);
        return s.entries;
    }

    @Override
    public synchronized Map<String, Set<String>> smuxGroups() {
        ensureLoaded();
        flushForRead();
        Map<String, Set<String>> agreed = null;
        List<SwitchModel> live = liveModels();
        Map<String, Snapshot> snaps = fresh(live, false, true);
        for (SwitchModel y : live) {
            Snapshot s = snaps.get(y.sw.id);
            if (agreed == null) {
                agreed = new TreeMap<>(s.aggregates);
            } else if (!agreed.equals(s.aggregates)) {
                // the switches disagree: report each aggregate that differs with a member no
                // SMux has, so the controller rewrites it on every switch
                Set<String> all = new HashSet<>(agreed.keySet());
                all.addAll(s.aggregates.keySet());
                for (String a : all) {
                    if (!java.util.Objects.equals(agreed.get(a), s.aggregates.get(a))) {
                        Set<String> mark = new LinkedHashSet<>(agreed.getOrDefault(a, Set.of()));
                        mark.add("(differs on " + y.sw.id + ")");
                        agreed.put(a, mark);
                    }
                }
            }
        }
        return agreed == null ? Map.of() : agreed;
    }

    /** Per-VIP byte counters of the HMux entries on {@code switchId} (stats source). */
    public Map<String, Long> entryBytes(String switchId) {
        SwitchInfo sw = fabric.switches.get(switchId);
        Map<String, Long> out = new HashMap<>();
        for (OvsDump.Flow f : OvsDump.flows(ovs.dumpFlows(sw.bridge, fabric.cookie | KIND_ENTRY, fabric.cookieMask | 0xf))) {
            String v = f.match.get("nw_dst");
            if (v != null) {
                out.merge(v, f.bytes, Long::sum);
            }
        }
        return out;
    }

    /** Per-VIP byte counters of the /32 routes on {@code switchId}. */
    public Map<String, Long> routeBytes(String switchId) {
        SwitchInfo sw = fabric.switches.get(switchId);
        Map<String, Long> out = new HashMap<>();
        for (OvsDump.Flow f : OvsDump.flows(ovs.dumpFlows(sw.bridge, fabric.cookie | KIND_ROUTE, fabric.cookieMask | 0xf))) {
            String v = f.match.get("nw_dst");
            if (v != null) {
                out.merge(v, f.bytes, Long::sum);
            }
        }
        return out;
    }

    /** Sends what was queued for {@code switchId} and rewrites routes and aggregates it missed while down. */
    public synchronized void resync(String switchId) {
        SwitchModel x = model(switchId);
        x.stale = true;
        snapshots.remove(switchId);
        refreshIfStale(x);
        repairRoutes(x);
        for (Map.Entry<String, List<Smux>> a : aggregates.entrySet()) {
            writeAggregate(x, a.getKey(), a.getValue());
        }
        flushAll();
    }

    // ------------------------------------------------------------------ flow and group text

    private String groupSpec(long gid, ServiceEntry s, SwitchInfo sw) {
        StringBuilder b = new StringBuilder("group_id=" + gid + ",type=select," + HASH);
        for (Bucket d : s.dips) {
            b.append(",bucket=bucket_id:").append(d.bucketId).append(",weight:").append(d.weight).append(",actions=");
            if (d.hostIp != null && !d.hostIp.equals(d.ip)) {
                b.append("set_field:").append(hex(Integer.toUnsignedLong(Ipv4.parse(d.ip)))).append("->reg1,");
            }
            b.append("set_field:").append(d.tunnelEndpoint()).append("->tun_dst,output:").append(sw.tunnelOfport);
        }
        return b.toString();
    }

    static String entryMatch(String vip, String proto, int port) {
        if ("any".equals(proto)) {
            return "priority=" + PRIORITY_ENTRY + ",ip,nw_dst=" + vip;
        }
        if (port == 0) {
            return "priority=" + (PRIORITY_ENTRY + 50) + "," + proto + ",nw_dst=" + vip;
        }
        return "priority=" + (PRIORITY_ENTRY + 100) + "," + proto + ",nw_dst=" + vip + ",tp_dst=" + port;
    }

    static String routeMatch(String vip) {
        return "priority=" + PRIORITY_ROUTE + ",ip,nw_dst=" + vip;
    }

    static String aggregateMatch(String aggregate) {
        return "priority=" + PRIORITY_AGGREGATE + ",ip,nw_dst=" + aggregate;
    }

    private String prefix(SwitchInfo sw) {
        String p = sw.tunnelActionsPrefix == null ? "" : sw.tunnelActionsPrefix.strip();
        return p.isEmpty() ? "" : p + ",";
    }

    long entryCookie(String aggregate) {
        long data = 0;
        int len = NO_AGGREGATE;
        if (aggregate != null) {
            String[] a = aggregate.split("/");
            data = Integer.toUnsignedLong(Ipv4.parse(a[0]));
            len = a.length > 1 ? Integer.parseInt(a[1]) : 32;
        }
        return data << 32 | fabric.cookie | (long) len << 4 | KIND_ENTRY;
    }

    long routeCookie(int location) {
        return Integer.toUnsignedLong(location) << 32 | fabric.cookie | KIND_ROUTE;
    }

    long aggregateCookie() {
        return fabric.cookie | KIND_AGGREGATE;
    }

    static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }

    private void routeTowards(SwitchModel y, String vip, SwitchInfo hmux) {
        refreshIfStale(y);
        Integer at = y.routes.get(vip);
        if (at == null || at != hmux.location) {
            y.queue("flow add table=" + fabric.vipTable + ",cookie=" + hex(routeCookie(hmux.location)) + ","
                    + routeMatch(vip) + " actions=" + routeActions(y, hmux.location));
            y.routes.put(vip, hmux.location);
        }
    }

    /** Towards an HMux at {@code loc}: through its fast-failover group when the fabric has one. */
    private String routeActions(SwitchModel y, int loc) {
        if (!fabric.fastFailover() || loc < 0 || loc > MAX_FAILOVER_LOCATION) {
            return fabric.routeTo(loc);
        }
        if (y.failoverLocations.add(loc)) {
            y.queue("group add_or_mod group_id=" + FALLBACK_GROUP + ",type=indirect,bucket=actions=resubmit(,"
                    + fabric.fallbackTable + ")");
            y.queue("group add_or_mod group_id=" + (FAILOVER_GROUP_BASE + loc) + ",type=ff"
                    + ",bucket=bucket_id:0,watch_group:" + fabric.watchGroupOf(loc) + ",actions=" + fabric.routeTo(loc)
                    + ",bucket=bucket_id:1,watch_group:" + FALLBACK_GROUP + ",actions=group:" + FALLBACK_GROUP);
        }
        return "group:" + (FAILOVER_GROUP_BASE + loc);
    }

    private boolean dropRouteIfTowards(SwitchModel y, String vip, int location) {
        refreshIfStale(y);
        Integer at = y.routes.get(vip);
        if (at != null && at == location) {
            y.queue("flow delete_strict table=" + fabric.vipTable + "," + routeMatch(vip));
            y.routes.remove(vip);
            return true;
        }
        return false;
    }

    private void writeAggregate(SwitchModel y, String aggregate, List<Smux> smuxes) {
        Long gid = y.aggGroups.get(aggregate);
        y.aggregatesTouched = true;
        if (smuxes.isEmpty()) {
            if (gid != null) {
                y.queue("flow delete_strict table=" + fabric.vipTable + "," + aggregateMatch(aggregate));
                if (fabric.fastFailover()) {
                    y.queue("flow delete_strict table=" + fabric.fallbackTable + "," + aggregateMatch(aggregate));
                }
                y.queue("group delete group_id=" + gid);
                y.usedGroups.remove(gid);
                y.aggGroups.remove(aggregate);
                y.pendingLog.add("removed aggregate " + aggregate + " from " + y.sw.id);
            }
            return;
        }
        boolean newGroup = gid == null;
        if (newGroup) {
            gid = y.allocateGroup();
            y.aggGroups.put(aggregate, gid);
        }
        List<String> ids = new ArrayList<>(fabric.smuxes.keySet());
        StringBuilder g = new StringBuilder("group_id=" + gid + ",type=select," + HASH);
        List<String> names = new ArrayList<>();
        for (Smux m : smuxes) {
            int idx = ids.indexOf(m.id);
            if (idx < 0) {
                throw new SouthboundException("SMux " + m.id + " is not in " + fabric.file);
            }
            g.append(",bucket=bucket_id:").append(idx).append(",actions=").append(fabric.routeTo(fabric.smuxLocation(m)));
            names.add(m.id);
        }
        y.queue("group add_or_mod " + g);
        // A new member set only changes the group's buckets: the aggregate flows stay as they
        // are (their counters and age too); re-adding them would make every SMux change look
        // like a re-installation.
        if (newGroup) {
            y.queue("flow add table=" + fabric.vipTable + ",cookie=" + hex(aggregateCookie()) + ","
                    + aggregateMatch(aggregate) + " actions=group:" + gid);
            if (fabric.fastFailover()) {
                y.queue("flow add table=" + fabric.fallbackTable + ",cookie=" + hex(aggregateCookie()) + ","
                        + aggregateMatch(aggregate) + " actions=group:" + gid);
            }
        }
        y.pendingLog.add("routed aggregate " + aggregate + " on " + y.sw.id + " to SMuxes " + names);
    }

    /** Makes the /32 routes of {@code x} agree with {@link #routeTarget} (a switch back from the dead). */
    private void repairRoutes(SwitchModel x) {
        int fixed = 0;
        for (Map.Entry<String, Integer> r : new ArrayList<>(x.routes.entrySet())) {
            String target = routeTarget.get(r.getKey());
            if (target == null || target.equals(x.sw.id) || fabric.switches.get(target).location != r.getValue()) {
                x.queue("flow delete_strict table=" + fabric.vipTable + "," + routeMatch(r.getKey()));
                x.routes.remove(r.getKey());
                fixed++;
            }
        }
        for (Map.Entry<String, String> t : routeTarget.entrySet()) {
            if (!t.getValue().equals(x.sw.id) && !downSwitches.get().contains(t.getValue())) {
                Integer at = x.routes.get(t.getKey());
                if (at == null || at != fabric.switches.get(t.getValue()).location) {
                    routeTowards(x, t.getKey(), fabric.switches.get(t.getValue()));
                    fixed++;
                }
            }
        }
        if (fixed > 0) {
            x.pendingLog.add("repaired " + fixed + " VIP routes on " + x.sw.id);
            flushAll();
        }
    }

    // ------------------------------------------------------------------ reading back

    /** One bridge as read: HMux entries, routes, aggregate groups. */
    private static final class Snapshot {
        final Map<String, VipEntry> entries = new TreeMap<>();
        final Map<String, Map<String, Long>> entryGroups = new HashMap<>();
        final Map<String, Integer> routes = new HashMap<>();
        final Set<Integer> failoverLocations = new HashSet<>();
        final Map<String, Set<String>> aggregates = new TreeMap<>();
        final Map<String, Long> aggGroups = new HashMap<>();
        final Set<Long> groups = new HashSet<>();
        /** When the batch this reading belongs to was complete, and how long it stays usable. */
        long takenNanos = System.nanoTime();
        long ttlNanos;
        /** Cleared when HMux entries (resp. aggregate groups) were sent to the switch after this reading. */
        boolean entriesValid = true;
        boolean aggregatesValid = true;
    }

    private static final Pattern TUN_DST = Pattern.compile("set_field:([0-9.]+)->tun_dst");
    private static final Pattern REG1 = Pattern.compile("set_field:(0x[0-9a-f]+|\\d+)->reg1");

    private Snapshot read(SwitchInfo sw) {
        long t0 = System.nanoTime();
        String flows = ovs.dumpFlows(sw.bridge, fabric.cookie, fabric.cookieMask);
        String groups = ovs.dumpGroups(sw.bridge);
        Snapshot s = parse(sw, flows, groups);
        s.ttlNanos = snapshotTtlNanos;
        synchronized (counters) {
            counters.reads++;
            counters.readMillis += (System.nanoTime() - t0) / 1e6;
        }
        return s;
    }

    /**
     * Reads {@code ms} in parallel. The readings count as taken when the last one is in, and stay
     * usable for at least twice as long as the batch took: the controller then asks for the
     * switches one by one (repair), and on a loaded machine, where reading 20 bridges takes
     * longer than {@link #SNAPSHOT_TTL_MS}, a fixed TTL made every one of those asks read every
     * switch again (N² reads; the REST API starved behind them for minutes).
     */
    private Map<String, Snapshot> readAll(List<SwitchModel> ms) {
        long t0 = System.nanoTime();
        Map<String, Future<Snapshot>> fs = new LinkedHashMap<>();
        for (SwitchModel m : ms) {
            fs.put(m.sw.id, pool.submit(() -> read(m.sw)));
        }
        Map<String, Snapshot> out = new LinkedHashMap<>();
        for (Map.Entry<String, Future<Snapshot>> e : fs.entrySet()) {
            out.put(e.getKey(), await(e.getValue(), "reading " + e.getKey()));
        }
        long done = System.nanoTime();
        long ttl = Math.max(snapshotTtlNanos, 2 * (done - t0));
        for (Snapshot s : out.values()) {
            s.takenNanos = done;
            s.ttlNanos = ttl;
        }
        return out;
    }

    /** Valid readings of {@code ms}: the missing ones are read in parallel, adopted and kept. */
    private Map<String, Snapshot> fresh(List<SwitchModel> ms, boolean entries, boolean aggregates) {
        long now = System.nanoTime();
        List<SwitchModel> missing = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (SwitchModel m : ms) {
            Snapshot s = snapshots.get(m.sw.id);
            boolean usable = s != null && now - s.takenNanos <= s.ttlNanos
                    && (!entries || s.entriesValid) && (!aggregates || s.aggregatesValid);
            if (seen.add(m.sw.id) && !usable) {
                missing.add(m);
            }
        }
        Map<String, Snapshot> read = readAll(missing);
        for (SwitchModel m : missing) {
            adopt(m, read.get(m.sw.id));
            snapshots.put(m.sw.id, read.get(m.sw.id));
        }
        Map<String, Snapshot> out = new HashMap<>();
        for (SwitchModel m : ms) {
            out.put(m.sw.id, snapshots.get(m.sw.id));
        }
        return out;
    }

    Snapshot parse(SwitchInfo sw, String flowText, String groupText) {
        Snapshot s = new Snapshot();
        Map<Long, OvsDump.Group> groups = OvsDump.groups(groupText);
        for (long g : groups.keySet()) {
            if (g >= fabric.groupIdBase) {
                s.groups.add(g);
            }
            if (g >= FAILOVER_GROUP_BASE && g <= FAILOVER_GROUP_BASE + MAX_FAILOVER_LOCATION) {
                s.failoverLocations.add((int) (g - FAILOVER_GROUP_BASE));
            }
        }
        List<String> smuxIds = new ArrayList<>(fabric.smuxes.keySet());
        Map<String, Map<String, ServiceEntry>> services = new TreeMap<>();
        Map<String, String> aggOf = new HashMap<>();
        for (OvsDump.Flow f : OvsDump.flows(flowText)) {
            if ((f.cookie & fabric.cookieMask) != fabric.cookie || f.table != fabric.vipTable) {
                continue;
            }
            int kind = (int) (f.cookie & 0xf);
            String dst = f.match.get("nw_dst");
            if (dst == null) {
                continue;
            }
            long data = f.cookie >>> 32;
            if (kind == KIND_ENTRY) {
                String proto = f.match.containsKey("tcp") ? "tcp" : f.match.containsKey("udp") ? "udp" : "any";
                int port = f.match.containsKey("tp_dst") ? Integer.parseInt(f.match.get("tp_dst")) : 0;
                int len = (int) ((f.cookie >> 4) & 0x3f);
                aggOf.put(dst, len == NO_AGGREGATE ? null : Ipv4.format((int) data) + "/" + len);
                OvsDump.Group g = groups.get(f.group());
                List<Bucket> buckets = new ArrayList<>();
                if (g != null) {
                    for (OvsDump.Bucket b : g.buckets) {
                        Matcher t = TUN_DST.matcher(b.actions);
                        Matcher r = REG1.matcher(b.actions);
                        String tun = t.find() ? t.group(1) : "?";
                        if (r.find()) {
                            buckets.add(new Bucket(Ipv4.format((int) (long) Long.decode(r.group(1))), b.weight, tun, (int) b.id));
                        } else {
                            buckets.add(new Bucket(tun, b.weight, null, (int) b.id));
                        }
                    }
                }
                ServiceEntry se = new ServiceEntry(proto, port, buckets);
                services.computeIfAbsent(dst, k -> new TreeMap<>()).put(se.key(), se);
                s.entryGroups.computeIfAbsent(dst, k -> new HashMap<>()).put(se.key(), f.group());
            } else if (kind == KIND_ROUTE) {
                s.routes.put(dst, (int) data);
            } else if (kind == KIND_AGGREGATE) {
                OvsDump.Group g = groups.get(f.group());
                Set<String> members = new LinkedHashSet<>();
                if (g != null) {
                    for (OvsDump.Bucket b : g.buckets) {
                        members.add(b.id < smuxIds.size() ? smuxIds.get((int) b.id) : "(bucket " + b.id + ")");
                    }
                }
                s.aggregates.put(dst, members);
                s.aggGroups.put(dst, f.group());
            }
        }
        services.forEach((vip, svc) -> s.entries.put(vip,
                new VipEntry(vip, aggOf.get(vip), new ArrayList<>(svc.values())).normalized()));
        return s;
    }

    private void adopt(SwitchModel m, Snapshot s) {
        if (!m.pending.isEmpty()) {
            return; // never forget queued work (cannot happen after a flush)
        }
        m.entries.clear();
        m.entries.putAll(s.entryGroups);
        m.routes.clear();
        m.routes.putAll(s.routes);
        m.aggGroups.clear();
        m.aggGroups.putAll(s.aggGroups);
        m.usedGroups.clear();
        m.usedGroups.addAll(s.groups);
        m.failoverLocations.clear();
        m.failoverLocations.addAll(s.failoverLocations);
        m.nextGroup = fabric.groupIdBase;
        m.stale = false;
    }

    private void refreshIfStale(SwitchModel m) {
        if (m.stale && m.pending.isEmpty()) {
            Snapshot s = read(m.sw);
            adopt(m, s);
            snapshots.put(m.sw.id, s);
        }
    }

    /** First use: learn what the switches hold, and where the VIP routes should point (a restart). */
    private void ensureLoaded() {
        if (loaded) {
            return;
        }
        List<SwitchModel> live = liveModels();
        Map<String, Snapshot> snaps = fresh(live, true, true);
        for (SwitchModel m : live) {
            Snapshot s = snaps.get(m.sw.id);
            for (String v : s.entries.keySet()) {
                routeTarget.put(v, m.sw.id);
            }
            s.aggregates.forEach((a, ids) -> members.computeIfAbsent(a, k -> new HashSet<>()).addAll(ids));
        }
        loaded = true;
    }

    // ------------------------------------------------------------------ sending

    private void flushIfOld() {
        synchronized (this) {
            long now = System.nanoTime();
            if (oldestPendingNanos != 0 && (now - lastQueuedNanos > FLUSH_QUIET_MS * 1_000_000L
                    || now - oldestPendingNanos > FLUSH_DELAY_MS * 1_000_000L)) {
                try {
                    flushAll();
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "background flush: " + e.getMessage());
                    backgroundError = e.getMessage();
                }
            }
        }
    }

    /** Sends every switch's queued mods, one bundle per switch, switches in parallel. */
    private void flushAll() {
        oldestPendingNanos = 0;
        Map<SwitchModel, Future<?>> fs = new LinkedHashMap<>();
        for (SwitchModel m : models.values()) {
            if (m.pending.isEmpty()) {
                continue;
            }
            List<String> lines = new ArrayList<>(m.pending);
            List<String> log = new ArrayList<>(m.pendingLog);
            m.pending.clear();
            m.pendingLog.clear();
            Snapshot old = snapshots.get(m.sw.id);
            if (old != null) {
                // route-only changes leave the entries and aggregates read before valid (the model
                // tracks the routes); we are the only writer of controller flows
                old.entriesValid &= !m.entriesTouched;
                old.aggregatesValid &= !m.aggregatesTouched;
            }
            m.entriesTouched = false;
            m.aggregatesTouched = false;
            fs.put(m, pool.submit(() -> {
                long t0 = System.nanoTime();
                ovs.bundle(m.sw.bridge, lines);
                synchronized (counters) {
                    counters.bundles++;
                    counters.bundleLines += lines.size();
                    counters.bundleMillis += (System.nanoTime() - t0) / 1e6;
                }
                for (String l : log) {
                    LOG.info(l);
                }
                return null;
            }));
        }
        List<String> errors = new ArrayList<>();
        for (Map.Entry<SwitchModel, Future<?>> e : fs.entrySet()) {
            try {
                await(e.getValue(), "programming " + e.getKey().sw.id);
            } catch (SouthboundException ex) {
                LOG.warning("programming " + e.getKey().sw.id + " (" + e.getKey().sw.bridge + ") failed, nothing changed there: "
                        + ex.getMessage());
                e.getKey().stale = true; // the bundle changed nothing: read the truth next time
                snapshots.remove(e.getKey().sw.id);
                errors.add(ex.getMessage());
            }
        }
        if (!errors.isEmpty()) {
            throw new SouthboundException(String.join("; ", errors));
        }
    }

    /** Sends what is queued; a failure of this or of an earlier background flush is thrown once. */
    private void flushForRead() {
        flushAll();
        String e = backgroundError;
        if (e != null) {
            backgroundError = null;
            throw new SouthboundException(e);
        }
    }

    private static <T> T await(Future<T> f, String what) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SouthboundException(what + ": interrupted");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof SouthboundException) {
                throw new SouthboundException(what + ": " + c.getMessage(), c);
            }
            throw new SouthboundException(what + ": " + c, c);
        }
    }

    private SwitchModel model(String switchId) {
        SwitchModel m = models.get(switchId);
        if (m == null) {
            throw new SouthboundException("switch " + switchId + " is not in " + fabric.file);
        }
        return m;
    }

    private List<SwitchModel> liveModels() {
        Set<String> down = downSwitches.get();
        List<SwitchModel> out = new ArrayList<>();
        for (SwitchModel m : models.values()) {
            if (!down.contains(m.sw.id)) {
                out.add(m);
            }
        }
        return out;
    }
}
