package org.hybridlb.solver.ilp;

import java.util.Arrays;
import java.util.Random;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.ResourceModel;
import org.hybridlb.solver.assign.Usage;

/**
 * A fast primal heuristic for link-bound instances: a congestion-aware greedy and a
 * ruin-and-recreate local search over the cached link footprints of every fitting
 * (VIP, switch) pair.
 *
 * <p>Why not the paper's greedy: it picks the switch with the lowest MRU <em>of the whole
 * fabric</em> after placing. Once one link is full every switch ties at MRU 1 and the choice is
 * random, so on link-bound instances most VIPs land where they waste the links others need.
 * Here a VIP goes where it costs least: Σ_l t(l,s,v)/cap_l / (1 − u_l) over the links it loads,
 * plus its tunnel entries over the switch's free tunnel table (links and tables nearly full
 * weigh most), and VIPs are taken by traffic per tunnel entry (the scarce table), largest first.
 * The local search then takes the VIPs off the links of a full link (or off a switch) and
 * re-inserts every VIP on the SMuxes in that order, keeping the result when it carries at least
 * as much traffic.
 *
 * <p>Loads are kept as fractions of capacity in floats rounded up, so a placement this class
 * accepts is within the capacities of the exact model (up to double rounding in the sums); the
 * caller still checks every answer with {@code Feasibility} and uses the exact {@link Usage}.
 */
final class LinkSearch {
    /** Polyak step factor of the subgradient, from zero and from seeded multipliers. */
    static final double THETA = Tuning.positive("hlb.ilp.theta", 1);
    static final double THETA_SEEDED = Tuning.positive("hlb.ilp.thetaSeeded", 0.02);
    /** Steps without a better bound before the step factor is halved. */
    static final int PATIENCE = Tuning.positiveInt("hlb.ilp.patience", 10);
    /** Most cached link-load entries (ints + floats: 8 bytes each). */
    static final long MAX_ENTRIES = 60_000_000L;
    /** A link is full for the search at this utilisation (below 1 by float rounding room). */
    static final double FULL = 1 - 1e-6;

    private final Instance in;
    private final ResourceModel m;
    private final int ns;
    private final int nl;
    // pairs of VIP v: pairStart[v] .. pairStart[v+1]; each with its switch and its link loads
    private final int[] pairStart;
    private int[] pairSwitch;
    private int[] entryStart;
    private int[] entryLink;
    private float[] entryFrac;
    private int pairs;
    private int entries;
    private boolean complete = true;

    // state of the current solution
    private final int[] place;
    private final double[] lu;
    private final int[] tu;
    private final int[] eu;
    private int host;
    private double carried;
    /** With a migration budget: per VIP its installed switch (or {@link Usage#SMUX}), else null. */
    private int[] installed;
    /** Traffic (bits/s) that may leave its installed switch. */
    private double movableBps;

    private LinkSearch(Instance in, int[] pairStartSize) {
        this.in = in;
        this.m = in.resources();
        this.ns = in.switchCount();
        this.nl = m.linkCount();
        this.pairStart = pairStartSize;
        place = new int[in.vipCount()];
        Arrays.fill(place, Usage.SMUX);
        lu = new double[nl];
        tu = new int[ns];
        eu = new int[ns];
    }

    /** Builder fed pair by pair, in VIP order, by the scan that computes the footprints. */
    static final class Builder {
        final LinkSearch s;
        private int lastVip = -1;

        Builder(Instance in) {
            s = new LinkSearch(in, new int[in.vipCount() + 1]);
            s.pairSwitch = new int[1024];
            s.entryStart = new int[1025];
            s.entryLink = new int[16384];
            s.entryFrac = new float[16384];
        }

