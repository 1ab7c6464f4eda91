package org.hybridlb.standalone.ovs;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.logging.Logger;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.port.HmuxProgrammer;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.standalone.Fabric;

/**
 * The HMux southbound of hybridlbd: Open vSwitch bridges over OpenFlow 1.5 ({@code ovs-ofctl}).
 * Deltas are rendered by {@link OvsRenderer} (one atomic bundle per bridge, the bridges in parallel:
 * {@link OvsSender}), bridges are read back by {@link OvsReader}. Only flows with the fabric's
 * controller cookie and groups from its controller group base are touched.
 *
 * <p>A reading is reused for at least {@link #SNAPSHOT_TTL_MS} ms and twice as long as reading took
 * (the controller reads the fabric back after each wave and again when it repairs), unless
 * something was sent to that bridge since. Every Open vSwitch selects with
 * {@code selection_method=hash} and basis 0, which the SMux's {@code ovs} selection replicates bit
 * for bit, and encapsulates in GRE (Open vSwitch has no IP-in-IP port).
 */
public final class OvsHmuxSouthbound implements HmuxProgrammer, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(OvsHmuxSouthbound.class.getName());
    static final long SNAPSHOT_TTL_MS = 1000;
    public static final HashContract CONTRACT = HashContract.of(HashContract.Selection.OVS_HASH, 0, HashContract.Encap.GRE);

    private final Fabric fabric;
    private final Supplier<Set<String>> downSwitches;
    private final OvsRules rules;
    private final OvsReader reader;
    private final OvsRenderer renderer;
    private final OvsSender sender;
    private final SwitchCapability capability;
    /** Per switch: the last reading, its group ids, and until when it may be reused. */
    private final Map<String, Snapshot> snapshots = new ConcurrentHashMap<>();
    private volatile long snapshotTtlNanos = SNAPSHOT_TTL_MS * 1_000_000L;

    private static final class Snapshot {
        final SwitchReading reading;
        final OvsGroups groups;
        final long takenNanos;
        final long ttlNanos;

        Snapshot(SwitchReading reading, OvsGroups groups, long takenNanos, long ttlNanos) {
            this.reading = reading;
            this.groups = groups;
            this.takenNanos = takenNanos;
            this.ttlNanos = ttlNanos;
        }
    }

    public OvsHmuxSouthbound(Fabric fabric, Ovs ovs, Supplier<Set<String>> downSwitches) {
        this.fabric = fabric;
        this.downSwitches = downSwitches;
        this.rules = new OvsRules(fabric);
        this.reader = new OvsReader(fabric, rules);
        this.renderer = new OvsRenderer(fabric, rules);
        this.sender = new OvsSender(fabric, ovs);
        this.capability = new SwitchCapability(CONTRACT, true, true, fabric.fastFailover(), Set.of());
    }

    /** The least time a reading is reused for (default {@link #SNAPSHOT_TTL_MS}). */
    public void snapshotTtl(Duration ttl) {
        snapshotTtlNanos = ttl.toNanos();
    }

    public OvsSender.Counters counters() {
        return sender.counters();
    }

    @Override
    public SwitchCapability capability(String switchId) {
        info(switchId);
        return capability;
    }

    @Override
    public synchronized Map<String, SwitchReading> read(Collection<String> switchIds) {
        long now = System.nanoTime();
        List<Fabric.SwitchInfo> missing = new ArrayList<>();
        for (String id : switchIds) {
            Snapshot s = snapshots.get(id);
            if (s == null || now - s.takenNanos > s.ttlNanos) {
                missing.add(info(id));
            }
        }
        long t0 = System.nanoTime();
        Map<String, OvsSender.Dump> dumps = sender.read(missing);
        long done = System.nanoTime();
        // readings count as taken when the last is in, and stay usable twice as long as the batch took:
        // on a loaded machine a fixed TTL shorter than a read of the fabric would make every ask read again
        long ttl = Math.max(snapshotTtlNanos, 2 * (done - t0));
        Map<String, SwitchReading> out = new LinkedHashMap<>();
        for (Fabric.SwitchInfo sw : missing) {
            OvsSender.Dump d = dumps.get(sw.id);
            if (d.error != null) {
                snapshots.remove(sw.id);
                out.put(sw.id, SwitchReading.failed(d.error));
                continue;
            }
            OvsReader.Result r = reader.parse(sw, d.flows, d.groups);
            snapshots.put(sw.id, new Snapshot(r.reading, r.groups, done, ttl));
        }
        for (String id : switchIds) {
            if (!out.containsKey(id)) {
                out.put(id, snapshots.get(id).reading);
            }
        }
        return out;
    }

    @Override
    public synchronized void apply(Map<String, SwitchDelta> deltas) {
        List<String> unknown = new ArrayList<>();
        deltas.forEach((id, d) -> {
            if (!snapshots.containsKey(id) && touchesGroups(d)) {
                unknown.add(id); // the bridge's group ids must be known before its groups change
            }
        });
        if (!unknown.isEmpty()) {
            read(unknown);
        }
        Map<Fabric.SwitchInfo, List<String>> bundles = new LinkedHashMap<>();
        Map<String, OvsGroups> groupsAfter = new LinkedHashMap<>();
        for (Map.Entry<String, SwitchDelta> e : deltas.entrySet()) {
            Snapshot s = snapshots.get(e.getKey());
            OvsGroups g = s != null ? s.groups.copy() : new OvsGroups(fabric.groupIdBase);
            bundles.put(info(e.getKey()), renderer.render(info(e.getKey()), e.getValue(), g));
            groupsAfter.put(e.getKey(), g);
        }
        Map<String, String> failed = sender.send(bundles);
        deltas.forEach((id, d) -> {
            Snapshot s = snapshots.get(id);
            if (failed.containsKey(id) || s == null || !s.reading.ok()) {
                snapshots.remove(id);
            } else {
                // the groups as written; the reading is out of date (read again before reuse)
                snapshots.put(id, new Snapshot(s.reading.after(d), groupsAfter.get(id), s.takenNanos, -1));
            }
        });
        failed.forEach((id, why) -> LOG.warning("programming " + id + " (" + info(id).bridge
                + ") failed, nothing changed there: " + why));
        if (!failed.isEmpty()) {
            throw new SouthboundException(String.join("; ", failed.values()));
        }
    }

    /**
     * Failover fast path, for the liveness source the moment it sees {@code switchId} down, without
     * waiting for the controller (which may be in the middle of a wave) or this southbound's lock:
     * on every other live switch, one delete of the routes whose cookie names {@code switchId}'s
     * location. The controller's own withdrawal that follows finds nothing left to delete.
     */
    public void fastWithdraw(String switchId) {
        Fabric.SwitchInfo x = fabric.switches.get(switchId);
        if (x == null) {
            return;
        }
        long t0 = System.nanoTime();
        Set<String> down = downSwitches.get();
        String line = "flow delete table=" + fabric.vipTable + ",cookie=" + OvsRules.hex(rules.routeCookie(x.location)) + "/-1";
        List<Fabric.SwitchInfo> others = new ArrayList<>();
        for (org.hybridlb.solver.model.Switch t : fabric.topology.switches) {
            if (!t.id.equals(switchId) && !down.contains(t.id) && fabric.switches.get(t.id).p4 == null) {
                others.add(fabric.switches.get(t.id));
                snapshots.computeIfPresent(t.id, (k, s) -> new Snapshot(s.reading, s.groups, s.takenNanos, -1));
            }
        }
        Map<Fabric.SwitchInfo, List<String>> bundles = new LinkedHashMap<>();
        others.forEach(sw -> bundles.put(sw, List.of(line)));
        int failed = sender.send(bundles).size();
        LOG.info(String.format(Locale.ROOT, "failover: deleted the VIP routes towards %s on %d switches in %.1f ms%s",
                switchId, others.size() - failed, (System.nanoTime() - t0) / 1e6, failed > 0 ? " (" + failed + " failed)" : ""));
    }

    private static boolean touchesGroups(SwitchDelta d) {
        return !d.putEntries.isEmpty() || !d.removeEntries.isEmpty() || !d.putAggregates.isEmpty()
                || !d.removeAggregates.isEmpty() || d.fallback != null || !d.putRoutes.isEmpty();
    }

    private Fabric.SwitchInfo info(String switchId) {
        Fabric.SwitchInfo s = fabric.switches.get(switchId);
        if (s == null) {
            throw new SouthboundException("switch " + switchId + " is not in " + fabric.file);
        }
        return s;
    }

    @Override
    public void close() {
        sender.close();
    }
}
