package org.hybridlb.app.core.p4;

import static org.hybridlb.app.core.p4.HlbP4Info.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.hmux.CookieDecode;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.IntentDiff;
import org.hybridlb.app.core.hmux.ItemKey;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.junit.jupiter.api.Test;

/** The intent -> P4 entities -> read back round trip, weights as members, minimal updates, repairs. */
class HmuxP4PlanTest {
    static final long COOKIE_BASE = 0x4c420000L;
    static final HmuxP4Config CONFIG = new HmuxP4Config(HashContract.Encap.GRE, COOKIE_BASE,
            Map.of("tor-1", 1, "tor-2", 2, "agg-1", 3), Map.of("smux-a", "10.0.2.10", "smux-b", "10.0.3.10"));
    /** A P4 HMux: buckets by position (set_dip's bucket is the switch's counter index), no DIPs. */
    static final SwitchCapability CAP = new SwitchCapability(HashContract.of(HashContract.Selection.CRC32, 0,
            HashContract.Encap.GRE), false, false, false, Set.of());
    static final ServiceMatch WEB = new ServiceMatch("10.9.0.1", "tcp", 80);
    static final ServiceMatch DNS = new ServiceMatch("10.9.0.1", "udp", 0);
    static final ServiceMatch WHOLE = new ServiceMatch("10.9.0.2", ServiceMatch.ANY, 0);
    /** A Cheetah program's switch: it decodes crc32c cookies. */
    static final SwitchCapability CHEETAH_CAP = new SwitchCapability(CAP.hash, false, false, false,
            HmuxP4Layout.cookieModes(PROFILE_HLB_CHEETAH));
    static final String KEY = "000102030405060708090a0b0c0d0e0f";
    static final ServiceMatch SHOP = new ServiceMatch("10.9.0.3", "tcp", 443);
    static final ServiceMatch SHOP_ALT = new ServiceMatch("10.9.0.3", "tcp", 8443);

    final HmuxP4Plan plan = new HmuxP4Plan(CONFIG);
    final HmuxP4Reader reader = new HmuxP4Reader(CONFIG);

    static P4Action hop(int port, String dmac) {
        return P4Action.of(ROUTING_SET_NEXT_HOP, ROUTING_SET_NEXT_HOP_ID)
                .param(ROUTING_SET_NEXT_HOP_PORT_ID, ROUTING_SET_NEXT_HOP_PORT, P4Value.of(port))
                .param(ROUTING_SET_NEXT_HOP_SMAC_ID, ROUTING_SET_NEXT_HOP_SMAC, P4Value.of(0x02aaL))
                .param(ROUTING_SET_NEXT_HOP_DMAC_ID, ROUTING_SET_NEXT_HOP_DMAC, P4Value.of(Long.parseLong(dmac, 16))).build();
    }

    /** What the fabric writes on switch tor-1 (as topologies/hlb_p4.py does): next ids per switch, host routes. */
    static P4State fabric() {
        P4State s = new P4State();
        long member = 1;
        for (int next = 2; next <= 3; next++) {
            s.add(HmuxP4Layout.smuxMember(member, hop(next, "02aa")));
            s.add(HmuxP4Layout.smuxGroup(next, List.of(member++)));
            s.add(HmuxP4Layout.nextHopEntry(next, next, 0));
        }
        s.add(HmuxP4Layout.smuxMember(member, hop(7, "0207")));       // smux-a's host, local on port 7
        s.add(HmuxP4Layout.smuxGroup(0x8007, List.of(member)));
        s.add(HmuxP4Layout.nextHopEntry(0x8007, 0x8007, 0));
        s.add(HmuxP4Layout.routeEntry("10.0.2.10/32", 0x8007, 0));
        s.add(HmuxP4Layout.routeEntry("10.0.3.0/24", 2, 0));           // smux-b behind tor-2
        return s;
    }

    static SwitchIntent intent() {
        return SwitchIntent.builder()
                .entry(WEB, List.of(new DipBucket(0, "10.1.0.1", "10.1.0.1", 3), new DipBucket(2, "10.1.0.2", "10.1.0.2", 1)))
                .entry(DNS, List.of(new DipBucket(1, "10.1.0.3", "10.1.0.3", 1)))
                .entry(WHOLE, List.of())
                .route("10.9.0.7", "tor-2").route("10.9.0.8", "agg-1")
                .aggregate("10.9.0.0/16", List.of("smux-a", "smux-b")).build();
    }

