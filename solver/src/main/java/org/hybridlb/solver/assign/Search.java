package org.hybridlb.solver.assign;

import java.util.SplittableRandom;
import org.hybridlb.solver.routing.Fabric;
import org.hybridlb.solver.routing.LinkLoads;

/**
 * Finds, for one VIP against a {@link Usage}, the switch with the lowest MRU after placing it
 * (Duet §3.4.1, ties at random), or the first feasible switch in a given order (§3.8.4).
 *
 * <p>Ties at random, the same way every time: each VIP visits the candidates in its own random
 * order, drawn from (seed, VIP) alone, and a candidate replaces the best only when strictly
 * lower, so a tie goes to the tied switch that comes first in the VIP's order. Over seeds and
 * VIPs that is a uniform random choice among the ties, as the paper says; for one VIP it is the
 * same choice whenever the same switches tie, so a greedy run from scratch (non-sticky) moves a
 * VIP only when the MRU of its switches changed, not because other VIPs drew a different number
 * of random numbers before it. With the pod shortcut a pod is drawn with a weight of its ToR
 * count (the order in which pods first show up in a uniform order of all switches), and tied
 * ToRs inside it go by a priority hashed from (seed, VIP, ToR), so ties are still spread over
 * switches as without the shortcut (exactly so when all ToRs of a tied pod tie, the common case
 * of small VIPs). The search can stop as soon as the best equals the current MRU (no candidate
 * can go below it) and skip candidates whose table utilisation alone is not lower than the best.
 *
 * <p>Container shortcut (§3.4.2, Fig. 3.5): with it, the ToRs of a symmetric pod are one
 * candidate. Their loads outside the pod's ToR links are the same for every ToR of the pod, so
 * they are computed once (a stand-in ToR, {@link LoadCalculator#addPodOutside}); the ToR links
 * are then computed per ToR from per-ToR demand: the candidate's own links carry everything
 * that enters or leaves it, every other ToR x of the pod carries its own sources' traffic up
 * (in[x] / aggs on each up link) and its DIPs' traffic down (out[x] / aggs). The best ToR of the
 * pod is picked from those and the ToR tables, ties by priority. This is exact (same MRU as
 * evaluating every ToR in full); pods that are not symmetric have their ToRs evaluated one by one.
 */
final class Search {
    private final Instance in;
    private final ResourceModel m;
    private final Usage u;
    private final Fabric f;
    private final LoadCalculator calc;
    // tie-breaks: per run (seed), per VIP (vipSalt), per switch (a ToR's priority inside a pod)
    private final long seedSalt;
    private final long[] switchSalt;
    private long vipSalt;
    private final int[] swappedWith;    // the shuffle of the current search, to undo it
    private LinkLoads loads;
    /** Loads of the best switch so far (when it was evaluated in full), to place it without recomputing. */
    private LinkLoads bestLoads;
    private boolean bestLoadsValid;
    private final int[] units;          // >= 0: a switch; < 0: pod -(unit + 1)
    private final int[] unitWeight;     // switches a unit stands for (a pod: its ToRs)
    private final int totalWeight;
    private final int[] allSwitches;
    private final double[] extIn;
    private final double[] extOut;
    private final double[] inAt;
    private final double[] outAt;
    private final int[] podDemandTors;
    private final boolean podShortcut;
    // incoming / outgoing links per switch and Internet ingress share, for linkRoomAt (lazy)
    private int[] inStart;
    private int[] inLink;
    private int[] outStart;
    private int[] outLink;
    private double[] ingressShare;
    // first fit: per-pod parts of the container shortcut, valid for one VIP (stamp)
    private int ffStamp;
    private int ffDemandTors;
    private int[] podStamp;
    private double[] podOutside;
    private double[] podTop1;
    private double[] podTop2;
    private int[] podTop1Tor;
    private double[] podInQ;
    private double[] podOutQ;
    private double[][] podExtIn;
    private double[][] podExtOut;

    /** Result of the last search: the switch and the MRU once v is there. */
    int bestSwitch;
    double bestMru;
    /** Number of full (switch or pod) evaluations made, for the benchmark. */
    long evaluations;

