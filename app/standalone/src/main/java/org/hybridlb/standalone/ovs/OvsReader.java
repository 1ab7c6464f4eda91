package org.hybridlb.standalone.ovs;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.hmux.ItemKey;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.solver.model.Ipv4;
import org.hybridlb.standalone.Fabric;

/**
 * Reads one bridge's controller flows and groups back into the intent they hold, by the layout's
 * marks alone (cookie kind and data, priorities, group ids from the controller base): no memory of
 * what was written. What the layout would not have produced is said: an item held in part or
 * otherwise (a flow whose group is missing, a group hashing another way, a priority off the ladder,
 * a route towards an unknown location) is inconsistent, and every flow and group of it is reported
 * foreign so that it is deleted before the item is written again; a controller flow or group that
 * belongs to no item is foreign.
 */
final class OvsReader {
    /** A reading and the group ids the bridge uses. */
    static final class Result {
        final SwitchReading reading;
        final OvsGroups groups;

        Result(SwitchReading reading, OvsGroups groups) {
            this.reading = reading;
            this.groups = groups;
        }
    }

    private static final Pattern TUN_DST = Pattern.compile("set_field:([0-9.]+)->tun_dst");
    private static final Pattern REG1 = Pattern.compile("set_field:(0x[0-9a-f]+|\\d+)->reg1");

    private final Fabric fabric;
    private final OvsRules rules;
    private final Map<Integer, String> switchAt = new HashMap<>();
    private final List<String> smuxIds;

    OvsReader(Fabric fabric, OvsRules rules) {
        this.fabric = fabric;
        this.rules = rules;
        fabric.switches.values().forEach(s -> switchAt.put(s.location, s.id));
        this.smuxIds = new ArrayList<>(fabric.smuxes.keySet());
    }

    /** Device name of a foreign flow: what {@code flow delete_strict} takes. */
    static String flowName(OvsDump.Flow f) {
        List<String> m = new ArrayList<>();
        f.match.forEach((k, v) -> m.add(v.isEmpty() ? k : k + "=" + v));
        return "flow table=" + f.table + ",priority=" + f.priority + (m.isEmpty() ? "" : "," + String.join(",", m));
    }

    static String groupName(long id) {
        return "group " + id;
    }

    Result parse(Fabric.SwitchInfo sw, String flowText, String groupText) {
        Map<Long, OvsDump.Group> groups = OvsDump.groups(groupText);
        OvsGroups handles = new OvsGroups(fabric.groupIdBase);
        SwitchIntent.Builder intent = SwitchIntent.builder();
        Map<ItemKey, String> bad = new TreeMap<>();
        Set<String> foreign = new TreeSet<>();
        Set<Long> referenced = new HashSet<>();
        Map<String, Long> fallbackCopies = new HashMap<>();
        for (long g : groups.keySet()) {
            if (ours(g)) {
                handles.used.add(g);
            }
            if (g >= OvsRules.FAILOVER_GROUP_BASE && g <= OvsRules.FAILOVER_GROUP_BASE + OvsRules.MAX_FAILOVER_LOCATION) {
                handles.failover.add((int) (g - OvsRules.FAILOVER_GROUP_BASE));
            }
        }
        List<OvsDump.Flow> routes = new ArrayList<>();
        for (OvsDump.Flow f : OvsDump.flows(flowText)) {
            if ((f.cookie & fabric.cookieMask) != fabric.cookie) {
                continue; // the fabric's own flows
            }
            HmuxLayout.Kind kind = HmuxLayout.kindOf(f.cookie);
            String dst = f.match.get("nw_dst");
            if (fabric.fastFailover() && f.table == fabric.fallbackTable && kind == HmuxLayout.Kind.AGGREGATE
                    && dst != null) {
                fallbackCopies.put(dst, f.group());
                referenced.add(f.group());
                continue;
            }
            if (f.table != fabric.vipTable || kind == null || dst == null) {
                foreign.add(flowName(f));
                continue;
            }
            referenced.add(f.group());
            if (kind == HmuxLayout.Kind.ENTRY) {
                readEntry(sw, f, dst, groups, intent, handles, bad, foreign);
            } else if (kind == HmuxLayout.Kind.ROUTE) {
                routes.add(f);
            } else {
                readAggregate(f, dst, groups, intent, handles, bad, foreign);
            }
        }
        boolean fallback = fabric.fastFailover() && groups.containsKey(OvsRules.FALLBACK_GROUP);
        intent.fallback(fallback);
        for (OvsDump.Flow f : routes) {
            readRoute(f, fallback, groups, intent, bad, foreign);
        }
        if (fabric.fastFailover()) {
            checkFallbackCopies(intent, handles, fallbackCopies, bad, foreign);
        }
        for (long g : groups.keySet()) {
            if (ours(g) && !referenced.contains(g)) {
                foreign.add(groupName(g)); // a group nothing points at: what a half-written change leaves
            }
        }
        foreign.forEach(n -> bad.put(ItemKey.foreign(n), "held by no item of the layout"));
        return new Result(new SwitchReading(intent.build(), bad, Map.of()), handles);
    }

