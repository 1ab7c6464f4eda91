package org.hybridlb.app.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.hmux.ItemKey;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchDelta;
import org.hybridlb.app.core.hmux.SwitchIntent;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Topology;

/**
 * Splits one batch of switch deltas into phases sent one after the other (make before break), so
 * that while they are applied, in whatever order the switches of a phase take theirs, a packet of a
 * VIP whose HMux changes reaches an HMux holding the VIP's entries or an SMux, and never loops:
 * <ol>
 * <li>entries written (a new HMux serves before anything is routed to it), with every other
 *     change that is not a route or an entry removal;</li>
 * <li>routes, one phase per hop distance: a route towards an HMux is written on the switches next
 *     to it first, then one hop farther, ...; a route is removed on the switches farthest from its
 *     old HMux first, then one hop closer. So the switches routing a VIP towards an HMux always
 *     include every next hop they route it to, and a packet that met such a switch goes on to that
 *     HMux. Removed the other way round (the old HMux's neighbours first, as one batch does at
 *     random), a neighbour sends the VIP up its aggregate to a switch still routing it back: the
 *     packet loops until its TTL runs out;</li>
 * <li>entries removed (the old HMux serves what was already routed to it).</li>
 * </ol>
 * Distances are hops over the links between live switches, the shortest paths the routes follow.
 * Each phase's deltas carry the intent the switch holds after that phase as their target.
 */
final class DeltaPhases {
    private DeltaPhases() {
    }

    /**
     * The phases of {@code deltas}, empty ones left out: {@code held} is what each switch holds
     * before them (its intent), {@code live} the switches routes may cross.
     */
    static List<Map<String, SwitchDelta>> of(Map<String, SwitchDelta> deltas, Map<String, SwitchIntent> held,
                                             Topology topology, Collection<String> live) {
        Map<String, Map<String, Integer>> hops = new HashMap<>();   // HMux -> switch -> hops from it
        Map<String, int[]> routeSteps = new HashMap<>();
        int far = 1;
        for (Map.Entry<String, SwitchDelta> x : deltas.entrySet()) {
            SwitchIntent before = held.getOrDefault(x.getKey(), SwitchIntent.EMPTY);
            for (Map.Entry<String, String> r : x.getValue().putRoutes.entrySet()) {
                far = Math.max(far, distance(hops, topology, live, r.getValue(), x.getKey()));
            }
            for (String vip : x.getValue().removeRoutes) {
                String was = before.routes.get(vip);
                if (was != null) {
                    far = Math.max(far, distance(hops, topology, live, was, x.getKey()));
                }
            }
        }
        int routePhases = far;
        List<Map<String, SwitchDelta.Builder>> phases = new ArrayList<>();
        for (int i = 0; i < routePhases + 2; i++) {
            phases.add(new LinkedHashMap<>());
        }
        int out = routePhases + 1;
        for (Map.Entry<String, SwitchDelta> x : deltas.entrySet()) {
            String sw = x.getKey();
            SwitchDelta d = x.getValue();
            SwitchIntent before = held.getOrDefault(sw, SwitchIntent.EMPTY);
            SwitchDelta.Builder first = builder(phases, 0, sw);
            first.putEntries.putAll(d.putEntries);
            first.withdrawTowards.addAll(d.withdrawTowards);
            first.putAggregates.putAll(d.putAggregates);
            first.removeAggregates.addAll(d.removeAggregates);
            first.fallback = d.fallback;
            first.foreign.addAll(d.foreign);
            first.blocked.putAll(d.blocked);
            if (!d.removeEntries.isEmpty()) {
                builder(phases, out, sw).removeEntries.addAll(d.removeEntries);
            }
            Map<String, Integer> routePhase = new HashMap<>();
            d.putRoutes.forEach((vip, hmux) -> {
                int p = Math.min(routePhases, distance(hops, topology, live, hmux, sw));
                routePhase.put(vip, p);
                builder(phases, p, sw).putRoutes.put(vip, hmux);
            });
            for (String vip : d.removeRoutes) {
                String was = before.routes.get(vip);
                int p = was == null ? routePhases : routePhases + 1 - Math.min(routePhases,
                        distance(hops, topology, live, was, sw));
                routePhase.put(vip, p);
                builder(phases, p, sw).removeRoutes.add(vip);
            }
            d.rewrite.forEach((k, why) -> builder(phases, phaseOf(k, d, routePhase, out), sw).rewrite.put(k, why));
        }
        List<Map<String, SwitchDelta>> result = new ArrayList<>();
        Map<String, SwitchIntent> now = new HashMap<>(held);
        for (Map<String, SwitchDelta.Builder> phase : phases) {
            Map<String, SwitchDelta> built = new LinkedHashMap<>();
            phase.forEach((sw, b) -> {
                b.target = deltas.get(sw).target;     // the cookies of the entries it writes
                SwitchIntent after = now.getOrDefault(sw, SwitchIntent.EMPTY).after(b.build());
                b.target = deltas.get(sw).target == null ? null : after;
                SwitchDelta d = b.build();
                if (!d.isEmpty()) {
                    built.put(sw, d);
                    now.put(sw, after);
                }
            });
            if (!built.isEmpty()) {
                result.add(built);
            }
        }
        return result;
    }

    private static SwitchDelta.Builder builder(List<Map<String, SwitchDelta.Builder>> phases, int i, String sw) {
        return phases.get(i).computeIfAbsent(sw, k -> SwitchDelta.builder());
    }

    /** An item rewritten goes with its write or removal; the rest with the first phase. */
    private static int phaseOf(ItemKey k, SwitchDelta d, Map<String, Integer> routePhase, int out) {
        if (k.item == ItemKey.Item.ROUTE) {
            return routePhase.getOrDefault(k.name, 0);
        }
        if (k.item == ItemKey.Item.ENTRY) {
            ServiceMatch m = k.match;
            return d.removeEntries.contains(m) && !d.putEntries.containsKey(m) ? out : 0;
        }
        return 0;
    }

    /** Hops from {@code from} to {@code hmux} over live switches; unreachable: 1 (such a route is not written). */
    private static int distance(Map<String, Map<String, Integer>> hops, Topology t, Collection<String> live,
                                String hmux, String from) {
        Integer d = hops.computeIfAbsent(hmux, h -> bfs(t, Set.copyOf(live), h)).get(from);
        return d == null || d < 1 ? 1 : d;
    }

    private static Map<String, Integer> bfs(Topology t, Set<String> live, String start) {
        Map<String, List<String>> next = new HashMap<>();
        for (Link l : t.links) {
            if (live.contains(l.a) && live.contains(l.b)) {
                next.computeIfAbsent(l.a, k -> new ArrayList<>()).add(l.b);
                next.computeIfAbsent(l.b, k -> new ArrayList<>()).add(l.a);
            }
        }
        Map<String, Integer> dist = new HashMap<>();
        Deque<String> todo = new ArrayDeque<>();
        dist.put(start, 0);
        todo.add(start);
        while (!todo.isEmpty()) {
            String u = todo.poll();
            for (String w : next.getOrDefault(u, List.of())) {
                if (dist.putIfAbsent(w, dist.get(u) + 1) == null) {
                    todo.add(w);
                }
            }
        }
        return dist;
    }
}
