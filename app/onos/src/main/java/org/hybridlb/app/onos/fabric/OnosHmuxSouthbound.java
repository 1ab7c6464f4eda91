package org.hybridlb.app.onos.fabric;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.port.HmuxProgrammer;
import org.hybridlb.app.core.port.SouthboundException;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.driver.DriverService;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRuleService;
import org.onosproject.net.group.Group;
import org.onosproject.net.group.GroupBucket;
import org.onosproject.net.group.GroupDescription;
import org.onosproject.net.group.GroupService;
import org.onosproject.net.host.HostService;
import org.onosproject.net.topology.TopologyService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HMux southbound of the ONOS app: the core's deltas rendered into FlowRuleService and
 * GroupService operations ({@link OnosRenderer}, one flow batch in stages for every device of a
 * delta, groups held by ONOS before a flow points at them: {@link OnosSender}), devices read back
 * from what ONOS holds ({@link OnosReader}, no record of its own).
 *
 * <p>The hash contract: ONOS programs OpenFlow 1.3 select groups, which carry no selection method,
 * so Open vSwitch picks their buckets with its default dp_hash method, which the SMux's
 * {@code ovs-dphash} selection replicates (GRE: Open vSwitch has no IP-in-IP port). OpenFlow 1.3
 * buckets carry no ids and the select bucket has no DIP: a bucket is its position and tunnel
 * endpoint, which is what the hash depends on. A device whose driver lacks the Nicira tunnel
 * extension cannot be an HMux and no SMux could agree with it.
 *
 * <p>A device bound to one of the hybridlb pipeconfs ({@link P4Devices}: ONOS's
 * {@code PiPipeconfService.ofDevice}) is planned and read by the core's P4 layer, the one
 * hybridlbd's P4Runtime southbound uses, and its entities go through the same FlowRuleService and
 * GroupService as table entries and action profile groups ({@link P4HmuxRenderer},
 * {@link P4HmuxReader}), with the P4 program's hash contract and, on a Cheetah program, its cookie
 * decoding.
 */
public final class OnosHmuxSouthbound implements HmuxProgrammer {
    private static final Logger log = LoggerFactory.getLogger(OnosHmuxSouthbound.class);
    static final HashContract OVS_DEFAULT =
            HashContract.of(HashContract.Selection.OVS_DP_HASH, 0, HashContract.Encap.GRE);
    private final DeviceService devices;
    private final Supplier<FabricView> fabric;
    private final BooleanSupplier fastFailover;
    private final OnosSender sender;
    private final OnosPaths paths;
    private final OnosReader reader;
    private final OnosRenderer renderer;
    private final P4Devices p4;
    private final P4HmuxReader p4Reader;
    private final P4HmuxRenderer p4Renderer;

    /**
     * @param timeoutMillis how long ONOS may take to confirm a flow batch, or to hold a group just
     *     written in its store (never a wait for the device's group-stats poll)
     * @param confirmation the group rule; registered as a listener of {@code groups} by the caller
     * @param fastFailover routes through FAILOVER groups with the SMuxes as backup bucket (netcfg)
     */
    public OnosHmuxSouthbound(ApplicationId appId, FlowRuleService flows, GroupService groups, DeviceService devices,
                              TopologyService topology, HostService hosts, DriverService drivers,
                              Supplier<FabricView> fabric, long timeoutMillis, GroupConfirmation confirmation,
                              BooleanSupplier fastFailover) {
        this(appId, flows, groups, devices, topology, hosts, drivers, fabric, timeoutMillis, confirmation, fastFailover,
                P4Devices.NONE);
    }

    /** @param p4 which devices run a hybridlb P4 program: those get the P4 renderer, the others the OpenFlow one */
    public OnosHmuxSouthbound(ApplicationId appId, FlowRuleService flows, GroupService groups, DeviceService devices,
                              TopologyService topology, HostService hosts, DriverService drivers,
                              Supplier<FabricView> fabric, long timeoutMillis, GroupConfirmation confirmation,
                              BooleanSupplier fastFailover, P4Devices p4) {
        this.p4 = p4;
        this.devices = devices;
        this.fabric = fabric;
        this.fastFailover = fastFailover;
        this.sender = new OnosSender(appId, flows, groups, confirmation, timeoutMillis);
        this.paths = new OnosPaths(topology, hosts, fabric);
        this.reader = new OnosReader(sender, paths);
        this.renderer = new OnosRenderer(sender, new OnosRules(appId, drivers), paths, fabric);
        this.p4Reader = new P4HmuxReader(sender);
        this.p4Renderer = new P4HmuxRenderer(sender);
    }

    @Override
    public SwitchCapability capability(String switchId) {
        FabricView.SwitchSpec sw = spec(switchId);
        java.util.Optional<String> profile = p4.profile(sw.device);
        if (profile.isPresent()) {
            return P4HmuxReader.capability(profile.get());
        }
        HashContract hash = sw.hmuxUnfit != null ? HashContract.none(sw.hmuxUnfit) : OVS_DEFAULT;
        return new SwitchCapability(hash, false, false, fastFailover.getAsBoolean(), Set.of());
    }

