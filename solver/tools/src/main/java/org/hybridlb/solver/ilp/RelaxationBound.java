package org.hybridlb.solver.ilp;

import com.google.ortools.linearsolver.MPConstraint;
import com.google.ortools.linearsolver.MPSolver;
import com.google.ortools.linearsolver.MPVariable;
import java.util.ArrayList;
import java.util.List;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.ResourceModel;
import org.hybridlb.solver.assign.Usage;

/**
 * The bound of {@link DuetIlp}: a relaxation over y_v = "v is on some HMux":
 *
 * <pre>
 *   max  Σ_v (t_v / T) y_v
 *   s.t. Σ_v ecmpEntries(v) y_v ≤ Σ_s ecmpCapacity(s)            (and the same for tunnels)
 *        Σ_v hostEntries(v) y_v ≤ hostBudget
 *        Σ_v min_s t(l, s, v) y_v ≤ linkCapacity(l)               per link every fitting switch loads
 *        Σ_v min_s Σ_{l in g} t(l, s, v) y_v ≤ Σ_{l in g} cap(l)  per group g of links ({@link LinkGroups})
 *        Σ_{v installed} t_v (1 - y_v) ≤ X · T                    optional migration budget
 * </pre>
 * Every feasible assignment satisfies it, so its proven optimum (small: one binary per VIP)
 * bounds the full model. Only VIPs with a candidate column have a y_v. Its LP's duals also seed
 * the Lagrangian bound of the full model ({@link LinkSearch#lagrangianBound}).
 */
final class RelaxationBound {
    private final IlpContext ctx;
    private final Instance in;
    private final ResourceModel m;
    private final Columns columns;
    /** Per link: the VIPs that load it wherever they go, and that least load. */
    private final List<List<double[]>> minLoadRows;
    /** Per group of links: the VIPs that load it wherever they go and the least total load they put on it. */
    private final List<List<double[]>> groupRows;
    private final LinkGroups groups;

    RelaxationBound(IlpContext ctx, Columns columns, List<List<double[]>> minLoadRows,
                    List<List<double[]>> groupRows, LinkGroups groups) {
        this.ctx = ctx;
        this.in = ctx.in;
        this.m = ctx.m;
        this.columns = columns;
        this.minLoadRows = minLoadRows;
        this.groupRows = groupRows;
        this.groups = groups;
    }

    /**
     * Proven upper bound on the HMux share from the relaxation over y_v.
     * Warm-started from {@code start}, which satisfies it.
     */
    double bound(Usage start, double deadline) {
        return relaxation(start, deadline, null);
    }

    /**
     * Multipliers for {@link LinkSearch#lagrangianBound} from the duals of the relaxation's LP
     * (GLOP): a group row's dual spread over its links by capacity, the summed table rows' per
     * switch. The Lagrangian there is at most that LP's value, so the subgradient starts at least
     * as low as the relaxation over y_v (up to its integrality). Null if the LP failed.
     */
    double[] seeds(double deadline) {
        int ns = in.switchCount();
        double[] seeds = new double[m.linkCount() + 2 * ns + 1];
        return relaxation(m.newUsage(), deadline, seeds) >= 0 ? seeds : null;
    }

