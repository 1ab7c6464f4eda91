package org.hybridlb.app.onos.fabric;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.hybridlb.app.core.port.StatsSource;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRuleService;

/**
 * Traffic per VIP from ONOS's flow statistics of the app's own rules: the {@code VIP/32} route on a
 * switch counts what that switch sends toward the HMux (the source is that switch); the HMux entry
 * counts everything the HMux balances, and what is left after the routed share entered at the HMux
 * itself. {@link #sample()} (called every interval by the manager) turns byte counters into
 * bytes/s. VIPs served by the SMuxes are counted by the SMuxes, not here.
 */
public final class OnosStatsSource implements StatsSource {
    private final ApplicationId appId;
    private final FlowRuleService flows;
    private final Supplier<FabricView> fabric;
    private final Map<String, Long> lastBytes = new HashMap<>();
    private long lastMillis = -1;
    private int index;
    private volatile TrafficInterval last;

    public OnosStatsSource(ApplicationId appId, FlowRuleService flows, Supplier<FabricView> fabric) {
        this.appId = appId;
        this.flows = flows;
        this.fabric = fabric;
    }

    @Override
    public TrafficInterval lastInterval() {
        return last;
    }

    /** Reads the counters now; from the second call on, publishes the interval since the last one. */
    public synchronized TrafficInterval sample(long nowMillis) {
        FabricView view = fabric.get();
        Map<String, Map<String, Double>> routed = new TreeMap<>();
        Map<String, Double> balanced = new TreeMap<>();
        Map<String, String> hmuxOf = new HashMap<>();
        double seconds = lastMillis < 0 ? 0 : (nowMillis - lastMillis) / 1000.0;
        Map<String, Long> now = new HashMap<>();
        for (FlowEntry e : flows.getFlowEntriesById(appId)) {
            String vip = OnosHmuxProgrammer.dstHost(e);
            String sw = view.byDevice(e.deviceId()).map(s -> s.sw.id).orElse(null);
            if (vip == null || sw == null) {
                continue;
            }
            String key = e.deviceId() + "|" + e.id();
            now.put(key, e.bytes());
            Long before = lastBytes.get(key);
            double rate = seconds > 0 && before != null && e.bytes() >= before ? (e.bytes() - before) / seconds : 0;
            if (e.priority() == OnosHmuxProgrammer.PRIORITY_ROUTE) {
                routed.computeIfAbsent(vip, k -> new TreeMap<>()).merge(sw, rate, Double::sum);
            } else if (e.priority() >= OnosHmuxProgrammer.PRIORITY_HMUX) {
                balanced.merge(vip, rate, Double::sum);
                hmuxOf.put(vip, sw);
            }
        }
        lastBytes.clear();
        lastBytes.putAll(now);
        long start = lastMillis;
        lastMillis = nowMillis;
        if (seconds <= 0) {
            return null;
        }
        List<VipTraffic> vips = new ArrayList<>();
        for (Map.Entry<String, Double> b : balanced.entrySet()) {
            Map<String, Double> sources = new TreeMap<>(routed.getOrDefault(b.getKey(), Map.of()));
            double viaRoutes = sources.values().stream().mapToDouble(Double::doubleValue).sum();
            double local = b.getValue() - viaRoutes;
            if (local > 0) {
                sources.merge(hmuxOf.get(b.getKey()), local, Double::sum);
            }
            if (!sources.isEmpty()) {
                vips.add(new VipTraffic(b.getKey(), sources, null));
            }
        }
        last = new TrafficInterval(index++, start / 1000, Math.round(seconds), vips);
        return last;
    }
}
