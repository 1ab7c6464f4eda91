package org.hybridlb.app.onos;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
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
                onos.hosts, onos.drivers, () -> view, records, 1000);
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
        // Three routes toward tor1 gone, nothing on tor1, the other VIP's routes untouched.
        assertEquals(3, onos.log.size());
        for (String l : onos.log) {
            assertTrue(l, l.startsWith("flow- ") && l.contains(" p2000 ") && l.contains(VIP + "/32")
                    && !l.startsWith("flow- of:tor1"));
        }
        assertEquals(1, onos.flows.on("tor1").stream().filter(e -> e.priority() == 2000).count());
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

    @SuppressWarnings("unused")
    private static DeviceId did(String n) {
        return NetTestTools.did(n);
    }
}
