package org.hybridlb.solver.assign;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.DipShares;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.routing.Fabric;

/**
 * One assignment problem (one traffic interval), indexed for speed and immutable.
 * VIPs are 0..vipCount-1 in VIP-file order; switches are the {@link Fabric} indices.
 *
 * <p>All rates in an instance are bits per second (traffic files are in bytes/s and are
 * converted on indexing), like link and SMux capacities.
 *
 * <p>Per VIP it keeps its demand on the fabric, aggregated to switches: what enters from each
 * source switch (a host's traffic enters at its ToR; Internet traffic is kept apart and enters
 * evenly over the core switches) and what leaves towards each DIP's ToR: the VIP's traffic (the
 * sum of its sources) split over its DIPs by {@link DipShares} (the interval's per-DIP rates as
 * shares, else by weight). ToR-level entries are sorted by ToR so those of a pod are contiguous.
 */
public final class Instance {
    /** Traffic files give bytes/s; links and SMuxes are in bits/s: the instance works in bits/s. */
    public static final double BITS_PER_BYTE = 8;

    private final Topology topology;
    private final VipSet vipSet;
    private final TrafficInterval traffic;
    private final SolverOptions options;
    private final Fabric fabric;
    private final ResourceModel resources;

    private final String[] vipIds;
    private final Map<String, Integer> vipIndex = new HashMap<>();
    private final double[] trafficBps;
    private final double[] internetBps;
    private final int[] ingress;
    private final double totalTrafficBps;
    private final int[] byTraffic;
    // CSR demand: sources (switch, bps) and DIP ToRs (switch, bps), sorted by switch index
    private final int[] srcStart;
    private final int[] srcNode;
    private final double[] srcBps;
    private final int[] dstStart;
    private final int[] dstNode;
    private final double[] dstBps;

    private Instance(Topology topology, VipSet vipSet, TrafficInterval traffic, SolverOptions options,
                     Fabric fabric) {
        this(topology, vipSet, traffic, options, fabric, null);
    }

    private Instance(Topology topology, VipSet vipSet, TrafficInterval traffic, SolverOptions options,
                     Fabric fabric, ResourceModel sameVips) {
        this.topology = topology;
        this.vipSet = vipSet;
        this.traffic = traffic;
        this.options = options;
        this.fabric = fabric;
        int nv = vipSet.vips.size();
        vipIds = new String[nv];
        trafficBps = new double[nv];
        internetBps = new double[nv];
        for (int v = 0; v < nv; v++) {
            vipIds[v] = vipSet.vips.get(v).vip;
            if (vipIndex.put(vipIds[v], v) != null) {
                throw new IllegalArgumentException("duplicate VIP " + vipIds[v]);
            }
        }
        Map<String, VipTraffic> byVip = new HashMap<>();
        if (traffic != null) {
            for (VipTraffic vt : traffic.vips) {
                if (!vipIndex.containsKey(vt.vip)) {
                    throw new IllegalArgumentException("traffic for unknown VIP " + vt.vip);
                }
                byVip.put(vt.vip, vt);
            }
        }
        Map<String, Integer> torOfHostId = new HashMap<>();
        Map<String, Integer> torOfHostIp = new HashMap<>();
        for (Host h : topology.hosts) {
            torOfHostId.put(h.id, fabric.index(h.tor));
            torOfHostIp.put(h.ip, fabric.index(h.tor));
        }
        ingress = internetIngress(fabric);

        srcStart = new int[nv + 1];
        dstStart = new int[nv + 1];
        IntDoubleList src = new IntDoubleList();
        IntDoubleList dst = new IntDoubleList();
        double[] scratch = new double[fabric.switchCount()];
        Touched touched = new Touched(fabric.switchCount());
        double total = 0;
        for (int v = 0; v < nv; v++) {
            Vip vip = vipSet.vips.get(v);
            VipTraffic vt = byVip.get(vip.vip);
            double vipTotal = 0;
            if (vt != null) {
                for (Map.Entry<String, Double> e : vt.sources.entrySet()) {
                    double bps = e.getValue() * BITS_PER_BYTE;
                    if (bps <= 0) {
                        continue;
                    }
                    vipTotal += bps;
                    String key = e.getKey();
                    if (VipTraffic.INTERNET.equals(key)) {
                        internetBps[v] += bps; // enters evenly over the ingress switches
                    } else {
                        Integer s = fabric.indexOrNull(key);
                        if (s == null) {
                            s = torOfHostId.get(key);
                        }
                        if (s == null) {
                            throw new IllegalArgumentException("VIP " + vip.vip + ": unknown source '" + key + "'");
                        }
                        addTo(scratch, touched, s, bps);
                    }
                }
            }
            flush(scratch, touched, src);
            srcStart[v + 1] = src.size();
            trafficBps[v] = vipTotal;
            total += vipTotal;
            if (vipTotal > 0) {
                addDipDemand(vip, vt, vipTotal, torOfHostIp, scratch, touched);
            }
            flush(scratch, touched, dst);
            dstStart[v + 1] = dst.size();
        }
        totalTrafficBps = total;
        int cut = fabric.unreachableFromFirst();
        if (cut >= 0 && total > 0) {
            // traffic could not be routed to some candidate switches (a memory-only instance is fine)
            throw new IllegalArgumentException("the fabric is not connected: no path between switches "
                    + fabric.id(0) + " and " + fabric.id(cut));
        }
        srcNode = src.ints();
        srcBps = src.doubles();
        dstNode = dst.ints();
        dstBps = dst.doubles();
        Integer[] order = new Integer[nv];
        for (int v = 0; v < nv; v++) {
            order[v] = v;
        }
        // decreasing traffic; VIP-file order among equals so runs are reproducible
        Arrays.sort(order, (a, b) -> trafficBps[a] != trafficBps[b]
                ? Double.compare(trafficBps[b], trafficBps[a]) : Integer.compare(a, b));
        byTraffic = new int[nv];
        for (int i = 0; i < nv; i++) {
            byTraffic[i] = order[i];
        }
        resources = new ResourceModel(this, sameVips);
    }

