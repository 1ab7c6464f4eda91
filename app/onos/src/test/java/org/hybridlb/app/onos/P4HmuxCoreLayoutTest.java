package org.hybridlb.app.onos;

import static org.hybridlb.app.core.p4.HlbP4Info.CHEETAH_ALL_SERVERS;
import static org.hybridlb.app.core.p4.HlbP4Info.CHEETAH_ALL_SERVERS_SERVER_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.CHEETAH_VIP_SERVERS;
import static org.hybridlb.app.core.p4.HlbP4Info.CHEETAH_VIP_SERVERS_SERVER_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.CHEETAH_VIP_SERVERS_SERVICE_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECTOR_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_SET_COOKIE_SERVICE;
import static org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ECMP_SELECTOR;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_NEXT_HOP;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_DMAC;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_DMAC_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_PORT;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_PORT_ID;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_SMAC;
import static org.hybridlb.app.core.p4.HlbP4Info.ROUTING_SET_NEXT_HOP_SMAC_ID;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.hmux.CookieDecode;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.IntentDiff;
import org.hybridlb.app.core.hmux.ItemKey;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.p4.HmuxP4Config;
import org.hybridlb.app.core.p4.HmuxP4Plan;
import org.hybridlb.app.core.p4.HmuxP4Snapshot;
import org.hybridlb.app.core.p4.P4Action;
import org.hybridlb.app.core.p4.P4Entity;
import org.hybridlb.app.core.p4.P4Group;
import org.hybridlb.app.core.p4.P4Match;
import org.hybridlb.app.core.p4.P4State;
import org.hybridlb.app.core.p4.P4TableEntry;
import org.hybridlb.app.core.p4.P4Value;
import org.hybridlb.app.onos.fabric.FabricView;
import org.hybridlb.app.onos.fabric.OnosHmuxSouthbound;
import org.junit.Before;
import org.junit.Test;
import org.onosproject.net.DeviceId;
import org.onosproject.net.NetTestTools;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRuleOperations;
import org.onosproject.net.flow.criteria.PiCriterion;
import org.onosproject.net.flow.instructions.PiInstruction;
import org.onosproject.net.group.DefaultGroupBucket;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBucket;
import org.onosproject.net.group.GroupBuckets;
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

/**
 * The ONOS app's P4 devices hold what the core's P4 layer plans for them, the layer hybridlbd's
 * P4Runtime southbound sends ({@link HmuxP4Plan}): a cheetah crc32c VIP on the Cheetah program with
 * its {@code set_cookie_service}, {@code vip_servers} and {@code all_servers} entries, the aggregate
 * towards the SMux through the fabric's own hop; compared with the plan's entities by P4Info name,
 * not with expectations typed here. Read back through the core's reader: a stale aggregate member,
 * a server missing from {@code all_servers} and a foreign Cheetah entry are reported and repaired.
 */
public class P4HmuxCoreLayoutTest {
    static final String KEY = "000102030405060708090a0b0c0d0e0f";
    static final ServiceMatch SHOP = new ServiceMatch("10.100.0.3", "tcp", 443);
    static final ServiceMatch WEB = new ServiceMatch("10.100.0.1", "tcp", 80);
    static final String AGGREGATE = "10.100.0.0/16";
    /** The aggregate's ecmp_selector group: the core's first aggregate next id. */
    static final PiGroupKey AGGREGATE_GROUP = new PiGroupKey(PiTableId.of(ROUTING_NEXT_HOP),
            PiActionProfileId.of(ROUTING_ECMP_SELECTOR), HmuxP4Config.DEFAULT_AGGREGATE_NEXT_ID_BASE);

    private FakeOnos onos;
    private OnosHmuxSouthbound southbound;

    @Before
    public void setUp() {
        onos = P4HmuxSouthboundTest.fabric();
        FabricView view = P4HmuxSouthboundTest.view();
        southbound = P4HmuxSouthboundTest.southbound(onos, () -> view);
    }

    /** A hashed service and a cheetah crc32c one (server 7 drained: accepted, no weight) on p4tor1; routes on p4tor2. */
    Map<String, SwitchIntent> wanted(Map<Integer, CookieDecode.Server> servers) {
        Map<String, SwitchIntent> out = new LinkedHashMap<>();
        out.put("p4tor1", southbound.capability("p4tor1").holdable(SwitchIntent.builder()
                .entry(WEB, List.of(new DipBucket(0, "10.0.1.2", "10.0.1.2", 2)))
                .entry(SHOP, List.of(new DipBucket(0, null, "10.0.1.2", 2), new DipBucket(1, null, "10.0.1.4", 1)))
                .cookies(SHOP, new CookieDecode(Cookie.HashMode.CRC32C, KEY, servers))
                .aggregate(AGGREGATE, Set.of("smux-1")).build()));
        out.put("p4tor2", southbound.capability("p4tor2").holdable(SwitchIntent.builder()
                .route(WEB.vip, "p4tor1").route(SHOP.vip, "p4tor1").aggregate(AGGREGATE, Set.of("smux-1")).build()));
        return out;
    }

