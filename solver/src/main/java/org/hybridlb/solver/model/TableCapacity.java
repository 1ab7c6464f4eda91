package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Free table entries a switch offers to hybridlb (Duet §3.2.2, §3.8.1): the host table holds
 * one entry per VIP (or per VIP port), the ECMP table one per DIP (WCMP repeats), the tunnel
 * table one per distinct encapsulation target.
 */
public final class TableCapacity {
    public static final int DEFAULT_HOST = 16 * 1024;
    public static final int DEFAULT_ECMP = 4 * 1024;
    public static final int DEFAULT_TUNNEL = 512;
    public static final TableCapacity DEFAULTS =
            new TableCapacity(DEFAULT_HOST, DEFAULT_ECMP, DEFAULT_TUNNEL);

    public final int host;
    public final int ecmp;
    public final int tunnel;

    @JsonCreator
    public TableCapacity(@JsonProperty("host") Integer host,
                         @JsonProperty("ecmp") Integer ecmp,
                         @JsonProperty("tunnel") Integer tunnel) {
        this.host = host == null ? DEFAULT_HOST : host;
        this.ecmp = ecmp == null ? DEFAULT_ECMP : ecmp;
        this.tunnel = tunnel == null ? DEFAULT_TUNNEL : tunnel;
    }

    @Override
    public String toString() {
        return "host=" + host + " ecmp=" + ecmp + " tunnel=" + tunnel;
    }
}
