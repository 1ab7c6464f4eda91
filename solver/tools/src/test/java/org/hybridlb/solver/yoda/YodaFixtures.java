package org.hybridlb.solver.yoda;

/** Yoda problems shared by the ILP and CLI tests. */
public final class YodaFixtures {
    private YodaFixtures() {
    }

    /**
     * 30 × VIPs of 5, 4, 4, 3, 2, 2 on 60 instances of 10: only a perfect packing fits, and
     * best-fit-decreasing misses it (5+5, 4+4+2, then 3+3+3 leaves five VIPs of 2 over).
     */
    public static String tightPacking() {
        StringBuilder sb = new StringBuilder("{\"instancePool\":{\"count\":60,\"trafficCapacity\":10,"
                + "\"ruleCapacity\":3000},\"vips\":[");
        int[] sizes = {5, 4, 4, 3, 2, 2};
        for (int i = 0; i < 180; i++) {
            sb.append(i > 0 ? "," : "").append("{\"vip\":\"10.0.").append(i / 100).append('.').append(i % 100)
                    .append("\",\"traffic\":").append(sizes[i % 6]).append(",\"rules\":10,\"replicas\":1}");
        }
        return sb.append("]}").toString();
    }

    /**
     * {@code vips} VIPs of 0.5-6 with one tolerated failure (so mostly 2 replicas) on 60 instances of
     * T = 10, R = 3000, each previously on 2-4 random instances, δ = 10%: keeping at most 2 of 3-4
     * old instances migrates about 30% of the connections, so δ is proven too small at 10%, 20%
     * and (120 VIPs) 30% before a feasible δ is reached.
     */
    public static String reshuffled(long seed, int vips) {
        java.util.Random rnd = new java.util.Random(seed);
        int instances = 60;
        StringBuilder sb = new StringBuilder("{\"instancePool\":{\"count\":" + instances
                + ",\"trafficCapacity\":10,\"ruleCapacity\":3000},\"vips\":[");
        StringBuilder prev = new StringBuilder("],\"previous\":[");
        for (int v = 0; v < vips; v++) {
            sb.append(v > 0 ? "," : "").append("{\"vip\":\"v").append(v).append("\",\"traffic\":")
                    .append(0.5 + rnd.nextInt(56) / 10.0).append(",\"rules\":").append(50 + rnd.nextInt(850))
                    .append(",\"toleratedFailures\":1,\"connections\":").append(1000 + rnd.nextInt(49000)).append("}");
            java.util.List<Integer> ys = new java.util.ArrayList<>();
            for (int y = 0; y < instances; y++) {
                ys.add(y);
            }
            int k = 2 + rnd.nextInt(3);
            java.util.Collections.shuffle(ys, rnd);
            prev.append(v > 0 ? "," : "").append("{\"vip\":\"v").append(v).append("\",\"instances\":[");
            for (int i = 0; i < k; i++) {
                prev.append(i > 0 ? "," : "").append("\"yoda-").append(ys.get(i)).append("\"");
            }
            prev.append("]}");
        }
        return sb.append(prev).append("],\"migrationBudgetFraction\":0.1}").toString();
    }
}