    static Map<Integer, CookieDecode.Server> servers() {
        return Map.of(3, new CookieDecode.Server("10.0.1.2", 0), 5, new CookieDecode.Server("10.0.1.4", 1),
                7, new CookieDecode.Server("10.0.1.5", 4));
    }

    /** The fabric's hop towards the SMux (its route: next id 12), in the core's terms. */
    static P4Action smuxHop() {
        return P4Action.of(ROUTING_SET_NEXT_HOP, ROUTING_SET_NEXT_HOP_ID)
                .param(ROUTING_SET_NEXT_HOP_PORT_ID, ROUTING_SET_NEXT_HOP_PORT, P4Value.of(12))
                .param(ROUTING_SET_NEXT_HOP_SMAC_ID, ROUTING_SET_NEXT_HOP_SMAC, P4Value.of(0x02aa))
                .param(ROUTING_SET_NEXT_HOP_DMAC_ID, ROUTING_SET_NEXT_HOP_DMAC, P4Value.of(0x0200 + 12)).build();
    }

    /** What the core's layer plans for {@code want} on a switch that holds nothing of the controller's yet. */
    static P4State corePlan(SwitchIntent want) {
        return corePlan(want, new P4State());
    }

    /** The core's plan of {@code want} on a switch holding {@code held} of the controller's. */
    static P4State corePlan(SwitchIntent want, P4State held) {
        HmuxP4Config config = new HmuxP4Config(HashContract.Encap.IPIP, 0x10000L, P4HmuxSouthboundTest.NEXT_IDS,
                Map.of("smux-1", P4HmuxSouthboundTest.SMUX_IP));
        HmuxP4Snapshot now = new HmuxP4Snapshot(SwitchReading.of(SwitchIntent.EMPTY), held,
                Map.of("smux-1", smuxHop()));
        return new HmuxP4Plan(config).plan(want, now);
    }

    // ---- one text per entity, by P4Info names and values, from either side -------------------------

    private static String hex(byte[] b) {
        return P4Value.of(b).toString();
    }

    private static String text(P4Action a) {
        List<String> p = new ArrayList<>();
        a.params.forEach((id, v) -> p.add(a.paramNames.get(id) + "=" + v));
        return a.name + new TreeSet<>(p);
    }

    private static String text(PiAction a) {
        List<String> p = new ArrayList<>();
        for (PiActionParam x : a.parameters()) {
            p.add(x.id().id() + "=" + hex(x.value().asArray()));
        }
        return a.id().id() + new TreeSet<>(p);
    }

    /** An entity of the plan; a group with its members' actions in order, by ONOS's group id. */
    static Set<String> texts(P4State s) {
        Set<String> out = new TreeSet<>();
        for (P4Entity e : s.all()) {
            if (e instanceof P4TableEntry) {
                P4TableEntry t = (P4TableEntry) e;
                Set<String> m = new TreeSet<>();
                for (P4Match x : t.matches) {
                    m.add(x.name + "=" + x.value + (x.isLpm() ? "/" + x.prefixLen : ""));
                }
                out.add(t.table + m + " -> " + (t.action != null ? text(t.action) : "group " + onosGroup(t.tableId
                        == org.hybridlb.app.core.p4.HlbP4Info.ROUTING_NEXT_HOP_ID ? 0 : HMUX_DIP_SELECTOR_ID, t.groupId)));
            } else if (e instanceof P4Group) {
                P4Group g = (P4Group) e;
                List<String> members = new ArrayList<>();
                g.memberIds.forEach(id -> members.add(text(s.members(g.profileId).get(id).action)));
                out.add(g.profile + " group " + onosGroup(g.profileId, g.groupId) + " " + members);
            }
        }
        return out;
    }

    private static long onosGroup(int profileId, long groupId) {
        return profileId == HMUX_DIP_SELECTOR_ID ? P4HmuxSouthboundTest.dipGroup(groupId) : groupId;
    }

