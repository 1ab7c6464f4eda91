package org.hybridlb.app.onos;

import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECT;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECTOR;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECT_SERVICE_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_DIP;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_DIP_BUCKET;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_DIP_TUNNEL_DST;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_SERVICE;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_SERVICE_ENCAP;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_SERVICE_SERVICE_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE_ANY_PORT;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE_DST_ADDR;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE_DST_PORT;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE_PROTOCOL;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_WHOLE;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ECMP_SELECTOR;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_NEXT_HOP;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_NEXT_HOP_NEXT_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ROUTING_V4;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ROUTING_V4_DST_ADDR;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_DMAC;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_PORT;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_SMAC;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_ID_NEXT_ID;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.IntentDiff;
import org.hybridlb.app.core.hmux.ItemKey;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.p4.HlbP4Info;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.app.onos.fabric.FabricView;
import org.hybridlb.app.onos.fabric.OnosHmuxSouthbound;
import org.hybridlb.app.onos.fabric.P4Devices;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.junit.Before;
import org.junit.Test;
import org.onlab.util.ImmutableByteSequence;
import org.onosproject.net.DeviceId;
import org.onosproject.net.NetTestTools;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleOperations;
import org.onosproject.net.flow.criteria.PiCriterion;
import org.onosproject.net.flow.instructions.PiInstruction;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBucket;
import org.onosproject.net.group.GroupDescription;
import org.onosproject.net.pi.model.PiActionId;
import org.onosproject.net.pi.model.PiActionParamId;
import org.onosproject.net.pi.model.PiActionModel;
import org.onosproject.net.pi.model.PiActionParamModel;
import org.onosproject.net.pi.model.PiActionProfileId;
import org.onosproject.net.pi.model.PiActionProfileModel;
import org.onosproject.net.pi.model.PiMatchFieldModel;
import org.onosproject.net.pi.model.PiTableModel;
import org.onosproject.net.pi.model.PiMatchFieldId;
import org.onosproject.net.pi.model.PiTableId;
import org.onosproject.net.pi.runtime.PiAction;
import org.onosproject.net.pi.runtime.PiActionParam;
import org.onosproject.net.pi.runtime.PiActionProfileGroupId;
import org.onosproject.net.pi.runtime.PiGroupKey;

/**
 * The P4 HMux renderer and reader against ONOS's flow rule and group services (adapters overridden,
 * ONOS's group manager taking the group id given): the PiTableEntry rules and dip_selector action
 * profile groups an intent becomes, by P4Info name; read back as the same intent; a pool change as
 * one group modification; what the layout would not write read as foreign or inconsistent. A fabric
 * of two P4 ToRs and one Open vSwitch spine: each device gets the renderer its pipeconf binding says.
 */
public class P4HmuxSouthboundTest {
    static final String VIP = "10.100.0.1";
    static final String VIP2 = "10.100.0.2";
    static final ServiceMatch TCP80 = new ServiceMatch(VIP, "tcp", 80);
    static final ServiceMatch UDP_ANY = new ServiceMatch(VIP, "udp", 0);
    static final ServiceMatch WHOLE2 = new ServiceMatch(VIP2, ServiceMatch.ANY, 0);
    static final List<String> DEVICES = List.of("p4tor1", "p4tor2", "spine1");
    static final Map<String, Integer> NEXT_IDS = Map.of("p4tor1", 11, "p4tor2", 12, "spine1", 13);

    private FakeOnos onos;
    private FabricView view;
    private OnosHmuxSouthbound southbound;

    @Before
    public void setUp() {
        onos = fabric();
        view = view();
        southbound = southbound(onos, () -> view);
    }

    /** Two P4 ToRs (p4tor1 runs the Cheetah program, p4tor2 the HMux one) under an Open vSwitch spine, routed. */
    static FakeOnos fabric() {
        FakeOnos onos = new FakeOnos();
        DEVICES.forEach(onos::device);
        onos.link("p4tor1", 1, "spine1", 1);
        onos.link("p4tor2", 1, "spine1", 2);
        fabricRouting(onos, "p4tor1", NEXT_IDS.values(), NEXT_IDS.get("p4tor2"));
        fabricRouting(onos, "p4tor2", NEXT_IDS.values(), NEXT_IDS.get("p4tor2"));
        return onos;
    }

