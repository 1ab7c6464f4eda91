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
import java.util.TreeSet;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.hmux.CookieDecode;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.hmux.ItemKey;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.solver.model.Ipv4;

/**
 * Reads what a P4 switch holds (every entry of the HMux and routing tables, every member and group
 * of both action profiles) back into the intent it stands for, without memory of its own: a service
 * by its table entry, its {@code dip_select} entry and group, its buckets from the runs of equal
 * weight-unit members, its cookies (a Cheetah program) from its {@code vip_servers} and their
 * {@code all_servers} entries; routes and aggregates by their cookie. A switch keeps no bucket ids:
 * a bucket's id is its position in the group, its {@code bucket} parameter the switch's counter
 * index ({@link BucketCounters}); a cookie server's bucket is the position of the run counting in
 * its index, or -1 when none does. Anything half-written (a service whose group is missing, a
 * counter index in two runs or two services, another encapsulation, an aggregate member with a
 * stale hop) is inconsistent, with why; anything of the controller's that no item accounts for is
 * foreign.
 */
public final class HmuxP4Reader {
    private final HmuxP4Config config;

    public HmuxP4Reader(HmuxP4Config config) {
        this.config = config;
    }

    /** Whether a table entry's cookie is one of the controller's, of kind {@code kind}. */
    boolean ours(P4TableEntry e, HmuxLayout.Kind kind) {
        return (e.cookie & 0xffffffffL & ~HmuxLayout.KIND_MASK) == config.cookieBase
                && HmuxLayout.kindOf(e.cookie) == kind;
    }

    public HmuxP4Snapshot read(P4State device) {
        P4State ours = new P4State();
        Set<String> explained = new HashSet<>();
        Map<ItemKey, String> bad = new TreeMap<>();
        Map<String, String> unreachable = new TreeMap<>();
        SwitchIntent.Builder intent = SwitchIntent.builder();

        // the HMux tables and dip_selector are the controller's alone
        for (int t : new int[] {HMUX_VIP_SERVICE_ID, HMUX_VIP_SERVICE_ANY_PORT_ID, HMUX_VIP_WHOLE_ID, HMUX_DIP_SELECT_ID,
                                CHEETAH_VIP_SERVERS_ID, CHEETAH_ALL_SERVERS_ID}) {
            ours.addAll(device.entries(t));
        }
        Map<Long, P4Member> dipMembers = device.members(HMUX_DIP_SELECTOR_ID);
        Map<Long, P4Group> dipGroups = device.groups(HMUX_DIP_SELECTOR_ID);
        ours.addAll(dipMembers.values());
        ours.addAll(dipGroups.values());
        Map<Long, P4TableEntry> dipSelect = new HashMap<>();
        device.entries(HMUX_DIP_SELECT_ID).forEach(e -> dipSelect.put(e.match(HMUX_DIP_SELECT_SERVICE_ID_ID).value.asLong(), e));

        Map<Long, List<P4TableEntry>> vipServers = new HashMap<>();
        device.entries(CHEETAH_VIP_SERVERS_ID).forEach(e -> vipServers.computeIfAbsent(
                e.match(CHEETAH_VIP_SERVERS_SERVICE_ID_ID).value.asLong(), k -> new ArrayList<>()).add(e));
        Map<Long, P4TableEntry> allServers = new HashMap<>();
        device.entries(CHEETAH_ALL_SERVERS_ID).forEach(e -> allServers.put(
                e.match(CHEETAH_ALL_SERVERS_SERVER_ID_ID).value.asLong(), e));

        Map<Long, ServiceMatch> byServiceId = new HashMap<>();
        Map<Integer, ServiceMatch> counterOwners = new HashMap<>();
        for (P4TableEntry e : serviceEntries(device)) {
            ServiceMatch m = HmuxP4Layout.serviceOf(e);
            if (m == null) {
                continue; // not a match this layout writes: foreign
            }
            explained.add(e.key());
            String why = null;
            List<DipBucket> buckets = null;
            CookieDecode cookies = null;
            if (HmuxP4Layout.serviceIdOf(e.action) == null) {
                why = "runs " + e.action + ", not set_service or set_cookie_service";
            } else {
                long sid = HmuxP4Layout.serviceIdOf(e.action).asLong();
                ServiceMatch other = byServiceId.putIfAbsent(sid, m);
                P4TableEntry sel = dipSelect.get(sid);
                org.hybridlb.app.core.hmux.HashContract.Encap encap =
                        HmuxP4Layout.encapOf(HmuxP4Layout.encapCodeOf(e.action).asLong());
                if (other != null) {
                    why = "shares service id " + sid + " with " + other;
                    bad.put(ItemKey.entry(other), "shares service id " + sid + " with " + m);
                } else if (encap != config.encap) {
                    why = "encapsulates in " + encap + ", this switch's HMux in " + config.encap;
                } else if (sel == null || sel.groupId == null) {
                    why = "service id " + sid + " has no dip_select entry to a group";
                } else {
                    explained.add(sel.key());
                    P4Group g = dipGroups.get(sel.groupId);
                    if (g == null) {
                        why = "dip_select " + sid + " points at no dip_selector group " + sel.groupId;
                    } else {
                        explained.add(g.key());
                        List<String> problem = new ArrayList<>(1);
                        List<Integer> counters = new ArrayList<>();
                        buckets = buckets(g, dipMembers, explained, problem, counters);
                        if (problem.isEmpty() && e.action.id == HMUX_SET_COOKIE_SERVICE_ID) {
                            cookies = cookies(e.action, vipServers.getOrDefault(sid, List.of()), allServers,
                                    explained, problem, counters);
                        }
                        if (problem.isEmpty()) {
                            counterOwned(m, counters, counterOwners, problem);
                        }
                        why = problem.isEmpty() ? null : problem.get(0);
                    }
                }
            }
            if (why != null) {
                bad.put(ItemKey.entry(m), why);
            } else {
                intent.entry(m, buckets);
                if (cookies != null) {
                    intent.cookies(m, cookies);
                }
            }
        }
        bad.keySet().stream().filter(k -> k.item == ItemKey.Item.ENTRY).forEach(k -> {
            intent.entries.remove(k.match);
            intent.cookies.remove(k.match);
        });

        Map<String, P4Action> hops = smuxHops(device, unreachable);
        switchReachability(device, unreachable);
        readRoutes(device, ours, explained, bad, intent, hops);

        for (P4Entity e : ours.all()) {
            if (!explained.contains(e.key())) {
                bad.put(ItemKey.foreign(e.key()), "belongs to no HMux entry, route or aggregate");
            }
        }
        return new HmuxP4Snapshot(new SwitchReading(intent.build(), bad, unreachable), ours, hops);
    }

