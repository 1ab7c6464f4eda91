package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * One load-balanced service of a VIP: a protocol and port with its DIP pool (port-based
 * load balancing, Duet §3.5.2). {@code proto = "any"} with {@code port = 0} balances the whole VIP.
 */
public final class VipPort {
    public final String proto;
    public final int port;
    public final List<Dip> dips;

    @JsonCreator
    public VipPort(@JsonProperty("proto") String proto,
                   @JsonProperty("port") int port,
                   @JsonProperty("dips") List<Dip> dips) {
        this.proto = proto;
        this.port = port;
        this.dips = List.copyOf(dips);
    }

    /** The typed service; IllegalArgumentException for a pair the model checks refuse (any/80). */
    public ServiceKey service() {
        return ServiceKey.of(proto, port);
    }
}
