package org.hybridlb.solver.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WcmpTest {
    private static List<Dip> pool(int... weights) {
        List<Dip> out = new ArrayList<>();
        for (int i = 0; i < weights.length; i++) {
            out.add(new Dip("10.0.0." + (i + 1), weights[i], i == 0 ? "10.9.0.1" : null));
        }
        return out;
    }

    @Test
    void unitsAreTheWeightsReducedByTheirGreatestCommonDivisor() {
        assertArrayEquals(new int[] {1, 2, 1}, Wcmp.units(pool(1, 2, 1)));
        assertArrayEquals(new int[] {1, 2, 1}, Wcmp.units(pool(20, 40, 20)));
        assertArrayEquals(new int[] {2, 3}, Wcmp.units(pool(4, 6)));
        assertArrayEquals(new int[] {1, 1, 1}, Wcmp.units(pool(7, 7, 7)));
        assertArrayEquals(new int[] {1, 0, 3}, Wcmp.units(pool(5, 0, 15)), "a drained DIP has no unit");
        assertArrayEquals(new int[] {0, 0}, Wcmp.units(pool(0, 0)));
        assertArrayEquals(new int[] {1, 65535}, Wcmp.units(pool(1, 65535)));
    }

    @Test
    void totalsCountUnitsOnHmuxesAndDrainedDipsOnSmuxesToo() {
        assertEquals(4, Wcmp.totalUnits(pool(2, 2, 4)));
        assertEquals(4, Wcmp.smuxBuckets(pool(2, 2, 4)));
        assertEquals(4, Wcmp.totalUnits(pool(3, 0, 9)));
        assertEquals(5, Wcmp.smuxBuckets(pool(3, 0, 9)));
        assertEquals(0, Wcmp.totalUnits(pool(0)));
        assertEquals(1, Wcmp.smuxBuckets(pool(0)));
    }

    @Test
    void reducedKeepsAddressesEndpointsAndOrder() {
        VipPort p = new VipPort("tcp", 80, pool(30, 0, 60));
        VipPort r = Wcmp.reduced(p);
        assertEquals(List.of(1, 0, 2), r.dips.stream().map(d -> d.weight).collect(java.util.stream.Collectors.toList()));
        assertEquals("10.9.0.1", r.dips.get(0).hostIp);
        assertEquals("10.0.0.3", r.dips.get(2).ip);
        VipPort already = new VipPort("udp", 53, pool(1, 2));
        assertSame(already, Wcmp.reduced(already));
        Vip v = new Vip("100.64.0.1", "100.64.0.0/16", List.of(already));
        assertSame(v, Wcmp.reduced(v));
        Vip w = new Vip("100.64.0.1", "100.64.0.0/16", List.of(already, p));
        assertEquals(List.of(1, 0, 2), Wcmp.reduced(w).ports.get(1).dips.stream().map(d -> d.weight)
                .collect(java.util.stream.Collectors.toList()));
    }
}