    static FabricView view() {
        return new FabricView(List.of(spec("p4tor1", SwitchRole.TOR, 0), spec("p4tor2", SwitchRole.TOR, 1),
                spec("spine1", SwitchRole.CORE, null)), List.of(), List.of(),
                List.of(new Smux("smux-1", SMUX_IP, "p4tor2", 1e10)));
    }

    static OnosHmuxSouthbound southbound(FakeOnos onos, java.util.function.Supplier<FabricView> view) {
        P4Devices p4 = new P4Devices() {
            @Override
            public Optional<String> profile(DeviceId device) {
                String d = device.toString();
                return d.contains("p4tor1") ? Optional.of(HlbP4Info.PROFILE_HLB_CHEETAH)
                        : d.contains("p4") ? Optional.of(HlbP4Info.PROFILE_HLB_HMUX) : Optional.empty();
            }

            @Override
            public Map<String, Integer> nextIds() {
                return NEXT_IDS;
            }
        };
        return new OnosHmuxSouthbound(FakeOnos.APP, onos.flows, onos.groups, onos.devices, onos.topology,
                onos.hosts, onos.drivers, view, 1000, onos.confirmation(10), () -> false, p4);
    }

    /** Another application of the fabric (its routing). */
    static final org.onosproject.core.ApplicationId FABRIC =
            org.onosproject.TestApplicationId.create("org.onosproject.fabric-routing");
    static final String SMUX_IP = "10.0.2.9";

    /** The fabric's hop of next id {@code next}: out of port {@code next}. */
    static PiAction hop(int next) {
        return action(ROUTING_SET_NEXT_HOP, ROUTING_SET_NEXT_HOP_PORT, ImmutableByteSequence.copyFrom((short) next),
                ROUTING_SET_NEXT_HOP_SMAC, ImmutableByteSequence.copyFrom(0x02aaL),
                ROUTING_SET_NEXT_HOP_DMAC, ImmutableByteSequence.copyFrom(0x0200L + next));
    }

    /**
     * What the fabric's routing application holds on a P4 device: {@code next_hop} of every switch's
     * next id to an {@code ecmp_selector} group of one hop, and the SMux's address routed to the
     * next id of the ToR it hangs off ({@code smuxNext}).
     */
    static void fabricRouting(FakeOnos onos, String device, java.util.Collection<Integer> nextIds, int smuxNext) {
        DeviceId dev = NetTestTools.did(device);
        FlowRuleOperations.Builder ops = FlowRuleOperations.builder();
        for (int next : nextIds) {
            PiGroupKey key = new PiGroupKey(PiTableId.of(ROUTING_NEXT_HOP), PiActionProfileId.of(ROUTING_ECMP_SELECTOR), next);
            onos.groups.addGroup(new org.onosproject.net.group.DefaultGroupDescription(dev, GroupDescription.Type.SELECT,
                    new org.onosproject.net.group.GroupBuckets(List.of(org.onosproject.net.group.DefaultGroupBucket
                            .createSelectGroupBucket(DefaultTrafficTreatment.builder().piTableAction(hop(next)).build()))),
                    key, next, FABRIC));
            ops.add(DefaultFlowRule.builder().forDevice(dev).forTable(PiTableId.of(ROUTING_NEXT_HOP)).fromApp(FABRIC)
                    .makePermanent().withPriority(10).withSelector(DefaultTrafficSelector.builder().matchPi(
                            PiCriterion.builder().matchExact(PiMatchFieldId.of(ROUTING_NEXT_HOP_NEXT_ID), (short) next)
                                    .build()).build())
                    .withTreatment(DefaultTrafficTreatment.builder().piTableAction(PiActionProfileGroupId.of(next)).build())
                    .build());
        }
        ops.add(fabricRoute(dev, smuxNext));
        onos.flows.apply(ops.build());
    }

    /** The fabric's route to the SMux's address, through next id {@code smuxNext}. */
    static FlowRule fabricRoute(DeviceId dev, int smuxNext) {
        return DefaultFlowRule.builder().forDevice(dev).forTable(PiTableId.of(ROUTING_ROUTING_V4)).fromApp(FABRIC)
                .makePermanent().withPriority(10).withSelector(DefaultTrafficSelector.builder().matchPi(
                        PiCriterion.builder().matchLpm(PiMatchFieldId.of(ROUTING_ROUTING_V4_DST_ADDR), 0x0a000209, 32)
                                .build()).build())
                .withTreatment(DefaultTrafficTreatment.builder().piTableAction(action(ROUTING_SET_NEXT_ID,
                        ROUTING_SET_NEXT_ID_NEXT_ID, ImmutableByteSequence.copyFrom((short) smuxNext))).build())
                .build();
    }

