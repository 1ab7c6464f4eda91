package org.hybridlb.app.core.prism;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.hybridlb.app.core.ApiException;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.Ipv4;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;

/**
 * The fabric steering pins of the Prism VIPs with {@code steering: fabric} (their lifecycle):
 * <ul>
 * <li>a front end asks for a pin before its backend serves ({@link #pin}); the call returns only
 *     once the fabric acknowledged it, and records nothing when it did not;</li>
 * <li>the front end removes it when the connection comes back or closes ({@link #unpin});</li>
 * <li>every Prism round ({@link #reconcile}) removes the pins of a backend that is gone, moved or
 *     whose host is down, of a VIP that is gone or no longer fabric-steered, and of a flow its front
 *     ends no longer report handed off (a release lost on the way); it adopts the pins the fabric
 *     holds that are still wanted (a restarted controller starts with none of its own) and puts back
 *     the ones a device lost.</li>
 * </ul>
 * A removal the fabric does not acknowledge keeps the pin here, so the next round tries again.
 */
public final class PrismPins {
    private static final Logger LOG = Logger.getLogger(PrismPins.class.getName());

    private final FabricPins fabric;
    /** flow -> pin, for every VIP (guarded by this). */
    private final Map<String, PrismPin> pins = new TreeMap<>();
    /** flow -> when the pin was installed (this controller's clock, ms): a round only collects older ones. */
    private final Map<String, Long> installedAt = new HashMap<>();

    public PrismPins(FabricPins fabric) {
        this.fabric = fabric;
    }

    /** Whether the fabric can take pins at all. */
    public boolean available() {
        return fabric.available();
    }

    /**
     * Installs the pin {@code body} asks for ({@code client, clientPort, vipPort, backend}) on
     * {@code v}; returns it once the fabric acknowledged it. 400 naming the field for a bad body,
     * 409 when the VIP is not fabric-steered, 503 when the fabric did not acknowledge (nothing kept).
     */
    public PrismPin pin(Vip v, Collection<String> unhealthyDips, String body, long nowMillis) {
        JsonNode tree;
        try {
            tree = body == null || body.isBlank() ? null : Json.MAPPER.readTree(body);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw ApiException.invalid("/", "not JSON: " + e.getOriginalMessage());
        }
        return pin(v, unhealthyDips, tree, nowMillis);
    }

    /** As {@link #pin(Vip, Collection, String, long)}, on a parsed body. */
    public synchronized PrismPin pin(Vip v, Collection<String> unhealthyDips, JsonNode body, long nowMillis) {
        if (!v.prism.fabricSteering()) {
            throw ApiException.conflict("/prism/steering", "VIP " + v.vip + " is steered by its front ends' host agents"
                    + " (steering: " + v.prism.steering + "): it takes no fabric pins");
        }
        if (body == null || !body.isObject()) {
            throw ApiException.invalid("/", "expected a JSON object {client, clientPort, vipPort, backend}");
        }
        String client = address(body, "client");
        int clientPort = port(body, "clientPort", 1);
        int vipPort = port(body, "vipPort", 1);
        checkService(v, vipPort);
        JsonNode b = body.get("backend");
        if (b == null || !b.isTextual()) {
            throw ApiException.invalid("/backend", "expected the name of one of the VIP's Prism backends");
        }
        JsonNode backend = v.prism.backends().get(b.asText());
        if (backend == null) {
            throw ApiException.invalid("/backend", "unknown backend '" + b.asText() + "' (not in the VIP's prism/backends)");
        }
        String dip = backend.path("address").asText();
        if (unhealthyDips.contains(dip)) {
            throw ApiException.unavailable("backend '" + b.asText() + "' (" + dip + ") is down: the host agents report"
                    + " its DIP unhealthy");
        }
        PrismPin pin = new PrismPin(v.vip, vipPort, client, clientPort, b.asText(), dip);
        try {
            fabric.put(pin);
        } catch (SouthboundException e) {
            throw ApiException.unavailable("the fabric did not acknowledge the pin " + pin + ": " + e.getMessage());
        }
        pins.put(pin.flow(), pin);
        installedAt.put(pin.flow(), nowMillis);
        return pin;
    }

    /**
     * Removes the pin of the flow (client, clientPort -> vip:vipPort); false when there was none. 503
     * when the fabric did not acknowledge (the pin is kept and removed again by a later round).
     */
    public synchronized boolean unpin(String vip, String client, int clientPort, int vipPort) {
        PrismPin pin = pins.get(PrismPin.flow(vip, vipPort, client, clientPort));
        if (pin == null) {
            return false;
        }
        try {
            fabric.remove(pin);
        } catch (SouthboundException e) {
            throw ApiException.unavailable("the fabric did not acknowledge the removal of " + pin + ": " + e.getMessage());
        }
        pins.remove(pin.flow());
        installedAt.remove(pin.flow());
        return true;
    }

