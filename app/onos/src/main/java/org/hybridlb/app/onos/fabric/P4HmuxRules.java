package org.hybridlb.app.onos.fabric;

import static org.hybridlb.app.core.p4.HlbP4Info.ENCAP_IPIP;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECT;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECTOR;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECT_SERVICE_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SELECTOR_SIZE;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SERVICE_SIZE;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_DIP;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_DIP_BUCKET;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_DIP_TUNNEL_DST;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_SERVICE;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_SERVICE_ENCAP;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_SERVICE_SERVICE_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE_ANY_PORT;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE_ANY_PORT_DST_ADDR;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE_ANY_PORT_PROTOCOL;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE_DST_ADDR;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE_DST_PORT;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE_PROTOCOL;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_WHOLE;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_WHOLE_DST_ADDR;
import static org.hybridlb.app.core.p4.HlbP4Info.IP_PROTO_TCP;
import static org.hybridlb.app.core.p4.HlbP4Info.IP_PROTO_UDP;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ROUTING_V4;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ROUTING_V4_DST_ADDR;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_ID_NEXT_ID;

import java.util.ArrayList;
import java.util.List;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.solver.model.Ipv4;
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
 * The ONOS form of the HMux layout on a device running a hybridlb P4 program (p4/README.md, "What a
 * controller writes"), by the P4Info names of {@code HlbP4Info}: a VIP service is one entry of
 * {@code vip_service} / {@code vip_service_any_port} / {@code vip_whole} setting its service id, one
 * {@code dip_select} entry on that id pointing at an action profile group of {@code dip_selector}, and
 * that group's weight-unit members ({@code set_dip(tunnel_dst, bucket)} once per unit of weight, in
 * bucket order); a VIP route is a {@code /32} of {@code routing_v4} setting the next id towards its
 * HMux switch. Built and read back here, so the renderer and the reader share one definition.
 *
 * <p>Group ids: ONOS 2.7 numbers the P4Runtime members of a group {@code hash(groupId, bucket index)}
 * = 961 + 31·groupId + index, unique within the action profile only while groups are further apart
 * than their size / 31. A service's group is {@code serviceId << GROUP_SHIFT} (31·1024 ≥ the
 * selector's 16,384 members), which also keeps its members' ids ascending in bucket order, the order
 * the pipeline (and BMv2) selects by.
 */
final class P4HmuxRules {
    static final PiTableId DIP_SELECT = PiTableId.of(HMUX_DIP_SELECT);
    static final PiTableId ROUTES = PiTableId.of(ROUTING_ROUTING_V4);
    static final PiActionProfileId SELECTOR = PiActionProfileId.of(HMUX_DIP_SELECTOR);
    static final List<PiTableId> SERVICE_TABLES = List.of(PiTableId.of(HMUX_VIP_SERVICE),
            PiTableId.of(HMUX_VIP_SERVICE_ANY_PORT), PiTableId.of(HMUX_VIP_WHOLE));
    static final int GROUP_SHIFT = 10;
    /** Members the selector holds (weight units of one group at most). */
    static final int MAX_MEMBERS = (int) HMUX_SELECTOR_SIZE;
    /** Service ids the app hands out: 1 .. the service tables' size - 1. */
    static final int MAX_SERVICE_ID = (int) HMUX_SERVICE_SIZE - 1;

    private final ApplicationId appId;

    P4HmuxRules(ApplicationId appId) {
        this.appId = appId;
    }

    /** The service table of {@code m}. */
    static PiTableId serviceTable(ServiceMatch m) {
        return m.wholeVip() ? SERVICE_TABLES.get(2) : m.port == 0 ? SERVICE_TABLES.get(1) : SERVICE_TABLES.get(0);
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
        PiCriterion.Builder c = PiCriterion.builder();
        if (m.wholeVip()) {
            c.matchExact(PiMatchFieldId.of(HMUX_VIP_WHOLE_DST_ADDR), Ipv4.parse(m.vip));
        } else if (m.port == 0) {
            c.matchExact(PiMatchFieldId.of(HMUX_VIP_SERVICE_ANY_PORT_DST_ADDR), Ipv4.parse(m.vip))
                    .matchExact(PiMatchFieldId.of(HMUX_VIP_SERVICE_ANY_PORT_PROTOCOL), (byte) protocol(m));
        } else {
            c.matchExact(PiMatchFieldId.of(HMUX_VIP_SERVICE_DST_ADDR), Ipv4.parse(m.vip))
                    .matchExact(PiMatchFieldId.of(HMUX_VIP_SERVICE_PROTOCOL), (byte) protocol(m))
                    .matchExact(PiMatchFieldId.of(HMUX_VIP_SERVICE_DST_PORT), (short) m.port);
        }
        PiAction a = PiAction.builder().withId(PiActionId.of(HMUX_SET_SERVICE))
                .withParameter(new PiActionParam(PiActionParamId.of(HMUX_SET_SERVICE_SERVICE_ID), (short) serviceId))
                .withParameter(new PiActionParam(PiActionParamId.of(HMUX_SET_SERVICE_ENCAP), (byte) ENCAP_IPIP))
                .build();
        return rule(dev, serviceTable(m), c.build(), a, HmuxLayout.priority(m));
    }

