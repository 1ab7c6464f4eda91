package org.hybridlb.app.core.cheetah;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.hybridlb.app.core.Json;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;

/**
 * The host agents' cookie documents ({@code PUT /cookie}, smux/agent/cookie_config.py): each DIP
 * host's server id and, for every VIP it serves, a {@code /32} with that VIP's key, so the host
 * encodes with the key the SMuxes decode with once the VIP is {@code cheetah}. The top-level
 * {@code key} (for prefixes the agent serves that no VIP of the controller names) is the
 * fabric-wide {@link CookieState#hostDefaultKey}, which no mux decodes with.
 */
public final class HostCookieDocs {
    /** The agent's keep-alive bound on passive connections to a VIP (COOKIE-SPEC §6), at most 25 s. */
    public static final int KEEPALIVE_SECONDS = 25;
    /** What one agent document may name (cookie_config.py: "vips: at most 256"). */
    public static final int MAX_VIPS_PER_HOST = 256;

    private HostCookieDocs() {
    }

    /**
     * Host -> its document, for every host with a server id; {@code vips} are the desired and
     * installed VIPs (a VIP in both counts once, by address). Throws IllegalStateException naming
     * a host that serves more than {@link #MAX_VIPS_PER_HOST} VIPs.
     */
    public static Map<String, String> build(CookieState s, Collection<Vip> vips) {
        Map<String, Set<String>> served = new TreeMap<>();
        Map<String, Cookie.HashMode> modes = new TreeMap<>();
        for (Vip v : vips) {
            modes.put(v.vip, Cookie.modeOf(v));
            for (VipPort p : v.ports) {
                for (Dip d : p.dips) {
                    served.computeIfAbsent(d.tunnelEndpoint(), h -> new TreeSet<>()).add(v.vip);
                }
            }
        }
        Map<String, String> out = new TreeMap<>();
        for (Map.Entry<String, Integer> e : s.serverIds.entrySet()) {
            Set<String> its = served.getOrDefault(e.getKey(), Set.of());
            if (its.size() > MAX_VIPS_PER_HOST) {
                throw new IllegalStateException("host " + e.getKey() + " serves " + its.size()
                        + " VIPs: its agent takes the keys of at most " + MAX_VIPS_PER_HOST);
            }
            ObjectNode doc = Json.MAPPER.createObjectNode();
            doc.put("serverId", e.getValue());
            doc.put("hash", Cookie.DEFAULT_MODE.wireName());
            doc.put("key", s.hostDefaultKey);
            ArrayNode list = doc.putArray("vips");
            for (String vip : its) {
                String key = s.keys.get(vip);
                if (key != null) {
                    list.addObject().put("prefix", vip + "/32").put("hash", modes.get(vip).wireName())
                            .put("key", key);
                }
            }
            doc.put("keepaliveSeconds", KEEPALIVE_SECONDS);
            out.put(e.getKey(), doc.toString());
        }
        return out;
    }
}
