package org.hybridlb.solver.io;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Comparator;
import java.util.Optional;

/** The JSON schemas of the shared data model; they live in one place: resources/org/hybridlb/schemas. */
public enum Schema {
    TOPOLOGY("topology.schema.json"),
    VIPS("vips.schema.json"),
    TRAFFIC("traffic.schema.json"),
    ASSIGNMENT("assignment.schema.json"),
    MIGRATION_PLAN("migration-plan.schema.json"),
    YODA_PROBLEM("yoda-problem.schema.json");

    private final String resource;
    private volatile JsonSchema compiled;

    Schema(String resource) {
        this.resource = resource;
    }

    public String resourceName() {
        return resource;
    }

    /** Throws {@link InvalidInputException} naming the first offending field, in document order. */
    public void validate(JsonNode document, String source) {
        Optional<ValidationMessage> first = compiled().validate(document).stream()
                .min(Comparator.comparing((ValidationMessage m) -> m.getInstanceLocation().toString())
                        .thenComparing(ValidationMessage::getMessage));
        if (first.isPresent()) {
            ValidationMessage m = first.get();
            throw new InvalidInputException(source, pointer(m.getInstanceLocation().toString()),
                    reason(m));
        }
    }

    private JsonSchema compiled() {
        JsonSchema s = compiled;
        if (s == null) {
            try (InputStream in = Schema.class.getResourceAsStream("/org/hybridlb/schemas/" + resource)) {
                if (in == null) {
                    throw new IllegalStateException("schema resource missing: " + resource);
                }
                s = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(in);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            compiled = s;
        }
        return s;
    }

    /** "$.vips[3].ports[0]" becomes "/vips/3/ports/0". */
    static String pointer(String path) {
        String p = path.startsWith("$") ? path.substring(1) : path;
        p = p.replace("[", ".").replace("]", "").replace('.', '/');
        return p.isEmpty() ? "/" : p;
    }

    private static String reason(ValidationMessage m) {
        // networknt prefixes the message with the instance location; the field is reported apart.
        String msg = m.getMessage();
        int colon = msg.indexOf(": ");
        String text = colon >= 0 && msg.startsWith("$") ? msg.substring(colon + 2) : msg;
        if ("pattern".equals(m.getType())) {
            String value = m.getInstanceNode() == null ? "" : " " + m.getInstanceNode();
            if (text.contains("/([0-9]")) {
                return "value" + value + " is not an IPv4 prefix (a.b.c.d/len)";
            }
            if (text.contains("25[0-5]")) {
                return "value" + value + " is not an IPv4 address";
            }
        }
        return text;
    }
}
