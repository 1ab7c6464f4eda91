package org.hybridlb.app.core.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.solver.model.Vip;

/**
 * The whole VIP table of an SMux, exactly the JSON document of the SMux control API
 * ({@code PUT /table}: {@code {"version": n, "vips": [...]}}; the SMux swaps it atomically and
 * refuses a version that is not greater than the running one). The SMux knows only tcp and udp
 * services, port 0 meaning all ports of the VIP; a VIP balanced as a whole ("any"/0) becomes
 * tcp/0 and udp/0 with the same buckets.
 */
public final class SmuxTable {
    public final long version;
    public final List<Entry> vips;

    @JsonCreator
    public SmuxTable(@JsonProperty("version") long version, @JsonProperty("vips") List<Entry> vips) {
        this.version = version;
        this.vips = vips == null ? List.of() : List.copyOf(vips);
    }

    /**
     * The table for {@code entries}, selecting DIPs with the OVS hash and encapsulating with {@code encap}.
     * A drained DIP's bucket (weight 0: no new flow, the connections pinned to it stay) changes no
     * choice: OVS's select group treats a weight-0 bucket as not live, and the SMux's other modes
     * give it no slot, so the SMux picks what the HMux, which has no such bucket, picks.
     */
    public static SmuxTable of(long version, Collection<VipEntry> entries, String encap) {
        Map<String, HashContract> contracts = new HashMap<>();
        HashContract c = HashContract.of(HashContract.Selection.OVS_HASH, 0, HashContract.Encap.of(encap));
        entries.forEach(e -> contracts.put(e.vip, c));
        return of(version, entries, contracts);
    }

    /**
     * The table for {@code entries}, each VIP hashed and encapsulated as its contract says (the
     * contract of its HMux: {@code contracts} by VIP), so that the SMuxes pick the DIP its HMux picks.
     */
    public static SmuxTable of(long version, Collection<VipEntry> entries, Map<String, HashContract> contracts) {
        return of(version, entries, contracts, Map.of());
    }

    /**
     * The same, with the cookie fields of the cheetah VIPs ({@code cookies} by VIP; the others are
     * written exactly as without them).
     */
    public static SmuxTable of(long version, Collection<VipEntry> entries, Map<String, HashContract> contracts,
                               Map<String, Cheetah> cookies) {
        List<Entry> out = new ArrayList<>();
        for (VipEntry v : entries) {
            HashContract c = contracts.get(v.vip);
            if (c == null || !c.agrees()) {
                throw new IllegalArgumentException("VIP " + v.vip + ": no hash contract the SMuxes can follow: " + c);
            }
            Cheetah k = cookies.get(v.vip);
            List<Port> ports = new ArrayList<>();
            for (ServiceEntry s : v.ports) {
                List<Bucket> dips = k == null ? s.dips : k.withServerIds(s.dips);
                if ("any".equals(s.proto)) {
                    ports.add(new Port("tcp", 0, dips));
                    ports.add(new Port("udp", 0, dips));
                } else {
                    ports.add(new Port(s.proto, s.port, dips));
                }
            }
            Entry e = new Entry(v.vip, v.aggregate, c.selection.smuxName, c.encap.smuxName(), c.basis, ports);
            out.add(k == null ? e : e.withCookies(k));
        }
        return new SmuxTable(version, out);
    }

    /** Same VIPs, pools and buckets, whatever the version. */
    public boolean sameVips(SmuxTable other) {
        return other != null && new java.util.HashSet<>(vips).equals(new java.util.HashSet<>(other.vips))
                && vips.size() == other.vips.size();
    }

    /**
     * What a cheetah VIP's entry carries besides its pool (smux/README.md, VIP table): its affinity,
     * the SYN mechanism, the key (32 hex digits), the hash mode, its DIP hosts' server ids and, for
     * {@code cheetah-stateful}, its owner SMuxes' addresses (owner id = position, COOKIE-SPEC §7).
     */
    public static final class Cheetah {
        public final String affinity;
        public final String mechanism;
        public final String key;
        public final Cookie.HashMode hash;
        /** Tunnel endpoint -> server id. */
        public final Map<String, Integer> serverIds;
        /** The owner SMuxes of a cheetah-stateful VIP, null for a cheetah one. */
        public final List<String> statefulOwners;

