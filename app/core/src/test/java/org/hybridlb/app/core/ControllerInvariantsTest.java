package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.ServiceEntry;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.view.AssignmentView;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.model.Wcmp;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Random sequences (seeded) of operator changes, DIP failures, switch and SMux failures, traffic
 * shifts and one-shot device faults (an SMux refusing a table, a switch dropping an install);
 * after every step, once the controller is idle, the devices must hold exactly the converged
 * state: every VIP on every live SMux with its healthy DIPs, at most one live HMux holding it
 * with the same buckets, aggregates routed to the live SMuxes, no error — and one more
 * reconcile changes nothing (after a fault, within a few rounds).
 */
class ControllerInvariantsTest {
    final Topology topo = FatTree.generate(4);

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void devicesAlwaysConvergeToTheDesiredState(long seed) {
        FakeFabric fabric = new FakeFabric(topo);
        Controller c = new Controller(ControllerConfig.defaults().withInterval(Duration.ZERO), fabric.ports(
                new FakeFabric.MemoryStore()));
        c.start();
        try {
            SplittableRandom rng = new SplittableRandom(seed);
            List<String> tors = new ArrayList<>();
            topo.switches.stream().filter(s -> s.role == SwitchRole.TOR).forEach(s -> tors.add(s.id));
            Map<String, Double> load = new HashMap<>();
            boolean faulty = false;
            for (int step = 0; step < 40; step++) {
                String op = apply(c, fabric, rng, load, tors);
                c.awaitIdle(30_000);
                String where = "seed " + seed + " step " + step + " (" + op + ")";
                if (!faulty) {
                    check(c, fabric, where);
                }
                // converged: another reconcile with nothing new changes nothing. After a device
                // fault (a rollback, or a repair the device dropped) the next rounds must get there.
                int rounds = 0;
                List<String> calls;
                do {
                    fabric.takeLog();
                    c.requestReconcile("idempotence check");
                    c.awaitIdle(30_000);
                    calls = fabric.takeLog();
                } while (!calls.isEmpty() && faulty && ++rounds < 4);
                assertEquals(List.of(), calls, where);
                check(c, fabric, where);
                faulty = fabric.failPuts > 0 || fabric.lies > 0;
            }
        } finally {
            c.close();
        }
    }

