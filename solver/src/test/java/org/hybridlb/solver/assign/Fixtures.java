package org.hybridlb.solver.assign;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.model.VipTraffic;

/** Small hand-built fabrics and workloads for the tests (independent of the data helper's generators). */
final class Fixtures {
    static final double G10 = 1e10;
    static final double G40 = 4e10;

    private Fixtures() {
    }

    /**
     * A 3-tier Clos: {@code pods} pods of {@code tors} ToRs and {@code aggs} aggs, {@code cores}
     * cores; agg j of every pod links to cores j, j+aggs, j+2*aggs, ... (so every core reaches
     * every pod through one agg). {@code hostsPerTor} hosts per ToR, ip 10.pod.tor.h+1.
     */
    static Topology clos(int pods, int tors, int aggs, int cores, int hostsPerTor, TableCapacity tables) {
        List<Switch> sw = new ArrayList<>();
        List<Link> links = new ArrayList<>();
        List<Host> hosts = new ArrayList<>();
        for (int c = 0; c < cores; c++) {
            sw.add(new Switch("c" + c, SwitchRole.CORE, null, tables));
        }
        for (int p = 0; p < pods; p++) {
            for (int a = 0; a < aggs; a++) {
                sw.add(new Switch("a" + p + "_" + a, SwitchRole.AGG, p, tables));
                for (int c = a; c < cores; c += aggs) {
                    links.add(new Link("a" + p + "_" + a, "c" + c, G40));
                }
            }
            for (int t = 0; t < tors; t++) {
                String tor = "t" + p + "_" + t;
                sw.add(new Switch(tor, SwitchRole.TOR, p, tables));
                for (int a = 0; a < aggs; a++) {
                    links.add(new Link(tor, "a" + p + "_" + a, G10));
                }
                for (int h = 0; h < hostsPerTor; h++) {
                    hosts.add(new Host("h" + p + "_" + t + "_" + h, "10." + p + "." + t + "." + (h + 1), tor));
                }
            }
        }
        return new Topology("clos", sw, links, hosts, List.of());
    }

    static Dip dip(String ip) {
        return new Dip(ip, 1, null);
    }

    static Vip vip(String ip, List<Dip> dips) {
        return new Vip(ip, ip.substring(0, ip.lastIndexOf('.')) + ".0/24", List.of(new VipPort("any", 0, dips)));
    }

    static VipTraffic traffic(String vip, Map<String, Double> sources) {
        return new VipTraffic(vip, sources, null);
    }

    /** A random workload on t: VIPs 100.0.x.y with 1..maxDips DIPs on random hosts, skewed traffic. */
    static Object[] randomWorkload(Topology t, int vips, int maxDips, double scaleBps, long seed) {
        Random r = new Random(seed);
        List<Vip> vs = new ArrayList<>();
        List<VipTraffic> ts = new ArrayList<>();
        for (int i = 0; i < vips; i++) {
            String ip = "100.0." + (i / 200) + "." + (i % 200 + 1);
            int nd = 1 + r.nextInt(maxDips);
            List<Dip> dips = new ArrayList<>();
            java.util.Set<String> used = new java.util.HashSet<>();
            for (int d = 0; d < nd; d++) {
                Host h = t.hosts.get(r.nextInt(t.hosts.size()));
                if (used.add(h.ip)) {
                    dips.add(new Dip(h.ip, 1 + r.nextInt(2), null));
                }
            }
            vs.add(vip(ip, dips));
            Map<String, Double> src = new LinkedHashMap<>();
            double total = scaleBps / Math.pow(i + 1, 1.1);
            src.put(VipTraffic.INTERNET, total * 0.3);
            int ns = 1 + r.nextInt(4);
            for (int k = 0; k < ns; k++) {
                Host h = t.hosts.get(r.nextInt(t.hosts.size()));
                src.merge(r.nextBoolean() ? h.id : h.tor, total * 0.7 / ns, Double::sum);
            }
            ts.add(new VipTraffic(ip, src, null));
        }
        return new Object[] {new VipSet(vs), new TrafficInterval(0, 0, 600, ts)};
    }
}
