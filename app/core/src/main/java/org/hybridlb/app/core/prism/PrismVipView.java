package org.hybridlb.app.core.prism;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;

/** One Prism VIP of {@code GET /prism}: its front ends as the controller last saw them, and its backends. */
@JsonPropertyOrder({"vip", "frontends", "backends"})
public final class PrismVipView {
    public final String vip;
    public final List<Frontend> frontends;
    public final List<Backend> backends;

    @JsonCreator
    public PrismVipView(@JsonProperty("vip") String vip, @JsonProperty("frontends") List<Frontend> frontends,
                        @JsonProperty("backends") List<Backend> backends) {
        this.vip = vip;
        this.frontends = List.copyOf(frontends);
        this.backends = List.copyOf(backends);
    }

    /** A front end: whether it runs the VIP's rules, and its hand-off counters. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @JsonPropertyOrder({"ip", "admin", "state", "error", "pushes", "lastPush", "connections", "inFlight",
                        "handoffs", "returns", "clientResets", "handoffTimeouts"})
    public static final class Frontend {
        /** Its rules are the VIP's. */
        public static final String IN_SYNC = "in-sync";
        /** Not asked yet (a VIP just configured). */
        public static final String PENDING = "pending";
        /** Its admin API did not answer, or answered with an error. */
        public static final String UNREACHABLE = "unreachable";
        /** It refused the VIP's rules (its reason in {@code error}); it keeps the rules it had. */
        public static final String REFUSED = "refused";
        /** Its host agent reports the DIP unhealthy: not asked. */
        public static final String HOST_DOWN = "host-down";

        public final String ip;
        public final String admin;
        public final String state;
        public final String error;
        /** Rule documents pushed to it since the controller started (a restarted front end gets one again). */
        public final long pushes;
        /** When the last push was taken (ISO-8601), null before the first. */
        public final String lastPush;
        /** Connections it holds (as front end or through a backend), hand-offs in flight among them. */
        public final int connections;
        public final int inFlight;
        public final long handoffs;
        public final long returns;
        public final long clientResets;
        public final long handoffTimeouts;

        @JsonCreator
        public Frontend(@JsonProperty("ip") String ip, @JsonProperty("admin") String admin,
                        @JsonProperty("state") String state, @JsonProperty("error") String error,
                        @JsonProperty("pushes") long pushes, @JsonProperty("lastPush") String lastPush,
                        @JsonProperty("connections") int connections, @JsonProperty("inFlight") int inFlight,
                        @JsonProperty("handoffs") long handoffs, @JsonProperty("returns") long returns,
                        @JsonProperty("clientResets") long clientResets,
                        @JsonProperty("handoffTimeouts") long handoffTimeouts) {
            this.ip = ip;
            this.admin = admin;
            this.state = state;
            this.error = error;
            this.pushes = pushes;
            this.lastPush = lastPush;
            this.connections = connections;
            this.inFlight = inFlight;
            this.handoffs = handoffs;
            this.returns = returns;
            this.clientResets = clientResets;
            this.handoffTimeouts = handoffTimeouts;
        }
    }

    /** A backend: its host agent's word, and what the front ends see of it. */
    @JsonPropertyOrder({"name", "address", "controlPort", "hostHealthy", "upAt", "owned", "handoffs"})
    public static final class Backend {
        public final String name;
        public final String address;
        public final int controlPort;
        /** False when the host agents report its DIP unhealthy. */
        public final boolean hostHealthy;
        /** Front ends whose control connection to it is up. */
        public final int upAt;
        /** Connections it holds now, over all front ends. */
        public final int owned;
        public final long handoffs;

        @JsonCreator
        public Backend(@JsonProperty("name") String name, @JsonProperty("address") String address,
                       @JsonProperty("controlPort") int controlPort, @JsonProperty("hostHealthy") boolean hostHealthy,
                       @JsonProperty("upAt") int upAt, @JsonProperty("owned") int owned,
                       @JsonProperty("handoffs") long handoffs) {
            this.name = name;
            this.address = address;
            this.controlPort = controlPort;
            this.hostHealthy = hostHealthy;
            this.upAt = upAt;
            this.owned = owned;
            this.handoffs = handoffs;
        }
    }
}