    /** ONOS's id of the dip_selector group of service {@code sid}: spaced for ONOS's member ids. */
    static int dipGroup(long sid) {
        return 0x10000 + ((int) sid << 10);
    }

    private static FabricView.SwitchSpec spec(String name, SwitchRole role, Integer pod) {
        return new FabricView.SwitchSpec(NetTestTools.did(name), new Switch(name, role, pod, null),
                PortNumber.portNumber(100));
    }

    static List<DipBucket> pool() {
        return List.of(new DipBucket(0, "10.0.1.2", "10.0.1.2", 1), new DipBucket(1, "10.0.1.3", "10.0.1.3", 2),
                new DipBucket(4, "10.9.9.9", "10.0.2.2", 1));
    }

    /** VIP's TCP 80 and UDP services and VIP2 whole on p4tor1, routes to them on p4tor2, the aggregate everywhere. */
    Map<String, SwitchIntent> wanted(List<DipBucket> tcpPool) {
        Map<String, SwitchIntent> out = new LinkedHashMap<>();
        for (String d : List.of("p4tor1", "p4tor2")) {
            SwitchIntent.Builder b = SwitchIntent.builder().aggregate("10.100.0.0/16", Set.of("smux-1"));
            if (d.equals("p4tor1")) {
                b.entry(TCP80, tcpPool).entry(UDP_ANY, pool().subList(0, 1)).entry(WHOLE2, pool().subList(2, 3));
            } else {
                b.route(VIP, "p4tor1").route(VIP2, "p4tor1");
            }
            out.put(d, southbound.capability(d).holdable(b.build()));
        }
        return out;
    }

    Map<String, SwitchDelta> converge(Map<String, SwitchIntent> want) {
        return OnosHmuxSouthboundTest.converge(southbound, want);
    }

    private void assertConverged(Map<String, SwitchIntent> want) {
        Map<String, SwitchReading> read = southbound.read(want.keySet());
        want.forEach((d, w) -> assertTrue(d + ": " + IntentDiff.diff(w, read.get(d)),
                IntentDiff.diff(w, read.get(d)).isEmpty()));
    }

    static PiAction action(String name, Object... params) {
        PiAction.Builder b = PiAction.builder().withId(PiActionId.of(name));
        for (int i = 0; i < params.length; i += 2) {
            b.withParameter(new PiActionParam(PiActionParamId.of((String) params[i]), (ImmutableByteSequence) params[i + 1]));
        }
        return b.build();
    }

    static long num(ImmutableByteSequence v) {
        long x = 0;
        for (byte b : v.asArray()) {
            x = x << 8 | (b & 0xff);
        }
        return x;
    }

    private static Object only(FlowEntry e) {
        return ((PiInstruction) e.treatment().allInstructions().get(0)).action();
    }

    private List<FlowEntry> in(String device, String table) {
        return onos.flows.on(device).stream().filter(e -> e.table().equals(PiTableId.of(table)))
                .collect(Collectors.toList());
    }

    static PiCriterion criterion(FlowEntry e) {
        return (PiCriterion) e.selector().criteria().iterator().next();
    }

    static long exact(FlowEntry e, String field) {
        return num(((org.onosproject.net.pi.runtime.PiExactFieldMatch) criterion(e).fieldMatch(PiMatchFieldId.of(field))
                .orElseThrow()).value());
    }

