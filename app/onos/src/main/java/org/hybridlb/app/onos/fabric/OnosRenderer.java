package org.hybridlb.app.onos.fabric;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.function.Supplier;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.Smux;
import org.onosproject.core.GroupId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleOperations;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.group.DefaultGroupBucket;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBucket;
import org.onosproject.net.group.GroupDescription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renders a {@link SwitchDelta} into ONOS operations on one device: the groups the new rules need
 * first (each held by ONOS before any flow points at it), then one flow batch in stages — entries
 * and aggregates added, then routes changed, then entries and aggregates removed (make before
 * break) — then the groups nothing uses any more. Routes go to the "toward" group of their HMux
 * (ECMP over the device's first hops), through a FAILOVER group whose backup bucket is the
 * aggregate's SMux group when the device fails over in the data path; aggregate buckets chain to
 * one group per SMux.
 */
final class OnosRenderer {
    private static final Logger log = LoggerFactory.getLogger(OnosRenderer.class);

    private final OnosSender sender;
    private final OnosRules rules;
    private final OnosPaths paths;
    private final Supplier<FabricView> fabric;

    OnosRenderer(OnosSender sender, OnosRules rules, OnosPaths paths, Supplier<FabricView> fabric) {
        this.sender = sender;
        this.rules = rules;
        this.paths = paths;
        this.fabric = fabric;
    }

    /** The flow stages of one batch, in order: foreign flows cleared, adds, routes, removals. */
    static final class Stages {
        final List<FlowRule> cleared = new ArrayList<>();
        final List<FlowRule> add = new ArrayList<>();
        final List<FlowRule> routes = new ArrayList<>();
        final List<FlowRule> routeRemovals = new ArrayList<>();
        final List<FlowRule> removals = new ArrayList<>();

        boolean isEmpty() {
            return cleared.isEmpty() && add.isEmpty() && routes.isEmpty() && routeRemovals.isEmpty()
                    && removals.isEmpty();
        }

        void addAll(Stages o) {
            cleared.addAll(o.cleared);
            add.addAll(o.add);
            routes.addAll(o.routes);
            routeRemovals.addAll(o.routeRemovals);
            removals.addAll(o.removals);
        }

        FlowRuleOperations.Builder build() {
            FlowRuleOperations.Builder b = FlowRuleOperations.builder();
            cleared.forEach(b::remove);
            b.newStage();
            add.forEach(b::add);
            b.newStage();
            routes.forEach(b::add);
            routeRemovals.forEach(b::remove);
            b.newStage();
            removals.forEach(b::remove);
            return b;
        }
    }

    /** Writes the groups of {@code d} on {@code sw} and says which flows change, in {@code out}. */
    void render(FabricView.SwitchSpec sw, SwitchDelta d, List<FlowEntry> flows, Stages out) {
        DeviceId dev = sw.device;
        for (String f : d.foreign) {
            if (f.startsWith("flow ")) {
                long id = Long.parseUnsignedLong(f.substring("flow ".length()), 16);
                flows.stream().filter(e -> e.id().value() == id).forEach(out.cleared::add);
            }
        }
        for (ServiceMatch m : d.removeEntries) {
            flows.stream().filter(e -> m.equals(OnosRules.matchOf(e)) && HmuxLayout.kindAt(e.priority())
                    == HmuxLayout.Kind.ENTRY).forEach(out.removals::add);
        }
        for (String a : d.removeAggregates) {
            flows.stream().filter(e -> e.priority() == HmuxLayout.PRIORITY_AGGREGATE
                    && a.equals(String.valueOf(OnosRules.dstPrefix(e)))).forEach(out.removals::add);
        }
        Map<GroupId, String> targets = new java.util.HashMap<>();
        sender.groups(dev).forEach(g -> targets.put(g.id(), OnosGroups.targetOf(OnosGroups.keyText(g))));
        for (FlowEntry e : flows) {
            if (e.priority() != HmuxLayout.PRIORITY_ROUTE) {
                continue;
            }
            GroupId g = OnosRules.groupOf(e.treatment());
            boolean withdrawn = g != null && d.withdrawTowards.contains(targets.get(g));
            if (withdrawn || d.withdrawTowards.isEmpty() && d.removeRoutes.contains(OnosRules.dstHost(e))) {
                out.routeRemovals.add(e);
            }
        }
        for (Map.Entry<ServiceMatch, List<DipBucket>> e : d.putEntries.entrySet()) {
            if (sw.tunnelPort == null) {
                throw new SouthboundException(sw.sw.id + " has no tunnel port configured: it cannot be an HMux");
            }
            if (sw.hmuxUnfit != null) {
                throw new SouthboundException(sw.hmuxUnfit);
            }
            List<GroupBucket> buckets = new ArrayList<>();
            e.getValue().forEach(b -> buckets.add(rules.hmuxBucket(dev, sw.tunnelPort, b)));
            Group g = sender.putGroup(dev, HmuxLayout.entryGroupKey(e.getKey()), GroupDescription.Type.SELECT, buckets);
            out.add.add(rules.entry(dev, e.getKey(), g.id()));
        }
        for (Map.Entry<String, SortedSet<String>> a : d.putAggregates.entrySet()) {
            List<GroupBucket> buckets = new ArrayList<>();
            for (String id : a.getValue()) {
                Group smux = smuxGroup(sw, id);
                if (smux != null) {
                    buckets.add(DefaultGroupBucket.createSelectGroupBucket(OnosRules.toGroup(smux.id())));
                }
            }
            if (buckets.isEmpty()) {
                continue; // reachability is checked before the delta: an SMux lost since, left to the next repair
            }
            Group g = sender.putGroup(dev, HmuxLayout.aggregateGroupKey(a.getKey()), GroupDescription.Type.SELECT,
                    buckets);
            out.add.add(rules.aggregate(dev, a.getKey(), g.id()));
        }
        SwitchIntent target = d.target;
        boolean fallback = target != null && target.fallback;
        Map<String, String> routes = new java.util.TreeMap<>(d.putRoutes);
        if (target != null && (d.fallback != null || fallback && !(d.putAggregates.isEmpty() && d.removeAggregates.isEmpty()))) {
            // the fallback came or went, or the aggregates a route falls back to: those routes anew
            Set<String> changed = new HashSet<>(d.removeAggregates);
            changed.addAll(d.putAggregates.keySet());
            target.routes.forEach((vip, hmux) -> {
                if (d.fallback != null || changed.stream().anyMatch(a -> covers(a, vip))) {
                    routes.put(vip, hmux);
                }
            });
        }
        for (Map.Entry<String, String> r : routes.entrySet()) {
            FabricView.SwitchSpec hmux = fabric.get().bySwitch(r.getValue()).orElse(null);
            if (hmux == null) {
                throw new SouthboundException("unknown switch " + r.getValue());
            }
            List<GroupBucket> hops = paths.towardBuckets(dev, hmux.device);
            if (hops.isEmpty()) {
                log.warn("no path from {} to {}: no route of {} there", sw.sw.id, hmux.sw.id, r.getKey());
                continue;
            }
            Group toward = sender.putGroup(dev, OnosGroups.toward(hmux.sw.id), GroupDescription.Type.SELECT, hops);
            Group to = toward;
            if (fallback) {
                String aggregate = target.coveringAggregate(r.getKey());
                Group alive = sender.putGroup(dev, OnosGroups.alive(hmux.sw.id), GroupDescription.Type.FAILOVER,
                        paths.aliveBuckets(dev, hmux.device));
                Group smuxes = aggregate == null ? null : sender.group(dev, HmuxLayout.aggregateGroupKey(aggregate));
                to = sender.putGroup(dev, OnosGroups.failover(hmux.sw.id, smuxes == null ? null : aggregate),
                        GroupDescription.Type.FAILOVER, failoverBuckets(toward, alive, smuxes));
            }
            out.routes.add(rules.route(dev, r.getKey(), to.id()));
        }
    }

    /**
     * Bucket 0: toward the HMux while {@code alive} is; bucket 1 (when the aggregate is routed to
     * SMuxes on this device): the SMux group, watched itself (a select group is alive while it has
     * a bucket).
     */
    static List<GroupBucket> failoverBuckets(Group toward, Group alive, Group smuxes) {
        List<GroupBucket> out = new ArrayList<>();
        out.add(DefaultGroupBucket.createFailoverGroupBucket(OnosRules.toGroup(toward.id()), null, alive.id()));
        if (smuxes != null) {
            out.add(DefaultGroupBucket.createFailoverGroupBucket(OnosRules.toGroup(smuxes.id()), null, smuxes.id()));
        }
        return out;
    }

    /** The group to SMux {@code id} on {@code sw} (written or refreshed), or null when {@code sw} cannot reach it. */
    Group smuxGroup(FabricView.SwitchSpec sw, String id) {
        FabricView view = fabric.get();
        Smux s = view.smuxes().get(id);
        FabricView.SwitchSpec tor = s == null ? null : view.bySwitch(s.tor).orElse(null);
        if (tor == null) {
            return null;
        }
        GroupBucket b;
        if (tor.device.equals(sw.device)) {
            b = paths.smuxAtItsTor(s, sw.device);
        } else {
            List<GroupBucket> hops = paths.towardBuckets(sw.device, tor.device);
            b = hops.isEmpty() ? null : DefaultGroupBucket.createIndirectGroupBucket(OnosRules.toGroup(
                    sender.putGroup(sw.device, OnosGroups.toward(tor.sw.id), GroupDescription.Type.SELECT, hops).id()));
        }
        return b == null ? null : sender.putGroup(sw.device, OnosGroups.smux(id), GroupDescription.Type.INDIRECT,
                List.of(b));
    }

    private static boolean covers(String prefix, String vip) {
        return SwitchIntent.coveringAggregate(vip, List.of(prefix)) != null;
    }

    /**
     * After the flows: every group of the app on {@code dev} that no flow reaches any more, through
     * the group chains and failover watches, goes; what points at a group goes before it.
     */
    void cleanUp(DeviceId dev, List<FlowEntry> flowsNow) {
        Map<GroupId, Group> mine = new java.util.HashMap<>();
        sender.groups(dev).forEach(g -> mine.put(g.id(), g));
        Set<GroupId> reached = new HashSet<>();
        java.util.Deque<GroupId> todo = new java.util.ArrayDeque<>();
        for (FlowEntry e : flowsNow) {
            GroupId g = OnosRules.groupOf(e.treatment());
            if (g != null) {
                todo.add(g);
            }
        }
        while (!todo.isEmpty()) {
            GroupId id = todo.poll();
            Group g = mine.get(id);
            if (g == null || !reached.add(id)) {
                continue;
            }
            for (GroupBucket b : g.buckets().buckets()) {
                if (b.watchGroup() != null) {
                    todo.add(b.watchGroup());
                }
                for (Instruction i : b.treatment().allInstructions()) {
                    if (i instanceof Instructions.GroupInstruction) {
                        todo.add(((Instructions.GroupInstruction) i).groupId());
                    }
                }
            }
        }
        List<Group> unused = new ArrayList<>();
        mine.values().stream().filter(g -> !reached.contains(g.id())).forEach(unused::add);
        unused.sort(java.util.Comparator.comparingInt(g -> removalOrder(OnosGroups.keyText(g))));
        sender.removeGroups(unused);
    }

    private static int removalOrder(String key) {
        if (key.startsWith(OnosGroups.FAILOVER)) {
            return 0;
        }
        if (key.startsWith(OnosGroups.SMUX)) {
            return 2;
        }
        return OnosGroups.targetOf(key) != null ? 3 : 1;
    }
}
