package org.hybridlb.solver.workload;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Ipv4;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.TrafficTrace;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.model.VipTraffic;

/**
 * Seeded, reproducible synthetic VIP workload shaped like Duet Fig. 3.15 (solver/WORKLOAD.md):
 * lognormal VIP rates (a few elephants carry most traffic), lognormal DIP counts correlated
 * with rate, ~70% of the traffic from client ToRs inside the DC (with pod locality) and the
 * rest from {@link VipTraffic#INTERNET}, drifting over intervals (random walk with per-VIP
 * trend, bursts, VIPs created and deleted). The same topology, params and seed give the same
 * workload, byte for byte.
 *
 * <p>Units: traffic rates are bytes per second (the data model's unit); link and SMux
 * capacities are bits per second. The total is {@code loadFraction} of the summed ToR uplink
 * capacity, divided by 8.
 */
public final class WorkloadGenerator {
    /**
     * Options of the generator. Defaults reproduce the Duet §3.8.1 workload (30K VIPs, 3 hours
     * of 10-minute intervals, ~70% intra-DC traffic); solver/WORKLOAD.md says why.
     */
    public static final class Params {
        // --- size and time ---
        public int vipCount = 30_000;
        public int intervals = 18;
        public long intervalSeconds = 600;

        // --- volume ---
        /** Total VIP traffic as a fraction of the ToR uplink capacity of the fabric (see WORKLOAD.md). */
        public double loadFraction = 0.10;
        /** When positive, the total VIP traffic in bits per second, overriding loadFraction. */
        public double totalBps = 0;
        /** VIP rate ~ lognormal(0, trafficSigma): the skew of Fig. 3.15. */
        public double trafficSigma = 2.0;

        // --- DIPs ---
        /** DIP count ~ round(dipMedian * lognormal(0, dipSigma)), correlated with traffic. */
        public double dipMedian = 6;
        public double dipSigma = 1.2;
        /** Correlation of log DIP count with log traffic (bigger services have more servers). */
        public double dipTrafficCorrelation = 0.6;
        public int minDips = 1;
        public int maxDips = 2000;
        /** A VIP's DIPs span 1 + dips/dipsPerPod pods (at most all pods), or more by podLinkShare. */
        public int dipsPerPod = 32;
        /**
         * A VIP's DIPs span enough pods that its expected DIP-side traffic per pod is at most this
         * share of one core-to-pod link at the 80% link headroom (Duet §3.4), so that one switch
         * can deliver it; 0 turns the rule off. See WORKLOAD.md ("Where DIPs live").
         */
        public double podLinkShare = 0.5;
        /** Share of VIPs whose DIPs are bare-metal hosts (DIP ip = host ip, no hostIp). */
        public double bareMetalShare = 0.2;
        /** For VM DIPs: chance that the next DIP of a VIP lands on a host the VIP already uses. */
        public double colocateShare = 0.3;
        /** Share of VIPs with WCMP weights on their DIPs. */
        public double weightedShare = 0.1;

        // --- ports ---
        /** Share of VIPs balanced per port (tcp/80, tcp/443, ...) rather than as a whole. */
        public double portBasedShare = 0.3;
        /** Of the port-based VIPs, the share whose services use disjoint DIP pools. */
        public double splitPoolShare = 0.5;

        // --- sources ---
        /** Traffic-weighted share of VIP traffic from inside the DC (Duet §3.2: "almost 70%"). */
        public double internalShare = 0.7;
        /** Spread of a VIP's internal fraction: logit-normal with this sigma around internalShare. */
        public double internalSigma = 1.5;
        /** Chance that a client ToR of a VIP sits in a pod that hosts its DIPs. */
        public double localityShare = 0.4;
        /** Client ToRs per VIP = 1 + sourceScale * log2(1 + rate / median rate), at most maxSources. */
        public double sourceScale = 3;
        public int maxSources = 64;
        /**
         * One client ToR sends one VIP at most this share of one ToR uplink at the 80% headroom (a
         * switch HMux in another rack receives it over that single uplink); the VIP gets enough
         * client ToRs for it, beyond maxSources if need be; 0 turns the cap off. See WORKLOAD.md.
         */
        public double clientTorLinkShare = 0.5;

