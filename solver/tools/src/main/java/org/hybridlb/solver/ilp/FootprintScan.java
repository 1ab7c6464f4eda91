package org.hybridlb.solver.ilp;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.ResourceModel;
import org.hybridlb.solver.assign.Usage;
import org.hybridlb.solver.routing.LinkLoads;

/**
 * One pass over every fitting (VIP, switch) pair and its link footprint t(l, s, v), which gives
 * what the rest of the ILP works with: the candidate {@link Columns}, the least-load rows of the
 * {@link RelaxationBound}, the footprint cache of the {@link LinkSearch} and which VIPs can be
 * on an HMux at all.
 *
 * <p>A pair where v alone loads some link past its capacity is dropped: no feasible assignment
 * has it, so it is neither a column nor a term of the relaxation's least loads (which it would
 * loosen), of the Lagrangian or of the local search. Above {@link #FULL_SCAN_LIMIT} pairs
 * (paper scale) footprints are not computed: nothing is dropped, there are no link rows in the
 * bound and no local search.
 *
 * <p>Candidates per VIP: the {@link #BEST_CANDIDATES} switches with the smallest peak link
 * footprint, {@link #SPREAD_CANDIDATES} switches spread evenly over the fabric (so small VIPs
 * can use every switch's memory), the warm start's and the installed switch; every fitting
 * switch up to {@link #WHOLE_MODEL_PAIRS} pairs.
 */
final class FootprintScan {
    /** Candidate switches per VIP with the smallest peak link footprint. */
    static final int BEST_CANDIDATES = 6;
    /** Candidate switches per VIP spread evenly over the fabric. */
    static final int SPREAD_CANDIDATES = 6;
    /** The same when footprints are not computed (paper scale), plus the warm start's switch. */
    static final int SPREAD_CANDIDATES_LARGE = 3;
    /**
     * Up to this many fitting (VIP, switch) pairs every one is a column: SCIP gets the whole model
     * and its bound counts. On a small fabric at load 0.8 (4,172 pairs) its branch and bound
     * brings the bound from the Lagrangian's 82.69% to 80.1% in 25 s (ILP.md).
     */
    static final long WHOLE_MODEL_PAIRS = 20_000L;
    /** Above this many (VIP, switch) pairs the footprints are not computed (paper scale: 53 million). */
    static final long FULL_SCAN_LIMIT = 3_000_000L;

    /** The candidate columns. */
    final Columns columns;
    /** The relaxation over y_v with the least-load rows found here. */
    final RelaxationBound relaxation;
    /** The local search over cached footprints, or null (paper scale: too many pairs). */
    final LinkSearch search;
    /**
     * Per VIP: some switch fits its tables and (when footprints are computed) it overloads no
     * link there on its own. A VIP that is not is on the SMuxes in any feasible assignment.
     */
    final boolean[] placeable;

    private final IlpContext ctx;
    private final Instance in;
    private final ResourceModel m;
    private final LinkGroups groups;
    private final LinkLoads ll;
    /** Relaxation rows: per link, the VIPs that load it wherever they go, and that least load. */
    private final List<List<double[]>> minLoadRows = new ArrayList<>();
    /** Per group of links: the VIPs that load it wherever they go and the least total load they put on it. */
    private final List<List<double[]>> groupRows = new ArrayList<>();
    private boolean allColumns = true;
    private LinkSearch.Builder lsb;
    // scratch of the per-VIP scan: per link and per group, how many of v's switches load it and the least load
    private final int[] touchCount;
    private final double[] touchMin;
    private final List<Integer> touched = new ArrayList<>();
    private final double[] groupSum;
    private final int[] groupCount;
    private final double[] groupMin;
    private final List<Integer> groupsTouched = new ArrayList<>();
    private final List<Integer> pairGroups = new ArrayList<>();
    private final int[] groupMark;
    private int pairStamp;

