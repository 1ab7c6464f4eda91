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
 * Stable stateful owner slots: kept across SMux additions and losses, quarantined, a lost SMux's
 * slot given to a new one, persisted.
 */
class OwnerSlotsTest {
    final AtomicLong now = new AtomicLong(1_000_000);
    final OwnerSlots slots = new OwnerSlots(now::get);
    final CookieState s = new CookieState();
    static final long Q = CookieRegistry.QUARANTINE.toMillis();

    @Test
    void slotsAreGivenLowestFirstAndKeptWhenSmuxesComeAndGo() {
        assertTrue(slots.update(s, List.of("10.0.0.52", "10.0.0.50", "10.0.0.51")));
        assertEquals(List.of("10.0.0.50", "10.0.0.51", "10.0.0.52"), OwnerSlots.owners(s));
        assertFalse(slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52")), "nothing changed");

        // an SMux added in front (in address order) gets the next slot: nobody moves
        slots.update(s, List.of("10.0.0.49", "10.0.0.50", "10.0.0.51", "10.0.0.52"));
        assertEquals(List.of("10.0.0.50", "10.0.0.51", "10.0.0.52", "10.0.0.49"), OwnerSlots.owners(s));

        // 10.0.0.51 lost: its slot keeps its address (quarantine)
        assertTrue(slots.update(s, List.of("10.0.0.49", "10.0.0.50", "10.0.0.52")));
        assertEquals(List.of("10.0.0.50", "10.0.0.51", "10.0.0.52", "10.0.0.49"), OwnerSlots.owners(s));
        assertEquals(now.get() + Q, s.ownerQuarantine.get(1));

        // back within the quarantine: the same slot
        now.addAndGet(Q - 1);
        assertTrue(slots.update(s, List.of("10.0.0.49", "10.0.0.50", "10.0.0.51", "10.0.0.52")));
        assertEquals("10.0.0.51", OwnerSlots.owners(s).get(1));
        assertTrue(s.ownerQuarantine.isEmpty());
    }

    @Test
    void anSmuxWithoutASlotTakesALostSmuxsSlotWhoseConnectionsItAdopts() {
        slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52", "10.0.0.53"));
        // 10.0.0.51 and 10.0.0.53 lost; a new SMux takes the lowest lost slot, not slot 4
        slots.update(s, List.of("10.0.0.50", "10.0.0.52"));
        assertTrue(slots.update(s, List.of("10.0.0.50", "10.0.0.52", "10.0.0.60")));
        assertEquals(List.of("10.0.0.50", "10.0.0.60", "10.0.0.52", "10.0.0.53"), OwnerSlots.owners(s));
        assertEquals(List.of(3), List.copyOf(s.ownerQuarantine.keySet()), "slot 1 is held again");
        // the lost one returns within its quarantine: its slot is taken, it gets a free one
        assertTrue(slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52", "10.0.0.60")));
        assertEquals(List.of("10.0.0.50", "10.0.0.60", "10.0.0.52", "10.0.0.51"), OwnerSlots.owners(s),
                "10.0.0.51 takes 10.0.0.53's lost slot 3");
        assertTrue(s.ownerQuarantine.isEmpty());
        assertFalse(slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52", "10.0.0.60")));
    }

    @Test
    void aQuarantinedSlotIsFreedOnlyAfterTheQuarantineAndAHoleIsAPlaceholder() {
        slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52"));
        slots.update(s, List.of("10.0.0.50", "10.0.0.52"));
        now.addAndGet(Q - 1);
        slots.update(s, List.of("10.0.0.50", "10.0.0.52"));
        assertEquals(List.of("10.0.0.50", "10.0.0.51", "10.0.0.52"), OwnerSlots.owners(s), "still quarantined");
        now.addAndGet(1);
        assertTrue(slots.update(s, List.of("10.0.0.50", "10.0.0.52")));
        assertEquals(List.of("10.0.0.50", "0.0.0.2", "10.0.0.52"), OwnerSlots.owners(s),
                "a free slot below a held one: a placeholder, so 10.0.0.52 keeps owner id 2");
        // a new SMux takes the free slot
        slots.update(s, List.of("10.0.0.50", "10.0.0.52", "10.0.0.70"));
        assertEquals(List.of("10.0.0.50", "10.0.0.70", "10.0.0.52"), OwnerSlots.owners(s));
        // free slots at the end are left out
        slots.update(s, List.of("10.0.0.50"));
        now.addAndGet(Q);
        slots.update(s, List.of("10.0.0.50"));
        assertEquals(List.of("10.0.0.50"), OwnerSlots.owners(s));
    }

    @Test
    void atMostSixteenOwnersTheOthersOwnNothing() {
        List<String> ips = new ArrayList<>();
        for (int i = 1; i <= 18; i++) {
            ips.add("10.0.1." + i);
        }
        slots.update(s, ips);
        List<String> owners = OwnerSlots.owners(s);
        assertEquals(OwnerSlots.MAX, owners.size());
        assertEquals(16, owners.stream().distinct().count());
        assertEquals(ips.subList(0, 16), owners, "given in address order (10.0.1.9 before 10.0.1.10)");
        // one owner lost: one of the two without a slot takes its slot (and its connections) at once
        List<String> less = new ArrayList<>(ips);
        String gone = owners.get(3);
        less.remove(gone);
        slots.update(s, less);
        String next = OwnerSlots.owners(s).get(3);
        assertEquals("10.0.1.17", next, "the first slotless SMux in address order");
        assertTrue(s.ownerQuarantine.isEmpty());
    }

    @Test
    void theSlotsSurviveARestartThroughTheStateDocument() throws Exception {
        slots.update(s, List.of("10.0.0.50", "10.0.0.51", "10.0.0.52"));
        slots.update(s, List.of("10.0.0.50", "10.0.0.52"));
        ObjectMapper m = new ObjectMapper();
        CookieState loaded = m.readValue(m.writeValueAsString(s), CookieState.class);
        // a restarted controller sees the SMuxes in another order
        OwnerSlots restarted = new OwnerSlots(now::get);
        restarted.update(loaded, List.of("10.0.0.52", "10.0.0.50"));
        assertEquals(List.of("10.0.0.50", "10.0.0.51", "10.0.0.52"), OwnerSlots.owners(loaded));
        assertEquals(s.ownerQuarantine, loaded.ownerQuarantine, "the quarantine's end is kept, not restarted");
        // a new SMux then takes the lost one's slot
        restarted.update(loaded, List.of("10.0.0.80", "10.0.0.52", "10.0.0.50"));
        assertEquals(List.of("10.0.0.50", "10.0.0.80", "10.0.0.52"), OwnerSlots.owners(loaded));
    }
}
