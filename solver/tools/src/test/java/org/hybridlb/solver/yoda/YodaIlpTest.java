package org.hybridlb.solver.yoda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.hybridlb.solver.ilp.MipModel;
import org.hybridlb.solver.ilp.MipOptions;
import org.hybridlb.solver.ilp.MipResult;
import org.hybridlb.solver.io.InvalidInputException;
import org.junit.jupiter.api.Test;

class YodaIlpTest {
    static final MipOptions OPTS = MipOptions.DEFAULTS.withTimeLimit(20).withGap(0);
    static final Path SMALL = Path.of("examples/yoda/small.json");

    /**
     * The schema's minimal valid problem (the library's SchemaReaderAgreementTest checks that it
     * is minimal) reads and resolves: no field the schema lets one leave out is one the reader
     * needs. With neither instances nor a pool the schema refuses it, as the reader would.
     */
    @Test
    void theSchemasMinimalProblemResolves() {
        String minimal = "{\"instancePool\": {\"count\": 2, \"trafficCapacity\": 10, \"ruleCapacity\": 100},"
                + " \"vips\": [{\"vip\": \"v1\", \"traffic\": 1, \"rules\": 1}]}";
        YodaProblem.Resolved p = YodaProblem.parse(minimal, "minimal").resolve("minimal");
        assertEquals(1, p.vip.length);
        InvalidInputException none = assertThrows(InvalidInputException.class, () -> YodaProblem.parse(
                "{\"vips\": [{\"vip\": \"v1\", \"traffic\": 1, \"rules\": 1}]}", "none"));
        assertEquals("/", none.field());
        assertThrows(InvalidInputException.class, () -> YodaProblem.parse(
                "{\"instances\": [], \"vips\": [{\"vip\": \"v1\", \"traffic\": 1, \"rules\": 1}]}", "empty"));
    }

    @Test
    void smallExampleRespectsReplicasFailuresAndTheLimits() {
        YodaProblem.Resolved p = YodaProblem.read(SMALL).resolve("small");
        // 10.1.0.1: 9 units, factor 4, T = 10 -> n = ceil(3.6) = 4, f = 1 -> 3 per instance after a failure
        assertEquals(4, p.replicas[0]);
        assertEquals(3.0, p.failoverLoad(0), 1e-12);
        // 10.1.0.6: oversubscription 0.5 of 2 replicas -> one tolerated failure
        assertEquals(1, p.failures[5]);
        YodaIlp.Outcome noLimit = YodaIlp.solve(p, YodaMode.NO_LIMIT, OPTS, 0.1);
        YodaIlp.Outcome limit = YodaIlp.solve(p, YodaMode.LIMIT, OPTS, 0.1);
        for (YodaIlp.Outcome o : List.of(noLimit, limit)) {
            assertNotNull(o.assignment);
            assertEquals(List.of(), o.assignment.violations(YodaMode.NO_LIMIT, Double.NaN));
            for (int v = 0; v < p.vip.length; v++) {
                assertEquals(p.replicas[v], o.assignment.placement[v].length, p.vip[v]);
            }
            double[] fl = o.assignment.failoverLoad();
            for (int y = 0; y < fl.length; y++) {
                assertTrue(fl[y] <= p.instances.get(y).trafficCapacity + 1e-9);
            }
            assertEquals(0.0, o.mip.gap, 1e-9);
        }
        assertEquals(List.of(), limit.assignment.violations(YodaMode.LIMIT, limit.migrationBudget));
        assertTrue(limit.assignment.migratedConnections() <= 0.10 * p.previousConnections() + 1e-6);
        assertEquals(0, limit.assignment.overloadedDuringTransition());
        // Lower bound by hand: failover traffic 3.0*4 + 3.75*3 + 2.5*3 + 4*2 + 2.5*2 + 1.5*2 + 1 + 0.5*2 = 48.75
        // over instances of 10 -> at least 5; rules 3600+1200+3600+600+300+1400+50+1000 = 11750 / 2000 -> 6.
        // Both are proven optimal (gap 0): 7 and 8 are the optima, whatever the engine (YODA.md).
        assertEquals(7, noLimit.assignment.instancesUsed(), noLimit.notes.toString());
        assertEquals(8, limit.assignment.instancesUsed(), limit.notes.toString());
        assertEquals(MipResult.Status.OPTIMAL, noLimit.mip.status);
        assertEquals(MipResult.Status.OPTIMAL, limit.mip.status);
    }

