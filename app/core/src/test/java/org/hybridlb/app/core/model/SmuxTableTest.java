package org.hybridlb.app.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.hybridlb.app.core.Json;
import org.junit.jupiter.api.Test;

/** The table the controller sends is a document the SMux accepts (keys of smux/src/vip_table.c). */
class SmuxTableTest {
    static final Set<String> TOP = Set.of("version", "vips");
    static final Set<String> VIP = Set.of("vip", "aggregate", "selection", "encap", "hashBasis", "connTable", "ports");
    static final Set<String> PORT = Set.of("proto", "port", "dips");
    static final Set<String> DIP = Set.of("ip", "weight", "hostIp", "bucketId");

    static void keysWithin(JsonNode n, Set<String> allowed) {
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            assertTrue(allowed.contains(k), "the SMux rejects unknown field '" + k + "' in " + n);
        }
    }

    @Test
    void wholeVipBecomesTcpAndUdpAllPortsWithTheSameBuckets() throws Exception {
        List<Bucket> b = List.of(new Bucket("10.0.1.1", 2, "172.16.0.1", 0), new Bucket("10.0.1.2", 1, null, 3));
        SmuxTable t = SmuxTable.of(7, List.of(
                new VipEntry("100.64.0.1", "100.64.0.0/24", List.of(new ServiceEntry("any", 0, b))),
                new VipEntry("100.64.0.2", "100.64.0.0/24", List.of(new ServiceEntry("udp", 53, b)))), "gre");
        JsonNode doc = Json.MAPPER.readTree(Json.write(t));
        keysWithin(doc, TOP);
        assertEquals(7, doc.get("version").asLong());
        for (JsonNode v : doc.get("vips")) {
            keysWithin(v, VIP);
            assertEquals("ovs", v.get("selection").asText());
            assertEquals("gre", v.get("encap").asText());
            for (JsonNode p : v.get("ports")) {
                keysWithin(p, PORT);
                assertTrue(Set.of("tcp", "udp").contains(p.get("proto").asText()));
                for (JsonNode d : p.get("dips")) {
                    keysWithin(d, DIP);
                }
            }
        }
        JsonNode whole = doc.at("/vips/0/ports");
        assertEquals("tcp", whole.get(0).get("proto").asText());
        assertEquals(0, whole.get(0).get("port").asInt());
        assertEquals("udp", whole.get(1).get("proto").asText());
        assertEquals(whole.get(0).get("dips"), whole.get(1).get("dips"));
        assertEquals(3, doc.at("/vips/0/ports/0/dips/1/bucketId").asInt());
        assertFalse(doc.at("/vips/0/ports/0/dips/1").has("hostIp"));
    }

    /** WCMP units repeat a DIP under ids of their own; a drained DIP's weight-0 bucket is on the SMuxes alone. */
    @Test
    void unitsRepeatTheirDipAndADrainedBucketIsOnTheSmuxesOnly() {
        List<Bucket> b = List.of(new Bucket("10.0.1.1", 1, null, 0), new Bucket("10.0.1.2", 1, null, 1),
                new Bucket("10.0.1.3", 0, null, 2), new Bucket("10.0.1.2", 1, null, 3));
        SmuxTable t = SmuxTable.of(1, List.of(new VipEntry("100.64.0.1", "100.64.0.0/24",
                List.of(new ServiceEntry("tcp", 80, b)))), "gre");
        assertEquals(b, t.vips.get(0).ports.get(0).dips);
        VipEntry hmux = new VipEntry("100.64.0.1", "100.64.0.0/24", List.of(new ServiceEntry("tcp", 80, b))).hmuxForm();
        assertEquals(List.of(b.get(0), b.get(1), b.get(3)), hmux.ports.get(0).dips, "an HMux has no drained bucket");
    }

    @Test
    void runningTableAsTheSmuxReturnsItComparesEqualWhateverTheVersion() {
        String running = "{\"version\":9,\"vips\":[{\"vip\":\"100.64.0.1\",\"aggregate\":\"100.64.0.0/24\","
                + "\"selection\":\"ovs\",\"hashBasis\":0,\"encap\":\"gre\",\"connTable\":true,\"ports\":[{\"proto\":\"tcp\","
                + "\"port\":80,\"dips\":[{\"ip\":\"10.0.1.1\",\"weight\":1,\"bucketId\":0}]}]}]}";
        SmuxTable have = Json.read(running, SmuxTable.class);
        SmuxTable want = SmuxTable.of(3, List.of(new VipEntry("100.64.0.1", "100.64.0.0/24",
                List.of(new ServiceEntry("tcp", 80, List.of(new Bucket("10.0.1.1", 1, null, 0)))))), "gre");
        assertTrue(want.sameVips(have));
        SmuxTable other = SmuxTable.of(3, List.of(new VipEntry("100.64.0.1", "100.64.0.0/24",
                List.of(new ServiceEntry("tcp", 80, List.of(new Bucket("10.0.1.1", 1, null, 1)))))), "gre");
        assertFalse(other.sameVips(have), "another bucket id hashes differently");
    }

    @Test
    void anSmuxHashingWithAnotherBasisIsNotInSync() {
        SmuxTable want = SmuxTable.of(3, List.of(new VipEntry("100.64.0.1", "100.64.0.0/24",
                List.of(new ServiceEntry("tcp", 80, List.of(new Bucket("10.0.1.1", 1, null, 0)))))), "gre");
        assertFalse(Json.write(want).contains("hashBasis"), "the controller writes no basis (0, as its HMux)");
        String running = "{\"version\":9,\"vips\":[{\"vip\":\"100.64.0.1\",\"aggregate\":\"100.64.0.0/24\","
                + "\"selection\":\"ovs\",\"hashBasis\":%s,\"encap\":\"gre\",\"ports\":[{\"proto\":\"tcp\","
                + "\"port\":80,\"dips\":[{\"ip\":\"10.0.1.1\",\"weight\":1,\"bucketId\":0}]}]}]}";
        assertTrue(want.sameVips(Json.read(String.format(running, "\"0x0\""), SmuxTable.class)));
        for (String other : List.of("7", "\"7\"", "\"0xFEDCBA9876543210\"", "\"18446744073709551615\"")) {
            SmuxTable have = Json.read(String.format(running, other), SmuxTable.class);
            assertFalse(want.sameVips(have), "hashBasis " + other);
        }
        assertEquals(0xFEDCBA9876543210L, SmuxTable.Entry.hashBasisBits(
                Json.read("\"0xFEDCBA9876543210\"", JsonNode.class)));
        for (String bad : List.of("\"+5\"", "\"-1\"", "\" 5\"", "\"0x\"", "\"18446744073709551616\"", "-1", "1.5")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> SmuxTable.Entry.hashBasisBits(Json.read(bad, JsonNode.class)), bad);
            assertTrue(e.getMessage().startsWith("hashBasis: "), e.getMessage());
        }
    }
}
