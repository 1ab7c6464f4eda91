package org.hybridlb.app.onos.fabric;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.onos.HybridlbConfig;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.TableCapacity;
import org.onlab.packet.IpAddress;
import org.onosproject.net.Annotations;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.HostLocation;
import org.onosproject.net.Port;
import org.onosproject.net.PortNumber;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.host.HostService;
import org.onosproject.net.link.LinkService;

/**
 * Builds the {@link FabricView} from hybridlb's netcfg and the ONOS device, link and host
 * services. A switch is a configured device, or a device annotated with {@value #ROLE} (and
 * {@value #POD}, optionally {@value #TUNNEL_PORT} and {@value #SWITCH_ID}); config wins.
 * Link capacity comes from the port speed, else from {@code linkCapacityBps}. Hosts are the
 * configured ones plus every IPv4 host ONOS has located on a fabric switch; a host's switch (its
 * ToR, the DIP's attachment switch) is its location's device, or for a multi-homed host the first
 * of its locations whose device is available. A host ONOS forgets (its host provider removes the
 * hosts of a device that goes down) keeps its last location: the core then sees its DIPs as
 * unreachable while that switch is down, instead of DIPs that belong to no host.
 */
public final class FabricBuilder {
    public static final String ROLE = "hybridlb.role";
    public static final String POD = "hybridlb.pod";
    public static final String TUNNEL_PORT = "hybridlb.tunnelPort";
    public static final String SWITCH_ID = "hybridlb.id";
    private static final double BPS_PER_MBPS = 1e6;

    private FabricBuilder() {
    }

    public static FabricView build(HybridlbConfig cfg, DeviceService devices, LinkService links, HostService hosts) {
        return build(cfg, devices, links, hosts, FabricView.EMPTY, null);
    }

    /**
     * As above; hosts of {@code previous} that ONOS no longer lists stay where they were last seen,
     * and switches with a tunnel port whose device {@code capability} finds unfit get no tunnel
     * table entries (null: not checked).
     */
    public static FabricView build(HybridlbConfig cfg, DeviceService devices, LinkService links, HostService hosts,
                                   FabricView previous, HmuxCapability capability) {
        Map<DeviceId, FabricView.SwitchSpec> specs = new LinkedHashMap<>();
        if (cfg != null) {
            for (HybridlbConfig.SwitchConfig s : cfg.switches()) {
                specs.put(s.device, new FabricView.SwitchSpec(s.device, new Switch(s.id, s.role, s.pod, s.tables),
                        s.tunnelPort == null ? null : PortNumber.portNumber(s.tunnelPort)));
            }
        }
        for (Device d : devices.getDevices()) {
            if (!specs.containsKey(d.id()) && d.annotations().value(ROLE) != null) {
                FabricView.SwitchSpec s = fromAnnotations(d);
                if (s != null) {
                    specs.put(d.id(), s);
                }
            }
        }
        if (capability != null) {
            specs.replaceAll((id, s) -> checked(s, capability));
        }
        double defaultBps = cfg != null ? cfg.linkCapacityBps() : HybridlbConfig.DEFAULT_LINK_CAPACITY_BPS;
        List<Link> fabricLinks = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (org.onosproject.net.Link l : links.getLinks()) {
            FabricView.SwitchSpec a = specs.get(l.src().deviceId());
            FabricView.SwitchSpec b = specs.get(l.dst().deviceId());
            if (a == null || b == null) {
                continue;
            }
            String x = a.sw.id.compareTo(b.sw.id) < 0 ? a.sw.id + "|" + b.sw.id : b.sw.id + "|" + a.sw.id;
            if (seen.add(x + "|" + Math.min(l.src().port().toLong(), l.dst().port().toLong()))) {
                Port p = devices.getPort(l.src());
                double bps = p != null && p.portSpeed() > 0 ? p.portSpeed() * BPS_PER_MBPS : defaultBps;
                fabricLinks.add(new Link(a.sw.id, b.sw.id, bps));
            }
        }
        keepLinksOfDownSwitches(previous, specs, devices, fabricLinks);
        Map<String, Host> fabricHosts = new LinkedHashMap<>();
        List<Smux> smuxes = new ArrayList<>();
        if (cfg != null) {
            for (Host h : cfg.hosts()) {
                fabricHosts.put(h.ip, h);
            }
            for (HybridlbConfig.SmuxConfig s : cfg.smuxes()) {
                smuxes.add(s.smux);
            }
        }
        for (org.onosproject.net.Host h : hosts.getHosts()) {
            FabricView.SwitchSpec tor = attachment(h, specs, devices);
            if (tor == null) {
                continue;
            }
            for (IpAddress ip : h.ipAddresses()) {
                if (ip.isIp4() && !fabricHosts.containsKey(ip.toString())) {
                    fabricHosts.put(ip.toString(), new Host(h.id().toString(), ip.toString(), tor.sw.id));
                }
            }
        }
        Set<String> switchIds = new HashSet<>();
        specs.values().forEach(s -> switchIds.add(s.sw.id));
        for (Host h : previous.topology().hosts) {
            if (!fabricHosts.containsKey(h.ip) && switchIds.contains(h.tor)) {
                fabricHosts.put(h.ip, h);
            }
        }
        return new FabricView(new ArrayList<>(specs.values()), fabricLinks, new ArrayList<>(fabricHosts.values()),
                smuxes);
    }