        // --- drift ---
        /** Per-interval random-walk step of each VIP's log rate. */
        public double stepSigma = 0.1;
        /** Per-VIP trend of the log rate per interval (growing and shrinking VIPs). */
        public double trendSigma = 0.03;
        /** Chance per VIP and interval that a burst (x2..x5 for 1-3 intervals) starts. */
        public double burstChance = 0.005;
        /** Per-interval jitter of each client ToR's share of a VIP (log scale). */
        public double sourceJitter = 0.1;
        /** Share of VIPs created after the first interval, and of VIPs deleted before the last. */
        public double appearShare = 0.05;
        public double disappearShare = 0.05;
        /** Per-interval step of the total volume's log, which stays within +-totalDriftBound. */
        public double totalDriftSigma = 0.02;
        public double totalDriftBound = 0.07;

        // --- addresses ---
        public String vipPrefix = "100.64.0.0/10";
        /** Prefix length of the VIP aggregates the SMuxes announce. */
        public int aggregateLength = 20;
        public String dipPrefix = "172.16.0.0/12";

        public Params vipCount(int value) {
            vipCount = value;
            return this;
        }

        public Params intervals(int value) {
            intervals = value;
            return this;
        }

        public Params intervalSeconds(long value) {
            intervalSeconds = value;
            return this;
        }

        public Params loadFraction(double value) {
            loadFraction = value;
            return this;
        }

        public Params totalBps(double value) {
            totalBps = value;
            return this;
        }

        /** Throws IllegalArgumentException naming the first bad option. */
        public void validate() {
            require(vipCount >= 1 && vipCount <= 1_000_000, "vipCount", "between 1 and 1,000,000", vipCount);
            require(intervals >= 1 && intervals <= MAX_INTERVALS, "intervals", "between 1 and 10,000", intervals);
            require(intervalSeconds >= 1, "intervalSeconds", "at least 1", intervalSeconds);
            // the trace lives in memory: ~70 bytes per VIP, interval and source entry
            require((long) vipCount * intervals <= MAX_VIP_INTERVALS, "intervals",
                    "at most " + MAX_VIP_INTERVALS + " / vipCount (" + MAX_VIP_INTERVALS / vipCount
                            + ") so the trace fits in memory", intervals);
            require(loadFraction > 0 && loadFraction <= 10, "loadFraction", "in (0, 10]", loadFraction);
            require(totalBps >= 0, "totalBps", "not negative", totalBps);
            require(trafficSigma >= 0 && trafficSigma <= 5, "trafficSigma", "between 0 and 5", trafficSigma);
            require(dipMedian >= 1, "dipMedian", "at least 1", dipMedian);
            require(dipSigma >= 0 && dipSigma <= 5, "dipSigma", "between 0 and 5", dipSigma);
            require(dipTrafficCorrelation >= -1 && dipTrafficCorrelation <= 1, "dipTrafficCorrelation",
                    "between -1 and 1", dipTrafficCorrelation);
            require(minDips >= 1, "minDips", "at least 1", minDips);
            require(maxDips >= minDips && maxDips <= 262_144, "maxDips", "between minDips and 262,144", maxDips);
            require(dipsPerPod >= 1, "dipsPerPod", "at least 1", dipsPerPod);
            require(podLinkShare >= 0 && podLinkShare <= 1, "podLinkShare", "between 0 and 1", podLinkShare);
            requireShare(bareMetalShare, "bareMetalShare");
            requireShare(colocateShare, "colocateShare");
            requireShare(weightedShare, "weightedShare");
            requireShare(portBasedShare, "portBasedShare");
            requireShare(splitPoolShare, "splitPoolShare");
            requireShare(internalShare, "internalShare");
            require(internalSigma >= 0 && internalSigma <= 10, "internalSigma", "between 0 and 10", internalSigma);
            requireShare(localityShare, "localityShare");
            require(sourceScale >= 0, "sourceScale", "not negative", sourceScale);
            require(maxSources >= 1, "maxSources", "at least 1", maxSources);
            require(clientTorLinkShare >= 0 && clientTorLinkShare <= 1, "clientTorLinkShare",
                    "between 0 and 1", clientTorLinkShare);
            require(stepSigma >= 0 && stepSigma <= 2, "stepSigma", "between 0 and 2", stepSigma);
            require(trendSigma >= 0 && trendSigma <= 1, "trendSigma", "between 0 and 1", trendSigma);
            requireShare(burstChance, "burstChance");
            require(sourceJitter >= 0 && sourceJitter <= 2, "sourceJitter", "between 0 and 2", sourceJitter);
            requireShare(appearShare, "appearShare");
            requireShare(disappearShare, "disappearShare");
            require(totalDriftSigma >= 0, "totalDriftSigma", "not negative", totalDriftSigma);
            require(totalDriftBound >= 0 && totalDriftBound < 1, "totalDriftBound", "in [0, 1)", totalDriftBound);
            require(aggregateLength >= 8 && aggregateLength <= 32, "aggregateLength", "between 8 and 32", aggregateLength);
        }

