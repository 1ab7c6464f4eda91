package org.hybridlb.solver.ilp;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.ResourceModel;
import org.hybridlb.solver.routing.Fabric;

/**
 * Groups of directed links for the relaxation's aggregated rows: per switch, its links to
 * (and from) the neighbours of one role (a ToR's up links, its down links, an agg's links to
 * the cores, ...), and per pod the links leaving (and entering) it. A VIP's load on one link
 * depends on where it goes (ECMP sends all of it to the one agg it is on), but its load on a
 * ToR's up links together hardly does: it is the traffic of its clients under that ToR
 * wherever it goes. The least such sum over the switches it fits is what the row charges.
 * Only groups of two or more links (single links have their own rows).
 */
final class LinkGroups {
    /** Per link: the groups it is in. */
    final int[][] groupsOf;
    /** Per group: Σ capacity of its links. */
    final double[] cap;
    /** Per group: its links. */
    final int[][] links;

    LinkGroups(Instance in) {
        ResourceModel m = in.resources();
        Fabric f = in.fabric();
        int nl = m.linkCount();
        Map<String, Integer> ids = new HashMap<>();
        List<List<Integer>> members = new ArrayList<>();
        List<List<Integer>> of = new ArrayList<>();
        for (int l = 0; l < nl; l++) {
            of.add(new ArrayList<>());
            int a = f.linkFrom(l);
            int b = f.linkTo(l);
            List<String> keys = new ArrayList<>();
            keys.add("out " + a + " " + f.role(b));
            keys.add("in " + b + " " + f.role(a));
            if (f.pod(a) != f.pod(b)) {
                if (f.pod(a) >= 0) {
                    keys.add("leave " + f.pod(a));
                }
                if (f.pod(b) >= 0) {
                    keys.add("enter " + f.pod(b));
                }
            }
            for (String k : keys) {
                Integer g = ids.get(k);
                if (g == null) {
                    g = members.size();
                    ids.put(k, g);
                    members.add(new ArrayList<>());
                }
                members.get(g).add(l);
            }
        }
        // keep groups of two or more links, renumbered
        int[] renum = new int[members.size()];
        int ng = 0;
        List<Double> caps = new ArrayList<>();
        for (int g = 0; g < members.size(); g++) {
            if (members.get(g).size() >= 2) {
                renum[g] = ng++;
                double c = 0;
                for (int l : members.get(g)) {
                    c += m.linkCapacity(l);
                    of.get(l).add(renum[g]);
                }
                caps.add(c);
            }
        }
        cap = new double[ng];
        links = new int[ng][];
        for (int g = 0; g < ng; g++) {
            cap[g] = caps.get(g);
        }
        for (int g = 0; g < members.size(); g++) {
            if (members.get(g).size() >= 2) {
                links[renum[g]] = members.get(g).stream().mapToInt(Integer::intValue).toArray();
            }
        }
        groupsOf = new int[nl][];
        for (int l = 0; l < nl; l++) {
            groupsOf[l] = of.get(l).stream().mapToInt(Integer::intValue).toArray();
        }
    }

    int count() {
        return cap.length;
    }
}
