package org.hybridlb.app.core.cheetah;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;
import org.hybridlb.solver.model.Ipv4;

/**
 * The stateful owner slots of the SMuxes (COOKIE-SPEC §7), kept in a {@link CookieState}: a
 * cheetah-stateful VIP's {@code statefulOwners} is the slot list, owner id = position, the same
 * for every such VIP.
 *
 * <ul>
 * <li>Every live SMux holds a slot while there is one free (at most {@link #MAX}); one without a
 *     slot owns nothing and forwards (the SMux's two tiers). The lowest free slot is given.</li>
 * <li>A slot stays with its SMux while it lives: an SMux that is lost keeps its address in its
 *     slot for {@link CookieRegistry#QUARANTINE} (its connections' cookies name the slot; if it was
 *     only cut off from the controller, they keep reaching it), and takes the slot back if it
 *     returns in that time with no other SMux in it. An SMux without a slot takes a lost SMux's
 *     slot first (the lowest), before a free one: the host agents then re-report the slot's open
 *     connections to it (COOKIE-SPEC §7, "Adoption"), so they go on instead of waiting for an SMux
 *     that may never return. A lost SMux that returns after that gets a slot like a new one.</li>
 * <li>A free slot below a held one stays in the list as {@link #placeholder}: the SMux refuses
 *     0.0.0.0 and repeated addresses, so a hole is a distinct address of 0.0.0.0/8, which no SMux
 *     has and no router forwards. No cookie names a free slot (its quarantine is over), and no SYN
 *     is sent to it: a free slot exists only while every live SMux holds a slot, so every SMux
 *     owns and none forwards SYNs by hash. Free slots at the end are left out.</li>
 * </ul>
 */
public final class OwnerSlots {
    /** Owner ids are 4 bits (COOKIE-SPEC §4, §7). */
    public static final int MAX = 16;

    private final LongSupplier clock;

    public OwnerSlots(LongSupplier clockMillis) {
        this.clock = clockMillis;
    }

    public OwnerSlots() {
        this(System::currentTimeMillis);
    }

    /** The address standing for free slot {@code slot} in a list: {@code 0.0.0.(slot + 1)}. */
    public static String placeholder(int slot) {
        return "0.0.0." + (slot + 1);
    }

    /**
     * Brings the slots of {@code s} in line with the live SMuxes' addresses: quarantines the slots
     * of lost SMuxes, gives back those of returning ones, frees the expired, gives live SMuxes
     * without one (in address order) the lost SMuxes' slots, then free ones; returns whether
     * anything changed (persist it).
     */
    public boolean update(CookieState s, Collection<String> liveSmuxIps) {
        long now = clock.getAsLong();
        Set<String> live = new TreeSet<>(Comparator.comparingLong(ip -> Integer.toUnsignedLong(Ipv4.parse(ip))));
        live.addAll(liveSmuxIps);
        boolean changed = false;
        for (Iterator<Map.Entry<Integer, String>> it = s.ownerSlots.entrySet().iterator(); it.hasNext();) {
            Map.Entry<Integer, String> e = it.next();
            int slot = e.getKey();
            if (live.remove(e.getValue())) {
                changed |= s.ownerQuarantine.remove(slot) != null; // back in time: its slot again
            } else if (!s.ownerQuarantine.containsKey(slot)) {
                s.ownerQuarantine.put(slot, now + CookieRegistry.QUARANTINE.toMillis());
                changed = true;
            } else if (s.ownerQuarantine.get(slot) <= now) {
                s.ownerQuarantine.remove(slot);
                it.remove();
                changed = true;
            }
        }
        Iterator<Integer> lost = new TreeSet<>(s.ownerQuarantine.keySet()).iterator();
        int slot = 0;
        for (String ip : live) {
            if (lost.hasNext()) { // a lost SMux's slot: its connections are re-reported to ip
                int l = lost.next();
                s.ownerQuarantine.remove(l);
                s.ownerSlots.put(l, ip);
                changed = true;
                continue;
            }
            while (slot < MAX && s.ownerSlots.containsKey(slot)) {
                slot++;
            }
            if (slot == MAX) {
                break; // the others own nothing: they forward to the owners
            }
            s.ownerSlots.put(slot, ip);
            changed = true;
        }
        return changed;
    }

    /** The {@code statefulOwners} list: slot i's address at position i, free slots as placeholders. */
    public static List<String> owners(CookieState s) {
        List<String> out = new ArrayList<>();
        if (s.ownerSlots.isEmpty()) {
            return out;
        }
        for (int i = 0; i <= s.ownerSlots.lastKey(); i++) {
            out.add(s.ownerSlots.getOrDefault(i, placeholder(i)));
        }
        return out;
    }
}
