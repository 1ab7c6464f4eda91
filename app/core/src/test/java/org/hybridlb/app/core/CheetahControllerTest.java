package org.hybridlb.app.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.hybridlb.app.core.cheetah.Cookie;
import org.hybridlb.app.core.cheetah.CookieRegistry;
import org.hybridlb.app.core.hmux.CookieDecode;
import org.hybridlb.app.core.hmux.ServiceMatch;
import org.hybridlb.app.core.hmux.SwitchCapability;
import org.hybridlb.app.core.model.SmuxTable;
import org.hybridlb.app.core.view.AssignmentView;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.Smux;
import org.hybridlb.solver.model.SwitchRole;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.VipTraffic;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.topology.FatTree;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Cheetah VIPs in the controller: server ids, keys, the SMux table's cookie fields, restarts. */
class CheetahControllerTest {
    static final String AGG = "10.100.0.0/16";
    static final ControllerConfig CONFIG = ControllerConfig.defaults().withInterval(Duration.ZERO);

    final Topology topo = FatTree.generate(4);
    final FakeFabric fabric = new FakeFabric(topo);
    final FakeFabric.MemoryStore store = new FakeFabric.MemoryStore();
    final List<Controller> started = new ArrayList<>();

    @AfterEach
    void stop() {
        started.forEach(Controller::close);
    }

    Controller start() {
        Controller c = new Controller(CONFIG, fabric.ports(store));
        started.add(c);
        c.start();
        c.awaitIdle(20_000);
        return c;
    }

    String host(int i) {
        return topo.hosts.get(i).ip;
    }

    String vipJson(String vip, String extra, int... hosts) {
        StringBuilder dips = new StringBuilder();
        for (int h : hosts) {
            dips.append(dips.length() == 0 ? "" : ",").append("{\"ip\":\"").append(host(h)).append("\"}");
        }
        return "{\"vip\":\"" + vip + "\",\"aggregate\":\"" + AGG + "\"" + extra + ",\"ports\":[{\"proto\":\"tcp\","
                + "\"port\":80,\"dips\":[" + dips + "]}]}";
    }

    /** The table smux-0 runs, as the JSON it was sent as. */
    JsonNode table() {
        return Json.MAPPER.valueToTree(fabric.tables.get("smux-0"));
    }

    JsonNode entry(String vip) {
        for (JsonNode e : table().path("vips")) {
            if (e.path("vip").asText().equals(vip)) {
                return e;
            }
        }
        throw new AssertionError("no " + vip + " in " + table());
    }

    JsonNode state() {
        try {
            return Json.MAPPER.readTree(store.json);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    int serverId(String host) {
        return state().path("cookies").path("serverIds").path(host).asInt();
    }

    @Test
    void aCheetahVipCarriesItsCookieFieldsAndAHashVipIsWrittenAsBefore() {
        Controller c = start();
        c.createVip(vipJson("10.100.0.1", "", 0, 1));
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\",\"mechanism\":\"rr\"", 1, 2));
        c.createVip(vipJson("10.100.0.3", ",\"affinity\":\"cheetah\"", 2));
        c.awaitIdle(20_000);
        assertEquals(null, c.assignment().lastError);

        // the hash VIP: exactly the fields of before
        JsonNode hash = entry("10.100.0.1");
        assertEquals(List.of("vip", "aggregate", "selection", "encap", "ports"), names(hash));
        assertEquals(List.of("ip", "weight", "bucketId"), names(hash.at("/ports/0/dips/0")));

        JsonNode rr = entry("10.100.0.2");
        assertEquals(List.of("vip", "aggregate", "selection", "encap", "affinity", "cookieKey", "cookieHash",
                "mechanism", "ports"), names(rr));
        assertEquals("cheetah", rr.path("affinity").asText());
        assertEquals("siphash13", rr.path("cookieHash").asText());
        assertEquals("rr", rr.path("mechanism").asText());
        assertEquals("wrr", entry("10.100.0.3").path("mechanism").asText(), "the default mechanism, written");
        String key = rr.path("cookieKey").asText();
        assertEquals(16, Cookie.parseKey(key).length);
        assertNotEquals(key, entry("10.100.0.3").path("cookieKey").asText(), "a key per VIP");
        assertEquals(key, state().at("/cookies/keys/10.100.0.2").asText(), "the key is persisted");

        // one id per host, the same in every VIP, distinct between hosts, as persisted
        Set<Integer> ids = new HashSet<>();
        for (int h = 0; h < 3; h++) {
            int id = serverId(host(h));
            assertTrue(id >= Cookie.SERVER_ID_MIN && id <= Cookie.SERVER_ID_MAX, host(h) + ": " + id);
            ids.add(id);
        }
        assertEquals(3, ids.size(), state().path("cookies").toString());
        assertEquals(serverId(host(1)), rr.at("/ports/0/dips/0/serverId").asInt());
        assertEquals(serverId(host(2)), rr.at("/ports/0/dips/1/serverId").asInt());
        assertEquals(serverId(host(2)), entry("10.100.0.3").at("/ports/0/dips/0/serverId").asInt());

        // no answer of the northbound shows a key
        for (Object view : List.of(c.vips(), c.assignment(), c.stats(), c.smuxes(), c.migrations(), c.switches())) {
            assertFalse(Json.write(view).contains(key), view.getClass().getSimpleName());
        }
    }

