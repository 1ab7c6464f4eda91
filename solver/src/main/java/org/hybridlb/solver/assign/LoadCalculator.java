package org.hybridlb.solver.assign;

import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.routing.EcmpRouter;
import org.hybridlb.solver.routing.Fabric;
import org.hybridlb.solver.routing.LinkLoads;

/**
 * Computes t(l, s, v) exactly, with one propagation per destination, and pod aggregation that
 * does not change the result: ToRs of a symmetric pod all reach anything outside the pod over
 * the same agg next hops, and everything outside the pod reaches any of them through the same
 * arrivals at the pod's aggs. So the traffic of all sources in such a pod is sent as one flow
 * from the pod's aggs (the ToR→agg hop put on each ToR's own links), and the traffic to all DIP
 * ToRs of such a pod as one flow to the pod, split on the last hop by each ToR's share.
 * One calculator per thread (it owns the router's scratch).
 */
final class LoadCalculator {
    private final Instance in;
    private final Fabric f;
    private final EcmpRouter router;
    private final double[] podAmount;
    private final int[] podList;
    private final boolean[] podListed;
    private final int[] hops;
    private final Shared shared;
    // Internet traffic enters evenly over the same ingress switches for every VIP, so its
    // routes to a destination are one unit vector per destination, computed once and scaled.
    private final int[][] inetLinks;
    private final double[][] inetShare;
    private final int[][] inetArrLinks;      // intercepted variant (pod stand-ins): links
    private final double[][] inetArrShare;
    private final double[][] inetArrivals;   // per agg of the pod (podAggs order)
    private final LinkLoads unit;

    /**
     * What depends only on the fabric (router, route caches), handed from one interval's
     * calculator to the next on the same thread. It refers to no instance, so a chain of
     * intervals does not keep the old ones alive.
     */
    static final class Shared {
        final Thread owner = Thread.currentThread();
        final Fabric fabric;
        final int[] ingress;
        final EcmpRouter router;
        final int[][] inetLinks;
        final double[][] inetShare;
        final int[][] inetArrLinks;
        final double[][] inetArrShare;
        final double[][] inetArrivals;
        final LinkLoads unit;
        final PodRoutes podRoutes = new PodRoutes();

        Shared(Fabric f, int[] ingress) {
            this.fabric = f;
            this.ingress = ingress;
            this.router = new EcmpRouter(f);
            int n = f.switchCount();
            inetLinks = new int[n][];
            inetShare = new double[n][];
            inetArrLinks = new int[n][];
            inetArrShare = new double[n][];
            inetArrivals = new double[n][];
            unit = new LinkLoads(f.linkCount());
        }

        boolean usableFor(Instance in) {
            return owner == Thread.currentThread() && fabric == in.fabric()
                    && java.util.Arrays.equals(ingress, in.ingressRaw());
        }
    }

    /** {@code carried}: the fabric-wide part of an earlier calculator (reused when it fits), or null. */
    LoadCalculator(Instance in, Shared carried) {
        this.in = in;
        this.f = in.fabric();
        shared = carried != null && carried.usableFor(in) ? carried : new Shared(f, in.ingressRaw());
        router = shared.router;
        int pods = f.podCount();
        podAmount = new double[pods];
        podList = new int[pods];
        podListed = new boolean[pods];
        int maxAggs = 1;
        for (int q = 0; q < pods; q++) {
            maxAggs = Math.max(maxAggs, f.podAggs(q).length);
        }
        hops = new int[maxAggs];
        inetLinks = shared.inetLinks;
        inetShare = shared.inetShare;
        inetArrLinks = shared.inetArrLinks;
        inetArrShare = shared.inetArrShare;
        inetArrivals = shared.inetArrivals;
        unit = shared.unit;
        podRoutes = shared.podRoutes;
    }

    Shared shared() {
        return shared;
    }

    /** A unit flow from a switch to a symmetric pod, stopped at the pod's aggs. */
    private static final class PodRoute {
        final int[] links;
        final double[] shares;
        final double[] arrivals; // per agg, in podAggs order

        PodRoute(int[] links, double[] shares, double[] arrivals) {
            this.links = links;
            this.shares = shares;
            this.arrivals = arrivals;
        }
    }

