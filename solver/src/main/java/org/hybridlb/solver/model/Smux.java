package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

/** A software mux attached to a ToR, announcing every VIP aggregate. */
public final class Smux {
    public final String id;
    public final String ip;
    public final String tor;
    public final double capacityBps;

    @JsonCreator
    public Smux(@JsonProperty("id") String id,
                @JsonProperty("ip") String ip,
                @JsonProperty("tor") String tor,
                @JsonProperty("capacityBps") double capacityBps) {
        this.id = id;
        this.ip = ip;
        this.tor = tor;
        this.capacityBps = capacityBps;
    }
}
