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

    /** Table entries this VIP takes on an HMux: buckets (ECMP) and distinct tunnel targets. */
    public int bucketCount() {
        int n = 0;
        for (ServiceEntry s : ports) {
            n += s.dips.size();
        }
        return n;
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
