package org.hybridlb.app.core.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.Map;
import org.hybridlb.app.core.Json;
import org.hybridlb.solver.io.Schema;

/**
 * The OpenAPI 3.1 description of the REST API, one for both runtimes: {@code openapi.json} beside
 * this class describes the resources and the views, and the VIP documents and migration plans are
 * the solver's own JSON schemas ({@link Schema#VIPS}, {@link Schema#MIGRATION_PLAN}, JSON Schema
 * 2020-12 like OpenAPI 3.1), copied into {@code components.schemas} here so that they live in one
 * place: the VIP schema's {@code $defs} become {@code vip}, {@code port}, {@code dip}, {@code ipv4}
 * and {@code prefix}, its root {@code VipSet}, the plan's root {@code MigrationPlan}.
 */
public final class OpenApi {
    private static volatile String text;

    private OpenApi() {
    }

    /** The document as served (built once). */
    public static String text() {
        String t = text;
        if (t == null) {
            t = Json.write(document()) + "\n";
            text = t;
        }
        return t;
    }

    /** A fresh copy of the document. */
    public static ObjectNode document() {
        ObjectNode doc = (ObjectNode) read(OpenApi.class, "openapi.json");
        ObjectNode schemas = (ObjectNode) doc.path("components").path("schemas");
        ObjectNode vips = (ObjectNode) solverSchema(Schema.VIPS);
        ObjectNode defs = (ObjectNode) vips.remove("$defs");
        for (Iterator<Map.Entry<String, JsonNode>> it = defs.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            schemas.set(e.getKey(), e.getValue());
        }
        schemas.set("VipSet", vips);
        schemas.set("MigrationPlan", solverSchema(Schema.MIGRATION_PLAN));
        // the topology's $defs under names of their own (its ipv4 would meet the VIP schema's)
        ObjectNode topology = (ObjectNode) read(Schema.class, "/org/hybridlb/schemas/" + Schema.TOPOLOGY.resourceName());
        topology.remove("$schema");
        ObjectNode topologyDefs = (ObjectNode) topology.remove("$defs");
        rewriteRefs(topology, "Topology_");
        for (Iterator<Map.Entry<String, JsonNode>> it = topologyDefs.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            rewriteRefs(e.getValue(), "Topology_");
            schemas.set("Topology_" + e.getKey(), e.getValue());
        }
        schemas.set("Topology", topology);
        return doc;
    }

    private static JsonNode solverSchema(Schema s) {
        ObjectNode n = (ObjectNode) read(Schema.class, "/org/hybridlb/schemas/" + s.resourceName());
        n.remove("$schema");
        rewriteRefs(n, "");
        return n;
    }

    /** {@code #/$defs/x} -> {@code #/components/schemas/<prefix>x}, everywhere in {@code n}. */
    private static void rewriteRefs(JsonNode n, String prefix) {
        if (n.isObject()) {
            JsonNode ref = n.get("$ref");
            if (ref != null && ref.isTextual() && ref.asText().startsWith("#/$defs/")) {
                ((ObjectNode) n).put("$ref", "#/components/schemas/" + prefix + ref.asText().substring("#/$defs/".length()));
            }
        }
        n.forEach(c -> rewriteRefs(c, prefix));
    }

    private static JsonNode read(Class<?> near, String resource) {
        try (InputStream in = near.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("resource missing: " + resource);
            }
            return Json.MAPPER.readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