    @Test
    public void anIntentBecomesServiceEntriesSelectorGroupsAndRoutes() throws Exception {
        Map<String, SwitchIntent> want = wanted(pool());
        converge(want);

        // the TCP service: vip_service (VIP, 6, 80) -> set_service(id, IP-in-IP); dip_select(id) -> its group
        List<FlowEntry> svc = in("p4tor1", HMUX_VIP_SERVICE);
        assertEquals(1, svc.size());
        assertEquals(0x0a640001L, exact(svc.get(0), HMUX_VIP_SERVICE_DST_ADDR));
        assertEquals(6, exact(svc.get(0), HMUX_VIP_SERVICE_PROTOCOL));
        assertEquals(80, exact(svc.get(0), HMUX_VIP_SERVICE_DST_PORT));
        PiAction set = (PiAction) only(svc.get(0));
        assertEquals(PiActionId.of(HMUX_SET_SERVICE), set.id());
        long sid = Long.parseLong(param(set, HMUX_SET_SERVICE_SERVICE_ID));
        assertEquals(Long.toString(HlbP4Info.ENCAP_IPIP), param(set, HMUX_SET_SERVICE_ENCAP));
        assertEquals(1, in("p4tor1", HMUX_VIP_SERVICE_ANY_PORT).size());
        assertEquals(1, in("p4tor1", HMUX_VIP_WHOLE).size());
        List<FlowEntry> sel = in("p4tor1", HMUX_DIP_SELECT);
        assertEquals(3, sel.size());
        FlowEntry tcpSelect = sel.stream().filter(e -> {
            try {
                return exact(e, HMUX_DIP_SELECT_SERVICE_ID) == sid;
            } catch (Exception x) {
                throw new AssertionError(x);
            }
        }).findFirst().orElseThrow();
        assertEquals(PiActionProfileGroupId.of(dipGroup(sid)), only(tcpSelect));

        // its group: a dip_selector action profile group, weight-unit members in bucket order
        Group g = onos.groups.getGroup(NetTestTools.did("p4tor1"), new PiGroupKey(PiTableId.of(HMUX_DIP_SELECT),
                PiActionProfileId.of(HMUX_DIP_SELECTOR), dipGroup(sid)));
        assertEquals(GroupDescription.Type.SELECT, g.type());
        assertEquals(dipGroup(sid), g.id().id().intValue());
        List<String> members = new ArrayList<>();
        for (GroupBucket b : g.buckets().buckets()) {
            PiAction a = (PiAction) ((PiInstruction) b.treatment().allInstructions().get(0)).action();
            assertEquals(PiActionId.of(HMUX_SET_DIP), a.id());
            members.add(param(a, HMUX_SET_DIP_TUNNEL_DST) + "#" + param(a, HMUX_SET_DIP_BUCKET));
        }
        // bucket: the switch's counter index of each DIP (TCP80's come first), not the VIP's bucket id
        assertEquals(List.of("10.0.1.2#0", "10.0.1.3#1", "10.0.1.3#1", "10.0.2.2#2"), members);
        // every DIP of the device's three services counts in an index no other names (UDP_ANY's
        // 10.0.1.2 and WHOLE2's 10.0.2.2 are bucket 0 of their services, as TCP80's 10.0.1.2 is)
        Map<String, Integer> counters = new LinkedHashMap<>();
        for (Group x : onos.groups.getGroups(NetTestTools.did("p4tor1"), FakeOnos.APP)) {
            if (((PiGroupKey) x.appCookie()).actionProfileId().equals(PiActionProfileId.of(HMUX_DIP_SELECTOR))) {
                for (GroupBucket b : x.buckets().buckets()) {
                    PiAction a = (PiAction) ((PiInstruction) b.treatment().allInstructions().get(0)).action();
                    Integer other = counters.put(param(a, HMUX_SET_DIP_BUCKET), x.id().id());
                    assertTrue(counters.toString(), other == null || other.equals(x.id().id()));
                }
            }
        }
        assertEquals(counters.toString(), 5, counters.size());

        // the routes on the other ToR: routing_v4 VIP/32 -> set_next_id(next id towards p4tor1)
        List<FlowEntry> routes = in("p4tor2", ROUTING_ROUTING_V4).stream().filter(e -> e.appId() == FakeOnos.APP.id()
                && e.priority() == org.hybridlb.app.core.hmux.HmuxLayout.PRIORITY_ROUTE).collect(Collectors.toList());
        assertEquals(2, routes.size());
        for (FlowEntry r : routes) {
            org.onosproject.net.pi.runtime.PiLpmFieldMatch m = (org.onosproject.net.pi.runtime.PiLpmFieldMatch)
                    criterion(r).fieldMatch(PiMatchFieldId.of(ROUTING_ROUTING_V4_DST_ADDR)).orElseThrow();
            assertEquals(32, m.prefixLength());
            PiAction a = (PiAction) only(r);
            assertEquals(PiActionId.of(ROUTING_SET_NEXT_ID), a.id());
            assertEquals("11", param(a, ROUTING_SET_NEXT_ID_NEXT_ID));
        }
        // nothing on the spine: it is an OpenFlow device and the intent had nothing for it
        assertTrue(onos.flows.on("spine1").isEmpty());
        // the aggregate towards the SMux: routing_v4 prefix -> a controller next id -> its ecmp_selector group
        assertEquals(1, in("p4tor2", ROUTING_NEXT_HOP).stream().filter(e -> e.appId() == FakeOnos.APP.id()).count());
        assertConverged(want);
    }

