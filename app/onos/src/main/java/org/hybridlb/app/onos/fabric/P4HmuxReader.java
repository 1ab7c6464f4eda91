package org.hybridlb.app.onos.fabric;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.ItemKey;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.group.Group;
import org.onosproject.net.pi.runtime.PiActionProfileGroupId;
import org.onosproject.net.pi.runtime.PiGroupKey;

/**
 * Reads what ONOS holds for the app on a P4 device back into the intent it stands for, by
 * {@link P4HmuxRules}' form alone (tables, actions, service ids, group ids): no record of what was
 * written. A service whose {@code dip_select} entry or group is missing, not held by ONOS, or not of
 * the layout's form is inconsistent; a route whose next id names no switch is inconsistent; a rule or
 * group of the app that stands for nothing is foreign. The device keeps bucket ids and tunnel
 * endpoints, not DIPs. Aggregates are not routed by this renderer (the SMuxes' next hops are the
 * fabric's): every SMux reads as unreachable from here, with why, so the core leaves them out.
 */
final class P4HmuxReader {
    static final String NO_AGGREGATES = "the P4 renderer routes no aggregate: SMux next hops on P4 devices are"
            + " the fabric's routing";

    private final OnosSender sender;

    P4HmuxReader(OnosSender sender) {
        this.sender = sender;
    }

    /** One service entry read: its match, id and rule. */
    static final class Service {
        final ServiceMatch match;
        final int id;
        final FlowEntry rule;

        Service(ServiceMatch match, int id, FlowEntry rule) {
            this.match = match;
            this.id = id;
            this.rule = rule;
        }
    }

    /** The service entries among {@code flows}, by service id (the first of a duplicated id). */
    static Map<Integer, Service> services(List<FlowEntry> flows) {
        Map<Integer, Service> out = new TreeMap<>();
        for (FlowEntry e : flows) {
            ServiceMatch m = P4HmuxRules.matchOf(e);
            int id = P4HmuxRules.serviceIdOf(e);
            if (m != null && id > 0) {
                out.putIfAbsent(id, new Service(m, id, e));
            }
        }
        return out;
    }

    SwitchReading read(FabricView.SwitchSpec sw, FabricView view, List<FlowEntry> flows,
                       Map<String, Integer> nextIds) {
        Map<Integer, Group> groups = new HashMap<>();
        Map<ItemKey, String> bad = new TreeMap<>();
        for (Group g : sender.groups(sw.device)) {
            if (g.appCookie() instanceof PiGroupKey) {
                groups.put(((PiGroupKey) g.appCookie()).groupId(), g);
            } else {
                bad.put(ItemKey.foreign("group " + g.id()), "not an action profile group");
            }
        }
        Map<Integer, String> switchOfNext = new HashMap<>();
        Map<String, String> unreachable = new TreeMap<>();
        for (String s : view.switches().keySet()) {
            Integer next = nextIds.get(s);
            if (next == null) {
                unreachable.put(s, "no next id towards " + s + " on P4 device " + sw.device);
            } else {
                switchOfNext.put(next, s);
            }
        }
        view.smuxes().keySet().forEach(s -> unreachable.put(s, NO_AGGREGATES));

        SwitchIntent.Builder intent = SwitchIntent.builder();
        Map<Integer, Service> services = new TreeMap<>();
        Map<Integer, FlowEntry> selects = new HashMap<>();
        Map<ServiceMatch, Integer> seen = new HashMap<>();
        for (FlowEntry e : flows) {
            ServiceMatch m = P4HmuxRules.matchOf(e);
            int sid = P4HmuxRules.serviceIdOf(e);
            int selected = P4HmuxRules.selectedServiceOf(e);
            String vip = P4HmuxRules.routeVip(e);
            if (m != null && sid > 0 && !services.containsKey(sid) && seen.putIfAbsent(m, sid) == null) {
                services.put(sid, new Service(m, sid, e));
            } else if (m != null) {
                bad.put(ItemKey.entry(m), "two service entries or ids: " + sid + " and " + seen.get(m));
            } else if (selected > 0 && !selects.containsKey(selected)) {
                selects.put(selected, e);
            } else if (vip != null && switchOfNext.containsKey(P4HmuxRules.nextIdOf(e))) {
                intent.route(vip, switchOfNext.get(P4HmuxRules.nextIdOf(e)));
            } else if (vip != null) {
                bad.put(ItemKey.route(vip), "next id " + P4HmuxRules.nextIdOf(e) + " names no switch");
            } else {
                bad.put(ItemKey.foreign(OnosReader.flowName(e)), "not of the P4 HMux layout");
            }
        }
        for (Service s : services.values()) {
            FlowEntry select = selects.remove(s.id);
            Group g = groups.remove(P4HmuxRules.groupId(s.id));
            String why = entryProblem(sw, s, select, g);
            if (why != null) {
                bad.put(ItemKey.entry(s.match), why);
            } else {
                intent.entry(s.match, P4HmuxRules.bucketsOf(g.buckets().buckets()));
            }
        }
        selects.values().forEach(e -> bad.put(ItemKey.foreign(OnosReader.flowName(e)), "selects no service"));
        groups.values().forEach(g -> bad.put(ItemKey.foreign("group " + g.id()), "of no service"));
        return new SwitchReading(intent.build(), bad, unreachable);
    }

    /** Why service {@code s} is not held whole, or null when it is. */
    private String entryProblem(FabricView.SwitchSpec sw, Service s, FlowEntry select, Group g) {
        if (select == null) {
            return "no dip_select entry for service id " + s.id;
        }
        PiActionProfileGroupId target = P4HmuxRules.groupOf(select);
        if (target == null || target.id() != P4HmuxRules.groupId(s.id)) {
            return "dip_select of service id " + s.id + " points at " + target + ", not its group";
        }
        if (g == null) {
            return "group " + P4HmuxRules.groupId(s.id) + " of service id " + s.id + " is missing";
        }
        GroupConfirmation.State st = sender.confirmation().state(sw.device, g.appCookie(), g, g.buckets().buckets());
        if (st != GroupConfirmation.State.CONFIRMED && st != GroupConfirmation.State.PENDING) {
            return "group of service id " + s.id + " not held by ONOS (" + st + ")";
        }
        List<DipBucket> buckets = P4HmuxRules.bucketsOf(g.buckets().buckets());
        return buckets == null || buckets.isEmpty() ? "group of service id " + s.id + " has members not of the layout"
                : null;
    }
}
