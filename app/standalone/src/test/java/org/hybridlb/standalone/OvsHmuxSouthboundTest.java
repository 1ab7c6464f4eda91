package org.hybridlb.standalone;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.IntentDiff;
import org.hybridlb.app.core.hmux.ItemKey;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.topology.FatTree;
import org.hybridlb.standalone.ovs.OvsHmuxSouthbound;
import org.hybridlb.standalone.ovs.OvsRules;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The OVS southbound against a real private ovs-vswitchd (netdev bridges, one per switch of a k=2
 * fat-tree): what the renderer sends is applied by real bridges and read back to the same intent;
 * what the layout would not have written is read as inconsistent or foreign and repaired.
 */
class OvsHmuxSouthboundTest {
    static PrivateOvs ovs;
    static Topology topo = FatTree.generate(new FatTree.Params().k(2));
    static TestFabric tf;
    static Fabric fabric;
    static final String AGG = "10.100.0.0/16";
    static final long FABRIC_GROUP = Fabric.DEFAULT_GROUP_ID_BASE + Fabric.CONTROLLER_GROUP_SPAN;
    @TempDir
    static Path dir;
    final Set<String> down = new HashSet<>();
    OvsHmuxSouthbound p;

    @BeforeAll
    static void startOvs() throws IOException {
        ovs = PrivateOvs.start();
        tf = TestFabric.write(dir, topo, ovs, "hlbp", Map.of());
        for (String br : tf.bridges.values()) {
            ovs.addBridge(br, TestFabric.GRE_OFPORT);
        }
        fabric = Fabric.load(tf.file);
    }

    @AfterAll
    static void stopOvs() {
        if (ovs != null) {
            ovs.close();
        }
    }

    @BeforeEach
    void clean() {
        for (String br : tf.bridges.values()) {
            ovs.ovs.ofctl("del-flows", mgmt(br));
            ovs.ovs.ofctl("del-groups", mgmt(br));
            // a fabric flow and a fabric group (above the daemon's group range, as the emulation's
            // local-repair groups) the southbound must never touch
            ovs.ovs.ofctl("add-flow", mgmt(br), "cookie=0x1,priority=0,actions=goto_table:1");
            ovs.ovs.ofctl("add-group", mgmt(br), "group_id=" + FABRIC_GROUP + ",type=select");
        }
        p = new OvsHmuxSouthbound(fabric, ovs.ovs, () -> Set.copyOf(down));
    }

    @AfterEach
    void close() {
        p.close();
    }

    static String mgmt(String bridge) {
        return "unix:" + ovs.dir.resolve(bridge + ".mgmt");
    }

    static String tor(int pod) {
        return topo.switches.stream().filter(s -> s.id.startsWith("tor-" + pod)).findFirst().orElseThrow().id;
    }

    static String flows(String sw) {
        return ovs.ovs.ofctl("--no-stats", "dump-flows", mgmt(tf.bridges.get(sw)));
    }

    static String groups(String sw) {
        return ovs.ovs.ofctl("dump-groups", mgmt(tf.bridges.get(sw)));
    }

    static List<String> groupIds(String sw) {
        List<String> ids = new ArrayList<>();
        Matcher m = Pattern.compile("group_id=\\d+").matcher(groups(sw));
        while (m.find()) {
            ids.add(m.group());
        }
        return ids;
    }

    static Set<String> smuxIds() {
        Set<String> ids = new java.util.TreeSet<>();
        topo.smuxes.forEach(m -> ids.add(m.id));
        return ids;
    }

    /** An HMux intent: VIP .1 on this switch with three services, VIP .2 routed to {@code other}, the aggregate. */
    static SwitchIntent hmuxIntent(String other) {
        return SwitchIntent.builder()
                .entry(new ServiceMatch("10.100.0.1", "tcp", 80), List.of(new DipBucket(2, "10.0.0.2", "10.0.0.2", 1),
                        new DipBucket(9, "10.0.0.3", "10.0.0.3", 3)))
                .entry(new ServiceMatch("10.100.0.1", "udp", 0), List.of(new DipBucket(5, "10.99.0.9", "10.0.0.2", 1)))
                .entry(new ServiceMatch("10.100.0.3", "any", 0), List.of(new DipBucket(0, "10.0.1.2", "10.0.1.2", 1)))
                .route("10.100.0.2", other)
                .aggregate(AGG, smuxIds())
                .build();
    }

    SwitchReading read(String sw) {
        return p.read(List.of(sw)).get(sw);
    }