    /** Scans the pairs; {@code start} (the warm start) has its switches among the candidates. */
    FootprintScan(IlpContext ctx, Usage start) {
        this.ctx = ctx;
        this.in = ctx.in;
        this.m = ctx.m;
        int nv = in.vipCount();
        int ns = in.switchCount();
        long pairs = 0;
        for (int v = 0; v < nv; v++) {
            if (in.trafficBps(v) > 0 && m.eligible(v)) {
                for (int s = 0; s < ns; s++) {
                    pairs += m.fitsAlone(v, s) ? 1 : 0;
                }
            }
        }
        boolean scan = pairs <= FULL_SCAN_LIMIT;
        boolean wholeModel = pairs <= WHOLE_MODEL_PAIRS;
        if (!scan) {
            ctx.notes.add(pairs + " (VIP, switch) pairs: footprints not computed; candidates are spread switches "
                    + "and the warm start's, and the bound has no link rows");
        }
        ll = m.newLinkLoads();
        int nl = m.linkCount();
        for (int l = 0; l < nl; l++) {
            minLoadRows.add(new ArrayList<>());
        }
        touchCount = new int[nl];
        touchMin = new double[nl];
        lsb = scan ? new LinkSearch.Builder(in) : null;
        groups = new LinkGroups(in);
        int ng = groups.count();
        for (int g = 0; g < ng; g++) {
            groupRows.add(new ArrayList<>());
        }
        groupSum = new double[ng];
        groupCount = new int[ng];
        groupMin = new double[ng];
        groupMark = new int[ng];
        Arrays.fill(groupMark, -1);
        List<int[]> chosen = new ArrayList<>();
        int overloadedVips = 0;
        double overloadedShare = 0;
        placeable = new boolean[nv];
        for (int v = 0; v < nv; v++) {
            if (in.trafficBps(v) <= 0 || !m.eligible(v)) {
                continue;
            }
            List<Integer> fits = new ArrayList<>();
            for (int s = 0; s < ns; s++) {
                if (m.fitsAlone(v, s)) {
                    fits.add(s);
                }
            }
            if (fits.isEmpty()) {
                continue;
            }
            double[] score = new double[ns];
            if (scan) {
                fits = linkFits(v, fits, score);
                if (fits.isEmpty()) {
                    overloadedVips++;
                    overloadedShare += in.trafficBps(v) / in.totalTrafficBps();
                    continue; // fits no switch without overloading a link: on the SMuxes in any assignment
                }
            }
            placeable[v] = true;
            boolean[] pick = candidates(v, fits, score, start, scan, wholeModel);
            for (int s : fits) {
                if (pick[s]) {
                    chosen.add(new int[] {v, s});
                }
            }
        }
        if (lsb != null) {
            search = lsb.build();
            if (ctx.hasMigrationBudget()) {
                int[] installed = new int[in.vipCount()];
                for (int v = 0; v < installed.length; v++) {
                    installed[v] = ctx.installedOn(v);
                }
                search.limitMoves(installed, ctx.o.migrationBudget * in.totalTrafficBps());
            }
        } else {
            search = null;
        }
        if (overloadedVips > 0) {
            ctx.notes.add(String.format(Locale.ROOT, "%d VIPs (%.2f%% of the traffic) overload a link on their own "
                    + "wherever they go: on the SMuxes in any feasible assignment", overloadedVips,
                    100 * overloadedShare));
        }
        columns = new Columns(in, chosen, allColumns);
        relaxation = new RelaxationBound(ctx, columns, minLoadRows, groupRows, groups);
        if (ctx.o.mip.verbose) {
            System.err.printf(Locale.ROOT, "ilp: %d pairs, %d candidate columns%s, %d link-load entries%n", pairs,
                    columns.count(), allColumns ? " (all)" : "", columns.entries());
        }
    }

