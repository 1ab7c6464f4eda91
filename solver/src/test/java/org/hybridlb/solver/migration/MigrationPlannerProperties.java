package org.hybridlb.solver.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.statistics.Statistics;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.MigrationPlan;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;

/**
 * Random small fabrics, VIP configurations and pairs of assignments that fit: the planner finds
 * a plan, no step of it overfills any table (the checker replays it), it ends in the target, and
 * its inverse restores the start.
 */
class MigrationPlannerProperties {

    @Property(tries = 300)
    void plansAreSafeCompleteAndReversible(@ForAll @IntRange(min = 1, max = 5) int switches,
                                           @ForAll @IntRange(min = 1, max = 10) int vips,
                                           @ForAll boolean makeBeforeBreak,
                                           @ForAll long seed) {
        Random rnd = new Random(seed);
        List<Switch> sw = new ArrayList<>();
        for (int i = 0; i < switches; i++) {
            int cap = 10 + rnd.nextInt(90);
            sw.add(new Switch("s" + i, SwitchRole.TOR, 0, new TableCapacity(2 + rnd.nextInt(6), cap, cap)));
        }
        Topology t = new Topology("prop", sw, List.of(), List.of(), List.of());
        List<Vip> installed = new ArrayList<>();
        List<Vip> target = new ArrayList<>();
        Map<String, Double> traffic = new HashMap<>();
        for (int v = 1; v <= vips; v++) {
            Vip base = randomVip(rnd, v);
            traffic.put(base.vip, rnd.nextDouble() * 1e10);
            int fate = rnd.nextInt(10);
            if (fate == 0) {
                installed.add(base); // removed
            } else if (fate == 1) {
                target.add(base); // new
            } else {
                installed.add(base);
                target.add(fate < 4 ? mutate(rnd, base) : base);
            }
        }
        VipSet from = new VipSet(installed);
        VipSet to = new VipSet(target);
        MigrationProblem p = new MigrationProblem(t, from, randomFit(rnd, t, from), to, randomFit(rnd, t, to), traffic);
        PlannerOptions o = new PlannerOptions(makeBeforeBreak, PlannerOptions.UNBOUNDED);

        MigrationPlan plan = new MigrationPlanner(o).plan(p, Fixtures.memory(p));
        Statistics.label("detoured").collect(plan.waves.stream().anyMatch(w -> w.transientSmuxBps > 0));

        assertEquals(List.of(), PlanChecker.violations(p, plan, Fixtures.memory(p), o));
        assertEquals(List.of(), PlanChecker.rollbackViolations(p, plan, Fixtures.memory(p)));
    }

    @Property(tries = 200)
    void boundedPlansKeepTheBoundOrRefuse(@ForAll @IntRange(min = 2, max = 5) int switches,
                                          @ForAll @IntRange(min = 2, max = 10) int vips,
                                          @ForAll long seed) {
        Random rnd = new Random(seed);
        List<Switch> sw = new ArrayList<>();
        for (int i = 0; i < switches; i++) {
            sw.add(new Switch("s" + i, SwitchRole.TOR, 0, new TableCapacity(100, 50 + rnd.nextInt(50), 100)));
        }
        Topology t = new Topology("prop", sw, List.of(), List.of(), List.of());
        List<Vip> list = new ArrayList<>();
        Map<String, Double> traffic = new HashMap<>();
        for (int v = 1; v <= vips; v++) {
            Vip vip = randomVip(rnd, v);
            list.add(vip);
            traffic.put(vip.vip, 1e9 * (1 + rnd.nextInt(4)));
        }
        VipSet set = new VipSet(list);
        MigrationProblem p = new MigrationProblem(t, set, randomFit(rnd, t, set), randomFit(rnd, t, set), traffic);
        PlannerOptions o = new PlannerOptions(rnd.nextBoolean(), 4e9 + rnd.nextInt(4) * 1e9);
        MigrationPlan plan;
        try {
            plan = new MigrationPlanner(o).plan(p, Fixtures.memory(p));
        } catch (PlanningException refused) {
            Statistics.label("outcome").collect("refused");
            return; // a bound too tight to make progress is reported, never silently broken
        }
        Statistics.label("outcome").collect(plan.waves.stream().anyMatch(w -> w.transientSmuxBps > 0)
                ? "planned with detours" : "planned without detours");
        assertEquals(List.of(), PlanChecker.violations(p, plan, Fixtures.memory(p), o));
    }