    /** Brings {@code sw} to {@code desired} as the controller does: read, diff, apply; returns the delta. */
    SwitchDelta converge(String sw, SwitchIntent desired) {
        SwitchDelta d = IntentDiff.diff(desired, read(sw));
        if (!d.isEmpty()) {
            p.apply(Map.of(sw, d));
        }
        return d;
    }

    @Test
    void whatIsRenderedReadsBackAsTheSameIntent() {
        String hm = tor(0);
        SwitchIntent want = hmuxIntent(tor(1));
        converge(hm, want);
        assertEquals(SwitchReading.of(want), read(hm));

        String f = flows(hm);
        String loc = Integer.toHexString(tf.locations.get(hm));
        assertTrue(f.contains("priority=3100,tcp,nw_dst=10.100.0.1,tp_dst=80 actions=set_field:0x" + loc + "->pkt_mark,group:"), f);
        assertTrue(f.contains("priority=3050,udp,nw_dst=10.100.0.1 actions="), f);
        assertTrue(f.contains("priority=3000,ip,nw_dst=10.100.0.3 actions="), f);
        assertTrue(f.contains("priority=2000,ip,nw_dst=10.100.0.2 actions=set_field:0x"
                + Integer.toHexString(tf.locations.get(tor(1))) + "->reg0,resubmit(,2)"), f);
        assertTrue(f.contains("priority=1000,ip,nw_dst=10.100.0.0/16 actions=group:"), f);
        assertTrue(f.contains("cookie=0x1,"), "the fabric's own flow is untouched: " + f);
        String g = groups(hm);
        assertTrue(g.contains("type=select," + OvsRules.HASH
                + ",bucket=bucket_id:2,actions=set_field:10.0.0.2->tun_dst,output:100"
                + ",bucket=bucket_id:9,weight:3,actions=set_field:10.0.0.3->tun_dst,output:100"), g);
        assertTrue(g.contains("bucket=bucket_id:5,actions=set_field:0xa630009->reg1,set_field:10.0.0.2->tun_dst,output:100"), g);

        // a restarted daemon reads the same thing back, and has nothing to write
        OvsHmuxSouthbound again = new OvsHmuxSouthbound(fabric, ovs.ovs, Set::of);
        try {
            assertEquals(SwitchReading.of(want), again.read(List.of(hm)).get(hm));
            assertTrue(IntentDiff.diff(want, again.read(List.of(hm)).get(hm)).isEmpty());
        } finally {
            again.close();
        }

        // every service and route leaves; nothing of hybridlb stays (no group either)
        converge(hm, SwitchIntent.EMPTY);
        assertEquals(SwitchReading.of(SwitchIntent.EMPTY), read(hm));
        assertFalse(flows(hm).contains("nw_dst="), flows(hm));
        assertEquals(List.of("group_id=" + FABRIC_GROUP), groupIds(hm), "only the fabric's own group is left");
    }

    @Test
    void aChangedPoolRewritesOnlyItsGroupAndKeepsItsId() {
        String hm = tor(0);
        converge(hm, hmuxIntent(tor(1)));
        String before = groups(hm);
        Matcher gid = Pattern.compile("group_id=(\\d+),type=select[^\\n]*bucket_id:9").matcher(before);
        assertTrue(gid.find(), before);
        SwitchIntent.Builder b = hmuxIntent(tor(1)).toBuilder();
        b.entry(new ServiceMatch("10.100.0.1", "tcp", 80), List.of(new DipBucket(2, "10.0.0.2", "10.0.0.2", 1)));
        SwitchDelta d = converge(hm, b.build());
        assertEquals(1, d.size(), "one entry rewritten: " + d);
        assertTrue(groups(hm).contains("group_id=" + gid.group(1) + ",type=select," + OvsRules.HASH
                + ",bucket=bucket_id:2,actions=set_field:10.0.0.2->tun_dst,output:100\n")
                || groups(hm).contains("group_id=" + gid.group(1) + ",type=select," + OvsRules.HASH
                + ",bucket=bucket_id:2,actions=set_field:10.0.0.2->tun_dst,output:100"), groups(hm));
        assertEquals(SwitchReading.of(b.build()), read(hm));
    }