    /** The {@code dip_select} entry of a service: its id → its action profile group. */
    FlowRule dipSelect(DeviceId dev, ServiceMatch m, int serviceId) {
        PiCriterion c = PiCriterion.builder()
                .matchExact(PiMatchFieldId.of(HMUX_DIP_SELECT_SERVICE_ID), (short) serviceId).build();
        return rule(dev, DIP_SELECT, c, PiActionProfileGroupId.of(groupId(serviceId)), HmuxLayout.priority(m));
    }

    /** The {@code /32} route of {@code vip} → {@code set_next_id(nextId)}, the fabric's next towards the HMux. */
    FlowRule route(DeviceId dev, String vip, int nextId) {
        PiCriterion c = PiCriterion.builder()
                .matchLpm(PiMatchFieldId.of(ROUTING_ROUTING_V4_DST_ADDR), Ipv4.parse(vip), 32).build();
        PiAction a = PiAction.builder().withId(PiActionId.of(ROUTING_SET_NEXT_ID))
                .withParameter(new PiActionParam(PiActionParamId.of(ROUTING_SET_NEXT_ID_NEXT_ID), (short) nextId))
                .build();
        return rule(dev, ROUTES, c, a, HmuxLayout.PRIORITY_ROUTE);
    }

    /** The members of a service's group: each bucket once per unit of its weight, in bucket order. */
    static List<GroupBucket> members(List<DipBucket> buckets) {
        List<GroupBucket> out = new ArrayList<>();
        for (DipBucket b : buckets) {
            PiAction a = PiAction.builder().withId(PiActionId.of(HMUX_SET_DIP))
                    .withParameter(new PiActionParam(PiActionParamId.of(HMUX_SET_DIP_TUNNEL_DST), Ipv4.parse(b.endpoint)))
                    .withParameter(new PiActionParam(PiActionParamId.of(HMUX_SET_DIP_BUCKET), (short) b.id))
                    .build();
            TrafficTreatment t = DefaultTrafficTreatment.builder().piTableAction(a).build();
            for (int i = 0; i < b.weight; i++) {
                out.add(DefaultGroupBucket.createSelectGroupBucket(t));
            }
        }
        return out;
    }

    /**
     * The buckets a group's members stand for: runs of equal {@code set_dip} members, each one bucket
     * whose weight is the run's length (no DIP: the device keeps only the tunnel endpoint); null when a
     * member is no {@code set_dip} or a bucket id comes twice or out of order.
     */
    static List<DipBucket> bucketsOf(List<GroupBucket> members) {
        List<DipBucket> out = new ArrayList<>();
        PiAction last = null;
        for (GroupBucket m : members) {
            PiTableAction ta = tableAction(m.treatment());
            if (!(ta instanceof PiAction) || !((PiAction) ta).id().equals(PiActionId.of(HMUX_SET_DIP))) {
                return null;
            }
            PiAction a = (PiAction) ta;
            if (a.equals(last)) {
                DipBucket prev = out.remove(out.size() - 1);
                out.add(new DipBucket(prev.id, null, prev.endpoint, prev.weight + 1));
                continue;
            }
            int id = (int) param(a, HMUX_SET_DIP_BUCKET);
            if (!out.isEmpty() && out.get(out.size() - 1).id >= id) {
                return null;
            }
            out.add(new DipBucket(id, null, Ipv4.format((int) param(a, HMUX_SET_DIP_TUNNEL_DST)), 1));
            last = a;
        }
        return out;
    }

    /** The table action of a rule or bucket treatment, or null when it has none (or more than one instruction). */
    static PiTableAction tableAction(TrafficTreatment t) {
        List<Instruction> all = t.allInstructions();
        return all.size() == 1 && all.get(0) instanceof PiInstruction ? ((PiInstruction) all.get(0)).action() : null;
    }

