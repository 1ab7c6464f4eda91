package org.hybridlb.app.onos.fabric;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.hmux.ItemKey;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.onosproject.core.GroupId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBucket;

/**
 * Reads what ONOS holds for the app on one device back into the intent it stands for, by the
 * layout's marks alone (rule priorities, group keys): no record of what was written. A rule whose
 * group is missing, not held by ONOS (refused, or still pending two group-stats polls after its
 * write: {@link GroupConfirmation}), of another form than the layout writes, or whose failover
 * group falls back to another aggregate than its VIP's, is inconsistent; a flow or group of the app
 * that stands for nothing is foreign. Bucket ids and DIPs are not on an OpenFlow 1.3 device: an HMux
 * bucket reads as its position, tunnel endpoint and weight.
 */
final class OnosReader {
    private final OnosSender sender;
    private final OnosPaths paths;

    OnosReader(OnosSender sender, OnosPaths paths) {
        this.sender = sender;
        this.paths = paths;
    }

    static String flowName(FlowEntry e) {
        return "flow " + Long.toHexString(e.id().value());
    }

    static String groupName(Group g) {
        return "group " + OnosGroups.keyText(g);
    }

    SwitchReading read(FabricView.SwitchSpec sw, List<FlowEntry> flows, boolean fastFailover) {
        Map<GroupId, Group> byId = new HashMap<>();
        Map<String, Group> byKey = new HashMap<>();
        for (Group g : sender.groups(sw.device)) {
            byId.put(g.id(), g);
            byKey.put(OnosGroups.keyText(g), g);
        }
        SwitchIntent.Builder intent = SwitchIntent.builder().fallback(fastFailover);
        Map<ItemKey, String> bad = new TreeMap<>();
        Set<String> foreign = new TreeSet<>();
        Set<GroupId> used = new java.util.HashSet<>();
        List<FlowEntry> routes = new ArrayList<>();
        for (FlowEntry e : flows) {
            HmuxLayout.Kind kind = HmuxLayout.kindAt(e.priority());
            GroupId gid = OnosRules.groupOf(e.treatment());
            Group g = gid == null ? null : byId.get(gid);
            if (g != null) {
                used.add(gid);
            }
            if (kind == HmuxLayout.Kind.ENTRY) {
                readEntry(sw, e, g, intent, bad, foreign);
            } else if (kind == HmuxLayout.Kind.ROUTE && OnosRules.dstHost(e) != null) {
                routes.add(e);
            } else if (kind == HmuxLayout.Kind.AGGREGATE && OnosRules.dstPrefix(e) != null) {
                readAggregate(sw, e, g, byId, intent, bad, foreign);
            } else {
                foreign.add(flowName(e));
            }
        }
        for (FlowEntry e : routes) {
            readRoute(sw, e, byId, byKey, intent, bad, foreign);
        }
        for (Group g : byKey.values()) {
            String k = OnosGroups.keyText(g);
            boolean routing = OnosGroups.targetOf(k) != null || k.startsWith(OnosGroups.SMUX);
            if (!used.contains(g.id()) && !routing) {
                foreign.add(groupName(g)); // an entry or aggregate group no flow points at
            }
        }
        foreign.forEach(f -> bad.put(ItemKey.foreign(f), "held by no item of the layout"));
        return new SwitchReading(intent.build(), bad, paths.unreachable(sw));
    }

    private boolean held(FabricView.SwitchSpec sw, Group g) {
        GroupConfirmation.State s = sender.confirmation().state(sw.device, g.appCookie(), g, g.buckets().buckets());
        return s == GroupConfirmation.State.CONFIRMED || s == GroupConfirmation.State.PENDING;
    }

    private void readEntry(FabricView.SwitchSpec sw, FlowEntry e, Group g, SwitchIntent.Builder intent,
                           Map<ItemKey, String> bad, Set<String> foreign) {
        ServiceMatch m = OnosRules.matchOf(e);
        if (m == null) {
            foreign.add(flowName(e));
            return;
        }
        String why = null;
        List<DipBucket> buckets = new ArrayList<>();
        if (e.priority() != HmuxLayout.priority(m)) {
            why = "at priority " + e.priority() + ", not " + HmuxLayout.priority(m);
        } else if (g == null || !HmuxLayout.entryGroupKey(m).equals(OnosGroups.keyText(g))) {
            why = "its flow points at no group " + HmuxLayout.entryGroupKey(m);
        } else if (!held(sw, g)) {
            why = "ONOS does not hold group " + OnosGroups.keyText(g) + " on the device: "
                    + sender.confirmation().state(sw.device, g.appCookie(), g, g.buckets().buckets());
        } else {
            for (GroupBucket b : g.buckets().buckets()) {
                String endpoint = sw.tunnelPort == null ? null : OnosRules.endpointOf(b, sw.tunnelPort);
                if (endpoint == null || b.weight() < 1) {
                    why = "bucket " + buckets.size() + " of " + OnosGroups.keyText(g) + " does not encapsulate to a DIP";
                    break;
                }
                buckets.add(new DipBucket(buckets.size(), null, endpoint, b.weight()));
            }
        }
        if (why != null || intent.entries.containsKey(m)) {
            inconsistent(ItemKey.entry(m), why, e, g, bad, foreign);
            return;
        }
        intent.entry(m, buckets);
    }

