package org.hybridlb.app.core.prism;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.logging.Logger;
import org.hybridlb.app.core.model.SmuxPin;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.Vip;

/**
 * Prism's fabric steering pins on the SMuxes ({@code POST/DELETE/GET /pins}, smux/README.md): a
 * fabric-steered VIP lives on the SMuxes only (the controller keeps it off the HMuxes), every live
 * SMux carries its whole table, so a pin goes to every live SMux.
 * <ul>
 *   <li>{@link #put} returns once every live SMux answered, which each does once its workers send
 *       the flow by the pin; when one does not, the pin is taken back from those that took it
 *       (best effort) and the put throws;</li>
 *   <li>{@link #remove} asks every live SMux and throws when one did not answer (the caller keeps the
 *       pin and removes it again later);</li>
 *   <li>{@link #installed} reads them back. A pin held alike by every live SMux is reported with its
 *       backend (the VIP's backend at that DIP); a pin some SMux lacks or holds to another DIP (one
 *       that restarted, a put whose undo failed) is reported with an empty backend, which no VIP has:
 *       {@link PrismPins#reconcile} then puts it back when its flow is wanted, removes it when not.</li>
 * </ul>
 */
public final class SmuxFabricPins implements FabricPins {
    private static final Logger LOG = Logger.getLogger(SmuxFabricPins.class.getName());

    private final SmuxControl smux;
    private final Supplier<? extends Collection<String>> liveSmuxes;
    private final Function<String, Vip> vips;

    /**
     * {@code liveSmuxes}: the SMuxes that carry traffic now (announcing the VIPs); {@code vips}: a VIP's
     * configuration by address (null when it has none), to name the backend of a pin read back.
     */
    public SmuxFabricPins(SmuxControl smux, Supplier<? extends Collection<String>> liveSmuxes, Function<String, Vip> vips) {
        this.smux = smux;
        this.liveSmuxes = liveSmuxes;
        this.vips = vips;
    }

    static SmuxPin toSmux(PrismPin p) {
        return new SmuxPin(p.client, p.clientPort, p.vip, p.vipPort, "tcp", p.dip);
    }

    private List<String> smuxes() {
        List<String> ids = new ArrayList<>(liveSmuxes.get());
        if (ids.isEmpty()) {
            throw new SouthboundException("no live SMux to hold the pin");
        }
        return ids;
    }

    @Override
    public void put(PrismPin pin) {
        SmuxPin p = toSmux(pin);
        List<String> done = new ArrayList<>();
        for (String id : smuxes()) {
            try {
                smux.putPin(id, p);
                done.add(id);
            } catch (SouthboundException e) {
                for (String back : done) {
                    try {
                        smux.removePin(back, p);
                    } catch (SouthboundException undo) {
                        LOG.warning("pin " + pin + " left on SMux " + back + " (" + undo.getMessage()
                                + "): the next Prism round removes it");
                    }
                }
                throw new SouthboundException("SMux " + id + " did not take the pin: " + e.getMessage(), e);
            }
        }
    }

    @Override
    public void remove(PrismPin pin) {
        SmuxPin p = toSmux(pin);
        List<String> failed = new ArrayList<>();
        for (String id : smuxes()) {
            try {
                smux.removePin(id, p);
            } catch (SouthboundException e) {
                failed.add(id + " (" + e.getMessage() + ")");
            }
        }
        if (!failed.isEmpty()) {
            throw new SouthboundException("the pin " + pin + " is still on SMux " + String.join(", ", failed));
        }
    }

    @Override
    public List<PrismPin> installed() {
        List<String> ids = smuxes();
        Map<String, SmuxPin> first = new HashMap<>();    // by flow: the first SMux's pin
        Map<String, Integer> alike = new HashMap<>();    // by flow: the SMuxes holding that same pin
        for (String id : ids) {
            for (SmuxPin p : smux.pins(id)) {
                String flow = PrismPin.flow(p.vip, p.vipPort, p.client, p.clientPort);
                SmuxPin seen = first.putIfAbsent(flow, p);
                alike.merge(flow, seen == null || seen.equals(p) ? 1 : 0, Integer::sum);
            }
        }
        List<PrismPin> out = new ArrayList<>();
        Map<String, Vip> configs = new HashMap<>();      // each VIP's configuration read once
        first.forEach((flow, p) -> {
            if (!configs.containsKey(p.vip)) {
                configs.put(p.vip, vips.apply(p.vip));
            }
            String backend = alike.get(flow) == ids.size() ? backendAt(configs.get(p.vip), p.dip) : "";
            out.add(new PrismPin(p.vip, p.vipPort, p.client, p.clientPort, backend, p.dip));
        });
        return out;
    }

    /** The name of {@code v}'s Prism backend at {@code dip}, or "" when it has none. */
    private static String backendAt(Vip v, String dip) {
        if (v == null || v.prism == null) {
            return "";
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = v.prism.backends().fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> b = it.next();
            if (Objects.equals(dip, b.getValue().path("address").asText(null))) {
                return b.getKey();
            }
        }
        return "";
    }
}
