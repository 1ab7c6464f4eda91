package org.hybridlb.app.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.topology.FatTree;

/**
 * The core's share of the control loop, on in-memory ports (no device latency): 1,000 VIPs with
 * Zipf-skewed traffic on a k=4 fat-tree. Prints medians of: first placement from empty (assign +
 * plan + program + verify every wave), a steady reconcile with nothing to change, and HMux
 * failover (switch-down event to the /32 withdrawal, and to the VIPs re-placed).
 * Run with app/core/bench.sh.
 */
public final class CoreBench {
    private CoreBench() {
    }

    public static void main(String[] args) {
        int vips = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        Topology topo = FatTree.generate(4);
        List<String> tors = new ArrayList<>();
        topo.switches.stream().filter(s -> s.role == SwitchRole.TOR).forEach(s -> tors.add(s.id));
        double[] create = new double[runs];
        double[] first = new double[runs];
        double[] steady = new double[runs];
        double[] withdraw = new double[runs];
        double[] replaced = new double[runs];
        String onHmux = "";
        for (int r = 0; r < runs; r++) {
            FakeFabric fabric = new FakeFabric(topo);
            SplittableRandom rng = new SplittableRandom(r);
            List<VipTraffic> traffic = new ArrayList<>();
            Controller c = new Controller(ControllerConfig.defaults().withInterval(Duration.ZERO),
                    fabric.ports(new FakeFabric.MemoryStore()));
            c.start();
            c.awaitIdle(60_000);
            long created = System.nanoTime();
            for (int v = 0; v < vips; v++) {
                String vip = "10.100." + (v / 250) + "." + (v % 250 + 1);
                int h = rng.nextInt(topo.hosts.size() - 3);
                c.createVip("{\"vip\":\"" + vip + "\",\"aggregate\":\"10.100.0.0/16\",\"ports\":[{\"proto\":\"tcp\","
                        + "\"port\":80,\"dips\":[{\"ip\":\"" + topo.hosts.get(h).ip + "\"},{\"ip\":\""
                        + topo.hosts.get(h + 1).ip + "\"},{\"ip\":\"" + topo.hosts.get(h + 2).ip + "\"}]}]}");
                double bps = 2e8 / Math.pow(v + 1, 0.9); // Zipf-like skew (Duet Fig. 3.15)
                traffic.add(new VipTraffic(vip, Map.of(tors.get(rng.nextInt(tors.size())), bps), null));
            }
            c.awaitIdle(120_000); // VIPs announced on the SMuxes (no traffic yet)
            create[r] = ms(created);
            fabric.traffic = new TrafficInterval(0, 0, 10, traffic);
            long t0 = System.nanoTime();
            c.reassignNow();
            c.awaitIdle(120_000);
            first[r] = ms(t0);
            t0 = System.nanoTime();
            c.reassignNow();
            c.awaitIdle(120_000);
            steady[r] = ms(t0);
            Map<String, String> installed = c.assignment().installed;
            Map<String, Long> perSwitch = new java.util.TreeMap<>();
            installed.values().stream().filter(p -> !Assignment.SMUX.equals(p)).forEach(p -> perSwitch.merge(p, 1L, Long::sum));
            onHmux = (installed.size() - installed.values().stream().filter(Assignment.SMUX::equals).count())
                    + " of " + installed.size() + " VIPs on HMuxes";
            String busiest = perSwitch.entrySet().stream().max(Map.Entry.comparingByValue()).get().getKey();
            fabric.takeLog();
            fabric.down.add(busiest);
            long[] withdrawnAt = {0};
            t0 = System.nanoTime();
            long start = t0;
            c.switchDown(busiest);
            while (withdrawnAt[0] == 0) {
                synchronized (fabric) {
                    if (fabric.log.stream().anyMatch(l -> l.startsWith("withdrawRoutes"))) {
                        withdrawnAt[0] = System.nanoTime();
                    }
                }
                Thread.onSpinWait();
            }
            withdraw[r] = (withdrawnAt[0] - start) / 1e6;
            c.awaitIdle(120_000);
            replaced[r] = ms(t0);
            c.close();
        }
        System.out.printf("app/core bench: %d VIPs, FatTree k=4, in-memory ports, %d runs (medians)%n", vips, runs);
        System.out.println("  placement: " + onHmux);
        System.out.printf("  %d POSTs of one VIP each, until on the SMuxes: %.1f ms%n", vips, median(create));
        System.out.printf("  first placement (assign + plan + program + verify all waves): %.1f ms%n", median(first));
        System.out.printf("  steady reconcile, nothing to change (repair reads + assign + plan): %.1f ms%n", median(steady));
        System.out.printf("  HMux failure -> /32 withdrawal issued: %.3f ms%n", median(withdraw));
        System.out.printf("  HMux failure -> its VIPs re-placed and verified: %.1f ms%n", median(replaced));
    }

    private static double ms(long t0) {
        return (System.nanoTime() - t0) / 1e6;
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }
}
