package org.hybridlb.solver.io;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonNodePath;
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
                .min(Comparator.comparing((ValidationMessage m) -> pointer(m.getInstanceLocation()))
                        .thenComparing(ValidationMessage::getMessage));
        if (first.isPresent()) {
            ValidationMessage m = first.get();
            throw new InvalidInputException(source, pointer(m.getInstanceLocation()), reason(m));
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

    /**
     * The location as a JSON pointer (RFC 6901): {@code /vips/3/ports/0}; a key is one token
     * whatever it holds ({@code /dips/10.9.1.1}; "~" and "/" escaped as ~0 and ~1).
     */
    static String pointer(JsonNodePath path) {
        JsonPointer p = JsonPointer.empty();
        for (int i = 0; i < path.getNameCount(); i++) {
            Object e = path.getElement(i);
            p = e instanceof Integer ? p.appendIndex((Integer) e) : p.appendProperty(String.valueOf(e));
        }
        String s = p.toString();
        return s.isEmpty() ? "/" : s;
    }

    private static String reason(ValidationMessage m) {
        // networknt prefixes the message with the instance location; the field is reported apart.
        String msg = m.getMessage();
        int colon = msg.indexOf(": ");
        String text = colon >= 0 && msg.startsWith("$") ? msg.substring(colon + 2) : msg;
        Object[] args = m.getArguments();
        Object limit = args != null && args.length > 0 ? args[0] : null;
        JsonNode value = m.getInstanceNode();
        // the validator formats numbers for the locale ("4,096"); the limits are said plainly
        if ("maxItems".equals(m.getType()) && value != null && limit != null) {
            return value.size() + " items, over the limit of " + limit;
        }
        if ("maximum".equals(m.getType()) && value != null && limit != null) {
            return "value " + value + " is above the maximum of " + limit;
        }
        if ("minimum".equals(m.getType()) && value != null && limit != null) {
            return "value " + value + " is below the minimum of " + limit;
        }
        if ("pattern".equals(m.getType())) {
            String shown = value == null ? "" : " " + value;
            if (text.contains("/([0-9]")) {
                return "value" + shown + " is not an IPv4 prefix (a.b.c.d/len)";
            }
            if (text.contains("25[0-5]")) {
                return "value" + shown + " is not an IPv4 address";
            }
        }
        return text;
    }
}
