package org.hybridlb.solver.migration;

import static org.hybridlb.solver.migration.Fixtures.assignment;
import static org.hybridlb.solver.migration.Fixtures.vip;
import static org.hybridlb.solver.migration.Fixtures.vipIp;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.io.Schema;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.MigrationPlan;
import org.hybridlb.solver.model.MigrationStep;
import org.hybridlb.solver.model.MigrationWave;
import org.hybridlb.solver.model.ServiceKey;
import org.hybridlb.solver.model.StepAction;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;
import org.junit.jupiter.api.Test;

class MigrationPlannerTest {

    private static MigrationPlan planAndCheck(MigrationProblem p, PlannerOptions o) {
        MigrationPlan plan = new MigrationPlanner(o).plan(p, Fixtures.memory(p));
        assertEquals(List.of(), PlanChecker.violations(p, plan, Fixtures.memory(p), o), "checker on the plan");
        assertEquals(List.of(), PlanChecker.rollbackViolations(p, plan, Fixtures.memory(p)), "checker on the rollback");
        return plan;
    }

    private static int waveOf(MigrationPlan plan, StepAction a, String vip, String sw) {
        for (MigrationWave w : plan.waves) {
            for (MigrationStep s : w.steps) {
                if (s.action == a && s.vip.equals(vip) && (sw == null || sw.equals(s.switchId))) {
                    return w.wave;
                }
            }
        }
        return -1;
    }

    /** Fig. 3.4: V1 on S2 and V2 on S3 swap; each needs 60% of a switch's memory. */
    @Test
    void figure34DeadlockIsSolvedThroughTheSmuxes() {
        Topology t = Fixtures.switches(3, 100);
        VipSet vips = new VipSet(List.of(vip(1, 60), vip(2, 60)));
        MigrationProblem p = new MigrationProblem(t, vips, assignment(1, "s2", 2, "s3"),
                assignment(1, "s3", 2, "s2"), Map.of(vipIp(1), 5e9, vipIp(2), 3e9));

        MigrationPlan plan = planAndCheck(p, PlannerOptions.defaults());

        // V2 (less traffic) steps aside to the SMuxes; V1 then moves make-before-break; V2 lands last.
        int v2out = waveOf(plan, StepAction.WITHDRAW_FROM_HMUX, vipIp(2), "s3");
        int v1in = waveOf(plan, StepAction.ANNOUNCE_ON_HMUX, vipIp(1), "s3");
        int v1out = waveOf(plan, StepAction.WITHDRAW_FROM_HMUX, vipIp(1), "s2");
        int v2in = waveOf(plan, StepAction.ANNOUNCE_ON_HMUX, vipIp(2), "s2");
        assertTrue(0 <= v2out && v2out < v1in && v1in < v1out && v1out < v2in,
                "waves " + v2out + " " + v1in + " " + v1out + " " + v2in);
        double peak = plan.waves.stream().mapToDouble(w -> w.transientSmuxBps).max().orElse(0);
        assertEquals(3e9, peak, "only V2's traffic went through the SMuxes");
        assertEquals(List.of("withdraw", "announce", "withdraw", "announce"), phases(plan));
    }

    @Test
    void naiveMakeBeforeBreakSwapIsRejectedByTheChecker() {
        Topology t = Fixtures.switches(3, 100);
        VipSet vips = new VipSet(List.of(vip(1, 60), vip(2, 60)));
        MigrationProblem p = new MigrationProblem(t, vips, assignment(1, "s2", 2, "s3"),
                assignment(1, "s3", 2, "s2"), Map.of());
        MigrationPlan naive = new MigrationPlan(List.of(
                new MigrationWave(0, List.of(MigrationStep.announceOnHmux(vipIp(1), "s3"))),
                new MigrationWave(1, List.of(MigrationStep.announceOnHmux(vipIp(2), "s2"))),
                new MigrationWave(2, List.of(MigrationStep.withdrawFromHmux(vipIp(1), "s2"),
                        MigrationStep.withdrawFromHmux(vipIp(2), "s3")))));
        List<String> v = PlanChecker.violations(p, naive, Fixtures.memory(p), PlannerOptions.defaults());
        assertTrue(v.stream().anyMatch(s -> s.contains("s3") && s.contains("ecmp table")), v.toString());
    }

