package org.hybridlb.app.onos;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.IntentDiff;
import org.hybridlb.app.core.hmux.ItemKey;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.app.onos.fabric.FabricView;
import org.hybridlb.app.onos.fabric.GroupConfirmation;
import org.hybridlb.app.onos.fabric.OnosHmuxSouthbound;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.junit.Before;
import org.junit.Test;
import org.onlab.packet.Ethernet;
import org.onlab.packet.IPv4;
import org.onlab.packet.Ip4Address;
import org.onlab.packet.IpPrefix;
import org.onlab.packet.MacAddress;
import org.onlab.packet.TpPort;
import org.onosproject.net.DeviceId;
import org.onosproject.net.NetTestTools;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.group.DefaultGroupBucket;
import org.onosproject.net.group.DefaultGroupKey;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBucket;
import org.onosproject.net.group.GroupDescription;

/**
 * The ONOS southbound against ONOS's flow rule and group services (adapters overridden): what the
 * renderer writes reads back as the same intent (as an OpenFlow 1.3 device can hold it), what the
 * layout would not write reads as inconsistent or foreign, and the group rules of the ONOS issue
 * (held by the store, never a wait for the stats poll) hold.
 */
public class OnosHmuxSouthboundTest {
    static final String VIP = "10.100.0.1";
    static final String AGG = "10.100.0.0/16";
    static final PortNumber GRE = PortNumber.portNumber(100);
    static final List<String> DEVICES = List.of("tor1", "tor2", "spine1", "spine2");

    private FakeOnos onos;
    private FabricView view;
    private GroupConfirmation confirmation;
    private OnosHmuxSouthbound southbound;
    private boolean fastFailover;

    /** Leaf-spine: tor1, tor2 under spine1 and spine2 (two equal paths between the ToRs); the SMux on tor2. */
    @Before
    public void setUp() {
        onos = new FakeOnos();
        for (String d : DEVICES) {
            onos.device(d);
        }
        onos.link("tor1", 1, "spine1", 1);
        onos.link("tor1", 2, "spine2", 1);
        onos.link("tor2", 1, "spine1", 2);
        onos.link("tor2", 2, "spine2", 2);
        onos.host("00:00:00:00:00:09", "10.0.2.9", "tor2", 9);
        List<FabricView.SwitchSpec> sw = new ArrayList<>();
        sw.add(spec("tor1", SwitchRole.TOR, 0, GRE));
        sw.add(spec("tor2", SwitchRole.TOR, 1, GRE));
        sw.add(spec("spine1", SwitchRole.CORE, null, null));
        sw.add(spec("spine2", SwitchRole.CORE, null, null));
        view = new FabricView(sw, List.of(), List.of(),
                List.of(new Smux("smux-1", "10.0.2.9", "tor2", 1e10)));
        confirmation = onos.confirmation(10);
        southbound = southbound(confirmation);
    }

    private OnosHmuxSouthbound southbound(GroupConfirmation rule) {
        return new OnosHmuxSouthbound(FakeOnos.APP, onos.flows, onos.groups, onos.devices, onos.topology,
                onos.hosts, onos.drivers, () -> view, 1000, rule, () -> fastFailover);
    }

    private static FabricView.SwitchSpec spec(String name, SwitchRole role, Integer pod, PortNumber tunnel) {
        return new FabricView.SwitchSpec(NetTestTools.did(name), new Switch(name, role, pod, null), tunnel);
    }

    static final ServiceMatch TCP80 = new ServiceMatch(VIP, "tcp", 80);

    static List<DipBucket> buckets() {
        return List.of(new DipBucket(0, "10.0.1.2", "10.0.1.2", 1), new DipBucket(1, "10.0.1.3", "10.0.1.3", 2),
                new DipBucket(2, "10.9.9.9", "10.0.2.2", 1));
    }

    /** What the core wants for VIP on {@code hmux}: its entry there, routes elsewhere, the aggregate if {@code smuxes}. */
    Map<String, SwitchIntent> placed(String hmux, boolean smuxes) {
        Map<String, SwitchIntent> out = new LinkedHashMap<>();
        for (String d : DEVICES) {
            SwitchIntent.Builder b = SwitchIntent.builder();
            if (d.equals(hmux)) {
                b.entry(TCP80, buckets());
            } else if (hmux != null) {
                b.route(VIP, hmux);
            }
            if (smuxes) {
                b.aggregate(AGG, Set.of("smux-1"));
            }
            out.put(d, southbound.capability(d).holdable(b.build()));
        }
        return out;
    }