    /**
     * Indexes a problem. {@code traffic} may be null (no traffic: only memory matters).
     * Throws IllegalArgumentException when the inputs do not fit together (a DIP on no host,
     * a source that is not a node of the topology); callers that read files check those first
     * with {@code ModelChecks} to name the file and field.
     */
    public static Instance build(Topology t, VipSet vips, TrafficInterval traffic, SolverOptions o) {
        return new Instance(t, vips, traffic, o == null ? SolverOptions.defaults() : o, new Fabric(t));
    }

    /** Same, reusing an already indexed fabric of {@code t} (the fabric does not change per interval). */
    public static Instance build(Topology t, Fabric fabric, VipSet vips, TrafficInterval traffic, SolverOptions o) {
        return new Instance(t, vips, traffic, o == null ? SolverOptions.defaults() : o, fabric);
    }

    /** The same problem with other options (shares the fabric and demand indexing cost). */
    public Instance withOptions(SolverOptions o) {
        return new Instance(topology, vipSet, traffic, o, fabric, resources);
    }

    /**
     * The next interval of the same fabric and VIP configuration: shares the fabric and the
     * VIPs' table entries, indexes only the new traffic (what a controller does every interval).
     */
    public Instance withTraffic(TrafficInterval next) {
        return new Instance(topology, vipSet, next, options, fabric, resources);
    }

    private static int[] internetIngress(Fabric f) {
        if (f.cores().length > 0) {
            return f.cores();
        }
        // a fabric without cores: the Internet enters over its aggs (or, failing that, everywhere)
        List<Integer> aggs = new ArrayList<>();
        for (int s = 0; s < f.switchCount(); s++) {
            if (f.role(s) == SwitchRole.AGG) {
                aggs.add(s);
            }
        }
        if (aggs.isEmpty()) {
            for (int s = 0; s < f.switchCount(); s++) {
                aggs.add(s);
            }
        }
        return aggs.stream().mapToInt(Integer::intValue).toArray();
    }

    /** What v sends towards its DIPs' ToRs: its traffic split over its DIPs by {@link DipShares}. */
    private void addDipDemand(Vip vip, VipTraffic vt, double vipTotal, Map<String, Integer> torOfHostIp,
                              double[] scratch, Touched touched) {
        Map<String, Dip> byIp = new HashMap<>();
        for (VipPort p : vip.ports) {
            for (Dip d : p.dips) {
                byIp.putIfAbsent(d.ip, d);
            }
        }
        Map<String, Double> rates = vt == null ? null : vt.dips;
        if (rates != null) {
            for (String ip : rates.keySet()) {
                if (!byIp.containsKey(ip)) {
                    throw new IllegalArgumentException("VIP " + vip.vip + ": traffic to unknown DIP " + ip);
                }
            }
        }
        for (Map.Entry<String, Double> e : DipShares.of(vip, rates).entrySet()) {
            addTo(scratch, touched, torOf(vip, byIp.get(e.getKey()), torOfHostIp), vipTotal * e.getValue());
        }
    }

    private static int torOf(Vip vip, Dip d, Map<String, Integer> torOfHostIp) {
        Integer tor = torOfHostIp.get(d.tunnelEndpoint());
        if (tor == null) {
            throw new IllegalArgumentException("VIP " + vip.vip + ": DIP " + d.ip
                    + " is on no host of the topology (" + d.tunnelEndpoint() + ")");
        }
        return tor;
    }

    private static void addTo(double[] scratch, Touched touched, int node, double bps) {
        if (bps <= 0) {
            return;
        }
        if (scratch[node] == 0) {
            touched.nodes[touched.count++] = node;
        }
        scratch[node] += bps;
    }

