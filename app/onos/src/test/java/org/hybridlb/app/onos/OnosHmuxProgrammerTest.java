package org.hybridlb.app.onos;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.ServiceEntry;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.app.onos.fabric.FabricView;
import org.hybridlb.app.onos.fabric.OnosHmuxProgrammer;
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

/** The HMux programmer against ONOS's flow rule and group services (adapters overridden). */
public class OnosHmuxProgrammerTest {
    static final String VIP = "10.100.0.1";
    static final String AGG = "10.100.0.0/16";
    static final PortNumber GRE = PortNumber.portNumber(100);

    private FakeOnos onos;
    private FabricView view;
    private OnosHmuxProgrammer programmer;
    private final Map<String, String> records = new HashMap<>();

    /** Leaf-spine: tor1, tor2 under spine1 and spine2 (two equal paths between the ToRs). */
    @Before
    public void setUp() {
        onos = new FakeOnos();
        for (String d : List.of("tor1", "tor2", "spine1", "spine2")) {
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
        programmer = new OnosHmuxProgrammer(FakeOnos.APP, onos.flows, onos.groups, onos.devices, onos.topology,
                onos.hosts, onos.drivers, () -> view, records, 1000, onos.confirmation(10));
    }

    private static FabricView.SwitchSpec spec(String name, SwitchRole role, Integer pod, PortNumber tunnel) {
        return new FabricView.SwitchSpec(NetTestTools.did(name), new Switch(name, role, pod, null), tunnel);
    }

    static VipEntry entry() {
        return new VipEntry(VIP, AGG, List.of(new ServiceEntry("tcp", 80, List.of(
                new Bucket("10.0.1.3", 2, null, 1),
                new Bucket("10.0.1.2", 1, null, 0),
                new Bucket("10.9.9.9", 1, "10.0.2.2", 2)))));
    }

    @Test
    public void installProgramsSelectGroupWithTunnelBucketsAndRoutesEverywhereElse() throws Exception {
        programmer.install("tor1", entry());

        // On the HMux: exactly one VIP flow, tcp/80 at 3000 + 100, pointing at the service group.
        List<FlowEntry> hmux = onos.flows.on("tor1");
        assertEquals(1, hmux.size());
        FlowEntry f = hmux.get(0);
        assertEquals(3100, f.priority());
        TrafficSelector expectedMatch = DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4)
                .matchIPDst(IpPrefix.valueOf(VIP + "/32")).matchIPProtocol(IPv4.PROTOCOL_TCP)
                .matchTcpDst(TpPort.tpPort(80)).build();
        assertEquals(expectedMatch, f.selector());
        assertEquals(FakeOnos.APP.id(), f.appId());
        Group g = onos.groups.getGroup(NetTestTools.did("tor1"),
                new DefaultGroupKey(("hlb:vip:" + VIP + ":tcp/80").getBytes()));
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
            Group toward = onos.groups.getGroup(NetTestTools.did(d), new DefaultGroupKey("hlb:to:tor1".getBytes()));
            assertEquals(DefaultTrafficTreatment.builder().group(toward.id()).build(), fl.get(0).treatment());
        }
        // tor2 reaches tor1 over both spines (ECMP), a spine over its one link.
        assertEquals(List.of(out(1), out(2)), onos.groups.getGroup(NetTestTools.did("tor2"),
                new DefaultGroupKey("hlb:to:tor1".getBytes())).buckets().buckets());
        assertEquals(List.of(out(1)), onos.groups.getGroup(NetTestTools.did("spine1"),
                new DefaultGroupKey("hlb:to:tor1".getBytes())).buckets().buckets());
        // The group is confirmed before the flow that points at it.
        assertTrue(onos.log.indexOf("group+ of:tor1 hlb:vip:" + VIP + ":tcp/80")
                < indexOf("flow+ of:tor1 p3100"));

