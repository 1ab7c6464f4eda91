package org.hybridlb.app.core.cheetah;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Stable stateful owner slots: kept across SMux additions and losses; a lost SMux's slot given at
 * once to an SMux without one, else to the SMux holding the fewest; extra slots given back to new
 * SMuxes when none is free; quarantined only while no SMux lives; persisted.
 */
class OwnerSlotsTest {
    final AtomicLong now = new AtomicLong(1_000_000);
    final OwnerSlots slots = new OwnerSlots(now::get);
    final CookieState s = new CookieState();
    static final long Q = CookieRegistry.QUARANTINE.toMillis();

    static List<String> sixteen() {
        List<String> ips = new ArrayList<>();
        for (int i = 1; i <= OwnerSlots.MAX; i++) {
            ips.add("10.0.1." + i);
        }
        return ips;
    }

    static List<String> without(List<String> ips, String... gone) {
        List<String> out = new ArrayList<>(ips);
        out.removeAll(List.of(gone));
        return out;
    }

    static List<String> with(List<String> ips, String... added) {
        List<String> out = new ArrayList<>(ips);
        out.addAll(List.of(added));
        return out;
    }

    @Test
    void slotsAreGivenLowestFirstAndKeptWhenSmuxesAreAdded() {
        assertTrue(slots.update(s, List.of("10.0.0.52", "10.0.0.50", "10.0.0.51")));
        assertEquals(List.of("10.0.0.50", "10.0.0.51", "10.0.0.52"), OwnerSlots.owners(s));
        assertFalse(slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52")), "nothing changed");

        // an SMux added in front (in address order) gets the next slot: nobody moves
        slots.update(s, List.of("10.0.0.49", "10.0.0.50", "10.0.0.51", "10.0.0.52"));
        assertEquals(List.of("10.0.0.50", "10.0.0.51", "10.0.0.52", "10.0.0.49"), OwnerSlots.owners(s));
    }

    @Test
    void aLostOwnersSlotGoesAtOnceToTheSmuxHoldingTheFewestWhenEveryLiveSmuxHoldsOne() {
        slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52"));
        slots.update(s, List.of("10.0.0.49", "10.0.0.50", "10.0.0.51", "10.0.0.52"));
        assertEquals(List.of("10.0.0.50", "10.0.0.51", "10.0.0.52", "10.0.0.49"), OwnerSlots.owners(s));

        // 10.0.0.51 lost: every live SMux holds one slot; the tie goes to the lowest address (not
        // the lowest slot): 10.0.0.49, in slot 3, takes slot 1 as well
        assertTrue(slots.update(s, List.of("10.0.0.49", "10.0.0.50", "10.0.0.52")));
        assertEquals(List.of("10.0.0.50", "10.0.0.49", "10.0.0.52", "10.0.0.49"), OwnerSlots.owners(s));
        assertTrue(s.ownerQuarantine.isEmpty(), "no slot waits for the lost SMux");
        assertFalse(slots.update(s, List.of("10.0.0.49", "10.0.0.50", "10.0.0.52")), "nothing changed");

        // 10.0.0.52 lost: the fewest slots is 10.0.0.50 (one), not 10.0.0.49 (two)
        assertTrue(slots.update(s, List.of("10.0.0.49", "10.0.0.50")));
        assertEquals(List.of("10.0.0.50", "10.0.0.49", "10.0.0.50", "10.0.0.49"), OwnerSlots.owners(s));

        // the lost ones return: .52 takes back its slot 2, an extra of .50 (whose SYNs' id is 0);
        // slot 1 is now the lowest of .49 (its SYNs' id): .51 takes a free slot instead
        assertTrue(slots.update(s, List.of("10.0.0.49", "10.0.0.50", "10.0.0.51", "10.0.0.52")));
        assertEquals(List.of("10.0.0.50", "10.0.0.49", "10.0.0.52", "10.0.0.49", "10.0.0.51"), OwnerSlots.owners(s));
        assertTrue(s.ownerQuarantine.isEmpty());
        assertFalse(slots.update(s, List.of("10.0.0.49", "10.0.0.50", "10.0.0.51", "10.0.0.52")));
    }

    @Test
    void aLostSmuxHoldingSeveralSlotsHasThemSpreadOverTheFewestSlotted() {
        slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52", "10.0.0.53"));
        slots.update(s, List.of("10.0.0.50", "10.0.0.52", "10.0.0.53")); // slot 1 -> 10.0.0.50
        assertEquals(List.of("10.0.0.50", "10.0.0.50", "10.0.0.52", "10.0.0.53"), OwnerSlots.owners(s));
        // the SMux holding two is lost: one slot each to the two left
        slots.update(s, List.of("10.0.0.52", "10.0.0.53"));
        assertEquals(List.of("10.0.0.52", "10.0.0.53", "10.0.0.52", "10.0.0.53"), OwnerSlots.owners(s));
        assertTrue(s.ownerQuarantine.isEmpty());
    }

    @Test
    void anSmuxWithoutASlotTakesALostSlotBeforeAFreeOneTheRestGoesToTheFewest() {
        slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52", "10.0.0.53"));
        // 10.0.0.51 and 10.0.0.53 lost as 10.0.0.60 appears: it takes the lowest lost slot, not slot 4;
        // slot 3 goes to the fewest-slotted (all hold one: the lowest address)
        assertTrue(slots.update(s, List.of("10.0.0.50", "10.0.0.52", "10.0.0.60")));
        assertEquals(List.of("10.0.0.50", "10.0.0.60", "10.0.0.52", "10.0.0.50"), OwnerSlots.owners(s));
        assertTrue(s.ownerQuarantine.isEmpty());
    }

    @Test
    void withAllSixteenSlotsHeldANewSmuxTakesAnExtraSlotFromTheSmuxHoldingTheMost() {
        List<String> ips = sixteen();
        slots.update(s, ips);
        assertEquals(ips, OwnerSlots.owners(s), "given in address order (10.0.1.9 before 10.0.1.10)");
        // two owners lost: slot 0 to 10.0.1.3, then slot 1 to 10.0.1.4 (each the lowest of the fewest)
        List<String> live = without(ips, "10.0.1.1", "10.0.1.2");
        slots.update(s, live);
        assertEquals(List.of("10.0.1.3", "10.0.1.4", "10.0.1.3", "10.0.1.4"), OwnerSlots.owners(s).subList(0, 4));

        // a new SMux: no slot lost or free; 10.0.1.3 and 10.0.1.4 hold two each: the tie goes to the
        // higher address, which gives its highest slot (3) and keeps its lowest (1)
        live = with(live, "10.0.2.1");
        assertTrue(slots.update(s, live));
        assertEquals(List.of("10.0.1.3", "10.0.1.4", "10.0.1.3", "10.0.2.1"), OwnerSlots.owners(s).subList(0, 4));
        // the next one takes 10.0.1.3's extra (its highest, 2)
        live = with(live, "10.0.2.2");
        assertTrue(slots.update(s, live));
        assertEquals(List.of("10.0.1.3", "10.0.1.4", "10.0.2.2", "10.0.2.1"), OwnerSlots.owners(s).subList(0, 4));
        // every SMux holds one: an SMux's last slot is never taken, the next owns nothing
        live = with(live, "10.0.2.3", "10.0.1.1");
        assertFalse(slots.update(s, live), "nothing to give");
        List<String> owners = OwnerSlots.owners(s);
        assertEquals(OwnerSlots.MAX, owners.stream().distinct().count());
        assertFalse(owners.contains("10.0.2.3") || owners.contains("10.0.1.1"), owners.toString());
    }

    @Test
    void newSmuxesArrivingTogetherTakeOneExtraEachFromTheSmuxesHoldingTheMost() {
        List<String> ips = sixteen();
        slots.update(s, ips);
        List<String> live = without(ips, "10.0.1.1", "10.0.1.2"); // slots 0, 1 -> 10.0.1.3, 10.0.1.4
        slots.update(s, live);
        assertTrue(slots.update(s, with(live, "10.0.2.1", "10.0.2.2")));
        assertEquals(List.of("10.0.1.3", "10.0.1.4", "10.0.2.2", "10.0.2.1"), OwnerSlots.owners(s).subList(0, 4),
                "10.0.1.4's slot 3, then 10.0.1.3's slot 2 (10.0.1.4 holds one then)");
        assertEquals(OwnerSlots.MAX, OwnerSlots.owners(s).stream().distinct().count());
    }

    @Test
    void aReturningSmuxTakesAnExtraSlotWhenNoneIsFree() {
        List<String> ips = sixteen();
        slots.update(s, ips);
        slots.update(s, without(ips, "10.0.1.16")); // slot 15 -> 10.0.1.1
        assertEquals("10.0.1.1", OwnerSlots.owners(s).get(15));
        assertTrue(slots.update(s, ips), "back: it takes 10.0.1.1's extra slot");
        assertEquals(ips, OwnerSlots.owners(s));
    }

    @Test
    void withNoLiveSmuxTheSlotsStayQuarantinedThenAreFreed() {
        slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52"));
        assertTrue(slots.update(s, List.of()));
        assertEquals(List.of("10.0.0.50", "10.0.0.51", "10.0.0.52"), OwnerSlots.owners(s), "quarantined");
        assertEquals(now.get() + Q, s.ownerQuarantine.get(1));
        now.addAndGet(Q - 1);
        assertFalse(slots.update(s, List.of()));
        assertEquals(3, s.ownerQuarantine.size(), "still quarantined");
        now.addAndGet(1);
        assertTrue(slots.update(s, List.of()));
        assertEquals(List.of(), OwnerSlots.owners(s), "freed");
        assertTrue(s.ownerQuarantine.isEmpty());
    }

    @Test
    void anSmuxBackWithinTheQuarantineTakesItsSlotAgainAndTheLostOnesAsExtrasUntilTheyReturn() {
        slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52"));
        slots.update(s, List.of());
        now.addAndGet(Q - 1);
        assertTrue(slots.update(s, List.of("10.0.0.52")));
        assertEquals(List.of("10.0.0.52", "10.0.0.52", "10.0.0.52"), OwnerSlots.owners(s),
                "its own slot 2 again, slots 0 and 1 at once");
        assertTrue(s.ownerQuarantine.isEmpty());
        // the others, back (a controller restart that saw 10.0.0.52 first): .51 takes back slot 1;
        // slot 0 is .52's lowest (its SYNs' id), so .50 takes a free slot
        slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52"));
        assertEquals(List.of("10.0.0.52", "10.0.0.51", "10.0.0.52", "10.0.0.50"), OwnerSlots.owners(s));
    }

    @Test
    void aSlotIsTakenBackByTheFirstSmuxThatLostItNeverAsItsHoldersLastNorLowest() {
        slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52"));
        slots.update(s, List.of("10.0.0.50", "10.0.0.52"));          // slot 1 -> .50
        slots.update(s, List.of("10.0.0.52"));                       // slots 0, 1 -> .52
        assertEquals(List.of("10.0.0.52", "10.0.0.52", "10.0.0.52"), OwnerSlots.owners(s));
        assertEquals("10.0.0.51", s.ownerFormer.get(1), "slot 1 stays .51's to take back, not .50's");
        assertEquals("10.0.0.50", s.ownerFormer.get(0));
        slots.update(s, List.of("10.0.0.51", "10.0.0.52"));
        assertEquals(List.of("10.0.0.52", "10.0.0.51", "10.0.0.52"), OwnerSlots.owners(s));

        // .52 lost: .51 holds everything; .52 back takes back its own slot 2, not slot 0 (.50's)
        slots.update(s, List.of("10.0.0.51"));
        assertEquals(List.of("10.0.0.51", "10.0.0.51", "10.0.0.51"), OwnerSlots.owners(s));
        slots.update(s, List.of("10.0.0.51", "10.0.0.52"));
        assertEquals(List.of("10.0.0.51", "10.0.0.51", "10.0.0.52"), OwnerSlots.owners(s));
        // slot 0 is .51's lowest (its SYNs' id): .50 back takes a free slot, not slot 0
        slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52"));
        assertEquals(List.of("10.0.0.51", "10.0.0.51", "10.0.0.52", "10.0.0.50"), OwnerSlots.owners(s));

        // a slot that is its holder's only one is not taken back: the returning SMux takes a free one
        CookieState t = new CookieState();
        slots.update(t, List.of("10.0.0.50", "10.0.0.51"));
        slots.update(t, List.of("10.0.0.50"));                       // slot 1 -> .50 (former .51)
        slots.update(t, List.of());                                  // .50 lost too: both quarantined
        slots.update(t, List.of("10.0.0.60"));                       // a new SMux: slots 0 and 1
        assertEquals(List.of("10.0.0.60", "10.0.0.60"), OwnerSlots.owners(t));
        slots.update(t, List.of("10.0.0.60", "10.0.0.51"));          // .51 takes slot 1 back
        assertEquals(List.of("10.0.0.60", "10.0.0.51"), OwnerSlots.owners(t));
        slots.update(t, List.of("10.0.0.60", "10.0.0.51", "10.0.0.50")); // .60 holds one: .50 a free slot
        assertEquals(List.of("10.0.0.60", "10.0.0.51", "10.0.0.50"), OwnerSlots.owners(t));
    }

    @Test
    void aFreeSlotBelowAHeldOneIsAPlaceholderAndTheFirstNewSmuxTakesIt() throws Exception {
        // a state file written by an earlier controller, with a hole
        ObjectMapper m = new ObjectMapper();
        CookieState old = m.readValue("{\"serverIds\":{},\"quarantined\":{},\"keys\":{},"
                + "\"ownerSlots\":{\"0\":\"10.0.0.50\",\"2\":\"10.0.0.52\"},\"ownerQuarantine\":{}}", CookieState.class);
        assertEquals(List.of("10.0.0.50", "0.0.0.2", "10.0.0.52"), OwnerSlots.owners(old),
                "a free slot below a held one: a placeholder, so 10.0.0.52 keeps owner id 2");
        assertFalse(slots.update(old, List.of("10.0.0.50", "10.0.0.52")));
        slots.update(old, List.of("10.0.0.50", "10.0.0.52", "10.0.0.70"));
        assertEquals(List.of("10.0.0.50", "10.0.0.70", "10.0.0.52"), OwnerSlots.owners(old));
    }

    @Test
    void atMostSixteenOwnersTheOthersOwnNothingAndTakeALostSlotFirst() {
        List<String> ips = new ArrayList<>(sixteen());
        ips.add("10.0.1.17");
        ips.add("10.0.1.18");
        slots.update(s, ips);
        List<String> owners = OwnerSlots.owners(s);
        assertEquals(ips.subList(0, 16), owners);
        // one owner lost: the first slotless SMux in address order takes its slot at once
        slots.update(s, without(ips, owners.get(3)));
        assertEquals("10.0.1.17", OwnerSlots.owners(s).get(3));
        assertEquals(16, OwnerSlots.owners(s).stream().distinct().count());
        assertTrue(s.ownerQuarantine.isEmpty());
    }

    @Test
    void theSlotsAndTheExtrasSurviveARestartThroughTheStateDocument() throws Exception {
        slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52"));
        slots.update(s, List.of("10.0.0.50", "10.0.0.52")); // slot 1 -> 10.0.0.50
        ObjectMapper m = new ObjectMapper();
        CookieState loaded = m.readValue(m.writeValueAsString(s), CookieState.class);
        assertEquals(List.of("10.0.0.50", "10.0.0.50", "10.0.0.52"), OwnerSlots.owners(loaded));
        assertEquals(s.ownerFormer, loaded.ownerFormer, "who takes slot 1 back is kept");
        // a restarted controller sees the SMuxes in another order: nothing moves
        OwnerSlots restarted = new OwnerSlots(now::get);
        assertFalse(restarted.update(loaded, List.of("10.0.0.52", "10.0.0.50")));
        assertEquals(List.of("10.0.0.50", "10.0.0.50", "10.0.0.52"), OwnerSlots.owners(loaded));
        // quarantined slots keep their end across a restart
        slots.update(s, List.of());
        loaded = m.readValue(m.writeValueAsString(s), CookieState.class);
        assertEquals(s.ownerQuarantine, loaded.ownerQuarantine, "the quarantine's end is kept, not restarted");
    }
}
