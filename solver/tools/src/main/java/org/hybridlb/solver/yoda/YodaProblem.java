package org.hybridlb.solver.yoda;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.solver.io.InvalidInputException;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.io.Schema;

/**
 * Input of the Yoda VIP-to-L7-instance assignment (Yoda §4.4, Fig. 7; format in solver/YODA.md):
 * the instance pool Y with traffic and rule capacities, the VIPs with traffic t_v, rules r_v,
 * replicas n_v and tolerated failures f_v, and optionally the previous assignment with the
 * connections each instance holds, and the budget δ of migrated connections.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class YodaProblem {
    /** §8.2: n_v = 4 · t_v / T_y when a VIP does not say how many replicas it wants. */
    public static final double DEFAULT_REPLICA_FACTOR = 4.0;
    /** §8.2: at most 10% of the connections may migrate. */
    public static final double DEFAULT_MIGRATION_BUDGET_FRACTION = 0.10;

    public final List<Instance> instances;
    public final Pool instancePool;
    public final List<VipDemand> vips;
    public final Double replicaFactor;
    public final List<PreviousPlacement> previous;
    public final Double migrationBudgetFraction;
    public final Double migrationBudgetConnections;

    @JsonCreator
    public YodaProblem(@JsonProperty("instances") List<Instance> instances,
                       @JsonProperty("instancePool") Pool instancePool,
                       @JsonProperty("vips") List<VipDemand> vips,
                       @JsonProperty("replicaFactor") Double replicaFactor,
                       @JsonProperty("previous") List<PreviousPlacement> previous,
                       @JsonProperty("migrationBudgetFraction") Double migrationBudgetFraction,
                       @JsonProperty("migrationBudgetConnections") Double migrationBudgetConnections) {
        this.instances = instances == null ? List.of() : List.copyOf(instances);
        this.instancePool = instancePool;
        this.vips = List.copyOf(vips);
        this.replicaFactor = replicaFactor;
        this.previous = previous == null ? List.of() : List.copyOf(previous);
        this.migrationBudgetFraction = migrationBudgetFraction;
        this.migrationBudgetConnections = migrationBudgetConnections;
    }

    /** A YODA (L7) instance: T_y and R_y. */
    public static final class Instance {
        public final String id;
        public final double trafficCapacity;
        public final int ruleCapacity;

        @JsonCreator
        public Instance(@JsonProperty("id") String id,
                        @JsonProperty("trafficCapacity") double trafficCapacity,
                        @JsonProperty("ruleCapacity") int ruleCapacity) {
            this.id = id;
            this.trafficCapacity = trafficCapacity;
            this.ruleCapacity = ruleCapacity;
        }
    }

    /** Shorthand for {@code count} identical instances named prefix0, prefix1, ... */
    public static final class Pool {
        public final int count;
        public final String idPrefix;
        public final double trafficCapacity;
        public final int ruleCapacity;

        @JsonCreator
        public Pool(@JsonProperty("count") int count,
                    @JsonProperty("idPrefix") String idPrefix,
                    @JsonProperty("trafficCapacity") double trafficCapacity,
                    @JsonProperty("ruleCapacity") int ruleCapacity) {
            this.count = count;
            this.idPrefix = idPrefix == null ? "yoda-" : idPrefix;
            this.trafficCapacity = trafficCapacity;
            this.ruleCapacity = ruleCapacity;
        }
    }

    /** One VIP: t_v, r_v, and optionally n_v, f_v (or the over-subscription o_v), connections. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static final class VipDemand {
        public final String vip;
        public final double traffic;
        public final int rules;
        public final Integer replicas;
        public final Integer toleratedFailures;
        public final Double oversubscription;
        public final Double connections;

        @JsonCreator
        public VipDemand(@JsonProperty("vip") String vip,
                         @JsonProperty("traffic") double traffic,
                         @JsonProperty("rules") int rules,
                         @JsonProperty("replicas") Integer replicas,
                         @JsonProperty("toleratedFailures") Integer toleratedFailures,
                         @JsonProperty("oversubscription") Double oversubscription,
                         @JsonProperty("connections") Double connections) {
            this.vip = vip;
            this.traffic = traffic;
            this.rules = rules;
            this.replicas = replicas;
            this.toleratedFailures = toleratedFailures;
            this.oversubscription = oversubscription;
            this.connections = connections;
        }
    }

    /** Where a VIP was before, and the connections each of those instances holds for it (C_old). */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static final class PreviousPlacement {
        public final String vip;
        public final List<String> instances;
        public final Map<String, Double> connections;

        @JsonCreator
        public PreviousPlacement(@JsonProperty("vip") String vip,
                                 @JsonProperty("instances") List<String> instances,
                                 @JsonProperty("connections") Map<String, Double> connections) {
            this.vip = vip;
            this.instances = List.copyOf(instances);
            this.connections = connections == null ? null
                    : Collections.unmodifiableMap(new LinkedHashMap<>(connections));
        }
    }

    public static YodaProblem read(Path file) {
        YodaProblem p = ModelIo.read(file, Schema.YODA_PROBLEM, YodaProblem.class);
        p.resolve(file.toString());
        return p;
    }

    public static YodaProblem parse(String json, String source) {
        YodaProblem p = ModelIo.parse(json, source, Schema.YODA_PROBLEM, YodaProblem.class);
        p.resolve(source);
        return p;
    }

    /**
     * The problem with every default applied and every cross-reference checked; throws
     * {@link InvalidInputException} naming the field otherwise.
     */
    public Resolved resolve(String source) {
        List<Instance> ys = new ArrayList<>(instances);
        if (instancePool != null) {
            for (int i = 0; i < instancePool.count; i++) {
                ys.add(new Instance(instancePool.idPrefix + i, instancePool.trafficCapacity,
                        instancePool.ruleCapacity));
            }
        }
        if (ys.isEmpty()) {
            throw new InvalidInputException(source, "/instances", "no instances: give 'instances' or 'instancePool'");
        }
        Map<String, Integer> yIndex = new HashMap<>();
        for (int i = 0; i < ys.size(); i++) {
            if (yIndex.put(ys.get(i).id, i) != null) {
                throw new InvalidInputException(source, i < instances.size() ? "/instances/" + i + "/id"
                        : "/instancePool/idPrefix", "duplicate instance id '" + ys.get(i).id + "'");
            }
        }
        double factor = replicaFactor == null ? DEFAULT_REPLICA_FACTOR : replicaFactor;
        double maxCapacity = ys.stream().mapToDouble(y -> y.trafficCapacity).max().orElse(1);
        int nv = vips.size();
        String[] ids = new String[nv];
        double[] t = new double[nv];
        int[] r = new int[nv];
        int[] n = new int[nv];
        int[] f = new int[nv];
        double[] conns = new double[nv];
        Map<String, Integer> vIndex = new HashMap<>();
        for (int v = 0; v < nv; v++) {
            VipDemand d = vips.get(v);
            String at = "/vips/" + v;
            if (vIndex.put(d.vip, v) != null) {
                throw new InvalidInputException(source, at + "/vip", "duplicate VIP '" + d.vip + "'");
            }
            ids[v] = d.vip;
            t[v] = d.traffic;
            r[v] = d.rules;
            if (d.toleratedFailures != null && d.oversubscription != null) {
                throw new InvalidInputException(source, at + "/oversubscription",
                        "give toleratedFailures or oversubscription, not both");
            }
            int minReplicas = 1 + (d.toleratedFailures == null ? 0 : d.toleratedFailures);
            n[v] = d.replicas != null ? d.replicas
                    : Math.max(minReplicas, (int) Math.ceil(factor * d.traffic / maxCapacity - 1e-9));
            if (n[v] > ys.size()) {
                throw new InvalidInputException(source, at + (d.replicas != null ? "/replicas" : ""),
                        n[v] + " replicas but only " + ys.size() + " instances");
            }
            // Yoda §4.4: f_v = n_v · o_v (rounded down: a fractional failure is not tolerated).
            f[v] = d.toleratedFailures != null ? d.toleratedFailures
                    : d.oversubscription != null ? (int) Math.floor(n[v] * d.oversubscription + 1e-9) : 0;
            if (f[v] >= n[v]) {
                throw new InvalidInputException(source, at + (d.toleratedFailures != null ? "/toleratedFailures"
                        : "/oversubscription"), "tolerated failures (" + f[v] + ") must be fewer than replicas ("
                        + n[v] + ")");
            }
            checkFits(source, at, d, n[v], f[v], ys);
            conns[v] = d.connections == null ? Double.NaN : d.connections;
        }
        // Previous assignment: x_old, n_old and C_old per (v, y).
        List<Map<Integer, Double>> prevConns = new ArrayList<>();
        for (int v = 0; v < nv; v++) {
            prevConns.add(new LinkedHashMap<>());
        }
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < previous.size(); i++) {
            PreviousPlacement pp = previous.get(i);
            String at = "/previous/" + i;
            if (!seen.add(pp.vip)) {
                throw new InvalidInputException(source, at + "/vip", "VIP '" + pp.vip + "' listed twice");
            }
            Integer v = vIndex.get(pp.vip);
            if (v == null) {
                continue; // a VIP that went away: its connections end with it, nothing to constrain
            }
            Set<String> distinct = new HashSet<>(pp.instances);
            if (distinct.size() != pp.instances.size()) {
                throw new InvalidInputException(source, at + "/instances", "an instance is listed twice");
            }
            for (int k = 0; k < pp.instances.size(); k++) {
                String y = pp.instances.get(k);
                Integer yi = yIndex.get(y);
                if (yi == null) {
                    throw new InvalidInputException(source, at + "/instances/" + k, "unknown instance '" + y + "'");
                }
                double c;
                if (pp.connections != null && pp.connections.containsKey(y)) {
                    c = pp.connections.get(y);
                } else {
                    // Without counts, split the VIP's connections (or, failing that, its traffic) evenly.
                    double total = Double.isNaN(conns[v]) ? t[v] : conns[v];
                    c = total / pp.instances.size();
                }
                prevConns.get(v).put(yi, c);
            }
            if (pp.connections != null) {
                for (String y : pp.connections.keySet()) {
                    if (!distinct.contains(y)) {
                        throw new InvalidInputException(source, InvalidInputException.key(at + "/connections", y),
                                "connections for an instance the VIP was not on");
                    }
                }
            }
        }
        if (migrationBudgetFraction != null && migrationBudgetConnections != null) {
            throw new InvalidInputException(source, "/migrationBudgetConnections",
                    "give migrationBudgetFraction or migrationBudgetConnections, not both");
        }
        return new Resolved(ys, ids, t, r, n, f, prevConns, migrationBudgetFraction, migrationBudgetConnections);
    }

    /**
     * Each of a VIP's n_v replicas needs its own instance with room for the VIP's failover load
     * t_v / (n_v - f_v) (eq. 1) and its rules (eq. 2). With fewer such instances no assignment
     * exists: say which VIP and why here, rather than "infeasible" from the solver.
     */
    private static void checkFits(String source, String at, VipDemand d, int replicas, int failures,
                                  List<Instance> ys) {
        double load = d.traffic / (replicas - failures);
        int byTraffic = 0;
        int byRules = 0;
        int byBoth = 0;
        double maxTraffic = 0;
        int maxRules = 0;
        for (Instance y : ys) {
            boolean traffic = load <= y.trafficCapacity * (1 + YodaAssignment.EPS);
            boolean rules = d.rules <= y.ruleCapacity;
            byTraffic += traffic ? 1 : 0;
            byRules += rules ? 1 : 0;
            byBoth += traffic && rules ? 1 : 0;
            maxTraffic = Math.max(maxTraffic, y.trafficCapacity);
            maxRules = Math.max(maxRules, y.ruleCapacity);
        }
        if (byBoth >= replicas) {
            return;
        }
        String vip = "VIP '" + d.vip + "' cannot be placed: ";
        String needs = "; it needs " + replicas + (replicas == 1 ? " instance" : " distinct instances");
        if (byTraffic < replicas) {
            throw new InvalidInputException(source, at + "/traffic", vip + "each replica carries " + num(load)
                    + " after " + failures + " tolerated failure(s) (traffic " + num(d.traffic) + " / (" + replicas
                    + " replicas - " + failures + ")), which fits the traffic capacity of " + byTraffic + " of the "
                    + ys.size() + " instances (largest " + num(maxTraffic) + ")" + needs);
        }
        if (byRules < replicas) {
            throw new InvalidInputException(source, at + "/rules", vip + "its " + d.rules + " rules fit on "
                    + byRules + " of the " + ys.size() + " instances (largest rule capacity " + maxRules + ")"
                    + needs);
        }
        throw new InvalidInputException(source, at, vip + "only " + byBoth + " of the " + ys.size()
                + " instances have room for both a replica's traffic (" + num(load) + ") and its " + d.rules
                + " rules" + needs);
    }

    /** 50 and 3.3333 rather than 50.0 and 3.3333333333333335. */
    private static String num(double x) {
        return new java.math.BigDecimal(x).round(new java.math.MathContext(5)).stripTrailingZeros().toPlainString();
    }

    /** Indexed form the ILP works on. */
    public static final class Resolved {
        public final List<Instance> instances;
        public final String[] vip;
        public final double[] traffic;
        public final int[] rules;
        public final int[] replicas;
        public final int[] failures;
        /** Per VIP: previous instance index to connections held there (C_old). Empty when new. */
        public final List<Map<Integer, Double>> previous;
        final Double budgetFraction;
        final Double budgetConnections;

        Resolved(List<Instance> instances, String[] vip, double[] traffic, int[] rules, int[] replicas,
                 int[] failures, List<Map<Integer, Double>> previous, Double budgetFraction,
                 Double budgetConnections) {
            this.instances = List.copyOf(instances);
            this.vip = vip;
            this.traffic = traffic;
            this.rules = rules;
            this.replicas = replicas;
            this.failures = failures;
            this.previous = previous;
            this.budgetFraction = budgetFraction;
            this.budgetConnections = budgetConnections;
        }

        public boolean hasPrevious() {
            for (Map<Integer, Double> m : previous) {
                if (!m.isEmpty()) {
                    return true;
                }
            }
            return false;
        }

        /** Connections held under the previous assignment by VIPs that still exist. */
        public double previousConnections() {
            double s = 0;
            for (Map<Integer, Double> m : previous) {
                for (double c : m.values()) {
                    s += c;
                }
            }
            return s;
        }

        /** δ in connections: the absolute budget, else the fraction (default 10%) of previous connections. */
        public double migrationBudget(Double fractionOverride) {
            if (fractionOverride != null) {
                return fractionOverride * previousConnections();
            }
            if (budgetConnections != null) {
                return budgetConnections;
            }
            double frac = budgetFraction == null ? DEFAULT_MIGRATION_BUDGET_FRACTION : budgetFraction;
            return frac * previousConnections();
        }

        /** Per-instance worst-case traffic share of VIP v after f_v failures: t_v / (n_v - f_v). */
        public double failoverLoad(int v) {
            return traffic[v] / (replicas[v] - failures[v]);
        }

        /** Transient load z_vy · t_v: the larger of the new and old per-replica shares (Fig. 7 eq. 5). */
        public double transientShare(int v, int y, boolean assignedNow) {
            double now = assignedNow ? traffic[v] / replicas[v] : 0;
            Map<Integer, Double> prev = previous.get(v);
            double before = prev.containsKey(y) ? traffic[v] / prev.size() : 0;
            return Math.max(now, before);
        }
    }
}