    private static String param(PiAction a, String name) {
        long x = num(a.parameters().stream().filter(p -> p.id().equals(PiActionParamId.of(name)))
                .findFirst().orElseThrow().value());
        return name.equals(HMUX_SET_DIP_TUNNEL_DST) ? org.hybridlb.solver.model.Ipv4.format((int) x) : Long.toString(x);
    }

    @Test
    public void readBackGivesTheIntentAndAnEmptyDiff() {
        Map<String, SwitchIntent> want = wanted(pool());
        converge(want);
        SwitchReading r = southbound.read(List.of("p4tor1")).get("p4tor1");
        assertEquals(Set.of(TCP80, UDP_ANY, WHOLE2), r.intent.entries.keySet());
        // buckets by position (set_dip's bucket is the switch's counter index), endpoints kept, weights
        // from the run lengths, DIPs not kept
        assertEquals(List.of(new DipBucket(0, null, "10.0.1.2", 1), new DipBucket(1, null, "10.0.1.3", 2),
                new DipBucket(2, null, "10.0.2.2", 1)), r.intent.entries.get(TCP80));
        assertTrue(r.inconsistent.toString(), r.inconsistent.isEmpty());
        // the aggregate, routed through the fabric's hop towards the SMux
        assertFalse(r.toString(), r.unreachable.containsKey("smux-1"));
        assertEquals(Set.of("smux-1"), r.intent.aggregates.get("10.100.0.0/16"));
        assertTrue(converge(want).isEmpty());
    }

    @Test
    public void aPoolChangeIsOneGroupModification() {
        converge(wanted(pool()));
        onos.log.clear();
        List<DipBucket> changed = List.of(new DipBucket(0, "10.0.1.2", "10.0.1.2", 3), new DipBucket(4, "10.9.9.9", "10.0.2.2", 1));
        Map<String, SwitchDelta> d = converge(wanted(changed));
        assertEquals(Set.of("p4tor1"), d.keySet());
        assertEquals(Set.of(TCP80), d.get("p4tor1").putEntries.keySet());
        assertTrue(d.get("p4tor1").removeEntries.isEmpty());
        assertEquals(1, onos.log.size());
        assertTrue(onos.log.toString(), onos.log.get(0).startsWith("group* of:p4tor1"));
        assertConverged(wanted(changed));
    }

    @Test
    public void aRemovedServiceTakesItsEntriesAndGroupAndFreesItsId() {
        converge(wanted(pool()));
        Map<String, SwitchIntent> less = wanted(pool());
        SwitchIntent.Builder b = wanted(pool()).get("p4tor1").toBuilder();
        b.entries.remove(UDP_ANY);
        less.put("p4tor1", b.build());
        int groupsBefore = onos.groups.count();
        converge(less);
        assertTrue(in("p4tor1", HMUX_VIP_SERVICE_ANY_PORT).isEmpty());
        assertEquals(2, in("p4tor1", HMUX_DIP_SELECT).size());
        assertEquals(groupsBefore - 1, onos.groups.count());
        assertConverged(less);
    }

