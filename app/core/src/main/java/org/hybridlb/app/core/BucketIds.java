package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.ServiceEntry;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;

/**
 * Stable bucket ids (the persisted {@code "vip|proto/port|dip" -> id}): a DIP keeps its id while
 * it stays in its pool and a joining DIP takes the lowest free one. HMux and SMux hash over the
 * same ids, so both pick the same DIP and removing one DIP moves only its connections.
 */
final class BucketIds {
    private final StateKeeper keeper;

    BucketIds(StateKeeper keeper) {
        this.keeper = keeper;
    }

    /** The data-path form of a VIP configuration: services sorted, buckets by id. */
    VipEntry entry(Vip v) {
        List<ServiceEntry> services = new ArrayList<>();
        for (VipPort p : v.ports) {
            String service = p.proto + "/" + p.port;
            List<Bucket> buckets = new ArrayList<>();
            for (Dip d : p.dips) {
                buckets.add(new Bucket(d.ip, d.weight, d.hostIp, id(v.vip, service, d.ip)));
            }
            services.add(new ServiceEntry(p.proto, p.port, buckets));
        }
        return new VipEntry(v.vip, v.aggregate, services).normalized();
    }

    private int id(String vip, String service, String dip) {
        java.util.Map<String, Integer> ids = keeper.state().bucketIds;
        String key = key(vip, service, dip);
        Integer id = ids.get(key);
        if (id != null) {
            return id;
        }
        String prefix = vip + "|" + service + "|";
        Set<Integer> used = new HashSet<>();
        ids.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                used.add(v);
            }
        });
        int free = 0;
        while (used.contains(free)) {
            free++;
        }
        ids.put(key, free);
        return free;
    }

    private static String key(String vip, String service, String dip) {
        return vip + "|" + service + "|" + dip;
    }

    /** Forgets the ids of DIPs that are neither desired nor installed. */
    static void prune(ControllerState s) {
        Set<String> keep = new HashSet<>();
        List<Vip> all = new ArrayList<>(s.desired);
        all.addAll(s.installedVips.values());
        for (Vip v : all) {
            for (VipPort p : v.ports) {
                for (Dip d : p.dips) {
                    keep.add(key(v.vip, p.proto + "/" + p.port, d.ip));
                }
            }
        }
        s.bucketIds.keySet().retainAll(keep);
    }
}