    Search(Instance in, Usage u, boolean podShortcut) {
        this.in = in;
        this.m = in.resources();
        this.u = u;
        this.f = in.fabric();
        this.calc = m.calculator();
        this.podShortcut = podShortcut;
        this.loads = m.newLinkLoads();
        this.bestLoads = m.newLinkLoads();
        int n = f.switchCount();
        allSwitches = new int[n];
        for (int s = 0; s < n; s++) {
            allSwitches[s] = s;
        }
        if (podShortcut) {
            java.util.List<Integer> list = new java.util.ArrayList<>();
            for (int q = 0; q < f.podCount(); q++) {
                if (f.podSymmetric(q)) {
                    list.add(-(q + 1));
                }
            }
            for (int s = 0; s < n; s++) {
                if (!f.inSymmetricPod(s)) {
                    list.add(s);
                }
            }
            units = list.stream().mapToInt(Integer::intValue).toArray();
        } else {
            units = allSwitches.clone();
        }
        unitWeight = new int[units.length];
        int w = 0;
        for (int i = 0; i < units.length; i++) {
            unitWeight[i] = units[i] >= 0 ? 1 : f.podTors(-units[i] - 1).length;
            w += unitWeight[i];
        }
        totalWeight = w;
        seedSalt = mix64(in.options().seed * 0x9E3779B97F4A7C15L);
        switchSalt = new long[n];
        for (int x = 0; x < n; x++) {
            switchSalt[x] = mix64(f.id(x).hashCode() * 0xC2B2AE3D27D4EB4FL + 1);
        }
        swappedWith = new int[units.length];
        int maxAggs = 1;
        for (int q = 0; q < f.podCount(); q++) {
            maxAggs = Math.max(maxAggs, f.podAggs(q).length);
        }
        extIn = new double[maxAggs];
        extOut = new double[maxAggs];
        inAt = new double[n];
        outAt = new double[n];
        podDemandTors = new int[n];
    }

    /** SplitMix64's finaliser: a well-mixed 64-bit value of x. */
    private static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** A uniform number in (0, 1] for the current VIP and {@code salt}. */
    private double uniform(long salt) {
        return ((mix64(vipSalt ^ salt) >>> 11) + 1) * 0x1.0p-53;
    }

    /** Priority of switch s for the current VIP, uniform in (0, 1]. */
    private double priority(int s) {
        return uniform(switchSalt[s]);
    }

    private void swapUnits(int i, int j) {
        int unit = units[j];
        int weight = unitWeight[j];
        units[j] = units[i];
        unitWeight[j] = unitWeight[i];
        units[i] = unit;
        unitWeight[i] = weight;
    }

    /** Sets the VIP whose ties are broken next. */
    private void tieBreakFor(int v) {
        vipSalt = mix64(seedSalt ^ (in.vipId(v).hashCode() * 0xD6E8FEB86659FD93L));
    }

    LinkLoads loads() {
        return loads;
    }

    /** Loads of v on {@link #bestSwitch} when the search kept them (else null); for tests. */
    LinkLoads bestLoads() {
        return bestLoadsValid ? bestLoads : null;
    }

    /** Places v on the switch the last {@link #findBest} chose. */
    void placeBest(int v) {
        if (bestLoadsValid) {
            u.place(v, bestSwitch, bestLoads);
        } else {
            u.place(v, bestSwitch);
        }
    }

    /**
     * Lowest-MRU switch for v; true when it fits (MRU ≤ 1). Sets {@link #bestSwitch} and
     * {@link #bestMru} (-1 and +inf when no switch can take it).
     */
    boolean findBest(int v) {
        bestLoadsValid = false;
        bestSwitch = -1;
        bestMru = Double.POSITIVE_INFINITY;
        if (!m.eligible(v) || !u.hostRoomFor(v)) {
            return false;
        }
        double g = u.mru();
        tieBreakFor(v);
        // the VIP's own order of the candidates: an incremental Fisher-Yates shuffle drawn from
        // the VIP's seed, a unit picked with a weight of the switches it stands for (the order in
        // which pods first appear in a uniform order of all switches); undone afterwards
        SplittableRandom rng = new SplittableRandom(vipSalt);
        int count = units.length;
        int left = totalWeight;
        int steps = 0;
        try {
            for (int i = 0; i < count; i++) {
                int j = i;
                if (left > count - i) {
                    int pickW = rng.nextInt(left);
                    while (pickW >= unitWeight[j]) {
                        pickW -= unitWeight[j];
                        j++;
                    }
                } else {
                    j = i + rng.nextInt(count - i);
                }
                swapUnits(i, j);
                swappedWith[i] = j;
                steps = i + 1;
                left -= unitWeight[i];
                int unit = units[i];
                if (unit >= 0) {
                    evaluateSwitch(v, unit, g);
                } else {
                    evaluatePod(v, -unit - 1, g);
                }
                if (bestMru <= g) {
                    break;
                }
            }
        } finally {
            for (int i = steps - 1; i >= 0; i--) {
                swapUnits(i, swappedWith[i]);
            }
        }
        return bestSwitch >= 0 && bestMru <= 1 + Usage.EPS;
    }

