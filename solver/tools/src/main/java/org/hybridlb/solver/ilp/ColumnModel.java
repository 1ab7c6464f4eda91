package org.hybridlb.solver.ilp;

import com.google.ortools.linearsolver.MPConstraint;
import com.google.ortools.linearsolver.MPSolver;
import com.google.ortools.linearsolver.MPVariable;
import java.util.BitSet;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.ResourceModel;
import org.hybridlb.solver.assign.Usage;

/**
 * The Duet assignment model over the candidate {@link Columns}, built row by row from the brain's
 * {@link ResourceModel} so the ILP, the greedy and the checker share one model of the
 * constraints:
 *
 * <pre>
 *   max  Σ_v Σ_s (t_v / T) x[v][s]                        (HMux traffic share)
 *   s.t. Σ_s x[v][s] ≤ 1                                   (else on the SMuxes)
 *        Σ_v ecmpEntries(v)   x[v][s] ≤ ecmpCapacity(s)     per switch
 *        Σ_v tunnelEntries(v) x[v][s] ≤ tunnelCapacity(s)   per switch
 *        Σ_v Σ_s hostEntries(v) x[v][s] ≤ hostBudget        fabric-wide
 *        Σ_v Σ_s t(l, s, v) x[v][s] ≤ linkCapacity(l)       per directed link (80%)
 *        Σ_{v installed on c} t_v (1 - x[v][c]) ≤ X · T    optional migration budget
 * </pre>
 * x[v][s] exists only where {@code fitsAlone(v, s)} and t_v > 0 (a VIP without traffic adds
 * nothing to the objective, so leaving it on the SMuxes loses nothing), and, where footprints
 * are computed, where v alone loads no link past its capacity (no feasible assignment has such
 * a pair; leaving it out also tightens the relaxation and the Lagrangian): the candidate
 * {@link Columns} among those pairs. Rows a column set cannot violate are left out, and only
 * the link rows asked for are in (they are added lazily: {@link LazyRounds}); without some link
 * rows the model is a relaxation of the full one, so its proven bound stays valid.
 *
 * <p>{@link #stage1} is that model; {@link #mru} the secondary objective: with the HMux traffic
 * kept at least at a given share, minimise the MRU (links, ECMP, tunnel; as {@link Usage#mru()}).
 */
final class ColumnModel {
    /**
     * Link rows are utilisation ≤ 1 exactly as the checker has them (a link may be filled to its
     * 80%); an answer that a solver tolerance pushes over is caught by the checker and repaired.
     */
    static final double LINK_MARGIN = 0;

    final MipModel model;
    /** Per column: x[v][s]. */
    final MPVariable[] x;
    private final IlpContext ctx;
    private final Instance in;
    private final ResourceModel m;
    private final Columns columns;

    /** The columns' binaries, with the HMux traffic share as objective when {@code shareObjective}. */
    private ColumnModel(IlpContext ctx, Columns columns, String name, boolean shareObjective) {
        this.ctx = ctx;
        this.in = ctx.in;
        this.m = ctx.m;
        this.columns = columns;
        model = MipModel.create(name, ctx.o.mip).strict();
        MPSolver s = model.solver();
        int cols = columns.count();
        x = new MPVariable[cols];
        double total = in.totalTrafficBps();
        for (int c = 0; c < cols; c++) {
            x[c] = s.makeBoolVar("x_" + columns.vip(c) + "_" + columns.switchOf(c));
            if (shareObjective) {
                s.objective().setCoefficient(x[c], in.trafficBps(columns.vip(c)) / total);
            }
        }
    }

    /** The first stage model: maximise HMux traffic share with the given link rows. */
    static ColumnModel stage1(IlpContext ctx, Columns columns, BitSet linkRows) {
        ColumnModel cm = new ColumnModel(ctx, columns, "duet", true);
        MPSolver s = cm.model.solver();
        s.objective().setMaximization();
        cm.addCommonRows(null);
        cm.addLinkRows(linkRows, null);
        return cm;
    }

    /**
     * The second stage model: the least MRU over every link any column loads, keeping at least
     * {@code keep} of the traffic on the HMuxes; hinted with {@code best}.
     */
    static ColumnModel mru(IlpContext ctx, Columns columns, double keep, Usage best) {
        // All links any column loads join this model: the MRU is over every link.
        BitSet all = columns.linksLoaded();
        ColumnModel cm = new ColumnModel(ctx, columns, "duet-mru", false);
        MPSolver s = cm.model.solver();
        MPVariable mru = s.makeNumVar(0, 1, "mru");
        s.objective().setCoefficient(mru, 1);
        s.objective().setMinimization();
        cm.addCommonRows(mru);
        cm.addLinkRows(all, mru);
        double total = ctx.in.totalTrafficBps();
        MPConstraint traffic = s.makeConstraint(keep - 1e-9, Double.POSITIVE_INFINITY, "keep_traffic");
        for (int c = 0; c < columns.count(); c++) {
            traffic.setCoefficient(cm.x[c], ctx.in.trafficBps(columns.vip(c)) / total);
            cm.model.hint(cm.x[c], best.placement(columns.vip(c)) == columns.switchOf(c) ? 1 : 0);
        }
        cm.model.hint(mru, best.mru());
        return cm;
    }

