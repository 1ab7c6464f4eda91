package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;

/** A front end of a Prism VIP: the DIP whose host runs it, and the base URL of its admin API. */
public final class PrismFrontend {
    public final String ip;
    public final String admin;

    @JsonCreator
    public PrismFrontend(@JsonProperty("ip") String ip, @JsonProperty("admin") String admin) {
        this.ip = ip;
        this.admin = admin;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PrismFrontend && ip.equals(((PrismFrontend) o).ip) && admin.equals(((PrismFrontend) o).admin);
    }

    @Override
    public int hashCode() {
        return Objects.hash(ip, admin);
    }
}
