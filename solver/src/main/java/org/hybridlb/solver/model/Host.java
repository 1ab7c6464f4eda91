package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

/** A server attached to a ToR; DIPs live on hosts (a host may carry several DIPs, §3.5.2). */
public final class Host {
    public final String id;
    public final String ip;
    public final String tor;

    @JsonCreator
    public Host(@JsonProperty("id") String id,
                @JsonProperty("ip") String ip,
                @JsonProperty("tor") String tor) {
        this.id = id;
        this.ip = ip;
        this.tor = tor;
    }
}
