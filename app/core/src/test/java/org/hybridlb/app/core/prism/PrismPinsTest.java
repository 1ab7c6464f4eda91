package org.hybridlb.app.core.prism;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hybridlb.app.core.ApiException;
import org.hybridlb.app.core.Json;
import org.hybridlb.app.core.port.SouthboundException;
import org.hybridlb.solver.model.Vip;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The lifecycle of Prism's fabric steering pins: installed (acknowledged) before the front end lets
 * its backend serve, removed when the connection comes back or its backend dies, adopted or removed
 * after a controller restart, put back on a device that lost them; bad requests change nothing.
 */
public class PrismPinsTest {
    static final String VIP = "10.100.0.1";
    static final String B1 = "10.0.1.2";
    static final String PIN = "{\"client\": \"10.9.0.7\", \"clientPort\": 40001, \"vipPort\": 80, \"backend\": \"b1\"}";

    FakeFrontEnd fe;
    Device device = new Device();
    List<Vip> vips = new ArrayList<>();
    Collection<String> unhealthy = new ArrayList<>();
    long now = 1000;
    PrismPins pins;
    PrismHandoff prism;

    @BeforeEach
    void start() throws Exception {
        fe = new FakeFrontEnd();
        pins = new PrismPins(device);
        prism = handoff(pins);
        vips.add(vip("fabric"));
    }