    /** What ONOS holds of the app on {@code device}, in the same texts. */
    Set<String> held(String device) {
        Set<String> out = new TreeSet<>();
        for (FlowEntry f : onos.flows.on(device)) {
            if (f.appId() != FakeOnos.APP.id()) {
                continue;
            }
            Set<String> m = new TreeSet<>();
            for (PiFieldMatch x : ((PiCriterion) f.selector().criteria().iterator().next()).fieldMatches()) {
                m.add(x.fieldId().id() + "=" + (x instanceof PiExactFieldMatch
                        ? hex(((PiExactFieldMatch) x).value().asArray())
                        : hex(((PiLpmFieldMatch) x).value().asArray()) + "/" + ((PiLpmFieldMatch) x).prefixLength()));
            }
            Object a = ((PiInstruction) f.treatment().allInstructions().get(0)).action();
            out.add(((PiTableId) f.table()).id() + m + " -> " + (a instanceof PiAction ? text((PiAction) a)
                    : "group " + ((PiActionProfileGroupId) a).id()));
        }
        for (Group g : onos.groups.getGroups(NetTestTools.did(device), FakeOnos.APP)) {
            List<String> members = new ArrayList<>();
            for (GroupBucket b : g.buckets().buckets()) {
                members.add(text((PiAction) ((PiInstruction) b.treatment().allInstructions().get(0)).action()));
            }
            out.add(((PiGroupKey) g.appCookie()).actionProfileId().id() + " group " + g.id().id() + " " + members);
        }
        return out;
    }

    private void assertHoldsThePlan(Map<String, SwitchIntent> want) {
        for (Map.Entry<String, SwitchIntent> w : want.entrySet()) {
            assertEquals(w.getKey(), texts(corePlan(w.getValue())), held(w.getKey()));
        }
    }

    private List<FlowEntry> appFlows(String device, String table) {
        List<FlowEntry> out = new ArrayList<>();
        onos.flows.on(device).stream().filter(e -> e.appId() == FakeOnos.APP.id()
                && e.table().equals(PiTableId.of(table))).forEach(out::add);
        return out;
    }

    @Test
    public void aCheetahVipAndTheAggregateAreWhatTheCoreLayerPlans() {
        Map<String, SwitchIntent> want = wanted(servers());
        assertEquals("the Cheetah program keeps the cookies", 1, want.get("p4tor1").cookies.size());
        OnosHmuxSouthboundTest.converge(southbound, want);
        assertHoldsThePlan(want);
        // not vacuous: the Cheetah tables and the aggregate are there
        assertEquals(3, appFlows("p4tor1", CHEETAH_VIP_SERVERS).size());
        assertEquals(3, appFlows("p4tor1", CHEETAH_ALL_SERVERS).size());
        assertTrue(appFlows("p4tor1", HMUX_VIP_SERVICE).stream().anyMatch(e -> ((PiAction) ((PiInstruction)
                e.treatment().allInstructions().get(0)).action()).id().id().equals(HMUX_SET_COOKIE_SERVICE)));
        for (String d : want.keySet()) {
            assertEquals(d, 1, appFlows(d, ROUTING_NEXT_HOP).size());
            Group g = onos.groups.getGroup(NetTestTools.did(d), AGGREGATE_GROUP);
            assertEquals(d + ": the aggregate's member runs the fabric's hop to the SMux",
                    List.of(DefaultGroupBucket.createSelectGroupBucket(DefaultTrafficTreatment.builder()
                            .piTableAction(P4HmuxSouthboundTest.hop(12)).build())).toString(),
                    g.buckets().buckets().toString());
        }
        // read back through the core's reader: the same intent, the cookies with it
        Map<String, SwitchReading> read = southbound.read(want.keySet());
        for (String d : want.keySet()) {
            assertTrue(d + ": " + read.get(d), IntentDiff.diff(want.get(d), read.get(d)).isEmpty());
        }
        assertEquals(want.get("p4tor1").cookies, read.get("p4tor1").intent.cookies);
        assertTrue(OnosHmuxSouthboundTest.converge(southbound, want).isEmpty());
    }

    @Test
    public void aServerChangeOfTheCheetahVipIsWhatTheCoreLayerPlans() {
        OnosHmuxSouthboundTest.converge(southbound, wanted(servers()));
        Map<Integer, CookieDecode.Server> fewer = new java.util.TreeMap<>(servers());
        fewer.remove(7);
        fewer.put(9, new CookieDecode.Server("10.0.1.6", 2));
        Map<String, SwitchIntent> want = wanted(fewer);
        OnosHmuxSouthboundTest.converge(southbound, want);
        // planned from what the device held: server 9 does not count in the index server 7 leaves
        // (its entry may still count there while the change is applied)
        P4State before = corePlan(wanted(servers()).get("p4tor1"));
        assertEquals(texts(corePlan(want.get("p4tor1"), before)), held("p4tor1"));
        assertHoldsThePlan(Map.of("p4tor2", want.get("p4tor2")));
        assertEquals(want.get("p4tor1").cookies, southbound.read(List.of("p4tor1")).get("p4tor1").intent.cookies);
    }

