package org.hybridlb.solver.routing;

/**
 * Per-hop ECMP over shortest paths, as switches do it: every switch splits what it forwards
 * towards a destination evenly over its neighbours that are one hop closer to it.
 *
 * <p>Usage: {@link #seed} the sources of flows that share one destination, then
 * {@link #propagateTo}. The propagation visits only switches that carry some of the flow,
 * farthest first, so its cost is the size of the flow's shortest-path DAG, not of the fabric.
 *
 * <p>With {@code intercept} the last hop is not added to the links; instead the amount that
 * reaches each neighbour of the destination is kept as an <em>arrival</em> ({@link #arrivals}).
 * For a ToR of a symmetric pod the arrivals at the pod's aggs are the same for every ToR of
 * the pod, so one propagation serves the whole pod: the caller puts the last hop on the link
 * of the ToR it is interested in.
 *
 * <p>Not thread-safe: one router per thread (it holds the scratch buffers).
 */
public final class EcmpRouter {
    private final Fabric f;
    private final int n;
    private final short[] dist;
    private final int[] nhStart;
    private final int[] nhLink;
    private final int[] linkTo;
    private final double[] flow;
    private final int[][] bucket;
    private final int[] bucketSize;
    private final int[] queuedIn;        // epoch stamp: node queued in its bucket
    private int epoch = 1;
    private int maxLevel = -1;
    private final int[] arrivalNode;
    private final double[] arrivalAmount;
    private int arrivalCount;

    public EcmpRouter(Fabric fabric) {
        this.f = fabric;
        this.n = fabric.switchCount();
        this.dist = fabric.distances();
        this.flow = new double[n];
        this.nhStart = fabric.nextHopStart();
        this.nhLink = fabric.nextHopLinks();
        this.linkTo = new int[fabric.linkCount()];
        for (int l = 0; l < linkTo.length; l++) {
            linkTo[l] = fabric.linkTo(l);
        }
        int maxDist = 0;
        for (short d : dist) {
            if (d != Fabric.UNREACHABLE && d > maxDist) {
                maxDist = d;
            }
        }
        this.bucket = new int[maxDist + 1][];
        this.bucketSize = new int[maxDist + 1];
        this.queuedIn = new int[n];
        this.arrivalNode = new int[n];
        this.arrivalAmount = new double[n];
    }

    public Fabric fabric() {
        return f;
    }

    /** Adds {@code amount} of flow starting at {@code node} towards the next destination. */
    public void seed(int node, int destination, double amount) {
        if (amount <= 0 || node == destination) {
            return;
        }
        int level = dist[destination * n + node];
        if (level == Fabric.UNREACHABLE) {
            throw new IllegalStateException("no path from " + f.id(node) + " to " + f.id(destination));
        }
        enqueue(node, level);
        flow[node] += amount;
    }

    private void enqueue(int node, int level) {
        if (queuedIn[node] == epoch) {
            return;
        }
        queuedIn[node] = epoch;
        int[] b = bucket[level];
        if (b == null) {
            b = new int[Math.min(n, 64)];
            bucket[level] = b;
        } else if (bucketSize[level] == b.length) {
            b = java.util.Arrays.copyOf(b, Math.min(n, b.length * 2));
            bucket[level] = b;
        }
        b[bucketSize[level]++] = node;
        if (level > maxLevel) {
            maxLevel = level;
        }
    }

    /**
     * Moves every seeded flow to {@code destination} hop by hop, adding the traffic on each
     * directed link to {@code out}. With {@code intercept}, flows stop one hop short (see class
     * comment) and their amounts are left in {@link #arrivals}.
     */
    public void propagateTo(int destination, boolean intercept, LinkLoads out) {
        arrivalCount = 0;
        int base = destination * n;
        for (int level = maxLevel; level >= 1; level--) {
            int[] b = bucket[level];
            for (int i = 0; i < bucketSize[level]; i++) {
                int u = b[i];
                double fu = flow[u];
                flow[u] = 0;
                if (intercept && level == 1) {
                    arrivalNode[arrivalCount] = u;
                    arrivalAmount[arrivalCount++] = fu;
                    continue;
                }
                int next = level - 1;
                if (nhStart != null) {
                    int from = nhStart[base + u];
                    int to = nhStart[base + u + 1];
                    double share = fu / (to - from);
                    for (int k = from; k < to; k++) {
                        int l = nhLink[k];
                        out.add(l, share);
                        if (next > 0) {
                            int w = linkTo[l];
                            enqueue(w, next);
                            flow[w] += share;
                        }
                    }
                    continue;
                }
                int hops = 0;
                int end = f.adjEnd(u);
                for (int k = f.adjStart(u); k < end; k++) {
                    if (dist[base + f.adjNode(k)] == next) {
                        hops++;
                    }
                }
                double share = fu / hops;
                for (int k = f.adjStart(u); k < end; k++) {
                    int w = f.adjNode(k);
                    if (dist[base + w] == next) {
                        out.add(f.adjLink(k), share);
                        if (next > 0) {
                            enqueue(w, next);
                            flow[w] += share;
                        }
                    }
                }
            }
            bucketSize[level] = 0;
        }
        maxLevel = -1;
        epoch++;
    }

    /** Number of arrivals left by the last intercepted propagation. */
    public int arrivals() {
        return arrivalCount;
    }

    public int arrivalNode(int i) {
        return arrivalNode[i];
    }

    public double arrivalAmount(int i) {
        return arrivalAmount[i];
    }
}
