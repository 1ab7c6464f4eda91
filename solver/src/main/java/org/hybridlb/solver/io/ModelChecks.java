package org.hybridlb.solver.io;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Host;
import org.hybridlb.solver.model.Ipv4;
import org.hybridlb.solver.model.Limits;
import org.hybridlb.solver.model.Link;
import org.hybridlb.solver.model.ServiceKey;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.TrafficTrace;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.VipSet;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.model.Wcmp;

/** The rules of the data model that a JSON schema cannot express. */
public final class ModelChecks {
    private ModelChecks() {
    }

    public static void checkTopology(Topology t, String source) {
        Map<String, Switch> switches = new HashMap<>();
        Set<String> nodes = new HashSet<>();
        for (int i = 0; i < t.switches.size(); i++) {
            Switch s = t.switches.get(i);
            String f = "/switches/" + i;
            if (!nodes.add(s.id)) {
                throw new InvalidInputException(source, f + "/id", "duplicate id '" + s.id + "'");
            }
            if (s.role == SwitchRole.CORE && s.pod != null) {
                throw new InvalidInputException(source, f + "/pod", "a core switch belongs to no pod");
            }
            if (s.role != SwitchRole.CORE && s.pod == null) {
                throw new InvalidInputException(source, f + "/pod", "a " + s.role.json() + " switch needs a pod");
            }
            switches.put(s.id, s);
        }
        Set<String> ips = new HashSet<>();
        for (int i = 0; i < t.hosts.size(); i++) {
            Host h = t.hosts.get(i);
            String f = "/hosts/" + i;
            if (!nodes.add(h.id)) {
                throw new InvalidInputException(source, f + "/id", "duplicate id '" + h.id + "'");
            }
            if (!ips.add(h.ip)) {
                throw new InvalidInputException(source, f + "/ip", "duplicate address " + h.ip);
            }
            requireTor(switches, h.tor, source, f + "/tor");
        }
        for (int i = 0; i < t.smuxes.size(); i++) {
            Smux m = t.smuxes.get(i);
            String f = "/smuxes/" + i;
            if (!nodes.add(m.id)) {
                throw new InvalidInputException(source, f + "/id", "duplicate id '" + m.id + "'");
            }
            if (!ips.add(m.ip)) {
                throw new InvalidInputException(source, f + "/ip", "duplicate address " + m.ip);
            }
            requireTor(switches, m.tor, source, f + "/tor");
        }
        Set<String> pairs = new HashSet<>();
        for (int i = 0; i < t.links.size(); i++) {
            Link l = t.links.get(i);
            String f = "/links/" + i;
            if (!switches.containsKey(l.a)) {
                throw new InvalidInputException(source, f + "/a", "unknown switch '" + l.a + "'");
            }
            if (!switches.containsKey(l.b)) {
                throw new InvalidInputException(source, f + "/b", "unknown switch '" + l.b + "'");
            }
            if (l.a.equals(l.b)) {
                throw new InvalidInputException(source, f, "a link cannot loop on switch '" + l.a + "'");
            }
            String key = l.a.compareTo(l.b) < 0 ? l.a + "|" + l.b : l.b + "|" + l.a;
            if (!pairs.add(key)) {
                throw new InvalidInputException(source, f, "duplicate link " + l.a + "-" + l.b);
            }
        }
    }

    private static void requireTor(Map<String, Switch> switches, String tor, String source, String field) {
        Switch s = switches.get(tor);
        if (s == null) {
            throw new InvalidInputException(source, field, "unknown switch '" + tor + "'");
        }
        if (s.role != SwitchRole.TOR) {
            throw new InvalidInputException(source, field, "'" + tor + "' is a " + s.role.json() + " switch, not a tor");
        }
    }

