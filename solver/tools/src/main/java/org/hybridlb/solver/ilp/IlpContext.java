package org.hybridlb.solver.ilp;

import java.util.List;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.ResourceModel;
import org.hybridlb.solver.assign.Usage;
import org.hybridlb.solver.model.Assignment;

/**
 * What one {@link DuetIlp} solve shares between its parts: the instance and its resource model,
 * the installed assignment (or null), the options, and the notes the report will carry. Also the
 * measures every part takes of an answer: its HMux share and the traffic it moves off the
 * installed switches.
 */
final class IlpContext {
    final Instance in;
    final ResourceModel m;
    /** The installed assignment ({@code --current}), or null. */
    final Assignment current;
    final DuetIlp.Options o;
    /** Human-readable remarks for the report, in the order they happened. */
    final List<String> notes;

    IlpContext(Instance in, Assignment current, DuetIlp.Options o, List<String> notes) {
        this.in = in;
        this.m = in.resources();
        this.current = current;
        this.o = o;
        this.notes = notes;
    }

    /** Adds the notes not there yet (a solver repeats its own across models). */
    void addNewNotes(List<String> more) {
        for (String n : more) {
            if (!notes.contains(n)) {
                notes.add(n);
            }
        }
    }

    /** Whether a migration budget applies (it needs an installed assignment). */
    boolean hasMigrationBudget() {
        return o.migrationBudget != null && current != null;
    }

    int installedOn(int v) {
        if (current == null) {
            return Usage.SMUX;
        }
        String where = current.assignment.get(in.vipId(v));
        return where == null || Assignment.SMUX.equals(where) ? Usage.SMUX : in.switchIndex(where);
    }

    /** Share of total traffic whose VIP left its installed switch. */
    double movedShare(Usage u) {
        double total = in.totalTrafficBps();
        if (current == null || total <= 0) {
            return 0;
        }
        double moved = 0;
        for (int v = 0; v < in.vipCount(); v++) {
            int c = installedOn(v);
            if (c >= 0 && u.placement(v) != c) {
                moved += in.trafficBps(v);
            }
        }
        return moved / total;
    }

    boolean budgetOk(Usage u) {
        return o.migrationBudget == null || current == null || movedShare(u) <= o.migrationBudget + 1e-9;
    }

    /** Share of total traffic on the HMuxes. */
    double share(Usage u) {
        double total = in.totalTrafficBps();
        if (total <= 0) {
            return 0;
        }
        double hmux = 0;
        for (int v = 0; v < in.vipCount(); v++) {
            if (u.placement(v) >= 0) {
                hmux += in.trafficBps(v);
            }
        }
        return hmux / total;
    }

    /**
     * How far SCIP may run past its time limit: measured up to ~2 s on the medium models on a
     * loaded machine (it checks the clock between LP solves and heuristics).
     */
    double solverOverrun() {
        return Math.min(3.0, 0.05 * o.mip.timeLimitSeconds);
    }

    /** Time kept at the end for checking and converting the answer. */
    double finishMargin() {
        return Math.min(2.0, 0.03 * o.mip.timeLimitSeconds);
    }
}
