package org.hybridlb.app.onos.fabric;

import static org.hybridlb.app.core.p4.HlbP4Info.ENCAP_IPIP;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECT;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECTOR;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECT_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECT_SERVICE_ID_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SELECTOR_SIZE;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SERVICE_SIZE;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_DIP_BUCKET_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_DIP_TUNNEL_DST_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_SERVICE_ENCAP_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_SERVICE_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_SERVICE_SERVICE_ID_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ROUTING_V4_ID;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.p4.HmuxP4Layout;
import org.hybridlb.app.core.p4.P4Action;
import org.hybridlb.app.core.p4.P4Match;
import org.hybridlb.app.core.p4.P4TableEntry;
import org.hybridlb.app.core.p4.P4Value;
import org.onlab.util.ImmutableByteSequence;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.criteria.PiCriterion;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.PiInstruction;
import org.onosproject.net.group.DefaultGroupBucket;
import org.onosproject.net.group.GroupBucket;
import org.onosproject.net.pi.model.PiActionId;
import org.onosproject.net.pi.model.PiActionParamId;
import org.onosproject.net.pi.model.PiActionProfileId;
import org.onosproject.net.pi.model.PiMatchFieldId;
import org.onosproject.net.pi.model.PiTableId;
import org.onosproject.net.pi.runtime.PiAction;
import org.onosproject.net.pi.runtime.PiActionParam;
import org.onosproject.net.pi.runtime.PiActionProfileGroupId;
import org.onosproject.net.pi.runtime.PiExactFieldMatch;
import org.onosproject.net.pi.runtime.PiFieldMatch;
import org.onosproject.net.pi.runtime.PiGroupKey;
import org.onosproject.net.pi.runtime.PiLpmFieldMatch;
import org.onosproject.net.pi.runtime.PiTableAction;

/**
 * The core's P4 HMux layout ({@link HmuxP4Layout}: which entries and members a service and a VIP
 * route are) in ONOS's terms, both ways: its table entries as flow rules (PiCriterion, PiAction or a
 * PiActionProfileGroupId), its weight-unit members as the buckets of a {@code dip_selector} group,
 * and back. Only what ONOS decides differently from a plain P4Runtime client lives here:
 *
 * <p>Group and member ids: ONOS 2.7 numbers the P4Runtime members of a group
 * {@code hash(groupId, bucket index)} = 961 + 31·groupId + index, unique within the action profile
 * only while groups are further apart than their size / 31. A service's group is
 * {@code serviceId << GROUP_SHIFT} (31·1024 ≥ the selector's 16,384 members), which also keeps its
 * members' ids ascending in bucket order, the order the pipeline (and BMv2) selects by.
 */
final class P4HmuxRules {
    static final PiTableId DIP_SELECT = PiTableId.of(HMUX_DIP_SELECT);
    static final PiActionProfileId SELECTOR = PiActionProfileId.of(HMUX_DIP_SELECTOR);
    static final int GROUP_SHIFT = 10;
    /** Members the selector holds (weight units of one group at most). */
    static final int MAX_MEMBERS = (int) HMUX_SELECTOR_SIZE;
    /** Service ids the app hands out: 1 .. the service tables' size - 1. */
    static final int MAX_SERVICE_ID = (int) HMUX_SERVICE_SIZE - 1;
    private static final HashContract.Encap ENCAP = HashContract.Encap.IPIP;
    /** P4Info ids by name, of every table, field, action and parameter the layout writes. */
    private static final Map<String, Integer> IDS = new HashMap<>();

    static {
        List<P4TableEntry> prototypes = List.of(
                HmuxP4Layout.serviceEntry(new ServiceMatch("0.0.0.1", "tcp", 1), 1, ENCAP, 0),
                HmuxP4Layout.serviceEntry(new ServiceMatch("0.0.0.1", "tcp", 0), 1, ENCAP, 0),
                HmuxP4Layout.serviceEntry(new ServiceMatch("0.0.0.1", ServiceMatch.ANY, 0), 1, ENCAP, 0),
                HmuxP4Layout.dipSelectEntry(1, 1, 0), HmuxP4Layout.routeEntry("0.0.0.1/32", 1, 0));
        for (P4TableEntry e : prototypes) {
            IDS.put(e.table, e.tableId);
            e.matches.forEach(m -> IDS.put(e.table + "/" + m.name, m.fieldId));
            if (e.action != null) {
                learn(e.action);
            }
        }
        learn(HmuxP4Layout.dipAction("0.0.0.1", 0));
    }

    private static void learn(P4Action a) {
        IDS.put(a.name, a.id);
        a.paramNames.forEach((id, name) -> IDS.put(a.name + "/" + name, id));
    }

    private final ApplicationId appId;

    P4HmuxRules(ApplicationId appId) {
        this.appId = appId;
    }

