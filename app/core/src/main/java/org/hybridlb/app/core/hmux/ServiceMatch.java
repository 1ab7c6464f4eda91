package org.hybridlb.app.core.hmux;

import java.util.Comparator;
import java.util.Objects;

/**
 * What an HMux entry matches: a VIP, and a protocol ({@code tcp}, {@code udp}, or {@code any} for
 * the whole VIP) with a destination port (0: every port). Ordered by VIP, protocol, port.
 */
public final class ServiceMatch implements Comparable<ServiceMatch> {
    public static final String ANY = "any";
    private static final Comparator<ServiceMatch> ORDER = Comparator.comparing((ServiceMatch m) -> m.vip)
            .thenComparing(m -> m.proto).thenComparingInt(m -> m.port);

    public final String vip;
    public final String proto;
    public final int port;

    public ServiceMatch(String vip, String proto, int port) {
        if (!"tcp".equals(proto) && !"udp".equals(proto) && !ANY.equals(proto)) {
            throw new IllegalArgumentException("proto must be tcp, udp or any, got " + proto);
        }
        if (port < 0 || port > 65535 || ANY.equals(proto) && port != 0) {
            throw new IllegalArgumentException("port " + port + " for " + proto);
        }
        this.vip = Objects.requireNonNull(vip, "vip");
        this.proto = proto;
        this.port = port;
    }

    /** True for {@code any}: the whole VIP, every protocol. */
    public boolean wholeVip() {
        return ANY.equals(proto);
    }

    /** "proto/port", the service key of the VIP configuration. */
    public String service() {
        return proto + "/" + port;
    }

    @Override
    public int compareTo(ServiceMatch o) {
        return ORDER.compare(this, o);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ServiceMatch)) {
            return false;
        }
        ServiceMatch m = (ServiceMatch) o;
        return vip.equals(m.vip) && proto.equals(m.proto) && port == m.port;
    }

    @Override
    public int hashCode() {
        return Objects.hash(vip, proto, port);
    }

    @Override
    public String toString() {
        return vip + " " + service();
    }
}
