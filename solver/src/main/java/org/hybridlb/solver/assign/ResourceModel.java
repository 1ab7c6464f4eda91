package org.hybridlb.solver.assign;

import java.util.HashSet;
import java.util.Set;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.Wcmp;
import org.hybridlb.solver.routing.Fabric;
import org.hybridlb.solver.routing.LinkLoads;

/**
 * THE model of Duet's constraints (§3.4), shared by the greedy algorithms, the migration planner,
 * the feasibility checker and the ILP so that they cannot drift apart. Everything is linear in
 * the placement variables x[v][s] (VIP v on switch s), so an ILP is built directly from it:
 *
 * <pre>
 *   for each VIP v:              sum_s x[v][s] &lt;= 1                     (else: SMux)
 *   x[v][s] = 0 unless           fitsAlone(v, s)
 *   ECMP table of s:             sum_v ecmpEntries(v)   * x[v][s] &lt;= ecmpCapacity(s)
 *   tunnel table of s:           sum_v tunnelEntries(v) * x[v][s] &lt;= tunnelCapacity(s)
 *   host table (every switch):   sum_v sum_s hostEntries(v) * x[v][s] &lt;= hostBudget()
 *   directed link l:             sum_v sum_s t(l, s, v) * x[v][s] &lt;= linkCapacity(l)
 * </pre>
 * with {@code t(l, s, v)} from {@link #linkLoads(int, int, LinkLoads)} (bits/s of VIP v on
 * link l when v is on s) and {@code linkCapacity(l)} = headroom (80%) x bandwidth.
 *
 * <p>Memory rules (per VIP, documented in solver/ASSIGNMENT.md):
 * <ul>
 * <li><b>Host table</b>: one entry per service (port) of the VIP. A VIP on an HMux is announced
 *   as a /32 that every switch installs (Duet §3.3.3), so the entry is taken on <em>every</em>
 *   switch: the host table is a fabric-wide budget, the smallest free host table of any switch.
 *   This is why Duet assigns at most 16K VIPs to HMuxes (§3.8.2).</li>
 * <li><b>ECMP table</b> (on the HMux only): per port, WCMP by replication: weights reduced by
 *   their greatest common divisor, one entry per unit, i.e. sum(w_i / gcd(w)). Equal weights
 *   cost one entry per DIP. DIPs of weight 0 are drained and cost nothing.</li>
 * <li><b>Tunnel table</b> (on the HMux only): one entry per distinct tunnel endpoint (the DIP, or
 *   the host of a VM DIP, §3.5.2) over all ports of the VIP: ECMP entries of different ports and
 *   of repeated WCMP units point to the same tunnel entry. Entries are not shared between VIPs
 *   (that would make the model non-linear; counting them per VIP is safe).</li>
 * <li>A VIP whose entries exceed every switch's free tables (more DIPs than a tunnel table
 *   holds) is not eligible for an HMux and stays on the SMuxes; see solver/ASSIGNMENT.md ("large fan-out").</li>
 * </ul>
 *
 * <p>Resource indices for reports and models: links 0..L-1, ECMP of switch s at L+s, tunnel of
 * switch s at L+n+s, the host-table budget at L+2n.
 */
public final class ResourceModel {
    private final Instance in;
    private final Fabric fabric;
    private final int[] ecmpEntries;
    private final int[] tunnelEntries;
    private final int[] hostEntries;
    private final boolean[] eligible;
    private final int[] ecmpCap;
    private final int[] tunnelCap;
    private final int hostBudget;
    private final double[] linkCap;
    private final ThreadLocal<LoadCalculator> calculators;
    /** Per VIP: 0 not known yet, 1 fits on some switch of an empty fabric, 2 fits on none. */
    private final byte[] fitsOnEmpty;

    /** {@code sameVips}: a model of the same VIP set and switches, whose table entries are reused. */
    ResourceModel(Instance in, ResourceModel sameVips) {
        this.in = in;
        this.fabric = in.fabric();
        int n = fabric.switchCount();
        ecmpCap = new int[n];
        tunnelCap = new int[n];
        int budget = Integer.MAX_VALUE;
        int maxEcmp = 0;
        int maxTunnel = 0;
        for (int s = 0; s < n; s++) {
            Switch sw = in.topology().switches.get(s);
            ecmpCap[s] = sw.tables.ecmp;
            tunnelCap[s] = sw.tables.tunnel;
            budget = Math.min(budget, sw.tables.host);
            maxEcmp = Math.max(maxEcmp, ecmpCap[s]);
            maxTunnel = Math.max(maxTunnel, tunnelCap[s]);
        }
        hostBudget = n == 0 ? 0 : budget;
        int links = fabric.linkCount();
        linkCap = new double[links];
        for (int l = 0; l < links; l++) {
            linkCap[l] = fabric.linkBps(l) * in.options().linkHeadroom;
        }
        int nv = in.vipCount();
        fitsOnEmpty = new byte[nv]; // depends on this interval's traffic: not shared
        if (sameVips != null) {
            ecmpEntries = sameVips.ecmpEntries;
            tunnelEntries = sameVips.tunnelEntries;
            hostEntries = sameVips.hostEntries;
            eligible = sameVips.eligible;
            // same fabric: this thread's route caches carry over to the new interval
            LoadCalculator.Shared carried = sameVips.calculators.get().shared();
            calculators = ThreadLocal.withInitial(() -> new LoadCalculator(in, carried));
            return;
        }
        ecmpEntries = new int[nv];
        tunnelEntries = new int[nv];
        hostEntries = new int[nv];
        eligible = new boolean[nv];
        for (int v = 0; v < nv; v++) {
            long[] e = tableEntries(in.vip(v));
            long ecmp = e[0];
            int tunnels = (int) e[1];
            int services = (int) e[2];
            ecmpEntries[v] = (int) Math.min(Integer.MAX_VALUE, ecmp);
            tunnelEntries[v] = tunnels;
            hostEntries[v] = services;
            eligible[v] = tunnels > 0 && ecmp <= maxEcmp && tunnels <= maxTunnel && services <= hostBudget;
        }
        calculators = ThreadLocal.withInitial(() -> new LoadCalculator(in, null));
    }

