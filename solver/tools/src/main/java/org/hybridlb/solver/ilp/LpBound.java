package org.hybridlb.solver.ilp;

import com.google.ortools.linearsolver.MPConstraint;
import com.google.ortools.linearsolver.MPSolver;
import com.google.ortools.linearsolver.MPVariable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.ResourceModel;
import org.hybridlb.solver.assign.Usage;
import org.hybridlb.solver.routing.LinkLoads;

/**
 * A proven upper bound on the HMux share of the <em>full</em> Duet model (every fitting
 * (VIP, switch) column, every link row), from its LP relaxation solved by column generation.
 *
 * <p>The restricted master LP (GLOP) holds a growing set of columns and every row: one per VIP
 * (Σ_s x ≤ 1), per directed link (80%), per ECMP and tunnel table, the host budget and the
 * migration budget. Its duals price every fitting column of every VIP (t(l, s, v) recomputed by
 * {@link ResourceModel#linkLoads}, ~0.5 s per pass on the medium instance); columns with a
 * positive reduced cost join the master, until none is left or time runs out.
 *
 * <p>Soundness does not rest on the LP solver. Each pricing pass evaluates the Lagrangian
 * relaxation of the capacity rows at the master's duals, clamped to be non-negative:
 * <pre>
 *   UB(π, μ, ν, η, ρ) = Σ_l π_l·(1+ε) + Σ_s μ_s·E_s + Σ_s ν_s·U_s + η·H − ρ·(I − X)
 *                      + Σ_v max(0, max_{s fits} [p_v (1 + ρ·[s = installed(v)]) − Σ_l π_l t(l,s,v)/cap_l
 *                                                 − μ_s·e_v − ν_s·u_v − η·h_v])
 * </pre>
 * For any non-negative multipliers and any assignment x that meets the rows (as the checker
 * has them, ε = its tolerance), the objective is at most UB: each relaxed row only adds
 * multiplier × slack ≥ 0, and each VIP contributes at most its best term, or 0 on the SMuxes.
 * So every pass gives a valid bound whatever the duals are; at the LP optimum it equals the LP
 * value. The least over the passes is reported.
 */
final class LpBound {
    /** A column joins the master when its reduced cost exceeds this. */
    static final double PRICE_EPS = 1e-9;
    /** Columns a VIP may add per pricing pass (its best ones). */
    static final int COLUMNS_PER_VIP = Tuning.positiveInt("hlb.ilp.colsPerVip", 1);
    /** Stop once the Lagrangian bound is within this of the master LP's value. */
    static final double CONVERGED = 1e-6;
    /** Weight of the stability centre in the smoothed pricing point. */
    static final double SMOOTHING = Tuning.fraction("hlb.ilp.smoothing", 0.7, true);
    static final boolean DEBUG = Boolean.getBoolean("hlb.ilp.debug");

    /** What column generation found. */
    static final class Result {
        /** Valid upper bound on the HMux share of any feasible assignment (+∞ if none computed). */
        double bound = Double.POSITIVE_INFINITY;
        /** Master LP value at the end (a lower estimate of the LP relaxation; not a bound). */
        double lpValue = Double.NaN;
        int rounds;
        boolean converged;
        /** Columns of the final master, as {vip, switch}; their LP values in {@link #lpValues}. */
        final List<int[]> columns = new ArrayList<>();
        double[] lpValues = new double[0];
        /** Per directed link: the final dual (> 0 on the links the LP finds binding). */
        double[] linkDual;
        double seconds;
    }

    private final Instance in;
    private final ResourceModel m;
    /** Installed switch per VIP for the migration budget, or null without a budget. */
    private final int[] installed;
    private final double budget;
    /** Per master column: the links it loads and t(l, s, v) / capacity(l). */
    private final List<int[]> colLinks = new ArrayList<>();
    private final List<double[]> colLoads = new ArrayList<>();

