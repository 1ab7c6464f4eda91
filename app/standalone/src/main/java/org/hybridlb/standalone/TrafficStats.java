package org.hybridlb.standalone;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.logging.Logger;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.port.StatsSource;
import org.hybridlb.app.core.stats.CounterSample;
import org.hybridlb.app.core.stats.HostAgentStats;
import org.hybridlb.app.core.stats.TrafficMatrixBuilder;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.standalone.ovs.Ovs;
import org.hybridlb.standalone.ovs.OvsCounters;

/**
 * hybridlbd's traffic matrix: every sampling period it reads the counters of the controller's
 * flows on every live switch (OVS), the SMuxes' per-VIP counters ({@code GET /stats}) and the
 * host agents' per-DIP rates, and hands them to the core's {@link TrafficMatrixBuilder}, which
 * owns windowing and attribution (the ONOS app feeds the same builder).
 */
public final class TrafficStats implements StatsSource, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(TrafficStats.class.getName());

    private final Fabric fabric;
    private final Function<Fabric.SwitchInfo, String> dumpFlows;
    private final SmuxControl smux;
    private final Supplier<Map<String, Map<String, Double>>> agentRates;
    private final Supplier<Set<String>> down;
    private final Duration period;
    private final TrafficMatrixBuilder matrix;
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "hybridlb-stats");
        t.setDaemon(true);
        return t;
    });
    private boolean warned;

    /**
     * {@code dumpFlows}: the controller's flows of a switch with counters ({@code dump-flows} text);
     * {@code agentRates}: VIP -> DIP -> bytes/s from the host agents; {@code period}: how often to sample.
     */
    public TrafficStats(Fabric fabric, Function<Fabric.SwitchInfo, String> dumpFlows, SmuxControl smux,
                        Supplier<Map<String, Map<String, Double>>> agentRates, Supplier<Set<String>> down,
                        Duration period) {
        this.fabric = fabric;
        this.dumpFlows = dumpFlows;
        this.smux = smux;
        this.agentRates = agentRates;
        this.down = down;
        this.period = period;
        this.matrix = new TrafficMatrixBuilder(() -> fabric.topology, period);
    }

    /** The daemon's: OVS's flow counters, the SMuxes' {@code /stats}, the host agents' {@code /stats}. */
    public static TrafficStats of(Fabric fabric, Ovs ovs, SmuxControl smux, Supplier<Set<String>> down,
                                  Duration period, Duration httpTimeout, java.net.http.HttpClient mgmt) {
        Map<String, String> agents = new TreeMap<>();
        fabric.hosts.values().forEach(h -> {
            if (h.agentUrl != null) {
                agents.put(h.ip, h.agentUrl);
            }
        });
        HostAgentStats agentStats = new HostAgentStats(() -> agents, httpTimeout, () -> mgmt);
        return new TrafficStats(fabric, s -> ovs.dumpFlows(s.bridge, fabric.cookie, fabric.cookieMask), smux,
                agentStats::rates, down, period);
    }

    public void start() {
        poller.scheduleWithFixedDelay(this::poll, 0, period.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        poller.shutdownNow();
    }

    @Override
    public TrafficInterval lastInterval() {
        return matrix.last();
    }

    private void poll() {
        try {
            sample(System.currentTimeMillis());
            warned = false;
        } catch (RuntimeException e) {
            if (!warned) {
                LOG.warning("measuring traffic: " + e.getMessage());
                warned = true;
            }
        }
    }

    /** Reads every counter now; returns the interval this sample completes, or null. */
    public TrafficInterval sample(long atMillis) {
        CounterSample.Builder s = CounterSample.at(atMillis);
        Set<String> dn = down.get();
        for (Switch t : fabric.topology.switches) {
            if (dn.contains(t.id) || fabric.switches.get(t.id).p4 != null) {
                continue; // P4 switches: no OpenFlow counters
            }
            String flows;
            try {
                flows = dumpFlows.apply(fabric.switches.get(t.id));
            } catch (RuntimeException e) {
                continue; // a switch that cannot be read counts nothing this time
            }
            OvsCounters.add(s, t.id, flows);
        }
        for (String id : fabric.smuxes.keySet()) {
            Map<String, Long> bytes;
            try {
                bytes = smux.vipBytes(id);
            } catch (RuntimeException e) {
                continue; // an SMux that does not answer carries nothing we can count
            }
            bytes.forEach((vip, n) -> s.smuxBytes(vip, id, n));
            s.read(id);
        }
        agentRates.get().forEach((vip, dips) -> dips.forEach((dip, bps) -> s.dipRate(vip, dip, bps)));
        return matrix.add(s.build());
    }
}
