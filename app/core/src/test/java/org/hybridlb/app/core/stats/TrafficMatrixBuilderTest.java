package org.hybridlb.app.core.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.junit.jupiter.api.Test;

/**
 * The traffic-matrix rule (windowing, counter restarts, unreadable sources, attribution, DIP
 * shares), and the pinned matrix and placement of the shared fixture that every host's adapter must
 * reproduce. Regenerate the pinned files (after a deliberate rule change only) with
 * {@code -Dtraffic.golden.write=true}.
 */
class TrafficMatrixBuilderTest {
    static final String INTERNET = VipTraffic.INTERNET;
    final Topology topo = TrafficFixture.topology();

    static final double U = TrafficFixture.UNIT;

    static VipTraffic vip(TrafficInterval t, String v) {
        return t.vips.stream().filter(x -> x.vip.equals(v)).findFirst().orElse(null);
    }

    @Test
    void theFixtureGivesTheMatrixTheRuleSays() throws IOException {
        TrafficMatrixBuilder b = new TrafficMatrixBuilder(() -> topo, TrafficFixture.PERIOD);
        List<TrafficFixture.Reading> readings = TrafficFixture.readings();
        for (int i = 0; i < 3; i++) {
            assertNull(b.add(readings.get(i).sample()), "no interval before the samples span the window");
        }
        TrafficInterval t = b.add(readings.get(3).sample());
        assertNotNull(t);
        assertEquals(6, t.durationSeconds);
        assertEquals(TrafficFixture.T0 / 1000, t.startSeconds);
        // .1 on a ToR HMux: ToR routes are sources, transit routes are not, the rest is the HMux's own
        // hosts; tor-2-0 was not read in the second reading: only its growth from the third counts
        assertEquals(Map.of("tor-0-0", 600 * U, "tor-2-0", 100 * U, "tor-1-0", 2300 * U), vip(t, "10.100.0.1").sources);
        // ... and its agents' rates (1000 + 3000 units) only split its 3000 units/s
        assertEquals(Map.of("10.0.0.129", 750 * U, "10.0.1.1", 2250 * U), vip(t, "10.100.0.1").dips);
        // .2 on an agg HMux: a restarted route counter counts from 0; the rest came from outside the ToRs
        assertEquals(Map.of("tor-2-1", 700 * U, INTERNET, 1300 * U), vip(t, "10.100.0.2").sources);
        assertEquals(Map.of(), vip(t, "10.100.0.2").dips, "no agent reported it: split by weight");
        // .3 on the SMuxes: smux-1's growth while it did not answer (and its jump after) is not traffic
        assertEquals(Map.of(INTERNET, 1700 * U), vip(t, "10.100.0.3").sources);
        assertEquals(Map.of("10.0.1.129", 850 * U, "10.0.1.130", 850 * U), vip(t, "10.100.0.3").dips);
        // .4: only the agents saw it
        assertEquals(Map.of(INTERNET, 600 * U), vip(t, "10.100.0.4").sources);
        assertEquals(Map.of("10.0.1.193", 400 * U, "10.0.1.194", 200 * U), vip(t, "10.100.0.4").dips);
        // .5: a new entry on a switch read the time before counts whole
        assertEquals(Map.of("tor-3-1", 300 * U), vip(t, "10.100.0.5").sources);
        // .6: a ToR route never carries more than the HMux balanced
        assertEquals(Map.of("tor-0-1", 300 * U), vip(t, "10.100.0.6").sources);
        assertEquals(6, t.vips.size());

        pin(TrafficFixture.MATRIX, TrafficFixture.json(t));
        pin(TrafficFixture.PLACEMENT, TrafficFixture.json(TrafficFixture.placement(t)));
    }

    /** Compares {@code actual} with the pinned resource (or writes it, with -Dtraffic.golden.write=true). */
    static void pin(String resource, String actual) throws IOException {
        if (Boolean.getBoolean("traffic.golden.write")) {
            Path file = Path.of("src/test/resources", resource);
            Files.createDirectories(file.getParent());
            Files.writeString(file, actual);
            return;
        }
        assertEquals(TrafficFixture.resource(resource), actual, resource);
    }

    @Test
    void aSlowPeriodPublishesFromTheSecondSampleAndForgetsWhatTheWindowLeft() {
        TrafficMatrixBuilder b = new TrafficMatrixBuilder(() -> topo, Duration.ofSeconds(10));
        assertNull(b.add(CounterSample.at(1_000_000).read("smux-1").smuxBytes("10.100.0.1", "smux-1", 1_000)
                .smuxBytes("10.100.0.9", "smux-1", 5).build()), "one sample is no rate");
        TrafficInterval t = b.add(CounterSample.at(1_010_000).read("smux-1")
                .smuxBytes("10.100.0.1", "smux-1", 1_000 + 2_000_000_000L).smuxBytes("10.100.0.9", "smux-1", 5).build());
        assertEquals(10, t.durationSeconds);
        assertEquals(1_000, t.startSeconds);
        assertEquals(1, t.vips.size(), "a VIP whose counter did not grow has no traffic");
        assertEquals(Map.of(INTERNET, 2e8), vip(t, "10.100.0.1").sources);
        // the SMux stops answering: its counters are unknown, nothing is counted
        assertTrue(b.add(CounterSample.at(1_020_000).build()).vips.isEmpty());
        assertEquals(2, b.last().index + 1, "two intervals published");
    }

    @Test
    void ratesAreAveragedOverTheLastWindowOnly() {
        TrafficMatrixBuilder b = new TrafficMatrixBuilder(() -> topo, Duration.ofSeconds(1));
        long bytes = 0;
        TrafficInterval t = null;
        for (int s = 0; s <= 12; s++) {
            bytes += s <= 6 ? 10_000 : 1_000;   // 10 kB/s for 6 s, then 1 kB/s
            t = b.add(CounterSample.at(s * 1000L).read("agg-0-0").hmuxEntryBytes("10.100.0.1", "agg-0-0", bytes)
                    .build());
            if (s < 3) {
                assertNull(t, "the first interval needs three periods");
            }
        }
        assertEquals(5, t.durationSeconds, "the window");
        assertEquals(Map.of(INTERNET, 1_000.0), vip(t, "10.100.0.1").sources, "only the last 5 s count");
    }

    @Test
    void aClockThatGoesBackGivesNoRate() {
        TrafficMatrixBuilder b = new TrafficMatrixBuilder(() -> topo, Duration.ofSeconds(10));
        b.add(CounterSample.at(20_000).read("smux-0").smuxBytes("10.100.0.1", "smux-0", 0).build());
        assertNull(b.add(CounterSample.at(10_000).read("smux-0").smuxBytes("10.100.0.1", "smux-0", 10).build()));
        assertNull(b.last());
    }
}
