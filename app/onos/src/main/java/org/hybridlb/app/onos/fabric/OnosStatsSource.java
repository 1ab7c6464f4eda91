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
 * bytes/s. What the SMuxes carry comes from their {@code hlb_smux_vip_bytes_total} counters
 * ({@code /metrics}); its source switch is unknown there (the aggregate is ECMP-routed to them), so
 * it counts as {@link VipTraffic#INTERNET}, as in hybridlbd.
 */
public final class OnosStatsSource implements StatsSource {
    private final ApplicationId appId;
    private final FlowRuleService flows;
    private final Supplier<FabricView> fabric;
    private final SmuxMetrics smuxMetrics;
    private final Map<String, Long> lastBytes = new HashMap<>();
    private long lastMillis = -1;
    private int index;
    private volatile TrafficInterval last;

    public OnosStatsSource(ApplicationId appId, FlowRuleService flows, Supplier<FabricView> fabric) {
        this(appId, flows, fabric, null);
    }

    /** {@code smuxMetrics} null: the SMuxes are not read. */
    public OnosStatsSource(ApplicationId appId, FlowRuleService flows, Supplier<FabricView> fabric,
                           SmuxMetrics smuxMetrics) {
        this.appId = appId;
        this.flows = flows;
        this.fabric = fabric;
        this.smuxMetrics = smuxMetrics;
    }

    private static final java.util.regex.Pattern SMUX_VIP_BYTES = java.util.regex.Pattern.compile(
            "^hlb_smux_vip_bytes_total\\{([^}]*)\\}\\s+(\\d+)", java.util.regex.Pattern.MULTILINE);
    private static final java.util.regex.Pattern VIP_LABEL = java.util.regex.Pattern.compile("vip=\"([0-9.]+)\"");

    /** Bytes/s per VIP over all SMuxes; counters are kept per SMux and label set in {@code now}. */
    private Map<String, Double> smuxRates(FabricView view, double seconds, Map<String, Long> now) {
        Map<String, Double> out = new TreeMap<>();
        if (smuxMetrics == null) {
            return out;
        }
        for (String id : view.smuxes().keySet()) {
            String text;
            try {
                text = smuxMetrics.metrics(id);
            } catch (RuntimeException e) {
                continue;   // an SMux that does not answer counts nothing this interval
            }
            java.util.regex.Matcher m = SMUX_VIP_BYTES.matcher(text);
            while (m.find()) {
                java.util.regex.Matcher v = VIP_LABEL.matcher(m.group(1));
                if (!v.find()) {
                    continue;
                }
                String key = "smux|" + id + "|" + m.group(1);
                long bytes = Long.parseLong(m.group(2));
                now.put(key, bytes);
                Long before = lastBytes.get(key);
                double rate = seconds > 0 && before != null && bytes >= before ? (bytes - before) / seconds : 0;
                out.merge(v.group(1), rate, Double::sum);
            }
        }
        return out;
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
        Map<String, Double> smux = smuxRates(view, seconds, now);
        lastBytes.clear();
        lastBytes.putAll(now);
        long start = lastMillis;
        lastMillis = nowMillis;
        if (seconds <= 0) {
            return null;
        }
        List<VipTraffic> vips = new ArrayList<>();
        java.util.Set<String> all = new java.util.TreeSet<>(balanced.keySet());
        all.addAll(smux.keySet());
        for (String vip : all) {
            Map<String, Double> sources = new TreeMap<>();
            if (balanced.containsKey(vip)) {
                sources.putAll(routed.getOrDefault(vip, Map.of()));
                double viaRoutes = sources.values().stream().mapToDouble(Double::doubleValue).sum();
                double local = balanced.get(vip) - viaRoutes;
                if (local > 0) {
                    sources.merge(hmuxOf.get(vip), local, Double::sum);
                }
            }
            double viaSmux = smux.getOrDefault(vip, 0.0);
            if (viaSmux > 0) {
                sources.merge(VipTraffic.INTERNET, viaSmux, Double::sum);
            }
            if (!sources.isEmpty()) {
                vips.add(new VipTraffic(vip, sources, null));
            }
        }
        last = new TrafficInterval(index++, start / 1000, Math.round(seconds), vips);
        return last;
    }
}
