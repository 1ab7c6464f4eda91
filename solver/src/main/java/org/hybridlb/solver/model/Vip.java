package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** A virtual IP, the aggregate prefix the SMuxes announce for it, and its ports. */
public final class Vip {
    public final String vip;
    public final String aggregate;
    public final List<VipPort> ports;

    @JsonCreator
    public Vip(@JsonProperty("vip") String vip,
               @JsonProperty("aggregate") String aggregate,
               @JsonProperty("ports") List<VipPort> ports) {
        this.vip = vip;
        this.aggregate = aggregate;
        this.ports = List.copyOf(ports);
    }
}