    private static List<P4TableEntry> serviceEntries(P4State device) {
        List<P4TableEntry> out = new ArrayList<>(device.entries(HMUX_VIP_SERVICE_ID));
        out.addAll(device.entries(HMUX_VIP_SERVICE_ANY_PORT_ID));
        out.addAll(device.entries(HMUX_VIP_WHOLE_ID));
        return out;
    }

    /** Claims service {@code m}'s counter indexes, the problem when another service counts in one. */
    private static void counterOwned(ServiceMatch m, List<Integer> counters, Map<Integer, ServiceMatch> owners,
                                     List<String> problem) {
        for (int i : counters) {
            ServiceMatch other = owners.putIfAbsent(i, m);
            if (other != null && !other.equals(m)) {
                problem.add("counts in bucket_counter index " + i + " with " + other);
                return;
            }
        }
    }

    /**
     * What a {@code set_cookie_service} entry decodes with: its key (crc32c, the programs' only mode)
     * and its {@code vip_servers} entries, each with the host of its {@code all_servers} entry; null
     * with the problem when the switch holds it otherwise than this layer writes it.
     */
    private static CookieDecode cookies(P4Action a, List<P4TableEntry> accepted, Map<Long, P4TableEntry> allServers,
                                        Set<String> explained, List<String> problem, List<Integer> counters) {
        try {
            long affinity = a.param(HMUX_SET_COOKIE_SERVICE_AFFINITY_ID).asLong();
            long owner = a.param(HMUX_SET_COOKIE_SERVICE_OWNER_ID_ID).asLong();
            if (affinity != AFFINITY_CHEETAH || owner != 0) {
                problem.add("decodes with affinity " + affinity + " and owner " + owner
                        + ", not the stateless cheetah affinity with owner 0");
                return null;
            }
            Map<Integer, CookieDecode.Server> servers = new TreeMap<>();
            int runs = counters.size();
            for (P4TableEntry v : accepted) {
                long id = v.match(CHEETAH_VIP_SERVERS_SERVER_ID_ID).value.asLong();
                P4TableEntry host = allServers.get(id);
                if (v.action == null || v.action.id != CHEETAH_ACCEPT_SERVER_ID || host == null
                        || host.action == null || host.action.id != CHEETAH_SET_SERVER_ID) {
                    problem.add("server id " + id + (host == null ? " has no all_servers entry" : " runs "
                            + v.action + " / " + host.action));
                    return null;
                }
                explained.add(v.key());
                explained.add(host.key());
                int index = BucketCounters.indexOf(v.action);
                int bucket = counters.indexOf(index); // the run counting there, or an index of its own
                if (bucket >= runs) {
                    problem.add("server ids " + id + " and another count in bucket_counter index " + index);
                    return null;
                } else if (bucket < 0) {
                    counters.add(index);
                }
                servers.put((int) id, new CookieDecode.Server(host.action.param(CHEETAH_SET_SERVER_DIP_ID).asIpv4(),
                        bucket));
            }
            return new CookieDecode(Cookie.HashMode.CRC32C, HmuxP4Layout.cookieKeyOf(a), servers);
        } catch (RuntimeException unreadable) {
            problem.add("cookie service unreadable: " + unreadable.getMessage());
            return null;
        }
    }

