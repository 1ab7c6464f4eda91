package org.hybridlb.app.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.TableCapacity;
import org.hybridlb.solver.model.Topology;

/**
 * The part of a partitioned fabric the controller serves from, and what it makes of the rest.
 *
 * <p>The live switches (those not reported down) and the links between them fall into connected
 * parts. The controller serves from the largest part (most switches; of equal ones, the part of
 * the first switch in topology order). Every live switch outside it is <em>cut off</em> and
 * counts as down: it can neither reach an HMux in the served part nor be reached from it, so its
 * VIPs fail over like those of a failed switch, routes towards it are withdrawn, and the DIPs
 * behind it are unreachable. A switch with no live fabric link at all (every fabric port down
 * while its control session stays up) is the simplest case.
 *
 * <p>The solver sees the served part: its switches (drained ones with no table entries), the
 * links between them, and the hosts and SMuxes attached to them; plus every down switch linked to
 * it, as before a failure, with its links but no table entries (its last traffic still counts
 * and nothing is placed on it). Cut-off switches, and down switches with no link into the served
 * part, are left out, so the solver always gets a connected fabric. Traffic sources outside it
 * are dropped by the caller (they are not nodes of this topology).
 *
 * <p>While the fabric is still being discovered (a host that just started, its links not all
 * known yet), nothing is cut off: the solver sees the whole topology, and an assignment it cannot
 * make on a fabric that looks disconnected keeps every VIP where it is.
 */
public final class ServingFabric {
    private final Topology served;
    private final Map<String, String> cutOff;

    private ServingFabric(Topology served, Map<String, String> cutOff) {
        this.served = served;
        this.cutOff = cutOff;
    }

    /**
     * @param down switches reported down (unavailable devices, missing bridges)
     * @param drained switches that stay in the fabric but offer no table entries
     */
    public static ServingFabric of(Topology t, Set<String> down, Set<String> drained) {
        return of(t, down, drained, false);
    }

    /** As {@link #of(Topology, Set, Set)}; {@code discovering}: cut nothing off, serve the whole topology. */
    public static ServingFabric of(Topology t, Set<String> down, Set<String> drained, boolean discovering) {
        if (discovering) {
            Set<String> all = new HashSet<>();
            t.switches.forEach(s -> all.add(s.id));
            Set<String> noEntries = new HashSet<>(drained);
            noEntries.addAll(down);
            return new ServingFabric(restrict(t, all, noEntries), Map.of());
        }
        Map<String, List<String>> neighbours = new HashMap<>();
        for (Link l : t.links) {
            if (!down.contains(l.a) && !down.contains(l.b) && !l.a.equals(l.b)) {
                neighbours.computeIfAbsent(l.a, k -> new ArrayList<>()).add(l.b);
                neighbours.computeIfAbsent(l.b, k -> new ArrayList<>()).add(l.a);
            }
        }
        List<Set<String>> parts = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        Set<String> main = Set.of();
        for (Switch s : t.switches) {
            if (down.contains(s.id) || seen.contains(s.id)) {
                continue;
            }
            Set<String> part = component(s.id, neighbours, seen);
            parts.add(part);
            if (part.size() > main.size()) {
                main = part;
            }
        }
        Map<String, String> cutOff = new LinkedHashMap<>();
        for (Set<String> part : parts) {
            if (part == main) {
                continue;
            }
            for (String sw : part) {
                cutOff.put(sw, neighbours.containsKey(sw)
                        ? "cut off from the served part of the fabric (its part has " + part.size()
                                + " switches, the served part " + main.size() + ")"
                        : "no live fabric link");
            }
        }
        Set<String> keep = new HashSet<>(main);
        Set<String> noEntries = new HashSet<>(drained);
        for (Link l : t.links) {
            for (String[] e : new String[][] {{l.a, l.b}, {l.b, l.a}}) {
                if (down.contains(e[0]) && main.contains(e[1])) {
                    keep.add(e[0]);
                    noEntries.add(e[0]);
                }
            }
        }
        return new ServingFabric(restrict(t, keep, noEntries), Collections.unmodifiableMap(cutOff));
    }

    private static Set<String> component(String start, Map<String, List<String>> neighbours, Set<String> seen) {
        Set<String> part = new HashSet<>();
        Deque<String> queue = new ArrayDeque<>();
        queue.add(start);
        seen.add(start);
        while (!queue.isEmpty()) {
            String u = queue.poll();
            part.add(u);
            for (String w : neighbours.getOrDefault(u, List.of())) {
                if (seen.add(w)) {
                    queue.add(w);
                }
            }
        }
        return part;
    }

    /** The switches of {@code keep} ({@code noEntries} without table entries) and what hangs off them. */
    private static Topology restrict(Topology t, Set<String> keep, Set<String> noEntries) {
        List<Switch> switches = new ArrayList<>();
        for (Switch s : t.switches) {
            if (keep.contains(s.id)) {
                switches.add(noEntries.contains(s.id)
                        ? new Switch(s.id, s.role, s.pod, new TableCapacity(s.tables.host, 0, 0)) : s);
            }
        }
        List<Link> links = new ArrayList<>();
        for (Link l : t.links) {
            if (keep.contains(l.a) && keep.contains(l.b)) {
                links.add(l);
            }
        }
        List<Host> hosts = new ArrayList<>();
        for (Host h : t.hosts) {
            if (keep.contains(h.tor)) {
                hosts.add(h);
            }
        }
        List<Smux> smuxes = new ArrayList<>();
        for (Smux m : t.smuxes) {
            if (keep.contains(m.tor)) {
                smuxes.add(m);
            }
        }
        return new Topology(t.name, switches, links, hosts, smuxes);
    }

    /** What the solver works on: the served part only. */
    public Topology topology() {
        return served;
    }

    /** Live switches outside the served part, with why, in topology order. */
    public Map<String, String> cutOff() {
        return cutOff;
    }
}
