package org.hybridlb.solver.routing;

import java.util.Arrays;

/**
 * A sparse vector of traffic per directed link (bits/s), reused across evaluations so the inner
 * loop allocates nothing: {@link #clear()} costs only the links touched since the last clear.
 */
public final class LinkLoads {
    private final double[] bps;
    private final int[] touched;
    private int count;

    public LinkLoads(int linkCount) {
        bps = new double[linkCount];
        touched = new int[linkCount];
    }

    public void add(int link, double amount) {
        if (amount == 0) {
            return;
        }
        if (bps[link] == 0) {
            touched[count++] = link;
        }
        bps[link] += amount;
        if (bps[link] == 0) {
            bps[link] = Double.MIN_VALUE; // stays listed once touched
        }
    }

    public void clear() {
        for (int i = 0; i < count; i++) {
            bps[touched[i]] = 0;
        }
        count = 0;
    }

    /** Number of links touched. */
    public int size() {
        return count;
    }

    /** The i-th touched link. */
    public int link(int i) {
        return touched[i];
    }

    /** Load on the i-th touched link. */
    public double load(int i) {
        return bps[touched[i]];
    }

    /** Load on a link by its index (0 when untouched). */
    public double loadOn(int link) {
        return bps[link];
    }

    /** Copy of the touched links, sorted (for tests and models). */
    public int[] links() {
        int[] out = Arrays.copyOf(touched, count);
        Arrays.sort(out);
        return out;
    }
}