    @Test
    void makeBeforeBreakWhenMemoryAllows() {
        Topology t = Fixtures.switches(3, 100);
        VipSet vips = new VipSet(List.of(vip(1, 40), vip(2, 40)));
        MigrationProblem p = new MigrationProblem(t, vips, assignment(1, "s2", 2, "s3"),
                assignment(1, "s3", 2, "s2"), Map.of(vipIp(1), 5e9, vipIp(2), 3e9));

        MigrationPlan plan = planAndCheck(p, PlannerOptions.defaults());

        for (String[] vs : new String[][] {{vipIp(1), "s2", "s3"}, {vipIp(2), "s3", "s2"}}) {
            int in = waveOf(plan, StepAction.ANNOUNCE_ON_HMUX, vs[0], vs[2]);
            int out = waveOf(plan, StepAction.WITHDRAW_FROM_HMUX, vs[0], vs[1]);
            assertTrue(in >= 0 && out > in, vs[0] + " announced in wave " + in + ", withdrawn in " + out);
        }
        assertTrue(plan.waves.stream().allMatch(w -> w.transientSmuxBps == 0), "no traffic detoured");
    }

    @Test
    void chainResolvesWithoutDetour() {
        // V1 s1->s2 needs V2 to leave s2 for s3 first; memory allows one VIP per switch plus a bit.
        Topology t = Fixtures.switches(3, 100);
        VipSet vips = new VipSet(List.of(vip(1, 60), vip(2, 60)));
        MigrationProblem p = new MigrationProblem(t, vips, assignment(1, "s1", 2, "s2"),
                assignment(1, "s2", 2, "s3"), Map.of(vipIp(1), 1e9, vipIp(2), 1e9));
        MigrationPlan plan = planAndCheck(p, PlannerOptions.defaults());
        assertTrue(plan.waves.stream().allMatch(w -> w.transientSmuxBps == 0), "no traffic detoured");
        assertTrue(waveOf(plan, StepAction.ANNOUNCE_ON_HMUX, vipIp(1), "s2")
                > waveOf(plan, StepAction.WITHDRAW_FROM_HMUX, vipIp(2), "s2"));
    }

    @Test
    void dipAddedToAnHmuxVipGoesThroughTheSmuxes() {
        Topology t = Fixtures.switches(2, 100);
        Vip before = vip(1, 3);
        List<Dip> dips = new ArrayList<>(before.ports.get(0).dips);
        dips.add(new Dip("10.9.9.9", 2, null));
        Vip after = new Vip(before.vip, before.aggregate, List.of(new VipPort("any", 0, dips)));
        MigrationProblem p = new MigrationProblem(t, new VipSet(List.of(before)), assignment(1, "s1"),
                new VipSet(List.of(after)), assignment(1, "s1"), Map.of(vipIp(1), 1e9));

        MigrationPlan plan = planAndCheck(p, PlannerOptions.defaults());

        int withdraw = waveOf(plan, StepAction.WITHDRAW_FROM_HMUX, vipIp(1), "s1");
        int add = waveOf(plan, StepAction.ADD_DIP, vipIp(1), null);
        int announce = waveOf(plan, StepAction.ANNOUNCE_ON_HMUX, vipIp(1), "s1");
        assertTrue(withdraw >= 0 && withdraw < add && add < announce, withdraw + " " + add + " " + announce);
        MigrationStep addStep = plan.steps().stream().filter(s -> s.action == StepAction.ADD_DIP).findFirst().get();
        assertEquals("10.9.9.9", addStep.dip);
        assertEquals(2, addStep.weight);
    }

    @Test
    void dipAddedOnTheHmuxIsRejectedByTheChecker() {
        Topology t = Fixtures.switches(2, 100);
        Vip before = vip(1, 3);
        MigrationProblem p = new MigrationProblem(t, new VipSet(List.of(before)), assignment(1, "s1"),
                new VipSet(List.of(before)), assignment(1, "s1"), Map.of());
        MigrationPlan bad = new MigrationPlan(List.of(new MigrationWave(0, List.of(
                MigrationStep.dipStep(StepAction.ADD_DIP, vipIp(1), ServiceKey.WHOLE_VIP, new Dip("10.9.9.9", 1, null))))));
        List<String> v = PlanChecker.violations(p, bad, Fixtures.memory(p), PlannerOptions.defaults());
        assertTrue(v.get(0).contains("DIPs change only while the SMuxes alone serve it"), v.toString());
    }

    @Test
    void newVipsStartOnTheSmuxesAndRemovedVipsLeaveEverywhere() {
        Topology t = Fixtures.switches(2, 100);
        MigrationProblem p = new MigrationProblem(t, new VipSet(List.of(vip(1, 10))), assignment(1, "s1"),
                new VipSet(List.of(vip(2, 10))), assignment(2, "s1"), Map.of());

        MigrationPlan plan = planAndCheck(p, PlannerOptions.defaults());

        assertTrue(waveOf(plan, StepAction.ANNOUNCE_ON_SMUX, vipIp(2), null)
                < waveOf(plan, StepAction.ANNOUNCE_ON_HMUX, vipIp(2), "s1"));
        assertTrue(waveOf(plan, StepAction.WITHDRAW_FROM_HMUX, vipIp(1), "s1")
                < waveOf(plan, StepAction.WITHDRAW_FROM_SMUX, vipIp(1), null));
    }

