package org.hybridlb.app.core.prism;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.hybridlb.app.core.Json;
import org.hybridlb.solver.model.Vip;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The hand-off controller against front ends' admin APIs over real HTTP (loopback fakes). */
class PrismHandoffTest {
    FakeFrontEnd fe1;
    FakeFrontEnd fe2;
    List<Vip> vips = new ArrayList<>();
    Collection<String> unhealthy = new ArrayList<>();
    PrismHandoff prism;

    @BeforeEach
    void start() throws Exception {
        fe1 = new FakeFrontEnd();
        fe2 = new FakeFrontEnd();
        HttpClient http = HttpClient.newHttpClient();
        prism = new PrismHandoff(new HttpPrismFrontEnds(Duration.ofSeconds(5), () -> http), () -> vips,
                () -> unhealthy, Clock.fixed(Instant.parse("2026-11-27T12:00:00Z"), ZoneOffset.UTC));
    }

    @AfterEach
    void stop() {
        prism.close();
        fe1.close();
        fe2.close();
    }

    static final String RULES = "\"backends\": {\"b1\": {\"address\": \"10.0.1.2\", \"controlPort\": 9500},"
            + " \"b2\": {\"address\": \"10.0.1.3\", \"controlPort\": 9500}},"
            + " \"rules\": [{\"name\": \"jpg\", \"priority\": 2, \"match\": {\"url\": \"*.jpg\"}, \"split\": {\"b2\": 1}},"
            + " {\"name\": \"rest\", \"priority\": 0, \"split\": {\"b1\": 3, \"b2\": 1.5}, \"balance\": \"least-loaded\"}]";

    Vip vip(String rules, FakeFrontEnd... fes) throws Exception {
        StringBuilder f = new StringBuilder();
        StringBuilder d = new StringBuilder();
        for (int i = 0; i < fes.length; i++) {
            f.append(i == 0 ? "" : ",").append("{\"ip\": \"10.0.0.").append(i + 2).append("\", \"admin\": \"")
                    .append(fes[i].admin()).append("\"}");
            d.append(i == 0 ? "" : ",").append("{\"ip\": \"10.0.0.").append(i + 2).append("\"}");
        }
        return Json.MAPPER.readValue("{\"vip\": \"10.100.0.1\", \"aggregate\": \"10.100.0.0/16\", \"ports\": [{\"proto\":"
                + " \"tcp\", \"port\": 80, \"dips\": [" + d + "]}], \"prism\": {\"frontends\": [" + f + "], " + rules + "}}",
                Vip.class);
    }

    static JsonNode doc(String rules) throws Exception {
        return Json.MAPPER.readTree("{" + rules + "}");
    }

    @Test
    void pushesTheVipsRulesToEveryFrontEndOnceAndAgainAfterARestart() throws Exception {
        vips.add(vip(RULES, fe1, fe2));
        prism.round();
        assertEquals(doc(RULES), fe1.rules, "the compiled document is {backends, rules}, as rules.py takes it");
        assertEquals(doc(RULES), fe2.rules);
        PrismVipView v = prism.view("10.100.0.1");
        assertEquals(PrismVipView.Frontend.IN_SYNC, v.frontends.get(0).state);
        assertEquals(1, v.frontends.get(0).pushes);
        assertEquals("2026-11-27T12:00:00Z", v.frontends.get(0).lastPush);
        prism.round();
        assertEquals(1, fe1.puts.get(), "a front end that runs the VIP's rules is not pushed again");
        fe2.restart();
        prism.round();
        assertEquals(1, fe1.puts.get());
        assertEquals(2, fe2.puts.get(), "a restarted front end gets the rules again");
        assertEquals(doc(RULES), fe2.rules);
        assertEquals(2, prism.view("10.100.0.1").frontends.get(1).pushes);
    }

    @Test
    void aRuleChangeReachesTheFrontEnds() throws Exception {
        vips.add(vip(RULES, fe1));
        prism.round();
        String changed = RULES.replace("\"b1\": 3", "\"b1\": 7");
        vips.set(0, vip(changed, fe1));
        prism.round();
        assertEquals(doc(changed), fe1.rules);
        assertEquals(2, fe1.puts.get());
    }