        /** Adds (v, sw) with its loads; false once the memory cap is reached (the search is then off). */
        boolean add(int v, int sw, org.hybridlb.solver.routing.LinkLoads ll) {
            LinkSearch t = s;
            if (!t.complete) {
                return false;
            }
            if ((long) t.entries + ll.size() > MAX_ENTRIES) {
                t.complete = false;
                t.entryLink = null;
                t.entryFrac = null;
                return false;
            }
            while (lastVip < v) {
                t.pairStart[++lastVip] = t.pairs;
            }
            if (t.pairs == t.pairSwitch.length) {
                t.pairSwitch = Arrays.copyOf(t.pairSwitch, 2 * t.pairs);
                t.entryStart = Arrays.copyOf(t.entryStart, 2 * t.pairs + 1);
            }
            if (t.entries + ll.size() > t.entryLink.length) {
                int n = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(2L * t.entryLink.length, t.entries + ll.size()));
                t.entryLink = Arrays.copyOf(t.entryLink, n);
                t.entryFrac = Arrays.copyOf(t.entryFrac, n);
            }
            t.pairSwitch[t.pairs] = sw;
            t.entryStart[t.pairs] = t.entries;
            for (int i = 0; i < ll.size(); i++) {
                int l = ll.link(i);
                double frac = ll.load(i) / t.m.linkCapacity(l);
                float f = (float) frac;
                if (f < frac) {
                    f = Math.nextUp(f); // never under the exact load
                }
                t.entryLink[t.entries] = l;
                t.entryFrac[t.entries++] = f;
            }
            t.pairs++;
            t.entryStart[t.pairs] = t.entries;
            return true;
        }

