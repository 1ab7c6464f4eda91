package org.hybridlb.app.core.p4;

import static org.hybridlb.app.core.p4.HlbP4Info.*;
import static org.hybridlb.app.core.p4.HmuxP4PlanTest.CAP;
import static org.hybridlb.app.core.p4.HmuxP4PlanTest.CHEETAH_CAP;
import static org.hybridlb.app.core.p4.HmuxP4PlanTest.CONFIG;
import static org.hybridlb.app.core.p4.HmuxP4PlanTest.KEY;
import static org.hybridlb.app.core.p4.HmuxP4PlanTest.SHOP;
import static org.hybridlb.app.core.p4.HmuxP4PlanTest.WEB;
import static org.hybridlb.app.core.p4.HmuxP4PlanTest.apply;
import static org.hybridlb.app.core.p4.HmuxP4PlanTest.fabric;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.hmux.CookieDecode;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.IntentDiff;
import org.hybridlb.app.core.hmux.ItemKey;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.junit.jupiter.api.Test;

/**
 * Each bucket of a P4 HMux counts in a {@code bucket_counter} index of its own on the switch
 * ({@link BucketCounters}), whatever the VIPs' own bucket ids; indexes stay with their DIP across
 * changes, freed ones are reused later, and a restarted controller reads them back.
 */
class BucketCountersTest {
    static final ServiceMatch API = new ServiceMatch("10.9.0.4", "tcp", 80);

    final HmuxP4Plan plan = new HmuxP4Plan(CONFIG);
    final HmuxP4Reader reader = new HmuxP4Reader(CONFIG);

    /** Three VIPs whose buckets all have ids 0, 1 (and a cookie server of a drained DIP, bucket 2). */
    static SwitchIntent threeVips() {
        return SwitchIntent.builder()
                .entry(WEB, List.of(new DipBucket(0, null, "10.1.0.1", 2), new DipBucket(1, null, "10.1.0.2", 1)))
                .entry(API, List.of(new DipBucket(0, null, "10.1.0.3", 1), new DipBucket(1, null, "10.1.0.4", 3)))
                .entry(SHOP, List.of(new DipBucket(0, null, "10.1.0.5", 1), new DipBucket(1, null, "10.1.0.6", 1)))
                .cookies(SHOP, new CookieDecode(Cookie.HashMode.CRC32C, KEY, Map.of(
                        3, new CookieDecode.Server("10.1.0.5", 0), 4, new CookieDecode.Server("10.1.0.6", 1),
                        5, new CookieDecode.Server("10.1.0.7", 2))))
                .build();
    }

    P4State write(P4State device, SwitchIntent target) {
        HmuxP4Snapshot now = reader.read(device);
        return apply(device, P4Diff.batches(now.ours, plan.plan(CHEETAH_CAP.holdable(target), now)));
    }

    static long serviceId(P4State device, ServiceMatch m) {
        return HmuxP4Layout.serviceIdOf(((P4TableEntry) device.get(
                HmuxP4Layout.serviceEntry(m, 0, CONFIG.encap, 0).key())).action).asLong();
    }

    /** {tunnel endpoint: counter index} of service {@code m}'s set_dip members (one index per DIP). */
    static Map<String, Integer> indexes(P4State device, ServiceMatch m) {
        Map<String, Integer> out = new HashMap<>();
        P4Group g = device.groups(HMUX_DIP_SELECTOR_ID).get(serviceId(device, m));
        for (long id : g.memberIds) {
            P4Action a = device.members(HMUX_DIP_SELECTOR_ID).get(id).action;
            Integer other = out.put(a.param(HMUX_SET_DIP_TUNNEL_DST_ID).asIpv4(), BucketCounters.indexOf(a));
            assertTrue(other == null || other == BucketCounters.indexOf(a), "a DIP counts in one index: " + g);
        }
        return out;
    }

    /** {server id: counter index} of service {@code m}'s vip_servers entries. */
    static Map<Long, Integer> serverIndexes(P4State device, ServiceMatch m) {
        Map<Long, Integer> out = new HashMap<>();
        long sid = serviceId(device, m);
        for (P4TableEntry e : device.entries(CHEETAH_VIP_SERVERS_ID)) {
            if (e.match(CHEETAH_VIP_SERVERS_SERVICE_ID_ID).value.asLong() == sid) {
                out.put(e.match(CHEETAH_VIP_SERVERS_SERVER_ID_ID).value.asLong(), BucketCounters.indexOf(e.action));
            }
        }
        return out;
    }

