package org.hybridlb.app.onos.p4;

import java.net.URL;
import java.util.List;
import java.util.Optional;
import org.hybridlb.app.core.p4.HlbP4Info;
import org.onosproject.net.pi.model.PiPipeconfId;

/**
 * The pipeconfs of the hybridlb P4 programs, one per profile of {@code p4/profiles.json}: their ids,
 * and the committed P4Info of each (a resource of the bundle). Free of ONOS's P4Runtime bundles, so
 * the app can ask which device runs which program on an ONOS without them
 * ({@link HlbPipeconfLoader} builds the pipeconfs).
 */
public final class HlbPipeconfs {
    /** Pipeconf ids: {@code org.hybridlb.<profile>}. */
    public static final String ID_PREFIX = "org.hybridlb.";
    public static final List<String> PROFILES = List.of(HlbP4Info.PROFILE_HLB_HMUX, HlbP4Info.PROFILE_HLB_CHEETAH,
            HlbP4Info.PROFILE_HLB_CHEETAH_STATEFUL);

    private HlbPipeconfs() {
    }

    /** The pipeconf id of {@code profile}. */
    public static PiPipeconfId id(String profile) {
        return new PiPipeconfId(ID_PREFIX + profile);
    }

    /** The profile a pipeconf id names, if it is one of ours. */
    public static Optional<String> profileOf(PiPipeconfId id) {
        String s = id == null ? "" : id.id();
        return s.startsWith(ID_PREFIX) && PROFILES.contains(s.substring(ID_PREFIX.length()))
                ? Optional.of(s.substring(ID_PREFIX.length())) : Optional.empty();
    }

    /** Whether {@code profile}'s program decodes Cheetah cookies. */
    public static boolean decodesCookies(String profile) {
        return !HlbP4Info.PROFILE_HLB_HMUX.equals(profile);
    }

    /** The committed P4Info of {@code profile} inside the bundle. */
    public static URL p4Info(String profile) {
        if (!PROFILES.contains(profile)) {
            throw new IllegalArgumentException("profile must be one of " + PROFILES + ", got " + profile);
        }
        URL url = HlbPipeconfs.class.getResource("/p4info/" + profile + ".p4info.txtpb");
        if (url == null) {
            throw new IllegalStateException("the bundle has no P4Info of " + profile);
        }
        return url;
    }
}