    /**
     * First switch in {@code order} where v fits (Random of §3.8.4: "selects the first feasible
     * switch"). The caller draws the order once per run, so early switches fill up first, as in
     * first fit. Before the full load computation a switch is ruled out cheaply by its tables and
     * by {@link #linkRoomAt}: full switches are passed over without routing v.
     */
    boolean firstFit(int v, int[] order) {
        bestSwitch = -1;
        bestMru = Double.POSITIVE_INFINITY;
        if (!m.eligible(v) || !u.hostRoomFor(v)) {
            return false;
        }
        double g = u.mru();
        ffStamp++;
        try {
            for (int s : order) {
                if (!m.fitsAlone(v, s) || u.memoryAfter(v, s) > 1 + Usage.EPS || !linkRoomAt(v, s)) {
                    continue;
                }
                boolean torOfPod = f.inSymmetricPod(s);
                double peak = torOfPod ? peakOnTorOfPod(v, s, f.pod(s)) : peakOn(v, s);
                if (peak <= 1 + Usage.EPS) {
                    if (torOfPod) {
                        loads.clear();
                        calc.addLoads(v, s, loads); // the placement needs the full t(., s, v)
                    }
                    bestSwitch = s;
                    bestMru = Math.max(g, peak);
                    return true;
                }
            }
            return false;
        } finally {
            for (int i = 0; i < ffDemandTors; i++) {
                inAt[podDemandTors[i]] = 0;
                outAt[podDemandTors[i]] = 0;
            }
            ffDemandTors = 0;
        }
    }

    /**
     * Exact peak utilisation of v on ToR s of symmetric pod q, with the container shortcut: the
     * part outside q's ToR links is routed once per pod and VIP (the stand-in ToR of
     * {@link #evaluatePod}) and kept while first fit walks its order, so each further ToR of q
     * costs only its own links and tables.
     */
    private double peakOnTorOfPod(int v, int s, int q) {
        if (podStamp == null) {
            int pods = f.podCount();
            podStamp = new int[pods];
            podOutside = new double[pods];
            podTop1 = new double[pods];
            podTop2 = new double[pods];
            podTop1Tor = new int[pods];
            podInQ = new double[pods];
            podOutQ = new double[pods];
            podExtIn = new double[pods][extIn.length];
            podExtOut = new double[pods][extIn.length];
        }
        if (podStamp[q] != ffStamp) {
            preparePod(v, q);
            podStamp[q] = ffStamp;
        }
        int k = f.podAggs(q).length;
        double val = Math.max(podOutside[q], u.memoryAfter(v, s));
        val = Math.max(val, s == podTop1Tor[q] ? podTop2[q] : podTop1[q]);
        if (val > 1 + Usage.EPS) {
            return val;
        }
        double down = (podInQ[q] - inAt[s]) / k;
        double up = (podOutQ[q] - outAt[s]) / k;
        double[] ein = podExtIn[q];
        double[] eout = podExtOut[q];
        for (int j = 0; j < k; j++) {
            int dl = f.torDownlink(s, j);
            int ul = f.torUplink(s, j);
            val = Math.max(val, (u.linkUsedRaw(dl) + ein[j] + down) / m.linkCapacity(dl));
            val = Math.max(val, (u.linkUsedRaw(ul) + eout[j] + up) / m.linkCapacity(ul));
        }
        return val;
    }

