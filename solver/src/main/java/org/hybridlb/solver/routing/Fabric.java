package org.hybridlb.solver.routing;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;

/**
 * Indexed, immutable view of the switch fabric for routing: switches 0..n-1 (in topology order),
 * directed links 0..2m-1 (topology link i is 2i = a→b and 2i+1 = b→a, each with the full
 * per-direction capacity), hop distances between all switches, and the pods.
 *
 * <p>A pod is <em>symmetric</em> when every ToR of the pod links to exactly the same set of
 * switches, all of them aggs of that pod (the pod's agg layer). For such pods every flow that
 * enters or leaves a ToR of the pod is identical outside the pod whichever ToR it is, which
 * is what makes the container shortcut of Duet §3.4.2 (Fig. 3.5) exact; see {@link EcmpRouter}.
 */
public final class Fabric {
    public static final short UNREACHABLE = Short.MAX_VALUE;

    private final int n;
    private final String[] ids;
    private final SwitchRole[] roles;
    private final int[] podOf;            // dense pod index, -1 for core switches
    private final Map<String, Integer> indexOf = new HashMap<>();
    private final int[] linkFrom;
    private final int[] linkTo;
    private final double[] linkBps;
    private final int[] adjStart;
    private final int[] adjNode;
    private final int[] adjLink;
    private final short[] dist;           // dist[d * n + u]: hops from u to d
    private final int[] podLabels;        // dense pod index -> pod number in the topology
    private final int[][] podTors;
    private final int[][] podAggs;
    private final boolean[] podSymmetric;
    private final int[] cores;
    private final int[] torUp;            // torUp[tor * maxAggs + j]: link tor -> podAggs[j]
    private final int[] torDown;          // link podAggs[j] -> tor
    private final int maxAggs;
    /** Next-hop links towards each destination: nhLink[nhStart[d * n + u] .. nhStart[d * n + u + 1]). */
    private final int[] nhStart;
    private final int[] nhLink;
    /** Above this many next-hop entries the table is not built and routers scan adjacency. */
    public static final long MAX_NEXT_HOP_ENTRIES = 40_000_000L;

    public Fabric(Topology t) {
        this(t, true);
    }