    private static void flush(double[] scratch, Touched touched, IntDoubleList out) {
        Arrays.sort(touched.nodes, 0, touched.count);
        for (int i = 0; i < touched.count; i++) {
            int node = touched.nodes[i];
            out.add(node, scratch[node]);
            scratch[node] = 0;
        }
        touched.count = 0;
    }

    /** Switches with a non-zero scratch entry (no boxing). */
    private static final class Touched {
        final int[] nodes;
        int count;

        Touched(int n) {
            nodes = new int[n];
        }
    }

    public Topology topology() {
        return topology;
    }

    public VipSet vipSet() {
        return vipSet;
    }

    /** The interval's traffic, or null. */
    public TrafficInterval traffic() {
        return traffic;
    }

    public SolverOptions options() {
        return options;
    }

    public Fabric fabric() {
        return fabric;
    }

    public ResourceModel resources() {
        return resources;
    }

    public int vipCount() {
        return vipIds.length;
    }

    public String vipId(int v) {
        return vipIds[v];
    }

    public Vip vip(int v) {
        return vipSet.vips.get(v);
    }

    /** Index of a VIP address, or -1. */
    public int vipIndex(String vip) {
        Integer i = vipIndex.get(vip);
        return i == null ? -1 : i;
    }

    public int switchCount() {
        return fabric.switchCount();
    }

    public String switchId(int s) {
        return fabric.id(s);
    }

    /** Index of a switch id, or -1. */
    public int switchIndex(String id) {
        Integer i = fabric.indexOrNull(id);
        return i == null ? -1 : i;
    }

    /** Total traffic of a VIP this interval (bits/s, sum over its sources). */
    public double trafficBps(int v) {
        return trafficBps[v];
    }

    /** Whether the VIP has traffic this interval (only those are worth an HMux). */
    public boolean active(int v) {
        return trafficBps[v] > 0;
    }

    public double totalTrafficBps() {
        return totalTrafficBps;
    }

    /** VIP indices by decreasing traffic (ties: VIP-file order). Do not modify. */
    public int[] vipsByTraffic() {
        return byTraffic;
    }

    /** Internet traffic of a VIP (bits/s); it enters evenly over {@link #ingress()}. */
    public double internetBps(int v) {
        return internetBps[v];
    }

    /** Where Internet traffic enters: the core switches (aggs, or all switches, if there are none). */
    public int[] ingress() {
        return ingress.clone();
    }

    int[] ingressRaw() {
        return ingress;
    }

    // --- demand, public for models (ILP) and analyses: sources and DIP ToRs of a VIP ---

    /** Number of source switches of v (hosts count at their ToR; Internet traffic is apart). */
    public int sourceCount(int v) {
        return srcStart[v + 1] - srcStart[v];
    }

    public int sourceNode(int v, int i) {
        return srcNode[srcStart[v] + i];
    }

    /** Bits/s v receives from its i-th source switch. */
    public double sourceBps(int v, int i) {
        return srcBps[srcStart[v] + i];
    }

    /** Number of ToRs with DIPs of v that receive traffic. */
    public int dipTorCount(int v) {
        return dstStart[v + 1] - dstStart[v];
    }

    public int dipTor(int v, int i) {
        return dstNode[dstStart[v] + i];
    }

    /** Bits/s of v towards its DIPs behind the i-th DIP ToR. */
    public double dipTorBps(int v, int i) {
        return dstBps[dstStart[v] + i];
    }

    // --- demand, for the routing code ---
    int srcStart(int v) {
        return srcStart[v];
    }

    int srcEnd(int v) {
        return srcStart[v + 1];
    }

    int srcNode(int i) {
        return srcNode[i];
    }

    double srcBps(int i) {
        return srcBps[i];
    }

    int dstStart(int v) {
        return dstStart[v];
    }

    int dstEnd(int v) {
        return dstStart[v + 1];
    }

    int dstNode(int i) {
        return dstNode[i];
    }

    double dstBps(int i) {
        return dstBps[i];
    }

    /** Tunnel endpoints of a VIP's live DIPs (weight > 0), over all its ports. */
    static Set<String> tunnelEndpoints(Vip vip) {
        Set<String> out = new HashSet<>();
        for (VipPort p : vip.ports) {
            for (Dip d : p.dips) {
                if (d.weight > 0) {
                    out.add(d.tunnelEndpoint());
                }
            }
        }
        return out;
    }

    /** A growable (int, double) list without boxing. */
    private static final class IntDoubleList {
        private int[] ints = new int[1024];
        private double[] doubles = new double[1024];
        private int size;

        void add(int i, double d) {
            if (size == ints.length) {
                ints = Arrays.copyOf(ints, size * 2);
                doubles = Arrays.copyOf(doubles, size * 2);
            }
            ints[size] = i;
            doubles[size++] = d;
        }

        int size() {
            return size;
        }

        int[] ints() {
            return Arrays.copyOf(ints, size);
        }

        double[] doubles() {
            return Arrays.copyOf(doubles, size);
        }
    }
}