    /** The per-pod part of {@link #peakOnTorOfPod}: outside loads, per-ToR demand, top-2 ToRs. */
    private void preparePod(int v, int q) {
        int[] tors = f.podTors(q);
        int k = f.podAggs(q).length;
        int r = tors[0];
        evaluations++;
        loads.clear();
        calc.addPodOutside(v, q, loads, podExtIn[q]);
        double outside = 0;
        for (int i = 0; i < loads.size(); i++) {
            int l = loads.link(i);
            if (f.linkFrom(l) == r) {
                continue;
            }
            outside = Math.max(outside, (u.linkUsedRaw(l) + loads.load(i)) / m.linkCapacity(l));
        }
        podOutside[q] = outside;
        for (int j = 0; j < k; j++) {
            podExtOut[q][j] = loads.loadOn(f.torUplink(r, j));
        }
        int first = ffDemandTors;
        ffDemandTors = gatherPodDemand(v, q, ffDemandTors);
        podInQ[q] = demandInQ;
        podOutQ[q] = demandOutQ;
        scanDemandTors(first, ffDemandTors, k);
        double top1 = scanTop1;
        double top2 = scanTop2;
        int top1Tor = scanTop1Tor;
        podTop1[q] = top1;
        podTop2[q] = top2;
        podTop1Tor[q] = top1Tor;
    }

    /**
     * A necessary condition for v to fit on s, in O(degree of s): the part of v's traffic that
     * reaches s over links (all of it but what its sources on s itself and, on an Internet
     * ingress switch, its share of the Internet traffic bring in) cannot exceed the room left on
     * s's incoming links together, and what leaves s for DIPs behind other switches cannot exceed
     * the room left on its outgoing links. False only when v cannot fit on s.
     */
    boolean linkRoomAt(int v, int s) {
        if (inStart == null) {
            indexSwitchLinks();
        }
        double arriving = in.internetBps(v) * (1 - ingressShare[s]);
        for (int i = in.srcStart(v); i < in.srcEnd(v); i++) {
            if (in.srcNode(i) != s) {
                arriving += in.srcBps(i);
            }
        }
        double leaving = 0;
        for (int i = in.dstStart(v); i < in.dstEnd(v); i++) {
            if (in.dstNode(i) != s) {
                leaving += in.dstBps(i);
            }
        }
        double roomIn = 0;
        for (int i = inStart[s]; i < inStart[s + 1]; i++) {
            int l = inLink[i];
            roomIn += Math.max(0, m.linkCapacity(l) - u.linkUsedRaw(l));
        }
        if (arriving > roomIn * (1 + Usage.EPS) + Usage.EPS) {
            return false;
        }
        double roomOut = 0;
        for (int i = outStart[s]; i < outStart[s + 1]; i++) {
            int l = outLink[i];
            roomOut += Math.max(0, m.linkCapacity(l) - u.linkUsedRaw(l));
        }
        return leaving <= roomOut * (1 + Usage.EPS) + Usage.EPS;
    }

    private void indexSwitchLinks() {
        int n = f.switchCount();
        int links = f.linkCount();
        int[] inStartTmp = new int[n + 1];
        int[] outStartTmp = new int[n + 1];
        for (int l = 0; l < links; l++) {
            inStartTmp[f.linkTo(l) + 1]++;
            outStartTmp[f.linkFrom(l) + 1]++;
        }
        for (int s = 0; s < n; s++) {
            inStartTmp[s + 1] += inStartTmp[s];
            outStartTmp[s + 1] += outStartTmp[s];
        }
        int[] inFill = java.util.Arrays.copyOf(inStartTmp, n);
        int[] outFill = java.util.Arrays.copyOf(outStartTmp, n);
        int[] inL = new int[links];
        int[] outL = new int[links];
        for (int l = 0; l < links; l++) {
            inL[inFill[f.linkTo(l)]++] = l;
            outL[outFill[f.linkFrom(l)]++] = l;
        }
        double[] share = new double[n];
        int[] ingress = in.ingress();
        for (int s : ingress) {
            share[s] += 1.0 / ingress.length;
        }
        inLink = inL;
        outLink = outL;
        outStart = outStartTmp;
        ingressShare = share;
        inStart = inStartTmp;
    }