    /**
     * @param nextHopTable build the per-destination next-hop table (faster routing, about a
     *     second and some 70 MB at paper scale); without it routers scan adjacency lists
     */
    public Fabric(Topology t, boolean nextHopTable) {
        n = t.switches.size();
        ids = new String[n];
        roles = new SwitchRole[n];
        podOf = new int[n];
        TreeMap<Integer, Integer> podIndex = new TreeMap<>();
        for (Switch s : t.switches) {
            if (s.pod != null) {
                podIndex.putIfAbsent(s.pod, 0);
            }
        }
        int p = 0;
        for (Map.Entry<Integer, Integer> e : podIndex.entrySet()) {
            e.setValue(p++);
        }
        podLabels = new int[podIndex.size()];
        podIndex.forEach((label, idx) -> podLabels[idx] = label);
        int coreCount = 0;
        for (int i = 0; i < n; i++) {
            Switch s = t.switches.get(i);
            ids[i] = s.id;
            roles[i] = s.role;
            podOf[i] = s.pod == null ? -1 : podIndex.get(s.pod);
            if (indexOf.put(s.id, i) != null) {
                throw new IllegalArgumentException("duplicate switch id " + s.id);
            }
            if (s.role == SwitchRole.CORE) {
                coreCount++;
            }
        }
        cores = new int[coreCount];
        for (int i = 0, c = 0; i < n; i++) {
            if (roles[i] == SwitchRole.CORE) {
                cores[c++] = i;
            }
        }
        List<Link> links = t.links;
        int m = links.size();
        linkFrom = new int[2 * m];
        linkTo = new int[2 * m];
        linkBps = new double[2 * m];
        int[] degree = new int[n];
        for (int i = 0; i < m; i++) {
            Link l = links.get(i);
            int a = index(l.a);
            int b = index(l.b);
            linkFrom[2 * i] = a;
            linkTo[2 * i] = b;
            linkFrom[2 * i + 1] = b;
            linkTo[2 * i + 1] = a;
            linkBps[2 * i] = l.capacityBps;
            linkBps[2 * i + 1] = l.capacityBps;
            degree[a]++;
            degree[b]++;
        }
        adjStart = new int[n + 1];
        for (int i = 0; i < n; i++) {
            adjStart[i + 1] = adjStart[i] + degree[i];
        }
        adjNode = new int[2 * m];
        adjLink = new int[2 * m];
        int[] fill = Arrays.copyOf(adjStart, n);
        for (int l = 0; l < 2 * m; l++) {
            int u = linkFrom[l];
            adjNode[fill[u]] = linkTo[l];
            adjLink[fill[u]] = l;
            fill[u]++;
        }
        dist = new short[n * n];
        computeDistances();
        int pods = podLabels.length;
        podTors = new int[pods][];
        podAggs = new int[pods][];
        podSymmetric = new boolean[pods];
        for (int q = 0; q < pods; q++) {
            podTors[q] = members(q, SwitchRole.TOR);
            podAggs[q] = members(q, SwitchRole.AGG);
            podSymmetric[q] = checkSymmetric(q);
        }
        long entries = 0;
        for (int d = 0; nextHopTable && d < n; d++) {
            for (int u = 0; u < n; u++) {
                entries += countNextHops(u, d);
            }
        }
        if (nextHopTable && entries <= MAX_NEXT_HOP_ENTRIES && (long) n * n < Integer.MAX_VALUE) {
            nhStart = new int[n * n + 1];
            nhLink = new int[(int) entries];
            int k = 0;
            for (int d = 0; d < n; d++) {
                int base = d * n;
                for (int u = 0; u < n; u++) {
                    nhStart[base + u] = k;
                    short want = (short) (dist[base + u] - 1);
                    if (u == d || dist[base + u] == UNREACHABLE) {
                        continue;
                    }
                    for (int j = adjStart[u]; j < adjStart[u + 1]; j++) {
                        if (dist[base + adjNode[j]] == want) {
                            nhLink[k++] = adjLink[j];
                        }
                    }
                }
            }
            nhStart[n * n] = k;
        } else {
            nhStart = null;
            nhLink = null;
        }
        int ma = 1;
        for (int q = 0; q < pods; q++) {
            ma = Math.max(ma, podAggs[q].length);
        }
        maxAggs = ma;
        torUp = new int[n * maxAggs];
        torDown = new int[n * maxAggs];
        Arrays.fill(torUp, -1);
        Arrays.fill(torDown, -1);
        for (int q = 0; q < pods; q++) {
            if (!podSymmetric[q]) {
                continue;
            }
            for (int tor : podTors[q]) {
                for (int j = 0; j < podAggs[q].length; j++) {
                    torUp[tor * maxAggs + j] = linkBetween(tor, podAggs[q][j]);
                    torDown[tor * maxAggs + j] = linkBetween(podAggs[q][j], tor);
                }
            }
        }
    }

    private int countNextHops(int u, int d) {
        int base = d * n;
        if (u == d || dist[base + u] == UNREACHABLE) {
            return 0;
        }
        short want = (short) (dist[base + u] - 1);
        int c = 0;
        for (int j = adjStart[u]; j < adjStart[u + 1]; j++) {
            if (dist[base + adjNode[j]] == want) {
                c++;
            }
        }
        return c;
    }

    /** Whether the next-hop table was built (small enough); see {@link #MAX_NEXT_HOP_ENTRIES}. */
    boolean hasNextHopTable() {
        return nhStart != null;
    }

    int[] nextHopStart() {
        return nhStart;
    }

    int[] nextHopLinks() {
        return nhLink;
    }

    /** For a ToR of a symmetric pod: its link to the j-th agg of the pod. */
    public int torUplink(int tor, int j) {
        return torUp[tor * maxAggs + j];
    }

    /** For a ToR of a symmetric pod: the link from the j-th agg of the pod to it. */
    public int torDownlink(int tor, int j) {
        return torDown[tor * maxAggs + j];
    }

    private int[] members(int pod, SwitchRole role) {
        return java.util.stream.IntStream.range(0, n)
                .filter(i -> podOf[i] == pod && roles[i] == role).toArray();
    }