    /** The service a rule of a service table stands for, or null when it is not of that form. */
    static ServiceMatch matchOf(FlowRule r) {
        int table = SERVICE_TABLES.indexOf(r.table());
        PiCriterion c = piCriterion(r);
        if (table < 0 || c == null) {
            return null;
        }
        Long vip = exact(c, HMUX_VIP_SERVICE_DST_ADDR);
        Long proto = exact(c, HMUX_VIP_SERVICE_PROTOCOL);
        Long port = exact(c, HMUX_VIP_SERVICE_DST_PORT);
        int fields = table == 2 ? 1 : table == 1 ? 2 : 3;
        if (vip == null || c.fieldMatches().size() != fields || table < 2 && proto == null || table == 0 && port == null
                || table < 2 && proto != IP_PROTO_TCP && proto != IP_PROTO_UDP || table == 0 && port == 0) {
            return null;
        }
        String p = table == 2 ? ServiceMatch.ANY : proto == IP_PROTO_TCP ? "tcp" : "udp";
        return new ServiceMatch(Ipv4.format(vip.intValue()), p, table == 0 ? port.intValue() : 0);
    }

    /** The service id a service rule sets, or -1. */
    static int serviceIdOf(FlowRule r) {
        PiTableAction a = tableAction(r.treatment());
        return a instanceof PiAction && ((PiAction) a).id().equals(PiActionId.of(HMUX_SET_SERVICE))
                && ((PiAction) a).parameters().size() == 2
                && param((PiAction) a, HMUX_SET_SERVICE_ENCAP) == ENCAP_IPIP
                ? (int) param((PiAction) a, HMUX_SET_SERVICE_SERVICE_ID) : -1;
    }

    /** The service id a {@code dip_select} rule matches, or -1. */
    static int selectedServiceOf(FlowRule r) {
        PiCriterion c = piCriterion(r);
        Long id = c == null || c.fieldMatches().size() != 1 ? null : exact(c, HMUX_DIP_SELECT_SERVICE_ID);
        return DIP_SELECT.equals(r.table()) && id != null ? id.intValue() : -1;
    }

    /** The group a {@code dip_select} rule points at, or null. */
    static PiActionProfileGroupId groupOf(FlowRule r) {
        PiTableAction a = tableAction(r.treatment());
        return a instanceof PiActionProfileGroupId ? (PiActionProfileGroupId) a : null;
    }

    /** The VIP of a {@code /32} route, or null. */
    static String routeVip(FlowRule r) {
        PiCriterion c = piCriterion(r);
        if (!ROUTES.equals(r.table()) || c == null || c.fieldMatches().size() != 1) {
            return null;
        }
        PiFieldMatch f = c.fieldMatches().iterator().next();
        return f instanceof PiLpmFieldMatch && ((PiLpmFieldMatch) f).prefixLength() == 32
                ? Ipv4.format((int) asLong(((PiLpmFieldMatch) f).value())) : null;
    }

    /** The next id a route sets, or -1. */
    static int nextIdOf(FlowRule r) {
        PiTableAction a = tableAction(r.treatment());
        return a instanceof PiAction && ((PiAction) a).id().equals(PiActionId.of(ROUTING_SET_NEXT_ID))
                ? (int) param((PiAction) a, ROUTING_SET_NEXT_ID_NEXT_ID) : -1;
    }

    private FlowRule rule(DeviceId dev, PiTableId table, PiCriterion c, PiTableAction a, int priority) {
        return DefaultFlowRule.builder().forDevice(dev).forTable(table).fromApp(appId).makePermanent()
                .withPriority(priority).withSelector(DefaultTrafficSelector.builder().matchPi(c).build())
                .withTreatment(DefaultTrafficTreatment.builder().piTableAction(a).build()).build();
    }

    private static int protocol(ServiceMatch m) {
        return (int) ("tcp".equals(m.proto) ? IP_PROTO_TCP : IP_PROTO_UDP);
    }

    private static PiCriterion piCriterion(FlowRule r) {
        Criterion c = r.selector().getCriterion(Criterion.Type.PROTOCOL_INDEPENDENT);
        return r.selector().criteria().size() == 1 && c instanceof PiCriterion ? (PiCriterion) c : null;
    }

    private static Long exact(PiCriterion c, String field) {
        return c.fieldMatch(PiMatchFieldId.of(field)).filter(f -> f instanceof PiExactFieldMatch)
                .map(f -> asLong(((PiExactFieldMatch) f).value())).orElse(null);
    }

    private static long param(PiAction a, String name) {
        return a.parameters().stream().filter(p -> p.id().equals(PiActionParamId.of(name))).findFirst()
                .map(p -> asLong(p.value())).orElse(-1L);
    }

    private static long asLong(ImmutableByteSequence b) {
        long v = 0;
        for (byte x : b.asArray()) {
            v = v << 8 | (x & 0xff);
        }
        return v;
    }
}