    PrismHandoff handoff(PrismPins p) {
        HttpClient http = HttpClient.newHttpClient();
        // the round's clock: each round starts at `now`
        Clock clock = new Clock() {
            @Override
            public java.time.ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return Instant.ofEpochMilli(now);
            }
        };
        return new PrismHandoff(new HttpPrismFrontEnds(Duration.ofSeconds(5), () -> http), p, () -> vips,
                () -> unhealthy, clock);
    }

    @AfterEach
    void stop() {
        prism.close();
        fe.close();
    }

    Vip vip(String steering) throws Exception {
        return Json.MAPPER.readValue("{\"vip\": \"" + VIP + "\", \"aggregate\": \"10.100.0.0/16\", \"ports\": [{\"proto\":"
                + " \"tcp\", \"port\": 80, \"dips\": [{\"ip\": \"10.0.0.2\"}]}], \"prism\": {\"frontends\": [{\"ip\":"
                + " \"10.0.0.2\", \"admin\": \"" + fe.admin() + "\"}], " + PrismHandoffTest.RULES
                + ", \"steering\": \"" + steering + "\"}}", Vip.class);
    }

    PrismPin pin(String body) {
        return pins.pin(vips.get(0), unhealthy, body, now);
    }

    /** The front end reports these connections ("client:port" -> owner: frontend or a backend's DIP). */
    void frontEndReports(String... clientOwner) throws Exception {
        StringBuilder a = new StringBuilder("[");
        for (int i = 0; i < clientOwner.length; i += 2) {
            a.append(i == 0 ? "" : ",").append("{\"id\": ").append(i).append(", \"client\": \"").append(clientOwner[i])
                    .append("\", \"state\": \"").append("frontend".equals(clientOwner[i + 1]) ? "reading" : "remote")
                    .append("\", \"owner\": \"").append(clientOwner[i + 1]).append("\", \"requests\": 1}");
        }
        fe.connections = Json.MAPPER.readTree(a.append("]").toString());
    }

    @Test
    void aPinIsOnTheFabricWhenTheCallReturnsAndNothingIsKeptWhenTheFabricFails() {
        PrismPin p = pin(PIN);
        assertEquals(new PrismPin(VIP, 80, "10.9.0.7", 40001, "b1", B1), p);
        assertEquals(List.of("put " + p), device.log, "acknowledged by the device before the call returned");
        assertEquals(List.of(p), pins.pins(VIP));

        device.failing = true;
        ApiException e = assertThrows(ApiException.class, () -> pin(PIN.replace("40001", "40002")));
        assertEquals(503, e.status);
        assertTrue(e.getMessage().contains("did not acknowledge"), e.getMessage());
        assertEquals(List.of(p), pins.pins(VIP), "a pin the fabric did not acknowledge is not recorded");
    }

    @Test
    void badRequestsNameTheFieldAndChangeNothing() throws Exception {
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("/client", PIN.replace("\"10.9.0.7\"", "\"10.9.0\""));
        cases.put("/clientPort", PIN.replace("40001", "70000"));
        cases.put("/vipPort", PIN.replace("\"vipPort\": 80", "\"vipPort\": 443"));
        cases.put("/backend", PIN.replace("\"b1\"", "\"b9\""));
        cases.put("/", "[1]");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            ApiException e = assertThrows(ApiException.class, () -> pin(c.getValue()), c.getKey());
            assertEquals(400, e.status, c.getKey());
            assertEquals(c.getKey(), e.field, e.getMessage());
        }
        vips.set(0, vip("agent"));
        ApiException e = assertThrows(ApiException.class, () -> pin(PIN));
        assertEquals(409, e.status);
        assertEquals("/prism/steering", e.field);
        unhealthy.add(B1);
        vips.set(0, vip("fabric"));
        assertEquals(503, assertThrows(ApiException.class, () -> pin(PIN)).status, "no pin to a dead backend");
        assertEquals(List.of(), device.log, "nothing reached the fabric");
        assertEquals(List.of(), pins.pins(VIP));
    }

    @Test
    void theFrontEndRemovesItWhenTheConnectionComesBack() {
        PrismPin p = pin(PIN);
        assertTrue(pins.unpin(VIP, "10.9.0.7", 40001, 80));
        assertEquals(List.of("put " + p, "remove " + p), device.log);
        assertEquals(Set.of(), device.held.keySet());
        assertFalse(pins.unpin(VIP, "10.9.0.7", 40001, 80), "a second release finds none");

        PrismPin q = pin(PIN);
        device.failing = true;
        assertEquals(503, assertThrows(ApiException.class, () -> pins.unpin(VIP, "10.9.0.7", 40001, 80)).status);
        assertEquals(List.of(q), pins.pins(VIP), "kept while the fabric still holds it");
        device.failing = false;
        now += 10;
        prism.round(); // the front end reports no such connection: the lost release is collected
        assertEquals(List.of(), pins.pins(VIP));
        assertEquals(Set.of(), device.held.keySet());
    }

    @Test
    void aRoundKeepsThePinsOfHandedOffConnectionsAndCollectsTheRest() throws Exception {
        frontEndReports("10.9.0.7:40001", B1, "10.9.0.7:40002", "frontend");
        PrismPin held = pin(PIN);
        PrismPin back = pin(PIN.replace("40001", "40002"));
        now += 10;
        prism.round();
        assertEquals(List.of(held), pins.pins(VIP), "the returned connection's pin is removed, the held one kept");
        assertEquals(Set.of(held.flow()), device.held.keySet());
        assertTrue(device.log.contains("remove " + back));

        // a pin installed after the round read the front ends is not collected by that round
        PrismPin fresh = pin(PIN.replace("40001", "40003"));
        prism.round();
        assertEquals(List.of(held, fresh), pins.pins(VIP));
    }

    @Test
    void theBackendsPinsGoWhenItDiesOrLeavesTheVip() throws Exception {
        frontEndReports("10.9.0.7:40001", B1, "10.9.0.7:40002", "10.0.1.3");
        PrismPin p1 = pin(PIN);
        PrismPin p2 = pin(PIN.replace("40001", "40002").replace("\"b1\"", "\"b2\""));
        now += 10;
        unhealthy.add(B1);
        prism.round();
        assertEquals(List.of(p2), pins.pins(VIP), "the dead backend's pin is removed");
        assertEquals(Set.of(p2.flow()), device.held.keySet());
        unhealthy.clear();
        vips.set(0, Json.MAPPER.readValue(Json.write(vips.get(0)).replace("10.0.1.3", "10.0.1.9"), Vip.class));
        prism.round();
        assertEquals(List.of(), pins.pins(VIP), "a backend that moved takes its pins with it");
        assertEquals(Set.of(), device.held.keySet());
        assertTrue(device.log.contains("remove " + p1) && device.log.contains("remove " + p2), device.log.toString());
    }

    @Test
    void aVipThatIsNoLongerFabricSteeredLosesItsPins() throws Exception {
        frontEndReports("10.9.0.7:40001", B1);
        pin(PIN);
        now += 10;
        vips.set(0, vip("agent"));
        prism.round();
        assertEquals(Set.of(), device.held.keySet());
        pin2AfterVipDeleted();
    }

    private void pin2AfterVipDeleted() throws Exception {
        vips.set(0, vip("fabric"));
        pin(PIN);
        now += 10;
        vips.clear();
        prism.round();
        assertEquals(Set.of(), device.held.keySet(), "a deleted VIP's pins are removed");
    }

    @Test
    void aRestartedControllerAdoptsThePinsStillWantedAndRemovesTheOthers() throws Exception {
        frontEndReports("10.9.0.7:40001", B1);
        PrismPin kept = pin(PIN);
        PrismPin stale = pin(PIN.replace("40001", "40002"));
        prism.close();
        // a new controller: no pins of its own, the devices still hold both
        pins = new PrismPins(device);
        prism = handoff(pins);
        device.log.clear();
        now += 10;
        prism.round();
        assertEquals(List.of(kept), pins.pins(VIP), "the handed-off connection keeps its pin across the restart");
        assertEquals(Set.of(kept.flow()), device.held.keySet());
        assertEquals(List.of("remove " + stale), device.log);
        assertTrue(pins.unpin(VIP, "10.9.0.7", 40001, 80), "and its front end can release it");
    }

    @Test
    void aPinADeviceLostIsPutBack() throws Exception {
        frontEndReports("10.9.0.7:40001", B1);
        PrismPin p = pin(PIN);
        device.held.clear(); // the device restarted
        now += 10;
        prism.round();
        assertEquals(Set.of(p.flow()), device.held.keySet());
        assertEquals("put " + p, device.log.get(device.log.size() - 1));
    }

    @Test
    void aFrontEndThatCannotBeReadCollectsNothing() throws Exception {
        pin(PIN);
        fe.close(); // unreachable: whether its connections are handed off is unknown
        now += 10;
        prism.round();
        assertEquals(1, pins.pins(VIP).size());
    }

    /** A fabric device: the pins it holds, and every call it acknowledged. */
    public static final class Device implements FabricPins {
        public final Map<String, PrismPin> held = new LinkedHashMap<>();
        final List<String> log = new ArrayList<>();
        boolean failing;

        public Device() {
        }

        @Override
        public synchronized void put(PrismPin pin) {
            check();
            held.put(pin.flow(), pin);
            log.add("put " + pin);
        }

        @Override
        public synchronized void remove(PrismPin pin) {
            check();
            held.remove(pin.flow());
            log.add("remove " + pin);
        }

        @Override
        public synchronized List<PrismPin> installed() {
            check();
            return new ArrayList<>(held.values());
        }

        private void check() {
            if (failing) {
                throw new SouthboundException("device unreachable");
            }
        }
    }
}
