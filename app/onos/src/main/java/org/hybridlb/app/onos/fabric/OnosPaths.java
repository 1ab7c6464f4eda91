package org.hybridlb.app.onos.fabric;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.hybridlb.solver.model.Smux;
import org.onlab.packet.IpAddress;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Host;
import org.onosproject.net.Path;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.group.DefaultGroupBucket;
import org.onosproject.net.group.GroupBucket;
import org.onosproject.net.host.HostService;
import org.onosproject.net.topology.TopologyService;

/**
 * How a device forwards towards another switch or an SMux under ONOS, where the app routes itself:
 * the first hops of the device's shortest paths (ECMP), as select buckets and as failover liveness
 * buckets, the bucket that hands a packet to an SMux on its own ToR, and what a device cannot reach
 * now (no path, an SMux not seen on its ToR).
 */
final class OnosPaths {
    private final TopologyService topology;
    private final HostService hosts;
    private final Supplier<FabricView> fabric;

    OnosPaths(TopologyService topology, HostService hosts, Supplier<FabricView> fabric) {
        this.topology = topology;
        this.hosts = hosts;
        this.fabric = fabric;
    }

    /** The first-hop ports of {@code on}'s shortest paths to {@code to}, in port order. */
    Set<PortNumber> firstHops(DeviceId on, DeviceId to) {
        Set<PortNumber> out = new TreeSet<>(Comparator.comparingLong(PortNumber::toLong));
        Set<Path> paths = topology.getPaths(topology.currentTopology(), on, to);
        if (paths != null) {
            for (Path p : paths) {
                out.add(p.src().port());
            }
        }
        return out;
    }

    /** SELECT buckets over the first hops towards {@code to} (empty: no path). */
    List<GroupBucket> towardBuckets(DeviceId on, DeviceId to) {
        List<GroupBucket> out = new ArrayList<>();
        for (PortNumber p : firstHops(on, to)) {
            out.add(DefaultGroupBucket.createSelectGroupBucket(DefaultTrafficTreatment.builder().setOutput(p).build()));
        }
        return out;
    }

    /**
     * Liveness of "toward {@code to}" (for a failover group to watch, never executed): one bucket
     * per first hop, watching that port, so the group is alive while one is up.
     */
    List<GroupBucket> aliveBuckets(DeviceId on, DeviceId to) {
        List<GroupBucket> out = new ArrayList<>();
        for (PortNumber p : firstHops(on, to)) {
            out.add(DefaultGroupBucket.createFailoverGroupBucket(
                    DefaultTrafficTreatment.builder().setOutput(p).build(), p, null));
        }
        return out;
    }

    /** The host with {@code ip} located on {@code device}, or null. */
    Host hostAt(String ip, DeviceId device) {
        for (Host h : hosts.getHostsByIp(IpAddress.valueOf(ip))) {
            if (h.location() != null && h.location().deviceId().equals(device)) {
                return h;
            }
        }
        return null;
    }

    /** The bucket that hands a packet to {@code s} on its own ToR {@code tor}, or null when ONOS has not seen it there. */
    GroupBucket smuxAtItsTor(Smux s, DeviceId tor) {
        Host h = hostAt(s.ip, tor);
        return h == null ? null : DefaultGroupBucket.createIndirectGroupBucket(DefaultTrafficTreatment.builder()
                .setEthDst(h.mac()).setOutput(h.location().port()).build());
    }

    /**
     * What {@code on} cannot forward to now, with why: HMux-capable switches without a path (routes
     * towards them cannot be held) and SMuxes not seen on their ToR or whose ToR it has no path to.
     */
    Map<String, String> unreachable(FabricView.SwitchSpec on) {
        FabricView view = fabric.get();
        Map<String, String> out = new TreeMap<>();
        for (FabricView.SwitchSpec x : view.switches().values()) {
            if (!x.device.equals(on.device) && x.tunnelPort != null && firstHops(on.device, x.device).isEmpty()) {
                out.put(x.sw.id, "no path from " + on.sw.id);
            }
        }
        for (Smux s : view.smuxes().values()) {
            FabricView.SwitchSpec tor = view.bySwitch(s.tor).orElse(null);
            if (tor == null) {
                out.put(s.id, "its ToR " + s.tor + " is no switch of the fabric");
            } else if (tor.device.equals(on.device) ? hostAt(s.ip, on.device) == null
                    : firstHops(on.device, tor.device).isEmpty()) {
                out.put(s.id, tor.device.equals(on.device) ? "ONOS has not seen it (" + s.ip + ") on " + s.tor
                        : "no path from " + on.sw.id + " to its ToR " + s.tor);
            }
        }
        return out;
    }
}
