package org.hybridlb.solver.model;

import java.util.Locale;
import java.util.Objects;

/**
 * One load-balanced service of a VIP: a protocol and a port. {@code any/0} balances the whole
 * VIP (every protocol and port); tcp and udp services name a port from 1 to 65535 (Duet §3.5.2,
 * port-based load balancing). Written "proto/port" (e.g. {@code tcp/443}) in migration plans and
 * the controller's API.
 */
public final class ServiceKey implements Comparable<ServiceKey> {
    /** The protocol of a service, written in lower case in the JSON model. */
    public enum Protocol {
        TCP, UDP, ANY;

        /** "tcp", "udp" or "any". */
        public String json() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The protocol written {@code text}; IllegalArgumentException otherwise. */
        public static Protocol of(String text) {
            for (Protocol p : values()) {
                if (p.json().equals(text)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("unknown protocol '" + text + "' (tcp, udp or any)");
        }
    }

    /** The whole VIP: {@code any/0}. */
    public static final ServiceKey WHOLE_VIP = new ServiceKey(Protocol.ANY, 0);

    public final Protocol protocol;
    public final int port;

    private ServiceKey(Protocol protocol, int port) {
        this.protocol = protocol;
        this.port = port;
    }

    /**
     * The service of {@code protocol} and {@code port}; IllegalArgumentException unless the
     * protocol is any with port 0, or tcp/udp with a port from 1 to {@link Limits#MAX_PORT}.
     */
    public static ServiceKey of(Protocol protocol, int port) {
        if (protocol == Protocol.ANY) {
            if (port != 0) {
                throw new IllegalArgumentException("proto 'any' goes with port 0 (the whole VIP), and only it");
            }
            return WHOLE_VIP;
        }
        if (port < 1 || port > Limits.MAX_PORT) {
            throw new IllegalArgumentException(port == 0
                    ? "proto 'any' goes with port 0 (the whole VIP), and only it"
                    : "port " + port + " is out of range (1 to " + Limits.MAX_PORT + ")");
        }
        return new ServiceKey(protocol, port);
    }

    public static ServiceKey of(String protocol, int port) {
        return of(Protocol.of(protocol), port);
    }

    /** Parses "proto/port", e.g. {@code tcp/443} or {@code any/0}. */
    public static ServiceKey parse(String text) {
        int slash = text.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("a service is written proto/port, not '" + text + "'");
        }
        try {
            return of(text.substring(0, slash), Integer.parseInt(text.substring(slash + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("a service is written proto/port, not '" + text + "'");
        }
    }

    public boolean wholeVip() {
        return protocol == Protocol.ANY;
    }

    @Override
    public int compareTo(ServiceKey o) {
        int c = protocol.compareTo(o.protocol);
        return c != 0 ? c : Integer.compare(port, o.port);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ServiceKey && ((ServiceKey) o).protocol == protocol && ((ServiceKey) o).port == port;
    }

    @Override
    public int hashCode() {
        return Objects.hash(protocol, port);
    }

    /** "proto/port". */
    @Override
    public String toString() {
        return protocol.json() + "/" + port;
    }
}
