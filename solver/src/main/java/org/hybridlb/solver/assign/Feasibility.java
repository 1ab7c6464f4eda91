package org.hybridlb.solver.assign;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.hybridlb.solver.model.Assignment;

/**
 * Checks an assignment against every constraint of the {@link ResourceModel}: table entries per
 * switch, the fabric-wide host-table budget, and link loads against 80% of bandwidth. The
 * greedy, the planner (per step), the ILP and the tests all judge feasibility through this.
 */
public final class Feasibility {
    private Feasibility() {
    }

    /** Human-readable violations, empty when the assignment is feasible on this instance. */
    public static List<String> violations(Instance in, Assignment a) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, String> e : a.assignment.entrySet()) {
            if (in.vipIndex(e.getKey()) < 0) {
                out.add("VIP " + e.getKey() + " is not configured");
            } else if (!Assignment.SMUX.equals(e.getValue()) && in.switchIndex(e.getValue()) < 0) {
                out.add("VIP " + e.getKey() + " is on unknown switch '" + e.getValue() + "'");
            }
        }
        ResourceModel m = in.resources();
        for (int v = 0; v < in.vipCount(); v++) {
            int s = Assignments.placementOf(in, a, v);
            if (s >= 0 && !m.eligible(v)) {
                out.add("VIP " + in.vipId(v) + " cannot be on an HMux (" + m.ecmpEntries(v)
                        + " ECMP / " + m.tunnelEntries(v) + " tunnel entries fit no switch)");
            }
        }
        out.addAll(violations(Assignments.usageOf(in, a)));
        return out;
    }

    /** Capacity violations of a usage. */
    public static List<String> violations(Usage u) {
        List<String> out = new ArrayList<>();
        ResourceModel m = u.model();
        int n = m.instance().switchCount();
        for (int s = 0; s < n; s++) {
            if (u.ecmpUsed(s) > m.ecmpCapacity(s)) {
                out.add(String.format(Locale.ROOT, "switch %s: %d ECMP entries, %d free",
                        m.instance().switchId(s), u.ecmpUsed(s), m.ecmpCapacity(s)));
            }
            if (u.tunnelUsed(s) > m.tunnelCapacity(s)) {
                out.add(String.format(Locale.ROOT, "switch %s: %d tunnel entries, %d free",
                        m.instance().switchId(s), u.tunnelUsed(s), m.tunnelCapacity(s)));
            }
        }
        if (u.hostUsed() > m.hostBudget()) {
            out.add(String.format(Locale.ROOT, "host tables: %d VIP routes on every switch, %d free",
                    u.hostUsed(), m.hostBudget()));
        }
        for (int l = 0; l < m.linkCount(); l++) {
            if (u.linkUtilisation(l) > 1 + Usage.EPS) {
                out.add(String.format(Locale.ROOT, "link %s: %.4g bits/s, %.0f%% of the %.0f%% allowed",
                        m.instance().fabric().linkName(l), u.linkUsedBps(l), 100 * u.linkUtilisation(l),
                        100 * m.instance().options().linkHeadroom));
            }
        }
        return out;
    }
}
