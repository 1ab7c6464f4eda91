package org.hybridlb.app.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Logger;
import org.hybridlb.app.core.port.Ports;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;

/**
 * What the sources say about the fabric, as of the last round or event: the topology, the down
 * switches (reported down, or cut off from the part of the fabric the controller serves from), the
 * live SMuxes and the last traffic interval. Loop thread only, except
 * {@link #reportSmuxes} (any thread).
 */
final class FabricInputs {
    private static final Logger LOG = Logger.getLogger(FabricInputs.class.getName());

    private final Ports ports;
    private final StateKeeper keeper;
    /** Switches the controller treats as down: reported down, or cut off from the served part. */
    final Set<String> down = new LinkedHashSet<>();
    /** Switches the topology source or an event reported down, in the order they failed. */
    private final Set<String> reportedDown = new LinkedHashSet<>();
    /** Live switches outside the part of the fabric the controller serves from, with why. */
    private Map<String, String> cutOff = Map.of();
    private ServingFabric serving;
    private Topology servingOf;
    private Set<String> servingDown;
    private Set<String> servingDrained;
    private boolean servingDiscovering;
    /** Switches that have shown a live fabric link since the start (discovery, see ControllerConfig). */
    private final Set<String> everLinked = new HashSet<>();
    private final long startNanos = System.nanoTime();
    private final Duration discoveryGrace;
    private boolean discoveryLogged;
    private Set<String> liveSmuxes = new LinkedHashSet<>();
    /** The live SMux set last reported by the route source (any thread), applied by the loop. */
    private final AtomicReference<Set<String>> reportedSmuxes = new AtomicReference<>(Set.of());
    private TrafficInterval traffic;
    /** Switches no SMux can agree with; null until {@link #useContracts}. */
    private HashContracts contracts;

    FabricInputs(Ports ports, StateKeeper keeper, Duration discoveryGrace) {
        this.ports = ports;
        this.keeper = keeper;
        this.discoveryGrace = discoveryGrace;
    }

    Topology topology() {
        return ports.topology.topology();
    }

    /** Switches no SMux can hash as serve as no HMux (they offer the solver no entries). */
    void useContracts(HashContracts c) {
        contracts = c;
    }

    /** Reads the down switches, live SMuxes and last traffic interval; the DIP health goes to {@code health}. */
    void refresh(DipHealthView health) {
        reportedDown.addAll(ports.topology.downSwitches());
        refreshDown();
        liveSmuxes = new LinkedHashSet<>(ports.routes.liveSmuxes());
        health.replaceFailed(ports.health.unhealthyDips());
        TrafficInterval t = ports.stats.lastInterval();
        if (t != null) {
            traffic = t;
        }
    }

    /** A switch reported down; false if it already was. */
    boolean switchDown(String sw) {
        if (!reportedDown.add(sw)) {
            return false;
        }
        refreshDown();
        return true;
    }

    /** A switch reported up; false if it was not down. */
    boolean switchUp(String sw) {
        if (!reportedDown.remove(sw)) {
            return false;
        }
        refreshDown();
        return true;
    }

    /** The down switches the topology source reports now (at start). */
    void readDownSwitches() {
        reportedDown.addAll(ports.topology.downSwitches());
        refreshDown();
    }

    /**
     * Recomputes the switches down for the controller: those reported down, and live ones cut off
     * from the part of the fabric it serves from ({@link ServingFabric}). Logs every change of the latter.
     */
    private void refreshDown() {
        Map<String, String> now = serving().cutOff();
        now.forEach((sw, why) -> {
            if (!why.equals(cutOff.get(sw))) {
                LOG.warning("switch " + sw + " counts as down: " + why);
            }
        });
        cutOff.keySet().stream().filter(sw -> !now.containsKey(sw))
                .forEach(sw -> LOG.info("switch " + sw + " is connected to the served part of the fabric again"));
        cutOff = now;
        down.clear();
        down.addAll(reportedDown);
        down.addAll(now.keySet());
    }

    /**
     * The served part of the fabric, recomputed only when the topology, the reported-down or the
     * drained switches changed. Its topology is what the solver sees: drained and failed switches,
     * and those no SMux can agree with, offer no table entries and cut-off ones are absent, so no
     * VIP is placed on them.
     */
    ServingFabric serving() {
        Topology t = topology();
        Set<String> drained = new HashSet<>(keeper.state().drained);
        if (contracts != null) {
            drained.addAll(contracts.noAgreement(t).keySet());
        }
        boolean discovering = discovering(t);
        if (serving == null || servingOf != t || !reportedDown.equals(servingDown) || !drained.equals(servingDrained)
                || discovering != servingDiscovering) {
            servingOf = t;
            servingDown = new HashSet<>(reportedDown);
            servingDrained = new HashSet<>(drained);
            servingDiscovering = discovering;
            serving = ServingFabric.of(t, servingDown, servingDrained, discovering);
        }
        return serving;
    }

    /**
     * True while some live switch has never shown a live fabric link and the discovery grace has
     * not passed since the start: links are still being discovered, so nothing is cut off yet.
     */
    private boolean discovering(Topology t) {
        for (Link l : t.links) {
            if (!reportedDown.contains(l.a) && !reportedDown.contains(l.b) && !l.a.equals(l.b)) {
                everLinked.add(l.a);
                everLinked.add(l.b);
            }
        }
        if (System.nanoTime() - startNanos >= discoveryGrace.toNanos()) {
            return false;
        }
        List<String> unlinked = new ArrayList<>();
        for (Switch s : t.switches) {
            if (!reportedDown.contains(s.id) && !everLinked.contains(s.id)) {
                unlinked.add(s.id);
            }
        }
        if (!unlinked.isEmpty() && !discoveryLogged) {
            discoveryLogged = true;
            LOG.info("discovering the fabric: " + unlinked.size() + " live switches have shown no fabric link yet "
                    + "(e.g. " + unlinked.get(0) + "); none is cut off until each has, or "
                    + discoveryGrace.toSeconds() + " s after the start");
        }
        return !unlinked.isEmpty();
    }

    /** Switches that cannot serve as HMux, with why (the topology source says so, or no SMux can hash as they do). */
    Map<String, String> unfitForHmux() {
        Map<String, String> out = new java.util.TreeMap<>(ports.topology.unfitForHmux());
        if (contracts != null) {
            contracts.noAgreement(topology()).forEach(out::putIfAbsent);
        }
        return out;
    }

    /** Live switches cut off from the served part, with why. */
    Map<String, String> cutOff() {
        return cutOff;
    }

    /** How a down switch is down, after its id in a sentence. */
    String downReason(String sw) {
        String why = cutOff.get(sw);
        return why == null ? " is down" : " counts as down: " + why;
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

    /** The addresses of the live SMuxes of the topology (those with one). */
    List<String> liveSmuxIps() {
        List<String> out = new ArrayList<>();
        for (Smux m : topology().smuxes) {
            if (liveSmuxes.contains(m.id) && m.ip != null) {
                out.add(m.ip);
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
