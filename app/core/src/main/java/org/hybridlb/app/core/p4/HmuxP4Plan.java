package org.hybridlb.app.core.p4;

import static org.hybridlb.app.core.p4.HlbP4Info.*;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import org.hybridlb.app.core.hmux.CookieDecode;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchIntent;

/**
 * A switch's intent as the P4 entities it takes ({@link HmuxP4Layout}), reusing the ids of what it
 * holds ({@link HmuxP4Snapshot#ours}) so that an unchanged item is the same entities and a changed
 * one changes as little as it can:
 *
 * <ul>
 * <li>a service keeps its service id (and group id, the same number); a new one takes the lowest id
 *     free on the switch, never one in use there, so no packet of a removed service reaches the DIPs
 *     of a new one while a change is half applied;</li>
 * <li>a service whose buckets changed gets new members (ids above every member on the switch, in
 *     pool order, so a selector orders them as the SMuxes do) and its group is modified to list them
 *     in one update; the old members go after (make before break, {@link P4Diff});</li>
 * <li>each bucket counts in a {@code bucket_counter} index of its own on the switch, kept while
 *     the bucket stays ({@link BucketCounters}); a cookie server counts in its bucket's;</li>
 * <li>a service whose cookies the switch decodes has its {@code vip_servers} entries, and every
 *     server of such services one {@code all_servers} entry (a server id is one host fabric-wide);</li>
 * <li>an aggregate keeps its next id; each SMux has one {@code ecmp_selector} member shared by every
 *     aggregate ({@link HmuxP4Config#smuxMemberId}) running the hop the switch routes it with.</li>
 * </ul>
 */
public final class HmuxP4Plan {
    private final HmuxP4Config config;

    public HmuxP4Plan(HmuxP4Config config) {
        this.config = config;
    }

    /**
     * The entities {@code target} takes on a switch that holds {@code current}. Throws
     * IllegalArgumentException naming what the switch cannot hold (a route towards a switch without
     * a next id, an SMux it has no hop to, more services or members than the tables take).
     */
    public P4State plan(SwitchIntent target, HmuxP4Snapshot current) {
        P4State want = new P4State();
        Map<ServiceMatch, Long> serviceIds = new HashMap<>();
        Set<Long> usedServiceIds = new HashSet<>();
        long nextMember = 1;
        for (P4Entity e : current.ours.all()) {
            if (e instanceof P4TableEntry && HmuxP4Layout.isServiceTable(((P4TableEntry) e).tableId)) {
                P4TableEntry t = (P4TableEntry) e;
                P4Value sid = HmuxP4Layout.serviceIdOf(t.action);
                ServiceMatch m = HmuxP4Layout.serviceOf(t);
                if (sid != null && m != null && serviceIds.putIfAbsent(m, sid.asLong()) == null) {
                    usedServiceIds.add(sid.asLong());
                }
            } else if (e instanceof P4TableEntry && ((P4TableEntry) e).tableId == HMUX_DIP_SELECT_ID) {
                usedServiceIds.add(((P4TableEntry) e).match(HMUX_DIP_SELECT_SERVICE_ID_ID).value.asLong());
            } else if (e instanceof P4Group && ((P4Group) e).profileId == HMUX_DIP_SELECTOR_ID) {
                usedServiceIds.add(((P4Group) e).groupId);
            } else if (e instanceof P4Member && ((P4Member) e).profileId == HMUX_DIP_SELECTOR_ID) {
                nextMember = Math.max(nextMember, ((P4Member) e).memberId + 1);
            }
        }
        Map<Long, P4Group> groups = current.ours.groups(HMUX_DIP_SELECTOR_ID);
        Map<Long, P4Member> members = current.ours.members(HMUX_DIP_SELECTOR_ID);
        BucketCounters counters = new BucketCounters(current.ours);
        long entryCookie = HmuxLayout.cookie(config.cookieBase, HmuxLayout.Kind.ENTRY, 0);
        int units = 0;
        long freeId = 1;
        Map<Integer, String> servers = new TreeMap<>(); // AllServers: server id -> host
        int poolServers = 0;
        if (target.entries.size() >= HMUX_SERVICE_SIZE) {
            throw new IllegalArgumentException(target.entries.size() + " HMux services, service_counter counts "
                    + (HMUX_SERVICE_SIZE - 1));
        }
        for (Map.Entry<ServiceMatch, List<DipBucket>> e : target.entries.entrySet()) {
            Long sid = serviceIds.get(e.getKey());
            if (sid == null) {
                while (usedServiceIds.contains(freeId)) {
                    freeId++;
                }
                sid = freeId;
                usedServiceIds.add(sid);
            }
            if (sid >= HMUX_SERVICE_SIZE) { // service_counter's index: 0 is no service
                throw new IllegalArgumentException("no service id left for " + e.getKey() + ": service_counter counts"
                        + " ids 1-" + (HMUX_SERVICE_SIZE - 1) + " and the switch holds them all (a service being"
                        + " replaced keeps its id until the change is applied)");
            }
            CookieDecode cookies = target.cookies.get(e.getKey());
            want.add(HmuxP4Layout.serviceEntry(e.getKey(), sid.intValue(), config.encap, cookies, entryCookie));
            Map<Integer, Integer> counted = counters.buckets(e.getKey(), sid, e.getValue());
            if (cookies != null) {
                for (Map.Entry<Integer, CookieDecode.Server> s : cookies.servers.entrySet()) {
                    Integer index = counted.get(s.getValue().bucket);
                    want.add(HmuxP4Layout.vipServersEntry(sid.intValue(), s.getKey(),
                            index != null ? index : counters.server(e.getKey(), sid, s.getKey()), entryCookie));
                    String other = servers.putIfAbsent(s.getKey(), s.getValue().endpoint);
                    if (other != null && !other.equals(s.getValue().endpoint)) {
                        throw new IllegalArgumentException(e.getKey() + ": server id " + s.getKey() + " is "
                                + s.getValue().endpoint + ", another service has it at " + other);
                    }
                    poolServers++;
                }
            }
            want.add(HmuxP4Layout.dipSelectEntry(sid.intValue(), sid, entryCookie));
            List<P4Action> layout = new ArrayList<>();
            for (DipBucket b : e.getValue()) {
                for (int i = 0; i < b.weight; i++) {
                    layout.add(HmuxP4Layout.dipAction(b.endpoint, counted.get(b.id)));
                }
            }
            units += layout.size();
            List<Long> ids = reusable(groups.get(sid), members, layout);
            if (ids == null) {
                ids = new ArrayList<>();
                for (P4Action a : layout) {
                    want.add(new P4Member(HMUX_DIP_SELECTOR, HMUX_DIP_SELECTOR_ID, nextMember, a));
                    ids.add(nextMember++);
                }
            } else {
                ids.forEach(id -> want.add(members.get(id)));
            }
            want.add(HmuxP4Layout.dipGroup(sid, ids));
        }
        if (servers.size() > CHEETAH_SERVERS_SIZE || poolServers > CHEETAH_POOL_SERVERS_SIZE) {
            throw new IllegalArgumentException(servers.size() + " cookie servers in " + poolServers
                    + " service pools, all_servers holds " + CHEETAH_SERVERS_SIZE + ", vip_servers "
                    + CHEETAH_POOL_SERVERS_SIZE);
        }
        servers.forEach((id, host) -> want.add(HmuxP4Layout.allServersEntry(id, host, entryCookie)));
        if (units > HMUX_SELECTOR_SIZE) {
            throw new IllegalArgumentException(units + " weight units of HMux buckets, dip_selector holds "
                    + HMUX_SELECTOR_SIZE + " members");
        }
        routes(target, want);
        aggregates(target, current, want);
        return want;
    }

