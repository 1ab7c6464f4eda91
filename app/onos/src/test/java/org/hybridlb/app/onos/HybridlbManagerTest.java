package org.hybridlb.app.onos;

import org.hybridlb.app.core.ApiException;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.view.AssignmentView;
import org.hybridlb.app.core.view.SwitchView;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.onlab.packet.Ip4Address;
import org.onosproject.net.NetTestTools;
import org.onosproject.net.config.NetworkConfigEvent;
import org.onosproject.net.config.NetworkConfigListener;
import org.onosproject.net.config.NetworkConfigRegistryAdapter;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.group.DefaultGroupKey;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBucket;
import org.onosproject.store.service.TestStorageService;

/**
 * The whole app in ONOS's test adapters: netcfg in, the core's controller deciding, FlowRules and
 * Groups out. Fabric: tor1 (pod 0) and tor2 (pod 1) under spine1/spine2; DIP hosts on both ToRs,
 * one SMux on tor2 announcing the VIP aggregate through the route service.
 */
public class HybridlbManagerTest {
    /** Builds and activates the app on the fake fabric with one VIP (for the northbound tests). */
    static HybridlbManagerTest started() {
        HybridlbManagerTest t = new HybridlbManagerTest();
        t.setUp();
        t.activate(configJson(true));
        return t;
    }

    static final String VIP = "10.100.0.1";
    static final String AGG = "10.100.0.0/16";
    static final ObjectMapper MAPPER = new ObjectMapper();
    static final List<String> DEVICES = List.of("tor1", "tor2", "spine1", "spine2");

    FakeOnos onos;
    Netcfg netcfg;
    FakeLeadership cluster;
    /** Host agent URL -> status code its /dip-health answers; absent: the agent does not answer. */
    final Map<String, Integer> agentCodes = new java.util.concurrent.ConcurrentHashMap<>();
    HybridlbManager manager;
    boolean active;

    static final class Netcfg extends NetworkConfigRegistryAdapter {
        HybridlbConfig config;
        final Listeners<NetworkConfigEvent, NetworkConfigListener> listeners = new Listeners<>();

        @Override
        @SuppressWarnings("unchecked")
        public <S, C extends org.onosproject.net.config.Config<S>> C getConfig(S subject, Class<C> c) {
            return (C) config;
        }

        @Override
        public void addListener(NetworkConfigListener l) {
            listeners.addListener(l);
        }

        @Override
        public void removeListener(NetworkConfigListener l) {
            listeners.removeListener(l);
        }

