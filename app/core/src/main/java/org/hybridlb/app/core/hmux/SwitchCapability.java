package org.hybridlb.app.core.hmux;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import org.hybridlb.app.core.cheetah.Cookie;

/**
 * What a switch's southbound says about the switch as an HMux: the hash contract the SMuxes must
 * follow to agree with it, whether it keeps bucket ids and DIPs in its select groups (OpenFlow 1.5
 * buckets carry ids; OpenFlow 1.3 buckets through ONOS carry neither, so a bucket is known by its
 * position and tunnel endpoint), whether its routes fall back to the aggregates in the data path,
 * and the Cheetah cookie hash modes it decodes (COOKIE-SPEC §5): it must read TCP options (P4, not
 * Open vSwitch), compute the mode's hash (the P4 programs have CRC-32C, no keyed PRF) and be
 * programmed with the cookie tables by its southbound. A cheetah VIP may be an HMux's only where
 * the switch decodes the mode its hosts encode the VIP's cookies with ({@link Cookie#modeOf}).
 */
public final class SwitchCapability {
    public final HashContract hash;
    public final boolean keepsBucketIds;
    public final boolean keepsDips;
    public final boolean fastFailover;
    /** The cookie hash modes the switch decodes as an HMux; empty: none. */
    public final Set<Cookie.HashMode> cookieModes;
    /** Whether it decodes cookies of some mode (for views). */
    public final boolean decodesCookies;

    public SwitchCapability(HashContract hash, boolean keepsBucketIds, boolean keepsDips, boolean fastFailover,
                            Set<Cookie.HashMode> cookieModes) {
        this.hash = Objects.requireNonNull(hash);
        this.keepsBucketIds = keepsBucketIds;
        this.keepsDips = keepsDips;
        this.fastFailover = fastFailover;
        this.cookieModes = cookieModes.isEmpty() ? Set.of()
                : Collections.unmodifiableSet(EnumSet.copyOf(cookieModes));
        this.decodesCookies = !this.cookieModes.isEmpty();
    }

    /** Whether the switch decodes cookies hashed with {@code mode}. */
    public boolean decodes(Cookie.HashMode mode) {
        return cookieModes.contains(mode);
    }

    /**
     * {@code intent} as this switch can hold it: buckets renumbered by position where it keeps no
     * ids (a cookie server's bucket too, -1 when it has none among the service's buckets), without
     * DIPs where it keeps none, the fallback only where it fails over in the data path, cookies only
     * of the modes it decodes.
     */
    public SwitchIntent holdable(SwitchIntent intent) {
        boolean allCookies = intent.cookies.values().stream().allMatch(c -> decodes(c.mode));
        if (keepsBucketIds && keepsDips && intent.fallback == fastFailover && allCookies) {
            return intent;
        }
        SwitchIntent.Builder b = intent.toBuilder();
        b.fallback = fastFailover;
        b.cookies.values().removeIf(c -> !decodes(c.mode));
        if (!keepsBucketIds || !keepsDips) {
            Map<ServiceMatch, List<DipBucket>> entries = new TreeMap<>();
            intent.entries.forEach((m, buckets) -> {
                List<DipBucket> out = new ArrayList<>();
                for (DipBucket x : buckets) {
                    out.add(x.as(keepsBucketIds ? x.id : out.size(), keepsDips ? x.dip : null));
                }
                entries.put(m, out);
            });
            b.entries.clear();
            b.entries.putAll(entries);
            if (!keepsBucketIds) {
                b.cookies.replaceAll((m, c) -> positional(c, intent.entries.getOrDefault(m, List.of())));
            }
        }
        return b.build();
    }

    /** {@code c} with each server's bucket the position of its bucket in {@code buckets}, or -1. */
    private static CookieDecode positional(CookieDecode c, List<DipBucket> buckets) {
        Map<Integer, CookieDecode.Server> servers = new TreeMap<>();
        c.servers.forEach((id, s) -> {
            int position = -1;
            for (int i = 0; i < buckets.size() && position < 0; i++) {
                position = buckets.get(i).id == s.bucket ? i : -1;
            }
            servers.put(id, new CookieDecode.Server(s.endpoint, position));
        });
        return new CookieDecode(c.mode, c.key, servers);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SwitchCapability)) {
            return false;
        }
        SwitchCapability c = (SwitchCapability) o;
        return hash.equals(c.hash) && keepsBucketIds == c.keepsBucketIds && keepsDips == c.keepsDips
                && fastFailover == c.fastFailover && cookieModes.equals(c.cookieModes);
    }

    @Override
    public int hashCode() {
        return Objects.hash(hash, keepsBucketIds, keepsDips, fastFailover, cookieModes);
    }

    @Override
    public String toString() {
        return "hash " + hash + (keepsBucketIds ? "" : ", positional buckets") + (keepsDips ? "" : ", no DIPs")
                + (fastFailover ? ", fast failover" : "") + (decodesCookies ? ", decodes cookies " + cookieModes : "");
    }
}