        /** The search, or null when the footprints did not fit in memory. */
        LinkSearch build() {
            LinkSearch t = s;
            if (!t.complete) {
                return null;
            }
            while (lastVip < t.in.vipCount()) {
                t.pairStart[++lastVip] = t.pairs;
            }
            return t;
        }
    }

    /** Order of insertion: traffic / tunnelEntries^beta, largest first (ties: more traffic first). */
    int[] order(double beta) {
        int nv = in.vipCount();
        Integer[] o = new Integer[nv];
        double[] key = new double[nv];
        for (int v = 0; v < nv; v++) {
            o[v] = v;
            key[v] = in.trafficBps(v) / Math.pow(Math.max(1, m.tunnelEntries(v)), beta);
        }
        Arrays.sort(o, (a, b) -> key[a] != key[b] ? Double.compare(key[b], key[a])
                : Double.compare(in.trafficBps(b), in.trafficBps(a)));
        int[] out = new int[nv];
        for (int i = 0; i < nv; i++) {
            out[i] = o[i];
        }
        return out;
    }

    /** Starts from the given placement (which must be feasible) and places more VIPs greedily. */
    void load(Usage u) {
        Arrays.fill(place, Usage.SMUX);
        Arrays.fill(lu, 0);
        Arrays.fill(tu, 0);
        Arrays.fill(eu, 0);
        host = 0;
        carried = 0;
        for (int v = 0; v < in.vipCount(); v++) {
            int s = u.placement(v);
            if (s >= 0) {
                int p = pairOf(v, s);
                if (p >= 0) {
                    add(v, p);
                }
            }
        }
    }

    private int pairOf(int v, int s) {
        for (int p = pairStart[v]; p < pairStart[v + 1]; p++) {
            if (pairSwitch[p] == s) {
                return p;
            }
        }
        return -1;
    }

    private void add(int v, int p) {
        int s = pairSwitch[p];
        place[v] = s;
        for (int i = entryStart[p]; i < entryStart[p + 1]; i++) {
            lu[entryLink[i]] += entryFrac[i];
        }
        tu[s] += m.tunnelEntries(v);
        eu[s] += m.ecmpEntries(v);
        host += m.hostEntries(v);
        carried += in.trafficBps(v);
    }

    private void remove(int v) {
        int s = place[v];
        int p = pairOf(v, s);
        for (int i = entryStart[p]; i < entryStart[p + 1]; i++) {
            lu[entryLink[i]] = Math.max(0, lu[entryLink[i]] - entryFrac[i]);
        }
        tu[s] -= m.tunnelEntries(v);
        eu[s] -= m.ecmpEntries(v);
        host -= m.hostEntries(v);
        carried -= in.trafficBps(v);
        place[v] = Usage.SMUX;
    }

    /**
     * Weight of the tunnel table in the cost, and exponent of the tunnel entries in the order,
     * of the greedy variants tried (measured on the medium link-bound instance: 58–61% of the
     * traffic depending on these, none best everywhere).
     */
    static final double[] ALPHAS = {0.5, 1, 2};
    static final double[] BETAS = {0.375, 0.75, 1};
    private double alpha = 1;

    /** Cheapest pair of v that fits now, or -1. */
    private int bestPair(int v) {
        if (host + m.hostEntries(v) > m.hostBudget()) {
            return -1;
        }
        int te = m.tunnelEntries(v);
        int ee = m.ecmpEntries(v);
        int best = -1;
        double bestCost = Double.POSITIVE_INFINITY;
        for (int p = pairStart[v]; p < pairStart[v + 1]; p++) {
            int s = pairSwitch[p];
            int tcap = m.tunnelCapacity(s);
            if (tu[s] + te > tcap || eu[s] + ee > m.ecmpCapacity(s)) {
                continue;
            }
            double cost = alpha * te / tcap / Math.max(1e-3, 1 - (double) tu[s] / tcap);
            boolean fits = true;
            for (int i = entryStart[p]; i < entryStart[p + 1]; i++) {
                double used = lu[entryLink[i]];
                double f = entryFrac[i];
                if (used + f > FULL) {
                    fits = false;
                    break;
                }
                cost += f / Math.max(1e-3, 1 - used);
                if (cost >= bestCost) {
                    break;
                }
            }
            if (fits && cost < bestCost) {
                bestCost = cost;
                best = p;
            }
        }
        return best;
    }

    /** Inserts every VIP still on the SMuxes, in {@code order}, where it costs least. */
    private void recreate(int[] order) {
        for (int v : order) {
            if (place[v] == Usage.SMUX && in.trafficBps(v) > 0 && pairStart[v + 1] > pairStart[v]) {
                int p = bestPair(v);
                if (p >= 0) {
                    add(v, p);
                }
            }
        }
    }

    /**
     * The best of the greedy variants ({@link #ALPHAS} × {@link #BETAS}), each from an empty
     * fabric and from {@code start} (whose VIPs stay, the others are inserted); with a migration
     * budget ({@link #limitMoves}) the best within it, or {@code start}.
     */
    Usage greedy(Usage start) {
        double bestCarried = -1;
        int[] bestPlace = null;
        for (double b : BETAS) {
            int[] order = order(b);
            for (double a : ALPHAS) {
                alpha = a;
                for (int from = 0; from < 2; from++) {
                    if (from == 0) {
                        load(m.newUsage());
                    } else {
                        load(start);
                    }
                    recreate(order);
                    if (carried > bestCarried && withinBudget()) {
                        bestCarried = carried;
                        bestPlace = place.clone();
                        bestAlpha = a;
                        bestBeta = b;
                    }
                }
            }
        }
        if (bestPlace == null) {
            return start.copy(); // no variant within the migration budget; start is
        }
        System.arraycopy(bestPlace, 0, place, 0, place.length);
        return toUsage();
    }

    /**
     * Keeps every later answer within a migration budget: at most {@code movableBps} of traffic
     * on VIPs that leave their installed switch ({@code installedOn[v]}, or {@link Usage#SMUX}).
     */
    void limitMoves(int[] installedOn, double movableBps) {
        this.installed = installedOn.clone();
        this.movableBps = movableBps;
    }

    private boolean withinBudget() {
        if (installed == null) {
            return true;
        }
        double moved = 0;
        for (int v = 0; v < place.length; v++) {
            if (installed[v] >= 0 && place[v] != installed[v]) {
                moved += in.trafficBps(v);
            }
        }
        return moved <= movableBps * (1 + 1e-12);
    }

    /** Parameters of the best greedy variant (the local search varies around them). */
    private double bestAlpha = 1;
    private double bestBeta = 1;

    /**
     * Ruin and recreate from {@code start} until {@code deadline} (seconds, nanoTime scale):
     * each step takes off the VIPs on a random nearly full link (or a random switch), re-inserts,
     * and keeps the result when it carries at least as much traffic (and stays within the
     * migration budget, if any); stops early once it carries
     * {@code stopCarried} bits/s.
     */
    Usage improve(Usage start, double deadline, long seed, double stopCarried) {
        load(start);
        Random r = new Random(seed);
        int nv = in.vipCount();
        int[] order = order(bestBeta);
        int[] noisy = order.clone();
        int[] savePlace = place.clone();
        double[] saveLu = lu.clone();
        int[] saveTu = tu.clone();
        int[] saveEu = eu.clone();
        int[] hot = new int[nl];
        int[] removed = new int[nv];
        double bestCarried = carried;
        int steps = 0;
        while (System.nanoTime() / 1e9 < deadline && carried < stopCarried) {
            steps++;
            System.arraycopy(place, 0, savePlace, 0, nv);
            System.arraycopy(lu, 0, saveLu, 0, nl);
            System.arraycopy(tu, 0, saveTu, 0, ns);
            System.arraycopy(eu, 0, saveEu, 0, ns);
            int saveHost = host;
            double saveCarried = carried;
            int nh = 0;
            for (int l = 0; l < nl; l++) {
                if (lu[l] > 0.97) {
                    hot[nh++] = l;
                }
            }
            int nr = 0;
            double keep = 0.3 + 0.5 * r.nextDouble(); // share of the VIPs on the ruined resource that stay
            if (nh > 0 && r.nextInt(4) != 0) {
                int l = hot[r.nextInt(nh)];
                for (int v = 0; v < nv; v++) {
                    if (place[v] >= 0 && r.nextDouble() > keep && loads(v, place[v], l)) {
                        removed[nr++] = v;
                    }
                }
            } else {
                int s = r.nextInt(ns);
                for (int v = 0; v < nv; v++) {
                    if (place[v] == s && r.nextDouble() > keep) {
                        removed[nr++] = v;
                    }
                }
            }
            for (int i = 0; i < nr; i++) {
                remove(removed[i]);
            }
            // the usual order, a few neighbours swapped, so that repeated ruins differ
            System.arraycopy(order, 0, noisy, 0, nv);
            for (int k = 0; k < nv / 20; k++) {
                int i = r.nextInt(nv - 1);
                int t = noisy[i];
                noisy[i] = noisy[i + 1];
                noisy[i + 1] = t;
            }
            alpha = bestAlpha * Math.exp(0.5 * r.nextGaussian());
            recreate(noisy);
            if (carried >= bestCarried * (1 - 1e-12) && withinBudget()) {
                bestCarried = Math.max(bestCarried, carried);
            } else {
                System.arraycopy(savePlace, 0, place, 0, nv);
                System.arraycopy(saveLu, 0, lu, 0, nl);
                System.arraycopy(saveTu, 0, tu, 0, ns);
                System.arraycopy(saveEu, 0, eu, 0, ns);
                host = saveHost;
                carried = saveCarried;
            }
        }
        lastSteps = steps;
        return toUsage();
    }

    /** Ruin-and-recreate steps of the last {@link #improve} call. */
    int lastSteps;

    private boolean loads(int v, int s, int link) {
        int p = pairOf(v, s);
        for (int i = entryStart[p]; i < entryStart[p + 1]; i++) {
            if (entryLink[i] == link) {
                return true;
            }
        }
        return false;
    }

    /** The current placement as an exact {@link Usage} (recomputed by the resource model). */
    private Usage toUsage() {
        Usage u = m.newUsage();
        for (int v = 0; v < place.length; v++) {
            if (place[v] >= 0) {
                u.place(v, place[v]);
            }
        }
        return u;
    }

    /** Subgradient steps of the last {@link #lagrangianBound} call. */
    int lastIterations;

    /**
     * A proven upper bound on the HMux share: the Lagrangian relaxation of every capacity row
     * (links, ECMP and tunnel tables, host budget), all scaled to "utilisation ≤ 1",
     * <pre>
     *   L(λ) = Σ_r λ_r (1 + ε_r) + Σ_v max(0, max_{s fits} [p_v − Σ_r λ_r a_r(v, s)])
     * </pre>
     * is at least the share of any feasible assignment for every λ ≥ 0 (each relaxed row adds
     * λ_r × slack ≥ 0; each VIP adds at most its best term, or 0 on the SMuxes). Minimised over
     * λ by subgradient steps (Polyak's step towards {@code lower}, the best share known) until
     * {@code deadline}; the least value seen is returned. Its minimum is the LP relaxation of the
     * full model. Link loads are the cached floats moved one ulp down (never above the exact
     * t(l,s,v)/cap), so each value is at least the exact Lagrangian at the same λ.
     */
    double lagrangianBound(double lower, double deadline, double[] seeds) {
        int nv = in.vipCount();
        double total = in.totalTrafficBps();
        int hostRow = nl + 2 * ns;
        int rows = hostRow + 1;
        double[] lambda = seeds != null ? seeds.clone() : new double[rows];
        double[] grad = new double[rows];
        double[] p = new double[nv];
        for (int v = 0; v < nv; v++) {
            p[v] = in.trafficBps(v) / total;
        }
        // memory coefficients per switch as fractions of the tables
        double best = Double.POSITIVE_INFINITY;
        double theta = seeds != null ? THETA_SEEDED : THETA;
        int sinceBest = 0;
        lastIterations = 0;
        int[] choice = new int[nv];
        while (System.nanoTime() / 1e9 < deadline) {
            lastIterations++;
            double value = 0;
            for (int r = 0; r < rows; r++) {
                // links may be filled to (1 + EPS) by the checker's tolerance; tables are integers
                value += lambda[r] * (r < nl ? 1 + Usage.EPS : 1);
            }
            double lh = lambda[hostRow];
            for (int v = 0; v < nv; v++) {
                choice[v] = -1;
                if (p[v] <= 0) {
                    continue;
                }
                double top = 0;
                double base = p[v] - lh * m.hostEntries(v) / Math.max(1, m.hostBudget());
                for (int q = pairStart[v]; q < pairStart[v + 1]; q++) {
                    int s = pairSwitch[q];
                    double rc = base - lambda[nl + s] * m.ecmpEntries(v) / m.ecmpCapacity(s)
                            - lambda[nl + ns + s] * m.tunnelEntries(v) / m.tunnelCapacity(s);
                    if (rc <= top) {
                        continue;
                    }
                    for (int i = entryStart[q]; i < entryStart[q + 1] && rc > top; i++) {
                        float f = entryFrac[i];
                        rc -= lambda[entryLink[i]] * Math.nextDown(f);
                    }
                    if (rc > top) {
                        top = rc;
                        choice[v] = q;
                    }
                }
                value += top;
            }
            value += 1e-9;
            if (value < best) {
                best = value;
                sinceBest = 0;
            } else if (++sinceBest >= PATIENCE) {
                theta /= 2;
                sinceBest = 0;
            }
            if (best <= lower * (1 + 1e-6) || theta < 1e-4) {
                break;
            }
            // subgradient: 1 − the row's utilisation under the chosen columns
            for (int r = 0; r < rows; r++) {
                grad[r] = 1;
            }
            for (int v = 0; v < nv; v++) {
                int q = choice[v];
                if (q < 0) {
                    continue;
                }
                int s = pairSwitch[q];
                for (int i = entryStart[q]; i < entryStart[q + 1]; i++) {
                    grad[entryLink[i]] -= entryFrac[i];
                }
                grad[nl + s] -= (double) m.ecmpEntries(v) / m.ecmpCapacity(s);
                grad[nl + ns + s] -= (double) m.tunnelEntries(v) / m.tunnelCapacity(s);
                grad[hostRow] -= (double) m.hostEntries(v) / Math.max(1, m.hostBudget());
            }
            double norm = 0;
            for (int r = 0; r < rows; r++) {
                if (lambda[r] > 0 || grad[r] < 0) {
                    norm += grad[r] * grad[r];
                }
            }
            if (norm <= 0) {
                break; // the relaxed solution meets every row: its value is the optimum of L
            }
            double step = theta * (value - lower) / norm;
            for (int r = 0; r < rows; r++) {
                lambda[r] = Math.max(0, lambda[r] - step * grad[r]);
            }
        }
        return best;
    }
}