    @Test
    void rollingBackRestoresTheInstalledState() {
        Topology t = Fixtures.switches(3, 100);
        Vip changed = new Vip(vipIp(3), "10.0.0.0/16", List.of(new VipPort("tcp", 80, vip(3, 5).ports.get(0).dips)));
        MigrationProblem p = new MigrationProblem(t,
                new VipSet(List.of(vip(1, 60), vip(2, 60), vip(3, 5), vip(4, 5))), assignment(1, "s2", 2, "s3", 3, "s1", 4, "s1"),
                new VipSet(List.of(vip(1, 60), vip(2, 60), changed, vip(5, 5))), assignment(1, "s3", 2, "s2", 3, "s2", 5, "s1"),
                Map.of(vipIp(1), 1e9, vipIp(2), 2e9, vipIp(3), 3e8));
        MigrationPlan plan = planAndCheck(p, PlannerOptions.defaults());
        assertFalse(plan.waves.isEmpty());
        // And the checker notices a rollback that does not undo everything.
        List<MigrationWave> truncated = new ArrayList<>(plan.waves);
        truncated.remove(truncated.size() - 1);
        MigrationPlan partial = new MigrationPlan(truncated);
        assertFalse(PlanChecker.violations(p, partial, Fixtures.memory(p), PlannerOptions.defaults()).isEmpty());
    }

    @Test
    void transientBoundSpreadsDetoursOverWaves() {
        Topology t = Fixtures.switches(4, 100);
        // Two independent Fig. 3.4 swaps; each needs one VIP detoured; the bound lets one through the SMuxes at a time.
        VipSet vips = new VipSet(List.of(vip(1, 60), vip(2, 60), vip(3, 60), vip(4, 60)));
        MigrationProblem p = new MigrationProblem(t, vips, assignment(1, "s1", 2, "s2", 3, "s3", 4, "s4"),
                assignment(1, "s2", 2, "s1", 3, "s4", 4, "s3"),
                Map.of(vipIp(1), 1e9, vipIp(2), 1e9, vipIp(3), 1e9, vipIp(4), 1e9));
        PlannerOptions bounded = new PlannerOptions(true, 1.5e9);
        MigrationPlan plan = planAndCheck(p, bounded);
        double peak = plan.waves.stream().mapToDouble(w -> w.transientSmuxBps).max().orElse(0);
        assertEquals(1e9, peak, "one detour at a time");
        MigrationPlan unbounded = planAndCheck(p, PlannerOptions.defaults());
        assertTrue(unbounded.waves.stream().mapToDouble(w -> w.transientSmuxBps).max().orElse(0) > 1.5e9, "unbounded: both detours at once");
        assertThrows(PlanningException.class, () -> new MigrationPlanner(new PlannerOptions(true, 0.5e9)).plan(p, Fixtures.memory(p)));
    }

    @Test
    void targetThatDoesNotFitIsRefused() {
        Topology t = Fixtures.switches(2, 100);
        VipSet vips = new VipSet(List.of(vip(1, 60), vip(2, 60)));
        MigrationProblem p = new MigrationProblem(t, vips, assignment(1, "s1", 2, "s2"),
                assignment(1, "s1", 2, "s1"), Map.of());
        PlanningException e = assertThrows(PlanningException.class, () -> new MigrationPlanner().plan(p, Fixtures.memory(p)));
        assertTrue(e.getMessage().contains("s1") && e.getMessage().contains("ecmp"), e.getMessage());
    }

    @Test
    void planJsonRoundTripsThroughTheSchema() {
        Topology t = Fixtures.switches(3, 100);
        VipSet vips = new VipSet(List.of(vip(1, 60), vip(2, 60)));
        MigrationProblem p = new MigrationProblem(t, vips, assignment(1, "s2", 2, "s3"),
                assignment(1, "s3", 2, "s2"), Map.of(vipIp(1), 1e9));
        MigrationPlan plan = new MigrationPlanner().plan(p, Fixtures.memory(p));
        MigrationPlan back = ModelIo.parse(ModelIo.toJson(plan), "plan", Schema.MIGRATION_PLAN, MigrationPlan.class);
        assertEquals(plan.steps(), back.steps());
    }

    private static List<String> phases(MigrationPlan plan) {
        List<String> out = new ArrayList<>();
        plan.waves.forEach(w -> out.add(w.phase));
        return out;
    }
}
