package org.hybridlb.standalone.ovs;

import org.hybridlb.app.core.hmux.HmuxLayout;
import org.hybridlb.app.core.stats.CounterSample;

/**
 * Reads the traffic counters of one switch from its controller flows (the cookie layout of
 * {@link HmuxLayout}): the bytes of each VIP's HMux entries and of its {@code VIP/32} routes
 * towards the HMux.
 */
public final class OvsCounters {
    /** Cookie kind (low bits) of an HMux entry. */
    public static final int KIND_ENTRY = HmuxLayout.Kind.ENTRY.code;
    /** Cookie kind of a {@code VIP/32} route towards the HMux. */
    public static final int KIND_ROUTE = HmuxLayout.Kind.ROUTE.code;

    private OvsCounters() {
    }

    /** Adds the counters of {@code dumpFlows} (the controller's flows of {@code switchId}) to {@code sample}. */
    public static void add(CounterSample.Builder sample, String switchId, String dumpFlows) {
        for (OvsDump.Flow f : OvsDump.flows(dumpFlows)) {
            String vip = f.match.get("nw_dst");
            if (vip == null) {
                continue;
            }
            int kind = (int) (f.cookie & HmuxLayout.KIND_MASK);
            if (kind == KIND_ENTRY) {
                sample.hmuxEntryBytes(vip, switchId, f.bytes);
            } else if (kind == KIND_ROUTE) {
                sample.routeBytes(vip, switchId, f.bytes);
            }
        }
        sample.read(switchId);
    }
}
