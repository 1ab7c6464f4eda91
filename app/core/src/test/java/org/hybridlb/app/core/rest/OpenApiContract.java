package org.hybridlb.app.core.rest;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.hybridlb.app.core.Json;

/**
 * The served OpenAPI document as a test oracle: the operations it describes, and for an answer
 * (method, concrete path, status, body) whether the document describes that status and the body
 * validates against the described schema (JSON Schema 2020-12, OpenAPI 3.1's dialect; references
 * resolve inside the document).
 */
public final class OpenApiContract {
    private static final String JSON = "application/json";

    public final ObjectNode doc = OpenApi.document();
    private final Map<String, JsonSchema> schemas = new LinkedHashMap<>();
    /** "METHOD /template status" of every answer checked so far. */
    public final Set<String> checked = new TreeSet<>();

    /** "METHOD /template" of every described operation. */
    public Set<String> operations() {
        Set<String> out = new TreeSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> p = doc.path("paths").fields(); p.hasNext(); ) {
            Map.Entry<String, JsonNode> path = p.next();
            for (Iterator<String> m = path.getValue().fieldNames(); m.hasNext(); ) {
                String method = m.next();
                if (Set.of("get", "put", "post", "delete", "patch", "head", "options").contains(method)) {
                    out.add(method.toUpperCase(java.util.Locale.ROOT) + " " + path.getKey());
                }
            }
        }
        return out;
    }

    /** The template of {@code path} (leading "/", no query) among the described ones; null: none. */
    public String template(String path) {
        String exact = null;
        String templated = null;
        for (Iterator<String> it = doc.path("paths").fieldNames(); it.hasNext(); ) {
            String t = it.next();
            if (t.equals(path)) {
                exact = t;
            } else if (Pattern.matches(t.replaceAll("\\{[^/]+}", "[^/]+").replace(".", "\\."), path)) {
                templated = t;
            }
        }
        return exact != null ? exact : templated;
    }

    /** Problems of the answer against the document (empty: it conforms). */
    public Set<String> problems(String method, String path, int status, String body) {
        Set<String> out = new TreeSet<>();
        String p = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
        String t = template(p);
        if (t == null) {
            out.add("no described path matches " + p);
            return out;
        }
        String m = method.toLowerCase(java.util.Locale.ROOT);
        JsonNode op = doc.path("paths").path(t).path(m);
        if (op.isMissingNode()) {
            out.add(method + " " + t + " is not described");
            return out;
        }
        JsonNode response = resolve(op.path("responses").path(String.valueOf(status)));
        if (response.isMissingNode()) {
            out.add(method + " " + t + " answered " + status + ", which is not described");
            return out;
        }
        checked.add(method + " " + t + " " + status);
        JsonNode content = response.path("content").path(JSON);
        if (content.isMissingNode()) {
            // a body that is not JSON (the metrics' text, the web view's files) where one is described
            if (body != null && !body.isBlank() && !response.path("content").isObject()) {
                out.add(method + " " + t + " " + status + " has a body but none is described: " + body);
            }
            return out;
        }
        JsonNode instance;
        try {
            instance = Json.MAPPER.readTree(body == null ? "" : body);
        } catch (java.io.IOException e) {
            out.add(method + " " + t + " " + status + ": not JSON: " + body);
            return out;
        }
        if (instance == null || instance.isMissingNode()) {
            out.add(method + " " + t + " " + status + ": empty body, JSON described");
            return out;
        }
        String pointer = pointerOf(response) + "/content/" + escape(JSON) + "/schema";
        for (ValidationMessage v : schema(pointer).validate(instance)) {
            out.add(method + " " + t + " " + status + ": " + v.getMessage());
        }
        return out;
    }

    /** Follows a {@code #/components/responses/...} reference. */
    private JsonNode resolve(JsonNode response) {
        JsonNode ref = response.path("$ref");
        return ref.isTextual() ? doc.at(ref.asText().substring(1)) : response;
    }

    /** Where the (resolved) response object sits in the document. */
    private String pointerOf(JsonNode response) {
        for (Iterator<Map.Entry<String, JsonNode>> it = doc.path("components").path("responses").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getValue() == response) {
                return "#/components/responses/" + escape(e.getKey());
            }
        }
        for (Iterator<Map.Entry<String, JsonNode>> p = doc.path("paths").fields(); p.hasNext(); ) {
            Map.Entry<String, JsonNode> path = p.next();
            for (Iterator<Map.Entry<String, JsonNode>> m = path.getValue().fields(); m.hasNext(); ) {
                Map.Entry<String, JsonNode> op = m.next();
                for (Iterator<Map.Entry<String, JsonNode>> r = op.getValue().path("responses").fields(); r.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = r.next();
                    if (e.getValue() == response) {
                        return "#/paths/" + escape(path.getKey()) + "/" + op.getKey() + "/responses/" + e.getKey();
                    }
                }
            }
        }
        throw new IllegalStateException("response not in the document: " + response);
    }

    /**
     * The schema at {@code pointer} as a JSON Schema document: the document's
     * {@code components.schemas} become its {@code $defs} (references rewritten), so that
     * references resolve as in any 2020-12 schema.
     */
    private JsonSchema schema(String pointer) {
        return schemas.computeIfAbsent(pointer, p -> {
            JsonNode target = doc.at(JsonPointer.compile(p.substring(1)));
            if (target.isMissingNode()) {
                throw new IllegalStateException("no schema at " + p);
            }
            ObjectNode root = Json.MAPPER.createObjectNode();
            root.put("$schema", "https://json-schema.org/draft/2020-12/schema");
            ObjectNode defs = doc.path("components").path("schemas").deepCopy();
            defs.set("answer", target.deepCopy());
            rewrite(defs);
            root.set("$defs", defs);
            root.put("$ref", "#/$defs/answer");
            return JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(root);
        });
    }

    private static void rewrite(JsonNode n) {
        if (n.isObject() && n.path("$ref").isTextual()) {
            ((ObjectNode) n).put("$ref", n.get("$ref").asText().replace("#/components/schemas/", "#/$defs/"));
        }
        n.forEach(OpenApiContract::rewrite);
    }

    private static String escape(String token) {
        return token.replace("~", "~0").replace("/", "~1");
    }
}
