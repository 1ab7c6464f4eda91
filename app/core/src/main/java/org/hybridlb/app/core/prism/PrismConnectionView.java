package org.hybridlb.app.core.prism;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * A client connection of a Prism VIP ({@code GET /prism/{vip}/connections}): who owns it now (the
 * front end, or the backend DIP it was handed to) and its hand-off state ({@code reading}: the front
 * end reads a request; {@code wait-imported}, {@code remote}, {@code wait-return}: a hand-off in flight).
 */
@JsonPropertyOrder({"frontend", "id", "client", "state", "owner", "requests"})
public final class PrismConnectionView {
    public final String frontend;
    public final long id;
    public final String client;
    public final String state;
    public final String owner;
    public final long requests;

    @JsonCreator
    public PrismConnectionView(@JsonProperty("frontend") String frontend, @JsonProperty("id") long id,
                               @JsonProperty("client") String client, @JsonProperty("state") String state,
                               @JsonProperty("owner") String owner, @JsonProperty("requests") long requests) {
        this.frontend = frontend;
        this.id = id;
        this.client = client;
        this.state = state;
        this.owner = owner;
        this.requests = requests;
    }

    /** Not read by the front end: a hand-off is in flight or a backend holds the connection. */
    public boolean handedOff() {
        return !"reading".equals(state);
    }
}