        void push(HybridlbConfig c) {
            HybridlbConfig before = config;
            config = c;
            NetworkConfigEvent e = new NetworkConfigEvent(NetworkConfigEvent.Type.CONFIG_UPDATED, FakeOnos.APP, c,
                    before, HybridlbConfig.class);
            listeners.post(e);
        }
    }

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
        onos.host("00:00:00:00:01:02", "10.0.1.2", "tor1", 5);
        onos.host("00:00:00:00:01:03", "10.0.1.3", "tor1", 6);
        onos.host("00:00:00:00:02:02", "10.0.2.2", "tor2", 5);
        onos.host("00:00:00:00:02:09", "10.0.2.9", "tor2", 9);
        onos.routes.announce(AGG, "10.0.2.9");
        netcfg = new Netcfg();
        cluster = new FakeLeadership();
        manager = newManager("onos-1", new TestStorageService());
    }

    /** An instance of the app on node {@code node} of the cluster, on the shared fake fabric. */
    HybridlbManager newManager(String node, TestStorageService storage) {
        HybridlbManager manager = new HybridlbManager();
        FakeLeadership.Node n = cluster.node(node);
        manager.leadershipService = n;
        manager.clusterService = n.cluster;
        manager.coreService = onos.core;
        manager.netcfg = netcfg;
        manager.deviceService = onos.devices;
        manager.linkService = onos.links;
        manager.hostService = onos.hosts;
        manager.topologyService = onos.topology;
        manager.flowRuleService = onos.flows;
        manager.groupService = onos.groups;
        manager.driverService = onos.drivers;
        manager.routeService = onos.routes;
        manager.storageService = storage;
        manager.smuxControl = onos.smuxes;
        manager.statsPeriodSeconds = 0;
        manager.healthPeriodMillis = 0;
        manager.agentProbe = uri -> java.util.concurrent.CompletableFuture.completedFuture(
                agentCodes.getOrDefault(uri.toString(), -1));
        // No interval timer: every reconcile in these tests comes from the event under test.
        manager.controllerConfig = org.hybridlb.app.core.ControllerConfig.defaults()
                .withInterval(java.time.Duration.ZERO);
        return manager;
    }

    /** ConsistentMaps shared by name, as the instances of a cluster (or a restarted one) see them. */
    static TestStorageService sharedStorage() {
        return new TestStorageService() {
            final java.util.Map<String, org.onosproject.store.service.ConsistentMap<?, ?>> maps = new java.util.HashMap<>();

            @Override
            @SuppressWarnings("unchecked")
            public <K, V> org.onosproject.store.service.ConsistentMapBuilder<K, V> consistentMapBuilder() {
                return new org.onosproject.store.service.TestConsistentMap.Builder<K, V>() {
                    @Override
                    public org.onosproject.store.service.ConsistentMap<K, V> build() {
                        return (org.onosproject.store.service.ConsistentMap<K, V>) maps.computeIfAbsent(name(),
                                n -> super.build());
                    }
                };
            }
        };
    }

    @After
    public void tearDown() {
        if (active) {
            manager.deactivate();
        }
    }

    // ---- config fixtures ------------------------------------------------------------------------

    static ObjectNode configJson(boolean withVip) {
        ObjectNode root = MAPPER.createObjectNode();
        ObjectNode sw = root.putObject("switches");
        sw.putObject("of:tor1").put("id", "tor1").put("role", "tor").put("pod", 0).put("tunnelPort", 100);
        sw.putObject("of:tor2").put("id", "tor2").put("role", "tor").put("pod", 1).put("tunnelPort", 100);
        sw.putObject("of:spine1").put("id", "spine1").put("role", "core");
        sw.putObject("of:spine2").put("id", "spine2").put("role", "core");
        root.putArray("smuxes").addObject().put("id", "smux-1").put("ip", "10.0.2.9").put("tor", "tor2")
                .put("capacityBps", 1e10).put("controlUrl", "http://10.254.0.21:8000");
        ArrayNode vips = root.putArray("vips");
        if (withVip) {
            vips.add(vip(VIP, "10.0.1.2", "10.0.1.3"));
        }
        return root;
    }

    static ObjectNode vip(String vip, String... dips) {
        ObjectNode v = MAPPER.createObjectNode().put("vip", vip).put("aggregate", AGG);
        ArrayNode d = v.putArray("ports").addObject().put("proto", "tcp").put("port", 80).putArray("dips");
        for (String ip : dips) {
            d.addObject().put("ip", ip);
        }
        return v;
    }

    static HybridlbConfig config(JsonNode json) {
        HybridlbConfig c = new HybridlbConfig();
        c.init(FakeOnos.APP, HybridlbConfig.KEY, json, MAPPER, null);
        return c;
    }

    void activate(JsonNode json) {
        netcfg.config = config(json);
        manager.activate();
        active = true;
        settle();
    }

    void settle() {
        settle(manager);
    }

    static void settle(HybridlbManager m) {
        m.awaitEvents(10_000);          // the events handed to the app's thread, then the controller
        if (m.controller() != null) {   // a standby instance has no loop
            m.controller().awaitIdle(10_000);
        }
    }

    /** Heavy traffic from tor2 to the VIP, so the solver wants it on an HMux. */
    void traffic() {
        manager.controller().trafficMeasured(new TrafficInterval(0, 0, 10,
                List.of(new VipTraffic(VIP, Map.of("tor2", 2e8), null))));
    }

    String placement() {
        return manager.api().assignment().installed.get(VIP);
    }

    /** Gives the VIP traffic, re-assigns and returns its HMux (tor1 or tor2). */
    String placedOnHmux() {
        traffic();
        manager.api().reassignNow();
        settle();
        String hmux = placement();
        assertTrue(hmux, hmux.equals("tor1") || hmux.equals("tor2"));
        return hmux;
    }

    /** Whether {@code sw}, read back through the southbound, holds an HMux entry of {@code vip}. */
    boolean holds(String sw, String vip) {
        return manager.programmer().read(List.of(sw)).get(sw).intent.entryVips().contains(vip);
    }

    Set<String> tunnelDsts(String device) throws Exception {
        Group g = onos.groups.getGroup(NetTestTools.did(device),
                new DefaultGroupKey(("hlb:vip:" + VIP + ":tcp/80").getBytes()));
        Set<String> out = new TreeSet<>();
        for (GroupBucket b : g.buckets().buckets()) {
            Instructions.ExtensionInstructionWrapper w =
                    (Instructions.ExtensionInstructionWrapper) b.treatment().allInstructions().get(0);
            out.add(((Ip4Address) w.extensionInstruction().getPropertyValue("tunnelDst")).toString());
        }
        return out;
    }

    List<Integer> priorities(String device) {
        List<Integer> out = new ArrayList<>();
        for (FlowEntry e : onos.flows.on(device)) {
            out.add(e.priority());
        }
        out.sort(null);
        return out;
    }

    // ---- tests ----------------------------------------------------------------------------------

    @Test
    public void assignmentProgramsTheHmuxRoutesAndAggregate() throws Exception {
        activate(configJson(true));
        // No traffic yet: the VIP lives on the SMux, the aggregate is routed to it everywhere.
        assertEquals("smux", placement());
        assertEquals(1, onos.smuxes.tables.get("smux-1").vips.size());
        for (String d : DEVICES) {
            assertEquals(d, List.of(1000), priorities(d));
        }
        String hmux = placedOnHmux();
        for (String d : DEVICES) {
            assertEquals(d, d.equals(hmux) ? List.of(1000, 3100) : List.of(1000, 2000), priorities(d));
        }
        assertEquals(Set.of("10.0.1.2", "10.0.1.3"), tunnelDsts(hmux));
        assertTrue(holds(hmux, VIP));
    }

    @Test
    public void aVipDpHashCannotTakeStaysOnTheSmuxesAndSaysWhy() throws Exception {
        ObjectNode json = configJson(false);
        ObjectNode v = vip(VIP, "10.0.1.2", "10.0.1.3");
        ((ObjectNode) v.at("/ports/0/dips").get(1)).put("weight", 64);   // ceil(65 / 1) = 65 dp_hash slots
        ((ArrayNode) json.get("vips")).add(v);
        activate(json);
        traffic();
        manager.api().reassignNow();
        settle();
        AssignmentView a = manager.api().assignment();
        assertEquals(Json.write(a), "smux", a.installed.get(VIP));
        assertTrue(Json.write(a), a.hashUnmatched.get(VIP).reason.contains("65 dp_hash slots"));
        assertTrue(a.hashUnmatched.get(VIP).switches.containsAll(List.of("tor1", "tor2")));
        assertNull(a.lastError);
        org.hybridlb.app.core.model.SmuxTable.Entry e = onos.smuxes.tables.get("smux-1").vips.stream()
                .filter(x -> x.vip.equals(VIP)).findFirst().orElseThrow();
        assertEquals("no HMux to agree with: a hash any pool takes", "crc32", e.selection);
        assertEquals("gre", e.encap);
        assertEquals("ovs-dphash", manager.api().switches().get(0).hash.selection);
    }

    @Test
    public void smuxPoolsHashLikeTheHmuxGroup() throws Exception {
        ObjectNode json = configJson(false);
        ObjectNode v = vip(VIP, "10.0.1.2", "10.0.1.3", "10.0.2.2");
        ArrayNode dips = (ArrayNode) v.at("/ports/0/dips");
        ((ObjectNode) dips.get(1)).put("weight", 3);
        ((ArrayNode) json.get("vips")).add(v);
        // the fabric's routing on the P4 ToRs: next hops for both next ids, the SMux's address via tor2
        P4HmuxSouthboundTest.fabricRouting(onos, "tor1", List.of(21, 22), 22);
        P4HmuxSouthboundTest.fabricRouting(onos, "tor2", List.of(21, 22), 22);
        activate(json);
        String hmux = placedOnHmux();
        // OVS deals its dp_hash slots to the buckets in order, by weight: the SMux pool must list the
        // same buckets in the same order, and select with ovs-dphash. Weight 3 is three WCMP units.
        Group g = onos.groups.getGroup(NetTestTools.did(hmux),
                new DefaultGroupKey(("hlb:vip:" + VIP + ":tcp/80").getBytes()));
        List<String> group = new ArrayList<>();
        for (GroupBucket b : g.buckets().buckets()) {
            Instructions.ExtensionInstructionWrapper w =
                    (Instructions.ExtensionInstructionWrapper) b.treatment().allInstructions().get(0);
            group.add(w.extensionInstruction().getPropertyValue("tunnelDst") + "/" + b.weight());
        }
        org.hybridlb.app.core.model.SmuxTable.Entry e = onos.smuxes.tables.get("smux-1").vips.stream()
                .filter(x -> x.vip.equals(VIP)).findFirst().orElseThrow();
        assertEquals("ovs-dphash", e.selection);
        List<String> pool = new ArrayList<>();
        for (org.hybridlb.app.core.model.Bucket b : e.ports.get(0).dips) {
            pool.add(b.ip + "/" + b.weight);
        }
        assertEquals(List.of("10.0.1.2/1", "10.0.1.3/1", "10.0.1.3/1", "10.0.1.3/1", "10.0.2.2/1"), group);
        assertEquals(group, pool);
    }

    /**
     * Both ToRs bound to the hybridlb P4 pipeconf (ONOS's pipeconf service says so), the spines
     * Open vSwitch: the VIP's HMux holds P4 table entries and a dip_selector group of weight units,
     * the other ToR a routing_v4 /32 towards it, the spines OpenFlow routes; the SMuxes hash as the
     * P4 HMux does (crc32, IP-in-IP).
     */
    @Test
    public void onP4TorsTheVipIsRenderedInP4TermsAndTheSmuxesFollowTheP4Hash() throws Exception {
        org.onosproject.net.pi.model.PiPipeconfId hmuxPipeconf =
                org.hybridlb.app.onos.p4.HlbPipeconfs.id(org.hybridlb.app.core.p4.HlbP4Info.PROFILE_HLB_HMUX);
        manager.pipeconfService = new org.hybridlb.app.onos.p4.HlbPipeconfTest.Pipeconfs() {
            @Override
            public java.util.Optional<org.onosproject.net.pi.model.PiPipeconfId> ofDevice(org.onosproject.net.DeviceId d) {
                return d.toString().contains("tor") ? java.util.Optional.of(hmuxPipeconf) : java.util.Optional.empty();
            }
        };
        // a P4 device's driver has no Nicira extension: it is an HMux by its pipeline
        onos.drivers.notOvs.add(NetTestTools.did("tor1"));
        onos.drivers.notOvs.add(NetTestTools.did("tor2"));
        ObjectNode json = configJson(false);
        ((ObjectNode) json.get("switches").get("of:tor1")).put("nextId", 21);
        ((ObjectNode) json.get("switches").get("of:tor2")).put("nextId", 22);
        ObjectNode v = vip(VIP, "10.0.1.2", "10.0.1.3", "10.0.2.2");
        ((ObjectNode) ((ArrayNode) v.at("/ports/0/dips")).get(1)).put("weight", 3);
        ((ArrayNode) json.get("vips")).add(v);
        // the fabric's routing on the P4 ToRs: next hops for both next ids, the SMux's address via tor2
        P4HmuxSouthboundTest.fabricRouting(onos, "tor1", List.of(21, 22), 22);
        P4HmuxSouthboundTest.fabricRouting(onos, "tor2", List.of(21, 22), 22);
        activate(json);
        String hmux = placedOnHmux();
        String other = hmux.equals("tor1") ? "tor2" : "tor1";
        org.onosproject.net.pi.model.PiTableId service =
                org.onosproject.net.pi.model.PiTableId.of(org.hybridlb.app.core.p4.HlbP4Info.HMUX_VIP_SERVICE);
        org.onosproject.net.pi.model.PiTableId routes =
                org.onosproject.net.pi.model.PiTableId.of(org.hybridlb.app.core.p4.HlbP4Info.ROUTING_ROUTING_V4);
        assertEquals(1, onos.flows.on(hmux).stream().filter(e -> e.table().equals(service)).count());
        Group g = java.util.stream.StreamSupport.stream(onos.groups.getGroups(NetTestTools.did(hmux), FakeOnos.APP)
                .spliterator(), false).filter(x -> ((org.onosproject.net.pi.runtime.PiGroupKey) x.appCookie())
                .actionProfileId().id().equals(org.hybridlb.app.core.p4.HlbP4Info.HMUX_DIP_SELECTOR))
                .findFirst().orElseThrow();
        assertEquals(5, g.buckets().buckets().size());
        List<FlowEntry> otherRoutes = onos.flows.on(other).stream().filter(e -> e.table().equals(routes)
                && e.appId() == FakeOnos.APP.id() && e.priority() == org.hybridlb.app.core.hmux.HmuxLayout.PRIORITY_ROUTE)
                .collect(java.util.stream.Collectors.toList());
        assertEquals(1, otherRoutes.size());
        assertTrue(otherRoutes.get(0).treatment().toString(), otherRoutes.get(0).treatment().toString()
                .contains(hmux.equals("tor1") ? "0x15" : "0x16"));
        // the spines are OpenFlow: a route at the layout's priority towards the HMux's group
        assertTrue(onos.flows.on("spine1").stream().anyMatch(e -> e.priority() == org.hybridlb.app.core.hmux.HmuxLayout.PRIORITY_ROUTE
                && !(e.table() instanceof org.onosproject.net.pi.model.PiTableId)));
        org.hybridlb.app.core.model.SmuxTable.Entry e = onos.smuxes.tables.get("smux-1").vips.stream()
                .filter(x -> x.vip.equals(VIP)).findFirst().orElseThrow();
        assertEquals("crc32", e.selection);
        assertEquals("ipip", e.encap);
        assertTrue(holds(hmux, VIP));
    }

    @Test
    public void dipAddMigratesInThePlannedOrder() throws Exception {
        activate(configJson(true));
        traffic();
        manager.api().reassignNow();
        settle();
        String hmux = placement();
        onos.log.clear();
        manager.api().addDip(VIP, "{\"ip\": \"10.0.2.2\"}");
        settle();
        // Duet 3.5.2: off the HMux (routes, then the entry), DIP added on the SMux, back on the HMux.
        int withdrawn = index("flow- of:" + hmux + " p3100");
        int lastRouteGone = lastIndex("flow- ", " p2000 ");
        int smux = index("smux smux-1");
        // tor1 and tor2 tie for the first placement; with the new DIP next to the sources on tor2,
        // tor2 alone is best: that is where the VIP comes back
        int back = index("flow+ of:tor2 p3100");
        assertTrue(onos.log.toString(), lastRouteGone >= 0 && lastRouteGone < withdrawn);
        assertTrue(onos.log.toString(), withdrawn < smux && smux < back);
        assertEquals("tor2", placement());
        assertEquals(Set.of("10.0.1.2", "10.0.1.3", "10.0.2.2"), tunnelDsts("tor2"));
        JsonNode last = null;
        for (JsonNode m : Json.MAPPER.valueToTree(manager.api().migrations()).path("recent")) {
            if (m.path("trigger").asText().contains("10.0.2.2")) {
                last = m;
            }
        }
        assertNotNull(Json.write(manager.api().migrations()), last);
        assertEquals("done", last.path("state").asText());
        List<String> phases = new ArrayList<>();
        for (JsonNode w : last.path("plan").path("waves")) {
            phases.add(w.path("phase").asText());
        }
        // The grown pool waits on the SMuxes (core: poolGrowthHoldMax) until no pinned connection would
        // move; here none would, so the next migration announces it on the HMux again (checked above).
        assertEquals(List.of("withdraw", "config"), phases);
    }

    @Test
    public void aGrownPoolWaitsOnTheSmuxWhilePinnedConnectionsWouldMove() throws Exception {
        activate(configJson(true));
        placedOnHmux();
        // The SMux reports pinned connections that OVS's re-dealt dp_hash slots would move.
        onos.smuxes.diverging.put(VIP, 3L);
        manager.api().addDip(VIP, "{\"ip\": \"10.0.2.2\"}");
        settle();
        assertEquals("smux", placement());
        onos.smuxes.diverging.put(VIP, 0L);
        traffic();
        manager.api().reassignNow();
        settle();
        // back on an HMux: tor2, the one best switch once the new DIP sits next to the sources
        assertEquals("tor2", placement());
        assertEquals(Set.of("10.0.1.2", "10.0.1.3", "10.0.2.2"), tunnelDsts("tor2"));
    }

    @Test
    public void hostAgentHealthTakesAFailedDipOutOfThePools() throws Exception {
        ObjectNode json = configJson(true);
        ArrayNode hosts = json.putArray("hosts");
        hosts.addObject().put("id", "h12").put("ip", "10.0.1.2").put("tor", "tor1")
                .put("agentUrl", "http://10.254.1.2:9200");
        hosts.addObject().put("id", "h13").put("ip", "10.0.1.3").put("tor", "tor1")
                .put("agentUrl", "http://10.254.1.3:9200/");
        String a12 = "http://10.254.1.2:9200/dip-health";
        String a13 = "http://10.254.1.3:9200/dip-health";
        agentCodes.put(a12, 200);
        agentCodes.put(a13, 200);
        activate(json);
        String hmux = placedOnHmux();
        assertEquals(Set.of("10.0.1.2", "10.0.1.3"), tunnelDsts(hmux));

        agentCodes.put(a13, 503);   // the service on 10.0.1.3 fails its probe: out at once
        manager.healthSource().poll();
        settle();
        assertEquals(Set.of("10.0.1.3"), manager.healthSource().unhealthyDips());
        assertEquals(Set.of("10.0.1.2"), smuxDips());

        agentCodes.put(a13, 200);   // back
        manager.healthSource().poll();
        settle();
        assertEquals(Set.of("10.0.1.2", "10.0.1.3"), smuxDips());

        agentCodes.remove(a12);     // an agent that stops answering counts after two polls
        manager.healthSource().poll();
        settle();
        assertEquals(Set.of(), manager.healthSource().unhealthyDips());
        manager.healthSource().poll();
        settle();
        assertEquals(Set.of("10.0.1.2"), manager.healthSource().unhealthyDips());
        assertEquals(Set.of("10.0.1.3"), smuxDips());

        ObjectNode bad = configJson(true);
        bad.putArray("hosts").addObject().put("id", "h12").put("ip", "10.0.1.2").put("tor", "tor1")
                .put("agentUrl", "ftp://10.254.1.2");
        netcfg.push(config(bad));
        settle();
        assertTrue(manager.lastConfigError(), manager.lastConfigError().contains("/hosts/0/agentUrl"));
    }

    /** The DIPs of the VIP's tcp/80 pool in the SMux table. */
    Set<String> smuxDips() {
        return smuxDips(VIP);
    }

    @Test
    public void deviceDownWithdrawsItsRoutesFirst() {
        activate(configJson(true));
        traffic();
        manager.api().reassignNow();
        settle();
        String hmux = placement();
        onos.log.clear();
        onos.setAvailable(hmux, false);
        settle();
        // The very first writes remove VIP/32 toward the failed HMux on the three other devices.
        for (int i = 0; i < 3; i++) {
            String l = onos.log.get(i);
            assertTrue(onos.log.toString(), l.startsWith("flow- ") && l.contains(" p2000 ") && l.contains(VIP));
        }
        assertFalse(onos.log.stream().anyMatch(l -> l.startsWith("flow") && l.contains("of:" + hmux + " ")));
        assertTrue(Json.write(manager.api().assignment()).contains("\"downSwitches\":[\"" + hmux + "\"]"));
    }

    /**
     * ONOS 2.7's OpenFlow group provider marks groups ADDED only from its group-stats poll, here
     * every 6 s: longer than the 5 s the app once waited for ADDED before rolling the wave back.
     */
    @Test
    public void wavesCompleteWithoutRollbackWhileGroupsWaitForTheStatsPoll() throws Exception {
        onos.groups.startPolling(6_000);
        try {
            activate(configJson(true));
            String hmux = placedOnHmux();
            String other = hmux.equals("tor1") ? "tor2" : "tor1";
            manager.api().setDrained(hmux, true);   // the VIP moves to the other ToR through the SMuxes
            waitFor(() -> other.equals(placement()), 30_000);
            settle();
            assertEquals(0, manager.api().stats().controller.rollbacks);
            JsonNode recent = Json.MAPPER.valueToTree(manager.api().migrations()).path("recent");
            assertTrue(recent.toString(), recent.size() >= 2);
            for (JsonNode m : recent) {
                assertEquals(m.toString(), "done", m.path("state").asText());
            }
            assertNull(manager.api().assignment().lastError);
            // the poll confirms every group later; nothing is rewritten because of it
            waitFor(() -> onos.groups.pending() == 0, 15_000);
            assertTrue(holds(other, VIP));
        } finally {
            onos.groups.stopPolling();
        }
    }

    static void waitFor(java.util.function.BooleanSupplier condition, long millis) throws InterruptedException {
        long end = System.currentTimeMillis() + millis;
        while (!condition.getAsBoolean()) {
            assertTrue("condition not met within " + millis + " ms", System.currentTimeMillis() < end);
            Thread.sleep(20);
        }
    }

    /**
     * ONOS 2.7 gives Open vSwitch 3.x its "default" driver, without the Nicira set-tunnel-destination
     * extension every HMux bucket needs: such a switch gets no VIP (nothing to roll back), and the
     * app says which device and what to set, in the service (Karaf) and the REST status.
     */
    @Test
    public void aSwitchWhoseDriverLacksTheNiciraExtensionGetsNoVipAndTheFixIsShown() {
        onos.drivers.notOvs.add(NetTestTools.did("tor1"));
        activate(configJson(true));
        manager.api().setDrained("tor2", true);   // tor1 would be the only HMux for the VIP
        traffic();
        manager.api().reassignNow();
        settle();
        assertEquals("smux", placement());
        assertEquals(0, manager.api().stats().controller.rollbacks);
        assertNull(manager.api().assignment().lastError);
        String why = manager.unfitForHmux().get("tor1");
        assertNotNull(manager.unfitForHmux().toString(), why);
        assertTrue(why, why.startsWith("of:tor1 cannot be an HMux: its ONOS driver \"default\" has no Nicira "
                + "set-tunnel-destination extension"));
        assertTrue(why, why.endsWith("{\"devices\": {\"of:tor1\": {\"basic\": {\"driver\": \"ovs\"}}}}"));
        assertEquals(Set.of("tor1"), manager.unfitForHmux().keySet());
        SwitchView tor1 = manager.api().switches().stream().filter(x -> "tor1".equals(x.id)).findFirst().orElseThrow();
        assertEquals(why, tor1.hmuxUnfit);
        assertEquals(Map.of("tor1", why), manager.api().assignment().hmuxUnfit);

        // the operator sets the "ovs" driver in netcfg: ONOS re-binds it, and the switch can serve
        onos.driverChanged("tor1", true);
        settle();
        manager.api().reassignNow();
        settle();
        assertEquals("tor1", placement());
        assertEquals(Map.of(), manager.api().assignment().hmuxUnfit);
    }

    @Test
    public void deactivateRemovesEverythingTheAppInstalled() {
        activate(configJson(true));
        traffic();
        manager.api().reassignNow();
        settle();
        assertTrue(onos.flows.entries.size() >= 8);
        assertTrue(onos.groups.count() > 0);
        manager.deactivate();
        active = false;
        assertEquals(0, onos.flows.entries.size());
        assertEquals(0, onos.groups.count());
        assertTrue(onos.devices.listeners.isEmpty());
        assertTrue(onos.links.listeners.isEmpty());
        assertTrue(onos.routes.listeners.isEmpty());
        assertTrue(onos.hosts.listeners.isEmpty());
        assertTrue(netcfg.listeners.isEmpty());
    }

    @Test
    public void invalidNetcfgIsRejectedWithAReasonAndNothingIsProgrammed() {
        activate(configJson(false));
        int flows = onos.flows.entries.size();
        onos.log.clear();
        Map<String, ObjectNode> cases = new java.util.LinkedHashMap<>();
        ObjectNode badIp = configJson(false);
        ((ArrayNode) badIp.get("vips")).add(vip(VIP, "10.0.1.300"));
        cases.put("/vips/0/ports/0/dips/0/ip: value \"10.0.1.300\" is not an IPv4 address", badIp);
        ObjectNode dup = configJson(false);
        ((ArrayNode) dup.get("vips")).add(vip(VIP, "10.0.1.2")).add(vip(VIP, "10.0.1.3"));
        cases.put("/vips/1/vip: duplicate VIP " + VIP, dup);
        ObjectNode big = configJson(false);
        String[] many = new String[HybridlbConfig.MAX_DIPS_PER_SERVICE + 1];
        for (int i = 0; i < many.length; i++) {
            many[i] = "10.1." + (i / 250) + "." + (i % 250 + 1);
        }
        ((ArrayNode) big.get("vips")).add(vip(VIP, many));
        cases.put("/vips/0/ports/0/dips: 4097 DIPs, over the table limit of 4096 per service", big);
        ObjectNode unknown = configJson(true);
        ((ObjectNode) unknown.get("switches")).putObject("of:tor9").put("id", "tor9").put("role", "tor")
                .put("pod", 2).put("tunnelPort", 100);
        cases.put("/switches/of:tor9: unknown device", unknown);
        ObjectNode badTls = configJson(false);
        badTls.putObject("mgmtTls").put("keystore", "/nonexistent/onos.p12").put("passwordFile", "/nonexistent/onos.pass")
                .put("ca", "/nonexistent/ca.pem");
        cases.put("field /mgmtTls: /nonexistent/onos.pass: cannot read the keystore password", badTls);
        ObjectNode tlsTypo = configJson(false);
        tlsTypo.putObject("mgmtTls").put("cert", "x");
        cases.put("field /mgmtTls/cert: unknown field", tlsTypo);
        ObjectNode badNext = configJson(false);
        ((ObjectNode) badNext.get("switches").get("of:tor1")).put("nextId", 70000);
        cases.put("/switches/of:tor1/nextId: must be 1..65535", badNext);
        ObjectNode aggregateNext = configJson(false);
        ((ObjectNode) aggregateNext.get("switches").get("of:tor1")).put("nextId", 0x7001);
        cases.put("/switches/of:tor1/nextId: 28673 lies in the aggregates' next ids 0x7000..0x73ff", aggregateNext);
        ObjectNode notAHost = configJson(false);
        ((ArrayNode) notAHost.get("vips")).add(vip(VIP, "10.0.7.7"));
        cases.put("10.0.7.7", notAHost);
        for (Map.Entry<String, ObjectNode> c : cases.entrySet()) {
            netcfg.push(config(c.getValue()));
            settle();
            String error = manager.lastConfigError();
            assertNotNull(c.getKey(), error);
            assertTrue(error + " / expected " + c.getKey(), error.contains(c.getKey()));
            assertTrue(manager.api().vips().isEmpty());
            assertEquals(flows, onos.flows.entries.size());
            assertTrue(onos.log.toString(), onos.log.isEmpty());
        }
        // The same config, fixed, is applied and clears the error.
        netcfg.push(config(configJson(true)));
        settle();
        assertNull(manager.lastConfigError());
        assertEquals(1, manager.api().vips().size());
    }

    @Test
    public void stateSurvivesARestartInTheConsistentMap() {
        manager.storageService = sharedStorage();
        ObjectNode noVips = configJson(false);
        noVips.remove("vips");
        activate(noVips);
        // A VIP created through the API lives only in the controller's state (not in netcfg).
        manager.api().createVip(vip(VIP, "10.0.1.2", "10.0.1.3").toString());
        settle();
        long migrations = Json.MAPPER.valueToTree(manager.api().migrations()).path("recent").size();
        assertTrue(migrations > 0);
        int flows = onos.flows.entries.size();
        manager.deactivateKeepingRules();
        onos.log.clear();
        manager.activate();
        settle();
        assertEquals(1, manager.api().vips().size());
        assertEquals(VIP, manager.api().vips().get(0).vip);
        assertEquals("smux", placement());
        // The devices already hold the state: the restart writes nothing to them.
        assertEquals(flows, onos.flows.entries.size());
        assertFalse(onos.log.toString(), onos.log.stream().anyMatch(l -> l.startsWith("flow") || l.startsWith("group")));
    }

    @Test
    public void onlyTheLeaderProgramsAndANewLeaderTakesOver() {
        cluster.elect(HybridlbManager.LEADERSHIP_TOPIC, "onos-2");   // another instance leads
        activate(configJson(true));
        assertNull(manager.controller());
        assertEquals("onos-2", manager.leader().id());
        assertTrue(onos.log.toString(), onos.log.isEmpty());
        assertTrue(onos.smuxes.tables.isEmpty());
        ApiException e = apiError(() -> manager.api().vips());
        assertEquals(503, e.status);
        assertTrue(e.reason, e.reason.contains("onos-2"));
        assertTrue("a standby listens to no device", onos.devices.listeners.isEmpty());

        cluster.elect(HybridlbManager.LEADERSHIP_TOPIC, "onos-1");   // this one now leads: it programs
        settle();
        assertEquals(1, manager.api().vips().size());
        assertEquals(1, onos.smuxes.tables.get("smux-1").vips.size());
        for (String d : DEVICES) {
            assertEquals(d, List.of(1000), priorities(d));
        }

        cluster.elect(HybridlbManager.LEADERSHIP_TOPIC, "onos-2");   // and stops when it no longer does
        settle();
        assertNull(manager.controller());
        onos.log.clear();
        onos.setAvailable("tor1", false);
        netcfg.push(config(configJson(false)));
        settle();
        assertTrue(onos.log.toString(), onos.log.isEmpty());
        assertEquals(503, apiError(() -> manager.api().assignment()).status);
        assertTrue(onos.devices.listeners.isEmpty());
    }

    @Test
    public void theNextInstanceTakesOverTheFabricFromTheSharedState() {
        TestStorageService storage = sharedStorage();
        manager = newManager("onos-1", storage);
        activate(configJson(true));
        String hmux = placedOnHmux();
        int flows = onos.flows.entries.size();

        HybridlbManager second = newManager("onos-2", storage);
        onos.log.clear();
        second.activate();
        assertNull("a candidate, not the leader", second.controller());
        assertTrue(onos.log.toString(), onos.log.isEmpty());

        manager.deactivateKeepingRules();   // the leader's instance goes away: onos-2 leads
        active = false;
        second.awaitEvents(10_000);
        assertEquals("onos-2", second.leader().id());
        settle(second);
        try {
            assertEquals(1, second.api().vips().size());
            Map<String, String> installed = second.api().assignment().installed;
            assertEquals(hmux, installed.get(VIP));
            // It resumes from the ConsistentMap: the devices already hold that state, nothing is rewritten.
            assertEquals(flows, onos.flows.entries.size());
            assertFalse(onos.log.toString(),
                    onos.log.stream().anyMatch(l -> l.startsWith("flow") || l.startsWith("group")));
            // and it runs the fabric from now on: a device failure is handled by onos-2
            onos.setAvailable(hmux, false);
            settle(second);
            assertTrue(onos.log.toString(), onos.log.stream().anyMatch(l -> l.startsWith("flow- ")));
        } finally {
            second.deactivate();
        }
        assertEquals(0, cluster.listenerCount());
    }

    @Test
    public void smuxCountersMeasureTheVipsTheSmuxesCarry() {
        activate(configJson(true));
        assertEquals("smux", placement());
        Map<String, Long> c = new java.util.HashMap<>(Map.of(VIP + " tcp 80", 1_000L, "10.100.0.9 udp 0", 5L));
        onos.smuxes.vipBytes.put("smux-1", c);
        assertNull("the first sample only reads the counters", manager.statsSource().sample(1_000_000));
        c.put(VIP + " tcp 80", 1_000L + 2_000_000_000L);   // 2 GB in 10 s
        org.hybridlb.solver.model.TrafficInterval t = manager.statsSource().sample(1_010_000);
        assertEquals(10, t.durationSeconds);
        assertEquals(1, t.vips.size());
        assertEquals(VIP, t.vips.get(0).vip);
        assertEquals(Map.of(org.hybridlb.solver.model.VipTraffic.INTERNET, 2e8), t.vips.get(0).sources);
        // an SMux that stops answering counts nothing; a counter that restarts counts from there
        onos.smuxes.vipBytes.clear();
        assertTrue(manager.statsSource().sample(1_020_000).vips.isEmpty());
    }

    static ApiException apiError(Runnable call) {
        try {
            call.run();
        } catch (ApiException e) {
            return e;
        }
        throw new AssertionError("no ApiException");
    }

    int index(String prefix) {
        for (int i = 0; i < onos.log.size(); i++) {
            if (onos.log.get(i).startsWith(prefix)) {
                return i;
            }
        }
        return -1;
    }

    int lastIndex(String prefix, String contains) {
        int at = -1;
        for (int i = 0; i < onos.log.size(); i++) {
            if (onos.log.get(i).startsWith(prefix) && onos.log.get(i).contains(contains)) {
                at = i;
            }
        }
        return at;
    }

    Set<String> tunnelDsts(String device, String vip) throws Exception {
        Group g = onos.groups.getGroup(NetTestTools.did(device),
                new DefaultGroupKey(("hlb:vip:" + vip + ":tcp/80").getBytes()));
        Set<String> out = new TreeSet<>();
        for (GroupBucket b : g.buckets().buckets()) {
            Instructions.ExtensionInstructionWrapper w =
                    (Instructions.ExtensionInstructionWrapper) b.treatment().allInstructions().get(0);
            out.add(((Ip4Address) w.extensionInstruction().getPropertyValue("tunnelDst")).toString());
        }
        return out;
    }

    String placementOf(String vip) {
        return manager.api().assignment().installed.get(vip);
    }

    void trafficFromTor2(String... vips) {
        List<VipTraffic> vt = new ArrayList<>();
        for (String v : vips) {
            vt.add(new VipTraffic(v, Map.of("tor2", 2e8), null));
        }
        manager.controller().trafficMeasured(new TrafficInterval(0, 0, 10, vt));
    }

    /** The DIPs of {@code vip}'s tcp/80 pool in the SMux table. */
    Set<String> smuxDips(String vip) {
        Set<String> out = new TreeSet<>();
        for (org.hybridlb.app.core.model.SmuxTable.Entry e : onos.smuxes.tables.get("smux-1").vips) {
            if (e.vip.equals(vip)) {
                e.ports.get(0).dips.forEach(b -> out.add(b.ip));
            }
        }
        return out;
    }

    @Test
    public void aDownTorTakesTheDipsBehindItOutOfTheHmuxGroupsUntilItIsBack() throws Exception {
        String v2 = "10.100.0.2";
        ObjectNode json = configJson(false);
        ((ArrayNode) json.get("vips")).add(vip(VIP, "10.0.1.2", "10.0.2.2")).add(vip(v2, "10.0.2.2"));
        activate(json);
        manager.api().setDrained("tor1", true);   // both VIPs on tor2: the HMux is not the failing ToR
        trafficFromTor2(VIP, v2);
        manager.api().reassignNow();
        settle();
        assertEquals("tor2", placementOf(VIP));
        assertEquals("tor2", placementOf(v2));
        assertEquals(Set.of("10.0.1.2", "10.0.2.2"), tunnelDsts("tor2", VIP));
        onos.log.clear();

        // tor1 fails: unavailable, its links gone, and ONOS's host provider forgets its hosts
        Runnable recover = onos.fail("tor1");
        settle();
        assertEquals(onos.log.toString(), Set.of("10.0.2.2"), tunnelDsts("tor2", VIP));
        assertEquals(Set.of("10.0.2.2"), smuxDips(VIP));
        assertEquals("tor2", placementOf(VIP));
        assertFalse("the other VIP's group is not rewritten: " + onos.log,
                onos.log.stream().anyMatch(l -> l.startsWith("group") && l.contains("hlb:vip:" + v2)));
        assertFalse("in place, no detour through the SMux: " + onos.log,
                onos.log.stream().anyMatch(l -> l.startsWith("flow- ")));
        AssignmentView a = manager.api().assignment();
        assertNull(Json.write(a), a.lastError);
        Map<String, AssignmentView.DipHealth> health = a.dipHealth;
        assertEquals(Json.write(a), "unreachable", health.get("10.0.1.2").state);
        assertEquals("its switch tor1 is down", health.get("10.0.1.2").reason);

        // tor1 is back and its hosts are learned again: the DIP returns (through the SMux, Duet 3.5.2)
        recover.run();
        settle();
        manager.api().reassignNow();
        settle();
        assertEquals(Set.of("10.0.1.2", "10.0.2.2"), smuxDips(VIP));
        assertEquals("tor2", placementOf(VIP));
        assertEquals(Set.of("10.0.1.2", "10.0.2.2"), tunnelDsts("tor2", VIP));
        assertEquals(Map.of(), manager.api().assignment().dipHealth);
    }

    @Test
    public void aVipWhoseHmuxIsTheFailedTorStillFailsOverWithoutItsDips() throws Exception {
        ObjectNode json = configJson(false);
        ((ArrayNode) json.get("vips")).add(vip(VIP, "10.0.1.2", "10.0.2.2"));
        activate(json);
        manager.api().setDrained("tor2", true);   // the VIP lands on tor1, which holds one of its DIPs
        traffic();
        manager.api().reassignNow();
        settle();
        assertEquals("tor1", placement());
        manager.api().setDrained("tor2", false);
        settle();
        assertEquals("tor1", placement());
        onos.log.clear();

        onos.fail("tor1");
        settle();
        // the first writes withdraw VIP/32 toward the failed HMux on the three other devices
        for (int i = 0; i < 3; i++) {
            String l = onos.log.get(i);
            assertTrue(onos.log.toString(), l.startsWith("flow- ") && l.contains(" p2000 ") && l.contains(VIP));
        }
        assertFalse(onos.log.stream().anyMatch(l -> l.contains("of:tor1 ")));
        assertEquals(Set.of("10.0.2.2"), smuxDips(VIP));
        assertEquals("re-placed on the live ToR", "tor2", placement());
        assertEquals(Set.of("10.0.2.2"), tunnelDsts("tor2", VIP));
        assertNull(manager.api().assignment().lastError);
    }

    /** No flow points at a group towards {@code sw}, and no such group is left on any device. */
    void assertNothingTowards(String sw) {
        for (String d : DEVICES) {
            for (Group g : onos.groups.getGroups(NetTestTools.did(d))) {
                String k = FakeOnos.text(g.appCookie());
                assertFalse(d + " still holds " + k, k.equals("hlb:to:" + sw) || k.startsWith("hlb:ff:" + sw + "|")
                        || k.equals("hlb:alive:" + sw));
            }
        }
    }

    @Test
    public void anHmuxWhoseFabricPortsAreAllDownFailsOverAndNoGroupTowardsItIsLeft() throws Exception {
        ObjectNode json = configJson(false);
        ((ArrayNode) json.get("vips")).add(vip(VIP, "10.0.1.2", "10.0.2.2"));
        json.put("fastFailover", true);
        activate(json);
        // traffic from the Internet (it enters at the spines), so it still reaches the part left
        manager.controller().trafficMeasured(new TrafficInterval(0, 0, 10,
                List.of(new VipTraffic(VIP, Map.of(VipTraffic.INTERNET, 2e8), null))));
        manager.api().reassignNow();
        settle();
        String hmux = placement();
        assertTrue(hmux, hmux.equals("tor1") || hmux.equals("tor2"));
        String other = hmux.equals("tor1") ? "tor2" : "tor1";
        String lost = hmux.equals("tor1") ? "10.0.1.2" : "10.0.2.2";

        Runnable back = onos.isolate(hmux);   // ports down, OpenFlow session up: still available in ONOS
        settle();
        assertTrue(onos.devices.isAvailable(NetTestTools.did(hmux)));
        AssignmentView a = manager.api().assignment();
        assertNull(Json.write(a), a.lastError);
        assertEquals(Map.of(hmux, "no live fabric link"), a.cutOffSwitches);
        assertEquals(other, placement());
        assertNothingTowards(hmux);
        for (String d : DEVICES) {
            if (!d.equals(hmux)) {
                assertFalse(d, onos.flows.on(d).stream().anyMatch(f -> f.priority() == 2000
                        && f.treatment().allInstructions().toString().contains("hlb:to:" + hmux)));
            }
        }
        assertEquals("the DIP behind it is unreachable", Set.of(other.equals("tor1") ? "10.0.1.2" : "10.0.2.2"),
                tunnelDsts(other));
        assertEquals("its switch " + hmux + " counts as down: no live fabric link", a.dipHealth.get(lost).reason);

        back.run();   // the ports come back: the switch serves again
        settle();
        assertEquals(Map.of(), manager.api().assignment().cutOffSwitches);
        manager.api().reassignNow();
        settle();
        assertNull(manager.api().assignment().lastError);
    }

    @Test
    public void withOneSwitchDeletedAndAnotherIsolatedVipsArePlacedOnTheConnectedPart() throws Exception {
        onos.device("tor3");
        onos.link("tor3", 1, "spine1", 3);
        onos.link("tor3", 2, "spine2", 3);
        ObjectNode json = configJson(false);
        ((ObjectNode) json.get("switches")).putObject("of:tor3").put("id", "tor3").put("role", "tor").put("pod", 2)
                .put("tunnelPort", 100);
        ((ArrayNode) json.get("vips")).add(vip(VIP, "10.0.1.2", "10.0.2.2"));
        activate(json);
        onos.isolate("tor3");          // every fabric port of tor3 down, its OpenFlow session up
        settle();
        onos.removeDevice("spine1");   // an operator deletes spine1
        settle();
        traffic();
        manager.api().reassignNow();
        settle();
        String hmux = placement();
        AssignmentView a = manager.api().assignment();
        assertNull("no 'the fabric is not connected': " + Json.write(a), a.lastError);
        assertEquals(Json.write(a), Map.of("tor3", "no live fabric link"), a.cutOffSwitches);
        List<String> down = a.downSwitches;
        assertEquals(Set.of("spine1", "tor3"), new TreeSet<>(down));
        assertTrue(hmux + " " + Json.write(a) + Json.write(manager.api().migrations()),
                hmux.equals("tor1") || hmux.equals("tor2"));
        assertNothingTowards("spine1");
    }

    @Test
    public void aMultiHomedHostHangsOffItsAvailableLocation() {
        onos.device("tor3");
        onos.link("tor3", 1, "spine1", 3);
        onos.link("tor3", 2, "spine2", 3);
        org.onosproject.net.HostLocation l1 = new org.onosproject.net.HostLocation(NetTestTools.did("tor1"),
                org.onosproject.net.PortNumber.portNumber(7), 0);
        org.onosproject.net.HostLocation l3 = new org.onosproject.net.HostLocation(NetTestTools.did("tor3"),
                org.onosproject.net.PortNumber.portNumber(7), 0);
        org.onosproject.net.HostId id = org.onosproject.net.HostId.hostId(
                org.onlab.packet.MacAddress.valueOf("00:00:00:00:01:07"));
        onos.hosts.hosts.add(new org.onosproject.net.DefaultHost(NetTestTools.PID, id,
                org.onlab.packet.MacAddress.valueOf("00:00:00:00:01:07"), org.onlab.packet.VlanId.NONE,
                Set.of(l1, l3), Set.of(org.onlab.packet.IpAddress.valueOf("10.0.1.7")), false));
        ObjectNode json = configJson(false);
        ((ObjectNode) json.get("switches")).putObject("of:tor3").put("id", "tor3").put("role", "tor").put("pod", 0)
                .put("tunnelPort", 100);
        activate(json);
        java.util.function.Supplier<String> torOf = () -> {
            for (org.hybridlb.solver.model.Host h : manager.fabricView().topology().hosts) {
                if (h.ip.equals("10.0.1.7")) {
                    return h.tor;
                }
            }
            return null;
        };
        String first = torOf.get();
        assertTrue(first, "tor1".equals(first) || "tor3".equals(first));
        String other = "tor1".equals(first) ? "tor3" : "tor1";
        onos.setAvailable(first, false);
        settle();
        assertEquals("one location is down: the other one", other, torOf.get());
        onos.setAvailable(other, false);
        settle();
        assertTrue(torOf.get(), "tor1".equals(torOf.get()) || "tor3".equals(torOf.get()));
    }

    @Test
    public void netcfgFastFailoverRoutesVipsThroughFailoverGroups() {
        ObjectNode json = configJson(true);
        json.put("fastFailover", true);
        activate(json);
        String hmux = placedOnHmux();
        Group ff = onos.groups.getGroup(NetTestTools.did("spine1"),
                new DefaultGroupKey(("hlb:ff:" + hmux + "|" + AGG).getBytes()));
        assertNotNull(ff);
        assertEquals(org.onosproject.net.group.GroupDescription.Type.FAILOVER, ff.type());
        assertEquals(2, ff.buckets().buckets().size());
        FlowEntry route = onos.flows.on("spine1").stream().filter(f -> f.priority() == 2000).findFirst().orElseThrow();
        assertEquals(org.onosproject.net.flow.DefaultTrafficTreatment.builder().group(ff.id()).build(),
                route.treatment());

        ObjectNode bad = configJson(true);
        bad.put("fastFailover", "yes");
        netcfg.push(config(bad));
        settle();
        assertTrue(manager.lastConfigError(), manager.lastConfigError().contains("/fastFailover"));
    }
}