    /** Every ToR of the pod has exactly the pod's aggs as neighbours (one link each). */
    private boolean checkSymmetric(int q) {
        int[] aggs = podAggs[q];
        if (podTors[q].length == 0 || aggs.length == 0) {
            return false;
        }
        for (int tor : podTors[q]) {
            if (adjStart[tor + 1] - adjStart[tor] != aggs.length) {
                return false;
            }
            for (int a : aggs) {
                if (linkBetween(tor, a) < 0) {
                    return false;
                }
            }
        }
        return true;
    }

    private void computeDistances() {
        Arrays.fill(dist, UNREACHABLE);
        int[] queue = new int[n];
        for (int d = 0; d < n; d++) {
            int base = d * n;
            int head = 0;
            int tail = 0;
            queue[tail++] = d;
            dist[base + d] = 0;
            while (head < tail) {
                int u = queue[head++];
                short du = dist[base + u];
                for (int k = adjStart[u]; k < adjStart[u + 1]; k++) {
                    int w = adjNode[k];
                    if (dist[base + w] == UNREACHABLE) {
                        dist[base + w] = (short) (du + 1);
                        queue[tail++] = w;
                    }
                }
            }
        }
    }

    public int switchCount() {
        return n;
    }

    public int linkCount() {
        return linkFrom.length;
    }

    public String id(int s) {
        return ids[s];
    }

    public SwitchRole role(int s) {
        return roles[s];
    }

    /** Dense pod index (0..podCount-1), or -1 for a core switch. */
    public int pod(int s) {
        return podOf[s];
    }

    /** The pod number as written in the topology for a dense pod index. */
    public int podLabel(int pod) {
        return podLabels[pod];
    }

    public int podCount() {
        return podLabels.length;
    }

    public int[] podTors(int pod) {
        return podTors[pod];
    }

    public int[] podAggs(int pod) {
        return podAggs[pod];
    }

    public boolean podSymmetric(int pod) {
        return podSymmetric[pod];
    }

    /** True when s is a ToR of a symmetric pod (its traffic outside the pod is the pod's). */
    public boolean inSymmetricPod(int s) {
        return roles[s] == SwitchRole.TOR && podOf[s] >= 0 && podSymmetric[podOf[s]];
    }

    public int[] cores() {
        return cores;
    }

    public int index(String id) {
        Integer i = indexOf.get(id);
        if (i == null) {
            throw new IllegalArgumentException("unknown switch '" + id + "'");
        }
        return i;
    }

    public Integer indexOrNull(String id) {
        return indexOf.get(id);
    }

    public int linkFrom(int l) {
        return linkFrom[l];
    }

    public int linkTo(int l) {
        return linkTo[l];
    }

    public double linkBps(int l) {
        return linkBps[l];
    }

    public String linkName(int l) {
        return ids[linkFrom[l]] + "->" + ids[linkTo[l]];
    }

    /** Directed link u→w, or -1. */
    public int linkBetween(int u, int w) {
        for (int k = adjStart[u]; k < adjStart[u + 1]; k++) {
            if (adjNode[k] == w) {
                return adjLink[k];
            }
        }
        return -1;
    }

    public int distance(int from, int to) {
        return dist[to * n + from];
    }

    int adjStart(int u) {
        return adjStart[u];
    }

    int adjEnd(int u) {
        return adjStart[u + 1];
    }

    int adjNode(int k) {
        return adjNode[k];
    }

    int adjLink(int k) {
        return adjLink[k];
    }

    short[] distances() {
        return dist;
    }

    /** Hosts by id and by address, resolved to the index of their ToR. */
    public static Map<String, Integer> torOfHosts(Topology t, Fabric f, boolean byIp) {
        Map<String, Integer> out = new HashMap<>();
        for (Host h : t.hosts) {
            out.put(byIp ? h.ip : h.id, f.index(h.tor));
        }
        return out;
    }

    /** Every switch reaches every other one. */
    public boolean connected() {
        return unreachableFromFirst() < 0;
    }

    /** A switch the first switch cannot reach, or -1 (the fabric is connected). */
    public int unreachableFromFirst() {
        for (int u = 0; u < n; u++) {
            if (dist[u] == UNREACHABLE) {
                return u;
            }
        }
        return -1;
    }
}
