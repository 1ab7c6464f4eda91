package org.hybridlb.app.core.model;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.hybridlb.solver.model.Wcmp;

/**
 * The data-path buckets of a VIP configuration, for the HMuxes and the SMuxes alike: WCMP by
 * replication ({@link Wcmp}). A DIP of {@code u} units (its weight over the gcd of its pool's
 * weights) is {@code u} buckets of weight 1, each with a bucket id of its own; a drained DIP
 * (weight 0) is one bucket of weight 0, which only the SMuxes hold ({@link VipEntry#hmuxForm}).
 * Every selection mode splits equal buckets evenly, so the DIPs get new flows in proportion to
 * their weights, and HMux and SMux still hash over the same ids, so they pick the same DIP.
 *
 * <p>Ids are stable: the map (the controller persists it) keeps {@code "vip|proto/port|dip"} for
 * a DIP's first unit (or its drained bucket) and {@code "vip|proto/port|dip#k"} for unit k, and a
 * new unit takes the lowest id its service does not use. A DIP keeps its units' ids while it stays;
 * a weight change adds or removes only its own units, so only their flows move.
 */
public final class WcmpBuckets {
    private final Supplier<Map<String, Integer>> ids;

    /** {@code ids}: the id map to read and extend (fetched on every use: the controller may replace it). */
    public WcmpBuckets(Supplier<Map<String, Integer>> ids) {
        this.ids = ids;
    }

    /** Every bucket of {@code v}: its units and its drained DIPs; services sorted, buckets by id. */
    public VipEntry smuxEntry(Vip v) {
        List<ServiceEntry> services = new ArrayList<>();
        for (VipPort p : v.ports) {
            String service = service(p);
            int[] units = Wcmp.units(p.dips);
            Set<Integer> used = null; // the service's ids, read once when a new bucket needs one
            List<Bucket> buckets = new ArrayList<>();
            for (int i = 0; i < units.length; i++) {
                Dip d = p.dips.get(i);
                for (int k = 0; k < Math.max(1, units[i]); k++) {
                    String key = key(v.vip, service, d.ip, k);
                    Integer id = ids.get().get(key);
                    if (id == null) {
                        used = used != null ? used : usedIds(v.vip, service);
                        id = lowestFree(used);
                        ids.get().put(key, id);
                    }
                    buckets.add(new Bucket(d.ip, units[i] == 0 ? 0 : 1, d.hostIp, id));
                }
            }
            services.add(new ServiceEntry(p.proto, p.port, buckets));
        }
        return new VipEntry(v.vip, v.aggregate, services).normalized();
    }

    /** What an HMux holds for {@code v}: its units alone. */
    public VipEntry hmuxEntry(Vip v) {
        return smuxEntry(v).hmuxForm();
    }

    /** The id keys of every bucket of {@code vips} (what the map must keep for them). */
    public static Set<String> keys(Collection<Vip> vips) {
        Set<String> out = new HashSet<>();
        for (Vip v : vips) {
            for (VipPort p : v.ports) {
                int[] units = Wcmp.units(p.dips);
                for (int i = 0; i < units.length; i++) {
                    for (int k = 0; k < Math.max(1, units[i]); k++) {
                        out.add(key(v.vip, service(p), p.dips.get(i).ip, k));
                    }
                }
            }
        }
        return out;
    }

    private static String service(VipPort p) {
        return p.proto + "/" + p.port;
    }

    private static String key(String vip, String service, String dip, int unit) {
        return vip + "|" + service + "|" + dip + (unit == 0 ? "" : "#" + unit);
    }

    private Set<Integer> usedIds(String vip, String service) {
        String prefix = vip + "|" + service + "|";
        Set<Integer> used = new HashSet<>();
        ids.get().forEach((k, id) -> {
            if (k.startsWith(prefix)) {
                used.add(id);
            }
        });
        return used;
    }

    private static int lowestFree(Set<Integer> used) {
        int free = 0;
        while (used.contains(free)) {
            free++;
        }
        used.add(free);
        return free;
    }
}
