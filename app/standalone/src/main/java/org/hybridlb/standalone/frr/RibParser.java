package org.hybridlb.standalone.frr;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Reads FRR's {@code show bgp ipv4 unicast json} (bgpd 8.x): {@code {"routes": {"<prefix>":
 * [{"valid": true, "peerId": "<neighbor>", "nexthops": [{"ip": ...}], ...}]}}}, for each prefix the
 * neighbours that announce it with a valid path; and {@code show bgp ipv4 unicast summary json}:
 * {@code {"peers": {"<neighbor>": {"state": "Established", "peerUptimeMsec": 71000, ...}}}}, the
 * sessions that are up and for how long.
 */
public final class RibParser {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RibParser() {
    }

    private static JsonNode read(String json) {
        try {
            return JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** The neighbours whose BGP session is Established, from the summary. */
    public static Set<String> establishedPeers(String summaryJson) {
        return new TreeSet<>(establishedUptimes(summaryJson).keySet());
    }

    /**
     * The neighbours whose BGP session is Established, each with how long it has been up
     * ({@code peerUptimeMsec}, whole seconds in bgpd 8.x), from the summary.
     */
    public static Map<String, Long> establishedUptimes(String summaryJson) {
        JsonNode root = read(summaryJson);
        JsonNode peers = root == null ? null : root.get("peers");
        if (peers == null || !peers.isObject()) {
            throw new IllegalArgumentException("no \"peers\" in the BGP summary");
        }
        Map<String, Long> up = new TreeMap<>();
        peers.fields().forEachRemaining(e -> {
            if ("Established".equals(e.getValue().path("state").asText())) {
                up.put(e.getKey(), e.getValue().path("peerUptimeMsec").asLong(0));
            }
        });
        return up;
    }

    public static Map<String, Set<String>> announcers(String json) {
        JsonNode root = read(json);
        Map<String, Set<String>> out = new TreeMap<>();
        JsonNode routes = root == null ? null : root.get("routes");
        if (routes == null || !routes.isObject()) {
            return out; // an empty RIB prints {} or no "routes"
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = routes.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            Set<String> peers = new TreeSet<>();
            for (JsonNode path : e.getValue()) {
                if (!path.path("valid").asBoolean(false)) {
                    continue;
                }
                String peer = path.path("peerId").asText("");
                if (!peer.isEmpty() && !"(unspec)".equals(peer)) {
                    peers.add(peer);
                }
            }
            if (!peers.isEmpty()) {
                out.put(e.getKey(), peers);
            }
        }
        return out;
    }
}