    /** The statefulOwners of {@code vip} in the table the last SMux of the topology runs. */
    List<String> owners(String vip) {
        List<String> out = new ArrayList<>();
        JsonNode t = Json.MAPPER.valueToTree(fabric.tables.get(topo.smuxes.get(topo.smuxes.size() - 1).id));
        for (JsonNode e : t.path("vips")) {
            if (e.path("vip").asText().equals(vip)) {
                e.path("statefulOwners").forEach(o -> out.add(o.asText()));
            }
        }
        return out;
    }

    @Test
    void aStatefulVipNamesEveryLiveSmuxAsOwnerAndTheSlotsStayAcrossLossesAndRestarts() {
        Controller c = start();
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah-stateful\",\"mechanism\":\"p2c\"", 1, 2));
        c.createVip(vipJson("10.100.0.3", ",\"affinity\":\"cheetah\",\"mechanism\":\"awrr\"", 3));
        c.awaitIdle(20_000);
        assertEquals(null, c.assignment().lastError);
        JsonNode e = entry("10.100.0.2");
        assertEquals(List.of("vip", "aggregate", "selection", "encap", "affinity", "cookieKey", "cookieHash",
                "mechanism", "statefulOwners", "ports"), names(e));
        assertEquals("cheetah-stateful", e.path("affinity").asText());
        assertEquals("p2c", e.path("mechanism").asText());
        assertEquals(serverId(host(2)), e.at("/ports/0/dips/1/serverId").asInt());
        assertFalse(entry("10.100.0.3").has("statefulOwners"), "a cheetah VIP names no owners");
        assertEquals("awrr", entry("10.100.0.3").path("mechanism").asText());
        List<String> all = new ArrayList<>();
        topo.smuxes.forEach(m -> all.add(m.ip));
        List<String> first = owners("10.100.0.2");
        assertEquals(new HashSet<>(all), new HashSet<>(first), "every live SMux owns");
        assertEquals(all.size(), first.size());
        // a stateful VIP stays off the switches that cannot decode cookies, as a cheetah VIP
        assertTrue(c.assignment().hashUnmatched.containsKey("10.100.0.2"), c.assignment().hashUnmatched.toString());

        // an SMux lost: every other keeps its owner id, and the lost one's slot goes at once to the
        // live SMux holding the fewest slots (all hold one: the lowest address), as its second
        Smux lost = topo.smuxes.get(0);
        fabric.live.remove(lost.id);
        c.smuxesChanged(fabric.liveSmuxes());
        c.awaitIdle(20_000);
        List<String> rest = new ArrayList<>(all);
        rest.remove(lost.ip);
        String lowest = rest.stream().min(java.util.Comparator.comparingLong(
                ip -> Integer.toUnsignedLong(org.hybridlb.solver.model.Ipv4.parse(ip)))).orElseThrow();
        List<String> after = new ArrayList<>(first);
        after.set(first.indexOf(lost.ip), lowest);
        assertEquals(after, owners("10.100.0.2"));
        assertEquals(0, state().at("/cookies/ownerQuarantine").size(), state().path("cookies").toString());

        // a restart keeps the slots: the running tables are right, nothing sent
        c.close();
        fabric.takeLog();
        start();
        assertEquals(after, owners("10.100.0.2"));
        assertFalse(fabric.takeLog().stream().anyMatch(l -> l.startsWith("put ")), "the running table is right");
    }

    @Test
    void turningACheetahVipStatefulChangesItsTableInPlace() {
        Controller c = start();
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\"", 1, 2));
        c.awaitIdle(20_000);
        assertEquals(List.of(), owners("10.100.0.2"));
        c.replaceVip("10.100.0.2", vipJson("10.100.0.2", ",\"affinity\":\"cheetah-stateful\"", 1, 2));
        c.awaitIdle(20_000);
        assertEquals(topo.smuxes.size(), owners("10.100.0.2").size(), Json.write(c.vips()));
        assertEquals("wrr", entry("10.100.0.2").path("mechanism").asText());
    }

    @Test
    void idsAndKeysSurviveARestartAndNothingIsSentAgain() {
        Controller c = start();
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\"", 1, 2));
        c.awaitIdle(20_000);
        JsonNode before = entry("10.100.0.2");
        c.close();
        fabric.takeLog();

        start();
        assertEquals(before, entry("10.100.0.2"), "same key and ids after the restart");
        assertFalse(fabric.takeLog().stream().anyMatch(l -> l.startsWith("put ")), "the running table is right");
    }

    @Test
    void aStateWrittenBeforeCookiesLoadsAndItsHostsGetIds() {
        Controller c = start();
        c.createVip(vipJson("10.100.0.1", "", 0, 1));
        c.awaitIdle(20_000);
        c.close();
        ObjectNode old = (ObjectNode) state();
        old.remove("cookies");
        store.json = old.toString();
        fabric.takeLog();

        start();
        assertEquals(List.of(), fabric.takeLog().stream().filter(l -> l.startsWith("put ")).collect(
                java.util.stream.Collectors.toList()), "a hash VIP's table is the same as before");
        assertTrue(serverId(host(0)) > 0 && serverId(host(1)) > 0, state().path("cookies").toString());
    }

    @Test
    void aHostThatLeavesEveryPoolKeepsItsIdOutOfUseForTheQuarantine() {
        Controller c = start();
        // host 2 leaves a hash VIP (a cheetah VIP's removed DIP drains first: the next test)
        c.createVip(vipJson("10.100.0.1", "", 1, 2));
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\"", 1));
        c.awaitIdle(20_000);
        int gone = serverId(host(2));
        c.removeDip("10.100.0.1", host(2), "tcp", 80);
        c.awaitIdle(20_000);
        assertEquals(0, serverId(host(2)), "released");
        long until = state().at("/cookies/quarantined/" + gone).asLong();
        long left = until - System.currentTimeMillis();
        assertTrue(left > CookieRegistry.QUARANTINE.toMillis() - 60_000 && left <= CookieRegistry.QUARANTINE.toMillis(),
                "quarantined for an hour: " + left);
        c.addDip("10.100.0.2", "{\"ip\":\"" + host(3) + "\"}");
        c.awaitIdle(20_000);
        int fresh = serverId(host(3));
        assertTrue(fresh > 0 && fresh != gone, "a new host does not get a quarantined id: " + fresh);
        assertEquals(fresh, entry("10.100.0.2").at("/ports/0/dips/1/serverId").asInt());
    }

    @Test
    void aDipRemovedFromACheetahVipDrainsAtWeightZeroSoItsConnectionsCookiesStayValid() {
        Controller c = start();
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\"", 1, 2, 3));
        c.createVip(vipJson("10.100.0.1", "", 1, 2, 3));
        c.awaitIdle(20_000);
        int id2 = serverId(host(2));
        c.removeDip("10.100.0.2", host(2), "tcp", 80);
        c.removeDip("10.100.0.1", host(3), "tcp", 80);
        c.awaitIdle(20_000);
        assertEquals(null, c.assignment().lastError);

        assertEquals(2, c.vip("10.100.0.2").ports.get(0).dips.size(), "the operator's VIP has lost it");
        JsonNode drained = dip(entry("10.100.0.2"), host(2));
        assertNotNull(drained, "the SMuxes still decode to the removed DIP: " + entry("10.100.0.2"));
        assertEquals(0, drained.path("weight").asInt(), "weight 0: no new connection");
        assertEquals(id2, drained.path("serverId").asInt());
        assertEquals(id2, serverId(host(2)), "its host keeps its id while it drains");
        assertEquals(null, dip(entry("10.100.0.1"), host(3)), "a hash VIP's DIP leaves at once");
        long left = state().at("/cookies/retiring/0/until").asLong() - System.currentTimeMillis();
        assertTrue(left > RetiringDips.DRAIN.toMillis() - 60_000 && left <= RetiringDips.DRAIN.toMillis(), "" + left);

        // persisted: a restarted controller keeps it draining and sends nothing new
        c.close();
        fabric.takeLog();
        c = start();
        assertEquals(0, dip(entry("10.100.0.2"), host(2)).path("weight").asInt());
        assertFalse(fabric.takeLog().stream().anyMatch(l -> l.startsWith("put ")), "the running table is right");

        // added back: serves again and no longer drains
        c.addDip("10.100.0.2", "{\"ip\":\"" + host(2) + "\"}");
        c.awaitIdle(20_000);
        assertEquals(1, dip(entry("10.100.0.2"), host(2)).path("weight").asInt());
        assertEquals(0, state().path("cookies").path("retiring").size());
    }

    static JsonNode dip(JsonNode entry, String ip) {
        for (JsonNode d : entry.at("/ports/0/dips")) {
            if (d.path("ip").asText().equals(ip)) {
                return d;
            }
        }
        return null;
    }

    @Test
    void turningAVipToCheetahChangesItsTableInPlace() {
        Controller c = start();
        c.createVip(vipJson("10.100.0.2", "", 1, 2));
        c.awaitIdle(20_000);
        assertFalse(entry("10.100.0.2").has("affinity"));
        String key = state().at("/cookies/keys/10.100.0.2").asText();
        assertEquals(32, key.length(), "a hash VIP has its key too, for its hosts");
        c.replaceVip("10.100.0.2", vipJson("10.100.0.2", ",\"affinity\":\"cheetah\",\"mechanism\":\"hash\"", 1, 2));
        c.awaitIdle(20_000);
        JsonNode e = entry("10.100.0.2");
        assertEquals("cheetah", e.path("affinity").asText(), e.toString());
        assertEquals("hash", e.path("mechanism").asText());
        assertEquals(key, e.path("cookieKey").asText(), "the key its hosts already encode with");
        assertNotNull(e.at("/ports/0/dips/0/serverId").numberValue());
        c.replaceVip("10.100.0.2", vipJson("10.100.0.2", "", 1, 2));
        c.awaitIdle(20_000);
        assertEquals(List.of("vip", "aggregate", "selection", "encap", "ports"), names(entry("10.100.0.2")),
                "back to hash");
        assertFalse(entry("10.100.0.2").has("cookieKey"));
        assertEquals(key, state().at("/cookies/keys/10.100.0.2").asText(), "kept");
        c.deleteVip("10.100.0.2");
        c.awaitIdle(20_000);
        c.reassignNow(); // the round after its withdrawal
        c.awaitIdle(20_000);
        assertFalse(state().path("cookies").path("keys").has("10.100.0.2"), "dropped with the VIP");
    }

    @Test
    void aTableReadBackWithTheKeysFingerprintEqualsTheOneSent() throws Exception {
        Controller c = start();
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\"", 1, 2));
        c.awaitIdle(20_000);
        SmuxTable sent = fabric.tables.get("smux-0");
        // what an SMux's GET /table answers: the key replaced by its fingerprint
        ObjectNode read = Json.MAPPER.valueToTree(sent);
        ObjectNode e = (ObjectNode) read.path("vips").path(0);
        String key = e.remove("cookieKey").asText();
        e.put("cookieKeyFingerprint", Cookie.fingerprint(Cookie.parseKey(key)));
        assertTrue(sent.sameVips(Json.MAPPER.treeToValue(read, SmuxTable.class)));
        e.put("cookieKeyFingerprint", "00000000");
        assertFalse(sent.sameVips(Json.MAPPER.treeToValue(read, SmuxTable.class)), "another key is another table");
    }

    /** Heavy traffic from the first ToR to each VIP, so the solver wants them on HMuxes. */
    void traffic(String... vips) {
        String tor0 = topo.switches.stream().filter(s -> s.role == SwitchRole.TOR).findFirst().orElseThrow().id;
        List<VipTraffic> vt = new ArrayList<>();
        for (String v : vips) {
            vt.add(new VipTraffic(v, Map.of(tor0, 2e8), null));
        }
        fabric.traffic = new TrafficInterval(0, 0, 10, vt);
    }

    /** Every switch says it decodes cookies of {@code modes}, with Open vSwitch's hash. */
    void everySwitchDecodesCookies(Cookie.HashMode... modes) {
        SwitchCapability decoder = new SwitchCapability(FakeFabric.OVS.hash, true, true, false, Set.of(modes));
        topo.switches.forEach(s -> fabric.capabilities.put(s.id, decoder));
    }

    /** A hash VIP (10.100.0.1) and a cheetah VIP (10.100.0.2) with traffic, planned: the assignment. */
    AssignmentView placeAHashAndACheetahVip(Controller c) {
        traffic("10.100.0.1", "10.100.0.2");
        c.createVip(vipJson("10.100.0.1", "", 0, 1));
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\"", 2, 3));
        c.awaitIdle(20_000);
        return c.assignment();
    }

    @Test
    void aCheetahVipStaysOffSwitchesThatCannotDecodeCookiesAndTheAssignmentSaysWhy() {
        Controller c = start();
        AssignmentView a = placeAHashAndACheetahVip(c);
        assertNotEquals(Assignment.SMUX, a.installed.get("10.100.0.1"), "the hash VIP reaches an HMux: " + a.installed);
        assertEquals(Assignment.SMUX, a.installed.get("10.100.0.2"), "the cheetah VIP stays on the SMuxes");
        assertEquals(null, a.lastError);
        AssignmentView.HashUnmatched off = a.hashUnmatched.get("10.100.0.2");
        assertNotNull(off, Json.write(a));
        assertTrue(off.reason.contains("cannot decode the VIP's Cheetah cookies"), off.reason);
        long hmuxCapable = topo.switches.stream().filter(s -> s.tables.tunnel > 0).count();
        assertEquals(hmuxCapable, off.switches.size(), off.switches.toString());
        assertFalse(a.hashUnmatched.containsKey("10.100.0.1"));

        // turned to cheetah, the hash VIP leaves its HMux
        c.replaceVip("10.100.0.1", vipJson("10.100.0.1", ",\"affinity\":\"cheetah\"", 0, 1));
        c.awaitIdle(20_000);
        c.reassignNow();
        c.awaitIdle(20_000);
        assertEquals(Assignment.SMUX, c.assignment().installed.get("10.100.0.1"));
        assertTrue(fabric.switches.values().stream().noneMatch(held -> held.containsKey("10.100.0.1")),
                "no switch holds it");
    }

    @Test
    void aStatefulVipStaysOnTheSmuxesEvenWhereSwitchesDecodeItsCookies() {
        everySwitchDecodesCookies(Cookie.HashMode.values());
        Controller c = start();
        traffic("10.100.0.2");
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah-stateful\"", 2, 3));
        c.awaitIdle(20_000);
        assertEquals(Assignment.SMUX, c.assignment().installed.get("10.100.0.2"),
                "a switch keeps no owner state and forwards to no owner SMux");
        assertEquals(HashContracts.STATEFUL_ON_SMUXES, c.assignment().hashUnmatched.get("10.100.0.2").reason);
    }

    @Test
    void aCheetahVipWithAUdpServiceStaysOnTheSmuxesThatDecodeItsQuicConnectionIds() {
        everySwitchDecodesCookies(Cookie.HashMode.values());
        Controller c = start();
        traffic("10.100.0.2", "10.100.0.3");
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\"", 2, 3).replace("\"tcp\"", "\"udp\""));
        c.createVip(vipJson("10.100.0.3", ",\"affinity\":\"cheetah\"", 4, 5));
        c.awaitIdle(20_000);
        AssignmentView a = c.assignment();
        assertEquals(Assignment.SMUX, a.installed.get("10.100.0.2"), "a switch would hash its QUIC: " + a.installed);
        assertEquals(HashContracts.QUIC_ON_SMUXES, a.hashUnmatched.get("10.100.0.2").reason);
        assertNotEquals(Assignment.SMUX, a.installed.get("10.100.0.3"), "a TCP-only cheetah VIP may have a decoding HMux");
    }

    @Test
    void onSwitchesThatDecodeCookiesACheetahVipMayBeOnAnHmux() {
        everySwitchDecodesCookies(Cookie.DEFAULT_MODE);
        Controller c = start();
        traffic("10.100.0.2");
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\"", 2, 3));
        c.awaitIdle(20_000);
        String hmux = c.assignment().installed.get("10.100.0.2");
        assertNotEquals(Assignment.SMUX, hmux);
        assertTrue(c.assignment().hashUnmatched.isEmpty(), c.assignment().hashUnmatched.toString());
        // its HMux is given what it decodes the cookies with: the hosts' mode and key, the pool's server ids
        CookieDecode held = fabric.cookiesOn.get(hmux).get(new ServiceMatch("10.100.0.2", "tcp", 80));
        assertNotNull(held, "cookies on " + hmux + ": " + fabric.cookiesOn.get(hmux));
        assertEquals(Cookie.DEFAULT_MODE, held.mode);
        assertEquals(state().path("cookies").path("keys").path("10.100.0.2").asText(), held.key);
        assertEquals(Map.of(serverId(host(2)), host(2), serverId(host(3)), host(3)),
                held.servers.entrySet().stream().collect(java.util.stream.Collectors.toMap(Map.Entry::getKey,
                        e -> e.getValue().endpoint)));
    }

    @Test
    void aSwitchThatDecodesOnlyAnotherModeIsNoHmuxOfACheetahVip() {
        // the P4 programs hash crc32c; the hosts encode with siphash13: such a switch would drop the cookies
        everySwitchDecodesCookies(Cookie.HashMode.CRC32C);
        Controller c = start();
        AssignmentView a = placeAHashAndACheetahVip(c);
        assertNotEquals(Assignment.SMUX, a.installed.get("10.100.0.1"), "a hash VIP still has an HMux");
        assertEquals(Assignment.SMUX, a.installed.get("10.100.0.2"));
        assertEquals(topo.switches.stream().filter(s -> s.tables.tunnel > 0).count(),
                a.hashUnmatched.get("10.100.0.2").switches.size(), a.hashUnmatched.toString());
        assertTrue(a.hashUnmatched.get("10.100.0.2").reason.contains("hash mode siphash13"), a.hashUnmatched.toString());
    }

    @Test
    void aCrc32cCheetahVipMayBeOnACrc32cDecoderAndEveryPartyUsesItsMode() throws Exception {
        // the P4 programs hash crc32c: a VIP whose hosts encode crc32c may be theirs, a siphash13 one may not
        everySwitchDecodesCookies(Cookie.HashMode.CRC32C);
        for (int h = 0; h < 4; h++) {
            fabric.agentHosts.add(host(h));
        }
        Controller c = start();
        traffic("10.100.0.2", "10.100.0.3");
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\"", 2, 3));
        c.createVip(vipJson("10.100.0.3", ",\"affinity\":\"cheetah\",\"cookieHash\":\"crc32c\"", 0, 1));
        c.awaitIdle(20_000);
        AssignmentView a = c.assignment();
        assertEquals(null, a.lastError);
        assertEquals(Assignment.SMUX, a.installed.get("10.100.0.2"), "the siphash13 VIP stays on the SMuxes");
        assertTrue(a.hashUnmatched.get("10.100.0.2").reason.contains("hash mode siphash13"), a.hashUnmatched.toString());
        String hmux = a.installed.get("10.100.0.3");
        assertNotEquals(Assignment.SMUX, hmux, "the crc32c VIP reaches an HMux: " + Json.write(a));
        assertFalse(a.hashUnmatched.containsKey("10.100.0.3"), a.hashUnmatched.toString());
        // its HMux decodes crc32c with the key the hosts encode with
        CookieDecode held = fabric.cookiesOn.get(hmux).get(new ServiceMatch("10.100.0.3", "tcp", 80));
        assertNotNull(held, "cookies on " + hmux + ": " + fabric.cookiesOn.get(hmux));
        assertEquals(Cookie.HashMode.CRC32C, held.mode);
        assertEquals(state().path("cookies").path("keys").path("10.100.0.3").asText(), held.key);
        // the SMuxes decode it in crc32c, the other in siphash13
        assertEquals("crc32c", entry("10.100.0.3").path("cookieHash").asText());
        assertEquals("siphash13", entry("10.100.0.2").path("cookieHash").asText());
        // its hosts encode it in crc32c; their default for other prefixes stays siphash13
        List<String> sent = fabric.cookieDocs.get(host(0));
        JsonNode doc = Json.MAPPER.readTree(sent.get(sent.size() - 1));
        assertEquals("siphash13", doc.path("hash").asText());
        assertEquals("10.100.0.3/32", doc.at("/vips/0/prefix").asText(), doc.toString());
        assertEquals("crc32c", doc.at("/vips/0/hash").asText(), doc.toString());
        List<String> sent2 = fabric.cookieDocs.get(host(2));
        assertEquals("siphash13", Json.MAPPER.readTree(sent2.get(sent2.size() - 1)).at("/vips/0/hash").asText());
    }

    @Test
    void aVipsCookieHashIsFixedForItsLife() {
        Controller c = start();
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\"", 2, 3));
        c.awaitIdle(20_000);
        String before = store.json;
        ApiException e = assertThrows(ApiException.class, () -> c.replaceVip("10.100.0.2",
                vipJson("10.100.0.2", ",\"affinity\":\"cheetah\",\"cookieHash\":\"crc32c\"", 2, 3)));
        assertEquals(409, e.status);
        assertTrue(e.getMessage().contains("cookieHash"), e.getMessage());
        assertEquals(before, store.json, "nothing changed");
        assertEquals("siphash13", entry("10.100.0.2").path("cookieHash").asText());
        // naming the default it has is no change; a hash VIP naming one is refused by the reader
        c.replaceVip("10.100.0.2", vipJson("10.100.0.2", ",\"affinity\":\"cheetah\",\"cookieHash\":\"siphash13\"", 2, 3));
        ApiException bad = assertThrows(ApiException.class, () -> c.createVip(
                vipJson("10.100.0.4", ",\"cookieHash\":\"crc32c\"", 1)));
        assertEquals(400, bad.status);
        assertTrue(bad.getMessage().contains("cookieHash"), bad.getMessage());
        assertTrue(c.vips().stream().noneMatch(v -> v.vip.equals("10.100.0.4")));
    }

    @Test
    void aDipAddedToACheetahVipIsAppliedWithoutAHold() {
        Controller c = start();
        traffic("10.100.0.1", "10.100.0.2");
        c.createVip(vipJson("10.100.0.1", "", 0, 1));
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\"", 2, 3));
        c.awaitIdle(20_000);
        // the SMuxes pin connections of both that an HMux would move
        fabric.diverging.put("smux-0", Map.of("10.100.0.1", 5L, "10.100.0.2", 5L));
        c.addDip("10.100.0.1", "{\"ip\":\"" + host(4) + "\"}");
        c.addDip("10.100.0.2", "{\"ip\":\"" + host(5) + "\"}");
        c.awaitIdle(20_000);
        AssignmentView a = c.assignment();
        assertTrue(a.heldOnSmuxes.containsKey("10.100.0.1"), "a hash VIP's pool growth is held: " + a.heldOnSmuxes);
        assertFalse(a.heldOnSmuxes.containsKey("10.100.0.2"), "a cheetah VIP's is not");
        assertEquals(serverId(host(5)), entry("10.100.0.2").at("/ports/0/dips/2/serverId").asInt(),
                "the new DIP is on the SMuxes with its id: " + entry("10.100.0.2"));
    }

    @Test
    void aDipJoinsACheetahVipAtWeightZeroUntilItsHostAgentTakesItsDocument() {
        for (int h : new int[] {2, 3, 4, 5}) {
            fabric.agentHosts.add(host(h));
        }
        Controller c = start();
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\"", 2, 3));
        c.createVip(vipJson("10.100.0.1", "", 2, 3));
        c.awaitIdle(20_000);
        fabric.agentsUnreachable.add(host(4));
        c.addDip("10.100.0.2", "{\"ip\":\"" + host(4) + "\"}");
        c.addDip("10.100.0.1", "{\"ip\":\"" + host(4) + "\"}");
        c.addDip("10.100.0.2", "{\"ip\":\"" + host(5) + "\"}");
        c.awaitIdle(20_000);
        JsonNode joined = dip(entry("10.100.0.2"), host(4));
        assertNotNull(joined, "its id decodes on the SMuxes: " + entry("10.100.0.2"));
        assertEquals(serverId(host(4)), joined.path("serverId").asInt());
        assertEquals(0, joined.path("weight").asInt(), "no SYN goes to a host that may not encode yet");
        assertEquals(1, dip(entry("10.100.0.2"), host(5)).path("weight").asInt(), "a host that took its document joins");
        assertEquals(1, dip(entry("10.100.0.2"), host(2)).path("weight").asInt());
        assertEquals(1, dip(entry("10.100.0.1"), host(4)).path("weight").asInt(), "a hash VIP does not wait");
        assertEquals(1, c.vip("10.100.0.2").ports.get(0).dips.stream().filter(d -> d.ip.equals(host(4)))
                .findFirst().orElseThrow().weight, "the operator's VIP keeps the weight asked for");

        fabric.agentsUnreachable.remove(host(4));
        c.requestReconcile("test: the agent is back");
        c.awaitIdle(20_000);
        assertEquals(1, dip(entry("10.100.0.2"), host(4)).path("weight").asInt(), "it joins once its agent answered");
    }

    @Test
    void aCheetahVipOnADecodingHmuxTakesAddedAndDrainedDipsThereWithoutLeavingIt() {
        // the P4 HMux decodes the VIP's cookies: its connections are kept by them, not by the
        // SMuxes' pinning, so a pool change is written on the switch, not taken through the SMuxes
        everySwitchDecodesCookies(Cookie.HashMode.CRC32C);
        Controller c = start();
        traffic("10.100.0.3");
        c.createVip(vipJson("10.100.0.3", ",\"affinity\":\"cheetah\",\"cookieHash\":\"crc32c\"", 0, 1));
        c.awaitIdle(20_000);
        String hmux = c.assignment().installed.get("10.100.0.3");
        assertNotEquals(Assignment.SMUX, hmux);
        fabric.takeLog();
        c.addDip("10.100.0.3", "{\"ip\":\"" + host(4) + "\"}");
        c.awaitIdle(20_000);
        c.replaceVip("10.100.0.3", vipJson("10.100.0.3", ",\"affinity\":\"cheetah\",\"cookieHash\":\"crc32c\"", 0, 1, 4)
                .replace("{\"ip\":\"" + host(0) + "\"}", "{\"ip\":\"" + host(0) + "\",\"weight\":0}"));
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        assertEquals(-1, ControllerTest.indexOf(log, "remove " + hmux + " 10.100.0.3"), "the VIP left its HMux: " + log);
        assertEquals(hmux, c.assignment().installed.get("10.100.0.3"));
        Map<String, Integer> units = new TreeMap<>();
        fabric.switches.get(hmux).get("10.100.0.3").ports.get(0).dips.forEach(b -> units.put(b.ip, b.weight));
        assertEquals(Map.of(host(1), 1, host(4), 1, host(0), 0),
                Map.of(host(1), units.get(host(1)), host(4), units.get(host(4)), host(0), units.getOrDefault(host(0), 0)),
                "the HMux's pool, added to and drained there: " + units);
        CookieDecode held = fabric.cookiesOn.get(hmux).get(new ServiceMatch("10.100.0.3", "tcp", 80));
        assertEquals(Set.of(serverId(host(0)), serverId(host(1)), serverId(host(4))), held.servers.keySet(),
                "the HMux decodes the added DIP's id and still the drained one's");
    }

    @Test
    void everyHostAgentGetsItsIdAndItsVipsKeysBeforeTheSmuxesDecodeAndOnlyWhenTheyChange() throws Exception {
        for (int h = 0; h < 4; h++) {
            fabric.agentHosts.add(host(h));
        }
        List<String> notOnDisk = new ArrayList<>();
        fabric.onCookies = (host, d) -> { // no id or key leaves the controller before the state holds it
            try {
                JsonNode doc = Json.MAPPER.readTree(d);
                List<String> secrets = new ArrayList<>(List.of(doc.path("key").asText(),
                        "\"" + host + "\":" + doc.path("serverId").asInt()));
                doc.path("vips").forEach(v -> secrets.add(v.path("key").asText()));
                secrets.stream().filter(x -> store.json == null || !store.json.contains(x)).forEach(notOnDisk::add);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        };
        Controller c = start();
        c.createVip(vipJson("10.100.0.1", "", 0, 1));
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\"", 1, 2));
        c.awaitIdle(20_000);
        List<String> log = fabric.takeLog();
        assertEquals(null, c.assignment().lastError);
        // host 1 serves both VIPs: its id and both keys (the hash VIP's too, so it encodes before a switch to cheetah)
        List<String> sent1 = fabric.cookieDocs.get(host(1));
        JsonNode doc = Json.MAPPER.readTree(sent1.get(sent1.size() - 1));
        assertEquals(serverId(host(1)), doc.path("serverId").asInt());
        assertEquals("siphash13", doc.path("hash").asText());
        assertEquals(25, doc.path("keepaliveSeconds").asInt());
        assertEquals(state().at("/cookies/hostDefaultKey").asText(), doc.path("key").asText());
        assertEquals(2, doc.path("vips").size(), doc.toString());
        assertEquals("10.100.0.1/32", doc.at("/vips/0/prefix").asText());
        assertEquals(state().at("/cookies/keys/10.100.0.1").asText(), doc.at("/vips/0/key").asText());
        assertEquals("10.100.0.2/32", doc.at("/vips/1/prefix").asText());
        assertEquals(entry("10.100.0.2").path("cookieKey").asText(), doc.at("/vips/1/key").asText(),
                "the key the SMuxes decode with");
        assertFalse(fabric.cookieDocs.containsKey(host(3)), "a host in no pool gets nothing");
        assertEquals(List.of(), notOnDisk, "sent before it was persisted");
        // the host of the cheetah VIP had its document before the SMuxes had the VIP's table
        int hostConfigured = log.indexOf("cookies " + host(2));
        int decoded = -1;
        for (int i = 0; i < log.size(); i++) {
            if (log.get(i).startsWith("put smux-0") && log.get(i).contains("10.100.0.2[")) {
                decoded = i;
                break;
            }
        }
        assertTrue(hostConfigured >= 0 && decoded > hostConfigured, log.toString());

        // nothing changed: nothing sent again
        c.reassignNow();
        c.awaitIdle(20_000);
        assertFalse(fabric.takeLog().stream().anyMatch(l -> l.startsWith("cookies ")));
        // a DIP on host 3: only host 3's document is new
        c.addDip("10.100.0.2", "{\"ip\":\"" + host(3) + "\"}");
        c.awaitIdle(20_000);
        assertEquals(List.of("cookies " + host(3)),
                fabric.takeLog().stream().filter(l -> l.startsWith("cookies ")).collect(java.util.stream.Collectors.toList()));
    }

    /** The last document host {@code h} was sent. */
    JsonNode lastDoc(int h) throws Exception {
        List<String> sent = fabric.cookieDocs.get(host(h));
        return Json.MAPPER.readTree(sent.get(sent.size() - 1));
    }

    static List<String> texts(JsonNode n) {
        List<String> out = new ArrayList<>();
        n.forEach(x -> out.add(x.asText()));
        return out;
    }

    List<String> urls(List<String> smuxIps) {
        List<String> out = new ArrayList<>();
        smuxIps.forEach(ip -> out.add("https://" + ip + ":9200"));
        return out;
    }

    @Test
    void theAgentsOfStatefulAndLoadBalancedVipsGetTheSmuxesTheyReportTo() throws Exception {
        for (int h = 0; h < 4; h++) {
            fabric.agentHosts.add(host(h));
        }
        Controller c = start();
        c.createVip(vipJson("10.100.0.1", ",\"affinity\":\"cheetah\"", 0));
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah-stateful\"", 1));
        c.createVip(vipJson("10.100.0.3", ",\"affinity\":\"cheetah\",\"mechanism\":\"least-loaded\"", 2));
        c.createVip(vipJson("10.100.0.4", ",\"affinity\":\"cheetah-stateful\",\"mechanism\":\"awrr\"", 3));
        c.awaitIdle(20_000);
        assertEquals(null, c.assignment().lastError);
        List<String> all = new ArrayList<>();
        topo.smuxes.forEach(m -> all.add(m.ip));
        List<String> owners = owners("10.100.0.2");
        assertEquals(all.size(), owners.size());

        assertFalse(lastDoc(0).has("statefulOwners") || lastDoc(0).has("smuxes"), "cheetah wrr: " + lastDoc(0));
        assertEquals(urls(owners), texts(lastDoc(1).path("statefulOwners")), "the owner slots' SMuxes, in slot order");
        assertFalse(lastDoc(1).has("smuxes"), "wrr takes no loads");
        assertEquals(urls(all), texts(lastDoc(2).path("smuxes")), "every live SMux, in topology order");
        assertFalse(lastDoc(2).has("statefulOwners"));
        assertEquals(urls(owners), texts(lastDoc(3).path("statefulOwners")));
        assertEquals(urls(all), texts(lastDoc(3).path("smuxes")));

        // an SMux lost: the hosts that report loads lose it; its owner slot goes to another live
        // SMux, whose URL the stateful hosts get at that position (they re-report its connections there)
        fabric.takeLog();
        Smux lost = topo.smuxes.get(0);
        fabric.live.remove(lost.id);
        c.smuxesChanged(fabric.liveSmuxes());
        c.awaitIdle(20_000);
        assertEquals(List.of("cookies " + host(1), "cookies " + host(2), "cookies " + host(3)),
                fabric.takeLog().stream().filter(l -> l.startsWith("cookies ")).collect(java.util.stream.Collectors.toList()),
                "only the documents that name the SMuxes change");
        List<String> rest = new ArrayList<>(all);
        rest.remove(lost.ip);
        assertEquals(urls(rest), texts(lastDoc(2).path("smuxes")));
        List<String> moved = owners("10.100.0.2");
        assertEquals(owners.size(), moved.size());
        assertFalse(moved.contains(lost.ip), moved.toString());
        assertEquals(urls(moved), texts(lastDoc(3).path("statefulOwners")));
        assertEquals(urls(moved), texts(lastDoc(1).path("statefulOwners")));

        // back: the load reporters get it again; its owner slot went to the SMux of the lowest
        // address, whose lowest (SYNs') id it now is, so it is not taken back: a free slot instead
        fabric.live.add(lost.id);
        c.smuxesChanged(fabric.liveSmuxes());
        c.awaitIdle(20_000);
        assertEquals(List.of("cookies " + host(1), "cookies " + host(2), "cookies " + host(3)),
                fabric.takeLog().stream().filter(l -> l.startsWith("cookies ")).collect(java.util.stream.Collectors.toList()));
        assertEquals(new HashSet<>(urls(all)), new HashSet<>(texts(lastDoc(2).path("smuxes"))));
        List<String> back = new ArrayList<>(moved);
        back.add(lost.ip);
        assertEquals(back, owners("10.100.0.2"));
        assertEquals(urls(back), texts(lastDoc(1).path("statefulOwners")));
    }

    @Test
    void aCheetahHostWhoseAgentRunsWithoutCookiesIsReported() {
        fabric.agentHosts.add(host(1));
        fabric.agentHosts.add(host(2));
        fabric.agentsWithoutCookies.add(host(1));
        fabric.agentsWithoutCookies.add(host(2));
        Controller c = start();
        c.createVip(vipJson("10.100.0.1", "", 1));
        c.awaitIdle(20_000);
        assertEquals(null, c.assignment().lastError, "a hash VIP's host may run without cookies");
        c.createVip(vipJson("10.100.0.2", ",\"affinity\":\"cheetah\"", 2));
        c.awaitIdle(20_000);
        String error = c.assignment().lastError;
        assertTrue(error != null && error.contains("host agent " + host(2) + " runs without Cheetah cookies"), error);
    }

    static List<String> names(JsonNode n) {
        List<String> out = new ArrayList<>();
        n.fieldNames().forEachRemaining(out::add);
        return out;
    }
}
