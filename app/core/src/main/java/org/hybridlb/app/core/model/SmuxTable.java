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
import org.hybridlb.app.core.hmux.HashContract;

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
        List<Entry> out = new ArrayList<>();
        for (VipEntry v : entries) {
            HashContract c = contracts.get(v.vip);
            if (c == null || !c.agrees()) {
                throw new IllegalArgumentException("VIP " + v.vip + ": no hash contract the SMuxes can follow: " + c);
            }
            List<Port> ports = new ArrayList<>();
            for (ServiceEntry s : v.ports) {
                if ("any".equals(s.proto)) {
                    ports.add(new Port("tcp", 0, s.dips));
                    ports.add(new Port("udp", 0, s.dips));
                } else {
                    ports.add(new Port(s.proto, s.port, s.dips));
                }
            }
            out.add(new Entry(v.vip, v.aggregate, c.selection.smuxName, c.encap.smuxName(), c.basis, ports));
        }
        return new SmuxTable(version, out);
    }

    /** Same VIPs, pools and buckets, whatever the version. */
    public boolean sameVips(SmuxTable other) {
        return other != null && new java.util.HashSet<>(vips).equals(new java.util.HashSet<>(other.vips))
                && vips.size() == other.vips.size();
    }

    /** One VIP of the table. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @JsonPropertyOrder({"vip", "aggregate", "selection", "encap", "hashBasis", "ports"})
    public static final class Entry {
        public final String vip;
        public final String aggregate;
        public final String selection;
        public final String encap;
        public final List<Port> ports;
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
            this.vip = vip;
            this.aggregate = aggregate;
            this.selection = selection;
            this.encap = encap;
            this.hashBasisBits = hashBasisBits;
            this.ports = List.copyOf(ports);
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
                              @JsonProperty("hashBasis") JsonNode hashBasis, @JsonProperty("ports") List<Port> ports) {
            return new Entry(vip, aggregate, selection, encap, hashBasisBits(hashBasis), ports);
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
                    && hashBasisBits == e.hashBasisBits && ports.equals(e.ports);
        }

        @Override
        public int hashCode() {
            return Objects.hash(vip, aggregate, selection, encap, hashBasisBits, ports);
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
