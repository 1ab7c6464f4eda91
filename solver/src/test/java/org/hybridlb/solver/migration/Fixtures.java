package org.hybridlb.solver.migration;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.assign.Instance;
import org.hybridlb.solver.assign.SolverOptions;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;

/** Small hand-made fabrics and VIPs for planner tests. */
final class Fixtures {
    private Fixtures() {
    }

    /** {@code n} ToRs s1..sn in one pod, each with {@code ecmp} free ECMP and tunnel entries. */
    static Topology switches(int n, int ecmp) {
        List<Switch> sw = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            sw.add(new Switch("s" + i, SwitchRole.TOR, 0, new TableCapacity(1000, ecmp, ecmp)));
        }
        return new Topology("test", sw, List.of(), List.of(), List.of());
    }

    /** The shared resource model's view of one configuration. */
    static MemoryModel memory(Topology t, org.hybridlb.solver.model.VipSet vips) {
        return SharedMemoryModel.of(Instance.build(t, vips, null, SolverOptions.defaults()), vips, vips);
    }

    /** The shared resource model's view of a problem's two configurations. */
    static MemoryModel memory(MigrationProblem p) {
        Instance in = Instance.build(p.topology, p.targetVips, null, SolverOptions.defaults());
        return SharedMemoryModel.of(in, p.installedVips, p.targetVips);
    }

    /** VIP 10.0.0.{id} balanced as a whole over {@code dips} DIPs 10.{id}.0.1... */
    static Vip vip(int id, int dips) {
        List<Dip> list = new ArrayList<>();
        for (int d = 1; d <= dips; d++) {
            list.add(new Dip("10." + id + "." + (d / 250) + "." + (d % 250 + 1), null, null));
        }
        return new Vip(vipIp(id), "10.0.0.0/16", List.of(new VipPort("any", 0, list)));
    }

    static String vipIp(int id) {
        return "10.0.0." + id;
    }

    /** An assignment from alternating VIP id / switch pairs: assignment(1, "s2", 2, "smux"). */
    static Assignment assignment(Object... pairs) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put(vipIp((Integer) pairs[i]), (String) pairs[i + 1]);
        }
        return new Assignment("test", m, 0, 0, 0, null);
    }
}