        private static void requireShare(double value, String field) {
            require(value >= 0 && value <= 1, field, "between 0 and 1", value);
        }

        private static void require(boolean ok, String field, String range, Object value) {
            if (!ok) {
                throw new IllegalArgumentException(field + ": must be " + range + ", got " + value);
            }
        }
    }

    /** Most VIP-intervals one trace may hold (about 20 paper-scale traces; several GB of heap). */
    public static final long MAX_VIP_INTERVALS = 10_000_000L;
    /** The longest trace generated. */
    public static final int MAX_INTERVALS = 10_000;

    /** The services a port-based VIP picks from (proto, port). */
    static final String[] SERVICE_PROTOS = {"tcp", "tcp", "tcp", "tcp", "udp", "tcp", "udp", "tcp"};
    static final int[] SERVICE_PORTS = {443, 80, 8080, 3389, 53, 22, 500, 1433};
    /** WCMP weights of heterogeneous server generations, and how common each is. */
    private static final int[] WEIGHTS = {1, 2, 4};
    private static final double[] WEIGHT_CDF = {0.6, 0.85, 1.0};
    /** Links may be loaded to this share of their bandwidth (Duet §3.4); the spreading rules use it. */
    static final double LINK_HEADROOM = 0.8;
    /** Per-interval pull of each VIP's random walk back towards its base rate. */
    private static final double MEAN_REVERSION = 0.01;

    private WorkloadGenerator() {
    }

    public static Workload generate(Topology topology, Params params, long seed) {
        return generate(topology, params, seed, Progress.NONE);
    }

    public static Workload generate(Topology topology, Params p, long seed, Progress progress) {
        p.validate();
        Fabric fabric = new Fabric(topology);
        double totalBytesPerSec = p.totalBps > 0 ? p.totalBps / 8 : p.loadFraction * fabric.torUplinkBps / 8;
        if (!(totalBytesPerSec > 0)) {
            throw new IllegalArgumentException("topology: no ToR uplinks to size the traffic by; give totalBps");
        }
        Rng rng = new Rng(seed);
        Addresses addresses = new Addresses(p);
        // base log rates first: placing DIPs and clients by traffic needs each VIP's expected rate
        double[] z = new double[p.vipCount];
        double weightSum = 0;
        for (int i = 0; i < p.vipCount; i++) {
            z[i] = rng.gaussian();
            weightSum += Math.exp(p.trafficSigma * z[i]);
        }
        Limits limits = new Limits(p, fabric);
        VipPlan[] plans = new VipPlan[p.vipCount];
        List<Vip> vips = new ArrayList<>(p.vipCount);
        for (int i = 0; i < p.vipCount; i++) {
            double expected = totalBytesPerSec * Math.exp(p.trafficSigma * z[i]) / weightSum;
            plans[i] = planVip(p, fabric, rng, addresses, vips, z[i], expected, limits);
            if ((i + 1) % 1000 == 0 || i + 1 == p.vipCount) {
                progress.update("vips", i + 1, p.vipCount);
            }
        }
        List<TrafficInterval> intervals = traffic(p, fabric, plans, vips, totalBytesPerSec, rng, progress);
        return new Workload(new VipSet(vips), new TrafficTrace(intervals));
    }