    private String apply(Controller c, FakeFabric fabric, SplittableRandom rng, Map<String, Double> load,
                         List<String> tors) {
        String vip = "10.100.0." + (1 + rng.nextInt(8));
        String dip = topo.hosts.get(rng.nextInt(topo.hosts.size())).ip;
        int kind = rng.nextInt(12);
        try {
            switch (kind) {
                case 0:
                case 1: {
                    StringBuilder dips = new StringBuilder();
                    Set<String> chosen = new LinkedHashSet<>();
                    int n = 1 + rng.nextInt(3);
                    while (chosen.size() < n) {
                        chosen.add(topo.hosts.get(rng.nextInt(topo.hosts.size())).ip);
                    }
                    for (String d : chosen) {
                        dips.append(dips.length() == 0 ? "" : ",").append(dip(d, rng));
                    }
                    c.createVip("{\"vip\":\"" + vip + "\",\"aggregate\":\"10.100.0.0/16\",\"ports\":[{\"proto\":\"tcp\","
                            + "\"port\":80,\"dips\":[" + dips + "]}]}");
                    load.put(vip, 1e7 + rng.nextDouble() * 4e8);
                    setTraffic(fabric, load, tors, rng);
                    return "add VIP " + vip;
                }
                case 2:
                    c.deleteVip(vip);
                    return "delete VIP " + vip;
                case 3:
                    c.addDip(vip, dip(dip, rng));
                    return "add DIP " + dip + " to " + vip;
                case 10: {
                    // new weights for the DIPs of a VIP (WCMP units added, removed, drained, back)
                    Vip now = c.vip(vip);
                    StringBuilder dips = new StringBuilder();
                    for (Dip d : now.ports.get(0).dips) {
                        dips.append(dips.length() == 0 ? "" : ",").append(dip(d.ip, rng));
                    }
                    c.replaceVip(vip, "{\"vip\":\"" + vip + "\",\"aggregate\":\"10.100.0.0/16\",\"ports\":[{\"proto\":\"tcp\","
                            + "\"port\":80,\"dips\":[" + dips + "]}]}");
                    return "new weights " + dips + " for " + vip;
                }
                case 4:
                    c.removeDip(vip, dip, null, null);
                    return "remove DIP " + dip + " from " + vip;
                case 5: {
                    boolean healthy = fabric.unhealthy.contains(dip);
                    if (healthy) {
                        fabric.unhealthy.remove(dip);
                    } else {
                        fabric.unhealthy.add(dip);
                    }
                    c.dipHealthChanged(dip, healthy);
                    return "DIP " + dip + (healthy ? " recovers" : " fails");
                }
                case 6: {
                    String sw = topo.switches.get(rng.nextInt(topo.switches.size())).id;
                    if (fabric.down.remove(sw)) {
                        c.switchUp(sw);
                        return "switch " + sw + " up";
                    }
                    fabric.down.add(sw);
                    c.switchDown(sw);
                    return "switch " + sw + " down";
                }
                case 7: {
                    String m = topo.smuxes.get(rng.nextInt(topo.smuxes.size())).id;
                    if (!fabric.live.remove(m)) {
                        fabric.live.add(m);
                        fabric.tables.remove(m); // restarted empty
                    }
                    c.smuxesChanged(fabric.liveSmuxes());
                    return "SMux " + m + (fabric.live.contains(m) ? " back" : " down");
                }
                case 8:
                    load.replaceAll((k, v) -> 1e7 + rng.nextDouble() * 4e8);
                    setTraffic(fabric, load, tors, rng);
                    c.reassignNow();
                    return "traffic shift";
                case 9:
                    c.reassignNow();
                    return "reassign";
                default:
                    // a device misbehaves once, during whatever change comes next
                    if (rng.nextBoolean()) {
                        fabric.failPuts = 1;
                        return "an SMux will refuse one table";
                    }
                    fabric.lieOn = topo.switches.get(rng.nextInt(topo.switches.size())).id;
                    fabric.lies = 1;
                    return "switch " + fabric.lieOn + " will drop one install";
            }
        } catch (ApiException e) {
            return "refused: " + e.getMessage();
        }
    }

    /** A DIP of weight 0 to 3 (absent: 1); weight 0 is a drained DIP. */
    private static String dip(String ip, SplittableRandom rng) {
        int w = rng.nextInt(5) - 1;
        return "{\"ip\":\"" + ip + "\"" + (w < 0 ? "" : ",\"weight\":" + w) + "}";
    }

    private static void setTraffic(FakeFabric fabric, Map<String, Double> load, List<String> tors,
                                   SplittableRandom rng) {
        List<VipTraffic> vt = new ArrayList<>();
        load.forEach((v, bps) -> vt.add(new VipTraffic(v, Map.of(tors.get(rng.nextInt(tors.size())), bps), null)));
        synchronized (fabric) {
            fabric.traffic = new TrafficInterval(0, 0, 10, vt);
        }
    }