    @Test
    public void aForeignRuleAndARouteToNoSwitchAreRepaired() {
        Map<String, SwitchIntent> want = wanted(pool());
        converge(want);
        DeviceId tor2 = NetTestTools.did("p4tor2");
        // a dip_select entry of no service, and VIP's route pointing at a next id that names no switch
        FlowRuleOperations.Builder ops = FlowRuleOperations.builder();
        ops.add(DefaultFlowRule.builder().forDevice(tor2).forTable(PiTableId.of(HMUX_DIP_SELECT)).fromApp(FakeOnos.APP)
                .makePermanent().withPriority(3100).withSelector(DefaultTrafficSelector.builder().matchPi(
                        PiCriterion.builder().matchExact(PiMatchFieldId.of(HMUX_DIP_SELECT_SERVICE_ID), (short) 77).build())
                        .build())
                .withTreatment(DefaultTrafficTreatment.builder().piTableAction(PiActionProfileGroupId.of(77 << 10)).build())
                .build());
        ops.add(DefaultFlowRule.builder().forDevice(tor2).forTable(PiTableId.of(ROUTING_ROUTING_V4)).fromApp(FakeOnos.APP)
                .makePermanent().withPriority(2000).withSelector(DefaultTrafficSelector.builder().matchPi(
                        PiCriterion.builder().matchLpm(PiMatchFieldId.of(ROUTING_ROUTING_V4_DST_ADDR), 0x0a640001, 32)
                                .build()).build())
                .withTreatment(DefaultTrafficTreatment.builder().piTableAction(action(ROUTING_SET_NEXT_ID,
                        ROUTING_SET_NEXT_ID_NEXT_ID, ImmutableByteSequence.copyFrom((short) 999))).build())
                .build());
        onos.flows.apply(ops.build());
        SwitchReading r = southbound.read(List.of("p4tor2")).get("p4tor2");
        assertTrue(r.toString(), r.inconsistent.containsKey(ItemKey.route(VIP)));
        assertTrue(r.toString(), r.inconsistent.keySet().stream().anyMatch(k -> k.item == ItemKey.Item.FOREIGN));
        assertFalse(r.intent.routes.containsKey(VIP));
        converge(want);
        assertConverged(want);
        assertEquals(4, in("p4tor2", ROUTING_ROUTING_V4).size()); // 2 routes, the aggregate, the fabric's route
        assertTrue(in("p4tor2", HMUX_DIP_SELECT).isEmpty());
    }

    @Test
    public void aServiceWhoseSelectEntryOrGroupWentIsReadInconsistentAndRewritten() {
        Map<String, SwitchIntent> want = wanted(pool());
        converge(want);
        DeviceId tor1 = NetTestTools.did("p4tor1");
        // the TCP service's dip_select entry goes behind the app's back, and the whole-VIP service's group
        int tcpSid = Integer.parseInt(param((PiAction) only(in("p4tor1", HMUX_VIP_SERVICE).get(0)),
                HMUX_SET_SERVICE_SERVICE_ID));
        FlowEntry tcpSelect = in("p4tor1", HMUX_DIP_SELECT).stream()
                .filter(e -> exact(e, HMUX_DIP_SELECT_SERVICE_ID) == tcpSid).findFirst().orElseThrow();
        onos.flows.entries.remove(tcpSelect.id());
        int wholeSid = Integer.parseInt(param((PiAction) only(in("p4tor1", HMUX_VIP_WHOLE).get(0)),
                HMUX_SET_SERVICE_SERVICE_ID));
        onos.groups.removeGroup(tor1, new PiGroupKey(PiTableId.of(HMUX_DIP_SELECT),
                PiActionProfileId.of(HMUX_DIP_SELECTOR), dipGroup(wholeSid)), FakeOnos.APP);
        SwitchReading r = southbound.read(List.of("p4tor1")).get("p4tor1");
        // the core's reader says why (HmuxP4Reader: the one place of these checks)
        assertEquals(r.toString(), "service id " + tcpSid + " has no dip_select entry to a group",
                r.inconsistent.get(ItemKey.entry(TCP80)));
        assertEquals(r.toString(), "dip_select " + wholeSid + " points at no dip_selector group " + wholeSid,
                r.inconsistent.get(ItemKey.entry(WHOLE2)));
        assertEquals(Set.of(UDP_ANY), r.intent.entries.keySet());
        converge(want);
        assertConverged(want);
    }

