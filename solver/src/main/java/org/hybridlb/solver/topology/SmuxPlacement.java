package org.hybridlb.solver.topology;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Counts SMuxes per ToR from an explicit list of ToR ids (a ToR may appear several times). */
final class SmuxPlacement {
    private SmuxPlacement() {
    }

    static Map<String, Integer> fromList(List<String> tors, Set<String> knownTors, String field) {
        Map<String, Integer> perTor = new HashMap<>();
        for (String tor : tors) {
            FabricBuilder.require(knownTors.contains(tor), field,
                    "'" + tor + "' is not a ToR of this topology");
            perTor.merge(tor, 1, Integer::sum);
        }
        return perTor;
    }

    static int max(Map<String, Integer> perTor) {
        int m = 0;
        for (int c : perTor.values()) {
            m = Math.max(m, c);
        }
        return m;
    }
}