    /**
     * Three instances of T = 10. Before: v4 (1) on y0, v0 (4) on y1, v1 (4) and v2 (3) on y2; v3 (7)
     * is new. The 19 units fit two instances only as {v3, v2} (10) and {v0, v1, v4} (9), and an
     * instance taking {v3, v2} also carries, while the muxes switch, the old share of a VIP that
     * was there and leaves (v4, v0 or v1): every 2-instance assignment overloads some instance in
     * transition. Keeping the old placements and adding v3 to y0 (8) overloads none: 3 instances.
     * δ is 100%, so only the transient rows (eqs. 4-5) separate the variants.
     */
    @Test
    void theTransientLimitKeepsInstancesFromOverloadingDuringTheSwitch() {
        String json = "{\"instancePool\":{\"count\":3,\"trafficCapacity\":10,\"ruleCapacity\":1000},"
                + "\"vips\":[{\"vip\":\"v0\",\"traffic\":4,\"rules\":10,\"replicas\":1},"
                + "{\"vip\":\"v1\",\"traffic\":4,\"rules\":10,\"replicas\":1},"
                + "{\"vip\":\"v2\",\"traffic\":3,\"rules\":10,\"replicas\":1},"
                + "{\"vip\":\"v3\",\"traffic\":7,\"rules\":10,\"replicas\":1},"
                + "{\"vip\":\"v4\",\"traffic\":1,\"rules\":10,\"replicas\":1}],"
                + "\"previous\":[{\"vip\":\"v0\",\"instances\":[\"yoda-1\"]},"
                + "{\"vip\":\"v1\",\"instances\":[\"yoda-2\"]},{\"vip\":\"v2\",\"instances\":[\"yoda-2\"]},"
                + "{\"vip\":\"v4\",\"instances\":[\"yoda-0\"]}],"
                + "\"migrationBudgetFraction\":1.0}";
        YodaProblem.Resolved p = YodaProblem.parse(json, "transient").resolve("transient");
        YodaIlp.Outcome noLimit = YodaIlp.solve(p, YodaMode.NO_LIMIT, OPTS, 0.1);
        YodaIlp.Outcome limit = YodaIlp.solve(p, YodaMode.LIMIT, OPTS, 0.1);
        assertEquals(YodaIlp.Status.OPTIMAL, noLimit.status, noLimit.notes.toString());
        assertEquals(YodaIlp.Status.OPTIMAL, limit.status, limit.notes.toString());
        assertEquals(2, noLimit.assignment.instancesUsed());
        assertTrue(noLimit.assignment.overloadedDuringTransition() >= 1, "no-limit overloads nothing?");
        assertEquals(3, limit.assignment.instancesUsed());
        assertEquals(0, limit.assignment.overloadedDuringTransition());
        assertEquals(List.of(), limit.assignment.violations(YodaMode.LIMIT, limit.migrationBudget));
        double[] during = limit.assignment.transientLoad();
        for (int y = 0; y < during.length; y++) {
            assertTrue(during[y] <= 10 + 1e-9, "instance " + y + " carries " + during[y] + " in transition");
        }
    }

    @Test
    void cpSatSolvesTheLimitVariant() {
        // The transient rows had a continuous variable per (VIP, previous instance): CP-SAT rejected
        // the model (MODEL_INVALID) and the best-fit-decreasing placement (9 instances) came back.
        YodaProblem.Resolved p = YodaProblem.read(SMALL).resolve("small");
        YodaIlp.Outcome o = YodaIlp.solve(p, YodaMode.LIMIT, OPTS.withEngine(MipOptions.Engine.CP_SAT), 0.1);
        assertEquals(MipResult.Status.OPTIMAL, o.mip.status, o.notes.toString());
        assertEquals("ortools/cp-sat", o.mip.solvedBy);
        assertEquals(8, o.assignment.instancesUsed(), o.notes.toString()); // as SCIP, YODA.md
        assertEquals(List.of(), o.assignment.violations(YodaMode.LIMIT, o.migrationBudget));
    }

