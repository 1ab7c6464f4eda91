package org.hybridlb.app.core.hmux;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.hybridlb.app.core.model.Bucket;

/**
 * How an SMux must hash and encapsulate to pick, for every connection, the DIP a given switch picks
 * as HMux: the selection method, its hash basis and the encapsulation; or "no agreement possible",
 * with why. A VIP's connections survive the failover between its HMux and the SMuxes (Duet §3.5.1)
 * only when the SMuxes follow the contract of that HMux. The southbound of each switch says which
 * contract it offers ({@link SwitchCapability#hash}); the SMux knows every selection here.
 */
public final class HashContract {
    /** The SMux's selection methods ({@code "selection"} of its table). */
    public enum Selection {
        /** Open vSwitch's {@code selection_method=hash} over the 5-tuple, bit for bit. */
        OVS_HASH("ovs"),
        /** Open vSwitch's default select method (dp_hash), as OpenFlow 1.3 groups without a method get it. */
        OVS_DP_HASH("ovs-dphash"),
        /** CRC32 over the 5-tuple (p4/HASH-SPEC.md): P4 and ASIC pipelines. */
        CRC32("crc32");

        /** Open vSwitch hashes a group without selection method with dp_hash only up to this many slots. */
        static final int OVS_DPHASH_MAX_SLOTS = 64;

        public final String smuxName;

        Selection(String smuxName) {
            this.smuxName = smuxName;
        }

        /**
         * Why a pool cannot be picked from with this selection (so that the SMux and the switch would
         * disagree), or null when it can. OVS's dp_hash: ceil(total weight / smallest non-zero weight)
         * slots at most 64 (ofproto-dpif.c; the SMux refuses the same pools).
         */
        public String refuses(List<Bucket> pool) {
            if (this != OVS_DP_HASH) {
                return null;
            }
            long total = 0;
            long min = Long.MAX_VALUE;
            for (Bucket b : pool) {
                total += b.weight;
                if (b.weight > 0) {
                    min = Math.min(min, b.weight);
                }
            }
            long slots = total == 0 ? 0 : (total + min - 1) / min;
            return slots <= OVS_DPHASH_MAX_SLOTS ? null : "its pool needs " + slots + " dp_hash slots (total weight "
                    + total + " / smallest weight " + min + "), Open vSwitch's default select group hashes with at most "
                    + OVS_DPHASH_MAX_SLOTS;
        }
    }

    /** The SMux's encapsulations ({@code "encap"} of its table). */
    public enum Encap {
        GRE, IPIP;

        public String smuxName() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Encap of(String name) {
            return valueOf(name.toUpperCase(Locale.ROOT));
        }
    }

    /** Null when no agreement is possible. */
    public final Selection selection;
    /** The hash basis (OVS's {@code selection_method_param}, 64 unsigned bits). */
    public final long basis;
    public final Encap encap;
    /** Why no SMux can agree with the switch; null when one can. */
    public final String noAgreement;

    private HashContract(Selection selection, long basis, Encap encap, String noAgreement) {
        this.selection = selection;
        this.basis = basis;
        this.encap = encap;
        this.noAgreement = noAgreement;
    }

    public static HashContract of(Selection selection, long basis, Encap encap) {
        return new HashContract(Objects.requireNonNull(selection), basis, Objects.requireNonNull(encap), null);
    }

    public static HashContract none(String why) {
        return new HashContract(null, 0, null, Objects.requireNonNull(why));
    }

    public boolean agrees() {
        return noAgreement == null;
    }

    /**
     * Why the SMuxes cannot follow this contract for a VIP with these pools (no agreement at all, or
     * a pool the selection cannot pick from), or null when they can.
     */
    public String refuses(List<List<Bucket>> pools) {
        if (!agrees()) {
            return noAgreement;
        }
        for (List<Bucket> p : pools) {
            String why = selection.refuses(p);
            if (why != null) {
                return why;
            }
        }
        return null;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof HashContract)) {
            return false;
        }
        HashContract c = (HashContract) o;
        return selection == c.selection && basis == c.basis && encap == c.encap
                && Objects.equals(noAgreement, c.noAgreement);
    }

    @Override
    public int hashCode() {
        return Objects.hash(selection, basis, encap, noAgreement);
    }

    @Override
    public String toString() {
        return agrees() ? selection.smuxName + (basis != 0 ? " basis " + Long.toUnsignedString(basis) : "") + " "
                + encap.smuxName() : "no agreement: " + noAgreement;
    }
}
