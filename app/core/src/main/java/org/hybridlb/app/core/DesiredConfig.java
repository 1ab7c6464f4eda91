package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.logging.Logger;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.port.TopologySource;
import org.hybridlb.solver.model.Switch;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;

/**
 * The operator's intent: the VIPs (created, replaced, deleted, DIPs added and removed) and the
 * drained switches. A change is validated against the whole configuration, persisted, and only
 * then in force; one that cannot be persisted is refused (503) and forgotten. Each change asks for
 * a reconcile once changes settle. Loop thread only (bodies are parsed before, on the caller's).
 */
final class DesiredConfig {
    private static final Logger LOG = Logger.getLogger(DesiredConfig.class.getName());

    private final StateKeeper keeper;
    private final VipValidator validator;
    private final TopologySource topology;
    private final Consumer<Reason> reconcileSoon;
    /** Whether this controller can install Prism fabric pins (else {@code steering: fabric} is refused). */
    private final boolean fabricPins;

    DesiredConfig(StateKeeper keeper, VipValidator validator, TopologySource topology, Consumer<Reason> reconcileSoon,
                  boolean fabricPins) {
        this.fabricPins = fabricPins;
        this.keeper = keeper;
        this.validator = validator;
        this.topology = topology;
        this.reconcileSoon = reconcileSoon;
    }

    List<Vip> vips() {
        return List.copyOf(keeper.state().desired);
    }

    Vip find(String vip) {
        int i = indexOf(vip);
        if (i < 0) {
            throw ApiException.notFound("vip", "no VIP " + vip);
        }
        return keeper.state().desired.get(i);
    }

    List<Vip> replaceAll(String body) {
        List<Vip> all = validator.parseVipSet(body, topology.topology());
        for (int i = 0; i < all.size(); i++) {
            steerable(all.get(i), "/vips/" + i + "/prism/steering");
            int was = indexOf(all.get(i).vip);
            if (was >= 0) {
                keepsCookieHash(keeper.state().desired.get(was), all.get(i), "/vips/" + i + "/cookieHash");
            }
        }
        commit(new ArrayList<>(all), "VIP configuration replaced");
        return List.copyOf(all);
    }

    Vip create(Vip v) {
        steerable(v, "/prism/steering");
        if (indexOf(v.vip) >= 0) {
            throw ApiException.conflict("/vip", "VIP " + v.vip + " exists (PUT /vips/" + v.vip + " replaces it)");
        }
        List<Vip> next = new ArrayList<>(keeper.state().desired);
        next.add(v);
        validator.checkAll(next, next.size() - 1, topology.topology());
        commit(next, "VIP " + v.vip + " added");
        return v;
    }

    Vip replace(Vip v) {
        steerable(v, "/prism/steering");
        int i = existing(v.vip);
        keepsCookieHash(keeper.state().desired.get(i), v, "/cookieHash");
        List<Vip> next = new ArrayList<>(keeper.state().desired);
        next.set(i, v);
        validator.checkAll(next, i, topology.topology());
        commit(next, "VIP " + v.vip + " changed");
        return v;
    }

    /**
     * The mode a VIP's hosts encode its cookies with is fixed for its life (a hash VIP's: the default,
     * they encode every VIP): its live connections carry cookies in that mode, which no mux could
     * decode once it decodes another. Only a VIP that stops decoding cookies (turned to hash) may drop it.
     */
    /** A fabric-steered Prism VIP only where pins can be installed. */
    private void steerable(Vip v, String field) {
        if (v.prism != null && v.prism.fabricSteering() && !fabricPins) {
            throw ApiException.invalid(field, org.hybridlb.app.core.prism.FabricPins.WHY_NONE);
        }
    }

    private static void keepsCookieHash(Vip now, Vip next, String field) {
        if (next.cheetah() && Cookie.modeOf(now) != Cookie.modeOf(next)) {
            throw ApiException.conflict(field, "VIP " + now.vip + "'s hosts encode its cookies with "
                    + Cookie.modeOf(now).wireName() + ": the mode is fixed for the VIP's life, since its live"
                    + " connections' cookies would stop decoding (delete and re-create the VIP to change it)");
        }
    }

