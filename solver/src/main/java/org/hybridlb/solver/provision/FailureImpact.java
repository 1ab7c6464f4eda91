package org.hybridlb.solver.provision;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.routing.EcmpRouter;
import org.hybridlb.solver.routing.Fabric;
import org.hybridlb.solver.routing.LinkLoads;

/**
 * Maximum link utilisation when switches fail (Duet §3.8.5, Fig. 3.19). The failed switches and
 * their links leave the fabric and routes are recomputed (ECMP on the surviving shortest paths);
 * VIPs on a failed switch fail over to the SMuxes; traffic from sources on failed switches and
 * to DIPs behind failed ToRs disappears (the paper: "all the traffic with sources and
 * destinations inside [a failed container] disappear[s]").
 *
 * <p>Accounting, the same with and without failure so the two compare: the traffic of the VIPs
 * on HMuxes (sources → HMux → DIPs) plus, under failure, the failed-over VIPs' traffic
 * (sources → SMuxes → DIPs, spread evenly over the SMuxes still alive, an approximation of BGP
 * anycast with ECMP). VIPs that were on the SMuxes already are left out of both. Utilisation is a
 * fraction of link bandwidth (not of the 80% the assignment may use), as in Fig. 3.19.
 *
 * <p>Scenarios (the paper's failure model: one container, or three switches): the pod whose
 * failure sends the most traffic to the SMuxes, the three switches with the most HMux traffic,
 * and {@code randomScenarios} seeded random pods and random switch triples. All C(n, 3) triples
 * (7 x 10^8 at paper scale, each needing new routes) cannot be tried: for SMux load the top-3
 * triple is exactly the worst (failover adds up per switch); for link load it is a heuristic
 * worst case, and the random ones follow the paper's own method (random failures).
 */
public final class FailureImpact {
    /** One scenario's outcome. */
    public static final class Scenario {
        public final String name;
        public final List<String> failed;
        public final double maxLinkUtilisation;
        public final String maxLink;

        Scenario(String name, List<String> failed, double maxLinkUtilisation, String maxLink) {
            this.name = name;
            this.failed = failed;
            this.maxLinkUtilisation = maxLinkUtilisation;
            this.maxLink = maxLink;
        }
    }

    private FailureImpact() {
    }

    /** Max link utilisation with nothing failed, same accounting. */
    public static Scenario baseline(Instance in, int[] placement) {
        return evaluate(in, placement, "no failure", List.of());
    }

    /** The scenarios of the class comment, worst first. */
    public static List<Scenario> scenarios(Instance in, int[] placement, int randomScenarios, long seed) {
        Fabric f = in.fabric();
        List<List<String>> sets = new ArrayList<>();
        List<String> names = new ArrayList<>();
        double[] perSwitch = new double[f.switchCount()];
        double[] perPod = new double[f.podCount()];
        for (int v = 0; v < in.vipCount(); v++) {
            if (placement[v] >= 0) {
                perSwitch[placement[v]] += in.trafficBps(v);
                if (f.pod(placement[v]) >= 0) {
                    perPod[f.pod(placement[v])] += in.trafficBps(v);
                }
            }
        }
        if (f.podCount() > 0) {
            int worst = 0;
            for (int q = 1; q < perPod.length; q++) {
                if (perPod[q] > perPod[worst]) {
                    worst = q;
                }
            }
            sets.add(podMembers(f, worst));
            names.add("pod " + f.podLabel(worst) + " (most HMux traffic)");
        }
        Integer[] bySwitch = new Integer[f.switchCount()];
        for (int s = 0; s < bySwitch.length; s++) {
            bySwitch[s] = s;
        }
        Arrays.sort(bySwitch, (a, b) -> Double.compare(perSwitch[b], perSwitch[a]));
        List<String> top = new ArrayList<>();
        for (int i = 0; i < Math.min(3, bySwitch.length); i++) {
            top.add(f.id(bySwitch[i]));
        }
        sets.add(top);
        names.add("3 switches with most HMux traffic");
        SplittableRandom rng = new SplittableRandom(seed);
        for (int i = 0; i < randomScenarios; i++) {
            if (f.podCount() > 0) {
                int q = rng.nextInt(f.podCount());
                sets.add(podMembers(f, q));
                names.add("random pod " + f.podLabel(q));
            }
            Set<String> three = new LinkedHashSet<>();
            while (three.size() < Math.min(3, f.switchCount())) {
                three.add(f.id(rng.nextInt(f.switchCount())));
            }
            sets.add(new ArrayList<>(three));
            names.add("3 random switches");
        }
        List<Scenario> out = new ArrayList<>();
        for (int i = 0; i < sets.size(); i++) {
            out.add(evaluate(in, placement, names.get(i), sets.get(i)));
        }
        out.sort((a, b) -> Double.compare(b.maxLinkUtilisation, a.maxLinkUtilisation));
        return out;
    }