        assertEquals(Map.of(VIP, entry().normalized()), programmer.installedOn("tor1"));
        assertEquals(Map.of(), programmer.installedOn("tor2"));
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
    public void aDrainingDipHasNoBucket() throws Exception {
        programmer.install("tor1", new VipEntry(VIP, AGG, List.of(new ServiceEntry("tcp", 80, List.of(
                new Bucket("10.0.1.2", 1, null, 0),
                new Bucket("10.0.1.3", 0, null, 1),
                new Bucket("10.0.2.2", 3, null, 2))))));
        Group g = onos.groups.getGroup(NetTestTools.did("tor1"),
                new DefaultGroupKey(("hlb:vip:" + VIP + ":tcp/80").getBytes()));
        List<GroupBucket> b = g.buckets().buckets();
        assertEquals(2, b.size());
        assertEquals(1, b.get(0).weight());
        assertEquals(3, b.get(1).weight());
        assertEquals(Ip4Address.valueOf("10.0.2.2"), ((Instructions.ExtensionInstructionWrapper) b.get(1).treatment()
                .allInstructions().get(0)).extensionInstruction().getPropertyValue("tunnelDst"));
    }

    @Test
    public void wholeVipServiceMatchesIpOnlyAtBasePriority() {
        programmer.install("tor1", new VipEntry(VIP, AGG, List.of(new ServiceEntry("any", 0,
                List.of(new Bucket("10.0.1.2", 1, null, 0))))));
        FlowEntry f = onos.flows.on("tor1").get(0);
        assertEquals(3000, f.priority());
        assertEquals(DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4)
                .matchIPDst(IpPrefix.valueOf(VIP + "/32")).build(), f.selector());
    }

    @Test
    public void readBackReportsAMissingFlowAndAStrayEntry() {
        programmer.install("tor1", entry());
        // Someone deletes the route on spine1: the entry no longer counts as installed.
        FlowEntry route = onos.flows.on("spine1").get(0);
        onos.flows.entries.remove(route.id());
        assertEquals(Map.of(), programmer.installedOn("tor1"));
        // Re-install repairs it (idempotent) and read-back agrees again.
        programmer.install("tor1", entry());
        assertEquals(Set.of(VIP), programmer.installedOn("tor1").keySet());
        // A record lost (restart without the map): the device's entry is reported so it gets removed.
        records.clear();
        assertEquals(new VipEntry(VIP, null, List.of()), programmer.installedOn("tor1").get(VIP));
        programmer.remove("tor1", VIP);
        assertEquals(0, onos.flows.entries.size());
        assertEquals(0, onos.groups.count());
    }

    @Test
    public void removeWithdrawsRoutesBeforeTheEntryAndLeavesNothing() {
        programmer.install("tor1", entry());
        onos.log.clear();
        programmer.remove("tor1", VIP);
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
        assertEquals(Map.of(), programmer.installedOn("tor1"));
    }

    @Test
    public void withdrawRoutesTouchesOnlyRoutesTowardTheFailedSwitch() {
        programmer.install("tor1", entry());
        programmer.install("tor2", new VipEntry("10.100.0.2", AGG, List.of(new ServiceEntry("tcp", 80,
                List.of(new Bucket("10.0.1.2", 1, null, 0))))));
        onos.log.clear();
        programmer.withdrawRoutes("tor1", List.of(VIP));
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
        OnosHmuxProgrammer p = withFastFailover();
        p.setSmuxGroup(AGG, List.of(view.smuxes().get("smux-1")));
        p.install("tor1", entry());
        // tor1 is deleted from ONOS: it leaves the fabric view, its records stay
        List<FabricView.SwitchSpec> left = new ArrayList<>();
        view.switches().values().stream().filter(x -> !x.sw.id.equals("tor1")).forEach(left::add);
        view = new FabricView(left, List.of(), List.of(), List.copyOf(view.smuxes().values()));
        onos.devices.up.remove(NetTestTools.did("tor1"));
        p.withdrawRoutes("tor1", List.of(VIP));
        for (String d : List.of("tor2", "spine1", "spine2")) {
            assertTrue(d, onos.flows.on(d).stream().noneMatch(f -> f.priority() == 2000));
            for (String k : List.of("hlb:to:tor1", "hlb:alive:tor1", "hlb:ff:tor1|" + AGG)) {
                assertNull(d + " " + k, groupOn(d, k));
            }
            assertNotNull(d + ": the SMux aggregate stays", groupOn(d, "hlb:agg:" + AGG));
        }
    }

    @Test
    public void smuxAggregateGroupOnEveryDevice() {
        programmer.setSmuxGroup(AGG, List.of(view.smuxes().get("smux-1")));
        // On the SMux's ToR: its MAC and port; elsewhere the group toward that ToR.
        FlowEntry atTor = onos.flows.on("tor2").get(0);
        assertEquals(1000, atTor.priority());
        assertEquals(DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4)
                .matchIPDst(IpPrefix.valueOf(AGG)).build(), atTor.selector());
        Group agg = onos.groups.getGroup(NetTestTools.did("tor2"), new DefaultGroupKey(("hlb:agg:" + AGG).getBytes()));
        assertEquals(List.of(DefaultGroupBucket.createSelectGroupBucket(DefaultTrafficTreatment.builder()
                .setEthDst(MacAddress.valueOf("00:00:00:00:00:09")).setOutput(PortNumber.portNumber(9)).build())),
                agg.buckets().buckets());
        Group remote = onos.groups.getGroup(NetTestTools.did("tor1"), new DefaultGroupKey(("hlb:agg:" + AGG).getBytes()));
        Group toward = onos.groups.getGroup(NetTestTools.did("tor1"), new DefaultGroupKey("hlb:to:tor2".getBytes()));
        assertEquals(List.of(DefaultGroupBucket.createSelectGroupBucket(DefaultTrafficTreatment.builder()
                .group(toward.id()).build())), remote.buckets().buckets());
        assertEquals(Map.of(AGG, Set.of("smux-1")), programmer.smuxGroups());

        programmer.setSmuxGroup(AGG, List.of());
        assertEquals(0, onos.flows.entries.size());
        assertEquals(0, onos.groups.count());
        assertEquals(Map.of(), programmer.smuxGroups());
    }

    @Test
    public void aDeviceWithoutTheNiciraExtensionIsRefusedWithAReason() {
        onos.drivers.notOvs.add(NetTestTools.did("tor1"));
        try {
            programmer.install("tor1", entry());
            fail("installed on a device without the extension");
        } catch (SouthboundException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("Nicira set-tunnel-destination"));
        }
        assertEquals(0, onos.flows.entries.size());
    }

    @Test
    public void aRefusedFlowBatchIsASouthboundError() {
        onos.flows.failNext = true;
        try {
            programmer.install("tor1", entry());
            fail("a failed batch went unnoticed");
        } catch (SouthboundException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("flow rule batch failed"));
        }
        assertEquals(Map.of(), programmer.installedOn("tor1"));
    }

    // ---- groups confirmed only by the group provider's stats poll (ONOS 2.7 OpenFlow) ---------------

    @Test
    public void anInstallDoesNotWaitForTheGroupStatsPoll() {
        onos.groups.confirmOnPoll = true;   // nothing is ADDED until a poll that does not come here
        long t0 = System.nanoTime();
        programmer.install("tor1", entry());
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue("the programmer's timeout is 1000 ms; the install took " + ms + " ms", ms < 900);
        assertTrue(onos.groups.pending() > 0);
        assertEquals("pending groups are held: read-back finds the entry",
                Set.of(VIP), programmer.installedOn("tor1").keySet());
        onos.log.clear();
        programmer.install("tor1", entry());
        assertTrue("a pending group is not written again: " + onos.log,
                onos.log.stream().noneMatch(l -> l.startsWith("group")));
        onos.groups.poll();
        assertEquals(0, onos.groups.pending());
        assertEquals(Set.of(VIP), programmer.installedOn("tor1").keySet());
    }

    @Test
    public void aGroupTheSwitchRefusesFailsTheInstallAndNoFlowPointsAtIt() {
        onos.groups.confirmOnPoll = true;
        onos.groups.refuse.add("hlb:vip:" + VIP + ":tcp/80");
        try {
            programmer.install("tor1", entry());
            fail("a refused group went unnoticed");
        } catch (SouthboundException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("hlb:vip:" + VIP + ":tcp/80 refused")
                    && e.getMessage().contains("GROUP_ADD_FAILED"));
        }
        assertEquals(List.of(), onos.flows.on("tor1"));
        onos.groups.refuse.clear();
        programmer.install("tor1", entry());   // the core's repair writes it again
        assertEquals(Set.of(VIP), programmer.installedOn("tor1").keySet());
    }

    @Test
    public void aGroupStillPendingTwoPollsAfterItsWriteIsMissingAndWrittenAgain() {
        java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong(0);
        org.hybridlb.app.onos.fabric.GroupConfirmation rule =
                new org.hybridlb.app.onos.fabric.GroupConfirmation(FakeOnos.APP, () -> 10, clock::get);
        onos.groups.addListener(rule);
        OnosHmuxProgrammer p = new OnosHmuxProgrammer(FakeOnos.APP, onos.flows, onos.groups, onos.devices,
                onos.topology, onos.hosts, onos.drivers, () -> view, records, 1000, rule);
        onos.groups.confirmOnPoll = true;
        p.install("tor1", entry());
        clock.addAndGet(rule.overdueAfterMillis() - 1);
        assertEquals(Set.of(VIP), p.installedOn("tor1").keySet());
        clock.addAndGet(2);   // two polls came and went: the switch never answered
        assertEquals(Map.of(), p.installedOn("tor1"));
        onos.log.clear();
        p.install("tor1", entry());
        assertTrue(onos.log.toString(), onos.log.contains("group* of:tor1 hlb:vip:" + VIP + ":tcp/80"));
        assertEquals(Set.of(VIP), p.installedOn("tor1").keySet());
    }

    @SuppressWarnings("unused")
    private static DeviceId did(String n) {
        return NetTestTools.did(n);
    }

    // ---- fast failover (netcfg fastFailover) ----------------------------------------------------

    private OnosHmuxProgrammer withFastFailover() {
        return new OnosHmuxProgrammer(FakeOnos.APP, onos.flows, onos.groups, onos.devices, onos.topology,
                onos.hosts, onos.drivers, () -> view, records, 1000, onos.confirmation(10), () -> true);
    }

    private Group groupOn(String device, String key) {
        return onos.groups.getGroup(NetTestTools.did(device), new DefaultGroupKey(key.getBytes()));
    }

    private static PortNumber outputOf(GroupBucket b) {
        return ((Instructions.OutputInstruction) b.treatment().allInstructions().get(0)).port();
    }

    @Test
    public void fastFailoverRoutesThroughAFailoverGroupWithTheSmuxesAsBackup() {
        OnosHmuxProgrammer p = withFastFailover();
        p.setSmuxGroup(AGG, List.of(view.smuxes().get("smux-1")));
        p.install("tor1", entry());
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
        assertTrue("read-back sees the entry as programmed", p.installedOn("tor1").containsKey(VIP));

        // the failed-HMux withdrawal finds the routes through the failover groups
        p.withdrawRoutes("tor1", List.of(VIP));
        for (String d : List.of("tor2", "spine1", "spine2")) {
            assertTrue(d, onos.flows.on(d).stream().noneMatch(f -> f.priority() == 2000));
        }
        // removed with the VIP: no failover, liveness or toward-tor1 group left anywhere (the aggregate's
        // groups stay, with the toward-tor2 groups they chain to reach the SMux)
        p.install("tor1", entry());
        p.remove("tor1", VIP);
        for (String d : List.of("tor1", "tor2", "spine1", "spine2")) {
            for (Group g : onos.groups.getGroups(NetTestTools.did(d), FakeOnos.APP)) {
                String k = new String(g.appCookie().key());
                assertTrue(d + " still holds " + k, k.startsWith("hlb:agg:") || k.equals("hlb:to:tor2"));
            }
            assertNotNull(d, groupOn(d, "hlb:agg:" + AGG));
        }
    }

    @Test
    public void theBackupBucketFollowsTheSmuxGroup() {
        OnosHmuxProgrammer p = withFastFailover();
        p.install("tor1", entry());   // the aggregate is not routed to SMuxes yet: no backup bucket
        assertEquals(1, groupOn("spine1", "hlb:ff:tor1|" + AGG).buckets().buckets().size());
        assertTrue(p.installedOn("tor1").containsKey(VIP));

        p.setSmuxGroup(AGG, List.of(view.smuxes().get("smux-1")));
        List<GroupBucket> b = groupOn("spine1", "hlb:ff:tor1|" + AGG).buckets().buckets();
        assertEquals(2, b.size());
        assertEquals(groupOn("spine1", "hlb:agg:" + AGG).id(), b.get(1).watchGroup());
        assertTrue(p.installedOn("tor1").containsKey(VIP));

        onos.log.clear();
        p.setSmuxGroup(AGG, List.of());   // no live SMux: the backup bucket goes before its group
        assertEquals(1, groupOn("spine1", "hlb:ff:tor1|" + AGG).buckets().buckets().size());
        assertNull(groupOn("spine1", "hlb:agg:" + AGG));
        int rewritten = onos.log.indexOf("group* of:spine1 hlb:ff:tor1|" + AGG);
        int gone = onos.log.indexOf("group- of:spine1 hlb:agg:" + AGG);
        assertTrue(onos.log.toString(), rewritten >= 0 && gone > rewritten);
        assertTrue(p.installedOn("tor1").containsKey(VIP));
    }

    @Test
    public void withoutFastFailoverTheRouteUsesTheTowardGroup() {
        programmer.setSmuxGroup(AGG, List.of(view.smuxes().get("smux-1")));
        programmer.install("tor1", entry());
        FlowEntry route = onos.flows.on("spine1").stream().filter(f -> f.priority() == 2000).findFirst().orElseThrow();
        assertEquals(DefaultTrafficTreatment.builder().group(groupOn("spine1", "hlb:to:tor1").id()).build(),
                route.treatment());
        assertNull(groupOn("spine1", "hlb:ff:tor1|" + AGG));
        assertNull(groupOn("spine1", "hlb:alive:tor1"));
    }

    /** {@code ovs-ofctl} text of a group as the programmer wrote it (SELECT with a traceable hash). */
    private static String ofctl(Group g) {
        StringBuilder b = new StringBuilder("group_id=" + g.id().id() + ",type=");
        b.append(g.type() == GroupDescription.Type.FAILOVER ? "ff"
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
        OnosHmuxProgrammer p = withFastFailover();
        p.setSmuxGroup(AGG, List.of(view.smuxes().get("smux-1")));
        p.install("tor1", entry());
        DeviceId tor2 = NetTestTools.did("tor2");
        List<Group> all = new ArrayList<>();
        onos.groups.getGroups(tor2, FakeOnos.APP).forEach(all::add);
        // referenced groups first: SELECT, then the liveness groups, then the failover groups
        all.sort(java.util.Comparator.comparingInt(g -> g.type() == GroupDescription.Type.SELECT ? 0
                : new String(g.appCookie().key()).startsWith("hlb:alive:") ? 1 : 2));
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
