package org.hybridlb.app.core.cheetah;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongSupplier;
import org.hybridlb.solver.model.Ipv4;

/**
 * The stateful owner slots of the SMuxes (COOKIE-SPEC §7), kept in a {@link CookieState}: a
 * cheetah-stateful VIP's {@code statefulOwners} is the slot list, owner id = position, the same
 * for every such VIP. An SMux may hold several slots (its address at several positions): it owns
 * each id with its own index space, gives its SYNs indexes under its lowest id, and keeps placing
 * the connections of the others (adopted, or hinted before it got them) until they close.
 *
 * <ul>
 * <li>A slot stays with its SMux while it lives. An SMux that is lost has its slots quarantined
 *     ({@link CookieRegistry#QUARANTINE}; its connections' cookies name them); it takes them back
 *     if it returns while they are still quarantined.</li>
 * <li>A live SMux without a slot (in address order) takes, in this order: the slots it held
 *     itself before it was lost that others now hold as extras (each unless it is its holder's
 *     last or lowest); else the lowest lost slot; else the lowest free one (at most {@link #MAX}); else a
 *     slot taken from the SMux holding the most slots, if that is two or more (ties: the higher
 *     address), its highest slot, never its lowest (its SYNs' id). Extra slots thus go back to
 *     SMuxes that have none before any SMux owns nothing; with every slot held once, an SMux past
 *     16 owns nothing and forwards (the SMux's two tiers).</li>
 * <li>A lost slot that no SMux without a slot took goes at once to the live SMux holding the
 *     fewest slots (ties: the lower address), as an extra slot, so a lost SMux's connections go
 *     on instead of waiting an hour for an SMux that may never return (a lost SMux's announcements
 *     are gone, so no traffic reaches it). So while any SMux lives, no slot stays quarantined;
 *     with none live, lost slots stay quarantined, then are freed.</li>
 * <li>A lost SMux that returns takes back its slots held as extras (the first rule), so a flap
 *     (a BGP session reset, a controller restart that sees the SMuxes one by one) moves the
 *     slots there and back rather than piling them on the survivors, and an SMux back with the
 *     table it had names the ids it holds again. Not the holder's lowest slot: its SYNs may have
 *     taken indexes under that id, which entries left in the returning SMux's memory (it may have
 *     been only cut off) would refuse. Whenever a slot goes to another SMux, the host
 *     agents re-report its open connections to that SMux (COOKIE-SPEC §7, "Adoption"). An SMux's
 *     last slot is never taken from it.</li>
 * <li>A free slot below a held one stays in the list as {@link #placeholder}: the SMux refuses
 *     0.0.0.0, and a hole is a distinct address of 0.0.0.0/8 (no SMux has it, no router forwards
 *     it; distinct, so two holes never read as one SMux holding both). No cookie names a free
 *     slot (its quarantine is over), and no SYN is sent to it: a free slot exists only while every
 *     live SMux holds a slot, so every SMux owns and none forwards SYNs by hash. Free slots at the
 *     end are left out.</li>
 * </ul>
 */
public final class OwnerSlots {
    /** Owner ids are 4 bits (COOKIE-SPEC §4, §7). */
    public static final int MAX = 16;

