package org.hybridlb.app.core.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Objects;

/** One service of a VIP on the data path: protocol, port ("any"/0 = the whole VIP) and DIP pool. */
public final class ServiceEntry {
    public final String proto;
    public final int port;
    public final List<Bucket> dips;

    @JsonCreator
    public ServiceEntry(@JsonProperty("proto") String proto, @JsonProperty("port") int port,
                        @JsonProperty("dips") List<Bucket> dips) {
        this.proto = proto;
        this.port = port;
        this.dips = List.copyOf(dips);
    }

    /** "proto/port", the service key of migration steps. */
    public String key() {
        return proto + "/" + port;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ServiceEntry)) {
            return false;
        }
        ServiceEntry s = (ServiceEntry) o;
        return proto.equals(s.proto) && port == s.port && dips.equals(s.dips);
    }

    @Override
    public int hashCode() {
        return Objects.hash(proto, port, dips);
    }

    @Override
    public String toString() {
        return key() + dips;
    }
}
