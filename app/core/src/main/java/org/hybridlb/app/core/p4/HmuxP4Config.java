package org.hybridlb.app.core.p4;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import org.hybridlb.app.core.hmux.HashContract;
import org.hybridlb.app.core.hmux.HmuxLayout;

/**
 * What the HMux layer must know of the fabric to render a switch's intent into the P4 programs'
 * entities and read it back:
 *
 * <ul>
 * <li>the encapsulation the switch's HMux entries use (the SMuxes and host agents must match it);</li>
 * <li>the next id (table {@code next_hop}) of the fabric's routes towards each switch: a VIP route
 *     towards an HMux is the VIP's {@code /32} to that next id;</li>
 * <li>each SMux's address: an aggregate's member towards an SMux takes the hop the switch's own
 *     routes give that address (a BGP next hop resolved recursively), so the controller needs no
 *     port or MAC of the fabric;</li>
 * <li>the ids the controller owns next to the fabric's: the cookie base of its table entries
 *     ({@link HmuxLayout#cookie}), the aggregates' next ids (and their {@code ecmp_selector} groups)
 *     and the {@code ecmp_selector} member id of each SMux. Everything in the HMux tables and the
 *     {@code dip_selector} profile is the controller's.</li>
 * </ul>
 */
public final class HmuxP4Config {
    /** The emulation's and the default: the fabric's next ids lie below this (locations, 0x8000 + port). */
    public static final int DEFAULT_AGGREGATE_NEXT_ID_BASE = 0x7000;
    public static final int AGGREGATE_NEXT_IDS = 0x400;
    public static final long DEFAULT_SMUX_MEMBER_BASE = 0x4c420000L;
    public static final int SMUX_MEMBERS = 0x10000;

    public final HashContract.Encap encap;
    public final long cookieBase;
    /** Switch id -> next id of the fabric's route towards it. */
    public final SortedMap<String, Integer> nextIds;
    /** SMux id -> its address. */
    public final SortedMap<String, String> smuxAddresses;
    public final int aggregateNextIdBase;
    public final long smuxMemberBase;

    public HmuxP4Config(HashContract.Encap encap, long cookieBase, Map<String, Integer> nextIds,
                        Map<String, String> smuxAddresses, int aggregateNextIdBase, long smuxMemberBase) {
        HmuxLayout.cookie(cookieBase, HmuxLayout.Kind.ENTRY, 0); // checks the base
        if (aggregateNextIdBase < 1 || aggregateNextIdBase + AGGREGATE_NEXT_IDS > 0x10000) {
            throw new IllegalArgumentException("aggregate next id base " + aggregateNextIdBase
                    + ": its " + AGGREGATE_NEXT_IDS + " next ids must fit 16 bits");
        }
        if (smuxMemberBase < 1 || smuxMemberBase + SMUX_MEMBERS > 0xffffffffL) {
            throw new IllegalArgumentException("SMux member base " + smuxMemberBase + ": must fit 32 bits");
        }
        for (Map.Entry<String, Integer> n : nextIds.entrySet()) {
            if (n.getValue() >= aggregateNextIdBase && n.getValue() < aggregateNextIdBase + AGGREGATE_NEXT_IDS) {
                throw new IllegalArgumentException("next id " + n.getValue() + " of switch " + n.getKey()
                        + " lies in the controller's aggregate next ids from " + aggregateNextIdBase);
            }
        }
        this.encap = Objects.requireNonNull(encap);
        this.cookieBase = cookieBase;
        this.nextIds = Collections.unmodifiableSortedMap(new TreeMap<>(nextIds));
        this.smuxAddresses = Collections.unmodifiableSortedMap(new TreeMap<>(smuxAddresses));
        this.aggregateNextIdBase = aggregateNextIdBase;
        this.smuxMemberBase = smuxMemberBase;
    }

    /** With the default id ranges. */
    public HmuxP4Config(HashContract.Encap encap, long cookieBase, Map<String, Integer> nextIds,
                        Map<String, String> smuxAddresses) {
        this(encap, cookieBase, nextIds, smuxAddresses, DEFAULT_AGGREGATE_NEXT_ID_BASE, DEFAULT_SMUX_MEMBER_BASE);
    }

    /** Whether {@code nextId} is one of the controller's aggregate next ids. */
    public boolean isAggregateNextId(long nextId) {
        return nextId >= aggregateNextIdBase && nextId < aggregateNextIdBase + AGGREGATE_NEXT_IDS;
    }

    /** Whether {@code memberId} is one of the controller's {@code ecmp_selector} members. */
    public boolean isSmuxMember(long memberId) {
        return memberId >= smuxMemberBase && memberId < smuxMemberBase + SMUX_MEMBERS;
    }

    /** The {@code ecmp_selector} member id of SMux {@code smuxId}: by its rank among the fabric's SMuxes. */
    public long smuxMemberId(String smuxId) {
        int i = 0;
        for (String id : smuxAddresses.keySet()) {
            if (id.equals(smuxId)) {
                return smuxMemberBase + i;
            }
            i++;
        }
        throw new IllegalArgumentException("no SMux " + smuxId + " in the fabric");
    }

    /** The SMux whose member id is {@code memberId}, or null. */
    public String smuxOfMember(long memberId) {
        long i = memberId - smuxMemberBase;
        if (i < 0 || i >= smuxAddresses.size()) {
            return null;
        }
        return smuxAddresses.keySet().stream().skip(i).findFirst().orElse(null);
    }

    /** The switch the fabric's next id {@code nextId} leads to, or null. */
    public String switchOfNextId(long nextId) {
        for (Map.Entry<String, Integer> e : nextIds.entrySet()) {
            if (e.getValue() == nextId) {
                return e.getKey();
            }
        }
        return null;
    }
}