    @Test
    void infeasibleBudgetIsRelaxedInTenPointSteps() {
        // One VIP must leave both old instances: they cannot hold its new rules.
        String json = "{\"instances\":[{\"id\":\"a\",\"trafficCapacity\":10,\"ruleCapacity\":100},"
                + "{\"id\":\"b\",\"trafficCapacity\":10,\"ruleCapacity\":100},"
                + "{\"id\":\"c\",\"trafficCapacity\":10,\"ruleCapacity\":1000},"
                + "{\"id\":\"d\",\"trafficCapacity\":10,\"ruleCapacity\":1000}],"
                + "\"vips\":[{\"vip\":\"v1\",\"traffic\":4,\"rules\":500,\"replicas\":2,\"connections\":100},"
                + "{\"vip\":\"v2\",\"traffic\":4,\"rules\":50,\"replicas\":1,\"connections\":900}],"
                + "\"previous\":[{\"vip\":\"v1\",\"instances\":[\"a\",\"b\"]},{\"vip\":\"v2\",\"instances\":[\"a\"]}],"
                + "\"migrationBudgetFraction\":0.0}";
        YodaProblem.Resolved p = YodaProblem.parse(json, "test").resolve("test");
        YodaIlp.Outcome o = YodaIlp.solve(p, YodaMode.LIMIT, OPTS, 0.1);
        assertNotNull(o.assignment);
        assertEquals(100.0, o.assignment.migratedConnections(), 1e-9);
        assertEquals(100.0, o.migrationBudget, 1e-6); // 0% -> 10% of 1000 connections
        assertTrue(o.notes.stream().anyMatch(n -> n.contains("relaxing to 10%")), o.notes.toString());
        YodaIlp.Outcome strict = YodaIlp.solve(p, YodaMode.LIMIT, OPTS, 0);
        assertNull(strict.assignment);
    }

    @Test
    void runningOutOfTimeIsNotInfeasibility() {
        YodaProblem.Resolved p = YodaProblem.parse(YodaFixtures.tightPacking(), "tight").resolve("tight");
        assertNull(YodaGreedy.place(p, YodaMode.NO_LIMIT)); // no warm start to fall back on
        YodaIlp.Outcome o = YodaIlp.solve(p, YodaMode.NO_LIMIT, OPTS.withTimeLimit(0.001), 0.1);
        assertNull(o.assignment);
        assertEquals(YodaIlp.Status.TIME_LIMIT, o.status, o.notes.toString());
        assertTrue(o.notes.contains("no solution found within the time limit (0.001 s), and none proven impossible"),
                o.notes.toString());
    }

    @Test
    void timeLimitCoversEveryRelaxationOfTheBudget() {
        // Each δ retry used to get the whole time limit again (6.4 s of wall time for 3 s).
        YodaProblem.Resolved p = YodaProblem.parse(YodaFixtures.reshuffled(1, 120), "r").resolve("r");
        MipModel.loadNatives(); // outside the measured time, as outside the solver's clock
        long t0 = System.nanoTime();
        YodaIlp.Outcome o = YodaIlp.solve(p, YodaMode.LIMIT, OPTS.withTimeLimit(2), 0.1);
        double wall = (System.nanoTime() - t0) / 1e9;
        assertTrue(o.notes.stream().anyMatch(n -> n.contains("; relaxing to 20%")), o.notes.toString());
        // a retry with the whole limit again took 4 s and more; room for a loaded machine below that
        assertTrue(wall < 2 + 1.5, wall + " s: " + o.notes);
        assertEquals(wall, o.seconds, 0.3);
        // proven infeasible at 10-30%, then the time ran out at 40%: that is not infeasibility
        assertTrue(o.status != YodaIlp.Status.INFEASIBLE, o.status + " " + o.notes);
    }

