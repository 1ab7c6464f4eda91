package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipEdits;
import org.hybridlb.solver.model.VipPort;

/** Small immutable edits of VIP configurations; a service is named "proto/port". */
final class VipConfigs {
    private VipConfigs() {
    }

    static String key(VipPort p) {
        return p.proto + "/" + p.port;
    }

    static Dip dip(Vip v, String service, String ip) {
        for (VipPort p : v.ports) {
            if (key(p).equals(service)) {
                for (Dip d : p.dips) {
                    if (d.ip.equals(ip)) {
                        return d;
                    }
                }
            }
        }
        return null;
    }

    static Vip withDip(Vip v, String service, Dip dip) {
        List<VipPort> ports = new ArrayList<>();
        boolean found = false;
        for (VipPort p : v.ports) {
            if (key(p).equals(service)) {
                List<Dip> dips = new ArrayList<>(p.dips);
                dips.removeIf(d -> d.ip.equals(dip.ip));
                dips.add(dip);
                ports.add(new VipPort(p.proto, p.port, dips));
                found = true;
            } else {
                ports.add(p);
            }
        }
        if (!found) {
            int slash = service.indexOf('/');
            ports.add(new VipPort(service.substring(0, slash), Integer.parseInt(service.substring(slash + 1)),
                    List.of(dip)));
        }
        return v.withPorts(ports);
    }

    /** Without the DIP; the service stays, possibly with no DIP (its traffic then has nowhere to go). */
    static Vip withoutDip(Vip v, String service, String ip) {
        List<VipPort> ports = new ArrayList<>();
        for (VipPort p : v.ports) {
            if (key(p).equals(service)) {
                List<Dip> dips = new ArrayList<>(p.dips);
                dips.removeIf(d -> d.ip.equals(ip));
                ports.add(new VipPort(p.proto, p.port, dips));
            } else {
                ports.add(p);
            }
        }
        return v.withPorts(ports);
    }

    /** {@code v} without the DIPs {@code out} selects (the same object when none is). */
    static Vip withoutDips(Vip v, Predicate<Dip> out) {
        boolean any = false;
        List<VipPort> ports = new ArrayList<>();
        for (VipPort p : v.ports) {
            List<Dip> dips = new ArrayList<>(p.dips);
            any |= dips.removeIf(out);
            ports.add(new VipPort(p.proto, p.port, dips));
        }
        return any ? v.withPorts(ports) : v;
    }

    /** Same services with the same DIPs (order aside), same affinity and mechanism. */
    static boolean sameConfig(Vip a, Vip b) {
        return a.vip.equals(b.vip) && Objects.equals(a.aggregate, b.aggregate) && a.sameAffinity(b)
                && VipEdits.sameDips(a, b);
    }
}
