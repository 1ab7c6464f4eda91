package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.hybridlb.app.core.port.Ports;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;

/**
 * What the sources say about the fabric, as of the last round or event: the topology, the down
 * switches, the live SMuxes and the last traffic interval. Loop thread only, except
 * {@link #reportSmuxes} (any thread).
 */
final class FabricInputs {
    private final Ports ports;
    /** Down switches, in the order they failed. */
    final Set<String> down = new LinkedHashSet<>();
    private Set<String> liveSmuxes = new LinkedHashSet<>();
    /** The live SMux set last reported by the route source (any thread), applied by the loop. */
    private final AtomicReference<Set<String>> reportedSmuxes = new AtomicReference<>(Set.of());
    private TrafficInterval traffic;

    FabricInputs(Ports ports) {
        this.ports = ports;
    }

    Topology topology() {
        return ports.topology.topology();
    }

    /** Reads the down switches, live SMuxes and last traffic interval; the DIP health goes to {@code health}. */
    void refresh(DipHealthView health) {
        down.addAll(ports.topology.downSwitches());
        liveSmuxes = new LinkedHashSet<>(ports.routes.liveSmuxes());
        health.replaceFailed(ports.health.unhealthyDips());
        TrafficInterval t = ports.stats.lastInterval();
        if (t != null) {
            traffic = t;
        }
    }

    void reportSmuxes(Set<String> live) {
        reportedSmuxes.set(new LinkedHashSet<>(live));
    }

    /** The live SMux set as last applied. */
    Set<String> liveSmuxes() {
        return liveSmuxes;
    }

    void setLiveSmuxes(Set<String> live) {
        liveSmuxes = new LinkedHashSet<>(live);
    }

    Set<String> reportedSmuxes() {
        return reportedSmuxes.get();
    }

    boolean isLive(String smuxId) {
        return liveSmuxes.contains(smuxId);
    }

    /** Live SMuxes of the topology, in topology order. */
    List<String> liveIds() {
        List<String> out = new ArrayList<>();
        for (Smux m : topology().smuxes) {
            if (liveSmuxes.contains(m.id)) {
                out.add(m.id);
            }
        }
        return out;
    }

    Map<String, Smux> smuxesById() {
        Map<String, Smux> out = new LinkedHashMap<>();
        topology().smuxes.forEach(m -> out.put(m.id, m));
        return out;
    }

    TrafficInterval traffic() {
        return traffic;
    }

    void trafficMeasured(TrafficInterval interval) {
        traffic = interval;
    }
}
