package org.hybridlb.app.core.hmux;

import java.util.Objects;

/**
 * One bucket of an HMux select group, as the core hands it over: its bucket id (the SMuxes hash
 * over the same ids, so both pick the same DIP), the DIP, the tunnel endpoint packets are
 * encapsulated towards (the DIP's host) and the device weight. A switch that does not keep bucket
 * ids or DIPs ({@link SwitchCapability}) is given and reads back the bucket without them.
 */
public final class DipBucket {
    public final int id;
    /** The DIP, or null where the switch does not keep it (the tunnel endpoint is what it acts on). */
    public final String dip;
    public final String endpoint;
    public final int weight;

    public DipBucket(int id, String dip, String endpoint, int weight) {
        if (weight < 1 || weight > 65535) {
            throw new IllegalArgumentException("bucket " + id + ": device weight must be 1..65535, got " + weight);
        }
        this.id = id;
        this.dip = dip;
        this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
        this.weight = weight;
    }

    /** The same bucket with another id and DIP (what a switch that keeps less gives back). */
    public DipBucket as(int newId, String newDip) {
        return new DipBucket(newId, newDip, endpoint, weight);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof DipBucket)) {
            return false;
        }
        DipBucket b = (DipBucket) o;
        return id == b.id && Objects.equals(dip, b.dip) && endpoint.equals(b.endpoint) && weight == b.weight;
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, dip, endpoint, weight);
    }

    @Override
    public String toString() {
        return (dip != null && !dip.equals(endpoint) ? dip + " via " : "") + endpoint + "#" + id
                + (weight != 1 ? " w" + weight : "");
    }
}
