package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.HealthSource;
import org.hybridlb.app.core.port.HmuxProgrammer;
import org.hybridlb.app.core.port.Ports;
import org.hybridlb.app.core.port.RouteSource;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.app.core.port.StateStore;
import org.hybridlb.app.core.port.StatsSource;
import org.hybridlb.app.core.port.TopologySource;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;

/**
 * In-memory switches and SMuxes behind every port: keeps what is installed like a device would,
 * and records every call that changes something, in order, as readable lines.
 */
final class FakeFabric implements TopologySource, HmuxProgrammer, SmuxControl, RouteSource, StatsSource,
        HealthSource {
    /** The fabric as the topology source reports it; tests replace it (links lost, a fabric cut). */
    volatile Topology topology;
    final List<String> log = new ArrayList<>();
    final Map<String, Map<String, VipEntry>> switches = new TreeMap<>();
    final Map<String, Set<String>> groups = new TreeMap<>();
    final Map<String, SmuxTable> tables = new TreeMap<>();
    final Set<String> live = new LinkedHashSet<>();
    final Set<String> down = new HashSet<>();
    final Set<String> unhealthy = new HashSet<>();
    TrafficInterval traffic;
    /** Installs on this switch ({@code *}: any) "succeed" without taking effect, this many times (a lying device). */
    String lieOn;
    int lies;
    int reads;
    /** Called with the switch before each {@code installedOn} answers (what a test sees at read-back time). */
    java.util.function.Consumer<String> onInstalledOn = sw -> { };
    /** The next puts fail as if the SMux were unreachable. */
    int failPuts;

    FakeFabric(Topology topology) {
        this.topology = topology;
        topology.smuxes.forEach(m -> live.add(m.id));
    }

    /** A tcp/80 VIP in aggregate 10.100.0.0/16 whose DIPs are the given hosts of {@code topo}, as REST JSON. */
    static String vipJson(Topology topo, String vip, int... hosts) {
        StringBuilder d = new StringBuilder();
        for (int h : hosts) {
            d.append(d.length() == 0 ? "" : ",").append("{\"ip\":\"").append(topo.hosts.get(h).ip).append("\"}");
        }
        return "{\"vip\":\"" + vip + "\",\"aggregate\":\"10.100.0.0/16\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,\"dips\":["
                + d + "]}]}";
    }

    Ports ports(StateStore store) {
        return new Ports(this, this, this, this, this, this, store);
    }

    @Override
    public void subscribe(org.hybridlb.app.core.port.EventSink sink) {
        // events are delivered by the tests themselves
    }

    // topology
    @Override
    public Topology topology() {
        return topology;
    }

    @Override
    public Set<String> downSwitches() {
        return new HashSet<>(down);
    }

    // HMux
    @Override
    public synchronized void install(String switchId, VipEntry entry) {
        log.add("install " + switchId + " " + entry);
        if ((switchId.equals(lieOn) || "*".equals(lieOn)) && lies > 0) {
            lies--;
            return;
        }
        switches.computeIfAbsent(switchId, k -> new LinkedHashMap<>()).put(entry.vip, entry);
    }

    @Override
    public synchronized void remove(String switchId, String vip) {
        log.add("remove " + switchId + " " + vip);
        switches.getOrDefault(switchId, new LinkedHashMap<>()).remove(vip);
    }

    @Override
    public synchronized void withdrawRoutes(String switchId, Collection<String> vips) {
        log.add("withdrawRoutes " + switchId + " " + new ArrayList<>(vips));
    }

    @Override
    public synchronized void setSmuxGroup(String aggregate, List<Smux> smuxes) {
        Set<String> ids = new LinkedHashSet<>();
        smuxes.forEach(m -> ids.add(m.id));
        log.add("setSmuxGroup " + aggregate + " " + ids);
        if (ids.isEmpty()) {
            groups.remove(aggregate);
        } else {
            groups.put(aggregate, ids);
        }
    }

    @Override
    public synchronized Map<String, VipEntry> installedOn(String switchId) {
        reads++;
        onInstalledOn.accept(switchId);
        if (down.contains(switchId)) {
            throw new SouthboundException("switch " + switchId + " unreachable");
        }
        return new LinkedHashMap<>(switches.getOrDefault(switchId, Map.of()));
    }

    @Override
    public synchronized Map<String, Set<String>> smuxGroups() {
        reads++;
        Map<String, Set<String>> out = new TreeMap<>();
        groups.forEach((k, v) -> out.put(k, new LinkedHashSet<>(v)));
        return out;
    }

    // SMux
    @Override
    public synchronized void putTable(String smuxId, SmuxTable table) {
        StringBuilder s = new StringBuilder("put " + smuxId + " v" + table.version);
        table.vips.forEach(e -> {
            s.append(" ").append(e.vip).append("[");
            List<String> dips = new ArrayList<>();
            e.ports.forEach(p -> p.dips.forEach(d -> dips.add(p.proto + "/" + p.port + ":" + d)));
            s.append(String.join(",", new LinkedHashSet<>(dips))).append("]");
        });
        log.add(s.toString());
        if (failPuts > 0) {
            failPuts--;
            throw new SouthboundException("SMux " + smuxId + " unreachable");
        }
        SmuxTable running = tables.get(smuxId);
        if (running != null && table.version <= running.version) {
            throw new SouthboundException("409 stale version");
        }
        tables.put(smuxId, table);
    }

    @Override
    public synchronized SmuxTable getTable(String smuxId) {
        reads++;
        return tables.getOrDefault(smuxId, new SmuxTable(0, List.of()));
    }

    /** Per SMux, per VIP: pinned connections an HMux would move (what the SMuxes report). */
    final Map<String, Map<String, Long>> diverging = new HashMap<>();

    @Override
    public synchronized Map<String, Long> divergingConnections(String smuxId) {
        reads++;
        return new HashMap<>(diverging.getOrDefault(smuxId, Map.of()));
    }

    // sources
    @Override
    public synchronized Set<String> liveSmuxes() {
        return new LinkedHashSet<>(live);
    }

    @Override
    public synchronized TrafficInterval lastInterval() {
        return traffic;
    }

    @Override
    public synchronized Set<String> unhealthyDips() {
        return new HashSet<>(unhealthy);
    }

    synchronized List<String> takeLog() {
        List<String> out = new ArrayList<>(log);
        log.clear();
        return out;
    }

    /** A store in memory. */
    static final class MemoryStore implements StateStore {
        String json;
        /** A full disk: every save fails. */
        boolean broken;

        @Override
        public Optional<String> load() {
            return Optional.ofNullable(json);
        }

        @Override
        public void save(String text) {
            if (broken) {
                throw new java.io.UncheckedIOException(new java.io.IOException("No space left on device"));
            }
            json = text;
        }
    }
}
