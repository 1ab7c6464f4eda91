package org.hybridlb.app.core;

import java.util.ArrayList;
import java.util.List;
import org.hybridlb.app.core.model.VipEntry;
import org.hybridlb.app.core.model.WcmpBuckets;
import org.hybridlb.solver.model.Vip;

/**
 * The stable bucket ids of the persisted state ({@code bucketIds}) and the data-path entries built
 * with them ({@link WcmpBuckets}: one bucket per WCMP unit, ids stable while a unit stays in its
 * pool). HMux and SMux hash over the same ids, so both pick the same DIP, and removing a DIP or a
 * unit moves only its connections.
 */
final class BucketIds {
    private final WcmpBuckets buckets;

    BucketIds(StateKeeper keeper) {
        this.buckets = new WcmpBuckets(() -> keeper.state().bucketIds);
    }

    /** What an HMux holds for a VIP configuration: one bucket per WCMP unit; services sorted, buckets by id. */
    VipEntry entry(Vip v) {
        return buckets.hmuxEntry(v);
    }

    /** What the SMuxes hold: the units, and a bucket of weight 0 for each drained DIP (its pinned connections stay). */
    VipEntry smuxEntry(Vip v) {
        return buckets.smuxEntry(v);
    }

    /** Forgets the ids of buckets that are neither desired nor installed. */
    static void prune(ControllerState s) {
        List<Vip> all = new ArrayList<>(s.desired);
        all.addAll(s.installedVips.values());
        s.bucketIds.keySet().retainAll(WcmpBuckets.keys(all));
    }
}