    /**
     * @param installed per VIP its installed switch (or {@link Usage#SMUX}); null without a migration budget
     * @param budget    the migration budget X (share of traffic), used only with {@code installed}
     */
    LpBound(Instance in, int[] installed, double budget) {
        this.in = in;
        this.m = in.resources();
        this.installed = installed;
        this.budget = budget;
    }

    /**
     * Column generation from {@code initial} columns ({vip, switch}; each must fit alone) until
     * converged or {@code deadline} (System.nanoTime seconds). Always returns at least the bound of
     * one pricing pass when time allows one LP solve.
     */
    Result solve(List<int[]> initial, BitSet initialRows, double deadline) {
        long t0 = System.nanoTime();
        Result res = new Result();
        int nv = in.vipCount();
        int ns = in.switchCount();
        int nl = m.linkCount();
        double total = in.totalTrafficBps();
        res.linkDual = new double[nl];
        if (total <= 0) {
            res.bound = 0;
            res.converged = true;
            return res;
        }
        MipModel.loadNatives();
        MPSolver lp = MPSolver.createSolver(System.getProperty("hlb.ilp.lp", "GLOP"));
        if (lp == null) {
            throw new IllegalStateException("OR-Tools has no GLOP solver in this build");
        }
        lp.objective().setMaximization();
        // fitting switches per VIP (columns may exist only there)
        int[][] fits = new int[nv][];
        double[] p = new double[nv];
        MPConstraint[] one = new MPConstraint[nv];
        for (int v = 0; v < nv; v++) {
            p[v] = in.trafficBps(v) / total;
            if (p[v] <= 0 || !m.eligible(v)) {
                fits[v] = new int[0];
                continue;
            }
            int k = 0;
            int[] f = new int[ns];
            for (int s = 0; s < ns; s++) {
                if (m.fitsAlone(v, s)) {
                    f[k++] = s;
                }
            }
            fits[v] = Arrays.copyOf(f, k);
            if (k > 0) {
                one[v] = lp.makeConstraint(Double.NEGATIVE_INFINITY, 1, "one_" + v);
            }
        }
        // Link rows join lazily (cutting planes): those in initialRows, then any the master's
        // solution overloads. A row not in the master has multiplier 0 in the bound: still valid.
        MPConstraint[] link = new MPConstraint[nl];
        for (int l = initialRows.nextSetBit(0); l >= 0; l = initialRows.nextSetBit(l + 1)) {
            link[l] = lp.makeConstraint(Double.NEGATIVE_INFINITY, 1, "link_" + l);
        }
        MPConstraint[] ecmp = new MPConstraint[ns];
        MPConstraint[] tunnel = new MPConstraint[ns];
        for (int s = 0; s < ns; s++) {
            ecmp[s] = lp.makeConstraint(Double.NEGATIVE_INFINITY, m.ecmpCapacity(s), "ecmp_" + s);
            tunnel[s] = lp.makeConstraint(Double.NEGATIVE_INFINITY, m.tunnelCapacity(s), "tunnel_" + s);
        }
        MPConstraint host = lp.makeConstraint(Double.NEGATIVE_INFINITY, m.hostBudget(), "host");
        // migration budget: Σ_v p_v x[v][installed(v)] ≥ I − X (I: share of the installed VIPs)
        MPConstraint stay = null;
        double stayRhs = 0;
        if (installed != null) {
            for (int v = 0; v < nv; v++) {
                if (installed[v] >= 0) {
                    stayRhs += p[v];
                }
            }
            stayRhs -= budget + 1e-9; // the checker's tolerance on the budget
            stay = lp.makeConstraint(stayRhs, Double.POSITIVE_INFINITY, "stay");
        }

        LinkLoads ll = m.newLinkLoads();
        List<int[]> cols = new ArrayList<>();
        List<MPVariable> vars = new ArrayList<>();
        boolean[][] inMaster = new boolean[nv][];
        for (int v = 0; v < nv; v++) {
            inMaster[v] = new boolean[ns];
        }
        for (int[] c : initial) {
            if (one[c[0]] != null && m.fitsAlone(c[0], c[1]) && !inMaster[c[0]][c[1]]) {
                addColumn(lp, c[0], c[1], p, one, link, ecmp, tunnel, host, stay, ll, cols, vars, inMaster);
            }
        }
        double[] pi = new double[nl];
        double[] mu = new double[ns];
        double[] nu = new double[ns];
        double[] sigma = new double[nv];
        // Stability centre (Wentges smoothing): the multipliers of the best bound so far. Pricing
        // also at a point between it and the master's duals gives better bounds and columns while
        // the master's duals still jump around.
        double[] cPi = null;
        double[] cMu = new double[ns];
        double[] cNu = new double[ns];
        double cEta = 0;
        double cRho = 0;
        double[] sPi = new double[nl];
        double[] sMu = new double[ns];
        double[] sNu = new double[ns];
        double[] lastValues = new double[0];
        while (true) {
            if (System.nanoTime() / 1e9 >= deadline) {
                break;
            }
            lp.setTimeLimit(Math.max(1, (long) ((deadline - System.nanoTime() / 1e9) * 1000)));
            long tl = System.nanoTime();
            MPSolver.ResultStatus rs = lp.solve();
            if (DEBUG) {
                System.err.printf("lp: %d columns, %d rows, %.2f s, %s%n", cols.size(), lp.numConstraints(),
                        (System.nanoTime() - tl) / 1e9, rs);
            }
            if (rs != MPSolver.ResultStatus.OPTIMAL) {
                break; // duals of a non-optimal master are not worth pricing with
            }
            res.lpValue = lp.objective().value();
            if (addViolatedRows(lp, link, cols, vars)) {
                continue; // price only once the master meets every link row
            }
            res.rounds++;
            lastValues = new double[cols.size()];
            for (int i = 0; i < cols.size(); i++) {
                lastValues[i] = vars.get(i).solutionValue();
            }
            for (int l = 0; l < nl; l++) {
                pi[l] = link[l] == null ? 0 : Math.max(0, link[l].dualValue());
            }
            for (int s = 0; s < ns; s++) {
                mu[s] = Math.max(0, ecmp[s].dualValue());
                nu[s] = Math.max(0, tunnel[s].dualValue());
            }
            double eta = Math.max(0, host.dualValue());
            double rho = stay == null ? 0 : Math.max(0, -stay.dualValue());
            for (int v = 0; v < nv; v++) {
                sigma[v] = one[v] == null ? 0 : Math.max(0, one[v].dualValue());
            }
            res.linkDual = pi.clone();
            double a = cPi == null ? 0 : SMOOTHING;
            for (int l = 0; l < nl; l++) {
                sPi[l] = a * (cPi == null ? 0 : cPi[l]) + (1 - a) * pi[l];
            }
            for (int s = 0; s < ns; s++) {
                sMu[s] = a * cMu[s] + (1 - a) * mu[s];
                sNu[s] = a * cNu[s] + (1 - a) * nu[s];
            }
            double sEta = a * cEta + (1 - a) * eta;
            double sRho = a * cRho + (1 - a) * rho;
            // Lagrangian bounds at both points, and new columns
            double ub = constantPart(pi, mu, nu, eta, rho, stayRhs);
            double sUb = constantPart(sPi, sMu, sNu, sEta, sRho, stayRhs);
            int added = 0;
            for (int v = 0; v < nv; v++) {
                if (fits[v].length == 0) {
                    continue;
                }
                double best = 0;
                double sBest = 0;
                int pick = -1;
                double pickScore = Double.NEGATIVE_INFINITY;
                int fallback = -1;
                double fallbackRc = sigma[v] + PRICE_EPS;
                for (int s : fits[v]) {
                    double rc = p[v] - mu[s] * m.ecmpEntries(v) - nu[s] * m.tunnelEntries(v) - eta * m.hostEntries(v);
                    double sRc = p[v] - sMu[s] * m.ecmpEntries(v) - sNu[s] * m.tunnelEntries(v)
                            - sEta * m.hostEntries(v);
                    if (installed != null && installed[v] == s) {
                        rc += rho * p[v];
                        sRc += sRho * p[v];
                    }
                    if (rc <= best && rc <= sigma[v] + PRICE_EPS && sRc <= sBest) {
                        continue; // links only lower both: it can neither be the best nor join
                    }
                    m.linkLoads(v, s, ll);
                    for (int i = 0; i < ll.size(); i++) {
                        int l = ll.link(i);
                        double u = ll.load(i) / m.linkCapacity(l);
                        rc -= pi[l] * u;
                        sRc -= sPi[l] * u;
                    }
                    best = Math.max(best, rc);
                    sBest = Math.max(sBest, sRc);
                    if (!inMaster[v][s] && rc > sigma[v] + PRICE_EPS) {
                        // improving for the master: prefer the best at the smoothed point
                        if (sRc > pickScore) {
                            pickScore = sRc;
                            pick = s;
                        }
                        if (rc > fallbackRc) {
                            fallbackRc = rc;
                            fallback = s;
                        }
                    }
                }
                ub += best;
                sUb += sBest;
                if (pick >= 0) {
                    addColumn(lp, v, pick, p, one, link, ecmp, tunnel, host, stay, ll, cols, vars, inMaster);
                    added++;
                }
                if (fallback >= 0 && fallback != pick && COLUMNS_PER_VIP > 1) {
                    addColumn(lp, v, fallback, p, one, link, ecmp, tunnel, host, stay, ll, cols, vars, inMaster);
                    added++;
                }
            }
            double before = res.bound;
            if (ub < res.bound) {
                res.bound = ub;
            }
            if (sUb < res.bound) {
                res.bound = sUb;
            }
            // the centre moves to whichever point gave the best bound
            if (sUb <= ub && sUb < before) {
                cPi = sPi.clone();
                cMu = sMu.clone();
                cNu = sNu.clone();
                cEta = sEta;
                cRho = sRho;
            } else if (ub < before) {
                cPi = pi.clone();
                cMu = mu.clone();
                cNu = nu.clone();
                cEta = eta;
                cRho = rho;
            }
            if (DEBUG) {
                System.err.printf("pricing: lp %.5f ub %.5f smoothed %.5f best %.5f added %d, %.2f s%n",
                        res.lpValue, ub, sUb, res.bound, added, (System.nanoTime() - tl) / 1e9);
            }
            if (added == 0 || res.bound - res.lpValue <= CONVERGED) {
                res.converged = added == 0;
                break;
            }
        }
        res.lpValues = Arrays.copyOf(lastValues, cols.size());
        res.columns.addAll(cols);
        lp.delete();
        res.seconds = (System.nanoTime() - t0) / 1e9;
        return res;
    }