    @Override
    public synchronized Map<String, SwitchReading> read(Collection<String> switchIds) {
        Map<DeviceId, List<FlowEntry>> flows = sender.flowsByDevice();
        Map<String, SwitchReading> out = new LinkedHashMap<>();
        for (String id : switchIds) {
            FabricView.SwitchSpec sw = fabric.get().bySwitch(id).orElse(null);
            if (sw == null) {
                out.put(id, SwitchReading.failed("unknown switch " + id));
            } else if (!devices.isAvailable(sw.device)) {
                out.put(id, SwitchReading.failed(sw.device + " is not available"));
            } else if (p4.profile(sw.device).isPresent()) {
                out.put(id, readP4(sw));
            } else {
                out.put(id, reader.read(sw, flows.getOrDefault(sw.device, List.of()), fastFailover.getAsBoolean()));
            }
        }
        return out;
    }

    /**
     * Every device's groups first (a device whose groups fail is left out of the batch and named),
     * then one flow batch for all of them, then each device's unused groups.
     */
    @Override
    public synchronized void apply(Map<String, SwitchDelta> deltas) {
        Map<DeviceId, List<FlowEntry>> flows = sender.flowsByDevice();
        OnosRenderer.Stages stages = new OnosRenderer.Stages();
        List<String> failed = new ArrayList<>();
        Set<DeviceId> touched = new HashSet<>();
        for (Map.Entry<String, SwitchDelta> e : deltas.entrySet()) {
            FabricView.SwitchSpec sw = fabric.get().bySwitch(e.getKey()).orElse(null);
            if (sw == null || !devices.isAvailable(sw.device)) {
                continue; // a device ONOS no longer has holds nothing to change
            }
            OnosRenderer.Stages own = new OnosRenderer.Stages();
            try {
                if (p4.profile(sw.device).isPresent()) {
                    p4Renderer.render(sw, e.getValue(), heldP4(sw), own);
                } else {
                    renderer.render(sw, e.getValue(), flows.getOrDefault(sw.device, List.of()), own);
                }
            } catch (SouthboundException ex) {
                failed.add(e.getKey() + ": " + ex.getMessage());
                continue;
            }
            stages.addAll(own);
            touched.add(sw.device);
        }
        if (!stages.isEmpty()) {
            try {
                sender.apply(stages.build(), "HMux changes on " + touched.size() + " devices");
            } catch (SouthboundException ex) {
                failed.add(ex.getMessage());
            }
        }
        Map<DeviceId, List<FlowEntry>> now = sender.flowsByDevice();
        for (DeviceId d : touched) {
            if (p4.profile(d).isPresent()) {
                p4Renderer.cleanUp(d, now.getOrDefault(d, List.of()));
            } else {
                renderer.cleanUp(d, now.getOrDefault(d, List.of()));
            }
        }
        if (!failed.isEmpty()) {
            throw new SouthboundException(String.join("; ", failed));
        }
    }

    private SwitchReading readP4(FabricView.SwitchSpec sw) {
        try {
            return heldP4(sw).reading;
        } catch (RuntimeException e) { // a configuration the core refuses, or rules it cannot read
            return SwitchReading.failed(sw.sw.id + ": " + e.getMessage());
        }
    }

    /** A P4 device as ONOS holds it, read by the core's P4 layer. */
    private P4HmuxReader.Held heldP4(FabricView.SwitchSpec sw) {
        org.hybridlb.app.core.p4.HmuxP4Config config;
        try {
            config = P4HmuxReader.config(fabric.get(), p4.nextIds());
        } catch (IllegalArgumentException e) {
            throw new SouthboundException(sw.sw.id + ": " + e.getMessage());
        }
        return p4Reader.read(sw.device, config);
    }

    /** Removes every flow and group of the app (deactivation). */
    public synchronized void removeAll() {
        Set<DeviceId> known = new HashSet<>(sender.flowsByDevice().keySet());
        fabric.get().switches().values().forEach(s -> known.add(s.device));
        sender.removeAll(known);
    }

    /** Recomputes every path group (a link or port changed: ECMP first hops moved). */
    public synchronized void refreshPaths() {
        FabricView view = fabric.get();
        for (FabricView.SwitchSpec d : view.switches().values()) {
            if (!devices.isAvailable(d.device) || p4.profile(d.device).isPresent()) {
                continue;
            }
            for (Group g : sender.groups(d.device)) {
                String k = OnosGroups.keyText(g);
                FabricView.SwitchSpec t = OnosGroups.targetOf(k) == null ? null
                        : view.bySwitch(OnosGroups.targetOf(k)).orElse(null);
                if (t == null || k.startsWith(OnosGroups.FAILOVER)) {
                    continue;
                }
                boolean toward = k.startsWith(OnosGroups.TOWARD);
                List<GroupBucket> b = toward ? paths.towardBuckets(d.device, t.device) : paths.aliveBuckets(d.device, t.device);
                if (!b.isEmpty() && !b.equals(g.buckets().buckets())) {
                    try {
                        sender.putGroup(d.device, k, toward ? GroupDescription.Type.SELECT : GroupDescription.Type.FAILOVER, b);
                    } catch (SouthboundException e) {
                        log.warn("refreshing path group {} on {}: {}", k, d.device, e.getMessage());
                    }
                }
            }
        }
    }

    private FabricView.SwitchSpec spec(String switchId) {
        return fabric.get().bySwitch(switchId).orElseThrow(() -> new SouthboundException("unknown switch " + switchId));
    }
}