    /**
     * Whether v fits on some switch of a fabric that carries nothing else (its own traffic and
     * table entries alone). A VIP that does not is SMux-only by design, like a large fan-out VIP,
     * and must not end the paper's greedy. Computed only for VIPs that failed to fit, cached per
     * instance.
     */
    boolean fitsOnEmptyFabric(int v) {
        return m.fitsOnEmptyFabric(v, () -> {
            Search alone = new Search(in, m.newUsage(), podShortcut);
            return alone.anyFit(v);
        });
    }

    /** Whether v fits somewhere, stopping at the first switch (or pod) where it does. */
    private boolean anyFit(int v) {
        bestLoadsValid = false;
        bestSwitch = -1;
        bestMru = Double.POSITIVE_INFINITY;
        if (!m.eligible(v) || !u.hostRoomFor(v)) {
            return false;
        }
        double g = u.mru();
        for (int unit : units) {
            if (unit >= 0) {
                evaluateSwitch(v, unit, g);
            } else {
                evaluatePod(v, -unit - 1, g);
            }
            if (bestSwitch >= 0 && bestMru <= 1 + Usage.EPS) {
                return true;
            }
        }
        return false;
    }

    /**
     * For the paper's stop rule: true when v failed to fit because of what is already placed
     * (the host table is full, or links and tables taken by earlier VIPs), false when it could
     * not fit even on an empty fabric.
     */
    boolean blockedByEarlierPlacements(int v) {
        if (!m.eligible(v)) {
            return false;
        }
        return !u.hostRoomFor(v) || fitsOnEmptyFabric(v);
    }

    /** MRU after placing v on s (+inf when s's tables could never hold v). */
    double mruOn(int v, int s) {
        if (!m.fitsAlone(v, s)) {
            return Double.POSITIVE_INFINITY;
        }
        return Math.max(u.mru(), peakOn(v, s));
    }

    /** Highest utilisation among the resources v touches on s; leaves v's loads in {@link #loads()}. */
    double peakOn(int v, int s) {
        evaluations++;
        loads.clear();
        calc.addLoads(v, s, loads);
        return u.peakIfPlaced(v, s, loads);
    }

    private void evaluateSwitch(int v, int s, double g) {
        if (!m.fitsAlone(v, s)) {
            return;
        }
        if (Math.max(g, u.memoryAfter(v, s)) >= bestMru) {
            return;
        }
        double mru = Math.max(g, peakOn(v, s));
        if (mru < bestMru) {
            bestMru = mru;
            bestSwitch = s;
            LinkLoads t = bestLoads;
            bestLoads = loads;
            loads = t;
            bestLoadsValid = true;
        }
    }

    private void evaluatePod(int v, int q, double g) {
        int[] aggs = f.podAggs(q);
        int[] tors = f.podTors(q);
        int k = aggs.length;
        int r = tors[0];
        evaluations++;
        loads.clear();
        calc.addPodOutside(v, q, loads, extIn);
        double outside = g;
        for (int i = 0; i < loads.size(); i++) {
            int l = loads.link(i);
            if (f.linkFrom(l) == r) {
                continue; // the stand-in's up links: per-ToR below
            }
            outside = Math.max(outside, (u.linkUsedRaw(l) + loads.load(i)) / m.linkCapacity(l));
        }
        if (outside >= bestMru) {
            return;
        }
        for (int j = 0; j < k; j++) {
            extOut[j] = loads.loadOn(f.torUplink(r, j));
        }
        // per-ToR demand inside the pod
        int demandTors = gatherPodDemand(v, q, 0);
        double inQ = demandInQ;
        double outQ = demandOutQ;
        // every ToR with demand carries it on its own links when it is not the candidate
        scanDemandTors(0, demandTors, k);
        double top1 = scanTop1;
        double top2 = scanTop2;
        int top1Tor = scanTop1Tor;
        double podBest = Double.POSITIVE_INFINITY;
        int pick = -1;
        for (int s : tors) {
            if (!m.fitsAlone(v, s)) {
                continue;
            }
            double val = Math.max(outside, u.memoryAfter(v, s));
            val = Math.max(val, s == top1Tor ? top2 : top1);
            if (val > podBest || val >= bestMru) {
                continue;
            }
            double down = (inQ - inAt[s]) / k;
            double up = (outQ - outAt[s]) / k;
            for (int j = 0; j < k; j++) {
                int dl = f.torDownlink(s, j);
                int ul = f.torUplink(s, j);
                val = Math.max(val, (u.linkUsedRaw(dl) + extIn[j] + down) / m.linkCapacity(dl));
                val = Math.max(val, (u.linkUsedRaw(ul) + extOut[j] + up) / m.linkCapacity(ul));
            }
            if (val < podBest || (val == podBest && priority(s) < priority(pick))) {
                podBest = val;
                pick = s;
            }
        }
        if (pick >= 0 && podBest < bestMru) {
            bestMru = podBest;
            bestSwitch = pick;
            // the full t(., pick, v): outside part, pick's own links, the other ToRs' own traffic
            bestLoads.clear();
            for (int i = 0; i < loads.size(); i++) {
                int l = loads.link(i);
                if (f.linkFrom(l) != r) {
                    bestLoads.add(l, loads.load(i));
                }
            }
            for (int j = 0; j < k; j++) {
                bestLoads.add(f.torDownlink(pick, j), extIn[j] + (inQ - inAt[pick]) / k);
                bestLoads.add(f.torUplink(pick, j), extOut[j] + (outQ - outAt[pick]) / k);
            }
            for (int i = 0; i < demandTors; i++) {
                int x = podDemandTors[i];
                if (x != pick) {
                    for (int j = 0; j < k; j++) {
                        bestLoads.add(f.torUplink(x, j), inAt[x] / k);
                        bestLoads.add(f.torDownlink(x, j), outAt[x] / k);
                    }
                }
            }
            bestLoadsValid = true;
        }
        for (int i = 0; i < demandTors; i++) {
            inAt[podDemandTors[i]] = 0;
            outAt[podDemandTors[i]] = 0;
        }
    }

