package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * A direct IP behind a VIP. {@code hostIp} is the address packets are tunnelled to when the
 * DIP is a VM or container on that host (Duet §3.5.2, "virtualized clusters"); when absent
 * the DIP itself is the tunnel endpoint.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class Dip {
    public final String ip;
    public final int weight;
    public final String hostIp;

    @JsonCreator
    public Dip(@JsonProperty("ip") String ip,
               @JsonProperty("weight") Integer weight,
               @JsonProperty("hostIp") String hostIp) {
        this.ip = ip;
        this.weight = weight == null ? 1 : weight;
        this.hostIp = hostIp;
    }

    /** The address the HMux or SMux encapsulates towards. */
    public String tunnelEndpoint() {
        return hostIp != null ? hostIp : ip;
    }
}
