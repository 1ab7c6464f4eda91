package org.hybridlb.app.core.cheetah;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
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
 *
 * <p>A host of a {@code cheetah-stateful} VIP also gets {@code statefulOwners}: the control URL of
 * the SMux in each owner slot, in slot order ({@link OwnerSlots#owners}), where its agent reports
 * the closes of the connections a slot's SMux owns. A free slot, or a slot whose SMux has no
 * control URL an agent can use, gets {@link #unreachableUrl}. A host of a VIP that
 * {@linkplain Vip#balancesByLoad balances by load} gets {@code smuxes}: the control URL of every
 * live SMux, where its agent reports its load. A host of neither gets neither field, so its
 * document does not change (and is not sent again) when the SMuxes do.
 */
public final class HostCookieDocs {
    /** The agent's keep-alive bound on passive connections to a VIP (COOKIE-SPEC §6), at most 25 s. */
    public static final int KEEPALIVE_SECONDS = 25;
    /** What one agent document may name (cookie_config.py: "vips: at most 256"). */
    public static final int MAX_VIPS_PER_HOST = 256;

    /** What one agent document may name in {@code smuxes} (cookie_config.py MAX_SMUXES). */
    public static final int MAX_SMUXES = 64;

    private HostCookieDocs() {
    }

    /**
     * The URL standing for owner slot {@code slot} when no SMux there can be reported to: the slot's
     * {@linkplain OwnerSlots#placeholder placeholder address} (in 0.0.0.0/8, which no host has and
     * Linux refuses to connect to) on the discard port. The agent's parser takes it (a list must keep
     * every slot's position), and nothing is ever sent to it for a free slot: no cookie names a
     * free slot (OwnerSlots). For a held slot whose SMux has no usable URL the agent's report fails
     * at once and the SMux's idle sweep frees the entry, as for any lost report.
     */
    public static String unreachableUrl(int slot) {
        return "http://" + OwnerSlots.placeholder(slot) + ":9";
    }

    /**
     * An SMux control URL as the agents take it, {@code http(s)://HOST:PORT} (the scheme's default
     * port made explicit, a trailing "/" dropped); null for one they cannot use (another scheme, a
     * path, a query).
     */
    public static String agentUrl(String controlUrl) {
        if (controlUrl == null) {
            return null;
        }
        URI u;
        try {
            u = new URI(controlUrl.strip());
        } catch (URISyntaxException e) {
            return null;
        }
        String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
        boolean https = scheme.equals("https");
        if (!https && !scheme.equals("http") || u.getHost() == null || u.getRawUserInfo() != null
                || u.getRawQuery() != null || u.getRawFragment() != null
                || u.getRawPath() != null && !u.getRawPath().isEmpty() && !u.getRawPath().equals("/")) {
            return null;
        }
        return scheme + "://" + u.getHost() + ":" + (u.getPort() >= 0 ? u.getPort() : https ? 443 : 80);
    }

    /** The documents without the SMuxes' URLs (no host gets {@code statefulOwners} or {@code smuxes}). */
    public static Map<String, String> build(CookieState s, Collection<Vip> vips) {
        return build(s, vips, Map.of(), List.of());
    }

    /**
     * Host -> its document, for every host with a server id; {@code vips} are the desired and
     * installed VIPs (a VIP in both counts once, by address). Throws IllegalStateException naming
     * a host that serves more than {@link #MAX_VIPS_PER_HOST} VIPs. {@code urlByIp}: the agent URL
     * ({@link #agentUrl}) of each SMux by its address, lost ones included (their slots may still be
     * held); {@code liveUrls}: those of the live SMuxes, in topology order (the first
     * {@link #MAX_SMUXES} are named).
     */
    public static Map<String, String> build(CookieState s, Collection<Vip> vips, Map<String, String> urlByIp,
                                            List<String> liveUrls) {
        Map<String, Set<String>> served = new TreeMap<>();
        Set<String> statefulHosts = new TreeSet<>();
        Set<String> loadHosts = new TreeSet<>();
        Map<String, Cookie.HashMode> modes = new TreeMap<>();
        for (Vip v : vips) {
            modes.put(v.vip, Cookie.modeOf(v));
            for (VipPort p : v.ports) {
                for (Dip d : p.dips) {
                    served.computeIfAbsent(d.tunnelEndpoint(), h -> new TreeSet<>()).add(v.vip);
                    if (v.stateful()) {
                        statefulHosts.add(d.tunnelEndpoint());
                    }
                    if (v.balancesByLoad()) {
                        loadHosts.add(d.tunnelEndpoint());
                    }
                }
            }
        }
        List<String> owners = new ArrayList<>();
        List<String> slots = OwnerSlots.owners(s);
        for (int i = 0; i < slots.size(); i++) {
            owners.add(urlByIp.getOrDefault(slots.get(i), unreachableUrl(i)));
        }
        List<String> smuxes = liveUrls.subList(0, Math.min(liveUrls.size(), MAX_SMUXES));
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
            if (statefulHosts.contains(e.getKey())) {
                owners.forEach(doc.putArray("statefulOwners")::add);
            }
            if (loadHosts.contains(e.getKey())) {
                smuxes.forEach(doc.putArray("smuxes")::add);
            }
            out.put(e.getKey(), doc.toString());
        }
        return out;
    }
}