    /** {@code s} after the batches, as a device that applies them in order would hold it. */
    static P4State apply(P4State s, List<List<P4Update>> batches) {
        Map<String, P4Entity> m = new TreeMap<>();
        s.all().forEach(e -> m.put(e.key(), e));
        for (List<P4Update> b : batches) {
            for (P4Update u : b) {
                boolean present = m.containsKey(u.entity.key());
                assertEquals(u.type != P4Update.Type.INSERT, present, "update of a " + (present ? "present" : "missing")
                        + " entity: " + u);
                if (u.type == P4Update.Type.DELETE) {
                    m.remove(u.entity.key());
                } else {
                    m.put(u.entity.key(), u.entity);
                }
            }
        }
        return new P4State().addAll(m.values());
    }

    /** Writes {@code want} onto {@code device} and gives the device after. */
    P4State write(P4State device, SwitchIntent want) {
        HmuxP4Snapshot now = reader.read(device);
        return apply(device, P4Diff.batches(now.ours, plan.plan(want, now)));
    }

    @Test
    void intentRoundTripsThroughEntities() {
        P4State device = write(fabric(), intent());
        HmuxP4Snapshot back = reader.read(device);
        assertEquals(CAP.holdable(intent()), back.reading.intent);
        assertTrue(back.reading.inconsistent.isEmpty(), back.reading.inconsistent.toString());
        assertTrue(IntentDiff.diff(CAP.holdable(intent()), back.reading).isEmpty());
        assertEquals(Set.of("tor-1"), back.reading.unreachable.keySet()); // no next hop towards itself
        // the same plan again changes nothing
        assertTrue(P4Diff.batches(back.ours, plan.plan(back.reading.intent, back)).isEmpty());
    }

    /** {@code n} one-DIP services, VIPs 10.8.x.y port 80, from number {@code from} on. */
    static SwitchIntent.Builder services(SwitchIntent.Builder b, int from, int n) {
        for (int i = from; i < from + n; i++) {
            b.entry(new ServiceMatch("10.8." + (i >> 8) + "." + (i & 0xff), "tcp", 80),
                    List.of(new DipBucket(0, null, "10.1.0.1", 1)));
        }
        return b;
    }