    /** The group id of service {@code serviceId}. */
    static int groupId(int serviceId) {
        return serviceId << GROUP_SHIFT;
    }

    static PiGroupKey groupKey(int serviceId) {
        return new PiGroupKey(DIP_SELECT, SELECTOR, groupId(serviceId));
    }

    /** The service entry of {@code m}: its VIP (protocol, port) → {@code set_service(serviceId, IP-in-IP)}. */
    FlowRule service(DeviceId dev, ServiceMatch m, int serviceId) {
        return rule(dev, HmuxP4Layout.serviceEntry(m, serviceId, ENCAP, 0), HmuxLayout.priority(m));
    }

    /** The {@code dip_select} entry of a service: its id → its action profile group. */
    FlowRule dipSelect(DeviceId dev, ServiceMatch m, int serviceId) {
        return rule(dev, HmuxP4Layout.dipSelectEntry(serviceId, groupId(serviceId), 0), HmuxLayout.priority(m));
    }

    /** The {@code /32} route of {@code vip} → {@code set_next_id(nextId)}, the fabric's next towards the HMux. */
    FlowRule route(DeviceId dev, String vip, int nextId) {
        return rule(dev, HmuxP4Layout.routeEntry(vip + "/32", nextId, 0), HmuxLayout.PRIORITY_ROUTE);
    }

    /** The members of a service's group: each bucket once per unit of its weight, in bucket order. */
    static List<GroupBucket> members(List<DipBucket> buckets) {
        List<GroupBucket> out = new ArrayList<>();
        for (DipBucket b : buckets) {
            TrafficTreatment t = DefaultTrafficTreatment.builder()
                    .piTableAction(onos(HmuxP4Layout.dipAction(b.endpoint, b.id))).build();
            for (int i = 0; i < b.weight; i++) {
                out.add(DefaultGroupBucket.createSelectGroupBucket(t));
            }
        }
        return out;
    }

    /**
     * The buckets a group's members stand for: runs of equal {@code set_dip} members, each one bucket
     * whose weight is the run's length (no DIP: the device keeps only the tunnel endpoint); null when a
     * member is not the layout's {@code set_dip} or a bucket id comes twice or out of order.
     */
    static List<DipBucket> bucketsOf(List<GroupBucket> members) {
        List<DipBucket> out = new ArrayList<>();
        P4Action last = null;
        for (GroupBucket m : members) {
            PiTableAction ta = tableAction(m.treatment());
            P4Action a = ta instanceof PiAction ? p4((PiAction) ta) : null;
            if (a != null && a.equals(last)) {
                DipBucket prev = out.remove(out.size() - 1);
                out.add(new DipBucket(prev.id, null, prev.endpoint, prev.weight + 1));
                continue;
            }
            P4Value dst = a == null ? null : a.param(HMUX_SET_DIP_TUNNEL_DST_ID);
            P4Value bucket = a == null ? null : a.param(HMUX_SET_DIP_BUCKET_ID);
            if (dst == null || bucket == null || !a.equals(HmuxP4Layout.dipAction(dst.asIpv4(), (int) bucket.asLong()))
                    || !out.isEmpty() && out.get(out.size() - 1).id >= bucket.asLong()) {
                return null;
            }
            out.add(new DipBucket((int) bucket.asLong(), null, dst.asIpv4(), 1));
            last = a;
        }
        return out;
    }

    /** The service a rule of a service table stands for, or null when it is not of the layout's form. */
    static ServiceMatch matchOf(FlowRule r) {
        P4TableEntry e = entryOf(r);
        return e == null || !HmuxP4Layout.isServiceTable(e.tableId) ? null : HmuxP4Layout.serviceOf(e);
    }

    /** The service id a service rule sets (with the layout's encapsulation), or -1. */
    static int serviceIdOf(FlowRule r) {
        P4TableEntry e = entryOf(r);
        P4Action a = e == null ? null : e.action;
        if (a == null || a.id != HMUX_SET_SERVICE_ID || a.param(HMUX_SET_SERVICE_ENCAP_ID) == null
                || a.param(HMUX_SET_SERVICE_ENCAP_ID).asLong() != ENCAP_IPIP) {
            return -1;
        }
        return (int) a.param(HMUX_SET_SERVICE_SERVICE_ID_ID).asLong();
    }

    /** The service id a {@code dip_select} rule matches, or -1. */
    static int selectedServiceOf(FlowRule r) {
        P4TableEntry e = entryOf(r);
        return e != null && e.tableId == HMUX_DIP_SELECT_ID && e.matches.size() == 1
                ? (int) e.match(HMUX_DIP_SELECT_SERVICE_ID_ID).value.asLong() : -1;
    }