    /** The pins of {@code vip}, by flow. */
    public synchronized List<PrismPin> pins(String vip) {
        List<PrismPin> out = new ArrayList<>();
        pins.values().forEach(p -> {
            if (p.vip.equals(vip)) {
                out.add(p);
            }
        });
        return out;
    }

    /**
     * One Prism round: {@code handedOff}, per VIP, the flows ("client:port") its in-sync front ends
     * report held by a backend, with the backend's address, as read at {@code roundStartMillis}
     * (null for a VIP whose front ends could not all be read: its pins are not collected).
     */
    public synchronized void reconcile(List<Vip> vips, Set<String> unhealthyDips,
                                       Map<String, Map<String, String>> handedOff, long roundStartMillis) {
        Map<String, Vip> byAddress = new HashMap<>();
        vips.forEach(v -> byAddress.put(v.vip, v));
        List<PrismPin> held;
        try {
            held = fabric.installed();
        } catch (SouthboundException e) {
            LOG.log(Level.FINE, "Prism pins: the fabric's pins unreadable", e);
            held = null;
        }
        if (held != null) {
            for (PrismPin p : held) {
                if (!pins.containsKey(p.flow())) { // adopted after a restart, or removed below
                    pins.put(p.flow(), p);
                    installedAt.put(p.flow(), Long.MIN_VALUE);
                }
            }
        }
        Set<PrismPin> onDevices = held == null ? null : Set.copyOf(held);
        for (PrismPin p : new ArrayList<>(pins.values())) {
            String why = unwanted(p, byAddress.get(p.vip), unhealthyDips, handedOff.get(p.vip),
                    installedAt.getOrDefault(p.flow(), Long.MIN_VALUE) < roundStartMillis);
            try {
                if (why != null) {
                    fabric.remove(p);
                    pins.remove(p.flow());
                    installedAt.remove(p.flow());
                    LOG.info("Prism pin " + p + " removed: " + why);
                } else if (onDevices != null && !onDevices.contains(p)) {
                    fabric.put(p); // a device lost it (restarted): put it back
                    LOG.info("Prism pin " + p + " put back: the fabric no longer held it");
                }
            } catch (SouthboundException e) {
                LOG.warning("Prism pin " + p + ": " + e.getMessage() + " (next round tries again)");
            }
        }
    }

    /** Why the pin must go, or null to keep it. */
    private static String unwanted(PrismPin p, Vip v, Set<String> down, Map<String, String> handedOff, boolean old) {
        if (v == null || v.prism == null) {
            return "VIP " + p.vip + " has no Prism hand-off any more";
        }
        if (!v.prism.fabricSteering()) {
            return "VIP " + p.vip + " is no longer fabric-steered";
        }
        JsonNode b = v.prism.backends().get(p.backend);
        if (b == null || !p.dip.equals(b.path("address").asText())) {
            return "backend '" + p.backend + "' at " + p.dip + " is no longer one of the VIP's";
        }
        if (down.contains(p.dip)) {
            return "backend '" + p.backend + "' (" + p.dip + ") is down";
        }
        if (old && handedOff != null && !p.dip.equals(handedOff.get(p.client + ":" + p.clientPort))) {
            return "no front end reports the connection held by " + p.dip;
        }
        return null;
    }

    private static String address(JsonNode body, String field) {
        JsonNode n = body.get(field);
        try {
            Ipv4.parse(n != null && n.isTextual() ? n.asText() : "");
        } catch (IllegalArgumentException e) {
            throw ApiException.invalid("/" + field, "expected an IPv4 address, got " + n);
        }
        return n.asText();
    }

    private static int port(JsonNode body, String field, int min) {
        JsonNode n = body.get(field);
        if (n == null || !n.isInt() || n.asInt() < min || n.asInt() > 65535) {
            throw ApiException.invalid("/" + field, "expected a port " + min + "..65535, got " + n);
        }
        return n.asInt();
    }

    /** The VIP has a tcp (or any) service that takes {@code port}. */
    private static void checkService(Vip v, int port) {
        for (VipPort p : v.ports) {
            if (!"udp".equals(p.proto) && (p.port == 0 || p.port == port)) {
                return;
            }
        }
        throw ApiException.invalid("/vipPort", "VIP " + v.vip + " has no tcp service on port " + port);
    }
}
