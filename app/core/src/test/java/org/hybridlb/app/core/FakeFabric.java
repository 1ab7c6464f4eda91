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
import org.hybridlb.app.core.hmux.CookieDecode;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.ServiceEntry;
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
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;

/**
 * In-memory switches and SMuxes behind every port: keeps what is installed like a device would,
 * and records every call that changes something, in order, as readable lines.
 */
final class FakeFabric implements TopologySource, HmuxProgrammer, SmuxControl, RouteSource, StatsSource,
        HealthSource, org.hybridlb.app.core.port.HostCookieControl {
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
    /** Called with each switch before a read answers (what a test sees at read-back time). */
    java.util.function.Consumer<String> onInstalledOn = sw -> { };
    /** The next puts fail as if the SMux were unreachable. */
    int failPuts;

    FakeFabric(Topology topology) {
        this.topology = topology;
        topology.smuxes.forEach(m -> live.add(m.id));
    }

    /** The i-th ToR of the topology (the tests' scenarios name switches this way). */
    String tor(int i) {
        List<String> tors = new ArrayList<>();
        topology.switches.stream().filter(s -> s.role == org.hybridlb.solver.model.SwitchRole.TOR)
                .forEach(s -> tors.add(s.id));
        return tors.get(i);
    }

    /** The address of the n-th host under {@code tor}. */
    String hostOn(String tor, int n) {
        return topology.hosts.stream().filter(h -> h.tor.equals(tor)).skip(n).findFirst().orElseThrow().ip;
    }

    /** A VIP document: one tcp/80 service over {@code dips}, in the aggregate 10.100.0.0/16. */
    static String vipJson(String vip, String... dips) {
        StringBuilder d = new StringBuilder();
        for (String ip : dips) {
            d.append(d.length() == 0 ? "" : ",").append("{\"ip\":\"").append(ip).append("\"}");
        }
        return "{\"vip\":\"" + vip + "\",\"aggregate\":\"10.100.0.0/16\",\"ports\":[{\"proto\":\"tcp\",\"port\":80,"
                + "\"dips\":[" + d + "]}]}";
    }

    /** The same for the given hosts of {@code topo} (by index). */
    static String vipJson(Topology topo, String vip, int... hosts) {
        return vipJson(vip, java.util.Arrays.stream(hosts).mapToObj(h -> topo.hosts.get(h).ip).toArray(String[]::new));
    }

    Ports ports(StateStore store) {
        return new Ports(this, this, this, this, this, this, store, this);
    }

    // Host agents' cookie configuration: none unless a test gives hosts agents
    final Set<String> agentHosts = new java.util.TreeSet<>();
    /** Hosts whose agent runs without cookies (answers 404). */
    final Set<String> agentsWithoutCookies = new HashSet<>();
    /** Hosts whose agent cannot be reached (PUT /cookie throws). */
    final Set<String> agentsUnreachable = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Per host, the documents it was sent, in order. */
    final Map<String, List<String>> cookieDocs = new TreeMap<>();

    @Override
    public synchronized Set<String> hosts() {
        return Set.copyOf(agentHosts);
    }

    /** Called with each document as it is sent (a test checks what is on disk by then). */
    volatile java.util.function.BiConsumer<String, String> onCookies = (host, d) -> { };

    @Override
    public synchronized Answer putCookies(String host, String document) {
        if (agentsUnreachable.contains(host)) {
            throw new org.hybridlb.app.core.port.SouthboundException("host agent " + host + " unreachable (test)");
        }
        onCookies.accept(host, document);
        log.add("cookies " + host);
        cookieDocs.computeIfAbsent(host, h -> new ArrayList<>()).add(document);
        return agentsWithoutCookies.contains(host) ? Answer.NO_COOKIES : Answer.TAKEN;
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

    // HMux: the switches as devices holding their intent (entries by VIP, for tests to read and spoil)
    /** Per switch: VIP/32 -> the switch it routes towards. */
    final Map<String, Map<String, String>> routes = new TreeMap<>();
    /** Per switch: aggregate -> SMux ids. */
    final Map<String, Map<String, Set<String>>> aggregatesOn = new TreeMap<>();
    final Set<String> fallbackOn = new HashSet<>();
    /** Per switch: the cookies its entries decode (what a decoding switch was given). */
    final Map<String, Map<ServiceMatch, CookieDecode>> cookiesOn = new TreeMap<>();
    /** Per switch, what it says of itself (default: Open vSwitch's hash, GRE, ids and DIPs kept). */
    final Map<String, SwitchCapability> capabilities = new HashMap<>();
    static final SwitchCapability OVS = new SwitchCapability(
            HashContract.of(HashContract.Selection.OVS_HASH, 0, HashContract.Encap.GRE), true, true, false, Set.of());

    @Override
    public synchronized SwitchCapability capability(String switchId) {
        return capabilities.getOrDefault(switchId, OVS);
    }

    @Override
    public synchronized Map<String, SwitchReading> read(Collection<String> switchIds) {
        Map<String, SwitchReading> out = new LinkedHashMap<>();
        for (String sw : switchIds) {
            reads++;
            try {
                onInstalledOn.accept(sw);
            } catch (RuntimeException e) {
                out.put(sw, SwitchReading.failed(e.getMessage()));
                continue;
            }
            if (down.contains(sw)) {
                out.put(sw, SwitchReading.failed("switch " + sw + " unreachable"));
                continue;
            }
            SwitchIntent.Builder b = SwitchIntent.builder();
            switches.getOrDefault(sw, Map.of()).values().forEach(e -> e.ports.forEach(p -> {
                List<DipBucket> buckets = new ArrayList<>();
                p.dips.forEach(d -> buckets.add(new DipBucket(d.bucketId, d.ip, d.tunnelEndpoint(), d.weight)));
                b.entry(new ServiceMatch(e.vip, p.proto, p.port), buckets);
            }));
            cookiesOn.getOrDefault(sw, Map.of()).forEach((m, c) -> {
                if (b.entries.containsKey(m)) {
                    b.cookies(m, c);
                }
            });
            b.routes.putAll(routes.getOrDefault(sw, Map.of()));
            aggregatesOn.getOrDefault(sw, Map.of()).forEach(b::aggregate);
            b.fallback(fallbackOn.contains(sw));
            // what the switch keeps of a bucket (ids, DIPs) is what it gives back
            out.put(sw, SwitchReading.of(capability(sw).holdable(b.build()).toBuilder().fallback(fallbackOn.contains(sw))
                    .build()));
        }
        return out;
    }

    @Override
    public synchronized void apply(Map<String, SwitchDelta> deltas) {
        Set<String> withdrawn = new LinkedHashSet<>();
        Set<String> withdrawnVips = new LinkedHashSet<>();
        Map<String, Set<String>> aggregateChanges = new LinkedHashMap<>();
        List<String> entryLog = new ArrayList<>();
        for (Map.Entry<String, SwitchDelta> x : deltas.entrySet()) {
            String sw = x.getKey();
            SwitchDelta d = x.getValue();
            withdrawn.addAll(d.withdrawTowards);
            if (!d.withdrawTowards.isEmpty()) {
                withdrawnVips.addAll(d.removeRoutes);
            }
            Map<String, String> r = routes.computeIfAbsent(sw, k -> new TreeMap<>());
            d.removeRoutes.forEach(r::remove);
            r.values().removeIf(d.withdrawTowards::contains);
            r.putAll(d.putRoutes);
            Map<String, Set<String>> a = aggregatesOn.computeIfAbsent(sw, k -> new TreeMap<>());
            d.removeAggregates.forEach(agg -> {
                a.remove(agg);
                aggregateChanges.put(agg, Set.of());
            });
            d.putAggregates.forEach((agg, ids) -> {
                a.put(agg, new LinkedHashSet<>(ids));
                aggregateChanges.put(agg, ids);
            });
            if (d.fallback != null) {
                if (d.fallback) {
                    fallbackOn.add(sw);
                } else {
                    fallbackOn.remove(sw);
                }
            }
            if (d.putEntries.isEmpty() && d.removeEntries.isEmpty()) {
                continue;
            }
            Map<ServiceMatch, CookieDecode> cookies = cookiesOn.computeIfAbsent(sw, k -> new TreeMap<>());
            cookies.keySet().removeAll(d.removeEntries);
            d.putEntries.keySet().forEach(m -> {
                CookieDecode c = d.target == null ? null : d.target.cookies.get(m);
                if (c == null) {
                    cookies.remove(m);
                } else {
                    cookies.put(m, c);
                }
            });
            boolean lie = (sw.equals(lieOn) || "*".equals(lieOn)) && lies > 0 && !d.putEntries.isEmpty();
            Map<String, VipEntry> on = switches.computeIfAbsent(sw, k -> new LinkedHashMap<>());
            for (String vip : d.entryVips()) {
                Map<String, ServiceEntry> services = new TreeMap<>();
                VipEntry was = on.get(vip);
                if (was != null) {
                    was.ports.forEach(p -> services.put(p.key(), p));
                }
                d.removeEntries.stream().filter(m -> m.vip.equals(vip)).forEach(m -> services.remove(m.service()));
                d.putEntries.forEach((m, buckets) -> {
                    if (m.vip.equals(vip)) {
                        List<Bucket> b = new ArrayList<>();
                        buckets.forEach(x2 -> b.add(new Bucket(x2.dip == null ? x2.endpoint : x2.dip, x2.weight,
                                x2.dip == null || x2.dip.equals(x2.endpoint) ? null : x2.endpoint, x2.id)));
                        services.put(m.service(), new ServiceEntry(m.proto, m.port, b));
                    }
                });
                VipEntry now = services.isEmpty() ? null
                        : new VipEntry(vip, null, new ArrayList<>(services.values())).normalized();
                if (now == null) {
                    entryLog.add("remove " + sw + " " + vip);
                    on.remove(vip);
                } else {
                    entryLog.add("install " + sw + " " + now);
                    if (!lie) {
                        on.put(vip, now);
                    }
                }
            }
            if (lie) {
                lies--;
            }
        }
        aggregateChanges.forEach((agg, ids) -> {
            log.add("setSmuxGroup " + agg + " " + ids);
            if (ids.isEmpty()) {
                groups.remove(agg);
            } else {
                groups.put(agg, new LinkedHashSet<>(ids));
            }
        });
        withdrawn.forEach(sw -> log.add("withdrawRoutes " + sw + " " + new ArrayList<>(withdrawnVips)));
        log.addAll(entryLog);
    }

    /** Each SMux's control API on its address (a trailing "/", as operators may write it). */
    @Override
    public String controlUrl(String smuxId) {
        return topology.smuxes.stream().filter(m -> m.id.equals(smuxId)).map(m -> "https://" + m.ip + ":9200/")
                .findFirst().orElse(null);
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