    private void readRoute(FabricView.SwitchSpec sw, FlowEntry e, Map<GroupId, Group> byId,
                           Map<String, Group> byKey, SwitchIntent.Builder intent, Map<ItemKey, String> bad,
                           Set<String> foreign) {
        String vip = OnosRules.dstHost(e);
        GroupId gid = OnosRules.groupOf(e.treatment());
        Group g = gid == null ? null : byId.get(gid);
        String key = g == null ? "" : OnosGroups.keyText(g);
        String target = OnosGroups.targetOf(key);
        String why = null;
        if (target == null || key.startsWith(OnosGroups.ALIVE)) {
            why = "points at no group towards an HMux";
        } else if (intent.fallback != key.startsWith(OnosGroups.FAILOVER)) {
            why = intent.fallback ? "goes to " + key + " without a fast-failover group" : "goes through " + key
                    + " while fast failover is off";
        } else if (!held(sw, g)) {
            why = "ONOS does not hold group " + key + " on the device";
        } else if (intent.fallback) {
            String want = SwitchIntent.coveringAggregate(vip, intent.aggregates.keySet());
            String has = OnosGroups.fallbackOf(key);
            Group toward = byKey.get(OnosGroups.toward(target));
            if (!java.util.Objects.equals(want, has)) {
                why = "falls back to " + (has == null ? "no aggregate" : has) + ", not to its aggregate "
                        + (want == null ? "(none routed here)" : want);
            } else if (toward == null || g.buckets().buckets().isEmpty()
                    || !OnosRules.toGroup(toward.id()).equals(g.buckets().buckets().get(0).treatment())) {
                why = "its failover group " + key + " does not send towards " + target + " first";
            }
        } else if (g.buckets().buckets().isEmpty()) {
            why = "its group " + key + " has no path";
        }
        if (why != null || intent.routes.containsKey(vip)) {
            bad.put(ItemKey.route(vip), why != null ? why : "held twice");
            foreign.add(flowName(e));
            return;
        }
        intent.route(vip, target);
    }

    private void readAggregate(FabricView.SwitchSpec sw, FlowEntry e, Group g, Map<GroupId, Group> byId,
                               SwitchIntent.Builder intent, Map<ItemKey, String> bad, Set<String> foreign) {
        String prefix = OnosRules.dstPrefix(e).toString();
        String why = null;
        Set<String> members = new TreeSet<>();
        if (g == null || !HmuxLayout.aggregateGroupKey(prefix).equals(OnosGroups.keyText(g))) {
            why = "its flow points at no group " + HmuxLayout.aggregateGroupKey(prefix);
        } else if (!held(sw, g)) {
            why = "ONOS does not hold group " + OnosGroups.keyText(g) + " on the device";
        } else {
            for (GroupBucket b : g.buckets().buckets()) {
                GroupId to = OnosRules.groupOf(b.treatment());
                Group smux = to == null ? null : byId.get(to);
                String key = smux == null ? "" : OnosGroups.keyText(smux);
                if (!key.startsWith(OnosGroups.SMUX) || !held(sw, smux) || smux.buckets().buckets().isEmpty()) {
                    why = "a bucket of " + OnosGroups.keyText(g) + " reaches no SMux";
                    break;
                }
                members.add(key.substring(OnosGroups.SMUX.length()));
            }
        }
        if (why != null || intent.aggregates.containsKey(prefix)) {
            inconsistent(ItemKey.aggregate(prefix), why, e, g, bad, foreign);
            return;
        }
        intent.aggregate(prefix, members);
    }

    /** {@code key} is held otherwise than the layout writes it: its flow and group are removed before it is written again. */
    private static void inconsistent(ItemKey key, String why, FlowEntry e, Group g, Map<ItemKey, String> bad,
                                     Set<String> foreign) {
        bad.put(key, why != null ? why : "held twice");
        foreign.add(flowName(e));
        if (g != null) {
            foreign.add(groupName(g));
        }
    }
}
