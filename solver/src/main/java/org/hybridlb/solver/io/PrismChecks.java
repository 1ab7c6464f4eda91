package org.hybridlb.solver.io;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import org.hybridlb.solver.model.Ipv4;
import org.hybridlb.solver.model.PrismConfig;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;

/**
 * The rules of a VIP's Prism hand-off that its JSON schema cannot express: the same ones the front
 * end's {@code rules.py} applies to a rule document (a split names a listed backend, rule names and
 * backend addresses are unique), plus what only the VIP knows (front ends are DIPs of the VIP whose
 * admin API is on their own address, a backend is not the VIP itself, the VIP has a TCP service for
 * the front ends to accept on), and for {@code steering: cookie} a {@code cheetah} VIP whose pool
 * holds every backend at weight 0 (the muxes accept only cookies that name a server of the pool; a
 * backend takes handed-off connections, never a new one).
 */
final class PrismChecks {
    private PrismChecks() {
    }

    /** {@code f}: the VIP's pointer (e.g. {@code /vips/3}). */
    static void check(Vip v, String f, String source) {
        PrismConfig prism = v.prism;
        if (prism == null) {
            return;
        }
        String pf = f + "/prism";
        Map<String, Integer> weights = new HashMap<>();   // every DIP -> its largest weight in any service
        boolean tcp = false;
        for (VipPort p : v.ports) {
            p.dips.forEach(d -> weights.merge(d.ip, d.weight, Math::max));
            tcp |= !"udp".equals(p.proto);
        }
        if (prism.cookieSteering() && !Vip.AFFINITY_CHEETAH.equals(v.affinity)) {
            throw new InvalidInputException(source, pf + "/steering", "steering cookie needs affinity cheetah"
                    + " (the owner's host agent writes its server id into the cookie the muxes decode), got "
                    + v.affinity);
        }
        if (!tcp) {
            throw new InvalidInputException(source, pf, "a Prism VIP needs a tcp (or any) service: its front ends"
                    + " accept HTTP/1.1 connections");
        }
        Map<String, Integer> frontends = new HashMap<>();
        for (int i = 0; i < prism.frontends.size(); i++) {
            String ip = prism.frontends.get(i).ip;
            Integer before = frontends.putIfAbsent(ip, i);
            if (before != null) {
                throw new InvalidInputException(source, pf + "/frontends/" + i + "/ip",
                        "front end " + ip + " is listed twice (also /frontends/" + before + ")");
            }
            String host = java.net.URI.create(prism.frontends.get(i).admin).getHost();
            if (host == null || !(host.equals(ip) || loopback(host))) {
                // the controller talks only to the front end's own host (or its own loopback)
                throw new InvalidInputException(source, pf + "/frontends/" + i + "/admin", "the admin API's host must"
                        + " be the front end's address " + ip + " (or a loopback address, for a controller on its host)");
            }
            if (!weights.containsKey(ip)) {
                throw new InvalidInputException(source, pf + "/frontends/" + i + "/ip", ip + " is not a DIP of the VIP:"
                        + " the muxes send the VIP's connections only to its DIPs, so a front end must be one");
            }
        }
        JsonNode backends = prism.backends();
        Map<String, String> addresses = new HashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = backends.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> b = it.next();
            String bf = InvalidInputException.key(pf + "/backends", b.getKey());
            String address = b.getValue().path("address").asText();
            if (address.equals(v.vip)) {
                throw new InvalidInputException(source, bf + "/address", "is the VIP itself");
            }
            if (prism.cookieSteering()) {
                Integer w = weights.get(address);
                if (w == null) {
                    throw new InvalidInputException(source, bf + "/address", address + " is not a DIP of the VIP:"
                            + " with steering cookie the muxes send the client's packets to the server its cookie"
                            + " names, only a server of the VIP's pool; list it as a DIP with weight 0");
                }
                if (w != 0) {
                    throw new InvalidInputException(source, bf + "/address", "DIP " + address + " has weight " + w
                            + ": with steering cookie a backend takes only handed-off connections, give it weight 0");
                }
            }
            String endpoint = address + ":" + b.getValue().path("controlPort").asInt();
            String before = addresses.putIfAbsent(endpoint, b.getKey());
            if (before != null) {
                throw new InvalidInputException(source, bf, endpoint + " is also backend '" + before + "'");
            }
        }
        JsonNode rules = prism.rules();
        Map<String, Integer> names = new HashMap<>();
        for (int i = 0; i < rules.size(); i++) {
            JsonNode r = rules.get(i);
            String rf = pf + "/rules/" + i;
            Integer before = names.putIfAbsent(r.path("name").asText(), i);
            if (before != null) {
                throw new InvalidInputException(source, rf + "/name", "duplicate rule name '" + r.path("name").asText()
                        + "' (also /rules/" + before + ")");
            }
            for (Iterator<String> it = r.path("split").fieldNames(); it.hasNext(); ) {
                String name = it.next();
                if (!backends.has(name)) {
                    throw new InvalidInputException(source, InvalidInputException.key(rf + "/split", name),
                            "unknown backend '" + name + "' (not in /prism/backends)");
                }
            }
        }
    }

    private static boolean loopback(String host) {
        try {
            return Ipv4.contains("127.0.0.0/8", host);
        } catch (IllegalArgumentException notAnAddress) {
            return false;
        }
    }
}
