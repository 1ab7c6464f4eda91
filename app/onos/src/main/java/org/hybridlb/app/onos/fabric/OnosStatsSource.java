package org.hybridlb.app.onos.fabric;

import java.time.Duration;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.port.StatsSource;
import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.stats.CounterSample;
import org.hybridlb.app.core.stats.TrafficMatrixBuilder;
import org.hybridlb.solver.model.TrafficInterval;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRuleService;

/**
 * The app's traffic matrix: {@link #sample} (called every sampling period by the manager) reads
 * ONOS's flow statistics of the app's own rules on the available devices (the HMux entries and the
 * {@code VIP/32} routes, told apart by priority), the SMuxes' per-VIP counters ({@code GET /stats})
 * and the host agents' per-DIP rates, and hands them to the core's {@link TrafficMatrixBuilder},
 * which owns windowing and attribution (hybridlbd feeds the same builder).
 */
public final class OnosStatsSource implements StatsSource {
    private final ApplicationId appId;
    private final FlowRuleService flows;
    private final Predicate<DeviceId> available;
    private final Supplier<FabricView> fabric;
    private final SmuxControl smux;
    private final Supplier<Map<String, Map<String, Double>>> agentRates;
    private final TrafficMatrixBuilder matrix;

    /**
     * {@code available}: whether a device is up (its flow statistics are current);
     * {@code agentRates}: VIP -> DIP -> bytes/s from the host agents; {@code period}: how often the
     * manager samples.
     */
    public OnosStatsSource(ApplicationId appId, FlowRuleService flows, Predicate<DeviceId> available,
                           Supplier<FabricView> fabric, SmuxControl smux,
                           Supplier<Map<String, Map<String, Double>>> agentRates, Duration period) {
        this.appId = appId;
        this.flows = flows;
        this.available = available;
        this.fabric = fabric;
        this.smux = smux;
        this.agentRates = agentRates;
        this.matrix = new TrafficMatrixBuilder(() -> fabric.get().topology(), period);
    }

    @Override
    public TrafficInterval lastInterval() {
        return matrix.last();
    }

    /** Reads the counters now; returns the interval this sample completes, or null. */
    public synchronized TrafficInterval sample(long nowMillis) {
        FabricView view = fabric.get();
        CounterSample.Builder s = CounterSample.at(nowMillis);
        view.switches().forEach((id, spec) -> {
            if (available.test(spec.device)) {
                s.read(id);
            }
        });
        for (FlowEntry e : flows.getFlowEntriesById(appId)) {
            String vip = OnosRules.dstHost(e);
            FabricView.SwitchSpec sw = view.byDevice(e.deviceId()).orElse(null);
            if (vip == null || sw == null || !available.test(e.deviceId())) {
                continue;
            }
            HmuxLayout.Kind kind = HmuxLayout.kindAt(e.priority());
            if (kind == HmuxLayout.Kind.ROUTE) {
                s.routeBytes(vip, sw.sw.id, e.bytes());
            } else if (kind == HmuxLayout.Kind.ENTRY) {
                s.hmuxEntryBytes(vip, sw.sw.id, e.bytes());
            }
        }
        for (String id : view.smuxes().keySet()) {
            Map<String, Long> bytes;
            try {
                bytes = smux.vipBytes(id);
            } catch (RuntimeException e) {
                continue; // an SMux that does not answer counts nothing this time
            }
            bytes.forEach((vip, n) -> s.smuxBytes(vip, id, n));
            s.read(id);
        }
        agentRates.get().forEach((vip, dips) -> dips.forEach((dip, bps) -> s.dipRate(vip, dip, bps)));
        return matrix.add(s.build());
    }
}
