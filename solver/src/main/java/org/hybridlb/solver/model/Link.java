package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

/** A full-duplex link between two switches (or a switch and a host); capacity per direction. */
public final class Link {
    public final String a;
    public final String b;
    public final double capacityBps;

    @JsonCreator
    public Link(@JsonProperty("a") String a,
                @JsonProperty("b") String b,
                @JsonProperty("capacityBps") double capacityBps) {
        this.a = a;
        this.b = b;
        this.capacityBps = capacityBps;
    }
}
