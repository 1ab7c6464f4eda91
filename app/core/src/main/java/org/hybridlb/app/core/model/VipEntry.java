package org.hybridlb.app.core.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Objects;

/**
 * A VIP as it is programmed on an HMux or an SMux: its aggregate and its services with their
 * buckets. Ports return these from what is installed, so the controller can diff them by
 * {@link #equals}.
 */
public final class VipEntry {
    public final String vip;
    public final String aggregate;
    public final List<ServiceEntry> ports;

    @JsonCreator
    public VipEntry(@JsonProperty("vip") String vip, @JsonProperty("aggregate") String aggregate,
                    @JsonProperty("ports") List<ServiceEntry> ports) {
        this.vip = vip;
        this.aggregate = aggregate;
        this.ports = List.copyOf(ports);
    }

    /** Buckets of every service (on an HMux, its ECMP entries: one per WCMP unit). */
    public int bucketCount() {
        int n = 0;
        for (ServiceEntry s : ports) {
            n += s.dips.size();
        }
        return n;
    }

    /**
     * What an HMux holds of this entry: its buckets without the drained DIPs' (weight 0). An HMux
     * pins nothing, so a drained DIP needs no bucket there (and costs no ECMP entry); the SMuxes
     * keep it for the connections they pinned to it ({@link SmuxTable#of}).
     */
    public VipEntry hmuxForm() {
        List<ServiceEntry> out = new java.util.ArrayList<>();
        boolean same = true;
        for (ServiceEntry s : ports) {
            List<Bucket> live = new java.util.ArrayList<>();
            for (Bucket b : s.dips) {
                if (b.weight > 0) {
                    live.add(b);
                }
            }
            same &= live.size() == s.dips.size();
            out.add(new ServiceEntry(s.proto, s.port, live));
        }
        return same ? this : new VipEntry(vip, aggregate, out);
    }

    /** The same entry with services sorted by protocol and port and buckets by id (for diffs). */
    public VipEntry normalized() {
        List<ServiceEntry> out = new java.util.ArrayList<>();
        for (ServiceEntry s : ports) {
            List<Bucket> b = new java.util.ArrayList<>(s.dips);
            b.sort(java.util.Comparator.comparingInt(x -> x.bucketId));
            out.add(new ServiceEntry(s.proto, s.port, b));
        }
        out.sort(java.util.Comparator.comparing((ServiceEntry s) -> s.proto).thenComparingInt(s -> s.port));
        return new VipEntry(vip, aggregate, out);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof VipEntry)) {
            return false;
        }
        VipEntry e = (VipEntry) o;
        return vip.equals(e.vip) && Objects.equals(aggregate, e.aggregate) && ports.equals(e.ports);
    }

    @Override
    public int hashCode() {
        return Objects.hash(vip, aggregate, ports);
    }

    @Override
    public String toString() {
        return vip + ports;
    }
}
