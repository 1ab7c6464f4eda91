package org.hybridlb.app.core.prism;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.model.SmuxPin;
import org.hybridlb.app.core.port.SmuxControl;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.solver.model.Vip;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Prism pins on the SMuxes: a pin is put on every live SMux and acknowledged only when all took it
 * (else none keeps it), removed from all, and read back so that {@link PrismPins#reconcile} puts a
 * pin an SMux lost back and removes one no hand-off wants.
 */
class SmuxFabricPinsTest {
    static final String VIP = "10.100.0.1";
    static final String B1 = "10.0.1.2";

    /** SMuxes by id: the pins each holds (by flow), and which ones fail. */
    final Map<String, Map<String, SmuxPin>> held = new TreeMap<>();
    final Set<String> failing = new HashSet<>();
    final List<String> live = new ArrayList<>(List.of("smux-0", "smux-1", "smux-2"));
    final SmuxControl smux = new SmuxControl() {
        @Override
        public void putTable(String smuxId, SmuxTable table) {
            throw new UnsupportedOperationException();
        }

        @Override
        public SmuxTable getTable(String smuxId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void putPin(String id, SmuxPin pin) {
            on(id).put(flow(pin), pin);
        }

        @Override
        public void removePin(String id, SmuxPin flow) {
            on(id).remove(flow(flow));
        }

        @Override
        public List<SmuxPin> pins(String id) {
            return new ArrayList<>(on(id).values());
        }

        Map<String, SmuxPin> on(String id) {
            if (failing.contains(id)) {
                throw new SouthboundException("SMux " + id + " unreachable");
            }
            return held.computeIfAbsent(id, k -> new LinkedHashMap<>());
        }
    };
    Vip vip;
    SmuxFabricPins fabric;

    static String flow(SmuxPin p) {
        return p.client + ":" + p.clientPort + "->" + p.vip + ":" + p.vipPort + "/" + p.proto;
    }

    @BeforeEach
    void setUp() throws Exception {
        vip = Json.MAPPER.readValue("{\"vip\": \"" + VIP + "\", \"aggregate\": \"10.100.0.0/16\", \"ports\": [{\"proto\":"
                + " \"tcp\", \"port\": 80, \"dips\": [{\"ip\": \"10.0.0.2\"}]}], \"prism\": {\"frontends\": [{\"ip\":"
                + " \"10.0.0.2\", \"admin\": \"http://127.0.0.1:9/\"}], " + PrismHandoffTest.RULES
                + ", \"steering\": \"fabric\"}}", Vip.class);
        fabric = new SmuxFabricPins(smux, () -> live, a -> a.equals(VIP) ? vip : null);
    }

    static PrismPin pin(int clientPort, String backend, String dip) {
        return new PrismPin(VIP, 80, "10.9.0.7", clientPort, backend, dip);
    }

    List<String> holding(PrismPin p) {
        List<String> out = new ArrayList<>();
        SmuxPin want = SmuxFabricPins.toSmux(p);
        held.forEach((id, pins) -> {
            if (want.equals(pins.get(flow(want)))) {
                out.add(id);
            }
        });
        return out;
    }

    @Test
    void aPinGoesToEveryLiveSmuxAndLeavesThemAll() {
        PrismPin p = pin(40001, "b1", B1);
        fabric.put(p);
        assertEquals(live, holding(p));
        SmuxPin sent = held.get("smux-1").values().iterator().next();
        assertEquals(new SmuxPin("10.9.0.7", 40001, VIP, 80, "tcp", B1), sent);
        assertEquals(List.of(p), fabric.installed(), "read back with its backend's name");
        fabric.remove(p);
        assertEquals(List.of(), holding(p));
        assertEquals(List.of(), fabric.installed());
    }

    @Test
    void aPinOneSmuxRefusesIsKeptByNone() {
        fabric.put(pin(40001, "b1", B1));
        failing.add("smux-2");
        PrismPin p = pin(40002, "b1", B1);
        SouthboundException e = assertThrows(SouthboundException.class, () -> fabric.put(p));
        assertTrue(e.getMessage().contains("smux-2"), e.getMessage());
        assertEquals(List.of(), holding(p), "taken back from the SMuxes that took it");
        assertEquals(live, holding(pin(40001, "b1", B1)), "the other pin stays");
    }

    @Test
    void aRemovalOneSmuxMissesFailsSoTheCallerKeepsThePin() {
        PrismPin p = pin(40001, "b1", B1);
        fabric.put(p);
        failing.add("smux-0");
        assertThrows(SouthboundException.class, () -> fabric.remove(p));
        failing.clear();
        assertEquals(List.of("smux-0"), holding(p));
        fabric.remove(p);
        assertEquals(List.of(), holding(p));
    }

    @Test
    void noLiveSmuxTakesNoPin() {
        live.clear();
        assertThrows(SouthboundException.class, () -> fabric.put(pin(40001, "b1", B1)));
    }

    @Test
    void pinsSomeSmuxLacksAreReadBackUnnamedAndTheRoundMendsThem() {
        PrismPins pins = new PrismPins(fabric);
        List<Vip> vips = List.of(vip);
        // A pin the controller holds that a restarted SMux lost, and an orphan on one SMux.
        PrismPin wanted = pins.pin(vip, Set.of(), "{\"client\": \"10.9.0.7\", \"clientPort\": 40001, \"vipPort\": 80,"
                + " \"backend\": \"b1\"}", 1000);
        assertEquals(live, holding(wanted));
        held.get("smux-1").clear();
        PrismPin orphan = pin(40009, "b2", "10.0.1.3");
        smux.putPin("smux-0", SmuxFabricPins.toSmux(orphan));
        // A pin held alike everywhere but to another DIP on one SMux is no pin of the fabric's either.
        PrismPin split = pin(40010, "b1", B1);
        fabric.put(split);
        smux.putPin("smux-2", SmuxFabricPins.toSmux(pin(40010, "b2", "10.0.1.3")));

        List<PrismPin> read = fabric.installed();
        Map<Integer, String> backends = new TreeMap<>();
        read.forEach(p -> backends.put(p.clientPort, p.backend));
        assertEquals(Map.of(40001, "", 40009, "", 40010, ""), backends);

        pins.reconcile(vips, Set.of(), Map.of(), 2000);
        assertEquals(live, holding(wanted), "put back on the SMux that lost it");
        assertEquals(List.of(), holding(orphan), "the orphan removed");
        assertEquals(List.of(), holding(split), "an unwanted split pin removed from every SMux");
        assertTrue(held.values().stream().allMatch(m -> m.size() == 1), held.toString());
        assertEquals(List.of(wanted), fabric.installed());
    }
}
