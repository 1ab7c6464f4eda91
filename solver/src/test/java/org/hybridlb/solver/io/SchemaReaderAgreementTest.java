package org.hybridlb.solver.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.hybridlb.solver.model.Assignment;
import org.hybridlb.solver.model.MigrationPlan;
import org.hybridlb.solver.model.Topology;
import org.hybridlb.solver.model.TrafficInterval;
import org.hybridlb.solver.model.TrafficTrace;
import org.hybridlb.solver.model.VipSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Schema and reader agree on what is optional: each schema's minimal valid document (every field
 * it holds is required: dropping any one fails the schema) reads through the reader, with every
 * check. So no field the schema lets one leave out is one the reader needs.
 */
class SchemaReaderAgreementTest {
    static final String TOPOLOGY = "{\"switches\": [{\"id\": \"c\", \"role\": \"core\"},"
            + " {\"id\": \"a\", \"role\": \"agg\", \"pod\": 0}, {\"id\": \"t\", \"role\": \"tor\", \"pod\": 0}],"
            + " \"links\": [{\"a\": \"c\", \"b\": \"a\", \"capacityBps\": 1e10}, {\"a\": \"a\", \"b\": \"t\", \"capacityBps\": 1e10}]}";
    static final String VIPS = "{\"vips\": [{\"vip\": \"100.64.0.1\", \"aggregate\": \"100.64.0.0/24\","
            + " \"ports\": [{\"proto\": \"any\", \"port\": 0, \"dips\": [{\"ip\": \"10.0.0.1\"}]}]}]}";
    static final String TRAFFIC = "{\"intervals\": [{\"index\": 0, \"vips\": [{\"vip\": \"100.64.0.1\", \"sources\": {}}]},"
            + " {\"index\": 1, \"vips\": []}]}";
    static final String ASSIGNMENT = "{\"algorithm\": \"hand\", \"assignment\": {}}";
    static final String PLAN = "{\"waves\": [{\"wave\": 0, \"steps\": [{\"action\": \"add-dip\", \"vip\": \"100.64.0.1\","
            + " \"dip\": \"10.0.0.2\"}, {\"action\": \"announce-on-hmux\", \"vip\": \"100.64.0.1\", \"switchId\": \"t\"}]}]}";

    /** Read through its reader in the solver tools (YodaIlpTest). */
    static final String YODA = "{\"instancePool\": {\"count\": 2, \"trafficCapacity\": 10, \"ruleCapacity\": 100},"
            + " \"vips\": [{\"vip\": \"v1\", \"traffic\": 1, \"rules\": 1}]}";

    @TempDir
    Path dir;

    private Path write(String name, String json) throws IOException {
        return Files.writeString(dir.resolve(name), json);
    }

    @Test
    void everyMinimalDocumentIsMinimal() throws IOException {
        assertMinimal(Schema.TOPOLOGY, TOPOLOGY);
        assertMinimal(Schema.VIPS, VIPS);
        assertMinimal(Schema.TRAFFIC, TRAFFIC);
        assertMinimal(Schema.ASSIGNMENT, ASSIGNMENT);
        assertMinimal(Schema.MIGRATION_PLAN, PLAN);
        assertMinimal(Schema.YODA_PROBLEM, YODA);
    }

    @Test
    void theReadersTakeTheMinimalDocuments() throws IOException {
        Topology t = ModelIo.readTopology(write("t.json", TOPOLOGY));
        assertEquals(3, t.switches.size());
        VipSet v = ModelIo.readVips(write("v.json", VIPS));
        assertEquals(1, v.vips.get(0).ports.get(0).dips.get(0).weight, "weight defaults to 1");
        TrafficTrace tr = ModelIo.readTraffic(write("tr.json", TRAFFIC), v, t);
        TrafficInterval second = tr.intervals.get(1);
        assertEquals(TrafficInterval.DEFAULT_DURATION_SECONDS, second.durationSeconds);
        assertEquals(TrafficInterval.DEFAULT_DURATION_SECONDS, second.startSeconds, "index x duration");
        assertTrue(tr.intervals.get(0).vips.get(0).dips.isEmpty());
        Assignment a = ModelIo.readAssignment(write("a.json", ASSIGNMENT), t);
        assertTrue(a.assignment.isEmpty());
        MigrationPlan p = ModelIo.readPlan(write("p.json", PLAN));
        assertEquals(2, p.waves.get(0).steps.size());
    }

    /** What the reader would refuse, the schema refuses first (pods), and what both accept reads. */
    @Test
    void podsAndIntervalIndexes() throws IOException {
        InvalidInputException noPod = assertThrows(InvalidInputException.class, () -> ModelIo.readTopology(
                write("np.json", TOPOLOGY.replace(", \"pod\": 0}, {\"id\": \"t\"", "}, {\"id\": \"t\""))));
        assertEquals("/switches/1", noPod.field());
        assertTrue(noPod.reason().contains("pod"), noPod.reason());
        InvalidInputException corePod = assertThrows(InvalidInputException.class, () -> ModelIo.readTopology(
                write("cp.json", TOPOLOGY.replace("\"role\": \"core\"", "\"role\": \"core\", \"pod\": 3"))));
        assertEquals("/switches/0/pod", corePod.field());
        VipSet v = ModelIo.readVips(write("v.json", VIPS));
        Topology t = ModelIo.readTopology(write("t.json", TOPOLOGY));
        InvalidInputException twice = assertThrows(InvalidInputException.class, () -> ModelIo.readTraffic(
                write("dup.json", TRAFFIC.replace("\"index\": 1", "\"index\": 0")), v, t));
        assertEquals("/intervals/1/index", twice.field());
        assertEquals("duplicate interval index 0 (also /intervals/0/index)", twice.reason());
    }

    /** Valid, and dropping any one field anywhere makes it invalid. */
    private static void assertMinimal(Schema schema, String json) throws IOException {
        JsonNode doc = ModelIo.MAPPER.readTree(json);
        schema.validate(doc, schema.resourceName());
        List<String> fields = new ArrayList<>();
        collect(doc, "", fields);
        for (String field : fields) {
            JsonNode copy = doc.deepCopy();
            int slash = field.lastIndexOf('/');
            ((ObjectNode) copy.at(field.substring(0, slash))).remove(field.substring(slash + 1));
            assertThrows(InvalidInputException.class, () -> schema.validate(copy, schema.resourceName()),
                    schema.resourceName() + ": " + field + " is optional, so the minimal document should not have it");
        }
    }

    private static void collect(JsonNode n, String at, List<String> out) {
        if (n.isObject()) {
            for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
                String k = it.next();
                out.add(at + "/" + k);
                collect(n.get(k), at + "/" + k, out);
            }
        } else if (n.isArray()) {
            for (int i = 0; i < n.size(); i++) {
                collect(n.get(i), at + "/" + i, out);
            }
        }
    }
}