    /**
     * ECMP entries of one port under the WCMP rule ({@link Wcmp}): weights divided by their gcd,
     * one entry per remaining unit (weights 2,2,4 cost 1+1+2 = 4 entries; 1,1,1 cost 3).
     */
    public static long wcmpEntries(VipPort p) {
        return Wcmp.totalUnits(p.dips);
    }

    /**
     * Table entries one VIP needs, by the rules above, without building an instance:
     * {ECMP entries, tunnel entries, host entries (on every switch)}.
     */
    public static long[] tableEntries(Vip vip) {
        long ecmp = 0;
        for (VipPort p : vip.ports) {
            ecmp += wcmpEntries(p);
        }
        return new long[] {ecmp, Instance.tunnelEndpoints(vip).size(), vip.ports.size()};
    }

    public Instance instance() {
        return in;
    }

    public int ecmpEntries(int v) {
        return ecmpEntries[v];
    }

    public int tunnelEntries(int v) {
        return tunnelEntries[v];
    }

    /** Host-table entries the VIP takes on every switch while it is on any HMux. */
    public int hostEntries(int v) {
        return hostEntries[v];
    }

    /** False for VIPs that no switch could ever hold (too many DIPs, no live DIP): SMux only. */
    public boolean eligible(int v) {
        return eligible[v];
    }

    /** Whether v's tables fit into s when s holds nothing else (the ILP's x[v][s] = 0 otherwise). */
    public boolean fitsAlone(int v, int s) {
        return eligible[v] && ecmpEntries[v] <= ecmpCap[s] && tunnelEntries[v] <= tunnelCap[s];
    }

    /**
     * Whether v fits on some switch with nothing else placed; {@code compute} is called the first
     * time per VIP (the answer depends only on this instance, so a race only repeats the work).
     */
    boolean fitsOnEmptyFabric(int v, java.util.function.BooleanSupplier compute) {
        byte known = fitsOnEmpty[v];
        if (known == 0) {
            known = compute.getAsBoolean() ? (byte) 1 : (byte) 2;
            fitsOnEmpty[v] = known;
        }
        return known == 1;
    }

    public int ecmpCapacity(int s) {
        return ecmpCap[s];
    }

    public int tunnelCapacity(int s) {
        return tunnelCap[s];
    }

    /** Free host-table entries on the fullest switch: the fabric-wide budget for HMux VIPs. */
    public int hostBudget() {
        return hostBudget;
    }

    public int linkCount() {
        return linkCap.length;
    }

    /** Usable capacity of a directed link in bits/s: headroom (80%) x bandwidth. */
    public double linkCapacity(int l) {
        return linkCap[l];
    }

    /**
     * t(l, s, v) for every link l: the traffic of VIP v on each directed link when v is on
     * switch s (sources → s, then s → DIPs encapsulated), by per-hop ECMP on shortest paths.
     * Clears and fills {@code out}. Thread-safe (one scratch workspace per thread).
     */
    public void linkLoads(int v, int s, LinkLoads out) {
        out.clear();
        calculators.get().addLoads(v, s, out);
    }

    /** A reusable sparse link vector sized for this fabric. */
    public LinkLoads newLinkLoads() {
        return new LinkLoads(linkCap.length);
    }

    /** A fresh, empty resource usage (every VIP on the SMuxes). */
    public Usage newUsage() {
        return new Usage(this);
    }

    // --- resource indexing for reports and models ---
    public int resourceCount() {
        return linkCap.length + 2 * fabric.switchCount() + 1;
    }

    public int ecmpResource(int s) {
        return linkCap.length + s;
    }

    public int tunnelResource(int s) {
        return linkCap.length + fabric.switchCount() + s;
    }

    public int hostResource() {
        return linkCap.length + 2 * fabric.switchCount();
    }

    /** "link", "ecmp", "tunnel" or "host". */
    public String resourceKind(int r) {
        int l = linkCap.length;
        int n = fabric.switchCount();
        return r < l ? "link" : r < l + n ? "ecmp" : r < l + 2 * n ? "tunnel" : "host";
    }

    /** Link "a->b", switch id, or "all switches" for the host-table budget. */
    public String resourceName(int r) {
        int l = linkCap.length;
        int n = fabric.switchCount();
        return r < l ? fabric.linkName(r) : r < l + n ? fabric.id(r - l)
                : r < l + 2 * n ? fabric.id(r - l - n) : "all switches";
    }

    public double resourceCapacity(int r) {
        int l = linkCap.length;
        int n = fabric.switchCount();
        return r < l ? linkCap[r] : r < l + n ? ecmpCap[r - l] : r < l + 2 * n ? tunnelCap[r - l - n] : hostBudget;
    }

    LoadCalculator calculator() {
        return calculators.get();
    }

    /** Distinct DIP tunnel endpoints (for tests). */
    static Set<String> endpoints(Vip v) {
        return new HashSet<>(Instance.tunnelEndpoints(v));
    }
}
