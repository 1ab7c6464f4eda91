package org.hybridlb.solver.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A virtual IP, the aggregate prefix the SMuxes announce for it, and its ports. {@code affinity}
 * says what keeps a connection on its DIP: {@code hash} (absent: the hash and the SMuxes'
 * connection table), {@code cheetah} (the Cheetah cookie its server's host agent writes,
 * p4/COOKIE-SPEC.md) or {@code cheetah-stateful} (the cookie carries an index into the owner
 * SMux's ConnTable, COOKIE-SPEC §7); {@code mechanism} how such a VIP's SYNs pick a DIP
 * ({@code wrr} when absent, {@code rr}, {@code hash}, {@code p2c}, {@code least-loaded},
 * {@code awrr}); {@code cookieHash} the keyed hash its hosts write the cookies with ({@code siphash13}
 * when absent; {@code crc32c} only for VIPs a CRC-only P4 HMux must decode: CRC-32C is linear, so a
 * client that saw one cookie can aim any tuple at the same server, COOKIE-SPEC §5; fixed for the
 * VIP's life, as live connections' cookies would stop decoding); {@code prism} the Prism request hand-off, when the VIP
 * has one (its front ends and rules: {@link PrismConfig}; no effect on the muxes, which balance
 * connections over the front ends as over any pool). Absent fields are left out of the JSON.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"vip", "aggregate", "affinity", "mechanism", "cookieHash", "ports", "prism"})
public final class Vip {
    public static final String AFFINITY_HASH = "hash";
    public static final String AFFINITY_CHEETAH = "cheetah";
    public static final String AFFINITY_CHEETAH_STATEFUL = "cheetah-stateful";
    public static final String MECHANISM_WRR = "wrr";
    /** The mechanisms that place SYNs by the DIPs' loads, which their host agents report to the SMuxes. */
    public static final Set<String> LOAD_MECHANISMS = Set.of("p2c", "least-loaded", "awrr");
    public static final String COOKIE_HASH_SIPHASH13 = "siphash13";
    public static final String COOKIE_HASH_CRC32C = "crc32c";

    public final String vip;
    public final String aggregate;
    public final String affinity;
    public final String mechanism;
    public final String cookieHash;
    public final List<VipPort> ports;
    public final PrismConfig prism;

    public Vip(String vip, String aggregate, List<VipPort> ports) {
        this(vip, aggregate, null, null, ports);
    }

    public Vip(String vip, String aggregate, String affinity, String mechanism, List<VipPort> ports) {
        this(vip, aggregate, affinity, mechanism, ports, null);
    }

    public Vip(String vip, String aggregate, String affinity, String mechanism, List<VipPort> ports,
               PrismConfig prism) {
        this(vip, aggregate, affinity, mechanism, null, ports, prism);
    }

    @JsonCreator
    public Vip(@JsonProperty("vip") String vip,
               @JsonProperty("aggregate") String aggregate,
               @JsonProperty("affinity") String affinity,
               @JsonProperty("mechanism") String mechanism,
               @JsonProperty("cookieHash") String cookieHash,
               @JsonProperty("ports") List<VipPort> ports,
               @JsonProperty("prism") PrismConfig prism) {
        this.vip = vip;
        this.aggregate = aggregate;
        this.affinity = affinity;
        this.mechanism = mechanism;
        this.cookieHash = cookieHash;
        this.ports = List.copyOf(ports);
        this.prism = prism;
    }

    /** The same VIP (address, aggregate, affinity, mechanism, cookie hash, Prism hand-off) with other services. */
    public Vip withPorts(List<VipPort> newPorts) {
        return new Vip(vip, aggregate, affinity, mechanism, cookieHash, newPorts, prism);
    }

    /**
     * True when cookies keep its connections ({@code cheetah} or {@code cheetah-stateful}): a mux
     * needs to decode them (COOKIE-SPEC §4–§5), each pool has one DIP per host.
     */
    @JsonIgnore
    public boolean cheetah() {
        return AFFINITY_CHEETAH.equals(affinity) || stateful();
    }

    /** True for {@code cheetah-stateful}: the SMux table names the VIP's owner SMuxes (COOKIE-SPEC §7). */
    @JsonIgnore
    public boolean stateful() {
        return AFFINITY_CHEETAH_STATEFUL.equals(affinity);
    }

    /** The affinity, its default applied: {@code hash} when absent. */
    @JsonIgnore
    public String effectiveAffinity() {
        return affinity == null ? AFFINITY_HASH : affinity;
    }

    /** The SYN mechanism of a cheetah VIP, its default applied; null for a hash VIP. */
    @JsonIgnore
    public String effectiveMechanism() {
        return !cheetah() ? null : mechanism == null ? MECHANISM_WRR : mechanism;
    }

    /** True for a cheetah VIP whose SYNs pick a DIP by load ({@link #LOAD_MECHANISMS}). */
    @JsonIgnore
    public boolean balancesByLoad() {
        return cheetah() && LOAD_MECHANISMS.contains(effectiveMechanism());
    }

    /** The cookie hash mode of a cheetah VIP, its default applied; null for a hash VIP. */
    @JsonIgnore
    public String effectiveCookieHash() {
        return !cheetah() ? null : cookieHash == null ? COOKIE_HASH_SIPHASH13 : cookieHash;
    }

    /** Same affinity, mechanism and cookie hash, defaults applied (so absent equals "hash", "wrr", "siphash13"). */
    public boolean sameAffinity(Vip o) {
        return effectiveAffinity().equals(o.effectiveAffinity())
                && Objects.equals(effectiveMechanism(), o.effectiveMechanism())
                && Objects.equals(effectiveCookieHash(), o.effectiveCookieHash());
    }
}