    /** What stays fixed about one VIP over the trace. */
    private static final class VipPlan {
        double logBase;
        double trend;
        double internalLogit;
        int birth;
        int death;
        String[] sourceTors;
        double[] sourceWeights;
    }

    /** Per-pod and per-client-ToR traffic limits, bytes/s (+inf when the rule is off). */
    private static final class Limits {
        final double perPod;
        final double perClientTor;

        Limits(Params p, Fabric fabric) {
            perPod = p.podLinkShare > 0 && fabric.podLinkBps > 0
                    ? p.podLinkShare * LINK_HEADROOM * fabric.podLinkBps / 8 : Double.POSITIVE_INFINITY;
            perClientTor = p.clientTorLinkShare > 0 && fabric.oneUplinkBps > 0
                    ? p.clientTorLinkShare * LINK_HEADROOM * fabric.oneUplinkBps / 8 : Double.POSITIVE_INFINITY;
        }
    }

    /** {@code expected}: the VIP's rate in bytes/s at its base level (before drift and bursts). */
    private static VipPlan planVip(Params p, Fabric fabric, Rng rng, Addresses addresses, List<Vip> out,
                                   double z, double expected, Limits limits) {
        VipPlan plan = new VipPlan();
        plan.logBase = p.trafficSigma * z;
        double rho = p.dipTrafficCorrelation;
        double dipLatent = rho * z + Math.sqrt(1 - rho * rho) * rng.gaussian();
        int dipCount = (int) Math.max(p.minDips, Math.min(p.maxDips,
                Math.round(p.dipMedian * Math.exp(p.dipSigma * dipLatent))));

        // pods by DIP count, or more when the traffic per pod would not fit through one core link
        int podCount = Math.max(1 + dipCount / p.dipsPerPod, (int) Math.ceil(expected / limits.perPod));
        podCount = Math.min(Math.min(fabric.dipPods.length, p.maxDips), podCount);
        dipCount = Math.max(dipCount, podCount); // at least one server in each of its pods
        int[] pods = fabric.pickPods(podCount, rng);
        List<Dip> dips = placeDips(p, fabric, rng, addresses, pods, dipCount);
        out.add(new Vip(addresses.nextVip(), addresses.aggregateOfLastVip(), ports(p, rng, dips)));

        plan.trend = p.trendSigma * rng.gaussian();
        plan.internalLogit = logit(p.internalShare) + p.internalSigma * rng.gaussian();
        plan.birth = 0;
        plan.death = p.intervals;
        if (p.intervals > 1 && rng.chance(p.appearShare)) {
            plan.birth = rng.nextInt(1, p.intervals);
        }
        if (plan.birth + 1 < p.intervals && rng.chance(p.disappearShare)) {
            plan.death = rng.nextInt(plan.birth + 1, p.intervals);
        }

        int wanted = (int) Math.round(1 + p.sourceScale * Math.log1p(Math.exp(plan.logBase)) / Math.log(2));
        wanted = Math.min(p.maxSources, wanted);
        // enough client ToRs that none has to send more than its cap, with 2x room for drift
        wanted = (int) Math.max(wanted, Math.min(fabric.clientTors.length, Math.ceil(2 * expected / limits.perClientTor)));
        wanted = Math.max(1, Math.min(wanted, fabric.clientTors.length));
        Set<String> tors = new HashSet<>();
        for (int s = 0; s < wanted; s++) {
            for (int attempt = 0; attempt < 3; attempt++) {
                String tor = rng.chance(p.localityShare)
                        ? fabric.randomClientTorIn(pods[rng.nextInt(pods.length)], rng)
                        : fabric.clientTors[rng.nextInt(fabric.clientTors.length)];
                if (tors.add(tor)) {
                    break;
                }
            }
        }
        plan.sourceTors = tors.toArray(new String[0]);
        Arrays.sort(plan.sourceTors); // HashSet order is not part of the seed's promise
        plan.sourceWeights = new double[plan.sourceTors.length];
        for (int s = 0; s < plan.sourceWeights.length; s++) {
            plan.sourceWeights[s] = rng.exponential();
        }
        return plan;
    }

