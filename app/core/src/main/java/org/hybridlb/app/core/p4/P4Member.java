package org.hybridlb.app.core.p4;

import java.util.Objects;

/** An action profile member: the profile (P4Info name and id), the member id and its action. */
public final class P4Member implements P4Entity {
    public final String profile;
    public final int profileId;
    public final long memberId;
    public final P4Action action;

    public P4Member(String profile, int profileId, long memberId, P4Action action) {
        this.profile = Objects.requireNonNull(profile);
        this.profileId = profileId;
        this.memberId = memberId;
        this.action = Objects.requireNonNull(action);
    }

    @Override
    public String key() {
        return "member " + profile + " " + memberId;
    }

    @Override
    public int dependencyRank() {
        return 0;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof P4Member)) {
            return false;
        }
        P4Member m = (P4Member) o;
        return profileId == m.profileId && memberId == m.memberId && action.equals(m.action);
    }

    @Override
    public int hashCode() {
        return Objects.hash(profileId, memberId, action);
    }

    @Override
    public String toString() {
        return key() + " " + action;
    }
}
