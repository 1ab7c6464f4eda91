package org.hybridlb.app.onos.fabric;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.port.SouthboundException;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupDescription;
import org.onosproject.net.pi.runtime.PiActionProfileGroupId;
import org.onosproject.net.pi.runtime.PiGroupKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renders a {@link SwitchDelta} on a device running a hybridlb P4 program ({@link P4HmuxRules}), in
 * the stages of {@link OnosRenderer.Stages}: each service's action profile group first (held by ONOS
 * before any entry points at it), then its service and {@code dip_select} entries, the routes, the
 * removals; the groups nothing selects any more after the batch. A service keeps its id while it
 * exists, so a pool change is one group MODIFY and no entry changes; a new service takes the lowest
 * free id. Aggregates and the fallback are not rendered here (the reader reports why).
 */
final class P4HmuxRenderer {
    private static final Logger log = LoggerFactory.getLogger(P4HmuxRenderer.class);

    private final OnosSender sender;
    private final P4HmuxRules rules;

    P4HmuxRenderer(OnosSender sender, P4HmuxRules rules) {
        this.sender = sender;
        this.rules = rules;
    }

    /** Writes the groups of {@code d} on {@code sw} and says which flows change, in {@code out}. */
    void render(FabricView.SwitchSpec sw, SwitchDelta d, List<FlowEntry> flows, Map<String, Integer> nextIds,
                OnosRenderer.Stages out) {
        DeviceId dev = sw.device;
        for (String f : d.foreign) {
            if (f.startsWith("flow ")) {
                long id = Long.parseUnsignedLong(f.substring("flow ".length()), 16);
                flows.stream().filter(e -> e.id().value() == id).forEach(out.cleared::add);
            }
        }
        Map<Integer, P4HmuxReader.Service> services = P4HmuxReader.services(flows);
        Map<ServiceMatch, Integer> idOf = new HashMap<>();
        services.values().forEach(s -> idOf.putIfAbsent(s.match, s.id));
        Set<Integer> taken = new HashSet<>(services.keySet());
        for (ServiceMatch m : d.removeEntries) {
            Integer sid = idOf.get(m);
            if (sid != null) {
                flows.stream().filter(e -> sid.equals(serviceOf(e))).forEach(out.removals::add);
            }
        }
        for (Map.Entry<ServiceMatch, List<DipBucket>> e : d.putEntries.entrySet()) {
            ServiceMatch m = e.getKey();
            long units = e.getValue().stream().mapToLong(b -> b.weight).sum();
            if (units > P4HmuxRules.MAX_MEMBERS) {
                throw new SouthboundException(sw.sw.id + ": " + m + " needs " + units + " weight-unit members, the"
                        + " dip_selector holds " + P4HmuxRules.MAX_MEMBERS);
            }
            Integer sid = idOf.get(m);
            if (sid == null) {
                sid = freeId(taken);
                taken.add(sid);
            }
            PiGroupKey key = P4HmuxRules.groupKey(sid);
            sender.putGroup(dev, key, "dip_selector group of " + m, GroupDescription.Type.SELECT,
                    P4HmuxRules.members(e.getValue()), key.groupId());
            for (FlowRule r : List.of(rules.service(dev, m, sid), rules.dipSelect(dev, m, sid))) {
                if (flows.stream().noneMatch(f -> f.exactMatch(r) && f.treatment().equals(r.treatment()))) {
                    out.add.add(r);
                }
            }
        }
        for (FlowEntry e : flows) {
            String vip = P4HmuxRules.routeVip(e);
            String towards = vip == null ? null : switchOf(e, nextIds);
            if (vip != null && (d.removeRoutes.contains(vip) || towards != null && d.withdrawTowards.contains(towards))) {
                out.routeRemovals.add(e);
            }
        }
        for (Map.Entry<String, String> r : d.putRoutes.entrySet()) {
            Integer next = nextIds.get(r.getValue());
            if (next == null) {
                throw new SouthboundException(sw.sw.id + ": no next id towards " + r.getValue() + " for the route of "
                        + r.getKey() + " (set nextId of " + r.getValue() + " in the netcfg)");
            }
            out.routes.add(rules.route(dev, r.getKey(), next));
        }
        if (!d.putAggregates.isEmpty() || !d.removeAggregates.isEmpty()) {
            log.warn("{}: aggregates {} not rendered: {}", sw.sw.id, d.putAggregates.keySet(), P4HmuxReader.NO_AGGREGATES);
        }
    }

    /** After the flows: every action profile group of the app on {@code dev} that no entry selects goes. */
    void cleanUp(DeviceId dev, List<FlowEntry> flowsNow) {
        Set<Integer> selected = new HashSet<>();
        for (FlowEntry e : flowsNow) {
            PiActionProfileGroupId g = P4HmuxRules.selectedServiceOf(e) > 0 ? P4HmuxRules.groupOf(e) : null;
            if (g != null) {
                selected.add(g.id());
            }
        }
        List<Group> unused = new java.util.ArrayList<>();
        for (Group g : sender.groups(dev)) {
            if (!(g.appCookie() instanceof PiGroupKey) || !selected.contains(((PiGroupKey) g.appCookie()).groupId())) {
                unused.add(g);
            }
        }
        sender.removeGroups(unused);
    }

    /** The service id a service or dip_select rule is about, or null. */
    private static Integer serviceOf(FlowEntry e) {
        int sid = P4HmuxRules.matchOf(e) != null ? P4HmuxRules.serviceIdOf(e) : P4HmuxRules.selectedServiceOf(e);
        return sid > 0 ? sid : null;
    }

    private static String switchOf(FlowEntry route, Map<String, Integer> nextIds) {
        int next = P4HmuxRules.nextIdOf(route);
        return nextIds.entrySet().stream().filter(n -> n.getValue() == next).map(Map.Entry::getKey).findFirst()
                .orElse(null);
    }

    private static int freeId(Set<Integer> taken) {
        for (int i = 1; i <= P4HmuxRules.MAX_SERVICE_ID; i++) {
            if (!taken.contains(i)) {
                return i;
            }
        }
        throw new SouthboundException("every service id 1.." + P4HmuxRules.MAX_SERVICE_ID + " is in use");
    }
}