    private static List<Dip> placeDips(Params p, Fabric fabric, Rng rng, Addresses addresses,
                                       int[] pods, int count) {
        int hostsInPods = 0;
        for (int pod : pods) {
            hostsInPods += fabric.hostsOfPod.get(pod).size();
        }
        boolean bareMetal = rng.chance(p.bareMetalShare) && count * 2 <= hostsInPods;
        boolean weighted = rng.chance(p.weightedShare);
        List<Dip> dips = new ArrayList<>(count);
        List<Host> used = new ArrayList<>();
        Set<String> usedIps = new HashSet<>();
        int fresh = 0;
        while (dips.size() < count) {
            Host host;
            if (!bareMetal && !used.isEmpty() && rng.chance(p.colocateShare)) {
                host = used.get(rng.nextInt(used.size()));
            } else {
                // pods in turn, so the DIPs (and the traffic to them) are spread evenly over the pods
                List<Host> podHosts = fabric.hostsOfPod.get(pods[fresh++ % pods.length]);
                host = podHosts.get(rng.nextInt(podHosts.size()));
            }
            if (bareMetal && !usedIps.add(host.ip)) {
                continue; // a server is one DIP of a bare-metal VIP; at most half the hosts are taken
            }
            used.add(host);
            Integer weight = weighted ? weight(rng) : null;
            dips.add(bareMetal ? new Dip(host.ip, weight, null) : new Dip(addresses.nextDip(), weight, host.ip));
        }
        return dips;
    }

    private static int weight(Rng rng) {
        double u = rng.uniform();
        for (int i = 0; i < WEIGHTS.length; i++) {
            if (u < WEIGHT_CDF[i]) {
                return WEIGHTS[i];
            }
        }
        return WEIGHTS[WEIGHTS.length - 1];
    }

    private static List<VipPort> ports(Params p, Rng rng, List<Dip> dips) {
        if (!rng.chance(p.portBasedShare)) {
            return List.of(new VipPort("any", 0, dips));
        }
        double u = rng.uniform();
        int services = u < 0.4 ? 1 : u < 0.75 ? 2 : u < 0.9 ? 3 : 4;
        // distinct services: a random rotation of the list keeps them unique
        int first = rng.nextInt(SERVICE_PORTS.length);
        boolean split = services > 1 && dips.size() >= services && rng.chance(p.splitPoolShare);
        List<VipPort> ports = new ArrayList<>(services);
        for (int s = 0; s < services; s++) {
            int k = (first + s) % SERVICE_PORTS.length;
            List<Dip> pool = dips;
            if (split) {
                int from = (int) ((long) s * dips.size() / services);
                int to = (int) ((long) (s + 1) * dips.size() / services);
                pool = dips.subList(from, to);
            }
            ports.add(new VipPort(SERVICE_PROTOS[k], SERVICE_PORTS[k], pool));
        }
        return ports;
    }

