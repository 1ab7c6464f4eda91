package org.hybridlb.app.core.prism;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Objects;

/**
 * One fabric steering pin of a Prism VIP with {@code steering: fabric}: the exact flow (client
 * address and port -> VIP and port) goes to the DIP of the backend that holds the connection, not
 * to the DIP the VIP's hash would pick. The front end asks for it at each hand-off and removes it
 * when the connection comes back or closes ({@code /prism/{vip}/pins}).
 */
@JsonPropertyOrder({"vip", "vipPort", "client", "clientPort", "backend", "dip"})
public final class PrismPin {
    public final String vip;
    public final int vipPort;
    public final String client;
    public final int clientPort;
    /** The backend's name in the VIP's {@code prism/backends}. */
    public final String backend;
    /** The backend's address (its DIP): where the fabric sends the flow. */
    public final String dip;

    @JsonCreator
    public PrismPin(@JsonProperty("vip") String vip, @JsonProperty("vipPort") int vipPort,
                    @JsonProperty("client") String client, @JsonProperty("clientPort") int clientPort,
                    @JsonProperty("backend") String backend, @JsonProperty("dip") String dip) {
        this.vip = Objects.requireNonNull(vip, "vip");
        this.vipPort = vipPort;
        this.client = Objects.requireNonNull(client, "client");
        this.clientPort = clientPort;
        this.backend = Objects.requireNonNull(backend, "backend");
        this.dip = Objects.requireNonNull(dip, "dip");
    }

    /** What identifies the pinned flow: one pin per flow, whichever backend it points at. */
    @JsonIgnore
    public String flow() {
        return flow(vip, vipPort, client, clientPort);
    }

    static String flow(String vip, int vipPort, String client, int clientPort) {
        return client + ":" + clientPort + "->" + vip + ":" + vipPort;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof PrismPin)) {
            return false;
        }
        PrismPin p = (PrismPin) o;
        return vip.equals(p.vip) && vipPort == p.vipPort && client.equals(p.client) && clientPort == p.clientPort
                && backend.equals(p.backend) && dip.equals(p.dip);
    }

    @Override
    public int hashCode() {
        return Objects.hash(vip, vipPort, client, clientPort, backend, dip);
    }

    @Override
    public String toString() {
        return flow() + " => " + backend + " (" + dip + ")";
    }
}
