package org.hybridlb.app.onos.fabric;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.ServiceEntry;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.HmuxProgrammer;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.Smux;
import org.onlab.packet.Ethernet;
import org.onlab.packet.IPv4;
import org.onlab.packet.Ip4Address;
import org.onlab.packet.IpAddress;
import org.onlab.packet.IpPrefix;
import org.onlab.packet.TpPort;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Host;
import org.onosproject.net.Path;
import org.onosproject.net.PortNumber;
import org.onosproject.net.behaviour.ExtensionTreatmentResolver;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.driver.DriverHandler;
import org.onosproject.net.driver.DriverService;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleOperations;
import org.onosproject.net.flow.FlowRuleOperationsContext;
import org.onosproject.net.flow.FlowRuleService;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.criteria.IPCriterion;
import org.onosproject.net.flow.instructions.ExtensionTreatment;
import org.onosproject.net.flow.instructions.ExtensionTreatmentType;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.group.DefaultGroupBucket;
import org.onosproject.net.group.DefaultGroupDescription;
import org.onosproject.net.group.DefaultGroupKey;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBucket;
import org.onosproject.net.group.GroupBuckets;
import org.onosproject.net.group.GroupDescription;
import org.onosproject.net.group.GroupKey;
import org.onosproject.net.group.GroupService;
import org.onosproject.net.host.HostService;
import org.onosproject.net.topology.TopologyService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HMux programmer on ONOS: the same intent as the daemon's OpenFlow programming of Open vSwitch
 * (app/standalone), through FlowRuleService and GroupService.
 *
 * <ul>
 * <li>HMux switch X, VIP v: {@code ipv4, ip_dst=v/32 [, ip_proto, tcp|udp dst]} at priority
 *     {@value #PRIORITY_HMUX} (+{@value #PRIORITY_PORT_BONUS} with a port) to a SELECT group per
 *     service, one bucket per DIP in bucket-id order with its weight: Nicira set-tunnel-destination
 *     (the DIP's host) then output to X's flow-based GRE port.</li>
 * <li>Every other available switch D: {@code ip_dst=v/32} at {@value #PRIORITY_ROUTE} to the
 *     "toward X" SELECT group on D, whose buckets output to the first hops of D's shortest paths to
 *     X (ECMP).</li>
 * <li>Every available switch: the aggregate at {@value #PRIORITY_AGGREGATE} to a SELECT group over
 *     the live SMuxes (on an SMux's ToR: set its MAC and output to its port; elsewhere: the "toward
 *     ToR" group). Longest prefix wins: {@code VIP/32} beats the aggregate (Duet 3.3.3).</li>
 * </ul>
 *
 * With fast failover on (netcfg {@code fastFailover}), the {@code VIP/32} route on D points at a
 * FAILOVER group instead ({@code hlb:ff:X|aggregate}): bucket 0 sends to the "toward X" group while
 * D's liveness group toward X ({@code hlb:alive:X}: one bucket per first-hop port, each watching its
 * port) has a live bucket; bucket 1 sends to the aggregate's SMux group (watching it). When the last
 * link from D toward X goes down, the switch itself moves the VIP's packets to the SMuxes, before
 * ONOS, the core or any route withdrawal is involved (the data-path half of Duet 3.5.1, as
 * hybridlbd's OpenFlow fast-failover groups).
 *
 * Groups are written before the flows that point at them (a group counts as written once ONOS's
 * group store holds it and ONOS has not reported it refused: {@link GroupConfirmation}; the
 * group-stats poll that marks it ADDED is not waited for), flows removed before their groups.
 * Every call waits for ONOS to confirm the flow batch (a device barrier). What was programmed is
 * recorded in a map (a ConsistentMap in ONOS) so that read-back can compare the devices to it
 * after a restart.
 */
public final class OnosHmuxProgrammer implements HmuxProgrammer {
    public static final int PRIORITY_HMUX = 3000;
    public static final int PRIORITY_PORT_BONUS = 100;
    public static final int PRIORITY_ROUTE = 2000;
    public static final int PRIORITY_AGGREGATE = 1000;
    /** Property of ONOS's Nicira set-tunnel-destination extension (NiciraSetTunnelDst). */
    public static final String TUNNEL_DST = "tunnelDst";
    static final String HMUX_RECORD = "hmux|";
    static final String AGG_RECORD = "agg|";

    private static final Logger log = LoggerFactory.getLogger(OnosHmuxProgrammer.class);
    private static final long POLL_MILLIS = 5;

    private final ApplicationId appId;
    private final FlowRuleService flows;
    private final GroupService groups;
    private final DeviceService devices;
    private final TopologyService topology;
    private final HostService hosts;
    private final DriverService drivers;
    private final Supplier<FabricView> fabric;
    /** What was programmed: {@code hmux|switch|vip -> VipEntry}, {@code agg|prefix -> [smux ids]}. */
    private final Map<String, String> records;
    private final long timeoutMillis;
    private final GroupConfirmation confirmation;
    /** Routes through FAILOVER groups with the SMuxes as backup bucket (see the class comment). */
    private final BooleanSupplier fastFailover;

    public OnosHmuxProgrammer(ApplicationId appId, FlowRuleService flows, GroupService groups, DeviceService devices,
                              TopologyService topology, HostService hosts, DriverService drivers,
                              Supplier<FabricView> fabric, Map<String, String> records, long timeoutMillis,
                              GroupConfirmation confirmation) {
        this(appId, flows, groups, devices, topology, hosts, drivers, fabric, records, timeoutMillis, confirmation,
                () -> false);
    }

    /**
     * @param timeoutMillis how long ONOS may take to confirm a flow batch, or to hold a group just
     *     written in its store (never a wait for the device's group-stats poll)
     * @param confirmation the group rule; registered as a listener of {@code groups} by the caller
     */
    public OnosHmuxProgrammer(ApplicationId appId, FlowRuleService flows, GroupService groups, DeviceService devices,
                              TopologyService topology, HostService hosts, DriverService drivers,
                              Supplier<FabricView> fabric, Map<String, String> records, long timeoutMillis,
                              GroupConfirmation confirmation, BooleanSupplier fastFailover) {
        this.fastFailover = fastFailover;
        this.confirmation = confirmation;
        this.appId = appId;
        this.flows = flows;
        this.groups = groups;
        this.devices = devices;
        this.topology = topology;
        this.hosts = hosts;
        this.drivers = drivers;
        this.fabric = fabric;
        this.records = records;
        this.timeoutMillis = timeoutMillis;
    }

    // ---- the port -------------------------------------------------------------------------------

    @Override
    public synchronized void install(String switchId, VipEntry entry) {
        FabricView view = fabric.get();
        FabricView.SwitchSpec hmux = spec(view, switchId);
        if (hmux.tunnelPort == null) {
            throw new SouthboundException(switchId + " has no tunnel port configured: it cannot be an HMux");
        }
        if (hmux.hmuxUnfit != null) {
            throw new SouthboundException(hmux.hmuxUnfit);
        }
        VipEntry target = entry.normalized();
        // 1. The service groups on the HMux, confirmed before any flow points at them.
        Map<String, Group> serviceGroups = new LinkedHashMap<>();
        for (ServiceEntry s : target.ports) {
            serviceGroups.put(s.key(), putGroup(hmux.device, serviceKey(target.vip, s),
                    serviceBuckets(hmux, s)));
        }
        // 2. Its flows; services that left the entry are dropped in the same batch.
        FlowRuleOperations.Builder ops = FlowRuleOperations.builder();
        Set<FlowRule> wanted = new HashSet<>();
        for (ServiceEntry s : target.ports) {
            FlowRule r = hmuxRule(hmux.device, target.vip, s, serviceGroups.get(s.key()));
            wanted.add(r);
            ops.add(r);
        }
        List<Group> staleGroups = new ArrayList<>();
        for (FlowEntry e : ourFlows(hmux.device)) {
            if (e.priority() >= PRIORITY_HMUX && target.vip.equals(dstHost(e)) && !containsRule(wanted, e)) {
                ops.remove(e);
            }
        }
        for (Group g : ourGroups(hmux.device)) {
            String key = keyText(g);
            if (key.startsWith(servicePrefix(target.vip)) && !serviceGroups.containsKey(key.substring(servicePrefix(target.vip).length()))) {
                staleGroups.add(g);
            }
        }
        // 3. VIP/32 toward the HMux everywhere else (replacing a route to another HMux in place).
        for (FabricView.SwitchSpec d : view.switches().values()) {
            if (d == hmux || !devices.isAvailable(d.device)) {
                continue;
            }
            Group toward = towardGroup(view, d.device, hmux.device);
            if (toward != null) {
                ops.add(routeRule(d.device, target.vip, routeTarget(view, d, hmux, toward, target.aggregate)));
            }
        }
        apply(ops, "install " + target.vip + " on " + switchId);
        removeGroups(staleGroups);
        records.put(hmuxRecord(switchId, target.vip), Json.write(target));
    }

    @Override
    public synchronized void remove(String switchId, String vip) {
        FabricView view = fabric.get();
        FabricView.SwitchSpec hmux = spec(view, switchId);
        withdraw(view, switchId, List.of(vip));
        FlowRuleOperations.Builder ops = FlowRuleOperations.builder();
        int n = 0;
        for (FlowEntry e : ourFlows(hmux.device)) {
            if (e.priority() >= PRIORITY_HMUX && vip.equals(dstHost(e))) {
                ops.remove(e);
                n++;
            }
        }
        if (n > 0) {
            apply(ops, "remove " + vip + " from " + switchId);
        }
        List<Group> stale = new ArrayList<>();
        for (Group g : ourGroups(hmux.device)) {
            if (keyText(g).startsWith(servicePrefix(vip))) {
                stale.add(g);
            }
        }
        removeGroups(stale);
        records.remove(hmuxRecord(switchId, vip));
        removeUnusedTowardGroups(view);
    }

    /**
     * Also for a switch that is no longer in the fabric view (a device ONOS removed): routes and
     * groups towards it are found by its id. The "toward" groups nothing uses any more go too, so
     * no group towards a failed switch is left on the others.
     */
    @Override
    public synchronized void withdrawRoutes(String switchId, Collection<String> vips) {
        FabricView view = fabric.get();
        withdraw(view, switchId, vips);
        removeUnusedTowardGroups(view);
    }

    @Override
    public synchronized void setSmuxGroup(String aggregate, List<Smux> smuxes) {
        FabricView view = fabric.get();
        IpPrefix prefix = IpPrefix.valueOf(aggregate);
        List<Smux> sorted = new ArrayList<>(smuxes);
        sorted.sort(Comparator.comparing(s -> s.id));
        FlowRuleOperations.Builder ops = FlowRuleOperations.builder();
        List<Group> stale = new ArrayList<>();
        for (FabricView.SwitchSpec d : view.switches().values()) {
            if (!devices.isAvailable(d.device)) {
                continue;
            }
            List<GroupBucket> buckets = sorted.isEmpty() ? List.of() : smuxBuckets(view, d, sorted);
            if (buckets.isEmpty()) {
                if (!sorted.isEmpty()) {
                    log.warn("no path from {} to any SMux of {}: aggregate not routed there", d.sw.id, aggregate);
                }
                // no route rather than one into SMuxes it cannot reach (an empty group would black-hole too)
                for (FlowEntry e : ourFlows(d.device)) {
                    if (e.priority() == PRIORITY_AGGREGATE && prefix.equals(dstPrefix(e))) {
                        ops.remove(e);
                    }
                }
                Group g = groups.getGroup(d.device, key(aggregateKey(aggregate)));
                if (g != null) {
                    stale.add(g);
                    refreshFailoverGroups(d.device, aggregate, null); // no backup bucket before the group goes
                }
                continue;
            }
            Group g = putGroup(d.device, aggregateKey(aggregate), buckets);
            refreshFailoverGroups(d.device, aggregate, g);
            ops.add(rule(d.device, selector(prefix).build(), PRIORITY_AGGREGATE, group(g)));
        }
        apply(ops, "route " + aggregate + " to SMuxes " + ids(sorted));
        removeGroups(stale);
        if (sorted.isEmpty()) {
            records.remove(AGG_RECORD + aggregate);
        } else {
            records.put(AGG_RECORD + aggregate, Json.write(ids(sorted)));
        }
        removeUnusedTowardGroups(view);
    }

    @Override
    public synchronized Map<String, VipEntry> installedOn(String switchId) {
        FabricView view = fabric.get();
        FabricView.SwitchSpec hmux = spec(view, switchId);
        Map<String, VipEntry> out = new TreeMap<>();
        Map<DeviceId, Collection<FlowEntry>> flowsByDevice = new HashMap<>();
        for (FlowEntry e : flows.getFlowEntriesById(appId)) {
            if (live(e)) {
                flowsByDevice.computeIfAbsent(e.deviceId(), k -> new ArrayList<>()).add(e);
            }
        }
        Collection<FlowEntry> here = flowsByDevice.getOrDefault(hmux.device, List.of());
        Set<String> vipsHere = new TreeSet<>();
        for (FlowEntry e : here) {
            if (e.priority() >= PRIORITY_HMUX && dstHost(e) != null) {
                vipsHere.add(dstHost(e));
            }
        }
        String prefix = HMUX_RECORD + switchId + "|";
        for (Map.Entry<String, String> r : records.entrySet()) {
            if (r.getKey().startsWith(prefix)) {
                VipEntry expected = Json.read(r.getValue(), VipEntry.class);
                if (matches(view, hmux, expected, here, flowsByDevice)) {
                    out.put(expected.vip, expected);
                }
                vipsHere.remove(expected.vip);
            }
        }
        // Entries nobody recorded (another controller, a lost record): report what the device holds
        // so that the controller removes them.
        for (String vip : vipsHere) {
            out.put(vip, new VipEntry(vip, null, List.of()));
        }
        return out;
    }

    @Override
    public synchronized Map<String, Set<String>> smuxGroups() {
        FabricView view = fabric.get();
        Map<String, Set<String>> out = new TreeMap<>();
        for (Map.Entry<String, String> r : records.entrySet()) {
            if (!r.getKey().startsWith(AGG_RECORD)) {
                continue;
            }
            String aggregate = r.getKey().substring(AGG_RECORD.length());
            List<String> ids = Json.read(r.getValue(), IdList.class);
            List<Smux> smuxes = new ArrayList<>();
            for (String id : ids) {
                Smux s = view.smuxes().get(id);
                if (s != null) {
                    smuxes.add(s);
                }
            }
            if (smuxes.size() == ids.size() && aggregateInPlace(view, aggregate, smuxes)) {
                out.put(aggregate, new TreeSet<>(ids));
            }
        }
        return out;
    }

    /** Removes every flow and group of the app (deactivation) and forgets the records. */
    public synchronized void removeAll() {
        flows.removeFlowRulesById(appId);
        for (DeviceId d : knownDevices()) {
            List<Group> mine = new ArrayList<>();
            ourGroups(d).forEach(mine::add);
            for (Group g : mine) {
                groups.removeGroup(d, g.appCookie(), appId);
            }
        }
        records.clear();
    }

    /** Recomputes every "toward" group (a link or port changed: ECMP first hops moved). */
    public synchronized void refreshPaths() {
        FabricView view = fabric.get();
        for (FabricView.SwitchSpec d : view.switches().values()) {
            if (!devices.isAvailable(d.device)) {
                continue;
            }
            for (Group g : ourGroups(d.device)) {
                String k = keyText(g);
                if (k.startsWith("hlb:to:")) {
                    view.bySwitch(k.substring("hlb:to:".length())).ifPresent(t -> {
                        List<GroupBucket> b = towardBuckets(d.device, t.device);
                        if (!b.isEmpty() && !b.equals(g.buckets().buckets())) {
                            putGroup(d.device, k, b);
                        }
                    });
                } else if (k.startsWith(ALIVE_PREFIX)) {
                    view.bySwitch(k.substring(ALIVE_PREFIX.length())).ifPresent(t -> {
                        List<GroupBucket> b = aliveBuckets(d.device, t.device);
                        if (!b.isEmpty() && !b.equals(g.buckets().buckets())) {
                            putGroup(d.device, k, GroupDescription.Type.FAILOVER, b);
                        }
                    });
                }
            }
        }
    }

    // ---- intent builders ------------------------------------------------------------------------

    /**
     * The select group buckets of one service on the HMux, in bucket-id order. A draining DIP (weight 0)
     * has no bucket: ONOS cannot express a weight-0 select bucket (it returns null), and OVS's dp_hash
     * gives such a bucket no slot anyway, so the others hash exactly as with it (the SMux keeps it for
     * its pinned connections).
     */
    List<GroupBucket> serviceBuckets(FabricView.SwitchSpec hmux, ServiceEntry s) {
        List<GroupBucket> out = new ArrayList<>();
        for (Bucket b : s.dips) {
            if (b.weight == 0) {
                continue;
            }
            TrafficTreatment t = DefaultTrafficTreatment.builder()
                    .extension(tunnelDst(hmux.device, Ip4Address.valueOf(b.tunnelEndpoint())), hmux.device)
                    .setOutput(hmux.tunnelPort)
                    .build();
            out.add(DefaultGroupBucket.createSelectGroupBucket(t, (short) b.weight));
        }
        return out;
    }

    private ExtensionTreatment tunnelDst(DeviceId device, Ip4Address dst) {
        try {
            DriverHandler handler = drivers.createHandler(device);
            ExtensionTreatmentResolver resolver = handler.behaviour(ExtensionTreatmentResolver.class);
            ExtensionTreatment ext = resolver.getExtensionInstruction(
                    ExtensionTreatmentType.ExtensionTreatmentTypes.NICIRA_SET_TUNNEL_DST.type());
            ext.setPropertyValue(TUNNEL_DST, dst);
            return ext;
        } catch (RuntimeException | org.onosproject.net.flow.instructions.ExtensionPropertyException e) {
            throw new SouthboundException(device + ": no Nicira set-tunnel-destination extension (not Open vSwitch?): "
                    + e.getMessage(), e);
        }
    }

    private FlowRule hmuxRule(DeviceId device, String vip, ServiceEntry s, Group g) {
        TrafficSelector.Builder sel = selector(IpPrefix.valueOf(IpAddress.valueOf(vip), 32));
        int priority = PRIORITY_HMUX;
        if (!"any".equals(s.proto)) {
            sel.matchIPProtocol("tcp".equals(s.proto) ? IPv4.PROTOCOL_TCP : IPv4.PROTOCOL_UDP);
            if (s.port != 0) {
                priority += PRIORITY_PORT_BONUS;
                if ("tcp".equals(s.proto)) {
                    sel.matchTcpDst(TpPort.tpPort(s.port));
                } else {
                    sel.matchUdpDst(TpPort.tpPort(s.port));
                }
            }
        }
        return rule(device, sel.build(), priority, group(g));
    }

    private FlowRule routeRule(DeviceId device, String vip, Group toward) {
        return rule(device, selector(IpPrefix.valueOf(IpAddress.valueOf(vip), 32)).build(), PRIORITY_ROUTE,
                group(toward));
    }

    private FlowRule rule(DeviceId device, TrafficSelector sel, int priority, TrafficTreatment t) {
        return DefaultFlowRule.builder().forDevice(device).withSelector(sel).withTreatment(t)
                .withPriority(priority).fromApp(appId).makePermanent().build();
    }

    private static TrafficSelector.Builder selector(IpPrefix dst) {
        return DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_IPV4).matchIPDst(dst);
    }

    private static TrafficTreatment group(Group g) {
        return DefaultTrafficTreatment.builder().group(g.id()).build();
    }

    /** The "toward {@code to}" group on {@code on} (created or refreshed), null without a path. */
    private Group towardGroup(FabricView view, DeviceId on, DeviceId to) {
        List<GroupBucket> buckets = towardBuckets(on, to);
        if (buckets.isEmpty()) {
            log.warn("no path from {} to {}", on, to);
            return null;
        }
        String name = view.byDevice(to).map(s -> s.sw.id).orElse(to.toString());
        return putGroup(on, "hlb:to:" + name, buckets);
    }

    private List<GroupBucket> towardBuckets(DeviceId on, DeviceId to) {
        List<GroupBucket> out = new ArrayList<>();
        for (PortNumber p : firstHops(on, to)) {
            out.add(DefaultGroupBucket.createSelectGroupBucket(DefaultTrafficTreatment.builder().setOutput(p).build()));
        }
        return out;
    }

    /**
     * What the {@code VIP/32} route on {@code d} toward HMux {@code hmux} points at: the "toward" group,
     * or with fast failover the FAILOVER group in front of it (created or refreshed).
     */
    private Group routeTarget(FabricView view, FabricView.SwitchSpec d, FabricView.SwitchSpec hmux, Group toward,
                              String aggregate) {
        if (!fastFailover.getAsBoolean()) {
            return toward;
        }
        Group alive = putGroup(d.device, ALIVE_PREFIX + hmux.sw.id, GroupDescription.Type.FAILOVER,
                aliveBuckets(d.device, hmux.device));
        Group smuxes = aggregate == null ? null : groups.getGroup(d.device, key(aggregateKey(aggregate)));
        return putGroup(d.device, failoverKey(hmux.sw.id, aggregate), GroupDescription.Type.FAILOVER,
                failoverBuckets(toward, alive, smuxes));
    }

    /**
     * Liveness of "toward X" on one device, for the FAILOVER group to watch (never executed): one
     * bucket per first-hop port toward X, watching that port, so the group is alive while one is up.
     */
    List<GroupBucket> aliveBuckets(DeviceId on, DeviceId to) {
        List<GroupBucket> out = new ArrayList<>();
        for (PortNumber p : firstHops(on, to)) {
            out.add(DefaultGroupBucket.createFailoverGroupBucket(
                    DefaultTrafficTreatment.builder().setOutput(p).build(), p, null));
        }
        return out;
    }

    /**
     * Bucket 0: toward the HMux while {@code alive} is; bucket 1 (when the aggregate is routed to
     * SMuxes on this device): the SMux group, watched itself (a select group is alive while it has
     * a bucket).
     */
    static List<GroupBucket> failoverBuckets(Group toward, Group alive, Group smuxes) {
        List<GroupBucket> out = new ArrayList<>();
        out.add(DefaultGroupBucket.createFailoverGroupBucket(group(toward), null, alive.id()));
        if (smuxes != null) {
            out.add(DefaultGroupBucket.createFailoverGroupBucket(group(smuxes), null, smuxes.id()));
        }
        return out;
    }

    /**
     * The aggregate's SMux group on {@code device} changed ({@code smuxes}), or is about to go
     * (null): every FAILOVER group of that aggregate there gets its backup bucket set or dropped.
     */
    private void refreshFailoverGroups(DeviceId device, String aggregate, Group smuxes) {
        List<Group> mine = new ArrayList<>();
        ourGroups(device).forEach(mine::add);
        for (Group g : mine) {
            String k = keyText(g);
            if (!k.startsWith(FF_PREFIX) || !k.endsWith("|" + aggregate) || g.buckets().buckets().isEmpty()) {
                continue;
            }
            GroupBucket primary = g.buckets().buckets().get(0);
            List<GroupBucket> want = new ArrayList<>();
            want.add(primary);
            if (smuxes != null) {
                want.add(DefaultGroupBucket.createFailoverGroupBucket(group(smuxes), null, smuxes.id()));
            }
            if (!want.equals(g.buckets().buckets())) {
                putGroup(device, k, GroupDescription.Type.FAILOVER, want);
            }
        }
    }

    /** The first-hop ports of {@code on}'s shortest paths to {@code to}, in port order. */
    private Set<PortNumber> firstHops(DeviceId on, DeviceId to) {
        Set<PortNumber> out = new TreeSet<>(Comparator.comparingLong(PortNumber::toLong));
        Set<Path> paths = topology.getPaths(topology.currentTopology(), on, to);
        if (paths != null) {
            for (Path p : paths) {
                out.add(p.src().port());
            }
        }
        return out;
    }

    private List<GroupBucket> smuxBuckets(FabricView view, FabricView.SwitchSpec d, List<Smux> smuxes) {
        List<GroupBucket> out = new ArrayList<>();
        for (Smux s : smuxes) {
            FabricView.SwitchSpec tor = view.bySwitch(s.tor).orElse(null);
            if (tor == null) {
                continue;
            }
            if (tor.device.equals(d.device)) {
                Host h = hostAt(s.ip, d.device);
                if (h == null) {
                    log.warn("SMux {} ({}) not seen at {}: no bucket there", s.id, s.ip, s.tor);
                    continue;
                }
                out.add(DefaultGroupBucket.createSelectGroupBucket(DefaultTrafficTreatment.builder()
                        .setEthDst(h.mac()).setOutput(h.location().port()).build()));
            } else {
                Group toward = towardGroup(view, d.device, tor.device);
                if (toward != null) {
                    out.add(DefaultGroupBucket.createSelectGroupBucket(group(toward)));
                }
            }
        }
        return out;
    }

    private Host hostAt(String ip, DeviceId device) {
        for (Host h : hosts.getHostsByIp(IpAddress.valueOf(ip))) {
            if (h.location() != null && h.location().deviceId().equals(device)) {
                return h;
            }
        }
        return null;
    }

    // ---- read-back ------------------------------------------------------------------------------

    /** True when the HMux entry and every VIP/32 route toward it are on the devices as programmed. */
    private boolean matches(FabricView view, FabricView.SwitchSpec hmux, VipEntry expected,
                            Collection<FlowEntry> here, Map<DeviceId, Collection<FlowEntry>> all) {
        int found = 0;
        for (FlowEntry e : here) {
            if (e.priority() >= PRIORITY_HMUX && expected.vip.equals(dstHost(e))) {
                found++;
            }
        }
        if (found != expected.ports.size()) {
            return false;
        }
        for (ServiceEntry s : expected.ports) {
            GroupKey k = key(serviceKey(expected.vip, s));
            Group g = groups.getGroup(hmux.device, k);
            if (!confirmation.holds(hmux.device, k, g, serviceBuckets(hmux, s))) {
                return false;
            }
            if (!hasRule(here, hmuxRule(hmux.device, expected.vip, s, g))) {
                return false;
            }
        }
        for (FabricView.SwitchSpec d : view.switches().values()) {
            if (d == hmux || !devices.isAvailable(d.device)) {
                continue;
            }
            if (!routedToward(d, hmux, expected, all.getOrDefault(d.device, List.of()))
                    && !towardBuckets(d.device, hmux.device).isEmpty()) {
                return false;   // (a switch with no path to the HMux gets no route: install skips it)
            }
        }
        return true;
    }

    /** True when {@code d} routes {@code expected}'s VIP/32 toward {@code hmux} as install writes it. */
    private boolean routedToward(FabricView.SwitchSpec d, FabricView.SwitchSpec hmux, VipEntry expected,
                                 Collection<FlowEntry> flowsOfD) {
        Group toward = groups.getGroup(d.device, key("hlb:to:" + hmux.sw.id));
        if (toward == null) {
            return false;
        }
        Group target = toward;
        if (fastFailover.getAsBoolean()) {
            target = groups.getGroup(d.device, key(failoverKey(hmux.sw.id, expected.aggregate)));
            Group alive = groups.getGroup(d.device, key(ALIVE_PREFIX + hmux.sw.id));
            Group smuxes = groups.getGroup(d.device, key(aggregateKey(expected.aggregate)));
            if (target == null || alive == null
                    || !target.buckets().buckets().equals(failoverBuckets(toward, alive, smuxes))) {
                return false;
            }
        }
        return hasRule(flowsOfD, routeRule(d.device, expected.vip, target));
    }

    private boolean aggregateInPlace(FabricView view, String aggregate, List<Smux> smuxes) {
        IpPrefix prefix = IpPrefix.valueOf(aggregate);
        for (FabricView.SwitchSpec d : view.switches().values()) {
            if (!devices.isAvailable(d.device)) {
                continue;
            }
            Group g = groups.getGroup(d.device, key(aggregateKey(aggregate)));
            boolean routed = false;
            for (FlowEntry e : ourFlows(d.device)) {
                if (e.priority() == PRIORITY_AGGREGATE && prefix.equals(dstPrefix(e)) && g != null
                        && e.treatment().equals(group(g))) {
                    routed = true;
                }
            }
            int reachable = smuxBucketCount(view, d, smuxes);
            if (reachable == 0 ? routed : !routed || g.buckets().buckets().size() != reachable) {
                return false;   // (no SMux reachable from d: no aggregate route there)
            }
        }
        return true;
    }

    private int smuxBucketCount(FabricView view, FabricView.SwitchSpec d, List<Smux> smuxes) {
        int n = 0;
        for (Smux s : smuxes) {
            FabricView.SwitchSpec tor = view.bySwitch(s.tor).orElse(null);
            if (tor == null) {
                continue;
            }
            if (tor.device.equals(d.device) ? hostAt(s.ip, d.device) != null
                    : !towardBuckets(d.device, tor.device).isEmpty()) {
                n++;
            }
        }
        return n;
    }

    // ---- helpers --------------------------------------------------------------------------------

    /** Removes the {@code VIP/32} routes of {@code vips} towards switch {@code hmuxId} on every other switch. */
    private void withdraw(FabricView view, String hmuxId, Collection<String> vips) {
        FlowRuleOperations.Builder ops = FlowRuleOperations.builder();
        int n = 0;
        for (FabricView.SwitchSpec d : view.switches().values()) {
            if (d.sw.id.equals(hmuxId) || !devices.isAvailable(d.device)) {
                continue;
            }
            Set<TrafficTreatment> toHmux = new HashSet<>();
            for (Group g : ourGroups(d.device)) {
                String k = keyText(g);
                if (k.equals("hlb:to:" + hmuxId) || k.startsWith(FF_PREFIX + hmuxId + "|")) {
                    toHmux.add(group(g));
                }
            }
            if (toHmux.isEmpty()) {
                continue;
            }
            for (FlowEntry e : ourFlows(d.device)) {
                if (e.priority() == PRIORITY_ROUTE && vips.contains(dstHost(e)) && toHmux.contains(e.treatment())) {
                    ops.remove(e);
                    n++;
                }
            }
        }
        if (n > 0) {
            apply(ops, "withdraw " + vips + " toward " + hmuxId);
        }
    }

    private void removeUnusedTowardGroups(FabricView view) {
        List<Group> unused = new ArrayList<>();
        for (DeviceId d : knownDevices()) {
            Set<Object> referenced = new HashSet<>();
            for (FlowEntry e : ourFlows(d)) {
                for (Instruction i : e.treatment().allInstructions()) {
                    if (i instanceof Instructions.GroupInstruction) {
                        referenced.add(((Instructions.GroupInstruction) i).groupId());
                    }
                }
            }
            List<Group> mine = new ArrayList<>();
            ourGroups(d).forEach(mine::add);
            // Failover groups no route points at go first; what they chained or watched may follow.
            List<Group> unusedFailover = new ArrayList<>();
            for (Group g : mine) {
                if (keyText(g).startsWith(FF_PREFIX) && !referenced.contains(g.id())) {
                    unusedFailover.add(g);
                }
            }
            mine.removeAll(unusedFailover);
            unused.addAll(unusedFailover);
            // Aggregate buckets chain toward groups; failover buckets chain them and watch liveness groups.
            for (Group g : mine) {
                for (GroupBucket b : g.buckets().buckets()) {
                    if (b.watchGroup() != null) {
                        referenced.add(b.watchGroup());
                    }
                    for (Instruction i : b.treatment().allInstructions()) {
                        if (i instanceof Instructions.GroupInstruction) {
                            referenced.add(((Instructions.GroupInstruction) i).groupId());
                        }
                    }
                }
            }
            for (Group g : mine) {
                String k = keyText(g);
                if ((k.startsWith("hlb:to:") || k.startsWith(ALIVE_PREFIX)) && !referenced.contains(g.id())) {
                    unused.add(g);
                }
            }
        }
        removeGroups(unused);
    }

    /** Adds or updates a SELECT group (see {@link #putGroup(DeviceId, String, GroupDescription.Type, List)}). */
    private Group putGroup(DeviceId device, String keyText, List<GroupBucket> buckets) {
        return putGroup(device, keyText, GroupDescription.Type.SELECT, buckets);
    }

    /**
     * Makes group {@code keyText} on {@code device} hold exactly {@code buckets}: writes it unless it
     * is confirmed or pending with them, then waits (at most {@code timeoutMillis}) until ONOS's
     * group store holds it; never for the device's group-stats poll ({@link GroupConfirmation}).
     */
    private Group putGroup(DeviceId device, String keyText, GroupDescription.Type type, List<GroupBucket> buckets) {
        GroupKey key = key(keyText);
        Group g = groups.getGroup(device, key);
        GroupConfirmation.State before = confirmation.state(device, key, g, buckets);
        if (before == GroupConfirmation.State.CONFIRMED || before == GroupConfirmation.State.PENDING) {
            return g;
        }
        if (before == GroupConfirmation.State.OVERDUE) {
            log.warn("{}: group {} still not confirmed by ONOS {} ms after it was written: writing it again",
                    device, keyText, confirmation.overdueAfterMillis());
        }
        confirmation.writing(device, key);
        GroupBuckets gb = new GroupBuckets(buckets);
        if (g == null) {
            groups.addGroup(new DefaultGroupDescription(device, type, gb, key, null, appId));
        } else {
            groups.setBucketsForGroup(device, key, gb, key, appId);
        }
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (true) {
            Group now = groups.getGroup(device, key);
            GroupConfirmation.State s = confirmation.state(device, key, now, buckets);
            if (s == GroupConfirmation.State.CONFIRMED || s == GroupConfirmation.State.PENDING) {
                return now;
            }
            if (s == GroupConfirmation.State.REFUSED) {
                throw new SouthboundException(device + ": group " + keyText + " refused: "
                        + confirmation.refusal(device, key));
            }
            if (System.currentTimeMillis() > deadline) {
                throw new SouthboundException(device + ": ONOS's group store does not hold group " + keyText
                        + " as written " + timeoutMillis + " ms after the write"
                        + (now == null ? "" : " (state " + now.state() + ", " + s + ")"));
            }
            sleep();
        }
    }

    private void removeGroups(List<Group> stale) {
        for (Group g : stale) {
            groups.removeGroup(g.deviceId(), g.appCookie(), appId);
        }
    }

    /** Submits one flow batch and waits for ONOS to confirm it (device barrier). */
    private void apply(FlowRuleOperations.Builder ops, String what) {
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        flows.apply(ops.build(new FlowRuleOperationsContext() {
            @Override
            public void onSuccess(FlowRuleOperations o) {
                done.complete(true);
            }

            @Override
            public void onError(FlowRuleOperations o) {
                done.complete(false);
            }
        }));
        try {
            if (!done.get(timeoutMillis, TimeUnit.MILLISECONDS)) {
                throw new SouthboundException(what + ": flow rule batch failed");
            }
        } catch (TimeoutException e) {
            throw new SouthboundException(what + ": flow rule batch not confirmed within " + timeoutMillis + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SouthboundException(what + ": interrupted", e);
        } catch (ExecutionException e) {
            throw new SouthboundException(what + ": " + e.getCause(), e);
        }
    }

    private FabricView.SwitchSpec spec(FabricView view, String switchId) {
        return view.bySwitch(switchId)
                .orElseThrow(() -> new SouthboundException("unknown switch " + switchId));
    }

    private Set<DeviceId> knownDevices() {
        Set<DeviceId> out = new HashSet<>();
        for (FabricView.SwitchSpec s : fabric.get().switches().values()) {
            out.add(s.device);
        }
        for (FlowEntry e : flows.getFlowEntriesById(appId)) {
            out.add(e.deviceId());
        }
        return out;
    }

    private List<FlowEntry> ourFlows(DeviceId device) {
        List<FlowEntry> out = new ArrayList<>();
        for (FlowEntry e : flows.getFlowEntriesById(appId)) {
            if (e.deviceId().equals(device) && live(e)) {
                out.add(e);
            }
        }
        return out;
    }

    private Iterable<Group> ourGroups(DeviceId device) {
        Iterable<Group> g = groups.getGroups(device, appId);
        return g == null ? List.of() : g;
    }

    private static boolean live(FlowEntry e) {
        return e.state() == FlowEntry.FlowEntryState.ADDED || e.state() == FlowEntry.FlowEntryState.PENDING_ADD;
    }

    private static boolean hasRule(Collection<FlowEntry> entries, FlowRule expected) {
        for (FlowEntry e : entries) {
            if (e.id().equals(expected.id()) && e.treatment().equals(expected.treatment())) {
                return true;
            }
        }
        return false;
    }

    private static boolean containsRule(Set<FlowRule> rules, FlowEntry e) {
        for (FlowRule r : rules) {
            if (r.id().equals(e.id())) {
                return true;
            }
        }
        return false;
    }

    private static IpPrefix dstPrefix(FlowRule r) {
        Criterion c = r.selector().getCriterion(Criterion.Type.IPV4_DST);
        return c == null ? null : ((IPCriterion) c).ip();
    }

    /** The VIP of a {@code /32} destination match, or null. */
    static String dstHost(FlowRule r) {
        IpPrefix p = dstPrefix(r);
        return p != null && p.prefixLength() == 32 ? p.address().toString() : null;
    }

    static GroupKey key(String text) {
        return new DefaultGroupKey(text.getBytes(StandardCharsets.UTF_8));
    }

    static String keyText(Group g) {
        return g.appCookie() == null ? "" : new String(g.appCookie().key(), StandardCharsets.UTF_8);
    }

    static String servicePrefix(String vip) {
        return "hlb:vip:" + vip + ":";
    }

    static String serviceKey(String vip, ServiceEntry s) {
        return servicePrefix(vip) + s.key();
    }

    static String aggregateKey(String aggregate) {
        return "hlb:agg:" + aggregate;
    }

    static final String FF_PREFIX = "hlb:ff:";
    static final String ALIVE_PREFIX = "hlb:alive:";

    /** The FAILOVER group of routes toward HMux {@code switchId} for VIPs of {@code aggregate}. */
    static String failoverKey(String switchId, String aggregate) {
        return FF_PREFIX + switchId + "|" + aggregate;
    }

    static String hmuxRecord(String switchId, String vip) {
        return HMUX_RECORD + switchId + "|" + vip;
    }

    private static List<String> ids(List<Smux> smuxes) {
        List<String> out = new ArrayList<>();
        for (Smux s : smuxes) {
            out.add(s.id);
        }
        return out;
    }

    private static void sleep() {
        try {
            Thread.sleep(POLL_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SouthboundException("interrupted", e);
        }
    }

    /** JSON list of SMux ids (records). */
    static final class IdList extends ArrayList<String> {
        private static final long serialVersionUID = 1L;
    }

}
