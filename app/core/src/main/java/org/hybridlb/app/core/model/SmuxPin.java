package org.hybridlb.app.core.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Objects;

/**
 * A flow pin on an SMux ({@code POST /pins}, smux/README.md): the flow client:clientPort ->
 * vip:vipPort goes to {@code dip} (IP-in-IP or GRE as the VIP's service), whatever the VIP's
 * selection picks. {@code dip} is null in a removal, which names the flow only.
 */
@JsonPropertyOrder({"client", "clientPort", "vip", "vipPort", "proto", "dip"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class SmuxPin {
    public final String client;
    public final int clientPort;
    public final String vip;
    public final int vipPort;
    public final String proto;
    public final String dip;

    @JsonCreator
    public SmuxPin(@JsonProperty("client") String client, @JsonProperty("clientPort") int clientPort,
                   @JsonProperty("vip") String vip, @JsonProperty("vipPort") int vipPort,
                   @JsonProperty("proto") String proto, @JsonProperty("dip") String dip) {
        this.client = Objects.requireNonNull(client, "client");
        this.clientPort = clientPort;
        this.vip = Objects.requireNonNull(vip, "vip");
        this.vipPort = vipPort;
        this.proto = proto == null ? "tcp" : proto;
        this.dip = dip;
    }

    /** The same flow without its DIP: the body of a removal. */
    public SmuxPin flowOnly() {
        return new SmuxPin(client, clientPort, vip, vipPort, proto, null);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SmuxPin)) {
            return false;
        }
        SmuxPin p = (SmuxPin) o;
        return client.equals(p.client) && clientPort == p.clientPort && vip.equals(p.vip) && vipPort == p.vipPort
                && proto.equals(p.proto) && Objects.equals(dip, p.dip);
    }

    @Override
    public int hashCode() {
        return Objects.hash(client, clientPort, vip, vipPort, proto, dip);
    }

    @Override
    public String toString() {
        return client + ":" + clientPort + "->" + vip + ":" + vipPort + "/" + proto + (dip == null ? "" : " => " + dip);
    }
}