    @Test
    void serviceIdsStayWithinTheServiceCounter() {
        // the switch full: every id service_counter counts (1-4095) in use
        int full = (int) HMUX_SERVICE_SIZE - 1;
        P4State device = write(fabric(), services(SwitchIntent.builder(), 0, full).build());
        HmuxP4Snapshot now = reader.read(device);
        assertEquals(full, now.reading.intent.entries.size());
        // one service replaced by another: the new one cannot take the old one's id while it is in use
        SwitchIntent replaced = services(SwitchIntent.builder(), 1, full).build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> plan.plan(replaced, now));
        assertTrue(e.getMessage().contains("service_counter counts ids 1-4095"), e.getMessage());
        IllegalArgumentException over = assertThrows(IllegalArgumentException.class,
                () -> plan.plan(services(SwitchIntent.builder(), 0, full + 1).build(), now));
        assertTrue(over.getMessage().startsWith("4096 HMux services, service_counter counts 4095"), over.getMessage());
    }

    static CookieDecode.Server server(String host, int bucket) {
        return new CookieDecode.Server(host, bucket);
    }

    /** {@link #intent()} with two services of a cheetah VIP (server 7 drained on SHOP: accepted, no bucket weight). */
    static SwitchIntent cookieIntent() {
        return intent().toBuilder()
                .entry(SHOP, List.of(new DipBucket(0, null, "10.1.0.1", 2), new DipBucket(1, null, "10.1.0.4", 1)))
                .cookies(SHOP, new CookieDecode(Cookie.HashMode.CRC32C, KEY,
                        Map.of(3, server("10.1.0.1", 0), 5, server("10.1.0.4", 1), 7, server("10.1.0.5", 4))))
                .entry(SHOP_ALT, List.of(new DipBucket(0, null, "10.1.0.4", 1)))
                .cookies(SHOP_ALT, new CookieDecode(Cookie.HashMode.CRC32C, KEY, Map.of(5, server("10.1.0.4", 0))))
                .build();
    }

    @Test
    void aCookieServiceRoundTripsThroughTheCheetahTables() {
        SwitchIntent want = CHEETAH_CAP.holdable(cookieIntent());
        assertEquals(2, want.cookies.size(), "a crc32c decoder keeps the cookies");
        // the servers are in place before the entry that decodes with them (else its cookies would drop)
        List<List<P4Update>> first = P4Diff.batches(reader.read(fabric()).ours, plan.plan(want, reader.read(fabric())));
        assertTrue(batchOf(first, CHEETAH_ALL_SERVERS_ID) < batchOf(first, HMUX_VIP_SERVICE_ID)
                && batchOf(first, CHEETAH_VIP_SERVERS_ID) < batchOf(first, HMUX_VIP_SERVICE_ID), first.toString());
        P4State device = write(fabric(), want);
        P4TableEntry shop = (P4TableEntry) device.get(HmuxP4Layout.serviceEntry(SHOP, 0, CONFIG.encap, 0).key());
        assertEquals(HMUX_SET_COOKIE_SERVICE_ID, shop.action.id);
        assertEquals(AFFINITY_CHEETAH, shop.action.param(HMUX_SET_COOKIE_SERVICE_AFFINITY_ID).asLong());
        assertEquals(KEY, HmuxP4Layout.cookieKeyOf(shop.action), "the key with its leading zero byte");
        assertEquals(4, device.entries(CHEETAH_VIP_SERVERS_ID).size());
        assertEquals(3, device.entries(CHEETAH_ALL_SERVERS_ID).size(), "one all_servers entry per server id");
        HmuxP4Snapshot back = reader.read(device);
        assertEquals(want, back.reading.intent);
        assertTrue(back.reading.inconsistent.isEmpty(), back.reading.inconsistent.toString());
        assertTrue(IntentDiff.diff(want, back.reading).isEmpty());
        assertTrue(P4Diff.batches(back.ours, plan.plan(want, back)).isEmpty());
        // a switch without the Cheetah tables is given the services hashed
        assertTrue(CAP.holdable(cookieIntent()).cookies.isEmpty());
    }

    /** The index of the first batch writing an entry of {@code tableId}. */
    static int batchOf(List<List<P4Update>> batches, int tableId) {
        for (int i = 0; i < batches.size(); i++) {
            if (batches.get(i).stream().anyMatch(u -> u.entity instanceof P4TableEntry
                    && ((P4TableEntry) u.entity).tableId == tableId)) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void aCookiePoolChangeIsAMinimalDeltaWithTheServersWrittenBeforeAndRemovedAfter() {
        P4State device = write(fabric(), CHEETAH_CAP.holdable(cookieIntent()));
        HmuxP4Snapshot now = reader.read(device);
        // server 7 leaves SHOP (its quarantine is over), server 9 joins it
        SwitchIntent next = cookieIntent().toBuilder()
                .cookies(SHOP, new CookieDecode(Cookie.HashMode.CRC32C, KEY,
                        Map.of(3, server("10.1.0.1", 0), 5, server("10.1.0.4", 1), 9, server("10.1.0.6", 5))))
                .build();
        List<List<P4Update>> batches = P4Diff.batches(now.ours, plan.plan(CHEETAH_CAP.holdable(next), now));
        List<String> updates = new ArrayList<>();
        P4Diff.flat(batches).forEach(u -> updates.add(u.type + " " + u.entity.key()));
        long sid = HmuxP4Layout.serviceIdOf(((P4TableEntry) device.get(
                HmuxP4Layout.serviceEntry(SHOP, 0, CONFIG.encap, 0).key())).action).asLong();
        List<String> expected = List.of(
                "INSERT " + HmuxP4Layout.vipServersEntry((int) sid, 9, 5, 0).key(),
                "INSERT " + HmuxP4Layout.allServersEntry(9, "10.1.0.6", 0).key(),
                "DELETE " + HmuxP4Layout.vipServersEntry((int) sid, 7, 4, 0).key(),
                "DELETE " + HmuxP4Layout.allServersEntry(7, "10.1.0.5", 0).key());
        assertEquals(Set.copyOf(expected), Set.copyOf(updates), updates.toString());
        assertEquals(2, batches.size(), "the new servers in one batch, then the old ones away: " + batches);
        P4State after = apply(device, batches);
        assertEquals(CHEETAH_CAP.holdable(next), reader.read(after).reading.intent);
    }

    @Test
    void aDipJoiningACookieServiceIsAcceptedBeforeTheGroupSendsItConnections() {
        // server 9 (10.1.0.6) joins SHOP's pool: once the group lists its member, a SYN may reach it
        // and the client's next segment carries its cookie, which the switch must already accept
        P4State device = write(fabric(), CHEETAH_CAP.holdable(cookieIntent()));
        HmuxP4Snapshot now = reader.read(device);
        SwitchIntent next = cookieIntent().toBuilder()
                .entry(SHOP, List.of(new DipBucket(0, null, "10.1.0.1", 2), new DipBucket(1, null, "10.1.0.4", 1),
                        new DipBucket(5, null, "10.1.0.6", 1)))
                .cookies(SHOP, new CookieDecode(Cookie.HashMode.CRC32C, KEY, Map.of(3, server("10.1.0.1", 0),
                        5, server("10.1.0.4", 1), 7, server("10.1.0.5", 4), 9, server("10.1.0.6", 5))))
                .build();
        List<List<P4Update>> batches = P4Diff.batches(now.ours, plan.plan(CHEETAH_CAP.holdable(next), now));
        int group = -1;
        for (int i = 0; i < batches.size() && group < 0; i++) {
            if (batches.get(i).stream().anyMatch(u -> u.entity instanceof P4Group && u.type == P4Update.Type.MODIFY)) {
                group = i;
            }
        }
        assertTrue(group >= 0, "the pool's group is modified: " + batches);
        int accepted = batchOf(batches, CHEETAH_VIP_SERVERS_ID);
        int known = batchOf(batches, CHEETAH_ALL_SERVERS_ID);
        assertTrue(accepted >= 0 && accepted < group && known >= 0 && known < group,
                "vip_servers (batch " + accepted + ") and all_servers (" + known + ") before the group (" + group + "): "
                        + batches);
        assertEquals(CHEETAH_CAP.holdable(next), reader.read(apply(device, batches)).reading.intent);
    }

    @Test
    void aCookieServiceHeldHalfIsInconsistentAndRewritten() {
        P4State device = write(fabric(), CHEETAH_CAP.holdable(cookieIntent()));
        P4TableEntry all7 = HmuxP4Layout.allServersEntry(7, "10.1.0.5", 0);
        P4State half = new P4State();
        device.all().stream().filter(e -> !e.key().equals(all7.key())).forEach(half::add);
        HmuxP4Snapshot back = reader.read(half);
        assertTrue(back.reading.inconsistent.containsKey(ItemKey.entry(SHOP)), back.reading.inconsistent.toString());
        assertFalse(back.reading.intent.cookies.containsKey(SHOP));
        assertEquals(CHEETAH_CAP.holdable(cookieIntent()).cookies.get(SHOP_ALT), back.reading.intent.cookies.get(SHOP_ALT));
    }

    @Test
    void cookiesOfAModeTheProgramsCannotDecodeAreRefused() {
        SwitchIntent sip = intent().toBuilder().entry(SHOP, List.of(new DipBucket(0, null, "10.1.0.1", 1)))
                .cookies(SHOP, new CookieDecode(Cookie.HashMode.SIPHASH13, KEY, Map.of(3, server("10.1.0.1", 0))))
                .build();
        assertTrue(CHEETAH_CAP.holdable(sip).cookies.isEmpty(), "a crc32c decoder is given no siphash13 cookies");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> plan.plan(sip, reader.read(fabric())));
        assertTrue(e.getMessage().contains("siphash13"), e.getMessage());
    }

    @Test
    void weightsAreConsecutiveWeightUnitMembersInPoolOrder() {
        P4State device = write(fabric(), intent());
        P4TableEntry web = (P4TableEntry) device.get(HmuxP4Layout.serviceEntry(WEB, 0, CONFIG.encap, 0).key());
        long sid = web.action.param(HMUX_SET_SERVICE_SERVICE_ID_ID).asLong();
        assertEquals(HlbP4Info.ENCAP_GRE, web.action.param(HMUX_SET_SERVICE_ENCAP_ID).asLong());
        P4Group g = device.groups(HMUX_DIP_SELECTOR_ID).get(sid);
        List<String> layout = new ArrayList<>();
        long last = 0;
        for (long id : g.memberIds) {
            assertTrue(id > last, "member ids ascend in pool order: " + g.memberIds);
            last = id;
            P4Action a = device.members(HMUX_DIP_SELECTOR_ID).get(id).action;
            layout.add(a.param(HMUX_SET_DIP_TUNNEL_DST_ID).asIpv4() + "#" + a.param(HMUX_SET_DIP_BUCKET_ID).asLong());
        }
        // bucket: the switch's counter index of each DIP (WEB's come first: 0, 1), not the VIP's bucket id
        assertEquals(List.of("10.1.0.1#0", "10.1.0.1#0", "10.1.0.1#0", "10.1.0.2#1"), layout);
        P4TableEntry sel = (P4TableEntry) device.get(HmuxP4Layout.dipSelectEntry((int) sid, sid, 0).key());
        assertEquals(sid, sel.groupId);
    }

    @Test
    void aggregateMembersTakeTheHopTheSwitchRoutesEachSmuxWith() {
        P4State device = write(fabric(), intent());
        P4TableEntry agg = (P4TableEntry) device.get(HmuxP4Layout.routeEntry("10.9.0.0/16", 0, 0).key());
        long next = HmuxP4Layout.nextIdOf(agg);
        assertTrue(CONFIG.isAggregateNextId(next));
        P4Group g = device.groups(ROUTING_ECMP_SELECTOR_ID).get(next);
        assertEquals(List.of(CONFIG.smuxMemberId("smux-a"), CONFIG.smuxMemberId("smux-b")), g.memberIds);
        Map<Long, P4Member> m = device.members(ROUTING_ECMP_SELECTOR_ID);
        assertEquals(hop(7, "0207"), m.get(g.memberIds.get(0)).action);
        assertEquals(hop(2, "02aa"), m.get(g.memberIds.get(1)).action);
        P4TableEntry route = (P4TableEntry) device.get(HmuxP4Layout.routeEntry("10.9.0.7/32", 0, 0).key());
        assertEquals(2, HmuxP4Layout.nextIdOf(route));
    }

    @Test
    void aWeightChangeRewritesOnlyThatServicesMembersAndModifiesItsGroup() {
        P4State device = write(fabric(), intent());
        SwitchIntent.Builder b = intent().toBuilder();
        b.entry(WEB, List.of(new DipBucket(0, "10.1.0.1", "10.1.0.1", 1), new DipBucket(2, "10.1.0.2", "10.1.0.2", 1)));
        HmuxP4Snapshot now = reader.read(device);
        List<List<P4Update>> batches = P4Diff.batches(now.ours, plan.plan(b.build(), now));
        List<String> kinds = new ArrayList<>();
        P4Diff.flat(batches).forEach(u -> kinds.add(u.type + " " + u.entity.getClass().getSimpleName()));
        assertEquals(List.of("INSERT P4Member", "INSERT P4Member", "MODIFY P4Group",
                "DELETE P4Member", "DELETE P4Member", "DELETE P4Member", "DELETE P4Member"), kinds);
        assertEquals(3, batches.size(), "new members, the group, then the old members: each a batch of its own");
        P4State after = apply(device, batches);
        assertTrue(IntentDiff.diff(CAP.holdable(b.build()), reader.read(after).reading).isEmpty());
    }

    @Test
    void aVipLeavingTheSwitchGoesEntryByEntryBeforeItsGroupsAndMembersAndKeepsItsAggregate() {
        P4State device = write(fabric(), intent());
        SwitchIntent.Builder b = intent().toBuilder();
        b.entries.remove(WEB); // the VIP 10.9.0.1 leaves (withdraw-from-hmux)
        b.entries.remove(DNS);
        HmuxP4Snapshot now = reader.read(device);
        List<List<P4Update>> batches = P4Diff.batches(now.ours, plan.plan(b.build(), now));
        List<List<String>> kinds = new ArrayList<>();
        for (List<P4Update> batch : batches) {
            List<String> k = new ArrayList<>();
            for (P4Update u : batch) {
                assertEquals(P4Update.Type.DELETE, u.type, u.toString());
                k.add(u.entity instanceof P4TableEntry ? "entry " + ((P4TableEntry) u.entity).tableId
                        : u.entity.getClass().getSimpleName());
            }
            kinds.add(k);
        }
        // a packet of the VIP meets its service entry with all it leads to, or no entry and the aggregate
        assertEquals(List.of(
                List.of("entry " + HMUX_VIP_SERVICE_ID, "entry " + HMUX_VIP_SERVICE_ANY_PORT_ID),
                List.of("entry " + HMUX_DIP_SELECT_ID, "entry " + HMUX_DIP_SELECT_ID),
                List.of("P4Group", "P4Group"),
                List.of("P4Member", "P4Member", "P4Member", "P4Member", "P4Member")),
                kinds.stream().map(k -> k.stream().sorted().collect(java.util.stream.Collectors.toList()))
                        .collect(java.util.stream.Collectors.toList()));
        HmuxP4Snapshot after = reader.read(apply(device, batches));
        assertEquals(intent().aggregates, after.reading.intent.aggregates);
        assertTrue(IntentDiff.diff(CAP.holdable(b.build()), after.reading).isEmpty());
    }

    @Test
    void aRouteAddedOrRemovedIsOneUpdate() {
        P4State device = write(fabric(), intent());
        HmuxP4Snapshot now = reader.read(device);
        SwitchIntent more = intent().toBuilder().route("10.9.0.9", "tor-2").build();
        List<P4Update> ups = P4Diff.flat(P4Diff.batches(now.ours, plan.plan(more, now)));
        assertEquals(1, ups.size());
        assertEquals(P4Update.Type.INSERT, ups.get(0).type);
        SwitchIntent.Builder less = intent().toBuilder();
        less.routes.remove("10.9.0.8");
        ups = P4Diff.flat(P4Diff.batches(now.ours, plan.plan(less.build(), now)));
        assertEquals(1, ups.size());
        assertEquals(P4Update.Type.DELETE, ups.get(0).type);
    }

    @Test
    void aNewServiceNeverTakesTheIdOfOneRemovedInTheSameChange() {
        P4State device = write(fabric(), intent());
        SwitchIntent.Builder b = intent().toBuilder();
        b.entries.remove(DNS);
        ServiceMatch ssh = new ServiceMatch("10.9.0.3", "tcp", 22);
        b.entry(ssh, List.of(new DipBucket(0, "10.1.0.5", "10.1.0.5", 1)));
        HmuxP4Snapshot now = reader.read(device);
        P4State want = plan.plan(b.build(), now);
        Set<Long> before = now.ours.groups(HMUX_DIP_SELECTOR_ID).keySet();
        long sshId = ((P4TableEntry) want.get(HmuxP4Layout.serviceEntry(ssh, 0, CONFIG.encap, 0).key()))
                .action.param(HMUX_SET_SERVICE_SERVICE_ID_ID).asLong();
        assertFalse(before.contains(sshId), "ssh took id " + sshId + " of " + before);
        P4State after = apply(device, P4Diff.batches(now.ours, want));
        assertTrue(IntentDiff.diff(CAP.holdable(b.build()), reader.read(after).reading).isEmpty());
    }

    @Test
    void halfWrittenServicesAndLeftoversAreReadAsSuchAndRepaired() {
        P4State device = write(fabric(), intent());
        P4TableEntry web = (P4TableEntry) device.get(HmuxP4Layout.serviceEntry(WEB, 0, CONFIG.encap, 0).key());
        long sid = web.action.param(HMUX_SET_SERVICE_SERVICE_ID_ID).asLong();
        P4Group g = device.groups(HMUX_DIP_SELECTOR_ID).get(sid);
        P4State broken = new P4State();
        device.all().stream().filter(e -> !e.key().equals(g.key())).forEach(broken::add);
        broken.add(HmuxP4Layout.dipMember(999, "10.1.0.9", 9));          // a member nothing lists
        HmuxP4Snapshot now = reader.read(broken);
        assertTrue(now.reading.inconsistent.get(ItemKey.entry(WEB)).contains("no dip_selector group"),
                now.reading.inconsistent.toString());
        assertTrue(now.reading.inconsistent.keySet().stream().anyMatch(k -> k.item == ItemKey.Item.FOREIGN
                && k.name.contains(" 999")), now.reading.inconsistent.toString());
        assertFalse(now.reading.intent.entries.containsKey(WEB));
        SwitchDelta d = IntentDiff.diff(CAP.holdable(intent()), now.reading);
        assertFalse(d.isEmpty());
        P4State fixed = apply(broken, P4Diff.batches(now.ours, plan.plan(CAP.holdable(intent()), now)));
        HmuxP4Snapshot back = reader.read(fixed);
        assertTrue(back.reading.inconsistent.isEmpty(), back.reading.inconsistent.toString());
        assertTrue(IntentDiff.diff(CAP.holdable(intent()), back.reading).isEmpty());
    }

    @Test
    void anotherEncapsulationOrAStaleSmuxHopIsInconsistent() {
        HmuxP4Config ipip = new HmuxP4Config(HashContract.Encap.IPIP, COOKIE_BASE, CONFIG.nextIds, CONFIG.smuxAddresses);
        P4State device = write(fabric(), intent());
        assertTrue(new HmuxP4Reader(ipip).read(device).reading.inconsistent.get(ItemKey.entry(WEB)).contains("GRE"));
        // smux-b's route moves behind agg-1: the aggregate's member towards it is stale
        P4State moved = new P4State();
        device.all().stream().filter(e -> !e.key().equals(HmuxP4Layout.routeEntry("10.0.3.0/24", 2, 0).key()))
                .forEach(moved::add);
        moved.add(HmuxP4Layout.routeEntry("10.0.3.0/24", 3, 0));
        HmuxP4Snapshot now = reader.read(moved);
        assertTrue(now.reading.inconsistent.containsKey(ItemKey.aggregate("10.9.0.0/16")), now.reading.toString());
        List<P4Update> ups = P4Diff.flat(P4Diff.batches(now.ours, plan.plan(intent(), now)));
        assertEquals(1, ups.size(), ups.toString());
        assertEquals(P4Update.Type.MODIFY, ups.get(0).type);
        assertEquals(hop(3, "02aa"), ((P4Member) ups.get(0).entity).action);
    }

    @Test
    void anSmuxTheSwitchCannotRouteToIsUnreachable() {
        P4State device = new P4State();
        fabric().all().stream().filter(e -> !e.key().equals(HmuxP4Layout.routeEntry("10.0.3.0/24", 2, 0).key()))
                .forEach(device::add);
        HmuxP4Snapshot now = reader.read(device);
        assertTrue(now.reading.unreachable.get("smux-b").contains("no route to 10.0.3.10"));
        SwitchDelta d = IntentDiff.diff(intent(), now.reading);
        assertEquals(Set.of("smux-a"), d.putAggregates.get("10.9.0.0/16"));
        P4State after = apply(device, P4Diff.batches(now.ours, plan.plan(d.target, now)));
        assertEquals(Set.of("smux-a"), reader.read(after).reading.intent.aggregates.get("10.9.0.0/16"));
    }

    @Test
    void whatASwitchCannotHoldIsRefusedNamingIt() {
        SwitchIntent noNext = SwitchIntent.builder().route("10.9.0.7", "tor-9").build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> plan.plan(noNext, HmuxP4Snapshot.EMPTY));
        assertTrue(e.getMessage().contains("tor-9"), e.getMessage());
        SwitchIntent heavy = SwitchIntent.builder().entry(WEB, List.of(new DipBucket(0, "10.1.0.1", "10.1.0.1", 20000))).build();
        e = assertThrows(IllegalArgumentException.class, () -> plan.plan(heavy, HmuxP4Snapshot.EMPTY));
        assertTrue(e.getMessage().contains("dip_selector"), e.getMessage());
    }

    @Test
    void valuesAreCanonicalWhateverThePadding() {
        assertEquals(P4Value.of(new byte[] {0, 0, 1, 2}), P4Value.of(0x102));
        assertEquals(P4Value.of(new byte[] {0}), P4Value.of(0));
        assertEquals("10.9.0.1", P4Value.ipv4("10.9.0.1").asIpv4());
        assertEquals(List.of((byte) 1, (byte) 2), List.of(P4Value.of(0x102).bytes()[0], P4Value.of(0x102).bytes()[1]));
    }
}
