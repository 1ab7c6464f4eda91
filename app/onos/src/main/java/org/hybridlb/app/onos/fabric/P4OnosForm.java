package org.hybridlb.app.onos.fabric;

import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECT;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECTOR_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ECMP_SELECTOR_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_NEXT_HOP;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_NEXT_HOP_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ROUTING_V4_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_DMAC;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_DMAC_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_PORT;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_PORT_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_SMAC;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_SMAC_ID;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.hmux.CookieDecode;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.p4.HmuxP4Config;
import org.hybridlb.app.core.p4.HmuxP4Layout;
import org.hybridlb.app.core.p4.P4Action;
import org.hybridlb.app.core.p4.P4Group;
import org.hybridlb.app.core.p4.P4Match;
import org.hybridlb.app.core.p4.P4Member;
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
 * The core's P4 entities ({@code org.hybridlb.app.core.p4}, as {@link org.hybridlb.app.core.p4.HmuxP4Plan}
 * makes them) as ONOS objects, and what ONOS holds back as those entities: a table entry is a flow
 * rule (a PiCriterion, and a PiAction or a PiActionProfileGroupId); an action profile group with its
 * members is an ONOS SELECT group keyed by a {@link PiGroupKey}, one bucket per member in the
 * group's order. Only what ONOS decides differently from a P4Runtime client lives here:
 *
 * <ul>
 * <li>Group and member ids. ONOS's PI group translator writes its own member ids, member {@code i}
 *     of group {@code g} being {@code Objects.hash(g, i)} = 961 + 31·g + i, unique within an action
 *     profile only while groups lie further apart than their size / 31; and ONOS names a device's
 *     groups by one id space across profiles. A {@code dip_selector} group (the core numbers them by
 *     service id, 1, 2, ...) is therefore group {@code 2^16 + id·1024} in ONOS: above the 16-bit next
 *     ids the {@code ecmp_selector} groups keep as their ids, and 31·1024 apart, more than the
 *     selector's 16,384 members, which also keeps its members' ids ascending in bucket order, the
 *     order the pipeline selects by. An {@code ecmp_selector} group of fewer than 32 members cannot
 *     collide. Read back, a member's id is the reader's own ({@link #memberId}): the core only needs
 *     it unique and ascending within its group.</li>
 * <li>Cookies. ONOS names a flow by its own id, so the core's cookie (equal for every HMux entry)
 *     cannot be it. The app's rules are the controller's by their application id; read back, each
 *     gets the cookie the core's layout gives its kind ({@link #cookieOf}); another application's
 *     rules (the fabric's routes) get none.</li>
 * <li>Priorities. Every table here is exact or LPM, so the device ignores them; ONOS needs one and
 *     names a rule by it, so it is a function of the table and match alone ({@link #priority}).</li>
 * </ul>
 */
final class P4OnosForm {
    static final int DIP_GROUP_SHIFT = 10;
    static final int DIP_GROUP_BASE = 1 << 16;
    /** P4Info ids by name of every table, match field, action and parameter the layout writes or reads. */
    private static final Map<String, Integer> IDS = new HashMap<>();

    static {
        ServiceMatch any = new ServiceMatch("0.0.0.1", ServiceMatch.ANY, 0);
        CookieDecode cookies = new CookieDecode(Cookie.HashMode.CRC32C, Cookie.formatKey(new byte[Cookie.KEY_BYTES]),
                Map.of(1, new CookieDecode.Server("0.0.0.1", 1)));
        HashContract.Encap ipip = HashContract.Encap.IPIP;
        for (P4TableEntry e : List.of(
                HmuxP4Layout.serviceEntry(new ServiceMatch("0.0.0.1", "tcp", 1), 1, ipip, 0),
                HmuxP4Layout.serviceEntry(new ServiceMatch("0.0.0.1", "tcp", 0), 1, ipip, 0),
                HmuxP4Layout.serviceEntry(any, 1, ipip, 0), HmuxP4Layout.serviceEntry(any, 1, ipip, cookies, 0),
                HmuxP4Layout.vipServersEntry(1, 1, 1, 0), HmuxP4Layout.allServersEntry(1, "0.0.0.1", 0),
                HmuxP4Layout.dipSelectEntry(1, 1, 0), HmuxP4Layout.routeEntry("0.0.0.1/32", 1, 0),
                HmuxP4Layout.nextHopEntry(1, 1, 0))) {
            IDS.put(e.table, e.tableId);
            e.matches.forEach(m -> IDS.put(e.table + "/" + m.name, m.fieldId));
            if (e.action != null) {
                learn(e.action);
            }
        }
        learn(HmuxP4Layout.dipAction("0.0.0.1", 0));
        // the fabric's hops: what an aggregate's members towards the SMuxes run
        learn(P4Action.of(ROUTING_SET_NEXT_HOP, ROUTING_SET_NEXT_HOP_ID)
                .param(ROUTING_SET_NEXT_HOP_PORT_ID, ROUTING_SET_NEXT_HOP_PORT, P4Value.of(0))
                .param(ROUTING_SET_NEXT_HOP_SMAC_ID, ROUTING_SET_NEXT_HOP_SMAC, P4Value.of(0))
                .param(ROUTING_SET_NEXT_HOP_DMAC_ID, ROUTING_SET_NEXT_HOP_DMAC, P4Value.of(0)).build());
    }

    private static void learn(P4Action a) {
        IDS.put(a.name, a.id);
        a.paramNames.forEach((id, name) -> IDS.put(a.name + "/" + name, id));
    }

    private final ApplicationId appId;
    private final HmuxP4Config config;

    P4OnosForm(ApplicationId appId, HmuxP4Config config) {
        this.appId = appId;
        this.config = config;
    }

    // ---- core -> ONOS --------------------------------------------------------------------------------

    /** The flow rule of entry {@code e} on {@code dev}. */
    FlowRule rule(DeviceId dev, P4TableEntry e) {
        PiCriterion.Builder c = PiCriterion.builder();
        for (P4Match m : e.matches) {
            if (m.isLpm()) {
                c.matchLpm(PiMatchFieldId.of(m.name), m.value.bytes(), m.prefixLen);
            } else {
                c.matchExact(PiMatchFieldId.of(m.name), m.value.bytes());
            }
        }
        PiTableAction a = e.groupId != null
                ? PiActionProfileGroupId.of(onosGroupId(profileOf(e.tableId), e.groupId)) : onos(e.action);
        return DefaultFlowRule.builder().forDevice(dev).forTable(PiTableId.of(e.table)).fromApp(appId).makePermanent()
                .withPriority(priority(e)).withSelector(DefaultTrafficSelector.builder().matchPi(c.build()).build())
                .withTreatment(DefaultTrafficTreatment.builder().piTableAction(a).build()).build();
    }

    /** ONOS's key of group {@code g}: the table its profile serves, the profile, ONOS's group id. */
    static PiGroupKey groupKey(P4Group g) {
        String table = g.profileId == HMUX_DIP_SELECTOR_ID ? HMUX_DIP_SELECT : ROUTING_NEXT_HOP;
        return new PiGroupKey(PiTableId.of(table), PiActionProfileId.of(g.profile),
                onosGroupId(g.profileId, g.groupId));
    }

    /** The buckets of group {@code g}: its members' actions in its order ({@code members}: the profile's, by id). */
    static List<GroupBucket> buckets(P4Group g, Map<Long, P4Member> members) {
        List<GroupBucket> out = new ArrayList<>();
        for (long id : g.memberIds) {
            out.add(DefaultGroupBucket.createSelectGroupBucket(
                    DefaultTrafficTreatment.builder().piTableAction(onos(members.get(id).action)).build()));
        }
        return out;
    }

    /** The action profile a table with one selects from. */
    private static int profileOf(int tableId) {
        return tableId == ROUTING_NEXT_HOP_ID ? ROUTING_ECMP_SELECTOR_ID : HMUX_DIP_SELECTOR_ID;
    }

    /** ONOS's id of the core's group {@code groupId} of profile {@code profileId} (see the class comment). */
    static int onosGroupId(int profileId, long groupId) {
        return (int) (profileId == HMUX_DIP_SELECTOR_ID ? DIP_GROUP_BASE + (groupId << DIP_GROUP_SHIFT) : groupId);
    }

    /**
     * The core's id of ONOS's group {@code onosId}: for {@code dip_selector}, an id not of the spacing
     * becomes one above every service id (the core then finds it belongs to no service).
     */
    static long coreGroupId(int profileId, int onosId) {
        long id = onosId & 0xffffffffL;
        if (profileId != HMUX_DIP_SELECTOR_ID) {
            return id;
        }
        return id >= DIP_GROUP_BASE && id % (1 << DIP_GROUP_SHIFT) == 0 ? (id - DIP_GROUP_BASE) >> DIP_GROUP_SHIFT
                : id + (1L << 32);
    }

    /** The id the reader gives bucket {@code index} of ONOS's group {@code onosId}: unique, ascending in bucket order. */
    static long memberId(int onosId, int index) {
        return (onosId & 0xffffffffL) << 24 | index;
    }

    static int priority(P4TableEntry e) {
        if (HmuxP4Layout.isServiceTable(e.tableId)) {
            ServiceMatch m = HmuxP4Layout.serviceOf(e);
            return m == null ? HmuxLayout.PRIORITY_ENTRY_PORT : HmuxLayout.priority(m);
        }
        if (e.tableId == ROUTING_ROUTING_V4_ID) {
            String p = HmuxP4Layout.prefixOf(e);
            return p != null && p.endsWith("/32") ? HmuxLayout.PRIORITY_ROUTE : HmuxLayout.PRIORITY_AGGREGATE;
        }
        return e.tableId == ROUTING_NEXT_HOP_ID ? HmuxLayout.PRIORITY_AGGREGATE : HmuxLayout.PRIORITY_ENTRY_PORT;
    }

    private static PiAction onos(P4Action a) {
        PiAction.Builder b = PiAction.builder().withId(PiActionId.of(a.name));
        a.params.forEach((id, v) -> b.withParameter(new PiActionParam(PiActionParamId.of(a.paramNames.get(id)),
                ImmutableByteSequence.copyFrom(v.bytes()))));
        return b.build();
    }

    // ---- ONOS -> core --------------------------------------------------------------------------------

    /**
     * The entry a flow rule is ({@code ours}: the app's, with the cookie of its kind), or null when
     * its table, a field or its action is none the layout writes or reads.
     */
    P4TableEntry entryOf(FlowRule r, boolean ours) {
        Criterion c = r.selector().getCriterion(Criterion.Type.PROTOCOL_INDEPENDENT);
        String table = r.table() instanceof PiTableId ? ((PiTableId) r.table()).id() : null;
        Integer tableId = table == null ? null : IDS.get(table);
        if (tableId == null || r.selector().criteria().size() != 1 || !(c instanceof PiCriterion)) {
            return null;
        }
        List<P4Match> matches = new ArrayList<>();
        for (PiFieldMatch f : ((PiCriterion) c).fieldMatches()) {
            Integer id = IDS.get(table + "/" + f.fieldId().id());
            if (id == null) {
                return null;
            } else if (f instanceof PiExactFieldMatch) {
                matches.add(P4Match.exact(id, f.fieldId().id(), P4Value.of(((PiExactFieldMatch) f).value().asArray())));
            } else if (f instanceof PiLpmFieldMatch) {
                PiLpmFieldMatch l = (PiLpmFieldMatch) f;
                matches.add(P4Match.lpm(id, f.fieldId().id(), P4Value.of(l.value().asArray()), l.prefixLength()));
            } else {
                return null;
            }
        }
        PiTableAction ta = tableAction(r.treatment());
        P4Action action = ta instanceof PiAction ? p4((PiAction) ta) : null;
        Long group = ta instanceof PiActionProfileGroupId ? coreGroupId(profileOf(tableId),
                ((PiActionProfileGroupId) ta).id()) : null;
        if (action == null && group == null) {
            return null;
        }
        P4TableEntry plain = P4TableEntry.read(table, tableId, matches, 0, action, group, null, 0);
        return ours ? P4TableEntry.read(table, tableId, matches, 0, action, group, null, cookieOf(plain)) : plain;
    }

    /**
     * The cookie the core's layout gives an entry of the controller's: a route's or an aggregate's
     * (by its next id: the controller's aggregate next ids are the aggregates'), else an HMux entry's.
     */
    long cookieOf(P4TableEntry e) {
        if (e.tableId == ROUTING_ROUTING_V4_ID || e.tableId == ROUTING_NEXT_HOP_ID) {
            long next = e.tableId == ROUTING_NEXT_HOP_ID ? e.matches.get(0).value.asLong() : HmuxP4Layout.nextIdOf(e);
            HmuxLayout.Kind kind = e.tableId == ROUTING_NEXT_HOP_ID || config.isAggregateNextId(next)
                    ? HmuxLayout.Kind.AGGREGATE : HmuxLayout.Kind.ROUTE;
            return HmuxLayout.cookie(config.cookieBase, kind, Math.max(next, 0));
        }
        return HmuxLayout.cookie(config.cookieBase, HmuxLayout.Kind.ENTRY, 0);
    }

    /** A bucket's action in the core's form, or null when it is none the layout knows. */
    static P4Action actionOf(GroupBucket b) {
        PiTableAction ta = tableAction(b.treatment());
        return ta instanceof PiAction ? p4((PiAction) ta) : null;
    }

    /** A PiAction in the core's form, or null when it or a parameter is none the layout knows. */
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