    /**
     * A group's buckets: each run of equal {@code set_dip} members is one bucket, its length the
     * weight, its position the id; {@code counters} gets each run's counter index, in order.
     */
    private static List<DipBucket> buckets(P4Group g, Map<Long, P4Member> members, Set<String> explained,
                                           List<String> problem, List<Integer> counters) {
        List<DipBucket> out = new ArrayList<>();
        Set<Integer> seen = new HashSet<>();
        P4Action run = null;
        int weight = 0;
        for (long id : g.memberIds) {
            P4Member m = members.get(id);
            if (m == null || m.action.id != HMUX_SET_DIP_ID) {
                problem.add("group " + g.groupId + (m == null ? " lists no member " + id : " member " + id + " runs " + m.action));
                return null;
            }
            explained.add(m.key());
            if (m.action.equals(run)) {
                weight++;
                continue;
            }
            if (run != null) {
                out.add(bucket(out.size(), run, weight));
            }
            run = m.action;
            weight = 1;
            if (!seen.add(BucketCounters.indexOf(run))) {
                problem.add("group " + g.groupId + ": bucket_counter index " + BucketCounters.indexOf(run)
                        + " counts two runs");
                return null;
            }
            counters.add(BucketCounters.indexOf(run));
        }
        if (run != null) {
            out.add(bucket(out.size(), run, weight));
        }
        if (out.stream().anyMatch(b -> b == null)) {
            problem.add("group " + g.groupId + ": a bucket of more than 65535 members");
            return null;
        }
        return out;
    }

    private static DipBucket bucket(int position, P4Action a, int weight) {
        return weight > 65535 ? null : new DipBucket(position, null, a.param(HMUX_SET_DIP_TUNNEL_DST_ID).asIpv4(), weight);
    }

    private void readRoutes(P4State device, P4State ours, Set<String> explained, Map<ItemKey, String> bad,
                            SwitchIntent.Builder intent, Map<String, P4Action> hops) {
        Map<Long, P4TableEntry> nextHops = nextHops(device);
        Map<Long, P4Group> ecmpGroups = device.groups(ROUTING_ECMP_SELECTOR_ID);
        Map<Long, P4Member> ecmpMembers = device.members(ROUTING_ECMP_SELECTOR_ID);
        nextHops.values().stream().filter(e -> config.isAggregateNextId(e.match(ROUTING_NEXT_HOP_NEXT_ID_ID).value.asLong()))
                .forEach(ours::add);
        ecmpGroups.values().stream().filter(g -> config.isAggregateNextId(g.groupId)).forEach(ours::add);
        ecmpMembers.values().stream().filter(m -> config.isSmuxMember(m.memberId)).forEach(ours::add);
        for (P4TableEntry e : device.entries(ROUTING_ROUTING_V4_ID)) {
            boolean route = ours(e, HmuxLayout.Kind.ROUTE);
            boolean aggregate = ours(e, HmuxLayout.Kind.AGGREGATE);
            if (!route && !aggregate) {
                continue; // the fabric's
            }
            ours.add(e);
            String prefix = HmuxP4Layout.prefixOf(e);
            long next = HmuxP4Layout.nextIdOf(e);
            if (prefix == null) {
                continue; // foreign
            }
            explained.add(e.key());
            if (route) {
                String vip = prefix.substring(0, prefix.indexOf('/'));
                String hmux = config.switchOfNextId(next);
                if (!prefix.endsWith("/32") || hmux == null) {
                    bad.put(ItemKey.route(vip), prefix + " to next id " + next + (hmux == null ? ", no switch's" : ""));
                } else {
                    intent.route(vip, hmux);
                }
                continue;
            }
            List<String> problem = new ArrayList<>(1);
            SortedSet<String> smuxes = aggregate(next, nextHops, ecmpGroups, ecmpMembers, hops, explained, problem);
            if (problem.isEmpty()) {
                intent.aggregate(prefix, smuxes);
            } else {
                bad.put(ItemKey.aggregate(prefix), problem.get(0));
            }
        }
    }

