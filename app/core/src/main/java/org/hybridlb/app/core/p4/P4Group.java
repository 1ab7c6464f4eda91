package org.hybridlb.app.core.p4;

import java.util.List;
import java.util.Objects;

/**
 * An action profile group: the profile, the group id and its member ids in order, each of weight 1
 * (WCMP weights are weight-unit members, p4/README.md). The order is the order members were created
 * in, which is the order a selector picks by (ascending member ids, in pool order).
 */
public final class P4Group implements P4Entity {
    public final String profile;
    public final int profileId;
    public final long groupId;
    public final List<Long> memberIds;
    /** The size the group was created for (P4Runtime {@code max_size}); 0: the device's default. */
    public final int maxSize;

    public P4Group(String profile, int profileId, long groupId, List<Long> memberIds, int maxSize) {
        this.profile = Objects.requireNonNull(profile);
        this.profileId = profileId;
        this.groupId = groupId;
        this.memberIds = List.copyOf(memberIds);
        this.maxSize = maxSize;
    }

    @Override
    public String key() {
        return "group " + profile + " " + groupId;
    }

    @Override
    public int dependencyRank() {
        return 1;
    }

    /** Equal ignoring {@link #maxSize} (fixed at creation, not part of what the group selects). */
    @Override
    public boolean equals(Object o) {
        if (!(o instanceof P4Group)) {
            return false;
        }
        P4Group g = (P4Group) o;
        return profileId == g.profileId && groupId == g.groupId && memberIds.equals(g.memberIds);
    }

    @Override
    public int hashCode() {
        return Objects.hash(profileId, groupId, memberIds);
    }

    @Override
    public String toString() {
        return key() + " " + memberIds;
    }
}