    private void check(Controller c, FakeFabric fabric, String where) {
        AssignmentView a = c.assignment();
        assertEquals(null, a.lastError, where + ": " + a);
        Map<String, String> installed = new TreeMap<>(a.installed);
        Map<String, Vip> desired = new TreeMap<>();
        c.vips().forEach(v -> desired.put(v.vip, v));
        assertEquals(desired.keySet(), installed.keySet(), where + ": every desired VIP and only those are installed");

        Map<String, String> torOf = new HashMap<>();
        fabric.topology.hosts.forEach(h -> torOf.put(h.ip, h.tor));
        // the healthy DIPs of every service, each with its WCMP units (0: drained)
        Map<String, Map<String, Map<String, Integer>>> healthyPools = new HashMap<>();
        for (Vip v : desired.values()) {
            Map<String, Map<String, Integer>> pools = new TreeMap<>();
            for (VipPort p : v.ports) {
                List<Dip> healthy = new ArrayList<>();
                for (Dip d : p.dips) {
                    // healthy: its agent says so and its ToR is up and not cut off from the served
                    // part of the fabric (else the fabric cannot reach it)
                    if (!fabric.unhealthy.contains(d.ip) && !fabric.down.contains(torOf.get(d.tunnelEndpoint()))
                            && !a.downSwitches.contains(torOf.get(d.tunnelEndpoint()))) {
                        healthy.add(d);
                    }
                }
                int[] units = Wcmp.units(healthy);
                Map<String, Integer> pool = new TreeMap<>();
                for (int i = 0; i < units.length; i++) {
                    pool.put(healthy.get(i).ip, units[i]);
                }
                pools.put(p.proto + "/" + p.port, pool);
            }
            healthyPools.put(v.vip, pools);
        }
        Map<String, List<Bucket>> smuxBuckets = new HashMap<>();
        for (String m : fabric.live) {
            SmuxTable t = fabric.tables.getOrDefault(m, new SmuxTable(0, List.of()));
            Set<String> vips = new HashSet<>();
            for (SmuxTable.Entry e : t.vips) {
                vips.add(e.vip);
                Map<String, Map<String, Integer>> pools = new TreeMap<>();
                e.ports.forEach(p -> {
                    Map<String, Integer> units = new TreeMap<>();
                    p.dips.forEach(d -> units.merge(d.ip, d.weight, Integer::sum));
                    pools.put(p.proto + "/" + p.port, units);
                    Set<Integer> ids = new HashSet<>();
                    p.dips.forEach(d -> assertTrue(ids.add(d.bucketId), where + ": bucket ids of " + e.vip + " " + p.dips));
                    p.dips.forEach(d -> assertTrue(d.weight <= 1, where + ": a bucket is a WCMP unit " + p.dips));
                });
                assertEquals(healthyPools.get(e.vip), pools, where + ": SMux " + m + " pool of " + e.vip);
                smuxBuckets.put(e.vip, new VipEntry(e.vip, e.aggregate, List.of(new ServiceEntry("tcp", 80,
                        e.ports.get(0).dips))).hmuxForm().normalized().ports.get(0).dips);
            }
            assertEquals(desired.keySet(), vips, where + ": SMux " + m + " holds every VIP");
        }
        for (Map.Entry<String, String> e : installed.entrySet()) {
            String at = e.getValue();
            if (Assignment.SMUX.equals(at)) {
                continue;
            }
            assertFalse(fabric.down.contains(at), where + ": " + e.getKey() + " placed on down switch " + at);
            VipEntry onSwitch = fabric.switches.get(at).get(e.getKey());
            assertTrue(onSwitch != null, where + ": " + e.getKey() + " missing on " + at);
            if (smuxBuckets.containsKey(e.getKey())) {
                assertEquals(smuxBuckets.get(e.getKey()), onSwitch.ports.get(0).dips,
                        where + ": HMux and SMux buckets of " + e.getKey());
            }
        }
        for (Map.Entry<String, Map<String, VipEntry>> sw : fabric.switches.entrySet()) {
            if (fabric.down.contains(sw.getKey()) || a.downSwitches.contains(sw.getKey())) { // down or cut off
                continue;
            }
            for (String v : sw.getValue().keySet()) {
                assertEquals(sw.getKey(), installed.get(v), where + ": stray " + v + " on " + sw.getKey());
            }
        }
        Set<String> live = new LinkedHashSet<>();
        topo.smuxes.forEach(m -> {
            if (fabric.live.contains(m.id)) {
                live.add(m.id);
            }
        });
        if (desired.isEmpty() || live.isEmpty()) {
            assertTrue(fabric.groups.isEmpty(), where + ": groups " + fabric.groups);
        } else {
            assertEquals(Map.of("10.100.0.0/16", live), fabric.groups, where + ": aggregate group");
        }
    }
}