    @Test
    void badInputNamesTheField() {
        String tooManyFailures = "{\"instancePool\":{\"count\":3,\"trafficCapacity\":1,\"ruleCapacity\":10},"
                + "\"vips\":[{\"vip\":\"v\",\"traffic\":1,\"rules\":1,\"replicas\":2,\"toleratedFailures\":2}]}";
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> YodaProblem.parse(tooManyFailures, "f.json"));
        assertEquals("/vips/0/toleratedFailures", e.field());
        String unknownInstance = "{\"instancePool\":{\"count\":3,\"trafficCapacity\":1,\"ruleCapacity\":10},"
                + "\"vips\":[{\"vip\":\"v\",\"traffic\":1,\"rules\":1,\"replicas\":1}],"
                + "\"previous\":[{\"vip\":\"v\",\"instances\":[\"nope\"]}]}";
        e = assertThrows(InvalidInputException.class, () -> YodaProblem.parse(unknownInstance, "f.json"));
        assertEquals("/previous/0/instances/0", e.field());
        String negativeTraffic = "{\"instancePool\":{\"count\":3,\"trafficCapacity\":1,\"ruleCapacity\":10},"
                + "\"vips\":[{\"vip\":\"v\",\"traffic\":-1,\"rules\":1}]}";
        e = assertThrows(InvalidInputException.class, () -> YodaProblem.parse(negativeTraffic, "f.json"));
        assertEquals("/vips/0/traffic", e.field());
    }

    @Test
    void vipThatFitsTooFewInstancesIsNamedOnLoad() {
        // Per replica 100 / 2 = 50 against T = 10 everywhere: the solver only said "infeasible".
        assertRefusedOnLoad("{\"instancePool\":{\"count\":4,\"trafficCapacity\":10,\"ruleCapacity\":1000},"
                + "\"vips\":[{\"vip\":\"ok\",\"traffic\":5,\"rules\":10,\"replicas\":1},"
                + "{\"vip\":\"big\",\"traffic\":100,\"rules\":10,\"replicas\":2}]}", "/vips/1/traffic",
                "VIP 'big' cannot be placed: each replica carries 50 after 0 tolerated "
                + "failure(s) (traffic 100 / (2 replicas - 0)), which fits the traffic capacity of 0 of the 4 "
                + "instances (largest 10); it needs 2 distinct instances");
        // 500 rules fit one instance, the VIP wants two
        assertRefusedOnLoad("{\"instances\":[{\"id\":\"a\",\"trafficCapacity\":10,\"ruleCapacity\":1000},"
                + "{\"id\":\"b\",\"trafficCapacity\":10,\"ruleCapacity\":100}],"
                + "\"vips\":[{\"vip\":\"v\",\"traffic\":1,\"rules\":500,\"replicas\":2}]}", "/vips/0/rules",
                "its 500 rules fit on 1 of the 2 instances");
        // traffic fits a, rules fit b, nothing fits both
        assertRefusedOnLoad("{\"instances\":[{\"id\":\"a\",\"trafficCapacity\":10,\"ruleCapacity\":100},"
                + "{\"id\":\"b\",\"trafficCapacity\":1,\"ruleCapacity\":1000}],"
                + "\"vips\":[{\"vip\":\"v\",\"traffic\":5,\"rules\":500,\"replicas\":1}]}", "/vips/0",
                "only 0 of the 2 instances have room for both");
    }

    private static void assertRefusedOnLoad(String problem, String field, String reasonPart) {
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> YodaProblem.parse(problem, "f.json"));
        assertEquals(field, e.field());
        assertTrue(e.getMessage().contains(reasonPart), e.getMessage());
    }

    /** Random tiny problems: the ILP (SCIP or CP-SAT) matches enumeration and never breaks a constraint. */
    @Property(tries = 40)
    void ilpMatchesEnumerationOnTinyProblems(@ForAll @IntRange(min = 1, max = 3) int nVips,
                                             @ForAll @IntRange(min = 2, max = 4) int nInstances,
                                             @ForAll long seed, @ForAll boolean limit, @ForAll boolean cpSat) {
        java.util.Random rnd = new java.util.Random(seed);
        StringBuilder sb = new StringBuilder("{\"instances\":[");
        List<YodaProblem.Instance> instances = new ArrayList<>();
        for (int y = 0; y < nInstances; y++) {
            instances.add(new YodaProblem.Instance("y" + y, 4 + rnd.nextInt(7), 100 + 100 * rnd.nextInt(5)));
            sb.append(y > 0 ? "," : "").append("{\"id\":\"y").append(y).append("\",\"trafficCapacity\":")
                    .append(instances.get(y).trafficCapacity).append(",\"ruleCapacity\":")
                    .append(instances.get(y).ruleCapacity).append("}");
        }
        sb.append("],\"vips\":[");
        StringBuilder prev = new StringBuilder("],\"previous\":[");
        String[] ids = new String[nVips];
        double[] traffic = new double[nVips];
        int[] rules = new int[nVips];
        int[] replicas = new int[nVips];
        int[] failures = new int[nVips];
        for (int v = 0; v < nVips; v++) {
            ids[v] = "v" + v;
            replicas[v] = 1 + rnd.nextInt(Math.min(3, nInstances));
            failures[v] = rnd.nextInt(replicas[v]);
            traffic[v] = 1 + rnd.nextInt(8);
            rules[v] = 10 * (1 + rnd.nextInt(10));
            sb.append(v > 0 ? "," : "").append("{\"vip\":\"v").append(v).append("\",\"traffic\":")
                    .append(traffic[v]).append(",\"rules\":").append(rules[v])
                    .append(",\"replicas\":").append(replicas[v]).append(",\"toleratedFailures\":").append(failures[v])
                    .append(",\"connections\":").append(100 * (1 + rnd.nextInt(9))).append("}");
            int k = 1 + rnd.nextInt(nInstances);
            prev.append(v > 0 ? "," : "").append("{\"vip\":\"v").append(v).append("\",\"instances\":[");
            List<Integer> ys = new ArrayList<>();
            for (int y = 0; y < nInstances; y++) {
                ys.add(y);
            }
            java.util.Collections.shuffle(ys, rnd);
            for (int i = 0; i < k; i++) {
                prev.append(i > 0 ? "," : "").append("\"y").append(ys.get(i)).append("\"");
            }
            prev.append("]}");
        }
        String json = sb.append(prev).append("],\"migrationBudgetFraction\":").append(rnd.nextInt(5) / 4.0)
                .append("}").toString();
        YodaProblem.Resolved p;
        try {
            p = YodaProblem.parse(json, "gen").resolve("gen");
        } catch (InvalidInputException e) {
            // Rejected on load (a VIP fits too few instances): then not even eqs. 1-3 can be met.
            List<java.util.Map<Integer, Double>> none = new ArrayList<>();
            for (int v = 0; v < nVips; v++) {
                none.add(java.util.Map.of());
            }
            YodaProblem.Resolved bare = new YodaProblem.Resolved(instances, ids, traffic, rules, replicas, failures,
                    none, null, null);
            assertEquals(-1, bruteForceMin(bare, YodaMode.NO_LIMIT, Double.NaN, nInstances), e.getMessage());
            return;
        }
        YodaMode mode = limit ? YodaMode.LIMIT : YodaMode.NO_LIMIT;
        YodaIlp.Outcome o = YodaIlp.solve(p, mode, cpSat ? OPTS.withEngine(MipOptions.Engine.CP_SAT) : OPTS, 0);
        int expected = bruteForceMin(p, mode, p.migrationBudget(null), nInstances);
        if (expected < 0) {
            assertNull(o.assignment, json);
        } else {
            assertNotNull(o.assignment, json);
            assertEquals(List.of(), o.assignment.violations(mode, o.migrationBudget), json);
            assertEquals(expected, o.assignment.instancesUsed(), json);
        }
    }

    /** Fewest instances over every placement on the first {@code limitInstances} instances; -1 if none. */
    static int bruteForceMin(YodaProblem.Resolved p, YodaMode mode, double budget, int limitInstances) {
        int ny = Math.min(limitInstances, p.instances.size());
        List<List<int[]>> choices = new ArrayList<>();
        for (int v = 0; v < p.vip.length; v++) {
            List<int[]> subsets = new ArrayList<>();
            for (int mask = 0; mask < (1 << ny); mask++) {
                if (Integer.bitCount(mask) == p.replicas[v]) {
                    int[] s = new int[p.replicas[v]];
                    int k = 0;
                    for (int y = 0; y < ny; y++) {
                        if ((mask & (1 << y)) != 0) {
                            s[k++] = y;
                        }
                    }
                    subsets.add(s);
                }
            }
            choices.add(subsets);
        }
        int[] best = {-1};
        enumerate(p, mode, budget, choices, new int[p.vip.length][], 0, best);
        return best[0];
    }

    private static void enumerate(YodaProblem.Resolved p, YodaMode mode, double budget, List<List<int[]>> choices,
                                  int[][] placement, int v, int[] best) {
        if (v == placement.length) {
            YodaAssignment a = new YodaAssignment(p, placement.clone());
            if (a.violations(mode, budget).isEmpty() && (best[0] < 0 || a.instancesUsed() < best[0])) {
                best[0] = a.instancesUsed();
            }
            return;
        }
        for (int[] s : choices.get(v)) {
            placement[v] = s;
            enumerate(p, mode, budget, choices, placement, v + 1, best);
        }
    }
}
