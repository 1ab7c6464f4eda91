package org.hybridlb.solver.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.hybridlb.solver.io.ModelChecks;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.TrafficTrace;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.topology.DuetClos;
import org.hybridlb.solver.topology.DuetTestbed;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkloadGeneratorTest {
    /** 8 pods x 8 ToRs x 16 hosts: big enough for the distributions to show, fast enough for a unit test. */
    private static Topology clos;
    private static Workload workload;
    private static final int VIPS = 6000;
    private static final int INTERVALS = 6;

    @BeforeAll
    static void generate() {
        clos = DuetClos.generate(DuetClos.Params.small(8, 8, 2, 4).hostsPerTor(16));
        workload = WorkloadGenerator.generate(clos, params(), 43);
    }

    private static WorkloadGenerator.Params params() {
        return new WorkloadGenerator.Params().vipCount(VIPS).intervals(INTERVALS);
    }

    @Test
    void sameSeedSameBytesOtherSeedOtherWorkload() {
        WorkloadGenerator.Params p = params().vipCount(1500).intervals(3);
        Workload one = WorkloadGenerator.generate(clos, p, 42);
        Workload again = WorkloadGenerator.generate(clos, p, 42);
        assertEquals(ModelIo.toJson(one.vips), ModelIo.toJson(again.vips));
        assertEquals(ModelIo.toJson(one.trace), ModelIo.toJson(again.trace));
        Workload other = WorkloadGenerator.generate(clos, p, 43);
        assertNotEquals(ModelIo.toJson(one.vips), ModelIo.toJson(other.vips));
        assertNotEquals(ModelIo.toJson(one.trace), ModelIo.toJson(other.trace));
    }

    @Test
    void writtenFilesPassSchemasAndModelChecks(@TempDir Path dir) {
        for (Topology t : List.of(clos, DuetTestbed.generate(), FatTree.generate(4))) {
            Workload w = WorkloadGenerator.generate(t, params().vipCount(t == clos ? 400 : 200).intervals(3), 7);
            Path topoFile = dir.resolve(t.name + "-topology.json");
            Path vipsFile = dir.resolve(t.name + "-vips.json");
            Path trafficFile = dir.resolve(t.name + "-traffic.json");
            ModelIo.write(topoFile, t);
            ModelIo.write(vipsFile, w.vips);
            ModelIo.write(trafficFile, w.trace);
            Topology topo = ModelIo.readTopology(topoFile);
            VipSet vips = ModelIo.readVips(vipsFile);
            ModelChecks.checkVipsAgainstTopology(vips, topo, vipsFile.toString());
            TrafficTrace trace = ModelIo.readTraffic(trafficFile, vips, topo);
            assertEquals(w.trace.intervals.size(), trace.intervals.size());
            assertEquals(ModelIo.toJson(w.vips), ModelIo.toJson(vips), "JSON round trip is lossless");
        }
    }

    @Test
    void fewElephantVipsCarryMostTraffic() {
        for (int i = 0; i < INTERVALS; i++) {
            WorkloadStats s = WorkloadStats.of(workload, i);
            assertTrue(s.topTenthShare > 0.6 && s.topTenthShare < 0.9, "top 10% carry " + s.topTenthShare);
            assertTrue(s.topHundredthShare > 0.2, "top 1% carry " + s.topHundredthShare);
            double max = workload.trace.intervals.get(i).vips.stream().mapToDouble(VipTraffic::totalBps).max()
                    .orElse(0);
            assertTrue(max / s.totalBytesPerSec < 0.05, "no single VIP dominates: " + max / s.totalBytesPerSec);
        }
    }

    @Test
    void aboutSeventyPercentOfTrafficIsInternal() {
        for (int i = 0; i < INTERVALS; i++) {
            assertEquals(0.7, WorkloadStats.of(workload, i).internalShare, 0.01, "interval " + i);
        }
        Workload half = WorkloadGenerator.generate(clos, params().vipCount(500).intervals(2), 1);
        WorkloadGenerator.Params p = params().vipCount(500).intervals(2);
        p.internalShare = 0.4;
        Workload mostlyExternal = WorkloadGenerator.generate(clos, p, 1);
        assertEquals(0.7, WorkloadStats.of(half, 1).internalShare, 0.01);
        assertEquals(0.4, WorkloadStats.of(mostlyExternal, 1).internalShare, 0.01);
        // shares differ per VIP: some front-ends are mostly Internet, some back-ends mostly internal
        long mostlyInternet = workload.trace.intervals.get(0).vips.stream()
                .filter(v -> v.sources.getOrDefault(VipTraffic.INTERNET, 0.0) > 0.8 * v.totalBps()).count();
        long mostlyInside = workload.trace.intervals.get(0).vips.stream()
                .filter(v -> v.sources.getOrDefault(VipTraffic.INTERNET, 0.0) < 0.1 * v.totalBps()).count();
        assertTrue(mostlyInternet > VIPS / 50 && mostlyInside > VIPS / 20, mostlyInternet + " / " + mostlyInside);
    }

    @Test
    void dipCountsAreSkewedAndFollowTraffic() {
        List<Integer> counts = new ArrayList<>();
        workload.vips.vips.forEach(v -> counts.add(WorkloadStats.dipCount(v)));
        counts.sort(Comparator.reverseOrder());
        long total = counts.stream().mapToLong(Integer::longValue).sum();
        long top = counts.subList(0, counts.size() / 10).stream().mapToLong(Integer::longValue).sum();
        int median = counts.get(counts.size() / 2);
        assertTrue(median >= 4 && median <= 8, "median DIPs " + median);
        assertTrue((double) top / total > 0.35, "top 10% of VIPs hold " + (double) top / total + " of DIPs");
        assertTrue(counts.get(0) > 100, "the largest VIP has " + counts.get(0) + " DIPs");

        // bigger services have more servers: the busiest 10% of VIPs average more DIPs than the rest
        List<VipTraffic> byRate = new ArrayList<>(workload.trace.intervals.get(0).vips);
        byRate.sort(Comparator.comparingDouble(VipTraffic::totalBps).reversed());
        Map<String, Vip> vipOf = new HashMap<>();
        workload.vips.vips.forEach(v -> vipOf.put(v.vip, v));
        int tenth = byRate.size() / 10;
        double busy = byRate.subList(0, tenth).stream()
                .mapToInt(t -> WorkloadStats.dipCount(vipOf.get(t.vip))).average().orElse(0);
        double quiet = byRate.subList(byRate.size() / 2, byRate.size()).stream()
                .mapToInt(t -> WorkloadStats.dipCount(vipOf.get(t.vip))).average().orElse(0);
        assertTrue(busy > 3 * quiet, "busy VIPs average " + busy + " DIPs, quiet ones " + quiet);
    }

    @Test
    void totalIsTheLoadFractionOfToRUplinksAndDriftsWithinBounds() {
        double uplinksBps = 8 * 8 * 2 * 10e9; // 64 ToRs x 2 Aggs x 10G
        double expected = 0.1 * uplinksBps / 8;
        assertEquals(expected, WorkloadStats.of(workload, 0).totalBytesPerSec, expected * 1e-4);
        Set<Double> totals = new HashSet<>();
        for (int i = 0; i < INTERVALS; i++) {
            double total = WorkloadStats.of(workload, i).totalBytesPerSec;
            assertTrue(Math.abs(total / expected - 1) <= 0.0701, "interval " + i + ": " + total / expected);
            totals.add(Math.rint(total / expected * 1000));
        }
        assertTrue(totals.size() > 1, "the total moves between intervals");
        WorkloadGenerator.Params p = params().vipCount(300).intervals(1).totalBps(1e12);
        assertEquals(1e12 / 8, WorkloadStats.of(WorkloadGenerator.generate(clos, p, 3), 0).totalBytesPerSec, 1e12 / 8 * 1e-4);
    }

    @Test
    void vipsGrowShrinkAppearAndDisappear() {
        List<TrafficInterval> in = workload.trace.intervals;
        Map<String, List<Integer>> activeIn = new HashMap<>();
        for (TrafficInterval interval : in) {
            interval.vips.forEach(v -> activeIn.computeIfAbsent(v.vip, k -> new ArrayList<>()).add(interval.index));
        }
        assertEquals(VIPS, activeIn.size(), "every configured VIP lives in some interval");
        int appeared = 0;
        int disappeared = 0;
        for (List<Integer> active : activeIn.values()) {
            int first = active.get(0);
            int last = active.get(active.size() - 1);
            assertEquals(last - first + 1, active.size(), "a VIP lives in one contiguous stretch");
            appeared += first > 0 ? 1 : 0;
            disappeared += last < INTERVALS - 1 ? 1 : 0;
        }
        assertTrue(appeared > VIPS * 0.03 && appeared < VIPS * 0.07, "appeared " + appeared);
        assertTrue(disappeared > VIPS * 0.03 && disappeared < VIPS * 0.08, "disappeared " + disappeared);

        Map<String, Double> first = rates(in.get(0));
        Map<String, Double> last = rates(in.get(INTERVALS - 1));
        List<String> both = new ArrayList<>(first.keySet());
        both.retainAll(last.keySet());
        double rho = spearman(both, first, last);
        assertTrue(rho > 0.7 && rho < 0.999, "rank correlation first/last interval " + rho);
        // relative to the common factor (total drift, renormalisation after an elephant's burst)
        double[] ratios = both.stream().mapToDouble(v -> last.get(v) / first.get(v)).sorted().toArray();
        double common = ratios[ratios.length / 2];
        long grew = both.stream().filter(v -> last.get(v) > 1.5 * common * first.get(v)).count();
        long shrank = both.stream().filter(v -> last.get(v) < common * first.get(v) / 1.5).count();
        assertTrue(grew > both.size() / 20 && shrank > both.size() / 20, "grew " + grew + ", shrank " + shrank);
    }

    @Test
    void portsWeightsAndHostsLookLikeACloud() {
        Map<String, Host> hostByIp = new HashMap<>();
        clos.hosts.forEach(h -> hostByIp.put(h.ip, h));
        int portBased = 0;
        int splitPools = 0;
        int weighted = 0;
        int bareMetal = 0;
        int sharedHost = 0;
        for (Vip v : workload.vips.vips) {
            boolean any = v.ports.get(0).proto.equals("any");
            portBased += any ? 0 : 1;
            if (v.ports.size() > 1 && v.ports.get(0).dips.get(0) != v.ports.get(1).dips.get(0)) {
                splitPools++;
            }
            List<Dip> dips = v.ports.get(0).dips;
            weighted += dips.stream().anyMatch(d -> d.weight != 1) ? 1 : 0;
            dips.forEach(d -> assertTrue(Set.of(1, 2, 4).contains(d.weight)));
            if (dips.get(0).hostIp == null) {
                bareMetal++;
                dips.forEach(d -> assertTrue(hostByIp.containsKey(d.ip), "bare-metal DIP is a host"));
            } else {
                Set<String> hosts = new HashSet<>();
                for (VipPort p : v.ports) {
                    p.dips.forEach(d -> assertTrue(Ipv4Range.in("172.16.0.0/12", d.ip), d.ip));
                }
                dips.forEach(d -> hosts.add(d.hostIp));
                sharedHost += hosts.size() < dips.size() ? 1 : 0;
            }
        }
        assertEquals(0.3, (double) portBased / VIPS, 0.03, "port-based share");
        assertTrue(splitPools > VIPS / 50, "some port-based VIPs split their DIPs over services: " + splitPools);
        assertTrue(weighted > VIPS * 0.05, "weighted (WCMP) VIPs " + weighted);
        assertEquals(0.2, (double) bareMetal / VIPS, 0.03, "bare-metal share");
        assertTrue(sharedHost > VIPS / 10, "VIPs with several DIPs on one host: " + sharedHost);
    }

    /**
     * Per pod, the traffic towards a VIP's DIPs (split by DIP weight, as the solver does) in
     * interval 0, and the largest of those over the VIPs not yet in all 8 pods, as a share of one
     * core-pod link's 80%.
     */
    private static double worstPodShareOfCoreLink(Topology t, Workload w) {
        Map<String, Integer> podOfTor = new HashMap<>();
        t.switches.forEach(s -> podOfTor.put(s.id, s.pod));
        Map<String, Integer> podOfHostIp = new HashMap<>();
        t.hosts.forEach(h -> podOfHostIp.put(h.ip, podOfTor.get(h.tor)));
        Map<String, Vip> byId = new HashMap<>();
        w.vips.vips.forEach(v -> byId.put(v.vip, v));
        double worst = 0;
        for (VipTraffic vt : w.trace.intervals.get(0).vips) {
            Vip v = byId.get(vt.vip);
            Map<Integer, Double> perPod = new HashMap<>();
            double ports = v.ports.size();
            for (VipPort p : v.ports) {
                double weights = p.dips.stream().mapToDouble(d -> d.weight).sum();
                for (Dip d : p.dips) {
                    perPod.merge(podOfHostIp.get(d.tunnelEndpoint()),
                            vt.totalBps() / ports * d.weight / weights, Double::sum);
                }
            }
            if (perPod.size() == 8) {
                continue; // in every pod already: nothing more to spread over
            }
            double max = perPod.values().stream().mapToDouble(Double::doubleValue).max().orElse(0);
            worst = Math.max(worst, max * 8 / (0.8 * 40e9));
        }
        return worst;
    }

    @Test
    void bigVipsSpreadOverPodsAndClientRacksByTraffic() {
        // at 20x the default load the elephants carry tens of Gbps: more than one core->pod
        // link could take if their DIPs sat in 1 + dips/32 pods
        WorkloadGenerator.Params heavy = new WorkloadGenerator.Params().vipCount(2000).intervals(2).loadFraction(2.0);
        Workload spread = WorkloadGenerator.generate(clos, heavy, 7);
        WorkloadGenerator.Params byCount = new WorkloadGenerator.Params().vipCount(2000).intervals(2).loadFraction(2.0);
        byCount.podLinkShare = 0;
        byCount.clientTorLinkShare = 0;
        Workload old = WorkloadGenerator.generate(clos, byCount, 7);
        double before = worstPodShareOfCoreLink(clos, old);
        double after = worstPodShareOfCoreLink(clos, spread);
        assertTrue(before > 1, "by DIP count alone some VIP needs more than a core link per pod: " + before);
        // the rule aims at half the link for the base rate; drift, bursts and colocated DIPs may add
        assertTrue(after <= 1, "spread by traffic, every VIP's traffic per pod fits a core link: " + after);
        // no client rack sends one VIP more than half of one 10G uplink's 80%, in any interval
        double cap = 0.5 * 0.8 * 10e9 / 8;
        double worstSource = 0;
        double worstOld = 0;
        for (int i = 0; i < 2; i++) {
            for (VipTraffic vt : spread.trace.intervals.get(i).vips) {
                for (Map.Entry<String, Double> e : vt.sources.entrySet()) {
                    if (!e.getKey().equals(VipTraffic.INTERNET)) {
                        worstSource = Math.max(worstSource, e.getValue());
                    }
                }
            }
            for (VipTraffic vt : old.trace.intervals.get(i).vips) {
                for (Map.Entry<String, Double> e : vt.sources.entrySet()) {
                    if (!e.getKey().equals(VipTraffic.INTERNET)) {
                        worstOld = Math.max(worstOld, e.getValue());
                    }
                }
            }
        }
        assertTrue(worstOld > cap, "without the cap some rack sends more: " + worstOld);
        assertTrue(worstSource <= cap + 1, "client rack share capped: " + worstSource + " > " + cap);
    }

    @Test
    void capSharesWaterFills() {
        double[] out = WorkloadGenerator.capShares(new double[] {8, 1, 1}, 10, 4);
        assertEquals(4, out[0], 1e-9);
        assertEquals(3, out[1], 1e-9);
        assertEquals(3, out[2], 1e-9);
        double[] all = WorkloadGenerator.capShares(new double[] {1, 1}, 10, 4);
        assertEquals(5, all[0], 1e-9, "everyone at the cap: the rest evenly");
    }

    @Test
    void clientsClusterNearTheirService() {
        Map<String, Integer> podOfTor = new HashMap<>();
        for (Switch s : clos.switches) {
            if (s.pod != null) {
                podOfTor.put(s.id, s.pod);
            }
        }
        Map<String, Integer> podOfHostIp = new HashMap<>();
        clos.hosts.forEach(h -> podOfHostIp.put(h.ip, podOfTor.get(h.tor)));
        Map<String, Set<Integer>> dipPods = new HashMap<>();
        for (Vip v : workload.vips.vips) {
            Set<Integer> pods = new HashSet<>();
            v.ports.forEach(p -> p.dips.forEach(d -> pods.add(podOfHostIp.get(d.tunnelEndpoint()))));
            dipPods.put(v.vip, pods);
        }
        double internal = 0;
        double local = 0;
        double uniformLocal = 0;
        for (VipTraffic t : workload.trace.intervals.get(0).vips) {
            Set<Integer> pods = dipPods.get(t.vip);
            for (Map.Entry<String, Double> e : t.sources.entrySet()) {
                if (!e.getKey().equals(VipTraffic.INTERNET)) {
                    internal += e.getValue();
                    local += pods.contains(podOfTor.get(e.getKey())) ? e.getValue() : 0;
                    uniformLocal += e.getValue() * pods.size() / 8.0;
                }
            }
        }
        assertTrue(local / internal > uniformLocal / internal + 0.2,
                "same-pod client share " + local / internal + " vs " + uniformLocal / internal + " if uniform");
    }

    @Test
    void badParametersAndTopologiesAreRefusedByName() {
        IllegalArgumentException count = assertThrows(IllegalArgumentException.class,
                () -> WorkloadGenerator.generate(clos, params().vipCount(0), 1));
        assertTrue(count.getMessage().startsWith("vipCount:"), count.getMessage());
        IllegalArgumentException huge = assertThrows(IllegalArgumentException.class,
                () -> WorkloadGenerator.generate(clos, params().vipCount(1_000_000).intervals(100), 1));
        assertTrue(huge.getMessage().startsWith("intervals:") && huge.getMessage().contains("memory"),
                huge.getMessage());
        WorkloadGenerator.Params share = params();
        share.internalShare = 1.5;
        IllegalArgumentException internal = assertThrows(IllegalArgumentException.class,
                () -> WorkloadGenerator.generate(clos, share, 1));
        assertTrue(internal.getMessage().startsWith("internalShare:"), internal.getMessage());
        WorkloadGenerator.Params tiny = params().vipCount(600);
        tiny.vipPrefix = "100.64.0.0/24";
        IllegalArgumentException prefix = assertThrows(IllegalArgumentException.class,
                () -> WorkloadGenerator.generate(clos, tiny, 1));
        assertTrue(prefix.getMessage().startsWith("vipPrefix:"), prefix.getMessage());
        Topology noHosts = DuetClos.generate(DuetClos.Params.small(1, 1, 1, 1).hostsPerTor(0).smuxesPerPod(0));
        IllegalArgumentException hosts = assertThrows(IllegalArgumentException.class,
                () -> WorkloadGenerator.generate(noHosts, params(), 1));
        assertTrue(hosts.getMessage().startsWith("topology:"), hosts.getMessage());
    }

    @Property(tries = 25)
    void anySeedAndSizeGivesAValidWorkload(@ForAll long seed, @ForAll @IntRange(min = 1, max = 300) int vips,
                                           @ForAll @IntRange(min = 1, max = 5) int intervals) {
        Topology t = DuetTestbed.generate();
        Workload w = WorkloadGenerator.generate(t, params().vipCount(vips).intervals(intervals), seed);
        assertEquals(vips, w.vips.vips.size());
        assertEquals(intervals, w.trace.intervals.size());
        Workload again = WorkloadGenerator.generate(t, params().vipCount(vips).intervals(intervals), seed);
        assertEquals(ModelIo.toJson(w.trace), ModelIo.toJson(again.trace), "same seed, same trace");
        ModelChecks.checkVips(w.vips, "vips");
        ModelChecks.checkVipsAgainstTopology(w.vips, t, "vips");
        ModelChecks.checkTraffic(w.trace, w.vips, t, "traffic");
        double expected = 0.1 * 8 * 10e9 / 8;
        for (TrafficInterval in : w.trace.intervals) {
            assertEquals(in.index * 600L, in.startSeconds);
            if (in.vips.isEmpty()) {
                continue; // a tiny trace can have an interval where none of its VIPs exists yet
            }
            double total = in.vips.stream().mapToDouble(VipTraffic::totalBps).sum();
            assertTrue(Math.abs(total / expected - 1) < 0.0701 + in.vips.size() / expected,
                    "interval total " + total / expected);
        }
    }

    private static Map<String, Double> rates(TrafficInterval in) {
        Map<String, Double> m = new HashMap<>();
        in.vips.forEach(v -> m.put(v.vip, v.totalBps()));
        return m;
    }

    private static double spearman(List<String> keys, Map<String, Double> a, Map<String, Double> b) {
        Map<String, Integer> ra = ranks(keys, a);
        Map<String, Integer> rb = ranks(keys, b);
        double n = keys.size();
        double d2 = 0;
        for (String k : keys) {
            double d = ra.get(k) - rb.get(k);
            d2 += d * d;
        }
        return 1 - 6 * d2 / (n * (n * n - 1));
    }

    private static Map<String, Integer> ranks(List<String> keys, Map<String, Double> values) {
        List<String> sorted = new ArrayList<>(keys);
        sorted.sort(Comparator.comparingDouble(values::get));
        Map<String, Integer> r = new HashMap<>();
        for (int i = 0; i < sorted.size(); i++) {
            r.put(sorted.get(i), i);
        }
        return r;
    }

    /** Prefix membership without depending on the order of Ipv4's arguments. */
    private static final class Ipv4Range {
        static boolean in(String prefix, String ip) {
            return org.hybridlb.solver.model.Ipv4.contains(prefix, ip);
        }
    }
}