    /** Reads every device, diffs with {@code want}, applies: what the core's repair does. */
    Map<String, SwitchDelta> converge(Map<String, SwitchIntent> want) {
        return converge(southbound, want);
    }

    /** The same on any southbound. */
    static Map<String, SwitchDelta> converge(org.hybridlb.app.core.port.HmuxProgrammer southbound,
                                             Map<String, SwitchIntent> want) {
        Map<String, SwitchReading> read = southbound.read(want.keySet());
        Map<String, SwitchDelta> deltas = new LinkedHashMap<>();
        want.forEach((d, w) -> {
            SwitchDelta x = IntentDiff.diff(w, read.get(d));
            if (!x.isEmpty()) {
                deltas.put(d, x);
            }
        });
        southbound.apply(deltas);
        return deltas;
    }

    SwitchReading read(String d) {
        return southbound.read(List.of(d)).get(d);
    }

    void assertHolds(Map<String, SwitchIntent> want) {
        for (Map.Entry<String, SwitchIntent> e : want.entrySet()) {
            assertEquals(e.getKey(), SwitchReading.of(e.getValue()), read(e.getKey()).equals(SwitchReading.of(e.getValue()))
                    ? SwitchReading.of(e.getValue()) : read(e.getKey()));
        }
    }

    @Test
    public void theEntryIsASelectGroupOfTunnelBucketsAndEveryOtherDeviceRoutesToIt() throws Exception {
        converge(placed("tor1", false));

        // On the HMux: exactly one VIP flow, tcp/80 at the port priority, pointing at the service group.
        List<FlowEntry> hmux = onos.flows.on("tor1");
        assertEquals(1, hmux.size());
        FlowEntry f = hmux.get(0);
        assertEquals(3100, f.priority());
        TrafficSelector expectedMatch = DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4)
                .matchIPDst(IpPrefix.valueOf(VIP + "/32")).matchIPProtocol(IPv4.PROTOCOL_TCP)
                .matchTcpDst(TpPort.tpPort(80)).build();
        assertEquals(expectedMatch, f.selector());
        assertEquals(FakeOnos.APP.id(), f.appId());
        Group g = groupOn("tor1", "hlb:vip:" + VIP + ":tcp/80");
        assertNotNull(g);
        assertEquals(GroupDescription.Type.SELECT, g.type());
        assertEquals(DefaultTrafficTreatment.builder().group(g.id()).build(), f.treatment());

        // Buckets in bucket-id order, weights kept, Nicira tunnel destination then the GRE port.
        List<GroupBucket> b = g.buckets().buckets();
        assertEquals(3, b.size());
        String[] tunnelDst = {"10.0.1.2", "10.0.1.3", "10.0.2.2"};
        short[] weight = {1, 2, 1};
        for (int i = 0; i < 3; i++) {
            List<Instruction> ins = b.get(i).treatment().allInstructions();
            assertEquals(2, ins.size());
            Instructions.ExtensionInstructionWrapper ext = (Instructions.ExtensionInstructionWrapper) ins.get(0);
            assertEquals(NetTestTools.did("tor1"), ext.deviceId());
            assertEquals(org.onosproject.net.flow.instructions.ExtensionTreatmentType.ExtensionTreatmentTypes
                    .NICIRA_SET_TUNNEL_DST.type(), ext.extensionInstruction().type());
            assertEquals(Ip4Address.valueOf(tunnelDst[i]), ext.extensionInstruction().getPropertyValue("tunnelDst"));
            assertEquals(Instructions.createOutput(GRE), ins.get(1));
            assertEquals(weight[i], b.get(i).weight());
        }