    /** Cached unit routes switch -> pod; bounded so a huge fabric cannot exhaust the heap. */
    private static final class PodRoutes {
        final java.util.HashMap<Long, PodRoute> map = new java.util.HashMap<>();
        long entries;
    }

    private final PodRoutes podRoutes;
    private static final long MAX_POD_ROUTE_ENTRIES = 4_000_000L;

    private PodRoute routeToPod(int s, int p) {
        long key = (long) s * f.podCount() + p;
        PodRoute cached = podRoutes.map.get(key);
        if (cached != null) {
            return cached;
        }
        int r = f.podTors(p)[0];
        unit.clear();
        router.seed(s, r, 1.0);
        router.propagateTo(r, true, unit);
        int[] aggs = f.podAggs(p);
        double[] arrivals = new double[aggs.length];
        for (int i = 0; i < router.arrivals(); i++) {
            for (int j = 0; j < aggs.length; j++) {
                if (aggs[j] == router.arrivalNode(i)) {
                    arrivals[j] += router.arrivalAmount(i);
                }
            }
        }
        int[] links = new int[unit.size()];
        double[] shares = new double[unit.size()];
        for (int i = 0; i < links.length; i++) {
            links[i] = unit.link(i);
            shares[i] = unit.load(i);
        }
        PodRoute route = new PodRoute(links, shares, arrivals);
        if (podRoutes.entries + links.length <= MAX_POD_ROUTE_ENTRIES) {
            podRoutes.map.put(key, route);
            podRoutes.entries += links.length;
        }
        return route;
    }

    /** Adds bps of Internet traffic routed to s; with intercept, its arrivals go to arrivalsIn. */
    private void addInternet(int s, double bps, boolean intercept, LinkLoads out, double[] arrivalsIn) {
        if (bps <= 0) {
            return;
        }
        int[][] linksBy = intercept ? inetArrLinks : inetLinks;
        double[][] shareBy = intercept ? inetArrShare : inetShare;
        if (linksBy[s] == null) {
            int[] ingress = in.ingressRaw();
            unit.clear();
            for (int c : ingress) {
                router.seed(c, s, 1.0 / ingress.length);
            }
            router.propagateTo(s, intercept, unit);
            int[] links = new int[unit.size()];
            double[] share = new double[unit.size()];
            for (int i = 0; i < links.length; i++) {
                links[i] = unit.link(i);
                share[i] = unit.load(i);
            }
            if (intercept) {
                int[] aggs = f.podAggs(f.pod(s));
                double[] arr = new double[aggs.length];
                for (int i = 0; i < router.arrivals(); i++) {
                    for (int j = 0; j < aggs.length; j++) {
                        if (aggs[j] == router.arrivalNode(i)) {
                            arr[j] += router.arrivalAmount(i);
                        }
                    }
                }
                inetArrivals[s] = arr;
            }
            shareBy[s] = share;
            linksBy[s] = links;
        }
        int[] links = linksBy[s];
        double[] share = shareBy[s];
        for (int i = 0; i < links.length; i++) {
            out.add(links[i], share[i] * bps);
        }
        if (intercept) {
            double[] arr = inetArrivals[s];
            for (int j = 0; j < arr.length; j++) {
                arrivalsIn[j] += arr[j] * bps;
            }
        }
    }

    /** True when x is a ToR of a symmetric pod that s is not a ToR of. */
    private boolean aggregatable(int x, int s) {
        return f.inSymmetricPod(x) && !(f.role(s) == SwitchRole.TOR && f.pod(s) == f.pod(x));
    }

    /** Adds t(·, s, v) to out (does not clear it). */
    void addLoads(int v, int s, LinkLoads out) {
        addInbound(v, s, -1, false, out);
        addInternet(s, in.internetBps(v), false, out, null);
        addOutbound(v, s, -1, out);
    }