    private SortedSet<String> aggregate(long next, Map<Long, P4TableEntry> nextHops, Map<Long, P4Group> groups,
                                        Map<Long, P4Member> members, Map<String, P4Action> hops,
                                        Set<String> explained, List<String> problem) {
        SortedSet<String> out = new TreeSet<>();
        P4TableEntry nh = nextHops.get(next);
        P4Group g = nh == null || nh.groupId == null ? null : groups.get(nh.groupId);
        if (!config.isAggregateNextId(next) || g == null) {
            problem.add("next id " + next + (config.isAggregateNextId(next) ? " leads to no ecmp_selector group"
                    : " is none of the controller's aggregate next ids"));
            return out;
        }
        explained.add(nh.key());
        explained.add(g.key());
        for (long id : g.memberIds) {
            String smux = config.smuxOfMember(id);
            P4Member m = members.get(id);
            if (smux == null || m == null) {
                problem.add("group " + g.groupId + " lists member " + id + (smux == null ? ", no SMux's" : ", missing"));
                return out;
            }
            explained.add(m.key());
            if (!m.action.equals(hops.get(smux))) {
                problem.add("member " + id + " towards SMux " + smux + " runs " + m.action + ", the switch routes "
                        + config.smuxAddresses.get(smux) + " with " + hops.get(smux));
                return out;
            }
            if (!out.add(smux)) {
                problem.add("group " + g.groupId + " lists SMux " + smux + " twice");
                return out;
            }
        }
        return out;
    }

    private static Map<Long, P4TableEntry> nextHops(P4State device) {
        Map<Long, P4TableEntry> out = new HashMap<>();
        device.entries(ROUTING_NEXT_HOP_ID).forEach(e -> out.put(e.match(ROUTING_NEXT_HOP_NEXT_ID_ID).value.asLong(), e));
        return out;
    }

    /** The first hop of next id {@code next} (its member, or its group's first member), or null. */
    private static P4Action firstHop(P4State device, Map<Long, P4TableEntry> nextHops, long next) {
        P4TableEntry nh = nextHops.get(next);
        if (nh == null) {
            return null;
        }
        Long member = nh.memberId;
        if (nh.groupId != null) {
            P4Group g = device.groups(ROUTING_ECMP_SELECTOR_ID).get(nh.groupId);
            member = g == null || g.memberIds.isEmpty() ? null : g.memberIds.get(0);
        }
        P4Member m = member == null ? null : device.members(ROUTING_ECMP_SELECTOR_ID).get(member);
        return m == null ? null : m.action;
    }

    /** Each SMux's hop by the fabric's routes (longest prefix of the entries not the controller's). */
    private Map<String, P4Action> smuxHops(P4State device, Map<String, String> unreachable) {
        Map<Long, P4TableEntry> nextHops = nextHops(device);
        Map<String, P4Action> out = new TreeMap<>();
        config.smuxAddresses.forEach((id, ip) -> {
            long addr = Ipv4.parse(ip) & 0xffffffffL;
            P4TableEntry best = null;
            for (P4TableEntry e : device.entries(ROUTING_ROUTING_V4_ID)) {
                P4Match m = e.match(ROUTING_ROUTING_V4_DST_ADDR_ID);
                if (m == null || ours(e, HmuxLayout.Kind.ROUTE) || ours(e, HmuxLayout.Kind.AGGREGATE)) {
                    continue;
                }
                long mask = m.prefixLen == 0 ? 0 : (0xffffffffL << (32 - m.prefixLen)) & 0xffffffffL;
                if ((addr & mask) == m.value.asLong() && (best == null || m.prefixLen > best.matches.get(0).prefixLen)) {
                    best = e;
                }
            }
            P4Action hop = best == null ? null : firstHop(device, nextHops, HmuxP4Layout.nextIdOf(best));
            if (hop == null) {
                unreachable.put(id, best == null ? "this switch has no route to " + ip
                        : "its route to " + ip + " has no next hop");
            } else {
                out.put(id, hop);
            }
        });
        return out;
    }

    /** Switches whose next id has no hop here cannot be routed to (a route towards them would drop). */
    private void switchReachability(P4State device, Map<String, String> unreachable) {
        Map<Long, P4TableEntry> nextHops = nextHops(device);
        config.nextIds.forEach((sw, next) -> {
            if (firstHop(device, nextHops, next) == null) {
                unreachable.put(sw, "no next hop for its next id " + next + " on this switch");
            }
        });
    }
}