        public Cheetah(String mechanism, String key, Cookie.HashMode hash, Map<String, Integer> serverIds) {
            this(Vip.AFFINITY_CHEETAH, mechanism, key, hash, serverIds, null);
        }

        public Cheetah(String affinity, String mechanism, String key, Cookie.HashMode hash,
                       Map<String, Integer> serverIds, List<String> statefulOwners) {
            if (Vip.AFFINITY_CHEETAH_STATEFUL.equals(affinity) != (statefulOwners != null)) {
                throw new IllegalArgumentException("statefulOwners go with affinity cheetah-stateful, and only with it");
            }
            this.affinity = affinity;
            this.mechanism = mechanism;
            this.key = key;
            this.hash = hash;
            this.serverIds = serverIds;
            this.statefulOwners = statefulOwners == null ? null : List.copyOf(statefulOwners);
        }

        List<Bucket> withServerIds(List<Bucket> dips) {
            List<Bucket> out = new ArrayList<>(dips.size());
            for (Bucket b : dips) {
                Integer id = serverIds.get(b.tunnelEndpoint());
                if (id == null) {
                    throw new IllegalStateException("DIP host " + b.tunnelEndpoint() + " has no Cheetah server id");
                }
                out.add(b.withServerId(id));
            }
            return out;
        }
    }

    /** One VIP of the table. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @JsonPropertyOrder({"vip", "aggregate", "selection", "encap", "hashBasis", "affinity", "cookieKey", "cookieHash",
                        "mechanism", "statefulOwners", "ports"})
    public static final class Entry {
        public final String vip;
        public final String aggregate;
        public final String selection;
        public final String encap;
        public final List<Port> ports;
        /** {@code cheetah}, {@code cheetah-stateful}, or absent: {@code hash}. */
        public final String affinity;
        /** A cheetah VIP's key as sent; never read back (an SMux shows its fingerprint instead). */
        public final String cookieKey;
        public final String cookieHash;
        public final String mechanism;
        /** A cheetah-stateful VIP's owner SMuxes, owner id = position; absent otherwise. */
        public final List<String> statefulOwners;
        /** The key's fingerprint (COOKIE-SPEC §8): from the key, or as an SMux's {@code GET /table} shows it. */
        @JsonIgnore
        public final String cookieKeyFingerprint;
        /**
         * The SMux's hash basis (OVS's {@code selection_method_param}, 64 unsigned bits), 0 when absent: that
         * of the VIP's hash contract. Compared, so that an SMux hashing with another basis than its HMux (a
         * table PUT by hand) is rewritten.
         */
        @JsonIgnore
        public final long hashBasisBits;

        public Entry(String vip, String aggregate, String selection, String encap, List<Port> ports) {
            this(vip, aggregate, selection, encap, 0, ports);
        }

        public Entry(String vip, String aggregate, String selection, String encap, long hashBasisBits,
                     List<Port> ports) {
            this(vip, aggregate, selection, encap, hashBasisBits, ports, null, null, null, null, null, null);
        }

        private Entry(String vip, String aggregate, String selection, String encap, long hashBasisBits,
                      List<Port> ports, String affinity, String cookieKey, String cookieHash, String mechanism,
                      List<String> statefulOwners, String cookieKeyFingerprint) {
            this.vip = vip;
            this.aggregate = aggregate;
            this.selection = selection;
            this.encap = encap;
            this.hashBasisBits = hashBasisBits;
            this.ports = List.copyOf(ports);
            this.affinity = affinity;
            this.cookieKey = cookieKey;
            this.cookieHash = cookieHash;
            this.mechanism = mechanism;
            this.statefulOwners = statefulOwners == null ? null : List.copyOf(statefulOwners);
            this.cookieKeyFingerprint = cookieKey != null ? Cookie.fingerprint(Cookie.parseKey(cookieKey))
                    : cookieKeyFingerprint;
        }

        /** The same entry as a cheetah VIP's (its buckets already carry their server ids). */
        Entry withCookies(Cheetah k) {
            return new Entry(vip, aggregate, selection, encap, hashBasisBits, ports, k.affinity, k.key,
                    k.hash.wireName(), k.mechanism, k.statefulOwners, null);
        }

