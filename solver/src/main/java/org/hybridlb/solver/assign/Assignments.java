package org.hybridlb.solver.assign;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.SmuxProvisioning;
import org.hybridlb.solver.model.Utilisation;
import org.hybridlb.solver.provision.SmuxProvisioner;

/** Turns a {@link Usage} into the {@link Assignment} the tools print, and back. */
public final class Assignments {
    /** How many of the most loaded resources an assignment lists. */
    public static final int TOP_RESOURCES = 10;

    private Assignments() {
    }

    /** The assignment of {@code u}, with share, MRU, utilisation and SMux provisioning. */
    public static Assignment of(Instance in, Usage u, String algorithm, Assignment previous) {
        Map<String, String> map = new LinkedHashMap<>();
        double hmux = 0;
        int[] placement = new int[in.vipCount()];
        for (int v = 0; v < in.vipCount(); v++) {
            int s = u.placement(v);
            placement[v] = s;
            map.put(in.vipId(v), s < 0 ? Assignment.SMUX : in.switchId(s));
            if (s >= 0) {
                hmux += in.trafficBps(v);
            }
        }
        double total = in.totalTrafficBps();
        double share = total > 0 ? hmux / total : 0;
        SmuxProvisioning prov = SmuxProvisioner.provision(in, placement, previous, in.options().smuxCapacityBps);
        return new Assignment(algorithm, map, Math.min(1, share), u.mru(), prov.smuxCount, utilisation(u), prov);
    }

    public static Utilisation utilisation(Usage u) {
        ResourceModel m = u.model();
        double maxLink = 0;
        for (int l = 0; l < m.linkCount(); l++) {
            maxLink = Math.max(maxLink, u.linkUtilisation(l));
        }
        double maxMem = 0;
        int n = m.instance().switchCount();
        for (int s = 0; s < n; s++) {
            maxMem = Math.max(maxMem, Math.max(u.ecmpUtilisation(s), u.tunnelUtilisation(s)));
        }
        // the top resources: a bounded selection, not a sort of every resource
        List<int[]> top = new ArrayList<>();
        Comparator<int[]> byUse = Comparator.comparingDouble(r -> -u.utilisation(r[0]));
        for (int r = 0; r < m.resourceCount(); r++) {
            double x = u.utilisation(r);
            if (x <= 0) {
                continue;
            }
            if (top.size() < TOP_RESOURCES || x > u.utilisation(top.get(top.size() - 1)[0])) {
                top.add(new int[] {r});
                top.sort(byUse);
                if (top.size() > TOP_RESOURCES) {
                    top.remove(top.size() - 1);
                }
            }
        }
        List<Utilisation.ResourceUse> uses = new ArrayList<>();
        for (int[] r : top) {
            uses.add(new Utilisation.ResourceUse(m.resourceKind(r[0]), m.resourceName(r[0]), u.utilisation(r[0])));
        }
        return new Utilisation(maxLink, maxMem, u.hostUtilisation(), uses);
    }

    /** Placement of VIP v in {@code a} as a switch index; {@link Usage#SMUX} when none or unknown. */
    public static int placementOf(Instance in, Assignment a, int v) {
        if (a == null) {
            return Usage.SMUX;
        }
        String where = a.assignment.get(in.vipId(v));
        if (where == null || Assignment.SMUX.equals(where)) {
            return Usage.SMUX;
        }
        return in.switchIndex(where);
    }

    /**
     * The usage of an existing assignment on this instance, placing VIPs as they are (even if
     * that violates a capacity: check with {@link Feasibility}). Unknown switches and VIPs the
     * instance does not have are ignored; callers validate those first.
     */
    public static Usage usageOf(Instance in, Assignment a) {
        Usage u = in.resources().newUsage();
        for (int v = 0; v < in.vipCount(); v++) {
            int s = Assignments.placementOf(in, a, v);
            if (s >= 0) {
                u.place(v, s);
            }
        }
        return u;
    }
}