    @Test
    void eachBucketOfEveryVipCountsInAnIndexOfItsOwn() {
        P4State device = write(fabric(), threeVips());
        List<Integer> all = new ArrayList<>();
        for (ServiceMatch m : List.of(WEB, API, SHOP)) {
            all.addAll(indexes(device, m).values());
        }
        Map<Long, Integer> servers = serverIndexes(device, SHOP);
        all.add(servers.get(5L)); // the drained DIP's server: counted apart
        assertEquals(7, all.size());
        assertEquals(7, new HashSet<>(all).size(), "indexes shared between DIPs: " + all);
        assertTrue(all.stream().allMatch(i -> i >= 0 && i < HMUX_BUCKETS), all.toString());
        // a cookie server counts where its DIP's members do
        assertEquals(indexes(device, SHOP).get("10.1.0.5"), servers.get(3L));
        assertEquals(indexes(device, SHOP).get("10.1.0.6"), servers.get(4L));
    }

    @Test
    void aRestartedControllerReadsTheIndexesBackAndChangesNothing() {
        P4State device = write(fabric(), threeVips());
        // a new reader and plan (no memory: what a restarted controller has) on the switch as it is
        HmuxP4Snapshot back = new HmuxP4Reader(CONFIG).read(device);
        SwitchIntent want = CHEETAH_CAP.holdable(threeVips());
        assertTrue(back.reading.inconsistent.isEmpty(), back.reading.inconsistent.toString());
        assertEquals(want, back.reading.intent);
        assertTrue(IntentDiff.diff(want, back.reading).isEmpty());
        assertTrue(P4Diff.batches(back.ours, new HmuxP4Plan(CONFIG).plan(want, back)).isEmpty());
        assertEquals(-1, back.reading.intent.cookies.get(SHOP).servers.get(5).bucket,
                "the drained DIP's server is of no bucket");
    }

    @Test
    void aPoolChangeKeepsTheIndexesOfTheDipsThatStayAndALaterOneReusesTheFreed() {
        P4State device = write(fabric(), threeVips());
        Map<String, Integer> web = indexes(device, WEB);
        Map<String, Integer> api = indexes(device, API);
        // WEB: 10.1.0.1 leaves, 10.1.0.8 joins before 10.1.0.2 (a new bucket id, so the order changes)
        SwitchIntent.Builder b = threeVips().toBuilder();
        b.entry(WEB, List.of(new DipBucket(1, null, "10.1.0.2", 1), new DipBucket(2, null, "10.1.0.8", 1)));
        P4State after = write(device, b.build());
        Map<String, Integer> web2 = indexes(after, WEB);
        assertEquals(web.get("10.1.0.2"), web2.get("10.1.0.2"), "the DIP that stays keeps its index");
        assertEquals(api, indexes(after, API), "another VIP's indexes do not move");
        assertNotEquals(web.get("10.1.0.1"), web2.get("10.1.0.8"),
                "the leaving DIP's index is not reused while its members may still count there");
        assertTrue(IntentDiff.diff(CHEETAH_CAP.holdable(b.build()), reader.read(after).reading).isEmpty());
        // API grows: the index 10.1.0.1 freed is the lowest the switch no longer holds
        b.entry(API, List.of(new DipBucket(0, null, "10.1.0.3", 1), new DipBucket(1, null, "10.1.0.4", 3),
                new DipBucket(2, null, "10.1.0.9", 1)));
        P4State later = write(after, b.build());
        assertEquals(web.get("10.1.0.1"), indexes(later, API).get("10.1.0.9"));
        assertEquals(web2, indexes(later, WEB));
    }

    @Test
    void aDrainedDipKeepsItsIndexThroughItsCookieServer() {
        P4State device = write(fabric(), threeVips());
        int shop6 = indexes(device, SHOP).get("10.1.0.6");
        // 10.1.0.6 drained: no bucket, its server still accepted
        SwitchIntent.Builder b = threeVips().toBuilder();
        b.entry(SHOP, List.of(new DipBucket(0, null, "10.1.0.5", 1)));
        P4State after = write(device, b.build());
        assertEquals(shop6, serverIndexes(after, SHOP).get(4L), "the drained DIP still counts where it did");
        assertTrue(IntentDiff.diff(CHEETAH_CAP.holdable(b.build()), reader.read(after).reading).isEmpty());
    }

