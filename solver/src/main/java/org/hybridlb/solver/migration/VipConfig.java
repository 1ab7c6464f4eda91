package org.hybridlb.solver.migration;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.ServiceKey;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipEdits;
import org.hybridlb.solver.model.VipPort;

/**
 * A VIP's DIP pools keyed for diffing: service to DIP ip to DIP. Immutable; the {@link Vip} it
 * stands for is rebuilt on demand for the resource model. What makes two DIPs the same is
 * {@link VipEdits#sameDip}.
 */
final class VipConfig {
    final String vip;
    final String aggregate;
    /** Built on first use: most VIPs of a large migration never have their pools diffed. */
    private Map<ServiceKey, Map<String, Dip>> services;
    private Vip asVip;

    private VipConfig(String vip, String aggregate, Map<ServiceKey, Map<String, Dip>> services) {
        this.vip = vip;
        this.aggregate = aggregate;
        this.services = services;
    }

    static VipConfig of(Vip v) {
        VipConfig c = new VipConfig(v.vip, v.aggregate, null);
        c.asVip = v;
        return c;
    }

    Map<ServiceKey, Map<String, Dip>> services() {
        if (services == null) {
            Map<ServiceKey, Map<String, Dip>> m = new LinkedHashMap<>();
            for (VipPort p : asVip.ports) {
                Map<String, Dip> dips = new LinkedHashMap<>();
                p.dips.forEach(d -> dips.put(d.ip, d));
                m.put(p.service(), dips);
            }
            services = m;
        }
        return services;
    }

    Dip dip(ServiceKey service, String ip) {
        Map<String, Dip> dips = services().get(service);
        return dips == null ? null : dips.get(ip);
    }

    VipConfig withDip(ServiceKey service, Dip dip) {
        Map<ServiceKey, Map<String, Dip>> copy = deepCopy();
        copy.computeIfAbsent(service, k -> new LinkedHashMap<>()).put(dip.ip, dip);
        return new VipConfig(vip, aggregate, copy);
    }

    VipConfig withoutDip(ServiceKey service, String ip) {
        Map<ServiceKey, Map<String, Dip>> copy = deepCopy();
        Map<String, Dip> dips = copy.get(service);
        dips.remove(ip);
        if (dips.isEmpty()) {
            copy.remove(service);
        }
        return new VipConfig(vip, aggregate, copy);
    }

    /** The VIP as the data model (and so the resource model) sees it. */
    Vip toVip() {
        if (asVip == null) {
            List<VipPort> ports = new ArrayList<>();
            for (Map.Entry<ServiceKey, Map<String, Dip>> e : services().entrySet()) {
                ServiceKey k = e.getKey();
                ports.add(new VipPort(k.protocol.json(), k.port, new ArrayList<>(e.getValue().values())));
            }
            asVip = new Vip(vip, aggregate, ports);
        }
        return asVip;
    }

    /** Same DIPs with the same weights and tunnel endpoints in every service (order aside). */
    boolean sameDips(VipConfig o) {
        if (this == o || (asVip != null && asVip == o.asVip)) {
            return true;
        }
        if (!services().keySet().equals(o.services().keySet())) {
            return false;
        }
        for (Map.Entry<ServiceKey, Map<String, Dip>> e : services.entrySet()) {
            Map<String, Dip> other = o.services.get(e.getKey());
            if (!other.keySet().equals(e.getValue().keySet())) {
                return false;
            }
            for (Dip d : e.getValue().values()) {
                if (!VipEdits.sameDip(d, other.get(d.ip))) {
                    return false;
                }
            }
        }
        return true;
    }

    private Map<ServiceKey, Map<String, Dip>> deepCopy() {
        Map<ServiceKey, Map<String, Dip>> copy = new LinkedHashMap<>();
        services().forEach((k, v) -> copy.put(k, new LinkedHashMap<>(v)));
        return copy;
    }
}
