package org.hybridlb.app.onos.fabric;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.hybridlb.app.core.model.Bucket;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.port.SmuxControl;

/**
 * Tells the SMuxes which Open vSwitch hash the HMuxes use under ONOS. The core asks for
 * {@code "selection": "ovs"}: pick the DIP the OVS HMux would pick. ONOS programs OpenFlow 1.3
 * select groups, without a selection method, so OVS uses its default dp_hash method rather than
 * the {@code selection_method=hash} that "ovs" replicates: the tables go to the SMuxes as
 * {@code "ovs-dphash"} (smux/src/ovs_dphash.c), and come back to the core as "ovs". A VIP with a pool
 * OVS would not hash with dp_hash (see {@link #dpHashPossible}) goes as {@code "crc32"}: OVS then
 * hashes Ethernet addresses, which no SMux sees, so nothing could agree with it.
 */
public final class OvsDefaultSelection implements SmuxControl {
    public static final String SELECTION = "ovs-dphash";
    /** OVS hashes a group without selection method with dp_hash only up to this many slots. */
    static final int OVS_DPHASH_MAX_SLOTS = 64;

    private final SmuxControl smux;

    public OvsDefaultSelection(SmuxControl smux) {
        this.smux = smux;
    }

    @Override
    public void putTable(String smuxId, SmuxTable table) {
        smux.putTable(smuxId, toSmux(table));
    }

    @Override
    public SmuxTable getTable(String smuxId) {
        return toCore(smux.getTable(smuxId));
    }

    @Override
    public Map<String, Long> divergingConnections(String smuxId) {
        return smux.divergingConnections(smuxId);
    }

    @Override
    public Map<String, Long> vipBytes(String smuxId) {
        return smux.vipBytes(smuxId);
    }

    /**
     * Whether OVS 3.1 picks among these buckets with dp_hash when the group has no selection method:
     * ceil(total weight / smallest non-zero weight) at most 64 (ofproto-dpif.c).
     */
    public static boolean dpHashPossible(List<Bucket> buckets) {
        long total = 0;
        long min = Long.MAX_VALUE;
        for (Bucket b : buckets) {
            total += b.weight;
            if (b.weight > 0) {
                min = Math.min(min, b.weight);
            }
        }
        return total == 0 || (total + min - 1) / min <= OVS_DPHASH_MAX_SLOTS;
    }

    /** What the SMux gets for an entry the core wants hashed like OVS. */
    static String smuxSelection(SmuxTable.Entry e) {
        return e.ports.stream().allMatch(p -> dpHashPossible(p.dips)) ? SELECTION : "crc32";
    }

    static SmuxTable toSmux(SmuxTable t) {
        List<SmuxTable.Entry> out = new ArrayList<>();
        for (SmuxTable.Entry e : t.vips) {
            out.add("ovs".equals(e.selection) ? with(e, smuxSelection(e)) : e);
        }
        return new SmuxTable(t.version, out);
    }

    /** The exact inverse of {@link #toSmux}: what it made of "ovs" reads as "ovs" again. */
    static SmuxTable toCore(SmuxTable t) {
        if (t == null) {
            return null;
        }
        List<SmuxTable.Entry> out = new ArrayList<>();
        for (SmuxTable.Entry e : t.vips) {
            out.add(e.selection != null && e.selection.equals(smuxSelection(e)) ? with(e, "ovs") : e);
        }
        return new SmuxTable(t.version, out);
    }

    private static SmuxTable.Entry with(SmuxTable.Entry e, String selection) {
        return new SmuxTable.Entry(e.vip, e.aggregate, selection, e.encap, e.ports);
    }
}
