package org.hybridlb.standalone.ovs;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.hmux.ItemKey;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.Ipv4;
import org.hybridlb.standalone.Fabric;

/**
 * Renders a {@link SwitchDelta} into the {@code ovs-ofctl bundle} lines of one bridge, in an order
 * the switch accepts as one atomic bundle: foreign and removed flows first, then their groups'
 * deletions no flow needs any more, then groups before the flows that point at them. Group ids
 * come from the bridge's {@link OvsGroups} (a changed entry keeps its group: {@code add_or_mod}).
 */
final class OvsRenderer {
    private final Fabric fabric;
    private final OvsRules rules;

    OvsRenderer(Fabric fabric, OvsRules rules) {
        this.fabric = fabric;
        this.rules = rules;
    }

    /** The lines for {@code d} on {@code sw}; {@code groups} follows what they do. */
    List<String> render(Fabric.SwitchInfo sw, SwitchDelta d, OvsGroups groups) {
        Lines out = new Lines();
        int vip = fabric.vipTable;
        // 1. foreign objects and the flows of what goes
        for (String f : d.foreign) {
            if (f.startsWith("flow ")) {
                out.deletes.add("flow delete_strict " + f.substring("flow ".length()));
            } else {
                out.groupDeletes.add(f.replace("group ", "group delete group_id="));
            }
        }
        for (String t : d.withdrawTowards) {
            Fabric.SwitchInfo x = fabric.switches.get(t);
            if (x != null) {
                out.deletes.add("flow delete table=" + vip + ",cookie=" + OvsRules.hex(rules.routeCookie(x.location)) + "/-1");
            }
        }
        for (String v : d.removeRoutes) {
            if (d.withdrawTowards.isEmpty()) {
                out.deletes.add("flow delete_strict table=" + vip + "," + OvsRules.routeMatch(v));
            }
        }
        for (ServiceMatch m : d.removeEntries) {
            out.deletes.add("flow delete_strict table=" + vip + "," + OvsRules.entryMatch(m));
            Long g = groups.entries.remove(m);
            if (g != null) {
                out.groupDeletes.add("group delete group_id=" + g);
                groups.release(g);
            }
        }
        for (String a : d.removeAggregates) {
            out.deletes.add("flow delete_strict table=" + vip + "," + OvsRules.aggregateMatch(a));
            if (fabric.fastFailover()) {
                out.deletes.add("flow delete_strict table=" + fabric.fallbackTable + "," + OvsRules.aggregateMatch(a));
            }
            Long g = groups.aggregates.remove(a);
            if (g != null) {
                out.groupDeletes.add("group delete group_id=" + g);
                groups.release(g);
            }
        }
        // 2. the fallback, then what is written
        boolean fallback = d.target != null && d.target.fallback && fabric.fastFailover();
        Map<String, String> routes = d.putRoutes;
        if (d.fallback != null) {
            routes = d.target.routes; // every route is spelt anew with or without its failover group
            if (fallback) {
                out.groups.add("group add_or_mod group_id=" + OvsRules.FALLBACK_GROUP + ",type=indirect,"
                        + "bucket=actions=resubmit(," + fabric.fallbackTable + ")");
            }
        }
        for (Map.Entry<ServiceMatch, List<DipBucket>> e : d.putEntries.entrySet()) {
            putEntry(sw, e.getKey(), e.getValue(), groups, out, d.rewrite.containsKey(ItemKey.entry(e.getKey())));
        }
        for (Map.Entry<String, SortedSet<String>> e : d.putAggregates.entrySet()) {
            putAggregate(e.getKey(), e.getValue(), groups, out, d.target != null && d.target.fallback,
                    d.rewrite.containsKey(ItemKey.aggregate(e.getKey())));
        }
        for (Map.Entry<String, String> r : routes.entrySet()) {
            Fabric.SwitchInfo x = fabric.switches.get(r.getValue());
            if (x == null) {
                throw new SouthboundException("switch " + r.getValue() + " is not in " + fabric.file);
            }
            out.flows.add("flow add table=" + vip + ",cookie=" + OvsRules.hex(rules.routeCookie(x.location)) + ","
                    + OvsRules.routeMatch(r.getKey()) + " actions=" + routeActions(x.location, fallback, groups, out));
        }
        if (Boolean.FALSE.equals(d.fallback) && fabric.fastFailover()) {
            for (int loc : groups.failover) {
                out.groupDeletes.add("group delete group_id=" + (OvsRules.FAILOVER_GROUP_BASE + loc));
            }
            groups.failover.clear();
            out.groupDeletes.add("group delete group_id=" + OvsRules.FALLBACK_GROUP);
            for (String a : d.target.aggregates.keySet()) {
                out.deletes.add("flow delete_strict table=" + fabric.fallbackTable + "," + OvsRules.aggregateMatch(a));
            }
        }
        if (Boolean.TRUE.equals(d.fallback)) {
            for (String a : d.target.aggregates.keySet()) {
                if (!d.putAggregates.containsKey(a) && groups.aggregates.containsKey(a)) {
                    out.flows.add(aggregateFlow(fabric.fallbackTable, a, groups.aggregates.get(a)));
                }
            }
        }
        return out.all();
    }

