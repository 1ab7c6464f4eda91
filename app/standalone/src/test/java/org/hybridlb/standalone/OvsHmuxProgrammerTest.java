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
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.ServiceEntry;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.topology.FatTree;
import org.hybridlb.standalone.ovs.OvsHmuxProgrammer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The OVS HMux programmer against a real private ovs-vswitchd (netdev bridges, one per switch of a k=2 fat-tree). */
class OvsHmuxProgrammerTest {
    static PrivateOvs ovs;
    static Topology topo = FatTree.generate(new FatTree.Params().k(2));
    static TestFabric tf;
    static Fabric fabric;
    @TempDir
    static Path dir;
    final Set<String> down = new HashSet<>();
    OvsHmuxProgrammer p;

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
            ovs.ovs.ofctl("del-flows", "unix:" + ovs.dir.resolve(br + ".mgmt"));
            ovs.ovs.ofctl("del-groups", "unix:" + ovs.dir.resolve(br + ".mgmt"));
            // a fabric flow the programmer must never touch
            ovs.ovs.ofctl("add-flow", "unix:" + ovs.dir.resolve(br + ".mgmt"), "cookie=0x1,priority=0,actions=goto_table:1");
        }
        p = new OvsHmuxProgrammer(fabric, ovs.ovs, () -> Set.copyOf(down));
    }

    static String tor(int pod) {
        return topo.switches.stream().filter(s -> s.id.startsWith("tor-" + pod)).findFirst().orElseThrow().id;
    }

    static VipEntry vip(String ip, String... dips) {
        List<Bucket> b = new ArrayList<>();
        int id = 0;
        for (String d : dips) {
            b.add(new Bucket(d, id == 1 ? 3 : 1, null, id * 7 + 2));
            id++;
        }
        return new VipEntry(ip, "10.100.0.0/16", List.of(new ServiceEntry("tcp", 80, b),
                new ServiceEntry("udp", 0, List.of(new Bucket("10.99.0.9", 1, dips[0], 5))))).normalized();
    }

    String flows(String sw) {
        return ovs.ovs.ofctl("--no-stats", "dump-flows", "unix:" + ovs.dir.resolve(tf.bridges.get(sw) + ".mgmt"));
    }

    @Test
    void installReadsBackEqualAndRoutesTheOtherSwitches() {
        String hm = tor(0);
        VipEntry e = vip("10.100.0.1", "10.0.0.2", "10.0.0.3", "10.0.1.2");
        p.install(hm, e);
        assertEquals(Map.of("10.100.0.1", e), p.installedOn(hm));
        String f = flows(hm);
        assertTrue(f.contains("priority=3100,tcp,nw_dst=10.100.0.1,tp_dst=80 actions=set_field:0x"
                + Integer.toHexString(tf.locations.get(hm)) + "->pkt_mark,group:"), f);
        assertTrue(f.contains("priority=3050,udp,nw_dst=10.100.0.1 actions="), f);
        assertTrue(f.contains("cookie=0x1,"), "the fabric's own flow is untouched: " + f);
        for (String sw : tf.bridges.keySet()) {
            if (!sw.equals(hm)) {
                assertTrue(flows(sw).contains("priority=2000,ip,nw_dst=10.100.0.1 actions=set_field:0x"
                        + Integer.toHexString(tf.locations.get(hm)) + "->reg0,resubmit(,2)"), sw + ": " + flows(sw));
                assertEquals(Map.of(), p.installedOn(sw));
            }
        }
        String groups = ovs.ovs.ofctl("dump-groups", "unix:" + ovs.dir.resolve(tf.bridges.get(hm) + ".mgmt"));
        assertTrue(groups.contains("type=select,selection_method=hash,fields(ip_src,ip_dst,nw_proto,tcp_src,tcp_dst,udp_src,udp_dst)"
                + ",bucket=bucket_id:2,actions=set_field:10.0.0.2->tun_dst,output:100"
                + ",bucket=bucket_id:9,weight:3,actions=set_field:10.0.0.3->tun_dst,output:100"), groups);
        assertTrue(groups.contains("bucket=bucket_id:5,actions=set_field:0xa630009->reg1,set_field:10.0.0.2->tun_dst,output:100"), groups);

        // a fresh programmer (daemon restart) reads the same thing back, and installing it again changes nothing
        OvsHmuxProgrammer again = new OvsHmuxProgrammer(fabric, ovs.ovs, Set::of);
        assertEquals(Map.of("10.100.0.1", e), again.installedOn(hm));
        again.close();

        // move to another switch: the routes follow, the old entry stays until removed (make-before-break)
        String other = tor(1);
        p.install(other, e);
        p.remove(hm, "10.100.0.1");
        assertEquals(Map.of(), p.installedOn(hm));
        assertEquals(Map.of("10.100.0.1", e), p.installedOn(other));
        assertTrue(flows(hm).contains("priority=2000,ip,nw_dst=10.100.0.1 actions=set_field:0x"
                + Integer.toHexString(tf.locations.get(other)) + "->reg0"), flows(hm));
        assertFalse(flows(hm).contains("group:"), flows(hm));
    }

    @Test
    void aRepairPassReadsEachSwitchOnceEvenWhenReadingTakesLongerThanTheTtl() throws InterruptedException {
        // a TTL far below what reading the fabric takes, as on a loaded machine
        p.snapshotTtl(java.time.Duration.ofNanos(1));
        p.install(tor(0), vip("10.100.0.1", "10.0.0.2"));
        long t0 = System.nanoTime();
        p.installedOn(tor(0));
        Thread.sleep(3 * (System.nanoTime() - t0) / 1_000_000 + 1); // every reading is out of date now
        long before = p.counters().reads;
        for (String sw : tf.bridges.keySet()) { // what Controller.repair does
            p.installedOn(sw);
        }
        long reads = p.counters().reads - before;
        int n = tf.bridges.size();
        // one batch of n (a fixed TTL re-read all n on every ask: n * n); one more batch if the
        // machine stalled between two asks for twice the batch's time
        assertTrue(reads <= 2L * n, reads + " reads for " + n + " switches");
        assertTrue(reads >= n, reads + " reads: the first ask must read every switch (its TTL had passed)");
    }

    @Test
    void traceHashesLikeTheSmuxReplica() throws Exception {
        String hm = tor(0);
        List<Bucket> b = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            b.add(new Bucket("10.0." + i + ".2", i == 3 ? 4 : 1, null, i * 3 + 1));
        }
        VipEntry e = new VipEntry("10.100.0.7", "10.100.0.0/16", List.of(new ServiceEntry("tcp", 443, b)));
        p.install(hm, e);
        p.installedOn(hm);
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
        java.nio.file.Files.writeString(ffFile, f.toString());
        OvsHmuxProgrammer q = new OvsHmuxProgrammer(Fabric.load(ffFile), ovs.ovs, Set::of);
        try {
            String hm = tor(0);
            String other = tor(1);
            int loc = tf.locations.get(hm);
            String mgmt = "unix:" + ovs.dir.resolve(tf.bridges.get(other) + ".mgmt");
            q.setSmuxGroup("10.100.0.0/16", topo.smuxes);
            q.install(hm, vip("10.100.0.1", "10.0.0.2", "10.0.0.3"));
            assertEquals(1, q.installedOn(hm).size());
            String routes = flows(other);
            assertTrue(routes.contains("priority=2000,ip,nw_dst=10.100.0.1 actions=group:"
                    + (OvsHmuxProgrammer.FAILOVER_GROUP_BASE + loc)), routes);
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
            OvsHmuxProgrammer again = new OvsHmuxProgrammer(Fabric.load(ffFile), ovs.ovs, Set::of);
            assertEquals(q.installedOn(hm), again.installedOn(hm));
            String before = ovs.ovs.ofctl("-O", "OpenFlow15", "dump-groups", mgmt);
            again.install(hm, vip("10.100.0.1", "10.0.0.2", "10.0.0.3"));
            again.installedOn(hm);
            assertEquals(before, ovs.ovs.ofctl("-O", "OpenFlow15", "dump-groups", mgmt));
            again.close();
        } finally {
            q.close();
        }
    }

    @Test
    void aBadBundleChangesNothing() {
        String hm = tor(0);
        VipEntry good = vip("10.100.0.1", "10.0.0.2", "10.0.0.3");
        p.install(hm, good);
        p.installedOn(hm);
        String before = flows(hm) + ovs.ovs.ofctl("dump-groups", "unix:" + ovs.dir.resolve(tf.bridges.get(hm) + ".mgmt"));
        // a weight OpenFlow cannot carry: the second service is refused, so nothing of the update is applied
        VipEntry bad = new VipEntry("10.100.0.1", "10.100.0.0/16", List.of(
                new ServiceEntry("tcp", 80, List.of(new Bucket("10.0.0.4", 1, null, 1))),
                new ServiceEntry("tcp", 22, List.of(new Bucket("10.0.0.5", 70000, null, 2)))));
        p.install(hm, bad);
        SouthboundException ex = assertThrows(SouthboundException.class, () -> p.installedOn(hm));
        assertTrue(ex.getMessage().contains(hm), ex.getMessage());
        String after = flows(hm) + ovs.ovs.ofctl("dump-groups", "unix:" + ovs.dir.resolve(tf.bridges.get(hm) + ".mgmt"));
        assertEquals(before, after);
        assertEquals(Map.of("10.100.0.1", good), p.installedOn(hm), "the programmer re-reads the truth after a refusal");
    }

    @Test
    void theSwitchRefusingOneModRefusesTheWholeBundle() {
        String br = tf.bridges.get(tor(0));
        String target = "unix:" + ovs.dir.resolve(br + ".mgmt");
        String before = ovs.ovs.ofctl("--no-stats", "dump-flows", target) + ovs.ovs.ofctl("dump-groups", target);
        // valid group and flow, then a flow whose group does not exist: refused by the switch, not by ovs-ofctl
        assertThrows(SouthboundException.class, () -> ovs.ovs.bundle(br, List.of(
                "group add_or_mod group_id=70001,type=select," + OvsHmuxProgrammer.HASH
                        + ",bucket=bucket_id:0,actions=set_field:10.0.0.2->tun_dst,output:100",
                "flow add table=0,cookie=0x4c420001,priority=3100,tcp,nw_dst=10.100.9.9,tp_dst=80 actions=group:70001",
                "flow add table=0,cookie=0x4c420001,priority=3100,tcp,nw_dst=10.100.9.9,tp_dst=81 actions=group:99999")));
        assertEquals(before, ovs.ovs.ofctl("--no-stats", "dump-flows", target) + ovs.ovs.ofctl("dump-groups", target));
    }

    @Test
    void withdrawRoutesRemovesOnlyRoutesTowardsTheFailedSwitch() {
        String a = tor(0);
        String b = tor(1);
        p.install(a, vip("10.100.0.1", "10.0.0.2"));
        p.install(b, vip("10.100.0.2", "10.0.1.2"));
        p.installedOn(a);
        down.add(a);
        p.withdrawRoutes(a, List.of("10.100.0.1"));
        for (String sw : tf.bridges.keySet()) {
            String f = flows(sw);
            if (sw.equals(a)) {
                assertTrue(f.contains("nw_dst=10.100.0.1,tp_dst=80"), "the failed switch is not touched");
                continue;
            }
            assertFalse(f.contains("priority=2000,ip,nw_dst=10.100.0.1 "), sw + ": " + f);
            if (!sw.equals(b)) {
                assertTrue(f.contains("priority=2000,ip,nw_dst=10.100.0.2 "), sw + ": " + f);
            }
        }
        // back from the dead: its stale route to b is kept right, and installedOn repairs missing routes
        down.clear();
        p.installedOn(a);
        assertTrue(flows(a).contains("priority=2000,ip,nw_dst=10.100.0.2 "), flows(a));
    }

    @Test
    void smuxGroupFollowsTheLiveSet() throws InterruptedException {
        var m = topo.smuxes;
        assertTrue(m.size() >= 2, "k=2 has an SMux per pod");
        p.setSmuxGroup("10.100.0.0/16", m);
        Set<String> all = new HashSet<>();
        m.forEach(s -> all.add(s.id));
        assertEquals(Map.of("10.100.0.0/16", all), p.smuxGroups());
        String f = flows(tor(0));
        assertTrue(f.contains("priority=1000,ip,nw_dst=10.100.0.0/16 actions=group:"), f);
        Thread.sleep(1100);
        // a restarted daemon (it learns the members from the switches) loses an SMux: the change
        // is sent when the call returns, not with the next batch
        p.close();
        p = new OvsHmuxProgrammer(fabric, ovs.ovs, () -> Set.copyOf(down));
        p.setSmuxGroup("10.100.0.0/16", List.of(m.get(1)));
        String lost = ovs.ovs.ofctl("dump-groups", "unix:" + ovs.dir.resolve(tf.bridges.get(tor(0)) + ".mgmt"));
        assertFalse(lost.contains("bucket_id:0,"), lost);
        assertEquals(Map.of("10.100.0.0/16", Set.of(m.get(1).id)), p.smuxGroups());
        // a member change modifies the group only: the aggregate flow is the one added before
        String stats = ovs.ovs.ofctl("dump-flows", "unix:" + ovs.dir.resolve(tf.bridges.get(tor(0)) + ".mgmt"),
                "cookie=0x4c420003/0xffffffff");
        Matcher age = Pattern.compile("duration=([0-9.]+)s").matcher(stats);
        assertTrue(age.find() && Double.parseDouble(age.group(1)) >= 1.0, "aggregate flow re-added: " + stats);
        String g = ovs.ovs.ofctl("dump-groups", "unix:" + ovs.dir.resolve(tf.bridges.get(tor(0)) + ".mgmt"));
        int loc = fabric.smuxLocation(m.get(1));
        assertTrue(g.contains("actions=set_field:0x" + Integer.toHexString(loc) + "->reg0,resubmit(,2)"), g);
        // one switch loses its aggregate: reported as different, so the controller rewrites it
        ovs.ovs.ofctl("del-flows", "unix:" + ovs.dir.resolve(tf.bridges.get(tor(1)) + ".mgmt"), "cookie=0x4c420003/0xffffffff");
        Thread.sleep(1100); // readings are reused for up to a second (one controller repair pass)
        assertFalse(p.smuxGroups().equals(Map.of("10.100.0.0/16", Set.of(m.get(1).id))));
        p.setSmuxGroup("10.100.0.0/16", List.of());
        assertEquals(Map.of(), p.smuxGroups());
        assertFalse(flows(tor(0)).contains("priority=1000"));
    }

    @Test
    void aLostSmuxLeavesEveryGroupInOneBundlePerSwitch() {
        var m = topo.smuxes;
        p.setSmuxGroups(Map.of("10.100.0.0/16", m, "10.101.0.0/16", m));
        assertEquals(2, p.smuxGroups().size());
        long before = p.counters().bundles;
        p.setSmuxGroups(Map.of("10.100.0.0/16", List.of(m.get(1)), "10.101.0.0/16", List.of(m.get(1))));
        assertEquals(fabric.switches.size(), p.counters().bundles - before, "one bundle per switch, sent at once");
        assertEquals(Map.of("10.100.0.0/16", Set.of(m.get(1).id), "10.101.0.0/16", Set.of(m.get(1).id)), p.smuxGroups());
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
                Files.copy(OvsHmuxProgrammerTest.class.getResourceAsStream("/replica_pick.c"), driver,
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
