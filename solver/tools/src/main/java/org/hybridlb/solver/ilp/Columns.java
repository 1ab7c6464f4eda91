package org.hybridlb.solver.ilp;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.ResourceModel;
import org.hybridlb.solver.assign.Usage;
import org.hybridlb.solver.routing.LinkLoads;

/**
 * The candidate columns x[v][s] of the assignment models ({@link ColumnModel}), with their
 * sparse link loads t(l, s, v) (column c's are entries {@code loadStart(c)} to
 * {@code loadStart(c + 1)}) and per link the most all columns together can put on it. Chosen
 * by {@link FootprintScan}; columns an answer uses and the set lacks are {@link #append}ed.
 */
final class Columns {
    private final ResourceModel m;
    private final int vipCount;
    private final int switchCount;
    private int[] colVip;
    private int[] colSwitch;
    private int[] loadStart;
    private int[] loadLink;
    private double[] loadBps;
    private int cols;
    /** Per link: Σ_v max_s t(l, s, v) over the candidate columns, the most they can put on it. */
    private final double[] worstLoad;
    /** Whether every fitting (VIP, switch) pair is a column (the restricted model is the full one). */
    private final boolean allColumns;

    /** Columns for the (VIP, switch) pairs of {@code chosen}, grouped by VIP. */
    Columns(Instance in, List<int[]> chosen, boolean allColumns) {
        this.m = in.resources();
        this.vipCount = in.vipCount();
        this.switchCount = in.switchCount();
        this.allColumns = allColumns;
        LinkLoads ll = m.newLinkLoads();
        int nl = m.linkCount();
        cols = chosen.size();
        colVip = new int[cols];
        colSwitch = new int[cols];
        loadStart = new int[cols + 1];
        int cap = Math.max(16, cols * 16);
        loadLink = new int[cap];
        loadBps = new double[cap];
        worstLoad = new double[nl];
        double[] vipMax = new double[nl];
        List<Integer> touched = new ArrayList<>();
        int nnz = 0;
        for (int c = 0; c < cols; c++) {
            if (c > 0 && chosen.get(c)[0] != chosen.get(c - 1)[0]) {
                flushMax(vipMax, touched);
            }
            colVip[c] = chosen.get(c)[0];
            colSwitch[c] = chosen.get(c)[1];
            m.linkLoads(colVip[c], colSwitch[c], ll);
            if (nnz + ll.size() > loadLink.length) {
                int n = Math.max(loadLink.length * 2, nnz + ll.size());
                loadLink = Arrays.copyOf(loadLink, n);
                loadBps = Arrays.copyOf(loadBps, n);
            }
            for (int i = 0; i < ll.size(); i++) {
                int l = ll.link(i);
                loadLink[nnz] = l;
                loadBps[nnz++] = ll.load(i);
                if (vipMax[l] == 0) {
                    touched.add(l);
                }
                vipMax[l] = Math.max(vipMax[l], ll.load(i));
            }
            loadStart[c + 1] = nnz;
        }
        flushMax(vipMax, touched);
    }

    private void flushMax(double[] vipMax, List<Integer> touched) {
        for (int l : touched) {
            worstLoad[l] += vipMax[l];
            vipMax[l] = 0;
        }
        touched.clear();
    }

    /** Adds (v, placement) columns the usage has and the candidates lack (worst loads kept conservative). */
    void append(Usage u) {
        Set<Long> have = new HashSet<>();
        for (int c = 0; c < cols; c++) {
            have.add((long) colVip[c] * switchCount + colSwitch[c]);
        }
        LinkLoads ll = m.newLinkLoads();
        for (int v = 0; v < vipCount; v++) {
            int s = u.placement(v);
            if (s < 0 || have.contains((long) v * switchCount + s)) {
                continue;
            }
            m.linkLoads(v, s, ll);
            int nnz = loadStart[cols];
            if (cols + 1 >= colVip.length) {
                colVip = Arrays.copyOf(colVip, 2 * cols + 2);
                colSwitch = Arrays.copyOf(colSwitch, 2 * cols + 2);
                loadStart = Arrays.copyOf(loadStart, 2 * cols + 3);
            }
            if (nnz + ll.size() > loadLink.length) {
                int n = Math.max(2 * loadLink.length, nnz + ll.size());
                loadLink = Arrays.copyOf(loadLink, n);
                loadBps = Arrays.copyOf(loadBps, n);
            }
            for (int i = 0; i < ll.size(); i++) {
                loadLink[nnz] = ll.link(i);
                loadBps[nnz++] = ll.load(i);
                worstLoad[ll.link(i)] += ll.load(i); // an over-estimate: more rows, never fewer
            }
            colVip[cols] = v;
            colSwitch[cols] = s;
            cols++;
            loadStart[cols] = nnz;
        }
    }

    int count() {
        return cols;
    }

    int vip(int c) {
        return colVip[c];
    }

    int switchOf(int c) {
        return colSwitch[c];
    }

    /** First link-load entry of column c; column c's end at {@code loadStart(c + 1)}. */
    int loadStart(int c) {
        return loadStart[c];
    }

    int loadLink(int i) {
        return loadLink[i];
    }

    double loadBps(int i) {
        return loadBps[i];
    }

    /** Link-load entries of all columns. */
    int entries() {
        return loadStart[cols];
    }

    /** Per link: Σ_v max_s t(l, s, v) over the candidate columns, the most they can put on it. */
    double worstLoad(int l) {
        return worstLoad[l];
    }

    /** Whether every fitting (VIP, switch) pair is a column (the restricted model is the full one). */
    boolean all() {
        return allColumns;
    }

    /** Per VIP: whether it has a column. */
    boolean[] vipsWithColumns() {
        boolean[] has = new boolean[vipCount];
        for (int c = 0; c < cols; c++) {
            has[colVip[c]] = true;
        }
        return has;
    }

    /** The links any column loads. */
    BitSet linksLoaded() {
        BitSet all = new BitSet(m.linkCount());
        for (int i = 0; i < loadStart[cols]; i++) {
            all.set(loadLink[i]);
        }
        return all;
    }
}