    @Test
    void refusedUnreachableAndHostDownFrontEndsAreSaidSo() throws Exception {
        FakeFrontEnd gone = new FakeFrontEnd();
        gone.close(); // nothing listens on its port any more
        vips.add(vip(RULES.replace("\"jpg\"", "\"refuse-me\""), fe1, gone, fe2));
        unhealthy.add("10.0.0.4");
        prism.round();
        List<PrismVipView.Frontend> fes = prism.view("10.100.0.1").frontends;
        assertEquals(PrismVipView.Frontend.REFUSED, fes.get(0).state);
        assertTrue(fes.get(0).error.contains("rules[0].name: refused"), fes.get(0).error);
        assertEquals(0, fes.get(0).pushes);
        assertEquals(PrismVipView.Frontend.UNREACHABLE, fes.get(1).state);
        assertTrue(fes.get(1).error.contains("unreachable"), fes.get(1).error);
        assertEquals(PrismVipView.Frontend.HOST_DOWN, fes.get(2).state);
        assertEquals(0, fe2.puts.get(), "a front end on an unhealthy DIP is not asked");
        assertEquals(0, fe1.puts.get());
        unhealthy.clear();
        vips.set(0, vip(RULES, fe1, gone, fe2));
        prism.round();
        assertEquals(1, fe1.puts.get(), "rules it takes replace those it refused");
        assertEquals(1, fe2.puts.get(), "once healthy again it gets the rules");
        assertEquals(PrismVipView.Frontend.IN_SYNC, prism.view("10.100.0.1").frontends.get(2).state);
    }

    @Test
    void ownershipHandOffsAndBackendHealthComeFromTheFrontEndsAndAgents() throws Exception {
        vips.add(vip(RULES, fe1, fe2));
        fe1.stats = Json.MAPPER.readTree("{\"handoffs\": 40, \"returns\": 38, \"client_resets\": 1, \"connections\": 3,"
                + " \"backends\": {\"b1\": {\"address\": \"10.0.1.2\", \"up\": true, \"owned\": 1, \"handoffs\": 30},"
                + " \"b2\": {\"address\": \"10.0.1.3\", \"up\": false, \"owned\": 0, \"handoffs\": 10}}}");
        fe2.stats = Json.MAPPER.readTree("{\"handoffs\": 5, \"connections\": 1,"
                + " \"backends\": {\"b1\": {\"address\": \"10.0.1.2\", \"up\": true, \"owned\": 1, \"handoffs\": 5},"
                + " \"b2\": {\"address\": \"10.0.1.3\", \"up\": true, \"owned\": 0, \"handoffs\": 0}}}");
        fe1.connections = Json.MAPPER.readTree("[{\"id\": 7, \"client\": \"10.9.0.1:40000\", \"state\": \"remote\","
                + " \"owner\": \"10.0.1.2\", \"requests\": 4}, {\"id\": 8, \"client\": \"10.9.0.1:40001\","
                + " \"state\": \"reading\", \"owner\": \"frontend\", \"requests\": 2},"
                + " {\"id\": 9, \"client\": \"10.9.0.2:40000\", \"state\": \"wait-imported\", \"owner\": \"10.0.1.2\", \"requests\": 1}]");
        unhealthy.add("10.0.1.3");
        prism.round();
        PrismVipView v = prism.view("10.100.0.1");
        assertEquals(40, v.frontends.get(0).handoffs);
        assertEquals(38, v.frontends.get(0).returns);
        assertEquals(1, v.frontends.get(0).clientResets);
        assertEquals(3, v.frontends.get(0).connections);
        assertEquals(2, v.frontends.get(0).inFlight, "remote and wait-imported are hand-offs in flight");
        PrismVipView.Backend b1 = v.backends.get(0);
        assertEquals("b1", b1.name);
        assertTrue(b1.hostHealthy);
        assertEquals(2, b1.upAt);
        assertEquals(2, b1.owned);
        assertEquals(35, b1.handoffs);
        PrismVipView.Backend b2 = v.backends.get(1);
        assertEquals(false, b2.hostHealthy, "the host agents report 10.0.1.3 unhealthy");
        assertEquals(1, b2.upAt);
        List<PrismConnectionView> conns = prism.connections("10.100.0.1");
        assertEquals(3, conns.size());
        assertEquals("10.0.0.2", conns.get(0).frontend);
        assertEquals("10.0.1.2", conns.get(0).owner);
        assertEquals("remote", conns.get(0).state);
        assertTrue(conns.get(0).handedOff());
    }

    @Test
    void aVipWithoutPrismOrRemovedHasNoView() throws Exception {
        vips.add(vip(RULES, fe1));
        prism.round();
        vips.clear();
        prism.round();
        assertNull(prism.view("10.100.0.1"));
        assertNull(prism.connections("10.100.0.1"));
        assertEquals(List.of(), prism.views());
    }
}