    private static Vip randomVip(Random rnd, int id) {
        String vip = "10.0." + (id / 200) + "." + (id % 200 + 1);
        List<VipPort> ports = new ArrayList<>();
        if (rnd.nextInt(3) == 0) {
            ports.add(new VipPort("tcp", 80, dips(rnd, id, 1 + rnd.nextInt(25), 0)));
            ports.add(new VipPort("tcp", 443, dips(rnd, id, 1 + rnd.nextInt(10), 100)));
        } else {
            ports.add(new VipPort("any", 0, dips(rnd, id, 1 + rnd.nextInt(40), 0)));
        }
        return new Vip(vip, "10.0.0.0/16", ports);
    }

    private static List<Dip> dips(Random rnd, int id, int n, int offset) {
        List<Dip> out = new ArrayList<>();
        for (int d = 0; d < n; d++) {
            int k = d + offset;
            out.add(new Dip("172." + (16 + id % 16) + "." + (k / 250) + "." + (k % 250 + 1),
                    rnd.nextInt(5) == 0 ? 2 : 1, null));
        }
        return out;
    }

    /** Adds, removes or re-weights a few DIPs. */
    private static Vip mutate(Random rnd, Vip v) {
        List<VipPort> ports = new ArrayList<>();
        for (VipPort p : v.ports) {
            List<Dip> ds = new ArrayList<>(p.dips);
            if (ds.size() > 1 && rnd.nextBoolean()) {
                ds.remove(rnd.nextInt(ds.size()));
            }
            if (rnd.nextBoolean()) {
                Dip d = ds.get(rnd.nextInt(ds.size()));
                ds.set(ds.indexOf(d), new Dip(d.ip, d.weight + 1, d.hostIp));
            }
            if (rnd.nextBoolean()) {
                ds.add(new Dip("192.168." + rnd.nextInt(250) + "." + (1 + rnd.nextInt(250)), 1, null));
            }
            ports.add(new VipPort(p.proto, p.port, dedupe(ds)));
        }
        return new Vip(v.vip, v.aggregate, ports);
    }

    private static List<Dip> dedupe(List<Dip> ds) {
        Map<String, Dip> m = new LinkedHashMap<>();
        ds.forEach(d -> m.putIfAbsent(d.ip, d));
        return new ArrayList<>(m.values());
    }

    /** Places each VIP on a random switch where it still fits, else on the SMuxes. */
    private static Assignment randomFit(Random rnd, Topology t, VipSet vips) {
        Map<String, int[]> used = new HashMap<>();
        Map<String, String> a = new LinkedHashMap<>();
        MemoryModel m = Fixtures.memory(t, vips);
        for (Vip v : vips.vips) {
            String at = Assignment.SMUX;
            if (rnd.nextInt(5) != 0) {
                Switch s = t.switches.get(rnd.nextInt(t.switches.size()));
                int[] need = {m.ecmpEntries(v), m.tunnelEntries(v), m.hostEntries(v)};
                int[] cap = {m.ecmpCapacity(s.id), m.tunnelCapacity(s.id), m.hostBudget()};
                int[] u = used.computeIfAbsent(s.id, k -> new int[3]);
                int[] h = used.computeIfAbsent("host budget", k -> new int[3]);
                boolean fits = u[0] + need[0] <= cap[0] && u[1] + need[1] <= cap[1] && h[2] + need[2] <= cap[2];
                if (fits) {
                    h[2] += need[2];
                    for (int i = 0; i < 2; i++) {
                        u[i] += need[i];
                    }
                    at = s.id;
                }
            }
            a.put(v.vip, at);
        }
        return new Assignment("random", a, 0, 0, 0, null);
    }
}
