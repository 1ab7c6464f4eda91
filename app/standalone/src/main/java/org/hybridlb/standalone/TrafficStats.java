package org.hybridlb.standalone;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.hybridlb.app.core.port.StatsSource;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.standalone.http.SmuxHttpControl;
import org.hybridlb.standalone.ovs.Ovs;
import org.hybridlb.standalone.ovs.OvsDump;

/**
 * The traffic matrix, measured every interval as byte rates (counter deltas / elapsed time):
 * <ul>
 * <li>HMux share of a VIP: the byte counters of its HMux entries on the switches (OVS);</li>
 * <li>SMux share: {@code hlb_smux_vip_bytes_total} of every SMux ({@code /metrics});</li>
 * <li>by DIP: the host agents' {@code /stats} (bytes/s decapsulated per VIP on that DIP);</li>
 * <li>by source: the byte counters of the VIP's {@code /32} routes on the ToRs (traffic entering
 *     there towards the HMux); what no ToR route saw is attributed to {@code internet}.</li>
 * </ul>
 * Rates are averaged over the last {@link #WINDOW_MS} ms of samples (at least one interval), so
 * that second-to-second noise does not make the assignment swap VIPs of similar rates back and
 * forth; a counter that went down (its flow was re-added) counts from zero.
 */
public class TrafficStats implements StatsSource, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(TrafficStats.class.getName());
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern SMUX_VIP = Pattern.compile("^hlb_smux_vip_bytes_total\\{vip=\"([0-9.]+)\"[^}]*\\}\\s+(\\d+)", Pattern.MULTILINE);

    private final Fabric fabric;
    private final Ovs ovs;
    private final SmuxHttpControl smux;
    private final Supplier<Set<String>> down;
    private final HttpClient http;
    private final Duration timeout;
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "hybridlb-stats");
        t.setDaemon(true);
        return t;
    });
    static final long WINDOW_MS = 5000;
    /** Counter samples (time, counters), oldest first, covering the window. */
    private final java.util.ArrayDeque<Map.Entry<Long, Map<String, Long>>> samples = new java.util.ArrayDeque<>();
    private long intervalMillis = 1000;
    /** No interval before the samples span this long (set by {@link #start}): no noisy first rate. */
    private long minSpanMillis;
    private int index;
    private volatile TrafficInterval last;
    private volatile Map<String, double[]> lastSplit = Map.of();
    private boolean warned;

    public TrafficStats(Fabric fabric, Ovs ovs, SmuxHttpControl smux, Supplier<Set<String>> down, long timeoutMillis) {
        this.fabric = fabric;
        this.ovs = ovs;
        this.smux = smux;
        this.down = down;
        this.timeout = Duration.ofMillis(timeoutMillis);
        this.http = HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).build();
    }

    public void start(Duration interval) {
        long ms = interval.toMillis();
        intervalMillis = ms;
        minSpanMillis = Math.min(WINDOW_MS, 3 * ms);
        poller.scheduleWithFixedDelay(this::poll, 0, ms, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        poller.shutdownNow();
    }

    @Override
    public TrafficInterval lastInterval() {
        return last;
    }

    /** VIP -> {HMux bytes/s, SMux bytes/s} of the last interval. */
    public Map<String, double[]> lastSplit() {
        return lastSplit;
    }

    void poll() {
        try {
            Map<String, Long> now = counters();
            long t = System.nanoTime();
            samples.addLast(Map.entry(t, now));
            long keep = Math.max(WINDOW_MS, intervalMillis) * 1_000_000L;
            while (samples.size() > 2 && t - samples.peekFirst().getKey() > keep) {
                samples.removeFirst();
            }
            if (samples.size() >= 2 && t - samples.peekFirst().getKey() >= minSpanMillis * 1_000_000L) {
                last = interval(deltas(), (t - samples.peekFirst().getKey()) / 1e9);
            }
            warned = false;
        } catch (RuntimeException e) {
            if (!warned) {
                LOG.warning("measuring traffic: " + e.getMessage());
                warned = true;
            }
        }
    }

    /** Every counter, keyed "hmux|vip|switch", "route|vip|tor", "smux|vip|smux", "dip|vip|dip" (agent rates). */
    Map<String, Long> counters() {
        Map<String, Long> c = new HashMap<>();
        Set<String> dn = down.get();
        for (org.hybridlb.solver.model.Switch t : fabric.topology.switches) {
            Fabric.SwitchInfo s = fabric.switches.get(t.id);
            if (dn.contains(s.id)) {
                continue;
            }
            String text;
            try {
                text = ovs.dumpFlows(s.bridge, fabric.cookie, fabric.cookieMask);
            } catch (RuntimeException e) {
                continue; // a switch that cannot be read counts nothing this interval
            }
            c.put("ok|" + s.id, 1L);
            for (OvsDump.Flow f : OvsDump.flows(text)) {
                String v = f.match.get("nw_dst");
                int kind = (int) (f.cookie & 0xf);
                if (v == null) {
                    continue;
                }
                if (kind == 1) {
                    c.merge("hmux|" + v + "|" + s.id, f.bytes, Long::sum);
                } else if (kind == 2 && isTor(s.id)) {
                    c.merge("route|" + v + "|" + s.id, f.bytes, Long::sum);
                }
            }
        }
        for (String id : fabric.smuxes.keySet()) {
            try {
                Matcher m = SMUX_VIP.matcher(smux.metrics(id));
                c.put("ok|" + id, 1L);
                while (m.find()) {
                    c.merge("smux|" + m.group(1) + "|" + id, Long.parseLong(m.group(2)), Long::sum);
                }
            } catch (RuntimeException e) {
                // an SMux that does not answer carries nothing we can count
            }
        }
        return c;
    }

    private boolean isTor(String switchId) {
        for (org.hybridlb.solver.model.Switch s : fabric.topology.switches) {
            if (s.id.equals(switchId)) {
                return s.role == SwitchRole.TOR;
            }
        }
        return false;
    }

    /** Per counter, the growth over the window: sum of the steps, a step down counting from zero. */
    private Map<String, Long> deltas() {
        Map<String, Long> sum = new HashMap<>();
        Map<String, Long> prev = null;
        for (Map.Entry<Long, Map<String, Long>> s : samples) {
            if (prev != null) {
                for (Map.Entry<String, Long> e : s.getValue().entrySet()) {
                    String k = e.getKey();
                    if (k.startsWith("ok|")) {
                        continue;
                    }
                    Long before = prev.get(k);
                    long d;
                    if (before == null) {
                        // new flow or new VIP on a source that was read last time: all of it is new;
                        // a source that could not be read last time: unknown, count nothing
                        d = prev.containsKey("ok|" + k.substring(k.lastIndexOf('|') + 1)) ? e.getValue() : 0;
                    } else {
                        d = e.getValue() < before ? e.getValue() : e.getValue() - before;
                    }
                    sum.merge(k, d, Long::sum);
                }
            }
            prev = s.getValue();
        }
        return sum;
    }

    private TrafficInterval interval(Map<String, Long> growth, double dt) {
        Map<String, Double> hmux = new TreeMap<>();
        Map<String, Double> smuxBps = new TreeMap<>();
        Map<String, Map<String, Double>> sources = new TreeMap<>();
        for (Map.Entry<String, Long> e : growth.entrySet()) {
            long d = e.getValue();
            if (d <= 0 || dt <= 0) {
                continue;
            }
            double rate = d / dt;
            String[] k = e.getKey().split("\\|");
            switch (k[0]) {
                case "hmux": hmux.merge(k[1], rate, Double::sum); break;
                case "smux": smuxBps.merge(k[1], rate, Double::sum); break;
                case "route": sources.computeIfAbsent(k[1], x -> new TreeMap<>()).merge(k[2], rate, Double::sum); break;
                default:
            }
        }
        Map<String, Map<String, Double>> byDip = agentRates();
        Set<String> vips = new TreeSet<>(hmux.keySet());
        vips.addAll(smuxBps.keySet());
        vips.addAll(byDip.keySet());
        List<VipTraffic> out = new ArrayList<>();
        Map<String, double[]> split = new LinkedHashMap<>();
        for (String v : vips) {
            double h = hmux.getOrDefault(v, 0.0);
            double s = smuxBps.getOrDefault(v, 0.0);
            double total = h + s;
            Map<String, Double> dips = byDip.getOrDefault(v, Map.of());
            if (total <= 0) {
                total = dips.values().stream().mapToDouble(Double::doubleValue).sum();
            }
            if (total <= 0) {
                continue;
            }
            split.put(v, new double[] {h, s});
            Map<String, Double> src = new TreeMap<>();
            double seen = 0;
            for (Map.Entry<String, Double> e : sources.getOrDefault(v, Map.of()).entrySet()) {
                double r = Math.min(e.getValue(), total - seen);
                if (r > 0) {
                    src.put(e.getKey(), r);
                    seen += r;
                }
            }
            if (total - seen > 0) {
                src.put(VipTraffic.INTERNET, total - seen);
            }
            out.add(new VipTraffic(v, src, dips));
        }
        lastSplit = split;
        long secs = Math.max(1, Math.round(dt));
        return new TrafficInterval(index++, System.currentTimeMillis() / 1000 - secs, secs, out);
    }

    /** VIP -> DIP -> bytes/s as the host agents compute them ({@code /stats}). */
    private Map<String, Map<String, Double>> agentRates() {
        Map<String, Map<String, Double>> out = new TreeMap<>();
        for (Fabric.HostInfo h : fabric.hosts.values()) {
            if (h.agentUrl == null) {
                continue;
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(h.agentUrl.replaceAll("/+$", "") + "/stats"))
                        .timeout(timeout).GET().build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 200) {
                    continue;
                }
                JsonNode root = JSON.readTree(r.body());
                JsonNode d = root.get("dip");
                String dip = d != null && d.isTextual() ? d.asText() : h.ip;
                for (Iterator<Map.Entry<String, JsonNode>> it = root.path("vips").fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = it.next();
                    double bps = e.getValue().path("bytes_per_s").asDouble(0);
                    if (bps > 0) {
                        out.computeIfAbsent(e.getKey(), x -> new TreeMap<>()).merge(dip, bps, Double::sum);
                    }
                }
            } catch (Exception e) {
                // an agent that does not answer reports nothing this interval
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                    return out;
                }
            }
        }
        return out;
    }
}