    /**
     * The switches of {@code fits} where v alone overloads no link, with their peak utilisation in
     * {@code score}; records v's least loads on the links and groups all of them load (the
     * relaxation's rows) and caches the footprints for the local search.
     */
    private List<Integer> linkFits(int v, List<Integer> fits, double[] score) {
        List<Integer> linkFits = new ArrayList<>();
        for (int s : fits) {
            m.linkLoads(v, s, ll);
            pairStamp++;
            double peak = 0;
            for (int i = 0; i < ll.size(); i++) {
                peak = Math.max(peak, ll.load(i) / m.linkCapacity(ll.link(i)));
            }
            if (peak > 1 + Usage.EPS) {
                // v alone overloads a link from s: no feasible assignment has (v, s), so
                // neither a column, nor a term of the relaxation's least loads
                continue;
            }
            linkFits.add(s);
            if (lsb != null && !lsb.add(v, s, ll)) {
                lsb = null;
                ctx.notes.add("footprints too large to cache: no local search");
            }
            for (int i = 0; i < ll.size(); i++) {
                int l = ll.link(i);
                double load = ll.load(i);
                for (int g : groups.groupsOf[l]) {
                    if (groupMark[g] != pairStamp) {
                        groupMark[g] = pairStamp; // first load of this pair on the group
                        pairGroups.add(g);
                    }
                    groupSum[g] += load;
                }
                if (touchCount[l]++ == 0) {
                    touched.add(l);
                    touchMin[l] = load;
                } else {
                    touchMin[l] = Math.min(touchMin[l], load);
                }
            }
            score[s] = peak;
            for (int g : pairGroups) {
                if (groupCount[g]++ == 0) {
                    groupsTouched.add(g);
                    groupMin[g] = groupSum[g];
                } else {
                    groupMin[g] = Math.min(groupMin[g], groupSum[g]);
                }
                groupSum[g] = 0;
            }
            pairGroups.clear();
        }
        for (int g : groupsTouched) {
            if (groupCount[g] == linkFits.size() && groupMin[g] > 0) {
                groupRows.get(g).add(new double[] {v, groupMin[g]});
            }
            groupCount[g] = 0;
        }
        groupsTouched.clear();
        // a link every fitting switch loads: v puts at least the least of those loads on it
        for (int l : touched) {
            if (touchCount[l] == linkFits.size() && touchMin[l] > 0) {
                minLoadRows.get(l).add(new double[] {v, touchMin[l]});
            }
            touchCount[l] = 0;
        }
        touched.clear();
        return linkFits;
    }

    /** Which of the switches v fits are its candidate columns (all of them on small models). */
    private boolean[] candidates(int v, List<Integer> fits, double[] score, Usage start, boolean scan,
                                 boolean wholeModel) {
        boolean[] pick = new boolean[in.switchCount()];
        if (wholeModel || fits.size() <= BEST_CANDIDATES + SPREAD_CANDIDATES) {
            for (int s : fits) {
                pick[s] = true;
            }
            return pick;
        }
        allColumns = false;
        if (scan) {
            List<Integer> byScore = new ArrayList<>(fits);
            byScore.sort((a, b) -> Double.compare(score[a], score[b]));
            for (int i = 0; i < BEST_CANDIDATES; i++) {
                pick[byScore.get(i)] = true;
            }
        }
        // evenly spread, rotated per VIP so that every switch's memory is on offer
        // (fewer without footprints: at paper scale the model must stay in memory)
        int spread = scan ? SPREAD_CANDIDATES : SPREAD_CANDIDATES_LARGE;
        int stride = Math.max(1, fits.size() / spread);
        for (int j = 0; j < spread; j++) {
            pick[fits.get((v * 7919 + j * stride) % fits.size())] = true;
        }
        int ws = start.placement(v);
        if (ws >= 0) {
            pick[ws] = true;
        }
        int cur = ctx.installedOn(v);
        if (cur >= 0 && m.fitsAlone(v, cur)) {
            pick[cur] = true;
        }
        return pick;
    }
}