    /** A select group of the daemon's range (Fabric#CONTROLLER_GROUP_SPAN); the fabric's own are left alone. */
    private boolean ours(long g) {
        return g >= fabric.groupIdBase && g < fabric.groupIdBase + Fabric.CONTROLLER_GROUP_SPAN;
    }

    private void readEntry(Fabric.SwitchInfo sw, OvsDump.Flow f, String dst, Map<Long, OvsDump.Group> groups,
                           SwitchIntent.Builder intent, OvsGroups handles, Map<ItemKey, String> bad,
                           Set<String> foreign) {
        String proto = f.match.containsKey("tcp") ? "tcp" : f.match.containsKey("udp") ? "udp" : ServiceMatch.ANY;
        int port = f.match.containsKey("tp_dst") ? Integer.parseInt(f.match.get("tp_dst")) : 0;
        ServiceMatch m;
        try {
            m = new ServiceMatch(dst, proto, port);
        } catch (IllegalArgumentException e) {
            foreign.add(flowName(f));
            return;
        }
        ItemKey key = ItemKey.entry(m);
        OvsDump.Group g = groups.get(f.group());
        String why = null;
        if (f.priority != HmuxLayout.priority(m)) {
            why = "at priority " + f.priority + ", not " + HmuxLayout.priority(m);
        } else if (HmuxLayout.dataOf(f.cookie) != 0 || (f.cookie & ~fabric.cookieMask & 0xffffffffL) != HmuxLayout.Kind.ENTRY.code) {
            why = "cookie " + OvsRules.hex(f.cookie) + " is not the entry cookie " + OvsRules.hex(rules.cookie(HmuxLayout.Kind.ENTRY, 0));
        } else if (g == null) {
            why = "its flow points at group " + f.group() + ", which does not exist";
        } else if (!"select".equals(g.type) || !g.header.contains(OvsRules.HASH)) {
            why = "group " + g.id + " does not select with " + OvsRules.HASH;
        }
        List<DipBucket> buckets = new ArrayList<>();
        if (why == null) {
            for (OvsDump.Bucket b : g.buckets) {
                Matcher t = TUN_DST.matcher(b.actions);
                Matcher r = REG1.matcher(b.actions);
                if (!t.find() || !b.actions.endsWith("output:" + sw.tunnelOfport) || b.weight < 1) {
                    why = "bucket " + b.id + " of group " + g.id + " does not encapsulate to a DIP: " + b.actions;
                    break;
                }
                String dip = r.find() ? Ipv4.format((int) (long) Long.decode(r.group(1))) : t.group(1);
                buckets.add(new DipBucket((int) b.id, dip, t.group(1), b.weight));
            }
        }
        if (why != null || intent.entries.containsKey(m)) {
            inconsistent(key, why, f, g, bad, foreign);
            return;
        }
        intent.entry(m, buckets);
        handles.entries.put(m, g.id);
    }

