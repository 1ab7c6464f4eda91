package org.hybridlb.solver.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class VipEditsTest {
    private static Vip vip(VipPort... ports) {
        return new Vip("100.64.0.1", "100.64.0.0/20", List.of(ports));
    }

    private static VipPort port(String proto, int port, Dip... dips) {
        return new VipPort(proto, port, List.of(dips));
    }

    private static List<String> describe(List<VipEdits.DipEdit> edits) {
        List<String> out = new ArrayList<>();
        edits.forEach(e -> out.add(e.toString()));
        return out;
    }

    @Test
    void addedRemovedAndChangedDipsPerService() {
        Vip from = vip(port("tcp", 80, new Dip("10.0.0.1", 1, null), new Dip("10.0.0.2", 1, null)),
                port("tcp", 443, new Dip("10.0.0.3", 2, null)));
        Vip to = vip(port("tcp", 80, new Dip("10.0.0.1", 3, null), new Dip("10.0.0.4", 1, null)),
                port("tcp", 443, new Dip("10.0.0.3", 2, "10.0.9.9")));
        VipEdits e = VipEdits.between(from, to);
        assertEquals(List.of("tcp/80 10.0.0.1 w3 via 10.0.0.1 (changed)", "tcp/80 10.0.0.4 w1 via 10.0.0.4",
                "tcp/443 10.0.0.3 w2 via 10.0.9.9 (changed)"), describe(e.added()));
        assertEquals(List.of("tcp/80 10.0.0.1 w1 via 10.0.0.1 (changed)", "tcp/80 10.0.0.2 w1 via 10.0.0.2",
                "tcp/443 10.0.0.3 w2 via 10.0.0.3 (changed)"), describe(e.removed()));
        assertTrue(e.grows());
        assertFalse(e.isEmpty());
        assertFalse(VipEdits.sameDips(from, to));
    }

    @Test
    void theSameDipIsWhatTheDataPathSees() {
        // a hostIp equal to the DIP's own address is the same tunnel endpoint as none
        assertTrue(VipEdits.sameDip(new Dip("10.0.0.1", 1, null), new Dip("10.0.0.1", 1, "10.0.0.1")));
        assertFalse(VipEdits.sameDip(new Dip("10.0.0.1", 1, null), new Dip("10.0.0.1", 0, null)));
        assertFalse(VipEdits.sameDip(new Dip("10.0.0.1", 1, null), new Dip("10.0.0.1", 1, "10.0.0.2")));
        // DIP order does not matter; a service without DIPs is not the same as no service
        Vip a = vip(port("tcp", 80, new Dip("10.0.0.1", 1, null), new Dip("10.0.0.2", 1, null)));
        Vip b = vip(port("tcp", 80, new Dip("10.0.0.2", 1, null), new Dip("10.0.0.1", 1, "10.0.0.1")));
        assertTrue(VipEdits.sameDips(a, b));
        Vip withEmpty = vip(port("tcp", 80, new Dip("10.0.0.1", 1, null), new Dip("10.0.0.2", 1, null)),
                new VipPort("udp", 53, List.of()));
        assertFalse(VipEdits.sameDips(a, withEmpty));
        assertFalse(VipEdits.between(withEmpty, a).grows(), "only a removal");
    }

    @Test
    void serviceKeysAreTypedAndChecked() {
        assertEquals(ServiceKey.of(ServiceKey.Protocol.TCP, 443), ServiceKey.parse("tcp/443"));
        assertEquals("udp/53", ServiceKey.of("udp", 53).toString());
        assertEquals(ServiceKey.WHOLE_VIP, new VipPort("any", 0, List.of()).service());
        assertTrue(ServiceKey.WHOLE_VIP.wholeVip());
        assertEquals("proto 'any' goes with port 0 (the whole VIP), and only it",
                assertThrows(IllegalArgumentException.class, () -> ServiceKey.of("any", 80)).getMessage());
        assertEquals("proto 'any' goes with port 0 (the whole VIP), and only it",
                assertThrows(IllegalArgumentException.class, () -> ServiceKey.of("tcp", 0)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> ServiceKey.of("tcp", 65536));
        assertThrows(IllegalArgumentException.class, () -> ServiceKey.parse("sctp/80"));
        assertThrows(IllegalArgumentException.class, () -> ServiceKey.parse("tcp80"));
    }
}