    @Test
    void whatTheLayoutWouldNotWriteIsReadInconsistentAndRewritten() throws InterruptedException {
        String hm = tor(0);
        String br = tf.bridges.get(hm);
        SwitchIntent want = hmuxIntent(tor(1));
        converge(hm, want);
        String g = groups(hm);
        Matcher m = Pattern.compile("group_id=(\\d+),type=select[^\\n]*bucket_id:9").matcher(g);
        assertTrue(m.find(), g);
        // the entry's group loses its hash method (OVS's default dp_hash: no SMux agreement), an entry
        // sits at a priority off the ladder, a group nothing points at, a half-written route
        ovs.ovs.ofctl("-O", "OpenFlow15", "mod-group", mgmt(br), "group_id=" + m.group(1)
                + ",type=select,bucket=bucket_id:2,actions=set_field:10.0.0.2->tun_dst,output:100");
        ovs.ovs.ofctl("-O", "OpenFlow15", "add-flow", mgmt(br), "cookie=" + OvsRules.hex(fabric.cookie | 1)
                + ",priority=3000,udp,nw_dst=10.100.0.7,actions=drop");
        ovs.ovs.ofctl("-O", "OpenFlow15", "add-group", mgmt(br), "group_id=70007,type=select,bucket=actions=drop");
        ovs.ovs.ofctl("-O", "OpenFlow15", "add-flow", mgmt(br), "cookie=" + OvsRules.hex(fabric.cookie | 2)
                + ",priority=2000,ip,nw_dst=10.100.0.9,actions=drop");
        Thread.sleep(1100); // past the reading's reuse
        SwitchReading r = read(hm);
        ServiceMatch tcp80 = new ServiceMatch("10.100.0.1", "tcp", 80);
        assertTrue(r.inconsistent.get(ItemKey.entry(tcp80)).contains("does not select with"), r.toString());
        assertTrue(r.inconsistent.get(ItemKey.entry(new ServiceMatch("10.100.0.7", "udp", 0)))
                .contains("at priority 3000, not 3050"), r.toString());
        assertTrue(r.inconsistent.containsKey(ItemKey.foreign("group 70007")), r.toString());
        assertTrue(r.inconsistent.get(ItemKey.route("10.100.0.9")).contains("towards location 0"), r.toString());
        assertFalse(r.intent.entries.containsKey(tcp80), "an inconsistent item is not read as held: " + r.intent);

        SwitchDelta d = converge(hm, want);
        assertEquals(Set.of(tcp80), d.putEntries.keySet(), d.toString());
        assertEquals(SwitchReading.of(want), read(hm), "repaired: exactly the intent, nothing foreign left");
        assertFalse(groups(hm).contains("group_id=70007"), groups(hm));
    }

    @Test
    void aBadBundleChangesNothing() {
        String hm = tor(0);
        SwitchIntent good = hmuxIntent(tor(1));
        converge(hm, good);
        String before = flows(hm) + groups(hm);
        // a change ovs-ofctl cannot send (no such address) next to a good one: nothing of the delta is applied
        SwitchIntent bad = good.toBuilder()
                .entry(new ServiceMatch("10.100.0.1", "tcp", 22), List.of(new DipBucket(1, "10.0.0.4", "no-such-address", 1)))
                .entry(new ServiceMatch("10.100.0.1", "tcp", 80), List.of(new DipBucket(1, "10.0.0.4", "10.0.0.4", 1)))
                .build();
        SouthboundException ex = assertThrows(SouthboundException.class, () -> converge(hm, bad));
        assertTrue(ex.getMessage().contains(hm), ex.getMessage());
        assertEquals(before, flows(hm) + groups(hm));
        assertEquals(SwitchReading.of(good), read(hm), "read again after a refusal: the truth");
    }

    @Test
    void theSwitchRefusingOneModRefusesTheWholeBundle() {
        String br = tf.bridges.get(tor(0));
        String before = flows(tor(0)) + groups(tor(0));
        // valid group and flow, then a flow whose group does not exist: refused by the switch, not by ovs-ofctl
        assertThrows(SouthboundException.class, () -> ovs.ovs.bundle(br, List.of(
                "group add_or_mod group_id=70001,type=select," + OvsRules.HASH
                        + ",bucket=bucket_id:0,actions=set_field:10.0.0.2->tun_dst,output:100",
                "flow add table=0,cookie=" + OvsRules.hex(fabric.cookie | 1) + ",priority=3100,tcp,nw_dst=10.100.9.9,tp_dst=80 actions=group:70001",
                "flow add table=0,cookie=" + OvsRules.hex(fabric.cookie | 1) + ",priority=3100,tcp,nw_dst=10.100.9.9,tp_dst=81 actions=group:99999")));
        assertEquals(before, flows(tor(0)) + groups(tor(0)));
    }

