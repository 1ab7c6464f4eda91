package org.hybridlb.app.core.p4;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A table entry: the table (P4Info name and id), its match fields (in field id order), its
 * priority (0 in tables without ternary or range fields: every HMux table), and what it runs: an
 * action, or an action profile member or group (tables with an action selector). The
 * {@link #cookie} is the controller's mark ({@link org.hybridlb.app.core.hmux.HmuxLayout#cookie}):
 * a device keeps it and gives it back on read (P4Runtime's {@code TableEntry.metadata}).
 */
public final class P4TableEntry implements P4Entity {
    public final String table;
    public final int tableId;
    public final List<P4Match> matches;
    public final int priority;
    /** The action of a direct table; null for an action profile table. */
    public final P4Action action;
    /** The group of an action selector table, or null. */
    public final Long groupId;
    /** The member of an action profile table, or null. */
    public final Long memberId;
    /** The controller's mark; 0 for none. */
    public final long cookie;

    private P4TableEntry(String table, int tableId, List<P4Match> matches, int priority, P4Action action,
                         Long groupId, Long memberId, long cookie) {
        if ((action != null ? 1 : 0) + (groupId != null ? 1 : 0) + (memberId != null ? 1 : 0) != 1) {
            throw new IllegalArgumentException(table + ": an entry runs exactly one of an action, a group, a member");
        }
        this.table = Objects.requireNonNull(table);
        this.tableId = tableId;
        List<P4Match> m = new ArrayList<>(matches);
        Collections.sort(m);
        this.matches = Collections.unmodifiableList(m);
        this.priority = priority;
        this.action = action;
        this.groupId = groupId;
        this.memberId = memberId;
        this.cookie = cookie;
    }

    public static P4TableEntry withAction(String table, int tableId, List<P4Match> matches, P4Action action,
                                          long cookie) {
        return new P4TableEntry(table, tableId, matches, 0, Objects.requireNonNull(action), null, null, cookie);
    }

    public static P4TableEntry withGroup(String table, int tableId, List<P4Match> matches, long groupId, long cookie) {
        return new P4TableEntry(table, tableId, matches, 0, null, groupId, null, cookie);
    }

    public static P4TableEntry withMember(String table, int tableId, List<P4Match> matches, long memberId,
                                          long cookie) {
        return new P4TableEntry(table, tableId, matches, 0, null, null, memberId, cookie);
    }

    /** Any entry, as a device gives it back (priority as read). */
    public static P4TableEntry read(String table, int tableId, List<P4Match> matches, int priority, P4Action action,
                                    Long groupId, Long memberId, long cookie) {
        return new P4TableEntry(table, tableId, matches, priority, action, groupId, memberId, cookie);
    }

    /** The match field with P4Info id {@code fieldId}, or null (a wildcard). */
    public P4Match match(int fieldId) {
        for (P4Match m : matches) {
            if (m.fieldId == fieldId) {
                return m;
            }
        }
        return null;
    }

    @Override
    public String key() {
        return "table " + table + " " + matches + (priority != 0 ? " priority " + priority : "");
    }

    @Override
    public int dependencyRank() {
        if (HmuxP4Layout.isCookieServerTable(tableId)) {
            return 0; // refers to nothing; accepted before a group sends connections to the server
        }
        return HmuxP4Layout.leadsTo(this) ? 2 : 3;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof P4TableEntry)) {
            return false;
        }
        P4TableEntry e = (P4TableEntry) o;
        return tableId == e.tableId && matches.equals(e.matches) && priority == e.priority
                && Objects.equals(action, e.action) && Objects.equals(groupId, e.groupId)
                && Objects.equals(memberId, e.memberId) && cookie == e.cookie;
    }

    @Override
    public int hashCode() {
        return Objects.hash(tableId, matches, priority, action, groupId, memberId, cookie);
    }

    @Override
    public String toString() {
        return key() + " -> " + (action != null ? action : groupId != null ? "group " + groupId : "member " + memberId)
                + (cookie != 0 ? " cookie 0x" + Long.toHexString(cookie) : "");
    }
}
