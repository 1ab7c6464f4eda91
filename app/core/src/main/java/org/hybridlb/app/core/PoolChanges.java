package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.Wcmp;

/**
 * How a VIP's pools change on the data path, where a DIP is as many buckets as it has WCMP units
 * ({@link Wcmp}; the configurations here are in units, {@link Wcmp#reduced}). An HMux only hashes:
 * a bucket taken out moves only its own flows, a bucket added takes flows from the others, and a
 * drained DIP's open connections would move too. So:
 * <ul>
 * <li>a DIP removed, failed or moved to another tunnel endpoint loses its buckets in place, and a
 *   lowered weight loses its extra units in place (Duet §3.5.1: only their connections move);</li>
 * <li>a pool that grows (a DIP added or moved, a weight raised) or drains a DIP (weight 0: no new
 *   flows, open connections stay) needs the SMuxes, which pin every connection (§3.5.2): the VIP is
 *   held there ({@link PoolGrowthHolds}), its existing DIPs change in place once no HMux holds it,
 *   the planner adds its new DIPs, and it returns to an HMux once no pinned connection would change
 *   DIP there.</li>
 * </ul>
 * A change of the pool's gcd re-scales every DIP's units (weights 2:4 going to 2:3 make 1:2 into
 * 2:3 units): more buckets change then than the edited DIP's.
 * <p>
 * A cheetah VIP's pool changes in place whole, DIPs added and drained too, on its HMux as on the
 * SMuxes: its connections are kept by their cookies, which every mux it can be on decodes (a
 * switch that cannot stays no HMux of it, {@link HashContracts}), not by the buckets; the hosts
 * encode with their new server ids before the pool changes ({@link HostCookies} runs first).
 */
final class PoolChanges {
    private PoolChanges() {
    }

    /**
     * What {@code installed} becomes at once on the way to {@code want} (under {@code want}'s
     * aggregate): the services {@code want} keeps, each with the DIPs {@code want} keeps on the same
     * tunnel endpoint. On an HMux ({@code onHmux}) a DIP keeps the fewer of its installed and wanted
     * units, and a DIP being drained keeps its units; on the SMuxes alone every kept DIP takes its
     * wanted units. A cheetah VIP's kept services take their wanted pools whole.
     */
    static Vip inPlace(Vip installed, Vip want, boolean onHmux) {
        boolean whole = want.cheetah();
        Map<String, VipPort> wanted = byService(want);
        List<VipPort> ports = new ArrayList<>();
        for (VipPort p : installed.ports) {
            VipPort w = wanted.get(VipConfigs.key(p));
            if (w == null) {
                continue;
            }
            if (whole) {
                ports.add(w);
                continue;
            }
            Map<String, Dip> there = byIp(w);
            List<Dip> dips = new ArrayList<>();
            for (Dip d : p.dips) {
                Dip x = there.get(d.ip);
                if (x == null || !sameEndpoint(d, x)) {
                    continue;
                }
                int units = x.weight;
                if (onHmux) {
                    units = x.weight == 0 ? d.weight : Math.min(d.weight, x.weight);
                }
                dips.add(new Dip(x.ip, units, x.hostIp));
            }
            ports.add(new VipPort(p.proto, p.port, dips));
        }
        return Wcmp.reduced(want.withPorts(ports));
    }

    /**
     * Whether going from {@code installed} to {@code want} needs the SMuxes: a DIP added or moved to
     * another tunnel endpoint with units, more units for a DIP, or a DIP drained.
     */
    static boolean needsSmuxes(Vip installed, Vip want) {
        Map<String, VipPort> have = byService(installed);
        for (VipPort w : want.ports) {
            VipPort p = have.get(VipConfigs.key(w));
            Map<String, Dip> there = p == null ? Map.of() : byIp(p);
            for (Dip x : w.dips) {
                Dip d = there.get(x.ip);
                boolean added = d == null || !sameEndpoint(d, x);
                if (added ? x.weight > 0 : x.weight > d.weight || (x.weight == 0 && d.weight > 0)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The configuration the migration planner goes to: {@code want}, with every DIP that
     * {@code installed} has on the same endpoint as {@code installed} has it. Those change in place
     * ({@link #inPlace}); the planner only adds DIPs (as a DIP removed and added again, a changed
     * one would lose its pinned connections between the two waves). {@code want} itself when no
     * installed DIP differs from it.
     */
    static Vip planned(Vip installed, Vip want) {
        if (installed == null) {
            return want;
        }
        Map<String, VipPort> have = byService(installed);
        List<VipPort> ports = new ArrayList<>();
        boolean same = true;
        for (VipPort w : want.ports) {
            VipPort p = have.get(VipConfigs.key(w));
            Map<String, Dip> there = p == null ? Map.of() : byIp(p);
            List<Dip> dips = new ArrayList<>();
            for (Dip x : w.dips) {
                Dip d = there.get(x.ip);
                boolean kept = d != null && sameEndpoint(d, x) && d.weight != x.weight;
                dips.add(kept ? d : x);
                same &= !kept;
            }
            ports.add(new VipPort(w.proto, w.port, dips));
        }
        return same ? want : want.withPorts(ports);
    }

    private static boolean sameEndpoint(Dip a, Dip b) {
        return Objects.equals(a.tunnelEndpoint(), b.tunnelEndpoint());
    }

    private static Map<String, VipPort> byService(Vip v) {
        Map<String, VipPort> out = new HashMap<>();
        v.ports.forEach(p -> out.put(VipConfigs.key(p), p));
        return out;
    }

    private static Map<String, Dip> byIp(VipPort p) {
        Map<String, Dip> out = new HashMap<>();
        p.dips.forEach(d -> out.put(d.ip, d));
        return out;
    }
}