    /** Pod totals of the last {@link #gatherPodDemand} call (bits/s in from, out to the pod's ToRs). */
    private double demandInQ;
    private double demandOutQ;

    /**
     * Adds VIP v's demand at each ToR of pod q to inAt/outAt, lists the ToRs newly touched in
     * podDemandTors from index {@code count}, and returns the new count; the pod totals are left
     * in demandInQ/demandOutQ.
     */
    private int gatherPodDemand(int v, int q, int count) {
        double inQ = 0;
        double outQ = 0;
        for (int i = in.srcStart(v); i < in.srcEnd(v); i++) {
            int x = in.srcNode(i);
            if (f.pod(x) == q && f.inSymmetricPod(x)) {
                if (inAt[x] == 0 && outAt[x] == 0) {
                    podDemandTors[count++] = x;
                }
                inAt[x] += in.srcBps(i);
                inQ += in.srcBps(i);
            }
        }
        for (int i = in.dstStart(v); i < in.dstEnd(v); i++) {
            int y = in.dstNode(i);
            if (f.pod(y) == q) {
                if (inAt[y] == 0 && outAt[y] == 0) {
                    podDemandTors[count++] = y;
                }
                outAt[y] += in.dstBps(i);
                outQ += in.dstBps(i);
            }
        }
        demandInQ = inQ;
        demandOutQ = outQ;
        return count;
    }

    /** Results of the last {@link #scanDemandTors}: the two highest ToR-link utilisations. */
    private double scanTop1;
    private double scanTop2;
    private int scanTop1Tor;

    /**
     * The ToRs podDemandTors[from..to) carry their own demand (in/k up, out/k down per uplink)
     * when they are not the candidate: keeps the highest and second-highest utilisation of their
     * links (and which ToR has the highest), so the candidate's own value can be excluded.
     */
    private void scanDemandTors(int from, int to, int k) {
        double top1 = 0;
        double top2 = 0;
        int top1Tor = -1;
        for (int i = from; i < to; i++) {
            int x = podDemandTors[i];
            double bx = 0;
            for (int j = 0; j < k; j++) {
                int up = f.torUplink(x, j);
                int down = f.torDownlink(x, j);
                bx = Math.max(bx, (u.linkUsedRaw(up) + inAt[x] / k) / m.linkCapacity(up));
                bx = Math.max(bx, (u.linkUsedRaw(down) + outAt[x] / k) / m.linkCapacity(down));
            }
            if (bx > top1) {
                top2 = top1;
                top1 = bx;
                top1Tor = x;
            } else if (bx > top2) {
                top2 = bx;
            }
        }
        scanTop1 = top1;
        scanTop2 = top2;
        scanTop1Tor = top1Tor;
    }
}
