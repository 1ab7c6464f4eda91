package org.hybridlb.app.core.hmux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The diff of desired and read-back intent, with what a reader could not vouch for said explicitly. */
class IntentDiffTest {
    static final ServiceMatch A80 = new ServiceMatch("10.100.0.1", "tcp", 80);
    static final ServiceMatch A53 = new ServiceMatch("10.100.0.1", "udp", 53);
    static final List<DipBucket> POOL = List.of(new DipBucket(0, "10.0.0.1", "10.0.0.1", 1),
            new DipBucket(1, "10.0.0.2", "10.0.0.2", 2));

    static SwitchIntent desired() {
        return SwitchIntent.builder().entry(A80, POOL).route("10.100.0.2", "tor-1").route("10.100.0.3", "tor-2")
                .aggregate("10.100.0.0/16", Set.of("smux-0", "smux-1")).fallback(true).build();
    }

    @Test
    void aSwitchHoldingItsIntentNeedsNothing() {
        SwitchDelta d = IntentDiff.diff(desired(), SwitchReading.of(desired()));
        assertTrue(d.isEmpty(), d.toString());
        assertEquals(desired(), d.target);
    }

    @Test
    void missingChangedAndExtraItemsAreWrittenOrRemoved() {
        SwitchIntent have = SwitchIntent.builder()
                .entry(A80, POOL.subList(0, 1))                        // changed pool
                .entry(A53, POOL)                                      // not wanted
                .route("10.100.0.2", "tor-3")                          // towards another HMux
                .route("10.100.0.9", "tor-1")                          // not wanted
                .aggregate("10.100.0.0/16", Set.of("smux-0"))          // a member missing
                .aggregate("10.101.0.0/16", Set.of("smux-0"))          // not wanted
                .build();
        SwitchDelta d = IntentDiff.diff(desired(), SwitchReading.of(have));
        assertEquals(Map.of(A80, POOL), d.putEntries);
        assertEquals(Set.of(A53), d.removeEntries);
        assertEquals(Map.of("10.100.0.2", "tor-1", "10.100.0.3", "tor-2"), d.putRoutes);
        assertEquals(Set.of("10.100.0.9"), d.removeRoutes);
        assertEquals(Set.of("10.100.0.0/16"), d.putAggregates.keySet());
        assertEquals(Set.of("10.101.0.0/16"), d.removeAggregates);
        assertEquals(Boolean.TRUE, d.fallback);
        assertEquals(desired(), have.after(d), "the delta takes the switch to its intent");
    }

    @Test
    void anInconsistentItemIsNeitherEqualNorAbsent() {
        // the reader saw the entry half-written: a reading never counts it as held, even if it says so
        SwitchReading halfWritten = new SwitchReading(desired(), Map.of(ItemKey.entry(A80), "group 65537 is missing",
                ItemKey.route("10.100.0.7"), "towards location 0, which is no switch"), Map.of());
        SwitchDelta d = IntentDiff.diff(desired(), halfWritten);
        assertEquals(Map.of(A80, POOL), d.putEntries, "wanted: written again whole");
        assertEquals(Set.of("10.100.0.7"), d.removeRoutes, "not wanted: removed, not ignored");
        assertEquals(Set.of(ItemKey.entry(A80), ItemKey.route("10.100.0.7")), d.rewrite.keySet());
        assertEquals("group 65537 is missing", d.rewrite.get(ItemKey.entry(A80)));
        assertTrue(d.removeEntries.isEmpty());
    }

    @Test
    void foreignObjectsAreRemoved() {
        SwitchReading r = new SwitchReading(desired(), Map.of(ItemKey.foreign("group 70007"), "held by no item"), Map.of());
        SwitchDelta d = IntentDiff.diff(desired(), r);
        assertEquals(Set.of("group 70007"), d.foreign);
        assertTrue(d.rewrite.isEmpty());
        assertTrue(SwitchReading.of(desired()).equals(r.after(d)), "nothing foreign once applied");
    }

    @Test
    void whatTheSwitchCannotReachIsBlockedNotWritten() {
        SwitchIntent have = SwitchIntent.builder().route("10.100.0.3", "tor-2").build();
        SwitchReading r = new SwitchReading(have, Map.of(), Map.of("tor-2", "no path", "smux-1", "not seen on its ToR"));
        SwitchDelta d = IntentDiff.diff(desired(), r);
        assertEquals(Map.of("10.100.0.2", "tor-1"), d.putRoutes, "the route towards tor-2 is not written");
        assertEquals(Set.of("10.100.0.3"), d.removeRoutes, "and one there leaves: it would black-hole");
        assertEquals(Map.of("10.100.0.0/16", Set.of("smux-0")), d.putAggregates, "only the reachable SMux");
        assertEquals(Set.of(ItemKey.route("10.100.0.3"), ItemKey.aggregate("10.100.0.0/16")), d.blocked.keySet());
        SwitchReading none = new SwitchReading(SwitchIntent.EMPTY, Map.of(),
                Map.of("smux-0", "no path", "smux-1", "no path", "tor-1", "no path", "tor-2", "no path"));
        SwitchDelta d2 = IntentDiff.diff(desired(), none);
        assertTrue(d2.putAggregates.isEmpty() && d2.putRoutes.isEmpty(), "no SMux reachable: no aggregate at all " + d2);
    }

    @Test
    void anUnreadableSwitchHasNoDelta() {
        assertThrows(IllegalArgumentException.class, () -> IntentDiff.diff(desired(), SwitchReading.failed("timeout")));
    }

    @Test
    void theDeltaAlwaysTakesAnyReadingToTheDesiredIntent() {
        Random rnd = new Random(17);
        for (int i = 0; i < 500; i++) {
            SwitchIntent want = random(rnd);
            SwitchIntent have = random(rnd);
            SwitchReading r = SwitchReading.of(have);
            SwitchDelta d = IntentDiff.diff(want, r);
            assertEquals(want, have.after(d), "seed 17 round " + i);
            assertEquals(d.isEmpty(), want.equals(have), "empty exactly when equal, round " + i);
            assertTrue(IntentDiff.diff(want, r.after(d)).isEmpty(), "converged, round " + i);
        }
    }

    static SwitchIntent random(Random rnd) {
        SwitchIntent.Builder b = SwitchIntent.builder();
        for (int v = 0; v < 4; v++) {
            String vip = "10.100.0." + v;
            if (rnd.nextBoolean()) {
                List<DipBucket> pool = new ArrayList<>();
                for (int k = 0; k < rnd.nextInt(3); k++) {
                    pool.add(new DipBucket(k, "10.0.0." + k, "10.0.0." + k, 1 + rnd.nextInt(2)));
                }
                b.entry(new ServiceMatch(vip, rnd.nextBoolean() ? "tcp" : "any", 0), pool);
            } else if (rnd.nextBoolean()) {
                b.route(vip, "tor-" + rnd.nextInt(2));
            }
        }
        if (rnd.nextBoolean()) {
            b.aggregate("10.100.0.0/16", rnd.nextBoolean() ? Set.of("smux-0") : Set.of("smux-0", "smux-1"));
        }
        return b.fallback(rnd.nextBoolean()).build();
    }
}
