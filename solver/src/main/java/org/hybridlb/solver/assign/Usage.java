package org.hybridlb.solver.assign;

import java.util.Arrays;
import org.hybridlb.solver.routing.LinkLoads;

/**
 * Mutable resource usage of a (partial) placement: where each VIP is, traffic per directed link,
 * ECMP and tunnel entries per switch, and host entries taken fabric-wide. Utilisations are
 * fractions of {@link ResourceModel} capacities (links: of 80% of bandwidth).
 *
 * <p>The MRU (maximum resource utilisation, Duet §3.4.1) is taken over links, ECMP and tunnel
 * tables. The host table is a fabric-wide budget that is the same whichever switch a VIP goes
 * to, so it is a hard limit ({@link #hostRoomFor}) and reported apart, not part of the MRU
 * (it would only hide the differences between candidate switches).
 */
public final class Usage {
    /** Placement of a VIP that is on the SMuxes. */
    public static final int SMUX = -1;
    /** Rounding slack when comparing a utilisation with 1. */
    public static final double EPS = 1e-9;

    private final ResourceModel m;
    private final double[] linkUsed;
    private final int[] ecmpUsed;
    private final int[] tunnelUsed;
    private int hostUsed;
    private final int[] placement;
    private double max;
    private boolean maxStale;
    private final LinkLoads scratch;

    Usage(ResourceModel m) {
        this.m = m;
        linkUsed = new double[m.linkCount()];
        int n = m.instance().switchCount();
        ecmpUsed = new int[n];
        tunnelUsed = new int[n];
        placement = new int[m.instance().vipCount()];
        Arrays.fill(placement, SMUX);
        scratch = m.newLinkLoads();
    }

    private Usage(Usage o) {
        m = o.m;
        linkUsed = o.linkUsed.clone();
        ecmpUsed = o.ecmpUsed.clone();
        tunnelUsed = o.tunnelUsed.clone();
        hostUsed = o.hostUsed;
        placement = o.placement.clone();
        max = o.max;
        maxStale = o.maxStale;
        scratch = m.newLinkLoads();
    }

    public Usage copy() {
        return new Usage(this);
    }

    public ResourceModel model() {
        return m;
    }

    /** Switch index of VIP v, or {@link #SMUX}. */
    public int placement(int v) {
        return placement[v];
    }

    /** Puts v (now on the SMuxes) on switch s, with its loads for (v, s) already computed. */
    public void place(int v, int s, LinkLoads loads) {
        if (placement[v] != SMUX) {
            throw new IllegalStateException("VIP " + m.instance().vipId(v) + " is already placed");
        }
        placement[v] = s;
        for (int i = 0; i < loads.size(); i++) {
            int l = loads.link(i);
            linkUsed[l] += loads.load(i);
            max = Math.max(max, linkUsed[l] / m.linkCapacity(l));
        }
        ecmpUsed[s] += m.ecmpEntries(v);
        tunnelUsed[s] += m.tunnelEntries(v);
        hostUsed += m.hostEntries(v);
        max = Math.max(max, Math.max(ecmpUtilisation(s), tunnelUtilisation(s)));
    }

    /** Puts v (now on the SMuxes) on switch s. */
    public void place(int v, int s) {
        m.linkLoads(v, s, scratch);
        place(v, s, scratch);
    }

    /** Takes v off its switch (back to the SMuxes). */
    public void remove(int v) {
        int s = placement[v];
        if (s == SMUX) {
            return;
        }
        m.linkLoads(v, s, scratch);
        for (int i = 0; i < scratch.size(); i++) {
            int l = scratch.link(i);
            linkUsed[l] = Math.max(0, linkUsed[l] - scratch.load(i));
        }
        ecmpUsed[s] -= m.ecmpEntries(v);
        tunnelUsed[s] -= m.tunnelEntries(v);
        hostUsed -= m.hostEntries(v);
        placement[v] = SMUX;
        maxStale = true;
    }

    /** Whether the fabric-wide host table has room for v. */
    public boolean hostRoomFor(int v) {
        return hostUsed + m.hostEntries(v) <= m.hostBudget();
    }

    /** MRU over links, ECMP and tunnel tables. */
    public double mru() {
        if (maxStale) {
            double mx = 0;
            for (int l = 0; l < linkUsed.length; l++) {
                mx = Math.max(mx, linkUsed[l] / m.linkCapacity(l));
            }
            for (int s = 0; s < ecmpUsed.length; s++) {
                mx = Math.max(mx, Math.max(ecmpUtilisation(s), tunnelUtilisation(s)));
            }
            max = mx;
            maxStale = false;
        }
        return max;
    }

    public double linkUsedBps(int l) {
        return linkUsed[l];
    }

    public double linkUtilisation(int l) {
        return linkUsed[l] / m.linkCapacity(l);
    }

    public int ecmpUsed(int s) {
        return ecmpUsed[s];
    }

    public int tunnelUsed(int s) {
        return tunnelUsed[s];
    }

    public int hostUsed() {
        return hostUsed;
    }

    public double ecmpUtilisation(int s) {
        return util(ecmpUsed[s], m.ecmpCapacity(s));
    }

    public double tunnelUtilisation(int s) {
        return util(tunnelUsed[s], m.tunnelCapacity(s));
    }

    public double hostUtilisation() {
        return util(hostUsed, m.hostBudget());
    }

    /** Utilisation of resource r (see {@link ResourceModel} indexing). */
    public double utilisation(int r) {
        int l = linkUsed.length;
        int n = ecmpUsed.length;
        return r < l ? linkUtilisation(r) : r < l + n ? ecmpUtilisation(r - l)
                : r < l + 2 * n ? tunnelUtilisation(r - l - n) : hostUtilisation();
    }

    static double util(double used, double cap) {
        return used == 0 ? 0 : cap <= 0 ? Double.POSITIVE_INFINITY : used / cap;
    }

    /** ECMP/tunnel utilisation of s if v were added to it. */
    double memoryAfter(int v, int s) {
        return Math.max(util(ecmpUsed[s] + m.ecmpEntries(v), m.ecmpCapacity(s)),
                util(tunnelUsed[s] + m.tunnelEntries(v), m.tunnelCapacity(s)));
    }

    /**
     * Highest utilisation among the resources v would touch on s (its links and s's tables), if
     * placed there now. The MRU after placing is max(mru(), this); v fits iff this is ≤ 1.
     */
    public double peakIfPlaced(int v, int s, LinkLoads loadsOfVOnS) {
        double peak = memoryAfter(v, s);
        for (int i = 0; i < loadsOfVOnS.size(); i++) {
            int l = loadsOfVOnS.link(i);
            peak = Math.max(peak, (linkUsed[l] + loadsOfVOnS.load(i)) / m.linkCapacity(l));
        }
        return peak;
    }

    /** Whether v fits on s now (host budget, tables, links). */
    public boolean fits(int v, int s) {
        if (!m.fitsAlone(v, s) || !hostRoomFor(v)) {
            return false;
        }
        m.linkLoads(v, s, scratch);
        return peakIfPlaced(v, s, scratch) <= 1 + EPS;
    }

    // raw access for the search code
    double linkUsedRaw(int l) {
        return linkUsed[l];
    }
}