    /**
     * A new or rewritten entry gets its flow; a changed one only its group (the flow, its counters
     * and age stay: the traffic matrix reads them).
     */
    private void putEntry(Fabric.SwitchInfo sw, ServiceMatch m, List<DipBucket> buckets, OvsGroups groups, Lines out,
                          boolean rewrite) {
        if (sw.tunnelOfport == null) {
            throw new SouthboundException("switch " + sw.id + " has no tunnel port in " + fabric.file
                    + " and cannot be an HMux");
        }
        boolean created = !groups.entries.containsKey(m);
        long gid = groups.entries.computeIfAbsent(m, k -> groups.allocate());
        StringBuilder g = new StringBuilder("group add_or_mod group_id=" + gid + ",type=select," + OvsRules.HASH);
        for (DipBucket b : buckets) {
            g.append(",bucket=bucket_id:").append(b.id).append(",weight:").append(b.weight).append(",actions=");
            if (b.dip != null && !b.dip.equals(b.endpoint)) {
                // the DIP, for a reader to give it back (the tunnel endpoint is what the packet needs)
                g.append("set_field:").append(OvsRules.hex(Integer.toUnsignedLong(Ipv4.parse(b.dip)))).append("->reg1,");
            }
            g.append("set_field:").append(b.endpoint).append("->tun_dst,output:").append(sw.tunnelOfport);
        }
        out.groups.add(g.toString());
        if (!created && !rewrite) {
            return;
        }
        String prefix = sw.tunnelActionsPrefix == null ? "" : sw.tunnelActionsPrefix.strip();
        out.flows.add("flow add table=" + fabric.vipTable + ",cookie=" + OvsRules.hex(rules.cookie(HmuxLayout.Kind.ENTRY, 0))
                + "," + OvsRules.entryMatch(m) + " actions=" + (prefix.isEmpty() ? "" : prefix + ",") + "group:" + gid);
    }

    private void putAggregate(String a, SortedSet<String> smuxes, OvsGroups groups, Lines out, boolean fallback,
                              boolean rewrite) {
        List<String> ids = new ArrayList<>(fabric.smuxes.keySet());
        boolean created = !groups.aggregates.containsKey(a);
        long gid = groups.aggregates.computeIfAbsent(a, k -> groups.allocate());
        StringBuilder g = new StringBuilder("group add_or_mod group_id=" + gid + ",type=select," + OvsRules.HASH);
        for (String m : smuxes) {
            int idx = ids.indexOf(m);
            if (idx < 0) {
                throw new SouthboundException("SMux " + m + " is not in " + fabric.file);
            }
            g.append(",bucket=bucket_id:").append(idx).append(",actions=")
                    .append(fabric.routeTo(fabric.smuxLocation(fabric.topology.smuxes.stream()
                            .filter(s -> s.id.equals(m)).findFirst().orElseThrow())));
        }
        out.groups.add(g.toString());
        // A new member set changes the group only: the aggregate flows stay as they are (their
        // counters and age too), or every SMux change would look like a re-installation.
        if (!created && !rewrite) {
            return;
        }
        out.flows.add(aggregateFlow(fabric.vipTable, a, gid));
        if (fallback && fabric.fastFailover()) {
            out.flows.add(aggregateFlow(fabric.fallbackTable, a, gid));
        }
    }

    private String aggregateFlow(int table, String a, long gid) {
        return "flow add table=" + table + ",cookie=" + OvsRules.hex(rules.cookie(HmuxLayout.Kind.AGGREGATE, 0)) + ","
                + OvsRules.aggregateMatch(a) + " actions=group:" + gid;
    }

    /** Towards an HMux at {@code loc}: through its fast-failover group when the switch has the fallback. */
    private String routeActions(int loc, boolean fallback, OvsGroups groups, Lines out) {
        if (!fallback || !rules.failsOver(loc)) {
            return fabric.routeTo(loc);
        }
        if (!groups.failover.contains(loc) && out.failover.add(loc)) {
            out.groups.add("group add_or_mod group_id=" + (OvsRules.FAILOVER_GROUP_BASE + loc) + ",type=ff"
                    + ",bucket=bucket_id:0,watch_group:" + fabric.watchGroupOf(loc) + ",actions=" + fabric.routeTo(loc)
                    + ",bucket=bucket_id:1,watch_group:" + OvsRules.FALLBACK_GROUP + ",actions=group:"
                    + OvsRules.FALLBACK_GROUP);
            groups.failover.add(loc);
        }
        return "group:" + (OvsRules.FAILOVER_GROUP_BASE + loc);
    }

    /** A bundle's lines by kind, in the order the switch needs them. */
    private static final class Lines {
        final List<String> deletes = new ArrayList<>();
        final List<String> groups = new ArrayList<>();
        final List<String> flows = new ArrayList<>();
        final List<String> groupDeletes = new ArrayList<>();
        final Set<Integer> failover = new LinkedHashSet<>();

        List<String> all() {
            List<String> out = new ArrayList<>(deletes);
            out.addAll(groups);
            out.addAll(flows);
            out.addAll(groupDeletes);
            return out;
        }
    }
}