    @Test
    void aWithdrawalRemovesOnlyRoutesTowardsTheFailedSwitch() {
        String a = tor(0);
        String b = tor(1);
        Map<String, SwitchIntent> want = new LinkedHashMap<>();
        for (String sw : tf.bridges.keySet()) {
            SwitchIntent.Builder x = SwitchIntent.builder();
            if (!sw.equals(a)) {
                x.route("10.100.0.1", a);
            }
            if (!sw.equals(b)) {
                x.route("10.100.0.2", b);
            }
            want.put(sw, x.build());
            converge(sw, x.build());
        }
        Map<String, SwitchDelta> w = new LinkedHashMap<>();
        tf.bridges.keySet().stream().filter(sw -> !sw.equals(a)).forEach(sw -> w.put(sw, SwitchDelta.withdraw(a, List.of())));
        down.add(a);
        p.apply(w);
        for (String sw : tf.bridges.keySet()) {
            String f = flows(sw);
            if (sw.equals(a)) {
                assertTrue(f.contains("priority=2000,ip,nw_dst=10.100.0.2 "), "the failed switch is not touched: " + f);
                continue;
            }
            assertFalse(f.contains("nw_dst=10.100.0.1 "), sw + ": " + f);
            if (!sw.equals(b)) {
                assertTrue(f.contains("priority=2000,ip,nw_dst=10.100.0.2 "), sw + ": " + f);
                assertEquals(Map.of("10.100.0.2", b), read(sw).intent.routes, sw);
            }
        }
        // the liveness source's fast path: one delete per switch, without the controller
        down.clear();
        converge(b, want.get(b));
        p.fastWithdraw(a);
        assertFalse(flows(b).contains("nw_dst=10.100.0.1 "), flows(b));
    }

    @Test
    void aggregatesFollowTheLiveSmuxesAndALostOneLeavesEveryGroupInOneBundlePerSwitch() throws InterruptedException {
        List<Smux> m = topo.smuxes;
        assertTrue(m.size() >= 2, "k=2 has an SMux per pod");
        Map<String, SwitchDelta> all = new LinkedHashMap<>();
        SwitchIntent both = SwitchIntent.builder().aggregate(AGG, smuxIds()).aggregate("10.101.0.0/16", smuxIds()).build();
        for (String sw : tf.bridges.keySet()) {
            all.put(sw, IntentDiff.diff(both, read(sw)));
        }
        p.apply(all);
        for (String sw : tf.bridges.keySet()) {
            assertEquals(SwitchReading.of(both), read(sw), sw);
        }
        Thread.sleep(1100);
        SwitchIntent one = SwitchIntent.builder().aggregate(AGG, Set.of(m.get(1).id))
                .aggregate("10.101.0.0/16", Set.of(m.get(1).id)).build();
        long bundles = p.counters().bundles;
        Map<String, SwitchDelta> lost = new LinkedHashMap<>();
        for (String sw : tf.bridges.keySet()) {
            lost.put(sw, IntentDiff.diff(one, read(sw)));
        }
        p.apply(lost);
        assertEquals(tf.bridges.size(), p.counters().bundles - bundles, "one bundle per switch");
        for (String sw : tf.bridges.keySet()) {
            assertEquals(SwitchReading.of(one), read(sw), sw);
        }
        String g = groups(tor(0));
        assertFalse(g.contains("bucket_id:0,"), g);
        int loc = fabric.smuxLocation(m.get(1));
        assertTrue(g.contains("actions=set_field:0x" + Integer.toHexString(loc) + "->reg0,resubmit(,2)"), g);
        // a member change modifies the group only: the aggregate flow is the one added before
        String stats = ovs.ovs.ofctl("dump-flows", mgmt(tf.bridges.get(tor(0))),
                String.format("cookie=0x%x/0xffffffff", fabric.cookie | 3));
        Matcher age = Pattern.compile("duration=([0-9.]+)s").matcher(stats);
        assertTrue(age.find() && Double.parseDouble(age.group(1)) >= 1.0, "aggregate flow re-added: " + stats);
        converge(tor(0), SwitchIntent.EMPTY);
        assertFalse(flows(tor(0)).contains("priority=1000"), flows(tor(0)));
    }