    @Test
    public void anHmuxOnlyDeviceGetsNoCookieTables() {
        SwitchIntent onHmux = southbound.capability("p4tor2").holdable(wanted(servers()).get("p4tor1"));
        assertTrue(onHmux.cookies.isEmpty());
        OnosHmuxSouthboundTest.converge(southbound, Map.of("p4tor2", onHmux));
        assertTrue(appFlows("p4tor2", CHEETAH_VIP_SERVERS).isEmpty());
        assertTrue(appFlows("p4tor2", CHEETAH_ALL_SERVERS).isEmpty());
        assertHoldsThePlan(Map.of("p4tor2", onHmux));
    }

    @Test
    public void staleAggregateMissingServerAndForeignEntryAreReportedThenRepaired() {
        Map<String, SwitchIntent> want = wanted(servers());
        OnosHmuxSouthboundTest.converge(southbound, want);
        DeviceId tor1 = NetTestTools.did("p4tor1");
        // behind the app's back: the aggregate's member now runs another hop, server 5 leaves all_servers,
        // and a vip_servers entry of no service appears
        onos.groups.setBucketsForGroup(tor1, AGGREGATE_GROUP, new GroupBuckets(List.of(DefaultGroupBucket
                .createSelectGroupBucket(DefaultTrafficTreatment.builder().piTableAction(P4HmuxSouthboundTest.hop(13))
                        .build()))), AGGREGATE_GROUP, FakeOnos.APP);
        FlowEntry server5 = appFlows("p4tor1", CHEETAH_ALL_SERVERS).stream()
                .filter(e -> P4HmuxSouthboundTest.exact(e, CHEETAH_ALL_SERVERS_SERVER_ID) == 5).findFirst().orElseThrow();
        onos.flows.entries.remove(server5.id());
        FlowRuleOperations.Builder ops = FlowRuleOperations.builder();
        ops.add(DefaultFlowRule.builder().forDevice(tor1).forTable(PiTableId.of(CHEETAH_VIP_SERVERS))
                .fromApp(FakeOnos.APP).makePermanent().withPriority(3100).withSelector(DefaultTrafficSelector.builder()
                        .matchPi(PiCriterion.builder()
                                .matchExact(PiMatchFieldId.of(CHEETAH_VIP_SERVERS_SERVICE_ID), (short) 99)
                                .matchExact(PiMatchFieldId.of(CHEETAH_VIP_SERVERS_SERVER_ID), (short) 3).build()).build())
                .withTreatment(DefaultTrafficTreatment.builder().piTableAction(P4HmuxSouthboundTest.action(
                        org.hybridlb.app.core.p4.HlbP4Info.CHEETAH_ACCEPT_SERVER,
                        org.hybridlb.app.core.p4.HlbP4Info.CHEETAH_ACCEPT_SERVER_BUCKET,
                        org.onlab.util.ImmutableByteSequence.copyFrom((short) 0))).build()).build());
        onos.flows.apply(ops.build());

        SwitchReading r = southbound.read(List.of("p4tor1")).get("p4tor1");
        // the core's reader's words, through ONOS
        assertTrue(r.toString(), r.inconsistent.get(ItemKey.aggregate(AGGREGATE)).contains("towards SMux smux-1 runs "
                + "set_next_hop(port=0x0d"));
        assertEquals(r.toString(), "server id 5 has no all_servers entry", r.inconsistent.get(ItemKey.entry(SHOP)));
        assertTrue(r.toString(), r.inconsistent.keySet().stream().anyMatch(k -> k.item == ItemKey.Item.FOREIGN
                && k.toString().contains(CHEETAH_VIP_SERVERS)));
        assertFalse(r.intent.entries.containsKey(SHOP));
        assertFalse(r.intent.aggregates.containsKey(AGGREGATE));

        OnosHmuxSouthboundTest.converge(southbound, want);
        assertHoldsThePlan(want);
        SwitchReading again = southbound.read(List.of("p4tor1")).get("p4tor1");
        assertTrue(again.toString(), again.inconsistent.isEmpty());
    }

    @Test
    public void anSmuxTheFabricDoesNotRouteIsUnreachableWithWhy() {
        onos.flows.entries.remove(P4HmuxSouthboundTest.fabricRoute(NetTestTools.did("p4tor1"), 12).id());
        SwitchReading r = southbound.read(List.of("p4tor1")).get("p4tor1");
        assertEquals(r.toString(), "this switch has no route to " + P4HmuxSouthboundTest.SMUX_IP,
                r.unreachable.get("smux-1"));
        assertFalse(r.unreachable.containsKey("p4tor2"));
    }
}