    /** The group a {@code dip_select} rule points at, or null. */
    static PiActionProfileGroupId groupOf(FlowRule r) {
        PiTableAction a = tableAction(r.treatment());
        return a instanceof PiActionProfileGroupId ? (PiActionProfileGroupId) a : null;
    }

    /** The VIP of a {@code /32} route, or null. */
    static String routeVip(FlowRule r) {
        P4TableEntry e = entryOf(r);
        String prefix = e == null || e.tableId != ROUTING_ROUTING_V4_ID ? null : HmuxP4Layout.prefixOf(e);
        return prefix != null && prefix.endsWith("/32") ? prefix.substring(0, prefix.length() - 3) : null;
    }

    /** The next id a route sets, or -1. */
    static int nextIdOf(FlowRule r) {
        P4TableEntry e = entryOf(r);
        return e == null ? -1 : (int) HmuxP4Layout.nextIdOf(e);
    }

    // ---- the two forms ------------------------------------------------------------------------------

    private FlowRule rule(DeviceId dev, P4TableEntry e, int priority) {
        PiCriterion.Builder c = PiCriterion.builder();
        for (P4Match m : e.matches) {
            if (m.isLpm()) {
                c.matchLpm(PiMatchFieldId.of(m.name), m.value.bytes(), m.prefixLen);
            } else {
                c.matchExact(PiMatchFieldId.of(m.name), m.value.bytes());
            }
        }
        PiTableAction a = e.groupId != null ? PiActionProfileGroupId.of(e.groupId.intValue()) : onos(e.action);
        return DefaultFlowRule.builder().forDevice(dev).forTable(PiTableId.of(e.table)).fromApp(appId).makePermanent()
                .withPriority(priority).withSelector(DefaultTrafficSelector.builder().matchPi(c.build()).build())
                .withTreatment(DefaultTrafficTreatment.builder().piTableAction(a).build()).build();
    }

    private static PiAction onos(P4Action a) {
        PiAction.Builder b = PiAction.builder().withId(PiActionId.of(a.name));
        a.params.forEach((id, v) -> b.withParameter(new PiActionParam(PiActionParamId.of(a.paramNames.get(id)),
                ImmutableByteSequence.copyFrom(v.bytes()))));
        return b.build();
    }

    /** The layout's entry a rule is, or null when its table, fields or action are none the layout writes. */
    static P4TableEntry entryOf(FlowRule r) {
        Criterion c = r.selector().getCriterion(Criterion.Type.PROTOCOL_INDEPENDENT);
        Integer table = r.table() instanceof PiTableId ? IDS.get(((PiTableId) r.table()).id()) : null;
        if (table == null || r.selector().criteria().size() != 1 || !(c instanceof PiCriterion)) {
            return null;
        }
        String name = ((PiTableId) r.table()).id();
        List<P4Match> matches = new ArrayList<>();
        for (PiFieldMatch f : ((PiCriterion) c).fieldMatches()) {
            Integer id = IDS.get(name + "/" + f.fieldId().id());
            if (id == null) {
                return null;
            }
            if (f instanceof PiExactFieldMatch) {
                matches.add(P4Match.exact(id, f.fieldId().id(), P4Value.of(((PiExactFieldMatch) f).value().asArray())));
            } else if (f instanceof PiLpmFieldMatch) {
                PiLpmFieldMatch l = (PiLpmFieldMatch) f;
                matches.add(P4Match.lpm(id, f.fieldId().id(), P4Value.of(l.value().asArray()), l.prefixLength()));
            } else {
                return null;
            }
        }
        matches.sort(null);
        PiTableAction ta = tableAction(r.treatment());
        P4Action action = ta instanceof PiAction ? p4((PiAction) ta) : null;
        Long group = ta instanceof PiActionProfileGroupId ? (long) ((PiActionProfileGroupId) ta).id() : null;
        if (action == null && group == null) {
            return null;
        }
        return P4TableEntry.read(name, table, matches, 0, action, group, null, 0);
    }

    /** A PiAction of the layout in the core's form, or null when it or a parameter is none of the layout's. */
    private static P4Action p4(PiAction a) {
        Integer id = IDS.get(a.id().id());
        if (id == null) {
            return null;
        }
        P4Action.Builder b = P4Action.of(a.id().id(), id);
        for (PiActionParam p : a.parameters()) {
            Integer pid = IDS.get(a.id().id() + "/" + p.id().id());
            if (pid == null) {
                return null;
            }
            b.param(pid, p.id().id(), P4Value.of(p.value().asArray()));
        }
        return b.build();
    }

    /** The table action of a rule or bucket treatment, or null when it has none (or more than one instruction). */
    static PiTableAction tableAction(TrafficTreatment t) {
        List<Instruction> all = t.allInstructions();
        return all.size() == 1 && all.get(0) instanceof PiInstruction ? ((PiInstruction) all.get(0)).action() : null;
    }
}