    /** The member ids of {@code g} when they already lay out {@code layout}, else null. */
    private static List<Long> reusable(P4Group g, Map<Long, P4Member> members, List<P4Action> layout) {
        if (g == null || g.memberIds.size() != layout.size()) {
            return null;
        }
        long last = 0;
        for (int i = 0; i < layout.size(); i++) {
            P4Member m = members.get(g.memberIds.get(i));
            if (m == null || !m.action.equals(layout.get(i)) || m.memberId <= last) {
                return null;
            }
            last = m.memberId;
        }
        return g.memberIds;
    }

    private void routes(SwitchIntent target, P4State want) {
        target.routes.forEach((vip, hmux) -> {
            Integer next = config.nextIds.get(hmux);
            if (next == null) {
                throw new IllegalArgumentException("route of " + vip + " towards " + hmux
                        + ": the fabric gives no next id towards that switch");
            }
            want.add(HmuxP4Layout.routeEntry(vip + "/32", next,
                    HmuxLayout.cookie(config.cookieBase, HmuxLayout.Kind.ROUTE, next)));
        });
    }

    private void aggregates(SwitchIntent target, HmuxP4Snapshot current, P4State want) {
        Map<String, Integer> nextIds = new HashMap<>();
        Set<Integer> used = new HashSet<>();
        for (P4TableEntry e : current.ours.entries(ROUTING_ROUTING_V4_ID)) {
            long next = HmuxP4Layout.nextIdOf(e);
            if (HmuxLayout.kindOf(e.cookie) == HmuxLayout.Kind.AGGREGATE && config.isAggregateNextId(next)
                    && used.add((int) next)) {
                nextIds.put(HmuxP4Layout.prefixOf(e), (int) next);
            }
        }
        current.ours.entries(ROUTING_NEXT_HOP_ID).forEach(e -> used.add((int) e.match(ROUTING_NEXT_HOP_NEXT_ID_ID).value.asLong()));
        current.ours.groups(ROUTING_ECMP_SELECTOR_ID).keySet().forEach(g -> used.add(g.intValue()));
        int free = config.aggregateNextIdBase;
        for (Map.Entry<String, SortedSet<String>> a : target.aggregates.entrySet()) {
            Integer next = nextIds.get(a.getKey());
            if (next == null) {
                while (used.contains(free)) {
                    free++;
                }
                if (!config.isAggregateNextId(free)) {
                    throw new IllegalArgumentException("aggregate " + a.getKey() + ": no aggregate next id left");
                }
                next = free;
                used.add(next);
            }
            long cookie = HmuxLayout.cookie(config.cookieBase, HmuxLayout.Kind.AGGREGATE, next);
            List<Long> ids = new ArrayList<>();
            for (String smux : a.getValue()) {
                P4Action hop = current.smuxHops.get(smux);
                if (hop == null) {
                    throw new IllegalArgumentException("aggregate " + a.getKey() + ": the switch has no hop to SMux " + smux);
                }
                long id = config.smuxMemberId(smux);
                want.add(HmuxP4Layout.smuxMember(id, hop));
                ids.add(id);
            }
            want.add(HmuxP4Layout.smuxGroup(next, ids));
            want.add(HmuxP4Layout.nextHopEntry(next, next, cookie));
            want.add(HmuxP4Layout.routeEntry(a.getKey(), next, cookie));
        }
    }
}
