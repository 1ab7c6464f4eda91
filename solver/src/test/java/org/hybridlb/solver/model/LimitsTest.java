package org.hybridlb.solver.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.hybridlb.solver.io.ModelIo;
import org.junit.jupiter.api.Test;

/**
 * The schemas' limits and the SMux's C limits are the numbers of {@link Limits}: a change to one
 * side alone fails here, so they cannot drift.
 */
class LimitsTest {
    /** Every limit keyword of the VIP-shaped schemas, by schema and JSON pointer, and its constant. */
    private static final Map<String, Integer> SCHEMA_LIMITS = new LinkedHashMap<>();

    static {
        SCHEMA_LIMITS.put("vips.schema.json#/properties/vips/maxItems", Limits.MAX_VIPS);
        SCHEMA_LIMITS.put("vips.schema.json#/$defs/vip/properties/ports/maxItems", Limits.MAX_SERVICES_PER_VIP);
        SCHEMA_LIMITS.put("vips.schema.json#/$defs/port/properties/port/maximum", Limits.MAX_PORT);
        SCHEMA_LIMITS.put("vips.schema.json#/$defs/port/properties/dips/maxItems", Limits.MAX_DIPS_PER_SERVICE);
        SCHEMA_LIMITS.put("vips.schema.json#/$defs/port/properties/dips/x-maxWcmpUnits", Limits.MAX_WCMP_UNITS_PER_SERVICE);
        SCHEMA_LIMITS.put("vips.schema.json#/$defs/dip/properties/weight/minimum", Limits.MIN_WEIGHT);
        SCHEMA_LIMITS.put("vips.schema.json#/$defs/dip/properties/weight/maximum", Limits.MAX_WEIGHT);
        SCHEMA_LIMITS.put("vips.schema.json#/$defs/prism/properties/frontends/maxItems", Limits.MAX_PRISM_FRONTENDS_PER_VIP);
        SCHEMA_LIMITS.put("vips.schema.json#/$defs/prism/properties/rules/maxItems", Limits.MAX_PRISM_RULES);
        SCHEMA_LIMITS.put("vips.schema.json#/$defs/prismBackend/properties/controlPort/maximum", Limits.MAX_PORT);
        SCHEMA_LIMITS.put("traffic.schema.json#/$defs/interval/properties/vips/maxItems", Limits.MAX_VIPS);
        SCHEMA_LIMITS.put("migration-plan.schema.json#/properties/waves/items/properties/steps/items/properties/weight/minimum",
                Limits.MIN_WEIGHT);
        SCHEMA_LIMITS.put("migration-plan.schema.json#/properties/waves/items/properties/steps/items/properties/weight/maximum",
                Limits.MAX_WEIGHT);
    }

    @Test
    void theSchemasUseTheLimitsConstants() throws IOException {
        for (Map.Entry<String, Integer> e : SCHEMA_LIMITS.entrySet()) {
            String[] at = e.getKey().split("#");
            JsonNode n = schema(at[0]).at(at[1]);
            assertTrue(n.isInt(), e.getKey() + " is missing");
            assertEquals(e.getValue().intValue(), n.asInt(), e.getKey());
        }
    }

    /** A limit added to a schema without a constant (or the other way) fails too. */
    @Test
    void everyLimitInThoseSchemasIsOneOfTheConstants() throws IOException {
        for (String file : List.of("vips.schema.json", "traffic.schema.json", "migration-plan.schema.json")) {
            List<String> found = new ArrayList<>();
            limits(schema(file), "", found);
            for (String pointer : found) {
                assertTrue(SCHEMA_LIMITS.containsKey(file + "#" + pointer),
                        file + "#" + pointer + " is a limit without a Limits constant");
            }
        }
    }

    /** The SMux refuses what the controller would accept if these drifted (smux/src/vip_table.h). */
    @Test
    void theSmuxLimitsAreTheSame() throws IOException {
        Path header = Path.of("..", "smux", "src", "vip_table.h");
        assertTrue(Files.isReadable(header), "the SMux sources are next to the solver: " + header.toAbsolutePath());
        String text = Files.readString(header);
        assertEquals(Limits.MAX_WCMP_UNITS_PER_SERVICE, define(text, "HLB_MAX_DIPS_PER_POOL"),
                "a service's buckets (WCMP units and drained DIPs) are the entries of one SMux pool");
        assertEquals(Limits.MAX_SERVICES, define(text, "HLB_MAX_SERVICES"));
        assertEquals(Limits.MAX_DIP_ENTRIES, define(text, "HLB_MAX_DIPS"));
        assertEquals(Limits.MAX_WEIGHT, define(text, "HLB_MAX_WEIGHT"));
    }

    private static int define(String text, String name) {
        Matcher m = Pattern.compile("#define\\s+" + name + "\\s+\\(?(\\d+)u?(?:\\s*<<\\s*(\\d+))?\\)?").matcher(text);
        assertTrue(m.find(), name + " not found");
        long v = Long.parseLong(m.group(1));
        return (int) (m.group(2) == null ? v : v << Integer.parseInt(m.group(2)));
    }

    private static void limits(JsonNode n, String pointer, List<String> out) {
        if (n.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                String p = pointer + "/" + f.getKey();
                boolean limit = f.getKey().equals("maxItems") || f.getKey().equals("maximum") || f.getKey().startsWith("x-max")
                        || (f.getKey().equals("minimum") && pointer.endsWith("/weight"));
                if (limit && f.getValue().isNumber()) {
                    out.add(p);
                } else {
                    limits(f.getValue(), p, out);
                }
            }
        } else if (n.isArray()) {
            for (int i = 0; i < n.size(); i++) {
                limits(n.get(i), pointer + "/" + i, out);
            }
        }
    }

    private static JsonNode schema(String file) throws IOException {
        try (InputStream in = LimitsTest.class.getResourceAsStream("/org/hybridlb/schemas/" + file)) {
            return ModelIo.MAPPER.readTree(in);
        }
    }
}