    public static void checkVips(VipSet set, String source) {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < set.vips.size(); i++) {
            Vip v = set.vips.get(i);
            String f = "/vips/" + i;
            if (!seen.add(v.vip)) {
                throw new InvalidInputException(source, f + "/vip", "duplicate VIP " + v.vip);
            }
            requireUnicastHost(v.vip, source, f + "/vip");
            if (!Ipv4.network(v.aggregate).equals(v.aggregate)) {
                // the SMux refuses it too: a route to a prefix with host bits is a typo more often than not
                throw new InvalidInputException(source, f + "/aggregate", "has host bits set (the network is "
                        + Ipv4.network(v.aggregate) + ")");
            }
            if (!Ipv4.contains(v.aggregate, v.vip)) {
                throw new InvalidInputException(source, f + "/aggregate",
                        "VIP " + v.vip + " is not inside its aggregate " + v.aggregate);
            }
            if (v.mechanism != null && !v.cheetah()) {
                // as the SMux: a typo in affinity must not turn cookies off silently
                throw new InvalidInputException(source, f + "/mechanism",
                        "only for affinity \"cheetah\" or \"cheetah-stateful\"");
            }
            if (v.cookieHash != null && !v.cheetah()) {
                throw new InvalidInputException(source, f + "/cookieHash",
                        "only for affinity \"cheetah\" or \"cheetah-stateful\" (a hash VIP has no cookies)");
            }
            if (v.cookieHash != null && !Vip.COOKIE_HASH_SIPHASH13.equals(v.cookieHash)
                    && !Vip.COOKIE_HASH_CRC32C.equals(v.cookieHash)) {
                throw new InvalidInputException(source, f + "/cookieHash",
                        "unknown hash '" + v.cookieHash + "' (siphash13 or crc32c)");
            }
            if (v.ports.size() > Limits.MAX_SERVICES_PER_VIP) {
                throw new InvalidInputException(source, f + "/ports", v.ports.size()
                        + " services, over the limit of " + Limits.MAX_SERVICES_PER_VIP + " per VIP");
            }
            Set<ServiceKey> services = new HashSet<>();
            boolean wholeVip = false;
            for (int p = 0; p < v.ports.size(); p++) {
                VipPort port = v.ports.get(p);
                String pf = f + "/ports/" + p;
                ServiceKey service;
                try {
                    service = port.service();
                } catch (IllegalArgumentException e) {
                    throw new InvalidInputException(source, pf + "/port", e.getMessage());
                }
                wholeVip |= service.wholeVip();
                if (!services.add(service)) {
                    throw new InvalidInputException(source, pf, "duplicate service " + service);
                }
                if (port.dips.size() > Limits.MAX_DIPS_PER_SERVICE) {
                    throw new InvalidInputException(source, pf + "/dips", port.dips.size()
                            + " DIPs, over the limit of " + Limits.MAX_DIPS_PER_SERVICE + " per service");
                }
                Set<String> dips = new HashSet<>();
                Map<String, Integer> hostsOfPool = new HashMap<>();
                for (int d = 0; d < port.dips.size(); d++) {
                    Dip dip = port.dips.get(d);
                    String df = pf + "/dips/" + d;
                    if (!dips.add(dip.ip)) {
                        throw new InvalidInputException(source, df + "/ip", "duplicate DIP " + dip.ip);
                    }
                    Integer sameHost = hostsOfPool.putIfAbsent(dip.tunnelEndpoint(), d);
                    if (v.cheetah() && sameHost != null) {
                        // the SMux refuses it too: a cookie carries the host's id, not the DIP's
                        throw new InvalidInputException(source, df + (dip.hostIp != null ? "/hostIp" : "/ip"),
                                "host " + dip.tunnelEndpoint() + " is also that of dips/" + sameHost
                                        + ": with affinity \"" + v.affinity + "\" a pool has one DIP per host (a cookie names the host)");
                    }
                    requireUnicastHost(dip.ip, source, df + "/ip");
                    if (dip.hostIp != null) {
                        requireUnicastHost(dip.hostIp, source, df + "/hostIp");
                    }
                    if (dip.ip.equals(v.vip)) {
                        throw new InvalidInputException(source, df + "/ip",
                                "is the VIP itself (its packets would come back to the muxes)");
                    }
                    if (dip.weight < Limits.MIN_WEIGHT || dip.weight > Limits.MAX_WEIGHT) {
                        throw new InvalidInputException(source, df + "/weight", "weight " + dip.weight
                                + " is out of range (" + Limits.MIN_WEIGHT + " to " + Limits.MAX_WEIGHT + ")");
                    }
                }
                long buckets = Wcmp.smuxBuckets(port.dips);
                if (buckets > Limits.MAX_WCMP_UNITS_PER_SERVICE) {
                    throw new InvalidInputException(source, pf + "/dips", "the weights make " + buckets
                            + " WCMP units (each DIP weight / the weights' greatest common divisor, one more per"
                            + " DIP of weight 0), over the limit of " + Limits.MAX_WCMP_UNITS_PER_SERVICE
                            + " per service: use smaller weights");
                }
            }
            if (wholeVip && v.ports.size() > 1) {
                throw new InvalidInputException(source, f + "/ports",
                        "a VIP balanced as a whole (proto 'any') cannot also have per-port services");
            }
            PrismChecks.check(v, f, source);
        }
        checkTotals(set.vips, source);
    }

    /**
     * A whole configuration must fit one SMux table (every VIP is announced on the SMuxes as the
     * backstop): at most {@link Limits#MAX_SERVICES} services and {@link Limits#MAX_DIP_ENTRIES}
     * DIP entries in all (its buckets: WCMP units and drained DIPs, {@link Wcmp#smuxBuckets}).
     */
    public static void checkTotals(List<Vip> vips, String source) {
        long services = 0;
        long dips = 0;
        for (Vip v : vips) {
            services += v.ports.size();
            for (VipPort p : v.ports) {
                dips += Wcmp.smuxBuckets(p.dips);
            }
        }
        if (services > Limits.MAX_SERVICES) {
            throw new InvalidInputException(source, "/vips", services + " services in all, over the limit of "
                    + Limits.MAX_SERVICES + " (one SMux table)");
        }
        if (dips > Limits.MAX_DIP_ENTRIES) {
            throw new InvalidInputException(source, "/vips", dips + " DIP entries (WCMP units) in all, over the limit of "
                    + Limits.MAX_DIP_ENTRIES + " (one SMux table)");
        }
    }

    private static void requireUnicastHost(String address, String source, String field) {
        if (!Ipv4.isUnicastHost(address)) {
            throw new InvalidInputException(source, field, address
                    + " is not a unicast host address (not 0.0.0.0, 127/8, 224/4 or 240/4)");
        }
    }

    /** Every DIP's tunnel endpoint (its hostIp, or its own ip) must be a host of the topology. */
    public static void checkVipsAgainstTopology(VipSet set, Topology topology, String source) {
        Set<String> hostIps = new HashSet<>();
        topology.hosts.forEach(h -> hostIps.add(h.ip));
        for (int i = 0; i < set.vips.size(); i++) {
            Vip v = set.vips.get(i);
            for (int p = 0; p < v.ports.size(); p++) {
                for (int d = 0; d < v.ports.get(p).dips.size(); d++) {
                    Dip dip = v.ports.get(p).dips.get(d);
                    if (!hostIps.contains(dip.tunnelEndpoint())) {
                        String field = "/vips/" + i + "/ports/" + p + "/dips/" + d
                                + (dip.hostIp != null ? "/hostIp" : "/ip");
                        throw new InvalidInputException(source, field,
                                dip.tunnelEndpoint() + " is not the address of a host in the topology");
                    }
                }
            }
        }
    }

    public static void checkTraffic(TrafficTrace trace, VipSet vips, Topology topology, String source) {
        Map<String, Set<String>> dipsOf = new HashMap<>();
        for (Vip v : vips.vips) {
            Set<String> dips = new HashSet<>();
            v.ports.forEach(p -> p.dips.forEach(d -> dips.add(d.ip)));
            dipsOf.put(v.vip, dips);
        }
        Set<String> nodes = new HashSet<>();
        topology.switches.forEach(s -> nodes.add(s.id));
        topology.hosts.forEach(h -> nodes.add(h.id));
        nodes.add(VipTraffic.INTERNET);
        Map<Integer, Integer> indexes = new HashMap<>();
        for (int i = 0; i < trace.intervals.size(); i++) {
            TrafficInterval in = trace.intervals.get(i);
            Integer before = indexes.putIfAbsent(in.index, i);
            if (before != null) {
                throw new InvalidInputException(source, "/intervals/" + i + "/index", "duplicate interval index "
                        + in.index + " (also /intervals/" + before + "/index)");
            }
            Set<String> seen = new HashSet<>();
            for (int j = 0; j < in.vips.size(); j++) {
                VipTraffic vt = in.vips.get(j);
                String f = "/intervals/" + i + "/vips/" + j;
                Set<String> dips = dipsOf.get(vt.vip);
                if (dips == null) {
                    throw new InvalidInputException(source, f + "/vip", "unknown VIP " + vt.vip);
                }
                if (!seen.add(vt.vip)) {
                    throw new InvalidInputException(source, f + "/vip", "VIP " + vt.vip + " appears twice in one interval");
                }
                for (String node : vt.sources.keySet()) {
                    if (!nodes.contains(node)) {
                        throw new InvalidInputException(source, InvalidInputException.key(f + "/sources", node),
                                "unknown source node '" + node + "' (a switch, a host or 'internet')");
                    }
                }
                for (String dip : vt.dips.keySet()) {
                    if (!dips.contains(dip)) {
                        throw new InvalidInputException(source, InvalidInputException.key(f + "/dips", dip),
                            "not a DIP of VIP " + vt.vip);
                    }
                }
            }
        }
    }

    public static void checkAssignment(Assignment a, Topology topology, String source) {
        Set<String> switches = new HashSet<>();
        topology.switches.forEach(s -> switches.add(s.id));
        for (Map.Entry<String, String> e : a.assignment.entrySet()) {
            if (!Assignment.SMUX.equals(e.getValue()) && !switches.contains(e.getValue())) {
                throw new InvalidInputException(source, InvalidInputException.key("/assignment", e.getKey()),
                        "unknown switch '" + e.getValue() + "' (a switch id or 'smux')");
            }
        }
    }
}
