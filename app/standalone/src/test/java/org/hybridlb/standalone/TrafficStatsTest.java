package org.hybridlb.standalone;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Rates from counter samples: window average, resets, unreadable sources, ToR sources + internet. */
class TrafficStatsTest {
    @TempDir
    Path dir;

    TrafficStats stats(List<Map<String, Long>> samples) throws Exception {
        ModelIo.write(dir.resolve("topology.json"), FatTree.generate(new FatTree.Params().k(2).smuxTors(List.of())));
        Files.writeString(dir.resolve("fabric.json"), "{\"topology\": \"topology.json\", \"ovs\": {\"rundir\": \"/nonexistent\"},"
                + " \"switches\": {\"core-0\": {\"bridge\": \"b1\", \"location\": 1}, \"agg-0-0\": {\"bridge\": \"b2\", \"location\": 2},"
                + " \"agg-1-0\": {\"bridge\": \"b3\", \"location\": 3}, \"tor-0-0\": {\"bridge\": \"b4\", \"location\": 4},"
                + " \"tor-1-0\": {\"bridge\": \"b5\", \"location\": 5}}, \"hosts\": {}}");
        Fabric f = Fabric.load(dir.resolve("fabric.json"));
        List<Map<String, Long>> left = new ArrayList<>(samples);
        return new TrafficStats(f, null, null, Set::of, 100) {
            @Override
            Map<String, Long> counters() {
                return left.remove(0);
            }
        };
    }

    static Map<String, Long> sample(Object... kv) {
        Map<String, Long> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], ((Number) kv[i + 1]).longValue());
        }
        return m;
    }

    static VipTraffic vip(TrafficInterval t, String v) {
        return t.vips.stream().filter(x -> x.vip.equals(v)).findFirst().orElse(null);
    }

    @Test
    void ratesOverTheWindowWithResetsAndGaps() throws Exception {
        TrafficStats s = stats(List.of(
                sample("ok|core-0", 1, "ok|tor-0-0", 1, "ok|smux-0", 1,
                        "hmux|10.100.0.1|core-0", 1000, "route|10.100.0.1|tor-0-0", 400, "smux|10.100.0.2|smux-0", 5000),
                // the HMux flow was re-added (counter from zero), the SMux was not readable
                sample("ok|core-0", 1, "ok|tor-0-0", 1,
                        "hmux|10.100.0.1|core-0", 300, "route|10.100.0.1|tor-0-0", 600),
                // the SMux is back: its counter is not "new", so its jump is not counted
                sample("ok|core-0", 1, "ok|tor-0-0", 1, "ok|smux-0", 1,
                        "hmux|10.100.0.1|core-0", 800, "route|10.100.0.1|tor-0-0", 700, "smux|10.100.0.2|smux-0", 9000,
                        "hmux|10.100.0.3|core-0", 50)));
        s.poll();
        assertNull(s.lastInterval(), "one sample is no rate");
        s.poll();
        s.poll();
        TrafficInterval t = s.lastInterval();
        // 10.100.0.1: 300 (from zero) + 500 = 800 bytes over the window
        VipTraffic v1 = vip(t, "10.100.0.1");
        VipTraffic v3 = vip(t, "10.100.0.3");
        double window = 800 / v1.totalBps();
        assertEquals(50 / window, v3.totalBps(), 1e-6, "a new flow on a switch read last time counts whole");
        assertEquals(300 / window, v1.sources.get("tor-0-0"), 1e-6, "ToR route growth is the ToR's share");
        assertEquals(500 / window, v1.sources.get(VipTraffic.INTERNET), 1e-6, "the rest enters from outside");
        assertNull(vip(t, "10.100.0.2"), "an SMux that came back: its counter jump is not traffic");
        assertEquals(Map.of("10.100.0.1", 800 / window, "10.100.0.3", 50 / window).keySet(),
                Set.copyOf(s.lastSplit().keySet()));
    }
}