    /** Solves stage 1 hinted with {@code hint}'s placements. */
    MipResult solve(MipOptions opts, Usage hint) {
        for (int c = 0; c < columns.count(); c++) {
            model.hint(x[c], hint.placement(columns.vip(c)) == columns.switchOf(c) ? 1 : 0);
        }
        return model.solve(opts);
    }

    /** The usage a solution's values describe (a VIP on the first of its columns set). */
    Usage usageOf(double[] values) {
        Usage u = m.newUsage();
        for (int c = 0; c < columns.count(); c++) {
            if (values[x[c].index()] > 0.5 && u.placement(columns.vip(c)) == Usage.SMUX) {
                u.place(columns.vip(c), columns.switchOf(c));
            }
        }
        return u;
    }

    /** Assignment, memory, host and migration rows; with {@code mru} non-null, memory rows are ≤ mru. */
    private void addCommonRows(MPVariable mru) {
        MPSolver s = model.solver();
        int nv = in.vipCount();
        int ns = in.switchCount();
        int cols = columns.count();
        MPConstraint[] one = new MPConstraint[nv];
        long[] ecmpSum = new long[ns];
        long[] tunnelSum = new long[ns];
        long hostSum = 0;
        for (int c = 0; c < cols; c++) {
            int v = columns.vip(c);
            if (one[v] == null) {
                one[v] = s.makeConstraint(0, 1, "one_" + v);
                hostSum += m.hostEntries(v);
            }
            one[v].setCoefficient(x[c], 1);
            ecmpSum[columns.switchOf(c)] += m.ecmpEntries(v);
            tunnelSum[columns.switchOf(c)] += m.tunnelEntries(v);
        }
        MPConstraint[] ecmp = new MPConstraint[ns];
        MPConstraint[] tunnel = new MPConstraint[ns];
        for (int sw = 0; sw < ns; sw++) {
            // rows that all columns together cannot break are redundant (unless they set the MRU)
            if (mru != null || ecmpSum[sw] > m.ecmpCapacity(sw)) {
                ecmp[sw] = s.makeConstraint(Double.NEGATIVE_INFINITY, mru == null ? m.ecmpCapacity(sw) : 0,
                        "ecmp_" + sw);
                if (mru != null) {
                    ecmp[sw].setCoefficient(mru, -m.ecmpCapacity(sw));
                }
            }
            if (mru != null || tunnelSum[sw] > m.tunnelCapacity(sw)) {
                tunnel[sw] = s.makeConstraint(Double.NEGATIVE_INFINITY, mru == null ? m.tunnelCapacity(sw) : 0,
                        "tunnel_" + sw);
                if (mru != null) {
                    tunnel[sw].setCoefficient(mru, -m.tunnelCapacity(sw));
                }
            }
        }
        MPConstraint host = hostSum > m.hostBudget() ? s.makeConstraint(Double.NEGATIVE_INFINITY, m.hostBudget(),
                "host") : null;
        for (int c = 0; c < cols; c++) {
            int v = columns.vip(c);
            int sw = columns.switchOf(c);
            if (ecmp[sw] != null) {
                ecmp[sw].setCoefficient(x[c], m.ecmpEntries(v));
            }
            if (tunnel[sw] != null) {
                tunnel[sw].setCoefficient(x[c], m.tunnelEntries(v));
            }
            if (host != null) {
                host.setCoefficient(x[c], m.hostEntries(v));
            }
        }
        if (ctx.hasMigrationBudget()) {
            // Σ_{v installed on c} t_v x[v][c] ≥ Σ_{v installed} t_v - X·T   (in shares of T)
            double total = in.totalTrafficBps();
            double installed = 0;
            for (int v = 0; v < nv; v++) {
                if (ctx.installedOn(v) >= 0) {
                    installed += in.trafficBps(v) / total;
                }
            }
            MPConstraint stay = s.makeConstraint(installed - ctx.o.migrationBudget - 1e-9, Double.POSITIVE_INFINITY,
                    "migration");
            for (int c = 0; c < cols; c++) {
                if (ctx.installedOn(columns.vip(c)) == columns.switchOf(c)) {
                    stay.setCoefficient(x[c], in.trafficBps(columns.vip(c)) / total);
                }
            }
        }
    }

    /** Link rows for {@code links}: utilisation ≤ 1, or ≤ mru when {@code mru} is non-null. */
    private void addLinkRows(BitSet links, MPVariable mru) {
        MPSolver s = model.solver();
        MPConstraint[] row = new MPConstraint[m.linkCount()];
        for (int l = links.nextSetBit(0); l >= 0; l = links.nextSetBit(l + 1)) {
            row[l] = s.makeConstraint(Double.NEGATIVE_INFINITY, mru == null ? 1 - LINK_MARGIN : 0, "link_" + l);
            if (mru != null) {
                row[l].setCoefficient(mru, -(1 - LINK_MARGIN));
            }
        }
        for (int c = 0; c < columns.count(); c++) {
            for (int i = columns.loadStart(c); i < columns.loadStart(c + 1); i++) {
                MPConstraint r = row[columns.loadLink(i)];
                if (r != null) {
                    r.setCoefficient(x[c], columns.loadBps(i) / m.linkCapacity(columns.loadLink(i)));
                }
            }
        }
    }
}
