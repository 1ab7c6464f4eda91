package org.hybridlb.solver.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The DIP edits that take one configuration of a VIP to another, per service, and the one rule of
 * what makes two DIPs the same: address, weight and tunnel endpoint (what the data path sees; a
 * {@code hostIp} equal to the DIP's own address is the same DIP as none). A DIP whose weight or
 * endpoint changes is removed and added again ({@link DipEdit#changed}). The migration planner and
 * the controller both diff pools with it.
 */
public final class VipEdits {
    /** One DIP added to or removed from one service. */
    public static final class DipEdit {
        public final ServiceKey service;
        public final Dip dip;
        /** The other side has this DIP in this service too, with another weight or endpoint. */
        public final boolean changed;

        DipEdit(ServiceKey service, Dip dip, boolean changed) {
            this.service = service;
            this.dip = dip;
            this.changed = changed;
        }

        @Override
        public String toString() {
            return service + " " + dip.ip + " w" + dip.weight + " via " + dip.tunnelEndpoint() + (changed ? " (changed)" : "");
        }
    }

    private final List<DipEdit> added;
    private final List<DipEdit> removed;
    private final boolean sameServices;

    private VipEdits(List<DipEdit> added, List<DipEdit> removed, boolean sameServices) {
        this.added = Collections.unmodifiableList(added);
        this.removed = Collections.unmodifiableList(removed);
        this.sameServices = sameServices;
    }

    /** Same address, weight and tunnel endpoint. */
    public static boolean sameDip(Dip a, Dip b) {
        return a.ip.equals(b.ip) && a.weight == b.weight && Objects.equals(a.tunnelEndpoint(), b.tunnelEndpoint());
    }

    /** The edits from {@code from} to {@code to}; a null side is a VIP without services. */
    public static VipEdits between(Vip from, Vip to) {
        Map<ServiceKey, Map<String, Dip>> a = pools(from);
        Map<ServiceKey, Map<String, Dip>> b = pools(to);
        List<DipEdit> added = new ArrayList<>();
        List<DipEdit> removed = new ArrayList<>();
        diff(b, a, added);
        diff(a, b, removed);
        return new VipEdits(added, removed, a.keySet().equals(b.keySet()));
    }

    /** Whether both have the same services (even without DIPs) with the same DIPs (order aside). */
    public static boolean sameDips(Vip a, Vip b) {
        return between(a, b).isEmpty();
    }

    /** DIPs of {@code have} that {@code other} lacks or has otherwise, into {@code out}. */
    private static void diff(Map<ServiceKey, Map<String, Dip>> have, Map<ServiceKey, Map<String, Dip>> other,
                             List<DipEdit> out) {
        for (Map.Entry<ServiceKey, Map<String, Dip>> s : have.entrySet()) {
            Map<String, Dip> there = other.getOrDefault(s.getKey(), Map.of());
            for (Dip d : s.getValue().values()) {
                Dip o = there.get(d.ip);
                if (o == null || !sameDip(o, d)) {
                    out.add(new DipEdit(s.getKey(), d, o != null));
                }
            }
        }
    }

    private static Map<ServiceKey, Map<String, Dip>> pools(Vip v) {
        Map<ServiceKey, Map<String, Dip>> out = new LinkedHashMap<>();
        if (v != null) {
            for (VipPort p : v.ports) {
                Map<String, Dip> dips = out.computeIfAbsent(p.service(), k -> new LinkedHashMap<>());
                p.dips.forEach(d -> dips.put(d.ip, d));
            }
        }
        return out;
    }

    /** DIPs to add, per service: new ones and changed ones ({@link DipEdit#changed}). */
    public List<DipEdit> added() {
        return added;
    }

    /** DIPs to remove, per service: gone ones and the old version of changed ones. */
    public List<DipEdit> removed() {
        return removed;
    }

    /** Nothing to add or remove: the same services with the same DIPs. */
    public boolean isEmpty() {
        return sameServices && added.isEmpty() && removed.isEmpty();
    }

    /** Something is added (a new DIP, weight or endpoint): a stateless hash would move connections. */
    public boolean grows() {
        return !added.isEmpty();
    }
}