    /**
     * Loads of VIP v on a ToR of symmetric pod q that lie outside the pod's ToR links, computed
     * with the pod's first ToR r standing in: traffic from and to ToRs of q is left out, inbound
     * traffic stops at the pod's aggs (left in the router's arrivals, returned in arrivalsIn,
     * indexed like {@code f.podAggs(q)}), and outbound traffic is on r's up links (which the
     * caller reads and discounts).
     */
    void addPodOutside(int v, int q, LinkLoads out, double[] arrivalsIn) {
        int r = f.podTors(q)[0];
        addInbound(v, r, q, true, out);
        int[] aggs = f.podAggs(q);
        java.util.Arrays.fill(arrivalsIn, 0, aggs.length, 0);
        for (int i = 0; i < router.arrivals(); i++) {
            int a = router.arrivalNode(i);
            for (int j = 0; j < aggs.length; j++) {
                if (aggs[j] == a) {
                    arrivalsIn[j] += router.arrivalAmount(i);
                }
            }
        }
        addInternet(r, in.internetBps(v), true, out, arrivalsIn);
        addOutbound(v, r, q, out);
    }

    private void addInbound(int v, int s, int skipPod, boolean intercept, LinkLoads out) {
        int podCount = 0;
        for (int i = in.srcStart(v); i < in.srcEnd(v); i++) {
            int x = in.srcNode(i);
            if (x == s || (skipPod >= 0 && f.role(x) == SwitchRole.TOR && f.pod(x) == skipPod)) {
                continue;
            }
            double bps = in.srcBps(i);
            if (aggregatable(x, s)) {
                int p = f.pod(x);
                if (!podListed[p]) {
                    podListed[p] = true;
                    podList[podCount++] = p;
                }
                podAmount[p] += bps;
            } else {
                router.seed(x, s, bps);
            }
        }
        for (int k = 0; k < podCount; k++) {
            int p = podList[k];
            int h = nextHopsOfPod(p, s);
            double share = podAmount[p] / h;
            for (int j = 0; j < h; j++) {
                router.seed(hops[j], s, share);
            }
            // the ToR -> agg hop, on each source ToR's own links
            for (int i = in.srcStart(v); i < in.srcEnd(v); i++) {
                int x = in.srcNode(i);
                if (x != s && f.pod(x) == p && f.role(x) == SwitchRole.TOR) {
                    double each = in.srcBps(i) / h;
                    for (int j = 0; j < h; j++) {
                        out.add(f.linkBetween(x, hops[j]), each);
                    }
                }
            }
            podAmount[p] = 0;
            podListed[p] = false;
        }
        router.propagateTo(s, intercept, out);
    }

    /** Aggs of symmetric pod p that are next hops from its ToRs towards s; fills {@link #hops}. */
    private int nextHopsOfPod(int p, int s) {
        int r = f.podTors(p)[0];
        int want = f.distance(r, s) - 1;
        int h = 0;
        for (int a : f.podAggs(p)) {
            if (f.distance(a, s) == want) {
                hops[h++] = a;
            }
        }
        return h;
    }

    private void addOutbound(int v, int s, int skipPod, LinkLoads out) {
        int podCount = 0;
        for (int i = in.dstStart(v); i < in.dstEnd(v); i++) {
            int y = in.dstNode(i);
            if (y == s || (skipPod >= 0 && f.pod(y) == skipPod)) {
                continue;
            }
            double bps = in.dstBps(i);
            if (aggregatable(y, s)) {
                int p = f.pod(y);
                if (!podListed[p]) {
                    podListed[p] = true;
                    podList[podCount++] = p;
                }
                podAmount[p] += bps;
            } else {
                router.seed(s, y, bps);
                router.propagateTo(y, false, out);
            }
        }
        for (int k = 0; k < podCount; k++) {
            int p = podList[k];
            double total = podAmount[p];
            PodRoute route = routeToPod(s, p);
            for (int i = 0; i < route.links.length; i++) {
                out.add(route.links[i], route.shares[i] * total);
            }
            int[] aggs = f.podAggs(p);
            for (int j = 0; j < aggs.length; j++) {
                double arrived = route.arrivals[j] * total;
                if (arrived == 0) {
                    continue;
                }
                for (int i = in.dstStart(v); i < in.dstEnd(v); i++) {
                    int y = in.dstNode(i);
                    if (y != s && f.pod(y) == p) {
                        out.add(f.torDownlink(y, j), arrived * in.dstBps(i) / total);
                    }
                }
            }
            podAmount[p] = 0;
            podListed[p] = false;
        }
    }
}