    void delete(String vip) {
        int i = existing(vip);
        List<Vip> next = new ArrayList<>(keeper.state().desired);
        next.remove(i);
        commit(next, "VIP " + vip + " removed");
    }

    Vip addDip(String vip, VipValidator.DipRequest req) {
        int i = existing(vip);
        Vip now = keeper.state().desired.get(i);
        String service = validator.serviceFor(now, req.proto, req.port, "/proto");
        if (VipConfigs.dip(now, service, req.dip.ip) != null) {
            throw ApiException.conflict("/ip", "VIP " + vip + " " + service + " already has DIP " + req.dip.ip);
        }
        Vip changed = VipConfigs.withDip(now, service, req.dip);
        List<Vip> next = new ArrayList<>(keeper.state().desired);
        next.set(i, changed);
        validator.checkAll(next, i, topology.topology());
        commit(next, "DIP " + req.dip.ip + " added to " + vip);
        return changed;
    }

    /** {@code proto}/{@code port} null: the DIP leaves every service of the VIP. */
    Vip removeDip(String vip, String dip, String proto, Integer port) {
        int i = existing(vip);
        Vip now = keeper.state().desired.get(i);
        Vip changed = now;
        boolean found = false;
        for (VipPort p : now.ports) {
            if ((proto == null || proto.equals(p.proto)) && (port == null || port == p.port)
                    && p.dips.stream().anyMatch(d -> d.ip.equals(dip))) {
                changed = VipConfigs.withoutDip(changed, p.proto + "/" + p.port, dip);
                found = true;
            }
        }
        if (!found) {
            throw ApiException.notFound("dip", "VIP " + vip + " has no DIP " + dip
                    + (proto != null || port != null ? " in service " + proto + "/" + port : ""));
        }
        for (VipPort p : changed.ports) {
            if (p.dips.isEmpty()) {
                throw ApiException.conflict("dip", "DIP " + dip + " is the last of " + vip + " "
                        + p.proto + "/" + p.port + "; delete the VIP or add another DIP first");
            }
        }
        List<Vip> next = new ArrayList<>(keeper.state().desired);
        next.set(i, changed);
        commit(next, "DIP " + dip + " removed from " + vip);
        return changed;
    }

    /** Drains (or undrains) a switch: persisted, then its VIPs migrate away through the usual waves. */
    Switch setDrained(String switchId, boolean drained) {
        Switch sw = topology.topology().switches.stream().filter(s -> s.id.equals(switchId)).findFirst()
                .orElseThrow(() -> ApiException.notFound("switch", "no switch " + switchId));
        java.util.Set<String> set = keeper.state().drained;
        if (drained ? set.add(switchId) : set.remove(switchId)) {
            try {
                keeper.persist();
            } catch (RuntimeException e) {
                if (drained) {
                    set.remove(switchId);
                } else {
                    set.add(switchId);
                }
                throw new ApiException(503, "unavailable", null, "cannot persist the drain: " + e.getMessage());
            }
            LOG.info((drained ? "drained " : "undrained ") + switchId);
            reconcileSoon.accept(new Reason(Cause.DRAIN, (drained ? "drain " : "undrain ") + switchId));
        }
        return sw;
    }

    private int indexOf(String vip) {
        List<Vip> desired = keeper.state().desired;
        for (int i = 0; i < desired.size(); i++) {
            if (desired.get(i).vip.equals(vip)) {
                return i;
            }
        }
        return -1;
    }

    private int existing(String vip) {
        int i = indexOf(vip);
        if (i < 0) {
            throw ApiException.notFound("vip", "no VIP " + vip);
        }
        return i;
    }

    /** Makes {@code next} the desired configuration only if it can be persisted; else nothing changes. */
    private void commit(List<Vip> next, String why) {
        ControllerState state = keeper.state();
        List<Vip> old = state.desired;
        state.desired = next;
        try {
            keeper.persist();
        } catch (RuntimeException e) {
            state.desired = old;
            throw new ApiException(503, "unavailable", null, "cannot persist the configuration: " + e.getMessage());
        }
        reconcileSoon.accept(new Reason(Cause.CONFIG_CHANGED, why));
    }
}