    /**
     * The Lagrangian bound above at the given non-negative multipliers (exposed for tests:
     * it must bound the optimum whatever the multipliers are).
     */
    double lagrangian(double[] pi, double[] mu, double[] nu, double eta, double rho) {
        int nv = in.vipCount();
        int ns = in.switchCount();
        double total = in.totalTrafficBps();
        if (total <= 0) {
            return 0;
        }
        double stayRhs = 0;
        if (installed != null) {
            for (int v = 0; v < nv; v++) {
                if (installed[v] >= 0) {
                    stayRhs += in.trafficBps(v) / total;
                }
            }
            stayRhs -= budget + 1e-9;
        }
        double ub = 0;
        for (int l = 0; l < m.linkCount(); l++) {
            ub += pi[l] * (1 + Usage.EPS);
        }
        for (int s = 0; s < ns; s++) {
            ub += mu[s] * m.ecmpCapacity(s) + nu[s] * m.tunnelCapacity(s);
        }
        ub += eta * m.hostBudget();
        if (installed != null) {
            ub -= rho * stayRhs;
        }
        LinkLoads ll = m.newLinkLoads();
        for (int v = 0; v < nv; v++) {
            double pv = in.trafficBps(v) / total;
            if (pv <= 0 || !m.eligible(v)) {
                continue;
            }
            double best = 0;
            for (int s = 0; s < ns; s++) {
                if (!m.fitsAlone(v, s)) {
                    continue;
                }
                double rc = pv - mu[s] * m.ecmpEntries(v) - nu[s] * m.tunnelEntries(v) - eta * m.hostEntries(v);
                if (installed != null && installed[v] == s) {
                    rc += rho * pv;
                }
                m.linkLoads(v, s, ll);
                for (int i = 0; i < ll.size(); i++) {
                    rc -= pi[ll.link(i)] * ll.load(i) / m.linkCapacity(ll.link(i));
                }
                best = Math.max(best, rc);
            }
            ub += best;
        }
        return ub + 1e-9;
    }