    private static List<String> podMembers(Fabric f, int q) {
        List<String> ids = new ArrayList<>();
        for (int s : f.podTors(q)) {
            ids.add(f.id(s));
        }
        for (int s : f.podAggs(q)) {
            ids.add(f.id(s));
        }
        return ids;
    }

    /** Max link utilisation (of bandwidth) with {@code failed} switches down. */
    public static Scenario evaluate(Instance in, int[] placement, String name, List<String> failed) {
        Set<String> down = new HashSet<>(failed);
        Topology t = in.topology();
        List<Switch> sw = new ArrayList<>();
        for (Switch s : t.switches) {
            if (!down.contains(s.id)) {
                sw.add(s);
            }
        }
        List<Link> links = new ArrayList<>();
        for (Link l : t.links) {
            if (!down.contains(l.a) && !down.contains(l.b)) {
                links.add(l);
            }
        }
        List<Host> hosts = new ArrayList<>();
        for (Host h : t.hosts) {
            if (!down.contains(h.tor)) {
                hosts.add(h);
            }
        }
        List<Smux> smuxes = new ArrayList<>();
        for (Smux m : t.smuxes) {
            if (!down.contains(m.tor)) {
                smuxes.add(m);
            }
        }
        Topology alive = new Topology(t.name, sw, links, hosts, smuxes);
        Fabric g = new Fabric(alive, false); // used once: skip the next-hop table
        Fabric f = in.fabric();
        int[] map = new int[f.switchCount()]; // old index -> new index, -1 when down
        for (int s = 0; s < map.length; s++) {
            Integer x = g.indexOrNull(f.id(s));
            map[s] = x == null ? -1 : x;
        }
        int[] smuxTors = smuxes.stream().mapToInt(m -> g.index(m.tor)).toArray();
        int[] ingress = liveIngress(in, map);
        EcmpRouter r = new EcmpRouter(g);
        LinkLoads acc = new LinkLoads(g.linkCount());
        for (int v = 0; v < in.vipCount(); v++) {
            int s = placement[v];
            if (s < 0 || !in.active(v)) {
                continue;
            }
            int h = map[s];
            if (h >= 0) {
                route(in, v, map, ingress, new int[] {h}, r, g, acc);
            } else if (smuxTors.length > 0) {
                route(in, v, map, ingress, smuxTors, r, g, acc);
            }
        }
        double max = 0;
        String where = "";
        for (int i = 0; i < acc.size(); i++) {
            int l = acc.link(i);
            double u = acc.load(i) / g.linkBps(l);
            if (u > max) {
                max = u;
                where = g.linkName(l);
            }
        }
        return new Scenario(name, List.copyOf(failed), max, where);
    }

    private static int[] liveIngress(Instance in, int[] map) {
        int[] old = in.ingress();
        return Arrays.stream(old).map(s -> map[s]).filter(s -> s >= 0).toArray();
    }

    /** Routes v's live traffic to the muxes (split evenly) and from each mux to the live DIP ToRs. */
    private static void route(Instance in, int v, int[] map, int[] ingress, int[] muxes, EcmpRouter r,
                              Fabric g, LinkLoads acc) {
        double share = 1.0 / muxes.length;
        for (int mux : muxes) {
            for (int i = 0; i < in.sourceCount(v); i++) {
                int src = map[in.sourceNode(v, i)];
                if (src >= 0 && g.distance(src, mux) != Fabric.UNREACHABLE) {
                    r.seed(src, mux, in.sourceBps(v, i) * share);
                }
            }
            double inet = in.internetBps(v) * share;
            for (int c : ingress) {
                if (g.distance(c, mux) != Fabric.UNREACHABLE) {
                    r.seed(c, mux, inet / ingress.length);
                }
            }
            r.propagateTo(mux, false, acc);
            for (int i = 0; i < in.dipTorCount(v); i++) {
                int y = map[in.dipTor(v, i)];
                if (y >= 0 && g.distance(mux, y) != Fabric.UNREACHABLE) {
                    r.seed(mux, y, in.dipTorBps(v, i) * share);
                    r.propagateTo(y, false, acc);
                }
            }
        }
    }
}
