package org.hybridlb.app.onos.fabric;

import java.util.ArrayList;
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
 * configured ones plus every IPv4 host ONOS has located on a fabric switch.
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
            FabricView.SwitchSpec tor = h.location() == null ? null : specs.get(h.location().deviceId());
            if (tor == null) {
                continue;
            }
            for (IpAddress ip : h.ipAddresses()) {
                if (ip.isIp4() && !fabricHosts.containsKey(ip.toString())) {
                    fabricHosts.put(ip.toString(), new Host(h.id().toString(), ip.toString(), tor.sw.id));
                }
            }
        }
        return new FabricView(new ArrayList<>(specs.values()), fabricLinks, new ArrayList<>(fabricHosts.values()),
                smuxes);
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
