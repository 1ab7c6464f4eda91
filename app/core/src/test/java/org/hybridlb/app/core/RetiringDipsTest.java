package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.hybridlb.app.core.cheetah.CookieState;
import org.hybridlb.solver.model.Dip;
import org.hybridlb.solver.model.Vip;
import org.hybridlb.solver.model.VipPort;
import org.junit.jupiter.api.Test;

/** The drain of DIPs removed from cheetah VIPs: when it starts, what it adds back, when it ends. */
class RetiringDipsTest {
    final AtomicLong now = new AtomicLong(1_000_000);
    final RetiringDips retiring = new RetiringDips(now::get);
    final CookieState s = new CookieState();

    static Vip vip(String affinity, String... dips) {
        List<Dip> list = new java.util.ArrayList<>();
        for (String d : dips) {
            list.add(new Dip(d, 1, null));
        }
        return new Vip("10.100.0.1", "10.100.0.0/16", affinity, null, List.of(new VipPort("tcp", 80, list)));
    }

    static Map<String, Vip> installed(Vip v) {
        Map<String, Vip> m = new LinkedHashMap<>();
        m.put(v.vip, v);
        return m;
    }

    @Test
    void aRemovedDipDrainsForTheDrainTimeThenLeaves() {
        Vip before = vip("cheetah", "10.0.0.1", "10.0.0.2");
        Vip after = vip("cheetah", "10.0.0.1");
        assertTrue(retiring.update(s, List.of(after), installed(before)));
        assertFalse(retiring.update(s, List.of(after), installed(before)), "once");

        Map<String, Vip> target = RetiringDips.withDraining(s, installed(after));
        Dip back = VipConfigs.dip(target.get("10.100.0.1"), "tcp/80", "10.0.0.2");
        assertEquals(0, back.weight, "weight 0 in the data path's pool");

        now.addAndGet(RetiringDips.DRAIN.toMillis() - 1);
        assertFalse(retiring.update(s, List.of(after), installed(target.get("10.100.0.1"))), "still draining");
        now.addAndGet(1);
        assertTrue(retiring.update(s, List.of(after), installed(target.get("10.100.0.1"))));
        assertEquals(List.of(), s.retiring);
        assertEquals(null, VipConfigs.dip(RetiringDips.withDraining(s, installed(after)).get("10.100.0.1"),
                "tcp/80", "10.0.0.2"), "gone once drained");
    }

    @Test
    void aHashVipsDipOrAVipTurnedToHashOrDeletedDoesNotDrain() {
        assertFalse(retiring.update(s, List.of(vip(null, "10.0.0.1")), installed(vip(null, "10.0.0.1", "10.0.0.2"))));
        retiring.update(s, List.of(vip("cheetah", "10.0.0.1")), installed(vip("cheetah", "10.0.0.1", "10.0.0.2")));
        assertEquals(1, s.retiring.size());
        assertTrue(retiring.update(s, List.of(vip(null, "10.0.0.1")), installed(vip("cheetah", "10.0.0.1"))));
        assertEquals(List.of(), s.retiring, "turned to hash");
        retiring.update(s, List.of(vip("cheetah", "10.0.0.1")), installed(vip("cheetah", "10.0.0.1", "10.0.0.2")));
        assertTrue(retiring.update(s, List.of(), installed(vip("cheetah", "10.0.0.1"))));
        assertEquals(List.of(), s.retiring, "VIP deleted");
    }
}