    /** Adds the link rows the master's solution overloads; whether there were any. */
    private boolean addViolatedRows(MPSolver lp, MPConstraint[] link, List<int[]> cols, List<MPVariable> vars) {
        double[] util = new double[link.length];
        double[] value = new double[cols.size()];
        for (int c = 0; c < cols.size(); c++) {
            value[c] = vars.get(c).solutionValue();
            if (value[c] > 0) {
                int[] ls = colLinks.get(c);
                double[] as = colLoads.get(c);
                for (int i = 0; i < ls.length; i++) {
                    util[ls[i]] += value[c] * as[i];
                }
            }
        }
        boolean any = false;
        for (int l = 0; l < link.length; l++) {
            if (link[l] == null && util[l] > 1 + 1e-7) {
                link[l] = lp.makeConstraint(Double.NEGATIVE_INFINITY, 1, "link_" + l);
                any = true;
            }
        }
        if (any) {
            for (int c = 0; c < cols.size(); c++) {
                int[] ls = colLinks.get(c);
                double[] as = colLoads.get(c);
                for (int i = 0; i < ls.length; i++) {
                    if (link[ls[i]] != null) {
                        link[ls[i]].setCoefficient(vars.get(c), as[i]);
                    }
                }
            }
        }
        return any;
    }