        /** {@code hashBasis} as written: unsigned decimal text, absent when 0. */
        @JsonProperty("hashBasis")
        String hashBasisText() {
            return hashBasisBits == 0 ? null : Long.toUnsignedString(hashBasisBits);
        }

        /** An entry as the SMux returns it: {@code hashBasis} a JSON integer, or a decimal or 0x-hex string. */
        @JsonCreator
        static Entry fromJson(@JsonProperty("vip") String vip, @JsonProperty("aggregate") String aggregate,
                              @JsonProperty("selection") String selection, @JsonProperty("encap") String encap,
                              @JsonProperty("hashBasis") JsonNode hashBasis, @JsonProperty("ports") List<Port> ports,
                              @JsonProperty("affinity") String affinity, @JsonProperty("cookieKey") String cookieKey,
                              @JsonProperty("cookieHash") String cookieHash, @JsonProperty("mechanism") String mechanism,
                              @JsonProperty("statefulOwners") List<String> statefulOwners,
                              @JsonProperty("cookieKeyFingerprint") String fingerprint) {
            // the SMux leaves out what is its default: "hash" affinity; a cheetah VIP's siphash13 and wrr
            boolean cheetah = Vip.AFFINITY_CHEETAH.equals(affinity) || Vip.AFFINITY_CHEETAH_STATEFUL.equals(affinity);
            return new Entry(vip, aggregate, selection, encap, hashBasisBits(hashBasis), ports,
                    cheetah ? affinity : null, cookieKey,
                    cheetah && cookieHash == null ? Cookie.HashMode.SIPHASH13.wireName() : cookieHash,
                    cheetah && mechanism == null ? Vip.MECHANISM_WRR : mechanism, statefulOwners, fingerprint);
        }

        static long hashBasisBits(JsonNode basis) {
            if (basis == null || basis.isNull()) {
                return 0;
            }
            if (basis.isIntegralNumber() && basis.canConvertToLong() && basis.longValue() >= 0) {
                return basis.longValue();
            }
            if (basis.isTextual()) {
                // What the SMux takes: decimal or 0x-hex digits only (no sign, no spaces).
                String s = basis.asText();
                boolean hex = s.startsWith("0x") || s.startsWith("0X");
                String digits = hex ? s.substring(2) : s;
                if (digits.matches(hex ? "[0-9a-fA-F]+" : "[0-9]+")) {
                    try {
                        return Long.parseUnsignedLong(digits, hex ? 16 : 10);
                    } catch (NumberFormatException tooLarge) {
                        // reported below
                    }
                }
            }
            throw new IllegalArgumentException("hashBasis: not a 64-bit unsigned integer: " + basis);
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Entry)) {
                return false;
            }
            Entry e = (Entry) o;
            return vip.equals(e.vip) && Objects.equals(aggregate, e.aggregate)
                    && Objects.equals(selection, e.selection) && Objects.equals(encap, e.encap)
                    && hashBasisBits == e.hashBasisBits && ports.equals(e.ports)
                    && Objects.equals(affinity, e.affinity) && Objects.equals(cookieHash, e.cookieHash)
                    && Objects.equals(mechanism, e.mechanism) && Objects.equals(statefulOwners, e.statefulOwners)
                    && Objects.equals(cookieKeyFingerprint, e.cookieKeyFingerprint);
        }

        @Override
        public int hashCode() {
            return Objects.hash(vip, aggregate, selection, encap, hashBasisBits, ports, affinity, mechanism,
                    cookieKeyFingerprint);
        }
    }

    /** One service of a VIP: protocol, port (0 = all) and its buckets. */
    public static final class Port {
        public final String proto;
        public final int port;
        public final List<Bucket> dips;

        @JsonCreator
        public Port(@JsonProperty("proto") String proto, @JsonProperty("port") int port,
                    @JsonProperty("dips") List<Bucket> dips) {
            this.proto = proto;
            this.port = port;
            this.dips = List.copyOf(dips);
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Port)) {
                return false;
            }
            Port p = (Port) o;
            return proto.equals(p.proto) && port == p.port && dips.equals(p.dips);
        }

        @Override
        public int hashCode() {
            return Objects.hash(proto, port, dips);
        }
    }
}