    /**
     * ONOS removes the links of a device that goes down; the core keeps a failed switch with its
     * links (it offers no table entries, and traffic routes around it), so the links of an
     * unavailable switch stay as last seen until it is back and ONOS reports them again.
     */
    private static void keepLinksOfDownSwitches(FabricView previous, Map<DeviceId, FabricView.SwitchSpec> specs,
                                                DeviceService devices, List<Link> fabricLinks) {
        Set<String> down = new HashSet<>();
        for (FabricView.SwitchSpec s : specs.values()) {
            if (!devices.isAvailable(s.device)) {
                down.add(s.sw.id);
            }
        }
        if (down.isEmpty()) {
            return;
        }
        Map<String, Integer> now = new HashMap<>();
        fabricLinks.forEach(l -> now.merge(pair(l), 1, Integer::sum));
        for (Link l : previous.topology().links) {
            if ((down.contains(l.a) || down.contains(l.b)) && specs.values().stream()
                    .anyMatch(s -> s.sw.id.equals(l.a)) && specs.values().stream().anyMatch(s -> s.sw.id.equals(l.b))) {
                if (now.merge(pair(l), -1, Integer::sum) < 0) {
                    fabricLinks.add(l);
                }
            }
        }
    }

    private static String pair(Link l) {
        return l.a.compareTo(l.b) < 0 ? l.a + "|" + l.b : l.b + "|" + l.a;
    }

    /**
     * The fabric switch a host hangs off: its (primary) location's device while that is available,
     * else the first other location on an available fabric switch, else the primary one (down).
     */
    static FabricView.SwitchSpec attachment(org.onosproject.net.Host h, Map<DeviceId, FabricView.SwitchSpec> specs,
                                            DeviceService devices) {
        FabricView.SwitchSpec primary = h.location() == null ? null : specs.get(h.location().deviceId());
        if (primary != null && devices.isAvailable(primary.device)) {
            return primary;
        }
        List<HostLocation> others = new ArrayList<>(h.locations() == null ? Set.of() : h.locations());
        others.sort(Comparator.comparing(HostLocation::toString));
        for (HostLocation l : others) {
            FabricView.SwitchSpec s = specs.get(l.deviceId());
            if (s != null && devices.isAvailable(s.device)) {
                return s;
            }
        }
        if (primary != null) {
            return primary;
        }
        for (HostLocation l : others) {
            if (specs.containsKey(l.deviceId())) {
                return specs.get(l.deviceId());
            }
        }
        return null;
    }

    /** {@code s}, without tunnel table entries and with the reason when its device cannot be an HMux. */
    private static FabricView.SwitchSpec checked(FabricView.SwitchSpec s, HmuxCapability capability) {
        if (s.tunnelPort == null) {
            return s;
        }
        String problem = capability.problem(s.device);
        if (problem == null) {
            return s;
        }
        TableCapacity t = s.sw.tables;
        return new FabricView.SwitchSpec(s.device, new Switch(s.sw.id, s.sw.role, s.sw.pod,
                new TableCapacity(t.host, t.ecmp, 0)), s.tunnelPort, problem);
    }

    private static FabricView.SwitchSpec fromAnnotations(Device d) {
        Annotations a = d.annotations();
        try {
            SwitchRole role = SwitchRole.parse(a.value(ROLE));
            Integer pod = a.value(POD) == null ? null : Integer.valueOf(a.value(POD));
            PortNumber tunnel = a.value(TUNNEL_PORT) == null ? null : PortNumber.portNumber(a.value(TUNNEL_PORT));
            String id = a.value(SWITCH_ID) != null ? a.value(SWITCH_ID) : d.id().toString();
            TableCapacity tables = tunnel == null ? new TableCapacity(null, null, 0) : TableCapacity.DEFAULTS;
            return new FabricView.SwitchSpec(d.id(), new Switch(id, role, pod, tables), tunnel);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