    /** The multiplier × capacity part of the Lagrangian (with the checker's link tolerance) and the 1e-9 margin. */
    private double constantPart(double[] pi, double[] mu, double[] nu, double eta, double rho, double stayRhs) {
        double ub = 1e-9;
        for (int l = 0; l < pi.length; l++) {
            ub += pi[l] * (1 + Usage.EPS);
        }
        for (int s = 0; s < mu.length; s++) {
            ub += mu[s] * m.ecmpCapacity(s) + nu[s] * m.tunnelCapacity(s);
        }
        ub += eta * m.hostBudget();
        if (installed != null) {
            ub -= rho * stayRhs;
        }
        return ub;
    }

    private void addColumn(MPSolver lp, int v, int s, double[] p, MPConstraint[] one, MPConstraint[] link,
                           MPConstraint[] ecmp, MPConstraint[] tunnel, MPConstraint host, MPConstraint stay,
                           LinkLoads ll, List<int[]> cols, List<MPVariable> vars, boolean[][] inMaster) {
        MPVariable x = lp.makeNumVar(0, Double.POSITIVE_INFINITY, "x_" + v + "_" + s);
        lp.objective().setCoefficient(x, p[v]);
        one[v].setCoefficient(x, 1);
        m.linkLoads(v, s, ll);
        int[] ls = new int[ll.size()];
        double[] as = new double[ll.size()];
        for (int i = 0; i < ll.size(); i++) {
            int l = ll.link(i);
            ls[i] = l;
            as[i] = ll.load(i) / m.linkCapacity(l);
            if (link[l] != null) {
                link[l].setCoefficient(x, as[i]);
            }
        }
        colLinks.add(ls);
        colLoads.add(as);
        ecmp[s].setCoefficient(x, m.ecmpEntries(v));
        tunnel[s].setCoefficient(x, m.tunnelEntries(v));
        host.setCoefficient(x, m.hostEntries(v));
        if (stay != null && installed[v] == s) {
            stay.setCoefficient(x, p[v]);
        }
        cols.add(new int[] {v, s});
        vars.add(x);
        inMaster[v][s] = true;
    }
}