    private static List<TrafficInterval> traffic(Params p, Fabric fabric, VipPlan[] plans, List<Vip> vips,
                                                 double total, Rng rng, Progress progress) {
        int n = plans.length;
        double[] walk = new double[n];
        int[] burstLeft = new int[n];
        double[] burstLog = new double[n];
        double[] rate = new double[n];
        double totalLog = 0;
        double bound = Math.log1p(p.totalDriftBound);
        List<TrafficInterval> intervals = new ArrayList<>(p.intervals);
        for (int t = 0; t < p.intervals; t++) {
            if (t > 0) {
                totalLog = Math.max(-bound, Math.min(bound, totalLog + p.totalDriftSigma * rng.gaussian()));
            }
            double sum = 0;
            for (int i = 0; i < n; i++) {
                VipPlan plan = plans[i];
                if (t > 0) {
                    walk[i] = (1 - MEAN_REVERSION) * walk[i] + plan.trend + p.stepSigma * rng.gaussian();
                }
                if (burstLeft[i] == 0 && rng.chance(p.burstChance)) {
                    burstLeft[i] = rng.nextInt(1, 4);
                    burstLog[i] = Math.log(2 + 3 * rng.uniform());
                }
                double burst = 0;
                if (burstLeft[i] > 0) {
                    burst = burstLog[i];
                    burstLeft[i]--;
                }
                boolean active = t >= plan.birth && t < plan.death;
                rate[i] = active ? Math.exp(plan.logBase + walk[i] + burst) : 0;
                sum += rate[i];
            }
            double scale = sum > 0 ? total * Math.exp(totalLog) / sum : 0;
            for (int i = 0; i < n; i++) {
                rate[i] *= scale;
            }
            double shift = calibrate(p.internalShare, plans, rate);
            double clientTorCap = new Limits(p, fabric).perClientTor;
            List<VipTraffic> entries = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (rate[i] > 0) {
                    entries.add(vipTraffic(p, vips.get(i).vip, plans[i], rate[i], shift, rng, clientTorCap));
                }
            }
            intervals.add(new TrafficInterval(t, t * p.intervalSeconds, p.intervalSeconds, entries));
            progress.update("intervals", t + 1, p.intervals);
        }
        return intervals;
    }

    private static VipTraffic vipTraffic(Params p, String vip, VipPlan plan, double rate, double shift, Rng rng,
                                         double clientTorCap) {
        double internal = rate * internalFraction(p.internalShare, plan.internalLogit, shift);
        double[] w = new double[plan.sourceTors.length];
        double wSum = 0;
        for (int s = 0; s < w.length; s++) {
            w[s] = plan.sourceWeights[s] * Math.exp(p.sourceJitter * rng.gaussian());
            wSum += w[s];
        }
        double[] amount = capShares(w, internal, clientTorCap);
        Map<String, Double> sources = new LinkedHashMap<>();
        for (int s = 0; s < w.length; s++) {
            putRounded(sources, plan.sourceTors[s], amount[s]);
        }
        putRounded(sources, VipTraffic.INTERNET, rate - internal);
        if (sources.isEmpty()) {
            sources.put(VipTraffic.INTERNET, 1.0); // a live VIP sees at least a trickle
        }
        return new VipTraffic(vip, sources, null);
    }

    /**
     * Splits {@code total} in proportion to the weights, but no part above {@code cap}: parts
     * that would exceed it are set to the cap and the rest is re-split over the others (water
     * filling). Only if every part is at the cap does the remainder go evenly over all of them.
     */
    static double[] capShares(double[] w, double total, double cap) {
        int n = w.length;
        double[] out = new double[n];
        boolean[] capped = new boolean[n];
        double left = total;
        boolean changed = true;
        while (changed) {
            changed = false;
            double free = 0;
            for (int s = 0; s < n; s++) {
                if (!capped[s]) {
                    free += w[s];
                }
            }
            if (free <= 0) {
                break;
            }
            for (int s = 0; s < n; s++) {
                if (!capped[s] && left * w[s] / free > cap) {
                    capped[s] = true;
                    out[s] = cap;
                    left -= cap;
                    changed = true;
                }
            }
            if (!changed) {
                for (int s = 0; s < n; s++) {
                    if (!capped[s]) {
                        out[s] = left * w[s] / free;
                    }
                }
                return out;
            }
        }
        for (int s = 0; s < n; s++) {
            out[s] += left / n; // every client at its cap: the rest evenly (more than the cap)
        }
        return out;
    }

    /** Whole bytes per second keep the trace small; a rate under half a byte is dropped. */
    private static void putRounded(Map<String, Double> sources, String node, double bytesPerSec) {
        double r = Math.rint(bytesPerSec);
        if (r > 0) {
            sources.put(node, r);
        }
    }

    /**
     * The shift of every VIP's internal logit that makes the traffic-weighted internal share
     * exactly {@code target} in this interval (bisection; the share is monotone in the shift).
     */
    private static double calibrate(double target, VipPlan[] plans, double[] rate) {
        if (target <= 0 || target >= 1) {
            return 0;
        }
        double total = 0;
        for (double r : rate) {
            total += r;
        }
        if (total <= 0) {
            return 0;
        }
        double lo = -40;
        double hi = 40;
        for (int iter = 0; iter < 50; iter++) {
            double mid = (lo + hi) / 2;
            double internal = 0;
            for (int i = 0; i < rate.length; i++) {
                if (rate[i] > 0) {
                    internal += rate[i] * sigmoid(plans[i].internalLogit + mid);
                }
            }
            if (internal < target * total) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return (lo + hi) / 2;
    }

    private static double internalFraction(double target, double logit, double shift) {
        if (target <= 0) {
            return 0;
        }
        if (target >= 1) {
            return 1;
        }
        return sigmoid(logit + shift);
    }

    private static double sigmoid(double x) {
        return 1 / (1 + Math.exp(-x));
    }

    private static double logit(double share) {
        double s = Math.max(1e-9, Math.min(1 - 1e-9, share));
        return Math.log(s / (1 - s));
    }

    /** The parts of the topology the generator draws from. */
    private static final class Fabric {
        final double torUplinkBps;
        /** Smallest link between a core and a pod (0 without cores): how a core HMux reaches a pod. */
        final double podLinkBps;
        /** Smallest single ToR uplink. */
        final double oneUplinkBps;
        /** Pods with at least one host: where DIPs may live. */
        final int[] dipPods;
        final Map<Integer, List<Host>> hostsOfPod = new HashMap<>();
        final Map<Integer, List<String>> clientTorsOfPod = new HashMap<>();
        /** ToRs with hosts: where internal clients sit. */
        final String[] clientTors;

        Fabric(Topology topology) {
            Map<String, Switch> switches = new HashMap<>();
            topology.switches.forEach(s -> switches.put(s.id, s));
            double uplinks = 0;
            double podLink = Double.POSITIVE_INFINITY;
            double oneUplink = Double.POSITIVE_INFINITY;
            for (Link l : topology.links) {
                Switch a = switches.get(l.a);
                Switch b = switches.get(l.b);
                if (a != null && b != null && (a.role == SwitchRole.TOR) != (b.role == SwitchRole.TOR)) {
                    uplinks += l.capacityBps;
                    oneUplink = Math.min(oneUplink, l.capacityBps);
                }
                if (a != null && b != null && (a.role == SwitchRole.CORE) != (b.role == SwitchRole.CORE)) {
                    podLink = Math.min(podLink, l.capacityBps);
                }
            }
            torUplinkBps = uplinks;
            podLinkBps = Double.isInfinite(podLink) ? 0 : podLink;
            oneUplinkBps = Double.isInfinite(oneUplink) ? 0 : oneUplink;
            Map<String, Boolean> torSeen = new LinkedHashMap<>();
            for (Host h : topology.hosts) {
                Switch tor = switches.get(h.tor);
                if (tor == null || tor.pod == null) {
                    throw new IllegalArgumentException("topology: host " + h.id + " hangs off '" + h.tor
                            + "', which is not a ToR with a pod");
                }
                hostsOfPod.computeIfAbsent(tor.pod, k -> new ArrayList<>()).add(h);
                if (torSeen.put(h.tor, Boolean.TRUE) == null) {
                    clientTorsOfPod.computeIfAbsent(tor.pod, k -> new ArrayList<>()).add(tor.id);
                }
            }
            if (topology.hosts.isEmpty()) {
                throw new IllegalArgumentException("topology: has no hosts, and DIPs need host addresses");
            }
            dipPods = hostsOfPod.keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
            clientTors = torSeen.keySet().toArray(new String[0]);
        }

        /** {@code count} distinct pods that have hosts, in random order. */
        int[] pickPods(int count, Rng rng) {
            int[] copy = dipPods.clone();
            for (int i = 0; i < count; i++) {
                int j = rng.nextInt(i, copy.length);
                int tmp = copy[i];
                copy[i] = copy[j];
                copy[j] = tmp;
            }
            return Arrays.copyOf(copy, count);
        }

        String randomClientTorIn(int pod, Rng rng) {
            List<String> tors = clientTorsOfPod.get(pod);
            return tors.get(rng.nextInt(tors.size()));
        }
    }

    /** Hands out VIP and DIP addresses in order, skipping .0 and .255. */
    private static final class Addresses {
        private final long vipEnd;
        private final long dipEnd;
        private final int aggregateLength;
        private long nextVip;
        private long nextDip;
        private long lastVip;

        Addresses(Params p) {
            long[] vipRange = range(p.vipPrefix, "vipPrefix");
            long[] dipRange = range(p.dipPrefix, "dipPrefix");
            nextVip = vipRange[0];
            vipEnd = vipRange[1];
            nextDip = dipRange[0];
            dipEnd = dipRange[1];
            aggregateLength = p.aggregateLength;
        }

        String nextVip() {
            nextVip = skipEdges(nextVip);
            if (nextVip >= vipEnd) {
                throw new IllegalArgumentException("vipPrefix: too small for the number of VIPs");
            }
            lastVip = nextVip++;
            return Ipv4.format((int) lastVip);
        }

        String aggregateOfLastVip() {
            long mask = aggregateLength == 0 ? 0 : (0xffffffffL << (32 - aggregateLength)) & 0xffffffffL;
            return Ipv4.format((int) (lastVip & mask)) + "/" + aggregateLength;
        }

        String nextDip() {
            nextDip = skipEdges(nextDip);
            if (nextDip >= dipEnd) {
                throw new IllegalArgumentException("dipPrefix: too small for the number of VM DIPs; "
                        + "use a larger prefix or fewer VIPs/DIPs");
            }
            return Ipv4.format((int) nextDip++);
        }

        private static long skipEdges(long address) {
            long a = address;
            while ((a & 0xff) == 0 || (a & 0xff) == 0xff) {
                a++;
            }
            return a;
        }

        private static long[] range(String prefix, String field) {
            int slash = prefix.indexOf('/');
            if (slash < 0) {
                throw new IllegalArgumentException(field + ": '" + prefix + "' is not a prefix a.b.c.d/len");
            }
            int len;
            long base;
            try {
                len = Integer.parseInt(prefix.substring(slash + 1));
                base = Integer.toUnsignedLong(Ipv4.parse(prefix.substring(0, slash)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(field + ": '" + prefix + "' is not a prefix a.b.c.d/len");
            }
            if (len < 1 || len > 30) {
                throw new IllegalArgumentException(field + ": prefix length must be 1..30, got " + len);
            }
            long size = 1L << (32 - len);
            long start = base & ~(size - 1) & 0xffffffffL;
            return new long[] {start, start + size};
        }
    }
}