    @Test
    public void aP4DeviceOffersTheCrc32ContractAndKnowsBucketsByPosition() {
        assertEquals(HashContract.Selection.CRC32, southbound.capability("p4tor1").hash.selection);
        assertEquals(HashContract.Encap.IPIP, southbound.capability("p4tor1").hash.encap);
        assertFalse(southbound.capability("p4tor1").keepsBucketIds);
        assertFalse(southbound.capability("p4tor1").keepsDips);
        assertEquals(HashContract.Selection.OVS_DP_HASH, southbound.capability("spine1").hash.selection);
        // the Cheetah program decodes crc32c cookies, the HMux one none
        assertEquals(Set.of(org.hybridlb.app.core.cheetah.Cookie.HashMode.CRC32C), southbound.capability("p4tor1").cookieModes);
        assertTrue(southbound.capability("p4tor2").cookieModes.isEmpty());
    }

    @Test
    public void aPoolOfMoreWeightUnitsThanTheSelectorHoldsIsRefusedWithWhy() {
        Map<String, SwitchIntent> want = wanted(List.of(new DipBucket(0, "10.0.1.2", "10.0.1.2", 65535)));
        try {
            converge(want);
            fail("a pool of 65535 weight units was written");
        } catch (SouthboundException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("weight units of HMux buckets, dip_selector holds 16384"));
        }
        assertTrue(in("p4tor1", HMUX_VIP_SERVICE).isEmpty());
    }

    /** ONOS's translator's checks, against the model ONOS's parser makes of the committed P4Info. */
    @Test
    public void everyRuleAndMemberFitsThePipelineModel() {
        converge(wanted(pool()));
        org.onosproject.net.pi.model.PiPipelineModel model =
                org.hybridlb.app.onos.p4.HlbPipeconfLoader.model(HlbP4Info.PROFILE_HLB_HMUX);
        int rules = 0;
        for (String d : List.of("p4tor1", "p4tor2")) {
            for (FlowEntry e : onos.flows.on(d)) {
                PiTableModel t = model.table((PiTableId) e.table()).orElseThrow(() -> new AssertionError(e.table() + "?"));
                for (org.onosproject.net.pi.runtime.PiFieldMatch f : criterion(e).fieldMatches()) {
                    PiMatchFieldModel fm = t.matchField(f.fieldId()).orElseThrow(() -> new AssertionError(f + " in " + t.id()));
                    assertEquals(f.toString(), fm.matchType(), f.type());
                    ImmutableByteSequence v = f instanceof org.onosproject.net.pi.runtime.PiExactFieldMatch
                            ? ((org.onosproject.net.pi.runtime.PiExactFieldMatch) f).value()
                            : ((org.onosproject.net.pi.runtime.PiLpmFieldMatch) f).value();
                    assertTrue(f + " fits " + fm.bitWidth() + " bits", fits(v, fm.bitWidth()));
                }
                assertEquals(t.id() + " match fields", t.matchFields().size(), criterion(e).fieldMatches().size());
                Object a = only(e);
                if (a instanceof PiActionProfileGroupId) {
                    assertTrue(t.id() + " has an action profile", t.actionProfile() != null);
                } else {
                    assertAction(t, (PiAction) a);
                }
                rules++;
            }
            for (Group g : onos.groups.getGroups(NetTestTools.did(d))) {
                PiGroupKey k = (PiGroupKey) g.appCookie();
                PiActionProfileModel ap = model.actionProfiles(k.actionProfileId()).orElseThrow();
                assertTrue(ap.hasSelector() && ap.tables().contains(k.tableId()));
                for (GroupBucket b : g.buckets().buckets()) {
                    assertAction(model.table(k.tableId()).orElseThrow(), (PiAction) ((PiInstruction)
                            b.treatment().allInstructions().get(0)).action());
                }
            }
        }
        assertEquals(20, rules); // the app's 8 + 4 (an aggregate: its route and next_hop per ToR), the fabric's 8
    }

    private static void assertAction(PiTableModel t, PiAction a) {
        PiActionModel am = t.action(a.id()).orElseThrow(() -> new AssertionError(a.id() + " not an action of " + t.id()));
        assertEquals(a.id() + " params", am.params().size(), a.parameters().size());
        for (PiActionParam p : a.parameters()) {
            PiActionParamModel pm = am.param(p.id()).orElseThrow(() -> new AssertionError(p.id() + " of " + a.id()));
            assertTrue(p + " fits " + pm.bitWidth() + " bits", fits(p.value(), pm.bitWidth()));
        }
    }

    private static boolean fits(ImmutableByteSequence v, int bits) {
        return bits >= 64 || Long.numberOfLeadingZeros(num(v)) >= 64 - bits;
    }
}
