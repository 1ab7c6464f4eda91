package org.hybridlb.app.core.cheetah;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.junit.jupiter.api.Test;

class CookieRegistryTest {
    long now = 1_000_000;
    final CookieRegistry registry = new CookieRegistry(() -> now, new SecureRandom());
    final CookieState state = new CookieState();

    static Vip vip(String vip, String affinity, Dip... dips) {
        return new Vip(vip, "10.100.0.0/16", affinity, null, List.of(new VipPort("tcp", 80, List.of(dips))));
    }

    static Dip dip(String ip) {
        return new Dip(ip, 1, null);
    }

    @Test
    void oneIdPerHostLowestFirstSharedByItsVipsAndDips() {
        assertTrue(registry.update(state, List.of(
                vip("10.100.0.1", "cheetah", dip("10.0.0.3"), dip("10.0.0.1")),
                vip("10.100.0.2", null, dip("10.0.0.1"), new Dip("10.9.0.1", 2, "10.0.0.2")))));
        assertEquals(Map.of("10.0.0.1", 1, "10.0.0.2", 2, "10.0.0.3", 3), state.serverIds);
        assertFalse(registry.update(state, List.of(
                vip("10.100.0.1", "cheetah", dip("10.0.0.3"), dip("10.0.0.1")),
                vip("10.100.0.2", null, dip("10.0.0.1"), new Dip("10.9.0.1", 2, "10.0.0.2")))), "nothing changes");
    }

    @Test
    void aReleasedIdIsQuarantinedThenReused() {
        registry.update(state, List.of(vip("10.100.0.1", "cheetah", dip("10.0.0.1"), dip("10.0.0.2"))));
        assertEquals(Integer.valueOf(1), state.serverIds.get("10.0.0.1"));
        // 10.0.0.1 leaves every pool: its id is held for the quarantine
        assertTrue(registry.update(state, List.of(vip("10.100.0.1", "cheetah", dip("10.0.0.2")))));
        assertEquals(Map.of(1, now + CookieRegistry.QUARANTINE.toMillis()), state.quarantined);
        now += CookieRegistry.QUARANTINE.toMillis() - 1;
        registry.update(state, List.of(vip("10.100.0.1", "cheetah", dip("10.0.0.2"), dip("10.0.0.9"))));
        assertEquals(Integer.valueOf(3), state.serverIds.get("10.0.0.9"), "id 1 still in quarantine");
        now += 1;
        registry.update(state, List.of(vip("10.100.0.1", "cheetah", dip("10.0.0.2"), dip("10.0.0.9"), dip("10.0.0.7"))));
        assertEquals(Integer.valueOf(1), state.serverIds.get("10.0.0.7"), "reused once the quarantine is over");
        assertTrue(state.quarantined.isEmpty());
        // a host that comes back within the quarantine gets a new id, not its old one
        registry.update(state, List.of(vip("10.100.0.1", "cheetah", dip("10.0.0.9"), dip("10.0.0.7"))));
        registry.update(state, List.of(vip("10.100.0.1", "cheetah", dip("10.0.0.9"), dip("10.0.0.7"), dip("10.0.0.2"))));
        assertEquals(Integer.valueOf(4), state.serverIds.get("10.0.0.2"));
    }

    @Test
    void keysAreRandomPerVipKeptWhateverItsAffinityAndGoWithIt() {
        registry.update(state, List.of(vip("10.100.0.1", "cheetah", dip("10.0.0.1")),
                vip("10.100.0.2", "cheetah", dip("10.0.0.1")), vip("10.100.0.3", null, dip("10.0.0.1"))));
        assertEquals(List.of("10.100.0.1", "10.100.0.2", "10.100.0.3"), new ArrayList<>(state.keys.keySet()));
        String k1 = state.keys.get("10.100.0.1");
        String k3 = state.keys.get("10.100.0.3");
        assertEquals(16, Cookie.parseKey(k1).length);
        assertEquals(3, new java.util.HashSet<>(state.keys.values()).size(), "a key each");
        assertFalse(registry.update(state, List.of(vip("10.100.0.1", null, dip("10.0.0.1")),
                vip("10.100.0.3", "cheetah", dip("10.0.0.1")))) && state.keys.size() == 3);
        assertEquals(Map.of("10.100.0.1", k1, "10.100.0.3", k3), state.keys,
                "kept through a change of affinity, dropped with the VIP");
    }

    @Test
    void exhaustionIsRefusedNamingTheHost() {
        for (int id = 1; id <= Cookie.SERVER_ID_MAX; id++) {
            state.quarantined.put(id, Long.MAX_VALUE);
        }
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> registry.update(state, List.of(vip("10.100.0.1", null, dip("10.0.0.1")))));
        assertTrue(e.getMessage().contains("10.0.0.1"), e.getMessage());
    }
}
