package org.hybridlb.standalone;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.hybridlb.app.core.hmux.DipBucket;
import org.hybridlb.app.core.hmux.IntentDiff;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.app.core.hmux.SwitchReading;
import org.hybridlb.app.core.p4.HlbP4Info;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.topology.FatTree;
import org.hybridlb.standalone.p4rt.P4rtHmuxSouthbound;

/**
 * How fast hybridlbd installs VIPs on a P4 HMux over P4Runtime: N VIP services (tcp/80, two DIPs
 * each: a service entry, a dip_select entry, a group and two members) written through the
 * southbound to a fresh model switch (p4/switch/hlb_p4switch.py) on a Unix socket, read back and
 * checked. Prints per run and the medians: install time, P4Runtime updates per second, read-back time.
 * Run: {@code bash app/standalone/bench.sh --p4rt [vips] [runs]}.
 */
public final class P4rtBench {
    private P4rtBench() {
    }

    public static void main(String[] args) throws Exception {
        int vips = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        List<Double> install = new ArrayList<>();
        List<Double> rate = new ArrayList<>();
        List<Double> readBack = new ArrayList<>();
        double load = Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        for (int r = 1; r <= runs; r++) {
            Path dir = Files.createTempDirectory("hlb-p4rt-bench");
            try (ModelP4Switch sw = new ModelP4Switch(dir)) {
                Topology topo = FatTree.generate(new FatTree.Params().k(2));
                String id = topo.switches.get(0).id;
                ObjectNode p4 = DaemonConfig.STRICT.createObjectNode().put("grpc", sw.address)
                        .put("profile", HlbP4Info.PROFILE_HLB_HMUX).put("p4info", ModelP4Switch.p4info("hlb_hmux").toString());
                TestFabric.write(dir, topo, dir.resolve("ovs"), "bench", Map.of(), Map.of(id, p4));
                Fabric fabric = Fabric.load(dir.resolve("fabric.json"));
                Map<String, Integer> next = new TreeMap<>();
                fabric.switches.values().stream().filter(s -> !s.id.equals(id)).forEach(s -> next.put(s.id, s.location));
                sw.programFabric(HlbP4Info.PROFILE_HLB_HMUX, next, Map.of());
                try (P4rtHmuxSouthbound sb = new P4rtHmuxSouthbound(fabric)) {
                    SwitchIntent.Builder b = SwitchIntent.builder();
                    for (int i = 0; i < vips; i++) {
                        String vip = "10.200." + (i / 250) + "." + (i % 250 + 1);
                        b.entry(new ServiceMatch(vip, "tcp", 80), List.of(
                                new DipBucket(0, "10.0.1." + (i % 200 + 1), "10.0.1." + (i % 200 + 1), 1),
                                new DipBucket(1, "10.0.2." + (i % 200 + 1), "10.0.2." + (i % 200 + 1), 1)));
                    }
                    SwitchIntent want = sb.capability(id).holdable(b.build());
                    SwitchReading empty = sb.read(List.of(id)).get(id);
                    long t0 = System.nanoTime();
                    sb.apply(Map.of(id, IntentDiff.diff(want, empty)));
                    double secs = (System.nanoTime() - t0) / 1e9;
                    long t1 = System.nanoTime();
                    SwitchReading back = sb.read(List.of(id)).get(id);
                    double readSecs = (System.nanoTime() - t1) / 1e9;
                    if (!IntentDiff.diff(want, back).isEmpty()) {
                        throw new IllegalStateException("run " + r + ": the switch does not read back as written: " + back);
                    }
                    long n = sb.counters().updates;
                    install.add(secs);
                    rate.add(n / secs);
                    readBack.add(readSecs);
                    System.out.printf(Locale.ROOT, "  run %d: %d VIPs, %d updates in %d writes, installed in %.2f s (%.0f updates/s),"
                            + " read back in %.2f s%n", r, vips, n, sb.counters().writes, secs, n / secs, readSecs);
                }
            } finally {
                try (var files = Files.walk(dir)) {
                    files.sorted(Collections.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
        System.out.printf(Locale.ROOT, "P4Runtime southbound to the model switch, %d VIPs (5 entities each), medians of %d runs "
                + "(load average %.2f at the start):%n  install %.2f s, %.0f updates/s, read-back %.2f s%n",
                vips, runs, load, median(install), median(rate), median(readBack));
    }

    static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        Collections.sort(s);
        return s.size() % 2 == 1 ? s.get(s.size() / 2) : (s.get(s.size() / 2 - 1) + s.get(s.size() / 2)) / 2;
    }
}
