package org.hybridlb.solver.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.hybridlb.solver.io.ModelChecks;
import org.hybridlb.solver.io.ModelIo;
import org.hybridlb.solver.io.Schema;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Ipv4;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;

/** Structure helpers shared by the topology tests. */
final class TopologyAsserts {
    private TopologyAsserts() {
    }

    static Map<String, Switch> byId(Topology t) {
        Map<String, Switch> m = new HashMap<>();
        t.switches.forEach(s -> m.put(s.id, s));
        return m;
    }

    static long count(Topology t, SwitchRole role) {
        return t.switches.stream().filter(s -> s.role == role).count();
    }

    private static Topology cachedTopology;
    private static Map<String, Switch> cachedById;
    private static Map<String, Set<String>> cachedAdjacency;

    /** Neighbours of a switch with the given role (adjacency built once per topology). */
    static synchronized Set<String> neighbours(Topology t, String id, SwitchRole role) {
        if (cachedTopology != t) {
            cachedById = byId(t);
            cachedAdjacency = new HashMap<>();
            for (Link l : t.links) {
                cachedAdjacency.computeIfAbsent(l.a, k -> new TreeSet<>()).add(l.b);
                cachedAdjacency.computeIfAbsent(l.b, k -> new TreeSet<>()).add(l.a);
            }
            cachedTopology = t;
        }
        Set<String> out = new TreeSet<>();
        for (String n : cachedAdjacency.getOrDefault(id, Set.of())) {
            if (cachedById.get(n).role == role) {
                out.add(n);
            }
        }
        return out;
    }

    static double capacityBetween(Topology t, String a, String b) {
        for (Link l : t.links) {
            if ((l.a.equals(a) && l.b.equals(b)) || (l.a.equals(b) && l.b.equals(a))) {
                return l.capacityBps;
            }
        }
        return 0;
    }

    /** The written JSON passes the schema and the model checks, and reads back the same. */
    static void passesSchemaAndChecks(Topology t) {
        String json = ModelIo.toJson(t);
        Topology back = ModelIo.parse(json, "generated.json", Schema.TOPOLOGY, Topology.class);
        ModelChecks.checkTopology(back, "generated.json");
        assertEquals(json, ModelIo.toJson(back), "round trip changes nothing");
    }

    /** Hosts and SMuxes of a ToR sit in one rack subnet, hosts from .1 up. */
    static void racksAreContiguous(Topology t) {
        Map<String, Integer> firstOfRack = new HashMap<>();
        for (Host h : t.hosts) {
            int ip = Ipv4.parse(h.ip);
            assertTrue(Ipv4.contains("10.0.0.0/8", h.ip), h.ip);
            Integer first = firstOfRack.putIfAbsent(h.tor, ip);
            int base = first == null ? ip : first;
            assertEquals(base & ~63, ip & ~63, "host " + h.id + " outside its rack /26");
        }
        t.smuxes.forEach(m -> {
            Integer hostIp = firstOfRack.get(m.tor);
            if (hostIp != null) {
                assertEquals(hostIp & ~63, Ipv4.parse(m.ip) & ~63, "SMux " + m.id + " outside its rack /26");
            }
        });
    }
}