        // Every other device routes VIP/32 at 2000 to its "toward tor1" group; nothing else.
        for (String d : List.of("tor2", "spine1", "spine2")) {
            List<FlowEntry> fl = onos.flows.on(d);
            assertEquals(d, 1, fl.size());
            assertEquals(2000, fl.get(0).priority());
            assertEquals(DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4)
                    .matchIPDst(IpPrefix.valueOf(VIP + "/32")).build(), fl.get(0).selector());
            assertEquals(DefaultTrafficTreatment.builder().group(groupOn(d, "hlb:to:tor1").id()).build(),
                    fl.get(0).treatment());
        }
        // tor2 reaches tor1 over both spines (ECMP), a spine over its one link.
        assertEquals(List.of(out(1), out(2)), groupOn("tor2", "hlb:to:tor1").buckets().buckets());
        assertEquals(List.of(out(1)), groupOn("spine1", "hlb:to:tor1").buckets().buckets());
        // The group is held before the flow that points at it.
        assertTrue(onos.log.indexOf("group+ of:tor1 hlb:vip:" + VIP + ":tcp/80") < indexOf("flow+ of:tor1 p3100"));

        // Read back as the core wants it, as an OpenFlow 1.3 device holds buckets: by position and endpoint.
        assertHolds(placed("tor1", false));
        assertEquals(List.of(new DipBucket(0, null, "10.0.1.2", 1), new DipBucket(1, null, "10.0.1.3", 2),
                new DipBucket(2, null, "10.0.2.2", 1)), read("tor1").intent.entries.get(TCP80));
        assertTrue("nothing more to do", converge(placed("tor1", false)).isEmpty());
    }

    private static GroupBucket out(long port) {
        return DefaultGroupBucket.createSelectGroupBucket(DefaultTrafficTreatment.builder()
                .setOutput(PortNumber.portNumber(port)).build());
    }

    private int indexOf(String prefix) {
        for (int i = 0; i < onos.log.size(); i++) {
            if (onos.log.get(i).startsWith(prefix)) {
                return i;
            }
        }
        return -1;
    }

    @Test
    public void moreSpecificServicesSitHigherOnTheOneLadder() {
        SwitchIntent want = southbound.capability("tor1").holdable(SwitchIntent.builder()
                .entry(new ServiceMatch(VIP, "any", 0), List.of(new DipBucket(0, "10.0.1.2", "10.0.1.2", 1)))
                .entry(new ServiceMatch("10.100.0.2", "udp", 0), List.of(new DipBucket(0, "10.0.1.2", "10.0.1.2", 1)))
                .entry(new ServiceMatch("10.100.0.2", "udp", 53), List.of(new DipBucket(0, "10.0.1.3", "10.0.1.3", 1)))
                .build());
        converge(Map.of("tor1", want));
        Map<String, Integer> prio = new java.util.TreeMap<>();
        for (FlowEntry f : onos.flows.on("tor1")) {
            prio.put(f.selector().toString().contains("UDP_DST") ? "udp/53"
                    : f.selector().toString().contains("IP_PROTO") ? "udp/0" : "any", f.priority());
        }
        assertEquals(Map.of("any", 3000, "udp/0", 3050, "udp/53", 3100), prio);
        assertEquals(DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4)
                .matchIPDst(IpPrefix.valueOf(VIP + "/32")).build(), onos.flows.on("tor1").stream()
                .filter(f -> f.priority() == 3000).findFirst().orElseThrow().selector());
        assertEquals(SwitchReading.of(want), read("tor1"));
    }

    @Test
    public void whatTheLayoutWouldNotWriteIsReadInconsistentAndRewritten() {
        converge(placed("tor1", true));
        // someone deletes the route on spine1, and the entry's group on tor1 (its flow stays)
        FlowEntry route = onos.flows.on("spine1").stream().filter(f -> f.priority() == 2000).findFirst().orElseThrow();
        onos.flows.entries.remove(route.id());
        onos.groups.removeGroup(NetTestTools.did("tor1"), new DefaultGroupKey(("hlb:vip:" + VIP + ":tcp/80").getBytes()),
                FakeOnos.APP);
        // and leaves a group of the app no flow points at
        onos.groups.addGroup(new org.onosproject.net.group.DefaultGroupDescription(NetTestTools.did("tor2"),
                GroupDescription.Type.SELECT, new org.onosproject.net.group.GroupBuckets(List.of(out(5))),
                new DefaultGroupKey("hlb:vip:10.100.0.9:udp/0".getBytes()), null, FakeOnos.APP));
        assertEquals(Map.of(), read("spine1").intent.routes);
        SwitchReading tor1 = read("tor1");
        assertTrue(tor1.toString(), tor1.inconsistent.get(ItemKey.entry(TCP80)).contains("points at no group"));
        assertFalse(tor1.intent.entries.containsKey(TCP80));
        assertTrue(read("tor2").inconsistent.containsKey(ItemKey.foreign("group hlb:vip:10.100.0.9:udp/0")));

        Map<String, SwitchDelta> d = converge(placed("tor1", true));
        assertEquals(Set.of("tor1", "spine1", "tor2"), d.keySet());
        assertHolds(placed("tor1", true));
        assertNull("the foreign group is gone", groupOn("tor2", "hlb:vip:10.100.0.9:udp/0"));
    }

    @Test
    public void leavingAnHmuxWithdrawsRoutesBeforeTheEntryAndLeavesNothing() {
        converge(placed("tor1", false));
        onos.log.clear();
        converge(placed(null, false));
        int lastRoute = -1;
        int firstHmux = Integer.MAX_VALUE;
        for (int i = 0; i < onos.log.size(); i++) {
            String l = onos.log.get(i);
            if (l.startsWith("flow- ") && l.contains(" p2000 ")) {
                lastRoute = i;
            }
            if (l.startsWith("flow- of:tor1 p3100")) {
                firstHmux = Math.min(firstHmux, i);
            }
        }
        assertTrue(onos.log.toString(), lastRoute >= 0 && lastRoute < firstHmux);
        assertEquals(0, onos.flows.entries.size());
        assertEquals(0, onos.groups.count());
    }

    @Test
    public void aWithdrawalTouchesOnlyRoutesTowardTheFailedSwitch() {
        Map<String, SwitchIntent> want = new LinkedHashMap<>();
        for (String d : DEVICES) {
            SwitchIntent.Builder b = SwitchIntent.builder();
            if (d.equals("tor1")) {
                b.entry(TCP80, buckets());
            } else {
                b.route(VIP, "tor1");
            }
            if (d.equals("tor2")) {
                b.entry(new ServiceMatch("10.100.0.2", "tcp", 80), buckets());
            } else {
                b.route("10.100.0.2", "tor2");
            }
            want.put(d, southbound.capability(d).holdable(b.build()));
        }
        converge(want);
        onos.log.clear();
        Map<String, SwitchDelta> w = new LinkedHashMap<>();
        for (String d : List.of("tor2", "spine1", "spine2")) {
            w.put(d, SwitchDelta.withdraw("tor1", List.of(VIP)));
        }
        southbound.apply(w);
        // Three routes toward tor1 gone first, then the groups toward it nothing uses any more;
        // nothing on tor1, the other VIP's routes untouched.
        assertEquals(onos.log.toString(), 6, onos.log.size());
        for (String l : onos.log.subList(0, 3)) {
            assertTrue(l, l.startsWith("flow- ") && l.contains(" p2000 ") && l.contains(VIP + "/32")
                    && !l.startsWith("flow- of:tor1"));
        }
        assertEquals(Set.of("group- of:tor2 hlb:to:tor1", "group- of:spine1 hlb:to:tor1", "group- of:spine2 hlb:to:tor1"),
                Set.copyOf(onos.log.subList(3, 6)));
        assertEquals(1, onos.flows.on("tor1").stream().filter(e -> e.priority() == 2000).count());
    }

    @Test
    public void routesAndGroupsTowardASwitchOnosNoLongerKnowsAreWithdrawnByItsId() {
        fastFailover = true;
        converge(placed("tor1", true));
        // tor1 is deleted from ONOS: it leaves the fabric view
        List<FabricView.SwitchSpec> left = new ArrayList<>();
        view.switches().values().stream().filter(x -> !x.sw.id.equals("tor1")).forEach(left::add);
        view = new FabricView(left, List.of(), List.of(), List.copyOf(view.smuxes().values()));
        onos.devices.up.remove(NetTestTools.did("tor1"));
        Map<String, SwitchDelta> w = new LinkedHashMap<>();
        for (String d : List.of("tor2", "spine1", "spine2")) {
            w.put(d, SwitchDelta.withdraw("tor1", List.of(VIP)));
        }
        southbound.apply(w);
        for (String d : List.of("tor2", "spine1", "spine2")) {
            assertTrue(d, onos.flows.on(d).stream().noneMatch(f -> f.priority() == 2000));
            for (String k : List.of("hlb:to:tor1", "hlb:alive:tor1", "hlb:ff:tor1|" + AGG)) {
                assertNull(d + " " + k, groupOn(d, k));
            }
            assertNotNull(d + ": the SMux aggregate stays", groupOn(d, "hlb:agg:" + AGG));
        }
        assertTrue(read("tor1").failure, !read("tor1").ok());
    }

    @Test
    public void theAggregateChainsToOneGroupPerSmuxOnEveryDevice() {
        Map<String, SwitchIntent> want = placed(null, true);
        converge(want);
        // On the SMux's ToR: its MAC and port; elsewhere the group toward that ToR.
        FlowEntry atTor = onos.flows.on("tor2").get(0);
        assertEquals(1000, atTor.priority());
        assertEquals(DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4)
                .matchIPDst(IpPrefix.valueOf(AGG)).build(), atTor.selector());
        Group smuxAtTor = groupOn("tor2", "hlb:smux:smux-1");
        assertEquals(List.of(DefaultGroupBucket.createIndirectGroupBucket(DefaultTrafficTreatment.builder()
                .setEthDst(MacAddress.valueOf("00:00:00:00:00:09")).setOutput(PortNumber.portNumber(9)).build())),
                smuxAtTor.buckets().buckets());
        assertEquals(List.of(DefaultGroupBucket.createSelectGroupBucket(DefaultTrafficTreatment.builder()
                .group(smuxAtTor.id()).build())), groupOn("tor2", "hlb:agg:" + AGG).buckets().buckets());
        Group remote = groupOn("tor1", "hlb:smux:smux-1");
        assertEquals(List.of(DefaultGroupBucket.createIndirectGroupBucket(DefaultTrafficTreatment.builder()
                .group(groupOn("tor1", "hlb:to:tor2").id()).build())), remote.buckets().buckets());
        assertHolds(want);

        converge(placed(null, false));
        assertEquals(0, onos.flows.entries.size());
        assertEquals(0, onos.groups.count());
    }

    @Test
    public void anSmuxTheDeviceCannotReachIsReportedAndNotWritten() {
        onos.hosts.hosts.clear(); // ONOS has not located the SMux host (yet)
        SwitchReading tor2 = read("tor2");
        assertTrue(tor2.toString(), tor2.unreachable.get("smux-1").contains("has not seen it"));
        SwitchDelta d = IntentDiff.diff(placed(null, true).get("tor2"), tor2);
        assertTrue(d.toString(), d.isEmpty());
        assertTrue(d.blocked.containsKey(ItemKey.aggregate(AGG)));
    }

    @Test
    public void aDeviceWithoutTheNiciraExtensionIsRefusedWithAReason() {
        onos.drivers.notOvs.add(NetTestTools.did("tor1"));
        try {
            converge(placed("tor1", false));
            fail("installed on a device without the extension");
        } catch (SouthboundException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("Nicira set-tunnel-destination"));
        }
        assertTrue(onos.flows.on("tor1").isEmpty());
    }

    @Test
    public void anUnfitDeviceOffersNoHashAgreement() {
        List<FabricView.SwitchSpec> sw = new ArrayList<>(view.switches().values());
        sw.set(0, new FabricView.SwitchSpec(NetTestTools.did("tor1"), sw.get(0).sw, GRE, "tor1 cannot be an HMux: ..."));
        view = new FabricView(sw, List.of(), List.of(), List.copyOf(view.smuxes().values()));
        assertFalse(southbound.capability("tor1").hash.agrees());
        assertEquals(HashContract.of(HashContract.Selection.OVS_DP_HASH, 0, HashContract.Encap.GRE),
                southbound.capability("tor2").hash);
        assertFalse("OpenFlow 1.3 buckets carry no ids", southbound.capability("tor2").keepsBucketIds);
        assertFalse("Open vSwitch cannot decode Cheetah cookies", southbound.capability("tor2").decodesCookies);
    }

    @Test
    public void aRefusedFlowBatchIsASouthboundError() {
        onos.flows.failNext = true;
        try {
            converge(placed("tor1", false));
            fail("a failed batch went unnoticed");
        } catch (SouthboundException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("flow rule batch failed"));
        }
        assertFalse(read("tor1").intent.entries.containsKey(TCP80));
    }

    // ---- groups confirmed only by the group provider's stats poll (ONOS 2.7 OpenFlow) ---------------

    @Test
    public void aChangeDoesNotWaitForTheGroupStatsPoll() {
        onos.groups.confirmOnPoll = true;   // nothing is ADDED until a poll that does not come here
        long t0 = System.nanoTime();
        converge(placed("tor1", false));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue("the southbound's timeout is 1000 ms; the change took " + ms + " ms", ms < 900);
        assertTrue(onos.groups.pending() > 0);
        assertHolds(placed("tor1", false)); // pending groups are held: read-back finds the entry
        onos.log.clear();
        assertTrue(converge(placed("tor1", false)).isEmpty());
        assertTrue("a pending group is not written again: " + onos.log,
                onos.log.stream().noneMatch(l -> l.startsWith("group")));
        onos.groups.poll();
        assertEquals(0, onos.groups.pending());
        assertHolds(placed("tor1", false));
    }

    @Test
    public void aGroupTheSwitchRefusesFailsTheChangeAndNoFlowPointsAtIt() {
        onos.groups.confirmOnPoll = true;
        onos.groups.refuse.add("hlb:vip:" + VIP + ":tcp/80");
        try {
            converge(placed("tor1", false));
            fail("a refused group went unnoticed");
        } catch (SouthboundException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("hlb:vip:" + VIP + ":tcp/80 refused")
                    && e.getMessage().contains("GROUP_ADD_FAILED"));
        }
        assertEquals(List.of(), onos.flows.on("tor1"));
        onos.groups.refuse.clear();
        converge(placed("tor1", false));   // the core's repair writes it again
        assertHolds(placed("tor1", false));
    }

    @Test
    public void aGroupStillPendingTwoPollsAfterItsWriteIsInconsistentAndWrittenAgain() {
        java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong(0);
        GroupConfirmation rule = new GroupConfirmation(FakeOnos.APP, () -> 10, clock::get);
        onos.groups.addListener(rule);
        southbound = southbound(rule);
        onos.groups.confirmOnPoll = true;
        converge(placed("tor1", false));
        clock.addAndGet(rule.overdueAfterMillis() - 1);
        assertTrue(read("tor1").intent.entries.containsKey(TCP80));
        clock.addAndGet(2);   // two polls came and went: the switch never answered
        SwitchReading r = read("tor1");
        assertTrue(r.toString(), r.inconsistent.get(ItemKey.entry(TCP80)).contains("OVERDUE"));
        onos.log.clear();
        converge(placed("tor1", false));
        assertTrue(onos.log.toString(), onos.log.contains("group* of:tor1 hlb:vip:" + VIP + ":tcp/80"));
        assertHolds(placed("tor1", false));
    }

    @SuppressWarnings("unused")
    private static DeviceId did(String n) {
        return NetTestTools.did(n);
    }

    // ---- fast failover (netcfg fastFailover) ----------------------------------------------------

    private Group groupOn(String device, String key) {
        return onos.groups.getGroup(NetTestTools.did(device), new DefaultGroupKey(key.getBytes()));
    }

    private static PortNumber outputOf(GroupBucket b) {
        return ((Instructions.OutputInstruction) b.treatment().allInstructions().get(0)).port();
    }

    @Test
    public void fastFailoverRoutesThroughAFailoverGroupWithTheSmuxesAsBackup() {
        fastFailover = true;
        converge(placed("tor1", true));
        for (String d : List.of("tor2", "spine1", "spine2")) {
            Group toward = groupOn(d, "hlb:to:tor1");
            Group alive = groupOn(d, "hlb:alive:tor1");
            Group smuxes = groupOn(d, "hlb:agg:" + AGG);
            Group ff = groupOn(d, "hlb:ff:tor1|" + AGG);
            assertEquals(d, GroupDescription.Type.SELECT, toward.type());
            assertEquals(d, GroupDescription.Type.FAILOVER, alive.type());
            assertEquals(d, GroupDescription.Type.FAILOVER, ff.type());
            FlowEntry route = onos.flows.on(d).stream().filter(f -> f.priority() == 2000).findFirst().orElseThrow();
            assertEquals(d + ": VIP/32 points at the failover group",
                    DefaultTrafficTreatment.builder().group(ff.id()).build(), route.treatment());
            List<GroupBucket> b = ff.buckets().buckets();
            assertEquals(2, b.size());
            assertEquals("bucket 0: toward the HMux", DefaultTrafficTreatment.builder().group(toward.id()).build(),
                    b.get(0).treatment());
            assertEquals("... while a first hop toward it is up", alive.id(), b.get(0).watchGroup());
            assertNull(b.get(0).watchPort());
            assertEquals("bucket 1: the SMuxes", DefaultTrafficTreatment.builder().group(smuxes.id()).build(),
                    b.get(1).treatment());
            assertEquals(smuxes.id(), b.get(1).watchGroup());
            assertNull(b.get(1).watchPort());
            // liveness: one bucket per ECMP first hop toward tor1, each watching the port it outputs to
            List<PortNumber> hops = new ArrayList<>();
            toward.buckets().buckets().forEach(x -> hops.add(outputOf(x)));
            List<PortNumber> watched = new ArrayList<>();
            for (GroupBucket x : alive.buckets().buckets()) {
                assertEquals(outputOf(x), x.watchPort());
                assertNull(x.watchGroup());
                watched.add(x.watchPort());
            }
            assertEquals(d, hops, watched);
        }
        assertEquals("tor2 reaches tor1 over both spines", 2, groupOn("tor2", "hlb:alive:tor1").buckets().buckets().size());
        assertNull("nothing of the kind on the HMux itself", groupOn("tor1", "hlb:ff:tor1|" + AGG));
        assertHolds(placed("tor1", true));

        // the failed-HMux withdrawal finds the routes through the failover groups
        Map<String, SwitchDelta> w = new LinkedHashMap<>();
        for (String d : List.of("tor2", "spine1", "spine2")) {
            w.put(d, SwitchDelta.withdraw("tor1", List.of(VIP)));
        }
        southbound.apply(w);
        for (String d : List.of("tor2", "spine1", "spine2")) {
            assertTrue(d, onos.flows.on(d).stream().noneMatch(f -> f.priority() == 2000));
        }
        // the VIP leaves: no failover, liveness or toward-tor1 group left anywhere (the aggregate's
        // groups stay, with the SMux and toward-tor2 groups they chain to reach the SMux)
        converge(placed("tor1", true));
        converge(placed(null, true));
        for (String d : DEVICES) {
            for (Group g : onos.groups.getGroups(NetTestTools.did(d), FakeOnos.APP)) {
                String k = new String(g.appCookie().key());
                assertTrue(d + " still holds " + k, k.startsWith("hlb:agg:") || k.equals("hlb:to:tor2")
                        || k.equals("hlb:smux:smux-1"));
            }
            assertNotNull(d, groupOn(d, "hlb:agg:" + AGG));
        }
    }

    @Test
    public void theFallbackFollowsTheAggregate() {
        fastFailover = true;
        converge(placed("tor1", false));   // the aggregate is not routed to SMuxes yet: no backup bucket
        assertEquals(1, groupOn("spine1", "hlb:ff:tor1|-").buckets().buckets().size());
        assertHolds(placed("tor1", false));

        converge(placed("tor1", true));
        List<GroupBucket> b = groupOn("spine1", "hlb:ff:tor1|" + AGG).buckets().buckets();
        assertEquals(2, b.size());
        assertEquals(groupOn("spine1", "hlb:agg:" + AGG).id(), b.get(1).watchGroup());
        assertNull("the route moved to the new failover group", groupOn("spine1", "hlb:ff:tor1|-"));
        assertHolds(placed("tor1", true));

        onos.log.clear();
        converge(placed("tor1", false));   // no live SMux: the route falls back to nothing before the group goes
        assertEquals(1, groupOn("spine1", "hlb:ff:tor1|-").buckets().buckets().size());
        assertNull(groupOn("spine1", "hlb:agg:" + AGG));
        int failoverGone = onos.log.indexOf("group- of:spine1 hlb:ff:tor1|" + AGG);
        int gone = onos.log.indexOf("group- of:spine1 hlb:agg:" + AGG);
        assertTrue(onos.log.toString(), failoverGone >= 0 && gone > failoverGone);
        assertHolds(placed("tor1", false));
    }

    @Test
    public void withoutFastFailoverTheRouteUsesTheTowardGroup() {
        converge(placed("tor1", true));
        FlowEntry route = onos.flows.on("spine1").stream().filter(f -> f.priority() == 2000).findFirst().orElseThrow();
        assertEquals(DefaultTrafficTreatment.builder().group(groupOn("spine1", "hlb:to:tor1").id()).build(),
                route.treatment());
        assertNull(groupOn("spine1", "hlb:ff:tor1|" + AGG));
        assertNull(groupOn("spine1", "hlb:alive:tor1"));
    }

    /** {@code ovs-ofctl} text of a group as the programmer wrote it (SELECT with a traceable hash). */
    private static String ofctl(Group g) {
        StringBuilder b = new StringBuilder("group_id=" + g.id().id() + ",type=");
        b.append(g.type() == GroupDescription.Type.FAILOVER ? "ff" : g.type() == GroupDescription.Type.INDIRECT ? "indirect"
                : "select,selection_method=hash,fields(ip_src,ip_dst,nw_proto,tcp_src,tcp_dst)");
        for (GroupBucket x : g.buckets().buckets()) {
            b.append(",bucket=");
            if (x.watchPort() != null) {
                b.append("watch_port:").append(x.watchPort().toLong()).append(',');
            }
            if (x.watchGroup() != null) {
                b.append("watch_group:").append(x.watchGroup().id()).append(',');
            }
            List<String> actions = new ArrayList<>();
            for (Instruction i : x.treatment().allInstructions()) {
                if (i instanceof Instructions.OutputInstruction) {
                    actions.add("output:" + ((Instructions.OutputInstruction) i).port().toLong());
                } else if (i instanceof Instructions.GroupInstruction) {
                    actions.add("group:" + ((Instructions.GroupInstruction) i).groupId().id());
                } else if (i instanceof org.onosproject.net.flow.instructions.L2ModificationInstruction.ModEtherInstruction) {
                    actions.add("set_field:" + ((org.onosproject.net.flow.instructions.L2ModificationInstruction
                            .ModEtherInstruction) i).mac() + "->eth_dst");
                } else {
                    throw new AssertionError("no ovs-ofctl text for " + i);
                }
            }
            b.append("actions=").append(String.join(",", actions));
        }
        return b.toString();
    }

    /**
     * The groups and the VIP route the programmer wrote on tor2 (first hops toward tor1: ports 1 and 2;
     * the SMux on port 9) run on a real Open vSwitch: every first hop down sends the VIP to the SMux,
     * one back sends it toward the HMux again (src/test/ovs/failover_groups_on_ovs.sh, ofproto/trace).
     */
    @Test
    public void fastFailoverGroupsFailOverOnOpenVswitch() throws Exception {
        org.junit.Assume.assumeTrue("ovs-vswitchd not installed",
                new java.io.File("/usr/sbin/ovs-vswitchd").canExecute());
        org.junit.Assume.assumeTrue("needs root (private OVS in its own network namespace)",
                "root".equals(System.getProperty("user.name")));
        fastFailover = true;
        converge(placed("tor1", true));
        DeviceId tor2 = NetTestTools.did("tor2");
        List<Group> all = new ArrayList<>();
        onos.groups.getGroups(tor2, FakeOnos.APP).forEach(all::add);
        // referenced groups first: the SMux's, the aggregate's and the toward groups, then liveness, then failover
        all.sort(java.util.Comparator.comparingInt(g -> new String(g.appCookie().key()).startsWith("hlb:smux:") ? 0
                : g.type() == GroupDescription.Type.SELECT ? 1
                : new String(g.appCookie().key()).startsWith("hlb:alive:") ? 2 : 3));
        List<String> lines = new ArrayList<>();
        all.forEach(g -> lines.add("group " + ofctl(g)));
        FlowEntry route = onos.flows.on("tor2").stream().filter(f -> f.priority() == 2000).findFirst().orElseThrow();
        Instructions.GroupInstruction to = (Instructions.GroupInstruction) route.treatment().allInstructions().get(0);
        lines.add("flow priority=2000,ip,nw_dst=" + VIP + ",actions=group:" + to.groupId().id());
        java.nio.file.Path commands = java.nio.file.Files.createTempFile("hlbreachff", ".txt");
        try {
            java.nio.file.Files.write(commands, lines);
            Process run = new ProcessBuilder("bash", "src/test/ovs/failover_groups_on_ovs.sh", commands.toString(),
                    "1 2", "9", VIP).redirectErrorStream(true).start();
            String out = new String(run.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertTrue("OVS check still running", run.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
            assertEquals(lines + "\n" + out, 0, run.exitValue());
            assertTrue(out, out.contains("ok   every first hop down: the SMuxes, from the switch itself: 9"));
        } finally {
            java.nio.file.Files.deleteIfExists(commands);
        }
    }
}