    private void readRoute(OvsDump.Flow f, boolean fallback, Map<Long, OvsDump.Group> groups,
                           SwitchIntent.Builder intent, Map<ItemKey, String> bad, Set<String> foreign) {
        String vip = f.match.get("nw_dst");
        int loc = (int) HmuxLayout.dataOf(f.cookie);
        String target = switchAt.get(loc);
        String why = null;
        if (f.priority != HmuxLayout.PRIORITY_ROUTE || !f.match.containsKey("ip") || vip.contains("/")) {
            foreign.add(flowName(f));
            return;
        }
        if (target == null) {
            why = "towards location " + loc + ", which is no switch of " + fabric.file;
        } else if (fallback && rules.failsOver(loc)) {
            OvsDump.Group ff = groups.get(OvsRules.FAILOVER_GROUP_BASE + loc);
            if (f.group() != OvsRules.FAILOVER_GROUP_BASE + loc || ff == null || !"ff".equals(ff.type)
                    || ff.buckets.size() != 2 || !ff.buckets.get(1).actions.equals("group:" + OvsRules.FALLBACK_GROUP)) {
                why = "does not fall back to the SMuxes through failover group " + (OvsRules.FAILOVER_GROUP_BASE + loc);
            }
        } else if (f.group() >= OvsRules.FAILOVER_GROUP_BASE) {
            why = "goes through failover group " + f.group() + " without the fallback";
        }
        if (why != null || intent.routes.containsKey(vip)) {
            bad.put(ItemKey.route(vip), why != null ? why : "held twice");
            foreign.add(flowName(f));
            return;
        }
        intent.route(vip, target);
    }

    private void readAggregate(OvsDump.Flow f, String prefix, Map<Long, OvsDump.Group> groups,
                               SwitchIntent.Builder intent, OvsGroups handles, Map<ItemKey, String> bad,
                               Set<String> foreign) {
        if (f.priority != HmuxLayout.PRIORITY_AGGREGATE || !f.match.containsKey("ip")) {
            foreign.add(flowName(f));
            return;
        }
        OvsDump.Group g = groups.get(f.group());
        String why = g == null ? "its flow points at group " + f.group() + ", which does not exist"
                : !"select".equals(g.type) ? "group " + g.id + " is no select group" : null;
        Set<String> members = new TreeSet<>();
        if (why == null) {
            for (OvsDump.Bucket b : g.buckets) {
                if (b.id >= smuxIds.size()) {
                    why = "bucket " + b.id + " of group " + g.id + " is no SMux of " + fabric.file;
                    break;
                }
                members.add(smuxIds.get((int) b.id));
            }
        }
        if (why != null || intent.aggregates.containsKey(prefix)) {
            inconsistent(ItemKey.aggregate(prefix), why, f, g, bad, foreign);
            return;
        }
        intent.aggregate(prefix, members);
        handles.aggregates.put(prefix, g.id);
    }

    /** {@code key} is held otherwise than the layout writes it: its flow and group are deleted before it is written again. */
    private static void inconsistent(ItemKey key, String why, OvsDump.Flow f, OvsDump.Group g, Map<ItemKey, String> bad,
                                     Set<String> foreign) {
        bad.put(key, why != null ? why : "held twice");
        foreign.add(flowName(f));
        if (g != null) {
            foreign.add(groupName(g.id));
        }
    }

    /** With the fallback, every aggregate is in the fallback table too, towards the same group. */
    private void checkFallbackCopies(SwitchIntent.Builder intent, OvsGroups handles, Map<String, Long> copies,
                                     Map<ItemKey, String> bad, Set<String> foreign) {
        if (!intent.fallback) {
            copies.keySet().forEach(a -> foreign.add("flow table=" + fabric.fallbackTable + ","
                    + OvsRules.aggregateMatch(a)));
            return;
        }
        for (String a : new ArrayList<>(intent.aggregates.keySet())) {
            Long copy = copies.remove(a);
            if (copy == null || !copy.equals(handles.aggregates.get(a))) {
                bad.put(ItemKey.aggregate(a), "not in the fallback table " + fabric.fallbackTable + " as in table "
                        + fabric.vipTable);
                intent.aggregates.remove(a);
                foreign.add("flow table=" + fabric.vipTable + "," + OvsRules.aggregateMatch(a));
            }
        }
        copies.keySet().forEach(a -> foreign.add("flow table=" + fabric.fallbackTable + ","
                + OvsRules.aggregateMatch(a)));
    }
}