    /** SMux addresses in numeric order (10.0.1.9 before 10.0.1.10). */
    private static final Comparator<String> ADDRESS_ORDER =
            Comparator.comparingLong(ip -> Integer.toUnsignedLong(Ipv4.parse(ip)));

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
     * Brings the slots of {@code s} in line with the live SMuxes' addresses by the rules above:
     * quarantines the slots of lost SMuxes, gives back those of returning ones, frees the expired,
     * gives every live SMux without one a slot, then the lost slots left to the SMuxes holding the
     * fewest; returns whether anything changed (persist it).
     */
    public boolean update(CookieState s, Collection<String> liveSmuxIps) {
        long now = clock.getAsLong();
        Set<String> live = new TreeSet<>(ADDRESS_ORDER);
        live.addAll(liveSmuxIps);
        boolean changed = false;
        for (Iterator<Map.Entry<Integer, String>> it = s.ownerSlots.entrySet().iterator(); it.hasNext();) {
            Map.Entry<Integer, String> e = it.next();
            int slot = e.getKey();
            if (live.contains(e.getValue())) {
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
        Map<String, TreeSet<Integer>> held = new TreeMap<>(ADDRESS_ORDER); // live SMux -> its slots
        s.ownerSlots.forEach((slot, ip) -> {
            if (live.contains(ip)) {
                held.computeIfAbsent(ip, k -> new TreeSet<>()).add(slot);
            }
        });
        TreeSet<Integer> lost = new TreeSet<>(s.ownerQuarantine.keySet());
        for (String ip : live) {
            if (held.containsKey(ip)) {
                continue;
            }
            if (takeBack(s, held, ip)) {
                changed = true;
                continue;
            }
            Integer slot = lost.pollFirst();
            if (slot == null) {
                slot = lowestFree(s);
            }
            if (slot == null) {
                slot = extraSlot(held);
            }
            if (slot == null) {
                break; // every slot held once: the others own nothing, they forward to the owners
            }
            give(s, held, slot, ip);
            changed = true;
        }
        for (int slot : lost) { // every live SMux holds a slot: the fewest-slotted takes it
            String ip = fewestSlots(held);
            if (ip == null) {
                break; // none live: the slots stay quarantined
            }
            // the first SMux to lose it takes it back (an extra lost again stays its)
            String claim = s.ownerFormer.getOrDefault(slot, s.ownerSlots.get(slot));
            give(s, held, slot, ip);
            s.ownerFormer.put(slot, claim);
            changed = true;
        }
        s.ownerFormer.keySet().retainAll(s.ownerSlots.keySet()); // freed slots
        return changed;
    }

    /**
     * Gives {@code ip} back the slots it held before it was lost that others hold as extras: never
     * the holder's last slot, nor its lowest (its SYNs' id, under which it may have given indexes
     * that entries left in the returning SMux's memory would refuse).
     */
    private static boolean takeBack(CookieState s, Map<String, TreeSet<Integer>> held, String ip) {
        boolean took = false;
        for (int slot : new ArrayList<>(s.ownerFormer.keySet())) {
            TreeSet<Integer> holder = held.get(s.ownerSlots.get(slot));
            if (ip.equals(s.ownerFormer.get(slot)) && holder != null && holder.size() >= 2
                    && slot != holder.first()) {
                give(s, held, slot, ip);
                took = true;
            }
        }
        return took;
    }

    private static Integer lowestFree(CookieState s) {
        for (int slot = 0; slot < MAX; slot++) {
            if (!s.ownerSlots.containsKey(slot)) {
                return slot;
            }
        }
        return null;
    }

    /** The highest slot of the SMux holding the most (two or more; ties: the higher address), or null. */
    private static Integer extraSlot(Map<String, TreeSet<Integer>> held) {
        TreeSet<Integer> most = null;
        for (TreeSet<Integer> slots : held.values()) { // address order: a tie goes to the later
            if (slots.size() >= 2 && (most == null || slots.size() >= most.size())) {
                most = slots;
            }
        }
        return most == null ? null : most.last();
    }

    /** The live SMux holding the fewest slots (ties: the lower address), or null when none lives. */
    private static String fewestSlots(Map<String, TreeSet<Integer>> held) {
        String fewest = null;
        for (Map.Entry<String, TreeSet<Integer>> e : held.entrySet()) {
            if (fewest == null || e.getValue().size() < held.get(fewest).size()) {
                fewest = e.getKey();
            }
        }
        return fewest;
    }

    /**
     * Slot {@code slot} to {@code ip}, out of quarantine, out of its previous holder's slots, and no
     * longer anyone's to take back.
     */
    private static void give(CookieState s, Map<String, TreeSet<Integer>> held, int slot, String ip) {
        String before = s.ownerSlots.put(slot, ip);
        if (before != null && held.containsKey(before)) {
            held.get(before).remove(slot);
        }
        s.ownerQuarantine.remove(slot);
        s.ownerFormer.remove(slot);
        held.computeIfAbsent(ip, k -> new TreeSet<>()).add(slot);
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