    @Test
    void aSwitchWhoseVipsShareIndexesIsInconsistentAndRepaired() {
        // what the layout wrote before indexes were the switch's: each VIP's own bucket ids
        P4State device = write(fabric(), threeVips());
        P4State shared = new P4State();
        for (P4Entity e : device.all()) {
            if (e instanceof P4Member && ((P4Member) e).profileId == HMUX_DIP_SELECTOR_ID) {
                P4Member m = (P4Member) e;
                String host = m.action.param(HMUX_SET_DIP_TUNNEL_DST_ID).asIpv4();
                int bucket = Set.of("10.1.0.1", "10.1.0.3", "10.1.0.5").contains(host) ? 0 : 1;
                shared.add(HmuxP4Layout.dipMember(m.memberId, host, bucket));
            } else {
                shared.add(e);
            }
        }
        HmuxP4Snapshot now = reader.read(shared);
        long flagged = now.reading.inconsistent.entrySet().stream()
                .filter(x -> x.getKey().item == ItemKey.Item.ENTRY && x.getValue().contains("bucket_counter index"))
                .count();
        assertEquals(2, flagged, now.reading.inconsistent.toString());
        SwitchIntent want = CHEETAH_CAP.holdable(threeVips());
        assertFalse(IntentDiff.diff(want, now.reading).isEmpty());
        P4State fixed = apply(shared, P4Diff.batches(now.ours, plan.plan(want, now)));
        HmuxP4Snapshot back = reader.read(fixed);
        assertTrue(back.reading.inconsistent.isEmpty(), back.reading.inconsistent.toString());
        assertTrue(IntentDiff.diff(want, back.reading).isEmpty());
        Set<Integer> all = new HashSet<>();
        for (ServiceMatch m : List.of(WEB, API, SHOP)) {
            indexes(fixed, m).values().forEach(i -> assertTrue(all.add(i), "index " + i + " shared: " + all));
        }
    }

    /** {@code services} services of {@code per} weight-1 buckets each (hosts 10.2.x.y). */
    static SwitchIntent.Builder full(int services, int per) {
        SwitchIntent.Builder b = SwitchIntent.builder();
        for (int s = 0; s < services; s++) {
            List<DipBucket> buckets = new ArrayList<>();
            for (int i = 0; i < per; i++) {
                buckets.add(new DipBucket(i, null, "10.2." + (i >> 8) + "." + (i & 0xff), 1));
            }
            b.entry(new ServiceMatch("10.8.0." + (s + 1), "tcp", 80), buckets);
        }
        return b;
    }

    @Test
    void aSwitchOutOfIndexesIsRefusedNamingTheLimit() {
        int per = (int) (HMUX_BUCKETS / 4);
        SwitchIntent.Builder b = full(4, per);
        P4State device = write(fabric(), b.build()); // every index taken: it fits
        // a pool change on a full switch reuses the indexes it frees in the same change
        SwitchIntent.Builder moved = full(4, per);
        List<DipBucket> first = new ArrayList<>(moved.entries.get(new ServiceMatch("10.8.0.1", "tcp", 80)));
        first.set(0, new DipBucket(0, null, "10.3.0.1", 1));
        moved.entry(new ServiceMatch("10.8.0.1", "tcp", 80), first);
        P4State after = write(device, moved.build());
        Set<Integer> all = new HashSet<>();
        after.members(HMUX_DIP_SELECTOR_ID).values().forEach(m -> assertTrue(all.add(BucketCounters.indexOf(m.action))));
        assertEquals(HMUX_BUCKETS, all.size());
        // one more counted thing, a drained DIP's cookie server, is one too many
        b.entry(SHOP, List.of()).cookies(SHOP, new CookieDecode(Cookie.HashMode.CRC32C, KEY,
                Map.of(3, new CookieDecode.Server("10.1.0.5", 0))));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> plan.plan(CHEETAH_CAP.holdable(b.build()), HmuxP4Snapshot.EMPTY));
        assertTrue(e.getMessage().contains("bucket_counter") && e.getMessage().contains(String.valueOf(HMUX_BUCKETS))
                && e.getMessage().contains(SHOP.toString()), e.getMessage());
    }

    @Test
    void aPositionalSwitchGivesCookieServersTheirBucketsPosition() {
        SwitchIntent sparse = SwitchIntent.builder()
                .entry(SHOP, List.of(new DipBucket(4, null, "10.1.0.5", 1), new DipBucket(7, null, "10.1.0.6", 1)))
                .cookies(SHOP, new CookieDecode(Cookie.HashMode.CRC32C, KEY, Map.of(
                        3, new CookieDecode.Server("10.1.0.5", 4), 4, new CookieDecode.Server("10.1.0.6", 7),
                        5, new CookieDecode.Server("10.1.0.7", 5))))
                .build();
        SwitchIntent held = CHEETAH_CAP.holdable(sparse);
        assertEquals(List.of(0, 1), List.of(held.entries.get(SHOP).get(0).id, held.entries.get(SHOP).get(1).id));
        CookieDecode c = held.cookies.get(SHOP);
        assertEquals(List.of(0, 1, -1), List.of(c.servers.get(3).bucket, c.servers.get(4).bucket, c.servers.get(5).bucket));
        // and they read back so from the switch
        P4State device = write(fabric(), sparse);
        assertEquals(held, reader.read(device).reading.intent);
        assertTrue(CAP.holdable(sparse).cookies.isEmpty(), "no cookies on a switch that decodes none");
    }
}