    /** With {@code seeds} null: the relaxation's MIP bound; else its LP, duals into seeds (returns -1 on failure). */
    private double relaxation(Usage start, double deadline, double[] seeds) {
        int nv = in.vipCount();
        int ns = in.switchCount();
        double total = in.totalTrafficBps();
        MipModel model = seeds == null ? MipModel.create("duet-bound", ctx.o.mip) : null;
        MipModel.loadNatives();
        MPSolver s = model != null ? model.solver() : MPSolver.createSolver("GLOP");
        if (s == null) {
            return -1;
        }
        List<MPConstraint> linkRowsMade = new ArrayList<>();
        List<Integer> linkRowIds = new ArrayList<>();
        List<MPConstraint> groupRowsMade = new ArrayList<>();
        List<Integer> groupRowIds = new ArrayList<>();
        MPVariable[] y = new MPVariable[nv];
        long ecmpCap = 0;
        long tunnelCap = 0;
        for (int sw = 0; sw < ns; sw++) {
            ecmpCap += m.ecmpCapacity(sw);
            tunnelCap += m.tunnelCapacity(sw);
        }
        MPConstraint ecmp = s.makeConstraint(Double.NEGATIVE_INFINITY, ecmpCap, "ecmp");
        MPConstraint tunnel = s.makeConstraint(Double.NEGATIVE_INFINITY, tunnelCap, "tunnel");
        MPConstraint host = s.makeConstraint(Double.NEGATIVE_INFINITY, m.hostBudget(), "host");
        boolean[] hasColumn = columns.vipsWithColumns();
        for (int v = 0; v < nv; v++) {
            if (!hasColumn[v]) {
                continue; // no traffic, or fits nowhere: y_v = 0 in any assignment worth having
            }
            y[v] = model != null ? s.makeBoolVar("y_" + v) : s.makeNumVar(0, 1, "y_" + v);
            s.objective().setCoefficient(y[v], in.trafficBps(v) / total);
            ecmp.setCoefficient(y[v], m.ecmpEntries(v));
            tunnel.setCoefficient(y[v], m.tunnelEntries(v));
            host.setCoefficient(y[v], m.hostEntries(v));
            if (model != null) {
                model.hint(y[v], start.placement(v) >= 0 ? 1 : 0);
            }
        }
        s.objective().setMaximization();
        for (int l = 0; l < m.linkCount(); l++) {
            MPConstraint c = leastLoadRow(s, y, minLoadRows.get(l), m.linkCapacity(l), "minlink_" + l);
            if (c != null) {
                linkRowsMade.add(c);
                linkRowIds.add(l);
            }
        }
        for (int g = 0; g < groupRows.size(); g++) {
            MPConstraint c = leastLoadRow(s, y, groupRows.get(g), groups.cap[g], "grouplink_" + g);
            if (c != null) {
                groupRowsMade.add(c);
                groupRowIds.add(g);
            }
        }
        if (seeds != null) {
            // LP only for its duals (the migration budget is left out: the Lagrangian drops it)
            s.setTimeLimit(Math.max(100, (long) (1000 * (deadline - System.nanoTime() / 1e9))));
            if (s.solve() != MPSolver.ResultStatus.OPTIMAL) {
                s.delete();
                return -1;
            }
            int nl = m.linkCount();
            for (int i = 0; i < linkRowsMade.size(); i++) {
                seeds[linkRowIds.get(i)] += Math.max(0, linkRowsMade.get(i).dualValue());
            }
            for (int i = 0; i < groupRowsMade.size(); i++) {
                double d = Math.max(0, groupRowsMade.get(i).dualValue());
                for (int l : groups.links[groupRowIds.get(i)]) {
                    seeds[l] += d * m.linkCapacity(l) / groups.cap[groupRowIds.get(i)];
                }
            }
            double de = Math.max(0, ecmp.dualValue());
            double dt = Math.max(0, tunnel.dualValue());
            for (int sw = 0; sw < ns; sw++) {
                seeds[nl + sw] = de * m.ecmpCapacity(sw);
                seeds[nl + ns + sw] = dt * m.tunnelCapacity(sw);
            }
            seeds[nl + 2 * ns] = Math.max(0, host.dualValue()) * Math.max(1, m.hostBudget());
            double value = s.objective().value();
            s.delete();
            return value;
        }
        if (ctx.hasMigrationBudget()) {
            // a VIP installed somewhere that is on no HMux has moved: Σ_installed t_v (1 - y_v) ≤ X·T
            double installed = 0;
            List<Integer> inst = new ArrayList<>();
            for (int v = 0; v < nv; v++) {
                if (ctx.installedOn(v) >= 0 && y[v] != null) {
                    installed += in.trafficBps(v) / total;
                    inst.add(v);
                }
            }
            MPConstraint stay = s.makeConstraint(installed - ctx.o.migrationBudget, Double.POSITIVE_INFINITY, "stay");
            for (int v : inst) {
                stay.setCoefficient(y[v], in.trafficBps(v) / total);
            }
        }
        double left = Math.max(0.5, deadline - System.nanoTime() / 1e9);
        // the bound model is tiny; ask for a tight gap so its bound is close to its optimum
        MipResult r = model.solve(ctx.o.mip.withTimeLimit(left).withGap(Math.min(ctx.o.mip.relativeGap, 1e-4)));
        ctx.addNewNotes(r.notes);
        if (Double.isNaN(r.bound) || r.status == MipResult.Status.ERROR) {
            ctx.notes.add("bound model: " + r.status + "; using the share of VIPs that fit anywhere");
            return Double.POSITIVE_INFINITY;
        }
        return r.bound + 1e-9;
    }

    /**
     * Σ_v least load · y_v ≤ capacity (as a share of it), or null when the VIPs' least loads
     * together fit: such a row cannot bind.
     */
    private static MPConstraint leastLoadRow(MPSolver s, MPVariable[] y, List<double[]> row, double capacity,
                                             String name) {
        double sum = 0;
        for (double[] e : row) {
            sum += e[1];
        }
        if (sum <= capacity) {
            return null;
        }
        MPConstraint c = s.makeConstraint(Double.NEGATIVE_INFINITY, 1, name);
        for (double[] e : row) {
            c.setCoefficient(y[(int) e[0]], e[1] / capacity);
        }
        return c;
    }
}
