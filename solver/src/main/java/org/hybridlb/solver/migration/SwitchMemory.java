package org.hybridlb.solver.migration;

import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Vip;

/** TEMPORARY until the shared ResourceModel lands: table entries a VIP needs on a switch. */
public interface SwitchMemory {
    String[] TABLES = {"host", "ecmp", "tunnel"};

    int[] demand(Vip v, Switch s);

    default int[] capacity(Switch s) {
        return new int[] {s.tables.host, s.tables.ecmp, s.tables.tunnel};
    }

    /** host: one per service; ecmp: sum of weights; tunnel: one per DIP (per-VIP tables). */
    SwitchMemory SIMPLE = (v, s) -> {
        int host = v.ports.size();
        int ecmp = 0;
        int tunnel = 0;
        for (var p : v.ports) {
            for (var d : p.dips) {
                ecmp += d.weight;
                tunnel++;
            }
        }
        return new int[] {host, ecmp, tunnel};
    };
}
