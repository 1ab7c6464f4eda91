package org.hybridlb.app.core.p4;

/**
 * A P4Runtime entity the HMux layer writes: a table entry, an action profile member or an action
 * profile group. {@link #key} is what the device identifies it by (the table and match, or the
 * profile and id): two entities with one key are the same object in two states.
 */
public interface P4Entity {
    /** The device's identity of this entity, e.g. {@code table HlbIngress.hmux.vip_whole dst_addr=0x0a000001}. */
    String key();

    /**
     * The order writes must respect: members (0) before the groups listing them (1) before the
     * entries that point at groups (2) before the entries that lead to those (3).
     */
    int dependencyRank();
}