    @Test
    void aRepairPassReadsEachSwitchOnceEvenWhenReadingTakesLongerThanTheTtl() throws InterruptedException {
        p.snapshotTtl(java.time.Duration.ofNanos(1)); // as on a loaded machine
        long t0 = System.nanoTime();
        p.read(tf.bridges.keySet());
        Thread.sleep(3 * (System.nanoTime() - t0) / 1_000_000 + 1); // every reading is out of date now
        long before = p.counters().reads;
        p.read(tf.bridges.keySet());
        for (String sw : tf.bridges.keySet()) { // what a verify of single switches does right after
            p.read(List.of(sw));
        }
        long reads = p.counters().reads - before;
        int n = tf.bridges.size();
        assertTrue(reads <= 2L * n, reads + " reads for " + n + " switches");
        assertTrue(reads >= n, reads + " reads: the first ask must read every switch (its TTL had passed)");
    }

    @Test
    void traceHashesLikeTheSmuxReplica() throws Exception {
        String hm = tor(0);
        List<Bucket> b = new ArrayList<>();
        List<DipBucket> rendered = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            b.add(new Bucket("10.0." + i + ".2", i == 3 ? 4 : 1, null, i * 3 + 1));
            rendered.add(new DipBucket(i * 3 + 1, "10.0." + i + ".2", "10.0." + i + ".2", i == 3 ? 4 : 1));
        }
        converge(hm, SwitchIntent.builder().entry(new ServiceMatch("10.100.0.7", "tcp", 443), rendered).build());
        Map<Integer, String> dipOf = new HashMap<>();
        b.forEach(x -> dipOf.put(x.bucketId, x.ip));
        Random rnd = new Random(7);
        List<String> tuples = new ArrayList<>();
        List<Integer> picked = new ArrayList<>();
        Pattern using = Pattern.compile("using bucket (\\d+)");
        Pattern tun = Pattern.compile("set_field:([0-9.]+)->tun_dst");
        for (int i = 0; i < 40; i++) {
            String src = "10.0." + rnd.nextInt(4) + "." + (2 + rnd.nextInt(200));
            int sport = 1024 + rnd.nextInt(60000);
            String trace = ovs.appctl("ofproto/trace", tf.bridges.get(hm),
                    "in_port=LOCAL,tcp,nw_src=" + src + ",nw_dst=10.100.0.7,tcp_src=" + sport + ",tcp_dst=443");
            Matcher m = using.matcher(trace);
            assertTrue(m.find(), trace);
            int bucket = Integer.parseInt(m.group(1));
            Matcher t = tun.matcher(trace.substring(m.end()));
            assertTrue(t.find(), trace);
            assertTrue(trace.contains("output:" + TestFabric.GRE_OFPORT) && trace.contains("-> output to native tunnel"), trace);
            assertEquals(dipOf.get(bucket), t.group(1), "the chosen bucket encapsulates to its own DIP");
            tuples.add(src + " 10.100.0.7 " + sport + " 443 6");
            picked.add(bucket);
        }
        assertTrue(new HashSet<>(picked).size() >= 3, "40 flows spread over the buckets: " + picked);
        List<Integer> replica = ReplicaTool.pick(tuples, b);
        org.junit.jupiter.api.Assumptions.assumeTrue(replica != null,
                "the SMux replica (smux/src/ovs_hash.c) or cc is not available: bucket-by-bucket agreement not checked");
        assertEquals(replica, picked, "OVS and the SMux's replica pick the same bucket for every flow");
    }

    @Test
    void withFastFailoverRoutesTurnToTheSmuxesWhenTheHmuxLocationIsUnreachable() throws IOException {
        // the same bridges, described with a fallback table and location watch groups
        com.fasterxml.jackson.databind.node.ObjectNode f =
                (com.fasterxml.jackson.databind.node.ObjectNode) DaemonConfig.STRICT.readTree(tf.file.toFile());
        ((com.fasterxml.jackson.databind.node.ObjectNode) f.get("tables")).put("fallback", 3);
        f.put("locationWatchGroup", "{location}");
        Path ffFile = dir.resolve("fabric-ff.json");
        Files.writeString(ffFile, f.toString());
        Fabric ffFabric = Fabric.load(ffFile);
        OvsHmuxSouthbound q = new OvsHmuxSouthbound(ffFabric, ovs.ovs, Set::of);
        try {
            String hm = tor(0);
            String other = tor(1);
            int loc = tf.locations.get(hm);
            String mgmt = mgmt(tf.bridges.get(other));
            assertTrue(q.capability(other).fastFailover);
            SwitchIntent want = SwitchIntent.builder().route("10.100.0.1", hm).aggregate(AGG, smuxIds())
                    .fallback(true).build();
            q.apply(Map.of(other, IntentDiff.diff(want, q.read(List.of(other)).get(other))));
            assertEquals(SwitchReading.of(want), q.read(List.of(other)).get(other));
            String routes = flows(other);
            assertTrue(routes.contains("priority=2000,ip,nw_dst=10.100.0.1 actions=group:"
                    + (OvsRules.FAILOVER_GROUP_BASE + loc)), routes);
            assertTrue(routes.contains("table=3, priority=1000,ip,nw_dst=10.100.0.0/16 actions=group:"), routes);
            String packet = "in_port=LOCAL,tcp,nw_src=10.0.0.9,nw_dst=10.100.0.1,tcp_src=999,tcp_dst=80";

            // the fabric's group towards the HMux has a live bucket: the route goes there
            ovs.ovs.ofctl("-O", "OpenFlow15", "add-group", mgmt, "group_id=" + loc + ",type=select,bucket=actions=drop");
            String alive = ovs.appctl("ofproto/trace", tf.bridges.get(other), packet);
            assertTrue(alive.contains("set_field:0x" + Integer.toHexString(loc) + "->reg0") && !alive.contains("resubmit(,3)"),
                    alive);

            // no live bucket left (the HMux and every path to it are down): the SMux aggregate, at once
            ovs.ovs.ofctl("-O", "OpenFlow15", "mod-group", mgmt, "group_id=" + loc + ",type=select");
            String dead = ovs.appctl("ofproto/trace", tf.bridges.get(other), packet);
            assertTrue(dead.contains("resubmit(,3)") && dead.contains(" 3. ip,nw_dst=10.100.0.0/16")
                    && !dead.contains("set_field:0x" + Integer.toHexString(loc) + "->reg0"), dead);

            // a restarted daemon reads the failover groups back and writes nothing again
            OvsHmuxSouthbound again = new OvsHmuxSouthbound(ffFabric, ovs.ovs, Set::of);
            assertTrue(IntentDiff.diff(want, again.read(List.of(other)).get(other)).isEmpty());
            again.close();

            // the fallback taken down: routes straight to the HMux, no failover group, no fallback copy
            SwitchIntent without = want.toBuilder().fallback(false).build();
            OvsHmuxSouthbound plain = new OvsHmuxSouthbound(ffFabric, ovs.ovs, Set::of);
            plain.apply(Map.of(other, IntentDiff.diff(without, plain.read(List.of(other)).get(other))));
            assertEquals(SwitchReading.of(without), plain.read(List.of(other)).get(other));
            assertFalse(flows(other).contains("table=3"), flows(other));
            assertFalse(groups(other).contains("type=ff"), groups(other));
            plain.close();
        } finally {
            q.close();
        }
    }

    /** The SMux's replica compiled from smux/src/ovs_hash.c with a small driver. */
    static final class ReplicaTool {
        static List<Integer> pick(List<String> tuples, List<Bucket> buckets) throws IOException, InterruptedException {
            Path smux = Path.of(System.getProperty("user.dir")).resolve("../../smux").normalize();
            Path src = smux.resolve("src/ovs_hash.c");
            if (!Files.exists(src) || !Files.isExecutable(Path.of("/usr/bin/cc"))) {
                return null;
            }
            Path tool = Files.createTempFile("hlbd-replica", "");
            Path driver = Files.createTempFile("hlbd-replica", ".c");
            try {
                Files.copy(OvsHmuxSouthboundTest.class.getResourceAsStream("/replica_pick.c"), driver,
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                Proc proc = new Proc(Map.of(), 60_000);
                proc.run(List.of("cc", "-O2", "-I", smux.resolve("include").toString(), driver.toString(),
                        src.toString(), "-o", tool.toString()), null);
                StringBuilder in = new StringBuilder();
                StringBuilder ids = new StringBuilder();
                buckets.forEach(x -> ids.append(' ').append(x.bucketId).append(':').append(x.weight));
                tuples.forEach(t -> in.append(t).append(ids).append('\n'));
                List<Integer> out = new ArrayList<>();
                for (String l : proc.run(List.of(tool.toString()), in.toString()).split("\n")) {
                    if (!l.isBlank()) {
                        out.add(Integer.parseInt(l.strip()));
                    }
                }
                return out;
            } finally {
                Files.deleteIfExists(tool);
                Files.deleteIfExists(driver);
            }
        }
    }
}
